// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF condition interpreter (bpf/expr.bpf.h) against the shared vectors
 * (tests/unit/expr_vectors.h): every vector is compiled, run by expr__eval()
 * and by the real BPF interpreter through BPF_PROG_TEST_RUN on a syscall
 * program (bpf/expr_test.bpf.c), and both must give the expected result.
 * Then the limits: the longest program the compiler accepts, the deepest
 * stack, a full string table and back-to-back worst-case globs, all through
 * the real verifier and interpreter.
 *
 * Exit 0 pass, 77 skip (not root), 1 fail.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "auxtrig/log.h"
#include "expr_vectors.h"
#include "skel/expr_test.skel.h"

/* The syscall program's context: struct expr_test_args in bpf/expr_test.bpf.c. */
struct expr_test_args {
	struct expr_env env;
	__s32 result;
	__u32 pad;
};

_Static_assert(sizeof(struct expr_test_args) == sizeof(struct expr_env) + 8, "expr_test_args layout");

static unsigned char rec[EXPR_VECTOR_REC_SIZE];

/* Runs @prog on @env in BPF. Returns 0 or 1, or -errno if the run itself failed. */
static int bpf_eval(struct expr_test_bpf *skel, const struct expr_prog *prog, const struct expr_env *env)
{
	struct expr_test_args args = { .env = *env, .result = -1 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
	__u32 zero = 0;
	int err;

	err = bpf_map__update_elem(skel->maps.expr_test_progs, &zero, sizeof(zero), prog, sizeof(*prog), BPF_ANY);
	if (err)
		return err;
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.expr_test_run), &opts);
	if (err)
		return -errno;
	return args.result; /* the kernel copies the context back into ctx_in */
}

static int check(struct expr_test_bpf *skel, const char *what, const struct expr_prog *prog,
		 const struct expr_env *env, int expect)
{
	int user = expr__eval(prog, env);
	int kern = bpf_eval(skel, prog, env);

	if (user == expect && kern == expect)
		return 0;
	fprintf(stderr, "FAIL %s: expected %d, userspace %d, BPF %d\n", what, expect, user, kern);
	expr__dump(prog, stderr);
	return 1;
}

static int run_vectors(struct expr_test_bpf *skel, int *nr_run)
{
	struct expr_prog prog;
	struct expr_env env;
	char err[256], what[512];
	int failures = 0;

	for (size_t i = 0; i < EXPR_NR_VECTORS; i++) {
		const struct expr_vector *v = &expr_vectors[i];
		int ret = expr_vector_compile(v, &prog, err, sizeof(err));

		if (v->err) {
			if (!ret || !strstr(err, v->err)) {
				fprintf(stderr, "FAIL vector %zu '%s': expected error '%s', got '%s'\n", i, v->src,
					v->err, err);
				failures++;
			}
			continue;
		}
		if (ret) {
			fprintf(stderr, "FAIL vector %zu '%s': %s\n", i, v->src, err);
			failures++;
			continue;
		}
		expr_vector_env(v, &env, rec);
		snprintf(what, sizeof(what), "vector %zu '%s'", i, v->src);
		failures += check(skel, what, &prog, &env, v->expect);
		(*nr_run)++;
	}
	return failures;
}

static int compile_check(struct expr_test_bpf *skel, const char *what, const char *src,
			 const struct expr_vector_env *e, int expect, unsigned int want_insns)
{
	const struct expr_vector v = { .src = src, .env = e };
	struct expr_prog prog;
	struct expr_env env;
	char err[256];

	if (expr__compile(src, NULL, &prog, err, sizeof(err))) {
		fprintf(stderr, "FAIL %s: %s\n", what, err);
		return 1;
	}
	if (want_insns && prog.nr_insns != want_insns) {
		fprintf(stderr, "FAIL %s: %u instructions, wanted %u\n", what, prog.nr_insns, want_insns);
		return 1;
	}
	expr_vector_env(&v, &env, rec);
	return check(skel, what, &prog, &env, expect);
}

