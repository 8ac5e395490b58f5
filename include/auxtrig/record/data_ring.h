/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_DATA_RING_H
#define AUXTRIG_DATA_RING_H

/*
 * record/ layer: a perf event's data ring reader (user/record/data_ring.c),
 * mapped through sys/perf_sys.h; used by cpu_events.c and aux_session.c.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/**
 * DOC: data ring reader
 *
 * Reads one perf event's data ring (the mmap at page offset 0) in forward
 * mode. The protocol, as libperf's:
 *
 *   data_ring__read_init()   head = load-acquire(pc->data_head)    (pairs with
 *                            the kernel's store after writing records)
 *   data_ring__read_event()  one whole record at a time; a record that wraps
 *                            around the end of the ring is copied out once
 *                            into a bounce buffer so callers see it whole
 *   data_ring__consume()     store-release(pc->data_tail, tail)    (the kernel
 *                            may overwrite what we read only after this)
 *
 * Overwrite ("flight recorder") mode: the event has attr.write_backward and
 * the ring is mapped read-only, so the kernel never waits for us and always
 * keeps the newest records. It writes downwards: data_head starts at 0 and
 * decreases, the newest record starts at data_head, older ones follow at
 * higher positions, and the oldest may be torn where the newest overwrote it.
 *
 *   data_ring__snapshot()    with output paused (PERF_EVENT_IOC_PAUSE_OUTPUT),
 *                            walk from data_head towards older records up to
 *                            the ring's size or to where the previous
 *                            snapshot started, whichever is nearer; then hand
 *                            the records out oldest first. A record that
 *                            would cross that limit is torn and is skipped.
 */

struct perf_sys;

struct data_ring {
	const struct perf_sys *sys;	/* what mapped it (NULL: the kernel) */
	int fd;
	int cpu;
	void *base;		/* user page, then the data pages */
	size_t mmap_len;
	size_t size;		/* data area bytes: power of 2 */
	uint64_t head;		/* snapshot of data_head from read_init */
	uint64_t tail;		/* how far we have read */
	char *bounce;		/* for records that wrap */
	int overwrite;		/* write_backward ring, mapped read-only */
	uint64_t snap_head;	/* overwrite: data_head at the previous snapshot */
	uint64_t *snap_pos;	/* overwrite: record positions of one walk */
	size_t snap_cap;
};

/**
 * data_ring__mmap() - map @data_pages (a power of 2) of @fd's ring through
 * @sys (NULL: the kernel), read-write, or read-only for an @overwrite ring.
 * Return: 0 or -errno (EPERM: mlock limit, see perf_event_mlock_kb).
 */
int data_ring__mmap(struct data_ring *r, const struct perf_sys *sys, int fd, int cpu, size_t data_pages,
		    int overwrite);
/** data_ring__munmap() - unmap and free; accepts a zeroed ring. */
void data_ring__munmap(struct data_ring *r);
/** data_ring__read_init() - snapshot the head. Return: bytes available. */
uint64_t data_ring__read_init(struct data_ring *r);
/** data_ring__read_event() - the next whole record, or NULL when none is left. */
const struct perf_event_header *data_ring__read_event(struct data_ring *r);
/** data_ring__consume() - hand everything read so far back to the kernel. */
void data_ring__consume(struct data_ring *r);
/**
 * data_ring__snapshot() - overwrite mode: the records written since the
 * previous snapshot (at most a ring's worth), oldest first, each passed to @cb.
 * The caller pauses the event's output around it.
 * Return: number of records, or the first non-zero @cb result (negative).
 */
int data_ring__snapshot(struct data_ring *r, int (*cb)(const struct perf_event_header *h, void *arg),
			void *arg);
/** data_ring__user_page() - the perf_event_mmap_page (time conversion etc). */
static inline struct perf_event_mmap_page *data_ring__user_page(const struct data_ring *r)
{
	return r->base;
}

#endif
