/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TRIGGER_BPF_H
#define AUXTRIG_TRIGGER_BPF_H

/**
 * DOC: writing your own trigger programs
 *
 * For conditions the expression language cannot say (state across events,
 * several probes together), write BPF programs and hand them to
 * `auxtrig record --trigger-prog FILE.bpf.o` (or FILE.bpf.c, compiled with
 * clang). Include, in this order:
 *
 *	#include "vmlinux.h"
 *	#include <bpf/bpf_helpers.h>
 *	#include <bpf/bpf_tracing.h>
 *	#include <bpf/bpf_core_read.h>
 *	#include "auxtrig/trigger.bpf.h"
 *
 * Programs are attached as their SEC() names say (tp/SYSTEM/EVENT,
 * raw_tp/..., uprobe/PATH:FUNC, ...). The maps below are auxtrig's own: the
 * loader replaces them with the gate's, so your program sees the same
 * windows, targets and switches, and its actions work exactly like --on.
 *
 * One rule: a tracepoint program must return AUXTRIG_PASS. The kernel ANDs
 * the results of all BPF programs on a tracepoint for every perf user of it;
 * returning 0 would hide the event from a concurrent perf record or bpftrace.
 *
 * Actions:
 *	auxtrig_snapshot(ctx, reason, value)  freeze the flight recorder (-S) here
 *					     and take a snapshot ending here
 *	auxtrig_mark(ctx, reason, value)      an auxtrig:mark record in the file
 *	auxtrig_stop(ctx, reason)             end the run
 *	auxtrig_resume(ctx) / auxtrig_pause(ctx)
 *					     open / close the current thread's
 *					     recording window: give -w prog so that
 *					     events are recorded inside windows only
 *					     (the same window --on ...:resume/pause
 *					     opens; windows opened here are not
 *					     timed by --min/--max-duration)
 * Queries: auxtrig_armed(), auxtrig_is_target(), auxtrig_in_window(w) (w: the
 * index of a -w option, or AUXTRIG_USER_WINDOW).
 * reason is yours (0..999): the recorder shows it as "prog:REASON".
 */

#include "auxtrig/gate_abi.h"
#include "auxtrig/gate_maps.bpf.h"

#define AUXTRIG_PASS		1
#define AUXTRIG_USER_WINDOW	GATE_USER_WINDOW

/* What auxtrig set (armed, targets, mark type, edges): read only. */
static __always_inline struct gate_config *auxtrig__config(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_config, &zero);
}

/* What BPF sets (a freeze): the gate's and yours. */
static __always_inline struct gate_runtime *auxtrig__runtime(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_runtime, &zero);
}

/* auxtrig_armed() - recording has started (nothing before that counts). */
static __always_inline int auxtrig_armed(void)
{
	struct gate_config *gc = auxtrig__config();

	return gc && gc->armed;
}

/* auxtrig_is_target() - the current process is one auxtrig records. */
static __always_inline int auxtrig_is_target(void)
{
	struct gate_config *gc = auxtrig__config();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return gc && (gc->all || bpf_map_lookup_elem(&gate_targets, &tgid));
}

/* auxtrig_in_window() - the current thread is inside window @w. */
static __always_inline int auxtrig_in_window(__u32 w)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gate_thread *th = bpf_map_lookup_elem(&gate_threads, &tid);

	return th && w < GATE_MAX_WINDOWS && (th->open & (1ULL << w));
}

static __always_inline int auxtrig__ctl(__u32 reason, __u32 action, __s64 value)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct gate_ctl_msg *m = bpf_ringbuf_reserve(&gate_ctl, sizeof(*m), 0);

	if (!m)
		return -1;
	__builtin_memset(m, 0, sizeof(*m));
	m->type = GATE_MSG_ACTION;
	m->size = sizeof(*m);
	m->trigger = GATE_USER_TRIGGER_BASE + reason;
	m->action = action;
	m->pid = pid_tgid >> 32;
	m->tid = (__u32)pid_tgid;
	m->time_ns = bpf_ktime_get_ns();
	m->ret = value;
	bpf_ringbuf_submit(m, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * auxtrig_snapshot() - freeze the flight recorder now and ask for a snapshot.
 * While another snapshot is being taken (the recorder is frozen: this call's
 * records were held back) it asks for none and returns 1.
 */
static __always_inline int auxtrig_snapshot(void *ctx, __u32 reason, __s64 value)
{
	struct gate_runtime *rt = auxtrig__runtime();

	if (!rt || __sync_val_compare_and_swap(&rt->frozen, 0, 1))
		return 1;
	return auxtrig__ctl(reason, GATE_ACT_SNAPSHOT, value);
}

/* Has a stop action fired (nothing is recorded from then on)? */
static __always_inline int auxtrig__stopped(void)
{
	__u32 zero = 0;
	struct gate_stop *sp = bpf_map_lookup_elem(&gate_stop, &zero);

	return sp && sp->at && bpf_ktime_get_ns() >= sp->at;
}

/*
 * auxtrig_stop() - end the run here: an auxtrig:stop record (trigger = 1000 +
 * reason) marks the moment, and nothing later is recorded, from any CPU.
 */
static __always_inline int auxtrig_stop(void *ctx, __u32 reason)
{
	struct gate_config *gc = auxtrig__config();
	__u32 zero = 0;
	struct gate_stop *sp = bpf_map_lookup_elem(&gate_stop, &zero);
	struct {
		struct gate_out_hdr hdr;	/* gate_abi.h: what the gate emits */
		struct gate_mark_rec rec;
	} m = {};

	__u64 now = bpf_ktime_get_ns();

	/* The stop is in force first, then its record: see struct gate_stop. */
	if (sp && (!sp->at || now < sp->at)) {
		sp->trigger = GATE_USER_TRIGGER_BASE + reason;
		sp->at = now;
		if (gc && gc->stop_type && !__sync_val_compare_and_swap(&sp->marked, 0, 1)) {
			m.rec.common_type = gc->stop_type;
			m.rec.common_pid = (__u32)bpf_get_current_pid_tgid();
			m.rec.trigger = GATE_USER_TRIGGER_BASE + reason;
			m.rec.nr = -1;
			bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, &m, sizeof(m));
		}
	}
	return auxtrig__ctl(reason, GATE_ACT_STOP, 0);
}