static int run_limits(struct expr_test_bpf *skel)
{
	static char src[8192];
	struct expr_prog prog;
	char err[256];
	int failures = 0, i;
	size_t n;

	/* the longest program the compiler accepts, and that it refuses one more term */
	expr_vector_longest(src, sizeof(src), 0);
	failures += compile_check(skel, "longest program", src, NULL, 1, EXPR_MAX_INSNS);
	expr_vector_longest(src, sizeof(src), 1);
	if (expr__compile(src, NULL, &prog, err, sizeof(err)) != -E2BIG) {
		fprintf(stderr, "FAIL: a program longer than %d instructions was accepted\n", EXPR_MAX_INSNS);
		failures++;
	}

	/* the longest program made of worst-case globs: 40 backtracking matches + 2 terms = 128 */
	n = 0;
	for (i = 0; i < 40; i++)
		n += snprintf(src + n, sizeof(src) - n, "str(arg4) ~ \"%s*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\" || ",
			      i & 1 ? "" : "*");
	snprintf(src + n, sizeof(src) - n, "pid == 1 || pid == 88");
	failures += compile_check(skel, "longest glob program", src, &expr_vector_env_kworker, 1, EXPR_MAX_INSNS);

	/* the deepest stack */
	n = 0;
	for (i = 0; i < EXPR_MAX_STACK - 1; i++)
		n += snprintf(src + n, sizeof(src) - n, "%d - (", i + 2);
	n += snprintf(src + n, sizeof(src) - n, "1");
	for (i = 0; i < EXPR_MAX_STACK - 1; i++)
		n += snprintf(src + n, sizeof(src) - n, ")");
	snprintf(src + n, sizeof(src) - n, " == %d", 8);
	failures += compile_check(skel, "deepest stack", src, NULL, 1, 0);

	/* a full string table: 8 literals of 63 bytes, the last one matches */
	n = 0;
	for (i = 0; i < 7; i++)
		n += snprintf(src + n, sizeof(src) - n, "str(arg0) ~ \"%062d*\" || ", i);
	snprintf(src + n, sizeof(src) - n, "str(arg0) ~ \"/usr/lib/%.54s\"",
		 "******************************************************");
	failures += compile_check(skel, "full string table", src, &expr_vector_env_kworker, 1, 0);
	return failures;
}

/* Every evaluation released the per-CPU scratch, and none was refused as busy. */
static int check_scratch(struct expr_test_bpf *skel)
{
	int nr_cpus = libbpf_num_possible_cpus(), failures = 0;
	struct {
		__s64 stack[EXPR_MAX_STACK];
		char str[EXPR_STR_MAX];
		__u32 pc, sp;
		__s32 result;
		__u32 busy;
		__u32 glob[8];
		__u64 nr_busy;
	} *scr;
	__u32 zero = 0;

	if (nr_cpus <= 0)
		return 1;
	if (bpf_map__value_size(skel->maps.expr_scratch) != sizeof(*scr)) {
		fprintf(stderr, "FAIL: struct expr_scratch is %u bytes, this test expects %zu\n",
			bpf_map__value_size(skel->maps.expr_scratch), sizeof(*scr));
		return 1;
	}
	scr = calloc(nr_cpus, sizeof(*scr));
	if (!scr)
		return 1;
	if (bpf_map__lookup_elem(skel->maps.expr_scratch, &zero, sizeof(zero), scr, nr_cpus * sizeof(*scr), 0)) {
		fprintf(stderr, "FAIL: cannot read expr_scratch: %s\n", strerror(errno));
		failures = 1;
	}
	for (int i = 0; i < nr_cpus && !failures; i++) {
		if (scr[i].busy || scr[i].nr_busy) {
			fprintf(stderr, "FAIL: cpu %d: scratch busy %u, refused %llu evaluations\n", i, scr[i].busy,
				(unsigned long long)scr[i].nr_busy);
			failures = 1;
		}
	}
	free(scr);
	return failures;
}

int main(void)
{
	struct expr_test_bpf *skel;
	int failures = 0, nr_run = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "skip: loading BPF programs and BPF_PROG_TEST_RUN need root\n");
		return 77;
	}
	log__set_level(LOG_DEBUG); /* the verifier log goes to the test log on failure */
	log__route_libbpf();
	skel = expr_test_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "FAIL: cannot load bpf/expr_test.bpf.c (expr_test_run): %s\n", strerror(errno));
		return 1;
	}
	expr_vector_record(rec);
	memcpy(skel->bss->expr_test_rec, rec, sizeof(rec));

	failures += run_vectors(skel, &nr_run);
	failures += run_limits(skel);
	failures += check_scratch(skel);
	expr_test_bpf__destroy(skel);
	printf("%d vectors run through both evaluators, %zu total, limits checked: %d failures\n", nr_run,
	       EXPR_NR_VECTORS, failures);
	return failures ? 1 : 0;
}
