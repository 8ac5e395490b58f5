// SPDX-License-Identifier: BSD-2-Clause
/*
 * Conditions compiled to BPF instructions: see include/auxtrig/lang/expr_bpf.h.
 * The semantics are those of expr__eval() (user/lang/expr_eval.c) and expr_eval()
 * (bpf/expr.bpf.h), instruction by instruction.
 *
 * The bytecode's value stack lives in BPF stack slots, one per depth, but a
 * constant is kept in the compiler until an instruction consumes it, so
 * "ret == -2" is one load and one compare-with-immediate. At every join (a
 * &&/|| target) and before every jump all values are in their slots, so both
 * paths into a join agree on where each value is.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_bpf.h"

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R4 BPF_REG_4
#define R5 BPF_REG_5
#define FP BPF_REG_10

struct vval {
	int is_const;
	__s64 imm;
};

struct cc {
	struct bpf_asm *a;
	const struct expr_prog *prog;
	const struct expr_bpf_opts *o;
	struct vval vs[EXPR_MAX_STACK];
	unsigned int sp;
	size_t glob_insns; /* what glob_middle() emitted so far */
	int fail;
	char *why;
	size_t why_size;
};

/* Frame layout from opts->stack_off: values, string buffer, $count, map key. */
static int slot_off(const struct cc *c, unsigned int i)
{
	return c->o->stack_off + 8 * i;
}

static int buf_off(const struct cc *c)
{
	return c->o->stack_off + 8 * EXPR_MAX_STACK;
}

static int count_off(const struct cc *c)
{
	return buf_off(c) + EXPR_STR_MAX;
}

static int key_off(const struct cc *c)
{
	return count_off(c) + 8;
}

static int fits_s32(__s64 v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void emit(struct cc *c, struct bpf_insn insn)
{
	bpf_asm__emit(c->a, insn);
}

static void mov_imm(struct bpf_asm *a, int reg, __s64 v)
{
	if (fits_s32(v))
		bpf_asm__emit(a, BA_MOV64_IMM(reg, (__s32)v));
	else
		bpf_asm__ld_imm64(a, reg, (__u64)v);
}

void expr_bpf__fail_always(struct bpf_asm *a, int fail)
{
	bpf_asm__emit(a, BA_MOV64_IMM(R0, 0));
	bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, fail);
}

void expr_bpf__zero(struct bpf_asm *a, int buf_off)
{
	for (int i = 0; i < EXPR_STR_MAX; i += 8)
		bpf_asm__emit(a, BA_ST_MEM(BPF_DW, FP, buf_off + i, 0));
}

void expr_bpf__strlen(struct bpf_asm *a, int buf_off, unsigned int max)
{
	/* From the end: the first NUL wins. */
	bpf_asm__emit(a, BA_MOV64_IMM(R0, max));
	for (int i = (int)max - 1; i >= 0; i--) {
		bpf_asm__emit(a, BA_LDX_MEM(BPF_B, R1, FP, buf_off + i));
		bpf_asm__emit(a, BA_INSN(BPF_JMP | BPF_JNE | BPF_K, R1, 0, 1, 0)); /* skip the next */
		bpf_asm__emit(a, BA_MOV64_IMM(R0, i));
	}
}

void expr_bpf__user_str(struct bpf_asm *a, int buf_off, int need_len, int fail)
{
	bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, buf_off));
	bpf_asm__emit(a, BA_MOV64_IMM(R2, EXPR_STR_MAX));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_user_str));
	bpf_asm__jmp_imm(a, BPF_JSLT, R0, 0, fail);
	if (need_len)
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R0, -1));
}

void expr_bpf__data_loc_str(struct bpf_asm *a, int rec_reg, unsigned int off, unsigned int rec_max, int buf_off,
			    int need_len, int fail)
{
	int empty = bpf_asm__label(a), done = bpf_asm__label(a);

	expr_bpf__zero(a, buf_off);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R3, rec_reg, off));
	bpf_asm__emit(a, BA_MOV64_REG(R2, R3));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_RSH, R2, 16));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_AND, R3, 0xffff));
	bpf_asm__emit(a, BA_MOV64_REG(R1, R3));
	bpf_asm__emit(a, BA_ALU64_REG(BPF_ADD, R1, R2));
	bpf_asm__jmp_imm(a, BPF_JGT, R1, rec_max, fail);
	bpf_asm__jmp_imm(a, BPF_JEQ, R2, 0, empty);
	bpf_asm__jmp_imm(a, BPF_JLE, R2, EXPR_STR_MAX, done);
	bpf_asm__emit(a, BA_MOV64_IMM(R2, EXPR_STR_MAX));
	bpf_asm__bind(a, done);
	bpf_asm__emit(a, BA_ALU64_REG(BPF_ADD, R3, rec_reg));
	bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, buf_off));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_kernel_str));
	bpf_asm__jmp_imm(a, BPF_JSLT, R0, 0, fail);
	bpf_asm__bind(a, empty);
	if (need_len)
		expr_bpf__strlen(a, buf_off, EXPR_STR_MAX - 1);
}

/* Value @i of the virtual stack into @reg. */
static void load(struct cc *c, unsigned int i, int reg)
{
	if (c->vs[i].is_const)
		mov_imm(c->a, reg, c->vs[i].imm);
	else
		emit(c, BA_LDX_MEM(BPF_DW, reg, FP, slot_off(c, i)));
}

