/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_ENV_BPF_H
#define AUXTRIG_GATE_ENV_BPF_H

/*
 * What conditions see (struct expr_env): filled at a tracepoint from its
 * record, at a probe from its registers; and --where evaluated on it, or
 * taken from the point's own program that decided it already (compiled).
 */
#include "state.bpf.h"

static __always_inline void stamp_syscall_entry(void *ctx, const struct gate_tp *tp, __u32 tid)
{
	struct gate_sys_entry e = { .ns = bpf_ktime_get_ns() };
	int nr = -1;

	bpf_probe_read_kernel(&nr, sizeof(nr), ctx + 8);
	e.nr = nr;
	if (entry_args) {
		/* only the arguments the record has (fill_env() says why) */
		__u32 sz = tp->size > 16 ? tp->size - 16 : 0;

		if (sz > sizeof(e.args))
			sz = sizeof(e.args);
		if (sz)
			bpf_probe_read_kernel(e.args, sz, ctx + 16);
	}
	bpf_map_update_elem(&gate_sys_entries, &tid, &e, BPF_ANY);
}

/*
 * $elapsed: since the thread's open windows opened (gate_thread.opened_ns: with
 * nested windows, the outermost), else, at a syscall exit, since this thread
 * entered that syscall; unset (the condition is false) when neither is known.
 */
static __always_inline void fill_elapsed(struct expr_env *env, const struct gate_tp *tp, int nr)
{
	__u32 tid = env->tid;
	struct gate_thread *th = bpf_map_lookup_elem(&gate_threads, &tid);
	struct gate_sys_entry *e;
	__u64 now = bpf_ktime_get_ns(), start = 0;

	if (th && th->open) {
		start = th->opened_ns;
	} else if (tp->flags & GATE_TP_SYSCALL_EXIT) {
		e = bpf_map_lookup_elem(&gate_sys_entries, &tid);
		if (e && e->nr == nr)
			start = e->ns;
	}
	if (!start || start > now)
		return;
	env->vars[EXPR_VAR_ELAPSED] = now - start;
	env->vars_set |= 1u << EXPR_VAR_ELAPSED;
}

/*
 * The environment conditions see: the current thread and, at a syscall's
 * entry, its number and arguments (struct syscall_trace_enter: int nr at 8,
 * 4 bytes of padding, unsigned long args[] from 16, as many as the syscall
 * has), at its exit, number and return value (struct syscall_trace_exit:
 * int nr at 8, long ret at 16); $elapsed when a condition reads it. At
 * raw_syscalls:sys_enter/sys_exit the number is a long at 8: its low 4 bytes
 * (little-endian) are the int read here.
 */
static __always_inline struct expr_env *fill_env(void *ctx, const struct gate_tp *tp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct expr_env *env;
	__u32 zero = 0;
	int nr = -1;

	env = bpf_map_lookup_elem(&gate_env, &zero);
	if (!env)
		return NULL;
	__builtin_memset(env, 0, sizeof(*env));
	env->pid = pid_tgid >> 32;
	env->tid = (__u32)pid_tgid;
	env->cpu = bpf_get_smp_processor_id();
	/* The costlier builtins only if a condition reads them. */
	if (env_fields & (1u << EXPR_F_PPID))
		env->ppid = BPF_CORE_READ(task, real_parent, tgid);
	if (env_fields & ((1u << EXPR_F_UID) | (1u << EXPR_F_GID))) {
		__u64 uid_gid = bpf_get_current_uid_gid();

		env->uid = (__u32)uid_gid;
		env->gid = uid_gid >> 32;
	}
	if (env_fields & (1u << EXPR_F_CGROUP))
		env->cgroup = bpf_get_current_cgroup_id();
	if (env_fields & (1u << EXPR_F_COUNT)) /* comm */
		bpf_get_current_comm(env->comm, sizeof(env->comm));
	env->rec = (__u64)ctx;
	/*
	 * The readable bytes: the fixed fields, and with __data_loc fields the
	 * strings after them, which lie within the perf trace buffer.
	 */
	env->rec_size = tp->nr_dyn ? GATE_RECORD_MAX : tp->size;
	if (tp->flags & (GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT))
		bpf_probe_read_kernel(&nr, sizeof(nr), ctx + 8);
	if (tp->flags & GATE_TP_SYSCALL_ENTER) {
		/*
		 * Only the arguments the record has: sys_enter_NAME carries
		 * NAME's own count (openat 4, close 1); what lies after the
		 * record is not ours (on some kernels, the stack the record was
		 * built on), so arguments beyond it stay 0.
		 */
		__u32 sz = tp->size > 16 ? tp->size - 16 : 0;

		if (sz > sizeof(env->args))
			sz = sizeof(env->args);
		if (sz)
			bpf_probe_read_kernel(env->args, sz, ctx + 16);
	}
	if (tp->flags & GATE_TP_SYSCALL_EXIT) {
		bpf_probe_read_kernel(&env->ret, sizeof(env->ret), ctx + 16);
		/* the arguments this thread entered the syscall with, if its entry was stamped; its time */
		if (entry_args || need_duration) {
			struct gate_sys_entry *e = bpf_map_lookup_elem(&gate_sys_entries, &env->tid);
			__u64 now = bpf_ktime_get_ns();

			if (e && e->nr == nr && entry_args)
				__builtin_memcpy(env->args, e->args, sizeof(env->args));
			if (e && e->nr == nr && need_duration && e->ns && e->ns <= now) {
				env->vars[EXPR_VAR_DURATION] = now - e->ns;
				env->vars_set |= 1u << EXPR_VAR_DURATION;
			}
		}
	}
	env->nr = nr;
	if (need_elapsed)
		fill_elapsed(env, tp, nr);
	return env;
}

