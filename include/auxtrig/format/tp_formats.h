/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TP_FORMATS_H
#define AUXTRIG_TP_FORMATS_H

#include <stddef.h>

#include "auxtrig/sys/tracefs.h"

struct pdata_reader;

/**
 * DOC: the tracepoint formats a perf.data file carries
 *
 * Reads the body of feature HEADER_TRACING_DATA (layout in tracing_data.h):
 * the format of every tracepoint whose samples the file holds, by system,
 * with its id (the samples' common_type, the attr's config), fields and
 * print fmt, and the pid -> comm table of saved_cmdlines. What decoding the
 * samples' raw payloads needs, without tracefs: the file may come from
 * another machine.
 */

/**
 * struct tp_formats - the formats of one file
 * @v, @nr:	the formats, in file order
 * @cmdlines:	saved_cmdlines ("PID COMM" lines), NUL-terminated, or NULL
 */
struct tp_formats {
	struct tp_format *v;
	size_t nr;
	char *cmdlines;
};

/**
 * tp_formats__parse() - parse a HEADER_TRACING_DATA body.
 * @data, @size:	the body
 * @f:		filled; free with tp_formats__exit() (also on error)
 * Only version 0.6 with host byte order is read; an event whose format does
 * not parse is skipped.
 * Return: 0, -EINVAL malformed or truncated, -EPROTONOSUPPORT another
 * version or byte order, -ENOMEM.
 */
int tp_formats__parse(const void *data, size_t size, struct tp_formats *f);

/**
 * tp_formats__read() - tp_formats__parse() of @r's HEADER_TRACING_DATA.
 * Return: as tp_formats__parse(); -ENOENT when the file has none.
 */
int tp_formats__read(const struct pdata_reader *r, struct tp_formats *f);

/** tp_formats__find() - the format with id @id, or NULL. */
const struct tp_format *tp_formats__find(const struct tp_formats *f, unsigned int id);

/** tp_formats__exit() - free what tp_formats__parse() allocated. */
void tp_formats__exit(struct tp_formats *f);

#endif
