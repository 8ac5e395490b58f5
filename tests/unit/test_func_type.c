// SPDX-License-Identifier: BSD-2-Clause
/*
 * A function's return type from its debug information (func_type): the
 * fixture tests/fixtures/func_types/func_types.c compiled here with gcc
 * (DWARF), stripped (none), with its debug part in a build-id directory
 * (a separate debug file), and with clang -target bpf (BTF); and the
 * examples the kernel tests probe.
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

#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/func_type.h"
#include "auxtrig/sys/log.h"

static char dir[PATH_MAX], src[PATH_MAX];

static void sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd))
		fail_msg("command failed: %s", cmd);
}

/* A file in the test's directory; four at a time may be in use. */
static const char *path(const char *name)
{
	static char p[4][PATH_MAX];
	static unsigned int n;
	char *b = p[n++ % 4];

	snprintf(b, PATH_MAX, "%s/%s", dir, name);
	return b;
}

static int setup(void **state)
{
	const char *top = getenv("AUXTRIG_TOP");

	snprintf(dir, sizeof(dir), "%s/auxtrig-func-type.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(src, sizeof(src), "%s/tests/fixtures/func_types/func_types.c", top ? top : ".");
	/* a shared object with a build id, as distributions ship them */
	sh("cc -g -O1 -fPIC -shared -Wl,--build-id -o %s/dwarf.so %s", dir, src);
	sh("objcopy --strip-debug %s/dwarf.so %s/stripped.so", dir, dir);
	sh("clang -target bpf -g -O2 -c -o %s/btf.o %s", dir, src);
	log__set_level(-1);
	return 0;
}

static int teardown(void **state)
{
	sh("rm -rf '%s'", dir);
	log__set_level(LOG_INFO);
	return 0;
}

struct expect {
	const char *fn;
	unsigned int size;
	bool is_signed, is_int;
	const char *name;
};

static const struct expect expected[] = {
	{ "ret_int", 4, true, true, "int" },
	{ "ret_uint", 4, false, true, "unsigned int" },
	{ "ret_short", 2, true, true, "short int" },
	{ "ret_ushort", 2, false, true, "short unsigned int" },
	{ "ret_schar", 1, true, true, "signed char" },
	{ "ret_uchar", 1, false, true, "unsigned char" },
	{ "ret_long", 8, true, true, "long int" },
	{ "ret_ulong", 8, false, true, "long unsigned int" },
	{ "ret_ssize", 8, true, true, "ssize_t" },
	{ "ret_size", 8, false, true, "size_t" },
	{ "ret_bool", 1, false, true, "_Bool" },
	{ "ret_enum", 4, false, true, "color" },
	{ "ret_enum_signed", 4, true, true, "sign" },
	{ "ret_errcode", 4, true, true, "errcode_t" },
	{ "ret_ptr", 8, false, true, "pointer" },
	{ "ret_void", 0, false, false, "void" },
	{ "ret_double", 8, false, false, "double" },
	{ "ret_struct", 16, false, false, "pair" },
};

static void check_all(const char *file, const char *debug_root, const char *source, bool bpf)
{
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		const struct expect *e = &expected[i];
		struct func_type t;
		int err = func_type__from_elf(file, e->fn, debug_root, &t);

		if (bpf && (!strcmp(e->fn, "ret_double") || !strcmp(e->fn, "ret_struct"))) {
			assert_int_equal(err, -ENOENT); /* not in the BPF build */
			continue;
		}
		if (err)
			fail_msg("%s: %s: %d", file, e->fn, err);
		if (t.size != e->size || t.is_signed != e->is_signed || t.is_int != e->is_int)
			fail_msg("%s: %s returns %s: size %u signed %d int %d, expected %u %d %d", file, e->fn, t.name,
				 t.size, t.is_signed, t.is_int, e->size, e->is_signed, e->is_int);
		/* clang names the integer types the C way, gcc its own way; typedefs and tags are the same */
		if (!bpf || (strstr(e->name, "int") == NULL && strcmp(e->name, "signed char")))
			assert_string_equal(t.name, e->name);
		assert_string_equal(t.source, source);
	}
}