static void store(struct cc *c, unsigned int i, int reg)
{
	emit(c, BA_STX_MEM(BPF_DW, FP, reg, slot_off(c, i)));
	c->vs[i].is_const = 0;
}

/* Every constant into its slot: before a jump and at a join. */
static void flush(struct cc *c)
{
	for (unsigned int i = 0; i < c->sp; i++) {
		if (!c->vs[i].is_const)
			continue;
		mov_imm(c->a, R1, c->vs[i].imm);
		store(c, i, R1);
	}
}

static void push_const(struct cc *c, __s64 v)
{
	c->vs[c->sp].is_const = 1;
	c->vs[c->sp].imm = v;
	c->sp++;
}

/* r0 = (@reg @op @y) for a BPF_J* op, @y a register or (y_reg < 0) the immediate @imm. */
static void set_cond(struct cc *c, int op, int reg, int y_reg, __s32 imm)
{
	int yes = bpf_asm__label(c->a);

	emit(c, BA_MOV64_IMM(R0, 1));
	if (y_reg < 0)
		bpf_asm__jmp_imm(c->a, op, reg, imm, yes);
	else
		bpf_asm__jmp_reg(c->a, op, reg, y_reg, yes);
	emit(c, BA_MOV64_IMM(R0, 0));
	bpf_asm__bind(c->a, yes);
}

static int why(struct cc *c, int err, const char *fmt, const char *arg)
{
	if (c->why && c->why_size)
		snprintf(c->why, c->why_size, fmt, arg);
	return err;
}

/* x op y at compile time, as the interpreters compute it; 0 if it cannot be folded. */
static int fold(unsigned int op, __s64 x, __s64 y, __s64 *v)
{
	return expr__binary(op, x, y, v) == 1;
}

static void binary(struct cc *c, unsigned int op)
{
	struct vval *x = &c->vs[c->sp - 2], *y = &c->vs[c->sp - 1];
	int yk = y->is_const && fits_s32(y->imm), jop = -1, aop = -1, neg;
	__s64 v;

	if (x->is_const && y->is_const && fold(op, x->imm, y->imm, &v)) {
		c->sp -= 2;
		push_const(c, v);
		return;
	}
	load(c, c->sp - 2, R1);
	switch (op) {
	case EXPR_OP_ADD: aop = BPF_ADD; break;
	case EXPR_OP_SUB: aop = BPF_SUB; break;
	case EXPR_OP_MUL: aop = BPF_MUL; break;
	case EXPR_OP_AND: aop = BPF_AND; break;
	case EXPR_OP_OR: aop = BPF_OR; break;
	case EXPR_OP_XOR: aop = BPF_XOR; break;
	case EXPR_OP_EQ: jop = BPF_JEQ; break;
	case EXPR_OP_NE: jop = BPF_JNE; break;
	case EXPR_OP_LT: jop = BPF_JSLT; break;
	case EXPR_OP_LE: jop = BPF_JSLE; break;
	case EXPR_OP_GT: jop = BPF_JSGT; break;
	case EXPR_OP_GE: jop = BPF_JSGE; break;
	}
	if (aop >= 0) {
		if (yk) {
			emit(c, BA_ALU64_IMM(aop, R1, (__s32)y->imm));
		} else {
			load(c, c->sp - 1, R2);
			emit(c, BA_ALU64_REG(aop, R1, R2));
		}
		c->sp--;
		store(c, c->sp - 1, R1);
		return;
	}
	if (jop >= 0) {
		if (yk) {
			set_cond(c, jop, R1, -1, (__s32)y->imm);
		} else {
			load(c, c->sp - 1, R2);
			set_cond(c, jop, R1, R2, 0);
		}
		c->sp--;
		store(c, c->sp - 1, R0);
		return;
	}
	/* DIV, MOD: magnitudes divided, signs fixed as C does; y == 0 fails. */
	load(c, c->sp - 1, R2);
	bpf_asm__jmp_imm(c->a, BPF_JEQ, R2, 0, c->fail);
	emit(c, BA_MOV64_REG(R3, R1));	/* the signs */
	if (op == EXPR_OP_DIV)
		emit(c, BA_ALU64_REG(BPF_XOR, R3, R2));
	emit(c, BA_INSN(BPF_JMP | BPF_JSGE | BPF_K, R1, 0, 1, 0));
	emit(c, BA_NEG64(R1));
	emit(c, BA_INSN(BPF_JMP | BPF_JSGE | BPF_K, R2, 0, 1, 0));
	emit(c, BA_NEG64(R2));
	emit(c, BA_ALU64_REG(op == EXPR_OP_DIV ? BPF_DIV : BPF_MOD, R1, R2));
	neg = bpf_asm__label(c->a);
	bpf_asm__jmp_imm(c->a, BPF_JSGE, R3, 0, neg);
	emit(c, BA_NEG64(R1));
	bpf_asm__bind(c->a, neg);
	c->sp--;
	store(c, c->sp - 1, R1);
}

