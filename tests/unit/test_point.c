// SPDX-License-Identifier: BSD-2-Clause
/*
 * The point grammar of --on and --window (include/auxtrig/lang/point.h), and the
 * window forms built from it (window_spec__parse()): pure parsing.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "tmpdir.h"

#include "auxtrig/lang/point.h"
#include "auxtrig/lang/window_spec.h"
#include "auxtrig/sys/arch.h"

static struct point p;
static char why[256];

static int parse(const char *text)
{
	return point__parse(&p, text, why, sizeof(why));
}

static void test_point_syscalls(void **state)
{
	(void)state;
	assert_int_equal(parse("syscall:openat:enter"), 0);
	assert_int_equal(p.kind, POINT_TP);
	assert_string_equal(p.sys, "syscalls");
	assert_string_equal(p.name, "sys_enter_openat");
	assert_true(p.at_enter && !p.at_exit);
	assert_int_equal(parse("syscall:close:exit"), 0);
	assert_string_equal(p.name, "sys_exit_close");
	assert_true(p.at_exit && !p.at_enter);
	/* Any syscall: the raw_syscalls tracepoints. */
	assert_int_equal(parse("syscall:*:enter"), 0);
	assert_string_equal(p.sys, "raw_syscalls");
	assert_string_equal(p.name, "sys_enter");
	assert_int_equal(parse("syscall:*:exit"), 0);
	assert_string_equal(p.name, "sys_exit");
	assert_true(p.at_exit);
	assert_int_equal(parse("syscall:openat"), -EINVAL);
	assert_int_equal(parse("syscall:openat:return"), -EINVAL);
	assert_int_equal(parse("syscall:open at:enter"), -EINVAL);
	assert_int_equal(parse("syscall:**:enter"), -EINVAL);
}

static void test_point_tracepoints(void **state)
{
	(void)state;
	assert_int_equal(parse("tp:sched:sched_switch"), 0);
	assert_int_equal(p.kind, POINT_TP);
	assert_string_equal(p.sys, "sched");
	assert_string_equal(p.name, "sched_switch");
	assert_false(p.at_enter || p.at_exit);
	assert_int_equal(parse("tp:sched"), -EINVAL);
	assert_int_equal(parse("tp:sched:"), -EINVAL);
	assert_int_equal(parse("tp:sched:a:b"), -EINVAL);
}

static void test_point_uprobes(void **state)
{
	(void)state;
	assert_int_equal(parse("uprobe:/usr/bin/x:handle"), 0);
	assert_int_equal(p.kind, POINT_UPROBE);
	assert_string_equal(p.path, "/usr/bin/x");
	assert_string_equal(p.symbol, "handle");
	assert_int_equal(p.offset, 0);
	assert_true(p.at_enter);
	assert_int_equal(parse("uprobe:bin/x:handle+0x10"), 0);
	assert_int_equal(p.offset, 0x10);
	assert_int_equal(parse("uretprobe:/usr/bin/x:handle"), 0);
	assert_int_equal(p.kind, POINT_URETPROBE);
	assert_true(p.at_exit && !p.at_enter);
	assert_int_equal(parse("uretprobe:/usr/bin/x:handle+4"), -EINVAL);
	assert_non_null(strstr(why, "no +OFFSET"));
	assert_int_equal(parse("uprobe:/usr/bin/x:"), -EINVAL);
	assert_int_equal(parse("uprobe::handle"), -EINVAL);
	assert_int_equal(parse("uprobe:/usr/bin/x:handle+"), -EINVAL);
	assert_int_equal(parse("uprobe:/usr/bin/x:9lives"), -EINVAL);
}

