/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SCRIPT_LINE_H
#define AUXTRIG_SCRIPT_LINE_H

/*
 * decode/ layer: one sample line of `auxtrig script` as perf script 6.1
 * prints it (user/decode/script_line.c), for the hardware-trace drivers
 * (script_pt.c, script_cs.c); fields from script_fields.h.
 */

/**
 * DOC: a sample line as perf script prints it
 *
 * perf script prints a sample as "comm tid [cpu] time: period event: ip
 * sym+off (dso)", and a branch sample of hardware trace with " => addr
 * sym+off (dso)" after it, the fields chosen per kind of event (its "output
 * type"): the default set, less what the first event of the kind does not
 * sample, or what -F says, refused when the file cannot give it.
 * script_line__init() makes that decision once for a file and the branch
 * event its trace decodes into (named "branches" with the trace event's
 * modifiers, e.g. "branches:u"); script_line__head() prints a line up to
 * its addresses, script_line__tail() what follows them.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/decode/script_fields.h"

struct perf_event_attr;
struct pdata_reader;
struct sideband;

/* perf script's output types: PERF_TYPE_* below 6, then synthesized and any other */
enum { SCRIPT_OT_SYNTH = 6, SCRIPT_OT_OTHER, SCRIPT_OT_NR };

/* PERF_IP_FLAG_* (perf's util/event.h), the branch kinds of the flags field */
#define SCRIPT_IP_FLAG_BRANCH		(1u << 0)
#define SCRIPT_IP_FLAG_CALL		(1u << 1)
#define SCRIPT_IP_FLAG_RETURN		(1u << 2)
#define SCRIPT_IP_FLAG_CONDITIONAL	(1u << 3)
#define SCRIPT_IP_FLAG_SYSCALLRET	(1u << 4)
#define SCRIPT_IP_FLAG_ASYNC		(1u << 5)
#define SCRIPT_IP_FLAG_INTERRUPT	(1u << 6)
#define SCRIPT_IP_FLAG_TX_ABORT		(1u << 7)
#define SCRIPT_IP_FLAG_TRACE_BEGIN	(1u << 8)
#define SCRIPT_IP_FLAG_TRACE_END	(1u << 9)
#define SCRIPT_IP_FLAG_IN_TX		(1u << 10)
#define SCRIPT_IP_FLAG_VMENTRY		(1u << 11)
#define SCRIPT_IP_FLAG_VMEXIT		(1u << 12)
#define SCRIPT_IP_FLAG_INTR_DISABLE	(1u << 13)
#define SCRIPT_IP_FLAG_INTR_TOGGLE	(1u << 14)

/**
 * struct script_line - the fields of each output type, decided for one file.
 * @fields: per output type
 * @user_set: per output type: -F chose its fields (perf's user_set)
 * @flags: print the branch flags
 * @name_width: the longest event name (perf pads names to it)
 * @branch_name: the branch event's name
 * @branch_sample_type: what the branch event samples (perf's synthesized attr)
 * @spacing: callindent's column (perf keeps it across lines)
 */
struct script_line {
	unsigned int fields[SCRIPT_OT_NR];
	bool user_set[SCRIPT_OT_NR];
	bool flags;
	int name_width;
	char branch_name[64];
	__u64 branch_sample_type;
	int spacing;
};

/**
 * struct script_sample - what a line says about a sample.
 * @comm: its thread's name (thread_table__comm())
 * @period: its period (1 for branch samples)
 * @depth: the thread's call depth (callindent), after a return popped it
 * @callee: callindent: the symbol (or address) the line names, NULL: none
 */
struct script_sample {
	const char *comm;
	__s32 pid, tid;
	__s32 cpu;
	__u64 time;
	__u64 period;
	__u32 flags;
	__u8 insn_len;
	__u8 insn[16];
	int depth;
	const char *callee;
	__u64 callee_ip;
};

/**
 * script_line__init() - decide the fields for a file whose trace event is
 * @aux (its attr in the file), decoded into branch samples.
 * @o_fields: what -F said
 * @timeless: the decode gives no time (perf drops PERF_SAMPLE_TIME)
 * @keep_cpu: the branch samples keep PERF_SAMPLE_CPU (Intel PT: per-CPU buffers)
 * @names: the file's EVENT_DESC names
 * Return: 0, or -EINVAL when -F asks for what the file cannot give (one
 * pr_err() line: the caller exits with usage status).
 */
int script_line__init(struct script_line *l, const struct script_fields *o_fields, struct pdata_reader *r,
		      const struct sideband *names, const struct perf_event_attr *aux, bool timeless, bool keep_cpu);

/** script_line__output_type() - perf's output type of attr @type. */
int script_line__output_type(__u32 type);

/**
 * script_line__evsel_name() - perf's evsel__name(): the EVENT_DESC name of
 * an event of the file, else one made from its attr. Returns @buf.
 */
const char *script_line__evsel_name(const struct sideband *names, const struct perf_event_attr *a, __u64 id,
				    char *buf, size_t size);

/**
 * script_line__head() - the line up to the addresses into @buf (at least
 * 512 bytes): comm, tid, cpu, time, period, the event's name @evname
 * (NULL: the branch event), flags. Return: the bytes written.
 */
size_t script_line__head(const struct script_line *l, int ot, const char *evname, const struct script_sample *smp,
			 char *buf);

/**
 * script_line__callindent() - a branch line's callindent (perf's
 * perf_sample__fprintf_callindent()) into @buf (at least 512 bytes);
 * nothing unless the field is on. Return: the bytes written.
 */
size_t script_line__callindent(struct script_line *l, const struct script_sample *smp, char *buf);

/**
 * script_line__indent_pad() - the spaces that follow a callindent of @len
 * bytes, the column moved as perf moves it (for a line made elsewhere).
 */
int script_line__indent_pad(struct script_line *l, int len);

/** script_line__has() - is @field printed for output type @ot? */
static inline bool script_line__has(const struct script_line *l, int ot, unsigned int field)
{
	return l->fields[ot] & field;
}

/** script_line__branch_addr() - does a branch line print " => addr"? */
static inline bool script_line__branch_addr(const struct script_line *l)
{
	return (l->fields[0] & SCRIPT_F_ADDR) || !l->user_set[0];
}

/** script_line__tail() - insnlen and insn, and the newline. Return: the bytes written (at most 64). */
size_t script_line__tail(const struct script_line *l, int ot, const struct script_sample *smp, char *buf);

/** script_line__time() - perf's "%12s: " time text of @ns ("SEC.USEC"). */
size_t script_line__time(__u64 ns, char *buf);

#endif
