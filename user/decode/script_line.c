// SPDX-License-Identifier: BSD-2-Clause
/*
 * One sample line as perf script 6.1 prints it (builtin-script.c:
 * perf_sample__fprintf_start(), process_event(), perf_sample__fprintf_bts(),
 * evsel__check_attr()). See script_line.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <linux/perf_event.h>

#include "auxtrig/decode/script_line.h"
#include "auxtrig/decode/sideband.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"

/* perf's PERF_SAMPLE_MASK: what a synthesized event keeps of the trace event's sample_type */
/* perf's PERF_TYPE_SYNTH, a type of its own (INT_MAX + 1) */
#define SCRIPT_TYPE_SYNTH	0x80000000u

#define SCRIPT_SAMPLE_MASK (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | \
			    PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			    PERF_SAMPLE_IDENTIFIER)

int script_line__output_type(__u32 type)
{
	if (type < PERF_TYPE_MAX)
		return (int)type;
	return type == SCRIPT_TYPE_SYNTH ? SCRIPT_OT_SYNTH : SCRIPT_OT_OTHER;
}

/* perf's evsel__add_modifiers() */
static size_t script_line__modifiers(const struct perf_event_attr *a, char *bf, size_t size)
{
	size_t colon = 0, r = 0;
	bool guest_default = false;

#define MOD(excl, c) do {					\
		if (!(excl)) {					\
			if (!colon)				\
				colon = ++r;			\
			if (r + 1 < size) {			\
				bf[r++] = (c);			\
				bf[r] = '\0';			\
			}					\
		}						\
	} while (0)
	if (size < 8)
		return 0;
	bf[0] = '\0';
	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		MOD(a->exclude_kernel, 'k');
		MOD(a->exclude_user, 'u');
		MOD(a->exclude_hv, 'h');
		guest_default = true;
	}
	if (a->precise_ip) {
		if (!colon)
			colon = ++r;
		for (unsigned int i = 0; i < a->precise_ip && r + 1 < size; i++)
			bf[r++] = 'p';
		bf[r] = '\0';
		guest_default = true;
	}
	if (a->exclude_host || (bool)a->exclude_guest == guest_default) {
		MOD(a->exclude_host, 'H');
		MOD(a->exclude_guest, 'G');
	}
#undef MOD
	if (colon)
		bf[colon - 1] = ':';
	return r;
}

static const char *const script_line__hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches", "branch-misses",
	"bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
};
static const char *const script_line__sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults",
	"major-faults", "alignment-faults", "emulation-faults", "dummy",
};

const char *script_line__evsel_name(const struct sideband *names, const struct perf_event_attr *a, __u64 id,
				    char *buf, size_t size)
{
	size_t n;

	for (size_t i = 0; names && i < names->nr_names; i++)
		if (names->name_ids[i] == id) {
			snprintf(buf, size, "%s", names->names[i]);
			return buf;
		}
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		n = snprintf(buf, size, "%s", a->config < sizeof(script_line__hw_names) / sizeof(char *) ?
					      script_line__hw_names[a->config] : "unknown-hardware");
		if (n < size)
			script_line__modifiers(a, buf + n, size - n);
		break;
	case PERF_TYPE_SOFTWARE:
		n = snprintf(buf, size, "%s", a->config < sizeof(script_line__sw_names) / sizeof(char *) ?
					      script_line__sw_names[a->config] : "unknown-software");
		if (n < size)
			script_line__modifiers(a, buf + n, size - n);
		break;
	case PERF_TYPE_TRACEPOINT:
		snprintf(buf, size, "unknown tracepoint");
		break;
	case PERF_TYPE_RAW:
		n = snprintf(buf, size, "raw 0x%" PRIx64, (uint64_t)a->config);
		if (n < size)
			script_line__modifiers(a, buf + n, size - n);
		break;
	default:
		snprintf(buf, size, "unknown attr type: %d", (int)a->type);
		break;
	}
	return buf;
}

