/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SYSCALL_VIEW_H
#define AUXTRIG_SYSCALL_VIEW_H

/*
 * decode/ layer: `auxtrig script --format=syscalls` (user/decode/syscall_view.c),
 * a recording's system calls one line each, as strace and perf trace print them.
 */

/**
 * DOC: the syscall view
 *
 * Every system call of the file becomes one line, printed when its exit is
 * read, with the time of its entry:
 *
 *   1557.690054 ( 0.004 ms): openat_demo/13993 openat(dfd: AT_FDCWD,
 *       filename: "/nonexistent/auxtrig-demo", flags: O_RDONLY) = -1 ENOENT
 *       (No such file or directory)
 *
 * (one line). The enter and exit records are paired per thread: those of
 * syscalls:sys_enter_NAME / sys_exit_NAME, and those of raw_syscalls, whose
 * NR is named from the syscall table of the architecture the file was
 * recorded on (HEADER_ARCH: x86-64, arm64; syscall_table.h). The arguments
 * are named and typed by the call's sys_enter_NAME format when the file
 * carries it, else shown as six hex words; syscall_args.h says how each one
 * reads. A call whose exit is not in the file (a window, a snapshot or the
 * recording ends first; its record was lost) is printed as unfinished, an
 * exit without its entry with "<entry not recorded>": nothing is dropped. A
 * call recorded twice (by raw_syscalls and by its own tracepoint) is one
 * line, with the richer arguments. Every other record is printed in its
 * place as "TIME: COMM/TID EVENT: its fields", as perf script prints them.
 */

#include <stdio.h>

struct pdata_reader;

/**
 * syscall_view__print() - the file's system calls and other records, one
 * line each, on @out. @name names the file in messages.
 * Return: 0, -EPROTO a corrupt record (after printing what came before),
 * -ENOMEM, or -EINVAL malformed tracing data (each with a pr_err()).
 */
int syscall_view__print(struct pdata_reader *r, const char *name, FILE *out);

#endif
