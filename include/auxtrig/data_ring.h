/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_DATA_RING_H
#define AUXTRIG_DATA_RING_H

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
 */

struct data_ring {
	int fd;
	int cpu;
	void *base;		/* user page, then the data pages */
	size_t mmap_len;
	size_t size;		/* data area bytes: power of 2 */
	uint64_t head;		/* snapshot of data_head from read_init */
	uint64_t tail;		/* how far we have read */
	char *bounce;		/* for records that wrap */
};

/**
 * data_ring__mmap() - map @data_pages (a power of 2) of @fd's ring, read-write.
 * Return: 0 or -errno (EPERM: mlock limit, see perf_event_mlock_kb).
 */
int data_ring__mmap(struct data_ring *r, int fd, int cpu, size_t data_pages);
void data_ring__munmap(struct data_ring *r);
/** data_ring__read_init() - snapshot the head. Return: bytes available. */
uint64_t data_ring__read_init(struct data_ring *r);
/** data_ring__read_event() - the next whole record, or NULL when none is left. */
const struct perf_event_header *data_ring__read_event(struct data_ring *r);
/** data_ring__consume() - hand everything read so far back to the kernel. */
void data_ring__consume(struct data_ring *r);
/** data_ring__user_page() - the perf_event_mmap_page (time conversion etc). */
static inline struct perf_event_mmap_page *data_ring__user_page(const struct data_ring *r)
{
	return r->base;
}

#endif