/* perf's defaults per output type (builtin-script.c output[]) */
static unsigned int script_line__default(int ot)
{
	switch (ot) {
	case PERF_TYPE_TRACEPOINT:
		return SCRIPT_F_COMM | SCRIPT_F_TID | SCRIPT_F_CPU | SCRIPT_F_TIME | SCRIPT_F_EVENT | SCRIPT_F_TRACE;
	case PERF_TYPE_RAW:
		return SCRIPT_F_DEFAULT_HW | SCRIPT_F_ADDR;
	case SCRIPT_OT_SYNTH:
		return SCRIPT_F_DEFAULT_HW & ~SCRIPT_F_PERIOD;
	default:
		return SCRIPT_F_DEFAULT_HW;
	}
}

struct script_check {
	struct script_line *l;
	unsigned int user_fields;	/* the fields -F named */
	bool allow_user_set;		/* the file has an AUXTRACE index: perf lets some fields through */
};

/*
 * perf's evsel__do_check_stype(): a field whose sample bit the event lacks
 * is dropped from the defaults, refused when -F named it (unless allowed).
 */
static int script_line__check_stype(struct script_check *c, int ot, const char *evname, __u64 sample_type,
				    __u64 bit, unsigned int field, bool allow)
{
	if (sample_type & bit)
		return 0;
	if (c->user_fields & field) {
		unsigned int named = c->user_fields & field;

		if (allow && c->allow_user_set)
			return 0;
		pr_err("script: -F %s: the samples of '%s' in this file do not record it\n",
		       script_fields__name(named & -named), evname);
		return -EINVAL;
	}
	c->l->fields[ot] &= ~field;
	return 0;
}

/* perf's evsel__check_attr() for the first event of output type @ot. */
static int script_line__check(struct script_check *c, const struct perf_event_attr *a, const char *evname)
{
	int ot = script_line__output_type(a->type);
	unsigned int f = c->l->fields[ot];
	__u64 st = a->sample_type;
	int err = 0;

	if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY)
		return 0;
	if (f & SCRIPT_F_IP)
		err = err ?: script_line__check_stype(c, ot, evname, st, PERF_SAMPLE_IP, SCRIPT_F_IP, false);
	if (f & SCRIPT_F_ADDR)
		err = err ?: script_line__check_stype(c, ot, evname, st, PERF_SAMPLE_ADDR, SCRIPT_F_ADDR, true);
	if (err)
		return err;
	f = c->l->fields[ot];
	if ((f & (SCRIPT_F_SYM | SCRIPT_F_DSO)) && !(st & (PERF_SAMPLE_IP | PERF_SAMPLE_ADDR))) {
		pr_err("script: -F sym/dso: the samples of '%s' in this file have no address\n", evname);
		return -EINVAL;
	}
	if ((f & SCRIPT_F_SYMOFF) && !(f & SCRIPT_F_SYM)) {
		pr_err("script: -F symoff is the offset into sym: name sym too\n");
		return -EINVAL;
	}
	if (f & (SCRIPT_F_PID | SCRIPT_F_TID))
		err = err ?: script_line__check_stype(c, ot, evname, st, PERF_SAMPLE_TID, SCRIPT_F_TID | SCRIPT_F_PID,
						       false);
	if (f & SCRIPT_F_TIME)
		err = err ?: script_line__check_stype(c, ot, evname, st, PERF_SAMPLE_TIME, SCRIPT_F_TIME, false);
	if (f & SCRIPT_F_CPU)
		err = err ?: script_line__check_stype(c, ot, evname, st, PERF_SAMPLE_CPU, SCRIPT_F_CPU, true);
	return err;
}

