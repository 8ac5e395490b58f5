// SPDX-License-Identifier: BSD-2-Clause
/*
 * Probe points (--on and window ends at a uprobe, uretprobe, usdt, kprobe,
 * kretprobe or mem point): the point's values in the environment, then its
 * windows and triggers as at a tracepoint.
 */
#include "vmlinux.h"
#include <bpf/usdt.bpf.h>

#include "state.bpf.h"
#include "env.bpf.h"
#include "window.bpf.h"
#include "trigger.bpf.h"

/*
 * At a uretprobe or kretprobe point that reads its call's entry: pop the thread's
 * innermost call of the function (gate_call_enter pushed it), whose
 * arguments are then arg0..arg5 (entry.argN) and whose time $duration
 * counts from. No call (it entered before the run was armed) or one too
 * deep to keep: no values, and a condition reading them is false.
 */
static __always_inline void call_pop(struct expr_env *env, __u32 tid, __u32 key)
{
	struct gate_call_key k = { .tid = tid, .point = key };
	struct gate_calls *c = bpf_map_lookup_elem(&gate_calls, &k);
	struct gate_call_frame *f;
	__u64 now = bpf_ktime_get_ns();
	__u32 d;

	if (!c || !c->depth)
		return;
	d = --c->depth;
	if (d >= GATE_CALL_DEPTH)
		return;
	f = &c->frames[d & (GATE_CALL_DEPTH - 1)];
	__builtin_memcpy(env->args, f->args, sizeof(env->args));
	if (f->ns && f->ns <= now) {
		env->vars[EXPR_VAR_DURATION] = now - f->ns;
		env->vars_set |= 1u << EXPR_VAR_DURATION;
	}
}

/*
 * A probe point (--on POINT, or an end of --window START..STOP) has a
 * struct gate_tp in gate_tps too, keyed GATE_POINT_BASE + n (the attach
 * cookie; usdt's own cookie for usdt). It opens and closes windows and runs
 * triggers like a tracepoint, with the values its program put in @env; it
 * records nothing itself (a mark trigger at it does).
 */
static __always_inline void point_hit(void *ctx, __u32 key, struct expr_env *env, __u64 ip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, zero = 0;
	struct gate_thread *th;
	struct expr_prog *where;
	struct gate_stats *st = my_stats();
	struct gate_tp *tp;
	__u64 open = 0, opened;
	__u32 verdict = 0, decided = probe_decided(key, &verdict);

	tp = bpf_map_lookup_elem(&gate_tps, &key);
	if (!tp) {
		st->unknown_tp++;
		return;
	}
	/* a function returning int: its ret typed before anything reads it */
	if (tp->flags & GATE_TP_RET_MASK)
		env->ret = expr_cast(env->ret, (tp->flags & GATE_TP_RET_MASK) >> GATE_TP_RET_SHIFT);
	if (call_frames && (tp->flags & GATE_TP_CALL_ENTRY))
		call_pop(env, tid, key);
	if (!no_windows && (tp->open_mask || tp->close_mask)) {
		th = bpf_map_lookup_elem(&gate_threads, &tid);
		if (th)
			open = th->open;
		opened = tp->open_mask & ~open;
		if (opened && have_where && (decided & GATE_VERDICT_WHERE)) {
			if (!(verdict & GATE_VERDICT_WHERE)) {
				st->windows_filtered += __builtin_popcountll(opened);
				opened = 0;
			}
		} else if (opened && have_where) {
			where = bpf_map_lookup_elem(&gate_where, &zero);
			if (!where || !expr_eval(where, env, GATE_SLOT_WHERE)) {
				st->windows_filtered += __builtin_popcountll(opened);
				opened = 0;
			}
		}
		if (opened) {
			if (windows_open(tid, th, open, opened, st))
				return;
			open |= opened;
		}
		if (tp->close_mask & open)
			windows_close(ctx, tid, open, tp->close_mask, st);
	}
	if (tp->trig_mask)
		run_triggers(ctx, tp->trig_mask, env, ip, decided, verdict, GATE_NO_REC);
}

/*
 * At the entry of a function whose uretprobe or kretprobe point reads its
 * call's entry (GATE_TP_CALL_ENTRY; the cookie is that point's key; attached
 * as a uprobe or a kprobe, both BPF_PROG_TYPE_KPROBE): push the call on
 * the thread's stack of its calls, its time and arguments if it is one of
 * the outermost GATE_CALL_DEPTH.
 */
SEC("?uprobe")
int gate_call_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct gate_call_key k = { .tid = (__u32)pid_tgid, .point = (__u32)bpf_get_attach_cookie(ctx) };
	struct gate_call_frame *f;
	struct gate_calls *c;
	__u32 zero = 0, d;

	if (!armed() || !is_target(pid_tgid))
		return 0;
	c = bpf_map_lookup_elem(&gate_calls, &k);
	if (!c) {
		c = bpf_map_lookup_elem(&gate_calls_empty, &zero);
		if (!c || bpf_map_update_elem(&gate_calls, &k, c, BPF_NOEXIST))
			return 0;
		c = bpf_map_lookup_elem(&gate_calls, &k);
		if (!c)
			return 0;
	}
	d = c->depth;
	if (d < GATE_CALL_DEPTH) {
		f = &c->frames[d & (GATE_CALL_DEPTH - 1)];
		f->ns = bpf_ktime_get_ns();
		f->args[0] = PT_REGS_PARM1(ctx);
		f->args[1] = PT_REGS_PARM2(ctx);
		f->args[2] = PT_REGS_PARM3(ctx);
		f->args[3] = PT_REGS_PARM4(ctx);
		f->args[4] = PT_REGS_PARM5(ctx);
		f->args[5] = PT_REGS_PARM6(ctx);
	}
	c->depth = d + 1;
	return 0;
}

