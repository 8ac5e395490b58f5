// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AUX ring reader. The protocol and the barrier pairs are documented
 * in include/auxtrig/record/aux_ring.h; the snapshot rules per PMU are below, next
 * to each find_snapshot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "auxtrig/record/aux_ring.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"

static uint64_t aux_ring__mask(const struct aux_ring *r)
{
	return r->size - 1;
}

static uint64_t aux_ring__load_head(const struct aux_ring *r)
{
	/*
	 * Acquire pairs with the driver's barrier (B) before
	 * perf_aux_output_end() stores aux_head: every trace byte below the
	 * head we see is visible to the loads that follow.
	 */
	return __atomic_load_n(&r->pc->aux_head, __ATOMIC_ACQUIRE);
}

static int aux_ring__ctl(struct aux_ring *r, bool enable)
{
	if (r->cfg.enable)
		return r->cfg.enable(r, enable, r->cfg.enable_arg);
	return perf_sys__enable(r->cfg.sys, r->fd, enable);
}

int aux_ring__init_mapped(struct aux_ring *r, int fd, void *user_page, void *aux, size_t aux_size,
			  const struct aux_ring_config *cfg)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!cfg || !cfg->ops || !user_page || !aux || !aux_size || (aux_size & (aux_size - 1)))
		return -EINVAL;
	r->cfg = *cfg;
	if (!r->cfg.snapshot_size || r->cfg.snapshot_size > aux_size)
		r->cfg.snapshot_size = aux_size;
	r->fd = fd;
	r->pc = user_page;
	r->base = aux;
	r->size = aux_size;
	if (cfg->overwrite)
		r->prev = aux_ring__load_head(r);
	else
		r->prev = __atomic_load_n(&r->pc->aux_tail, __ATOMIC_RELAXED);
	r->head = r->prev;
	return 0;
}

int aux_ring__mmap(struct aux_ring *r, int fd, void *user_page, size_t aux_pages,
		   const struct aux_ring_config *cfg)
{
	struct perf_event_mmap_page *pc = user_page;
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t off, size;
	void *base;
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!cfg || !cfg->ops || !aux_pages || (aux_pages & (aux_pages - 1)) || !pc->data_size)
		return -EINVAL;
	/* The kernel requires aux_offset beyond the data pages and page aligned. */
	off = pc->data_offset + pc->data_size;
	size = (uint64_t)aux_pages * page;
	pc->aux_offset = off;
	pc->aux_size = size;
	/* PROT_WRITE is what selects full-trace mode (RING_BUFFER_WRITABLE). */
	err = perf_sys__mmap(cfg->sys, fd, size, cfg->overwrite ? PROT_READ : PROT_READ | PROT_WRITE, off, &base);
	if (err) {
		pr_debug("cannot map %zu AUX pages of %s: %s\n", aux_pages, cfg->ops->name, strerror(-err));
		return err;
	}
	err = aux_ring__init_mapped(r, fd, user_page, base, size, cfg);
	if (err) {
		perf_sys__munmap(cfg->sys, base, size);
		return err;
	}
	r->mapped = true;
	return 0;
}

void aux_ring__munmap(struct aux_ring *r)
{
	if (r->mapped && r->base)
		perf_sys__munmap(r->cfg.sys, r->base, r->size);
	free(r->ref_buf);
	r->ref_buf = NULL;
	r->base = NULL;
	r->mapped = false;
}

/* [offset, offset + size) of the buffer as up to two segments. */
static void aux_ring__segments(struct aux_ring *r, uint64_t head, uint64_t size, struct aux_ring_read *rd)
{
	uint64_t start = (head - size) & aux_ring__mask(r);

	memset(rd, 0, sizeof(*rd));
	rd->offset = head - size;
	rd->size = size;
	rd->padded = (size + 7) & ~(uint64_t)7;
	if (!size)
		return;
	rd->data1 = r->base + start;
	rd->len1 = size < r->size - start ? size : r->size - start;
	rd->len2 = size - rd->len1;
	if (rd->len2) {
		rd->data2 = r->base;
		r->stats.wraps++;
	}
	r->stats.reads++;
	r->stats.bytes += size;
}