static void test_point_usdt(void **state)
{
	(void)state;
	assert_int_equal(parse("usdt:./build/examples/usdt_demo:demo:request_done"), 0);
	assert_int_equal(p.kind, POINT_USDT);
	assert_string_equal(p.path, "./build/examples/usdt_demo");
	assert_string_equal(p.provider, "demo");
	assert_string_equal(p.symbol, "request_done");
	assert_true(p.at_enter);
	assert_int_equal(parse("usdt:/bin/x:demo"), -EINVAL);
	assert_int_equal(parse("usdt:/bin/x:demo:"), -EINVAL);
	assert_int_equal(parse("usdt:/bin/x:demo:a:b"), -EINVAL);
}

static void test_point_kprobes(void **state)
{
	(void)state;
	assert_int_equal(parse("kprobe:do_sys_openat2"), 0);
	assert_int_equal(p.kind, POINT_KPROBE);
	assert_string_equal(p.symbol, "do_sys_openat2");
	assert_true(p.at_enter);
	assert_int_equal(parse("kprobe:vfs_read+8"), 0);
	assert_int_equal(p.offset, 8);
	assert_int_equal(parse("kprobe:foo.isra.0"), 0); /* compiler-made kernel symbols */
	assert_int_equal(parse("kretprobe:vfs_read"), 0);
	assert_int_equal(p.kind, POINT_KRETPROBE);
	assert_true(p.at_exit);
	assert_int_equal(parse("kretprobe:vfs_read+8"), -EINVAL);
	assert_int_equal(parse("kprobe:"), -EINVAL);
}

static void test_point_mem(void **state)
{
	(void)state;
	assert_int_equal(parse("mem:0x601040"), 0);
	assert_int_equal(p.kind, POINT_MEM);
	assert_int_equal(p.offset, 0x601040);
	assert_int_equal(p.len, 4);
	assert_int_equal(p.access, POINT_MEM_R | POINT_MEM_W);
	assert_int_equal(parse("mem:0x601040/8:w"), 0);
	assert_int_equal(p.len, 8);
	assert_int_equal(p.access, POINT_MEM_W);
	assert_int_equal(parse("mem:0x401000:x"), 0);
	assert_int_equal(p.access, POINT_MEM_X);
	assert_int_equal(p.len, arch__host()->bp_exec_len); /* x86-64: sizeof(long); arm64: one instruction */
	assert_int_equal(parse("mem:/bin/x:counter/2:rw"), 0);
	assert_string_equal(p.path, "/bin/x");
	assert_string_equal(p.symbol, "counter");
	assert_int_equal(p.len, 2);
	assert_int_equal(p.access, POINT_MEM_R | POINT_MEM_W);
	assert_int_equal(parse("mem:/bin/x:counter"), 0);
	assert_int_equal(p.access, POINT_MEM_R | POINT_MEM_W);
	assert_int_equal(parse("mem:0x10/3"), -EINVAL);
	assert_int_equal(parse("mem:0x10:q"), -EINVAL);
	assert_int_equal(parse("mem:0x10/4:x"), arch__host()->bp_exec_len == 4 ? 0 : -EINVAL);
	assert_int_equal(parse("mem:0x10/8:x"), arch__host()->bp_exec_len == 8 ? 0 : -EINVAL);
	assert_int_equal(parse("mem:0"), -EINVAL);
	assert_int_equal(parse("mem:/bin/x"), -EINVAL);
	assert_int_equal(parse("mem:/bin/x:a:w:z"), -EINVAL);
}

/*
 * Read-only breakpoints: x86 has none, so mem:...:r is refused while
 * parsing, before anything is set up, saying what x86 offers; elsewhere
 * (arm64) they are watched. x86 also watches only aligned addresses.
 */