static void test_func_type_dwarf(void **state)
{
	(void)state;
	check_all(path("dwarf.so"), path("nodebug"), "DWARF", false);
}

static void test_func_type_btf(void **state)
{
	(void)state;
	check_all(path("btf.o"), path("nodebug"), "BTF", true);
}

/*
 * A kretprobe's ret, typed from the kernel's BTF: both answers of the
 * capability, the kernel's BTF played by the BPF object's, never this machine's.
 */
static void test_func_type_kernel_btf(void **state)
{
	struct func_type t;

	(void)state;
	func_type__set_kernel_btf(path("btf.o"));
	caps__simulate(CAPS_BTF, 1);
	assert_int_equal(func_type__from_kernel("ret_int", &t), 0);
	assert_true(t.is_int && t.is_signed && t.size == 4);
	assert_string_equal(t.source, "kernel BTF");
	assert_int_equal(func_type__from_kernel("no_such_function", &t), -ENOENT);
	caps__simulate(CAPS_BTF, 0);
	assert_int_equal(func_type__from_kernel("ret_int", &t), -ENODATA);
	caps__simulate(CAPS_BTF, -1);
	func_type__set_kernel_btf(NULL);
}

/* Stripped: nothing to read, unless the debug file is where its build id says. */
static void test_func_type_stripped_and_debug_file(void **state)
{
	struct func_type t;
	char id[128];
	FILE *f;

	(void)state;
	assert_int_equal(func_type__from_elf(path("stripped.so"), "ret_int", path("nodebug"), &t), -ENODATA);
	sh("readelf -n %s | sed -n 's/.*Build ID: //p' >%s/id", path("stripped.so"), dir);
	f = fopen(path("id"), "r");
	assert_non_null(f);
	assert_non_null(fgets(id, sizeof(id), f));
	fclose(f);
	id[strcspn(id, "\n")] = 0;
	assert_true(strlen(id) > 2);
	sh("mkdir -p %s/debug/.build-id/%.2s && objcopy --only-keep-debug %s %s/debug/.build-id/%.2s/%s.debug", dir, id,
	   path("dwarf.so"), dir, id, id + 2);
	check_all(path("stripped.so"), path("debug"), "DWARF of its debug file", false);
}

/* Functions the debug information does not describe, and files that are not ELF. */
static void test_func_type_missing(void **state)
{
	struct func_type t;

	(void)state;
	assert_int_equal(func_type__from_elf(path("dwarf.so"), "no_such_function", NULL, &t), -ENOENT);
	assert_int_equal(func_type__from_elf(path("btf.o"), "no_such_function", NULL, &t), -ENOENT);
	assert_int_equal(func_type__from_elf(path("nonexistent"), "ret_int", NULL, &t), -ENOENT);
	sh("echo 'not an ELF file' >%s/text", dir);
	assert_int_equal(func_type__from_elf(path("text"), "ret_int", NULL, &t), -ENOEXEC);
}

/* The examples the kernel tests probe: handle() and try_open() return int (DWARF of gcc -g). */
static void test_func_type_examples(void **state)
{
	const char *build = getenv("AUXTRIG_BUILD");
	char upd[PATH_MAX];
	struct func_type t;

	(void)state;
	snprintf(upd, sizeof(upd), "%s/examples/uprobe_demo", build ? build : "build");
	assert_int_equal(func_type__from_elf(upd, "handle", NULL, &t), 0);
	assert_int_equal(t.size, 4);
	assert_true(t.is_signed && t.is_int);
	assert_string_equal(t.name, "int");
	assert_int_equal(func_type__from_elf(upd, "try_open", NULL, &t), 0);
	assert_int_equal(t.size, 4);
	assert_true(t.is_signed);
	/* the static libc inside has no debug information */
	assert_int_equal(func_type__from_elf(upd, "getppid", NULL, &t), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_func_type_dwarf),
		cmocka_unit_test(test_func_type_btf),
		cmocka_unit_test(test_func_type_kernel_btf),
		cmocka_unit_test(test_func_type_stripped_and_debug_file),
		cmocka_unit_test(test_func_type_missing),
		cmocka_unit_test(test_func_type_examples),
	};

	return cmocka_run_group_tests_name("func_type", tests, setup, teardown);
}