int script_line__init(struct script_line *l, const struct script_fields *o_fields, struct pdata_reader *r,
		      const struct sideband *names, const struct perf_event_attr *aux, bool timeless, bool keep_cpu)
{
	struct script_check c = { .l = l, .allow_user_set = pdata_reader__has_feature(r, PDATA_HEADER_AUXTRACE) };
	struct perf_event_attr br = { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS };
	bool seen[SCRIPT_OT_NR] = { 0 };
	char name[128];
	int err = 0;

	memset(l, 0, sizeof(*l));
	for (int ot = 0; ot < SCRIPT_OT_NR; ot++) {
		if (o_fields->replace)
			l->fields[ot] = o_fields->set;
		else
			l->fields[ot] = (script_line__default(ot) | o_fields->set) & ~o_fields->del;
		/* perf's invalid_fields: only tracepoints have a trace */
		if (ot != PERF_TYPE_TRACEPOINT)
			l->fields[ot] &= ~SCRIPT_F_TRACE;
		l->user_set[ot] = o_fields->given;
	}
	l->flags = o_fields->flags;
	c.user_fields = o_fields->set;

	/* the branch event perf synthesizes from the trace event */
	if (aux) {
		br.sample_type = (aux->sample_type & SCRIPT_SAMPLE_MASK) | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				 PERF_SAMPLE_PERIOD | PERF_SAMPLE_ADDR;
		if (timeless)
			br.sample_type &= ~(__u64)PERF_SAMPLE_TIME;
		else
			br.sample_type |= PERF_SAMPLE_TIME;
		if (!keep_cpu)
			br.sample_type &= ~(__u64)PERF_SAMPLE_CPU;
		br.exclude_user = aux->exclude_user;
		br.exclude_kernel = aux->exclude_kernel;
		br.exclude_hv = aux->exclude_hv;
		br.exclude_host = aux->exclude_host;
		br.exclude_guest = aux->exclude_guest;
		br.sample_period = 1;
		script_line__evsel_name(NULL, &br, 0, l->branch_name, sizeof(l->branch_name));
		l->branch_sample_type = br.sample_type;
		l->name_width = (int)strlen(l->branch_name);
	}
	/* the file's events: names, and the first of each output type checked */
	for (size_t i = 0; i < pdata_reader__nr_attrs(r); i++) {
		const struct pdata_reader_attr *a = pdata_reader__attr(r, i);
		int ot = script_line__output_type(a->attr.type);
		int len;

		script_line__evsel_name(names, &a->attr, a->nr_ids ? a->ids[0] : 0, name, sizeof(name));
		len = (int)strlen(name);
		if (len > l->name_width)
			l->name_width = len;
		if (a->attr.type >= PERF_TYPE_MAX || seen[ot])
			continue;
		seen[ot] = true;
		if (l->fields[ot] && !err)
			err = script_line__check(&c, &a->attr, name);
	}
	/* perf's process_attr(): the branch event is checked if it is the first of its type */
	if (aux && !seen[PERF_TYPE_HARDWARE] && !err)
		err = script_line__check(&c, &br, l->branch_name);
	return err;
}

size_t script_line__time(__u64 ns, char *buf)
{
	char t[32];
	__u64 us = ns / 1000;

	snprintf(t, sizeof(t), "%" PRIu64 ".%06" PRIu64, (uint64_t)(us / 1000000), (uint64_t)(us % 1000000));
	return (size_t)sprintf(buf, "%12s: ", t);
}

/* perf's sample_flags[] names */
static const char *script_line__flag_name(__u32 flags)
{
	static const struct { __u32 flags; const char *name; } names[] = {
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL, "call" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN, "return" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CONDITIONAL, "jcc" },
		{ SCRIPT_IP_FLAG_BRANCH, "jmp" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_INTERRUPT, "int" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_INTERRUPT, "iret" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_SYSCALLRET, "syscall" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_SYSCALLRET, "sysret" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_ASYNC, "async" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_ASYNC | SCRIPT_IP_FLAG_INTERRUPT,
		  "hw int" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TX_ABORT, "tx abrt" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TRACE_BEGIN, "tr strt" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TRACE_END, "tr end" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_VMENTRY, "vmentry" },
		{ SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_VMEXIT, "vmexit" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].flags == flags)
			return names[i].name;
	return NULL;
}