static void test_point_mem_read_only(void **state)
{
	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	assert_false(point__mem_read_only_ok());
	assert_int_equal(parse("mem:0x601040:r"), -EINVAL);
	assert_string_equal(why, "x86 has no read-only hardware breakpoints: it offers w (writes) and rw (reads and writes)");
	assert_int_equal(parse("mem:/bin/x:counter/2:r"), -EINVAL);
	assert_string_equal(why, "x86 has no read-only hardware breakpoints: it offers w (writes) and rw (reads and writes)");
	assert_int_equal(parse("mem:0x601044/8:w"), -EINVAL);
	assert_string_equal(why, "address 0x601044: x86 watches 8 bytes only at an address aligned to 8");
	assert_int_equal(parse("mem:0x601041:rw"), -EINVAL);
	assert_int_equal(parse("mem:0x601041/1:rw"), 0);
	assert_int_equal(parse("mem:0x601044/4:w"), 0);
	assert_int_equal(parse("mem:0x401003:x"), 0); /* x86 instructions start anywhere */
	assert_int_equal(p.len, 8);
#else
	assert_true(point__mem_read_only_ok());
	assert_int_equal(parse("mem:/bin/x:counter/2:r"), 0);
	assert_int_equal(p.access, POINT_MEM_R);
	assert_int_equal(p.len, 2);
	/* arm64 (sys/arch.h): inside one aligned doubleword; an instruction is 4 bytes at a 4-aligned address */
	assert_int_equal(parse("mem:0x601042/4:w"), 0);
	assert_int_equal(parse("mem:0x601044/8:w"), -EINVAL);
	assert_string_equal(why, "address 0x601044: arm64 watches 8 bytes only inside one aligned block of 8");
	assert_int_equal(parse("mem:0x401000:x"), 0);
	assert_int_equal(p.len, 4);
	assert_int_equal(parse("mem:0x401002:x"), -EINVAL);
	assert_string_equal(why, "address 0x401002: arm64 instructions start at addresses aligned to 4");
#endif
}

static void test_point_unknown(void **state)
{
	(void)state;
	assert_int_equal(parse("fentry:vfs_read"), -EINVAL);
	assert_non_null(strstr(why, "unknown point"));
	assert_int_equal(parse(""), -EINVAL);
}

/* point__format() writes what point__parse() reads back to the same point. */
static void test_point_format_round_trip(void **state)
{
	static const char *const texts[] = {
		"tp:sched:sched_switch", "uprobe:/bin/x:f+0x10", "uretprobe:/bin/x:f", "usdt:/bin/x:demo:done",
		"kprobe:vfs_read+0x8", "kretprobe:vfs_read", "mem:0x601040/8:w", "mem:/bin/x:counter/2:rw",
		NULL, /* an execute breakpoint, as long as this architecture's (sys/arch.h) */
	};
	struct point again;
	char text[512], exec[64];

	(void)state;
	snprintf(exec, sizeof(exec), "mem:0x401000/%u:x", arch__host()->bp_exec_len);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const char *t = texts[i] ? texts[i] : exec;

		assert_int_equal(parse(t), 0);
		point__format(&p, text, sizeof(text));
		assert_string_equal(text, t);
		assert_int_equal(point__parse(&again, text, why, sizeof(why)), 0);
		assert_memory_equal(&again, &p, sizeof(p));
	}
}

