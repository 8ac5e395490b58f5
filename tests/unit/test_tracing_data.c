// SPDX-License-Identifier: BSD-2-Clause
/* tracing_data: the HEADER_TRACING_DATA body, byte for byte, from the fixture tracefs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/tracing_data.h"
#include "perf_oracle.h"

static char tracefs[4096];

static int setup(void **state)
{
	snprintf(tracefs, sizeof(tracefs), "%s", test_fixture_path("tracefs"));
	return 0;
}

/* A cursor over the body with the same reads perf's trace-event-read.c does. */
struct cursor {
	const char *p, *end;
};

static void take(struct cursor *c, void *out, size_t n)
{
	assert_true((size_t)(c->end - c->p) >= n);
	memcpy(out, c->p, n);
	c->p += n;
}

static __u32 take_u32(struct cursor *c)
{
	__u32 v;

	take(c, &v, 4);
	return v;
}

static __u64 take_u64(struct cursor *c)
{
	__u64 v;

	take(c, &v, 8);
	return v;
}

static const char *take_str(struct cursor *c)
{
	const char *s = c->p;
	size_t n = strnlen(c->p, c->end - c->p);

	assert_true(c->p + n < c->end);
	c->p += n + 1;
	return s;
}

/* u64 size + file contents equal to the fixture file @rel. */
static void take_file(struct cursor *c, const char *rel, int width)
{
	char path[8192];
	size_t len;
	char *want;
	__u64 size;

	snprintf(path, sizeof(path), "%s/%s", tracefs, rel);
	want = test_read_file(path, &len);
	assert_non_null(want);
	size = width == 4 ? take_u32(c) : take_u64(c);
	assert_int_equal(size, len);
	assert_true((size_t)(c->end - c->p) >= len);
	assert_memory_equal(c->p, want, len);
	c->p += len;
	free(want);
}

static void test_tracing_data_layout(void **state)
{
	static const unsigned char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const struct tracing_event evs[] = {
		{ "syscalls", "sys_enter_openat" },
		{ "sched", "sched_switch" },
		{ "syscalls", "sys_exit_openat" },
		{ "syscalls", "sys_enter_openat" }, /* duplicate: written once */
	};
	struct cursor c;
	unsigned char m[10], u8;
	void *buf;
	size_t len;

	assert_int_equal(tracing_data__build(tracefs, evs, 4, &buf, &len), 0);
	c.p = buf;
	c.end = c.p + len;
	take(&c, m, sizeof(m));
	assert_memory_equal(m, magic, sizeof(m));
	assert_string_equal(take_str(&c), "0.6");
	take(&c, &u8, 1);
	assert_int_equal(u8, 0); /* little endian */
	take(&c, &u8, 1);
	assert_int_equal(u8, sizeof(long));
	assert_int_equal(take_u32(&c), sysconf(_SC_PAGESIZE));
	assert_string_equal(take_str(&c), "header_page");
	take_file(&c, "events/header_page", 8);
	assert_string_equal(take_str(&c), "header_event");
	take_file(&c, "events/header_event", 8);
	assert_int_equal(take_u32(&c), 0); /* ftrace events */
	assert_int_equal(take_u32(&c), 2); /* systems, in order of first use */
	assert_string_equal(take_str(&c), "syscalls");
	assert_int_equal(take_u32(&c), 2);
	take_file(&c, "events/syscalls/sys_enter_openat/format", 8);
	take_file(&c, "events/syscalls/sys_exit_openat/format", 8);
	assert_string_equal(take_str(&c), "sched");
	assert_int_equal(take_u32(&c), 1);
	take_file(&c, "events/sched/sched_switch/format", 8);
	assert_int_equal(take_u32(&c), 0); /* kallsyms */
	take_file(&c, "printk_formats", 4);
	take_file(&c, "saved_cmdlines", 8);
	assert_ptr_equal(c.p, c.end);
	free(buf);
}

static void test_tracing_data_no_events(void **state)
{
	void *buf;
	size_t len;

	assert_int_equal(tracing_data__build(tracefs, NULL, 0, &buf, &len), 0);
	/* magic 10 + "0.6" 4 + 2 + page 4, then headers, then counts 0/0, kallsyms 0, printk, cmdlines */
	assert_true(len > 20);
	free(buf);
}

