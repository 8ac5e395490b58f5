/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_AUX_RING_H
#define AUXTRIG_AUX_RING_H

/*
 * record/ layer: the AUX area reader (user/record/aux_ring.c), mapped through
 * sys/perf_sys.h; used by aux_session.c.
 */

#include <linux/perf_event.h>

#include "auxtrig/format/pdata.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_sys;

/**
 * DOC: AUX ring reader
 *
 * Reads one AUX area (Intel PT, CoreSight ETM, Arm SPE trace) of a perf
 * event whose data ring is already mapped. The user page (struct
 * perf_event_mmap_page) carries the AUX protocol: aux_offset/aux_size are
 * written by us before the AUX mmap; aux_head is published by the kernel,
 * aux_tail by us (full-trace mode only).
 *
 * Full-trace mode (AUX mapped PROT_READ|PROT_WRITE; the kernel never
 * overwrites what we have not released through aux_tail):
 *
 *   aux_ring__read()     head = load-acquire(pc->aux_head)   pairs with the
 *                        driver's barrier (B) before perf_aux_output_end()
 *                        publishes aux_head: the trace bytes below head are
 *                        visible once head is. Hands out [tail, head) as
 *                        up to two segments pointing into the mapping.
 *   (caller writes the AUXTRACE record and both segments out)
 *   aux_ring__consume()  store-release(pc->aux_tail, head)   pairs with the
 *                        kernel's control dependency (A) in
 *                        perf_aux_output_begin(): our reads of the segments
 *                        complete before the kernel may reuse the space.
 *   aux_ring__enable()   if consume said so: the kernel disabled the event
 *                        when the buffer filled (PERF_RECORD_AUX with
 *                        TRUNCATED); PERF_EVENT_IOC_ENABLE restarts it.
 *
 * Snapshot mode (AUX mapped PROT_READ: the hardware wraps freely, aux_tail
 * is ignored, every PERF_RECORD_AUX carries OVERWRITE):
 *
 *   aux_ring__snapshot_start()   ops->snapshot_start: disable the event, so
 *                                the driver stops and publishes aux_head
 *   aux_ring__snapshot()         read aux_head, let ops->find_snapshot
 *                                turn (head, previous head) into a range,
 *                                clamp it to the snapshot size; no copy
 *   aux_ring__snapshot_finish()  ops->snapshot_finish: enable again
 *
 * Or, where the event's group pauses and resumes it in the kernel (a
 * disabled leader schedules its members out, so every aux_pause/aux_resume
 * they would have made is lost, and ENABLE brings back the paused state it
 * left with), without stopping the group:
 *
 *   aux_ring__flush()            the driver publishes aux_head and goes on
 *   aux_ring__snapshot()         as above; the caller copies the range out
 *   aux_ring__flush()            again, then
 *   aux_ring__snapshot_overwritten()  how much of the range's old end the
 *                                running hardware wrote over meanwhile
 *
 * What "head" means in snapshot mode depends on the PMU: Intel PT and Arm
 * SPE publish an offset inside the buffer, CoreSight (ETR, ETF, TRBE) a
 * monotonic count. Hence one ops table per PMU, &struct aux_pmu_ops.
 *
 * Offsets handed out are in aux_head space (the kernel's raw aux_head
 * values, not masked), which is what perf 6.1 expects in
 * PERF_RECORD_AUXTRACE.offset: its CoreSight decoder looks up each
 * PERF_RECORD_AUX [aux_offset, aux_offset + aux_size) in them.
 *
 * Not thread safe: one reader per ring.
 */

struct aux_ring;

/**
 * struct aux_ring_read - one read: up to two contiguous segments of the AUX
 * mapping, oldest byte first, valid until the next consume or snapshot.
 * @data1: first segment (NULL when @len1 is 0)
 * @len1: its length
 * @data2: second segment, the part that wrapped to the start of the buffer
 * @len2: its length (0 when the range did not wrap)
 * @offset: aux_head-space position of the first byte (= head - size)
 * @size: @len1 + @len2
 * @padded: @size rounded up to 8, the AUXTRACE payload size
 */
