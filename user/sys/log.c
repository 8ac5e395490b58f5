// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>

#include "auxtrig/sys/log.h"
#include "auxtrig/sys/progress.h"

static int log_level = LOG_INFO;

void log__set_level(int level)
{
	log_level = level;
}

int log__level(void)
{
	return log_level;
}

void log__print(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	progress__clear(progress__global());	/* a status line first goes away */
	va_start(ap, fmt);
	fputs("auxtrig: ", stderr);
	if (level == LOG_WARN)
		fputs("warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int ours = level == LIBBPF_WARN ? LOG_DEBUG : level == LIBBPF_INFO ? LOG_DEBUG : LOG_DEBUG2;

	/*
	 * libbpf's warnings are mostly the verifier log and follow-ups of
	 * failures we report ourselves with a clearer message: show with -v.
	 */
	if (ours > log_level)
		return 0;
	/* libbpf's messages already start with "libbpf: ". */
	return vfprintf(stderr, fmt, ap);
}

void log__route_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
