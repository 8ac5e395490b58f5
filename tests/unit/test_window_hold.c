// SPDX-License-Identifier: BSD-2-Clause
/* Records of timed windows held until their verdict, and the duration syntax. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "auxtrig/lang/duration.h"
#include "auxtrig/record/window_hold.h"

/* A 16-byte record whose payload says which it is. */
struct rec {
	struct perf_event_header h;
	__u64 n;
};

struct sink {
	__u64 got[64];
	size_t nr;
};

static int sink_write(void *ctx, const void *p, size_t size)
{
	struct sink *s = ctx;
	const struct rec *r = p;

	assert_int_equal(size, sizeof(*r));
	assert_int_equal(r->h.size, sizeof(*r));
	if (s->nr < sizeof(s->got) / sizeof(s->got[0]))
		s->got[s->nr] = r->n;
	s->nr++;
	return 0;
}

static int add(struct window_hold *h, struct sink *s, __u32 id, __u64 n)
{
	struct rec r = { .h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(r) }, .n = n };

	return window_hold__record(h, id, 1000 + n, &r, sizeof(r), sink_write, s);
}

static void test_window_hold_kept_window_written_in_order(void **state)
{
	struct window_hold *h = window_hold__new();
	struct sink s = {};

	(void)state;
	assert_int_equal(add(h, &s, 7, 1), 0);
	assert_int_equal(add(h, &s, 8, 2), 0);
	assert_int_equal(add(h, &s, 7, 3), 0);
	assert_int_equal(s.nr, 0);			/* nothing written before the verdict */
	assert_int_equal(window_hold__oldest(h), 1001);
	assert_int_equal(window_hold__verdict(h, 7, true, sink_write, &s), 0);
	assert_int_equal(s.nr, 2);
	assert_int_equal(s.got[0], 1);
	assert_int_equal(s.got[1], 3);
	assert_int_equal(window_hold__oldest(h), 1002); /* window 8 still waits */
	assert_int_equal(window_hold__verdict(h, 8, false, sink_write, &s), 0);
	assert_int_equal(s.nr, 2);
	assert_true(window_hold__oldest(h) == ~0ULL);
	assert_int_equal(window_hold__stats(h)->kept, 1);
	assert_int_equal(window_hold__stats(h)->dropped, 1);
	assert_int_equal(window_hold__stats(h)->records_dropped, 1);
	window_hold__delete(h);
}

/* A record of another CPU's ring can come after its window's verdict. */
static void test_window_hold_late_records_follow_the_verdict(void **state)
{
	struct window_hold *h = window_hold__new();
	struct sink s = {};

	(void)state;
	assert_int_equal(window_hold__verdict(h, 3, true, sink_write, &s), 0);
	assert_int_equal(window_hold__verdict(h, 4, false, sink_write, &s), 0);
	assert_int_equal(add(h, &s, 3, 10), 0);
	assert_int_equal(add(h, &s, 4, 11), 0);
	assert_int_equal(s.nr, 1);
	assert_int_equal(s.got[0], 10);
	assert_int_equal(window_hold__stats(h)->records_dropped, 1);
	/* A second verdict for the same window changes nothing. */
	assert_int_equal(window_hold__verdict(h, 4, true, sink_write, &s), 0);
	assert_int_equal(window_hold__stats(h)->kept, 1);
	window_hold__pass(h);
	assert_int_equal(add(h, &s, 3, 12), 0);		/* still remembered one pass on */
	assert_int_equal(s.nr, 2);
	window_hold__delete(h);
}

static void test_window_hold_verdicts_forgotten_after_two_passes(void **state)
{
	struct window_hold *h = window_hold__new();
	struct sink s = {};

	(void)state;
	assert_int_equal(window_hold__verdict(h, 5, true, sink_write, &s), 0);
	window_hold__pass(h);
	window_hold__pass(h);
	assert_int_equal(add(h, &s, 5, 1), 0);		/* a new window as far as the hold knows */
	assert_int_equal(s.nr, 0);
	window_hold__end(h);
	assert_int_equal(window_hold__stats(h)->unfinished, 1);
	assert_int_equal(window_hold__stats(h)->records_unfinished, 1);
	window_hold__delete(h);
}

