// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig script --windows`: one window at a time, from trace enable to
 * disable, headed by whose it was and why (see internal/script.h).
 *
 * A window is one stretch of trace between the hardware starting to trace
 * and stopping: with aux_resume/aux_pause (or the userspace gate) every
 * window of a thread shows in the trace itself as a trace enable (Intel PT
 * TIP.PGE, CoreSight TRACE_ON) and a disable (TIP.PGD, a discontinuity or
 * the end of the buffer). The file's other records say whose window it was
 * and why: ITRACE_START (the thread that owns the CPU's trace), COMM, the
 * window-edge event samples (e.g. syscalls:sys_enter_openat, if recorded)
 * and the PERF_RECORD_AUX that published the data, with its flags.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/chrome_trace.h"
#include "auxtrig/decode/internal/script.h"
#include "uapi/linux/perf_event_aux.h"

struct script_win *script_win__new(int cpu, __u32 idx, __u64 aux_offset, __u64 tsc, __u64 ip, const char *why)
{
	struct script_win *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->cpu = cpu;
	w->buf_cpu = cpu;
	w->idx = idx;
	w->aux_offset = aux_offset;
	w->start_tsc = tsc;
	w->open_ip = ip;
	snprintf(w->opened, sizeof(w->opened), "%s", why);
	snprintf(w->closed, sizeof(w->closed), "end of trace");
	return w;
}

int script_win__add(struct script_win *w, __u64 ip, __u32 n, __u8 step, __u8 iclass)
{
	if (w->nr == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct script_win_run *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->nr++] = (struct script_win_run){ .ip = ip, .n = n, .step = step, .iclass = iclass };
	w->nr_insns += n;
	return 0;
}

void script_win__close(struct script_win *w, const char *why)
{
	snprintf(w->closed, sizeof(w->closed), "%s", why);
	w->done = true;
}

void script_win__delete(struct script_win *w)
{
	if (!w)
		return;
	free(w->v);
	free(w);
}

const char *script__symoff(struct script_session *s, __u64 addr, char *buf, size_t size)
{
	return binaries__symoff(s->bins, addr, true, buf, size);
}

static __u64 script_win_printer__ns(const struct script_win_printer *p, __u64 tsc)
{
	__u64 quot, rem;

	if (!p->have_time || !tsc)
		return 0;
	quot = tsc >> p->time_shift;
	rem = tsc & ((1ULL << p->time_shift) - 1);
	return p->time_zero + quot * p->time_mult + ((rem * p->time_mult) >> p->time_shift);
}

static void script__print_time(FILE *f, __u64 ns)
{
	if (ns)
		fprintf(f, "%" PRIu64 ".%09" PRIu64, (uint64_t)(ns / 1000000000), (uint64_t)(ns % 1000000000));
	else
		fputc('?', f);
}

/* The header: whose, opened and closed by what, when, which AUX record. */
static void script_win__print_header(struct script_win_printer *p, const struct script_win *w, __u64 start,
				     __u64 end)
{
	struct script_session *s = p->s;
	const struct sideband *sd = &s->sd;
	const struct sideband_ev *it = NULL, *aux, *edge = NULL;
	const char *comm;
	FILE *f = s->out;
	char sym[256];

	/*
	 * whose: a per-thread buffer's thread (its ITRACE_START names its pid);
	 * else the CPU's ITRACE_START at or before the window (the first one if untimed)
	 */
	for (size_t j = 0; w->tid && j < sd->nr_itrace; j++)
		if (sd->itrace[j].tid == w->tid) {
			it = &sd->itrace[j];
			break;
		}
	for (size_t j = 0; !w->tid && j < sd->nr_itrace; j++)
		if (sd->itrace[j].cpu == w->cpu || sd->itrace[j].cpu < 0)
			if (!it || (start && sd->itrace[j].time <= start))
				it = &sd->itrace[j];
	/* which PERF_RECORD_AUX published its first bytes */
	aux = sideband__aux_of(sd, w->buf_cpu, w->aux_offset);
	/* why: the last event sample of that thread/CPU before it opened */
	for (size_t j = 0; start && j < sd->nr_edge; j++)
		if (sd->edge[j].time <= start && (sd->edge[j].cpu == w->cpu || (it && sd->edge[j].tid == it->tid)))
			edge = &sd->edge[j];
	/* a thread made by clone() has no COMM of its own until it renames itself: its process's */
	comm = it ? sideband__comm(sd, it->tid) : NULL;
	if (it && !comm)
		comm = sideband__comm(sd, it->pid);
	if (p->number) {
		fflush(f);
		p->number(p->number_ctx);
		fprintf(f, ": cpu %d", w->cpu);
	} else {
		fprintf(f, "# window %zu: cpu %d", ++p->printed, w->cpu);
	}
	if (it)
		fprintf(f, ", %s %u/%u", comm ? comm : "?", it->pid, it->tid);
	fprintf(f, "\n#   opened by %s at %s", w->opened, script__symoff(s, w->open_ip, sym, sizeof(sym)));
	if (edge) {
		fprintf(f, ", after %s at ", edge->name ? edge->name : "an event");
		script__print_time(f, edge->time);
	}
	fprintf(f, "\n#   closed by %s", w->closed);
	if (w->close_ip)
		fprintf(f, " at %s", script__symoff(s, w->close_ip, sym, sizeof(sym)));
	fprintf(f, "\n#   time ");
	script__print_time(f, start);
	fprintf(f, " .. ");
	script__print_time(f, end);
	fprintf(f, ", %" PRIu64 " instructions, trace at AUX offset %#" PRIx64, (uint64_t)w->nr_insns,
		(uint64_t)w->aux_offset);
	if (aux)
		fprintf(f, " (PERF_RECORD_AUX offset %#" PRIx64 " size %#" PRIx64 " flags%s%s%s%s%s)", (uint64_t)aux->a,
			(uint64_t)aux->b, aux->c & PERF_AUX_FLAG_TRUNCATED ? " TRUNCATED" : "",
			aux->c & PERF_AUX_FLAG_PARTIAL ? " PARTIAL" : "",
			aux->c & PERF_AUX_FLAG_COLLISION ? " COLLISION" : "",
			aux->c & PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW ? " RAW" : "",
			aux->c & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION |
				  PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW) ? "" : " none");
	fputc('\n', f);
}

