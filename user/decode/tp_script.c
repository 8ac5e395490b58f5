// SPDX-License-Identifier: BSD-2-Clause
/* The samples of a file as perf script prints tracepoint samples. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "auxtrig/decode/event_walk.h"
#include "auxtrig/decode/tp_script.h"
#include "auxtrig/format/tp_print.h"
#include "auxtrig/sys/log.h"

int tp_script__print(const struct pdata_reader *r, const char *name, FILE *out)
{
	struct event_walk *w = event_walk__new(r);
	struct walk_sample ws;
	int width, ret;

	if (!w) {
		pr_err("%s: cannot read its tracepoint formats: %s\n", name,
		       errno == ENOMEM ? strerror(ENOMEM) : "malformed tracing data");
		return -errno;
	}
	width = (int)event_walk__name_width(w);
	while ((ret = event_walk__next(w, &ws)) > 0) {
		char comm[32], when[32], trace[4096];
		__u64 us = ws.s.time / 1000;

		if (ws.comm)
			snprintf(comm, sizeof(comm), "%s", ws.comm);
		else
			snprintf(comm, sizeof(comm), ":%u", ws.s.tid);
		snprintf(when, sizeof(when), "%" PRIu64 ".%06" PRIu64, (uint64_t)(us / 1000000),
			 (uint64_t)(us % 1000000));
		fprintf(out, "%16s %5d [%03u] %12s: %*s: ", comm, (int)ws.s.tid, ws.s.cpu, when, width, ws.name);
		if (ws.fmt && ws.s.raw) {
			if (tp_print__format(ws.fmt, ws.s.raw, ws.s.raw_size, trace, sizeof(trace)))
				tp_print__fields(ws.fmt, ws.s.raw, ws.s.raw_size, trace, sizeof(trace));
			fprintf(out, "%s\n", trace);
		} else {
			fprintf(out, "%16" PRIx64 "\n", (uint64_t)ws.s.ip);
		}
	}
	event_walk__delete(w);
	if (ret < 0)
		pr_err("%s: stopped at a corrupt record\n", name);
	return ret;
}
