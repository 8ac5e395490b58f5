/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_H
#define AUXTRIG_GATE_H

/*
 * record/ layer: the gate loader (user/record/gate.c): bpf/gate/ configured from
 * the plan and window map, loaded, attached, armed; run by the recorder.
 */

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/lang/point.h"
#include "auxtrig/sys/tracefs.h"

/**
 * DOC: gate loader
 *
 * Loads the gate (bpf/gate/), tells it what each tracepoint means, attaches it, and
 * arms it last: the programs do nothing until gate__arm(), so no record can
 * reach a half-built pipeline.
 *
 *   gate__open() -> gate__add_tp()... -> gate__load() -> gate__set_output()...
 *   -> gate__add_target()... -> gate__attach() -> gate__arm() ... gate__disarm()
 *   -> gate__close()
 */

struct gate;
struct expr_prog;
struct record_plan;
struct window_map;

struct perf_sys;

struct gate_opts {
	bool all_processes;	/* -a: no target filter */
	bool threads;		/* -t: targets are thread ids, children not followed */
	int nr_cpus;		/* possible CPUs: size of the output array */
	const struct perf_sys *sys;	/* mem: points' breakpoint events; NULL: the kernel */
};

/** gate__open() - open the skeleton (no privileges needed until gate__load()). NULL with errno set. */
struct gate *gate__open(const struct gate_opts *opts);
/**
 * gate__add_plan() - configure the gate for a recording: what each of the
 * plan's tracepoints means (@m: its windows, translated once), the uprobe
 * windows and probe points, --where, --on, -C, --min/--max-duration and
 * auxtrig's own record types. Before gate__load(). Return: 0 or -errno.
 */
int gate__add_plan(struct gate *g, const struct record_plan *p, const struct window_map *m);
/** gate__open_plan() - gate__open() for @p (-a, -t, the possible CPUs), then gate__add_plan(). NULL with errno set. */
struct gate *gate__open_plan(const struct record_plan *p, const struct window_map *m);
/**
 * gate__describe() - the configuration gate__load() will write (rodata,
 * tracepoints, points, triggers, the programs loaded) and what
 * gate__attach() will attach, in its order, one line each. For tests and
 * debugging; works before gate__load(). Return: bytes written.
 */
int gate__describe(const struct gate *g, FILE *f);
/**
 * gate__add_tp() - declare what a tracepoint means (merged with earlier calls
 * for the same tracepoint). Before gate__load().
 */
int gate__add_tp(struct gate *g, const struct tp_format *fmt, __u64 open_mask, __u64 close_mask,
		 __u32 flags);
/**
 * gate__syscall_flags() - GATE_TP_SYSCALL_ENTER or _EXIT of a syscall entry or
 * exit tracepoint (syscalls:sys_enter_NAME, raw_syscalls:sys_exit...), as
 * gate__add_tp() sets them; 0 for any other tracepoint.
 */
__u32 gate__syscall_flags(const struct tp_format *fmt);
/** gate__record_always() - no windows: record every hit of the targets. Before load. */
void gate__record_always(struct gate *g);
/** gate__record_only_cpus() - -C: record only on CPUs given to gate__record_cpu(). Before load. */
void gate__record_only_cpus(struct gate *g);
/** gate__set_where() - the compiled --where condition for window starts. */
int gate__set_where(struct gate *g, const struct expr_prog *prog);
/** gate__load() - load into the kernel (verifier log with -vv) and fill the maps. */
int gate__load(struct gate *g);
/** gate__set_output() - the bpf-output perf event of @cpu. */
int gate__set_output(struct gate *g, int cpu, int perf_fd);
/** gate__add_target() - a process (tgid) whose threads may open windows. */
int gate__add_target(struct gate *g, pid_t pid);
/** gate__add_exec_target() - a forked command: a target from its exec on. */
int gate__add_exec_target(struct gate *g, pid_t pid);
/** gate__record_cpu() - with any call, only CPUs named this way are recorded (-C). */
int gate__record_cpu(struct gate *g, int cpu);
/**
 * gate__add_trigger() - a --on at tracepoint @fmt: action and policy in @t,
 * condition in @cond (NULL: always). Before gate__load().
 * Return: the trigger's index (>= 0) or -errno (-E2BIG: too many).
 */
