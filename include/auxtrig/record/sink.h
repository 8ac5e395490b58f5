/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SINK_H
#define AUXTRIG_SINK_H

/*
 * record/ layer: the one writer of a recording's records, in order, with its rounds
 * (user/record/sink.c), over format/pdata_writer.h.
 */

#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct pdata_writer;
struct pdata_record_auxtrace;
struct window_hold;

/**
 * DOC: the sink of a recording
 *
 * Every record a recording writes after the header goes through the sink:
 * the gate's samples, sideband, auxtrig's own samples, and the AUX
 * session's records and AUXTRACE data. The sink is the one owner of
 * perf's FINISHED_ROUND and so of the order perf reads records in.
 *
 * perf's ordered-events queue, at each FINISHED_ROUND, flushes up to the
 * newest time it had seen at the round before; a record older than what it
 * flushed comes out of order. So:
 *
 *   streaming       one round per pass over the rings (record_sink__end_pass()),
 *                   at most one per SINK_ROUND_GAP_NS (a CPU may put a record
 *                   in its ring well after it took its time: virtual CPUs),
 *                   held back while a record of a timed window (--min/--max-
 *                   duration) older than what perf would flush still waits
 *   flight recorder no round ever: a later snapshot brings records older
 *                   than what is written now, and perf sorts them all at the end
 */

/* The least time between two rounds (100 ms): the lateness a record may have and still be in order. */
#define SINK_ROUND_GAP_NS 100000000ULL

/**
 * struct record_sink - the writer, and what the order of the file needs
 * @w:		the file
 * @hold:	timed windows' records, or NULL
 * @snapshot_mode: -S: no rounds
 * @callchain:	-g: the file's samples carry PERF_SAMPLE_CALLCHAIN (set after
 *		record_sink__init()); auxtrig's own samples then carry one too
 * @written_max: newest record time written
 * @fr_max_time: @written_max when the last round was written
 * @round_held:	a round was held back (held records, or the gap)
 * @round_ns:	CLOCK_MONOTONIC time of the last round
 * @last_time:	newest time of a gate sample seen (auxtrig's own samples follow it)
 * @err:	the file's write error (disk full...), once it happened: writes go
 *		on failing quietly, each record counted lost by the writer
 */
struct record_sink {
	struct pdata_writer *w;
	struct window_hold *hold;
	bool snapshot_mode;
	bool callchain;
	__u64 written_max;
	__u64 fr_max_time;
	bool round_held;
	__u64 round_ns;
	__u64 last_time;
	int err;
};

/**
 * record_sink__failed() - the file's write error (-ENOSPC, -EIO...) once one
 * happened, else 0. From then on writes return 0 and what they carried is
 * counted in pdata_writer_stats.lost_*; record_sink__end_pass() and
 * record_sink__flush() return the error, so the recorder stops at the end of
 * the pass.
 */
int record_sink__failed(const struct record_sink *k);

/** record_sink__init() - a sink over @w (not owned); @hold may be NULL. */
void record_sink__init(struct record_sink *k, struct pdata_writer *w, struct window_hold *hold, bool snapshot_mode);

/** record_sink__write() - one record, as it is. Return: 0 or -errno. */
int record_sink__write(struct record_sink *k, const struct perf_event_header *h);

/** record_sink__write_auxtrace() - an AUXTRACE record and its data (up to two pieces). */
int record_sink__write_auxtrace(struct record_sink *k, const struct pdata_record_auxtrace *rec, const void *d1,
				size_t l1, const void *d2, size_t l2);

/**
 * record_sink__write_held() - a record of timed window @window at @time: written,
 * dropped or held as its verdict says (include/auxtrig/record/window_hold.h).
 */
int record_sink__write_held(struct record_sink *k, __u32 window, __u64 time, const void *rec, size_t size);

/** record_sink__verdict() - timed window @window closed: write (@keep) or drop its records. */
int record_sink__verdict(struct record_sink *k, __u32 window, bool keep);

/**
 * struct sink_own_from - the thread an own sample is about, and its call stack
 * @pid, @tid:	the thread (its maps resolve the stack's user addresses)
 * @chain:	the callchain as the kernel samples it (PERF_CONTEXT_* markers
 *		among the addresses), innermost first
 * @nr_chain:	its entries; at most %SINK_OWN_CHAIN_MAX are written
 */
struct sink_own_from {
	__u32 pid, tid;
	const __u64 *chain;
	__u64 nr_chain;
};

/**
 * record_sink__write_own() - a sample of auxtrig's own event @id (raw payload
 * @raw), timed just after the newest record: from auxtrig's thread, or with
 * &record_sink.callchain and @from, from @from's thread with its callchain.
 * With &record_sink.callchain every own sample has a callchain, empty
 * without @from (the file's attrs say PERF_SAMPLE_CALLCHAIN).
 */
int record_sink__write_own(struct record_sink *k, __u64 id, const struct sink_own_from *from, const void *raw,
			   __u32 raw_size);

/* The most callchain entries an own sample carries (perf's default depth is 127). */
#define SINK_OWN_CHAIN_MAX 512

/**
 * record_sink__end_pass() - a pass over every ring ended; @any: it wrote
 * something. Streaming: a round (or held back, see above); flight recorder:
 * a flush. Return: 0 or -errno.
 */
int record_sink__end_pass(struct record_sink *k, bool any);

/**
 * record_sink__end_synthesis() - the records synthesized before the loop
 * (time conversion, AUXTRACE_INFO, the maps and comms of what runs now:
 * format/synth.c, written as they are) are done: one round, in either mode,
 * so that perf has them queued before the first sample.
 */
int record_sink__end_synthesis(struct record_sink *k);

/** record_sink__snapshot_done() - a snapshot (a pass, in flight-recorder mode) was written. */
int record_sink__snapshot_done(struct record_sink *k);

/** record_sink__flush() - to the disk, header patched, no round. */
int record_sink__flush(struct record_sink *k);

#endif
