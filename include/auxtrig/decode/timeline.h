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
 * struct timeline_sink - where the slices, instants and threads go
 * @slice:	a slice from @ts for @dur ns; @cat "window" (a -w window of the
 *		recording, uprobe calls, resume..pause) or "syscall" (a syscall
 *		recorded as an event); @args as chrome_trace takes them ("ret"
 *		holds a return value)
 * @instant:	an instant; @cat "trigger" (marks, snapshots) or "event"
 * @thread:	a thread seen, with its comm ("" when unknown), after the last
 *		slice and instant
 * @ctx:	passed to each
 */
struct timeline_sink {
	void (*slice)(void *ctx, __u32 pid, __u32 tid, __u64 ts, __u64 dur, const char *name, const char *cat,
		      const struct chrome_arg *args, size_t nr_args);
	void (*instant)(void *ctx, __u32 pid, __u32 tid, __u64 ts, const char *name, const char *cat,
			const struct chrome_arg *args, size_t nr_args);
	void (*thread)(void *ctx, __u32 pid, __u32 tid, const char *comm);
	void *ctx;
};

/**
 * timeline__walk() - every sample of @r as above, into @sink.
 * @name:	the file, for messages
 * Return: 0, or -errno with a pr_err() (a corrupt record, no memory).
 */
int timeline__walk(const struct pdata_reader *r, const struct timeline_sink *sink, const char *name);

/**
 * timeline__events() - timeline__walk() onto @ct, processes and threads
 * named "COMM TID".
 */
int timeline__events(const struct pdata_reader *r, struct chrome_trace *ct, const char *name);

#endif
