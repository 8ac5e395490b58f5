// SPDX-License-Identifier: BSD-2-Clause
/* `auxtrig script --format=syscalls`: see include/auxtrig/decode/syscall_view.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/event_walk.h"
#include "auxtrig/decode/syscall_args.h"
#include "auxtrig/decode/syscall_view.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/tp_print.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/syscall_table.h"

#define VIEW_ARGS	6		/* a system call's arguments */
#define VIEW_TEXT	4096		/* the arguments' text: 4 strings of 255 bytes, quoted, and the rest */
#define VIEW_BUCKETS	1024		/* threads by tid */

/* A call's entry, waiting for its exit. */
struct pending {
	bool open;
	bool from_raw;		/* raw_syscalls:sys_enter (a richer syscalls: entry replaces it) */
	char call[64];
	__u64 time;
	char comm[16];
	char args[VIEW_TEXT];
};

struct thread {
	struct thread *next;
	__u32 tid;
	struct pending p;
	char done[64];		/* the call whose exit came last, until the thread's next entry */
	bool done_raw;		/* and whether raw_syscalls:sys_exit brought it */
};

struct view {
	FILE *out;
	const struct event_walk *w;
	const struct tp_formats *formats;
	const struct syscall_table *table;
	const char *arch;
	bool warned_arch;	/* said once that raw_syscalls numbers cannot be named */
	int err;		/* -ENOMEM: a thread could not be followed */
	struct thread *threads[VIEW_BUCKETS];
	size_t nr_threads;
};

static struct thread *thread_of(struct view *v, __u32 tid)
{
	struct thread **b = &v->threads[tid % VIEW_BUCKETS], *t;

	for (t = *b; t; t = t->next)
		if (t->tid == tid)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t) {
		v->err = -ENOMEM;
		return NULL;
	}
	t->tid = tid;
	t->next = *b;
	*b = t;
	v->nr_threads++;
	return t;
}

static void when(__u64 ns, char *buf, size_t size)
{
	__u64 us = ns / 1000;

	snprintf(buf, size, "%" PRIu64 ".%06" PRIu64, (uint64_t)(us / 1000000), (uint64_t)(us % 1000000));
}

static void comm_of(const struct walk_sample *ws, char *buf, size_t size)
{
	/* a thread no COMM record named: "?" before its tid */
	snprintf(buf, size, "%s", ws->comm ?: "?");
}

/* The format called syscalls:sys_enter_CALL in the file, or NULL. */
static const struct tp_format *enter_format(const struct view *v, const char *call)
{
	for (size_t i = 0; i < v->formats->nr; i++) {
		const struct tp_format *f = &v->formats->v[i];

		if (!strcmp(f->system, "syscalls") && !strncmp(f->name, "sys_enter_", 10) && !strcmp(f->name + 10, call))
			return f;
	}
	return NULL;
}

/* Is @f one of a call's arguments (not the syscall number, not a recorded string's own field)? */
static bool is_arg(const struct tp_field *f)
{
	return !f->is_common && !f->is_dynamic && strcmp(f->name, "__syscall_nr");
}

/*
 * The user string recorded for argument @f in @raw: the __data_loc field
 * @strfield ("filename_str"; "arg1_str" in raw_syscalls records; the kernel's
 * own "__filename_val" since Linux 6.19) of @fmt, when it holds one (a
 * recorded empty string has its NUL: an empty __data_loc is no string).
 */
static const char *arg_str(const struct tp_format *fmt, const char *strfield, const void *raw, size_t size, char *buf,
			   size_t bufsize)
{
	const struct tp_field *s = tp_format__field(fmt, strfield);
	__u32 loc;

	if (!s || !s->is_dynamic || s->offset + 4 > size)
		return NULL;
	memcpy(&loc, (const char *)raw + s->offset, 4);
	if (!(loc >> 16))
		return NULL;
	return tp_field__str(s, raw, size, buf, bufsize);
}

