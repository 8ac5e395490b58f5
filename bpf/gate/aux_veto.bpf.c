// SPDX-License-Identifier: BSD-2-Clause
/*
 * --where on hardware trace: vetoes on the AUX group's uprobe members.
 */
#include "vmlinux.h"
#include "state.bpf.h"
#include "env.bpf.h"

/*
 * A uprobe window on hardware trace is a uprobe (aux_resume) and a uretprobe
 * (aux_pause) member of the AUX group, created through the kernel's "uprobe"
 * PMU: each has a private trace_event_call, so a program attached to it
 * decides for that event alone. Returning 0 drops the hit before
 * perf_tp_event(): no count, no overflow, no aux_resume/aux_pause; other
 * tools' events on the same function are not touched. The programs keep
 * their own per-thread call depth (the gate's uprobe programs on the same
 * function run in no fixed order with these) and let through only the
 * outermost call for which --where holds, and the return that ends it.
 *
 * Every member on the function is a uprobe consumer of its own, and a hit
 * runs the programs of all of them, one after the other, preemptible: the
 * member of each CPU (and, per thread, of each thread), of which the kernel
 * then fires only the one on the hit's CPU and thread. The first program to
 * see a hit decides it and counts it; the others give the same answer.
 * A hit is told from the next by its stack pointer and kind: two entries in
 * a row have different ones (a nested call's frame is below its caller's),
 * as have two returns; an entry and the return of the call before it at the
 * same depth differ in kind. (Deciding by the member's CPU instead, as this
 * did before, counted a call twice, or not at all, when the thread
 * migrated between two members' programs of one hit.)
 *
 * The attach cookie: the window in bits 0..31; bits 32..63 the member's CPU
 * + 1, or GATE_AUX_VETO_THREAD | tid for a thread's member, for the record.
 */
#define GATE_SLOT_AUX_VETO	(EXPR_MAX_SLOTS - 1)
_Static_assert(GATE_SLOT_AUX_VETO > GATE_SLOT_TRIGGER(GATE_MAX_TRIGGERS - 1), "a state slot of its own");

static __always_inline __u64 aux_veto_thread_start(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, start_time);
}

/*
 * Outermost calls let through (aux_resume), vetoed by --where; returns let
 * through (aux_pause); calls vetoed because gate_aux_veto was full.
 */
#define AUX_VETO_RESUMED	0
#define AUX_VETO_VETOED		1
#define AUX_VETO_PAUSED		2
#define AUX_VETO_UNTRACKED	3
__u64 aux_veto_stats[4];

static __always_inline __u32 aux_veto_window(struct pt_regs *ctx)
{
	return (__u32)bpf_get_attach_cookie(ctx) & (GATE_MAX_WINDOWS - 1);
}

/* Entry member (aux_resume): 1 only for the outermost call --where lets open. */
SEC("?uprobe")
int gate_aux_veto_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), sp = PT_REGS_SP(ctx);
	struct aux_veto_key key = { .tid = (__u32)pid_tgid, .window = aux_veto_window(ctx) };
	struct aux_veto_call *c, fresh = {};

	if (!armed() || !is_target(pid_tgid))
		return 0;
	fresh.start = aux_veto_thread_start();
	c = bpf_map_lookup_elem(&gate_aux_veto, &key);
	if (c && c->start == fresh.start) {
		if (!c->hit_exit && c->hit_sp == sp)
			return c->hit_ret; /* another member's program ran for this hit */
		c->hit_exit = 0;
		c->hit_sp = sp;
		if (c->depth) {
			if (c->depth < 0xffffffff)
				c->depth++; /* a nested call: the window is open already, or stays shut */
			c->hit_ret = 0;
			return 0;
		}
		c->depth = 1;
		c->passed = call_where_holds(ctx, GATE_SLOT_AUX_VETO);
		c->hit_ret = c->passed;
		__sync_fetch_and_add(&aux_veto_stats[c->passed ? AUX_VETO_RESUMED : AUX_VETO_VETOED], 1);
		return c->passed;
	}
	fresh.depth = 1;
	fresh.passed = call_where_holds(ctx, GATE_SLOT_AUX_VETO);
	fresh.hit_sp = sp;
	fresh.hit_ret = fresh.passed;
	if (bpf_map_update_elem(&gate_aux_veto, &key, &fresh, BPF_ANY)) {
		/* untracked: its return could not pause, so do not resume */
		__sync_fetch_and_add(&aux_veto_stats[AUX_VETO_UNTRACKED], 1);
		return 0;
	}
	__sync_fetch_and_add(&aux_veto_stats[fresh.passed ? AUX_VETO_RESUMED : AUX_VETO_VETOED], 1);
	return fresh.passed;
}

/*
 * Return member (aux_pause): 1 only at the return that closes a window the
 * entry opened. The entry stays (depth 0) for the other members' programs
 * of this return; the thread's exit deletes it.
 */
SEC("?uretprobe")
int gate_aux_veto_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), sp = PT_REGS_SP(ctx);
	struct aux_veto_key key = { .tid = (__u32)pid_tgid, .window = aux_veto_window(ctx) };
	struct aux_veto_call *c;

	/* no armed() check: a window resumed while armed still pauses after the disarm */
	c = bpf_map_lookup_elem(&gate_aux_veto, &key);
	if (!c || c->start != aux_veto_thread_start())
		return 0; /* a call that began before we were armed, or was never seen */
	if (c->hit_exit && c->hit_sp == sp)
		return c->hit_ret;
	c->hit_exit = 1;
	c->hit_sp = sp;
	c->hit_ret = 0;
	if (!c->depth || --c->depth)
		return 0;
	if (c->passed) {
		c->hit_ret = 1;
		__sync_fetch_and_add(&aux_veto_stats[AUX_VETO_PAUSED], 1);
	}
	return c->hit_ret;
}