/* auxtrig_mark() - an auxtrig:mark record (trigger = 1000 + reason, ret = value). */
static __always_inline int auxtrig_mark(void *ctx, __u32 reason, __s64 value)
{
	struct gate_config *gc = auxtrig__config();
	struct gate_runtime *rt = auxtrig__runtime();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gate_thread *th = bpf_map_lookup_elem(&gate_threads, &tid);
	struct {
		struct gate_out_hdr hdr;	/* gate_abi.h: what the gate emits */
		struct gate_mark_rec rec;
	} m = {};

	if (!gc || !gc->mark_type || !rt || rt->frozen || auxtrig__stopped())
		return -1;
	if (th && th->open && th->id) {
		/* Inside a window the gate times (--min/--max-duration): it waits for the verdict. */
		m.hdr.window = th->id;
		m.hdr.flags = GATE_OUT_HELD;
	}
	m.rec.common_type = gc->mark_type;
	m.rec.common_pid = (__u32)bpf_get_current_pid_tgid();
	m.rec.trigger = GATE_USER_TRIGGER_BASE + reason;
	m.rec.nr = -1;
	m.rec.ret = value;
	return bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, &m, sizeof(m));
}

/*
 * Hardware trace gated from userspace: the thread's first window opening and
 * last closing go to the recorder, which switches the trace on and off.
 */
static __always_inline struct gate_prog_stats *auxtrig__stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_prog_stats, &zero);
}

static __always_inline void auxtrig__edge(__u32 action, __u64 before, __u64 after)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct gate_config *gc = auxtrig__config();
	struct gate_prog_stats *st = auxtrig__stats();
	struct gate_ctl_msg *m;

	if (!gc || !gc->edges)
		return;
	m = bpf_ringbuf_reserve(&gate_ctl, sizeof(*m), 0);
	if (!m) {
		if (st)
			__sync_fetch_and_add(&st->edges_dropped, 1);
		return;
	}
	__builtin_memset(m, 0, sizeof(*m));
	m->type = GATE_MSG_EDGE;
	m->size = sizeof(*m);
	m->trigger = GATE_EDGE_TRIGGER;
	m->action = action;
	m->pid = pid_tgid >> 32;
	m->tid = (__u32)pid_tgid;
	m->time_ns = bpf_ktime_get_ns();
	m->args[0] = before;
	m->args[1] = after;
	bpf_ringbuf_submit(m, BPF_RB_FORCE_WAKEUP);
	if (st)
		__sync_fetch_and_add(&st->edges_sent, 1);
}

/* The user window of a thread opened (@open) or closed: counted for the summary. */
static __always_inline void auxtrig__count_window(int open)
{
	struct gate_prog_stats *st = auxtrig__stats();

	if (st)
		__sync_fetch_and_add(open ? &st->windows_opened : &st->windows_closed, 1);
}

static __always_inline int auxtrig__window(int open)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gate_thread *th = bpf_map_lookup_elem(&gate_threads, &tid), fresh = {};
	__u64 bit = 1ULL << AUXTRIG_USER_WINDOW, before;
	int err;

	if (!th) {
		if (!open)
			return 0;
		fresh.open = bit;
		fresh.opened_ns = bpf_ktime_get_ns();
		err = bpf_map_update_elem(&gate_threads, &tid, &fresh, BPF_NOEXIST);
		if (!err) {
			auxtrig__count_window(1);
			auxtrig__edge(GATE_ACT_EDGE_OPEN, 0, bit);
		}
		return err;
	}
	before = th->open;
	if ((before & bit) != (open ? bit : 0))
		auxtrig__count_window(open);
	if (open && !before)
		th->opened_ns = bpf_ktime_get_ns();
	if (open)
		th->open |= bit;
	else
		th->open &= ~bit;
	if (!before && th->open)
		auxtrig__edge(GATE_ACT_EDGE_OPEN, before, th->open);
	else if (before && !th->open)
		auxtrig__edge(GATE_ACT_EDGE_CLOSE, before, 0);
	return 0;
}

/* auxtrig_resume() / auxtrig_pause() - open / close this thread's recording window. */
static __always_inline int auxtrig_resume(void *ctx)
{
	return auxtrig__window(1);
}

static __always_inline int auxtrig_pause(void *ctx)
{
	return auxtrig__window(0);
}

#endif
