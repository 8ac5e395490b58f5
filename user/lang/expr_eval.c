// SPDX-License-Identifier: BSD-2-Clause
/*
 * The userspace evaluator of compiled conditions: the same semantics as the
 * BPF one, bpf/expr.bpf.h, instruction by instruction.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_eval.h"
#include "auxtrig/lang/expr_vars.h"

struct expr_count {
	__u32 tid;
	__u64 n;
};

struct expr_state {
	__u64 hits[EXPR_MAX_HITS];
	struct expr_count *counts; /* $count per thread, like expr_counts {tid, slot} in BPF */
	size_t nr_counts, max_counts;
	struct expr_uvars *uvars;  /* the recording's variables of your own (shared, not owned) */
	__u64 uvar_lost;           /* evaluations that could not set one: the table was full */
};

void expr_state__use_uvars(struct expr_state *st, struct expr_uvars *u)
{
	st->uvars = u;
}

__u64 expr_state__uvar_lost(const struct expr_state *st)
{
	return st->uvar_lost;
}

struct expr_state *expr_state__new(void)
{
	return calloc(1, sizeof(struct expr_state));
}

void expr_state__delete(struct expr_state *st)
{
	if (!st)
		return;
	free(st->counts);
	free(st);
}

/* One more hit by thread @tid: its new $count, or 0 without memory. */
static __u64 count_hit(struct expr_state *st, __u32 tid)
{
	struct expr_count *tmp;

	for (size_t i = 0; i < st->nr_counts; i++)
		if (st->counts[i].tid == tid)
			return ++st->counts[i].n;
	if (st->nr_counts == st->max_counts) {
		size_t max = st->max_counts ? 2 * st->max_counts : 16;

		tmp = realloc(st->counts, max * sizeof(*tmp));
		if (!tmp)
			return 0;
		st->counts = tmp;
		st->max_counts = max;
	}
	st->counts[st->nr_counts].tid = tid;
	st->counts[st->nr_counts].n = 1;
	st->nr_counts++;
	return 1;
}

static int rec_read(const struct expr_env *env, __u32 off, __u32 size, void *dst)
{
	if (!env->rec || (__u64)off + size > env->rec_size)
		return -1;
	memcpy(dst, (const char *)(uintptr_t)env->rec + off, size);
	return 0;
}

/*
 * bpf_probe_read_user_str() for our own address space: process_vm_readv()
 * turns a bad address into EFAULT instead of a crash, so str(argN) of a
 * garbage pointer is a failed read (condition false) here as in BPF.
 */
static int read_user_str(__u64 addr, char *str)
{
	struct iovec local = { .iov_base = str, .iov_len = EXPR_STR_MAX - 1 };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = EXPR_STR_MAX - 1 };
	ssize_t got;
	size_t want, n;

	if (!addr)
		return -1;
	got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got < 0) {
		/* the string may end before an unmapped page: retry up to the page end */
		want = 4096 - (addr & 4095);
		if (want >= EXPR_STR_MAX - 1)
			return -1;
		local.iov_len = remote.iov_len = want;
		got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (got < 0)
			return -1;
	}
	n = strnlen(str, got);
	if (n == (size_t)got && got < EXPR_STR_MAX - 1)
		return -1; /* no NUL before the end of readable memory */
	str[n] = 0; /* at most 63 bytes, like bpf_probe_read_user_str(buf, 64, ...) */
	return 0;
}

static int load_str(const struct expr_insn *insn, const struct expr_env *env, char *str)
{
	__u32 c = insn->c, off, size, loc;
	size_t n;

	switch (insn->a) {
	case EXPR_S_COMM:
		memcpy(str, env->comm, EXPR_COMM_LEN);
		str[EXPR_COMM_LEN] = 0;
		return 0;
	case EXPR_S_USER:
		if (c >= EXPR_NR_ARGS || !env->args[c])
			return -1;
		return read_user_str(env->args[c], str);
	case EXPR_S_REC_ARRAY:
		off = c & 0xffff;
		size = c >> 16;
		if (!env->rec || off + size > env->rec_size)
			return -1;
		if (size > EXPR_STR_MAX - 1)
			size = EXPR_STR_MAX - 1;
		memcpy(str, (const char *)(uintptr_t)env->rec + off, size);
		str[size] = 0;
		return 0;
	case EXPR_S_REC_LOC:
		if (rec_read(env, c & 0xffff, 4, &loc))
			return -1;
		off = loc & 0xffff;
		size = loc >> 16;
		if (off + size > env->rec_size)
			return -1;
		if (size > EXPR_STR_MAX)
			size = EXPR_STR_MAX;
		/* bpf_probe_read_kernel_str(): at most size - 1 bytes, stops at NUL */
		n = size ? strnlen((const char *)(uintptr_t)env->rec + off, size - 1) : 0;
		memcpy(str, (const char *)(uintptr_t)env->rec + off, n);
		str[n] = 0;
		return 0;
	}
	return -1;
}

