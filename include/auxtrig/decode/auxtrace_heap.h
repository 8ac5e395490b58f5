/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_AUXTRACE_HEAP_H
#define AUXTRIG_AUXTRACE_HEAP_H

/*
 * decode/ layer: perf's auxtrace_heap (user/decode/auxtrace_heap.c), which
 * decides in which order perf 6.1 decodes the AUX queues of a timed trace
 * (CoreSight with timestamps, Intel PT).
 */

#include <linux/types.h>

/**
 * struct auxtrace_heap - perf's auxtrace_heap (util/auxtrace.c): a binary
 * min-heap of (queue, ordinal) whose order for equal ordinals is perf's.
 * Zeroed is empty.
 */
struct auxtrace_heap {
	struct auxtrace_heap_item {
		unsigned int queue_nr;
		__u64 ordinal;
	} *a;
	unsigned int cnt, sz;
};

/** auxtrace_heap__add() - add @queue_nr at @ordinal. Return: 0 or -ENOMEM. */
int auxtrace_heap__add(struct auxtrace_heap *h, unsigned int queue_nr, __u64 ordinal);
/** auxtrace_heap__pop() - remove the top (h->a[0]). */
void auxtrace_heap__pop(struct auxtrace_heap *h);
/** auxtrace_heap__free() - free the array. */
void auxtrace_heap__free(struct auxtrace_heap *h);

#endif
