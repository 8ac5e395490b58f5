// SPDX-License-Identifier: BSD-2-Clause
/*
 * The format a syscall entry's records get in the file when they carry their
 * user string (event_list__string_field, event_list__file_format), on the
 * fixture tracefs's sys_enter_openat; printed back through tp_print as perf
 * would print it. raw_syscalls:sys_enter's records carry their call's
 * strings too: its file format (one argN_str per argument, the kernel's
 * print fmt) and the table of string arguments by syscall number.
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
#include <sys/utsname.h>

#include "auxtrig/format/tp_print.h"
#include "auxtrig/gate_abi.h"
#include "auxtrig/record/event_list.h"
#include "auxtrig/sys/syscall_table.h"
#include "auxtrig/sys/tracefs.h"
#include "perf_oracle.h"

static void test_event_list_string_format(void **state)
{
	struct event_list l = { 0 };
	struct tp_format f = { 0 };
	const struct tp_field *s[GATE_MAX_STRS];
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
	assert_int_equal(event_list__string_fields(&l.ev[0].fmt, s, GATE_MAX_STRS), 1);
	assert_string_equal(s[0]->name, "filename");
	assert_int_equal(event_list__string_fields(&l.ev[1].fmt, s, GATE_MAX_STRS), 0);	/* an exit has none */
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

/*
 * A kernel that reads a syscall's user strings into its own records (6.19
 * and later; the tracefs-linux7 fixture, from the arm64 lab's 7.x guest):
 * "__data_loc char[] __filename_val", printed with __get_str(). A BPF
 * program does not see it, so the gate appends its string as on any kernel;
 * the file keeps the kernel's print fmt, and the recorder points the
 * kernel's field at the gate's string (str_slot): it prints as perf prints
 * it (perf 6.1 prints the same in the 7.x guest: test_record_callchain.sh).
 */
static void test_event_list_kernel_strings(void **state)
{
	struct event_list l = { 0 };
	struct tp_format f = { 0 };
	const struct tp_field *s[GATE_MAX_STRS];
	unsigned char rec[52 + 4 + 16] = { 0 };
	uint64_t ptr = 0x48d004, dfd = 0xffffff9c;
	uint32_t loc = (10u << 16) | 56;
	int32_t nr = 56;
	char *text, out[256];

	(void)state;
	tracefs__set_root(test_fixture_path("tracefs-linux7"));
	assert_true(event_list__add_tp(&l, "syscalls", "sys_enter_openat", 1) >= 0);
	assert_int_equal(event_list__string_fields(&l.ev[0].fmt, s, GATE_MAX_STRS), 1);
	assert_int_equal(l.ev[0].nr_str_slots, 1);
	assert_int_equal(l.ev[0].str_slot[0], 48);	/* __filename_val */
	assert_int_equal(event_list__file_format(&l.ev[0], &text), 0);
	assert_non_null(text);
	assert_non_null(strstr(text, "\tfield:__data_loc char[] filename_str;\toffset:52;\tsize:4;\tsigned:0;\n\nprint fmt:"));
	assert_non_null(strstr(text, "print fmt: \"dfd: 0x%08lx, filename: 0x%08lx \\\"%s\\\", flags"));	/* the kernel's */
	assert_int_equal(tp_format__parse(text, &f), 0);
	/* as the recorder writes it: the gate's loc at 52 copied into the kernel's field at 48 */
	memcpy(rec + 8, &nr, 4);
	memcpy(rec + 16, &dfd, 8);
	memcpy(rec + 24, &ptr, 8);
	memcpy(rec + 48, &loc, 4);
	memcpy(rec + 52, &loc, 4);
	memcpy(rec + 56, "/dev/null", 10);
	assert_int_equal(tp_print__format(&f, rec, sizeof(rec), out, sizeof(out)), 0);
	assert_string_equal(out, "dfd: 0xffffff9c, filename: 0x0048d004 \"/dev/null\", flags: O_RDONLY, mode: 0000");
	tp_format__exit(&f);
	free(text);
	/* older kernels have no such field: nothing to point */
	event_list__exit(&l);
	memset(&l, 0, sizeof(l));
	tracefs__set_root(test_fixture_path("tracefs"));
	assert_true(event_list__add_tp(&l, "syscalls", "sys_enter_openat", 1) >= 0);
	assert_int_equal(l.ev[0].nr_str_slots, 0);
	event_list__exit(&l);
	tracefs__set_root(NULL);
}

