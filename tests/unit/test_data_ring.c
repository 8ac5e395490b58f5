// SPDX-License-Identifier: BSD-2-Clause
/*
 * The data ring reader against synthetic rings: a small model of the kernel's
 * writer (forward: head grows, backward: head shrinks and overwrites the
 * oldest records) lays records out exactly as perf's ring does.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/record/data_ring.h"

struct fake {
	struct data_ring r;
	char *mem;
};

static void fake_init(struct fake *f, size_t size, int overwrite)
{
	size_t page = sysconf(_SC_PAGESIZE);

	memset(f, 0, sizeof(*f));
	f->mem = calloc(1, page + size);
	assert_non_null(f->mem);
	f->r.base = f->mem;
	f->r.size = size;
	f->r.bounce = malloc(65536);
	f->r.overwrite = overwrite;
}

static void fake_exit(struct fake *f)
{
	free(f->mem);
	free(f->r.bounce);
	free(f->r.snap_pos);
}

static char *data(struct fake *f)
{
	return f->mem + sysconf(_SC_PAGESIZE);
}

static void put(struct fake *f, uint64_t pos, const void *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		data(f)[(pos + i) & (f->r.size - 1)] = ((const char *)src)[i];
}

/* A record of @size bytes whose payload is the u64 @seq. */
static void make(char *buf, uint16_t size, uint64_t seq)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = size };

	memset(buf, 0xab, size);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 8, &seq, sizeof(seq));
}

static void write_forward(struct fake *f, uint16_t size, uint64_t seq)
{
	struct perf_event_mmap_page *pc = data_ring__user_page(&f->r);
	char buf[256];

	make(buf, size, seq);
	put(f, pc->data_head, buf, size);
	pc->data_head += size;
}

static void write_backward(struct fake *f, uint16_t size, uint64_t seq)
{
	struct perf_event_mmap_page *pc = data_ring__user_page(&f->r);
	char buf[256];

	make(buf, size, seq);
	pc->data_head -= size;
	put(f, pc->data_head, buf, size);
}

struct seen {
	uint64_t seq[4096];
	size_t n;
};

static int collect(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;

	assert_true(h->size >= 16);
	memcpy(&s->seq[s->n++], (const char *)h + 8, 8);
	return 0;
}

static void test_data_ring_forward_reads_across_the_wrap(void **state)
{
	const struct perf_event_header *h;
	struct fake f;
	uint64_t seq = 0, got;
	int n = 0;

	(void)state;
	fake_init(&f, 4096, 0);
	/* Fill most of the ring, consume it, then write records that straddle the end. */
	for (int i = 0; i < 60; i++)
		write_forward(&f, 64, seq++);
	data_ring__read_init(&f.r);
	while ((h = data_ring__read_event(&f.r)))
		n++;
	data_ring__consume(&f.r);
	assert_int_equal(n, 60);
	assert_int_equal(data_ring__user_page(&f.r)->data_tail, 60 * 64);
	for (int i = 0; i < 10; i++)
		write_forward(&f, 40, seq++); /* 3840 + 40k crosses 4096 */
	data_ring__read_init(&f.r);
	for (uint64_t want = 60; want < 70; want++) {
		h = data_ring__read_event(&f.r);
		assert_non_null(h);
		assert_int_equal(h->size, 40);
		memcpy(&got, (const char *)h + 8, 8);
		assert_int_equal(got, want);
	}
	assert_null(data_ring__read_event(&f.r));
	fake_exit(&f);
}

static void test_data_ring_forward_stops_at_an_incomplete_record(void **state)
{
	struct perf_event_mmap_page *pc;
	struct fake f;

	(void)state;
	fake_init(&f, 4096, 0);
	write_forward(&f, 64, 1);
	pc = data_ring__user_page(&f.r);
	pc->data_head -= 8; /* the kernel has published only part of it */
	data_ring__read_init(&f.r);
	assert_null(data_ring__read_event(&f.r));
	fake_exit(&f);
}

