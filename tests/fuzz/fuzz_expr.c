// SPDX-License-Identifier: BSD-2-Clause
/*
 * The condition language (user/lang/expr.c): any text either compiles to a
 * program within the limits the BPF interpreter relies on, or is refused
 * with a "column N: ..." message that fits its buffer. A compiled program is
 * evaluated in userspace on the unit tests' environments and record, with
 * state and a small table of variables of your own (which fills up),
 * several times in a row, and dumped. The recording's variables $a (global)
 * and $b[tid] are defined, as an --on action would; an action's statements
 * may define more, at most EXPR_MAX_UVARS.
 *
 * Input: byte 0 picks the site (bit 0: entry or exit point), the
 * environment (bits 1-2) and what the rest is (bit 3: an --on action's
 * statements, expr__compile_action(); else a condition; bit 4: neither,
 * the bytes of a struct expr_prog, the rest of it zeros).
 *
 * A program built by hand is evaluated only through expr__validate(), as
 * the evaluator expects: every program it accepts is evaluated the same way
 * (any read outside the program, the stack or the record is a crash here),
 * one it refuses says why and is refused by expr__eval() too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_dump.h"
#include "auxtrig/lang/expr_eval.h"
#include "auxtrig/lang/expr_vars.h"
#include "expr_vectors.h"

#define MAX_SRC 4096

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	return 0;
}

/*
 * Runs @prog on @env three times, as two threads, with state and a table of
 * variables that fills. What expr__validate() accepted is not malformed:
 * never -EINVAL.
 */
static void eval_three_times(const struct expr_prog *prog, struct expr_env *env)
{
	struct expr_state *st = expr_state__new();
	struct expr_uvars *uvars = expr_uvars__new(2);	/* two values: the third thread's set finds it full */
	int ret;

	if (!st || !uvars) {
		expr_state__delete(st);
		expr_uvars__delete(uvars);
		return;
	}
	expr_state__use_uvars(st, uvars);
	for (int i = 0; i < 3; i++) {
		env->tid += i & 1;
		ret = expr__eval(prog, env, st);
		if (ret != 0 && ret != 1 && ret != -ENOMEM)
			abort();
	}
	if (expr_uvars__used(uvars) > 2)
		abort();
	expr_state__delete(st);
	expr_uvars__delete(uvars);
}

/* Bit 4 of byte 0: the rest is a program's bytes. */
static void fuzz_bytecode(const uint8_t *data, size_t size, const struct expr_vector *v)
{
	unsigned char rec[EXPR_VECTOR_REC_SIZE];
	struct expr_prog prog;
	struct expr_env env;
	char why[128];

	memset(&prog, 0, sizeof(prog));
	memcpy(&prog, data, size < sizeof(prog) ? size : sizeof(prog));
	expr_vector_record(rec);
	expr_vector_env(v, &env, rec);
	memset(why, 0x5a, sizeof(why));
	if (expr__validate(&prog, why, sizeof(why))) {
		if (prog.checked || !memchr(why, 0, sizeof(why)) || strncmp(why, "a malformed program", 19))
			abort();
		if (expr__eval(&prog, &env, NULL) != -EINVAL)
			abort();	/* an unchecked program is never run */
		return;
	}
	if (prog.checked != EXPR_PROG_CHECKED)
		abort();
	expr__dump(&prog, devnull);
	(void)expr__builtins_used(&prog);
	eval_three_times(&prog, &env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct expr_vector_env *const envs[] = {
		&expr_vector_env_default, &expr_vector_env_kworker, &expr_vector_env_extreme, &expr_vector_env_default,
	};
	unsigned char rec[EXPR_VECTOR_REC_SIZE];
	struct expr_vector v = { 0 };
	enum expr_vector_site site;
	struct expr_vars vars = { 0 };
	struct expr_compile_opts opts = { .resolve = expr_vector_resolve, .resolve_ctx = &site, .vars = &vars };
	struct expr_prog prog;
	struct expr_env env;
	char src[MAX_SRC + 1], err[256];
	int ret, action;

	if (size < 1 || size > MAX_SRC + 1)
		return 0;
	v.site = data[0] & 1 ? VEC_ENTRY : VEC_EXIT;
	v.env = envs[(data[0] >> 1) & 3];
	if (data[0] & 16) {
		fuzz_bytecode(data + 1, size - 1, &v);
		return 0;
	}
	memcpy(src, data + 1, size - 1);
	src[size - 1] = '\0';
	v.src = src;
	site = v.site;
	action = data[0] & 8;
	if (expr_vars__define(&vars, "$a", false, err, sizeof(err)) != 0 ||
	    expr_vars__define(&vars, "$b", true, err, sizeof(err)) != 1)
		abort();

	memset(err, 0x5a, sizeof(err));
	ret = action ? expr__compile_action(src, &opts, &prog, err, sizeof(err))
		     : expr__compile(src, &opts, &prog, err, sizeof(err));
	if (ret) {
		/* Refused: -EINVAL or -E2BIG, with a NUL-terminated message naming the column. */
		char q[EXPR_QUOTE_MAX + 64];

		if ((ret != -EINVAL && ret != -E2BIG) || !memchr(err, 0, sizeof(err)) || !err[0])
			abort();
		/* What the user sees of the expression: one bounded line. */
		expr__quote(src, err, q, sizeof(q));
		if (strlen(q) >= sizeof(q) - 1 || strchr(q, '\n'))
			abort();
		return 0;
	}
	if (prog.nr_insns < 1 || prog.nr_insns > EXPR_MAX_INSNS || prog.max_stack > EXPR_MAX_STACK ||
	    prog.nr_hits > EXPR_MAX_HITS || vars.nr > EXPR_MAX_UVARS)
		abort();
	for (unsigned int i = 0; i < prog.nr_insns; i++)
		if ((prog.insns[i].op == EXPR_OP_UGET || prog.insns[i].op == EXPR_OP_USET) && prog.insns[i].a >= vars.nr)
			abort();	/* a variable the recording does not have */
	if (prog.checked != EXPR_PROG_CHECKED)
		abort();	/* the compiler validates what it built */
	expr__dump(&prog, devnull);
	(void)expr__builtins_used(&prog);

	expr_vector_record(rec);
	expr_vector_env(&v, &env, rec);
	eval_three_times(&prog, &env);
	return 0;
}
