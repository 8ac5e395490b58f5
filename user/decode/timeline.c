// SPDX-License-Identifier: BSD-2-Clause
/* The kernel events of a recording as slices and instants per thread. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/event_walk.h"
#include "auxtrig/decode/timeline.h"
#include "auxtrig/format/tp_print.h"
#include "auxtrig/lang/point.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/syscall_table.h"

#define MAX_ARGS 16

/* A -w START..STOP window with tracepoint ends, from the command line. */
struct tl_rule {
	char start[2 * TP_NAME_MAX + 2], stop[2 * TP_NAME_MAX + 2];
	const char *label;
};

/* Something open on a thread: a syscall, a window, a uprobe call. */
struct tl_open {
	__u32 pid, tid;
	int kind;		/* TL_* */
	long key;		/* which: the rule, the depth, ... */
	char name[128];
	char enter[512];	/* the opening event, as its print fmt says */
	__u64 start;
};

enum { TL_SYSCALL, TL_RAW_SYSCALL, TL_RULE, TL_UPROBE, TL_RESUME };

struct tl_thread {
	__u32 pid, tid;
	char comm[16];
};

struct timeline {
	const struct timeline_sink *sink;
	const struct tp_formats *formats;
	const struct syscall_table *table;	/* the recording's architecture's, for raw_syscalls */
	const char *windows[64];	/* its -w specs, in order */
	size_t nr_windows;
	const char *ons[64];		/* its --on specs, in order */
	size_t nr_ons;
	struct tl_rule rules[64];
	size_t nr_rules;
	struct tl_open *open;
	size_t nr_open;
	struct tl_thread *threads;
	size_t nr_threads;
	__u64 last_time;
	char strs[MAX_ARGS][256];	/* string args of the event being written */
};

/* -w and --on values of the recording's command line. */
static void read_cmdline(struct timeline *t, const struct event_walk *w)
{
	const char *v;

	while (t->nr_ons < 64 && (v = event_walk__record_option(w, 'o', t->nr_ons)))
		t->ons[t->nr_ons++] = v;
	while (t->nr_windows < 64 && (v = event_walk__record_option(w, 'w', t->nr_windows)))
		t->windows[t->nr_windows++] = v;
}

/* The tracepoint "SYS:NAME" of a point, or "" for probes. */
static void tp_of(const char *text, size_t len, char *out, size_t size)
{
	char buf[4096], why[128];
	struct point p;

	out[0] = '\0';
	snprintf(buf, sizeof(buf), "%.*s", (int)len, text);
	if (!point__parse(&p, buf, why, sizeof(why)) && p.kind == POINT_TP)
		snprintf(out, size, "%s:%s", p.sys, p.name);
}

static void make_rules(struct timeline *t)
{
	for (size_t i = 0; i < t->nr_windows; i++) {
		const char *w = t->windows[i], *dots = strstr(w, "..");
		struct tl_rule *r = &t->rules[t->nr_rules];

		if (!dots)
			continue;
		tp_of(w, dots - w, r->start, sizeof(r->start));
		tp_of(dots + 2, strlen(dots + 2), r->stop, sizeof(r->stop));
		if (!r->start[0] || !r->stop[0])
			continue;	/* a probe end is not in the file */
		r->label = w;
		t->nr_rules++;
	}
}

/* Is syscall NAME (or * for raw_syscalls) a -w window of the recording? */
static bool is_window(const struct timeline *t, const char *name)
{
	for (size_t i = 0; i < t->nr_windows; i++)
		if (!strncmp(t->windows[i], "syscall:", 8) && !strcmp(t->windows[i] + 8, name))
			return true;
	return false;
}

static void thread_seen(struct timeline *t, __u32 pid, __u32 tid, const char *comm)
{
	struct tl_thread *v;

	for (size_t i = 0; i < t->nr_threads; i++) {
		if (t->threads[i].tid == tid) {
			if (comm)
				snprintf(t->threads[i].comm, sizeof(t->threads[i].comm), "%s", comm);
			return;
		}
	}
	v = realloc(t->threads, (t->nr_threads + 1) * sizeof(*v));
	if (!v)
		return;
	t->threads = v;
	v[t->nr_threads].pid = pid;
	v[t->nr_threads].tid = tid;
	snprintf(v[t->nr_threads].comm, sizeof(v[0].comm), "%s", comm ? comm : "");
	t->nr_threads++;
}

