/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_FRONT_H
#define AUXTRIG_GATE_FRONT_H

/*
 * record/ layer: a tracepoint's own trigger program (user/record/gate_front.c),
 * built by gate.c with lang/bpf_asm.h and lang/expr_bpf.h.
 */

/**
 * DOC: a point's own gate program
 *
 * A tracepoint whose only role is to run --on triggers gets a program of its
 * own, built at run time as BPF instructions instead of the shared
 * gate_tracepoint: armed check, target check (the first targets as
 * constants, the map only for the others), then per trigger its counters
 * (per-CPU, no atomics), its condition compiled by expr_bpf__compile(), its
 * policy (an atomic add only while it can change the outcome). The triggers
 * that fire hand over to gate_fire (a tail call), which runs the actions as
 * the shared program does. What it does not cover (windows, recorded events,
 * conditions the compiler leaves to the interpreter) stays with the shared
 * program, and gate_front__build() says why.
 *
 * The thread's ids come from one helper call, bpf_get_current_pid_tgid(), and
 * at a syscall point not even that after the thread's first hit since it
 * was switched in: the program remembers them, and whether the thread is a
 * target, in this CPU's gate_trig_pcpu (cur_state, cur_pid_tgid), which the
 * gate's gate_sched_switch raw tracepoint resets at every context switch and
 * gate_follow_exec at every exec. That is sound at syscall tracepoints only:
 * they run in their thread's context, never in an interrupt or inside the
 * scheduler between the switch tracepoint and the switch. comm comes from
 * bpf_get_current_comm(), ppid from the current task, where a condition
 * reads them.
 *
 * Registers: r6 the context, r8 this CPU's struct gate_trig_pcpu, r9 the
 * triggers that fire.
 */

#include <stddef.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/lang/bpf_asm.h"

#define GATE_FRONT_MAX_PIDS 8 /* targets compared as constants */

struct expr_prog;

/** struct gate_front_task - offsets in the running kernel's struct task_struct (from its BTF). */
struct gate_front_task {
	int tgid, pid, comm, real_parent;
};

/**
 * struct gate_front_spec - what a point's program must do.
 * @*_fd:	the gate's maps (gate_config, gate_targets, gate_trig_pcpu, .bss,
 *		gate_fire_prog, expr_state, expr_counts, gate_threads,
 *		gate_sys_entries); any value to only check that the program
 *		can be built.
 * @runtime_fd, @cpus_fd, @events_fd: gate_runtime, gate_cpus, gate_events
 *		(a recording point's program, gate_front__build_record()).
 * @policy_off:	offset of trig_policy[] in .bss; @stats_off of stats[].
 * @filter_cpus: -C: record only on the CPUs gate_cpus marks.
 * @tp_id:	the tracepoint's id (common_type of its records).
 * @switch_hook: gate_sched_switch is loaded: the program may remember the
 *		running thread (gate_front__uses_cpu_state()).
 * @open_mask, @where: the windows the tracepoint opens and the --where
 *		condition (gate_front__build_where()).
 * @filter_targets, @target_threads: as the gate's rodata.
 * @pids:	targets known at build time, compared as constants.
 * @tp_flags:	GATE_TP_* of the tracepoint; @rec_size its record's size.
 * @trig_mask:	its triggers; @triggers and @conds (NULL: none) indexed by trigger.
 * @task:	task_struct offsets, where gate_front__needs_task() says so.
 * @probe:	a probe point's program (gate_front__build_probe()):
 *		GATE_FRONT_ENTRY (uprobe, kprobe: arg0..arg5 from the registers)
 *		or GATE_FRONT_RETURN (uretprobe, kretprobe: ret), or
 *		GATE_FRONT_USDT (usdt: arg0..arg5 from the gate's environment,
 *		gate_env, where the shared usdt program put them before it
 *		tail-called this one: see @env_fd), 0 a tracepoint.
 * @env_fd:	with GATE_FRONT_USDT, gate_env.
 * @ret_cast:	what types ret at a return (EXPR_OP_CAST's operand), 0 none.
 * @probe_key:	the shared program's key for the hit (struct gate_trig_pcpu.probe_key).
 * @probe_progs_fd, @probe_prog: gate_probe_progs and the index (GATE_PROBE_*)
 *		of the shared program to tail-call.
 * @close_mask:	the windows the point closes.
 * @fire_prog:	with @probe, gate_front__build()'s: its index in @fire_fd
 *		(gate_probe_progs, GATE_PROBE_FIRE_*), the tracepoints' gate_fire 0.
 * @no_windows:	the gate's no_windows: --where is never evaluated.
 * @is_window, @window: a uprobe window's entry, window @window: its --where
 *		is evaluated at the outermost call, not at a call nested in one
 *		it vetoed (@vetoed_fd: gate_uprobe_vetoed, key tid and window).
 * @call_frames: a uretprobe or kretprobe point whose conditions read its call's entry:
 *		arg0..arg5 (entry.argN) and $duration from the thread's innermost
 *		call in gate_calls (@calls_fd, key {tid, @probe_key}), which the
 *		shared program then pops (the program never runs the actions).
 * @entry_args:	the gate's entry_args: at a syscall's exit arg0..arg5
 *		(entry.argN, str(entry.argN)) are the arguments the thread
 *		entered that syscall with (gate_sys_entries, @sys_entries_fd,
 *		stamped at its entry), 0 when its entry was not seen.
 */