static void test_window_hold_pending_windows_survive_passes(void **state)
{
	struct window_hold *h = window_hold__new();
	struct sink s = {};

	(void)state;
	for (__u32 id = 1; id <= 5000; id++)		/* more windows than buckets */
		assert_int_equal(add(h, &s, id, id % 50), 0);
	for (int i = 0; i < 5; i++)
		window_hold__pass(h);
	assert_int_equal(window_hold__oldest(h), 1000);
	for (__u32 id = 1; id <= 5000; id++)
		assert_int_equal(window_hold__verdict(h, id, id == 4097, sink_write, &s), 0);
	assert_int_equal(s.nr, 1);
	assert_int_equal(s.got[0], 4097 % 50);
	assert_int_equal(window_hold__stats(h)->dropped, 4999);
	window_hold__end(h);
	assert_int_equal(window_hold__stats(h)->unfinished, 0);
	window_hold__delete(h);
}

/*
 * Issue #13, 3: a window that never closes held every record it had, without
 * bound (1.1 GB in 30 s). Past the limit, the oldest window is written
 * (--min-duration alone) and its later records go straight through.
 */
static void test_window_hold_limit_writes_oldest(void **state)
{
	struct window_hold *h = window_hold__new();
	const struct window_hold_stats *st = window_hold__stats(h);
	struct sink s = {};

	(void)state;
	window_hold__set_limit(h, 64 << 10, WINDOW_HOLD_WRITE_OLDEST);
	assert_int_equal(add(h, &s, 2, 0), 0);		/* an older window that closes later */
	for (__u64 n = 1; n <= 100000; n++) {
		assert_int_equal(add(h, &s, 1 + (n % 3 == 0), n), 0);
		assert_true(window_hold__held_bytes(h) <= 64 << 10);
	}
	assert_true(st->peak_bytes <= 64 << 10);
	/* Window 2 held the oldest record: written first; window 1 too, when it was oldest. */
	assert_int_equal(s.got[0], 0);
	assert_int_equal(st->early_written, 2);
	assert_int_equal(st->records_early_written, 100001);
	assert_int_equal(s.nr, 100001);
	assert_int_equal(window_hold__held_bytes(h), 0);
	/* Verdicts say whether writing them early was right. */
	assert_int_equal(window_hold__verdict(h, 2, false, sink_write, &s), 0);
	assert_int_equal(window_hold__verdict(h, 1, true, sink_write, &s), 0);
	assert_int_equal(st->early_written_wrong, 1);
	assert_int_equal(st->kept + st->dropped, 0);
	assert_int_equal(s.nr, 100001);
	/* Remembered until the verdict, then forgotten like any other. */
	window_hold__pass(h);
	window_hold__pass(h);
	assert_int_equal(add(h, &s, 1, 7), 0);
	assert_int_equal(s.nr, 100001);			/* a new window 1, held */
	window_hold__end(h);
	assert_int_equal(st->unfinished, 1);
	window_hold__delete(h);
}

