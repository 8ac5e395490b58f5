// SPDX-License-Identifier: BSD-2-Clause
/* The points this machine offers, and the nearest of them to an unknown one. */
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/point.h"
#include "auxtrig/lang/point_catalog.h"
#include "auxtrig/sys/elf_sym.h"
#include "auxtrig/sys/elf_usdt.h"
#include "auxtrig/sys/tracefs.h"

const struct point_syntax point_syntaxes[] = {
	{ "syscall:", "syscall:NAME[:enter|:exit]", "a system call: a window from entry to exit, or one end" },
	{ "syscall:*:", "syscall:*[:enter|:exit]", "any system call (raw_syscalls)" },
	{ "tp:", "tp:SYSTEM:EVENT", "a kernel tracepoint (-e SYSTEM:EVENT records it)" },
	{ "uprobe:", "uprobe:PATH:SYMBOL[+OFF]", "a user function's entry (a window to its return)" },
	{ "uretprobe:", "uretprobe:PATH:SYMBOL", "a user function's return" },
	{ "usdt:", "usdt:PATH:PROVIDER:NAME", "a USDT probe (<sys/sdt.h>) in PATH" },
	{ "kprobe:", "kprobe:SYMBOL[+OFF]", "a kernel function's entry" },
	{ "kretprobe:", "kretprobe:SYMBOL", "a kernel function's return" },
	{ "mem:", "mem:ADDR[/LEN][:r|w|rw|x], mem:PATH:SYMBOL[/LEN][:ACCESS]", "a hardware breakpoint on memory" },
};
const size_t point_nr_syntaxes = sizeof(point_syntaxes) / sizeof(point_syntaxes[0]);

/* ---- listing ------------------------------------------------------------ */

struct walk {
	const char *glob;
	int (*cb)(const char *point, const char *kind, void *arg);
	void *arg;
	int n;
};

static bool glob_match(const char *glob, const char *s)
{
	return !glob || !fnmatch(glob, s, 0);
}

static int walk_syscall(const char *sys, const char *name, void *arg)
{
	struct walk *w = arg;
	char point[TP_NAME_MAX + 16], enter[TP_NAME_MAX + 32], exit_[TP_NAME_MAX + 32];

	(void)sys;
	snprintf(point, sizeof(point), "syscall:%s", name + strlen("sys_enter_"));
	snprintf(enter, sizeof(enter), "%s:enter", point);
	snprintf(exit_, sizeof(exit_), "%s:exit", point);
	if (!glob_match(w->glob, point) && !glob_match(w->glob, enter) && !glob_match(w->glob, exit_))
		return 0;
	w->n++;
	return w->cb(point, "syscall", w->arg);
}

static int walk_tracepoint(const char *sys, const char *name, void *arg)
{
	struct walk *w = arg;
	char point[2 * TP_NAME_MAX + 8];

	snprintf(point, sizeof(point), "tp:%s:%s", sys, name);
	if (!glob_match(w->glob, point) && !glob_match(w->glob, point + 3))
		return 0;
	w->n++;
	return w->cb(point, "tracepoint", w->arg);
}

/* A file's probes or functions, collected to be sorted. */
struct names {
	char **v;
	size_t nr;
};