/* NEG, BNOT, LNOT, BOOL, or CAST with its operand @cast (EXPR_OP_CAST's a). */
static void unary(struct cc *c, unsigned int op, unsigned int cast)
{
	struct vval *x = &c->vs[c->sp - 1];

	if (x->is_const) {
		switch (op) {
		case EXPR_OP_NEG: x->imm = (__s64)(0 - (__u64)x->imm); break;
		case EXPR_OP_BNOT: x->imm = ~x->imm; break;
		case EXPR_OP_LNOT: x->imm = !x->imm; break;
		case EXPR_OP_CAST: x->imm = expr__cast(x->imm, cast); break;
		default: x->imm = x->imm != 0; break;
		}
		return;
	}
	load(c, c->sp - 1, R1);
	switch (op) {
	case EXPR_OP_CAST: {
		/* the low bytes to the top, then back with the sign (arsh) or zeros (rsh) */
		int shift = 64 - 8 * (cast & EXPR_REC_SIZE_MASK);

		if (shift > 0 && shift < 64) {
			emit(c, BA_ALU64_IMM(BPF_LSH, R1, shift));
			emit(c, BA_ALU64_IMM(cast & EXPR_REC_SIGNED ? BPF_ARSH : BPF_RSH, R1, shift));
		}
		store(c, c->sp - 1, R1);
		return;
	}
	case EXPR_OP_NEG:
		emit(c, BA_NEG64(R1));
		store(c, c->sp - 1, R1);
		return;
	case EXPR_OP_BNOT:
		emit(c, BA_ALU64_IMM(BPF_XOR, R1, -1));
		store(c, c->sp - 1, R1);
		return;
	case EXPR_OP_LNOT:
		set_cond(c, BPF_JEQ, R1, -1, 0);
		break;
	default:
		set_cond(c, BPF_JNE, R1, -1, 0);
		break;
	}
	store(c, c->sp - 1, R0);
}

/* r0 = &expr_state[slot] (an array lookup, which the verifier inlines); NULL: goto @fail. */
static void slot_state(struct cc *c, int fail)
{
	emit(c, BA_ST_MEM(BPF_W, FP, key_off(c), c->o->slot));
	bpf_asm__map_lookup(c->a, c->o->state_fd, key_off(c), fail);
}

/* once/after/every: its counter in expr_state[slot].hits[a] += 1, atomically. */
static void hit(struct cc *c, const struct expr_insn *in)
{
	slot_state(c, c->fail);
	emit(c, BA_MOV64_IMM(R2, 1));
	emit(c, BA_ATOMIC_FETCH_ADD64(R0, R2, offsetof(struct expr_slot_state, hits) + in->a * sizeof(__u64)));
	emit(c, BA_ALU64_IMM(BPF_ADD, R2, 1)); /* the new count */
	switch (in->b) {
	case EXPR_HIT_ONCE:
		set_cond(c, BPF_JEQ, R2, -1, 1);
		break;
	case EXPR_HIT_AFTER:
		mov_imm(c->a, R3, in->imm);
		set_cond(c, BPF_JGE, R2, R3, 0);
		break;
	default:
		mov_imm(c->a, R3, in->imm);
		emit(c, BA_ALU64_REG(BPF_MOD, R2, R3));
		set_cond(c, BPF_JEQ, R2, -1, 0);
		break;
	}
	store(c, c->sp++, R0);
}

/* The key of variable @in->a (struct expr_uvar_key) at key_off: the thread's, or the global one. */
static int uvar_key(struct cc *c, const struct expr_insn *in)
{
	int err;

	if (c->o->uvars_fd <= 0)
		return why(c, -EOPNOTSUPP, "%s", "variables of your own are not available here");
	emit(c, BA_ST_MEM(BPF_W, FP, key_off(c), in->a));
	if (!in->b) {
		emit(c, BA_ST_MEM(BPF_W, FP, key_off(c) + 4, (__s32)EXPR_UVAR_GLOBAL));
		return 0;
	}
	err = c->o->ops->field(c->a, c->o->ctx, EXPR_F_TID, c->fail, c->why, c->why_size);
	if (err)
		return err;
	emit(c, BA_STX_MEM(BPF_W, FP, R0, key_off(c) + 4));
	return 0;
}

/* EXPR_OP_UGET: the variable's value, 0 when never set (expr_operand()). */
static int uget(struct cc *c, const struct expr_insn *in)
{
	int none = bpf_asm__label(c->a), done = bpf_asm__label(c->a);
	int err = uvar_key(c, in);

	if (err)
		return err;
	bpf_asm__map_lookup(c->a, c->o->uvars_fd, key_off(c), none);
	emit(c, BA_LDX_MEM(BPF_DW, R0, R0, 0));
	bpf_asm__jmp(c->a, done);
	bpf_asm__bind(c->a, none);
	emit(c, BA_MOV64_IMM(R0, 0));
	bpf_asm__bind(c->a, done);
	store(c, c->sp++, R0);
	return 0;
}

