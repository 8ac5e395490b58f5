// SPDX-License-Identifier: BSD-2-Clause
/*
 * What differs between x86-64 and arm64 (include/auxtrig/sys/arch.h): the
 * register layout the gate's compiled programs read, checked against the
 * C library's own description of the build's registers, and the rules of
 * hardware breakpoints of both architectures, on either build.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <asm/ptrace.h>
#include <sys/utsname.h>
#include <cmocka.h>

#include "auxtrig/sys/arch.h"

static char why[256];

/* The build's table entry is the machine it runs on, by the kernel's name for it. */
static void test_arch_host(void **state)
{
	const struct arch *a = arch__host();
	struct utsname u;

	(void)state;
	assert_non_null(a);
	assert_int_equal(uname(&u), 0);
	assert_string_equal(a->name, u.machine);
	assert_string_equal(arch__get(ARCH_X86_64)->short_name, "x86");
	assert_string_equal(arch__get(ARCH_ARM64)->short_name, "arm64");
	assert_null(arch__get(ARCH_NR_KINDS));
}

/*
 * The offsets in struct pt_regs are those of the uapi struct the kernel
 * lays out the same way: x86-64's struct pt_regs, arm64's struct
 * user_pt_regs (the head of the kernel's pt_regs). A table entry that
 * named another register would make a condition read it at every probe.
 */
static void test_arch_regs(void **state)
{
	const struct arch *a = arch__host();

	(void)state;
#if defined(__x86_64__)
	assert_ptr_equal(a, arch__get(ARCH_X86_64));
	assert_int_equal(a->regs_ip, offsetof(struct pt_regs, rip));
	assert_int_equal(a->regs_sp, offsetof(struct pt_regs, rsp));
	assert_int_equal(a->regs_ret, offsetof(struct pt_regs, rax));
	assert_int_equal(a->regs_arg[0], offsetof(struct pt_regs, rdi));
	assert_int_equal(a->regs_arg[1], offsetof(struct pt_regs, rsi));
	assert_int_equal(a->regs_arg[2], offsetof(struct pt_regs, rdx));
	assert_int_equal(a->regs_arg[3], offsetof(struct pt_regs, rcx));
	assert_int_equal(a->regs_arg[4], offsetof(struct pt_regs, r8));
	assert_int_equal(a->regs_arg[5], offsetof(struct pt_regs, r9));
#elif defined(__aarch64__)
	assert_ptr_equal(a, arch__get(ARCH_ARM64));
	assert_int_equal(a->regs_ip, offsetof(struct user_pt_regs, pc));
	assert_int_equal(a->regs_sp, offsetof(struct user_pt_regs, sp));
	assert_int_equal(a->regs_ret, offsetof(struct user_pt_regs, regs[0]));
	for (int i = 0; i < ARCH_NR_REG_ARGS; i++)
		assert_int_equal(a->regs_arg[i], offsetof(struct user_pt_regs, regs[0]) + 8 * i);
#else
	assert_null(a);
#endif
	/* the other architecture's entry: its registers are not this one's */
	assert_int_not_equal(arch__get(ARCH_X86_64)->regs_ip, arch__get(ARCH_ARM64)->regs_ip);
	assert_int_not_equal(arch__get(ARCH_X86_64)->regs_arg[0], arch__get(ARCH_ARM64)->regs_arg[0]);
}

/* x86: watchpoints at addresses aligned to their length, execute breakpoints sizeof(long) anywhere. */
static void test_arch_watch_x86(void **state)
{
	const struct arch *a = arch__get(ARCH_X86_64);

	(void)state;
	assert_false(a->bp_read_only);
	assert_false(a->bp_reports_before_access);
	assert_int_equal(arch__check_watch(a, 0x601040, 8, false, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x601044, 4, false, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x601041, 1, false, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x601044, 8, false, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "address 0x601044: x86 watches 8 bytes only at an address aligned to 8");
	assert_int_equal(arch__check_watch(a, 0x601042, 4, false, why, sizeof(why)), -EINVAL);
	assert_int_equal(arch__check_watch(a, 0x401003, 8, true, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x401000, 4, true, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "an execute breakpoint on x86 watches 8 bytes");
}

/*
 * arm64: loads alone can be watched; LEN bytes anywhere inside one aligned
 * doubleword, never across it; an execute breakpoint is one 4-byte
 * instruction at a 4-aligned address; a watchpoint reports before the access.
 */
static void test_arch_watch_arm64(void **state)
{
	const struct arch *a = arch__get(ARCH_ARM64);

	(void)state;
	assert_true(a->bp_read_only);
	assert_true(a->bp_reports_before_access);
	assert_int_equal(arch__check_watch(a, 0x601040, 8, false, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x601042, 4, false, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x601047, 1, false, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x601044, 8, false, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "address 0x601044: arm64 watches 8 bytes only inside one aligned block of 8");
	assert_int_equal(arch__check_watch(a, 0x601046, 4, false, why, sizeof(why)), -EINVAL);
	assert_int_equal(arch__check_watch(a, 0x401000, 4, true, why, sizeof(why)), 0);
	assert_int_equal(arch__check_watch(a, 0x401000, 8, true, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "an execute breakpoint on arm64 watches 4 bytes");
	assert_int_equal(arch__check_watch(a, 0x401002, 4, true, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "address 0x401002: arm64 instructions start at addresses aligned to 4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arch_host),
		cmocka_unit_test(test_arch_regs),
		cmocka_unit_test(test_arch_watch_x86),
		cmocka_unit_test(test_arch_watch_arm64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
