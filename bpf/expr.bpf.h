/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_BPF_H
#define AUXTRIG_EXPR_BPF_H

/*
 * The BPF interpreter of compiled conditions (include/auxtrig/expr_abi.h).
 * Include after vmlinux.h, bpf/bpf_helpers.h and bpf/bpf_core_read.h. A caller:
 *
 *	struct expr_env env = {};
 *
 *	expr_env_fill_task(&env);
 *	env.nr = ctx->nr;                  // what the attach point knows
 *	env.args[0] = ctx->args[0];        // ... only args the record has
 *	env.rec = (__u64)(unsigned long)ctx;
 *	env.rec_size = RECORD_SIZE;        // or 0: unknown
 *	if (prog->flags & EXPR_PROG_ELAPSED) { // only when it is known
 *		env.vars[EXPR_VAR_ELAPSED] = now - start;
 *		env.vars_set |= 1u << EXPR_VAR_ELAPSED;
 *	}
 *	prog = bpf_map_lookup_elem(&progs, &key);
 *	if (prog && expr_eval(prog, &env, SLOT))  // SLOT: this condition's state
 *		...record...
 *
 * Mind the record's layout, from the tracepoint's format file, not from a
 * vmlinux.h struct of a similar name: at syscalls:sys_enter_NAME and
 * sys_exit_NAME the syscall number is a 4-byte int at offset 8 followed by 4
 * bytes of padding (the kernel's struct syscall_trace_enter/exit), so ctx
 * above is a struct with an int nr there (see bpf/expr_test.bpf.c); only
 * raw_syscalls:sys_enter/sys_exit (struct trace_event_raw_sys_enter/exit)
 * have an 8-byte 'long id'. Reading 8 bytes at a syscalls: tracepoint puts
 * the padding into the number.
 *
 * Why bpf_loop(): the verifier checks a bpf_loop() callback once, whatever the
 * number of iterations, so the longest program costs the verifier no more than
 * the shortest. One iteration runs one instruction; jumps only go forward, so
 * EXPR_MAX_INSNS iterations always suffice. A string comparison runs a nested
 * bpf_loop() over a small glob state machine (also used for equality).
 *
 * The evaluation stack and the string buffer live in a one-entry per-CPU
 * array (expr_scratch) rather than on the BPF stack: they would not fit next
 * to a caller's own locals, and map values take bounded variable offsets
 * without fuss. A program that runs expr_eval() while another evaluation is
 * in progress on the same CPU (an NMI perf_event program, or a preemptible
 * program preempted by another one) finds the scratch busy: its condition is
 * false and expr_scratch.nr_busy counts it, so the loss is reported, never
 * silent, and never corrupts the evaluation it interrupted.
 */
#include "auxtrig/expr_abi.h"

#define EXPR_COUNT_ENTRIES 65536 /* {tid, slot} counters of $count (LRU: never full) */

/*
 * The state of stateful conditions (see include/auxtrig/expr_abi.h), in the
 * object that includes this header: hit counters and lost-$count counts per
 * slot, and the per-thread $count counters. The caller picks the slot, one
 * per condition. The maps are __weak: an object linked from several files
 * that include this header (bpf/gate/) holds one of each.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EXPR_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct expr_slot_state);
} expr_state SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, EXPR_COUNT_ENTRIES);
	__type(key, struct expr_count_key);
	__type(value, __u64);
} expr_counts SEC(".maps") __weak;

/*
 * Everything that changes from one iteration to the next is here, in a map
 * value, and not in the bpf_loop() context on the stack: the verifier tracks
 * stack constants exactly and would walk pc = 0, 1, 2, ... (and every glob
 * position) as distinct states until it hits its 1M instruction limit, while
 * map contents are unknown scalars and the callback converges at once.
 */
struct expr_glob {
	__u32 pat;      /* strtab offset of the pattern */
	__u32 glob;     /* EXPR_STR_GLOB: '*' and '?' are special */
	__s32 s, p, star_p, star_s;
	__s32 result;   /* -1 while running */
	__u32 pad;
};

