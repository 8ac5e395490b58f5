// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate at a tracepoint: windows opened and closed, the record emitted
 * while the thread is inside one, the tracepoint's triggers run; gate_fire,
 * the actions of the triggers a tracepoint's own program let through.
 */
#include "vmlinux.h"
#include "state.bpf.h"
#include "emit.bpf.h"
#include "env.bpf.h"
#include "window.bpf.h"
#include "trigger.bpf.h"

static __always_inline int syscall_nr(void *ctx)
{
	int nr = -1;

	bpf_probe_read_kernel(&nr, sizeof(nr), ctx + 8);
	return nr;
}

/* At raw_syscalls:sys_enter/sys_exit, before the windows change: the note. */
static __always_inline void any_note(void *ctx, __u32 tid, const struct gate_tp *tp, __u64 open)
{
	struct any_memo m = {};

	if (!(tp->flags & GATE_TP_SYSCALL_ANY))
		return;
	if (tp->flags & GATE_TP_SYSCALL_ENTER) {
		bpf_map_delete_elem(&gate_any_memo, &tid);
	} else if (tp->close_mask & open) {
		m.closed = tp->close_mask & open;
		m.nr = syscall_nr(ctx);
		bpf_map_update_elem(&gate_any_memo, &tid, &m, BPF_ANY);
	}
}

/*
 * Is this hit inside a syscall:* window although the window state says no?
 * The raw enter after a sys_enter_X that opened its window (it is the
 * window's real start), or a sys_exit_X after the raw exit that closed it.
 */
static __always_inline int any_inside(void *ctx, __u32 tid, const struct gate_tp *tp, __u64 open_before, __u64 open)
{
	struct any_memo *m;

	if ((tp->flags & GATE_TP_SYSCALL_ANY) && (tp->flags & GATE_TP_SYSCALL_ENTER))
		return (tp->open_mask & open_before) != 0;
	if (!(tp->flags & GATE_TP_IN_ANY) || !(tp->flags & GATE_TP_SYSCALL_EXIT) || open)
		return 0;
	m = bpf_map_lookup_elem(&gate_any_memo, &tid);
	return m && m->closed && m->nr == syscall_nr(ctx);
}

/*
 * The triggers at a tracepoint: its record and, for syscalls, number, args,
 * ret. @rec_gen: the snap_generation() of the record this hit emitted.
 */
static __always_inline int tp_triggers(void *ctx, const struct gate_tp *tp, __u64 rec_gen)
{
	struct expr_env *env = fill_env(ctx, tp);
	struct pt_regs *regs = 0;

	if (!env)
		return 0;
	/* The IP of marks and of resume/pause edges: the user's, at a syscall tracepoint. */
	if (tp->flags & GATE_TP_USER_REGS)
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return run_triggers(ctx, tp->trig_mask, env, regs ? PT_REGS_IP_CORE(regs) : 0, 0, 0, rec_gen);
}

SEC("tracepoint")
int gate_tracepoint(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, key;
	struct gate_thread *th;
	struct gate_stats *st;
	struct gate_tp *tp;
	__u64 open = 0, opened = 0, open_before, rec_gen = GATE_NO_REC;
	int emitted;

	if (!armed() || !is_target(pid_tgid))
		return 1;
	st = my_stats();
	key = bpf_get_attach_cookie(ctx); /* the tracepoint's id, set at attach */
	tp = bpf_map_lookup_elem(&gate_tps, &key);
	if (!tp) {
		st->unknown_tp++;
		return 1;
	}
	if (tp->flags & GATE_TP_STAMP_ENTRY)
		stamp_syscall_entry(ctx, tp, tid);

	if (no_windows) {
		if (tp->flags & GATE_TP_RECORD) {
			rec_gen = snap_generation(tp);
			emit(ctx, key, tp, st);
		}
		if (tp->trig_mask)
			tp_triggers(ctx, tp, rec_gen);
		return 1;
	}

	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (th)
		open = th->open;
	open_before = open;
	any_note(ctx, tid, tp, open);

	if (tp->open_mask) {
		opened = tp->open_mask & ~open;
		if (opened && !where_holds(ctx, tp, key)) {
			/* A sys_enter_X's refusal is counted at its raw_syscalls:sys_enter. */
			if (!(tp->flags & GATE_TP_IN_ANY))
				st->windows_filtered += __builtin_popcountll(opened);
			opened = 0;
		}
		if (opened) {
			if (windows_open(tid, th, open, opened, st))
				return 1;
			open |= opened;
		}
	}

	emitted = opened || (tp->close_mask & open) || ((tp->flags & GATE_TP_RECORD) && open) ||
		  any_inside(ctx, tid, tp, open_before, open);
	if (emitted) {
		rec_gen = snap_generation(tp);
		emit(ctx, key, tp, st);
	}

	if (tp->close_mask & open)
		open = windows_close(ctx, tid, open, tp->close_mask, st);
	/* A resume that opened the thread's window: its hit starts the window. */
	if (tp->trig_mask && tp_triggers(ctx, tp, rec_gen) && !emitted && (tp->flags & GATE_TP_RECORD))
		emit(ctx, key, tp, st);
	return 1;
}

/*
 * The actions of the triggers a tracepoint's own program let through at this
 * hit (fire_take()), tail-called by it: the values of the hit as
 * tp_triggers() fills them, then fire_each().
 */
SEC("tracepoint")
int gate_fire(void *ctx)
{
	struct gate_trig_pcpu *pc = NULL;
	struct pt_regs *regs = 0;
	struct expr_env *env;
	struct gate_tp *tp;
	__u32 mask = 0;

	tp = fire_take(ctx, &pc, &mask);
	if (!tp || !pc)
		return 1;
	env = fill_env(ctx, tp);
	if (!env)
		return 1;
	if (tp->flags & GATE_TP_USER_REGS)
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	fire_each(ctx, pc, mask, env, regs ? PT_REGS_IP_CORE(regs) : 0);
	return 1;
}
