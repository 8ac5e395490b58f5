// SPDX-License-Identifier: BSD-2-Clause
/*
 * The syscall view (auxtrig script --format=syscalls): the syscall tables of
 * x86-64 and arm64, errno names, each argument kind as syscall_args.h says,
 * and whole files written as record writes them (the formats of the fixture
 * tracefs, openat's with its string field as event_list gives it) read back
 * line by line: paired calls with their duration, unfinished calls, exits
 * without their entry, raw_syscalls numbers named by the file's
 * architecture, a call recorded twice printed once, other records in place.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/syscall_args.h"
#include "auxtrig/decode/syscall_view.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/format/tracing_data.h"
#include "auxtrig/record/cpu_events.h"
#include "auxtrig/record/event_list.h"
#include "auxtrig/sys/errno_name.h"
#include "auxtrig/sys/syscall_table.h"
#include "perf_oracle.h"

/* ---- the tables ---------------------------------------------------------- */

static void test_syscall_view_tables(void **state)
{
	const struct syscall_table *x86 = syscall_table__for_arch("x86_64");
	const struct syscall_table *arm = syscall_table__for_arch("aarch64");

	(void)state;
	assert_non_null(x86);
	assert_non_null(arm);
	assert_ptr_equal(syscall_table__for_arch("arm64"), arm);
	assert_null(syscall_table__for_arch("riscv64"));
	assert_null(syscall_table__for_arch(NULL));
	assert_string_equal(syscall_table__entry(x86, 257)->name, "openat");
	assert_string_equal(syscall_table__entry(arm, 56)->name, "openat");
	assert_string_equal(syscall_table__entry(x86, 35)->name, "nanosleep");
	assert_string_equal(syscall_table__entry(arm, 35)->name, "unlinkat");
	/* table names and tracepoint names */
	assert_string_equal(syscall_table__entry(x86, 4)->name, "stat");
	assert_string_equal(syscall_table__tp_name(x86, 4), "newstat");
	assert_string_equal(syscall_table__tp_name(arm, 39), "umount");
	assert_int_equal(syscall_table__nr(arm, "umount"), 39);
	assert_int_equal(syscall_table__nr(arm, "umount2"), 39);
	assert_int_equal(syscall_table__nr(x86, "openat"), 257);
	assert_int_equal(syscall_table__nr(x86, "no_such_call"), -1);
	/* arm64 has no open(); reserved numbers have no tracepoint */
	assert_int_equal(syscall_table__nr(arm, "open"), -1);
	assert_null(syscall_table__tp_name(x86, 134));	/* uselib */
	assert_null(syscall_table__entry(x86, -1));
	assert_null(syscall_table__entry(x86, 100000));
	assert_string_equal(syscall_table__arch(arm), "arm64");
}

static void test_syscall_view_errno(void **state)
{
	(void)state;
	assert_string_equal(errno_name__find(2)->name, "ENOENT");
	assert_string_equal(errno_name__find(2)->text, "No such file or directory");
	assert_string_equal(errno_name__find(133)->name, "EHWPOISON");
	assert_string_equal(errno_name__find(512)->name, "ERESTARTSYS");
	assert_null(errno_name__find(0));
	assert_null(errno_name__find(4000));
	assert_int_equal(errno_name__value("EACCES"), 13);
	assert_int_equal(errno_name__value("ENOPE"), 0);
}

/* ---- the arguments ----------------------------------------------------------- */

static struct tp_field field(const char *name, const char *type)
{
	struct tp_field f = { .size = 8 };

	snprintf(f.name, sizeof(f.name), "%s", name);
	snprintf(f.type, sizeof(f.type), "%s", type);
	return f;
}

static const char *fmt3(const char *call, const char *arch, struct tp_field *f, const __u64 *v, const char *const *s,
			size_t n)
{
	static char buf[1024];
	struct syscall_arg a[6];

	for (size_t i = 0; i < n; i++)
		a[i] = (struct syscall_arg){ .field = &f[i], .value = v[i], .str = s ? s[i] : NULL };
	syscall_args__format(call, arch, a, n, buf, sizeof(buf));
	return buf;
}

