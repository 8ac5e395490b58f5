// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF condition interpreter (bpf/expr.bpf.h) against the shared vectors
 * (tests/unit/expr_vectors.h): every vector is compiled, run by expr__eval()
 * and by the real BPF interpreter through BPF_PROG_TEST_RUN on a syscall
 * program (bpf/expr_test.bpf.c), and both must give the expected result.
 * The stateful sequences run step by step through userspace (one
 * struct expr_state) and through each BPF caller (one slot each), every step
 * must give the expected result. Then the limits: the longest program the
 * compiler accepts (also with every stateful instruction in it), the deepest
 * stack, a full string table and back-to-back worst-case globs, all through
 * the real verifier and interpreter; more threads than the $count map holds.
 * Last, a real caller: conditions with fields resolved from the
 * sys_enter_openat format file, evaluated at that tracepoint while this
 * process opens files.
 *
 * Exit 0 pass, 77 skip (not root), 1 fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "auxtrig/lang/expr_bpf.h"
#include "auxtrig/lang/expr_dump.h"
#include "auxtrig/lang/expr_eval.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/tracefs.h"
#include "expr_vectors.h"
#include "skel/expr_test.skel.h"

/* The syscall program's context: struct expr_test_args in bpf/expr_test.bpf.c. */
struct expr_test_args {
	struct expr_env env;
	__s32 result;
	__u32 slot;
};

/* The slots of the two test callers: their states are apart, as two conditions' are. */
#define SLOT_STACK  0
#define SLOT_MAPENV 1
#define SLOT_COMPILED 2 /* the compiled path (user/lang/expr_bpf.c) */

_Static_assert(sizeof(struct expr_test_args) == sizeof(struct expr_env) + 8, "expr_test_args layout");

static unsigned char rec[EXPR_VECTOR_REC_SIZE];

/* Runs @prog on @env in BPF with @run. Returns 0 or 1, or -errno if the run itself failed. */
static int bpf_eval(struct expr_test_bpf *skel, struct bpf_program *run, const struct expr_prog *prog,
		    const struct expr_env *env, __u32 slot)
{
	struct expr_test_args args = { .env = *env, .result = -1, .slot = slot };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
	__u32 zero = 0;
	int err;

	err = bpf_map__update_elem(skel->maps.expr_test_progs, &zero, sizeof(zero), prog, sizeof(*prog), BPF_ANY);
	if (err)
		return err;
	err = bpf_prog_test_run_opts(bpf_program__fd(run), &opts);
	if (err)
		return -errno;
	return args.result; /* the kernel copies the context back into ctx_in */
}

/*
 * The compiled path: the condition as BPF instructions (expr_bpf__compile()),
 * in a syscall program of its own that reads the environment from its
 * context, as the interpreter's caller does. One program per condition and
 * record presence, kept while the same condition is checked again.
 */
static struct {
	struct expr_prog prog;
	int fd[2];		/* without, with a record; -1: not loaded */
	int refused[2];		/* -EOPNOTSUPP: interpreted, not compiled */
	char why[2][256];
} compiled = { .fd = { -1, -1 } };
static int nr_compiled, nr_interpreted;