/* The glob state machine of expr_glob_step(), step for step. Returns 0, 1, or -1 (out of steps). */
static int match(const char *str, const char *pat, int glob)
{
	int s = 0, p = 0, star_p = -1, star_s = 0;

	for (int i = 0; i < EXPR_GLOB_STEPS; i++) {
		char sc = s < EXPR_STR_MAX ? str[s] : 0;
		char pc = p < EXPR_STR_MAX ? pat[p] : 0;

		if (sc) {
			if (pc && ((glob && pc == '?') || (pc == sc && !(glob && pc == '*')))) {
				s++;
				p++;
			} else if (glob && pc == '*') {
				star_p = p;
				star_s = s;
				p++;
			} else if (star_p >= 0) {
				p = star_p + 1;
				s = ++star_s;
			} else {
				return 0;
			}
			continue;
		}
		if (glob && pc == '*') {
			p++;
			continue;
		}
		return pc == 0;
	}
	return -1;
}

static int field_value(const struct expr_env *env, unsigned int f, __s64 *v)
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
	}
	if (f >= EXPR_F_ARG0 && f < EXPR_F_ARG0 + EXPR_NR_ARGS) {
		*v = (__s64)env->args[f - EXPR_F_ARG0];
		return 0;
	}
	return -1;
}

static int rec_value(const struct expr_env *env, __u32 off, __u8 a, __s64 *v)
{
	__u32 size = a & EXPR_REC_SIZE_MASK;
	__u8 u8;
	__u16 u16;
	__u32 u32;
	__u64 u64;
	int sgn = a & EXPR_REC_SIGNED;

	switch (size) {
	case 1:
		if (rec_read(env, off, 1, &u8))
			return -1;
		*v = sgn ? (__s64)(__s8)u8 : (__s64)u8;
		return 0;
	case 2:
		if (rec_read(env, off, 2, &u16))
			return -1;
		*v = sgn ? (__s64)(__s16)u16 : (__s64)u16;
		return 0;
	case 4:
		if (rec_read(env, off, 4, &u32))
			return -1;
		*v = sgn ? (__s64)(__s32)u32 : (__s64)u32;
		return 0;
	case 8:
		if (rec_read(env, off, 8, &u64))
			return -1;
		*v = (__s64)u64;
		return 0;
	}
	return -1;
}

/*
 * The value instruction @insn pushes (push, field, rec, str, var, hit) in @v.
 * Return: 1 to push it, 0 when the condition is false (a failed read, no
 * value), -EINVAL for a malformed program.
 */
static int eval_operand(const struct expr_prog *prog, const struct expr_env *env, struct expr_state *st,
			const struct expr_insn *insn, __s64 count, __s64 *v)
{
	char str[EXPR_STR_MAX];
	__u64 q;
	int m;

	switch (insn->op) {
	case EXPR_OP_PUSH:
		*v = insn->imm;
		return 1;
	case EXPR_OP_FIELD:
		return field_value(env, insn->a, v) ? -EINVAL : 1;
	case EXPR_OP_REC:
		return rec_value(env, insn->b, insn->a, v) ? 0 : 1;
	case EXPR_OP_STR:
		if (insn->b >= EXPR_STRTAB_SIZE || insn->a > EXPR_S_REC_LOC)
			return -EINVAL;
		if (load_str(insn, env, str))
			return 0;
		m = match(str, prog->strtab + insn->b, insn->imm == EXPR_STR_GLOB);
		if (m < 0)
			return 0;
		*v = m;
		return 1;
	case EXPR_OP_VAR:
		if (insn->a == EXPR_VAR_COUNT) {
			if (count <= 0)
				return -EINVAL; /* $count without EXPR_PROG_COUNT */
			*v = count;
			return 1;
		}
		if (insn->a >= EXPR_MAX_VARS)
			return -EINVAL;
		if (insn->a == EXPR_VAR_NOW && !(env->vars_set & (1u << insn->a))) {
			struct timespec ts;

			/* bpf_ktime_get_ns()'s clock */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			*v = (__s64)ts.tv_sec * 1000000000 + ts.tv_nsec;
			return 1;
		}
		if (!(env->vars_set & (1u << insn->a)))
			return 0;
		*v = env->vars[insn->a];
		return 1;
	case EXPR_OP_UGET:
		if (!st || !st->uvars || insn->a >= EXPR_MAX_UVARS)
			return -EINVAL;
		*v = expr_uvars__get(st->uvars, insn->a, insn->b ? (__u32)env->tid : EXPR_UVAR_GLOBAL);
		return 1;
	case EXPR_OP_HIT:
		if (insn->a >= prog->nr_hits || insn->imm < 1)
			return -EINVAL;
		q = ++st->hits[insn->a];
		if (insn->b == EXPR_HIT_ONCE)
			*v = q == 1;
		else if (insn->b == EXPR_HIT_AFTER)
			*v = q >= (__u64)insn->imm;
		else if (insn->b == EXPR_HIT_EVERY)
			*v = q % (__u64)insn->imm == 0;
		else
			return -EINVAL;
		return 1;
	}
	return -EINVAL;
}

