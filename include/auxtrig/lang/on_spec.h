/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ON_SPEC_H
#define AUXTRIG_ON_SPEC_H

/*
 * lang/ layer: the --on trigger grammar (user/lang/on_spec.c), parsed for
 * cmd/record_plan.c, which resolves the point and compiles the condition.
 */

#include "auxtrig/gate_abi.h"
#include "auxtrig/lang/point.h"

/**
 * DOC: trigger specs
 * One --on: "POINT [if EXPR]:ACTION[+DELAY][,POLICY...]", the action found
 * as the last ":snapshot", ":stop", ":mark", ":resume" or ":pause" followed
 * by the end, '+', ',' or, for mark, '(' (mark(VALUE, ...)). DELAY (snapshot
 * and stop only) is a duration; POLICY is once, every:N, after:N (one of
 * them) and limit:N/s.
 */

/**
 * struct on_spec - one parsed --on
 * @text:	as the user typed it, for messages (borrowed)
 * @pt:		the point, parsed and its path checked
 * @point:	the point as written, for suggestions
 * @cond:	the condition's text, NULL without "if"
 * @values:	mark(...)'s values as written, NULL without them
 * @t:		the trigger: action, delay_ns, policy, n, limit; the rest 0
 * @buf:	what @point, @cond and @values point into (owned)
 */
struct on_spec {
	const char *text;
	struct point pt;
	const char *point, *cond;
	char *values;
	struct gate_trigger t;
	char *buf;
};

/**
 * on_spec__parse() - parse @text into @s.
 * Return: 0; -EINVAL with a message printed; -ENOMEM. @s is to be
 * on_spec__exit()ed whatever the result.
 */
int on_spec__parse(struct on_spec *s, const char *text);

/**
 * on_spec__mark_values() - check mark(VALUE, ...)'s values against the point
 * (str(argN), argN, ret, nr, at syscall points) and note in @s->t what the
 * mark carries (mark_str, entry_args). Nothing to do without values.
 * Return: 0, or -EINVAL with a message printed.
 */
int on_spec__mark_values(struct on_spec *s);

/** on_spec__exit() - free what @s owns. */
void on_spec__exit(struct on_spec *s);

#endif
