/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CSD_TIMED_H
#define AUXTRIG_CSD_TIMED_H

/*
 * decode/ layer: CoreSight branch samples in the order of the trace's
 * timestamps, as perf 6.1 makes them (user/decode/csd_timed.c, over
 * csd_decoder); driven by script_cs.c.
 */

/**
 * DOC: CoreSight timed decode
 *
 * When the cs_etm event was recorded with its timestamp option (attr
 * config bit 28, ETM_OPT_TS), perf 6.1 does not decode the trace queue by
 * queue: it decodes every queue (AUXTRACE buffer index) up to the first
 * trace timestamp, puts each on a min-heap by that time, and then, again
 * and again, takes the queue and trace ID with the earliest time, makes
 * the samples of that trace ID's packets, and decodes that queue on to its
 * next timestamp (util/cs-etm.c: cs_etm__process_queues()). Every
 * instruction range after a timestamp is a stop of its own, at an
 * estimated time (the timestamp plus the instructions since), so the
 * trace IDs and queues interleave range by range.
 *
 * csd_timed__run() is that algorithm, made to give perf's output byte for
 * byte, including what it implies: one packet queue and one branch state
 * per trace ID (not per queue, as without timestamps); the decoder driven
 * as perf drives OpenCSD (stopping after each element perf stops on,
 * resetting it between buffers without an end of trace, so what it had
 * not yet delivered is dropped); a trace ID's packets before its first
 * timestamp dropped; every trace ID's packets taken at the end of each
 * buffer, in trace ID order; the heap's order for equal times.
 *
 * Code is read through a callback; like perf, addresses below the kernel
 * are read only for a trace ID whose thread is known (from a context ID in
 * the trace).
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/decode/csd_decoder.h"

/** struct csd_timed_etm - one trace unit (ETMv4 or ETE) and its CPU. */
struct csd_timed_etm {
	int cpu;
	bool ete;
	__u32 devarch;
	struct csd_etmv4_regs regs;
};

/**
 * struct csd_timed_piece - a stretch of trace decoded from a reset decoder
 * (one PERF_RECORD_AUX's data, or one AUXTRACE buffer).
 * @aux_offset: AUX offset of @data[0]
 * @id: the caller's name for it (passed back in errors and progress)
 */
struct csd_timed_piece {
	const void *data;
	size_t len;
	__u64 aux_offset;
	size_t id;
};

/**
 * struct csd_timed_queue - one queue: the pieces of one AUXTRACE mmap index,
 * in order.
 * @idx: the index (perf's queue number: the heap's tie order depends on it)
 * @raw: unformatted trace (TRBE): one source, the ETM of @cpu
 * @cpu: the buffers' CPU
 * @tid: the thread of its first buffer (its AUXTRACE record's), the samples'
 *       until a context ID says another
 */
struct csd_timed_queue {
	__u32 idx;
	bool raw;
	int cpu;
	int tid;
	const struct csd_timed_piece *pieces;
	size_t nr_pieces;
};

/**
 * struct csd_timed_ops - what the decode calls.
 * @read: copy up to @len bytes of code at @addr; return how many
 * @is_kernel: is @addr a kernel address (perf's machine__kernel_start())
 * @branch: one branch sample, in output order: from @from (an instruction of
 *          @from_size bytes, 0 when @from is 0) to @to on @cpu, of thread
 *          @tid (perf's traceid queue's), perf's flags (SCRIPT_IP_FLAG_*)
 * @progress: decoding has reached AUX offset @aux_offset of piece @piece
 * @error: piece @piece could not be decoded past @aux_offset: @msg
 * @code, @nr_code: if set, and all of it kernel code (which perf reads for
 *                  any trace ID), the code as buffers OpenCSD reads itself
 *                  instead of @read (disjoint, sorted)
 */
struct csd_timed_ops {
	size_t (*read)(void *ctx, __u64 addr, void *buf, size_t len);
	bool (*is_kernel)(void *ctx, __u64 addr);
	void (*branch)(void *ctx, __u64 from, __u64 to, unsigned int from_size, __u32 flags, int cpu, int tid);
	void (*progress)(void *ctx, size_t piece, __u64 aux_offset);
	void (*error)(void *ctx, size_t piece, __u64 aux_offset, const char *msg);
	const struct csd_timed_code {
		__u64 addr, len;
		const void *bytes;
	} *code;
	size_t nr_code;
};

/**
 * csd_timed__run() - decode @queues (sorted by idx) with the trace units
 * @etms, calling @ops in perf 6.1's timed order.
 * Return: 0, or -errno (-ENOMEM; -EINVAL: OpenCSD refused a configuration).
 * A piece that cannot be decoded is reported through @ops->error and the
 * rest of its queue is still decoded.
 */
int csd_timed__run(const struct csd_timed_etm *etms, size_t nr_etms, const struct csd_timed_queue *queues,
		   size_t nr_queues, const struct csd_timed_ops *ops, void *ctx);

#endif