static int compiled_load(struct expr_test_bpf *skel, const struct expr_prog *prog, int with_rec, char *why, size_t size)
{
	struct expr_bpf_env env = {
		.env_reg = BPF_REG_6,
		.rec_fd = with_rec ? bpf_map__fd(skel->maps.bss) : -1,
		.rec_off = offsetof(struct expr_test_bpf__bss, expr_test_rec),
		.rec_size = with_rec ? EXPR_VECTOR_REC_SIZE : 0,
	};
	struct expr_bpf_opts o = {
		.ops = &expr_bpf_env_ops,
		.ctx = &env,
		.stack_off = -EXPR_BPF_FRAME,
		.state_fd = bpf_map__fd(skel->maps.expr_state),
		.counts_fd = bpf_map__fd(skel->maps.expr_counts),
		.slot = SLOT_COMPILED,
	};
	static char log[1 << 20];
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .prog_flags = BPF_F_SLEEPABLE, .log_buf = log, .log_size = sizeof(log),
		    .log_level = 1);
	LIBBPF_OPTS(bpf_prog_load_opts, quiet, .prog_flags = BPF_F_SLEEPABLE);
	struct bpf_asm *a = bpf_asm__new();
	const struct bpf_insn *insns;
	size_t nr;
	int fd, err;

	if (!a)
		return -ENOMEM;
	bpf_asm__emit(a, BA_MOV64_REG(BPF_REG_6, BPF_REG_1));
	err = expr_bpf__compile(a, prog, &o, why, size);
	if (!err) {
		bpf_asm__emit(a, BA_STX_MEM(BPF_W, BPF_REG_6, BPF_REG_0, offsetof(struct expr_test_args, result)));
		bpf_asm__emit(a, BA_MOV64_IMM(BPF_REG_0, 0));
		bpf_asm__emit(a, BA_EXIT());
		err = bpf_asm__finish(a, &insns, &nr);
	}
	if (err) {
		bpf_asm__delete(a);
		return err;
	}
	/* no log unless it fails: a log too small for a long program fails the load (-ENOSPC) */
	fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "expr_compiled", "Dual BSD/GPL", insns, nr, &quiet);
	if (fd < 0) {
		err = -errno;
		snprintf(why, size, "the verifier refused %zu instructions: %s", nr, strerror(-err));
		log[0] = 0;
		fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "expr_compiled", "Dual BSD/GPL", insns, nr, &lo);
		if (fd >= 0)
			close(fd);
		fd = -1;
		fprintf(stderr, "%s\n", log);
	}
	bpf_asm__delete(a);
	return fd < 0 ? err : fd;
}

/* Runs @prog compiled on @env: 0 or 1, -EOPNOTSUPP when the compiler refused it, or -errno. */
static int compiled_eval(struct expr_test_bpf *skel, const struct expr_prog *prog, const struct expr_env *env,
			 char *why, size_t size)
{
	struct expr_test_args args = { .env = *env, .result = -1, .slot = SLOT_COMPILED };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
	int r = env->rec != 0, fd;

	if (memcmp(&compiled.prog, prog, sizeof(*prog))) {
		for (int i = 0; i < 2; i++) {
			if (compiled.fd[i] >= 0)
				close(compiled.fd[i]);
			compiled.fd[i] = -1;
			compiled.refused[i] = 0;
		}
		compiled.prog = *prog;
	}
	if (compiled.fd[r] < 0 && !compiled.refused[r]) {
		fd = compiled_load(skel, prog, r, compiled.why[r], sizeof(compiled.why[r]));
		if (fd < 0)
			compiled.refused[r] = fd;
		else
			compiled.fd[r] = fd;
	}
	if (compiled.refused[r]) {
		snprintf(why, size, "%s", compiled.why[r]);
		return compiled.refused[r];
	}
	if (bpf_prog_test_run_opts(compiled.fd[r], &opts))
		return -errno;
	return args.result;
}

/*
 * The compiled path's answer against @expect: equal, or refused by the
 * compiler for the one reason it has (globs whose unrolled matchers exceed
 * EXPR_BPF_GLOB_BUDGET), never by the verifier.
 */
static int compiled_check(struct expr_test_bpf *skel, const char *what, const struct expr_prog *prog,
			  const struct expr_env *env, int expect)
{
	char why[256] = "";
	int comp = compiled_eval(skel, prog, env, why, sizeof(why));

	if (comp == -EOPNOTSUPP && strstr(why, "unrolled matchers would take")) {
		nr_interpreted++;
		return 0;
	}
	if (comp == expect) {
		nr_compiled++;
		return 0;
	}
	fprintf(stderr, "FAIL %s: expected %d, compiled %d%s%s\n", what, expect, comp, why[0] ? ": " : "", why);
	expr__dump(prog, stderr);
	return 1;
}