static void test_syscall_view_args(void **state)
{
	struct tp_field open_f[4] = { field("dfd", "int"), field("filename", "const char *"), field("flags", "int"),
				      field("mode", "umode_t") };
	const char *path[4] = { NULL, "/x/.git/config", NULL, NULL };
	const char *odd[4] = { NULL, "a\"b\\c\n\x01", NULL, NULL };
	__u64 rdonly[4] = { 0xffffff9cULL, 0x48d004, 0, 0x4bb7e0 };
	__u64 creat[4] = { 3, 0x48d004, 01 | 0100 | 01000 | 02000000, 0644 };
	__u64 dir[4] = { 0xffffff9cULL, 0x48d004, 0200000 | 0400000, 0 };
	__u64 odd_bits[4] = { 0xffffff9cULL, 0, 2 | 040000000000ULL, 0 };
	struct tp_field mmap_f[6] = { field("addr", "unsigned long"), field("len", "unsigned long"),
				      field("prot", "unsigned long"), field("flags", "unsigned long"),
				      field("fd", "unsigned long"), field("off", "unsigned long") };
	__u64 mmap_v[6] = { 0, 8192, 3, 0x22, 0xffffffffffffffffULL, 0 };
	struct tp_field unl[3] = { field("dfd", "int"), field("pathname", "const char *"), field("flag", "int") };
	__u64 unl_v[3] = { 7, 0, 0x200 };
	struct tp_field acc[2] = { field("filename", "const char *"), field("mode", "int") };
	__u64 acc_v[2] = { 0x1000, 4 | 1 }, acc_f[2] = { 0x1000, 0 };
	struct tp_field stat_f[4] = { field("dfd", "int"), field("filename", "const char *"),
				      field("statbuf", "struct stat *"), field("flag", "int") };
	__u64 stat_v[4] = { 0xffffff9cULL, 0x10, 0x7ffd0000, 0x100 | 0x1000 | 0x40000 };
	char buf[128];

	(void)state;
	/* AT_FDCWD (an int in its 8-byte slot), the path, O_RDONLY; mode left out without O_CREAT */
	assert_string_equal(fmt3("openat", "x86_64", open_f, rdonly, path, 4),
			    "dfd: AT_FDCWD, filename: \"/x/.git/config\", flags: O_RDONLY");
	assert_string_equal(fmt3("openat", "x86_64", open_f, creat, path, 4),
			    "dfd: 3, filename: \"/x/.git/config\", flags: O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, mode: 0644");
	/* the same bits are other flags on arm64 */
	assert_string_equal(fmt3("openat", "x86_64", open_f, dir, NULL, 4),
			    "dfd: AT_FDCWD, filename: 0x48d004, flags: O_RDONLY|O_DIRECTORY|O_NOFOLLOW");
	assert_string_equal(fmt3("openat", "aarch64", open_f, dir, NULL, 4),
			    "dfd: AT_FDCWD, filename: 0x48d004, flags: O_RDONLY|O_DIRECT|O_LARGEFILE");
	/* a NULL pointer, unnamed bits, escapes */
	assert_string_equal(fmt3("openat", "x86_64", open_f, odd_bits, NULL, 4),
			    "dfd: AT_FDCWD, filename: NULL, flags: O_RDWR");
	assert_string_equal(fmt3("openat", "x86_64", open_f, rdonly, odd, 4),
			    "dfd: AT_FDCWD, filename: \"a\\\"b\\\\c\\n\\x01\", flags: O_RDONLY");
	assert_string_equal(fmt3("mmap", "x86_64", mmap_f, mmap_v, NULL, 6),
			    "addr: 0, len: 8192, prot: PROT_READ|PROT_WRITE, flags: MAP_PRIVATE|MAP_ANONYMOUS, fd: -1, off: 0");
	assert_string_equal(fmt3("unlinkat", "x86_64", unl, unl_v, NULL, 3),
			    "dfd: 7, pathname: NULL, flag: AT_REMOVEDIR");
	assert_string_equal(fmt3("access", "x86_64", acc, acc_v, NULL, 2), "filename: 0x1000, mode: R_OK|X_OK");
	assert_string_equal(fmt3("access", "x86_64", acc, acc_f, NULL, 2), "filename: 0x1000, mode: F_OK");
	assert_string_equal(fmt3("newfstatat", "x86_64", stat_f, stat_v, NULL, 4),
			    "dfd: AT_FDCWD, filename: 0x10, statbuf: 0x7ffd0000, flag: AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH|0x40000");

	syscall_args__ret("openat", -2, buf, sizeof(buf));
	assert_string_equal(buf, "-1 ENOENT (No such file or directory)");
	syscall_args__ret("openat", 3, buf, sizeof(buf));
	assert_string_equal(buf, "3");
	syscall_args__ret("mmap", 0x7f3a2c000000LL, buf, sizeof(buf));
	assert_string_equal(buf, "0x7f3a2c000000");
	syscall_args__ret("mmap", -12, buf, sizeof(buf));
	assert_string_equal(buf, "-1 ENOMEM (Out of memory)");
	syscall_args__ret("read", -512, buf, sizeof(buf));
	assert_string_equal(buf, "-1 ERESTARTSYS");
	syscall_args__ret("lseek", -5000, buf, sizeof(buf));
	assert_string_equal(buf, "-5000");
	/* a string cut to the buffer keeps its closing quote */
	assert_string_equal(syscall_args__quote("abcdefgh", buf, 6), "\"abc\"");
}