static void test_point_windows(void **state)
{
	struct window_spec w;

	(void)state;
	assert_int_equal(window_spec__parse(&w, "syscall:openat"), 0);
	assert_int_equal(w.kind, WINDOW_SYSCALL);
	assert_string_equal(w.start.name, "sys_enter_openat");
	assert_string_equal(w.stop.name, "sys_exit_openat");
	assert_int_equal(window_spec__parse(&w, "syscall:*"), 0);
	assert_int_equal(w.kind, WINDOW_SYSCALL);
	assert_string_equal(w.start.sys, "raw_syscalls");
	assert_string_equal(w.stop.name, "sys_exit");
	assert_int_equal(window_spec__parse(&w, "syscall:openat:exit..syscall:close:enter"), 0);
	assert_int_equal(w.kind, WINDOW_POINTS);
	assert_string_equal(w.start.name, "sys_exit_openat");
	assert_string_equal(w.stop.name, "sys_enter_close");
	assert_int_equal(window_spec__parse(&w, "tp:a:b..syscall:*:exit"), 0);
	assert_string_equal(w.stop.sys, "raw_syscalls");
	/* A path with ".." in it: the split is where a point's prefix follows. */
	assert_int_equal(window_spec__parse(&w, "usdt:/proc/self/../self/exe:p:a..usdt:/proc/self/exe:p:b"), 0);
	assert_string_equal(w.start.path, "/proc/self/../self/exe");
	assert_string_equal(w.start.symbol, "a");
	assert_string_equal(w.stop.symbol, "b");
	assert_int_equal(window_spec__parse(&w, "uprobe:/proc/self/exe:main"), 0);
	assert_int_equal(w.kind, WINDOW_UPROBE);
	assert_int_equal(window_spec__parse(&w, "prog"), 0);
	assert_int_equal(w.kind, WINDOW_PROG);
	/* Refused: one point alone, the same point twice, a bad end, a missing file. */
	assert_int_equal(window_spec__parse(&w, "tp:sched:sched_switch"), -EINVAL);
	assert_int_equal(window_spec__parse(&w, "usdt:/proc/self/exe:p:a"), -EINVAL);
	assert_int_equal(window_spec__parse(&w, "tp:a:b..tp:a:b"), -EINVAL);
	assert_int_equal(window_spec__parse(&w, "tp:a:b..tp:a"), -EINVAL);
	assert_int_equal(window_spec__parse(&w, "tp:a:b..uprobe:/no/such/file:f"), -EINVAL);
	assert_int_equal(window_spec__parse(&w, "syscall:"), -EINVAL);
	assert_int_equal(window_spec__parse(&w, "nonsense"), -EINVAL);
}

/* A uprobe or usdt point on a file that is not ELF is refused by name, not with libbpf's errno 4001. */
static void test_point_check_path(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], text[PATH_MAX + 64];
	FILE *f;

	(void)state;
	assert_non_null(tmpdir__template(dir, sizeof(dir), "auxtrig-point"));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/script.sh", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\necho not ELF\n", f);
	fclose(f);

	snprintf(text, sizeof(text), "uprobe:%s:main", path);
	assert_int_equal(point__parse(&p, text, why, sizeof(why)), 0);
	assert_int_equal(point__check_path(&p, why, sizeof(why)), -ENOEXEC);
	assert_non_null(strstr(why, "is not an ELF file: a uprobe point needs an executable or a shared library"));
	snprintf(text, sizeof(text), "usdt:%s:demo:start", path);
	assert_int_equal(point__parse(&p, text, why, sizeof(why)), 0);
	assert_int_equal(point__check_path(&p, why, sizeof(why)), -ENOEXEC);
	snprintf(text, sizeof(text), "uprobe:%s/none:main", dir);
	assert_int_equal(point__parse(&p, text, why, sizeof(why)), 0);
	assert_int_equal(point__check_path(&p, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no such file"));
	snprintf(text, sizeof(text), "uprobe:%s:main", dir);	/* a directory */
	assert_int_equal(point__parse(&p, text, why, sizeof(why)), 0);
	assert_int_equal(point__check_path(&p, why, sizeof(why)), -ENOENT);
	/* This test's own binary is ELF. */
	assert_int_equal(point__parse(&p, "uprobe:/proc/self/exe:main", why, sizeof(why)), 0);
	assert_int_equal(point__check_path(&p, why, sizeof(why)), 0);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_point_syscalls), cmocka_unit_test(test_point_tracepoints),
		cmocka_unit_test(test_point_uprobes),  cmocka_unit_test(test_point_usdt),
		cmocka_unit_test(test_point_kprobes),  cmocka_unit_test(test_point_mem),
		cmocka_unit_test(test_point_mem_read_only),
		cmocka_unit_test(test_point_unknown),  cmocka_unit_test(test_point_windows),
		cmocka_unit_test(test_point_format_round_trip), cmocka_unit_test(test_point_check_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
