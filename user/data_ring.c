// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "auxtrig/data_ring.h"

int data_ring__mmap(struct data_ring *r, int fd, int cpu, size_t data_pages)
{
	size_t page = sysconf(_SC_PAGESIZE);
	void *base;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	r->mmap_len = (data_pages + 1) * page;
	base = mmap(NULL, r->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	/* A record is at most 64 KiB (u16 size). */
	r->bounce = malloc(65536);
	if (!r->bounce) {
		munmap(base, r->mmap_len);
		return -ENOMEM;
	}
	r->base = base;
	r->fd = fd;
	r->cpu = cpu;
	r->size = data_pages * page;
	r->tail = __atomic_load_n(&data_ring__user_page(r)->data_tail, __ATOMIC_RELAXED);
	return 0;
}

void data_ring__munmap(struct data_ring *r)
{
	if (r->base)
		munmap(r->base, r->mmap_len);
	free(r->bounce);
	r->base = NULL;
	r->bounce = NULL;
}

uint64_t data_ring__read_init(struct data_ring *r)
{
	/* Acquire pairs with the kernel's barrier before it publishes data_head. */
	r->head = __atomic_load_n(&data_ring__user_page(r)->data_head, __ATOMIC_ACQUIRE);
	return r->head - r->tail;
}

const struct perf_event_header *data_ring__read_event(struct data_ring *r)
{
	const char *data = (const char *)r->base + sysconf(_SC_PAGESIZE);
	const struct perf_event_header *h;
	uint64_t mask = r->size - 1, off, avail = r->head - r->tail;
	struct perf_event_header hdr;
	size_t first;

	if (avail < sizeof(hdr))
		return NULL;
	off = r->tail & mask;
	/* The header itself may straddle the end. */
	if (off + sizeof(hdr) <= r->size) {
		hdr = *(const struct perf_event_header *)(data + off);
	} else {
		first = r->size - off;
		memcpy(&hdr, data + off, first);
		memcpy((char *)&hdr + first, data, sizeof(hdr) - first);
	}
	if (hdr.size < sizeof(hdr) || hdr.size > avail)
		return NULL; /* a torn or not yet complete record: stop here */

	if (off + hdr.size <= r->size) {
		h = (const struct perf_event_header *)(data + off);
	} else {
		first = r->size - off;
		memcpy(r->bounce, data + off, first);
		memcpy(r->bounce + first, data, hdr.size - first);
		h = (const struct perf_event_header *)r->bounce;
	}
	r->tail += hdr.size;
	return h;
}

void data_ring__consume(struct data_ring *r)
{
	/* Release: our reads of the records complete before the kernel sees the tail. */
	__atomic_store_n(&data_ring__user_page(r)->data_tail, r->tail, __ATOMIC_RELEASE);
}