int64_t aux_ring__read(struct aux_ring *r, struct aux_ring_read *rd)
{
	uint64_t head, size;

	memset(rd, 0, sizeof(*rd));
	if (r->cfg.overwrite)
		return -EINVAL;
	head = aux_ring__load_head(r);
	size = head - r->prev;
	/*
	 * perf_aux_output_begin() hands the driver at most CIRC_SPACE(head,
	 * tail), so head never gets a whole buffer ahead of our tail.
	 */
	if (size > r->size) {
		pr_warn("AUX ring of %s on cpu %d: head %llu is %llu bytes past tail %llu, more than the %zu-byte buffer\n",
			r->cfg.ops->name, r->cfg.cpu, (unsigned long long)head, (unsigned long long)size,
			(unsigned long long)r->prev, r->size);
		return -EPROTO;
	}
	r->head = head;
	aux_ring__segments(r, head, size, rd);
	return size;
}

int aux_ring__consume(struct aux_ring *r)
{
	bool reenable = r->truncated;

	if (r->cfg.overwrite)
		return 0;
	/*
	 * Release pairs with the kernel's control dependency (A) in
	 * perf_aux_output_begin() (space is computed from aux_tail before any
	 * store to the buffer): our loads of the segments are done before the
	 * hardware may write there again.
	 */
	__atomic_store_n(&r->pc->aux_tail, r->head, __ATOMIC_RELEASE);
	r->prev = r->head;
	r->truncated = false;
	return reenable;
}

int aux_ring__enable(struct aux_ring *r)
{
	int err = aux_ring__ctl(r, true);

	if (!err)
		r->stats.enables++;
	return err;
}

void aux_ring__note_aux_record(struct aux_ring *r, __u64 flags)
{
	r->stats.aux_records++;
	if (flags & PERF_AUX_FLAG_TRUNCATED) {
		r->stats.truncated++;
		r->truncated = true;
	}
	if (flags & PERF_AUX_FLAG_PARTIAL)
		r->stats.partial++;
	if (flags & PERF_AUX_FLAG_COLLISION)
		r->stats.collision++;
}

int aux_ring__snapshot_start(struct aux_ring *r)
{
	if (!r->cfg.overwrite)
		return -EINVAL;
	return r->cfg.ops->snapshot_start ? r->cfg.ops->snapshot_start(r) : 0;
}

int aux_ring__snapshot_finish(struct aux_ring *r)
{
	if (!r->cfg.overwrite)
		return -EINVAL;
	return r->cfg.ops->snapshot_finish ? r->cfg.ops->snapshot_finish(r) : 0;
}

int64_t aux_ring__snapshot(struct aux_ring *r, struct aux_ring_read *rd)
{
	uint64_t head, old, size;
	int err;

	memset(rd, 0, sizeof(*rd));
	if (!r->cfg.overwrite)
		return -EINVAL;
	head = aux_ring__load_head(r);
	r->snap_head = head;
	old = r->prev;
	if (r->cfg.ops->find_snapshot) {
		err = r->cfg.ops->find_snapshot(r, &head, &old);
		if (err)
			return err;
	}
	if (old == head)
		return 0;
	/*
	 * After find_snapshot, [old, head) is the new data in one coordinate
	 * space for every PMU. With a monotonic head more than a buffer may
	 * have been written since the previous snapshot: then only the last
	 * buffer's worth survives (perf 6.1 takes (head - old) mod size here,
	 * which loses up to a buffer of valid data; we do not).
	 */
	size = head - old;
	if (size > r->size) {
		size = r->size;
		r->stats.snapshot_wraps++;
	}
	/* The newest bytes are the ones that matter: cut from the old end. */
	if (size > r->cfg.snapshot_size) {
		r->stats.clamped_bytes += size - r->cfg.snapshot_size;
		size = r->cfg.snapshot_size;
	}
	aux_ring__segments(r, head, size, rd);
	r->prev = head;
	return size;
}

int aux_ring__flush(struct aux_ring *r, __u64 period)
{
	if (!r->cfg.overwrite)
		return -EINVAL;
	return perf_sys__ioctl(r->cfg.sys, r->fd, PERF_EVENT_IOC_PERIOD, (unsigned long)&period);
}

uint64_t aux_ring__snapshot_overwritten(struct aux_ring *r, const struct aux_ring_read *rd)
{
	uint64_t head = aux_ring__load_head(r), ahead, room, over;

	/* the writer went on from snap_head: it wrote [snap_head, head) */
	ahead = r->cfg.ops->head_in_buffer ? (head - r->snap_head) & aux_ring__mask(r) : head - r->snap_head;
	if (ahead >= r->size)
		over = rd->size;
	else {
		room = r->size - rd->size; /* what it can write before it reaches the range's old end */
		over = ahead > room ? ahead - room : 0;
		if (over > rd->size)
			over = rd->size;
	}
	r->stats.overwritten_bytes += over;
	return over;
}