static __u32 pid_of(const struct timeline *t, __u32 tid)
{
	for (size_t i = 0; i < t->nr_threads; i++)
		if (t->threads[i].tid == tid)
			return t->threads[i].pid;
	return tid;
}

/* The record's fields as args: strings, signed numbers, unsigned ones in hex. */
static size_t field_args(struct timeline *t, const struct walk_sample *ws, struct chrome_arg *a, size_t n)
{
	const struct tp_format *f = ws->fmt;

	for (size_t i = 0; f && i < f->nr_fields && n < MAX_ARGS; i++) {
		const struct tp_field *fl = &f->fields[i];
		__s64 v;

		if (fl->is_common)
			continue;
		a[n] = (struct chrome_arg){ .key = fl->name };
		if (tp_field__is_str(fl)) {
			a[n].str = tp_field__str(fl, ws->s.raw, ws->s.raw_size, t->strs[n], sizeof(t->strs[n]));
			if (!a[n].str)
				continue;
		} else if (tp_field__int(fl, ws->s.raw, ws->s.raw_size, &v)) {
			continue;
		} else if (fl->is_signed) {
			a[n].num = v;
		} else {
			snprintf(t->strs[n], sizeof(t->strs[n]), "0x%llx", (unsigned long long)v);
			a[n].str = t->strs[n];
		}
		n++;
	}
	return n;
}

static int field_int(const struct walk_sample *ws, const char *name, __s64 *v)
{
	const struct tp_field *f = ws->fmt ? tp_format__field(ws->fmt, name) : NULL;

	return f ? tp_field__int(f, ws->s.raw, ws->s.raw_size, v) : -ENOENT;
}

static int open_push(struct timeline *t, const struct walk_sample *ws, int kind, long key, const char *name)
{
	struct tl_open *v = realloc(t->open, (t->nr_open + 1) * sizeof(*v)), *o;

	if (!v)
		return -ENOMEM;
	t->open = v;
	o = &v[t->nr_open++];
	memset(o, 0, sizeof(*o));
	o->pid = ws->s.pid;
	o->tid = ws->s.tid;
	o->kind = kind;
	o->key = key;
	o->start = ws->s.time;
	snprintf(o->name, sizeof(o->name), "%s", name);
	if (ws->fmt && tp_print__format(ws->fmt, ws->s.raw, ws->s.raw_size, o->enter, sizeof(o->enter)))
		tp_print__fields(ws->fmt, ws->s.raw, ws->s.raw_size, o->enter, sizeof(o->enter));
	return 0;
}

/* The innermost open KIND/KEY of the thread, or -1. */
static long open_find(const struct timeline *t, __u32 tid, int kind, long key)
{
	for (size_t i = t->nr_open; i-- > 0;)
		if (t->open[i].tid == tid && t->open[i].kind == kind && t->open[i].key == key)
			return (long)i;
	return -1;
}

static void slice_end(struct timeline *t, size_t i, __u64 end, struct chrome_arg *extra, size_t nr_extra)
{
	struct tl_open *o = &t->open[i];
	struct chrome_arg a[MAX_ARGS];
	size_t n = 0;
	const char *cat = o->kind == TL_SYSCALL ? (is_window(t, o->name) ? "window" : "syscall") :
			  o->kind == TL_RAW_SYSCALL ? (is_window(t, "*") ? "window" : "syscall") :
			  o->kind == TL_UPROBE ? "window" : "window";

	if (o->enter[0])
		a[n++] = (struct chrome_arg){ .key = "enter", .str = o->enter };
	for (size_t k = 0; k < nr_extra && n < MAX_ARGS; k++)
		a[n++] = extra[k];
	t->sink->slice(t->sink->ctx, o->pid, o->tid, o->start, end > o->start ? end - o->start : 0, o->name, cat, a, n);
	memmove(o, o + 1, (t->nr_open - i - 1) * sizeof(*o));
	t->nr_open--;
}

static void instant(struct timeline *t, const struct walk_sample *ws, __u32 pid, __u32 tid, const char *name,
		    const char *cat)
{
	struct chrome_arg a[MAX_ARGS];
	size_t n = field_args(t, ws, a, 0);

	t->sink->instant(t->sink->ctx, pid, tid, ws->s.time, name, cat, a, n);
}

/* The --on text of trigger number @nr (1-based), or NULL. */
static const char *on_text(const struct timeline *t, __s64 nr)
{
	return nr >= 1 && (size_t)nr <= t->nr_ons ? t->ons[nr - 1] : NULL;
}