/* ---- whole files ------------------------------------------------------------- */

struct fixture {
	struct test_datafile file;
	struct event_list l;
	struct pdata_writer *w;
	__u64 t;
};

/* event index -> the id its samples carry */
#define ID_OF(i) (EVENT_ID_BASE + (i))

enum { EV_ENTER_OPENAT, EV_EXIT_OPENAT, EV_RAW_ENTER, EV_RAW_EXIT, EV_SWITCH, EV_ENTER_UNLINKAT, EV_EXIT_UNLINKAT };

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_int_equal(test_datafile__new(&f->file), 0);
	tracefs__set_root(test_fixture_path("tracefs"));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	event_list__exit(&f->l);
	test_datafile__delete(&f->file);
	tracefs__set_root(NULL);
	free(f);
	return 0;
}

/*
 * The file's header: the events record would write for @with_openat (the
 * openat and unlinkat tracepoints, openat's with its string field) and
 * raw_syscalls, plus sched_switch, tracing data as record builds it.
 */
static void begin(struct fixture *f, bool with_openat)
{
	static const char *const tps[][2] = {
		[EV_ENTER_OPENAT] = { "syscalls", "sys_enter_openat" }, [EV_EXIT_OPENAT] = { "syscalls", "sys_exit_openat" },
		[EV_RAW_ENTER] = { "raw_syscalls", "sys_enter" },	[EV_RAW_EXIT] = { "raw_syscalls", "sys_exit" },
		[EV_SWITCH] = { "sched", "sched_switch" },		[EV_ENTER_UNLINKAT] = { "syscalls", "sys_enter_unlinkat" },
		[EV_EXIT_UNLINKAT] = { "syscalls", "sys_exit_unlinkat" },
	};
	static char *argv[] = { "auxtrig", "record", "-S", "-w", "syscall:*", "--on",
				"syscall:openat:exit if ret == -ENOENT && str(entry.arg1) ~ \"*config*\":snapshot,once",
				"--", "git", "status" };
	struct tracing_event ev[8];
	char *texts[7] = { 0 };
	__u64 marker = MARKER_ID;
	struct perf_event_attr a;
	char name[128], buf[256], tracefs[4096];
	void *td;
	size_t td_len, len;

	for (size_t i = 0; i < 7; i++)
		assert_int_equal(event_list__add_tp(&f->l, tps[i][0], tps[i][1], 1), (int)i);
	assert_int_equal(event_list__index(&f->l), 0);
	f->w = pdata_writer__open(f->file.path, true);
	assert_non_null(f->w);
	/* the fixture's system call numbers are x86-64's, whatever machine runs the test */
	pdata_writer__set_machine(f->w, "x86_64");
	for (size_t i = 0; i < 7; i++) {
		__u64 id = ID_OF(i);

		if (!with_openat && (i == EV_ENTER_OPENAT || i == EV_EXIT_OPENAT || i >= EV_ENTER_UNLINKAT))
			continue;
		cpu_events__attr_tracepoint(&a, f->l.ev[i].fmt.id, false);
		snprintf(name, sizeof(name), "%s:%s", tps[i][0], tps[i][1]);
		assert_int_equal(pdata_writer__add_attr(f->w, &a, name, &id, 1), 0);
	}
	cpu_events__attr_tracepoint(&a, f->l.marker_type, false);
	assert_int_equal(pdata_writer__add_attr(f->w, &a, "auxtrig:snapshot", &marker, 1), 0);
	assert_int_equal(pdata_writer__set_cmdline(f->w, sizeof(argv) / sizeof(argv[0]), argv), 0);
	len = 0;
	for (size_t i = 0; i < 7; i++) {
		if (!with_openat && (i == EV_ENTER_OPENAT || i == EV_EXIT_OPENAT || i >= EV_ENTER_UNLINKAT))
			continue;
		assert_int_equal(event_list__file_format(&f->l.ev[i], &texts[i]), 0);
		ev[len++] = (struct tracing_event){ tps[i][0], tps[i][1], texts[i] };
	}
	ev[len++] = (struct tracing_event){ "auxtrig", "snapshot", f->l.marker_format };
	snprintf(tracefs, sizeof(tracefs), "%s", test_fixture_path("tracefs"));
	assert_int_equal(tracing_data__build(tracefs, ev, len, &td, &td_len), 0);
	for (size_t i = 0; i < 7; i++)
		free(texts[i]);
	assert_int_equal(pdata_writer__set_tracing_data(f->w, td, td_len), 0);
	free(td);
	assert_int_equal(pdata_writer__begin_data(f->w), 0);
	len = synth__comm_record(buf, sizeof(buf), 100, 100, "git");
	assert_int_equal(pdata_writer__write(f->w, buf, len), 0);
	len = synth__comm_record(buf, sizeof(buf), 100, 101, "worker");
	assert_int_equal(pdata_writer__write(f->w, buf, len), 0);
	f->t = 5000000000ULL;
}

