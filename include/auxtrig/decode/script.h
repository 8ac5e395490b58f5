/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SCRIPT_H
#define AUXTRIG_SCRIPT_H

/*
 * decode/ layer: `auxtrig script`, a perf.data file's hardware trace decoded and printed
 * as perf script prints it (user/decode/script.c); called by cmd/script_cmd.c.
 */

/**
 * DOC: decoding a perf.data file's hardware trace
 *
 * A file without hardware trace has its events printed as perf script
 * prints tracepoint samples (tp_script.h).
 *
 * script__run() decodes the Intel PT, CoreSight ETM/ETE or Arm SPE trace of
 * a perf.data file (file mode, or pipe mode) and prints it on stdout the way
 * perf 6.1's perf script prints it, so that the two can be compared line for
 * line:
 *
 * - Intel PT and CoreSight: branch samples as perf script --itrace=b prints
 *   them (its default fields, or those -F names: script_line.h); CoreSight
 *   instruction ranges with --itrace=i;
 * - Arm SPE: its samples as -F tid,event,addr,ip,sym;
 *
 * or the trace packets (--packets, as perf report -D and OpenCSD's
 * trc_pkt_lister list them), or instructions per trace window (--windows,
 * --call-trace).
 *
 * CoreSight buffers are decoded in worker processes (decode_pool): a buffer
 * that crashes the decoding library costs one error line naming its AUX
 * record, and with @jobs > 1 buffers decode in parallel with output
 * byte-identical to one worker.
 */

#include <stdbool.h>

#include "auxtrig/decode/script_fields.h"
#include "auxtrig/sys/exit_code.h"


/**
 * struct script_opts - what to decode and how to print it.
 * @input: the perf.data file, "-" for standard input (pipe mode or file mode)
 * @symfs: directory the recorded binary paths are under, or NULL
 * @buildid_dir: the build-ID cache, NULL for $PERF_BUILDID_DIR or ~/.debug
 * @kallsyms: the kernel's symbols for call stacks (binaries__add_kallsyms()),
 *            NULL for /proc/kallsyms (used when the file was recorded on the
 *            running kernel)
 * @itrace: 'b' branch samples, 'i' instruction ranges
 * @packets: list packets instead of samples
 * @windows: instructions per trace window
 * @call_trace: with @windows: calls and returns only
 * @fields: -F: the fields of the sample lines (script_fields.h)
 * @jobs: CoreSight decode worker processes (at least 1; 0 is taken as 1)
 * @chrome: the timeline as Trace Event JSON (timeline.h, chrome_trace.h):
 *          the file's events, and its trace windows with their calls nested
 * @summary: the summary (summary.h) instead of a listing
 */
struct script_opts {
	const char *input;
	const char *symfs;
	const char *buildid_dir;
	const char *kallsyms;
	char itrace;
	bool packets;
	bool windows;
	bool call_trace;
	struct script_fields fields;
	unsigned int jobs;
	bool chrome;
	bool summary;
};

/**
 * script__run() - decode and print.
 * Return: an &enum exit_code: EXIT_OK; EXIT_RUNTIME when the file cannot be
 * read or a buffer could not be decoded (the others are); EXIT_USAGE for
 * options that do not fit the file's trace; EXIT_UNSUPPORTED for trace this
 * build does not decode (ETMv3/PTM, an unknown AUX type).
 */
int script__run(const struct script_opts *o);

#endif