struct expr_scratch {
	__s64 stack[EXPR_MAX_STACK];
	char str[EXPR_STR_MAX];
	__u32 pc;
	__u32 sp;       /* number of values on the stack */
	__s32 result;   /* -1 while running, then 0 or 1 */
	__u32 busy;     /* an evaluation is in progress on this CPU */
	struct expr_glob g;
	__u64 nr_busy;  /* evaluations refused because the scratch was busy */
	__s64 count;    /* $count of this evaluation (0: the program has none) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_scratch);
} expr_scratch SEC(".maps") __weak;

/* The bpf_loop() context: pointers only, see struct expr_scratch. */
struct expr_run {
	const struct expr_prog *prog;
	const struct expr_env *env;
	struct expr_scratch *scr;
	struct expr_slot_state *st; /* the slot's hit counters, NULL without a slot */
};

static __always_inline char expr_pat_at(const struct expr_prog *prog, __u32 off)
{
	return prog->strtab[off & (EXPR_STRTAB_SIZE - 1)];
}

/* One step of the matcher shared with user/lang/expr.c: expr_match(). */
static int expr_glob_step(__u32 i, void *ctx)
{
	struct expr_run *run = ctx;
	struct expr_scratch *scr = run->scr;
	struct expr_glob *g = &scr->g;
	char sc, pc;

	sc = scr->str[g->s & (EXPR_STR_MAX - 1)];
	if (g->s < 0 || g->s >= EXPR_STR_MAX)
		sc = 0;
	pc = g->p >= 0 && g->p < EXPR_STR_MAX ? expr_pat_at(run->prog, g->pat + g->p) : 0;
	if (sc) {
		if (pc && ((g->glob && pc == '?') || (pc == sc && !(g->glob && pc == '*')))) {
			g->s++;
			g->p++;
		} else if (g->glob && pc == '*') {
			g->star_p = g->p;
			g->star_s = g->s;
			g->p++;
		} else if (g->star_p >= 0) {
			g->p = g->star_p + 1;
			g->star_s++;
			g->s = g->star_s;
		} else {
			g->result = 0;
			return 1;
		}
		return 0;
	}
	/* string consumed: only trailing stars may remain */
	if (g->glob && pc == '*') {
		g->p++;
		return 0;
	}
	g->result = pc == 0;
	return 1;
}

/* Reads string source insn->a into scr->str. Returns 0 or -1 on a failed read. */
static __always_inline int expr_load_str(const struct expr_insn *insn, const struct expr_env *env,
					 struct expr_scratch *scr)
{
	__u32 c = insn->c, off, size, loc;
	long n;

