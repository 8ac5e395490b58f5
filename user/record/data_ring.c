// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "auxtrig/record/data_ring.h"
#include "auxtrig/sys/perf_sys.h"

int data_ring__mmap(struct data_ring *r, const struct perf_sys *sys, int fd, int cpu, size_t data_pages,
		    int overwrite)
{
	size_t page = sysconf(_SC_PAGESIZE);
	void *base;
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	r->mmap_len = (data_pages + 1) * page;
	/* Read-only is what tells the kernel not to wait for data_tail. */
	err = perf_sys__mmap(sys, fd, r->mmap_len, overwrite ? PROT_READ : PROT_READ | PROT_WRITE, 0, &base);
	if (err)
		return err;
	/* A record is at most 64 KiB (u16 size). */
	r->bounce = malloc(65536);
	if (!r->bounce) {
		perf_sys__munmap(sys, base, r->mmap_len);
		return -ENOMEM;
	}
	r->sys = sys;
	r->base = base;
	r->fd = fd;
	r->cpu = cpu;
	r->size = data_pages * page;
	r->overwrite = overwrite;
	r->tail = __atomic_load_n(&data_ring__user_page(r)->data_tail, __ATOMIC_RELAXED);
	r->snap_head = __atomic_load_n(&data_ring__user_page(r)->data_head, __ATOMIC_ACQUIRE);
	return 0;
}

void data_ring__munmap(struct data_ring *r)
{
	if (r->base)
		perf_sys__munmap(r->sys, r->base, r->mmap_len);
	free(r->bounce);
	free(r->snap_pos);
	r->base = NULL;
	r->bounce = NULL;
	r->snap_pos = NULL;
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

/* The record at ring position @pos (any u64; masked here), whole. */
static const struct perf_event_header *record_at(struct data_ring *r, uint64_t pos, uint16_t size)
{
	const char *data = (const char *)r->base + sysconf(_SC_PAGESIZE);
	uint64_t off = pos & (r->size - 1);
	size_t first;

	if (off + size <= r->size)
		return (const struct perf_event_header *)(data + off);
	first = r->size - off;
	memcpy(r->bounce, data + off, first);
	memcpy(r->bounce + first, data, size - first);
	return (const struct perf_event_header *)r->bounce;
}

int data_ring__snapshot(struct data_ring *r, int (*cb)(const struct perf_event_header *h, void *arg),
			void *arg)
{
	uint64_t head, limit, pos;
	struct perf_event_header hdr;
	size_t n = 0;
	int err;

	head = __atomic_load_n(&data_ring__user_page(r)->data_head, __ATOMIC_ACQUIRE);
	/*
	 * Positions are u64 and head moves down: "older" is "greater than head".
	 * Everything from the previous snapshot's head upwards was taken then;
	 * nothing older than head + size survives.
	 */
	limit = r->snap_head - head < r->size ? r->snap_head : head + r->size;
	for (pos = head; limit - pos >= sizeof(hdr) && pos != limit;) {
		memcpy(&hdr, record_at(r, pos, sizeof(hdr)), sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > limit - pos)
			break; /* never written, or torn by the wrap */
		if (n == r->snap_cap) {
			size_t cap = r->snap_cap ? 2 * r->snap_cap : 1024;
			uint64_t *tmp = realloc(r->snap_pos, cap * sizeof(*tmp));

			if (!tmp)
				return -ENOMEM;
			r->snap_pos = tmp;
			r->snap_cap = cap;
		}
		r->snap_pos[n++] = pos;
		pos += hdr.size;
	}
	r->snap_head = head;
	/* Oldest first: the walk went from newest to oldest. */
	for (size_t i = n; i-- > 0;) {
		memcpy(&hdr, record_at(r, r->snap_pos[i], sizeof(hdr)), sizeof(hdr));
		err = cb(record_at(r, r->snap_pos[i], hdr.size), arg);
		if (err)
			return err;
	}
	return n;
}