struct aux_ring_read {
	const void *data1;
	size_t len1;
	const void *data2;
	size_t len2;
	uint64_t offset;
	uint64_t size;
	uint64_t padded;
};

/* PERF_RECORD_AUXTRACE is struct pdata_record_auxtrace (auxtrig/pdata.h). */

/**
 * struct aux_ring_stats - what the reader saw, for the end-of-run report.
 * @aux_records: PERF_RECORD_AUX records fed in by aux_ring__note_aux_record()
 * @truncated: of those, with PERF_AUX_FLAG_TRUNCATED (data lost; the kernel
 *             disabled the event)
 * @partial: with PERF_AUX_FLAG_PARTIAL (the record has gaps)
 * @collision: with PERF_AUX_FLAG_COLLISION (samples collided, SPE/TRBE)
 * @bytes: trace bytes handed out (unpadded)
 * @reads: reads and snapshots that handed out data
 * @wraps: of those, ranges that crossed the end of the buffer (two segments)
 * @snapshot_wraps: snapshots for which the PMU's rules said the buffer had
 *                  wrapped since the previous one (older data overwritten)
 * @clamped_bytes: bytes left out of snapshots by the snapshot size
 * @enables: re-enables after a TRUNCATED
 */
struct aux_ring_stats {
	uint64_t aux_records;
	uint64_t truncated;
	uint64_t partial;
	uint64_t collision;
	uint64_t bytes;
	uint64_t reads;
	uint64_t wraps;
	uint64_t snapshot_wraps;
	uint64_t clamped_bytes;
	uint64_t enables;
	uint64_t overwritten_bytes;
};

/**
 * struct aux_pmu_ops - what differs between AUX PMUs.
 * @name: PMU name in sysfs ("intel_pt", "cs_etm", "arm_spe")
 * @head_in_buffer: in snapshot mode the driver publishes aux_head as an
 *                  offset inside the buffer (Intel PT, Arm SPE), not as a
 *                  monotonic count (CoreSight)
 * @snapshot_start: stop the hardware so aux_head is published
 *                  (default action: PERF_EVENT_IOC_DISABLE); 0 or -errno
 * @snapshot_finish: restart it (PERF_EVENT_IOC_ENABLE); 0 or -errno
 * @find_snapshot: given the published @head and the previous snapshot's
 *                 head in @old, set both so that [*@old, *@head) is the
 *                 new data (at most a buffer); NULL means "monotonic head:
 *                 take [old, head) as it is"; 0 or -errno
 * @info_fill: fill the AUXTRACE_INFO priv[] words that depend on how the
 *             ring is used (snapshot mode, per-CPU mmaps); @nr is the
 *             number of u64 in @priv; 0 or -EINVAL if @nr is too small
 */
struct aux_pmu_ops {
	const char *name;
	bool head_in_buffer;
	int (*snapshot_start)(struct aux_ring *r);
	int (*snapshot_finish)(struct aux_ring *r);
	int (*find_snapshot)(struct aux_ring *r, uint64_t *head, uint64_t *old);
	int (*info_fill)(const struct aux_ring *r, __u64 *priv, size_t nr);
};

extern const struct aux_pmu_ops aux_pmu_intel_pt;
extern const struct aux_pmu_ops aux_pmu_cs_etm;
extern const struct aux_pmu_ops aux_pmu_arm_spe;

/**
 * aux_pmu__find() - the ops of PMU @name.
 * Return: the ops, or NULL with errno = ENOENT for a PMU without AUX support here.
 */
const struct aux_pmu_ops *aux_pmu__find(const char *name);

/**
 * struct aux_ring_config - how the ring is used.
 * @ops: the PMU (required)
 * @overwrite: snapshot mode (AUX mapped read-only)
 * @snapshot_size: most bytes one snapshot hands out; 0 = the buffer size
 * @idx: mmap index, for AUXTRACE.idx (index into the CPU map, or thread index)
 * @cpu: for AUXTRACE.cpu; -1 per-thread
 * @tid: for AUXTRACE.tid; target pid per-CPU (-1 system-wide), tid per-thread
 * @per_cpu: per-CPU mmaps (AUXTRACE_INFO)
 * @intel_pt_psb_period: Intel PT: bytes between PSBs (sizes the wrap
 *                       reference buffer, §4.2); 0 = 16 KiB (psb_period=3)
 * @sys: the perf system calls (mmap, munmap, the default enable); NULL = the
 *       running kernel (perf_sys.h)
 * @enable: how to (re-)enable or disable the event; NULL = ENABLE/DISABLE
 *          through @sys. Tests point it at the AUX model. Return 0 or -errno.
 * @enable_arg: passed to @enable
 */
