// SPDX-License-Identifier: BSD-2-Clause
/*
 * uprobe windows (-w FUNC): the window is open from the outermost call of
 * the function to its return, each call and return a record of its own
 * (auxtrig:uprobe_enter / auxtrig:uprobe_exit); --where vetoes a call.
 */
#include "vmlinux.h"
#include "state.bpf.h"
#include "emit.bpf.h"
#include "env.bpf.h"
#include "window.bpf.h"

SEC("uprobe")
int gate_uprobe_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, w = bpf_get_attach_cookie(ctx);
	struct gate_uprobe_enter_rec rec = {};
	struct gate_thread *th;
	struct gate_stats *st;
	__u32 depth, verdict = 0, decided;

	if (!armed() || !is_target(pid_tgid))
		return 0;
	st = my_stats();
	barrier_var(w);
	w &= GATE_MAX_WINDOWS - 1;
	decided = probe_decided(GATE_UPROBE_WINDOW_KEY(w), &verdict);
	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (!th || !th->depth[w]) {
		struct aux_veto_key vk = { .tid = tid, .window = w };
		__u32 *vetoed = have_where ? bpf_map_lookup_elem(&gate_uprobe_vetoed, &vk) : NULL;
		__u32 one = 1;

		if (vetoed) {
			/* A call nested in a vetoed one: the window stays shut. */
			if (*vetoed < 0xffffffff)
				(*vetoed)++;
			return 0;
		}
		/* The outermost call: the window opens here, if --where holds (compiled: decided already). */
		if ((decided & GATE_VERDICT_WHERE) ? !(verdict & GATE_VERDICT_WHERE)
						  : !call_where_holds(ctx, GATE_SLOT_WHERE)) {
			st->windows_filtered++;
			/* Its nested calls and its return must know it (without room, they cannot). */
			if (bpf_map_update_elem(&gate_uprobe_vetoed, &vk, &one, BPF_NOEXIST))
				st->vetoed_untracked++;
			return 0;
		}
		if (windows_open(tid, th, th ? th->open : 0, 1ULL << w, st))
			return 0;
		if (!th)
			th = bpf_map_lookup_elem(&gate_threads, &tid);
		if (!th)
			return 0;
	}
	if (th->depth[w] < 255)
		th->depth[w]++;
	depth = th->depth[w];

	rec.common_type = uprobe_enter_type;
	rec.common_pid = tid;
	rec.window = w;
	rec.depth = depth;
	rec.args[0] = PT_REGS_PARM1(ctx);
	rec.args[1] = PT_REGS_PARM2(ctx);
	rec.args[2] = PT_REGS_PARM3(ctx);
	rec.args[3] = PT_REGS_PARM4(ctx);
	rec.args[4] = PT_REGS_PARM5(ctx);
	rec.args[5] = PT_REGS_PARM6(ctx);
	emit_own(ctx, PT_REGS_IP(ctx), &rec, sizeof(rec), st);
	return 0;
}

SEC("uretprobe")
int gate_uprobe_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, w = bpf_get_attach_cookie(ctx);
	struct gate_uprobe_exit_rec rec = {};
	struct gate_thread *th;
	struct gate_stats *st;

	if (!armed() || !is_target(pid_tgid))
		return 0;
	st = my_stats();
	barrier_var(w);
	w &= GATE_MAX_WINDOWS - 1;
	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (!th || !th->depth[w]) {
		struct aux_veto_key vk = { .tid = tid, .window = w };
		__u32 *vetoed = have_where ? bpf_map_lookup_elem(&gate_uprobe_vetoed, &vk) : NULL;

		/* The return of a vetoed call (the last one: the window may open again), */
		if (vetoed && --(*vetoed) == 0)
			bpf_map_delete_elem(&gate_uprobe_vetoed, &vk);
		return 0; /* or of a call that began before we were armed */
	}

	rec.common_type = uprobe_exit_type;
	rec.common_pid = tid;
	rec.window = w;
	rec.depth = th->depth[w];
	rec.ret = expr_cast(PT_REGS_RC(ctx), uprobe_window_ret[w]);
	emit_own(ctx, PT_REGS_IP(ctx), &rec, sizeof(rec), st);

	if (--th->depth[w] == 0)
		windows_close(ctx, tid, th->open, 1ULL << w, st);
	return 0;
}
