// SPDX-License-Identifier: BSD-2-Clause
/*
 * The condition compiler and the userspace evaluator. The shared vectors
 * (expr_vectors.h) are also run through the BPF interpreter by
 * tests/kernel/test_expr_bpf.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/lang/expr_dump.h"
#include "auxtrig/lang/expr_eval.h"
#include "auxtrig/sys/tracefs.h"
#include "expr_vectors.h"

static unsigned char rec[EXPR_VECTOR_REC_SIZE];

static void test_expr_vectors(void **state)
{
	struct expr_state *st;
	struct expr_prog prog;
	struct expr_env env;
	char err[256];
	int failures = 0;

	expr_vector_record(rec);
	for (size_t i = 0; i < EXPR_NR_VECTORS; i++) {
		const struct expr_vector *v = &expr_vectors[i];
		int ret = expr_vector_compile(v, &prog, err, sizeof(err)), res;

		if (v->err) {
			if (!ret || !strstr(err, v->err)) {
				print_error("vector %zu '%s': expected error '%s', got %d '%s'\n", i, v->src, v->err, ret,
					    err);
				failures++;
			}
			continue;
		}
		if (ret) {
			print_error("vector %zu '%s': compile failed: %s\n", i, v->src, err);
			failures++;
			continue;
		}
		expr_vector_env(v, &env, rec);
		st = expr_state__new();
		assert_non_null(st);
		res = expr__eval(&prog, &env, st);
		expr_state__delete(st);
		if (res != v->expect) {
			print_error("vector %zu '%s': expected %d, got %d\n", i, v->src, v->expect, res);
			expr__dump(&prog, stderr);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

/* The variable sequences: one table per sequence, each step's result in order. */
static void test_expr_var_sequences(void **state)
{
	struct expr_prog prog;
	struct expr_env env;
	char err[256];
	int failures = 0;

	for (size_t i = 0; i < EXPR_NR_VAR_SEQS; i++) {
		const struct expr_var_seq *q = &expr_var_seqs[i];
		struct expr_vars vars = { 0 };
		struct expr_uvars *u = expr_uvars__new(EXPR_UVAR_ENTRIES);

		assert_non_null(u);
		if (expr_var_seq_define(q, &vars, err, sizeof(err))) {
			print_error("%s: %s\n", q->what, err);
			failures++;
		}
		for (unsigned int k = 0; k < q->nr && !failures; k++) {
			const struct expr_var_step *s = &q->steps[k];
			struct expr_state *st = expr_state__new();
			int res;

			assert_non_null(st);
			expr_state__use_uvars(st, u);
			if (expr_var_step_compile(s, &vars, &prog, err, sizeof(err))) {
				print_error("%s, step %u '%s': %s\n", q->what, k + 1, s->src, err);
				failures++;
				expr_state__delete(st);
				break;
			}
			expr_var_step_env(s, &env);
			res = expr__eval(&prog, &env, st);
			expr_state__delete(st);
			if (res != s->expect) {
				print_error("%s, step %u '%s' (tid %lld, $now %lld): expected %d, got %d\n", q->what, k + 1,
					    s->src, (long long)s->tid, (long long)s->now, s->expect, res);
				failures++;
				break;
			}
		}
		expr_uvars__delete(u);
	}
	assert_int_equal(failures, 0);
}

/*
 * Variables of your own, refused where they cannot work: read before any
 * action sets them, per thread in one place and global in another, a string
 * in a number's place, one too many, set in a condition, auxtrig's own.
 */
