/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_DURATION_H
#define AUXTRIG_DURATION_H

/*
 * lang/ layer: durations with units (user/lang/duration.c), parsed by
 * cmd/record_plan.c for --min/--max-duration and --on delays.
 */

#include <linux/types.h>

/**
 * duration__parse() - "1ms", "250us", "2s", "1500ns", "0.5ms": a duration
 * with its unit (ns, us, ms, s) into nanoseconds, as --min-duration,
 * --max-duration and the delays of --on actions (snapshot+2ms) take them.
 * Return: 0, or -EINVAL (no unit, bad number, negative, over a day).
 */
int duration__parse(const char *text, __u64 *ns);

#endif
