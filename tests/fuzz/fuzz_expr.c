// SPDX-License-Identifier: BSD-2-Clause
/*
 * The condition language (user/lang/expr.c): any text either compiles to a
 * program within the limits the BPF interpreter relies on, or is refused
 * with a "column N: ..." message that fits its buffer. A compiled program is
 * evaluated in userspace on the unit tests' environments and record, with
 * state, several times in a row, and dumped.
 *
 * Input: byte 0 picks the site (bit 0: entry or exit point) and the
 * environment (bits 1-2); the rest is the condition.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_dump.h"
#include "auxtrig/lang/expr_eval.h"
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
	struct expr_prog prog;
	struct expr_state *st;
	struct expr_env env;
	char src[MAX_SRC + 1], err[256];
	int ret;

	if (size < 1 || size > MAX_SRC + 1)
		return 0;
	memcpy(src, data + 1, size - 1);
	src[size - 1] = '\0';
	v.src = src;
	v.site = data[0] & 1 ? VEC_ENTRY : VEC_EXIT;
	v.env = envs[(data[0] >> 1) & 3];

	memset(err, 0x5a, sizeof(err));
	ret = expr_vector_compile(&v, &prog, err, sizeof(err));
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
	    prog.nr_hits > EXPR_MAX_HITS)
		abort();
	expr__dump(&prog, devnull);
	(void)expr__builtins_used(&prog);

	expr_vector_record(rec);
	expr_vector_env(&v, &env, rec);
	st = expr_state__new();
	if (!st)
		return 0;
	for (int i = 0; i < 3; i++) {
		env.tid += i & 1;
		ret = expr__eval(&prog, &env, st);
		if (ret != 0 && ret != 1 && ret != -ENOMEM)
			abort();
	}
	expr_state__delete(st);
	return 0;
}