/* The arguments of a syscalls:sys_enter_CALL record. */
static void args_of_enter(const struct view *v, const struct walk_sample *ws, const char *call, char *text)
{
	const struct tp_format *f = ws->fmt;
	struct syscall_arg args[VIEW_ARGS];
	char strs[VIEW_ARGS][256], name[80];
	size_t n = 0;
	__s64 x;

	for (size_t i = 0; i < f->nr_fields && n < VIEW_ARGS; i++) {
		const struct tp_field *fl = &f->fields[i];

		if (!is_arg(fl) || fl->offset + 8 > ws->s.raw_size)
			continue;
		memcpy(&x, (const char *)ws->s.raw + fl->offset, 8);
		snprintf(name, sizeof(name), "%s_str", fl->name);
		args[n] = (struct syscall_arg){ .field = fl, .value = (__u64)x };
		args[n].str = arg_str(f, name, ws->s.raw, ws->s.raw_size, strs[n], sizeof(strs[n]));
		if (!args[n].str) {
			snprintf(name, sizeof(name), "__%s_val", fl->name);
			args[n].str = arg_str(f, name, ws->s.raw, ws->s.raw_size, strs[n], sizeof(strs[n]));
		}
		n++;
	}
	syscall_args__format(call, v->arch, args, n, text, VIEW_TEXT);
}

/*
 * The arguments of a raw_syscalls:sys_enter record: named and typed by the
 * call's own enter format when the file has it, else six hex words.
 */
static void args_of_raw(const struct view *v, const struct walk_sample *ws, const char *call, char *text)
{
	const struct tp_format *f = call ? enter_format(v, call) : NULL;
	const struct tp_field *a = tp_format__field(ws->fmt, "args");
	struct syscall_arg args[VIEW_ARGS];
	char strs[VIEW_ARGS][256], name[16];
	__u64 val[VIEW_ARGS] = { 0 };
	size_t n = 0, k = 0;
	int len = 0;

	if (a && a->offset + sizeof(val) <= ws->s.raw_size)
		memcpy(val, (const char *)ws->s.raw + a->offset, sizeof(val));
	for (size_t i = 0; f && i < f->nr_fields && n < VIEW_ARGS; i++) {
		if (!is_arg(&f->fields[i]))
			continue;
		snprintf(name, sizeof(name), "arg%zu_str", n);
		args[n] = (struct syscall_arg){ .field = &f->fields[i], .value = val[n] };
		args[n].str = arg_str(ws->fmt, name, ws->s.raw, ws->s.raw_size, strs[n], sizeof(strs[n]));
		n++;
	}
	if (f) {
		syscall_args__format(call, v->arch, args, n, text, VIEW_TEXT);
		return;
	}
	text[0] = '\0';
	for (k = 0; k < VIEW_ARGS && len >= 0 && len < VIEW_TEXT; k++)
		len += snprintf(text + len, VIEW_TEXT - (size_t)len, "%s%#" PRIx64, k ? ", " : "", (uint64_t)val[k]);
}

/* The integer field @name of the sample's record. Return: 0, or -ENOENT when its format or record has none. */
static int int_field(const struct walk_sample *ws, const char *name, __s64 *v)
{
	const struct tp_field *f = tp_format__field(ws->fmt, name);

	*v = 0;
	if (!f || tp_field__int(f, ws->s.raw, ws->s.raw_size, v))
		return -ENOENT;
	return 0;
}

/* A raw record's call: its tracepoint's name by the file's syscall table, else "syscall_NR". */
static void raw_call(struct view *v, const struct walk_sample *ws, char *call, size_t size)
{
	const char *n;
	__s64 nr;

	if (int_field(ws, "id", &nr))
		nr = -1;
	if (!v->table && !v->warned_arch) {
		pr_warn("recorded on %s: raw_syscalls numbers are not named (x86_64 and arm64 are)\n",
			v->arch ?: "an architecture the file does not name");
		v->warned_arch = true;
	}
	n = v->table ? syscall_table__tp_name(v->table, (long)nr) : NULL;
	if (n)
		snprintf(call, size, "%s", n);
	else
		snprintf(call, size, "syscall_%" PRId64, (int64_t)nr);
}

/* The name a person knows the call by: the table's ("umount2" for the tracepoint "umount"). */
static const char *shown_name(const struct view *v, const char *call)
{
	long nr = v->table ? syscall_table__nr(v->table, call) : -1;
	const struct syscall_entry *e = nr >= 0 ? syscall_table__entry(v->table, nr) : NULL;

	return e ? e->name : call;
}

static void print_unfinished(struct view *v, struct thread *t)
{
	char w[32];

	when(t->p.time, w, sizeof(w));
	fprintf(v->out, "%12s (          ): %s/%u %s(%s) ... <unfinished: no exit recorded>\n", w, t->p.comm, t->tid,
		shown_name(v, t->p.call), t->p.args);
	t->p.open = false;
}

