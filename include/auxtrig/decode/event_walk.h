/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EVENT_WALK_H
#define AUXTRIG_EVENT_WALK_H

#include <stddef.h>
#include <linux/types.h>

#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/tp_formats.h"

/**
 * DOC: the samples of a file, with their thread and event
 *
 * Walks a perf.data file's data section in file order and hands out each
 * sample with what a reader wants next to it: the event's name
 * ("syscalls:sys_enter_openat", from the tracepoint formats the file
 * carries, else its EVENT_DESC name), the tracepoint format of its raw
 * payload, and the thread's comm at that point (PERF_RECORD_COMM, and
 * PERF_RECORD_FORK for threads that inherit it), as perf script has them.
 */

struct event_walk;

/**
 * struct walk_sample - one sample
 * @s:		the sample's fields (raw payload included)
 * @name:	the event's name, "?" when the file does not say
 * @fmt:	its tracepoint format, NULL for other events
 * @comm:	the thread's comm, NULL when no record named it
 */
struct walk_sample {
	struct pdata_sample s;
	const char *name;
	const struct tp_format *fmt;
	const char *comm;
};

/**
 * event_walk__new() - a walk over @r (which must outlive it).
 * Return: the walk, or NULL with errno set (ENOMEM, or EINVAL for a
 * malformed HEADER_TRACING_DATA; a file without one has no tracepoint
 * formats and is walked all the same).
 */
struct event_walk *event_walk__new(const struct pdata_reader *r);

/**
 * event_walk__next() - the next sample.
 * Return: 1 with @ws filled (valid until the next call), 0 at the end,
 * -EPROTO on a corrupt record.
 */
int event_walk__next(struct event_walk *w, struct walk_sample *ws);

/** event_walk__rewind() - start again from the first record. */
void event_walk__rewind(struct event_walk *w);

/** event_walk__name_width() - the longest event name of the file (perf pads names to it). */
size_t event_walk__name_width(const struct event_walk *w);

/** event_walk__formats() - the tracepoint formats the file carries. */
const struct tp_formats *event_walk__formats(const struct event_walk *w);

/**
 * event_walk__cmdline() - the recording's command line (HEADER_CMDLINE),
 * as @argc words at @argv (valid as long as the walk), or 0 when absent.
 */
int event_walk__cmdline(const struct event_walk *w, const char *const **argv);

/**
 * event_walk__record_option() - the @n-th (0-based) value of record's option
 * @opt in the recording's command line: 'w' the -w/--window values, 'o' the
 * --on ones, in order, up to the "--" before the command.
 * Return: the value (valid as long as the walk), or NULL when there are fewer.
 */
const char *event_walk__record_option(const struct event_walk *w, char opt, size_t n);

/**
 * struct walk_losses - what the file says was lost
 * @lost:	records the kernel dropped (PERF_RECORD_LOST, ring full)
 * @lost_samples: records auxtrig dropped (PERF_RECORD_LOST_SAMPLES: too big,
 *		or lost after the kernel's last LOST)
 * @aux_truncated: PERF_RECORD_AUX records flagged TRUNCATED (hardware trace
 *		that did not fit)
 */
struct walk_losses {
	__u64 lost, lost_samples, aux_truncated;
};

/** event_walk__losses() - the file's losses, counted over every record. */
void event_walk__losses(const struct event_walk *w, struct walk_losses *l);

/** event_walk__delete() - free a walk; NULL is fine. */
void event_walk__delete(struct event_walk *w);

#endif
