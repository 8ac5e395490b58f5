/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_HW_TRACE_H
#define AUXTRIG_HW_TRACE_H

/*
 * record/ layer: hardware trace in a recording (user/record/hw_trace.c): the path
 * its windows take and the AUX session's setup, for the recorder.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/sys/probe.h"

struct aux_session;
struct perf_sys;
struct record_sink;
struct gate;
struct record_plan;
struct window_map;
struct window_map_aux;

/**
 * DOC: hardware trace in a recording
 *
 * The recorder's side of -e PMU/TERMS/MODS: which path the windows take
 * (paused and resumed by the kernel in the AUX group, or gated from
 * userspace on the gate's window edges), the AUX session's setup from the
 * plan and the window map, the edges, and the summary. The AUX session
 * itself is include/auxtrig/record/aux_session.h.
 *
 *   hw_trace__decide()  before the gate loads: it sends edges only for the
 *                       userspace-gated path
 *   window_map__build() with hw_trace__map_aux()
 *   hw_trace__setup()   the AUX session (--dry-run: before the gate)
 *   hw_trace__edge()    each edge from the gate, on the gated path
 *   hw_trace__add_thread(), hw_trace__remove_thread()   per thread: the
 *                       threads the target creates (the gate reports each,
 *                       GATE_MSG_THREAD; it runs meanwhile), and exits
 *
 * Per thread or per CPU: a command, -p or -t target is recorded per thread
 * (hw_trace__per_thread()): each thread has its own AUX group, whose pause
 * state and gate follow it from CPU to CPU, so a thread that migrates inside
 * a window is traced exactly inside it. -a (every task) and -C (chosen CPUs)
 * are recorded per CPU: a window's pause state then stays on the CPU where
 * it opened (a thread that migrates inside it is not traced on the new CPU,
 * and the old CPU traces on until the window's end there).
 */

/**
 * struct hw_trace - hardware trace of one recording
 * @aux:	the AUX session, or NULL
 * @sys:	its kernel: NULL = the running one
 * @pause:	can the AUX PMU pause and resume in the kernel?
 * @edges:	no (or by choice): the gate signals window edges, auxtrig gates the trace
 * @prog_gated:	a -w prog window or a conditional --on resume/pause moved the
 *		windows to userspace gating: why (NULL: not that)
 * @veto:	--where on in-kernel uprobe windows: BPF programs veto their members
 * @where_gated: --where moved the windows to userspace gating: this window's fault
 * @mem_gated:	a window with a mem: end (a hardware breakpoint) moved the
 *		windows to userspace gating: that window's text (NULL: not that)
 */
struct hw_trace {
	struct aux_session *aux;
	const struct perf_sys *sys;
	enum probe_pause pause;
	bool edges;
	const char *prog_gated;
	char prog_why[256];
	bool veto;
	const char *where_gated;
	const char *mem_gated;
	/* per thread through a CoreSight sink every CPU shares (ETR, ETF): its name */
	char shared_sink[64];
	/* per thread: the threads the target created, and how late their groups opened */
	__u64 threads_late_ns_max, threads_late_ns_sum;
	__u64 threads_added, threads_gone;
};

/** hw_trace__decide() - which path the plan's windows take (nothing without -e PMU//). */
void hw_trace__decide(struct hw_trace *hw, const struct record_plan *p, const struct perf_sys *sys);

/** hw_trace__per_thread() - is the plan's hardware trace recorded per thread (a target, no -a, no -C)? */
bool hw_trace__per_thread(const struct record_plan *p);

/**
 * hw_trace__sink_note() - per thread through a sink the CPUs share, what the
 * driver does with threads that run at once, in @buf; NULL otherwise.
 */
const char *hw_trace__sink_note(const struct hw_trace *hw, const struct record_plan *p, char *buf, size_t size);

/** hw_trace__map_aux() - what window_map__build() needs to know of it. */
void hw_trace__map_aux(const struct hw_trace *hw, const struct record_plan *p, struct window_map_aux *out);

/**
 * hw_trace__setup() - the AUX session over @m's triggers: per thread
 * (hw_trace__per_thread()) for @tids (none on --dry-run: one group stands
 * for every thread), else per CPU for task @pid (-1: every task);
 * @g: the loaded gate (its veto programs), NULL on --dry-run.
 * Return: 0 or -errno (-EINVAL, -ENOENT, -ERANGE: the user's input).
 */
int hw_trace__setup(struct hw_trace *hw, const struct record_plan *p, struct window_map *m, struct gate *g,
		    pid_t pid, const pid_t *tids, size_t nr_tids);

/**
 * hw_trace__add_thread() - per thread: thread @tid, which the target created
 * at @created_ns (CLOCK_MONOTONIC, 0: not known) and which runs meanwhile,
 * gets its group; what it did before is not traced (the delay is counted).
 * Return: its index for aux_session__fd(), -EEXIST (it has one), -ESRCH (it
 * is gone already: counted), or -errno (with a warning: its windows are not
 * traced).
 */
int hw_trace__add_thread(struct hw_trace *hw, pid_t tid, __u64 created_ns);

/** hw_trace__remove_thread() - per thread: thread @tid exited: its last trace to @k, its group closed. */
int hw_trace__remove_thread(struct hw_trace *hw, pid_t tid, struct record_sink *k);

/** hw_trace__edge() - a window edge from the gate: the gated path switches the trace. */
int hw_trace__edge(struct hw_trace *hw, const struct record_plan *p, const struct gate_ctl_msg *msg);

/** hw_trace__path() - what the windows do to the trace, in words. */
const char *hw_trace__path(const struct hw_trace *hw);

/** hw_trace__note() - what --where or trigger programs did to the path, or NULL. */
const char *hw_trace__note(const struct hw_trace *hw, const struct record_plan *p, char *buf, size_t size);

/** hw_trace__summary() - end of run: what the vetoes and the userspace gate did. */
void hw_trace__summary(const struct hw_trace *hw, const struct record_plan *p, const struct gate *g);

/** hw_trace__exit() - delete the AUX session. */
void hw_trace__exit(struct hw_trace *hw);

#endif