struct aux_ring_config {
	const struct aux_pmu_ops *ops;
	const struct perf_sys *sys;
	bool overwrite;
	size_t snapshot_size;
	__u32 idx;
	int cpu;
	int tid;
	bool per_cpu;
	size_t intel_pt_psb_period;
	int (*enable)(struct aux_ring *r, bool enable, void *arg);
	void *enable_arg;
};

/* The reader's state; embedded by its owner, fields private to aux_ring.c. */
struct aux_ring {
	struct aux_ring_config cfg;
	int fd;
	struct perf_event_mmap_page *pc;
	unsigned char *base;	/* the AUX area */
	size_t size;		/* its bytes: pages * page size, power of 2 */
	bool mapped;		/* base is our mmap */
	uint64_t prev;		/* full trace: our aux_tail; snapshot: previous head */
	uint64_t head;		/* head of the read not yet consumed */
	bool truncated;		/* a TRUNCATED record since the last consume */
	bool wrapped;		/* snapshot: sticky "the buffer has wrapped" */
	unsigned char *ref_buf;	/* Intel PT: bytes before the previous head */
	size_t ref_size;
	uint64_t ref_offset;	/* where ref_buf's bytes sit in the buffer */
	uint64_t snap_head;	/* snapshot: the raw aux_head the last snapshot ended at */
	struct aux_ring_stats stats;
};

/**
 * aux_ring__mmap() - map the AUX area of event @fd.
 * @r: the ring to set up
 * @fd: the AUX event, whose data ring is mapped already
 * @user_page: that data ring's first page; the AUX area is placed right
 *             after the data pages (data_offset + data_size, which the
 *             kernel keeps in the user page)
 * @aux_pages: AUX pages, a power of 2
 * @cfg: PMU and mode; @cfg->overwrite selects PROT_READ (snapshot) over
 *       PROT_READ|PROT_WRITE (full trace): the protection is what tells
 *       the kernel which mode to run the ring in
 *
 * Writes aux_offset and aux_size into @user_page, then maps them on @fd
 * (through @cfg->sys).
 * Return: 0 or -errno (EINVAL: sizes; EPERM: perf_event_mlock_kb exceeded,
 * see RLIMIT_MEMLOCK; ENOMEM: no contiguous memory for a PMU without
 * scatter-gather in snapshot mode).
 */
int aux_ring__mmap(struct aux_ring *r, int fd, void *user_page, size_t aux_pages,
		   const struct aux_ring_config *cfg);

/**
 * aux_ring__init_mapped() - use memory someone else mapped (tests: the AUX
 * model). Reads the current aux_head/aux_tail as the starting point.
 * @fd: the event for the default enable, or -1
 * @aux: the AUX area, @aux_size bytes (a power of 2)
 * Return: 0 or -EINVAL (size), -ENOMEM.
 */
int aux_ring__init_mapped(struct aux_ring *r, int fd, void *user_page, void *aux, size_t aux_size,
			  const struct aux_ring_config *cfg);

/** aux_ring__munmap() - unmap (if ours) and free; accepts a zeroed ring. */
void aux_ring__munmap(struct aux_ring *r);

/**
 * aux_ring__read() - full-trace mode: the data since the last consume.
 * @rd: filled in; valid until aux_ring__consume()
 * Return: bytes available (@rd->size; 0: nothing new), -EINVAL in snapshot
 * mode, -EPROTO if the kernel's head is further than a buffer ahead of the
 * tail (cannot happen with a well-behaved kernel).
 */
int64_t aux_ring__read(struct aux_ring *r, struct aux_ring_read *rd);