static int names_add(struct names *n, const char *name)
{
	char **v = realloc(n->v, (n->nr + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	n->v = v;
	v[n->nr] = strdup(name);
	if (!v[n->nr])
		return -ENOMEM;
	n->nr++;
	return 0;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What the point grammar can name: C identifiers (no foo.constprop.0). */
static bool is_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

static int collect_usdt(const struct elf_usdt_probe *pr, void *arg)
{
	char name[512];

	if (!is_ident(pr->provider) || !is_ident(pr->name))
		return 0;
	snprintf(name, sizeof(name), "%s:%s", pr->provider, pr->name);
	return names_add(arg, name);
}

static int collect_func(const char *name, void *arg)
{
	return is_ident(name) ? names_add(arg, name) : 0;
}

/* "usdt:PATH[:GLOB]", "uprobe:PATH[:GLOB]": the file's probes or functions. */
static int foreach_in_file(const char *kind, const char *rest, struct walk *w)
{
	const char *colon = strchr(rest, ':');
	struct names n = { 0 };
	char path[4096], point[4096 + 600];
	int err;

	if (!*rest || colon == rest)
		return -EINVAL;
	snprintf(path, sizeof(path), "%.*s", colon ? (int)(colon - rest) : (int)strlen(rest), rest);
	w->glob = colon && colon[1] ? colon + 1 : NULL;
	if (!strcmp(kind, "usdt"))
		err = elf_usdt__foreach(path, collect_usdt, &n);
	else
		err = elf_sym__foreach_func(path, collect_func, &n);
	if (err >= 0) {
		err = 0;
		if (n.nr)
			qsort(n.v, n.nr, sizeof(*n.v), names_cmp);
		for (size_t i = 0; i < n.nr && !err; i++) {
			if (i && !strcmp(n.v[i], n.v[i - 1]))
				continue;	/* a probe inlined at several places */
			if (!glob_match(w->glob, n.v[i]))
				continue;
			snprintf(point, sizeof(point), "%s:%s:%s", kind, path, n.v[i]);
			w->n++;
			err = w->cb(point, kind, w->arg);
		}
	}
	for (size_t i = 0; i < n.nr; i++)
		free(n.v[i]);
	free(n.v);
	return err < 0 ? err : err ? err : w->n;
}

int point_catalog__foreach(const char *glob, int (*cb)(const char *point, const char *kind, void *arg),
			   void *arg)
{
	struct walk w = { .glob = glob, .cb = cb, .arg = arg };
	int err;

	if (glob && !strncmp(glob, "usdt:", 5))
		return foreach_in_file("usdt", glob + 5, &w);
	if (glob && !strncmp(glob, "uprobe:", 7))
		return foreach_in_file("uprobe", glob + 7, &w);
	if (glob && !strncmp(glob, "uretprobe:", 10))
		return foreach_in_file("uretprobe", glob + 10, &w);
	err = tracefs__expand("syscalls:sys_enter_*", walk_syscall, &w);
	if (err >= 0)
		err = tracefs__expand("*:*", walk_tracepoint, &w);
	return err < 0 ? err : w.n;
}

/* ---- the nearest names -------------------------------------------------- */

#define SUGGEST_MAX 3

unsigned int point_catalog__distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned int *d, r;

	if (la > 254 || lb > 254)
		return 255;
	d = malloc((la + 1) * (lb + 1) * sizeof(*d));
	if (!d)
		return 255;
#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned int cost = a[i - 1] != b[j - 1], best = D(i - 1, j - 1) + cost;

			if (D(i - 1, j) + 1 < best)
				best = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < best)
				best = D(i, j - 1) + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && D(i - 2, j - 2) + 1 < best)
				best = D(i - 2, j - 2) + 1;
			D(i, j) = best;
		}
	}
	r = D(la, lb);
#undef D
	free(d);
	return r > 255 ? 255 : r;
}

struct nearest {
	const char *unknown;
	unsigned int limit;
	unsigned int best;
	char names[SUGGEST_MAX][512];
	size_t nr;
};

/* One name; kept when it is as near as the best so far. */
static int nearest_add(struct nearest *n, const char *name)
{
	size_t lu = strlen(n->unknown), ln = strlen(name);
	unsigned int d = point_catalog__distance(n->unknown, name);
	bool prefix = lu >= 4 && ln >= 4 &&
		      (!strncmp(n->unknown, name, lu < ln ? lu : ln));

	if (!strcmp(n->unknown, name) || (d > n->limit && !prefix) || d > n->best)
		return 0;
	if (d < n->best) {
		n->best = d;
		n->nr = 0;
	}
	for (size_t i = 0; i < n->nr; i++)
		if (!strcmp(n->names[i], name))
			return 0;	/* a name seen twice (aliases) */
	if (n->nr < SUGGEST_MAX)
		snprintf(n->names[n->nr++], sizeof(n->names[0]), "%s", name);
	return 0;
}

static int near_syscall(const char *sys, const char *name, void *arg)
{
	(void)sys;
	return nearest_add(arg, name + strlen("sys_enter_"));
}