/* EXPR_OP_USET: the value on top into the variable; the table full: counted, goto fail (expr_uset()). */
static int uset(struct cc *c, const struct expr_insn *in)
{
	int err;

	flush(c);	/* the value in its slot, for the helper */
	err = uvar_key(c, in);
	if (err)
		return err;
	bpf_asm__ld_map_fd(c->a, R1, c->o->uvars_fd);
	emit(c, BA_MOV64_REG(R2, FP));
	emit(c, BA_ALU64_IMM(BPF_ADD, R2, key_off(c)));
	emit(c, BA_MOV64_REG(R3, FP));
	emit(c, BA_ALU64_IMM(BPF_ADD, R3, slot_off(c, c->sp - 1)));
	emit(c, BA_MOV64_IMM(R4, BPF_ANY));
	emit(c, BA_CALL(BPF_FUNC_map_update_elem));
	c->sp--;
	{
		int ok = bpf_asm__label(c->a);

		bpf_asm__jmp_imm(c->a, BPF_JEQ, R0, 0, ok);
		slot_state(c, c->fail);
		emit(c, BA_MOV64_IMM(R2, 1));
		emit(c, BA_ATOMIC_FETCH_ADD64(R0, R2, offsetof(struct expr_slot_state, uvar_lost)));
		bpf_asm__jmp(c->a, c->fail);
		bpf_asm__bind(c->a, ok);
	}
	return 0;
}

/* $count: the thread's counter of this slot, bumped before the first instruction (expr_count_hit()). */
static int count_hit(struct cc *c)
{
	struct bpf_asm *a = c->a;
	int have = bpf_asm__label(a), create = bpf_asm__label(a), lost = bpf_asm__label(a);
	int err = c->o->ops->field(a, c->o->ctx, EXPR_F_TID, c->fail, c->why, c->why_size);

	if (err)
		return err;
	emit(c, BA_STX_MEM(BPF_W, FP, R0, key_off(c)));
	emit(c, BA_ST_MEM(BPF_W, FP, key_off(c) + 4, c->o->slot));
	for (int again = 0; again < 2; again++) {
		bpf_asm__map_lookup(a, c->o->counts_fd, key_off(c), again ? lost : create);
		emit(c, BA_MOV64_IMM(R1, 1));
		emit(c, BA_ATOMIC_FETCH_ADD64(R0, R1, 0));
		emit(c, BA_ALU64_IMM(BPF_ADD, R1, 1));
		bpf_asm__jmp(a, have);
		if (again)
			break;
		/* none yet: create it at 1; if another CPU did meanwhile, count on its */
		bpf_asm__bind(a, create);
		emit(c, BA_ST_MEM(BPF_DW, FP, count_off(c), 1));
		bpf_asm__ld_map_fd(a, R1, c->o->counts_fd);
		emit(c, BA_MOV64_REG(R2, FP));
		emit(c, BA_ALU64_IMM(BPF_ADD, R2, key_off(c)));
		emit(c, BA_MOV64_REG(R3, FP));
		emit(c, BA_ALU64_IMM(BPF_ADD, R3, count_off(c)));
		emit(c, BA_MOV64_IMM(R4, BPF_NOEXIST));
		emit(c, BA_CALL(BPF_FUNC_map_update_elem));
		emit(c, BA_MOV64_IMM(R1, 1));
		bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, have);
	}
	bpf_asm__bind(a, lost);
	slot_state(c, c->fail);
	emit(c, BA_MOV64_IMM(R2, 1));
	emit(c, BA_ATOMIC_FETCH_ADD64(R0, R2, offsetof(struct expr_slot_state, count_lost)));
	bpf_asm__jmp(a, c->fail);
	bpf_asm__bind(a, have);
	emit(c, BA_STX_MEM(BPF_DW, FP, R1, count_off(c)));
	return 0;
}

/*
 * Bytes [@from, @to) of the string at @base (+ a register offset in @ptr when
 * >= 0, else r10) against @pat's: '?' (in a glob) any byte but NUL. Jumps to
 * @no on a mismatch. Fixed offsets are read in aligned words; from a
 * register (a suffix) byte by byte.
 */
static void cmp_bytes(struct cc *c, const char *pat, int glob, int ptr, int base, int from, int to, int no)
{
	int p = from;

	while (p < to) {
		int size = 1, q;
		__u64 want = 0, mask = 0;

		if (ptr < 0) {
			size = 8;
			while (size > 1 && (((base + p) % size) || p + size > to))
				size /= 2;
		}
		for (q = 0; q < size; q++) {
			unsigned char ch = pat[p + q];

			if (glob && ch == '?') {
				/* any byte but the end of the string */
				emit(c, BA_LDX_MEM(BPF_B, R1, ptr < 0 ? FP : ptr, base + p + q));
				bpf_asm__jmp_imm(c->a, BPF_JEQ, R1, 0, no);
				continue;
			}
			want |= (__u64)ch << (8 * q);
			mask |= (__u64)0xff << (8 * q);
		}
		/* little and big endian alike: the bytes as the CPU loads them */
		if (mask) {
			__u64 w = 0, m = 0;
			unsigned char wb[8], mb[8];

			for (q = 0; q < size; q++) {
				wb[q] = want >> (8 * q);
				mb[q] = mask >> (8 * q);
			}
			memcpy(&w, wb, size);
			memcpy(&m, mb, size);
			emit(c, BA_LDX_MEM(size == 8 ? BPF_DW : size == 4 ? BPF_W : size == 2 ? BPF_H : BPF_B, R1,
					   ptr < 0 ? FP : ptr, base + p));
			if (size < 8)
				m &= (1ULL << (8 * size)) - 1;
			if (m != (size == 8 ? ~0ULL : (1ULL << (8 * size)) - 1)) {
				mov_imm(c->a, R2, (__s64)m);
				emit(c, BA_ALU64_REG(BPF_AND, R1, R2));
			}
			if (fits_s32((__s64)w)) {
				bpf_asm__jmp_imm(c->a, BPF_JNE, R1, (__s32)w, no);
			} else {
				bpf_asm__ld_imm64(c->a, R2, w);
				bpf_asm__jmp_reg(c->a, BPF_JNE, R1, R2, no);
			}
		}
		p += size;
	}
}

