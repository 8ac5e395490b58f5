// SPDX-License-Identifier: BSD-2-Clause
/*
 * The format a syscall entry's records get in the file when they carry their
 * user string (event_list__string_field, event_list__file_format), on the
 * fixture tracefs's sys_enter_openat; printed back through tp_print as perf
 * would print it.
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

#include "auxtrig/format/tp_print.h"
#include "auxtrig/gate_abi.h"
#include "auxtrig/record/event_list.h"
#include "auxtrig/sys/tracefs.h"
#include "perf_oracle.h"

static void test_event_list_string_format(void **state)
{
	struct event_list l = { 0 };
	struct tp_format f = { 0 };
	const struct tp_field *s;
	unsigned char rec[48 + 4 + 16] = { 0 };
	uint64_t ptr = 0x48d004, mode = 0;
	uint32_t loc;
	int32_t nr = 257;
	uint64_t dfd = 0xffffff9c;
	char *text, out[256];

	(void)state;
	tracefs__set_root(test_fixture_path("tracefs"));
	assert_true(event_list__add_tp(&l, "syscalls", "sys_enter_openat", 1) >= 0);
	assert_true(event_list__add_tp(&l, "syscalls", "sys_exit_openat", 1) >= 0);
	s = event_list__string_field(&l.ev[0].fmt);
	assert_non_null(s);
	assert_string_equal(s->name, "filename");
	assert_null(event_list__string_field(&l.ev[1].fmt));	/* an exit has none */
	assert_int_equal(event_list__file_format(&l.ev[1], &text), 0);
	assert_null(text);

	assert_int_equal(event_list__file_format(&l.ev[0], &text), 0);
	assert_non_null(text);
	assert_non_null(strstr(text, "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
				     "\tfield:__data_loc char[] filename_str;\toffset:48;\tsize:4;\tsigned:0;\n\nprint fmt:"));
	assert_int_equal(tp_format__parse(text, &f), 0);
	assert_int_equal(f.id, l.ev[0].fmt.id);
	/* the record the gate writes: fixed fields, the loc at 48, the string at 52 */
	memcpy(rec + 8, &nr, 4);
	memcpy(rec + 16, &dfd, 8);
	memcpy(rec + 24, &ptr, 8);
	memcpy(rec + 40, &mode, 8);
	loc = (10u << 16) | 52;
	memcpy(rec + 48, &loc, 4);
	memcpy(rec + 52, "/dev/null", 10);
	assert_int_equal(tp_print__format(&f, rec, sizeof(rec), out, sizeof(out)), 0);
	assert_string_equal(out, "dfd: 0xffffff9c, filename: \"/dev/null\", flags: 0x00000000, mode: 0x00000000");
	tp_format__exit(&f);
	free(text);
	event_list__exit(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_list_string_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
