// SPDX-License-Identifier: BSD-2-Clause
/* Records of timed windows held until their verdict: see include/auxtrig/record/window_hold.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/sys/membuf.h"
#include "auxtrig/record/window_hold.h"

#define HOLD_BUCKETS 4096	/* a power of 2 */

enum { HOLD_PENDING, HOLD_KEPT, HOLD_DROPPED };

/*
 * A window is PENDING until its verdict, then KEPT or DROPPED. Past the
 * limit, a window becomes KEPT or DROPPED before its verdict (@early); it is
 * remembered until the verdict comes, which sets @verdict_known, so that its
 * later records follow the early decision.
 */
struct hold_window {
	struct hold_window *next;	/* in the bucket */
	__u32 id;
	int state;
	bool early, verdict_known, verdict_keep;
	unsigned long decided_pass;
	__u64 oldest;			/* time of the oldest record held */
	size_t nr;			/* records held; early dropped: records dropped */
	struct membuf recs;
};

struct window_hold {
	struct hold_window *buckets[HOLD_BUCKETS];
	unsigned long pass;
	size_t nr_pending;
	__u64 held, limit;		/* bytes allocated for held records, and the bound */
	enum window_hold_full full;
	struct window_hold_stats stats;
};

struct window_hold *window_hold__new(void)
{
	struct window_hold *h = calloc(1, sizeof(struct window_hold));

	if (h)
		h->limit = WINDOW_HOLD_DEFAULT_LIMIT;
	return h;
}

void window_hold__set_limit(struct window_hold *h, __u64 bytes, enum window_hold_full full)
{
	h->limit = bytes;
	h->full = full;
}

__u64 window_hold__held_bytes(const struct window_hold *h)
{
	return h->held;
}

/* Forget @w's records (they were written or dropped). */
static void window_release(struct window_hold *h, struct hold_window *w)
{
	h->held -= w->recs.cap;
	free(w->recs.p);
	memset(&w->recs, 0, sizeof(w->recs));
	w->oldest = ~0ULL;
}

static int window_write_held(struct hold_window *w, window_hold_write_fn write, void *ctx)
{
	int err = 0;

	for (size_t off = 0; off < w->recs.len && !err;) {
		__u16 size;

		memcpy(&size, w->recs.p + off + 6, sizeof(size)); /* perf_event_header.size */
		err = write(ctx, w->recs.p + off, size);
		off += size;
	}
	return err;
}

/* The pending window whose first held record is the oldest, or NULL. */
static struct hold_window *window_oldest(const struct window_hold *h)
{
	struct hold_window *oldest = NULL;

	for (size_t b = 0; b < HOLD_BUCKETS; b++)
		for (struct hold_window *w = h->buckets[b]; w; w = w->next)
			if (w->state == HOLD_PENDING && w->nr && (!oldest || w->oldest < oldest->oldest))
				oldest = w;
	return oldest;
}

/* Past the limit: decide the oldest windows before their verdict until the rest fits. */
static int window_hold__shrink(struct window_hold *h, window_hold_write_fn write, void *ctx)
{
	int err = 0;

	while (h->held > h->limit && !err) {
		struct hold_window *w = window_oldest(h);

		if (!w)
			break;
		w->early = true;
		h->nr_pending--;
		if (h->full == WINDOW_HOLD_WRITE_OLDEST) {
			w->state = HOLD_KEPT;
			h->stats.early_written++;
			h->stats.records_early_written += w->nr;
			err = window_write_held(w, write, ctx);
			w->nr = 0;
		} else {
			w->state = HOLD_DROPPED;
			h->stats.early_dropped++;
			h->stats.records_early_dropped += w->nr;	/* w->nr goes on counting them */
		}
		window_release(h, w);
	}
	return err;
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

	size_t cap;
	int err;

	if (!w)
		return -ENOMEM;
	if (w->state == HOLD_KEPT) {
		if (w->early && !w->verdict_known)
			h->stats.records_early_written++;
		return write(ctx, rec, size);
	}
	if (w->state == HOLD_DROPPED) {
		if (!w->early) {
			h->stats.records_dropped++;
		} else {
			h->stats.records_early_dropped++;
			w->nr++;
			if (w->verdict_known && w->verdict_keep)
				h->stats.records_lost++;
		}
		return 0;
	}
	cap = w->recs.cap;
	membuf__add(&w->recs, rec, size);
	h->held += w->recs.cap - cap;
	if (w->recs.err)
		return w->recs.err;
	/*
	 * Not the first record held: the oldest. A thread that moved between
	 * CPUs has its window's records in two rings, and a pass drains the
	 * rings one after the other, so a later record can come first.
	 */
	if (time < w->oldest)
		w->oldest = time;
	w->nr++;
	err = h->held > h->limit ? window_hold__shrink(h, write, ctx) : 0;
	if (h->held > h->stats.peak_bytes)
		h->stats.peak_bytes = h->held;
	return err;
}

int window_hold__verdict(struct window_hold *h, __u32 id, bool keep, window_hold_write_fn write, void *ctx)
{
	struct hold_window *w = window_get(h, id);
	int err = 0;

	if (!w)
		return -ENOMEM;
	if (w->early) {
		/* Decided before: the verdict only says whether that was right. */
		if (w->verdict_known)
			return 0;
		w->verdict_known = true;
		w->verdict_keep = keep;
		w->decided_pass = h->pass;
		if (w->state == HOLD_KEPT && !keep)
			h->stats.early_written_wrong++;
		if (w->state == HOLD_DROPPED && keep) {
			h->stats.early_dropped_wrong++;
			h->stats.records_lost += w->nr;
		}
		return 0;
	}
	if (w->state != HOLD_PENDING)
		return 0;
	w->state = keep ? HOLD_KEPT : HOLD_DROPPED;
	w->decided_pass = h->pass;
	h->nr_pending--;
	if (keep) {
		h->stats.kept++;
		err = window_write_held(w, write, ctx);
	} else {
		h->stats.dropped++;
		h->stats.records_dropped += w->nr;
	}
	window_release(h, w);
	w->nr = 0;
	return err;
}

void window_hold__pass(struct window_hold *h)
{
	h->pass++;
	for (size_t b = 0; b < HOLD_BUCKETS; b++) {
		struct hold_window **pp = &h->buckets[b];

		while (*pp) {
			struct hold_window *w = *pp;

			if (w->state != HOLD_PENDING && (!w->early || w->verdict_known) &&
			    w->decided_pass + 2 <= h->pass) {
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
	h->held = 0;
}

const struct window_hold_stats *window_hold__stats(const struct window_hold *h)
{
	return &h->stats;
}