/* Every slot's counters back to 0, every thread's $count forgotten. */
static int reset_state(struct expr_test_bpf *skel)
{
	struct expr_slot_state zero = {};
	struct expr_count_key key, next;
	int fd = bpf_map__fd(skel->maps.expr_counts);

	for (__u32 slot = 0; slot < EXPR_MAX_SLOTS; slot++)
		if (bpf_map__update_elem(skel->maps.expr_state, &slot, sizeof(slot), &zero, sizeof(zero), BPF_ANY))
			return -errno;
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			return -errno;
	}
	return 0;
}

static int slot_state(struct expr_test_bpf *skel, __u32 slot, struct expr_slot_state *out)
{
	return bpf_map__lookup_elem(skel->maps.expr_state, &slot, sizeof(slot), out, sizeof(*out), 0);
}

/* One evaluation by the three evaluators, each on its own state. */
static int check_step(struct expr_test_bpf *skel, const char *what, const struct expr_prog *prog,
		      const struct expr_env *env, struct expr_state *st, int expect)
{
	int user = expr__eval(prog, env, st);
	int kern = bpf_eval(skel, skel->progs.expr_test_run, prog, env, SLOT_STACK);
	int kern_mapenv = bpf_eval(skel, skel->progs.expr_test_run_mapenv, prog, env, SLOT_MAPENV);

	if (user == expect && kern == expect && kern_mapenv == expect)
		return compiled_check(skel, what, prog, env, expect);
	fprintf(stderr, "FAIL %s: expected %d, userspace %d, BPF %d (env in a map: %d)\n", what, expect, user,
		kern, kern_mapenv);
	expr__dump(prog, stderr);
	return 1;
}

/* One evaluation on fresh states. */
static int check(struct expr_test_bpf *skel, const char *what, const struct expr_prog *prog,
		 const struct expr_env *env, int expect)
{
	struct expr_state *st = expr_state__new();
	int ret;

	if (!st || reset_state(skel)) {
		fprintf(stderr, "FAIL %s: cannot reset the state: %s\n", what, strerror(errno));
		expr_state__delete(st);
		return 1;
	}
	ret = check_step(skel, what, prog, env, st, expect);
	expr_state__delete(st);
	return ret;
}

/* The sequences: each step through the three evaluators, each keeping its own state. */
static int run_sequences(struct expr_test_bpf *skel, int *nr_steps)
{
	struct expr_slot_state ss;
	struct expr_prog prog;
	struct expr_env env;
	char err[256], what[512];
	int failures = 0;

	for (size_t i = 0; i < EXPR_NR_SEQS; i++) {
		const struct expr_seq *q = &expr_seqs[i];
		struct expr_state *st;

		if (expr_seq_compile(q, &prog, err, sizeof(err))) {
			fprintf(stderr, "FAIL sequence %zu '%s': %s\n", i, q->src, err);
			failures++;
			continue;
		}
		st = expr_state__new();
		if (!st || reset_state(skel)) {
			fprintf(stderr, "FAIL sequence %zu: cannot reset the state\n", i);
			expr_state__delete(st);
			return failures + 1;
		}
		for (unsigned int k = 0; q->expect[k]; k++) {
			expr_seq_env(q, k, &env, rec);
			snprintf(what, sizeof(what), "sequence %zu '%s' step %u of %s", i, q->src, k + 1, q->expect);
			(*nr_steps)++;
			if (check_step(skel, what, &prog, &env, st, q->expect[k] - '0')) {
				failures++;
				break;
			}
		}
		expr_state__delete(st);
		/* both BPF slots counted the same hits, and nothing was lost */
		for (__u32 slot = SLOT_STACK; slot <= SLOT_COMPILED; slot++) {
			if (slot_state(skel, slot, &ss) || ss.count_lost) {
				fprintf(stderr, "FAIL sequence %zu: slot %u lost %llu $count updates\n", i, slot,
					(unsigned long long)ss.count_lost);
				failures++;
			}
		}
	}
	return failures;
}

