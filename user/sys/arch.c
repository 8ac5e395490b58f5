// SPDX-License-Identifier: BSD-2-Clause
/*
 * The architectures auxtrig is built for, and what differs between them
 * (include/auxtrig/sys/arch.h says where each value comes from).
 */
#include <errno.h>
#include <stdio.h>

#include "auxtrig/sys/arch.h"

static const struct arch arches[ARCH_NR_KINDS] = {
	[ARCH_X86_64] = {
		.name = "x86_64",
		.short_name = "x86",
		.regs_ip = 16 * 8,		/* r15 .. orig_ax, then ip */
		.regs_sp = 19 * 8,		/* ip, cs, flags, then sp */
		.regs_ret = 10 * 8,		/* ax */
		.regs_arg = { 14 * 8, 13 * 8, 12 * 8, 11 * 8, 9 * 8, 8 * 8 }, /* di si dx cx r8 r9 */
		.bp_read_only = false,
		.bp_exec_len = 8,		/* sizeof(long) */
		.bp_watch_unit = 0,		/* aligned to its length */
		.bp_reports_before_access = false,
	},
	[ARCH_ARM64] = {
		.name = "aarch64",
		.short_name = "arm64",
		.regs_ip = 31 * 8 + 8,		/* regs[31], sp, then pc */
		.regs_sp = 31 * 8,
		.regs_ret = 0,			/* x0 */
		.regs_arg = { 0, 8, 16, 24, 32, 40 }, /* x0 .. x5 */
		.bp_read_only = true,
		.bp_exec_len = 4,		/* one A64 instruction */
		.bp_watch_unit = 8,		/* inside one aligned doubleword */
		.bp_reports_before_access = true,
	},
};

const struct arch *arch__get(enum arch_kind kind)
{
	return (unsigned int)kind < ARCH_NR_KINDS ? &arches[kind] : NULL;
}

const struct arch *arch__host(void)
{
#if defined(__x86_64__)
	return &arches[ARCH_X86_64];
#elif defined(__aarch64__)
	return &arches[ARCH_ARM64];
#else
	return NULL;
#endif
}

int arch__check_watch(const struct arch *a, unsigned long addr, unsigned int len, bool exec, char *why,
		      size_t why_size)
{
	if (exec) {
		if (len != a->bp_exec_len) {
			snprintf(why, why_size, "an execute breakpoint on %s watches %u bytes", a->short_name,
				 a->bp_exec_len);
			return -EINVAL;
		}
		/* A64 instructions are 4-aligned; x86's start anywhere */
		if (a->bp_exec_len == 4 && (addr & 3)) {
			snprintf(why, why_size, "address 0x%lx: %s instructions start at addresses aligned to 4", addr,
				 a->short_name);
			return -EINVAL;
		}
		return 0;
	}
	if (!a->bp_watch_unit && (addr & (len - 1))) {
		snprintf(why, why_size, "address 0x%lx: %s watches %u bytes only at an address aligned to %u", addr,
			 a->short_name, len, len);
		return -EINVAL;
	}
	if (a->bp_watch_unit && (addr & (a->bp_watch_unit - 1)) + len > a->bp_watch_unit) {
		snprintf(why, why_size, "address 0x%lx: %s watches %u bytes only inside one aligned block of %u", addr,
			 a->short_name, len, a->bp_watch_unit);
		return -EINVAL;
	}
	return 0;
}
