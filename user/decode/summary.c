// SPDX-License-Identifier: BSD-2-Clause
/* A recording summed up: windows per thread and kind, latency histograms, triggers, losses. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/event_walk.h"
#include "auxtrig/decode/summary.h"
#include "auxtrig/decode/timeline.h"
#include "auxtrig/format/tp_print.h"
#include "auxtrig/sys/log.h"

#define HIST_BUCKETS 40	/* [0, 1us), [1us, 2us), ... [2^38us, ...) */

struct sum_row {
	__u32 pid, tid;		/* tid 0: all threads (the histogram) */
	char name[128];
	const char *cat;
	__u64 count, errors, total, min, max;
	__u64 hist[HIST_BUCKETS];
};

struct sum_mark {
	char name[256];
	__u64 count;
};

struct sum_thread {
	__u32 pid, tid;
	char comm[16];
};

struct summary {
	struct sum_row *rows;
	size_t nr_rows;
	struct sum_mark *marks;
	size_t nr_marks;
	struct sum_thread *threads;
	size_t nr_threads;
	__u64 nr_slices, nr_instants;
	int err;
};

static struct sum_row *row_get(struct summary *s, __u32 pid, __u32 tid, const char *name, const char *cat)
{
	struct sum_row *v;

	for (size_t i = 0; i < s->nr_rows; i++)
		if (s->rows[i].tid == tid && !strcmp(s->rows[i].name, name) && !strcmp(s->rows[i].cat, cat))
			return &s->rows[i];
	v = realloc(s->rows, (s->nr_rows + 1) * sizeof(*v));
	if (!v) {
		s->err = -ENOMEM;
		return NULL;
	}
	s->rows = v;
	v = &v[s->nr_rows++];
	memset(v, 0, sizeof(*v));
	v->pid = pid;
	v->tid = tid;
	v->cat = cat;
	v->min = UINT64_MAX;
	snprintf(v->name, sizeof(v->name), "%s", name);
	return v;
}