void aux_ring__auxtrace(const struct aux_ring *r, const struct aux_ring_read *rd, __u64 reference,
			struct pdata_record_auxtrace *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->header.type = PDATA_RECORD_AUXTRACE;
	rec->header.size = sizeof(*rec);
	rec->size = rd->padded;
	rec->offset = rd->offset;
	rec->reference = reference;
	rec->idx = r->cfg.idx;
	rec->tid = (__u32)r->cfg.tid;
	rec->cpu = (__u32)r->cfg.cpu;
}

/* Every PMU stops and restarts for a snapshot the same way (§4.1). */
static int aux_pmu__disable(struct aux_ring *r)
{
	return aux_ring__ctl(r, false);
}

static int aux_pmu__enable(struct aux_ring *r)
{
	return aux_ring__ctl(r, true);
}

/*
 * Any non-zero byte in buf[from, to): AUX pages start zeroed (PERF_AUX_GFP
 * has __GFP_ZERO), so that is data. @to is 8-aligned (buffer end). perf
 * scans whole u64s from from / 8, which for an unaligned SPE head counts
 * the newest bytes before it as "wrapped"; the head end is done bytewise.
 */
static bool aux_ring__dirty(const struct aux_ring *r, uint64_t from, uint64_t to)
{
	const uint64_t *p, *end = (const uint64_t *)(r->base + to);

	for (; from < to && (from & 7); from++)
		if (r->base[from])
			return true;
	for (p = (const uint64_t *)(r->base + from); p < end; p++)
		if (*p)
			return true;
	return false;
}

/*
 * Intel PT. The driver publishes head as the write offset inside the buffer
 * and reports the whole buffer in each PERF_RECORD_AUX (pt_event_stop()),
 * so whether the buffer wrapped must be guessed from its contents, as
 * perf's intel_pt_find_snapshot() does:
 *
 * - large snapshots (> 64 KiB): keep a copy of the ref_size bytes that
 *   preceded the previous head. The writer only reaches them again after
 *   going round the buffer, so if the head is now inside them or they
 *   changed, it wrapped. ref_size = 2 * psb_period (at least one PSB in
 *   it), at most 256 KiB, none if that is not below half the snapshot.
 *   (perf 6.1 keeps comparing a fixed window at the buffer's end against
 *   the saved bytes, which reads as "wrapped" on nearly every snapshot
 *   after the first; we compare the saved bytes where they were.)
 * - small snapshots: sticky flag; wrapped once anything is non-zero in the
 *   last 4 KiB of the buffer.
 *
 * Wrapped: take the whole buffer ending at head, older bytes included; the
 * overlap with the previous snapshot is removed by the decoder
 * (AUXTRACE_INFO INTEL_PT_SNAPSHOT_MODE=1, intel_pt_find_overlap()).
 */
static size_t intel_pt_ref_size(const struct aux_ring *r)
{
	size_t snap = r->cfg.snapshot_size, psb = r->cfg.intel_pt_psb_period ?: 16384, ref;

	if (snap <= 65536)
		return 0;
	ref = 2 * psb;
	if (ref > 262144)
		ref = 262144;
	if (ref >= r->size || ref >= snap / 2)
		return 0;
	return ref;
}

static bool intel_pt_ref_wrapped(struct aux_ring *r, uint64_t head)
{
	uint64_t mask = aux_ring__mask(r), into = (head - r->ref_offset) & mask, off;
	bool wrapped = into > 0 && into < r->ref_size;

	for (size_t i = 0; !wrapped && i < r->ref_size; i++)
		wrapped = r->base[(r->ref_offset + i) & mask] != r->ref_buf[i];
	/* Save the bytes before head: next time's evidence. */
	r->ref_offset = (head - r->ref_size) & mask;
	for (size_t i = 0; i < r->ref_size; i++) {
		off = (r->ref_offset + i) & mask;
		r->ref_buf[i] = r->base[off];
	}
	return wrapped;
}

static int intel_pt_find_snapshot(struct aux_ring *r, uint64_t *head, uint64_t *old)
{
	uint64_t mask = aux_ring__mask(r), scan = r->size < 4096 ? r->size : 4096;
	bool wrapped;

	if (!r->ref_buf && !r->wrapped) {
		r->ref_size = intel_pt_ref_size(r);
		if (r->ref_size) {
			/* Zeroed, at the end of the buffer: a fresh buffer's evidence. */
			r->ref_buf = calloc(1, r->ref_size);
			if (!r->ref_buf)
				return -ENOMEM;
			r->ref_offset = r->size - r->ref_size;
		}
	}
	if (r->ref_buf) {
		wrapped = intel_pt_ref_wrapped(r, *head);
	} else {
		if (!r->wrapped)
			r->wrapped = aux_ring__dirty(r, r->size - scan, r->size);
		wrapped = r->wrapped;
	}
	if (wrapped) {
		*old = *head;
		*head += r->size;
		r->stats.snapshot_wraps++;
	} else {
		*old &= mask;
		if (*old > *head)
			*head += r->size;
	}
	return 0;
}

