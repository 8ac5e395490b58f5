/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TESTS_AUX_MODEL_H
#define AUXTRIG_TESTS_AUX_MODEL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * DOC: model of the kernel side of one AUX ring
 *
 * Plays what kernel/events/ring_buffer.c and the PMU drivers do to one
 * event's ring, so the AUX reader can be tested without trace hardware.
 * The memory is a memfd laid out as the real mapping: user page
 * (struct perf_event_mmap_page), data pages, then the AUX area at
 * pc->aux_offset. The reader maps it like the kernel's (aux_ring__mmap()
 * on aux_model__fd()), so it sees the model's stores through its own
 * mapping, read-only in snapshot mode.
 *
 * Rules played (kernel 6.1..6.18):
 * - perf_aux_output_begin(), normal mode: space = CIRC_SPACE(aux_head,
 *   aux_tail, size), at most size - 1; no space: the event is disabled
 *   (pending_disable) and the reader woken, the data is not written.
 * - the driver: Intel PT and Arm SPE raise a PMI when the handle's space
 *   runs out (data cut, TRUNCATED) or at handle->wakeup, ending the handle
 *   there and beginning the next one; CoreSight copies its sink into the
 *   AUX buffer only when stopped (sched-out, disable), TRUNCATED if the
 *   sink held more than the space.
 * - perf_aux_output_end(): normal mode aux_head += size and the record's
 *   aux_offset is the head before the data; overwrite mode aux_head = the
 *   driver's head and aux_offset is that new head; every overwrite record
 *   has OVERWRITE; a record of size 0 whose flags are only OVERWRITE or
 *   format bits is not emitted; aux_head is published with a release
 *   store; wakeup when aux_head - aux_wakeup >= watermark (aux_wakeup =
 *   rounddown(aux_head, watermark)) or on TRUNCATED, and TRUNCATED also
 *   disables the event.
 * - watermark: attr.aux_watermark, 0 = half the buffer; none in overwrite.
 * - head in overwrite mode: Intel PT publishes the in-buffer write offset
 *   on every stop and reports size = the whole buffer (pt_event_stop());
 *   Arm SPE the in-buffer offset with the bytes of this session; CoreSight
 *   a monotonic head.
 * - PERF_RECORD_ITRACE_START on the first enable (PERF_ATTACH_ITRACE).
 * - records in the data ring carry a sample_id trailer of
 *   %AUX_MODEL_SAMPLE_ID_SIZE bytes: pid, tid, time, cpu, res, id
 *   (sample_type TID|TIME|CPU|IDENTIFIER).
 *
 * Simplified (said plainly): the hardware writes straight into the AUX
 * buffer at byte granularity (no ToPA page/entry boundaries, no SPE record
 * padding or half-buffer limit in snapshot mode, no ETR sink buffer of its
 * own: in overwrite mode CoreSight's head advances by everything written
 * and the record's size is clamped to the buffer); a full data ring drops
 * records and counts them (no PERF_RECORD_LOST); one CPU, no nesting, no
 * concurrency: each call runs to completion.
 */

/* pid, tid (u32 each), time, cpu + res (u32 each), id (u64). */
#define AUX_MODEL_SAMPLE_ID_SIZE 32

enum aux_model_pmu {
	AUX_MODEL_INTEL_PT,
	AUX_MODEL_CS_ETM,
	AUX_MODEL_ARM_SPE,
};

/**
 * struct aux_model_config - the event and its ring.
 * @pmu: whose driver rules to play
 * @overwrite: the AUX area is mapped read-only (snapshot mode)
 * @data_pages: data ring pages (power of 2)
 * @aux_pages: AUX pages (power of 2)
 * @aux_watermark: attr.aux_watermark in bytes; 0 = half the buffer
 * @pid: for the sample_id trailer and ITRACE_START
 * @tid: same
 * @cpu: same
 * @id: the event id in the trailer
 */
struct aux_model_config {
	enum aux_model_pmu pmu;
	bool overwrite;
	size_t data_pages;
	size_t aux_pages;
	__u32 aux_watermark;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u64 id;
};

/**
 * struct aux_model_stats - what the model did.
 * @written: bytes the hardware stored in the AUX buffer
 * @dropped: bytes the hardware had but could not store (no space, disabled)
 * @aux_records: PERF_RECORD_AUX emitted
 * @itrace_starts: PERF_RECORD_ITRACE_START emitted
 * @disables: times the kernel disabled the event (no space, TRUNCATED)
 * @wakeups: reader wakeups (POLLIN)
 * @data_lost: records that did not fit in the data ring
 */
struct aux_model_stats {
	uint64_t written;
	uint64_t dropped;
	uint64_t aux_records;
	uint64_t itrace_starts;
	uint64_t disables;
	uint64_t wakeups;
	uint64_t data_lost;
};

/* The kernel's state; fields are the model's. */
struct aux_model {
	struct aux_model_config cfg;
	int fd;
	void *mem;			/* the kernel's view of the whole mapping */
	size_t mem_len;
	size_t page;
	struct perf_event_mmap_page *pc;
	unsigned char *data;
	size_t data_size;
	unsigned char *aux;
	size_t aux_size;
	uint64_t aux_head;		/* rb->aux_head */
	uint64_t aux_wakeup;		/* rb->aux_wakeup */
	uint64_t watermark;		/* rb->aux_watermark */
	bool enabled;
	bool itrace_started;
	bool pollin;
	bool in_handle;			/* between output_begin and output_end */
	uint64_t handle_head;
	uint64_t handle_size;
	uint64_t handle_wakeup;
	uint64_t handle_written;
	__u64 handle_flags;
	uint64_t hw_pos;		/* overwrite: where the hardware writes next */
	uint64_t time;
	struct aux_model_stats stats;
};

/**
 * aux_model__init() - a fresh, zeroed ring for an event that is not yet
 * enabled. Return: 0 or -errno.
 */
int aux_model__init(struct aux_model *m, const struct aux_model_config *cfg);
/** aux_model__exit() - free everything; accepts a zeroed model. */
void aux_model__exit(struct aux_model *m);

/** aux_model__fd() - the "event fd": mmap the AUX area on it at pc->aux_offset. */
int aux_model__fd(const struct aux_model *m);
/** aux_model__user_page() - the perf_event_mmap_page (mapped at offset 0 of the fd). */
struct perf_event_mmap_page *aux_model__user_page(const struct aux_model *m);

/**
 * aux_model__check_aux_mmap() - perf_mmap()'s checks on the aux_offset and
 * aux_size the reader wrote: beyond the data pages, page aligned, size of
 * the AUX area, a power of 2 pages. Return: 0 or -EINVAL.
 */
int aux_model__check_aux_mmap(const struct aux_model *m);

/** aux_model__enable() - PERF_EVENT_IOC_ENABLE: start tracing (output_begin). */
void aux_model__enable(struct aux_model *m);
/** aux_model__disable() - PERF_EVENT_IOC_DISABLE: stop, flush, publish aux_head. */
void aux_model__disable(struct aux_model *m);
/** aux_model__enabled() - whether the event runs (the kernel may have disabled it). */
bool aux_model__enabled(const struct aux_model *m);

/**
 * aux_model__hw_write() - the PMU produces @len bytes of trace.
 * Return: bytes stored in the AUX buffer; the rest was lost.
 */
size_t aux_model__hw_write(struct aux_model *m, const void *bytes, size_t len);

/**
 * aux_model__output_end() - the driver ends the current handle with
 * @flags (perf_aux_output_flag() then perf_aux_output_end(); e.g. a
 * sched-out, or PARTIAL/COLLISION seen by the hardware) and, the event
 * still enabled, begins the next one.
 */
void aux_model__output_end(struct aux_model *m, __u64 flags);

/**
 * aux_model__emit_switch() - a context switch record of an event redirected
 * into this ring (a tracking event's), with that event's @id in the trailer:
 * PERF_RECORD_SWITCH, or with @cpu_wide PERF_RECORD_SWITCH_CPU_WIDE naming
 * the thread switched to (@out) or from (@next_prev_pid, @next_prev_tid).
 */
void aux_model__emit_switch(struct aux_model *m, __u64 id, bool out, bool cpu_wide, __u32 next_prev_pid,
			    __u32 next_prev_tid);

/** aux_model__pollin() - whether the reader was woken since the last call (clears it, as perf_poll()). */
bool aux_model__pollin(struct aux_model *m);

#endif