/* More threads than expr_counts holds: the LRU makes room, a new thread still starts at 1. */
static int run_many_threads(struct expr_test_bpf *skel)
{
	const struct expr_vector v = { .src = "$count == 1" };
	struct expr_slot_state ss;
	struct expr_prog prog;
	struct expr_env env;
	char err[256];
	int failures = 0, nr = 70000; /* > EXPR_COUNT_ENTRIES (65536) */

	if (expr_vector_compile(&v, &prog, err, sizeof(err)) || reset_state(skel)) {
		fprintf(stderr, "FAIL many threads: %s\n", err);
		return 1;
	}
	expr_vector_env(&v, &env, rec);
	for (int t = 0; t < nr && failures < 3; t++) {
		env.tid = 100000 + t;
		if (bpf_eval(skel, skel->progs.expr_test_run, &prog, &env, SLOT_STACK) != 1) {
			fprintf(stderr, "FAIL many threads: thread %d of %d: $count is not 1 at its first hit\n", t + 1,
				nr);
			failures++;
		}
	}
	env.tid = 100000 + nr - 1; /* the most recent thread is still counted */
	if (bpf_eval(skel, skel->progs.expr_test_run, &prog, &env, SLOT_STACK) != 0) {
		fprintf(stderr, "FAIL many threads: the last thread's second hit has $count 1\n");
		failures++;
	}
	if (slot_state(skel, SLOT_STACK, &ss) || ss.count_lost) {
		fprintf(stderr, "FAIL many threads: %llu $count updates lost\n", (unsigned long long)ss.count_lost);
		failures++;
	}
	return failures;
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

	/* the longest program with every stateful instruction: twice, once holds the first time only */
	expr_vector_longest_stateful(src, sizeof(src), 0);
	if (expr__compile(src, NULL, &prog, err, sizeof(err)) || prog.nr_insns != EXPR_MAX_INSNS ||
	    prog.nr_hits != EXPR_MAX_HITS) {
		fprintf(stderr, "FAIL longest stateful program: %s (%u instructions)\n", err, prog.nr_insns);
		failures++;
	} else {
		const struct expr_vector v = { .src = src };
		struct expr_state *st = expr_state__new();
		struct expr_env env;

		expr_vector_env(&v, &env, rec);
		if (!st || reset_state(skel)) {
			failures++;
		} else {
			failures += check_step(skel, "longest stateful program, first", &prog, &env, st, 1);
			failures += check_step(skel, "longest stateful program, second", &prog, &env, st, 0);
		}
		expr_state__delete(st);
	}
	expr_vector_longest_stateful(src, sizeof(src), 1);
	if (expr__compile(src, NULL, &prog, err, sizeof(err)) != -E2BIG || !strstr(err, "expression too long")) {
		fprintf(stderr, "FAIL: a stateful program longer than %d instructions was accepted\n", EXPR_MAX_INSNS);
		failures++;
	}

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

/*
 * The recorder's resolver at a tracepoint (cmd/record_plan.c): builtins,
 * then the format's fields through expr__resolve_tp_field(), so the typing
 * of the fields under test here is the one a run uses.
 */
static int format_resolve(void *ctx, const char *name, struct expr_field *field, char *why, size_t why_size)
{
	const struct tp_format *fmt = ctx;

	if (!strcmp(name, "ret")) {
		snprintf(why, why_size, "sys_enter_openat is not an exit point");
		return -EINVAL;
	}
	if (!expr__resolve_builtin(name, field))
		return 0;
	return expr__resolve_tp_field(fmt, name, field, why, why_size);
}

static void open_close(const char *path, int times)
{
	for (int i = 0; i < times; i++) {
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

		if (fd >= 0)
			close(fd);
	}
	unlink(path);
}

/* Compiles @src for sys_enter_openat, runs it while this process opens @yes 3 times and @no twice. */
static int openat_round(struct expr_test_bpf *skel, struct tp_format *format, const char *src, const char *yes,
			const char *no, unsigned long long expect)
{
	struct expr_compile_opts opts = { .resolve = format_resolve, .resolve_ctx = format };
	struct bpf_link *link;
	struct expr_prog prog;
	char err[256];
	__u32 one = 1;

	if (expr__compile(src, &opts, &prog, err, sizeof(err))) {
		fprintf(stderr, "FAIL: openat condition '%s': %s\n", src, err);
		return 1;
	}
	if (bpf_map__update_elem(skel->maps.expr_test_progs, &one, sizeof(one), &prog, sizeof(prog), BPF_ANY)) {
		fprintf(stderr, "FAIL: cannot store the openat program: %s\n", strerror(errno));
		return 1;
	}
	if (reset_state(skel)) {
		fprintf(stderr, "FAIL: cannot reset the state: %s\n", strerror(errno));
		return 1;
	}
	skel->bss->expr_test_hits = 0;
	skel->bss->expr_test_seen = 0;
	link = bpf_program__attach(skel->progs.expr_test_openat);
	if (!link) {
		fprintf(stderr, "FAIL: cannot attach expr_test_openat to syscalls/sys_enter_openat: %s\n",
			strerror(errno));
		return 1;
	}
	open_close(yes, 3);
	open_close(no, 2);
	bpf_link__destroy(link);
	if (skel->bss->expr_test_hits != expect || skel->bss->expr_test_seen < 5) {
		fprintf(stderr, "FAIL: openat '%s': held %llu times of %llu, expected %llu of at least 5\n", src,
			(unsigned long long)skel->bss->expr_test_hits, (unsigned long long)skel->bss->expr_test_seen,
			expect);
		expr__dump(&prog, stderr);
		return 1;
	}
	return 0;
}

/* A real caller: conditions on sys_enter_openat of this process, fields from the format file. */
static int run_tracepoint(struct expr_test_bpf *skel)
{
	char src[1024], yes[64], no[64], err[256];
	struct expr_compile_opts opts = { .resolve = format_resolve };
	struct tp_format fmt, *f = &fmt;
	struct expr_prog prog;
	int failures = 0, err2;

	err2 = tracefs__load_format("syscalls", "sys_enter_openat", &fmt);
	if (err2) {
		fprintf(stderr, "FAIL: syscalls:sys_enter_openat's format: %s\n", strerror(-err2));
		return 1;
	}
	opts.resolve_ctx = f;
	/* the resolver decides: ret does not exist at an entry point */
	if (expr__compile("ret == 0", &opts, &prog, err, sizeof(err)) != -EINVAL || !strstr(err, "not an exit point")) {
		fprintf(stderr, "FAIL: 'ret' accepted at sys_enter_openat: %s\n", err);
		failures++;
	}
	if (expr__compile("common_pid == 1", &opts, &prog, err, sizeof(err)) != -EINVAL ||
	    !strstr(err, "not readable from BPF")) {
		fprintf(stderr, "FAIL: 'common_pid' accepted at sys_enter_openat: %s\n", err);
		failures++;
	}
	snprintf(yes, sizeof(yes), "/tmp/auxtrig-expr-yes-%d", getpid());
	snprintf(no, sizeof(no), "/tmp/auxtrig-expr-no-%d", getpid());

	snprintf(src, sizeof(src), "pid == %d", getpid());
	failures += openat_round(skel, f, src, yes, no, 5);
	failures += openat_round(skel, f, "tid == pid", yes, no, 5);
	failures += openat_round(skel, f, "(arg0 & 0xffffffff) == (-100 & 0xffffffff)", yes, no, 5);
	failures += openat_round(skel, f, "comm ~ \"test_expr*\"", yes, no, 5);
	failures += openat_round(skel, f, "str(arg1) ~ \"/tmp/auxtrig-expr-yes-*\"", yes, no, 3);
	failures += openat_round(skel, f, "filename == arg1 && dfd == -100", yes, no, 5);
	snprintf(src, sizeof(src), "__syscall_nr == %d && nr == %d", SYS_openat, SYS_openat);
	failures += openat_round(skel, f, src, yes, no, 5);
	snprintf(src, sizeof(src), "(flags & %d) != 0 && mode == 0600 && uid == %d && gid == %d && ppid == %d", O_CREAT,
		 getuid(), getgid(), getppid());
	failures += openat_round(skel, f, src, yes, no, 5);
	snprintf(src, sizeof(src),
		 "pid == %d && tid == pid && comm ~ \"test_expr*\" && str(arg1) ~ \"/tmp/auxtrig-expr-yes-*\" "
		 "&& filename == arg1 && dfd == -100 && __syscall_nr == %d && nr == %d && (flags & %d) != 0 "
		 "&& mode == 0600 && uid == %d",
		 getpid(), SYS_openat, SYS_openat, O_CREAT, getuid());
	failures += openat_round(skel, f, src, yes, no, 3);
	/* state at a real tracepoint: 3 opens of yes, then 2 of no, by this one thread */
	failures += openat_round(skel, f, "$count >= 3", yes, no, 3);
	failures += openat_round(skel, f, "$count == 4 || $count == 1", yes, no, 2);
	failures += openat_round(skel, f, "once", yes, no, 1);
	failures += openat_round(skel, f, "after 4", yes, no, 2);
	failures += openat_round(skel, f, "str(arg1) ~ \"/tmp/auxtrig-expr-yes-*\" && every 2", yes, no, 1);
	failures += openat_round(skel, f, "str(arg1) ~ \"/tmp/auxtrig-expr-no-*\" && $count == 5", yes, no, 1);
	/* int arguments compare as ints, however the slot's upper half came: AT_FDCWD, O_CREAT's int */
	failures += openat_round(skel, f, "dfd == -100 && dfd < 0 && flags > 0", yes, no, 5);
	tp_format__exit(&fmt);
	return failures;
}

/* ---- differential test: random well-typed conditions, userspace and BPF must agree ---- */

static unsigned long long rnd_state = 0x9e3779b97f4a7c15ULL;

static unsigned int rnd(unsigned int n)
{
	/* xorshift64: the same sequence on every run, so a failure reproduces */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

static void gen_expr(char *buf, size_t size, int depth)
{
	static const char *const leaves[] = {
		"0", "1", "-1", "2", "3", "7", "-7", "64", "0x7fffffffffffffff", "(-9223372036854775807 - 1)",
		"0xff", "ENOENT", "pid", "tid", "ppid", "uid", "gid", "cpu", "cgroup", "nr", "ret", "arg0",
		"arg1", "arg2", "arg3", "arg5", "small", "usmall", "neg32", "big", "dfd", "flags", "mode",
		"common_pid", "past_end", "comm == \"nginx\"", "comm ~ \"*o*\"", "comm != \"kworker/3:1H\"",
		"str(arg1) ~ \"/etc/*\"", "str(arg0) ~ \"/usr/*\"", "str(arg4) ~ \"*a?a*\"", "name ~ \"b?sh\"",
		"filename != \"/etc/passwd\"", "longloc ~ \"*on*\"", "once", "after 2", "every 2", "every 3", "$count",
		"$count > 2", "$elapsed", "$elapsed > 1ms",
	};
	static const char *const binops[] = {
		"+", "-", "*", "/", "%", "&", "|", "^", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
	};
	static const char *const unops[] = { "!", "~", "-", "(int)", "(u8)", "(s16)", "(unsigned int)", "(signed char)" };
	char a[2048], b[2048];

	if (depth == 0 || rnd(10) < 3) {
		snprintf(buf, size, "%s", leaves[rnd(sizeof(leaves) / sizeof(leaves[0]))]);
		return;
	}
	if (rnd(5) == 0) {
		gen_expr(a, sizeof(a), depth - 1);
		snprintf(buf, size, "%s(%s)", unops[rnd(sizeof(unops) / sizeof(unops[0]))], a);
		return;
	}
	gen_expr(a, sizeof(a), depth - 1);
	gen_expr(b, sizeof(b), depth - 1);
	/* no parentheses half of the time: precedence decides */
	snprintf(buf, size, rnd(2) ? "(%s %s %s)" : "%s %s %s", a, binops[rnd(sizeof(binops) / sizeof(binops[0]))], b);
}

static int run_random(struct expr_test_bpf *skel, int count, int *nr_run)
{
	static const struct expr_vector_env *const envs[] = {
		&expr_vector_env_default, &expr_vector_env_kworker, &expr_vector_env_extreme,
	};
	struct expr_prog prog;
	struct expr_env env;
	char src[4096], err[256];
	int failures = 0, trues = 0;

	for (int i = 0; i < count && failures < 5; i++) {
		struct expr_vector v = { .src = src };
		struct expr_state *st;

		gen_expr(src, sizeof(src), 4);
		if (expr_vector_compile(&v, &prog, err, sizeof(err)))
			continue; /* too long or too deep */
		st = expr_state__new();
		if (!st || reset_state(skel)) {
			expr_state__delete(st);
			return failures + 1;
		}
		/* the states advance in step: every env twice, in the same order on both sides */
		for (size_t e = 0; e < 2 * sizeof(envs) / sizeof(envs[0]); e++) {
			int user, kern;

			v.env = envs[e % (sizeof(envs) / sizeof(envs[0]))];
			expr_vector_env(&v, &env, rec);
			user = expr__eval(&prog, &env, st);
			kern = bpf_eval(skel, skel->progs.expr_test_run, &prog, &env, SLOT_STACK);
			if (user == kern && user >= 0 && compiled_check(skel, src, &prog, &env, user)) {
				failures++;
				continue;
			}
			if (user != kern || user < 0) {
				fprintf(stderr, "FAIL random '%s' (env %zu): userspace %d, BPF %d\n", src, e, user, kern);
				expr__dump(&prog, stderr);
				failures++;
			}
			trues += user == 1;
			(*nr_run)++;
		}
		expr_state__delete(st);
	}
	if (!trues || trues == *nr_run) {
		fprintf(stderr, "FAIL: the random conditions were all %s: the generator is broken\n",
			trues ? "true" : "false");
		failures++;
	}
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
		__s64 count;
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
	int failures = 0, nr_run = 0, nr_random = 0, nr_steps = 0, have_tp;

	if (geteuid() != 0) {
		fprintf(stderr, "skip: loading BPF programs and BPF_PROG_TEST_RUN need root\n");
		return 77;
	}
	log__set_level(LOG_DEBUG); /* the verifier log goes to the test log on failure */
	log__route_libbpf();
	skel = expr_test_bpf__open();
	if (!skel) {
		fprintf(stderr, "FAIL: cannot open bpf/expr_test.bpf.c: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->expr_test_tgid = getpid();
	{
		struct tp_format fmt;

		have_tp = tracefs__load_format("syscalls", "sys_enter_openat", &fmt) == 0;
		if (have_tp)
			tp_format__exit(&fmt);
	}
	bpf_program__set_autoload(skel->progs.expr_test_openat, have_tp);
	if (expr_test_bpf__load(skel)) {
		fprintf(stderr, "FAIL: cannot load bpf/expr_test.bpf.c (expr_test_run, expr_test_run_mapenv%s): %s\n",
			have_tp ? ", expr_test_openat" : "", strerror(errno));
		expr_test_bpf__destroy(skel);
		return 1;
	}
	expr_vector_record(rec);
	memcpy(skel->bss->expr_test_rec, rec, sizeof(rec));

	failures += run_vectors(skel, &nr_run);
	failures += run_sequences(skel, &nr_steps);
	failures += run_limits(skel);
	failures += run_many_threads(skel);
	failures += run_random(skel, 3000, &nr_random);
	if (have_tp) {
		failures += run_tracepoint(skel);
	} else {
		fprintf(stderr, "FAIL: no syscalls:sys_enter_openat in tracefs: the tracepoint caller cannot be tested\n");
		failures++;
	}
	failures += check_scratch(skel);
	expr_test_bpf__destroy(skel);
	for (int i = 0; i < 2; i++)
		if (compiled.fd[i] >= 0)
			close(compiled.fd[i]);
	printf("%d vectors run through userspace and both BPF callers (%zu vectors with compile errors), %zu "
	       "sequences (%d steps) with state, limits checked, %d random conditions agreed%s; compiled to BPF: "
	       "%d evaluations agreed, %d interpreted (inner-'*' globs over the budget): %d failures\n",
	       nr_run, EXPR_NR_VECTORS - nr_run, EXPR_NR_SEQS, nr_steps, nr_random,
	       have_tp ? ", tracepoint caller checked" : "", nr_compiled, nr_interpreted, failures);
	return failures ? 1 : 0;
}
