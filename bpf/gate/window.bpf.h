/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_WINDOW_BPF_H
#define AUXTRIG_GATE_WINDOW_BPF_H

/*
 * A thread's windows (struct gate_thread in gate_threads): opened, closed,
 * their first open and last close timed (--min/--max-duration) and signalled
 * to the recorder (edges, for hardware trace gated from userspace).
 *
 *           open_mask hit (and --where holds)
 *   closed  --------------------------------->  open   -- RECORD hits are
 *     ^                                          |        recorded while open
 *     +------------- close_mask hit ------------+
 */
#include "state.bpf.h"

/*
 * A thread's windows went from none open to some (GATE_ACT_EDGE_OPEN) or back
 * (GATE_ACT_EDGE_CLOSE): tell the recorder, which gates the AUX events from
 * userspace when the kernel cannot pause/resume them (gate_abi.h).
 */
static __always_inline void emit_edge(__u32 action, __u64 before, __u64 after)
{
	__u64 now = bpf_ktime_get_ns(), pid_tgid;
	struct gate_ctl_msg *msg;

	if (!signal_edges)
		return;
	msg = bpf_ringbuf_reserve(&gate_ctl, sizeof(*msg), 0);
	if (!msg) {
		__sync_fetch_and_add(&edge_stats.dropped, 1);
		return;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	__builtin_memset(msg, 0, sizeof(*msg));
	msg->type = GATE_MSG_EDGE;
	msg->size = sizeof(*msg);
	msg->trigger = GATE_EDGE_TRIGGER;
	msg->action = action;
	msg->pid = pid_tgid >> 32;
	msg->tid = (__u32)pid_tgid;
	msg->time_ns = now;
	msg->args[0] = before;
	msg->args[1] = after;
	bpf_ringbuf_submit(msg, BPF_RB_FORCE_WAKEUP);
	__sync_fetch_and_add(&edge_stats.sent, 1);
}

/* A thread's window (its first open window) starts now. */
static __always_inline void window_start(struct gate_thread *th)
{
	th->opened_ns = bpf_ktime_get_ns();
	th->id = hold_windows ? __sync_add_and_fetch(&window_seq, 1) : 0;
}

/*
 * A thread's last open window closed: with --min/--max-duration, tell the
 * recorder whether the window's held records are written. Not subject to -C
 * or a freeze: without its verdict a window's records would wait forever.
 */
static __always_inline void window_end(void *ctx, const struct gate_thread *th, struct gate_stats *st)
{
	struct {
		struct gate_out_hdr hdr;
		struct gate_verdict_rec rec;
	} v = {};
	struct gate_ctl_msg *m;
	__u64 d;

	if (!hold_windows || !th || !th->id)
		return;
	d = bpf_ktime_get_ns() - th->opened_ns;
	v.hdr.window = th->id;
	v.hdr.flags = GATE_OUT_VERDICT;
	if (d >= min_duration_ns && (!max_duration_ns || d <= max_duration_ns))
		v.hdr.flags |= GATE_OUT_KEEP;
	v.rec.common_pid = (__u32)bpf_get_current_pid_tgid();
	v.rec.duration_ns = d;
	if (!bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, &v, sizeof(v)))
		return;
	/* The data ring is full: the verdict goes on the control ring, so the window does not wait forever. */
	m = bpf_ringbuf_reserve(&gate_ctl, sizeof(*m), 0);
	if (!m) {
		st->output_lost++;
		return;
	}
	__builtin_memset(m, 0, sizeof(*m));
	m->type = GATE_MSG_VERDICT;
	m->size = sizeof(*m);
	m->action = GATE_ACT_VERDICT;
	m->tid = v.rec.common_pid;
	m->time_ns = bpf_ktime_get_ns();
	m->ret = !!(v.hdr.flags & GATE_OUT_KEEP);
	m->args[0] = th->id;
	m->args[1] = d;
	bpf_ringbuf_submit(m, BPF_RB_FORCE_WAKEUP);
}

/*
 * Open windows @opened on thread @tid, whose state is @th (NULL: none yet)
 * with @open already open: the thread's first window starts its timing and
 * sends its edge. Return: 0, or -1 if the thread table is full.
 */
static __always_inline int windows_open(__u32 tid, struct gate_thread *th, __u64 open, __u64 opened,
					struct gate_stats *st)
{
	struct gate_thread fresh = {};

	if (!th) {
		fresh.open = opened;
		window_start(&fresh);
		if (bpf_map_update_elem(&gate_threads, &tid, &fresh, BPF_NOEXIST)) {
			st->threads_full++;
			return -1;
		}
	} else {
		if (!open)
			window_start(th);
		th->open = open | opened;
	}
	st->windows_opened += __builtin_popcountll(opened);
	if (!open)
		emit_edge(GATE_ACT_EDGE_OPEN, 0, opened);
	return 0;
}

/*
 * Close the windows of @mask that are among @open on thread @tid: the last one
 * to close ends the thread's timing, sends its edge and drops its state.
 * Return: the windows still open.
 */
static __always_inline __u64 windows_close(void *ctx, __u32 tid, __u64 open, __u64 mask, struct gate_stats *st)
{
	struct gate_thread *th;

	st->windows_closed += __builtin_popcountll(mask & open);
	if (!(open & ~mask))
		emit_edge(GATE_ACT_EDGE_CLOSE, open, 0);
	open &= ~mask;
	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (!open) {
		window_end(ctx, th, st);
		bpf_map_delete_elem(&gate_threads, &tid);
	} else if (th) {
		th->open = open;
	}
	return open;
}

#endif