int gate__add_trigger(struct gate *g, const struct tp_format *fmt, const struct gate_trigger *t,
		      const struct expr_prog *cond);
/**
 * gate__add_point() - a probe point (uprobe, uretprobe, usdt, kprobe,
 * kretprobe, mem) that opens the windows in @open_mask and closes those in
 * @close_mask (merged with earlier calls for the same point). Only the
 * programs of the kinds used are loaded. Before gate__load().
 * Return: the point's index (>= 0) or -errno (-E2BIG: too many).
 */
int gate__add_point(struct gate *g, const struct point *p, __u64 open_mask, __u64 close_mask);
/** gate__add_point_trigger() - gate__add_trigger() at a probe point. */
int gate__add_point_trigger(struct gate *g, const struct point *p, const struct gate_trigger *t,
			    const struct expr_prog *cond);
/**
 * gate__ctl_open() - deliver fired triggers to @cb (after gate__load()).
 * Return: 0 or -errno.
 */
int gate__ctl_open(struct gate *g, int (*cb)(void *ctx, void *data, size_t size), void *ctx);
/** gate__ctl_fd() - an fd that polls readable when fired triggers wait. */
int gate__ctl_fd(const struct gate *g);
/** gate__ctl_consume() - call the callback for every waiting message. */
int gate__ctl_consume(struct gate *g);
/** gate__unfreeze() - after a triggered snapshot: let records flow again. */
void gate__unfreeze(struct gate *g);
/**
 * gate__snapshot_begin() / gate__snapshot_end() - around every snapshot
 * (triggered or not), before its first ring is read and after its last: a
 * trigger whose hit emitted its record before the snapshot took it, and
 * fired after, then takes no snapshot of its own (it would lack that record).
 */
void gate__snapshot_begin(struct gate *g);
void gate__snapshot_end(struct gate *g);
/**
 * gate__hold_cut() - a triggered snapshot took @rec (a gate record, its
 * common fields first, @size bytes) of thread @tid but cut it as later
 * than its trigger: if it is a system call's entry, the thread's snapshot
 * trigger at the end of that call takes no snapshot (it would lack the
 * entry), as for records a freeze held back. Before gate__unfreeze().
 */
void gate__hold_cut(struct gate *g, const void *rec, size_t size, __u32 tid);
/** gate__expr_lost() - condition evaluations made false because a $count could not be stored. */
__u64 gate__expr_lost(const struct gate *g);

/** gate__uvar_lost() - evaluations made false because a variable of your own did not fit in its table. */
__u64 gate__uvar_lost(const struct gate *g);

/**
 * gate__set_trigger_sets() - the statements of the last trigger added, a set
 * action ({ $v = ... }, GATE_ACT_SET), compiled by expr__compile_action().
 * Return: 0, -EINVAL (no trigger, or it has them already), -ENOMEM.
 */
int gate__set_trigger_sets(struct gate *g, const struct expr_prog *sets);
/** gate__trigger_stats() - the counters of trigger @i. */
void gate__trigger_stats(const struct gate *g, int i, struct gate_trigger_stats *out);
/**
 * gate__add_uprobe_window() - window @w opens at the entry of SYMBOL (+@offset)
 * in @path and closes at its return. Before gate__attach().
 */
int gate__add_uprobe_window(struct gate *g, int w, const char *path, const char *symbol,
			    unsigned long offset);
/** gate__set_own_types() - record types of auxtrig:uprobe_enter/exit. Before load. */
void gate__set_own_types(struct gate *g, unsigned int enter, unsigned int exit);
/**
 * gate__signal_edges() - send window edges (GATE_ACT_EDGE_OPEN/CLOSE, per
 * thread, stamped) on the control ring, for hardware trace gated from
 * userspace. Before gate__load(); the ring is read via gate__ctl_open().
 */