/*
 * The middle segments of a glob "P*M1*M2*...*S" (between its first and last
 * '*'), matched after the string was read and its prefix and suffix checked:
 * r5 holds the string's length. For each segment, every position it could
 * start at (at or after the end of the one before, before the suffix) is
 * compared byte by byte, unrolled, into a mask of the positions it matches
 * at; the leftmost match past the previous segment's end is taken (the
 * leftmost is always as good as any: it leaves the most room to the rest).
 * Finally the suffix must start at or after the last segment's end.
 * r4: the positions the next segment may start at, as a bit mask.
 *
 * The verifier must not know the masks: a branch it can decide from a known
 * value makes it track that value precisely, and then no two of the 2^n
 * paths through the unrolled compares look alike to it (and it can know the
 * string's bytes too, from the prefix compare). So r0 comes in as a word
 * of the condition's state XORed with itself minus 1: all ones, but not to
 * the verifier; each mask starts as r0 + 1 (0, ditto) and each bit goes in
 * ANDed with r0.
 */
/*
 * A segment of @l bytes, with @before bytes of segments before it and
 * @after after it (and the suffix, @suf), can only start at these positions.
 */
static size_t seg_from(size_t first, size_t before)
{
	return first + before;
}

static size_t seg_to(size_t l, size_t after, size_t suf)
{
	return EXPR_STR_MAX - 1 - suf - after - l; /* the last position, inclusive */
}

/*
 * The next segment of @pat's middle (the bytes between '*'s) from *@i, up to
 * @last: *@i moved to its start. Return: its length, 0 when none is left.
 */
static size_t glob_seg(const char *pat, size_t *i, size_t last)
{
	size_t l = 0;

	while (*i < last && pat[*i] == '*')
		(*i)++;
	while (*i + l < last && pat[*i + l] != '*')
		l++;
	return l;
}

/* The instructions glob_middle() emits for @pat (first and last '*' at @first, @last). */
static size_t glob_middle_size(const char *pat, size_t first, size_t last, size_t suf, size_t fixed)
{
	size_t n = 8, before = 0, i = first + 1, l;

	for (; (l = glob_seg(pat, &i, last)); before += l, i += l) {
		if (seg_to(l, fixed - before - l, suf) >= seg_from(first, before))
			n += (seg_to(l, fixed - before - l, suf) - seg_from(first, before) + 1) * (2 * l + 4);
		n += 16;
	}
	return n;
}

static void glob_middle(struct cc *c, const char *pat, size_t first, size_t last, size_t suf, size_t fixed, int no)
{
	int buf = buf_off(c);
	size_t i = first + 1, before = 0, l;

	/* at or after the prefix */
	mov_imm(c->a, R4, (__s64)~((1ULL << first) - 1));
	for (; (l = glob_seg(pat, &i, last)); before += l, i += l) {
		emit(c, BA_MOV64_REG(R2, R0));
		emit(c, BA_ALU64_IMM(BPF_ADD, R2, 1));
		for (size_t p = seg_from(first, before); p + l + suf + (fixed - before - l) <= EXPR_STR_MAX - 1; p++) {
			int next = bpf_asm__label(c->a);

			for (size_t k = 0; k < l; k++) {
				unsigned char ch = pat[i + k];

				emit(c, BA_LDX_MEM(BPF_B, R1, FP, buf + (int)(p + k)));
				if (ch == '?') /* any byte but the end of the string */
					bpf_asm__jmp_imm(c->a, BPF_JEQ, R1, 0, next);
				else
					bpf_asm__jmp_imm(c->a, BPF_JNE, R1, ch, next);
			}
			emit(c, BA_MOV64_IMM(R3, 1));
			emit(c, BA_ALU64_IMM(BPF_LSH, R3, (__s32)p));
			emit(c, BA_ALU64_REG(BPF_AND, R3, R0));
			emit(c, BA_ALU64_REG(BPF_OR, R2, R3));
			bpf_asm__bind(c->a, next);
		}
		/* the leftmost allowed match: its bit; the next segment starts at or after its end */
		emit(c, BA_ALU64_REG(BPF_AND, R2, R4));
		bpf_asm__jmp_imm(c->a, BPF_JEQ, R2, 0, no);
		emit(c, BA_MOV64_REG(R3, R2));
		emit(c, BA_NEG64(R3));
		emit(c, BA_ALU64_REG(BPF_AND, R2, R3));
		emit(c, BA_ALU64_IMM(BPF_LSH, R2, (__s32)l));
		emit(c, BA_ALU64_IMM(BPF_ADD, R2, -1));
		emit(c, BA_ALU64_IMM(BPF_XOR, R2, -1));
		emit(c, BA_MOV64_REG(R4, R2));
	}
	/* the suffix starts at len - suf: at or after the last segment's end */
	emit(c, BA_MOV64_REG(R1, R5));
	if (suf)
		emit(c, BA_ALU64_IMM(BPF_ADD, R1, -(__s32)suf));
	emit(c, BA_MOV64_REG(R2, R4));
	emit(c, BA_ALU64_REG(BPF_RSH, R2, R1));
	emit(c, BA_ALU64_IMM(BPF_AND, R2, 1));
	bpf_asm__jmp_imm(c->a, BPF_JEQ, R2, 0, no);
}

