// SPDX-License-Identifier: BSD-2-Clause
/* The sink: every record after the header, and the one owner of FINISHED_ROUND. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/record/sink.h"
#include "auxtrig/record/window_hold.h"

void record_sink__init(struct record_sink *k, struct pdata_writer *w, struct window_hold *hold, bool snapshot_mode)
{
	memset(k, 0, sizeof(*k));
	k->w = w;
	k->hold = hold;
	k->snapshot_mode = snapshot_mode;
}

/* The time of a record: a sample's, or a kernel record's sample_id trailer. */
static __u64 record_time(const struct perf_event_header *h)
{
	__u64 t = 0;

	if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof(struct pdata_sample_head))
		memcpy(&t, (const char *)h + offsetof(struct pdata_sample_head, time), sizeof(t));
	else if (h->type < 64 /* PERF_RECORD_USER_TYPE_START: synthesized types have no trailer */ &&
		 h->size >= sizeof(*h) + PDATA_SAMPLE_ID_SIZE)
		memcpy(&t, (const char *)h + h->size - PDATA_SAMPLE_ID_SIZE + offsetof(struct pdata_sample_id, time),
		       sizeof(t));
	return t;
}

/*
 * A write error of the file (disk full, I/O error) is the sink's from then
 * on: writes go on failing, and the writer counts each record lost, so that
 * the pass in progress (and the last drain) can go on and count what the
 * rings held; record_sink__end_pass() returns the error and the recorder
 * stops. Any other error (a malformed record) goes back at once.
 */
static int sink_result(struct record_sink *k, int err)
{
	if (!err || !pdata_writer__failed(k->w))
		return err;
	if (!k->err)
		k->err = err;
	return 0;
}

/* A flush or round that failed: the error goes back, and the sink keeps it if it is the file's. */
static int sink_stop(struct record_sink *k, int err)
{
	if (err && pdata_writer__failed(k->w) && !k->err)
		k->err = err;
	return err;
}

int record_sink__write(struct record_sink *k, const struct perf_event_header *h)
{
	__u64 t = record_time(h);

	if (t > k->written_max)
		k->written_max = t;
	return sink_result(k, pdata_writer__write(k->w, h, h->size));
}

int record_sink__write_auxtrace(struct record_sink *k, const struct pdata_record_auxtrace *rec, const void *d1,
				size_t l1, const void *d2, size_t l2)
{
	return sink_result(k, pdata_writer__write_auxtrace(k->w, rec, d1, l1, d2, l2));
}

int record_sink__failed(const struct record_sink *k)
{
	return k->err;
}

static int write_held(void *ctx, const void *rec, size_t size)
{
	(void)size;
	return record_sink__write(ctx, rec);
}

int record_sink__write_held(struct record_sink *k, __u32 window, __u64 time, const void *rec, size_t size)
{
	if (!k->hold)
		return record_sink__write(k, rec);
	return window_hold__record(k->hold, window, time, rec, size, write_held, k);
}

int record_sink__verdict(struct record_sink *k, __u32 window, bool keep)
{
	return k->hold ? window_hold__verdict(k->hold, window, keep, write_held, k) : 0;
}

int record_sink__write_own(struct record_sink *k, __u64 id, const struct sink_own_from *from, const void *raw,
			   __u32 raw_size)
{
	char buf[sizeof(struct pdata_sample_head) + 8 * (1 + SINK_OWN_CHAIN_MAX) + 4 + 256 + 8] = {};
	struct pdata_sample_head *h = (struct pdata_sample_head *)buf;
	__u64 newest = pdata_writer__newest_time(k->w);
	size_t size, raw_off = sizeof(*h);
	__u64 nr_chain = 0;

	if (!k->callchain)
		from = NULL;
	if (from && from->chain)
		nr_chain = from->nr_chain < SINK_OWN_CHAIN_MAX ? from->nr_chain : SINK_OWN_CHAIN_MAX; /* innermost first */
	if (k->callchain) {
		memcpy(buf + raw_off, &nr_chain, 8);
		if (nr_chain)
			memcpy(buf + raw_off + 8, from->chain, 8 * nr_chain);
		raw_off += 8 * (1 + nr_chain);
	}
	size = (raw_off + 4 + raw_size + 7) & ~7ul;
	if (size > sizeof(buf))
		return -E2BIG;
	h->header.type = PERF_RECORD_SAMPLE;
	h->header.misc = PERF_RECORD_MISC_USER;
	h->header.size = size;
	h->id = id;
	h->pid = from ? from->pid : (__u32)getpid();
	h->tid = from ? from->tid : (__u32)getpid();
	h->time = (k->last_time > newest ? k->last_time : newest) + 1;
	h->period = 1;
	memcpy(buf + raw_off, &raw_size, 4);
	memcpy(buf + raw_off + 4, raw, raw_size);
	return sink_result(k, pdata_writer__write(k->w, buf, size));
}

static __u64 sink_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int record_sink__end_pass(struct record_sink *k, bool any)
{
	__u64 now;

	if (k->hold && !k->snapshot_mode)
		window_hold__pass(k->hold); /* with -S, a pass is a snapshot */
	if (k->err)
		return k->err;
	if (!any && !k->round_held)
		return 0;
	if (k->snapshot_mode)
		return sink_stop(k, pdata_writer__flush(k->w));
	/*
	 * This round would let perf flush up to fr_max_time: not while a held
	 * record (written later, when its window closes) is older than that.
	 */
	if (k->hold && window_hold__oldest(k->hold) <= k->fr_max_time) {
		k->round_held = true;
		return sink_stop(k, pdata_writer__flush(k->w));
	}
	/*
	 * Nor sooner than SINK_ROUND_GAP_NS after the last one: what this round
	 * lets perf flush is then that old. A CPU can take a record's time and
	 * put it in its ring later (a virtual CPU its host does not run: 4 ms
	 * seen under QEMU TCG, where another CPU's newer records were read in
	 * between); later than the gap, perf would find it out of order.
	 */
	now = sink_now_ns();
	if (now - k->round_ns < SINK_ROUND_GAP_NS) {
		k->round_held = true;
		return sink_stop(k, pdata_writer__flush(k->w));
	}
	k->round_held = false;
	k->round_ns = now;
	k->fr_max_time = k->written_max;
	return sink_stop(k, pdata_writer__finish_round(k->w));
}

int record_sink__end_synthesis(struct record_sink *k)
{
	return sink_stop(k, pdata_writer__finish_round(k->w));
}

int record_sink__snapshot_done(struct record_sink *k)
{
	if (k->hold)
		window_hold__pass(k->hold);
	return 0;
}

int record_sink__flush(struct record_sink *k)
{
	return k->err ?: sink_stop(k, pdata_writer__flush(k->w));
}
