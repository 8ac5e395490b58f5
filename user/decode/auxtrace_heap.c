// SPDX-License-Identifier: BSD-2-Clause
/*
 * auxtrace_heap: perf 6.1's heap of AUX queues (util/auxtrace.c), ordered
 * by the time of each queue's next data. Which of two queues of the same
 * time comes out first is what perf prints first, so it is perf's heap
 * exactly: the same sifting, the same ties.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/auxtrace_heap.h"

#define AUXTRACE_HEAP_INIT	32	/* AUXTRACE_INIT_NR_QUEUES */

static void auxtrace_heap__heapify(struct auxtrace_heap_item *a, unsigned int pos, unsigned int queue_nr,
				    __u64 ordinal)
{
	while (pos) {
		unsigned int parent = (pos - 1) >> 1;

		if (a[parent].ordinal <= ordinal)
			break;
		a[pos] = a[parent];
		pos = parent;
	}
	a[pos].queue_nr = queue_nr;
	a[pos].ordinal = ordinal;
}

int auxtrace_heap__add(struct auxtrace_heap *h, unsigned int queue_nr, __u64 ordinal)
{
	if (queue_nr >= h->sz) {
		unsigned int sz = AUXTRACE_HEAP_INIT;
		struct auxtrace_heap_item *a;

		while (sz <= queue_nr)
			sz <<= 1;
		a = realloc(h->a, sz * sizeof(*a));
		if (!a)
			return -ENOMEM;
		h->a = a;
		h->sz = sz;
	}
	auxtrace_heap__heapify(h->a, h->cnt++, queue_nr, ordinal);
	return 0;
}

void auxtrace_heap__pop(struct auxtrace_heap *h)
{
	unsigned int pos = 0, cnt = h->cnt, last;
	struct auxtrace_heap_item *a = h->a;

	if (!cnt)
		return;
	h->cnt--;
	for (;;) {
		unsigned int left = (pos << 1) + 1, right = left + 1;

		if (left >= cnt)
			break;
		if (right >= cnt) {
			a[pos] = a[left];
			return;
		}
		if (a[left].ordinal < a[right].ordinal) {
			a[pos] = a[left];
			pos = left;
		} else {
			a[pos] = a[right];
			pos = right;
		}
	}
	last = cnt - 1;
	auxtrace_heap__heapify(a, pos, a[last].queue_nr, a[last].ordinal);
}

void auxtrace_heap__free(struct auxtrace_heap *h)
{
	free(h->a);
	memset(h, 0, sizeof(*h));
}
