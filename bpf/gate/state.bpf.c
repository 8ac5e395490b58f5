// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate: decides in the kernel, per thread, whether a tracepoint hit is
 * inside a trigger window, and if so hands the raw record to userspace through
 * the per-CPU bpf-output perf event. See include/auxtrig/gate_abi.h.
 *
 * One object, linked from the files of bpf/gate/ (bpftool gen object):
 *   state.bpf.c/.h      configuration, counters and maps, shared by all
 *   tracepoint.bpf.c    a tracepoint hit; gate_fire (the compiled triggers' actions)
 *   thread.bpf.c        threads forked, exec'd, switched to, exited
 *   uprobe_window.bpf.c uprobe windows: a function's calls, outermost to return
 *   point.bpf.c         probe points: uprobe, uretprobe, usdt, kprobe, kretprobe, mem
 *   aux_veto.bpf.c      --where on hardware trace: vetoes on the AUX group's uprobes
 * and the inline helpers they share: window.bpf.h (a thread's windows),
 * emit.bpf.h (records out), env.bpf.h (what conditions see), trigger.bpf.h
 * (--on), regs.bpf.h (a probe's registers).
 */
#include "vmlinux.h"
#include "state.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 filter_targets = 1;	/* 0: every process (-a) */
const volatile __u32 target_threads = 0;	/* 1: gate_targets holds thread ids (-t) */
const volatile __u32 filter_cpus = 0;		/* 1: record only on CPUs in gate_cpus (-C) */
const volatile __u32 no_windows = 0;		/* no --window: every hit is inside */
const volatile __u32 have_where = 0;		/* --where given: gate_where holds it */
const volatile __u32 uprobe_enter_type = 0;	/* record types of auxtrig:uprobe_enter/exit */
const volatile __u32 uprobe_exit_type = 0;
/* Snapshot triggers exist: threads whose records a freeze held back are noted (gate_held). */
const volatile __u32 have_snap_triggers = 0;
/* --on set actions ({ $v = ... }) exist: trigger_fire() runs their statements (gate_trig_sets). */
const volatile __u32 have_set_actions = 0;
__u64 snap_points;	/* snapshot points emitted (GATE_OUT_POINT numbers) */
/*
 * Snapshots the recorder began and finished (written by userspace only,
 * through the mapped .bss): a trigger whose own record a snapshot may have
 * taken meanwhile takes none (trigger_fire()).
 */
__u64 snaps_begun;
__u64 snaps_done;

/* Per uprobe window: the cast that types its function's return value (GATE_TP_RET_*), 0 none. */
const volatile __u8 uprobe_window_ret[GATE_MAX_WINDOWS] = {};
const volatile __u32 signal_edges = 0;		/* 1: window edges to gate_ctl (userspace-gated AUX) */
const volatile __u32 signal_threads = 0;	/* 1: the targets' new threads to gate_ctl (GATE_MSG_THREAD) */
const volatile __u32 resume_type = 0;		/* record types of auxtrig:resume/pause */
const volatile __u32 pause_type = 0;
const volatile __u32 hold_windows = 0;		/* --min/--max-duration: windows are timed */
const volatile __u64 min_duration_ns = 0;
const volatile __u64 max_duration_ns = 0;	/* 0: no maximum */
const volatile __u32 env_fields = ~0u;		/* builtins conditions read: bit EXPR_F_x (fill_env) */
const volatile __u32 need_elapsed = 0;		/* a condition reads $elapsed: fill_env() times it */
const volatile __u32 entry_args = 0;		/* at syscall exits fill_env() gives the entry's arguments */
const volatile __u32 need_duration = 0;		/* a syscall exit's condition reads $duration */
const volatile __u32 call_frames = 0;		/* a u/kretprobe point reads its call's entry (gate_calls) */
const volatile __u32 mark_strs = 0;		/* marks carry a string (mark(str(argN))): gate_mark_rec */

const volatile struct gate_trigger gate_triggers[GATE_MAX_TRIGGERS] = {};

const volatile __u32 aux_veto = 0;	/* the veto programs are loaded: gate_aux_veto has entries */

struct gate_stats stats[GATE_STATS_SLOTS];
/*
 * once/every/after: each trigger's matches, global as the policies are; an
 * atomic add only while it can still change the outcome (see policy_fires()).
 */
__u64 trig_policy[GATE_MAX_TRIGGERS];
struct gate_edge_stats edge_stats;
__u64 trig_tat[GATE_MAX_TRIGGERS];	/* limit:N/s: each trigger's theoretical arrival time (GCRA) */
__u64 window_seq;			/* the last window id handed out */
__u64 thread_msgs_dropped;		/* GATE_MSG_THREAD lost: gate_ctl was full */
