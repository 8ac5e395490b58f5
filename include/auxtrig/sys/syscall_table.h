/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SYSCALL_TABLE_H
#define AUXTRIG_SYSCALL_TABLE_H

/*
 * sys/ layer: the system call numbers of an architecture's 64-bit ABI
 * (user/sys/syscall_table.c), x86-64 and arm64, generated from the kernel's
 * own tables by user/sys/syscall_table.sh. What a raw_syscalls record's NR
 * means, on the machine that recorded it (the file's HEADER_ARCH), which may
 * not be this one.
 */

/**
 * struct syscall_entry - one system call number
 * @name:	what strace and perf trace call it ("umount2"), NULL for no call
 * @tp:		the name of its syscalls:sys_enter_ tracepoint when it is not
 *		@name ("umount"), "" when the kernel implements none, else NULL
 * @implemented: 0 when the number is reserved (sys_ni_syscall)
 */
struct syscall_entry {
	const char *name;
	const char *tp;
	int implemented;
};

struct syscall_table;

/**
 * syscall_table__for_arch() - the table of @machine, as uname -m and perf's
 * HEADER_ARCH name it: "x86_64", "aarch64" (or "arm64").
 * Return: the table, or NULL for another architecture.
 */
const struct syscall_table *syscall_table__for_arch(const char *machine);

/** syscall_table__arch() - the architecture's name ("x86_64", "arm64"). */
const char *syscall_table__arch(const struct syscall_table *t);

/** syscall_table__size() - one past the highest number @t names. */
long syscall_table__size(const struct syscall_table *t);

/** syscall_table__entry() - number @nr, or NULL when @t has no call by that number. */
const struct syscall_entry *syscall_table__entry(const struct syscall_table *t, long nr);

/**
 * syscall_table__tp_name() - the NAME of number @nr's syscalls:sys_enter_NAME
 * tracepoint, or NULL when there is none.
 */
const char *syscall_table__tp_name(const struct syscall_table *t, long nr);

/**
 * syscall_table__nr() - the number of the call @name names, by its table name
 * ("umount2") or its tracepoint's ("umount"). Return: the number, or -1.
 */
long syscall_table__nr(const struct syscall_table *t, const char *name);

#endif
