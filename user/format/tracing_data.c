// SPDX-License-Identifier: BSD-2-Clause
/*
 * HEADER_TRACING_DATA body builder; the reader it must satisfy is perf 6.1's
 * tools/perf/util/trace-event-read.c: trace_report().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/sys/log.h"
#include "auxtrig/sys/membuf.h"
#include "auxtrig/sys/tracefs.h"
#include "auxtrig/format/tracing_data.h"

/* Whole file into a malloc()ed buffer; tracefs reports size 0 in stat, so read to EOF. */
static int slurp(const char *path, char **out, size_t *outlen)
{
	size_t cap = 4096, len = 0;
	char *p = malloc(cap);
	int fd, err = 0;

	if (!p)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(p);
		return err;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) { /* keep room for the NUL added at the end */
			char *np = realloc(p, cap * 2);

			if (!np) {
				err = -ENOMEM;
				break;
			}
			p = np;
			cap *= 2;
		}
		n = read(fd, p + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	if (err) {
		free(p);
		return err;
	}
	p[len] = 0;
	*out = p;
	*outlen = len;
	return 0;
}

/* Append "u<width> size" + contents of @root/@rel; a missing optional file counts as empty. */
static int add_file(struct membuf *b, const char *root, const char *rel, int width, bool optional)
{
	char path[4096];
	char *data = NULL;
	size_t len = 0;
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	err = slurp(path, &data, &len);
	if (err) {
		if (optional && err != -ENOMEM) {
			pr_debug("tracing data: %s: %s, written as empty\n", path, strerror(-err));
			len = 0;
		} else {
			pr_err("cannot read %s: %s\n", path, strerror(-err));
			return err;
		}
	}
	if (width == 4)
		membuf__u32(b, len);
	else
		membuf__u64(b, len);
	membuf__add(b, data, len);
	free(data);
	return 0;
}

int tracing_data__find_tracefs(char *buf, size_t size)
{
	const char *root = tracefs__root();

	if (!root) {
		pr_err("tracefs is not mounted (try: mount -t tracefs nodev /sys/kernel/tracing)\n");
		return -ENOENT;
	}
	snprintf(buf, size, "%s", root);
	return 0;
}

/* *@tracefs, or when it is NULL this machine's tracefs root, copied into @root. */
static int tracefs_or_found(const char **tracefs, char *root, size_t size)
{
	int err;

	if (*tracefs)
		return 0;
	err = tracing_data__find_tracefs(root, size);
	if (!err)
		*tracefs = root;
	return err;
}

