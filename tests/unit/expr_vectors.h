/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TESTS_EXPR_VECTORS_H
#define AUXTRIG_TESTS_EXPR_VECTORS_H

/*
 * The one set of condition test vectors: tests/unit/test_expr.c runs them
 * through the compiler and expr__eval(), tests/kernel/test_expr_bpf.c through
 * the compiler, expr__eval() and the BPF interpreter, and both evaluators
 * must give the expected result.
 *
 * A vector is {expression, where it is compiled (entry or exit point), the
 * environment, the expected result} or {expression, the expected compile
 * error substring}, evaluated once with a fresh state. The record is a
 * synthetic sys_enter_openat-like tracepoint record, described to the
 * compiler by expr_vector_resolve().
 *
 * A sequence (expr_seqs) is an expression evaluated several times in a row
 * on one state, as a stateful condition is at successive events: each step
 * is the default environment with its own tid, ret and $elapsed, and an
 * expected result per step. Both evaluators must give every step's result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_vars.h"

#define EXPR_VECTOR_REC_SIZE 240 /* the BPF harness buffer is 256: reads past 240 must fail on the bound */

enum expr_vector_site { VEC_EXIT = 0, VEC_ENTRY = 1 };

struct expr_vector_env {
	const char *comm;
	__s64 pid, tid, ppid, uid, gid, cpu, cgroup, nr, ret;
	__u64 args[EXPR_NR_ARGS];
	const char *ustr[EXPR_NR_ARGS]; /* when set, args[N] is the address of this string */
	int no_rec;
	__s64 elapsed;                  /* $elapsed, when has_elapsed */
	int has_elapsed;
	__s64 duration;                 /* $duration, when has_duration */
	int has_duration;
};

struct expr_vector {
	const char *src;
	int expect;                         /* 0 or 1 */
	const char *err;                    /* compile error substring, or NULL */
	const struct expr_vector_env *env;  /* NULL: expr_vector_env_default */
	enum expr_vector_site site;
};

static const char expr_vector_long[] =
	"/usr/lib/x86_64-linux-gnu/some/very/long/path/that/goes/on/and/on/for/more/than/63/bytes.so";

static const struct expr_vector_env expr_vector_env_default = {
	.comm = "nginx",
	.pid = 1234, .tid = 1240, .ppid = 1, .uid = 33, .gid = 34, .cpu = 3,
	.cgroup = 0x100000001LL, .nr = 257, .ret = -ENOENT,
	.args = { (__u64)-100LL, 0, 0x80241, 0644, 0, 7 },
	.ustr = { NULL, "/etc/passwd" },
	.elapsed = 2000000, .has_elapsed = 1,
	.duration = 55000000, .has_duration = 1,
};

