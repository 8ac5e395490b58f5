// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int window_spec__parse(struct window_spec *w, const char *text)
{
	const char *name;

	memset(w, 0, sizeof(*w));
	w->text = text;
	if (strncmp(text, "syscall:", 8)) {
		pr_err("--window '%s': expected syscall:NAME (e.g. syscall:openat)\n", text);
		return -EINVAL;
	}
	name = text + 8;
	if (!is_ident(name) || strlen(name) > TP_NAME_MAX - 16) {
		pr_err("--window '%s': '%s' is not a syscall name\n", text, name);
		return -EINVAL;
	}
	snprintf(w->start_sys, sizeof(w->start_sys), "syscalls");
	snprintf(w->start_name, sizeof(w->start_name), "sys_enter_%s", name);
	snprintf(w->stop_sys, sizeof(w->stop_sys), "syscalls");
	snprintf(w->stop_name, sizeof(w->stop_name), "sys_exit_%s", name);
	return 0;
}