static void test_data_ring_snapshot_not_wrapped_gives_all_oldest_first(void **state)
{
	struct seen s = {};
	struct fake f;

	(void)state;
	fake_init(&f, 4096, 1);
	for (uint64_t i = 0; i < 10; i++)
		write_backward(&f, 48, i);
	assert_int_equal(data_ring__snapshot(&f.r, collect, &s), 10);
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(s.seq[i], i);
	fake_exit(&f);
}

static void test_data_ring_snapshot_wrapped_keeps_newest_and_drops_torn(void **state)
{
	struct seen s = {};
	struct fake f;
	size_t total = 0;

	(void)state;
	fake_init(&f, 4096, 1);
	/* 1000 records of mixed sizes: the ring wrapped many times. */
	for (uint64_t i = 0; i < 1000; i++)
		write_backward(&f, i % 3 ? 40 : 72, i);
	int n = data_ring__snapshot(&f.r, collect, &s);
	assert_true(n > 0);
	/* The newest is there, the sequence is contiguous, oldest first. */
	assert_int_equal(s.seq[n - 1], 999);
	for (int i = 1; i < n; i++)
		assert_int_equal(s.seq[i], s.seq[i - 1] + 1);
	for (int i = 0; i < n; i++)
		total += s.seq[i] % 3 ? 40 : 72;
	assert_true(total <= 4096);
	/* Nothing that fits was left out: one more (older) record would not fit whole. */
	assert_true(total + ((s.seq[0] - 1) % 3 ? 40 : 72) > 4096);
	fake_exit(&f);
}

static void test_data_ring_snapshot_exactly_full(void **state)
{
	struct seen s = {};
	struct fake f;

	(void)state;
	fake_init(&f, 4096, 1);
	for (uint64_t i = 0; i < 64; i++)
		write_backward(&f, 64, i); /* 64 * 64 = the ring, to the byte */
	assert_int_equal(data_ring__snapshot(&f.r, collect, &s), 64);
	assert_int_equal(s.seq[0], 0);
	assert_int_equal(s.seq[63], 63);
	fake_exit(&f);
}

static void test_data_ring_snapshots_never_repeat_a_record(void **state)
{
	struct seen a = {}, b = {}, c = {};
	struct fake f;

	(void)state;
	fake_init(&f, 4096, 1);
	for (uint64_t i = 0; i < 20; i++)
		write_backward(&f, 48, i);
	assert_int_equal(data_ring__snapshot(&f.r, collect, &a), 20);
	for (uint64_t i = 20; i < 25; i++)
		write_backward(&f, 48, i);
	assert_int_equal(data_ring__snapshot(&f.r, collect, &b), 5);
	assert_int_equal(b.seq[0], 20);
	assert_int_equal(b.seq[4], 24);
	/* Nothing new: an empty snapshot. */
	assert_int_equal(data_ring__snapshot(&f.r, collect, &c), 0);
	/* More than a ring since: only what survived, still no repeats. */
	for (uint64_t i = 25; i < 500; i++)
		write_backward(&f, 48, i);
	memset(&c, 0, sizeof(c));
	int n = data_ring__snapshot(&f.r, collect, &c);
	assert_int_equal(n, 4096 / 48);
	assert_int_equal(c.seq[n - 1], 499);
	assert_true(c.seq[0] > 24);
	fake_exit(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_ring_forward_reads_across_the_wrap),
		cmocka_unit_test(test_data_ring_forward_stops_at_an_incomplete_record),
		cmocka_unit_test(test_data_ring_snapshot_not_wrapped_gives_all_oldest_first),
		cmocka_unit_test(test_data_ring_snapshot_wrapped_keeps_newest_and_drops_torn),
		cmocka_unit_test(test_data_ring_snapshot_exactly_full),
		cmocka_unit_test(test_data_ring_snapshots_never_repeat_a_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
