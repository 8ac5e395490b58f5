/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TRACING_DATA_H
#define AUXTRIG_TRACING_DATA_H

/*
 * format/ layer: the HEADER_TRACING_DATA feature (user/format/tracing_data.c),
 * built from tracefs for record/recorder.c.
 */

/**
 * DOC: tracing data
 *
 * Builds the body of perf.data feature HEADER_TRACING_DATA (1): what perf
 * 6.1's trace-event-read.c needs to decode the RAW payload of tracepoint
 * samples. perf refuses a file with a tracepoint attr and no such body
 * ("incompatible file format"). Layout, all numbers host-endian:
 *
 *   "\027\010Dtracing" "0.6\0" u8 big_endian u8 sizeof(long) u32 page_size
 *   "header_page\0"  u64 size, events/header_page
 *   "header_event\0" u64 size, events/header_event
 *   u32 nr_ftrace, {u64 size, events/ftrace/<ev>/format}...
 *   u32 nr_systems, {"<system>\0" u32 nr, {u64 size, format}...}...
 *   u32 0 (kallsyms), u32 size + printk_formats, u64 size + saved_cmdlines
 *
 * Only the formats of the events asked for are included.
 */

#include <stddef.h>
#include <linux/types.h>

/** struct tracing_event - a tracepoint by system and name ("syscalls", "sys_enter_openat"). */
struct tracing_event {
	const char *system;
	const char *name;
	const char *format;	/* NULL: events/SYSTEM/NAME/format; else this text (auxtrig's own events) */
};

/**
 * tracing_data__find_tracefs() - the tracefs root of this machine.
 * @buf: receives the path (tracefs mount, else debugfs mount + "/tracing")
 * @size: size of @buf
 *
 * Return: 0, -ENOENT if neither is mounted (with a hint to mount it).
 */
int tracing_data__find_tracefs(char *buf, size_t size);

/**
 * tracing_data__build() - build the HEADER_TRACING_DATA body.
 * @tracefs: tracefs root; NULL = tracing_data__find_tracefs()
 * @events: the tracepoints whose formats go in (duplicates are written once)
 * @nr_events: number of @events
 * @bufp: receives a malloc()ed buffer, freed by the caller with free()
 * @lenp: receives its length
 *
 * Return: 0, -ENOENT for an unknown tracepoint or missing tracefs file,
 * -EINVAL for a name with '/' or "..", -ENOMEM, or another -errno from reading.
 */
int tracing_data__build(const char *tracefs, const struct tracing_event *events, size_t nr_events,
			void **bufp, size_t *lenp);

/**
 * tracing_data__event_id() - read events/<system>/<name>/id, the attr.config
 * of a PERF_TYPE_TRACEPOINT event (and the "ID:" line of its format).
 * @tracefs: tracefs root; NULL = tracing_data__find_tracefs()
 * Return: 0 with *@id set, or -errno.
 */
int tracing_data__event_id(const char *tracefs, const struct tracing_event *event, __u64 *id);

#endif
