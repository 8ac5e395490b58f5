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
 * statements, expr__compile_action(); else a condition).
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
	struct expr_state *st;
	struct expr_uvars *uvars;
	struct expr_env env;
	char src[MAX_SRC + 1], err[256];
	int ret, action;

	if (size < 1 || size > MAX_SRC + 1)
		return 0;
	memcpy(src, data + 1, size - 1);
	src[size - 1] = '\0';
	v.src = src;
	v.site = data[0] & 1 ? VEC_ENTRY : VEC_EXIT;
	v.env = envs[(data[0] >> 1) & 3];
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
	expr__dump(&prog, devnull);
	(void)expr__builtins_used(&prog);

	expr_vector_record(rec);
	expr_vector_env(&v, &env, rec);
	st = expr_state__new();
	uvars = expr_uvars__new(2);	/* two values: the third thread's set finds it full */
	if (!st || !uvars) {
		expr_state__delete(st);
		expr_uvars__delete(uvars);
		return 0;
	}
	expr_state__use_uvars(st, uvars);
	for (int i = 0; i < 3; i++) {
		env.tid += i & 1;
		ret = expr__eval(&prog, &env, st);
		if (ret != 0 && ret != 1 && ret != -ENOMEM)
			abort();
	}
	if (expr_uvars__used(uvars) > 2)
		abort();
	expr_state__delete(st);
	expr_uvars__delete(uvars);
	return 0;
}
