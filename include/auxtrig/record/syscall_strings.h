/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SYSCALL_STRINGS_H
#define AUXTRIG_SYSCALL_STRINGS_H

/*
 * record/ layer: the user strings of raw_syscalls:sys_enter records
 * (user/record/syscall_strings.c), what `-w 'syscall:*'` windows and
 * syscall:*:enter points record.
 */

/**
 * DOC: strings in raw_syscalls records
 *
 * A syscalls:sys_enter_NAME record carries the user strings its arguments
 * point to (paths, xattr and mount names: event_list__string_fields()); a
 * raw_syscalls:sys_enter record, one tracepoint for every call, carries the
 * same, within the same bounds (GATE_MAX_STRS strings of up to GATE_STR_MAX
 * bytes). Which arguments are strings depends on the call: this object maps
 * each system call number of this machine (syscall_table.h, by its own
 * architecture) to the record offsets of its string arguments' pointers
 * (args[N] is at 16 + 8 * N), from the call's sys_enter_NAME format in
 * tracefs; the gate looks the number up for each record. In the file, the
 * record's format gains one __data_loc field per argument, argN_str
 * (event_list__file_format()), and the file carries every sys_enter_NAME
 * format, which names and types the arguments for the syscall view.
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/sys/tracefs.h"

#define SYSCALL_STRINGS_ARGS	6	/* argN_str fields of a raw_syscalls:sys_enter record */
#define SYSCALL_RAW_ARGS_OFF	16	/* args[0] in a raw_syscalls:sys_enter record */

/**
 * struct syscall_strings - string arguments by system call number
 * @str_off:	per number, the record offsets of its string arguments'
 *		pointers, in argument order, 0 ends (GATE_MAX_STRS at most)
 * @nr:		numbers in @str_off
 * @enter:	the sys_enter_NAME tracepoints of this machine, by name
 * @nr_enter:	how many
 */
struct syscall_strings {
	__u8 (*str_off)[GATE_MAX_STRS];
	size_t nr;
	char (*enter)[TP_NAME_MAX];
	size_t nr_enter;
};

/**
 * syscall_strings__build() - the table of this machine's calls from tracefs.
 * @machine: the architecture (uname -m); NULL: this machine's.
 * Return: 0; -EOPNOTSUPP an architecture without a syscall table (x86_64 and
 * aarch64 have one); -ENOMEM; other -errno from tracefs. A call without a
 * sys_enter_ tracepoint (not built into this kernel) has no strings.
 */
int syscall_strings__build(struct syscall_strings *s, const char *machine);

/** syscall_strings__is_raw_enter() - is @fmt raw_syscalls:sys_enter? */
bool syscall_strings__is_raw_enter(const struct tp_format *fmt);

/** syscall_strings__exit() - free the table; a zeroed one is fine. */
void syscall_strings__exit(struct syscall_strings *s);

#endif