	switch (insn->a) {
	case EXPR_S_COMM:
		__builtin_memcpy(scr->str, env->comm, EXPR_COMM_LEN);
		scr->str[EXPR_COMM_LEN] = 0;
		return 0;
	case EXPR_S_USER:
		if (c >= EXPR_NR_ARGS)
			return -1;
		n = bpf_probe_read_user_str(scr->str, EXPR_STR_MAX, (const void *)env->args[c]);
		return n < 0 ? -1 : 0;
	case EXPR_S_REC_ARRAY:
		off = c & 0xffff;
		size = c >> 16;
		if (env->rec_size && off + size > env->rec_size)
			return -1;
		if (size > EXPR_STR_MAX - 1)
			size = EXPR_STR_MAX - 1;
		/*
		 * Keep the clamped value for the call: clang otherwise passes a copy
		 * spilled before the clamp, whose bound (65535) Linux 6.1's verifier
		 * does not narrow ("invalid access to map value ... size=65535").
		 */
		barrier_var(size);
		if (bpf_probe_read_kernel(scr->str, size, (const void *)(env->rec + off)))
			return -1;
		scr->str[size & (EXPR_STR_MAX - 1)] = 0;
		return 0;
	case EXPR_S_REC_LOC:
		off = c & 0xffff;
		if (env->rec_size && off + 4 > env->rec_size)
			return -1;
		if (bpf_probe_read_kernel(&loc, 4, (const void *)(env->rec + off)))
			return -1;
		off = loc & 0xffff;
		size = loc >> 16;
		if (env->rec_size && off + size > env->rec_size)
			return -1;
		if (size > EXPR_STR_MAX)
			size = EXPR_STR_MAX;
		if (size == 0) {
			scr->str[0] = 0;
			return 0;
		}
		barrier_var(size); /* as above */
		n = bpf_probe_read_kernel_str(scr->str, size, (const void *)(env->rec + off));
		return n < 0 ? -1 : 0;
	}
	return -1;
}

static __always_inline __u64 expr_udiv_abs(__s64 x)
{
	return x < 0 ? -(__u64)x : (__u64)x;
}

static __always_inline int expr_field(const struct expr_env *env, __u8 f, __s64 *v)
{
	switch (f) {
	case EXPR_F_PID: *v = env->pid; return 0;
	case EXPR_F_TID: *v = env->tid; return 0;
	case EXPR_F_PPID: *v = env->ppid; return 0;
	case EXPR_F_UID: *v = env->uid; return 0;
	case EXPR_F_GID: *v = env->gid; return 0;
	case EXPR_F_CPU: *v = env->cpu; return 0;
	case EXPR_F_CGROUP: *v = env->cgroup; return 0;
	case EXPR_F_NR: *v = env->nr; return 0;
	case EXPR_F_RET: *v = env->ret; return 0;
	case EXPR_F_ARG0: *v = env->args[0]; return 0;
	case EXPR_F_ARG0 + 1: *v = env->args[1]; return 0;
	case EXPR_F_ARG0 + 2: *v = env->args[2]; return 0;
	case EXPR_F_ARG0 + 3: *v = env->args[3]; return 0;
	case EXPR_F_ARG0 + 4: *v = env->args[4]; return 0;
	case EXPR_F_ARG0 + 5: *v = env->args[5]; return 0;
	}
	return -1;
}

/* (type)x, EXPR_OP_CAST: the low 1, 2 or 4 bytes of x, sign-extended if a says so. */
static __always_inline __s64 expr_cast(__s64 x, __u8 a)
{
	int sgn = a & EXPR_REC_SIGNED;

	switch (a & EXPR_REC_SIZE_MASK) {
	case 1: return sgn ? (__s64)(__s8)x : (__s64)(__u8)x;
	case 2: return sgn ? (__s64)(__s16)x : (__s64)(__u16)x;
	case 4: return sgn ? (__s64)(__s32)x : (__s64)(__u32)x;
	}
	return x;
}

static __always_inline int expr_rec(const struct expr_env *env, __u32 off, __u8 a, __s64 *v)
{
	__u32 size = a & EXPR_REC_SIZE_MASK;
	union {
		__u8 u8;
		__u16 u16;
		__u32 u32;
		__u64 u64;
	} x = {};

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -1;
	if (env->rec_size && off + size > env->rec_size)
		return -1;
	if (bpf_probe_read_kernel(&x, size & 0xf, (const void *)(env->rec + off)))
		return -1;
	if (a & EXPR_REC_SIGNED) {
		switch (size) {
		case 1: *v = (__s8)x.u8; return 0;
		case 2: *v = (__s16)x.u16; return 0;
		case 4: *v = (__s32)x.u32; return 0;
		}
		*v = (__s64)x.u64;
		return 0;
	}
	switch (size) {
	case 1: *v = x.u8; return 0;
	case 2: *v = x.u16; return 0;
	case 4: *v = x.u32; return 0;
	}
	*v = (__s64)x.u64;
	return 0;
}

/*
 * The value instruction @insn pushes (push, field, rec, str, var, hit) in @v.
 * Return: 0, or -1 when the condition is false (a failed read, no value).
 */
static __always_inline int expr_operand(struct expr_run *run, const struct expr_insn *insn, __s64 *v)
{
	const struct expr_prog *prog = run->prog;
	struct expr_scratch *scr = run->scr;
	__u64 q;

	switch (insn->op) {
	case EXPR_OP_PUSH:
		*v = insn->imm;
		return 0;
	case EXPR_OP_FIELD:
		return expr_field(run->env, insn->a, v) ? -1 : 0;
	case EXPR_OP_REC:
		return expr_rec(run->env, insn->b, insn->a, v) ? -1 : 0;
	case EXPR_OP_STR:
		if (expr_load_str(insn, run->env, scr))
			return -1;
		scr->g.pat = insn->b;
		scr->g.glob = insn->imm == EXPR_STR_GLOB;
		scr->g.s = 0;
		scr->g.p = 0;
		scr->g.star_p = -1;
		scr->g.star_s = 0;
		scr->g.result = -1;
		bpf_loop(EXPR_GLOB_STEPS, expr_glob_step, run, 0);
		if (scr->g.result < 0)
			return -1;
		*v = scr->g.result;
		return 0;
	case EXPR_OP_VAR:
		if (insn->a == EXPR_VAR_COUNT) {
			*v = scr->count;
			return *v <= 0 ? -1 : 0;
		}
		if (insn->a >= EXPR_MAX_VARS || !(run->env->vars_set & (1u << insn->a)))
			return -1;
		*v = run->env->vars[insn->a & (EXPR_MAX_VARS - 1)];
		return 0;
	case EXPR_OP_HIT:
		if (!run->st || insn->a >= prog->nr_hits || insn->a >= EXPR_MAX_HITS || insn->imm < 1)
			return -1;
		q = __sync_add_and_fetch(&run->st->hits[insn->a & (EXPR_MAX_HITS - 1)], 1);
		switch (insn->b) {
		case EXPR_HIT_ONCE: *v = q == 1; return 0;
		case EXPR_HIT_AFTER: *v = q >= (__u64)insn->imm; return 0;
		case EXPR_HIT_EVERY: *v = q % (__u64)insn->imm == 0; return 0;
		}
	}
	return -1;
}

/* @x OP @y in @v. Return: 0, or -1 (division by zero, no such operator): the condition is false. */
static __always_inline int expr_binary(__u8 op, __s64 x, __s64 y, __s64 *v)
{
	__u64 q;

	switch (op) {
	case EXPR_OP_ADD: *v = (__u64)x + (__u64)y; return 0;
	case EXPR_OP_SUB: *v = (__u64)x - (__u64)y; return 0;
	case EXPR_OP_MUL: *v = (__u64)x * (__u64)y; return 0;
	case EXPR_OP_DIV:
	case EXPR_OP_MOD:
		/* clang 14 has no BPF signed division: divide magnitudes, fix signs like C. */
		if (y == 0)
			return -1;
		if (op == EXPR_OP_DIV) {
			q = expr_udiv_abs(x) / expr_udiv_abs(y);
			*v = (x < 0) != (y < 0) ? -q : q;
		} else {
			q = expr_udiv_abs(x) % expr_udiv_abs(y);
			*v = x < 0 ? -q : q;
		}
		return 0;
	case EXPR_OP_AND: *v = x & y; return 0;
	case EXPR_OP_OR: *v = x | y; return 0;
	case EXPR_OP_XOR: *v = x ^ y; return 0;
	case EXPR_OP_EQ: *v = x == y; return 0;
	case EXPR_OP_NE: *v = x != y; return 0;
	case EXPR_OP_LT: *v = x < y; return 0;
	case EXPR_OP_LE: *v = x <= y; return 0;
	case EXPR_OP_GT: *v = x > y; return 0;
	case EXPR_OP_GE: *v = x >= y; return 0;
	}
	return -1;
}

/* Executes instruction scr->pc. Returns 0 to go on, 1 when scr->result is set. */
static int expr_step(__u32 i, void *ctx)
{
	struct expr_run *run = ctx;
	const struct expr_prog *prog = run->prog;
	struct expr_scratch *scr = run->scr;
	const struct expr_insn *insn;
	__u32 pc = scr->pc, sp = scr->sp;
	__s64 x, y, v = 0;

	if (pc >= prog->nr_insns || pc >= EXPR_MAX_INSNS) {
		/* fell off the end: the value on top decides */
		if (sp < 1 || sp > EXPR_MAX_STACK)
			scr->result = 0;
		else
			scr->result = scr->stack[(sp - 1) & (EXPR_MAX_STACK - 1)] != 0;
		return 1;
	}
	insn = &prog->insns[pc];
	scr->pc = pc + 1;

	switch (insn->op) {
	case EXPR_OP_PUSH:
	case EXPR_OP_FIELD:
	case EXPR_OP_REC:
	case EXPR_OP_STR:
	case EXPR_OP_VAR:
	case EXPR_OP_HIT:
		if (expr_operand(run, insn, &v))
			goto fail;
		goto push;
	case EXPR_OP_NEG:
	case EXPR_OP_BNOT:
	case EXPR_OP_LNOT:
	case EXPR_OP_BOOL:
	case EXPR_OP_CAST:
		if (sp < 1 || sp > EXPR_MAX_STACK)
			goto fail;
		x = scr->stack[(sp - 1) & (EXPR_MAX_STACK - 1)];
		switch (insn->op) {
		case EXPR_OP_NEG: v = -(__u64)x; break;
		case EXPR_OP_BNOT: v = ~x; break;
		case EXPR_OP_LNOT: v = !x; break;
		case EXPR_OP_CAST: v = expr_cast(x, insn->a); break;
		default: v = x != 0; break;
		}
		scr->stack[(sp - 1) & (EXPR_MAX_STACK - 1)] = v;
		return 0;
	case EXPR_OP_JFALSE:
	case EXPR_OP_JTRUE:
		if (sp < 1 || sp > EXPR_MAX_STACK || insn->b <= pc)
			goto fail;
		x = scr->stack[(sp - 1) & (EXPR_MAX_STACK - 1)];
		if ((insn->op == EXPR_OP_JFALSE) == (x == 0)) {
			scr->stack[(sp - 1) & (EXPR_MAX_STACK - 1)] = x != 0;
			scr->pc = insn->b;
		} else {
			scr->sp = sp - 1;
		}
		return 0;
	}

	/* binary operators */
	if (sp < 2 || sp > EXPR_MAX_STACK)
		goto fail;
	x = scr->stack[(sp - 2) & (EXPR_MAX_STACK - 1)];
	y = scr->stack[(sp - 1) & (EXPR_MAX_STACK - 1)];
	if (expr_binary(insn->op, x, y, &v))
		goto fail;
	scr->stack[(sp - 2) & (EXPR_MAX_STACK - 1)] = v;
	scr->sp = sp - 1;
	return 0;

push:
	if (sp >= EXPR_MAX_STACK)
		goto fail;
	scr->stack[sp & (EXPR_MAX_STACK - 1)] = v;
	scr->sp = sp + 1;
	return 0;
fail:
	scr->result = 0;
	return 1;
}

/**
 * expr_env_fill_task() - fill the fields of @env that describe the current task.
 * @env: the environment to fill: pid, tid, ppid, uid, gid, cpu, cgroup, comm.
 *
 * The caller adds what depends on the attach point: nr, ret, args, rec and
 * rec_size (and zeroes @env first, so unused fields read as 0). Needs
 * bpf/bpf_core_read.h.
 */
static __always_inline void expr_env_fill_task(struct expr_env *env)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 uid_gid = bpf_get_current_uid_gid();