static void call_enter(struct view *v, const struct walk_sample *ws, const char *call, bool from_raw)
{
	struct thread *t = thread_of(v, ws->s.tid);

	if (!t)
		return;
	if (t->p.open) {
		/* the same call seen by both tracepoints: keep the richer arguments */
		if (!strcmp(t->p.call, call) && t->p.from_raw != from_raw) {
			if (t->p.from_raw)
				args_of_enter(v, ws, call, t->p.args);
			t->p.from_raw = false;
			return;
		}
		print_unfinished(v, t);
	}
	t->done[0] = '\0';
	t->p.open = true;
	t->p.from_raw = from_raw;
	t->p.time = ws->s.time;
	snprintf(t->p.call, sizeof(t->p.call), "%s", call);
	comm_of(ws, t->p.comm, sizeof(t->p.comm));
	if (from_raw)
		args_of_raw(v, ws, strncmp(call, "syscall_", 8) ? call : NULL, t->p.args);
	else
		args_of_enter(v, ws, call, t->p.args);
}

static void call_exit(struct view *v, const struct walk_sample *ws, const char *call, bool from_raw)
{
	struct thread *t = thread_of(v, ws->s.tid);
	char w[32], ret[128], dur[32], comm[16];
	__s64 r;
	__u64 d;

	if (!t)
		return;
	if (int_field(ws, "ret", &r))
		snprintf(ret, sizeof(ret), "?");	/* a format without its return value */
	else
		syscall_args__ret(call, r, ret, sizeof(ret));
	if (t->p.open && strcmp(t->p.call, call))
		print_unfinished(v, t);	/* its exit was lost: this exit is another call's */
	if (!t->p.open) {
		if (!strcmp(t->done, call) && t->done_raw != from_raw)
			return;	/* the same exit by the other tracepoint */
		when(ws->s.time, w, sizeof(w));
		comm_of(ws, comm, sizeof(comm));
		fprintf(v->out, "%12s (          ): %s/%u %s(<entry not recorded>) = %s\n", w, comm, t->tid,
			shown_name(v, call), ret);
		snprintf(t->done, sizeof(t->done), "%s", call);
		t->done_raw = from_raw;
		return;
	}
	when(t->p.time, w, sizeof(w));
	d = ws->s.time > t->p.time ? ws->s.time - t->p.time : 0;
	snprintf(dur, sizeof(dur), "%3" PRIu64 ".%03" PRIu64 " ms", (uint64_t)(d / 1000000),
		 (uint64_t)(d / 1000 % 1000));
	fprintf(v->out, "%12s (%s): %s/%u %s(%s) = %s\n", w, dur, t->p.comm, t->tid, shown_name(v, call), t->p.args,
		ret);
	t->p.open = false;
	snprintf(t->done, sizeof(t->done), "%s", call);
	t->done_raw = from_raw;
}

/*
 * A snapshot its trigger took at a syscall's exit (--on 'syscall:NAME:exit
 * ...:snapshot', or syscall:*:exit) ends in that call: when the snapshot cut
 * the call's own exit record away (raw_syscalls:sys_exit runs after the
 * trigger's tracepoint on some kernels and hook orders), the auxtrig:snapshot
 * record still names the thread and the return value the trigger saw. The
 * call is completed with them, marked as such.
 */
static void snapshot_ends_call(struct view *v, const struct walk_sample *ws)
{
	char reason[32] = "", name[64], w[32], ret[128];
	const struct tp_field *rf = tp_format__field(ws->fmt, "reason");
	const char *text, *colon;
	struct thread *t;
	__s64 tid, value, nr;
	int trig;

	if (int_field(ws, "tid", &tid) || int_field(ws, "value", &value) || int_field(ws, "nr", &nr) || !rf ||
	    !tp_field__str(rf, ws->s.raw, ws->s.raw_size, reason, sizeof(reason)) ||
	    sscanf(reason, "on#%d", &trig) != 1 || trig < 1)
		return;
	text = event_walk__record_option(v->w, 'o', (size_t)trig - 1);
	if (!text || strncmp(text, "syscall:", 8) || !(colon = strchr(text + 8, ':')) ||
	    strncmp(colon, ":exit", 5) || (colon[5] != ':' && colon[5] != ' '))
		return;
	snprintf(name, sizeof(name), "%.*s", (int)(colon - text - 8), text + 8);
	t = thread_of(v, (__u32)tid);
	if (!t || !t->p.open || (strcmp(name, "*") && strcmp(name, t->p.call)))
		return;
	when(t->p.time, w, sizeof(w));
	syscall_args__ret(t->p.call, value, ret, sizeof(ret));
	fprintf(v->out, "%12s (          ): %s/%u %s(%s) = %s <exit cut by snapshot %" PRId64 ": the value its trigger saw>\n",
		w, t->p.comm, t->tid, shown_name(v, t->p.call), t->p.args, ret, (int64_t)nr);
	t->p.open = false;
	snprintf(t->done, sizeof(t->done), "%s", t->p.call);
}

