/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_INTERNAL_SCRIPT_H
#define AUXTRIG_INTERNAL_SCRIPT_H

/*
 * decode/ layer, inside `auxtrig script`: what script.c hands the per-format
 * decoders (script_pt.c, script_cs.c, script_spe.c) and their shared --windows
 * printer (script_windows.c). Only they include this, as libperf's
 * include/internal/ headers.
 */

/**
 * DOC: what the decoders of `auxtrig script` share
 *
 * script__run() opens the file, finds its AUXTRACE_INFO, reads the sideband
 * and the executable mappings once, and hands the session to the decoder of
 * the trace's format (script_pt__run(), script_cs__run(), script_spe__run()).
 * The --windows output of Intel PT and CoreSight is one format, printed by
 * script_win__print() one window at a time, as soon as its turn comes: no
 * decoder holds more than the windows still open.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "auxtrig/decode/script.h"
#include "auxtrig/decode/script_line.h"
#include "auxtrig/format/tp_formats.h"
#include "auxtrig/decode/sideband.h"

struct binaries;
struct chrome_trace;
struct pdata_reader;
struct pdata_record_auxtrace_info;

/**
 * struct script_session - one decode run.
 * @o: the options
 * @r: the file
 * @info: its AUXTRACE_INFO record and @npriv, the number of its priv[] words
 * @bins: its executable mappings and their binaries
 * @sd: its sideband (records read once, AUXTRACE buffers included)
 * @out: where the decode goes (stdout)
 * @status: the worst &enum exit_code met so far while decoding
 * @ct: --format=chrome: where the windows go, instead of @out's listing
 * @line: the fields of the sample lines (script_line__init() by the driver)
 * @tp_formats: the file's tracepoint formats, for their samples' trace
 */
struct script_session {
	const struct script_opts *o;
	struct pdata_reader *r;
	const struct pdata_record_auxtrace_info *info;
	size_t npriv;
	struct binaries *bins;
	struct sideband sd;
	FILE *out;
	int status;
	struct chrome_trace *ct;
	struct script_line line;
	struct tp_formats tp_formats;
};

int script_pt__run(struct script_session *s);
int script_cs__run(struct script_session *s);
int script_spe__run(struct script_session *s);

/** script__hex16() - "%16" PRIx64 of @v at @p (16 characters, no NUL); returns @p + 16. */
static inline char *script__hex16(char *p, __u64 v)
{
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;	/* hex digits */

	for (int i = 0; i < 16 - n; i++)
		p[i] = ' ';
	for (int i = 15; i >= 16 - n; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 15];
	return p + 16;
}

/* ---- windows ----------------------------------------------------------- */

enum { SCRIPT_INSN_OTHER, SCRIPT_INSN_CALL, SCRIPT_INSN_RETURN };

/**
 * struct script_win_run - @n instructions from @ip, @step bytes apart (an
 * A64 range: 4; one Intel PT instruction: @n 1); @iclass is the last one's.
 */
struct script_win_run {
	__u64 ip;
	__u32 n;
	__u8 step;
	__u8 iclass;
};

/**
 * struct script_win - one window: from the trace starting to its stopping.
 * @cpu: whose trace (CoreSight: the CPU of the trace ID)
 * @buf_cpu: the CPU of the AUX buffer it was in
 * @aux_offset: AUX offset of the packet that opened it
 * @start_tsc, @end_tsc: 0 when unknown
 */
struct script_win {
	int cpu, buf_cpu;
	__u32 tid;			/* a per-thread buffer's (cpu -1) thread, else 0 */
	__u32 idx;
	__u64 aux_offset;
	__u64 start_tsc, end_tsc;
	__u64 open_ip, close_ip;
	char opened[64], closed[96];
	struct script_win_run *v;
	size_t nr, cap;
	__u64 nr_insns;
	bool done;			/* closed: may be printed */
};

/**
 * struct script_win_printer - numbering and time conversion of the windows printed.
 * @number: if set, called (the output flushed first) in place of printing
 *          "# window N", for a printer that does not know N (a decode worker)
 */
struct script_win_printer {
	struct script_session *s;
	size_t printed;
	__u64 time_shift, time_mult, time_zero;
	bool have_time;
	void (*number)(void *ctx);
	void *number_ctx;
};

/** script_win__new() - a window opened by @why at @ip. NULL on ENOMEM. */
struct script_win *script_win__new(int cpu, __u32 idx, __u64 aux_offset, __u64 tsc, __u64 ip, const char *why);
/** script_win__add() - append @n instructions from @ip. Return: 0 or -ENOMEM. */
int script_win__add(struct script_win *w, __u64 ip, __u32 n, __u8 step, __u8 iclass);
/** script_win__close() - say why it closed. */
void script_win__close(struct script_win *w, const char *why);
/** script_win__delete() - free it; NULL is fine. */
void script_win__delete(struct script_win *w);
/** script_win__print() - print @w, numbered next. */
void script_win__print(struct script_win_printer *p, const struct script_win *w);
/** script_win_printer__finish() - the closing "# N windows" line. */
void script_win_printer__finish(struct script_win_printer *p);

/** script__symoff() - "sym+0xoff" of @addr, or "[unknown]" (perf's -F sym,symoff). */
const char *script__symoff(struct script_session *s, __u64 addr, char *buf, size_t size);

#endif
