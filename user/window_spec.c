// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auxtrig/log.h"
#include "auxtrig/record.h"

static bool is_ident(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

/* "tp:SYS:EVENT..tp:SYS:EVENT": a window between two tracepoints, per thread. */
static int parse_tp_pair(struct window_spec *w, const char *text)
{
	char start[2 * TP_NAME_MAX], stop[2 * TP_NAME_MAX];
	const char *dots = strstr(text, "..");

	w->kind = WINDOW_TRACEPOINTS;
	if (!dots || (size_t)(dots - text) >= sizeof(start) || strlen(dots + 2) >= sizeof(stop)) {
		pr_err("--window '%s': expected tp:SYSTEM:EVENT..tp:SYSTEM:EVENT\n", text);
		return -EINVAL;
	}
	snprintf(start, sizeof(start), "%.*s", (int)(dots - text), text);
	snprintf(stop, sizeof(stop), "%s", dots + 2);
	if (sscanf(start, "tp:%127[A-Za-z0-9_]:%127[A-Za-z0-9_]", w->start_sys, w->start_name) != 2 ||
	    sscanf(stop, "tp:%127[A-Za-z0-9_]:%127[A-Za-z0-9_]", w->stop_sys, w->stop_name) != 2 ||
	    strlen(start) != 4 + strlen(w->start_sys) + strlen(w->start_name) ||
	    strlen(stop) != 4 + strlen(w->stop_sys) + strlen(w->stop_name)) {
		pr_err("--window '%s': expected tp:SYSTEM:EVENT..tp:SYSTEM:EVENT\n", text);
		return -EINVAL;
	}
	if (!strcmp(w->start_sys, w->stop_sys) && !strcmp(w->start_name, w->stop_name)) {
		pr_err("--window '%s': a window needs two different tracepoints\n", text);
		return -EINVAL;
	}
	return 0;
}

/* PATH:SYMBOL[+OFF]; PATH may not contain ':'. */
static int parse_uprobe(struct window_spec *w, const char *spec)
{
	const char *colon = strrchr(spec, ':'), *plus;
	struct stat st;
	char *end;

	w->kind = WINDOW_UPROBE;
	if (!colon || colon == spec || !colon[1]) {
		pr_err("--window '%s': expected uprobe:PATH:SYMBOL[+OFFSET]\n", w->text);
		return -EINVAL;
	}
	snprintf(w->path, sizeof(w->path), "%.*s", (int)(colon - spec), spec);
	plus = strchr(colon + 1, '+');
	snprintf(w->symbol, sizeof(w->symbol), "%.*s", (int)(plus ? plus - colon - 1 : (long)strlen(colon + 1)),
		 colon + 1);
	if (plus) {
		errno = 0;
		w->offset = strtoul(plus + 1, &end, 0);
		if (errno || *end || end == plus + 1) {
			pr_err("--window '%s': bad offset '%s'\n", w->text, plus + 1);
			return -EINVAL;
		}
	}
	if (!is_ident(w->symbol)) {
		pr_err("--window '%s': '%s' is not a symbol name\n", w->text, w->symbol);
		return -EINVAL;
	}
	if (stat(w->path, &st) || !S_ISREG(st.st_mode)) {
		pr_err("--window '%s': no such file: %s\n", w->text, w->path);
		return -EINVAL;
	}
	return 0;
}

int window_spec__parse(struct window_spec *w, const char *text)
{
	const char *name;

	memset(w, 0, sizeof(*w));
	w->text = text;
	if (!strncmp(text, "uprobe:", 7))
		return parse_uprobe(w, text + 7);
	if (!strncmp(text, "tp:", 3))
		return parse_tp_pair(w, text);
	if (!strcmp(text, "prog")) {
		w->kind = WINDOW_PROG;
		return 0;
	}
	if (strncmp(text, "syscall:", 8)) {
		pr_err("--window '%s': expected syscall:NAME, tp:SYS:EVENT..tp:SYS:EVENT or uprobe:PATH:SYMBOL (e.g. syscall:openat)\n",
		       text);
		return -EINVAL;
	}
	name = text + 8;
	if (!is_ident(name) || strlen(name) > TP_NAME_MAX - 16) {
		pr_err("--window '%s': '%s' is not a syscall name\n", text, name);
		return -EINVAL;
	}
	w->kind = WINDOW_SYSCALL;
	snprintf(w->start_sys, sizeof(w->start_sys), "syscalls");
	snprintf(w->start_name, sizeof(w->start_name), "sys_enter_%s", name);
	snprintf(w->stop_sys, sizeof(w->stop_sys), "syscalls");
	snprintf(w->stop_name, sizeof(w->stop_name), "sys_exit_%s", name);
	return 0;
}
