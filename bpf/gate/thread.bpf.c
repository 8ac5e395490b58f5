// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate's view of threads coming and going: the targets' children and
 * execs become targets, a context switch forgets what the point programs
 * knew of the thread, an exit drops the thread's state.
 */
#include "vmlinux.h"
#include "state.bpf.h"
#include "window.bpf.h"

/*
 * Per-thread hardware trace: a target's new thread or process needs its own
 * AUX group, which only userspace can open (GATE_MSG_THREAD). The new task
 * is not held: it may run before its group is open, and the recorder counts
 * how long that took.
 */
static __always_inline void emit_thread(__u32 parent, __u32 child)
{
	struct gate_ctl_msg *msg;

	msg = bpf_ringbuf_reserve(&gate_ctl, sizeof(*msg), 0);
	if (!msg) {
		__sync_fetch_and_add(&thread_msgs_dropped, 1);
		return;
	}
	__builtin_memset(msg, 0, sizeof(*msg));
	msg->type = GATE_MSG_THREAD;
	msg->size = sizeof(*msg);
	msg->pid = parent;
	msg->tid = child;
	msg->time_ns = bpf_ktime_get_ns();
	msg->args[0] = (__u32)bpf_get_current_pid_tgid();
	bpf_ringbuf_submit(msg, BPF_RB_FORCE_WAKEUP);
}

/* Follow the target's children: a fork by a target process makes a target. */
SEC("tp/sched/sched_process_fork")
int gate_follow_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32, child = ctx->child_pid;
	__u8 one = 1;

	if (!filter_targets || target_threads || !bpf_map_lookup_elem(&gate_targets, &parent))
		return 1;
	bpf_map_update_elem(&gate_targets, &child, &one, BPF_ANY);
	if (signal_threads)
		emit_thread(parent, child);
	return 1;
}

/*
 * A command auxtrig started becomes a target when it execs, not when it is
 * forked: between fork and exec the child is still auxtrig's code (it waits on
 * a pipe to be started), and those calls are not the command's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u8);
} gate_exec_targets SEC(".maps");

SEC("tp/sched/sched_process_exec")
int gate_follow_exec(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct gate_trig_pcpu *pc = trig_pcpu();
	__u8 one = 1;

	/* what this CPU's point programs know of the thread: an exec can change its id and its target-ness */
	if (pc)
		pc->cur_state = GATE_CUR_UNKNOWN;
	if (!bpf_map_lookup_elem(&gate_exec_targets, &pid))
		return 1;
	bpf_map_update_elem(&gate_targets, &pid, &one, BPF_ANY);
	bpf_map_delete_elem(&gate_exec_targets, &pid);
	return 1;
}

/*
 * Every context switch: the syscall points' own programs (gate_front.c) know
 * nothing yet of the thread about to run (gate_trig_pcpu.cur_state). A raw
 * tracepoint (no record is built), loaded and attached only when such a
 * program may be.
 */
SEC("?raw_tp/sched_switch")
int gate_sched_switch(void *ctx)
{
	struct gate_trig_pcpu *pc = trig_pcpu();

	if (pc)
		pc->cur_state = GATE_CUR_UNKNOWN;
	return 0;
}

/*
 * A thread that exits with a window open leaves no state behind; a timed
 * window ends here, with what it lasted until the exit.
 */
SEC("tp/sched/sched_process_exit")
int gate_thread_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct gate_thread *th = bpf_map_lookup_elem(&gate_threads, &tid);

	if (th && th->open) {
		emit_edge(GATE_ACT_EDGE_CLOSE, th->open, 0);
		if (hold_windows)
			window_end(ctx, th, my_stats());
	}
	bpf_map_delete_elem(&gate_threads, &tid);
	bpf_map_delete_elem(&gate_any_memo, &tid);
	bpf_map_delete_elem(&gate_sys_entries, &tid);
	bpf_map_delete_elem(&gate_held, &tid);
	/* Its calls in progress at u/kretprobe points that read their entry (gate_call_enter). */
	for (__u32 n = 0; call_frames && n < GATE_MAX_POINTS; n++) {
		struct gate_call_key k = { .tid = tid, .point = GATE_POINT_BASE + n };

		bpf_map_delete_elem(&gate_calls, &k);
	}
	/* Its $count values too, so a thread that reuses the id starts from 0. */
	for (__u32 slot = 0; slot < EXPR_MAX_SLOTS; slot++) {
		struct expr_count_key ck = { .tid = tid, .slot = slot };

		bpf_map_delete_elem(&expr_counts, &ck);
	}
	/* A thread that exits inside a vetoed call (gate_uprobe_enter). */
	for (__u32 w = 0; have_where && w < GATE_MAX_WINDOWS; w++) {
		struct aux_veto_key vk = { .tid = tid, .window = w };

		bpf_map_delete_elem(&gate_uprobe_vetoed, &vk);
	}
	/* The veto programs keep a thread's entry after its calls returned (see gate_aux_veto_exit). */
	for (__u32 w = 0; aux_veto && w < GATE_MAX_WINDOWS; w++) {
		struct aux_veto_key vk = { .tid = tid, .window = w };

		bpf_map_delete_elem(&gate_aux_veto, &vk);
	}
	return 1;
}