static unsigned int bucket(__u64 ns)
{
	__u64 us = ns / 1000;
	unsigned int b = 0;

	if (!us)
		return 0;
	b = 64 - __builtin_clzll(us);	/* 1us -> 1, [2us, 4us) -> 2, ... */
	return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

static void row_add(struct sum_row *r, __u64 dur, bool error)
{
	r->count++;
	r->errors += error;
	r->total += dur;
	if (dur < r->min)
		r->min = dur;
	if (dur > r->max)
		r->max = dur;
	r->hist[bucket(dur)]++;
}

static void on_slice(void *ctx, __u32 pid, __u32 tid, __u64 ts, __u64 dur, const char *name, const char *cat,
		     const struct chrome_arg *args, size_t nr_args)
{
	struct summary *s = ctx;
	const char *kind = !strcmp(cat, "window") ? "window" : "syscall";
	bool error = false;
	struct sum_row *r;

	(void)ts;
	for (size_t i = 0; i < nr_args; i++)
		if (!strcmp(args[i].key, "ret") && !args[i].str && args[i].num < 0)
			error = true;
	s->nr_slices++;
	r = row_get(s, pid, tid, name, kind);
	if (r)
		row_add(r, dur, error);
	r = row_get(s, 0, 0, name, kind);
	if (r)
		row_add(r, dur, error);
}

static void on_instant(void *ctx, __u32 pid, __u32 tid, __u64 ts, const char *name, const char *cat,
		       const struct chrome_arg *args, size_t nr_args)
{
	struct summary *s = ctx;
	struct sum_mark *v;

	(void)pid, (void)tid, (void)ts, (void)args, (void)nr_args;
	s->nr_instants++;
	if (strcmp(cat, "trigger"))
		return;
	/* "snapshot N": one line for all of them */
	if (!strncmp(name, "snapshot ", 9))
		name = "snapshot";
	for (size_t i = 0; i < s->nr_marks; i++) {
		if (!strcmp(s->marks[i].name, name)) {
			s->marks[i].count++;
			return;
		}
	}
	v = realloc(s->marks, (s->nr_marks + 1) * sizeof(*v));
	if (!v) {
		s->err = -ENOMEM;
		return;
	}
	s->marks = v;
	snprintf(v[s->nr_marks].name, sizeof(v[0].name), "%s", name);
	v[s->nr_marks++].count = 1;
}

static void on_thread(void *ctx, __u32 pid, __u32 tid, const char *comm)
{
	struct summary *s = ctx;
	struct sum_thread *v = realloc(s->threads, (s->nr_threads + 1) * sizeof(*v));

	if (!v) {
		s->err = -ENOMEM;
		return;
	}
	s->threads = v;
	v[s->nr_threads].pid = pid;
	v[s->nr_threads].tid = tid;
	snprintf(v[s->nr_threads].comm, sizeof(v[0].comm), "%s", comm);
	s->nr_threads++;
}

static void ms(FILE *out, __u64 ns)
{
	fprintf(out, " %10.3f", ns / 1e6);
}

static void print_rows(const struct summary *s, __u32 tid, FILE *out)
{
	bool head = false;

	for (size_t i = 0; i < s->nr_rows; i++) {
		const struct sum_row *r = &s->rows[i];

		if (r->tid != tid)
			continue;
		if (!head) {
			fprintf(out, "   %-30s %8s %7s %10s %10s %10s %10s\n", "window", "count", "errors", "total(ms)",
				"min(ms)", "avg(ms)", "max(ms)");
			fprintf(out, "   %-30s %8s %7s %10s %10s %10s %10s\n", "------------------------------", "--------",
				"-------", "----------", "----------", "----------", "----------");
			head = true;
		}
		fprintf(out, "   %-30s %8" PRIu64 " %7" PRIu64, r->name, (uint64_t)r->count, (uint64_t)r->errors);
		ms(out, r->total);
		ms(out, r->min);
		ms(out, r->total / r->count);
		ms(out, r->max);
		fprintf(out, "%s\n", strcmp(r->cat, "window") ? "  (syscall event)" : "");
	}
}

static void print_hist(const struct sum_row *r, FILE *out)
{
	unsigned int lo = HIST_BUCKETS, hi = 0;
	__u64 most = 0;

	for (unsigned int b = 0; b < HIST_BUCKETS; b++) {
		if (!r->hist[b])
			continue;
		lo = b < lo ? b : lo;
		hi = b;
		most = r->hist[b] > most ? r->hist[b] : most;
	}
	fprintf(out, "\n latency of %s, all threads (%" PRIu64 "):\n", r->name, (uint64_t)r->count);
	for (unsigned int b = lo; b <= hi; b++) {
		char range[48];
		int bar = (int)(most ? (r->hist[b] * 40 + most - 1) / most : 0);

		if (!b)
			snprintf(range, sizeof(range), "[0, 1us)");
		else
			snprintf(range, sizeof(range), "[%lluus, %lluus)", 1ULL << (b - 1), 1ULL << b);
		fprintf(out, "   %-24s %8" PRIu64 " |%-40.*s|\n", range, (uint64_t)r->hist[b], bar,
			"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
	}
}

/* auxtrig:trigger_stats records and the --on texts of the command line. */
static void print_triggers(const struct pdata_reader *r, const struct summary *s, FILE *out)
{
	struct event_walk *w = event_walk__new(r);
	const char *const *argv;
	const char *ons[64];
	size_t nr_ons = 0;
	struct walk_sample ws;
	bool head = false;
	int argc;

	if (!w)
		return;
	argc = event_walk__cmdline(w, &argv);
	for (int i = 0; i < argc && nr_ons < 64; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--on") && i + 1 < argc)
			ons[nr_ons++] = argv[++i];
		else if (!strncmp(argv[i], "--on=", 5))
			ons[nr_ons++] = argv[i] + 5;
	}
	while (event_walk__next(w, &ws) > 0) {
		const struct tp_format *f = ws.fmt;
		__s64 v[6] = { 0 };
		static const char *const keys[] = { "trigger", "evaluated", "matched", "fired", "suppressed", "dropped" };

		if (!f || strcmp(f->system, "auxtrig") || strcmp(f->name, "trigger_stats"))
			continue;
		for (int k = 0; k < 6; k++) {
			const struct tp_field *fl = tp_format__field(f, keys[k]);

			if (fl)
				tp_field__int(fl, ws.s.raw, ws.s.raw_size, &v[k]);
		}
		if (!head) {
			fprintf(out, "\n triggers:\n");
			head = true;
		}
		fprintf(out, "   #%lld %s: evaluated %lld, matched %lld, fired %lld, suppressed %lld, dropped %lld\n",
			(long long)v[0], v[0] >= 1 && (size_t)v[0] <= nr_ons ? ons[v[0] - 1] : "(trigger program)",
			(long long)v[1], (long long)v[2], (long long)v[3], (long long)v[4], (long long)v[5]);
	}
	for (size_t i = 0; i < s->nr_marks; i++) {
		if (!head) {
			fprintf(out, "\n triggers:\n");
			head = true;
		}
		fprintf(out, "   %s: %" PRIu64 " in the file\n", s->marks[i].name, (uint64_t)s->marks[i].count);
	}
	event_walk__delete(w);
}

static int thread_cmp(const void *a, const void *b)
{
	const struct sum_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Does the file record system calls (the syscall view's lines)? */
static bool has_syscalls(const struct tp_formats *f)
{
	for (size_t i = 0; i < f->nr; i++)
		if ((!strcmp(f->v[i].system, "syscalls") && !strncmp(f->v[i].name, "sys_enter_", 10)) ||
		    (!strcmp(f->v[i].system, "raw_syscalls") && !strcmp(f->v[i].name, "sys_enter")))
			return true;
	return false;
}

int summary__print(const struct pdata_reader *r, const char *name, FILE *out)
{
	struct summary s = { 0 };
	const struct timeline_sink sink = { .slice = on_slice, .instant = on_instant, .thread = on_thread, .ctx = &s };
	struct walk_losses l = { 0 };
	struct event_walk *w;
	__u64 windows = 0, syscalls = 0;
	int err = timeline__walk(r, &sink, name);

	if (!err)
		err = s.err;
	if (err)
		goto out;
	for (size_t i = 0; i < s.nr_rows; i++)
		if (!s.rows[i].tid)
			*(strcmp(s.rows[i].cat, "window") ? &syscalls : &windows) += s.rows[i].count;
	fprintf(out, "\n Summary of %s: %" PRIu64 " window%s, %" PRIu64 " syscall%s recorded as events, %" PRIu64
		" other event%s, %zu thread%s\n", name, (uint64_t)windows, windows == 1 ? "" : "s", (uint64_t)syscalls,
		syscalls == 1 ? "" : "s", (uint64_t)s.nr_instants, s.nr_instants == 1 ? "" : "s", s.nr_threads,
		s.nr_threads == 1 ? "" : "s");
	if (s.nr_threads)
		qsort(s.threads, s.nr_threads, sizeof(*s.threads), thread_cmp);
	for (size_t t = 0; t < s.nr_threads; t++) {
		bool any = false;

		for (size_t i = 0; i < s.nr_rows && !any; i++)
			any = s.rows[i].tid == s.threads[t].tid;
		if (!any)
			continue;
		fprintf(out, "\n %s (%u), pid %u\n\n", s.threads[t].comm[0] ? s.threads[t].comm : "?", s.threads[t].tid,
			s.threads[t].pid);
		print_rows(&s, s.threads[t].tid, out);
	}
	for (size_t i = 0; i < s.nr_rows; i++)
		if (!s.rows[i].tid)
			print_hist(&s.rows[i], out);
	print_triggers(r, &s, out);
	w = event_walk__new(r);
	if (w)
		event_walk__losses(w, &l);
	fprintf(out, "\n lost: %" PRIu64 " records (kernel ring full), %" PRIu64 " records (dropped by auxtrig)",
		(uint64_t)l.lost, (uint64_t)l.lost_samples);
	if (l.aux_truncated)
		fprintf(out, ", %" PRIu64 " truncated hardware trace buffers", (uint64_t)l.aux_truncated);
	fprintf(out, "\n");
	if (w && has_syscalls(event_walk__formats(w)))
		fprintf(out, "\n each system call, one line: auxtrig script --format=syscalls -i %s\n", name);
	event_walk__delete(w);
out:
	free(s.rows);
	free(s.marks);
	free(s.threads);
	return err;
}