/* Does the file have the event SYS:PREFIXNAME (an exit to pair an entry with)? */
static bool has_event(const struct timeline *t, const char *sys, const char *prefix, const char *name)
{
	size_t n = strlen(prefix);

	for (size_t i = 0; i < t->formats->nr; i++) {
		const struct tp_format *f = &t->formats->v[i];

		if (!strcmp(f->system, sys) && !strncmp(f->name, prefix, n) && !strcmp(f->name + n, name))
			return true;
	}
	return false;
}

static int one_sample(struct timeline *t, const struct walk_sample *ws)
{
	const struct tp_format *f = ws->fmt;
	const char *sys = f ? f->system : "", *ev = f ? f->name : ws->name;
	char name[512];
	bool edge = false;
	__s64 v = 0;
	long i;

	if (ws->s.time > t->last_time)
		t->last_time = ws->s.time;
	if (!strcmp(sys, "auxtrig") && !strcmp(ev, "trigger_stats"))
		return 0;	/* auxtrig's counters at the end, not a thread's event */
	if (strcmp(sys, "auxtrig") || strcmp(ev, "snapshot"))
		thread_seen(t, ws->s.pid, ws->s.tid, ws->comm);
	if (!strcmp(sys, "syscalls") && !strncmp(ev, "sys_enter_", 10) && has_event(t, "syscalls", "sys_exit_", ev + 10))
		return open_push(t, ws, TL_SYSCALL, 0, ev + 10);
	if (!strcmp(sys, "syscalls") && !strncmp(ev, "sys_exit_", 9)) {
		for (i = (long)t->nr_open; i-- > 0;)
			if (t->open[i].tid == ws->s.tid && t->open[i].kind == TL_SYSCALL && !strcmp(t->open[i].name, ev + 9))
				break;
		if (i >= 0) {
			struct chrome_arg ret = { .key = "ret" };

			field_int(ws, "ret", &ret.num);
			slice_end(t, (size_t)i, ws->s.time, &ret, 1);
			return 0;
		}
	}
	if (!strcmp(sys, "raw_syscalls") && !strcmp(ev, "sys_enter") && has_event(t, "raw_syscalls", "sys_exit", "")) {
		const struct syscall_entry *e;

		field_int(ws, "id", &v);
		e = t->table ? syscall_table__entry(t->table, (long)v) : NULL;
		if (e)
			snprintf(name, sizeof(name), "%s", e->name);
		else
			snprintf(name, sizeof(name), "syscall %lld", (long long)v);
		return open_push(t, ws, TL_RAW_SYSCALL, 0, name);
	}
	if (!strcmp(sys, "raw_syscalls") && !strcmp(ev, "sys_exit") &&
	    (i = open_find(t, ws->s.tid, TL_RAW_SYSCALL, 0)) >= 0) {
		struct chrome_arg ret = { .key = "ret" };

		field_int(ws, "ret", &ret.num);
		slice_end(t, (size_t)i, ws->s.time, &ret, 1);
		return 0;
	}
	if (!strcmp(sys, "auxtrig")) {
		if (!strcmp(ev, "uprobe_enter") || !strcmp(ev, "uprobe_exit")) {
			__s64 win = 0, depth = 0;
			const char *w, *colon;

			field_int(ws, "window", &win);
			field_int(ws, "depth", &depth);
			if (ev[7] == 'e' && ev[8] == 'n') {
				w = win >= 0 && (size_t)win < t->nr_windows ? t->windows[win] : "uprobe";
				colon = strrchr(w, ':');
				return open_push(t, ws, TL_UPROBE, (long)depth, colon ? colon + 1 : w);
			}
			i = open_find(t, ws->s.tid, TL_UPROBE, (long)depth);
			if (i >= 0) {
				struct chrome_arg ret = { .key = "ret" };

				field_int(ws, "ret", &ret.num);
				slice_end(t, (size_t)i, ws->s.time, &ret, 1);
				return 0;
			}
		} else if (!strcmp(ev, "resume")) {
			field_int(ws, "trigger", &v);
			snprintf(name, sizeof(name), "window (--on %s)", on_text(t, v) ?: "resume");
			if (open_find(t, ws->s.tid, TL_RESUME, 0) < 0)
				return open_push(t, ws, TL_RESUME, 0, name);
			return 0;
		} else if (!strcmp(ev, "pause")) {
			i = open_find(t, ws->s.tid, TL_RESUME, 0);
			if (i >= 0) {
				struct chrome_arg a[MAX_ARGS];
				size_t n = field_args(t, ws, a, 0);

				slice_end(t, (size_t)i, ws->s.time, a, n);
			}
			return 0;
		} else if (!strcmp(ev, "mark")) {
			field_int(ws, "trigger", &v);
			snprintf(name, sizeof(name), "mark: %s", on_text(t, v) ?: "--on");
			instant(t, ws, ws->s.pid, ws->s.tid, name, "trigger");
			return 0;
		} else if (!strcmp(ev, "snapshot")) {
			__s64 nr = 0, tid = 0;

			field_int(ws, "nr", &nr);
			field_int(ws, "tid", &tid);
			snprintf(name, sizeof(name), "snapshot %lld", (long long)nr);
			instant(t, ws, pid_of(t, (__u32)tid), (__u32)tid, name, "trigger");
			return 0;
		}
	}
	/* the ends of START..STOP windows */
	snprintf(name, sizeof(name), "%s:%s", sys, ev);
	for (size_t r = 0; r < t->nr_rules; r++) {
		i = open_find(t, ws->s.tid, TL_RULE, (long)r);
		if (i >= 0 && !strcmp(name, t->rules[r].stop)) {
			slice_end(t, (size_t)i, ws->s.time, NULL, 0);
			edge = true;
		} else if (i < 0 && !strcmp(name, t->rules[r].start)) {
			int err = open_push(t, ws, TL_RULE, (long)r, t->rules[r].label);

			if (err)
				return err;
			edge = true;
		}
	}
	(void)edge;
	instant(t, ws, ws->s.pid, ws->s.tid, ws->name, "event");
	return 0;
}