/* One sample of event @ev by thread @tid at @dt ns after the previous one, with payload @raw. */
static void sample(struct fixture *f, int ev, __u32 tid, __u64 dt, const void *raw, size_t raw_len)
{
	unsigned char smp[1024] = { 0 };
	struct pdata_sample_head *h = (void *)smp;
	/* u32 size + payload, padded so the sample ends on 8 bytes */
	size_t raw_size = ((sizeof(*h) + 4 + raw_len + 7) & ~(size_t)7) - sizeof(*h) - 4;
	__u32 rs = (__u32)raw_size;
	__u16 type = (__u16)f->l.ev[ev].fmt.id;

	assert_true(sizeof(*h) + 4 + raw_size <= sizeof(smp));
	f->t += dt;
	h->header.type = PERF_RECORD_SAMPLE;
	h->header.misc = PERF_RECORD_MISC_USER;
	h->header.size = (__u16)(sizeof(*h) + 4 + raw_size);
	h->id = ID_OF(ev);
	h->ip = 0x401000;
	h->pid = 100;
	h->tid = tid;
	h->time = f->t;
	h->period = 1;
	memcpy(smp + sizeof(*h), &rs, 4);
	memcpy(smp + sizeof(*h) + 4, raw, raw_len);
	memcpy(smp + sizeof(*h) + 4, &type, 2);
	assert_int_equal(pdata_writer__write(f->w, smp, h->header.size), 0);
}