/*
 * A record with several strings, as the gate writes it: the fixed fields
 * (pointers at @ptr_off), one __data_loc per string from the fixed size on,
 * then the strings.
 */
static size_t strings_record(unsigned char *rec, size_t size, unsigned int fixed, const unsigned int *ptr_off,
			     const char *const *strs, size_t nr)
{
	unsigned int at = fixed + 4 * nr;

	memset(rec, 0, size);
	for (size_t i = 0; i < nr; i++) {
		uint32_t loc = (uint32_t)(strlen(strs[i]) + 1) << 16 | at;
		uint64_t ptr = 0x7ffd0000 + 0x100 * i;

		memcpy(rec + ptr_off[i], &ptr, 8);
		memcpy(rec + fixed + 4 * i, &loc, 4);
		memcpy(rec + at, strs[i], strlen(strs[i]) + 1);
		at += strlen(strs[i]) + 1;
	}
	return at;
}

/*
 * Syscalls with more than one string: renameat2's two paths, getxattr's
 * pathname and name ("name" is found as its own argument, not inside
 * "pathname"), and mount's three, declared "char *".
 */
static void test_event_list_several_strings(void **state)
{
	static const struct {
		const char *name;
		size_t nr;
		const char *fields[3], *strs[3], *printed;
	} cases[] = {
		{ "sys_enter_renameat2", 2, { "oldname", "newname" }, { "/tmp/a", "/tmp/b c" },
		  "olddfd: 0xffffff9c, oldname: \"/tmp/a\", newdfd: 0xffffff9c, newname: \"/tmp/b c\", flags: 0x00000001" },
		{ "sys_enter_getxattr", 2, { "pathname", "name" }, { "/etc/passwd", "user.mime_type" },
		  "pathname: \"/etc/passwd\", name: \"user.mime_type\", value: 0x00000000, size: 0x00000000" },
		{ "sys_enter_mount", 3, { "dev_name", "dir_name", "type" }, { "none", "/mnt", "tmpfs" },
		  "dev_name: \"none\", dir_name: \"/mnt\", type: \"tmpfs\", flags: 0x00000000, data: 0x00000000" },
	};

	(void)state;
	tracefs__set_root(test_fixture_path("tracefs"));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct event_list l = { 0 };
		const struct tp_field *s[GATE_MAX_STRS];
		struct tp_format f = { 0 };
		unsigned int ptr_off[3];
		unsigned char rec[256];
		char *text, out[512], want[128];
		size_t len;

		assert_true(event_list__add_tp(&l, "syscalls", cases[c].name, 1) >= 0);
		assert_int_equal(event_list__string_fields(&l.ev[0].fmt, s, GATE_MAX_STRS), cases[c].nr);
		for (size_t i = 0; i < cases[c].nr; i++) {
			assert_string_equal(s[i]->name, cases[c].fields[i]);
			ptr_off[i] = s[i]->offset;
		}
		assert_int_equal(event_list__file_format(&l.ev[0], &text), 0);
		assert_non_null(text);
		for (size_t i = 0; i < cases[c].nr; i++) {
			snprintf(want, sizeof(want), "\tfield:__data_loc char[] %s_str;\toffset:%u;\tsize:4;\tsigned:0;\n",
				 cases[c].fields[i], l.ev[0].fmt.size + 4 * (unsigned int)i);
			assert_non_null(strstr(text, want));
		}
		assert_int_equal(tp_format__parse(text, &f), 0);
		len = strings_record(rec, sizeof(rec), l.ev[0].fmt.size, ptr_off, cases[c].strs, cases[c].nr);
		if (c == 0) {	/* renameat2(AT_FDCWD, ..., AT_FDCWD, ..., RENAME_NOREPLACE) */
			uint64_t dfd = 0xffffff9c, flags = 1;

			memcpy(rec + 16, &dfd, 8);
			memcpy(rec + 32, &dfd, 8);
			memcpy(rec + 48, &flags, 8);
		}
		assert_int_equal(tp_print__format(&f, rec, len, out, sizeof(out)), 0);
		assert_string_equal(out, cases[c].printed);
		tp_format__exit(&f);
		free(text);
		event_list__exit(&l);
	}
}

