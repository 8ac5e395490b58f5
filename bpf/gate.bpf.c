// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate: decides in the kernel, per thread, whether a tracepoint hit is
 * inside a trigger window, and if so hands the raw record to userspace through
 * the per-CPU bpf-output perf event. See include/auxtrig/gate_abi.h.
 *
 *           open_mask hit (and --where holds)
 *   closed  --------------------------------->  open   -- RECORD hits are
 *     ^                                          |        recorded while open
 *     +------------- close_mask hit ------------+
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "auxtrig/gate_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 filter_targets = 1;	/* 0: every process (-a) */
const volatile __u32 no_windows = 0;		/* no --window: every hit is inside */

__u32 armed = 0;				/* set by the loader once everything is attached */
struct gate_stats stats[GATE_STATS_SLOTS];

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} gate_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_TPS);
	__type(key, __u32);
	__type(value, struct gate_tp);
} gate_tps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct gate_thread);
} gate_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} gate_targets SEC(".maps");

struct record_buf {
	__u8 data[GATE_RECORD_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record_buf);
} gate_scratch SEC(".maps");

static __always_inline struct gate_stats *my_stats(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= GATE_STATS_SLOTS)
		cpu = GATE_STATS_SLOTS - 1;
	return &stats[cpu];
}

static __always_inline int is_target(__u32 tgid)
{
	return !filter_targets || bpf_map_lookup_elem(&gate_targets, &tgid);
}

/*
 * Copy the whole raw record, dynamic (__data_loc) payloads included, and emit
 * it. The fixed part is copied first so the dynamic locations can be read from
 * the copy (no variable-offset access to ctx), then, if the dynamic data
 * reaches further, the record is copied again at its full length.
 */
static __always_inline void emit(void *ctx, const struct gate_tp *tp, struct gate_stats *st)
{
	__u32 zero = 0, size = tp->size, end, loc, off;
	struct record_buf *buf;

	buf = bpf_map_lookup_elem(&gate_scratch, &zero);
	if (!buf)
		return;
	if (size > GATE_RECORD_MAX) {
		st->too_big++;
		return;
	}
	if (bpf_probe_read_kernel(buf->data, size, ctx))
		return;

	end = size;
	for (int i = 0; i < GATE_MAX_DYN; i++) {
		if (i >= tp->nr_dyn)
			break;
		off = tp->dyn_off[i];
		if (off > GATE_RECORD_MAX - 4)
			break;
		loc = *(__u32 *)&buf->data[off];
		if (tp->dyn_flags[i] & GATE_DYN_REL)
			loc = (loc & 0xffff0000) | ((loc & 0xffff) + off + 4);
		if ((loc & 0xffff) + (loc >> 16) > end)
			end = (loc & 0xffff) + (loc >> 16);
	}
	if (end > GATE_RECORD_MAX) {
		st->too_big++;
		return;
	}
	if (end > size && bpf_probe_read_kernel(buf->data, end, ctx))
		return;

	if (bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, buf->data, end))
		st->output_lost++;
	else
		st->recorded++;
}

SEC("tracepoint")
int gate_tracepoint(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, key;
	struct gate_thread *th, fresh = {};
	struct gate_stats *st;
	struct gate_tp *tp;
	__u64 open = 0, opened = 0;

	if (!armed || !is_target(pid_tgid >> 32))
		return 1;
	st = my_stats();
	key = *(__u16 *)ctx; /* common_type: the tracepoint's id */
	tp = bpf_map_lookup_elem(&gate_tps, &key);
	if (!tp) {
		st->unknown_tp++;
		return 1;
	}

	if (no_windows) {
		if (tp->flags & GATE_TP_RECORD)
			emit(ctx, tp, st);
		return 1;
	}

	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (th)
		open = th->open;

	if (tp->open_mask) {
		opened = tp->open_mask & ~open;
		if (opened) {
			if (!th) {
				fresh.open = opened;
				fresh.opened_ns = bpf_ktime_get_ns();
				if (bpf_map_update_elem(&gate_threads, &tid, &fresh, BPF_NOEXIST)) {
					st->threads_full++;
					return 1;
				}
			} else {
				th->open = open | opened;
			}
			st->windows_opened += __builtin_popcountll(opened);
			open |= opened;
		}
	}

	if ((opened) || (tp->close_mask & open) || ((tp->flags & GATE_TP_RECORD) && open))
		emit(ctx, tp, st);

	if (tp->close_mask & open) {
		st->windows_closed += __builtin_popcountll(tp->close_mask & open);
		open &= ~tp->close_mask;
		th = bpf_map_lookup_elem(&gate_threads, &tid);
		if (!open)
			bpf_map_delete_elem(&gate_threads, &tid);
		else if (th)
			th->open = open;
	}
	return 1;
}

/* Follow the target's children: a fork by a target process makes a target. */
SEC("tp/sched/sched_process_fork")
int gate_follow_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32, child = ctx->child_pid;
	__u8 one = 1;

	if (!filter_targets || !bpf_map_lookup_elem(&gate_targets, &parent))
		return 1;
	bpf_map_update_elem(&gate_targets, &child, &one, BPF_ANY);
	return 1;
}

/* A thread that exits with a window open leaves no state behind. */
SEC("tp/sched/sched_process_exit")
int gate_thread_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;

	bpf_map_delete_elem(&gate_threads, &tid);
	return 1;
}
