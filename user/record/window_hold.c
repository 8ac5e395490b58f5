// SPDX-License-Identifier: BSD-2-Clause
/* Records of timed windows held until their verdict: see include/auxtrig/record/window_hold.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/sys/membuf.h"
#include "auxtrig/record/window_hold.h"

#define HOLD_BUCKETS 4096	/* a power of 2 */

enum { HOLD_PENDING, HOLD_KEPT, HOLD_DROPPED };

struct hold_window {
	struct hold_window *next;	/* in the bucket */
	__u32 id;
	int state;
	unsigned long decided_pass;
	__u64 oldest;			/* time of the first record held */
	size_t nr;
	struct membuf recs;
};

struct window_hold {
	struct hold_window *buckets[HOLD_BUCKETS];
	unsigned long pass;
	size_t nr_pending;
	struct window_hold_stats stats;
};

struct window_hold *window_hold__new(void)
{
	return calloc(1, sizeof(struct window_hold));
}

static void window_free(struct hold_window *w)
{
	free(w->recs.p);
	free(w);
}

void window_hold__delete(struct window_hold *h)
{
	if (!h)
		return;
	for (size_t b = 0; b < HOLD_BUCKETS; b++) {
		while (h->buckets[b]) {
			struct hold_window *w = h->buckets[b];

			h->buckets[b] = w->next;
			window_free(w);
		}
	}
	free(h);
}

static struct hold_window *window_find(const struct window_hold *h, __u32 id)
{
	struct hold_window *w = h->buckets[id & (HOLD_BUCKETS - 1)];

	while (w && w->id != id)
		w = w->next;
	return w;
}

static struct hold_window *window_get(struct window_hold *h, __u32 id)
{
	struct hold_window *w = window_find(h, id);

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->id = id;
	w->state = HOLD_PENDING;
	w->oldest = ~0ULL;
	w->next = h->buckets[id & (HOLD_BUCKETS - 1)];
	h->buckets[id & (HOLD_BUCKETS - 1)] = w;
	h->nr_pending++;
	return w;
}

int window_hold__record(struct window_hold *h, __u32 id, __u64 time, const void *rec, size_t size,
			window_hold_write_fn write, void *ctx)
{
	struct hold_window *w = window_get(h, id);

	if (!w)
		return -ENOMEM;
	if (w->state == HOLD_KEPT)
		return write(ctx, rec, size);
	if (w->state == HOLD_DROPPED) {
		h->stats.records_dropped++;
		return 0;
	}
	membuf__add(&w->recs, rec, size);
	if (w->recs.err)
		return w->recs.err;
	if (!w->nr)
		w->oldest = time;
	w->nr++;
	return 0;
}

int window_hold__verdict(struct window_hold *h, __u32 id, bool keep, window_hold_write_fn write, void *ctx)
{
	struct hold_window *w = window_get(h, id);
	int err = 0;

	if (!w)
		return -ENOMEM;
	if (w->state != HOLD_PENDING)
		return 0;
	w->state = keep ? HOLD_KEPT : HOLD_DROPPED;
	w->decided_pass = h->pass;
	h->nr_pending--;
	if (keep) {
		h->stats.kept++;
		for (size_t off = 0; off < w->recs.len && !err;) {
			__u16 size;

			memcpy(&size, w->recs.p + off + 6, sizeof(size)); /* perf_event_header.size */
			err = write(ctx, w->recs.p + off, size);
			off += size;
		}
	} else {
		h->stats.dropped++;
		h->stats.records_dropped += w->nr;
	}
	free(w->recs.p);
	memset(&w->recs, 0, sizeof(w->recs));
	w->nr = 0;
	w->oldest = ~0ULL;
	return err;
}

void window_hold__pass(struct window_hold *h)
{
	h->pass++;
	for (size_t b = 0; b < HOLD_BUCKETS; b++) {
		struct hold_window **pp = &h->buckets[b];

		while (*pp) {
			struct hold_window *w = *pp;

			if (w->state != HOLD_PENDING && w->decided_pass + 2 <= h->pass) {
				*pp = w->next;
				window_free(w);
			} else {
				pp = &w->next;
			}
		}
	}
}

__u64 window_hold__oldest(const struct window_hold *h)
{
	__u64 oldest = ~0ULL;

	if (!h->nr_pending)
		return oldest;
	for (size_t b = 0; b < HOLD_BUCKETS; b++)
		for (const struct hold_window *w = h->buckets[b]; w; w = w->next)
			if (w->state == HOLD_PENDING && w->nr && w->oldest < oldest)
				oldest = w->oldest;
	return oldest;
}

void window_hold__end(struct window_hold *h)
{
	for (size_t b = 0; b < HOLD_BUCKETS; b++) {
		while (h->buckets[b]) {
			struct hold_window *w = h->buckets[b];

			h->buckets[b] = w->next;
			if (w->state == HOLD_PENDING && w->nr) {
				h->stats.unfinished++;
				h->stats.records_unfinished += w->nr;
			}
			window_free(w);
		}
	}
	h->nr_pending = 0;
}

const struct window_hold_stats *window_hold__stats(const struct window_hold *h)
{
	return &h->stats;
}
