/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_WINDOW_MAP_H
#define AUXTRIG_WINDOW_MAP_H

/*
 * record/ layer: the plan's windows translated once (user/record/window_map.c),
 * into the gate's masks and the AUX group's triggers.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/lang/point.h"
#include "auxtrig/record/aux_session.h"

struct record_plan;

/**
 * DOC: windows, translated once
 *
 * window_map__build() turns the plan's windows (and --on resume/pause) into
 * what both halves of a recording act on, in one pass:
 *
 *   the gate      per event: the windows its hits open and close, and the
 *                 syscall:* flags; per probe end: a point with its masks;
 *                 per uprobe window: the function whose call it is
 *   the AUX group per window end: a (point, aux_resume | aux_pause)
 *                 trigger, so the kernel resumes and pauses the trace
 */

/** struct window_map_tp - what one event of the plan means to the windows. */
struct window_map_tp {
	__u64 open_mask, close_mask;
	__u32 flags;	/* GATE_TP_SYSCALL_ANY, GATE_TP_IN_ANY */
};

/** struct window_map_point - a probe point that opens or closes windows. */
struct window_map_point {
	const struct point *pt;
	__u64 open_mask, close_mask;
};

/** struct window_map_call - a uprobe window: @fn's call, entry to return. */
struct window_map_call {
	__u32 window;
	const struct point *fn;
};

/**
 * struct window_map_aux - how the AUX group's triggers are wanted
 * @on:		there is hardware trace: build @aux
 * @veto:	--where on in-kernel uprobe members: its text, else NULL
 * @gated:	the windows are gated from userspace by choice: --on
 *		resume/pause make no member
 */
struct window_map_aux {
	bool on;
	const char *veto;
	bool gated;
};

/**
 * struct window_map - the windows, as the gate and the AUX group take them
 * @tp:			one per event of the plan (plan.events order)
 * @points, @nr_points:	probe ends, in window order (start, stop)
 * @calls, @nr_calls:	uprobe windows
 * @aux, @nr_aux:	the AUX group's triggers (@aux[i].name points into @aux_names)
 */
struct window_map {
	struct window_map_tp *tp;
	struct window_map_point *points;
	size_t nr_points;
	struct window_map_call *calls;
	size_t nr_calls;
	struct aux_session_trigger *aux;
	char (*aux_names)[2 * 128 + 2];
	size_t nr_aux, cap_aux;
};

/**
 * window_map__build() - translate @p's windows.
 * Return: 0, -EINVAL (a window hardware trace cannot take, or a uprobe
 * function not in its file; with a message), -ENOMEM.
 */
int window_map__build(struct window_map *m, const struct record_plan *p, const struct window_map_aux *aux);

/** window_map__exit() - free it. */
void window_map__exit(struct window_map *m);

#endif
