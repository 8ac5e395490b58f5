// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/sys/log.h"
#include "auxtrig/lang/window_spec.h"

static const char *const point_prefixes[] = {
	"syscall:", "tp:", "uprobe:", "uretprobe:", "usdt:", "kprobe:", "kretprobe:", "mem:",
};

/* The ".." between START and STOP: the first one a point's prefix follows (paths may hold ".."). */
static const char *find_dots(const char *text)
{
	for (const char *d = strstr(text, ".."); d; d = strstr(d + 1, ".."))
		for (size_t i = 0; i < sizeof(point_prefixes) / sizeof(point_prefixes[0]); i++)
			if (!strncmp(d + 2, point_prefixes[i], strlen(point_prefixes[i])))
				return d;
	return NULL;
}

static int parse_end(struct window_spec *w, struct point *p, const char *text, const char *which)
{
	char why[256];

	if (point__parse(p, text, why, sizeof(why)) || point__check_path(p, why, sizeof(why))) {
		pr_err("--window '%s': %s point '%s': %s\n", w->text, which, text, why);
		return -EINVAL;
	}
	return 0;
}

/* "START..STOP": a window from one point to another, per thread. */
static int parse_pair(struct window_spec *w, const char *text, const char *dots)
{
	char *start = strndup(text, dots - text);
	int err;

	if (!start)
		return -ENOMEM;
	w->kind = WINDOW_POINTS;
	err = parse_end(w, &w->start, start, "start");
	free(start);
	if (!err)
		err = parse_end(w, &w->stop, dots + 2, "stop");
	if (err)
		return err;
	if (!memcmp(&w->start, &w->stop, sizeof(w->start))) {
		pr_err("--window '%s': a window needs two different points\n", text);
		return -EINVAL;
	}
	return 0;
}

int window_spec__parse(struct window_spec *w, const char *text)
{
	const char *dots = find_dots(text), *name;
	char why[256], pt[256];

	memset(w, 0, sizeof(*w));
	w->text = text;
	if (dots)
		return parse_pair(w, text, dots);
	if (!strcmp(text, "prog")) {
		w->kind = WINDOW_PROG;
		return 0;
	}
	if (!strncmp(text, "uprobe:", 7)) {
		w->kind = WINDOW_UPROBE;
		if (point__parse(&w->start, text, why, sizeof(why)) || point__check_path(&w->start, why, sizeof(why))) {
			pr_err("--window '%s': %s\n", text, why);
			return -EINVAL;
		}
		return 0;
	}
	if (!point__parse(&w->start, text, why, sizeof(why))) {
		pr_err("--window '%s': one point is not a window: expected %s, or any START..STOP\n", text,
		       !strncmp(text, "syscall:", 8) ? "syscall:NAME (its entry to its exit)"
		       : w->start.kind == POINT_TP		       ? "tp:SYSTEM:EVENT..tp:SYSTEM:EVENT"
		       : w->start.kind == POINT_USDT ? "usdt:PATH:PROVIDER:START..usdt:PATH:PROVIDER:STOP"
						     : "uprobe:PATH:SYMBOL..uretprobe:PATH:SYMBOL");
		return -EINVAL;
	}
	if (strncmp(text, "syscall:", 8) || strchr(text + 8, ':')) {
		pr_err("--window '%s': expected syscall:NAME, syscall:*, uprobe:PATH:SYMBOL, prog or START..STOP with two points (e.g. syscall:openat, usdt:PATH:PROV:start..usdt:PATH:PROV:done)\n",
		       text);
		return -EINVAL;
	}
	/* syscall:NAME is syscall:NAME:enter..syscall:NAME:exit */
	name = text + 8;
	w->kind = WINDOW_SYSCALL;
	snprintf(pt, sizeof(pt), "syscall:%.200s:enter", name);
	if (point__parse(&w->start, pt, why, sizeof(why))) {
		pr_err("--window '%s': '%s' is not a syscall name\n", text, name);
		return -EINVAL;
	}
	snprintf(pt, sizeof(pt), "syscall:%.200s:exit", name);
	return point__parse(&w->stop, pt, why, sizeof(why));
}