static const struct expr_vector_env expr_vector_env_kworker = {
	.comm = "kworker/3:1H",
	.pid = 88, .tid = 88, .ppid = 2, .uid = 0, .gid = 0, .cpu = 0, .nr = -1, .ret = 0,
	.ustr = { expr_vector_long, NULL, "", "a?b*c", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
	.no_rec = 1,
};

/* comm with all 16 bytes used (no NUL), extreme integers */
static const struct expr_vector_env expr_vector_env_extreme = {
	.comm = "0123456789abcdef",
	.pid = INT64_MAX, .tid = INT64_MIN, .ppid = -1, .uid = 4294967295LL, .gid = 0, .cpu = 0,
	.nr = 0, .ret = INT64_MIN,
	.args = { 0x8000000000000000ULL, 0xffffffffffffffffULL, 1, 0, 0, 0 },
	.elapsed = INT64_MAX, .has_elapsed = 1,
	.duration = 1, .has_duration = 1,
};

/*
 * A function returning int, seen at its return point: -2 in eax, the upper
 * half of rax zero, so ret is 4294967294 unless typed or cast.
 */
static const struct expr_vector_env expr_vector_env_int_ret = {
	.comm = "app",
	.pid = 77, .tid = 77, .ppid = 1, .uid = 1000, .gid = 1000, .cpu = 1, .nr = -1, .ret = 0xfffffffeLL,
	.args = { 0xffffff9cULL, 0x1234567880ULL, 0xffffffffffff8001ULL },
	.no_rec = 1,
};

#define V(s, r)          { .src = (s), .expect = (r) }
#define VE(s, e, r)      { .src = (s), .expect = (r), .env = &(e) }
#define VERR(s, m)       { .src = (s), .err = (m) }
#define VERRAT(s, at, m) { .src = (s), .err = (m), .site = (at) }

static const struct expr_vector expr_vectors[] = {
	/* the first feature: pid tid comm with == != && */
	V("pid == 1234", 1),
	V("pid == 1235", 0),
	V("pid != 1234", 0),
	V("tid == 1240", 1),
	V("comm == \"nginx\"", 1),
	V("comm == \"nginx2\"", 0),
	V("comm == \"ngin\"", 0),
	V("comm != \"bash\"", 1),
	V("\"nginx\" == comm", 1),
	V("comm == \"nginx\" && pid == 1234", 1),
	V("comm == \"nginx\" && pid == 1", 0),
	V("pid == 1234 && tid == 1240 && comm != \"x\"", 1),
	V("pid==1234&&comm==\"nginx\"", 1),
	V("  pid   ==   1234  ", 1),
	VE("comm == \"kworker/3:1H\"", expr_vector_env_kworker, 1),
	VE("comm == \"0123456789abcdef\"", expr_vector_env_extreme, 1),
	VE("comm == \"0123456789abcde\"", expr_vector_env_extreme, 0),

	/* every builtin */
	V("ppid == 1", 1),
	V("uid == 33 && gid == 34", 1),
	V("cpu == 3", 1),
	V("cgroup == 0x100000001", 1),
	V("nr == 257", 1),
	V("ret == -2", 1),
	V("ret == -ENOENT", 1),
	V("ret == -EACCES", 0),
	V("ret < 0", 1),
	V("arg0 == -100", 1),
	V("arg2 == 0x80241", 1),
	V("arg3 == 0644", 1),
	V("arg3 == 420", 1),
	V("arg5 == 7", 1),
	V("arg4 == 0", 1),
	VE("nr == -1", expr_vector_env_kworker, 1),
	VE("uid == 0xffffffff", expr_vector_env_extreme, 1),

	/* integers and errno names */
	V("0", 0),
	V("1", 1),
	V("-1", 1),
	V("0x0", 0),
	V("0xFFFFFFFFFFFFFFFF == -1", 1),
	V("18446744073709551615 == -1", 1),
	V("9223372036854775807 > 0", 1),
	V("9223372036854775808 < 0", 1),
	V("010 == 8", 1),
	V("0x10 == 16", 1),
	V("ENOENT == 2", 1),
	V("EPERM == 1 && EAGAIN == 11 && EINVAL == 22", 1),
	V("-ENOENT == -2", 1),
	V("- 5 == -5", 1),
	V("--5 == 5", 1),

	/* arithmetic, 64-bit wraparound */
	V("1 + 2 == 3", 1),
	V("1 - 2 == -1", 1),
	V("6 * 7 == 42", 1),
	V("7 / 2 == 3", 1),
	V("-7 / 2 == -3", 1),
	V("7 / -2 == -3", 1),
	V("-7 / -2 == 3", 1),
	V("7 % 3 == 1", 1),
	V("-7 % 3 == -1", 1),
	V("7 % -3 == 1", 1),
	V("-7 % -3 == -1", 1),
	VE("pid + 1 == -9223372036854775807 - 1", expr_vector_env_extreme, 1),
	VE("tid - 1 == 9223372036854775807", expr_vector_env_extreme, 1),
	VE("tid * -1 == tid", expr_vector_env_extreme, 1),
	VE("tid / -1 == tid", expr_vector_env_extreme, 1),
	VE("tid % -1 == 0", expr_vector_env_extreme, 1),
	VE("-tid == tid", expr_vector_env_extreme, 1),
	VE("arg0 == tid && arg1 == -1", expr_vector_env_extreme, 1),
	VE("ret / 2 == -4611686018427387904", expr_vector_env_extreme, 1),
	V("0x7fffffffffffffff * 2 == -2", 1),

	/* division by zero makes the whole condition false */
	V("1 / 0 == 0", 0),
	V("1 % 0 == 0", 0),
	V("!(1 / 0)", 0),
	V("1 / 0 || 1", 0),
	V("1 || 1 / 0", 1), /* short-circuit: never divides */
	V("0 && 1 / 0", 0),
	V("pid / (tid - 1240) == 0", 0),

	/* bitwise */
	V("(6 & 3) == 2", 1),
	V("(6 | 3) == 7", 1),
	V("(6 ^ 3) == 5", 1),
	V("~0 == -1", 1),
	V("~5 == -6", 1),
	V("(arg2 & 0x40) != 0", 1),
	V("(arg2 & 0x1) == 1", 1),
	V("(arg2 & 0x2) == 0", 1),

	/* comparisons are signed */
	V("-1 < 0", 1),
	V("-1 <= -1", 1),
	V("-1 > 0", 0),
	V("0 >= -1", 1),
	V("0xffffffffffffffff < 1", 1),
	V("2 < 1", 0),
	V("2 <= 1", 0),
	V("2 > 1", 1),
	V("2 >= 3", 0),
	V("1 < 1", 0),
	V("1 <= 1", 1),
	V("1 > 1", 0),
	V("1 >= 1", 1),
	V("1 == 2", 0),
	V("1 != 1", 0),

	/* logical, short-circuit, results are 0 or 1 */
	V("!0", 1),
	V("!5", 0),
	V("!!5 == 1", 1),
	V("(5 && 7) == 1", 1),
	V("(0 || 7) == 1", 1),
	V("(0 || 0) == 0", 1),
	V("(3 && 0) == 0", 1),
	V("0 || 0 || 0 || 2", 1),
	V("1 && 1 && 1 && 0", 0),
	V("!(pid == 1234)", 0),
	V("!(comm == \"nginx\")", 0),

	/* precedence: C rules */
	V("1 + 2 * 3 == 7", 1),
	V("(1 + 2) * 3 == 9", 1),
	V("10 - 4 - 3 == 3", 1),
	V("100 / 10 / 5 == 2", 1),
	V("2 * 3 % 4 == 2", 1),
	V("1 | 2 ^ 3 & 4 == 3", 1),   /* 1 | (2 ^ (3 & (4 == 3))) */
	V("(1 | 2 ^ 3 & 4) == 3", 1), /* 1 | (2 ^ (3 & 4)) */
	V("(1 | 2 ^ 3 & 6) == 1", 1), /* 1 | (2 ^ (3 & 6)), not ((1 | 2) ^ 3) & 6 */
	V("1 == 1 & 2", 0),           /* (1 == 1) & 2 */
	V("1 < 2 == 1", 1),           /* (1 < 2) == 1 */
	V("3 > 2 > 1", 0),            /* (3 > 2) > 1 */
	V("1 || 0 && 0", 1),          /* 1 || (0 && 0) */
	V("(1 || 0) && 0", 0),
	V("0 && 0 || 1", 1),
	V("-2 * -3 == 6", 1),
	V("!0 + 1 == 2", 1),          /* (!0) + 1 */
	V("~1 + 1 == -1", 1),
	V("-(1 + 2) == -3", 1),
	V("pid == 1234 || pid == 1 && tid == 0", 1),
	V("(pid == 1234 || pid == 1) && tid == 0", 0),
	V("((((((((1))))))))", 1),

	/* strings and globs */
	V("comm ~ \"ngin*\"", 1),
	V("comm ~ \"*x\"", 1),
	V("comm ~ \"*\"", 1),
	V("comm ~ \"n?inx\"", 1),
	V("comm ~ \"n?nx\"", 0),
	V("comm ~ \"nginx?\"", 0),
	V("comm ~ \"nginx*\"", 1),
	V("comm ~ \"**n**x**\"", 1),
	V("comm ~ \"ng\"", 0),
	V("comm !~ \"ng*\"", 0),
	V("comm !~ \"bash*\"", 1),
	V("comm == \"ngin*\"", 0),
	VE("comm ~ \"kworker/*\"", expr_vector_env_kworker, 1),
	VE("comm ~ \"kworker/?:*H\"", expr_vector_env_kworker, 1),
	VE("comm ~ \"kworker/*:*\"", expr_vector_env_kworker, 1),
	VE("comm ~ \"kworker/*X\"", expr_vector_env_kworker, 0),
	V("str(arg1) == \"/etc/passwd\"", 1),
	V("str(arg1) ~ \"/etc/*\"", 1),
	V("str(arg1) ~ \"/etc/*wd\"", 1),
	V("str(arg1) ~ \"/usr/*\"", 0),
	V("str(arg1) != \"/etc/shadow\"", 1),
	/* entry.argN at an exit: the entry's arguments, which the vectors' environment holds */
	V("ret == -ENOENT && str(entry.arg1) ~ \"/etc/*\"", 1),
	V("ret == -ENOENT && str(entry.arg1) ~ \"/usr/*\"", 0),
	V("(int)entry.arg0 == -100 && entry.arg3 == 0644", 1),
	V("entry.arg2 == 0x80241 && entry.arg2 != arg1", 1),
	VERRAT("entry.arg1 == 0", VEC_ENTRY, "column 1: 'entry.arg1' is not available here: only at an exit point"),
	VERRAT("str(entry.arg1) == \"x\"", VEC_ENTRY, "'entry.arg1' is not available here"),
	VERR("str(entry.arg6) == \"x\"", "expected arg0..arg5 inside str(), got name 'entry.arg6'"),
	V("str(arg0) == \"x\"", 0), /* arg0 is -100: a failed read makes the condition false */
	V("str(arg0) != \"x\"", 0),
	VE("str(arg1) == \"\"", expr_vector_env_kworker, 0), /* NULL pointer */
	VE("str(arg2) == \"\"", expr_vector_env_kworker, 1),
	VE("str(arg2) ~ \"*\"", expr_vector_env_kworker, 1),
	VE("str(arg2) ~ \"?\"", expr_vector_env_kworker, 0),
	VE("str(arg3) == \"a?b*c\"", expr_vector_env_kworker, 1), /* == has no wildcards */
	VE("str(arg3) ~ \"a?b*c\"", expr_vector_env_kworker, 1),
	/* strings compare on their first 63 bytes */
	VE("str(arg0) ~ \"/usr/lib/*\"", expr_vector_env_kworker, 1),
	VE("str(arg0) ~ \"*.so\"", expr_vector_env_kworker, 0),
	VE("str(arg0) == \"/usr/lib/x86_64-linux-gnu/some/very/long/path/that/goes/on/and/\"",
	   expr_vector_env_kworker, 1),
	VE("str(arg0) ~ \"*/on/and/\"", expr_vector_env_kworker, 1),
	VE("str(arg0) ~ \"*/on/and/on*\"", expr_vector_env_kworker, 0),
	/* backtracking-heavy glob: 63 'a's against a pattern that cannot match */
	VE("str(arg4) ~ \"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\"",
	   expr_vector_env_kworker, 0),
	VE("str(arg4) ~ \"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a\"",
	   expr_vector_env_kworker, 1),
	VE("str(arg4) ~ \"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*?\"",
	   expr_vector_env_kworker, 1),
	V("comm == \"nginx\" && str(arg1) ~ \"/etc/*\" && ret == -ENOENT", 1),
	V("comm == \"a\\\"b\" || comm == \"\\\\\"", 0),

	/* tracepoint record fields */
	V("common_pid == 1234", 1),
	V("__syscall_nr == 257", 1),
	V("dfd == -100", 1),
	V("(flags & 0x40) != 0", 1),
	V("mode == 0644", 1),
	V("small == -1", 1),
	V("usmall == 255", 1),
	V("neg32 == -5", 1),
	V("neg32 < 0", 1),
	V("big == -1", 1),
	V("common_type == 300", 1),
	V("name == \"bash\"", 1),
	V("name ~ \"ba*\"", 1),
	V("name != \"bash\"", 0),
	V("filename == \"/etc/passwd\"", 1),
	V("filename ~ \"/etc/*\"", 1),
	V("filename ~ \"*shadow\"", 0),
	V("emptyloc == \"\"", 1),
	V("longloc ~ \"/usr/*\"", 1),
	V("longloc == \"/usr/lib/x86_64-linux-gnu/some/very/long/path/that/goes/on/and/\"", 1),
	V("badloc == \"\"", 0),   /* data outside the record: false */
	V("past_end == 0", 0),    /* field outside the record: false */
	V("!(past_end == 0)", 0), /* the whole condition, not just the comparison */
	VE("common_pid == 0", expr_vector_env_kworker, 0), /* no record */
	VE("name == \"\"", expr_vector_env_kworker, 0),

	/* duration literals: integers in nanoseconds */
	V("1ms == 1000000", 1),
	V("250us == 250000", 1),
	V("2s == 2000000000", 1),
	V("500ns == 500", 1),
	V("0s == 0 && 0ms == 0 && 0ns == 0", 1),
	V("1ms + 1 == 1000001", 1),
	V("-1ms == -1000000", 1),
	V("1s == 1000ms && 1ms == 1000us && 1us == 1000ns", 1),
	V("9223372036s == 9223372036000000000", 1),
	V("9223372036854775807ns > 0", 1),

	/* $elapsed: set by the caller (2 ms in the default env), unset is false */
	V("$elapsed == 2ms", 1),
	V("$elapsed > 1ms", 1),
	V("$elapsed > 2ms", 0),
	V("$elapsed >= 2ms && $elapsed < 2ms + 1", 1),
	VE("$elapsed > 1ms", expr_vector_env_kworker, 0),
	VE("$elapsed < 1ms", expr_vector_env_kworker, 0),
	VE("!($elapsed > 1ms)", expr_vector_env_kworker, 0), /* the whole condition, not the comparison */
	VE("pid == 88 || $elapsed > 0", expr_vector_env_kworker, 1), /* never read */
	VE("$elapsed == 9223372036854775807", expr_vector_env_extreme, 1),
	/* $duration: since the call's entry, set by the caller at exits (55 ms in the default env) */
	V("$duration == 55ms", 1),
	V("$duration >= 50ms && $duration < 60ms", 1),
	V("$duration > 55ms", 0),
	V("$duration > 1ms && $elapsed == 2ms", 1), /* two variables, each its own */
	V("$duration - $elapsed == 53000us", 1),
	V("ret == -ENOENT && str(entry.arg1) ~ \"/etc/*\" && $duration > 1ms", 1),
	VE("$duration == 1", expr_vector_env_extreme, 1),
	VE("$duration >= 0", expr_vector_env_kworker, 0), /* not known: the whole condition is false */
	VE("!($duration > 1s)", expr_vector_env_kworker, 0),
	VE("pid == 88 || $duration > 0", expr_vector_env_kworker, 1), /* never read */
	VERRAT("$duration > 1ms", VEC_ENTRY, "column 1: '$duration' is not available here: only at an exit point"),

	/* stateful terms on a fresh state: the first evaluation */
	V("$count == 1", 1),
	V("$count", 1),
	V("once", 1),
	V("!once", 0),
	V("after 1", 1),
	V("after 2", 0),
	V("every 1", 1),
	V("every 2", 0),
	V("once && after 1 && every 1 && $count == 1", 1),
	V("ret < 0 && once", 1),
	V("ret > 0 && once", 0),
	V("once + once + once == 3", 1), /* three counters, each at its first */
	VE("$count == 1", expr_vector_env_extreme, 1), /* tid INT64_MIN: the counter is per 32-bit tid */

	/* casts: (TYPE)x keeps TYPE's low bytes and sign- or zero-extends them, as C does */
	VE("ret == -2", expr_vector_env_int_ret, 0),
	VE("ret == 4294967294", expr_vector_env_int_ret, 1),
	VE("(int)ret == -2", expr_vector_env_int_ret, 1),
	VE("(int)ret == -ENOENT && (int)ret < 0", expr_vector_env_int_ret, 1),
	VE("(signed int)ret == -2", expr_vector_env_int_ret, 1),
	VE("(s32)ret == -2 && (__s32)ret == -2 && (int32_t)ret == -2", expr_vector_env_int_ret, 1),
	VE("(unsigned int)ret == 4294967294", expr_vector_env_int_ret, 1),
	VE("(unsigned)ret == -2", expr_vector_env_int_ret, 0),
	VE("(u32)ret == 4294967294 && (uint32_t)ret == 4294967294", expr_vector_env_int_ret, 1),
	VE("(short)ret == -2 && (short int)ret == -2 && (s16)ret == -2", expr_vector_env_int_ret, 1),
	VE("(unsigned short)ret == 65534 && (u16)ret == 65534", expr_vector_env_int_ret, 1),
	VE("(signed char)ret == -2 && (s8)ret == -2 && (int8_t)ret == -2", expr_vector_env_int_ret, 1),
	VE("(unsigned char)ret == 254 && (u8)ret == 254", expr_vector_env_int_ret, 1),
	VE("(long)ret == 4294967294 && (long long)ret == 4294967294 && (s64)ret == 4294967294", expr_vector_env_int_ret, 1),
	VE("(u64)ret == 4294967294 && (unsigned long long)ret == 4294967294", expr_vector_env_int_ret, 1),
	VE("(size_t)ret == 4294967294 && (ssize_t)ret == 4294967294", expr_vector_env_int_ret, 1),
	VE("(int)ret + 1 == -1", expr_vector_env_int_ret, 1),        /* binds like a unary operator */
	VE("(int)(ret + 2) == 0", expr_vector_env_int_ret, 1),       /* 0x100000000: low half 0 */
	VE("-(int)ret == 2 && (int)-ret == 2", expr_vector_env_int_ret, 1),
	VE("(u8)(int)ret == 254 && (int)(u8)ret == 254", expr_vector_env_int_ret, 1),
	VE("( int )ret == -2 && (int) ret == -2", expr_vector_env_int_ret, 1),
	VE("(int)arg0 == -100 && arg0 == 4294967196", expr_vector_env_int_ret, 1),   /* int argument, upper half 0 */
	VE("(int)arg1 == 0x34567880 && (u8)arg1 == 0x80 && (s8)arg1 == -128", expr_vector_env_int_ret, 1),
	VE("(s16)arg2 == -32767 && (u16)arg2 == 32769 && (int)arg2 == -32767", expr_vector_env_int_ret, 1),
	VE("(int)ret == 0 && (s8)tid == 0", expr_vector_env_extreme, 1),          /* INT64_MIN */
	V("(int)0x1fffffffe == -2", 1),                                           /* constants fold */
	V("(unsigned char)-1 == 255 && (short)65535 == -1 && (u32)-1 == 4294967295", 1),
	V("(u8)pid == 210", 1),                                                   /* 1234 & 0xff */
	V("(u8)neg32 == 251 && (s8)neg32 == -5 && (s16)big == -1", 1),            /* record fields */
	V("(int)(pid * 4000000) == 641032704 && pid * 4000000 == 4936000000", 1), /* int overflow wraps */
	VERR("(int)comm == 1", "column 1: the cast '(int)' needs an integer, but 'comm' is a string"),
	VERR("(int)str(arg1) == \"x\"", "column 1: the cast '(int)' needs an integer, but 'str(arg1)' is a string"),
	VERR("(char)ret < 0", "column 2: 'char' is signed on x86 and unsigned on arm64: write (signed char) or (unsigned char)"),
	VERR("(long long long)ret < 0", "column 2: 'long long long' is not a C integer type"),
	VERR("(unsigned signed)ret < 0", "column 2: 'unsigned signed' is not a C integer type"),
	VERR("(short long)ret < 0", "column 2: 'short long' is not a C integer type"),
	VERR("(int ret) < 0", "column 6: expected ')' after the type 'int' of the cast at column 1, got name 'ret'"),
	VERR("(u32 int)ret < 0", "column 6: expected ')' after the type 'u32' of the cast at column 1, got name 'int'"),
	VERR("(int)", "column 6: expected a value after the cast '(int)', got end of input"),
	VERR("(float)ret < 0", "column 2: unknown field 'float'"),
	VERR("(pid_t)ret < 0", "column 2: unknown field 'pid_t'"), /* the kernel's typedefs are for tracepoint fields */

	/* where fields are valid is the resolver's decision */
	VERRAT("ret == 0", VEC_ENTRY, "column 1: 'ret' is not available here: only at an exit point"),
	VERRAT("pid == 1 && ret < 0", VEC_ENTRY, "column 13: 'ret' is not available here"),
	{ .src = "pid == 1234", .expect = 1, .site = VEC_ENTRY },

	/* rejected before anything is attached: column, what was expected */
	VERR("", "column 1: expected a value, got end of input"),
	VERR("pid ==", "column 7: expected a value after '==', got end of input"),
	VERR("comm == ", "column 9: expected a value after '==', got end of input"),
	VERR("pid == == 1", "column 8: expected a value after '==', got '=='"),
	VERR("pid 1234", "column 5: expected an operator or end of input, got number '1234'"),
	VERR("pid == 1 comm", "column 10: expected an operator or end of input, got name 'comm'"),
	VERR("(pid == 1", "column 10: expected ')' to close '(' at column 1, got end of input"),
	VERR("pid == 1)", "column 9: expected an operator or end of input, got ')'"),
	VERR("pid = 1", "column 5: '=' is not an operator: compare with '==', set a variable in an --on action, POINT:{ $v = ... }"),
	VERR("comm == 'nginx'", "column 9: strings are written in double quotes"),
	VERR("comm == \"nginx", "column 9: unterminated string"),
	VERR("comm == \"a\\qb\"", "column 11: unknown escape '\\q'"),
	VERR("pid == 12ab", "column 8: invalid digit 'a' in a decimal number"),
	VERR("pid == 0x", "column 8: expected hexadecimal digits after '0x'"),
	VERR("pid == 09", "column 8: invalid digit '9' in an octal number"),
	VERR("pid == 18446744073709551616", "column 8: number too large"),
	VERR("pid @ 1", "column 5: unexpected character '@'"),
	VERR("pid << 2", "column 5: shift operators"),
	VERR("foo == 1", "column 1: unknown field 'foo'"),
	VERR("pid == 1 && bar", "column 13: unknown field 'bar'"),
	/* stateful terms, rejected */
	VERR("$nosuch > 3", "column 1: unknown variable '$nosuch' (known: $count, $elapsed, $duration, $now; variables of your own are set by --on actions: POINT:{ $nosuch = ... })"),
	VERR("pid == 1 && $Count", "column 13: unknown variable '$Count'"),
	VERR("$ count", "column 1: unexpected character '$'"),
	VERR("ret < 0 && after", "column 17: 'after' needs a count: after N, N a number of 1 or more, got end of input"),
	VERR("every && 1", "column 7: 'every' needs a count: every N, N a number of 1 or more, got '&&'"),
	VERR("after x", "column 7: 'after' needs a count: after N, N a number of 1 or more, got name 'x'"),
	VERR("every -1", "column 7: 'every' needs a count"),
	VERR("every 0", "column 7: 'every' needs a count of 1 or more, got 0"),
	VERR("ret < 0 && after 0", "column 18: 'after' needs a count of 1 or more, got 0"),
	VERR("every 0x8000000000000000", "column 7: 'every' needs a count of 1 or more and at most 9223372036854775807"),
	VERR("every 10ms", "column 7: 'every' counts evaluations, not time: got the duration '10ms'"),
	VERR("once 3", "column 6: expected an operator or end of input, got number '3'"),
	VERR("once()", "column 5: expected an operator or end of input, got '('"),
	VERR("once && once && once && once && once && once && once && once && once",
	     "column 65: too many once/after/every terms: at most 8 in one condition"),
	VERR("$count == \"x\"", "column 8: cannot compare '$count' (an integer) with '\"x\"' (a string)"),
	VERR("str($count) == \"x\"", "column 5: expected arg0..arg5 inside str(), got variable '$count'"),
	/* duration literals, rejected */
	VERR("$elapsed > 5min", "column 12: unknown unit 'min' in a duration (ns, us, ms, s"),
	VERR("$elapsed > 1sec", "column 12: unknown unit 'sec'"),
	VERR("$elapsed > 0x10ms", "column 12: a duration is a decimal number and a unit"),
	VERR("$elapsed > 010ms", "column 12: a duration is a decimal number and a unit"),
	VERR("$elapsed > 9223372037s", "column 12: duration too large: at most 9223372036s"),
	VERR("$elapsed > 12ab", "column 12: invalid digit 'a' in a decimal number"),
	VERR("comm + 1", "column 6: '+' needs integers, but 'comm' is a string"),
	VERR("1 + comm", "column 3: '+' needs integers, but 'comm' is a string"),
	VERR("-comm", "column 1: '-' needs an integer, but 'comm' is a string"),
	VERR("!str(arg1)", "column 1: '!' needs an integer, but 'str(arg1)' is a string"),
	VERR("comm && pid", "column 6: '&&' needs integers, but 'comm' is a string"),
	VERR("comm < \"x\"", "column 6: '<' needs integers"),
	VERR("pid == \"x\"", "column 5: cannot compare 'pid' (an integer) with '\"x\"' (a string)"),
	VERR("comm == 1", "column 6: cannot compare 'comm' (a string) with '1' (an integer)"),
	VERR("\"a\" == \"a\"", "cannot compare two string literals"),
	VERR("comm == name", "cannot compare two string fields"),
	VERR("pid ~ \"x*\"", "column 5: '~' matches a string against a pattern, but 'pid' is an integer"),
	VERR("comm ~ name", "column 8: expected a pattern in double quotes after '~', got 'name'"),
	VERR("\"x*\" ~ comm", "column 1: expected a string field on the left of '~'"),
	VERR("comm", "column 1: 'comm' is a string, not a condition"),
	VERR("\"nginx\"", "is a string, not a condition"),
	VERR("str(arg9) == \"x\"", "column 5: expected arg0..arg5 inside str(), got name 'arg9'"),
	VERR("str(pid) == \"x\"", "expected arg0..arg5 inside str()"),
	VERR("str(arg1 == \"x\"", "column 10: expected ')' to close 'str(' at column 4"),
	VERR("str == 1", "unknown field 'str'"),
	VERR("comm == \"0123456789012345678901234567890123456789012345678901234567890123\"",
	     "column 9: string too long: at most 63 bytes"),
	VERR("((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
	     "expression nested too deeply"),
};

#define EXPR_NR_VECTORS (sizeof(expr_vectors) / sizeof(expr_vectors[0]))

/* ---- sequences: one state, several evaluations ---- */

#define EXPR_SEQ_NO_ELAPSED INT64_MIN

struct expr_seq {
	const char *src;
	const char *expect;      /* '0' or '1' per step: the number of steps */
	const __s64 *tids;       /* per step, or NULL: the default env's tid */
	const __s64 *rets;       /* per step, or NULL: the default env's ret */
	const __s64 *elapsed;    /* per step (EXPR_SEQ_NO_ELAPSED: unset), or NULL: the default env's */
};

#define L(...) ((const __s64[]){ __VA_ARGS__ })
#define NOEL EXPR_SEQ_NO_ELAPSED

static const struct expr_seq expr_seqs[] = {
	/* once, after N, every N: one counter per term, counting its evaluations */
	{ "once", "10000" },
	{ "!once", "01111" },
	{ "after 3", "001111" },
	{ "every 3", "001001001" },
	{ "every 1", "1111" },
	{ "after 1", "1111" },
	{ "once || after 3", "100111" },
	{ "once && once", "1000" },
	{ "once || once", "1100" },
	{ "after 2 && every 2", "0010101" },
	{ "every 2 || every 3", "0101110101" }, /* the second counts only when the first is false */
	/* behind && the counter counts the matches of the left side */
	{ "ret < 0 && every 2", "001001", .rets = L(-1, 0, -1, -2, 0, -1) },
	{ "ret < 0 && after 3", "0000111", .rets = L(-1, 0, -1, 5, -1, -1, -1) },
	{ "ret < 0 || once", "11010", .rets = L(-1, 0, 0, -5, 0) },
	/* a failed evaluation stops before the terms it did not reach */
	{ "1 / (ret + 1) == 1 && every 2", "00100", .rets = L(0, -1, 0, -1, 0) },
	/* global, not per thread */
	{ "every 2", "0101", .tids = L(1, 2, 3, 4) },

	/* $count: per thread, counted at every evaluation */
	{ "$count == 1", "1000" },
	{ "$count >= 3", "0011111" },
	{ "$count == 2", "00110", .tids = L(1, 2, 1, 2, 1) },
	{ "tid == 5 && $count == 2", "0001", .tids = L(5, 6, 6, 5) },
	{ "ret < 0 && $count >= 3", "000101", .rets = L(0, -1, 0, -1, 0, -1) },
	{ "ret == 5 && $count == 3", "001", .rets = L(0, 0, 5) }, /* counted where not read */
	{ "$count % 3 == 0 && once", "0010000" },
	{ "past_end == 0 || $count == 3", "000" }, /* failed reads: false, still counted */
	{ "$count == 3 || past_end == 0", "001" },
	{ "$count == 2", "0101", .tids = L(4294967296LL + 7, 7, 4294967296LL + 8, 8) }, /* 32-bit tids */

	/* $elapsed: the caller's value at each step */
	{ "$elapsed > 1ms", "00101", .elapsed = L(500000, 1000000, 1000001, NOEL, 20000000) },
	{ "!($elapsed > 1ms)", "010", .elapsed = L(NOEL, 5, 2000000) },
	{ "once || $elapsed > 1ms", "101", .elapsed = L(NOEL, NOEL, 5000000) },
	{ "$count > 1 && $elapsed >= 2s && every 2", "00010",
	  .tids = L(7, 7, 7, 7, 7), .elapsed = L(3000000000LL, 3000000000LL, 1000000000LL, 3000000000LL, 3000000000LL) },
};

#undef L
#undef NOEL

#define EXPR_NR_SEQS (sizeof(expr_seqs) / sizeof(expr_seqs[0]))

/* ---- the synthetic tracepoint record ---- */

static const struct {
	const char *name;
	enum expr_field_kind kind;
	unsigned int offset, size;
	int is_signed;
} expr_vector_rec_fields[] = {
	{ "common_type", EXPR_FIELD_REC_INT, 0, 2, 0 },
	{ "common_flags", EXPR_FIELD_REC_INT, 2, 1, 0 },
	{ "common_preempt_count", EXPR_FIELD_REC_INT, 3, 1, 0 },
	{ "common_pid", EXPR_FIELD_REC_INT, 4, 4, 1 },
	{ "__syscall_nr", EXPR_FIELD_REC_INT, 8, 4, 1 },
	{ "dfd", EXPR_FIELD_REC_INT, 16, 8, 1 },
	{ "flags", EXPR_FIELD_REC_INT, 24, 8, 0 },
	{ "mode", EXPR_FIELD_REC_INT, 32, 2, 0 },
	{ "small", EXPR_FIELD_REC_INT, 34, 1, 1 },
	{ "usmall", EXPR_FIELD_REC_INT, 35, 1, 0 },
	{ "neg32", EXPR_FIELD_REC_INT, 36, 4, 1 },
	{ "big", EXPR_FIELD_REC_INT, 40, 8, 0 },
	{ "name", EXPR_FIELD_REC_STR, 48, 16, 0 },
	{ "filename", EXPR_FIELD_REC_LOC, 64, 4, 0 },
	{ "emptyloc", EXPR_FIELD_REC_LOC, 68, 4, 0 },
	{ "longloc", EXPR_FIELD_REC_LOC, 72, 4, 0 },
	{ "badloc", EXPR_FIELD_REC_LOC, 76, 4, 0 },
	{ "past_end", EXPR_FIELD_REC_INT, EXPR_VECTOR_REC_SIZE - 2, 4, 0 },
};

static inline void expr_vector_record(unsigned char rec[EXPR_VECTOR_REC_SIZE])
{
	static const char passwd[] = "/etc/passwd";
	__u16 type = 300, mode = 0644;
	__s32 pid = 1234, nr = 257, neg32 = -5;
	__s64 dfd = -100;
	__u64 flags = 0x80241, big = UINT64_MAX;
	__u32 loc;

	memset(rec, 0, EXPR_VECTOR_REC_SIZE);
	memcpy(rec + 0, &type, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 8, &nr, 4);
	memcpy(rec + 16, &dfd, 8);
	memcpy(rec + 24, &flags, 8);
	memcpy(rec + 32, &mode, 2);
	rec[34] = 0xff;
	rec[35] = 0xff;
	memcpy(rec + 36, &neg32, 4);
	memcpy(rec + 40, &big, 8);
	memcpy(rec + 48, "bash", 4);
	loc = 80 | (sizeof(passwd) << 16);
	memcpy(rec + 64, &loc, 4);
	memcpy(rec + 80, passwd, sizeof(passwd));
	loc = 92 | (1 << 16);
	memcpy(rec + 68, &loc, 4);
	loc = 100 | ((sizeof(expr_vector_long)) << 16);
	memcpy(rec + 72, &loc, 4);
	memcpy(rec + 100, expr_vector_long, sizeof(expr_vector_long));
	loc = (EXPR_VECTOR_REC_SIZE - 4) | (8 << 16);
	memcpy(rec + 76, &loc, 4);
}

/* The resolver of the vectors: builtins, the record's fields, `ret` only at an exit point. */
static inline int expr_vector_resolve(void *ctx, const char *name, struct expr_field *field, char *why,
				      size_t why_size)
{
	enum expr_vector_site site = *(const enum expr_vector_site *)ctx;

	if ((!strcmp(name, "ret") || !strncmp(name, "entry.", 6) || !strcmp(name, "$duration")) && site != VEC_EXIT) {
		snprintf(why, why_size, "only at an exit point");
		return -EINVAL;
	}
	if (!strncmp(name, "entry.arg", 9) && name[9] >= '0' && name[9] <= '5' && !name[10])
		name += 6; /* the environment's arguments are the entry's */
	if (!expr__resolve_builtin(name, field))
		return 0;
	for (size_t i = 0; i < sizeof(expr_vector_rec_fields) / sizeof(expr_vector_rec_fields[0]); i++) {
		if (strcmp(expr_vector_rec_fields[i].name, name))
			continue;
		memset(field, 0, sizeof(*field));
		field->kind = expr_vector_rec_fields[i].kind;
		field->offset = expr_vector_rec_fields[i].offset;
		field->size = expr_vector_rec_fields[i].size;
		field->is_signed = expr_vector_rec_fields[i].is_signed;
		return 0;
	}
	return -ENOENT;
}

static inline int expr_vector_compile(const struct expr_vector *v, struct expr_prog *prog, char *err, size_t size)
{
	enum expr_vector_site site = v->site;
	struct expr_compile_opts opts = { .resolve = expr_vector_resolve, .resolve_ctx = &site };

	return expr__compile(v->src, &opts, prog, err, size);
}

/* Fills @env for @v; @rec is the record's address (NULL: none). */
static inline void expr_vector_env(const struct expr_vector *v, struct expr_env *env, const void *rec)
{
	const struct expr_vector_env *e = v->env ? v->env : &expr_vector_env_default;

	memset(env, 0, sizeof(*env));
	env->pid = e->pid;
	env->tid = e->tid;
	env->ppid = e->ppid;
	env->uid = e->uid;
	env->gid = e->gid;
	env->cpu = e->cpu;
	env->cgroup = e->cgroup;
	env->nr = e->nr;
	env->ret = e->ret;
	for (int i = 0; i < EXPR_NR_ARGS; i++)
		env->args[i] = e->ustr[i] ? (__u64)(uintptr_t)e->ustr[i] : e->args[i];
	memcpy(env->comm, e->comm, strnlen(e->comm, sizeof(env->comm))); /* 16 bytes: no NUL */
	if (rec && !e->no_rec) {
		env->rec = (__u64)(uintptr_t)rec;
		env->rec_size = EXPR_VECTOR_REC_SIZE;
	}
	if (e->has_elapsed) {
		env->vars[EXPR_VAR_ELAPSED] = e->elapsed;
		env->vars_set |= 1u << EXPR_VAR_ELAPSED;
	}
	if (e->has_duration) {
		env->vars[EXPR_VAR_DURATION] = e->duration;
		env->vars_set |= 1u << EXPR_VAR_DURATION;
	}
}

/* Fills @env for step @i of @q. */
static inline void expr_seq_env(const struct expr_seq *q, unsigned int i, struct expr_env *env, const void *rec)
{
	const struct expr_vector v = { .src = q->src };

	expr_vector_env(&v, env, rec);
	if (q->tids)
		env->tid = q->tids[i];
	if (q->rets)
		env->ret = q->rets[i];
	if (q->elapsed) {
		env->vars_set &= ~(1u << EXPR_VAR_ELAPSED);
		env->vars[EXPR_VAR_ELAPSED] = 0;
		if (q->elapsed[i] != EXPR_SEQ_NO_ELAPSED) {
			env->vars[EXPR_VAR_ELAPSED] = q->elapsed[i];
			env->vars_set |= 1u << EXPR_VAR_ELAPSED;
		}
	}
}

static inline int expr_seq_compile(const struct expr_seq *q, struct expr_prog *prog, char *err, size_t size)
{
	const struct expr_vector v = { .src = q->src };

	return expr_vector_compile(&v, prog, err, size);
}

/*
 * ---- variables of your own: set actions and conditions in turn ----
 *
 * A variable sequence runs its steps in order on one table of variables (a
 * fresh one per sequence and evaluator): a step in braces is an action's
 * statements (expr__compile_action(), true when every variable was set),
 * the others conditions; each step has its thread and $now. Names are
 * defined by the actions in step order, so a condition reads what an
 * earlier step sets. The expected results are those of the steps in order.
 */
struct expr_var_step {
	const char *src;	/* "{ ... }": an action's statements; else a condition */
	__s64 tid, now;
	int expect;
};

struct expr_var_seq {
	const char *what;
	const struct expr_var_step *steps;
	unsigned int nr;
};

#define MS 1000000LL
#define VSEQ(what, ...) { what, (const struct expr_var_step[]){ __VA_ARGS__ }, \
	sizeof((const struct expr_var_step[]){ __VA_ARGS__ }) / sizeof(struct expr_var_step) }