static bool name_ok(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int check_event(const struct tracing_event *ev)
{
	if (!name_ok(ev->system) || !name_ok(ev->name)) {
		pr_err("invalid tracepoint name '%s:%s'\n", ev->system ?: "", ev->name ?: "");
		return -EINVAL;
	}
	return 0;
}

static bool same_event(const struct tracing_event *a, const struct tracing_event *b)
{
	return !strcmp(a->system, b->system) && !strcmp(a->name, b->name);
}

static int add_format(struct membuf *b, const char *root, const struct tracing_event *ev)
{
	char rel[1024];
	int err;

	if (ev->format) { /* an event of auxtrig's own: its format is given */
		membuf__u64(b, strlen(ev->format));
		membuf__add(b, ev->format, strlen(ev->format));
		return 0;
	}

	if ((size_t)snprintf(rel, sizeof(rel), "events/%s/%s/format", ev->system, ev->name) >= sizeof(rel))
		return -ENAMETOOLONG;
	err = add_file(b, root, rel, 8, false);
	if (err == -ENOENT)
		pr_err("no tracepoint %s:%s in %s (see %s/available_events)\n", ev->system, ev->name, root, root);
	return err;
}

int tracing_data__build(const char *tracefs, const struct tracing_event *events, size_t nr_events,
			void **bufp, size_t *lenp)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	char root[4096];
	struct membuf b = {};
	bool *done = NULL;
	__u32 n;
	int err;

	err = tracefs_or_found(&tracefs, root, sizeof(root));
	if (err)
		return err;
	for (size_t i = 0; i < nr_events; i++) {
		err = check_event(&events[i]);
		if (err)
			return err;
	}
	done = calloc(nr_events ?: 1, sizeof(*done));
	if (!done)
		return -ENOMEM;

	membuf__add(&b, magic, sizeof(magic));
	membuf__cstr(&b, "0.6");
	membuf__u8(&b, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	membuf__u8(&b, sizeof(long));
	membuf__u32(&b, sysconf(_SC_PAGESIZE));

	membuf__cstr(&b, "header_page");
	err = add_file(&b, tracefs, "events/header_page", 8, false);
	if (err)
		goto out;
	membuf__cstr(&b, "header_event");
	err = add_file(&b, tracefs, "events/header_event", 8, false);
	if (err)
		goto out;

	/* ftrace's own events have their own section; mark duplicates done as we go. */
	for (size_t i = 0; i < nr_events; i++)
		for (size_t j = 0; j < i && !done[i]; j++)
			done[i] = same_event(&events[i], &events[j]);
	n = 0;
	for (size_t i = 0; i < nr_events; i++)
		n += !done[i] && !strcmp(events[i].system, "ftrace");
	membuf__u32(&b, n);
	for (size_t i = 0; i < nr_events; i++) {
		if (done[i] || strcmp(events[i].system, "ftrace"))
			continue;
		err = add_format(&b, tracefs, &events[i]);
		if (err)
			goto out;
		done[i] = true;
	}

	/* Systems in order of first appearance, each with its events. */
	n = 0;
	for (size_t i = 0; i < nr_events; i++) {
		bool seen = done[i];

		for (size_t j = 0; j < i && !seen; j++)
			seen = !done[j] && !strcmp(events[i].system, events[j].system);
		n += !seen;
	}
	membuf__u32(&b, n);
	for (size_t i = 0; i < nr_events; i++) {
		const char *sys = events[i].system;
		__u32 nr = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < nr_events; j++)
			nr += !done[j] && !strcmp(sys, events[j].system);
		membuf__cstr(&b, sys);
		membuf__u32(&b, nr);
		for (size_t j = i; j < nr_events; j++) {
			if (done[j] || strcmp(sys, events[j].system))
				continue;
			err = add_format(&b, tracefs, &events[j]);
			if (err)
				goto out;
			done[j] = true;
		}
	}

	membuf__u32(&b, 0); /* kallsyms: perf writes none either */
	err = add_file(&b, tracefs, "printk_formats", 4, true);
	if (!err)
		err = add_file(&b, tracefs, "saved_cmdlines", 8, true);
	if (!err)
		err = b.err;
out:
	free(done);
	if (err) {
		free(b.p);
		return err;
	}
	*bufp = b.p;
	*lenp = b.len;
	return 0;
}

int tracing_data__event_id(const char *tracefs, const struct tracing_event *event, __u64 *id)
{
	char root[4096], rel[8192], *data, *end;
	size_t len;
	unsigned long long v;
	int err;

	err = tracefs_or_found(&tracefs, root, sizeof(root));
	if (err)
		return err;
	err = check_event(event);
	if (err)
		return err;
	if ((size_t)snprintf(rel, sizeof(rel), "%s/events/%s/%s/id", tracefs, event->system, event->name) >= sizeof(rel))
		return -ENAMETOOLONG;
	err = slurp(rel, &data, &len);
	if (err) {
		pr_err("no tracepoint %s:%s in %s: %s\n", event->system, event->name, tracefs, strerror(-err));
		return err;
	}
	errno = 0;
	v = strtoull(data, &end, 10);
	err = (errno || end == data) ? -EINVAL : 0;
	free(data);
	if (err) {
		pr_err("%s: not a tracepoint id\n", rel);
		return err;
	}
	*id = v;
	return 0;
}
