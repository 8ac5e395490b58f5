/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TIMELINE_H
#define AUXTRIG_TIMELINE_H

#include "auxtrig/decode/chrome_trace.h"
#include "auxtrig/format/pdata_reader.h"

/**
 * DOC: the timeline of a recording's kernel events
 *
 * Turns the samples of a file into slices and instants per thread:
 *
 *  - a syscall's sys_enter_NAME and sys_exit_NAME on one thread: a slice
 *    NAME (category "window" when the recording had -w syscall:NAME, else
 *    "syscall"), with the entry's arguments as print fmt prints them and the
 *    return value; raw_syscalls:sys_enter/sys_exit (-w 'syscall:*') a slice
 *    "syscall NR" around them;
 *  - -w START..STOP windows with tracepoint ends (from the file's command
 *    line): a slice named by the window from START's hit to STOP's;
 *  - uprobe windows (auxtrig:uprobe_enter/exit): a slice per call, named by
 *    the function, nested by depth;
 *  - --on resume/pause windows (auxtrig:resume/pause): a slice;
 *  - marks (auxtrig:mark) and snapshots (auxtrig:snapshot, on the thread that
 *    fired the trigger) as instants with their values, named by the --on
 *    that fired them; every other event as an instant with its fields.
 *
 * A window still open at the end of the file ends at its last event, with
 * "unfinished": 1.
 */

/**
 * timeline__events() - every sample of @r on @ct as above, and the names of
 * the processes and threads they belong to.
 * @name:	the file, for messages
 * Return: 0, or -errno with a pr_err() (a corrupt record, no memory).
 */
int timeline__events(const struct pdata_reader *r, struct chrome_trace *ct, const char *name);

#endif