static void other_record(struct view *v, const struct walk_sample *ws)
{
	char w[32], comm[16], text[4096];

	when(ws->s.time, w, sizeof(w));
	comm_of(ws, comm, sizeof(comm));
	if (ws->fmt && ws->s.raw) {
		if (tp_print__format(ws->fmt, ws->s.raw, ws->s.raw_size, text, sizeof(text)))
			tp_print__fields(ws->fmt, ws->s.raw, ws->s.raw_size, text, sizeof(text));
	} else {
		snprintf(text, sizeof(text), "%#" PRIx64, (uint64_t)ws->s.ip);
	}
	fprintf(v->out, "%12s             : %s/%u %s: %s\n", w, comm, ws->s.tid, ws->name, text);
}

static void one_sample(struct view *v, const struct walk_sample *ws)
{
	const struct tp_format *f = ws->fmt;
	char call[64];

	if (f && ws->s.raw && !strcmp(f->system, "syscalls") && !strncmp(f->name, "sys_enter_", 10)) {
		call_enter(v, ws, f->name + 10, false);
	} else if (f && ws->s.raw && !strcmp(f->system, "syscalls") && !strncmp(f->name, "sys_exit_", 9)) {
		call_exit(v, ws, f->name + 9, false);
	} else if (f && ws->s.raw && !strcmp(f->system, "raw_syscalls") &&
		   (!strcmp(f->name, "sys_enter") || !strcmp(f->name, "sys_exit"))) {
		raw_call(v, ws, call, sizeof(call));
		if (!strcmp(f->name, "sys_enter"))
			call_enter(v, ws, call, true);
		else
			call_exit(v, ws, call, true);
	} else {
		if (f && ws->s.raw && !strcmp(f->system, "auxtrig") && !strcmp(f->name, "snapshot"))
			snapshot_ends_call(v, ws);
		other_record(v, ws);
	}
}

static int by_entry_time(const void *a, const void *b)
{
	const struct thread *x = *(const struct thread *const *)a, *y = *(const struct thread *const *)b;

	if (x->p.time != y->p.time)
		return x->p.time < y->p.time ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The calls still open when the file ends, in the order they began; then free the threads. */
static int finish(struct view *v)
{
	struct thread **open = calloc(v->nr_threads + 1, sizeof(*open));
	size_t n = 0;
	int err = open ? 0 : -ENOMEM;

	for (size_t b = 0; b < VIEW_BUCKETS; b++)
		for (struct thread *t = v->threads[b]; t; t = t->next)
			if (open && t->p.open)
				open[n++] = t;
	if (open) {
		qsort(open, n, sizeof(*open), by_entry_time);
		for (size_t i = 0; i < n; i++)
			print_unfinished(v, open[i]);
	}
	free(open);
	for (size_t b = 0; b < VIEW_BUCKETS; b++) {
		while (v->threads[b]) {
			struct thread *t = v->threads[b];

			v->threads[b] = t->next;
			free(t);
		}
	}
	return err;
}

int syscall_view__print(struct pdata_reader *r, const char *name, FILE *out)
{
	struct event_walk *w = event_walk__new(r);
	struct view *v;
	struct walk_sample ws;
	int ret = 0, err;

	if (!w) {
		pr_err("%s: cannot read its tracepoint formats: %s\n", name,
		       errno == ENOMEM ? strerror(ENOMEM) : "malformed tracing data");
		return -errno;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		event_walk__delete(w);
		return -ENOMEM;
	}
	v->out = out;
	v->w = w;
	v->formats = event_walk__formats(w);
	v->arch = pdata_reader__feature_string(r, PDATA_HEADER_ARCH);
	v->table = syscall_table__for_arch(v->arch);
	while (!v->err && (ret = event_walk__next(w, &ws)) > 0)
		one_sample(v, &ws);
	if (ret < 0)
		pr_err("%s: stopped at a corrupt record\n", name);
	err = finish(v) ?: v->err;
	if (err)
		pr_err("%s: %s\n", name, strerror(-err));
	free(v);
	event_walk__delete(w);
	return ret < 0 ? ret : err;
}