/*
 * --format=chrome: the window a slice on its thread, the calls decoded in it
 * nested inside. Instructions have no time of their own, so each is placed
 * by its index between the window's start and end.
 */
static void script_win__chrome(struct script_win_printer *p, const struct script_win *w)
{
	struct script_session *s = p->s;
	__u64 start = script_win_printer__ns(p, w->start_tsc), end = script_win_printer__ns(p, w->end_tsc);
	const struct sideband_ev *it = NULL;
	struct { char name[256]; __u64 ts; } stack[64];
	__u64 k = 0, nr = w->nr_insns;
	int depth = 0;
	__u32 pid, tid;

	if (!start || end < start)
		return;	/* untimed: nowhere to put it */
	for (size_t j = 0; j < s->sd.nr_itrace; j++)
		if (s->sd.itrace[j].cpu == w->cpu || s->sd.itrace[j].cpu < 0)
			if (!it || s->sd.itrace[j].time <= start)
				it = &s->sd.itrace[j];
	pid = it ? it->pid : 0;
	tid = it ? it->tid : 0;
	{
		struct chrome_arg a[] = {
			{ .key = "opened", .str = w->opened }, { .key = "closed", .str = w->closed },
			{ .key = "instructions", .num = (long long)nr }, { .key = "cpu", .num = w->cpu },
		};

		chrome_trace__slice(s->ct, pid, tid, start, end - start, "hardware trace window", "window", a, 4);
	}
	for (size_t r = 0; r < w->nr; r++) {
		const struct script_win_run *run = &w->v[r];
		__u64 ts = start + (nr > 1 ? (end - start) * (k + run->n - 1) / (nr - 1) : 0);

		k += run->n;
		if (run->iclass == SCRIPT_INSN_CALL && depth < 64) {
			/* the callee: where the next run starts */
			char *plus;

			script__symoff(s, r + 1 < w->nr ? w->v[r + 1].ip : w->close_ip, stack[depth].name,
				       sizeof(stack[depth].name));
			plus = strstr(stack[depth].name, "+0x");
			if (plus)
				*plus = '\0';
			stack[depth++].ts = ts;
		} else if (run->iclass == SCRIPT_INSN_RETURN && depth > 0) {
			depth--;
			chrome_trace__slice(s->ct, pid, tid, stack[depth].ts, ts - stack[depth].ts, stack[depth].name,
					    "call", NULL, 0);
		}
	}
	while (depth-- > 0)
		chrome_trace__slice(s->ct, pid, tid, stack[depth].ts, end - stack[depth].ts, stack[depth].name, "call",
				    NULL, 0);
	p->printed++;
}