/* sys_enter_openat: dfd, filename pointer, flags, mode; @path as its filename_str (NULL: none recorded). */
static void enter_openat(struct fixture *f, __u32 tid, __u64 dt, const char *path)
{
	unsigned char r[512] = { 0 };
	__u64 dfd = 0xffffff9cULL, fn = 0x55d0c0a00010ULL, flags = 0, mode = 0x4bb7e0;
	__s32 nr = 257;
	__u32 loc = 0, plen = path ? (__u32)strlen(path) + 1 : 0;

	memcpy(r + 8, &nr, 4);
	memcpy(r + 16, &dfd, 8);
	memcpy(r + 24, &fn, 8);
	memcpy(r + 32, &flags, 8);
	memcpy(r + 40, &mode, 8);
	if (path)
		loc = plen << 16 | 52;
	memcpy(r + 48, &loc, 4);
	memcpy(r + 52, path ? path : "", plen);
	sample(f, EV_ENTER_OPENAT, tid, dt, r, 52 + plen);
}

static void exit_call(struct fixture *f, int ev, __u32 tid, __u64 dt, __s64 nr, __s64 ret)
{
	unsigned char r[24] = { 0 };

	memcpy(r + 8, &nr, 8);	/* __syscall_nr (int) then ret at 16; raw: id at 8, ret at 16 */
	memcpy(r + 16, &ret, 8);
	sample(f, ev, tid, dt, r, sizeof(r));
}

static void raw_enter(struct fixture *f, __u32 tid, __u64 dt, __s64 nr, const __u64 args[6])
{
	unsigned char r[64] = { 0 };

	memcpy(r + 8, &nr, 8);
	memcpy(r + 16, args, 48);
	sample(f, EV_RAW_ENTER, tid, dt, r, sizeof(r));
}

/* auxtrig:snapshot number @nr, taken by trigger 1 of thread @tid, which saw @value. */
static void snapshot_rec(struct fixture *f, __u64 dt, __u32 nr, __s32 tid, __s64 value)
{
	struct own_snapshot_rec r = { .nr = nr, .records = 31, .tid = tid, .value = value };
	unsigned char smp[256] = { 0 };
	struct pdata_sample_head *h = (void *)smp;
	__u32 rs = (__u32)(((sizeof(*h) + 4 + sizeof(r) + 7) & ~(size_t)7) - sizeof(*h) - 4);

	snprintf(r.reason, sizeof(r.reason), "on#1");
	r.common_type = (__u16)f->l.marker_type;
	f->t += dt;
	h->header.type = PERF_RECORD_SAMPLE;
	h->header.size = (__u16)(sizeof(*h) + 4 + rs);
	h->id = MARKER_ID;
	h->pid = h->tid = 99;
	h->time = f->t;
	h->period = 1;
	memcpy(smp + sizeof(*h), &rs, 4);
	memcpy(smp + sizeof(*h) + 4, &r, sizeof(r));
	assert_int_equal(pdata_writer__write(f->w, smp, h->header.size), 0);
}

/* The view of the file as text (malloc()ed). */
static char *view(struct fixture *f)
{
	struct pdata_reader *r;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_int_equal(pdata_writer__finish_round(f->w), 0);
	assert_int_equal(pdata_writer__close(f->w), 0);
	pdata_writer__delete(f->w);
	f->w = NULL;
	r = pdata_reader__open(f->file.path);
	assert_non_null(r);
	assert_int_equal(syscall_view__print(r, f->file.path, out), 0);
	fclose(out);
	pdata_reader__delete(r);
	return text;
}