/*
 * Arm SPE. Head is an offset inside the buffer too; perf's
 * arm_spe_find_snapshot() rule: sticky per-ring "wrapped", detected when
 * head is past the buffer or anything is non-zero from max(size - 512,
 * head) to the end; once wrapped, every snapshot is the whole buffer
 * ending at head.
 */
static int arm_spe_find_snapshot(struct aux_ring *r, uint64_t *head, uint64_t *old)
{
	uint64_t from;

	if (!r->wrapped) {
		from = r->size > 512 ? r->size - 512 : 0;
		if (*head > from)
			from = *head;
		r->wrapped = *head >= r->size || aux_ring__dirty(r, from, r->size);
	}
	if (!r->wrapped)
		return 0;
	r->stats.snapshot_wraps++;
	if (*head >= r->size) {
		*old = *head - r->size;
	} else {
		*head += r->size;
		*old = *head - r->size;
	}
	return 0;
}

/*
 * CoreSight (ETR, ETF, TRBE): head is monotonic, so [previous head, head)
 * is exactly the new data and there is nothing to guess. perf dropped its
 * cs_etm_find_snapshot() in 5.15 (2f01c200d440) because assuming a wrapped
 * full buffer re-copied stale data; the clamp in aux_ring__snapshot() does
 * the rest.
 */

/* AUXTRACE_INFO priv[] indices, [6.1] util/intel-pt.h, cs-etm.h, arm-spe.h. */
enum {
	INTEL_PT_SNAPSHOT_MODE = 8,
	INTEL_PT_PER_CPU_MMAPS = 9,
	CS_ETM_SNAPSHOT = 2,
	ARM_SPE_PER_CPU_MMAPS = 1,
};

static int intel_pt_info_fill(const struct aux_ring *r, __u64 *priv, size_t nr)
{
	if (nr <= INTEL_PT_PER_CPU_MMAPS)
		return -EINVAL;
	priv[INTEL_PT_SNAPSHOT_MODE] = r->cfg.overwrite;
	priv[INTEL_PT_PER_CPU_MMAPS] = r->cfg.per_cpu;
	return 0;
}

static int cs_etm_info_fill(const struct aux_ring *r, __u64 *priv, size_t nr)
{
	if (nr <= CS_ETM_SNAPSHOT)
		return -EINVAL;
	priv[CS_ETM_SNAPSHOT] = r->cfg.overwrite;
	return 0;
}

static int arm_spe_info_fill(const struct aux_ring *r, __u64 *priv, size_t nr)
{
	if (nr <= ARM_SPE_PER_CPU_MMAPS)
		return -EINVAL;
	priv[ARM_SPE_PER_CPU_MMAPS] = r->cfg.per_cpu;
	return 0;
}

const struct aux_pmu_ops aux_pmu_intel_pt = {
	.name = "intel_pt",
	.head_in_buffer = true,
	.snapshot_start = aux_pmu__disable,
	.snapshot_finish = aux_pmu__enable,
	.find_snapshot = intel_pt_find_snapshot,
	.info_fill = intel_pt_info_fill,
};

const struct aux_pmu_ops aux_pmu_cs_etm = {
	.name = "cs_etm",
	.head_in_buffer = false,
	.snapshot_start = aux_pmu__disable,
	.snapshot_finish = aux_pmu__enable,
	.find_snapshot = NULL,
	.info_fill = cs_etm_info_fill,
};

const struct aux_pmu_ops aux_pmu_arm_spe = {
	.name = "arm_spe",
	.head_in_buffer = true,
	.snapshot_start = aux_pmu__disable,
	.snapshot_finish = aux_pmu__enable,
	.find_snapshot = arm_spe_find_snapshot,
	.info_fill = arm_spe_info_fill,
};

const struct aux_pmu_ops *aux_pmu__find(const char *name)
{
	static const struct aux_pmu_ops *const all[] = { &aux_pmu_intel_pt, &aux_pmu_cs_etm, &aux_pmu_arm_spe };

	/* arm_spe_0, arm_spe_1...: one PMU instance per SPE implementation. */
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(name, all[i]->name) ||
		    (!strncmp(name, all[i]->name, strlen(all[i]->name)) && name[strlen(all[i]->name)] == '_'))
			return all[i];
	errno = ENOENT;
	return NULL;
}