/* With --max-duration the oldest window is dropped; a verdict of keep counts its records lost. */
static void test_window_hold_limit_drops_oldest(void **state)
{
	struct window_hold *h = window_hold__new();
	const struct window_hold_stats *st = window_hold__stats(h);
	struct sink s = {};

	(void)state;
	window_hold__set_limit(h, 64 << 10, WINDOW_HOLD_DROP_OLDEST);
	for (__u64 n = 0; n < 10000; n++)
		assert_int_equal(add(h, &s, 9, n), 0);		/* never closes: 160 KB */
	assert_int_equal(add(h, &s, 10, 10000), 0);		/* a short one after it */
	assert_int_equal(window_hold__verdict(h, 10, true, sink_write, &s), 0);
	assert_int_equal(s.nr, 1);
	assert_int_equal(s.got[0], 10000);
	assert_int_equal(st->early_dropped, 1);
	assert_int_equal(st->records_early_dropped, 10000);
	assert_true(window_hold__held_bytes(h) <= 64 << 10);
	/* Window 9 was dropped early; its verdict says keep: its records are lost, later ones too. */
	assert_int_equal(window_hold__verdict(h, 9, true, sink_write, &s), 0);
	assert_int_equal(add(h, &s, 9, 10001), 0);
	assert_int_equal(st->early_dropped_wrong, 1);
	assert_int_equal(st->records_lost, 10001);
	assert_int_equal(st->records_early_dropped, 10001);
	assert_int_equal(s.nr, 1);
	window_hold__end(h);
	assert_int_equal(st->unfinished, 0);
	window_hold__delete(h);
}

static void test_duration_parse_units(void **state)
{
	__u64 ns;

	(void)state;
	assert_int_equal(duration__parse("1ms", &ns), 0);
	assert_int_equal(ns, 1000000);
	assert_int_equal(duration__parse("250us", &ns), 0);
	assert_int_equal(ns, 250000);
	assert_int_equal(duration__parse("2s", &ns), 0);
	assert_int_equal(ns, 2000000000ULL);
	assert_int_equal(duration__parse("1500ns", &ns), 0);
	assert_int_equal(ns, 1500);
	assert_int_equal(duration__parse("0.5ms", &ns), 0);
	assert_int_equal(ns, 500000);
	assert_int_equal(duration__parse("0ns", &ns), 0);
	assert_int_equal(ns, 0);
}

static void test_duration_parse_rejects(void **state)
{
	__u64 ns;

	(void)state;
	assert_int_equal(duration__parse("30", &ns), -EINVAL);		/* no unit */
	assert_int_equal(duration__parse("ms", &ns), -EINVAL);
	assert_int_equal(duration__parse("", &ns), -EINVAL);
	assert_int_equal(duration__parse("-1ms", &ns), -EINVAL);
	assert_int_equal(duration__parse("1 ms", &ns), -EINVAL);
	assert_int_equal(duration__parse("1min", &ns), -EINVAL);
	assert_int_equal(duration__parse("2d", &ns), -EINVAL);
	assert_int_equal(duration__parse("90000s", &ns), -EINVAL);	/* over a day */
	assert_int_equal(duration__parse("1e999s", &ns), -EINVAL);
}

/*
 * A window's records come from every CPU its thread ran on, one ring after
 * the other: the oldest held is the smallest time, not the first to come.
 * (A round let perf flush past a record held after a newer one, and perf
 * found it out of order when its window was written: issue #13.)
 */
static void test_window_hold_oldest_is_smallest_time(void **state)
{
	struct window_hold *h = window_hold__new();
	struct sink s = {};

	(void)state;
	assert_int_equal(add(h, &s, 7, 30), 0);		/* drained first: CPU 0's ring */
	assert_int_equal(add(h, &s, 7, 10), 0);		/* then CPU 1's, where the thread ran before */
	assert_int_equal(add(h, &s, 8, 20), 0);
	assert_int_equal(window_hold__oldest(h), 1010);
	assert_int_equal(window_hold__verdict(h, 7, true, sink_write, &s), 0);
	assert_int_equal(window_hold__oldest(h), 1020);
	window_hold__delete(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_hold_kept_window_written_in_order),
		cmocka_unit_test(test_window_hold_late_records_follow_the_verdict),
		cmocka_unit_test(test_window_hold_verdicts_forgotten_after_two_passes),
		cmocka_unit_test(test_window_hold_pending_windows_survive_passes),
		cmocka_unit_test(test_window_hold_oldest_is_smallest_time),
		cmocka_unit_test(test_window_hold_limit_writes_oldest),
		cmocka_unit_test(test_window_hold_limit_drops_oldest),
		cmocka_unit_test(test_duration_parse_units),
		cmocka_unit_test(test_duration_parse_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