void script_win__print(struct script_win_printer *p, const struct script_win *w)
{
	struct script_session *s = p->s;

	if (s->ct) {
		script_win__chrome(p, w);
		return;
	}
	FILE *f = s->out;
	__u64 start = script_win_printer__ns(p, w->start_tsc), end = script_win_printer__ns(p, w->end_tsc);
	int depth = 0, call_trace = s->o->call_trace;
	char sym[256], to[256];

	script_win__print_header(p, w, start, end);
	if (call_trace && !strncmp(w->opened, "trace ", 6) && w->open_ip)
		fprintf(f, "tr strt %16d [unknown] => %16" PRIx64 " %s\n", 0, (uint64_t)w->open_ip,
			script__symoff(s, w->open_ip, sym, sizeof(sym)));
	for (size_t r = 0; r < w->nr; r++) {
		const struct script_win_run *run = &w->v[r];

		for (__u32 k = 0; k < run->n; k++) {
			__u64 ip = run->ip + (__u64)k * run->step;
			bool last_of_run = k + 1 == run->n, last = last_of_run && r + 1 == w->nr;
			__u8 iclass = last_of_run ? run->iclass : SCRIPT_INSN_OTHER;
			/* the last instruction before a trace disable is perf's "tr end" branch */
			bool tr_end = last && w->close_ip && !strncmp(w->closed, "trace disable", 13);
			__u64 to_ip = !last_of_run ? ip + run->step : r + 1 < w->nr ? w->v[r + 1].ip : w->close_ip;

			if (!call_trace) {
				char line[32], *q = script__hex16(line, ip);

				*q++ = ' ';
				fwrite(line, 1, q - line, f);
				fputs(script__symoff(s, ip, sym, sizeof(sym)), f);
				fputc('\n', f);
				continue;
			}
			if (iclass == SCRIPT_INSN_OTHER && !tr_end)
				continue;
			fprintf(f, "%*s%s%s %16" PRIx64 " %s => %16" PRIx64 " %s\n", 2 * depth, "", tr_end ? "tr end " : "",
				iclass == SCRIPT_INSN_CALL ? "call" : iclass == SCRIPT_INSN_RETURN ? "return" : "",
				(uint64_t)ip, script__symoff(s, ip, sym, sizeof(sym)), (uint64_t)to_ip,
				to_ip ? script__symoff(s, to_ip, to, sizeof(to)) : "[unknown]");
			/* a callee's lines, its return included, are one level in */
			if (iclass == SCRIPT_INSN_CALL)
				depth++;
			else if (iclass == SCRIPT_INSN_RETURN && depth > 0)
				depth--;
		}
	}
}

void script_win_printer__finish(struct script_win_printer *p)
{
	if (p->s->ct)
		return;	/* the timeline has no closing line */
	fprintf(p->s->out, "# %zu window%s\n", p->printed, p->printed == 1 ? "" : "s");
}