static void test_expr_var_refusals(void **state)
{
	static const struct {
		const char *src;
		int action;
		const char *msg;
	} bad[] = {
		{ "$nope > 1", 0, "undefined variable $nope: no --on action sets it" },
		{ "$n > 1", 0, "$n is one value per thread: write $n[tid]" },
		{ "$g[tid] > 1", 0, "$g is global: write $g" },
		{ "$n[pid] > 1", 0, "a variable has one value per thread, $n[tid], or one for all" },
		{ "$g = 1", 0, "'=' is not an operator: compare with '==', set a variable in an --on action" },
		{ "$s = comm", 1, "a string in a number's place: $s holds a number, 'comm' is a string" },
		{ "$g[tid] = 1", 1, "$g is global: write $g" },
		{ "$count = 1", 1, "$count is auxtrig's own: it cannot be set" },
		{ "$now = 1", 1, "$now is auxtrig's own: it cannot be set" },
		{ "$g == 1", 1, "expected =, +=, -=, ++ or -- after $g, got '=='" },
		{ "$g = 1 $h = 2", 1, "expected ';' or the end of the action, got variable '$h'" },
		{ "", 1, "an empty action" },
		{ "tid = 1", 1, "expected a variable to set" },
	};
	struct expr_vars vars = { 0 };
	struct expr_compile_opts opts = { .vars = &vars };
	struct expr_prog prog;
	char err[256], many[512];
	size_t n = 0;

	(void)state;
	assert_int_equal(expr__compile_action("$n[tid] = 1; $g = 2", &opts, &prog, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = bad[i].action ? expr__compile_action(bad[i].src, &opts, &prog, err, sizeof(err))
				      : expr__compile(bad[i].src, &opts, &prog, err, sizeof(err));

		assert_int_equal(r, -EINVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': got '%s', expected '%s'", bad[i].src, err, bad[i].msg);
	}
	/* without a table (no --on action can set one): a variable is unknown */
	assert_int_equal(expr__compile("$g > 1", NULL, &prog, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "variables of your own are set by --on actions"));
	/* EXPR_MAX_UVARS of them, then one too many */
	for (int i = 0; i < EXPR_MAX_UVARS; i++)
		n += snprintf(many + n, sizeof(many) - n, "$v%d = %d; ", i, i);
	memset(&vars, 0, sizeof(vars));
	assert_int_equal(expr__compile_action(many, &opts, &prog, err, sizeof(err)), 0);
	assert_int_equal(vars.nr, EXPR_MAX_UVARS);
	assert_int_equal(expr__compile_action("$one_more = 1", &opts, &prog, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "at most 16 variables of your own"));
	/* in a condition "x--1" is still x - -1 */
	assert_int_equal(expr__compile("tid--1 == 2", NULL, &prog, err, sizeof(err)), 0);
}

/* The table is bounded: a new variable past it is not set, the evaluation false, counted. */
static void test_expr_var_table_full(void **state)
{
	struct expr_vars vars = { 0 };
	struct expr_compile_opts opts = { .vars = &vars };
	struct expr_uvars *u = expr_uvars__new(3);
	struct expr_state *st = expr_state__new();
	struct expr_prog set, read;
	struct expr_env env = { 0 };
	char err[256];

	(void)state;
	assert_non_null(u);
	assert_non_null(st);
	expr_state__use_uvars(st, u);
	assert_int_equal(expr__compile_action("$n[tid] += 1", &opts, &set, err, sizeof(err)), 0);
	assert_int_equal(expr__compile("$n[tid] == 2", &opts, &read, err, sizeof(err)), 0);
	for (env.tid = 1; env.tid <= 3; env.tid++)
		assert_int_equal(expr__eval(&set, &env, st), 1);
	assert_int_equal(expr__eval(&set, &env, st), 0);	/* thread 4: no room */
	assert_int_equal(expr_state__uvar_lost(st), 1);
	assert_int_equal(expr__eval(&read, &env, st), 0);	/* never set: 0 */
	env.tid = 2;
	assert_int_equal(expr__eval(&set, &env, st), 1);	/* an entry it has: still set */
	assert_int_equal(expr__eval(&read, &env, st), 1);
	assert_int_equal(expr_uvars__used(u), 3);
	expr_state__delete(st);
	expr_uvars__delete(u);
}

/* The sequences: one state, each step's result. */
static void test_expr_sequences(void **state)
{
	struct expr_prog prog;
	struct expr_env env;
	char err[256];
	int failures = 0;

	expr_vector_record(rec);
	for (size_t i = 0; i < EXPR_NR_SEQS; i++) {
		const struct expr_seq *q = &expr_seqs[i];
		struct expr_state *st = expr_state__new();

		assert_non_null(st);
		if (expr_seq_compile(q, &prog, err, sizeof(err))) {
			print_error("sequence %zu '%s': compile failed: %s\n", i, q->src, err);
			failures++;
			expr_state__delete(st);
			continue;
		}
		for (unsigned int k = 0; q->expect[k]; k++) {
			int res;

			expr_seq_env(q, k, &env, rec);
			res = expr__eval(&prog, &env, st);
			if (res != q->expect[k] - '0') {
				print_error("sequence %zu '%s' step %u: expected %c, got %d (expected all: %s)\n", i, q->src,
					    k + 1, q->expect[k], res, q->expect);
				failures++;
				break;
			}
		}
		expr_state__delete(st);
	}
	assert_int_equal(failures, 0);
}

static int compile(const char *src, struct expr_prog *prog, char *err, size_t size)
{
	return expr__compile(src, NULL, prog, err, size);
}

static int eval_default(const char *src)
{
	const struct expr_vector v = { .src = src };
	struct expr_state *st;
	struct expr_prog prog;
	struct expr_env env;
	char err[256];
	int ret;

	if (compile(src, &prog, err, sizeof(err))) {
		print_error("'%s': %s\n", src, err);
		return -1;
	}
	expr_vector_env(&v, &env, NULL);
	st = expr_state__new();
	ret = expr__eval(&prog, &env, st);
	expr_state__delete(st);
	return ret;
}

static void test_expr_builtins_only_by_default(void **state)
{
	struct expr_prog prog;
	char err[256];

	/* without a resolver every builtin is accepted and nothing else */
	assert_int_equal(compile("pid && tid && ppid && uid && gid && cpu && cgroup && nr && ret && arg0 && arg1 "
				 "&& arg2 && arg3 && arg4 && arg5 && comm == \"x\" && str(arg1) == \"y\"",
				 &prog, err, sizeof(err)),
			 0);
	assert_int_equal(compile("common_pid == 1", &prog, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "column 1: unknown field 'common_pid'");
	/* a failed compile leaves no half-built program behind */
	assert_int_equal(prog.nr_insns, 0);
}

static void test_expr_first_feature(void **state)
{
	struct expr_prog prog;
	char err[256];

	assert_int_equal(compile("pid == 1234 && comm != \"bash\" && tid == 1240", &prog, err, sizeof(err)), 0);
	assert_int_equal(eval_default("pid == 1234 && comm != \"bash\" && tid == 1240"), 1);
	assert_int_equal(eval_default("pid == 1234 && comm == \"bash\""), 0);
}

/* Precedence, seen in the bytecode: a || b && c is a || (b && c). */
static void test_expr_precedence_bytecode(void **state)
{
	struct expr_prog prog;
	char err[256];

	assert_int_equal(compile("pid || tid && cpu", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, 7);
	assert_int_equal(prog.insns[0].op, EXPR_OP_FIELD);
	assert_int_equal(prog.insns[0].a, EXPR_F_PID);
	assert_int_equal(prog.insns[1].op, EXPR_OP_JTRUE);
	assert_int_equal(prog.insns[1].b, 7); /* past the whole && */
	assert_int_equal(prog.insns[2].a, EXPR_F_TID);
	assert_int_equal(prog.insns[3].op, EXPR_OP_JFALSE);
	assert_int_equal(prog.insns[3].b, 6);
	assert_int_equal(prog.insns[4].a, EXPR_F_CPU);
	assert_int_equal(prog.insns[5].op, EXPR_OP_BOOL);
	assert_int_equal(prog.insns[6].op, EXPR_OP_BOOL);

	assert_int_equal(compile("1 + 2 * 3", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.insns[3].op, EXPR_OP_MUL);
	assert_int_equal(prog.insns[4].op, EXPR_OP_ADD);
	assert_int_equal(compile("1 - 2 - 3", &prog, err, sizeof(err)), 0); /* left-associative */
	assert_int_equal(prog.insns[2].op, EXPR_OP_SUB);
	assert_int_equal(prog.insns[3].op, EXPR_OP_PUSH);
	assert_int_equal(prog.insns[3].imm, 3);

	/* constants: -5 and -ENOENT are one push */
	assert_int_equal(compile("ret == -ENOENT", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, 3);
	assert_int_equal(prog.insns[1].op, EXPR_OP_PUSH);
	assert_int_equal(prog.insns[1].imm, -ENOENT);
}

static void test_expr_every_operator(void **state)
{
	static const struct {
		const char *src;
		int op;
	} ops[] = {
		{ "pid + 1", EXPR_OP_ADD },  { "pid - 1", EXPR_OP_SUB },  { "pid * 1", EXPR_OP_MUL },
		{ "pid / 1", EXPR_OP_DIV },  { "pid % 1", EXPR_OP_MOD },  { "pid & 1", EXPR_OP_AND },
		{ "pid | 1", EXPR_OP_OR },   { "pid ^ 1", EXPR_OP_XOR },  { "pid == 1", EXPR_OP_EQ },
		{ "pid != 1", EXPR_OP_NE },  { "pid < 1", EXPR_OP_LT },   { "pid <= 1", EXPR_OP_LE },
		{ "pid > 1", EXPR_OP_GT },   { "pid >= 1", EXPR_OP_GE },
	};
	struct expr_prog prog;
	char err[256];

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		assert_int_equal(compile(ops[i].src, &prog, err, sizeof(err)), 0);
		assert_int_equal(prog.nr_insns, 3);
		assert_int_equal(prog.insns[2].op, ops[i].op);
	}
	assert_int_equal(compile("-pid", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.insns[1].op, EXPR_OP_NEG);
	assert_int_equal(compile("~pid", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.insns[1].op, EXPR_OP_BNOT);
	assert_int_equal(compile("!pid", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.insns[1].op, EXPR_OP_LNOT);
	assert_int_equal(compile("!~pid", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.insns[1].op, EXPR_OP_BNOT);
	assert_int_equal(prog.insns[2].op, EXPR_OP_LNOT);

	/* string comparisons are one instruction, != and !~ add a logical not */
	assert_int_equal(compile("comm ~ \"kworker/*\"", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, 1);
	assert_int_equal(prog.insns[0].op, EXPR_OP_STR);
	assert_int_equal(prog.insns[0].a, EXPR_S_COMM);
	assert_int_equal(prog.insns[0].imm, EXPR_STR_GLOB);
	assert_string_equal(prog.strtab + prog.insns[0].b, "kworker/*");
	assert_int_equal(compile("str(arg2) != \"x\"", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, 2);
	assert_int_equal(prog.insns[0].a, EXPR_S_USER);
	assert_int_equal(prog.insns[0].c, 2);
	assert_int_equal(prog.insns[0].imm, EXPR_STR_EQ);
	assert_int_equal(prog.insns[1].op, EXPR_OP_LNOT);
	assert_int_equal(compile("comm !~ \"a*\"", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, 2);
	assert_int_equal(prog.insns[1].op, EXPR_OP_LNOT);
}

static void test_expr_strings_deduplicated(void **state)
{
	struct expr_prog prog;
	char err[256];

	assert_int_equal(compile("comm == \"a\" || comm == \"a\" || comm == \"bc\"", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.strtab_len, 2 + 3);
}

static void test_expr_too_long(void **state)
{
	struct expr_prog prog;
	char src[1024], err[256], want[128];
	struct expr_env env;
	const struct expr_vector v = { .src = src };

	expr_vector_longest(src, sizeof(src), 0);
	assert_int_equal(compile(src, &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, EXPR_MAX_INSNS);
	expr_vector_env(&v, &env, NULL);
	assert_int_equal(expr__eval(&prog, &env, NULL), 1);

	expr_vector_longest(src, sizeof(src), 1);
	assert_int_equal(compile(src, &prog, err, sizeof(err)), -E2BIG);
	snprintf(want, sizeof(want), "expression too long: %d instructions, at most %d", EXPR_MAX_INSNS + 5,
		 EXPR_MAX_INSNS);
	assert_string_equal(err, want);

	/* far too long: still a clear message, no overflow */
	{
		size_t n = 0, size = 64 * 1024;
		char *big = malloc(size);

		assert_non_null(big);
		for (int i = 0; n + 16 < size; i++)
			n += snprintf(big + n, size - n, "%spid", i ? " + " : "");
		assert_int_equal(compile(big, &prog, err, sizeof(err)), -E2BIG);
		assert_non_null(strstr(err, "expression too long: over"));
		free(big);
	}
}

static void test_expr_stack_too_deep(void **state)
{
	struct expr_prog prog;
	char src[512] = "", err[256];
	size_t n = 0;

	/* 1 + (1 + (1 + ...)) keeps one value per level on the stack */
	for (int i = 0; i < EXPR_MAX_STACK; i++)
		n += snprintf(src + n, sizeof(src) - n, "1 + (");
	n += snprintf(src + n, sizeof(src) - n, "1");
	for (int i = 0; i < EXPR_MAX_STACK; i++)
		n += snprintf(src + n, sizeof(src) - n, ")");
	assert_int_equal(compile(src, &prog, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "expression too deeply nested: needs 17 stack slots, at most 16"));

	/* one level less fits */
	n = 0;
	for (int i = 0; i < EXPR_MAX_STACK - 1; i++)
		n += snprintf(src + n, sizeof(src) - n, "1 + (");
	n += snprintf(src + n, sizeof(src) - n, "1");
	for (int i = 0; i < EXPR_MAX_STACK - 1; i++)
		n += snprintf(src + n, sizeof(src) - n, ")");
	n += snprintf(src + n, sizeof(src) - n, " == %d", EXPR_MAX_STACK);
	assert_int_equal(compile(src, &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.max_stack, EXPR_MAX_STACK);
	assert_int_equal(eval_default(src), 1);
}

static void test_expr_strtab_full(void **state)
{
	struct expr_prog prog;
	char src[2048], err[256];
	size_t n = 0;
	int i;

	/* 63-byte distinct literals: 8 fit in 512 bytes, the 9th does not */
	for (i = 0; i < 9; i++)
		n += snprintf(src + n, sizeof(src) - n, "%scomm == \"%d%062d\"", i ? " || " : "", i, 0);
	assert_int_equal(compile(src, &prog, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "expression too long: its strings need more than 512 bytes"));
	assert_non_null(strstr(err, "column 625:")); /* points at the literal that did not fit */
	n = 0;
	for (i = 0; i < 8; i++)
		n += snprintf(src + n, sizeof(src) - n, "%scomm == \"%d%062d\"", i ? " || " : "", i, 0);
	assert_int_equal(compile(src, &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.strtab_len, 512);
}

static int refuse_ret(void *ctx, const char *name, struct expr_field *field, char *why, size_t size)
{
	int *calls = ctx;

	(*calls)++;
	if (!strcmp(name, "ret")) {
		snprintf(why, size, "only at an exit point (this is sys_enter_openat)");
		return -EINVAL;
	}
	if (!strcmp(name, "filename")) {
		memset(field, 0, sizeof(*field));
		field->kind = EXPR_FIELD_REC_LOC;
		field->offset = 24;
		return 0;
	}
	if (!strcmp(name, "bogus")) {
		memset(field, 0, sizeof(*field));
		field->kind = EXPR_FIELD_REC_INT;
		field->offset = 8;
		field->size = 3;
		return 0;
	}
	return expr__resolve_builtin(name, field);
}

static void test_expr_resolver_decides(void **state)
{
	struct expr_prog prog;
	char err[256];
	int calls = 0;
	struct expr_compile_opts opts = { .resolve = refuse_ret, .resolve_ctx = &calls };

	assert_int_equal(expr__compile("pid == 1 && ret == -1", &opts, &prog, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "column 13: 'ret' is not available here: only at an exit point "
				 "(this is sys_enter_openat)");
	assert_true(calls >= 2);
	assert_int_equal(expr__compile("filename ~ \"/etc/*\"", &opts, &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.insns[0].a, EXPR_S_REC_LOC);
	assert_int_equal(prog.insns[0].c, 24);
	assert_int_equal(expr__compile("bogus == 1", &opts, &prog, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot be read as an integer"));
	/* errno names are not fields: the resolver is not asked */
	calls = 0;
	assert_int_equal(expr__compile("ENOENT == 2", &opts, &prog, err, sizeof(err)), 0);
	assert_int_equal(calls, 0);
}

static void test_expr_errno_table(void **state)
{
	assert_int_equal(expr__errno_value("ENOENT"), ENOENT);
	assert_int_equal(expr__errno_value("EACCES"), EACCES);
	assert_int_equal(expr__errno_value("ETIMEDOUT"), ETIMEDOUT);
	assert_int_equal(expr__errno_value("ENOPE"), 0);
	assert_int_equal(eval_default("ret == -ENOENT"), 1);
}

static void test_expr_dump(void **state)
{
	struct expr_prog prog;
	char err[256], *buf = NULL;
	size_t size = 0;
	FILE *f;

	assert_int_equal(compile("comm ~ \"kworker/*\" && pid != 5", &prog, err, sizeof(err)), 0);
	f = open_memstream(&buf, &size);
	assert_non_null(f);
	expr__dump(&prog, f);
	fclose(f);
	assert_non_null(strstr(buf, "expr: 6 instructions, stack 2"));
	assert_non_null(strstr(buf, "   0: str    comm glob \"kworker/*\"\n"));
	assert_non_null(strstr(buf, "   1: jfalse -> 6\n"));
	assert_non_null(strstr(buf, "   2: field  pid\n"));
	assert_non_null(strstr(buf, "   3: push   5\n"));
	assert_non_null(strstr(buf, "   4: ne\n"));
	free(buf);

	assert_int_equal(compile("$count > 2 && every 3 || once || $elapsed > 1ms", &prog, err, sizeof(err)), 0);
	f = open_memstream(&buf, &size);
	assert_non_null(f);
	expr__dump(&prog, f);
	fclose(f);
	assert_non_null(strstr(buf, "expr: 14 instructions, stack 2, strings 0 bytes, $count, $elapsed, 2 hit counters\n"));
	assert_non_null(strstr(buf, "   0: var    $count\n"));
	assert_non_null(strstr(buf, "   4: hit    #0 every 3\n"));
	assert_non_null(strstr(buf, "hit    #1 once\n"));
	assert_non_null(strstr(buf, "var    $elapsed\n"));
	free(buf);
}

static unsigned int nr_last(const struct expr_prog *prog)
{
	return prog->nr_insns - 1;
}

/*
 * @prog as a caller who built it by hand runs it: validated, then evaluated.
 * A refusal says which malformation (@what, in parentheses after "a
 * malformed program") and leaves the program unmarked, which expr__eval()
 * refuses too. Return: expr__eval()'s answer, or the refusal.
 */
static int validated_eval(struct expr_prog *prog, const struct expr_env *env, struct expr_state *st,
			  const char *what)
{
	char why[128], want[128];
	int err = expr__validate(prog, why, sizeof(why));

	if (!err) {
		assert_null(what);
		assert_int_equal(prog->checked, EXPR_PROG_CHECKED);
		return expr__eval(prog, env, st);
	}
	assert_non_null(what);
	snprintf(want, sizeof(want), "a malformed program%s", what);
	assert_string_equal(why, want);
	assert_int_equal(prog->checked, 0);
	assert_int_equal(expr__eval(prog, env, st), -EINVAL);
	return err;
}

static void test_expr_eval_rejects_malformed(void **state)
{
	struct expr_prog prog;
	struct expr_env env = { 0 };

	memset(&prog, 0, sizeof(prog));
	prog.nr_insns = 1;
	prog.insns[0].op = 0x7f;
	assert_int_equal(validated_eval(&prog, &env, NULL, " (unknown instruction)"), -EINVAL);
	prog.insns[0].op = EXPR_OP_ADD; /* stack underflow */
	assert_int_equal(validated_eval(&prog, &env, NULL, " (stack underflow)"), -EINVAL);
	prog.nr_insns = EXPR_MAX_INSNS + 1;
	assert_int_equal(validated_eval(&prog, &env, NULL, ""), -EINVAL);
	prog.nr_insns = 2; /* backward jump */
	prog.insns[0].op = EXPR_OP_PUSH;
	prog.insns[1].op = EXPR_OP_JTRUE;
	prog.insns[1].b = 0;
	assert_int_equal(validated_eval(&prog, &env, NULL, " (bad jump)"), -EINVAL);
}

/*
 * The check is made once, where a program is built (expr__compile(),
 * expr__validate()), and expr__eval() runs only what passed it: a program
 * built by hand is refused until it is validated, a bad one by the build
 * API, not at its first evaluation, with the reason.
 */
static void test_expr_eval_runs_only_checked(void **state)
{
	struct expr_env env = { .pid = 7 };
	struct expr_prog prog;
	char err[256], why[128];

	(void)state;
	/* what the compiler built is checked already */
	assert_int_equal(expr__compile("pid == 7", NULL, &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.checked, EXPR_PROG_CHECKED);
	assert_int_equal(expr__eval(&prog, &env, NULL), 1);
	assert_int_equal(expr__compile("pid ==", NULL, &prog, err, sizeof(err)), -EINVAL);
	assert_int_equal(prog.checked, 0);

	/* by hand: a well-formed program is run only once validated */
	memset(&prog, 0, sizeof(prog));
	prog.nr_insns = 1;
	prog.insns[0].op = EXPR_OP_PUSH;
	prog.insns[0].imm = 1;
	assert_int_equal(expr__eval(&prog, &env, NULL), -EINVAL);
	assert_int_equal(expr__validate(&prog, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(expr__eval(&prog, &env, NULL), 1);

	/* changed into a bad one: validating it again refuses it and takes its mark away */
	prog.insns[0].op = EXPR_OP_SUB;
	assert_int_equal(validated_eval(&prog, &env, NULL, " (stack underflow)"), -EINVAL);
	assert_int_equal(expr__validate(NULL, why, sizeof(why)), -EINVAL);

	/* a string pattern that does not end inside the string table is refused, not read past it */
	prog.insns[0].op = EXPR_OP_STR;
	prog.insns[0].a = EXPR_S_COMM;
	prog.insns[0].imm = EXPR_STR_GLOB;
	prog.insns[0].b = EXPR_STRTAB_SIZE - 8;
	memset(prog.strtab, '*', sizeof(prog.strtab));
	assert_int_equal(validated_eval(&prog, &env, NULL, " (bad string)"), -EINVAL);
	prog.strtab[EXPR_STRTAB_SIZE - 1] = 0;
	assert_int_equal(validated_eval(&prog, &env, NULL, NULL), 1);	/* "*******" */
	prog.insns[0].b = EXPR_STRTAB_SIZE; /* past the table */
	assert_int_equal(validated_eval(&prog, &env, NULL, " (bad string)"), -EINVAL);
	prog.insns[0].b = 0; /* 511 stars: longer than any string it could match */
	assert_int_equal(validated_eval(&prog, &env, NULL, " (bad string)"), -EINVAL);
	prog.insns[0].b = EXPR_STRTAB_SIZE - EXPR_STR_MAX; /* 63 stars: the longest */
	assert_int_equal(validated_eval(&prog, &env, NULL, NULL), 1);
	prog.insns[0].a = EXPR_S_REC_LOC + 1; /* no such source */
	assert_int_equal(validated_eval(&prog, &env, NULL, " (bad string)"), -EINVAL);
}

/* State that the program does not declare, or a stateful program without a state. */
static void test_expr_eval_rejects_malformed_state(void **state)
{
	struct expr_state *st = expr_state__new();
	struct expr_prog prog;
	struct expr_env env = { 0 };

	assert_non_null(st);
	memset(&prog, 0, sizeof(prog));
	prog.nr_insns = 1;
	prog.insns[0].op = EXPR_OP_HIT;
	prog.insns[0].imm = 1;
	/* counter 0 but nr_hits 0 */
	assert_int_equal(validated_eval(&prog, &env, st, " (bad once/after/every)"), -EINVAL);
	prog.nr_hits = 1;
	assert_int_equal(validated_eval(&prog, &env, NULL, NULL), -EINVAL); /* no state */
	assert_int_equal(expr__eval(&prog, &env, st), 1);
	prog.insns[0].imm = 0; /* every 0 */
	assert_int_equal(validated_eval(&prog, &env, st, " (bad once/after/every)"), -EINVAL);
	prog.insns[0].imm = 1;
	prog.insns[0].b = 7; /* no such kind */
	assert_int_equal(validated_eval(&prog, &env, st, " (bad once/after/every)"), -EINVAL);
	prog.insns[0].b = 0;
	prog.nr_hits = EXPR_MAX_HITS + 1;
	assert_int_equal(validated_eval(&prog, &env, st, ""), -EINVAL);
	prog.nr_hits = 0;
	prog.insns[0].op = EXPR_OP_VAR; /* $count without EXPR_PROG_COUNT */
	prog.insns[0].a = EXPR_VAR_COUNT;
	assert_int_equal(validated_eval(&prog, &env, st, " (unknown variable)"), -EINVAL);
	prog.flags = EXPR_PROG_COUNT;
	assert_int_equal(validated_eval(&prog, &env, NULL, NULL), -EINVAL); /* no state */
	assert_int_equal(expr__eval(&prog, &env, st), 1);
	prog.insns[0].a = EXPR_MAX_VARS;
	assert_int_equal(validated_eval(&prog, &env, st, " (unknown variable)"), -EINVAL);
	expr_state__delete(st);
	expr_state__delete(NULL);
}

/* The new grammar in the bytecode: precedence, counters in source order, flags. */
static void test_expr_stateful_bytecode(void **state)
{
	struct expr_prog prog;
	char err[256];

	/* after N is a term: ret < 0 && after 3 is (ret < 0) && (after 3) */
	assert_int_equal(compile("ret < 0 && after 3", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, 6);
	assert_int_equal(prog.insns[2].op, EXPR_OP_LT);
	assert_int_equal(prog.insns[3].op, EXPR_OP_JFALSE);
	assert_int_equal(prog.insns[4].op, EXPR_OP_HIT);
	assert_int_equal(prog.insns[4].a, 0);
	assert_int_equal(prog.insns[4].b, EXPR_HIT_AFTER);
	assert_int_equal(prog.insns[4].imm, 3);
	assert_int_equal(prog.nr_hits, 1);
	assert_int_equal(prog.flags, 0);

	/* one counter per term, numbered in source order; ! binds to the term */
	assert_int_equal(compile("!once || every 10 && comm == \"x\" || once", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_hits, 3);
	assert_int_equal(prog.insns[0].op, EXPR_OP_HIT);
	assert_int_equal(prog.insns[0].a, 0);
	assert_int_equal(prog.insns[0].b, EXPR_HIT_ONCE);
	assert_int_equal(prog.insns[1].op, EXPR_OP_LNOT);
	assert_int_equal(prog.insns[3].op, EXPR_OP_HIT);
	assert_int_equal(prog.insns[3].a, 1);
	assert_int_equal(prog.insns[3].b, EXPR_HIT_EVERY);
	assert_int_equal(prog.insns[3].imm, 10);
	assert_int_equal(prog.insns[nr_last(&prog)].op, EXPR_OP_BOOL);

	/* variables, durations: $elapsed > 1ms + 1 is $elapsed > (1000000 + 1) */
	assert_int_equal(compile("$elapsed > 1ms + 1 && $count >= 3", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.insns[0].op, EXPR_OP_VAR);
	assert_int_equal(prog.insns[0].a, EXPR_VAR_ELAPSED);
	assert_int_equal(prog.insns[1].op, EXPR_OP_PUSH);
	assert_int_equal(prog.insns[1].imm, 1000000);
	assert_int_equal(prog.insns[3].op, EXPR_OP_ADD);
	assert_int_equal(prog.insns[4].op, EXPR_OP_GT);
	assert_int_equal(prog.insns[6].op, EXPR_OP_VAR);
	assert_int_equal(prog.insns[6].a, EXPR_VAR_COUNT);
	assert_int_equal(prog.flags, EXPR_PROG_COUNT | EXPR_PROG_ELAPSED);
	assert_int_equal(prog.nr_hits, 0);

	/* -1ms is one constant, like -5 */
	assert_int_equal(compile("$elapsed > -1ms", &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, 3);
	assert_int_equal(prog.insns[1].imm, -1000000);
}

static int refuse_elapsed(void *ctx, const char *name, struct expr_field *field, char *why, size_t size)
{
	if (!strcmp(name, "$elapsed")) {
		snprintf(why, size, "nothing is timed here");
		return -EINVAL;
	}
	return expr__resolve_builtin(name, field);
}

/* The resolver decides about variables as about fields. */
static void test_expr_resolver_decides_variables(void **state)
{
	struct expr_compile_opts opts = { .resolve = refuse_elapsed };
	struct expr_field f;
	struct expr_prog prog;
	char err[256];

	assert_int_equal(expr__resolve_builtin("$count", &f), 0);
	assert_int_equal(f.kind, EXPR_FIELD_VAR);
	assert_int_equal(f.builtin, EXPR_VAR_COUNT);
	assert_int_equal(expr__resolve_builtin("$elapsed", &f), 0);
	assert_int_equal(f.builtin, EXPR_VAR_ELAPSED);
	assert_int_equal(expr__resolve_builtin("$nosuch", &f), -ENOENT);
	assert_int_equal(expr__compile("$count > 1 && $elapsed > 1ms", &opts, &prog, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "column 15: '$elapsed' is not available here: nothing is timed here");
	assert_int_equal(expr__compile("$count > 1", &opts, &prog, err, sizeof(err)), 0);
}

/* The longest stateful program fits exactly; one instruction more is refused. */
static void test_expr_longest_stateful(void **state)
{
	struct expr_state *st = expr_state__new();
	char src[2048], err[256], want[128];
	const struct expr_vector v = { .src = src };
	struct expr_prog prog;
	struct expr_env env;

	assert_non_null(st);
	expr_vector_longest_stateful(src, sizeof(src), 0);
	assert_int_equal(compile(src, &prog, err, sizeof(err)), 0);
	assert_int_equal(prog.nr_insns, EXPR_MAX_INSNS);
	assert_int_equal(prog.nr_hits, EXPR_MAX_HITS);
	assert_int_equal(prog.flags, EXPR_PROG_COUNT | EXPR_PROG_ELAPSED);
	expr_vector_env(&v, &env, NULL);
	assert_int_equal(expr__eval(&prog, &env, st), 1);
	assert_int_equal(expr__eval(&prog, &env, st), 0); /* once */

	expr_vector_longest_stateful(src, sizeof(src), 3);
	assert_int_equal(compile(src, &prog, err, sizeof(err)), -E2BIG);
	snprintf(want, sizeof(want), "expression too long: %d instructions, at most %d", EXPR_MAX_INSNS + 3,
		 EXPR_MAX_INSNS);
	assert_string_equal(err, want);
	expr_state__delete(st);
}

/* Issue #13, 7: an error quoted the whole expression, tens of KB of it; now a bounded excerpt at the column. */
static void test_expr_quote_bounded_at_column(void **state)
{
	static char src[40000];
	struct expr_prog prog;
	char err[256], q[EXPR_QUOTE_MAX + 64];
	size_t n = 0;

	(void)state;
	expr__quote("comm ==", "column 8: expected a value", q, sizeof(q));
	assert_string_equal(q, "'comm =='");
	for (int i = 0; n < sizeof(src) / 2; i++)
		n += snprintf(src + n, sizeof(src) - n, "pid == %d && ", i);
	n += snprintf(src + n, sizeof(src) - n, "pid == (2 +) && ");
	for (int i = 0; n < sizeof(src) - 64; i++)
		n += snprintf(src + n, sizeof(src) - n, "pid == %d && ", i);
	snprintf(src + n, sizeof(src) - n, "pid == 1");
	assert_int_equal(expr__compile(src, NULL, &prog, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "column "));
	expr__quote(src, err, q, sizeof(q));
	assert_true(strlen(q) < EXPR_QUOTE_MAX + 64);
	/* The excerpt holds the column, with what led to it, cut at both ends. */
	assert_non_null(strstr(q, "pid == (2 +)"));
	assert_true(!strncmp(q, "'...", 4));
	assert_non_null(strstr(q, "...' (characters "));
	assert_non_null(strstr(q, " of 399"));
	/* No column: the start; control characters do not break the line. */
	expr__quote("a\nb", NULL, q, sizeof(q));
	assert_string_equal(q, "'a?b'");
	expr__quote(src, NULL, q, sizeof(q));
	assert_true(!strncmp(q, "'pid == 0 && ", 13));
	assert_non_null(strstr(q, "(characters 1-64 of "));
}

/* ---- tracepoint fields, through the resolver a run uses ---- */

static int tp_resolve(void *ctx, const char *name, struct expr_field *field, char *why, size_t why_size)
{
	if (!expr__resolve_builtin(name, field))
		return 0;
	return expr__resolve_tp_field(ctx, name, field, why, why_size);
}

/* @src at the tracepoint @fmt on @rec (@size bytes): 1, 0, or the compile error's -errno. */
static int tp_eval(struct tp_format *fmt, const char *src, const void *rec, size_t size)
{
	struct expr_compile_opts o = { .resolve = tp_resolve, .resolve_ctx = fmt };
	struct expr_env env = { .rec = (__u64)(uintptr_t)rec, .rec_size = size };
	struct expr_prog prog;
	char err[256];
	int ret = expr__compile(src, &o, &prog, err, sizeof(err));

	if (ret) {
		print_message("'%s': %s\n", src, err);
		return ret;
	}
	return expr__eval(&prog, &env, NULL);
}

static struct tp_format *load_fixture(const char *sys, const char *name)
{
	static char root[4096];
	static struct tp_format fmt;
	const char *top = getenv("AUXTRIG_TOP");

	snprintf(root, sizeof(root), "%s/tests/fixtures/tracefs", top ? top : ".");
	tracefs__set_root(root);
	assert_int_equal(tracefs__load_format(sys, name, &fmt), 0);
	tracefs__set_root(NULL);
	return &fmt;
}

/*
 * tp:syscalls:sys_enter_openat if dfd == -100: every syscall argument is
 * an 8-byte slot holding the register as passed, and an int argument's
 * upper half may be zero (AT_FDCWD as 0x00000000ffffff9c) or not; the
 * field compares as the int the format declares either way.
 */
static void test_expr_tp_syscall_int_args(void **state)
{
	struct tp_format *fmt = load_fixture("syscalls", "sys_enter_openat");
	unsigned char rec[48] = { 0 };
	__u64 slots[2][4] = {
		{ 0x00000000ffffff9cULL, 0x7ffd0000, 0x0000000080000041ULL, 0600 },  /* upper halves 0 */
		{ 0xffffffffffffff9cULL, 0x7ffd0000, 0xffffffff80000041ULL, 0600 },  /* sign-extended */
	};

	(void)state;
	for (int i = 0; i < 2; i++) {
		memcpy(rec + 16, slots[i], sizeof(slots[i]));
		assert_int_equal(tp_eval(fmt, "dfd == -100", rec, sizeof(rec)), 1);
		assert_int_equal(tp_eval(fmt, "dfd < 0 && dfd == -ENOENT * 50", rec, sizeof(rec)), 1);
		/* int flags with the top bit set (O_CLOEXEC | ... as an int): negative, as C reads it */
		assert_int_equal(tp_eval(fmt, "flags == (int)0x80000041 && flags < 0 && (flags & 0x40) != 0", rec, sizeof(rec)), 1);
		/* umode_t is an unsigned short */
		assert_int_equal(tp_eval(fmt, "mode == 0600", rec, sizeof(rec)), 1);
		/* a pointer is the whole slot */
		assert_int_equal(tp_eval(fmt, "filename == 0x7ffd0000", rec, sizeof(rec)), 1);
	}
	assert_int_equal(tp_eval(fmt, "common_pid == 1", rec, sizeof(rec)), -EINVAL);
	tp_format__exit(fmt);
}

/* sys_exit_openat's and sched_switch's fields, typed as declared. */
static void test_expr_tp_fields_as_declared(void **state)
{
	struct tp_format *fmt = load_fixture("syscalls", "sys_exit_openat");
	unsigned char rec[64] = { 0 };
	__s64 ret = -2;
	__s32 nr = 257, pid = -1, prio = 120;
	__s64 prev_state = 1;

	(void)state;
	/* (ret itself is the builtin, as at any syscall exit; the record's field is its source) */
	memcpy(rec + 8, &nr, 4);
	memcpy(rec + 16, &ret, 8);
	assert_int_equal(tp_eval(fmt, "__syscall_nr == 257", rec, 24), 1);
	tp_format__exit(fmt);

	fmt = load_fixture("sched", "sched_switch");
	memset(rec, 0, sizeof(rec));
	memcpy(rec + 8, "bash", 4);
	memcpy(rec + 24, &pid, 4);
	memcpy(rec + 28, &prio, 4);
	memcpy(rec + 32, &prev_state, 8);
	assert_int_equal(tp_eval(fmt, "prev_pid == -1 && prev_prio == 120 && prev_state == 1", rec, sizeof(rec)), 1);
	assert_int_equal(tp_eval(fmt, "prev_comm == \"bash\"", rec, sizeof(rec)), 1);
	tp_format__exit(fmt);
}

/* The declared types the table knows, and those left to the format. */
static void test_expr_tp_field_int_types(void **state)
{
	static const struct {
		const char *type;
		int size; /* negative: signed; 0: not known (-ENOENT) */
		int array, fmt_signed;
	} cases[] = {
		{ "int", -4 },		  { "const int", -4 },	     { "unsigned int", 4 },	  { "unsigned", 4 },
		{ "long", -8 },		  { "unsigned long", 8 },    { "long long", -8 },	  { "unsigned long long", 8 },
		{ "short", -2 },	  { "unsigned short", 2 },   { "signed char", -1 },	  { "unsigned char", 1 },
		{ "char", -1, 0, 1 },	  { "char", 1, 0, 0 },	     { "pid_t", -4 },		  { "uid_t", 4 },
		{ "umode_t", 2 },	  { "size_t", 8 },	     { "loff_t", -8 },		  { "u32", 4 },
		{ "const __u32", 4 },	  { "s64", -8 },	     { "bool", 1 },		  { "const clockid_t", -4 },
		{ "const char *", 0 },	  { "struct stat *", 0 },    { "enum landlock_rule_type", 0 },
		{ "xfs_ino_t", 0 },	  { "char", 0, 1 },	     { "u8", 0, 1 },		  { "long long long", 0 },
		{ "unsigned signed", 0 }, { "short long", 0 },	     { "u32 int", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tp_field f = { .size = 8, .is_array = cases[i].array, .is_signed = cases[i].fmt_signed };
		unsigned int size = 0;
		bool sgn = false;
		int err;

		snprintf(f.type, sizeof(f.type), "%s", cases[i].type);
		err = tp_field__int_type(&f, &size, &sgn);
		if (!cases[i].size) {
			if (err != -ENOENT)
				fail_msg("'%s'%s: expected -ENOENT, got %d (size %u)", cases[i].type,
					 cases[i].array ? "[]" : "", err, size);
			continue;
		}
		if (err || size != (unsigned int)abs(cases[i].size) || sgn != (cases[i].size < 0))
			fail_msg("'%s': got %d, size %u signed %d", cases[i].type, err, size, sgn);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr_vectors),
		cmocka_unit_test(test_expr_tp_syscall_int_args),
		cmocka_unit_test(test_expr_tp_fields_as_declared),
		cmocka_unit_test(test_expr_tp_field_int_types),
		cmocka_unit_test(test_expr_builtins_only_by_default),
		cmocka_unit_test(test_expr_first_feature),
		cmocka_unit_test(test_expr_precedence_bytecode),
		cmocka_unit_test(test_expr_every_operator),
		cmocka_unit_test(test_expr_strings_deduplicated),
		cmocka_unit_test(test_expr_too_long),
		cmocka_unit_test(test_expr_stack_too_deep),
		cmocka_unit_test(test_expr_strtab_full),
		cmocka_unit_test(test_expr_resolver_decides),
		cmocka_unit_test(test_expr_errno_table),
		cmocka_unit_test(test_expr_dump),
		cmocka_unit_test(test_expr_eval_rejects_malformed),
		cmocka_unit_test(test_expr_eval_runs_only_checked),
		cmocka_unit_test(test_expr_eval_rejects_malformed_state),
		cmocka_unit_test(test_expr_sequences),
		cmocka_unit_test(test_expr_var_sequences),
		cmocka_unit_test(test_expr_var_refusals),
		cmocka_unit_test(test_expr_var_table_full),
		cmocka_unit_test(test_expr_stateful_bytecode),
		cmocka_unit_test(test_expr_resolver_decides_variables),
		cmocka_unit_test(test_expr_longest_stateful),
		cmocka_unit_test(test_expr_quote_bounded_at_column),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
