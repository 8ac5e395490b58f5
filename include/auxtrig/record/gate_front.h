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
 * Registers: r6 the context, r7 the current task (bpf_get_current_task_btf()),
 * r8 this CPU's struct gate_trig_pcpu, r9 the triggers that fire.
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
 *		gate_fire_prog, expr_state, expr_counts); any value to only
 *		check that the program can be built.
 * @policy_off:	offset of trig_policy[] in .bss.
 * @filter_targets, @target_threads: as the gate's rodata.
 * @pids:	targets known at build time, compared as constants.
 * @tp_flags:	GATE_TP_* of the tracepoint; @rec_size its record's size.
 * @trig_mask:	its triggers; @triggers and @conds (NULL: none) indexed by trigger.
 * @task:	task_struct offsets.
 */
struct gate_front_spec {
	int config_fd, targets_fd, pcpu_fd, bss_fd, fire_fd, expr_state_fd, counts_fd;
	__u32 policy_off;
	int filter_targets, target_threads;
	__u32 pids[GATE_FRONT_MAX_PIDS];
	int nr_pids;
	__u32 tp_flags, rec_size;
	__u32 trig_mask;
	const struct gate_trigger *triggers;
	const struct expr_prog *const *conds;
	struct gate_front_task task;
};

/**
 * gate_front__build() - the program for @spec into @a.
 * @why: on -EOPNOTSUPP, why the point keeps the shared program.
 *
 * Return: 0, -EOPNOTSUPP, or -errno.
 */
int gate_front__build(struct bpf_asm *a, const struct gate_front_spec *spec, char *why, size_t why_size);

/**
 * gate_front__check_cond() - can a point's own program run condition @cond
 * at a tracepoint with @tp_flags (GATE_TP_SYSCALL_*) and a record of
 * @rec_size bytes? Nothing is loaded (for --dry-run).
 * Return: 0, or -EOPNOTSUPP with @why.
 */
int gate_front__check_cond(const struct expr_prog *cond, __u32 tp_flags, __u32 rec_size, char *why, size_t why_size);

/**
 * gate_front__task_offsets() - @t from the running kernel's BTF.
 * Return: 0 or -errno.
 */
int gate_front__task_offsets(struct gate_front_task *t);

#endif