/**
 * aux_ring__consume() - full-trace mode: give what aux_ring__read() handed
 * out back to the kernel.
 * Return: 1 if the caller should aux_ring__enable() the event (a TRUNCATED
 * PERF_RECORD_AUX was noted since the previous consume: the kernel disabled
 * it), else 0. perf re-enables after every read; enabling an enabled event
 * is harmless, so callers that do not feed AUX records may always enable.
 */
int aux_ring__consume(struct aux_ring *r);

/** aux_ring__enable() - PERF_EVENT_IOC_ENABLE through @cfg->sys (or @cfg->enable). Return: 0 or -errno. */
int aux_ring__enable(struct aux_ring *r);

/** aux_ring__snapshot_start() - ops->snapshot_start. Return: 0 or -errno. */
int aux_ring__snapshot_start(struct aux_ring *r);

/**
 * aux_ring__snapshot() - snapshot mode: the data since the previous
 * snapshot, per the PMU's rules, newest bytes always included, at most the
 * snapshot size. Between snapshot_start() and snapshot_finish().
 *
 * No byte is handed out twice, except where the PMU's rules take the whole
 * buffer: Intel PT once its buffer has wrapped (the decoder removes the
 * overlap: AUXTRACE_INFO SNAPSHOT_MODE=1, intel_pt_find_overlap()), Arm SPE
 * once it has wrapped (as perf's arm_spe_find_snapshot()).
 *
 * Return: bytes handed out (0: nothing new) or -errno (-EINVAL in
 * full-trace mode).
 */
int64_t aux_ring__snapshot(struct aux_ring *r, struct aux_ring_read *rd);

/** aux_ring__snapshot_finish() - ops->snapshot_finish. Return: 0 or -errno. */
int aux_ring__snapshot_finish(struct aux_ring *r);

/**
 * aux_ring__flush() - snapshot mode: make the driver publish aux_head while
 * the event keeps running. PERF_EVENT_IOC_PERIOD with the event's own
 * @period: on the CPU where the event is active the kernel stops it with
 * PERF_EF_UPDATE and starts it again at once (__perf_event_period()), which
 * a driver in overwrite mode ends with perf_aux_output_end(), as at a
 * sched-out; elsewhere the head was published at its last sched-out and
 * nothing happens. The event and its group stay enabled, so the group's
 * aux_pause/aux_resume members keep acting and its paused state stays true.
 * Return: 0 or -errno (-EINVAL: the event does not sample, or the kernel
 * refused the period).
 */
int aux_ring__flush(struct aux_ring *r, __u64 period);

/**
 * aux_ring__snapshot_overwritten() - after aux_ring__snapshot() on a running
 * event, its range copied out and aux_ring__flush() called again: how many
 * bytes at the old end of @rd the hardware may have written over since the
 * snapshot's head, which is where it went on writing. They are to be left
 * out of the copy (counted in stats.overwritten_bytes). With a head inside
 * the buffer (Intel PT, Arm SPE) a writer that went round the whole buffer
 * cannot be told from one that wrote nothing; a monotonic head (CoreSight)
 * tells, and then all of @rd is overwritten.
 * Return: bytes to drop from the start of @rd, at most @rd->size.
 */
uint64_t aux_ring__snapshot_overwritten(struct aux_ring *r, const struct aux_ring_read *rd);

/**
 * aux_ring__note_aux_record() - count a PERF_RECORD_AUX of this ring read
 * from the data ring (its flags); a TRUNCATED one makes the next consume
 * ask for a re-enable.
 */
void aux_ring__note_aux_record(struct aux_ring *r, __u64 flags);

/**
 * aux_ring__auxtrace() - the 48-byte PERF_RECORD_AUXTRACE for @rd.
 * @reference: Intel PT: TSC at read time; CoreSight: random; SPE: clock
 */
void aux_ring__auxtrace(const struct aux_ring *r, const struct aux_ring_read *rd, __u64 reference,
			struct pdata_record_auxtrace *rec);

/** aux_ring__stats() - the counters. */
static inline const struct aux_ring_stats *aux_ring__stats(const struct aux_ring *r)
{
	return &r->stats;
}

#endif
