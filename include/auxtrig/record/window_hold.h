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
 * With --min-duration/--max-duration the gate (bpf/gate/) knows a
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
 *
 * What is held is bounded (window_hold__set_limit(), --hold-size): past the
 * bound, the window held longest is decided before its verdict, oldest
 * first, until the rest fits. WINDOW_HOLD_WRITE_OLDEST writes it and every
 * later record of it (with --min-duration alone: the window open longest is
 * the likeliest to be long enough), WINDOW_HOLD_DROP_OLDEST drops them (with
 * --max-duration: the likeliest to be too long). Its verdict, when it comes,
 * says whether the early decision was right; the stats count both ways.
 */

/** WINDOW_HOLD_DEFAULT_LIMIT - bytes held at most unless set otherwise (64 MiB). */
#define WINDOW_HOLD_DEFAULT_LIMIT (64ULL << 20)

/** enum window_hold_full - what becomes of the oldest window past the limit. */
enum window_hold_full {
	WINDOW_HOLD_WRITE_OLDEST,
	WINDOW_HOLD_DROP_OLDEST,
};

struct window_hold;

/** typedef window_hold_write_fn - write one record that was held; 0 or -errno. */
typedef int (*window_hold_write_fn)(void *ctx, const void *rec, size_t size);

/**
 * struct window_hold_stats - what became of the timed windows
 * @kept, @dropped:	windows whose verdict was to write / drop them
 * @records_dropped:	records of dropped windows
 * @unfinished:		windows still open when the hold ended (no verdict)
 * @records_unfinished:	their records, not written
 * @early_written:	windows written before their verdict (the limit was reached)
 * @records_early_written: their records
 * @early_written_wrong: of those, windows whose verdict then said drop
 * @early_dropped:	windows dropped before their verdict
 * @records_early_dropped: their records
 * @early_dropped_wrong: of those, windows whose verdict then said keep
 * @records_lost:	the records of those: lost to the limit
 * @peak_bytes:		the most bytes held after a record was taken in
 *
 * Windows decided early count in the early_* fields only, not in @kept,
 * @dropped or @unfinished.
 */
struct window_hold_stats {
	__u64 kept, dropped, records_dropped;
	__u64 unfinished, records_unfinished;
	__u64 early_written, records_early_written, early_written_wrong;
	__u64 early_dropped, records_early_dropped, early_dropped_wrong, records_lost;
	__u64 peak_bytes;
};

/** window_hold__new() - an empty hold, WINDOW_HOLD_DEFAULT_LIMIT, writing the oldest. NULL with errno set. */
struct window_hold *window_hold__new(void);

/**
 * window_hold__set_limit() - hold at most @bytes (counted as allocated), and
 * past that decide the oldest window by @full (see the DOC above).
 */
void window_hold__set_limit(struct window_hold *h, __u64 bytes, enum window_hold_full full);

/** window_hold__held_bytes() - the bytes held now. */
__u64 window_hold__held_bytes(const struct window_hold *h);
/** window_hold__delete() - free it and everything it holds (NULL is fine). */
void window_hold__delete(struct window_hold *h);

/**
 * window_hold__record() - a record of window @id (size a multiple of 8).
 * Written through @write at once if the window's verdict was to keep it,
 * dropped if it was to drop it, else copied and held; past the limit, the
 * oldest windows are then decided early (which may write through @write).
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