/* Paired calls of two threads, durations, the path and ENOENT; an exit without entry; an unfinished call. */
static void test_syscall_view_pairs(void **state)
{
	struct fixture *f = *state;
	char *text;

	begin(f, true);
	enter_openat(f, 100, 0, "/x/.git/config");
	enter_openat(f, 101, 2000, "/etc/hosts");	/* another thread's call inside the first */
	exit_call(f, EV_EXIT_OPENAT, 100, 8000, 257, -2);
	exit_call(f, EV_EXIT_OPENAT, 101, 1500, 257, 5);
	exit_call(f, EV_EXIT_OPENAT, 100, 1000, 257, 4);	/* its entry was before the file */
	enter_openat(f, 101, 1000000, NULL);		/* no string recorded: the pointer */
	text = view(f);
	assert_string_equal(text,
		"    5.000000 (  0.010 ms): git/100 openat(dfd: AT_FDCWD, filename: \"/x/.git/config\", flags: O_RDONLY) = -1 ENOENT (No such file or directory)\n"
		"    5.000002 (  0.009 ms): worker/101 openat(dfd: AT_FDCWD, filename: \"/etc/hosts\", flags: O_RDONLY) = 5\n"
		"    5.000012 (          ): git/100 openat(<entry not recorded>) = 4\n"
		"    5.001012 (          ): worker/101 openat(dfd: AT_FDCWD, filename: 0x55d0c0a00010, flags: O_RDONLY) ... <unfinished: no exit recorded>\n");
	free(text);
}

/*
 * raw_syscalls: numbers named by the file's architecture, arguments by the
 * call's enter format when the file has it; a call seen by both its
 * tracepoint and raw_syscalls is one line, with the string; a lost exit
 * makes the call unfinished at the thread's next entry; other events in place.
 */
static void test_syscall_view_raw(void **state)
{
	struct fixture *f = *state;
	const __u64 unl[6] = { 0xffffff9cULL, 0x1234, 0x200, 0, 0, 0 };
	const __u64 nap[6] = { 0x7ffd0000, 0, 0, 0, 0, 0 };
	unsigned char sw[64] = { 0 };
	char *text;

	begin(f, true);
	raw_enter(f, 100, 0, 263, unl);			/* unlinkat on x86-64 */
	exit_call(f, EV_RAW_EXIT, 100, 3000, 263, -21);
	raw_enter(f, 100, 1000, 257, (const __u64[6]){ 0xffffff9cULL, 0x55d0c0a00010ULL, 0, 0, 0, 0 });
	enter_openat(f, 100, 10, "/x/.git/config");	/* the same call's own tracepoint */
	exit_call(f, EV_EXIT_OPENAT, 100, 4000, 257, -2);
	exit_call(f, EV_RAW_EXIT, 100, 10, 257, -2);
	raw_enter(f, 100, 1000, 35, nap);		/* nanosleep: no format in the file */
	sample(f, EV_SWITCH, 100, 500, sw, sizeof(sw));
	raw_enter(f, 100, 1000, 39, nap);		/* the nanosleep's exit was lost */
	exit_call(f, EV_RAW_EXIT, 100, 1000, 39, 100);
	text = view(f);
	assert_string_equal(text,
		"    5.000000 (  0.003 ms): git/100 unlinkat(dfd: AT_FDCWD, pathname: 0x1234, flag: AT_REMOVEDIR) = -1 EISDIR (Is a directory)\n"
		"    5.000004 (  0.004 ms): git/100 openat(dfd: AT_FDCWD, filename: \"/x/.git/config\", flags: O_RDONLY) = -1 ENOENT (No such file or directory)\n"
		"    5.000009             : git/100 sched:sched_switch: prev_comm= prev_pid=0 prev_prio=0 prev_state=R ==> next_comm= next_pid=0 next_prio=0\n"
		"    5.000009 (          ): git/100 nanosleep(0x7ffd0000, 0, 0, 0, 0, 0) ... <unfinished: no exit recorded>\n"
		"    5.000010 (  0.001 ms): git/100 getpid(0x7ffd0000, 0, 0, 0, 0, 0) = 100\n");
	free(text);
}

