/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ARCH_H
#define AUXTRIG_ARCH_H

/*
 * sys/ layer: what differs between the architectures auxtrig is built for
 * (x86-64 and arm64), named in one table (user/sys/arch.c) instead of
 * guessed where it is used: where the kernel's struct pt_regs keeps the
 * registers a probe program reads, and what a hardware breakpoint
 * (PERF_TYPE_BREAKPOINT) can watch and when it reports. Each entry says
 * which kernel source it comes from. The table describes both
 * architectures on either build, so the unit tests check both rules on
 * any machine; arch__host() is the one this build runs on.
 *
 * Not here, because they are not guessed anywhere: system call numbers
 * come from the build's <sys/syscall.h> (SYS_getpid) or from tracefs at
 * run time (syscall:NAME points); BPF programs are compiled with
 * __TARGET_ARCH_$(ARCH), whose bpf_tracing.h PT_REGS_* macros are the BPF
 * side of the offsets below (bpf/gate/regs.bpf.h adds the sixth argument
 * libbpf 1.1 lacks); 'char' in conditions is refused (signed on x86,
 * unsigned on arm64: lang/expr_parse.c).
 */

#include <stdbool.h>
#include <stddef.h>

enum arch_kind {
	ARCH_X86_64,
	ARCH_ARM64,
	ARCH_NR_KINDS,
};

/* The number of function arguments a probe reads from registers (arg0 .. arg5). */
#define ARCH_NR_REG_ARGS 6

struct arch {
	const char *name;	/* as uname -m says it: "x86_64", "aarch64" */
	const char *short_name;	/* as messages and the Makefile say it: "x86", "arm64" */
	/*
	 * Byte offsets in the kernel's struct pt_regs (a kprobe or uprobe
	 * program's context): the instruction pointer, the stack pointer, the
	 * return value at a return probe and the first six integer arguments
	 * at a function's entry. x86-64: arch/x86/include/asm/ptrace.h (r15 ..
	 * orig_ax, ip, cs, flags, sp, ss; arguments di si dx cx r8 r9, return ax);
	 * arm64: struct user_pt_regs at the start of struct pt_regs (regs[31], sp,
	 * pc, pstate; arguments x0 .. x5, return x0).
	 */
	short regs_ip, regs_sp, regs_ret;
	short regs_arg[ARCH_NR_REG_ARGS];
	/* Watchpoints that fire on loads alone (x86's DR7 has write and read-or-write only). */
	bool bp_read_only;
	/*
	 * bp_len of an execute breakpoint: x86-64 wants sizeof(long)
	 * (arch/x86/kernel/hw_breakpoint.c), arm64 one A64 instruction, 4 bytes,
	 * at an address aligned to 4 (arch/arm64/kernel/hw_breakpoint.c, which
	 * turns perf's sizeof(long) into 4 itself).
	 */
	unsigned int bp_exec_len;
	/*
	 * Where a watchpoint of LEN bytes may start: on x86 at an address
	 * aligned to LEN; on arm64 anywhere inside an aligned doubleword that
	 * holds all LEN bytes (the byte-address-select mask of the
	 * doubleword; the kernel refuses, or older ones silently shorten, a
	 * watchpoint that crosses it). The size of that aligned unit: 0 means
	 * LEN itself.
	 */
	unsigned int bp_watch_unit;
	/*
	 * When a data watchpoint reports: x86's are traps, taken after the
	 * accessing instruction completed, so the sample's IP is the next
	 * instruction and a write has happened; arm64's are taken before the
	 * access: the IP is the accessing instruction, the program runs before
	 * a write has changed the memory, and the kernel single-steps the
	 * instruction afterwards (watchpoint_handler()). Execute breakpoints
	 * report before the instruction on both.
	 */
	bool bp_reports_before_access;
};

/** arch__get() - the description of @kind, NULL for an unknown one. */
const struct arch *arch__get(enum arch_kind kind);

/** arch__host() - the architecture this build runs on (NULL on one auxtrig does not know). */
const struct arch *arch__host(void);

/**
 * arch__check_watch() - can @a's hardware breakpoints watch @len bytes at
 * @addr (@exec: an execute breakpoint)? 0, or -EINVAL with the reason in
 * @why, naming the architecture.
 */
int arch__check_watch(const struct arch *a, unsigned long addr, unsigned int len, bool exec, char *why,
		      size_t why_size);

#endif