/*
 * issue #25's example: openat fails three times within 10 ms on one thread.
 * One failure is the three triggers at that point, in order: the first's
 * condition (a new burst?) and, when it holds, its action; the second's
 * action; the third's condition (the snapshot).
 */
#define FAIL_NEW(tid, t, fires) \
	{ "$now - $first[tid] > 10ms", tid, t, 1 }, \
	{ "{ $first[tid] = $now; $fails[tid] = 0 }", tid, t, 1 }, \
	{ "{ $fails[tid] += 1 }", tid, t, 1 }, \
	{ "$fails[tid] >= 3 && $now - $first[tid] < 10ms", tid, t, fires }
#define FAIL_MORE(tid, t, fires) \
	{ "$now - $first[tid] > 10ms", tid, t, 0 }, \
	{ "{ $fails[tid] += 1 }", tid, t, 1 }, \
	{ "$fails[tid] >= 3 && $now - $first[tid] < 10ms", tid, t, fires }

static const struct expr_var_seq expr_var_seqs[] = {
	VSEQ("per thread, 0 until set",
	     { "{ $n[tid] += 1 }", 1, 0, 1 }, { "$n[tid] == 1", 1, 0, 1 }, { "$n[tid] == 0", 2, 0, 1 },
	     { "{ $n[tid]++ }", 2, 0, 1 }, { "{ $n[tid]++; $n[tid]++ }", 1, 0, 1 }, { "$n[tid] == 3", 1, 0, 1 },
	     { "$n[tid] == 1", 2, 0, 1 }, { "{ $n[tid]-- }", 2, 0, 1 }, { "$n[tid] == 0 && tid == 2", 2, 0, 1 },
	     { "$n[tid] == 3", 4294967297LL, 0, 1 }),	/* 32-bit tids: 2^32 + 1 is thread 1, as in BPF */
	VSEQ("global, and $now",
	     { "{ $last = $now }", 1, 100 * MS, 1 }, { "$now - $last < 10ms", 2, 105 * MS, 1 },
	     { "$now - $last < 10ms", 1, 120 * MS, 0 }, { "$last == 100ms", 3, 0, 1 },
	     { "{ $g++; $g++; $g -= 1 }", 1, 0, 1 }, { "$g == 1", 2, 0, 1 },
	     { "{ $g = $g * 10 + $last / 1ms }", 2, 0, 1 }, { "$g == 110", 1, 0, 1 }),
	VSEQ("wraparound, negative values, a failed evaluation",
	     { "{ $x = -5; $x -= 10 }", 1, 0, 1 }, { "$x == -15", 1, 0, 1 },
	     { "{ $x = 9223372036854775807; $x += 1 }", 1, 0, 1 }, { "$x < 0", 1, 0, 1 },
	     { "$x / 0 == 1 || 1", 1, 0, 0 }, /* division by zero: false, whatever follows */
	     { "{ $y = 1 / ($x - $x) }", 1, 0, 0 }, { "$y == 0", 1, 0, 1 }),
	VSEQ("three failures within 10 ms, issue #25's example",
	     FAIL_NEW(7, 1000 * MS, 0), FAIL_MORE(7, 1003 * MS, 0), FAIL_MORE(7, 1005 * MS, 1),
	     /* more than 10 ms after the first: a new burst, counted from 1; another thread its own */
	     FAIL_NEW(7, 1030 * MS, 0), FAIL_NEW(8, 1031 * MS, 0), FAIL_MORE(7, 1035 * MS, 0),
	     FAIL_MORE(8, 1032 * MS, 0), FAIL_NEW(7, 1041 * MS, 0), /* 11 ms after its first */
	     FAIL_MORE(8, 1033 * MS, 1), FAIL_MORE(7, 1042 * MS, 0), FAIL_MORE(7, 1050 * MS, 1)),
};