	env->pid = pid_tgid >> 32;
	env->tid = (__u32)pid_tgid;
	env->ppid = BPF_CORE_READ(task, real_parent, tgid);
	env->uid = (__u32)uid_gid;
	env->gid = uid_gid >> 32;
	env->cpu = bpf_get_smp_processor_id();
	env->cgroup = bpf_get_current_cgroup_id();
	bpf_get_current_comm(env->comm, sizeof(env->comm));
}

/*
 * $count: one more hit of @slot's point by thread env->tid. Returns the new
 * count, or 0 when it could not be stored.
 */
static __always_inline __s64 expr_count_hit(const struct expr_env *env, __u32 slot)
{
	struct expr_count_key key = { .tid = (__u32)env->tid, .slot = slot };
	__u64 *c, one = 1;

	c = bpf_map_lookup_elem(&expr_counts, &key);
	if (c)
		return __sync_add_and_fetch(c, 1);
	if (!bpf_map_update_elem(&expr_counts, &key, &one, BPF_NOEXIST))
		return 1;
	c = bpf_map_lookup_elem(&expr_counts, &key); /* created meanwhile */
	return c ? __sync_add_and_fetch(c, 1) : 0;
}

/**
 * expr_eval() - run a compiled condition.
 * @prog: the program, typically a pointer to an array map value.
 * @env: the filled environment (stack or map value); vars[] as @prog->flags asks.
 * @slot: this condition's state (< EXPR_MAX_SLOTS): its $count counters and
 *        hit counters. Two conditions must not share a slot.
 *
 * Return: 1 if the condition holds, 0 if not or if evaluation failed (a
 * division by zero, a failed memory read, an unset variable, a $count that
 * could not be stored, a malformed program).
 */
