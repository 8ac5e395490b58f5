// SPDX-License-Identifier: BSD-2-Clause
/* One status line on a terminal, rewritten in place; silent elsewhere. */
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/sys/progress.h"

static struct progress *global;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void progress__init(struct progress *p, FILE *f, unsigned int interval_ms, bool enabled)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->on = enabled && isatty(fileno(f));
	p->interval_ns = (__u64)interval_ms * 1000000ULL;
}

bool progress__due(const struct progress *p)
{
	return p->on && (!p->last_ns || now_ns() - p->last_ns >= p->interval_ns);
}

void progress__show(struct progress *p, bool force, const char *fmt, ...)
{
	struct winsize ws;
	char line[512];
	size_t width = sizeof(line) - 1;
	va_list ap;

	if (!p->on || (!force && !progress__due(p)))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!ioctl(fileno(p->f), TIOCGWINSZ, &ws) && ws.ws_col > 1 && (size_t)ws.ws_col - 1 < width)
		width = ws.ws_col - 1;	/* never wrap: \r could not go back */
	line[width] = '\0';
	fprintf(p->f, "\r%s\033[K", line);
	fflush(p->f);
	p->last_ns = now_ns();
	p->shown = true;
}

void progress__clear(struct progress *p)
{
	if (!p || !p->shown)
		return;
	fputs("\r\033[K", p->f);
	fflush(p->f);
	p->shown = false;
}

struct progress *progress__global(void)
{
	return global;
}

void progress__set_global(struct progress *p)
{
	global = p;
}