/* A string instruction: read the string, compare or glob-match it with its constant. */
static int str_op(struct cc *c, const struct expr_insn *in)
{
	const char *pat = c->prog->strtab + in->b;
	int glob = in->imm == EXPR_STR_GLOB, buf = buf_off(c), no, done, middle = 0;
	size_t len = strnlen(pat, EXPR_STRTAB_SIZE - in->b);
	size_t first = len, last = len, pre, suf, fixed = 0;
	int err;

	if (in->b >= EXPR_STRTAB_SIZE || len >= (size_t)(EXPR_STRTAB_SIZE - in->b) || len > (size_t)EXPR_STR_MAX - 1 ||
	    in->a > EXPR_S_REC_LOC)
		return why(c, -EINVAL, "%s", "a malformed string instruction");
	if (glob) {
		const char *s = memchr(pat, '*', len);

		if (s) {
			first = s - pat;
			last = len - 1;
			while (pat[last] != '*')
				last--;
			for (size_t i = first; i <= last; i++) {
				middle |= pat[i] != '*';
				fixed += pat[i] != '*';
			}
		}
	}
	if (middle) {
		size_t n = glob_middle_size(pat, first, last, len - last - 1, fixed);

		c->glob_insns += n;
		if (c->glob_insns > EXPR_BPF_GLOB_BUDGET) {
			if (c->why && c->why_size)
				snprintf(c->why, c->why_size,
					 "the globs' unrolled matchers would take %zu instructions (at most %d are compiled)",
					 c->glob_insns, EXPR_BPF_GLOB_BUDGET);
			return -EOPNOTSUPP;
		}
	}
	/* the length: for a suffix, and for middle segments (where the string ends) */
	err = c->o->ops->str(c->a, c->o->ctx, in->a, in->c, buf,
			     glob && first < len && (last + 1 < len || middle), c->fail, c->why, c->why_size);
	if (err)
		return err;
	no = bpf_asm__label(c->a);
	done = bpf_asm__label(c->a);
	if (first == len) {
		/* no star: the pattern and its NUL, at most 64 bytes */
		cmp_bytes(c, pat, glob, -1, buf, 0, len + 1, no);
	} else {
		pre = first;
		suf = len - last - 1;
		if ((int)(pre + suf + fixed) > EXPR_STR_MAX - 1) {
			expr_bpf__fail_always(c->a, no);
		} else {
			if (middle) {
				/* r0: the length, 0..63 as the verifier must see it; kept in r5 */
				bpf_asm__jmp_imm(c->a, BPF_JGT, R0, EXPR_STR_MAX - 1, c->fail);
				bpf_asm__jmp_imm(c->a, BPF_JLT, R0, pre + suf + fixed, no);
				emit(c, BA_STX_MEM(BPF_DW, FP, R0, slot_off(c, c->sp))); /* the free value slot */
			}
			cmp_bytes(c, pat, glob, -1, buf, 0, pre, no);
			if (suf) {
				/* r0: the length, 0..63 as the verifier must see it */
				bpf_asm__jmp_imm(c->a, BPF_JGT, R0, EXPR_STR_MAX - 1, c->fail);
				bpf_asm__jmp_imm(c->a, BPF_JLT, R0, pre + suf, no);
				emit(c, BA_MOV64_REG(R3, FP));
				emit(c, BA_ALU64_REG(BPF_ADD, R3, R0));
				cmp_bytes(c, pat + last + 1 - 0, glob, R3, buf - (int)suf, 0, suf, no);
			}
			if (middle) {
				/* r0: all ones the verifier cannot know (see glob_middle()); r5: the length */
				slot_state(c, c->fail);
				emit(c, BA_LDX_MEM(BPF_DW, R1, R0, 0));
				emit(c, BA_MOV64_REG(R0, R1));
				emit(c, BA_ALU64_REG(BPF_XOR, R0, R1));
				emit(c, BA_ALU64_IMM(BPF_ADD, R0, -1));
				emit(c, BA_LDX_MEM(BPF_DW, R5, FP, slot_off(c, c->sp)));
				glob_middle(c, pat, first, last, suf, fixed, no);
			}
		}
	}
	emit(c, BA_MOV64_IMM(R0, 1));
	if (bpf_asm__is_used(c->a, no)) { /* "*" matches every string */
		bpf_asm__jmp(c->a, done);
		bpf_asm__bind(c->a, no);
		emit(c, BA_MOV64_IMM(R0, 0));
	}
	bpf_asm__bind(c->a, done);
	store(c, c->sp++, R0);
	return 0;
}