static __always_inline int expr_eval(const struct expr_prog *prog, const struct expr_env *env, __u32 slot)
{
	__u32 zero = 0;
	struct expr_run run = {
		.prog = prog,
		.env = env,
	};

	struct expr_scratch *scr;
	__s64 count = 0;
	int result;

	if (!prog)
		return 0;
	run.st = bpf_map_lookup_elem(&expr_state, &slot);
	/* Every evaluation is a hit, reached or not by the instruction reading $count. */
	if (prog->flags & EXPR_PROG_COUNT) {
		count = expr_count_hit(env, slot);
		if (!count) {
			if (run.st)
				__sync_fetch_and_add(&run.st->count_lost, 1);
			return 0;
		}
	}
	scr = bpf_map_lookup_elem(&expr_scratch, &zero);
	if (!scr)
		return 0;
	if (scr->busy) {
		__sync_fetch_and_add(&scr->nr_busy, 1);
		return 0;
	}
	scr->busy = 1;
	run.scr = scr;
	scr->count = count;
	scr->pc = 0;
	scr->sp = 0;
	scr->result = -1;
	/* +1: the step after the last instruction reads the result */
	bpf_loop(EXPR_MAX_INSNS + 1, expr_step, &run, 0);
	result = scr->result == 1;
	scr->busy = 0;
	return result;
}

#endif
