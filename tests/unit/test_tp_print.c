// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tracepoint records printed as their print fmt says (tp_print), on the
 * fixture formats of a real kernel and on handwritten ones; and the formats
 * read back from a HEADER_TRACING_DATA body (tp_formats).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/format/tp_formats.h"
#include "auxtrig/format/tp_print.h"
#include "auxtrig/format/tracing_data.h"
#include "perf_oracle.h"

static char *slurp(const char *rel)
{
	FILE *f = fopen(test_fixture_path(rel), "r");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 65535, f) > 0);
	fclose(f);
	return buf;
}

static void load(struct tp_format *fmt, const char *rel)
{
	char *text = slurp(rel);

	memset(fmt, 0, sizeof(*fmt));
	assert_int_equal(tp_format__parse(text, fmt), 0);
	free(text);
}

struct sched_switch_rec {
	uint16_t common_type;
	uint8_t flags, preempt;
	int32_t common_pid;
	char prev_comm[16];
	int32_t prev_pid, prev_prio;
	int64_t prev_state;
	char next_comm[16];
	int32_t next_pid, next_prio;
};

static void test_tp_print_sched_switch(void **state)
{
	struct sched_switch_rec r = { .common_type = 372, .prev_pid = 42, .prev_prio = 120, .next_pid = 0, .next_prio = 120 };
	struct tp_format fmt;
	char out[512];

	(void)state;
	load(&fmt, "tracefs/events/sched/sched_switch/format");
	assert_int_equal(fmt.id, 372);
	strcpy(r.prev_comm, "openat_demo");
	strcpy(r.next_comm, "swapper/1");
	r.prev_state = 1;	/* TASK_INTERRUPTIBLE */
	assert_int_equal(tp_print__format(&fmt, &r, sizeof(r), out, sizeof(out)), 0);
	assert_string_equal(out, "prev_comm=openat_demo prev_pid=42 prev_prio=120 prev_state=S ==> "
				 "next_comm=swapper/1 next_pid=0 next_prio=120");
	/* running, preempted: R+ */
	r.prev_state = 0x100;
	assert_int_equal(tp_print__format(&fmt, &r, sizeof(r), out, sizeof(out)), 0);
	assert_non_null(strstr(out, " prev_state=R+ ==> "));
	/* two flags with the delimiter */
	r.prev_state = 0x2 | 0x4;
	assert_int_equal(tp_print__format(&fmt, &r, sizeof(r), out, sizeof(out)), 0);
	assert_non_null(strstr(out, " prev_state=D|T ==> "));
	/* a record shorter than its fields: refused, not read past */
	assert_int_equal(tp_print__format(&fmt, &r, 30, out, sizeof(out)), -EINVAL);
	tp_format__exit(&fmt);
}

static void test_tp_print_syscall(void **state)
{
	struct tp_format fmt;
	uint64_t rec[7] = { 0 };
	int32_t nr = 257;
	char out[512];

	(void)state;
	load(&fmt, "tracefs/events/syscalls/sys_enter_openat/format");
	memcpy((char *)rec + 8, &nr, 4);
	rec[2] = 0xffffff9c;
	rec[3] = 0x48d004;
	rec[5] = 0x1a4;
	assert_int_equal(tp_print__format(&fmt, rec, sizeof(rec) - 8, out, sizeof(out)), 0);
	assert_string_equal(out, "dfd: 0xffffff9c, filename: 0x0048d004, flags: 0x00000000, mode: 0x000001a4");
	tp_format__exit(&fmt);
}

