// SPDX-License-Identifier: BSD-2-Clause
/*
 * The condition compiler (user/lang/expr_bpf.c) without a kernel: what it
 * emits for the shapes that matter (a constant compared is an immediate, a
 * string compared is unrolled, nothing jumps back), and what it refuses. The
 * emitted code runs through the verifier and the kernel against every vector
 * in tests/kernel/test_expr_bpf.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_bpf.h"
#include "expr_vectors.h"

struct compiled {
	const struct bpf_insn *insns;
	size_t nr;
	struct bpf_asm *a;
	int err;
	char why[256];
};

static void compile(const char *src, struct compiled *out)
{
	struct expr_bpf_env env = { .env_reg = BPF_REG_6, .rec_fd = 3, .rec_size = EXPR_VECTOR_REC_SIZE };
	struct expr_bpf_opts o = { .ops = &expr_bpf_env_ops, .ctx = &env, .stack_off = -EXPR_BPF_FRAME,
				   .state_fd = 4, .counts_fd = 5, .slot = 1 };
	const struct expr_vector v = { .src = src };
	struct expr_prog prog;
	char err[256];

	assert_int_equal(expr_vector_compile(&v, &prog, err, sizeof(err)), 0);
	memset(out, 0, sizeof(*out));
	out->a = bpf_asm__new();
	assert_non_null(out->a);
	out->err = expr_bpf__compile(out->a, &prog, &o, out->why, sizeof(out->why));
	if (!out->err)
		out->err = bpf_asm__finish(out->a, &out->insns, &out->nr);
}

static int count_class(const struct compiled *c, int cls, int mode)
{
	int n = 0;

	for (size_t i = 0; i < c->nr; i++)
		if (BPF_CLASS(c->insns[i].code) == cls && (mode < 0 || BPF_MODE(c->insns[i].code) == mode))
			n++;
	return n;
}

/* Straight-line: every jump goes forward and lands inside the code or just after it. */
static void assert_forward(const struct compiled *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		const struct bpf_insn *in = &c->insns[i];

		if (BPF_CLASS(in->code) != BPF_JMP || BPF_OP(in->code) == BPF_CALL || BPF_OP(in->code) == BPF_EXIT)
			continue;
		assert_true(in->off >= 0);
		assert_true(i + 1 + in->off <= c->nr);
	}
}

/* ret == -2: one load of ret, one compare with an immediate, no stack traffic for the constant. */
static void test_constant_inlined(void **state)
{
	struct compiled c;

	compile("ret == -ENOENT", &c);
	assert_int_equal(c.err, 0);
	assert_forward(&c);
	assert_int_equal(count_class(&c, BPF_LD, -1), 0); /* no 64-bit constant load */
	for (size_t i = 0; i < c.nr; i++)
		if (BPF_CLASS(c.insns[i].code) == BPF_JMP && BPF_OP(c.insns[i].code) == BPF_JEQ &&
		    BPF_SRC(c.insns[i].code) == BPF_K && c.insns[i].imm == -2)
			goto found;
	fail_msg("no compare with the immediate -2");
found:
	assert_true(c.nr < 16);
	bpf_asm__delete(c.a);
	/* folded at compile time: nothing is loaded at all */
	compile("1 + 2 * 3 == 7", &c);
	assert_int_equal(c.err, 0);
	assert_int_equal(count_class(&c, BPF_LDX, -1), 0);
	bpf_asm__delete(c.a);
}

/* A string compared with a constant: no loop, no call, the pattern in the code. */
static void test_string_unrolled(void **state)
{
	struct compiled c;

	compile("comm == \"nginx\"", &c);
	assert_int_equal(c.err, 0);
	assert_forward(&c);
	for (size_t i = 0; i < c.nr; i++)
		assert_false(BPF_CLASS(c.insns[i].code) == BPF_JMP && BPF_OP(c.insns[i].code) == BPF_CALL);
	bpf_asm__delete(c.a);

	/* a prefix glob reads the string once (one helper) and compares the prefix */
	compile("str(arg1) ~ \"/nonexistent/*\"", &c);
	assert_int_equal(c.err, 0);
	assert_forward(&c);
	bpf_asm__delete(c.a);
	compile("str(arg1) ~ \"/etc/*wd\" && name ~ \"b?sh\" && comm ~ \"*x\"", &c);
	assert_int_equal(c.err, 0);
	assert_forward(&c);
	bpf_asm__delete(c.a);
}

/*
 * Globs with a '*' between other characters: compiled too, forward only, one
 * string read and one lookup of the condition's state (an array: inlined).
 */