int expr_bpf__compile(struct bpf_asm *a, const struct expr_prog *prog, const struct expr_bpf_opts *o, char *whyb,
		      size_t why_size)
{
	struct cc c = { .a = a, .prog = prog, .o = o, .why = whyb, .why_size = why_size };
	int depth[EXPR_MAX_INSNS + 1], labels[EXPR_MAX_INSNS + 1], done, err;
	char target[EXPR_MAX_INSNS + 1];

	if (whyb && why_size)
		whyb[0] = 0;
	if (o->stack_off > -EXPR_BPF_FRAME || o->stack_off % 8 || o->slot >= EXPR_MAX_SLOTS)
		return why(&c, -EINVAL, "%s", "a bad stack offset or slot");
	err = expr__check(prog, depth, target, whyb, why_size);
	if (err)
		return err;
	c.fail = bpf_asm__label(a);
	for (unsigned int i = 0; i <= prog->nr_insns; i++)
		labels[i] = target[i] ? bpf_asm__label(a) : -1;
	if (prog->flags & EXPR_PROG_COUNT) {
		err = count_hit(&c);
		if (err)
			return err;
	}
	for (unsigned int pc = 0; pc <= prog->nr_insns; pc++) {
		const struct expr_insn *in = &prog->insns[pc];

		if (labels[pc] >= 0) {
			flush(&c);
			bpf_asm__bind(a, labels[pc]);
		}
		if (pc == prog->nr_insns)
			break;
		switch (in->op) {
		case EXPR_OP_PUSH:
			push_const(&c, in->imm);
			break;
		case EXPR_OP_FIELD:
			err = o->ops->field(a, o->ctx, in->a, c.fail, whyb, why_size);
			if (err)
				return err;
			store(&c, c.sp++, R0);
			break;
		case EXPR_OP_REC:
			err = o->ops->rec_int(a, o->ctx, in->b, in->a & EXPR_REC_SIZE_MASK, !!(in->a & EXPR_REC_SIGNED),
					      c.fail, whyb, why_size);
			if (err)
				return err;
			store(&c, c.sp++, R0);
			break;
		case EXPR_OP_STR:
			err = str_op(&c, in);
			if (err)
				return err;
			break;
		case EXPR_OP_VAR:
			if (in->a == EXPR_VAR_COUNT) {
				emit(&c, BA_LDX_MEM(BPF_DW, R0, FP, count_off(&c)));
			} else {
				err = o->ops->var(a, o->ctx, in->a, c.fail, whyb, why_size);
				/* $now: the clock, where the caller has no value of its own */
				if (err == -EOPNOTSUPP && in->a == EXPR_VAR_NOW)
					err = 0, emit(&c, BA_CALL(BPF_FUNC_ktime_get_ns));
				if (err)
					return err;
			}
			store(&c, c.sp++, R0);
			break;
		case EXPR_OP_UGET:
			err = uget(&c, in);
			if (err)
				return err;
			break;
		case EXPR_OP_USET:
			err = uset(&c, in);
			if (err)
				return err;
			break;
		case EXPR_OP_HIT:
			hit(&c, in);
			break;
		case EXPR_OP_NEG:
		case EXPR_OP_BNOT:
		case EXPR_OP_LNOT:
		case EXPR_OP_BOOL:
		case EXPR_OP_CAST:
			unary(&c, in->op, in->a);
			break;
		case EXPR_OP_JFALSE:
		case EXPR_OP_JTRUE:
			/* && / ||: the value decides; it stays (as 0 or 1) where the jump lands */
			flush(&c);
			load(&c, c.sp - 1, R1);
			if (in->op == EXPR_OP_JFALSE) {
				bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, labels[in->b]);
			} else {
				int stay = bpf_asm__label(a);

				bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, stay);
				emit(&c, BA_ST_MEM(BPF_DW, FP, slot_off(&c, c.sp - 1), 1));
				bpf_asm__jmp(a, labels[in->b]);
				bpf_asm__bind(a, stay);
			}
			c.sp--;
			break;
		default:
			binary(&c, in->op);
			break;
		}
	}
	/* the value on top decides */
	load(&c, c.sp - 1, R1);
	set_cond(&c, BPF_JNE, R1, -1, 0);
	if (bpf_asm__is_used(a, c.fail)) {
		done = bpf_asm__label(a);
		bpf_asm__jmp(a, done);
		bpf_asm__bind(a, c.fail);
		emit(&c, BA_MOV64_IMM(R0, 0));
		bpf_asm__bind(a, done);
	}
	return bpf_asm__error(a);
}

/* ---- values from a struct expr_env --------------------------------------- */

static int env_field_off(unsigned int f)
{
	switch (f) {
	case EXPR_F_PID: return offsetof(struct expr_env, pid);
	case EXPR_F_TID: return offsetof(struct expr_env, tid);
	case EXPR_F_PPID: return offsetof(struct expr_env, ppid);
	case EXPR_F_UID: return offsetof(struct expr_env, uid);
	case EXPR_F_GID: return offsetof(struct expr_env, gid);
	case EXPR_F_CPU: return offsetof(struct expr_env, cpu);
	case EXPR_F_CGROUP: return offsetof(struct expr_env, cgroup);
	case EXPR_F_NR: return offsetof(struct expr_env, nr);
	case EXPR_F_RET: return offsetof(struct expr_env, ret);
	}
	if (f >= EXPR_F_ARG0 && f < EXPR_F_ARG0 + EXPR_NR_ARGS)
		return offsetof(struct expr_env, args) + 8 * (f - EXPR_F_ARG0);
	return -1;
}