/*
 * raw_syscalls:sys_enter: six argN_str fields after args[6], the print fmt
 * as the kernel's (perf script prints what it always did); which arguments
 * are strings comes from each call's sys_enter_ format (the fixture has
 * openat's and unlinkat's: their path is argument 1, at 16 + 8).
 */
static void test_event_list_raw_strings(void **state)
{
	struct event_list l = { 0 };
	const struct syscall_table *t;
	struct tp_format f = { 0 };
	struct utsname u;
	char *text, *kernel;
	long openat, unlinkat;

	(void)state;
	assert_int_equal(uname(&u), 0);
	t = syscall_table__for_arch(u.machine);
	tracefs__set_root(test_fixture_path("tracefs"));
	assert_true(event_list__add_tp(&l, "raw_syscalls", "sys_enter", 1) >= 0);
	assert_true(event_list__add_tp(&l, "raw_syscalls", "sys_exit", 1) >= 0);
	assert_int_equal(event_list__file_format(&l.ev[1], &text), 0);
	assert_null(text);	/* the exit has no strings */
	assert_int_equal(event_list__file_format(&l.ev[0], &text), 0);
	assert_non_null(text);
	assert_non_null(strstr(text, "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
				     "\tfield:__data_loc char[] arg0_str;\toffset:64;\tsize:4;\tsigned:0;\n"));
	assert_non_null(strstr(text, "\tfield:__data_loc char[] arg5_str;\toffset:84;\tsize:4;\tsigned:0;\n\nprint fmt:"));
	assert_int_equal(tracefs__format_text("raw_syscalls", "sys_enter", &kernel), 0);
	assert_string_equal(strstr(text, "print fmt:"), strstr(kernel, "print fmt:"));
	free(kernel);
	assert_int_equal(tp_format__parse(text, &f), 0);
	assert_non_null(tp_format__field(&f, "arg3_str"));
	assert_true(tp_format__field(&f, "arg3_str")->is_dynamic);
	tp_format__exit(&f);
	free(text);

	/* this machine's numbers (the unit test runs on any): openat and unlinkat from the fixture */
	if (t) {
		openat = syscall_table__nr(t, "openat");
		unlinkat = syscall_table__nr(t, "unlinkat");
		assert_true(openat > 0 && (size_t)openat < l.raw_strs.nr);
		assert_int_equal(l.raw_strs.str_off[openat][0], 24);
		assert_int_equal(l.raw_strs.str_off[openat][1], 0);
		assert_int_equal(l.raw_strs.str_off[unlinkat][0], 24);
		assert_int_equal(l.raw_strs.nr_enter, 5);	/* getxattr, mount, openat, renameat2, unlinkat */
		/* getxattr: pathname and name; mount: dev_name, dir_name and type (char *) */
		assert_int_equal(l.raw_strs.str_off[syscall_table__nr(t, "getxattr")][1], 24);
		assert_int_equal(l.raw_strs.str_off[syscall_table__nr(t, "mount")][2], 32);
	} else {
		assert_int_equal(l.raw_strs.nr, 0);	/* no table: no strings, the fields stay empty */
	}
	event_list__exit(&l);
	tracefs__set_root(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_list_string_format),
		cmocka_unit_test(test_event_list_several_strings),
		cmocka_unit_test(test_event_list_raw_strings),
		cmocka_unit_test(test_event_list_kernel_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