/* perf's perf_sample__sprintf_flags() */
static void script_line__flags(__u32 flags, char *str, size_t sz)
{
	const __u32 xf = SCRIPT_IP_FLAG_IN_TX | SCRIPT_IP_FLAG_INTR_DISABLE | SCRIPT_IP_FLAG_INTR_TOGGLE;
	static const char chars[] = "bcrosyiABExgh";	/* perf's PERF_IP_FLAG_CHARS */
	const char *name;
	char xs[16] = "";
	size_t pos = 0, i;

	if (flags & xf)
		snprintf(xs, sizeof(xs), "(%s%s%s)", flags & SCRIPT_IP_FLAG_IN_TX ? "x" : "",
			 flags & SCRIPT_IP_FLAG_INTR_DISABLE ? "D" : "", flags & SCRIPT_IP_FLAG_INTR_TOGGLE ? "t" : "");
	name = script_line__flag_name(flags & ~xf);
	if (name) {
		snprintf(str, sz, "%-15s%6s", name, xs);
		return;
	}
	if (flags & SCRIPT_IP_FLAG_TRACE_BEGIN) {
		name = script_line__flag_name(flags & ~(xf | SCRIPT_IP_FLAG_TRACE_BEGIN));
		if (name) {
			snprintf(str, sz, "tr strt %-7s%6s", name, xs);
			return;
		}
	}
	if (flags & SCRIPT_IP_FLAG_TRACE_END) {
		name = script_line__flag_name(flags & ~(xf | SCRIPT_IP_FLAG_TRACE_END));
		if (name) {
			snprintf(str, sz, "tr end  %-7s%6s", name, xs);
			return;
		}
	}
	for (i = 0; i < sizeof(chars) - 1; i++, flags >>= 1)
		if ((flags & 1) && pos + 1 < sz)
			str[pos++] = chars[i];
	for (; i < 32; i++, flags >>= 1)
		if ((flags & 1) && pos + 1 < sz)
			str[pos++] = '?';
	str[pos] = '\0';
}

size_t script_line__head(const struct script_line *l, int ot, const char *evname, const struct script_sample *smp,
			 char *buf)
{
	unsigned int f = l->fields[ot];
	char *p = buf;

	if (f & SCRIPT_F_COMM)
		p += sprintf(p, "%16.200s ", smp->comm ? smp->comm : ":-1");
	if ((f & SCRIPT_F_PID) && (f & SCRIPT_F_TID))
		p += sprintf(p, "%5d/%-5d ", smp->pid, smp->tid);
	else if (f & SCRIPT_F_PID)
		p += sprintf(p, "%5d ", smp->pid);
	else if (f & SCRIPT_F_TID)
		p += sprintf(p, "%5d ", smp->tid);
	if (f & SCRIPT_F_CPU)
		p += sprintf(p, "[%03d] ", smp->cpu);
	if (f & SCRIPT_F_TIME)
		p += script_line__time(smp->time, p);
	if (f & SCRIPT_F_PERIOD)
		p += sprintf(p, "%10" PRIu64 " ", (uint64_t)smp->period);
	if (f & SCRIPT_F_EVENT)
		p += sprintf(p, "%*.100s: ", l->name_width, evname ? evname : l->branch_name);
	if (l->flags) {
		char str[64];

		script_line__flags(smp->flags, str, sizeof(str));
		p += sprintf(p, "  %-21s ", str);
	}
	return (size_t)(p - buf);
}

size_t script_line__callindent(struct script_line *l, const struct script_sample *smp, char *buf)
{
	int len = 0;

	if (!(l->fields[0] & SCRIPT_F_CALLINDENT))
		return 0;
	if (smp->callee)
		len = sprintf(buf, "%*s%.200s", smp->depth * 4, "", smp->callee);
	else if (smp->callee_ip)
		len = sprintf(buf, "%*s%16" PRIx64, smp->depth * 4, "", (uint64_t)smp->callee_ip);
	len += sprintf(buf + len, "%*s", script_line__indent_pad(l, len), "");
	return (size_t)len;
}

int script_line__indent_pad(struct script_line *l, int len)
{
	/* perf keeps the column from changing often, so that lines line up */
	if (len > l->spacing || (len && len < l->spacing - 52))
		l->spacing = (len + 4 + 31) / 32 * 32;
	return len < l->spacing ? l->spacing - len : 0;
}

size_t script_line__tail(const struct script_line *l, int ot, const struct script_sample *smp, char *buf)
{
	unsigned int f = l->fields[ot];
	char *p = buf;

	if (f & SCRIPT_F_INSNLEN)
		p += sprintf(p, " ilen: %d", smp->insn_len);
	if ((f & SCRIPT_F_INSN) && smp->insn_len) {
		p += sprintf(p, " insn:");
		for (int i = 0; i < smp->insn_len && i < 16; i++)
			p += sprintf(p, " %02x", smp->insn[i]);
	}
	*p++ = '\n';
	return (size_t)(p - buf);
}
