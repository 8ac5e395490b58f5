/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CHROME_TRACE_H
#define AUXTRIG_CHROME_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/**
 * DOC: Trace Event JSON (the timeline)
 *
 * Writes the Trace Event Format that Perfetto UI, chrome://tracing and
 * speedscope load: one JSON object {"traceEvents": [...], ...}. Slices are
 * complete events ("ph":"X") with a start and a duration, instants are
 * "ph":"i" (scope thread, or global when the thread is 0), and process and
 * thread names are metadata ("ph":"M"). Times are given in nanoseconds and
 * written as microseconds with three decimals, the unit of the format.
 * Events are written as they come: viewers sort them.
 */

struct chrome_trace;

/**
 * struct chrome_arg - one entry of an event's "args"
 * @key:	its name
 * @str:	a string value, or NULL for @num
 * @num:	a number value
 */
struct chrome_arg {
	const char *key;
	const char *str;
	long long num;
};

/** chrome_trace__new() - start the JSON on @out. NULL with errno set. */
struct chrome_trace *chrome_trace__new(FILE *out);

/** chrome_trace__process() - name process @pid ("process_name"). */
void chrome_trace__process(struct chrome_trace *ct, __u32 pid, const char *name);

/** chrome_trace__thread() - name thread @tid of @pid ("thread_name"). */
void chrome_trace__thread(struct chrome_trace *ct, __u32 pid, __u32 tid, const char *name);

/**
 * chrome_trace__slice() - a slice on thread @tid from @ts_ns for @dur_ns.
 * @cat:	its category ("window", "call", "syscall")
 */
void chrome_trace__slice(struct chrome_trace *ct, __u32 pid, __u32 tid, __u64 ts_ns, __u64 dur_ns, const char *name,
			 const char *cat, const struct chrome_arg *args, size_t nr_args);

/** chrome_trace__instant() - an instant on thread @tid (every thread when @tid is 0) at @ts_ns. */
void chrome_trace__instant(struct chrome_trace *ct, __u32 pid, __u32 tid, __u64 ts_ns, const char *name,
			   const char *cat, const struct chrome_arg *args, size_t nr_args);

/** chrome_trace__nr_events() - events written so far (metadata not counted). */
size_t chrome_trace__nr_events(const struct chrome_trace *ct);

/**
 * chrome_trace__finish() - close the JSON and free @ct.
 * Return: 0, or -EIO when writing failed at any point.
 */
int chrome_trace__finish(struct chrome_trace *ct);

/** chrome_trace__json_string() - @s as a JSON string literal, quotes included, on @f. */
void chrome_trace__json_string(FILE *f, const char *s);

#endif
