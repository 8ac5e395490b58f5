/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_WINDOW_SPEC_H
#define AUXTRIG_WINDOW_SPEC_H

/*
 * lang/ layer: the -w window grammar (user/lang/window_spec.c), parsed for
 * cmd/record_plan.c; the plan carries the parsed specs.
 */

#include "auxtrig/lang/point.h"

/**
 * DOC: window specs
 *
 * One --window: a start point and a stop point (include/auxtrig/lang/point.h).
 *
 *   syscall:NAME, syscall:*    a syscall's entry to its exit (WINDOW_SYSCALL)
 *   uprobe:PATH:SYMBOL[+OFF]   a user function's call, entry to return (WINDOW_UPROBE)
 *   START..STOP                from one point to another, per thread (WINDOW_POINTS)
 *   prog                       opened and closed by trigger programs (WINDOW_PROG)
 */
enum window_kind {
	WINDOW_SYSCALL,
	WINDOW_UPROBE,
	WINDOW_POINTS,
	WINDOW_PROG,
};

/**
 * struct window_spec - one parsed --window
 * @text:	as the user typed it, for messages
 * @kind:	WINDOW_*
 * @start, @stop: the points; WINDOW_UPROBE: @start is the function, whose
 *		return closes the window
 */
struct window_spec {
	const char *text;
	enum window_kind kind;
	struct point start, stop;
};

/**
 * window_spec__parse() - "syscall:NAME", "syscall:*", "uprobe:PATH:SYMBOL[+OFF]",
 * "prog" or "START..STOP" with any two points. @text is borrowed.
 * Return: 0 or -EINVAL with a message printed.
 */
int window_spec__parse(struct window_spec *w, const char *text);

#endif