/* Does --where hold for this window start? */
static __always_inline int where_holds(void *ctx, const struct gate_tp *tp, __u32 key)
{
	struct gate_trig_pcpu *pc;
	struct expr_prog *prog;
	struct expr_env *env;
	__u32 zero = 0;

	if (!have_where)
		return 1;
	/* compiled: the program before this one at this tracepoint decided it for this hit */
	pc = bpf_map_lookup_elem(&gate_trig_pcpu, &zero);
	if (pc && pc->where_tp == key) {
		pc->where_tp = 0;
		return pc->where_verdict;
	}
	prog = bpf_map_lookup_elem(&gate_where, &zero);
	env = fill_env(ctx, tp);
	if (!prog || !env)
		return 0;
	return expr_eval(prog, env, GATE_SLOT_WHERE);
}

/* The environment at a probe: the thread's builtins, no record, no syscall number. */
static __always_inline struct expr_env *probe_env(void *ctx)
{
	struct gate_tp none = {};
	struct expr_env *env = fill_env(ctx, &none);

	if (env)
		env->rec = 0;
	return env;
}

static __always_inline struct expr_env *probe_env_args(struct pt_regs *ctx)
{
	struct expr_env *env = probe_env(ctx);

	if (!env)
		return NULL;
	env->args[0] = PT_REGS_PARM1(ctx);
	env->args[1] = PT_REGS_PARM2(ctx);
	env->args[2] = PT_REGS_PARM3(ctx);
	env->args[3] = PT_REGS_PARM4(ctx);
	env->args[4] = PT_REGS_PARM5(ctx);
	env->args[5] = PT_REGS_PARM6(ctx);
	return env;
}

/*
 * Which of this hit's conditions did the point's own program decide (compiled,
 * gate_front__build_probe())? Their bits (struct gate_trig_pcpu.probe_mask),
 * with the verdicts in @verdict, taken (probe_key); 0 none.
 */
static __always_inline __u32 probe_decided(__u32 key, __u32 *verdict)
{
	struct gate_trig_pcpu *pc = trig_pcpu();

	if (!pc || pc->probe_key != key)
		return 0;
	pc->probe_key = 0;
	*verdict = pc->probe_verdict;
	return pc->probe_mask;
}

/* Does --where hold at a function's entry? @slot: the condition's state slot. */
static __always_inline int call_where_holds(struct pt_regs *ctx, __u32 slot)
{
	struct expr_prog *prog;
	struct expr_env *env;
	__u32 zero = 0;

	if (!have_where)
		return 1;
	prog = bpf_map_lookup_elem(&gate_where, &zero);
	env = probe_env_args(ctx);
	if (!prog || !env)
		return 0;
	return expr_eval(prog, env, slot);
}

#endif