/* A function's entry (uprobe, kprobe): its arguments are arg0..arg5. */
static __always_inline int function_entry(struct pt_regs *ctx)
{
	struct expr_env *env;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env_args(ctx);
	if (env)
		point_hit(ctx, bpf_get_attach_cookie(ctx), env, PT_REGS_IP(ctx));
	return 0;
}

/* A function's return (uretprobe, kretprobe): its return value is ret. */
static __always_inline int function_return(struct pt_regs *ctx)
{
	struct expr_env *env;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env(ctx);
	if (!env)
		return 0;
	env->ret = PT_REGS_RC(ctx);
	point_hit(ctx, bpf_get_attach_cookie(ctx), env, PT_REGS_IP(ctx));
	return 0;
}

SEC("?uprobe")
int gate_point_uprobe(struct pt_regs *ctx)
{
	return function_entry(ctx);
}

SEC("?uretprobe")
int gate_point_uretprobe(struct pt_regs *ctx)
{
	return function_return(ctx);
}

/* USDT: the probe's own arguments (bpf_usdt_arg() decodes their locations). */
SEC("?usdt")
int gate_point_usdt(struct pt_regs *ctx)
{
	struct expr_env *env;
	__u32 key;
	int n;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env(ctx);
	if (!env)
		return 0;
	n = bpf_usdt_arg_cnt(ctx);
	for (int i = 0; i < EXPR_NR_ARGS; i++) {
		long v = 0;

		if (i < n && !bpf_usdt_arg(ctx, i, &v))
			env->args[i] = v;
	}
	key = bpf_usdt_cookie(ctx);
	/* the point's conditions compiled: its own program decides them, then gate_point_usdt_decided */
	bpf_tail_call(ctx, &gate_usdt_conds, key - GATE_POINT_BASE);
	point_hit(ctx, key, env, PT_REGS_IP(ctx));
	return 0;
}

/*
 * The rest of a usdt hit whose own program decided its conditions (tail-called
 * with the verdicts, GATE_PROBE_USDT): the environment is as gate_point_usdt
 * left it. Never attached itself.
 */
SEC("?usdt")
int gate_point_usdt_decided(struct pt_regs *ctx)
{
	struct expr_env *env;
	__u32 zero = 0;

	if (!armed())
		return 0;
	env = bpf_map_lookup_elem(&gate_env, &zero);
	if (env)
		point_hit(ctx, bpf_usdt_cookie(ctx), env, PT_REGS_IP(ctx));
	return 0;
}

SEC("?kprobe")
int gate_point_kprobe(struct pt_regs *ctx)
{
	return function_entry(ctx);
}

SEC("?kretprobe")
int gate_point_kretprobe(struct pt_regs *ctx)
{
	return function_return(ctx);
}

/*
 * gate_fire of a trigger-only probe point's own program (gate_front__build()
 * with a probe): the actions of the triggers in fire_mask, with the values
 * the shared program would have put in the environment.
 */
static __always_inline int probe_fire(struct pt_regs *ctx, int ret)
{
	struct gate_trig_pcpu *pc = NULL;
	struct expr_env *env;
	struct gate_tp *tp;
	__u32 mask = 0;

	tp = fire_take(ctx, &pc, &mask);
	if (!tp || !pc)
		return 0;
	env = ret ? probe_env(ctx) : probe_env_args(ctx);
	if (!env)
		return 0;
	if (ret)
		env->ret = expr_cast(PT_REGS_RC(ctx), (tp->flags & GATE_TP_RET_MASK) >> GATE_TP_RET_SHIFT);
	fire_each(ctx, pc, mask, env, PT_REGS_IP(ctx));
	return 0;
}

SEC("?kprobe")
int gate_fire_entry(struct pt_regs *ctx)
{
	return probe_fire(ctx, 0);
}

SEC("?kprobe")
int gate_fire_return(struct pt_regs *ctx)
{
	return probe_fire(ctx, 1);
}

/*
 * mem: a hardware breakpoint's perf event. Its IP, and what the memory holds
 * while this runs, differ by architecture (include/auxtrig/sys/arch.h,
 * bp_reports_before_access): x86's data breakpoints trap after the access,
 * so the IP is the next instruction and a write is done; arm64's watchpoints
 * are taken before it, so the IP is the accessing instruction and the write
 * is still to come (the kernel steps over it after this program). Execute
 * breakpoints report before the instruction on both.
 */
SEC("?perf_event")
int gate_point_mem(struct bpf_perf_event_data *ctx)
{
	struct expr_env *env;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env(ctx);
	if (env)
		point_hit(ctx, bpf_get_attach_cookie(ctx), env, PT_REGS_IP(&ctx->regs));
	return 0;
}
