/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SYSCALL_ARGS_H
#define AUXTRIG_SYSCALL_ARGS_H

/*
 * decode/ layer: a system call's arguments and return value as a person reads
 * them (user/decode/syscall_args.c), for the syscall view (syscall_view.h).
 */

/**
 * DOC: reading a system call's arguments
 *
 * Each argument is printed by its name and declared type, as its
 * syscalls:sys_enter_NAME tracepoint format gives them:
 *
 * - a user string the record carries: quoted, C escapes for the rest
 *   ("/x/.git/config"); a pointer without one: hex, 0 as NULL;
 * - a directory fd (dfd, olddfd, newdfd): AT_FDCWD for -100;
 * - the common flag sets, by call and argument: O_* (open, openat, creat,
 *   open_by_handle_at; the bits of the recording's architecture: arm64
 *   numbers O_DIRECTORY, O_NOFOLLOW, O_DIRECT and O_LARGEFILE differently),
 *   AT_* (the *at calls' flag arguments), AT_REMOVEDIR (unlinkat),
 *   RENAME_* (renameat2), PROT_* and MAP_* (mmap, mprotect), F_OK/R_OK/W_OK/
 *   X_OK (access, faccessat); bits without a name as |0x...;
 * - a file mode: octal, and for open and openat only when O_CREAT or
 *   O_TMPFILE is set (the kernel ignores it otherwise);
 * - other integers as their declared C type: an int is the low 4 bytes of
 *   its 8-byte slot, sign-extended; decimal, hex for addresses, flags and
 *   masks.
 *
 * A return value is decimal, hex for the calls that return an address
 * (mmap, mremap, brk, shmat), and for a negative errno "-1 ENOENT (No such
 * file or directory)", as strace and perf trace print it.
 */

#include <stddef.h>
#include <linux/types.h>

#include "auxtrig/sys/tracefs.h"

/**
 * struct syscall_arg - one argument of a call
 * @field:	its field in the call's enter format (name and declared type)
 * @value:	the 8 bytes its register held
 * @str:	the user string it points to as recorded, NUL-terminated, or NULL
 */
struct syscall_arg {
	const struct tp_field *field;
	__u64 value;
	const char *str;
};

/**
 * syscall_args__format() - "name: value, ..." for the call @call (its
 * tracepoint's name, "openat") on architecture @arch ("x86_64", "arm64";
 * NULL or another: the x86-64 flag bits).
 * @buf: the text, NUL-terminated, cut to @size.
 */
void syscall_args__format(const char *call, const char *arch, const struct syscall_arg *args, size_t nr, char *buf,
			  size_t size);

/**
 * syscall_args__ret() - the return value @ret of @call as text ("3",
 * "-1 ENOENT (No such file or directory)", "0x7f3a2c000000").
 */
void syscall_args__ret(const char *call, __s64 ret, char *buf, size_t size);

/**
 * syscall_args__quote() - @s as a C string literal with its quotes, cut to
 * @size (the closing quote kept). Return: @buf.
 */
char *syscall_args__quote(const char *s, char *buf, size_t size);

#endif
