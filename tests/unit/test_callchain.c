// SPDX-License-Identifier: BSD-2-Clause
/*
 * A sample's call stack as auxtrig script prints it (user/decode/callchain.c),
 * against the lines perf 6.1's script prints: frames innermost first, the
 * PERF_CONTEXT_* markers not printed but choosing the address space of the
 * frames after them, user frames relative to their binary and named from its
 * ELF symbols (this test's own executable, mapped where a process would map
 * it), kernel frames at their address and named from a kallsyms file.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/callchain.h"
#include "auxtrig/sys/elf_sym.h"
#include "tmpdir.h"

#define USER_BASE	0x7f1200000000ULL
#define KERNEL_BASE	0xffffffff81000000ULL

/* a function of this executable, for a user frame inside it */
__attribute__((noinline)) int callchain_test_frame(int x);
__attribute__((noinline)) int callchain_test_frame(int x)
{
	return x * 3 + 1;
}

struct fixture {
	struct binaries *b;
	char exe[4096];
	char kallsyms[4200];
	__u64 frame_off;	/* callchain_test_frame's file offset */
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	ssize_t n;
	int fd;

	if (!fx)
		return -1;
	n = readlink("/proc/self/exe", fx->exe, sizeof(fx->exe) - 1);
	if (n <= 0 || elf_sym__file_offset(fx->exe, "callchain_test_frame", &fx->frame_off))
		return -1;
	fx->exe[n] = '\0';
	if (!tmpdir__template(fx->kallsyms, sizeof(fx->kallsyms), "kallsyms"))
		return -1;
	fd = mkstemp(fx->kallsyms);
	if (fd < 0)
		return -1;
	close(fd);
	fx->b = binaries__new(NULL, "/nonexistent");
	if (!fx->b || binaries__add_mmap(fx->b, USER_BASE, 0x100000, 0, fx->exe, false, NULL, 0) ||
	    binaries__add_mmap(fx->b, KERNEL_BASE, 0x1000000, KERNEL_BASE, "[kernel.kallsyms]_text", true, NULL, 0))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->kallsyms);
	binaries__delete(fx->b);
	free(fx);
	return 0;
}

/* What callchain__fprintf() prints for @nr entries at @ips (copied to an odd address first). */
static char *print(struct fixture *fx, const __u64 *ips, size_t nr, size_t *frames)
{
	static unsigned char buf[8 * 64 + 1];
	static char out[8192];
	FILE *f;

	memset(out, 0, sizeof(out));
	f = fmemopen(out, sizeof(out), "w");

	assert_non_null(f);
	assert_true(nr <= 64);
	memcpy(buf + 1, ips, 8 * nr);	/* a callchain is read wherever the record put it */
	*frames = callchain__fprintf(fx->b, buf + 1, nr, f);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void test_callchain_kernel_and_user_frames(void **state)
{
	struct fixture *fx = *state;
	__u64 user = USER_BASE + fx->frame_off + 4;
	__u64 ips[] = {
		(__u64)PERF_CONTEXT_KERNEL, KERNEL_BASE + 0x210, KERNEL_BASE + 0x100,
		(__u64)PERF_CONTEXT_USER, user, 0xbe552274c0854800ULL,
	};
	char want[8192];
	size_t frames;

	write_file(fx->kallsyms, "ffffffff81000100 T do_thing\n"
				 "ffffffff81000100 t do_thing_alias\n"
				 "ffffffff81000200 t other_thing\n"
				 "ffffffff81000300 d some_data\n"
				 "ffffffff81000400 T mod_func\t[some_mod]\n");
	assert_int_equal(binaries__add_kallsyms(fx->b, fx->kallsyms), 0);
	snprintf(want, sizeof(want),
		 "\tffffffff81000210 other_thing+0x10 ([kernel.kallsyms])\n"
		 /* aliases: the last of the file, as perf 6.1 (fixup_end, then fixup_duplicate) */
		 "\tffffffff81000100 do_thing_alias+0x0 ([kernel.kallsyms])\n"
		 "\t%16" PRIx64 " callchain_test_frame+0x4 (%s)\n"
		 "\tbe552274c0854800 [unknown] ([unknown])\n",
		 (uint64_t)(fx->frame_off + 4), fx->exe);
	assert_string_equal(print(fx, ips, 6, &frames), want);
	assert_int_equal(frames, 4);
	/* past the data symbol and the module's: still the last code symbol of the kernel image */
	ips[1] = KERNEL_BASE + 0x410;
	assert_non_null(strstr(print(fx, ips, 2, &frames), "\tffffffff81000410 other_thing+0x210 ([kernel.kallsyms])\n"));
	assert_int_equal(frames, 1);
}

static void test_callchain_markers_choose_the_space(void **state)
{
	struct fixture *fx = *state;
	/* a kernel address in user context has no user mapping: unknown, not the kernel's symbol */
	__u64 ips[] = { (__u64)PERF_CONTEXT_USER, KERNEL_BASE + 0x100, (__u64)PERF_CONTEXT_HV,
			(__u64)PERF_CONTEXT_MAX };
	size_t frames;

	write_file(fx->kallsyms, "ffffffff81000100 T do_thing\n");
	assert_int_equal(binaries__add_kallsyms(fx->b, fx->kallsyms), 0);
	assert_string_equal(print(fx, ips, 4, &frames), "\tffffffff81000100 [unknown] ([unknown])\n");
	assert_int_equal(frames, 1);
	/* no marker: the address says */
	assert_string_equal(print(fx, ips + 1, 1, &frames), "\tffffffff81000100 do_thing+0x0 ([kernel.kallsyms])\n");
	/* an empty chain, or one of markers only, prints nothing */
	assert_string_equal(print(fx, ips, 0, &frames), "");
	assert_string_equal(print(fx, ips + 2, 2, &frames), "");
	assert_int_equal(frames, 0);
}

static void test_callchain_kallsyms_refused(void **state)
{
	struct fixture *fx = *state;
	__u64 ips[] = { KERNEL_BASE + 0x100 };
	size_t frames;

	/* kptr_restrict: every address reads 0; garbage lines are skipped */
	write_file(fx->kallsyms, "0000000000000000 T do_thing\nnot a line\nffffffff81000100 TT x\n\n");
	assert_int_equal(binaries__add_kallsyms(fx->b, fx->kallsyms), -ENODATA);
	assert_string_equal(print(fx, ips, 1, &frames), "\tffffffff81000100 [unknown] ([kernel.kallsyms])\n");
	assert_int_equal(binaries__add_kallsyms(fx->b, "/nonexistent/kallsyms"), -ENOENT);
	assert_int_equal(callchain_test_frame(1), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_callchain_kernel_and_user_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callchain_markers_choose_the_space, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callchain_kallsyms_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