void gate__signal_edges(struct gate *g);
/**
 * gate__aux_veto() - load the programs that veto the hits of hardware-trace
 * uprobe members (gate_aux_veto_enter/exit): --where at the outermost call,
 * its return. Attached by the AUX session to each uprobe PMU member with the
 * cookie (CPU + 1) << 32 | window, or for a thread's member
 * (GATE_AUX_VETO_THREAD | tid) << 32 | window. Before gate__load().
 */
void gate__aux_veto(struct gate *g);
/** gate__aux_veto_fd() - the entry (or @retprobe: return) veto program's fd, after load; -ENOENT if not loaded. */
int gate__aux_veto_fd(const struct gate *g, bool retprobe);
/**
 * gate__aux_veto_stats() - outermost calls let through and vetoed, returns
 * let through, and calls vetoed because the programs' call table was full.
 */
void gate__aux_veto_stats(const struct gate *g, __u64 *resumed, __u64 *vetoed, __u64 *paused, __u64 *untracked);
/**
 * gate__signal_threads() - send GATE_MSG_THREAD on the control ring for each
 * thread or process a target creates (before gate__load()).
 */
void gate__signal_threads(struct gate *g);
/** gate__thread_msgs_dropped() - GATE_MSG_THREAD messages lost: the control ring was full. */
__u64 gate__thread_msgs_dropped(const struct gate *g);
/** gate__edge_stats() - edge messages sent and dropped (ring full), the gate's and trigger programs'. */
void gate__edge_stats(const struct gate *g, struct gate_edge_stats *out);
/** gate__set_mark_type() - record type of auxtrig:mark. Before load. */
void gate__set_mark_type(struct gate *g, unsigned int type);
/** gate__set_stop_type() - record type of auxtrig:stop (a stop action's moment). Before load. */
void gate__set_stop_type(struct gate *g, unsigned int type);
/**
 * gate__stopped() - has a stop action fired? @trigger: what stopped it (as
 * struct gate_stop), @marked: its auxtrig:stop record was emitted; either may
 * be NULL. Return: the stop's bpf_ktime_get_ns() (or deadline), 0 if none.
 */
__u64 gate__stopped(const struct gate *g, __u32 *trigger, bool *marked);
/** gate__set_edge_types() - record types of auxtrig:resume/pause (--on ...:resume/pause). Before load. */
void gate__set_edge_types(struct gate *g, unsigned int resume, unsigned int pause);
/**
 * gate__time_windows() - --min/--max-duration: time each thread's window and
 * tag its records for the recorder to hold until the verdict (gate_abi.h).
 * @max_ns 0: no maximum. Before load.
 */
void gate__time_windows(struct gate *g, __u64 min_ns, __u64 max_ns);
/** gate__map_fd() - the fd of the gate's map @name (for user trigger programs), or -ENOENT. */
int gate__map_fd(const struct gate *g, const char *name);
struct progress;

/**
 * gate__set_progress() - show attaching and detaching on @p (a terminal's
 * status line, include/auxtrig/sys/progress.h), or NULL for nothing.
 */
void gate__set_progress(struct gate *g, struct progress *p);

/**
 * gate__set_detach_watch() - while gate__close() waits for the kernel to
 * detach (tens of milliseconds per tracepoint, under a lock the kernel
 * holds, so hundreds take tens of seconds), a SIGINT, SIGTERM or SIGHUP read
 * from @sigfd (a signalfd, -1: none) leaves the rest to a background process
 * and returns at once. With @note, a long detach not shown on a terminal is
 * said in one line.
 */
void gate__set_detach_watch(struct gate *g, int sigfd, bool note);

/** gate__attach() - attach to every declared tracepoint and probe point, and to fork/exit. */
int gate__attach(struct gate *g);
void gate__arm(struct gate *g);
void gate__disarm(struct gate *g);
/** gate__stats() - the counters summed over CPUs; the windows count trigger programs' too. */
void gate__stats(const struct gate *g, struct gate_stats *sum);
void gate__close(struct gate *g);

#endif