static int near_tracepoint(const char *sys, const char *name, void *arg)
{
	char both[2 * TP_NAME_MAX + 2];

	snprintf(both, sizeof(both), "%s:%s", sys, name);
	return nearest_add(arg, both);
}

static int near_usdt(const struct elf_usdt_probe *pr, void *arg)
{
	char both[512];

	snprintf(both, sizeof(both), "%s:%s", pr->provider, pr->name);
	return nearest_add(arg, both);
}

static int near_func(const char *name, void *arg)
{
	return nearest_add(arg, name);
}

void point_catalog__suggest(enum point_names names, const char *path, const char *unknown, const char *fmt,
			    char *buf, size_t size)
{
	struct nearest n = { .unknown = unknown, .best = 256 };
	size_t len = strlen(unknown), at;

	buf[0] = '\0';
	if (!len || strpbrk(unknown, "*?["))
		return;
	/* one edit in 4 characters, at least 1, at most 3 */
	n.limit = len / 4 < 1 ? 1 : len / 4 > 3 ? 3 : len / 4;
	switch (names) {
	case POINT_NAMES_SYSCALL:
		tracefs__expand("syscalls:sys_enter_*", near_syscall, &n);
		break;
	case POINT_NAMES_TRACEPOINT:
		tracefs__expand("*:*", near_tracepoint, &n);
		break;
	case POINT_NAMES_USDT:
		elf_usdt__foreach(path, near_usdt, &n);
		break;
	case POINT_NAMES_FUNC:
		elf_sym__foreach_func(path, near_func, &n);
		break;
	}
	if (!n.nr)
		return;
	at = snprintf(buf, size, " (did you mean ");
	for (size_t i = 0; i < n.nr && at < size; i++) {
		char one[1024];

		snprintf(one, sizeof(one), fmt, n.names[i]);
		at += snprintf(buf + at, size - at, "%s%s", i ? (i + 1 == n.nr ? " or " : ", ") : "", one);
	}
	if (at < size)
		snprintf(buf + at, size - at, "?)");
}

void point_catalog__suggest_point(const struct point *p, const char *as_typed, char *buf, size_t size)
{
	enum point_names names;
	char unknown[600], fmt[1024];
	const char *at;
	size_t n = 0;

	buf[0] = '\0';
	switch (p->kind) {
	case POINT_TP:
		if (!strcmp(p->sys, "syscalls") && !strncmp(p->name, "sys_enter_", 10)) {
			snprintf(unknown, sizeof(unknown), "%s", p->name + 10);
			names = POINT_NAMES_SYSCALL;
		} else if (!strcmp(p->sys, "syscalls") && !strncmp(p->name, "sys_exit_", 9)) {
			snprintf(unknown, sizeof(unknown), "%s", p->name + 9);
			names = POINT_NAMES_SYSCALL;
		} else {
			snprintf(unknown, sizeof(unknown), "%s:%s", p->sys, p->name);
			names = POINT_NAMES_TRACEPOINT;
		}
		break;
	case POINT_USDT:
		snprintf(unknown, sizeof(unknown), "%s:%s", p->provider, p->symbol);
		names = POINT_NAMES_USDT;
		break;
	case POINT_UPROBE:
	case POINT_URETPROBE:
		snprintf(unknown, sizeof(unknown), "%s", p->symbol);
		names = POINT_NAMES_FUNC;
		break;
	default:
		return;
	}
	/* as_typed with the name replaced by %s and every other % doubled; an empty name has no nearest */
	at = *unknown ? strstr(as_typed, unknown) : NULL;
	if (!at)
		return;
	for (const char *c = as_typed; *c && n + 3 < sizeof(fmt); c++) {
		if (c == at) {
			fmt[n++] = '%';
			fmt[n++] = 's';
			c += strlen(unknown) - 1;
			continue;
		}
		if (*c == '%')
			fmt[n++] = '%';
		fmt[n++] = *c;
	}
	fmt[n] = '\0';
	point_catalog__suggest(names, p->path, unknown, fmt, buf, size);
}