#undef FAIL_NEW
#undef FAIL_MORE
#undef VSEQ
#undef MS

#define EXPR_NR_VAR_SEQS (sizeof(expr_var_seqs) / sizeof(expr_var_seqs[0]))

/*
 * Compiles step @s of a variable sequence with the sequence's names @vars:
 * an action's statements (in braces) or a condition.
 */
static inline int expr_var_step_compile(const struct expr_var_step *s, struct expr_vars *vars, struct expr_prog *prog,
					char *err, size_t size)
{
	struct expr_compile_opts opts = { .vars = vars };
	char body[256];
	size_t n = strlen(s->src);

	if (s->src[0] != '{')
		return expr__compile(s->src, &opts, prog, err, size);
	snprintf(body, sizeof(body), "%.*s", (int)(n > 2 ? n - 2 : 0), s->src + 1);
	return expr__compile_action(body, &opts, prog, err, size);
}

/* As a recording does: every action's variables defined before any condition reads them. */
static inline int expr_var_seq_define(const struct expr_var_seq *q, struct expr_vars *vars, char *err, size_t size)
{
	struct expr_prog prog;

	for (unsigned int k = 0; k < q->nr; k++)
		if (q->steps[k].src[0] == '{' && expr_var_step_compile(&q->steps[k], vars, &prog, err, size))
			return -EINVAL;
	return 0;
}

