/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_POINT_H
#define AUXTRIG_POINT_H

/*
 * lang/ layer: trigger points, the grammar of a window's ends and --on
 * (user/lang/point.c); parsed for cmd/record_plan.c, read by record/.
 */

#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/sys/tracefs.h"

/**
 * DOC: trigger points
 *
 * One grammar names the places where something happens, for --on triggers
 * and for the two ends of a --window START..STOP:
 *
 *   syscall:NAME:enter, syscall:NAME:exit   syscalls:sys_enter_NAME / sys_exit_NAME
 *   syscall:*:enter, syscall:*:exit         any syscall (raw_syscalls:sys_enter / sys_exit)
 *   tp:SYSTEM:EVENT                         a tracepoint
 *   uprobe:PATH:SYMBOL[+OFF]                a user function's entry (or an offset into it)
 *   uretprobe:PATH:SYMBOL                   its return
 *   usdt:PATH:PROVIDER:NAME                 a USDT probe (<sys/sdt.h>) in PATH
 *   kprobe:SYMBOL[+OFF], kretprobe:SYMBOL   a kernel function's entry / return
 *   mem:ADDR[/LEN][:ACCESS]                 a hardware breakpoint on user memory,
 *   mem:PATH:SYMBOL[/LEN][:ACCESS]          ACCESS r, w, rw (default) or x;
 *                                           x86 has no r (refused here), and
 *                                           watches LEN bytes only at an
 *                                           address aligned to LEN
 *
 * PATH may not contain ':'. What a condition can read at each point:
 * arguments (arg0..arg5) at entries (syscall enter, uprobe, usdt, kprobe),
 * the return value (ret) at exits (syscall exit, uretprobe, kretprobe),
 * tracepoint fields by name at tracepoints, and the thread's builtins
 * (pid, tid, comm, ...) everywhere.
 */

enum point_kind {
	POINT_TP,		/* a tracepoint: tp:, syscall:NAME:enter|exit, syscall:*:enter|exit */
	POINT_UPROBE,
	POINT_URETPROBE,
	POINT_USDT,
	POINT_KPROBE,
	POINT_KRETPROBE,
	POINT_MEM,
};

#define POINT_MEM_R	1
#define POINT_MEM_W	2
#define POINT_MEM_X	4

/**
 * struct point - one parsed point
 * @kind:	POINT_*
 * @at_enter:	arguments are known here (syscall entry, uprobe, usdt, kprobe)
 * @at_exit:	the return value is known here (syscall exit, uretprobe, kretprobe)
 * @sys, @name:	POINT_TP: the tracepoint
 * @path:	uprobe, uretprobe, usdt, mem:PATH:SYMBOL: the binary
 * @symbol:	uprobe, uretprobe, kprobe, kretprobe, mem:PATH:SYMBOL: the function
 *		or variable; usdt: the probe's name
 * @provider:	usdt: the provider
 * @offset:	uprobe, kprobe: bytes into the function; mem: the address (ADDR form)
 * @len:	mem: bytes watched (1, 2, 4 or 8)
 * @access:	mem: POINT_MEM_* bits
 */
struct point {
	enum point_kind kind;
	bool at_enter, at_exit;
	char sys[TP_NAME_MAX], name[TP_NAME_MAX];
	char path[4096];
	char symbol[256];
	char provider[256];
	unsigned long offset;
	unsigned int len;
	unsigned int access;
};

/**
 * point__parse() - parse one point (grammar above). Checks only the text:
 * files, symbols and tracepoints are looked up by their users.
 * @p:		filled
 * @text:	the point
 * @why:	on error, what is wrong (one phrase, no prefix)
 * Return: 0, or -EINVAL with @why set.
 */
int point__parse(struct point *p, const char *text, char *why, size_t why_size);

/**
 * point__mem_read_only_ok() - can this architecture watch reads alone
 * (mem:...:r)? Not x86, whose breakpoints watch writes, or reads and writes.
 */
bool point__mem_read_only_ok(void);

/**
 * point__check_path() - the file @p names is there and is ELF: -ENOENT when
 * it is missing or not a regular file, -ENOEXEC when it is not ELF, -errno
 * when it cannot be read; @why says which.
 */
int point__check_path(const struct point *p, char *why, size_t why_size);

/** point__format() - @p in the grammar above (tracepoints as tp:SYSTEM:EVENT). */
void point__format(const struct point *p, char *buf, size_t size);

/** point__kind_name() - "tracepoint", "uprobe", "usdt", "kprobe", ... */
const char *point__kind_name(enum point_kind kind);

/** point__is_probe() - is @p attached as a probe (uprobe, usdt, kprobe, mem) rather than a tracepoint? */
static inline bool point__is_probe(const struct point *p)
{
	return p->kind != POINT_TP;
}

#endif