static int env_field(struct bpf_asm *a, void *ctx, unsigned int f, int fail, char *why, size_t why_size)
{
	const struct expr_bpf_env *e = ctx;
	int off = env_field_off(f);

	if (off < 0)
		return -EINVAL;
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, e->env_reg, off));
	return 0;
}

/* r0 = sign- or zero-extended @size bytes at r1. */
static void load_sized(struct bpf_asm *a, int base, int off, unsigned int size, int is_signed)
{
	int sz = size == 8 ? BPF_DW : size == 4 ? BPF_W : size == 2 ? BPF_H : BPF_B;

	bpf_asm__emit(a, BA_LDX_MEM(sz, R0, base, off));
	if (is_signed && size < 8) {
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_LSH, R0, 64 - 8 * size));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ARSH, R0, 64 - 8 * size));
	}
}

static int env_rec_int(struct bpf_asm *a, void *ctx, unsigned int off, unsigned int size, int is_signed, int fail,
		       char *why, size_t why_size)
{
	const struct expr_bpf_env *e = ctx;

	if (e->rec_fd < 0 || off + size > e->rec_size) {
		expr_bpf__fail_always(a, fail);
		return 0;
	}
	bpf_asm__ld_map_value(a, R1, e->rec_fd, e->rec_off + off);
	load_sized(a, R1, 0, size, is_signed);
	return 0;
}

static int env_str(struct bpf_asm *a, void *ctx, unsigned int src, unsigned int arg, int buf_off, int need_len,
		   int fail, char *why, size_t why_size)
{
	const struct expr_bpf_env *e = ctx;
	unsigned int off = arg & 0xffff, size = arg >> 16;

	switch (src) {
	case EXPR_S_COMM:
		for (int i = EXPR_COMM_LEN; i < EXPR_STR_MAX; i += 8)
			bpf_asm__emit(a, BA_ST_MEM(BPF_DW, FP, buf_off + i, 0));
		for (int i = 0; i < EXPR_COMM_LEN; i += 8) {
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, e->env_reg, offsetof(struct expr_env, comm) + i));
			bpf_asm__emit(a, BA_STX_MEM(BPF_DW, FP, R1, buf_off + i));
		}
		bpf_asm__emit(a, BA_ST_MEM(BPF_B, FP, buf_off + EXPR_COMM_LEN, 0));
		if (need_len)
			expr_bpf__strlen(a, buf_off, EXPR_COMM_LEN);
		return 0;
	case EXPR_S_USER:
		if (arg >= EXPR_NR_ARGS)
			return -EINVAL;
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R3, e->env_reg, offsetof(struct expr_env, args) + 8 * arg));
		expr_bpf__user_str(a, buf_off, need_len, fail);
		return 0;
	case EXPR_S_REC_ARRAY:
		if (e->rec_fd < 0 || off + size > e->rec_size) {
			expr_bpf__fail_always(a, fail);
			return 0;
		}
		if (size > EXPR_STR_MAX - 1)
			size = EXPR_STR_MAX - 1;
		expr_bpf__zero(a, buf_off);
		bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, buf_off));
		bpf_asm__emit(a, BA_MOV64_IMM(R2, size ? size : 1));
		bpf_asm__ld_map_value(a, R3, e->rec_fd, e->rec_off + off);
		if (size) {
			bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_kernel));
			bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, fail);
		}
		bpf_asm__emit(a, BA_ST_MEM(BPF_B, FP, buf_off + size, 0));
		if (need_len)
			expr_bpf__strlen(a, buf_off, size);
		return 0;
	case EXPR_S_REC_LOC:
		if (e->rec_fd < 0 || off + 4 > e->rec_size) {
			expr_bpf__fail_always(a, fail);
			return 0;
		}
		/* the record in its map value; the u32 location and the string both within it */
		bpf_asm__ld_map_value(a, BPF_REG_5, e->rec_fd, e->rec_off);
		expr_bpf__data_loc_str(a, BPF_REG_5, off, e->rec_size, buf_off, need_len, fail);
		return 0;
	}
	return -EINVAL;
}

static int env_var(struct bpf_asm *a, void *ctx, unsigned int var, int fail, char *why, size_t why_size)
{
	const struct expr_bpf_env *e = ctx;

	if (var == EXPR_VAR_NOW) {
		/* the env's value when it has one (tests), else the clock */
		int clock = bpf_asm__label(a), done = bpf_asm__label(a);

		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R1, e->env_reg, offsetof(struct expr_env, vars_set)));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_AND, R1, 1 << var));
		bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, clock);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, e->env_reg, offsetof(struct expr_env, vars) + 8 * var));
		bpf_asm__jmp(a, done);
		bpf_asm__bind(a, clock);
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_ktime_get_ns));
		bpf_asm__bind(a, done);
		return 0;
	}
	if (var >= EXPR_MAX_VARS)
		return -EINVAL;
	bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R1, e->env_reg, offsetof(struct expr_env, vars_set)));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_AND, R1, 1 << var));
	bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, fail);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, e->env_reg, offsetof(struct expr_env, vars) + 8 * var));
	return 0;
}

const struct expr_bpf_ops expr_bpf_env_ops = {
	.field = env_field,
	.rec_int = env_rec_int,
	.str = env_str,
	.var = env_var,
};
