/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PROGRESS_H
#define AUXTRIG_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

/**
 * DOC: progress and status on a terminal
 *
 * One line on stderr, rewritten in place ("\r", then erase to the end of
 * the line), at most every @interval_ms, and only when stderr is a terminal
 * and progress is on: silent when the output goes to a file or a pipe, or
 * under -q. progress__clear() erases it before anything else is printed.
 */

/**
 * struct progress - one line being rewritten
 * @f:		where it goes (stderr)
 * @on:		a terminal, and not quiet
 * @interval_ns: the least time between two refreshes
 * @last_ns:	when it was last written (CLOCK_MONOTONIC)
 * @shown:	something is on the line
 */
struct progress {
	FILE *f;
	bool on;
	__u64 interval_ns;
	__u64 last_ns;
	bool shown;
};

/**
 * progress__init() - a line on @f, refreshed at most every @interval_ms; on
 * only when @f is a terminal and @enabled (the caller's -q).
 */
void progress__init(struct progress *p, FILE *f, unsigned int interval_ms, bool enabled);

/** progress__due() - is it time to refresh (and the line on)? */
bool progress__due(const struct progress *p);

/**
 * progress__show() - rewrite the line with the printf-style text, if it is
 * due or @force. The text is cut to the terminal's width.
 */
void progress__show(struct progress *p, bool force, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** progress__clear() - erase the line, if shown. */
void progress__clear(struct progress *p);

/**
 * progress__global() - the process-wide line that pr_err() and friends
 * clear before printing; NULL when none is active. Set by
 * progress__set_global().
 */
struct progress *progress__global(void);
/** progress__set_global() - make @p (or NULL) the line that messages clear first. */
void progress__set_global(struct progress *p);

#endif