int expr__eval(const struct expr_prog *prog, const struct expr_env *env, struct expr_state *st)
{
	__s64 stack[EXPR_MAX_STACK], x, y, v = 0, count = 0;
	unsigned int sp = 0, pc = 0;
	int r;

	/*
	 * Its stack depths and jumps were checked once, by expr__validate(): the
	 * loop below relies on them. What each instruction indexes is still
	 * bounded here, as it costs a compare.
	 */
	if (!prog || !env || prog->checked != EXPR_PROG_CHECKED || prog->nr_insns > EXPR_MAX_INSNS ||
	    prog->nr_hits > EXPR_MAX_HITS)
		return -EINVAL;
	if ((prog->flags & (EXPR_PROG_COUNT | EXPR_PROG_UVARS) || prog->nr_hits) && !st)
		return -EINVAL;
	/* Every evaluation is a hit, whether or not the instruction reading $count runs. */
	if (prog->flags & EXPR_PROG_COUNT) {
		count = count_hit(st, (__u32)env->tid);
		if (!count)
			return -ENOMEM;
	}
	for (;;) {
		const struct expr_insn *insn;

		if (pc >= prog->nr_insns)
			return stack[sp - 1] != 0;
		insn = &prog->insns[pc++];
		switch (insn->op) {
		case EXPR_OP_PUSH:
		case EXPR_OP_FIELD:
		case EXPR_OP_REC:
		case EXPR_OP_STR:
		case EXPR_OP_VAR:
		case EXPR_OP_HIT:
		case EXPR_OP_UGET:
			r = eval_operand(prog, env, st, insn, count, &v);
			if (r <= 0)
				return r;
			goto push;
		case EXPR_OP_NEG:
		case EXPR_OP_BNOT:
		case EXPR_OP_LNOT:
		case EXPR_OP_BOOL:
		case EXPR_OP_CAST:
			x = stack[sp - 1];
			if (insn->op == EXPR_OP_NEG)
				stack[sp - 1] = (__s64)(0 - (__u64)x);
			else if (insn->op == EXPR_OP_BNOT)
				stack[sp - 1] = ~x;
			else if (insn->op == EXPR_OP_LNOT)
				stack[sp - 1] = !x;
			else if (insn->op == EXPR_OP_CAST)
				stack[sp - 1] = expr__cast(x, insn->a);
			else
				stack[sp - 1] = x != 0;
			continue;
		case EXPR_OP_USET:
			if (sp < 1 || !st->uvars || insn->a >= EXPR_MAX_UVARS)
				return -EINVAL;
			if (expr_uvars__set(st->uvars, insn->a, insn->b ? (__u32)env->tid : EXPR_UVAR_GLOBAL,
					    stack[--sp])) {
				st->uvar_lost++;
				return 0;
			}
			continue;
		case EXPR_OP_JFALSE:
		case EXPR_OP_JTRUE:
			x = stack[sp - 1];
			if ((insn->op == EXPR_OP_JFALSE) == (x == 0)) {
				stack[sp - 1] = x != 0;
				pc = insn->b;
			} else {
				sp--;
			}
			continue;
		}

		x = stack[sp - 2];
		y = stack[sp - 1];
		r = expr__binary(insn->op, x, y, &v);
		if (r <= 0)
			return r;
		stack[sp - 2] = v;
		sp--;
		continue;
push:
		stack[sp++] = v;
	}
}