struct gate_front_spec {
	int config_fd, targets_fd, pcpu_fd, bss_fd, fire_fd, expr_state_fd, counts_fd, threads_fd, sys_entries_fd;
	int uvars_fd;	/* expr_uvars: variables of your own */
	int calls_fd;
	int runtime_fd, cpus_fd, events_fd;
	int vetoed_fd;
	__u32 policy_off, stats_off;
	int filter_cpus;
	__u32 tp_id;
	int switch_hook;
	__u64 open_mask;
	const struct expr_prog *where;
	int filter_targets, target_threads;
	__u32 pids[GATE_FRONT_MAX_PIDS];
	int nr_pids;
	__u32 tp_flags, rec_size;
	__u32 trig_mask;
	const struct gate_trigger *triggers;
	const struct expr_prog *const *conds;
	struct gate_front_task task;
	int probe;
	__u8 ret_cast;
	__u32 probe_key;
	int probe_progs_fd;
	__u32 probe_prog;
	__u64 close_mask;
	__u32 fire_prog;
	int no_windows;
	int is_window;
	__u32 window;
	int env_fd;
	int call_frames;
	int entry_args;
};

#define GATE_FRONT_ENTRY	1
#define GATE_FRONT_RETURN	2
#define GATE_FRONT_USDT		3

/**
 * gate_front__build() - the program for @spec into @a.
 * @why: on -EOPNOTSUPP, why the point keeps the shared program.
 *
 * Return: 0, -EOPNOTSUPP, or -errno.
 */
int gate_front__build(struct bpf_asm *a, const struct gate_front_spec *spec, char *why, size_t why_size);

/**
 * gate_front__build_record() - the program of a tracepoint whose only role
 * is to be recorded, every hit by a target (no windows): armed, target, -C,
 * a snapshot's freeze, then the record and its sample IP straight from the
 * context to the bpf-output event, counted in the gate's stats, as the
 * shared program's emit() does.
 * @why: on -EOPNOTSUPP, why the shared program records it instead.
 *
 * Return: 0, -EOPNOTSUPP, or -errno.
 */
int gate_front__build_record(struct bpf_asm *a, const struct gate_front_spec *spec, char *why, size_t why_size);

/**
 * gate_front__build_where() - the program that decides a window start's
 * --where at a tracepoint, attached before the shared gate_tracepoint there:
 * for a target's hit that would open one of @spec->open_mask's windows (as
 * the shared program decides it: not all of them open on the thread yet),
 * it evaluates the compiled condition, state and all, and leaves the
 * verdict in this CPU's gate_trig_pcpu for the shared program, which then
 * interprets nothing (struct gate_trig_pcpu.where_tp).
 * @why: on -EOPNOTSUPP, why the shared program interprets it instead.
 *
 * Return: 0, -EOPNOTSUPP, or -errno.
 */
int gate_front__build_where(struct bpf_asm *a, const struct gate_front_spec *spec, char *why, size_t why_size);

/**
 * gate_front__build_probe() - the program of a probe point (uprobe,
 * uretprobe, kprobe, kretprobe; @spec->probe) or of a uprobe window's entry
 * (@spec->is_window) whose conditions are compiled: armed, target, then the
 * --where where a window would open (as the shared program decides it) and
 * every trigger's condition, state and all; it leaves the verdicts in this
 * CPU's gate_trig_pcpu (probe_key, probe_verdict) and tail-calls the shared
 * program, which then interprets nothing and does the rest.
 * @why: on -EOPNOTSUPP, why the shared program interprets them instead.
 *
 * Return: 0, -EOPNOTSUPP, or -errno.
 */
int gate_front__build_probe(struct bpf_asm *a, const struct gate_front_spec *spec, char *why, size_t why_size);

/**
 * gate_front__check_probe_cond() - can a probe point's own program run
 * condition @cond (a trigger's, or the --where when @where) at a point of
 * kind @probe (GATE_FRONT_*) that opens or closes windows when @windows?
 * Nothing is loaded (for --dry-run).
 * Return: 0, or -EOPNOTSUPP with @why.
 */
int gate_front__check_probe_cond(const struct expr_prog *cond, int probe, int where, int windows, char *why,
				 size_t why_size);

/**
 * gate_front__uses_cpu_state() - does @spec's program remember the running
 * thread in gate_trig_pcpu? The caller must then attach gate_sched_switch
 * before arming.
 */
int gate_front__uses_cpu_state(const struct gate_front_spec *spec);

/**
 * gate_front__check_cond() - can a point's own program run condition @cond
 * at a tracepoint with @tp_flags (GATE_TP_SYSCALL_*) and a record of
 * @rec_size bytes? Nothing is loaded (for --dry-run).
 * Return: 0, or -EOPNOTSUPP with @why.
 */
int gate_front__check_cond(const struct expr_prog *cond, __u32 tp_flags, __u32 rec_size, char *why, size_t why_size);

/**
 * gate_front__needs_task() - does @spec's program read the task_struct (a
 * condition reading ppid)? Only then does @spec need @task.
 */
int gate_front__needs_task(const struct gate_front_spec *spec);

/**
 * gate_front__task_offsets() - @t from the running kernel's BTF.
 * Return: 0 or -errno.
 */
int gate_front__task_offsets(struct gate_front_task *t);

#endif
