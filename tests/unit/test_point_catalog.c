// SPDX-License-Identifier: BSD-2-Clause
/*
 * The points a machine offers (point_catalog) against a fixture tracefs, the
 * nearest-name suggestions, and the USDT note reader on handmade notes and on
 * examples/usdt_demo.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/lang/point.h"
#include "auxtrig/lang/point_catalog.h"
#include "auxtrig/sys/elf_usdt.h"
#include "auxtrig/sys/tracefs.h"
#include "perf_oracle.h"

static char listed[8192];

static int collect(const char *point, const char *kind, void *arg)
{
	size_t n = strlen(listed);

	(void)arg;
	snprintf(listed + n, sizeof(listed) - n, "%s %s\n", point, kind);
	return 0;
}

static int list(const char *glob)
{
	listed[0] = '\0';
	return point_catalog__foreach(glob, collect, NULL);
}

static int setup(void **state)
{
	(void)state;
	tracefs__set_root(test_fixture_path("tracefs-names"));
	return 0;
}

static void test_point_catalog_distance(void **state)
{
	(void)state;
	assert_int_equal(point_catalog__distance("openat", "openat"), 0);
	assert_int_equal(point_catalog__distance("opneat", "openat"), 1);	/* a swap */
	assert_int_equal(point_catalog__distance("sched_swich", "sched_switch"), 1);
	assert_int_equal(point_catalog__distance("sendfile", "sendfile64"), 2);
	assert_int_equal(point_catalog__distance("", "abc"), 3);
	assert_int_equal(point_catalog__distance("read", "write"), 4);
}

static void test_point_catalog_lists_syscalls_and_tracepoints(void **state)
{
	(void)state;
	assert_int_equal(list("syscall:*"), 4);
	assert_string_equal(listed, "syscall:openat syscall\nsyscall:openat2 syscall\nsyscall:read syscall\n"
				    "syscall:sendfile64 syscall\n");
	/* the --on forms match the syscall too */
	assert_int_equal(list("syscall:open*:exit"), 2);
	assert_int_equal(list("tp:sched:*"), 3);
	assert_string_equal(listed, "tp:sched:sched_switch tracepoint\ntp:sched:sched_wakeup tracepoint\n"
				    "tp:sched:sched_wakeup_new tracepoint\n");
	/* the -e form */
	assert_int_equal(list("sched:sched_switch"), 1);
	assert_string_equal(listed, "tp:sched:sched_switch tracepoint\n");
	/* everything: 4 syscalls, then all 13 tracepoints (syscalls' own included) */
	assert_int_equal(list(NULL), 4 + 13);
	assert_int_equal(list("nothing*"), 0);
}