/*
 * A snapshot whose trigger (syscall:openat:exit, the file's --on #1) fired in
 * a call whose raw exit the snapshot cut away: the call ends with the value
 * the trigger saw, said so. Another thread's open call stays unfinished.
 */
static void test_syscall_view_snapshot_cut(void **state)
{
	struct fixture *f = *state;
	const __u64 a[6] = { 0xffffff9cULL, 0x55d0c0a00010ULL, 0, 0, 0, 0 };
	char *text;

	begin(f, true);
	raw_enter(f, 101, 0, 257, a);
	raw_enter(f, 100, 1000, 257, a);
	snapshot_rec(f, 3000, 1, 100, -2);
	text = view(f);
	assert_string_equal(text,
		"    5.000001 (          ): git/100 openat(dfd: AT_FDCWD, filename: 0x55d0c0a00010, flags: O_RDONLY) = -1 ENOENT (No such file or directory) <exit cut by snapshot 1: the value its trigger saw>\n"
		"    5.000004             : ?/99 auxtrig:snapshot: nr=1 reason=on#1 records=31 tid=100 value=-2 lost=0\n"
		"    5.000000 (          ): worker/101 openat(dfd: AT_FDCWD, filename: 0x55d0c0a00010, flags: O_RDONLY) ... <unfinished: no exit recorded>\n");
	free(text);
}

/* Rewrite the file's architecture (HEADER_ARCH, "x86_64" as the fixture sets it) as @arch. */
static void set_arch(const char *path, const char *arch)
{
	char to[16] = { 0 };	/* within the string's 64 bytes */

	assert_true(strlen(arch) < sizeof(to));
	memcpy(to, arch, strlen(arch));
	/* the last one: the feature section follows the data */
	assert_int_equal(test_file_replace_last(path, "x86_64", sizeof("x86_64"), to, sizeof(to)), 0);
}

/* The same numbers are other calls on arm64; without enter formats, six hex words. */
static void test_syscall_view_arm64(void **state)
{
	struct fixture *f = *state;
	const __u64 a[6] = { 0xffffff9cULL, 0x1234, 0x200, 0, 0, 0 };
	struct pdata_reader *r;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	begin(f, false);
	raw_enter(f, 100, 0, 35, a);
	exit_call(f, EV_RAW_EXIT, 100, 3000, 35, 0);
	raw_enter(f, 100, 1000, 56, a);
	exit_call(f, EV_RAW_EXIT, 100, 3000, 56, -13);
	assert_int_equal(pdata_writer__finish_round(f->w), 0);
	assert_int_equal(pdata_writer__close(f->w), 0);
	pdata_writer__delete(f->w);
	f->w = NULL;
	set_arch(f->file.path, "aarch64");
	r = pdata_reader__open(f->file.path);
	assert_non_null(r);
	assert_string_equal(pdata_reader__feature_string(r, PDATA_HEADER_ARCH), "aarch64");
	out = open_memstream(&text, &len);
	assert_int_equal(syscall_view__print(r, f->file.path, out), 0);
	fclose(out);
	pdata_reader__delete(r);
	assert_string_equal(text,
		"    5.000000 (  0.003 ms): git/100 unlinkat(0xffffff9c, 0x1234, 0x200, 0, 0, 0) = 0\n"
		"    5.000004 (  0.003 ms): git/100 openat(0xffffff9c, 0x1234, 0x200, 0, 0, 0) = -1 EACCES (Permission denied)\n");
	free(text);
}

/*
 * Exit formats without fields (fuzz_syscall_view's crasher: the view took the
 * first field of a format that has none): the return value is "?", the raw
 * number unknown, nothing read outside the record.
 */