static void test_inner_star(void **state)
{
	static const char *const src[] = {
		"str(arg1) ~ \"/etc/*/passwd*\"",
		"name ~ \"*a?c*d*\"",
		"comm ~ \"x*y*z\"",
		"str(arg1) ~ \"*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*\"",
	};

	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		struct compiled c;
		int calls = 0;

		compile(src[i], &c);
		assert_int_equal(c.err, 0);
		assert_forward(&c);
		for (size_t k = 0; k < c.nr; k++)
			calls += BPF_CLASS(c.insns[k].code) == BPF_JMP && BPF_OP(c.insns[k].code) == BPF_CALL;
		assert_true(calls <= 2);
		bpf_asm__delete(c.a);
	}
}

/* A program the interpreters would fail on at run time is refused at compile time. */
/*
 * bpf_asm__map_lookup(), the one map lookup of the compiler and the points'
 * own programs: map fd in r1, the key's address in r2, the call, and the
 * NULL check the verifier insists on only when a miss label is given.
 */
static void test_map_lookup_emitted(void **state)
{
	const struct bpf_insn *in;
	struct bpf_asm *a = bpf_asm__new();
	int miss;
	size_t nr;

	(void)state;
	assert_non_null(a);
	miss = bpf_asm__label(a);
	bpf_asm__map_lookup(a, 7, -16, miss);
	bpf_asm__map_lookup(a, 8, -24, -1);
	bpf_asm__bind(a, miss);
	bpf_asm__emit(a, BA_EXIT());
	assert_int_equal(bpf_asm__finish(a, &in, &nr), 0);
	assert_int_equal(nr, 6 + 5 + 1);
	/* the first: ld_imm64 r1 = map 7, r2 = fp, r2 += -16, call, if r0 == 0 goto miss */
	assert_int_equal(in[0].code, BPF_LD | BPF_DW | BPF_IMM);
	assert_int_equal(in[0].dst_reg, BPF_REG_1);
	assert_int_equal(in[0].src_reg, BPF_PSEUDO_MAP_FD);
	assert_int_equal(in[0].imm, 7);
	assert_int_equal(in[2].code, BPF_ALU64 | BPF_MOV | BPF_X);
	assert_int_equal(in[2].dst_reg, BPF_REG_2);
	assert_int_equal(in[2].src_reg, BPF_REG_10);
	assert_int_equal(in[3].code, BPF_ALU64 | BPF_ADD | BPF_K);
	assert_int_equal(in[3].imm, -16);
	assert_int_equal(in[4].code, BPF_JMP | BPF_CALL);
	assert_int_equal(in[4].imm, BPF_FUNC_map_lookup_elem);
	assert_int_equal(in[5].code, BPF_JMP | BPF_JEQ | BPF_K);
	assert_int_equal(in[5].dst_reg, BPF_REG_0);
	assert_int_equal(in[5].imm, 0);
	assert_int_equal(6 + in[5].off, 11); /* to the miss label, past the second lookup */
	/* the second: no check, the caller tests r0 itself */
	assert_int_equal(in[6].imm, 8);
	assert_int_equal(in[9].imm, -24);
	assert_int_equal(in[10].code, BPF_JMP | BPF_CALL);
	assert_int_equal(in[11].code, BPF_JMP | BPF_EXIT);
	bpf_asm__delete(a);
}

static void test_malformed(void **state)
{
	struct expr_bpf_env env = { .env_reg = BPF_REG_6, .rec_fd = -1 };
	struct expr_bpf_opts o = { .ops = &expr_bpf_env_ops, .ctx = &env, .stack_off = -EXPR_BPF_FRAME };
	struct expr_prog prog = { .nr_insns = 1 };
	struct bpf_asm *a = bpf_asm__new();
	char why[256];

	prog.insns[0].op = EXPR_OP_ADD; /* underflow */
	assert_int_equal(expr_bpf__compile(a, &prog, &o, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "malformed"));
	prog.insns[0].op = EXPR_OP_JFALSE; /* backward */
	assert_int_equal(expr_bpf__compile(a, &prog, &o, why, sizeof(why)), -EINVAL);
	o.stack_off = -8; /* too small a frame */
	prog.insns[0].op = EXPR_OP_PUSH;
	assert_int_equal(expr_bpf__compile(a, &prog, &o, why, sizeof(why)), -EINVAL);
	bpf_asm__delete(a);
}

/* Every vector that compiles compiles to straight-line code. */
static void test_every_vector(void **state)
{
	int compiled = 0;

	for (size_t i = 0; i < EXPR_NR_VECTORS; i++) {
		struct expr_prog prog;
		struct compiled c;
		char err[256];

		if (expr_vectors[i].err || expr_vector_compile(&expr_vectors[i], &prog, err, sizeof(err)))
			continue;
		compile(expr_vectors[i].src, &c);
		assert_int_equal(c.err, 0);
		assert_forward(&c);
		compiled++;
		bpf_asm__delete(c.a);
	}
	assert_true(compiled > 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant_inlined),
		cmocka_unit_test(test_string_unrolled),
		cmocka_unit_test(test_inner_star),
		cmocka_unit_test(test_map_lookup_emitted),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_every_vector),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