/* The environment of step @s: the default one with its thread and $now. */
static inline void expr_var_step_env(const struct expr_var_step *s, struct expr_env *env)
{
	const struct expr_vector v = { .src = s->src };

	expr_vector_env(&v, env, NULL);
	env->tid = s->tid;
	env->vars[EXPR_VAR_NOW] = s->now;
	env->vars_set |= 1u << EXPR_VAR_NOW;
}

/*
 * Writes into @buf a condition that compiles to exactly EXPR_MAX_INSNS
 * instructions (@extra_terms > 0: longer, to be refused) and is true in the
 * default environment only after evaluating every instruction.
 */
static inline void expr_vector_longest(char *buf, size_t size, int extra_terms)
{
	/* "pid == K" is 3 instructions, each "||" adds 2: 5 * 26 - 2 = 128 */
	int terms = (EXPR_MAX_INSNS + 2) / 5 + extra_terms;
	size_t n = 0;

	_Static_assert((EXPR_MAX_INSNS + 2) % 5 == 0, "adjust expr_vector_longest()");
	buf[0] = 0;
	for (int i = 1; i <= terms && n < size; i++)
		n += snprintf(buf + n, size - n, "%spid == %d", i > 1 ? " || " : "", i == terms ? 1234 : i);
}

/*
 * Writes into @buf a condition of exactly EXPR_MAX_INSNS + @extra
 * instructions with every stateful instruction in it: $count, $elapsed and
 * EXPR_MAX_HITS once/after/every terms, in one && chain padded with
 * "pid == 1234" and "1" terms. In the default environment it holds at the
 * first evaluation only (once), after reading every instruction.
 */
static inline void expr_vector_longest_stateful(char *buf, size_t size, int extra)
{
	static const char *const hits[EXPR_MAX_HITS] = {
		"once", "after 1", "every 1", "once", "after 1", "every 1", "once", "every 1",
	};
	/* "$count >= 1" and "$elapsed > 1ms" are 3 each, "&& X" adds 2 + X */
	int rem = EXPR_MAX_INSNS + extra - 3 - 5 - 3 * EXPR_MAX_HITS;
	size_t n = snprintf(buf, size, "$count >= 1 && $elapsed > 1ms");

	for (int i = 0; i < EXPR_MAX_HITS; i++)
		n += snprintf(buf + n, size - n, " && %s", hits[i]);
	while (rem % 5 && n < size) {
		n += snprintf(buf + n, size - n, " && 1");
		rem -= 3;
	}
	for (; rem > 0 && n < size; rem -= 5)
		n += snprintf(buf + n, size - n, " && pid == 1234");
}

#endif