static void test_syscall_view_bare_formats(void **state)
{
	struct fixture *f = *state;
	static const char bare_exit[] = "name: sys_exit_openat\nID: %u\nformat:\n\nprint fmt: \"\"\n";
	static const char bare_raw[] = "name: sys_exit\nID: %u\nformat:\n\nprint fmt: \"\"\n";
	char t1[256], t2[256], tracefs[4096], *text = NULL, *enter_text = NULL;
	struct tracing_event ev[3];
	struct perf_event_attr a;
	struct pdata_reader *r;
	size_t td_len, len = 0;
	void *td;
	FILE *out;

	assert_int_equal(event_list__add_tp(&f->l, "syscalls", "sys_enter_openat", 1), 0);
	assert_int_equal(event_list__add_tp(&f->l, "syscalls", "sys_exit_openat", 1), 1);
	assert_int_equal(event_list__add_tp(&f->l, "raw_syscalls", "sys_enter", 1), 2);
	assert_int_equal(event_list__add_tp(&f->l, "raw_syscalls", "sys_exit", 1), 3);
	snprintf(t1, sizeof(t1), bare_exit, f->l.ev[1].fmt.id);
	snprintf(t2, sizeof(t2), bare_raw, f->l.ev[3].fmt.id);
	assert_int_equal(event_list__file_format(&f->l.ev[0], &enter_text), 0);
	ev[0] = (struct tracing_event){ "syscalls", "sys_enter_openat", enter_text };
	ev[1] = (struct tracing_event){ "syscalls", "sys_exit_openat", t1 };
	ev[2] = (struct tracing_event){ "raw_syscalls", "sys_exit", t2 };
	snprintf(tracefs, sizeof(tracefs), "%s", test_fixture_path("tracefs"));
	assert_int_equal(tracing_data__build(tracefs, ev, 3, &td, &td_len), 0);
	free(enter_text);
	f->w = pdata_writer__open(f->file.path, true);
	assert_non_null(f->w);
	for (size_t i = 0; i < 4; i++) {
		__u64 id = ID_OF(i);

		if (i == 2)
			continue;
		cpu_events__attr_tracepoint(&a, f->l.ev[i].fmt.id, false);
		assert_int_equal(pdata_writer__add_attr(f->w, &a, i == 3 ? "raw_syscalls:sys_exit" : i ? "syscalls:sys_exit_openat" : "syscalls:sys_enter_openat", &id, 1), 0);
	}
	assert_int_equal(pdata_writer__set_tracing_data(f->w, td, td_len), 0);
	free(td);
	assert_int_equal(pdata_writer__begin_data(f->w), 0);
	f->t = 5000000000ULL;
	enter_openat(f, 100, 0, "/x");
	exit_call(f, 1, 100, 1000, 257, -2);
	exit_call(f, 3, 100, 1000, 257, -2);
	assert_int_equal(pdata_writer__finish_round(f->w), 0);
	assert_int_equal(pdata_writer__close(f->w), 0);
	pdata_writer__delete(f->w);
	f->w = NULL;
	r = pdata_reader__open(f->file.path);
	assert_non_null(r);
	out = open_memstream(&text, &len);
	assert_int_equal(syscall_view__print(r, f->file.path, out), 0);
	fclose(out);
	pdata_reader__delete(r);
	assert_string_equal(text,
		"    5.000000 (  0.001 ms): ?/100 openat(dfd: AT_FDCWD, filename: \"/x\", flags: O_RDONLY) = ?\n"
		"    5.000002 (          ): ?/100 syscall_-1(<entry not recorded>) = ?\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syscall_view_tables),
		cmocka_unit_test(test_syscall_view_errno),
		cmocka_unit_test(test_syscall_view_args),
		cmocka_unit_test_setup_teardown(test_syscall_view_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syscall_view_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syscall_view_arm64, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syscall_view_snapshot_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syscall_view_bare_formats, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
