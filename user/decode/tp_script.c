// SPDX-License-Identifier: BSD-2-Clause
/* The samples of a file as perf script prints tracepoint samples. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/callchain.h"
#include "auxtrig/decode/event_walk.h"
#include "auxtrig/decode/same_kernel.h"
#include "auxtrig/decode/script.h"
#include "auxtrig/decode/sideband.h"
#include "auxtrig/decode/tp_script.h"
#include "auxtrig/format/tp_print.h"
#include "auxtrig/sys/log.h"

/* Does an event of @r sample call stacks (auxtrig record -g)? */
static bool tp_script__has_callchains(const struct pdata_reader *r)
{
	for (size_t i = 0; i < pdata_reader__nr_attrs(r); i++)
		if (pdata_reader__attr(r, i)->attr.sample_type & PERF_SAMPLE_CALLCHAIN)
			return true;
	return false;
}

/* The file's mappings, for the call stacks' symbols; NULL (logged) on a failure. */
static struct binaries *tp_script__binaries(struct pdata_reader *r, const struct script_opts *o)
{
	struct binaries *b = binaries__new(o->symfs, o->buildid_dir);
	const char *name = o->input;
	const char *arch;
	struct sideband sd;
	int err;

	if (!b) {
		pr_err("%s: cannot read its mappings: %s\n", name, strerror(ENOMEM));
		return NULL;
	}
	/* no AUX PMU here: every sample counts as another event's */
	err = sideband__collect(&sd, r, (__u64)-1, b);
	sideband__free(&sd);
	if (err) {
		pr_err("%s: %s\n", name, err == -EPROTO ? "stopped at a corrupt record" : strerror(-err));
		binaries__delete(b);
		errno = -err;
		return NULL;
	}
	/* as script__run(): perf's machine__kernel_start() */
	arch = pdata_reader__feature_string(r, PDATA_HEADER_ARCH);
	if (binaries__kernel_map_start(b) && !(arch && !strcmp(arch, "x86_64")))
		binaries__set_kernel_start(b, binaries__kernel_map_start(b));
	/*
	 * The kernel's symbols: perf takes this machine's kallsyms (or
	 * --kallsyms), and its own vDSO for [vdso]; only when the file was
	 * recorded on the running kernel are this machine's the right ones.
	 */
	if (binaries__kernel_map_start(b) && (o->kallsyms || same_kernel__running(r))) {
		err = binaries__add_kallsyms(b, o->kallsyms ?: "/proc/kallsyms");
		if (err)
			pr_debug("%s: no kernel symbols from %s: %s\n", name, o->kallsyms ?: "/proc/kallsyms",
				 err == -ENODATA ? "its addresses read 0 (kptr_restrict; run as root)" : strerror(-err));
	}
	if (!same_kernel__running(r))
		return b;
	/* and [vdso] is this process's vDSO, as perf takes it */
	err = binaries__add_own_vdso(b);
	if (err)
		pr_debug("%s: no image for [vdso]: %s\n", name, strerror(-err));
	return b;
}

int tp_script__print(struct pdata_reader *r, const struct script_opts *o, FILE *out)
{
	const char *name = o->input;
	struct event_walk *w = event_walk__new(r);
	struct binaries *bins = NULL;
	struct walk_sample ws;
	int width, ret;

	if (!w) {
		pr_err("%s: cannot read its tracepoint formats: %s\n", name,
		       errno == ENOMEM ? strerror(ENOMEM) : "malformed tracing data");
		return -errno;
	}
	if (tp_script__has_callchains(r)) {
		bins = tp_script__binaries(r, o);
		if (!bins) {
			ret = errno == ENOMEM ? -ENOMEM : -EPROTO;
			event_walk__delete(w);
			return ret;
		}
	}
	width = (int)event_walk__name_width(w);
	while ((ret = event_walk__next(w, &ws)) > 0) {
		char comm[32], when[32], trace[4096];
		__u64 us = ws.s.time / 1000;
		/* perf script: with call stacks the comm is not padded, a blank line ends each sample */
		bool stack = bins && (ws.s.attr->attr.sample_type & PERF_SAMPLE_CALLCHAIN);

		if (ws.comm)
			snprintf(comm, sizeof(comm), "%s", ws.comm);
		else
			snprintf(comm, sizeof(comm), ":%u", ws.s.tid);
		snprintf(when, sizeof(when), "%" PRIu64 ".%06" PRIu64, (uint64_t)(us / 1000000),
			 (uint64_t)(us % 1000000));
		fprintf(out, stack ? "%s %5d [%03u] %12s: %*s: " : "%16s %5d [%03u] %12s: %*s: ", comm, (int)ws.s.tid,
			ws.s.cpu, when, width, ws.name);
		if (ws.fmt && ws.s.raw) {
			if (tp_print__format(ws.fmt, ws.s.raw, ws.s.raw_size, trace, sizeof(trace)))
				tp_print__fields(ws.fmt, ws.s.raw, ws.s.raw_size, trace, sizeof(trace));
			fprintf(out, "%s\n", trace);
		} else {
			fprintf(out, "%16" PRIx64 "\n", (uint64_t)ws.s.ip);
		}
		if (stack) {
			if (ws.s.present & PERF_SAMPLE_CALLCHAIN)
				callchain__fprintf(bins, ws.s.callchain, ws.s.nr_callchain, out);
			fputc('\n', out);
		}
	}
	binaries__delete(bins);
	event_walk__delete(w);
	if (ret < 0)
		pr_err("%s: stopped at a corrupt record\n", name);
	return ret;
}