#define COMMON "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	       "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static void test_tp_print_expressions(void **state)
{
	static const char text[] =
		"name: t\nID: 7\nformat:\n" COMMON
		"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield:unsigned long args[2];\toffset:16;\tsize:16;\tsigned:0;\n"
		"\tfield:__data_loc char[] name;\toffset:32;\tsize:4;\tsigned:0;\n"
		"\tfield:int mode;\toffset:36;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"NR %ld (%lx, %lx) %s %s %d%% %c [%5d|%-3d|%03x]\", REC->id, REC->args[0], REC->args[1], "
		"__get_str(name), __print_symbolic(REC->mode, { 0, \"ZERO\" }, { 3, \"THREE\" }), "
		"(int)(REC->id * 2 + -1) >> 1, 'x', REC->mode == 3 ? 7 : 8, (REC->mode << 2) | 1, "
		"((unsigned char)(REC->id - 1))\n";
	unsigned char rec[48] = { 0 };
	struct tp_format fmt = { 0 };
	int64_t id = -3;
	uint64_t a0 = 0xabc, a1 = 1;
	uint32_t loc = (6u << 16) | 40;
	int32_t mode = 3;
	char out[256];

	(void)state;
	assert_int_equal(tp_format__parse(text, &fmt), 0);
	assert_int_equal(fmt.id, 7);
	memcpy(rec + 8, &id, 8);
	memcpy(rec + 16, &a0, 8);
	memcpy(rec + 24, &a1, 8);
	memcpy(rec + 32, &loc, 4);
	memcpy(rec + 36, &mode, 4);
	memcpy(rec + 40, "hello", 6);
	assert_int_equal(tp_print__format(&fmt, rec, sizeof(rec), out, sizeof(out)), 0);
	assert_string_equal(out, "NR -3 (abc, 1) hello THREE -4% x [    7|13 |0fc]");
	/* what it cannot evaluate: the fields instead */
	free(fmt.print_fmt);
	fmt.print_fmt = strdup("\"f=%pS\", REC->id");
	assert_int_equal(tp_print__format(&fmt, rec, sizeof(rec), out, sizeof(out)), -EINVAL);
	free(fmt.print_fmt);
	fmt.print_fmt = strdup("\"m=%s\", __print_hex(REC->args, 2)");
	assert_int_equal(tp_print__format(&fmt, rec, sizeof(rec), out, sizeof(out)), -EINVAL);
	tp_print__fields(&fmt, rec, sizeof(rec), out, sizeof(out));
	assert_string_equal(out, "id=-3 args={0xabc,0x1} name=hello mode=3");
	tp_format__exit(&fmt);
}

static void test_tp_formats_from_tracing_data(void **state)
{
	struct tracing_event ev[] = {
		{ "syscalls", "sys_enter_openat", NULL },
		{ "sched", "sched_switch", NULL },
		{ "auxtrig", "mine", "name: mine\nID: 65000\nformat:\n" COMMON
				     "\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: \"v=%d\", REC->v\n" },
	};
	const struct tp_format *f;
	struct tp_formats fs;
	void *td;
	size_t len;

	(void)state;
	assert_int_equal(tracing_data__build(test_fixture_path("tracefs"), ev, 3, &td, &len), 0);
	assert_int_equal(tp_formats__parse(td, len, &fs), 0);
	assert_int_equal(fs.nr, 3);
	f = tp_formats__find(&fs, 372);
	assert_non_null(f);
	assert_string_equal(f->system, "sched");
	assert_string_equal(f->name, "sched_switch");
	assert_non_null(tp_format__field(f, "next_comm"));
	f = tp_formats__find(&fs, 65000);
	assert_non_null(f);
	assert_string_equal(f->system, "auxtrig");
	assert_string_equal(f->print_fmt, "\"v=%d\", REC->v");
	assert_non_null(fs.cmdlines);	/* the fixture's saved_cmdlines */
	tp_formats__exit(&fs);
	/* truncated anywhere: refused or shorter, never read past */
	for (size_t cut = 0; cut < len; cut += 7) {
		int err = tp_formats__parse(td, cut, &fs);

		assert_true(err == -EINVAL || err == 0);
		tp_formats__exit(&fs);
	}
	free(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tp_print_sched_switch),
		cmocka_unit_test(test_tp_print_syscall),
		cmocka_unit_test(test_tp_print_expressions),
		cmocka_unit_test(test_tp_formats_from_tracing_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