static void test_tracing_data_unknown_event(void **state)
{
	const struct tracing_event ev = { "syscalls", "sys_enter_nosuch" };
	void *buf = NULL;
	size_t len = 0;
	__u64 id;

	assert_int_equal(tracing_data__build(tracefs, &ev, 1, &buf, &len), -ENOENT);
	assert_null(buf);
	assert_int_equal(tracing_data__event_id(tracefs, &ev, &id), -ENOENT);
}

static void test_tracing_data_rejects_path_names(void **state)
{
	const struct tracing_event bad[] = {
		{ "..", "header_page" }, { "syscalls/../sched", "sched_switch" }, { "syscalls", "" }, { NULL, "x" },
	};
	void *buf;
	size_t len;
	__u64 id;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(tracing_data__build(tracefs, &bad[i], 1, &buf, &len), -EINVAL);
		assert_int_equal(tracing_data__event_id(tracefs, &bad[i], &id), -EINVAL);
	}
}

static void test_tracing_data_event_id_matches_format(void **state)
{
	const struct tracing_event ev = { "syscalls", "sys_enter_openat" };
	char path[8192], want[64];
	char *format;
	__u64 id;

	assert_int_equal(tracing_data__event_id(tracefs, &ev, &id), 0);
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_openat/format", tracefs);
	format = test_read_file(path, NULL);
	assert_non_null(format);
	snprintf(want, sizeof(want), "\nID: %llu\n", (unsigned long long)id);
	assert_non_null(strstr(format, want));
	free(format);
}

static void test_tracing_data_missing_tracefs(void **state)
{
	const struct tracing_event ev = { "syscalls", "sys_enter_openat" };
	void *buf;
	size_t len;

	assert_int_equal(tracing_data__build("/nonexistent/tracefs", &ev, 1, &buf, &len), -ENOENT);
}

/*
 * perf parses the whole body when it opens the file (formats, printk_formats
 * and saved_cmdlines): any count or size off by one shows up as a parse
 * warning or "incompatible file format". The fixture tracefs, a copy of a
 * real one, never the machine's: the host's bodies are what every kernel
 * test's recording writes and perf reads (tests/kernel/).
 */
static void test_tracing_data_perf_parses_body(void **state)
{
	const struct tracing_event evs[] = {
		{ "syscalls", "sys_enter_openat" }, { "sched", "sched_switch" }, { "syscalls", "sys_exit_openat" },
	};
	char *dir, path[4200], *out;
	const char *args[] = { "report", "--header-only", "-i", path, NULL };
	const char *script[] = { "script", "-i", path, NULL };
	struct perf_event_attr a = {};
	struct pdata_writer *w;
	void *buf;
	size_t len;
	__u64 ids[3] = { 11, 12, 13 };

	assert_non_null(perf_oracle__path());
	assert_int_equal(tracing_data__build(tracefs, evs, 3, &buf, &len), 0);
	dir = test_tmpdir__new();
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	w = pdata_writer__open(path, false);
	assert_non_null(w);
	for (int i = 0; i < 3; i++) {
		char name[128];

		a.type = PERF_TYPE_TRACEPOINT;
		a.size = sizeof(a);
		assert_int_equal(tracing_data__event_id(tracefs, &evs[i], &a.config), 0);
		a.sample_type = PDATA_SAMPLE_TYPE;
		a.sample_id_all = 1;
		a.exclude_kernel = 1;
		snprintf(name, sizeof(name), "%s:%s", evs[i].system, evs[i].name);
		assert_int_equal(pdata_writer__add_attr(w, &a, name, &ids[i], 1), 0);
	}
	assert_int_equal(pdata_writer__set_tracing_data(w, buf, len), 0);
	free(buf);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);

	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);
	if (perf_oracle__problem(out))
		fail_msg("perf --header-only: %s", out);
	assert_non_null(strstr(out, "# event : name = sched:sched_switch"));
	free(out);
	assert_int_equal(perf_oracle__run(NULL, script, &out), 0);
	if (perf_oracle__problem(out))
		fail_msg("perf script: %s", out);
	free(out);
	test_tmpdir__delete(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracing_data_layout),
		cmocka_unit_test(test_tracing_data_no_events),
		cmocka_unit_test(test_tracing_data_unknown_event),
		cmocka_unit_test(test_tracing_data_rejects_path_names),
		cmocka_unit_test(test_tracing_data_event_id_matches_format),
		cmocka_unit_test(test_tracing_data_missing_tracefs),
		cmocka_unit_test(test_tracing_data_perf_parses_body),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
