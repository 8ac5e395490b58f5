/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_WINDOW_HOLD_H
#define AUXTRIG_WINDOW_HOLD_H

/*
 * record/ layer: records of timed windows held until their verdict
 * (user/record/window_hold.c), for sink.c.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

/**
 * DOC: records of timed windows, held until their verdict
 *
 * With --min-duration/--max-duration the gate (bpf/gate.bpf.c) knows a
 * window's duration only when the window closes, so the records of a window
 * cross to userspace tagged with the window's id and wait here. The window's
 * verdict (kept or dropped) writes or frees them. A verdict can arrive before
 * some of its window's records, emitted on another CPU's ring that was read
 * earlier in the same pass; those arrive within the next pass, so a verdict is
 * remembered for two passes over every ring after it arrived.
 *
 *   record of window W ──► verdict of W known? ── yes ─► write now / drop
 *                                   │ no
 *                                   ▼
 *                               held ── verdict of W ─► write all / drop all
 */

struct window_hold;

/** typedef window_hold_write_fn - write one record that was held; 0 or -errno. */
typedef int (*window_hold_write_fn)(void *ctx, const void *rec, size_t size);

/**
 * struct window_hold_stats - what became of the timed windows
 * @kept, @dropped:	windows whose verdict was to write / drop them
 * @records_dropped:	records of dropped windows
 * @unfinished:		windows still open when the hold ended (no verdict)
 * @records_unfinished:	their records, not written
 */
struct window_hold_stats {
	__u64 kept, dropped, records_dropped;
	__u64 unfinished, records_unfinished;
};

/** window_hold__new() - an empty hold. NULL with errno set. */
struct window_hold *window_hold__new(void);
/** window_hold__delete() - free it and everything it holds (NULL is fine). */
void window_hold__delete(struct window_hold *h);

/**
 * window_hold__record() - a record of window @id (size a multiple of 8).
 * Written through @write at once if the window's verdict was to keep it,
 * dropped if it was to drop it, else copied and held.
 * Return: 0 or -errno (of @write, or -ENOMEM).
 */
int window_hold__record(struct window_hold *h, __u32 id, __u64 time, const void *rec, size_t size,
			window_hold_write_fn write, void *ctx);

/**
 * window_hold__verdict() - window @id closed: write its held records in the
 * order they came (@keep) or free them, and remember the verdict for records
 * still to come. A second verdict for the same id is ignored.
 * Return: 0 or -errno of @write.
 */
int window_hold__verdict(struct window_hold *h, __u32 id, bool keep, window_hold_write_fn write, void *ctx);

/** window_hold__pass() - a pass over every ring ended: forget old verdicts. */
void window_hold__pass(struct window_hold *h);

/** window_hold__oldest() - the time of the oldest record held, or ~0ULL if none. */
__u64 window_hold__oldest(const struct window_hold *h);

/** window_hold__end() - the run ended: what is still held belongs to unfinished windows; free it. */
void window_hold__end(struct window_hold *h);

const struct window_hold_stats *window_hold__stats(const struct window_hold *h);

#endif
