// SPDX-License-Identifier: BSD-2-Clause
/* The samples of a perf.data file with their event name, format and comm. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/event_walk.h"
#include "auxtrig/format/pdata.h"

struct comm_entry {
	__u32 tid;
	char comm[16];
};

struct attr_name {
	__u64 id;
	char *name;
};

/* A record and its time: perf script handles records in time order. */
struct rec_ref {
	__u64 time;
	__u64 pos;
	size_t seq;
};

struct event_walk {
	const struct pdata_reader *r;
	struct tp_formats formats;
	struct attr_name *names;	/* EVENT_DESC: event id -> name */
	size_t nr_names;
	size_t name_width;
	struct comm_entry *comms;	/* per thread, the latest */
	size_t nr_comms;
	char *cmdline_buf;
	const char **cmdline;
	int cmdline_argc;
	struct rec_ref *order;	/* samples, COMM and FORK records, by time */
	size_t nr_order, next;
	int corrupt;
	struct walk_losses losses;
	char name[2 * TP_NAME_MAX + 2];	/* the current sample's event name */
};

static struct comm_entry *comm_find(struct event_walk *w, __u32 tid)
{
	for (size_t i = 0; i < w->nr_comms; i++)
		if (w->comms[i].tid == tid)
			return &w->comms[i];
	return NULL;
}

static void comm_set(struct event_walk *w, __u32 tid, const char *comm, size_t max)
{
	struct comm_entry *c = comm_find(w, tid), *v;

	if (!c) {
		v = realloc(w->comms, (w->nr_comms + 1) * sizeof(*v));
		if (!v)
			return;
		w->comms = v;
		c = &v[w->nr_comms++];
		c->tid = tid;
	}
	if (max > sizeof(c->comm) - 1)
		max = sizeof(c->comm) - 1;
	max = strnlen(comm, max);
	memcpy(c->comm, comm, max);
	c->comm[max] = '\0';
}