int timeline__walk(const struct pdata_reader *r, const struct timeline_sink *sink, const char *name)
{
	struct event_walk *w = event_walk__new(r);
	struct timeline t = { .sink = sink };
	struct walk_sample ws;
	int ret, err = 0;

	if (!w) {
		pr_err("%s: cannot read its tracepoint formats: %s\n", name,
		       errno == ENOMEM ? strerror(ENOMEM) : "malformed tracing data");
		return -errno;
	}
	t.formats = event_walk__formats(w);
	t.table = syscall_table__for_arch(pdata_reader__feature_string(r, PDATA_HEADER_ARCH));
	read_cmdline(&t, w);
	make_rules(&t);
	while (!err && (ret = event_walk__next(w, &ws)) > 0)
		err = one_sample(&t, &ws);
	if (!err && ret < 0) {
		pr_err("%s: stopped at a corrupt record\n", name);
		err = ret;
	}
	/* what is still open ends with the file */
	while (t.nr_open) {
		struct chrome_arg a = { .key = "unfinished", .num = 1 };

		slice_end(&t, t.nr_open - 1, t.last_time, &a, 1);
	}
	for (size_t i = 0; i < t.nr_threads; i++)
		sink->thread(sink->ctx, t.threads[i].pid, t.threads[i].tid, t.threads[i].comm);
	free(t.open);
	free(t.threads);
	event_walk__delete(w);
	return err;
}

static void chrome_slice(void *ctx, __u32 pid, __u32 tid, __u64 ts, __u64 dur, const char *name, const char *cat,
			 const struct chrome_arg *args, size_t nr_args)
{
	chrome_trace__slice(ctx, pid, tid, ts, dur, name, cat, args, nr_args);
}

static void chrome_instant(void *ctx, __u32 pid, __u32 tid, __u64 ts, const char *name, const char *cat,
			   const struct chrome_arg *args, size_t nr_args)
{
	chrome_trace__instant(ctx, pid, tid, ts, name, cat, args, nr_args);
}

static void chrome_thread(void *ctx, __u32 pid, __u32 tid, const char *comm)
{
	char label[64];

	snprintf(label, sizeof(label), "%s %u", comm[0] ? comm : "thread", tid);
	chrome_trace__thread(ctx, pid, tid, label);
	if (pid == tid) {
		snprintf(label, sizeof(label), "%s %u", comm[0] ? comm : "process", pid);
		chrome_trace__process(ctx, pid, label);
	}
}

int timeline__events(const struct pdata_reader *r, struct chrome_trace *ct, const char *name)
{
	const struct timeline_sink sink = {
		.slice = chrome_slice, .instant = chrome_instant, .thread = chrome_thread, .ctx = ct,
	};

	return timeline__walk(r, &sink, name);
}