static void test_point_catalog_suggests_nearest(void **state)
{
	char buf[512];
	struct point p;
	char why[256];

	(void)state;
	point_catalog__suggest(POINT_NAMES_SYSCALL, NULL, "sendfile", "syscall:%s", buf, sizeof(buf));
	assert_string_equal(buf, " (did you mean syscall:sendfile64?)");
	point_catalog__suggest(POINT_NAMES_SYSCALL, NULL, "opneat", "syscall:%s:enter", buf, sizeof(buf));
	assert_string_equal(buf, " (did you mean syscall:openat:enter?)");
	point_catalog__suggest(POINT_NAMES_TRACEPOINT, NULL, "sched:sched_swich", "tp:%s", buf, sizeof(buf));
	assert_string_equal(buf, " (did you mean tp:sched:sched_switch?)");
	point_catalog__suggest(POINT_NAMES_TRACEPOINT, NULL, "sched:sched_wakup", "%s", buf, sizeof(buf));
	assert_string_equal(buf, " (did you mean sched:sched_wakeup?)");
	/* nothing near, a glob, or the name itself: no suggestion */
	point_catalog__suggest(POINT_NAMES_SYSCALL, NULL, "mmap", "%s", buf, sizeof(buf));
	assert_string_equal(buf, "");
	point_catalog__suggest(POINT_NAMES_SYSCALL, NULL, "open*", "%s", buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* several equally near: all of them, at most three */
	point_catalog__suggest(POINT_NAMES_SYSCALL, NULL, "openat3", "syscall:%s", buf, sizeof(buf));
	assert_string_equal(buf, " (did you mean syscall:openat or syscall:openat2?)");

	/* a parsed point, written back as the user typed it */
	assert_int_equal(point__parse(&p, "syscall:sendfile:exit", why, sizeof(why)), 0);
	point_catalog__suggest_point(&p, "syscall:sendfile:exit", buf, sizeof(buf));
	assert_string_equal(buf, " (did you mean syscall:sendfile64:exit?)");
	assert_int_equal(point__parse(&p, "tp:sched:sched_swich", why, sizeof(why)), 0);
	point_catalog__suggest_point(&p, "tp:sched:sched_swich..syscall:read:exit", buf, sizeof(buf));
	assert_string_equal(buf, " (did you mean tp:sched:sched_switch..syscall:read:exit?)");
}

/* One stapsdt note: 3 addresses of @asz bytes, then provider, name, args. */
static size_t note(unsigned char *out, unsigned int asz, const char *prov, const char *name, const char *args)
{
	unsigned int namesz = 8, type = 3, descsz;
	size_t at = 12, d;
	unsigned long long addr[3] = { 0x401000, 0x402000, 0 };

	memcpy(out + at, "stapsdt", 8);
	at += 8;
	d = at;
	for (int i = 0; i < 3; i++) {
		memcpy(out + at, &addr[i], asz);
		at += asz;
	}
	strcpy((char *)out + at, prov);
	at += strlen(prov) + 1;
	strcpy((char *)out + at, name);
	at += strlen(name) + 1;
	strcpy((char *)out + at, args);
	at += strlen(args) + 1;
	descsz = at - d;
	memcpy(out, &namesz, 4);
	memcpy(out + 4, &descsz, 4);
	memcpy(out + 8, &type, 4);
	while (at % 4)
		out[at++] = 0;
	return at;
}

static char probes[1024];

static int on_probe(const struct elf_usdt_probe *pr, void *arg)
{
	size_t n = strlen(probes);

	(void)arg;
	snprintf(probes + n, sizeof(probes) - n, "%s:%s(%s)@%llx;", pr->provider, pr->name, pr->args,
		 (unsigned long long)pr->pc);
	return 0;
}

static void test_point_catalog_usdt_notes(void **state)
{
	unsigned char buf[512];
	size_t n;

	(void)state;
	memset(buf, 0, sizeof(buf));
	n = note(buf, 8, "demo", "request_start", "-4@%eax");
	n += note(buf + n, 8, "demo", "request_done", "");
	probes[0] = '\0';
	assert_int_equal(elf_usdt__parse_notes(buf, n, true, on_probe, NULL), 2);
	assert_string_equal(probes, "demo:request_start(-4@%eax)@401000;demo:request_done()@401000;");
	/* 32-bit addresses */
	n = note(buf, 4, "p", "q", "");
	probes[0] = '\0';
	assert_int_equal(elf_usdt__parse_notes(buf, n, false, on_probe, NULL), 1);
	assert_string_equal(probes, "p:q()@401000;");
	/* truncated: the descriptor runs past the end */
	n = note(buf, 8, "demo", "request_start", "");
	assert_int_equal(elf_usdt__parse_notes(buf, n - 8, true, on_probe, NULL), -EINVAL);
	/* a name without its NUL */
	n = note(buf, 8, "demo", "x", "");
	memset(buf + 12 + 8 + 24, 'a', n - (12 + 8 + 24));
	assert_int_equal(elf_usdt__parse_notes(buf, n, true, on_probe, NULL), -EINVAL);
}

static void test_point_catalog_usdt_of_a_binary(void **state)
{
	char path[4096], glob[4200];
	const char *build = getenv("AUXTRIG_BUILD");

	(void)state;
	snprintf(path, sizeof(path), "%s/examples/usdt_demo", build ? build : "build");
	snprintf(glob, sizeof(glob), "usdt:%s", path);
	assert_int_equal(list(glob), 2);
	{
		char want[9000];

		snprintf(want, sizeof(want), "usdt:%s:demo:request_done usdt\nusdt:%s:demo:request_start usdt\n", path,
			 path);
		assert_string_equal(listed, want);
	}
	snprintf(glob, sizeof(glob), "usdt:%s:*done", path);
	assert_int_equal(list(glob), 1);
	{
		char buf[9000], typed[4200];
		struct point p;
		char why[256];

		snprintf(typed, sizeof(typed), "usdt:%s:demo:request_stat", path);
		assert_int_equal(point__parse(&p, typed, why, sizeof(why)), 0);
		point_catalog__suggest_point(&p, typed, buf, sizeof(buf));
		snprintf(typed, sizeof(typed), " (did you mean usdt:%s:demo:request_start?)", path);
		assert_string_equal(buf, typed);
	}
	assert_int_equal(list("usdt:/nonexistent/file"), -ENOENT);
	assert_int_equal(list("usdt:/etc/passwd"), -ENOEXEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_point_catalog_distance),
		cmocka_unit_test(test_point_catalog_lists_syscalls_and_tracepoints),
		cmocka_unit_test(test_point_catalog_suggests_nearest),
		cmocka_unit_test(test_point_catalog_usdt_notes),
		cmocka_unit_test(test_point_catalog_usdt_of_a_binary),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