/* One EVENT_DESC name (pdata_reader__event_names()); a failed allocation stops the walk. */
static int add_name(void *ctx, __u64 id, const char *name)
{
	struct event_walk *w = ctx;
	struct attr_name *v = realloc(w->names, (w->nr_names + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	w->names = v;
	v[w->nr_names].id = id;
	v[w->nr_names].name = strdup(name);
	if (!v[w->nr_names].name)
		return -ENOMEM;
	w->nr_names++;
	if (strlen(name) > w->name_width)
		w->name_width = strlen(name);
	return 0;
}

/* CMDLINE: u32 argc, then argc perf_header_strings (u32 len, len bytes, NUL-padded). */
static void read_cmdline(struct event_walk *w)
{
	const unsigned char *p, *end;
	const void *body;
	size_t size, n = 0;
	__u32 argc;

	if (pdata_reader__feature(w->r, PDATA_HEADER_CMDLINE, &body, &size) || size < 4)
		return;
	p = body;
	end = p + size;
	memcpy(&argc, p, 4);
	p += 4;
	if (argc > 4096)
		return;
	w->cmdline_buf = malloc(size);
	w->cmdline = calloc(argc + 1, sizeof(*w->cmdline));
	if (!w->cmdline_buf || !w->cmdline)
		return;
	for (__u32 i = 0; i < argc; i++) {
		__u32 len;

		if (end - p < 4)
			return;
		memcpy(&len, p, 4);
		p += 4;
		if ((size_t)(end - p) < len || !len)
			return;
		memcpy(w->cmdline_buf + n, p, len);
		w->cmdline_buf[n + len - 1] = '\0';
		w->cmdline[i] = w->cmdline_buf + n;
		n += len;
		p += len;
	}
	w->cmdline_argc = argc;
}

static int rec_ref__cmp(const void *a, const void *b)
{
	const struct rec_ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Every sample, COMM and FORK with its time, stably sorted by it. */
static int order_records(struct event_walk *w)
{
	struct pdata_event ev;
	__u64 pos = 0, at = 0, last = 0;
	size_t cap = 0;
	int ret;

	while ((ret = pdata_reader__next(w->r, &pos, &ev)) > 0) {
		const struct perf_event_header *h = ev.header;
		struct pdata_sample s;
		struct rec_ref *v;

		if (h->type == PERF_RECORD_LOST && h->size >= 24) {
			__u64 n;

			memcpy(&n, (const char *)h + 16, 8);
			w->losses.lost += n;
		} else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= 16) {
			__u64 n;

			memcpy(&n, (const char *)h + 8, 8);
			w->losses.lost_samples += n;
		} else if (h->type == PERF_RECORD_AUX && h->size >= 32) {
			__u64 flags;

			memcpy(&flags, (const char *)h + 24, 8);
			w->losses.aux_truncated += !!(flags & PERF_AUX_FLAG_TRUNCATED);
		}
		if (h->type == PERF_RECORD_SAMPLE || h->type == PERF_RECORD_COMM || h->type == PERF_RECORD_FORK) {
			if (!pdata_reader__parse_sample(w->r, &ev, &s) && (s.present & PERF_SAMPLE_TIME))
				last = s.time;
			else if (h->type == PERF_RECORD_FORK && h->size >= sizeof(struct pdata_record_fork))
				last = ((const struct pdata_record_fork *)h)->time;
			/* untimed records keep their place after the last timed one */
			if (w->nr_order == cap) {
				cap = cap ? 2 * cap : 1024;
				v = realloc(w->order, cap * sizeof(*v));
				if (!v)
					return -ENOMEM;
				w->order = v;
			}
			w->order[w->nr_order] = (struct rec_ref){ .time = last, .pos = at, .seq = w->nr_order };
			w->nr_order++;
		}
		at = pos;
	}
	w->corrupt = ret < 0;
	if (w->nr_order)
		qsort(w->order, w->nr_order, sizeof(*w->order), rec_ref__cmp);
	return 0;
}

struct event_walk *event_walk__new(const struct pdata_reader *r)
{
	struct event_walk *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->r = r;
	err = tp_formats__read(r, &w->formats);
	if (err && err != -ENOENT) {
		event_walk__delete(w);
		errno = err == -ENOMEM ? ENOMEM : EINVAL;
		return NULL;
	}
	pdata_reader__event_names(w->r, add_name, w);
	read_cmdline(w);
	if (order_records(w)) {
		event_walk__delete(w);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < pdata_reader__nr_attrs(r); i++) {
		const struct pdata_reader_attr *a = pdata_reader__attr(r, i);
		const struct tp_format *f;
		size_t len;

		if (a->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		f = tp_formats__find(&w->formats, (unsigned int)a->attr.config);
		len = f ? strlen(f->system) + 1 + strlen(f->name) : 0;
		if (len > w->name_width)
			w->name_width = len;
	}
	return w;
}

void event_walk__rewind(struct event_walk *w)
{
	w->next = 0;
	w->nr_comms = 0;
}

int event_walk__next(struct event_walk *w, struct walk_sample *ws)
{
	struct pdata_event ev;

	while (w->next < w->nr_order) {
		__u64 pos = w->order[w->next++].pos;
		const struct perf_event_header *h;
		struct comm_entry *c;

		if (pdata_reader__next(w->r, &pos, &ev) <= 0)
			return -EPROTO;
		h = ev.header;

		if (h->type == PERF_RECORD_COMM && h->size > sizeof(struct pdata_record_comm)) {
			const struct pdata_record_comm *rc = (const void *)h;

			comm_set(w, rc->tid, (const char *)(rc + 1), h->size - sizeof(*rc));
			continue;
		}
		if (h->type == PERF_RECORD_FORK && h->size >= sizeof(struct pdata_record_fork)) {
			const struct pdata_record_fork *f = (const void *)h;

			c = comm_find(w, f->ptid);
			if (c && f->tid != f->ptid) {
				char parent[16];

				memcpy(parent, c->comm, sizeof(parent));
				comm_set(w, f->tid, parent, sizeof(parent));
			}
			continue;
		}
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		memset(ws, 0, sizeof(*ws));
		if (pdata_reader__parse_sample(w->r, &ev, &ws->s) || !ws->s.attr)
			continue;
		ws->name = "?";
		if (ws->s.attr->attr.type == PERF_TYPE_TRACEPOINT) {
			ws->fmt = tp_formats__find(&w->formats, (unsigned int)ws->s.attr->attr.config);
			if (ws->fmt) {
				snprintf(w->name, sizeof(w->name), "%s:%s", ws->fmt->system, ws->fmt->name);
				ws->name = w->name;
			}
		}
		if (!ws->fmt) {
			for (size_t i = 0; i < w->nr_names; i++)
				if (w->names[i].id == ws->s.id)
					ws->name = w->names[i].name;
		}
		c = comm_find(w, ws->s.tid);
		ws->comm = c ? c->comm : NULL;
		return 1;
	}
	return w->corrupt ? -EPROTO : 0;
}

void event_walk__losses(const struct event_walk *w, struct walk_losses *l)
{
	*l = w->losses;
}

size_t event_walk__name_width(const struct event_walk *w)
{
	return w->name_width;
}

const struct tp_formats *event_walk__formats(const struct event_walk *w)
{
	return &w->formats;
}

int event_walk__cmdline(const struct event_walk *w, const char *const **argv)
{
	*argv = w->cmdline;
	return w->cmdline_argc;
}

const char *event_walk__record_option(const struct event_walk *w, char opt, size_t n)
{
	for (int i = 0; i < w->cmdline_argc; i++) {
		const char *a = w->cmdline[i], *v = NULL;
		bool on = false;

		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-w") || !strcmp(a, "--window") || !strcmp(a, "--on")) {
			on = a[2] == 'o';
			v = i + 1 < w->cmdline_argc ? w->cmdline[++i] : NULL;
		} else if (!strncmp(a, "--window=", 9)) {
			v = a + 9;
		} else if (!strncmp(a, "--on=", 5)) {
			v = a + 5;
			on = true;
		} else if (!strncmp(a, "-w", 2) && a[2]) {
			v = a + 2;
		}
		if (v && on == (opt == 'o') && !n--)
			return v;
	}
	return NULL;
}

void event_walk__delete(struct event_walk *w)
{
	if (!w)
		return;
	tp_formats__exit(&w->formats);
	for (size_t i = 0; i < w->nr_names; i++)
		free(w->names[i].name);
	free(w->names);
	free(w->comms);
	free(w->order);
	free(w->cmdline_buf);
	free(w->cmdline);
	free(w);
}
