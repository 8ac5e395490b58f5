// SPDX-License-Identifier: BSD-2-Clause
/* sideband: the records around a trace, read in one pass. See sideband.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/sideband.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"
#include "uapi/linux/perf_event_aux.h"

#ifndef PERF_RECORD_AUX_OUTPUT_HW_ID
#define PERF_RECORD_AUX_OUTPUT_HW_ID 21
#endif
#define SIDEBAND_BUILD_ID_HEAD	36	/* header, pid, build_id[24] */
#define SIDEBAND_BUILD_ID_SIZE	(1 << 15)	/* PERF_RECORD_MISC_BUILD_ID_SIZE */

static int sideband__push(struct sideband_ev **v, size_t *nr, const struct sideband_ev *e)
{
	if (!*nr || (*nr >= 16 && !(*nr & (*nr - 1)))) {	/* capacity: 16, then powers of two */
		size_t cap = *nr ? 2 * *nr : 16;
		struct sideband_ev *n = realloc(*v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		*v = n;
	}
	(*v)[(*nr)++] = *e;
	return 0;
}

static int sideband__push_buf(struct sideband *sd, const struct sideband_buf *b)
{
	if (!sd->nr_bufs || (sd->nr_bufs >= 16 && !(sd->nr_bufs & (sd->nr_bufs - 1)))) {
		size_t cap = sd->nr_bufs ? 2 * sd->nr_bufs : 16;
		struct sideband_buf *n = realloc(sd->bufs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sd->bufs = n;
	}
	sd->bufs[sd->nr_bufs] = *b;
	sd->bufs[sd->nr_bufs].seq = sd->nr_bufs;
	sd->nr_bufs++;
	return 0;
}

/* One EVENT_DESC name (pdata_reader__event_names()); a failed allocation stops the walk. */
static int sideband__add_name(void *ctx, __u64 id, const char *name)
{
	struct sideband *sd = ctx;
	char **names = realloc(sd->names, (sd->nr_names + 1) * sizeof(*names));
	__u64 *ids = realloc(sd->name_ids, (sd->nr_names + 1) * sizeof(*ids));

	if (names)
		sd->names = names;
	if (ids)
		sd->name_ids = ids;
	if (!names || !ids)
		return -ENOMEM;
	ids[sd->nr_names] = id;
	names[sd->nr_names] = strdup(name);
	if (!names[sd->nr_names])
		return -ENOMEM;
	sd->nr_names++;
	return 0;
}

static const char *sideband__name(const struct sideband *sd, __u64 id)
{
	for (size_t i = 0; i < sd->nr_names; i++)
		if (sd->name_ids[i] == id)
			return sd->names[i];
	return NULL;
}

/* One build-ID record (HEADER_BUILD_ID section entry or pipe-mode record) at @p, @size bytes. */
static int sideband__build_id(struct binaries *bins, const unsigned char *p, size_t size)
{
	struct perf_event_header h;
	size_t bid_len = 20;
	const char *name;

	if (size < SIDEBAND_BUILD_ID_HEAD + 1)
		return 0;
	memcpy(&h, p, sizeof(h));
	if (h.misc & SIDEBAND_BUILD_ID_SIZE)
		bid_len = p[12 + 20] <= 20 ? p[12 + 20] : 20;
	name = (const char *)p + SIDEBAND_BUILD_ID_HEAD;
	if (!memchr(name, 0, size - SIDEBAND_BUILD_ID_HEAD))
		return 0;
	return binaries__add_build_id(bins, name, p + 12, bid_len);
}

static int sideband__build_ids(struct pdata_reader *r, struct binaries *bins)
{
	const unsigned char *p, *end;
	const void *body;
	size_t size;
	int err = 0;

	if (pdata_reader__feature(r, PDATA_HEADER_BUILD_ID, &body, &size))
		return 0;
	p = body;
	end = p + size;
	while (!err && end - p >= (ptrdiff_t)sizeof(struct perf_event_header)) {
		struct perf_event_header h;

		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size > end - p)
			break;
		err = sideband__build_id(bins, p, h.size);
		p += h.size;
	}
	return err;
}

/* An executable MMAP/MMAP2 record into @bins. */
static int sideband__mmap(struct binaries *bins, const struct perf_event_header *h)
{
	const char *name;
	size_t head;
	__u64 start, len, pgoff;
	const __u8 *bid = NULL;
	size_t bid_len = 0;
	int cpumode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool kernel = cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL;

	if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
		return 0;
	if (h->type == PERF_RECORD_MMAP2) {
		const struct pdata_record_mmap2 *mm = (const void *)h;

		head = sizeof(*mm);
		if (h->size <= head || !(mm->prot & PROT_EXEC))
			return 0;
		start = mm->start, len = mm->len, pgoff = mm->pgoff;
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			const __u8 *f = (const __u8 *)&mm->maj;	/* u8 size, 3 reserved, build_id[20] */

			bid_len = f[0] <= 20 ? f[0] : 20;
			bid = f + 4;
		}
	} else {
		const struct pdata_record_mmap *mm = (const void *)h;

		head = sizeof(*mm);
		if (h->size <= head)
			return 0;
		start = mm->start, len = mm->len, pgoff = mm->pgoff;
	}
	name = (const char *)h + head;
	if (!memchr(name, 0, h->size - head))
		return 0;
	return binaries__add_mmap(bins, start, len, pgoff, name, kernel, bid, bid_len);
}

int sideband__collect(struct sideband *sd, struct pdata_reader *r, __u64 aux_type, struct binaries *bins)
{
	struct pdata_event ev;
	__u64 pos = 0;
	int ret, err = 0;

	memset(sd, 0, sizeof(*sd));
	pdata_reader__event_names(r, sideband__add_name, sd);
	if (bins)
		err = sideband__build_ids(r, bins);
	while (!err && (ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const struct perf_event_header *h = ev.header;
		struct sideband_ev e = { .cpu = -1 };
		struct pdata_sample s;

		switch (h->type) {
		case PDATA_RECORD_AUXTRACE: {
			const struct pdata_record_auxtrace *at = (const void *)h;
			struct sideband_buf b = {
				.data = ev.aux, .size = ev.aux_size, .offset = at->offset, .reference = at->reference,
				.file_offset = ev.file_offset, .idx = at->idx, .tid = at->tid, .cpu = (int)at->cpu,
			};

			err = sideband__push_buf(sd, &b);
			continue;
		}
		case PDATA_RECORD_HEADER_BUILD_ID:
			if (bins)
				err = sideband__build_id(bins, (const void *)h, h->size);
			continue;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			if (bins)
				err = sideband__mmap(bins, h);
			continue;
		case PERF_RECORD_ITRACE_START:
		case PERF_RECORD_COMM:
		case PERF_RECORD_AUX:
		case PERF_RECORD_SAMPLE:
		case PERF_RECORD_AUX_OUTPUT_HW_ID:
			break;
		default:
			continue;
		}
		if (pdata_reader__parse_sample(r, &ev, &s))
			memset(&s, 0, sizeof(s));
		e.cpu = (s.present & PERF_SAMPLE_CPU) ? (int)s.cpu : -1;
		e.time = s.time;
		e.pid = s.pid;
		e.tid = s.tid;
		if (h->type == PERF_RECORD_ITRACE_START && h->size >= 16) {
			memcpy(&e.pid, (const char *)h + 8, 4);
			memcpy(&e.tid, (const char *)h + 12, 4);
			err = sideband__push(&sd->itrace, &sd->nr_itrace, &e);
		} else if (h->type == PERF_RECORD_COMM && h->size > sizeof(struct pdata_record_comm)) {
			const struct pdata_record_comm *c = (const void *)h;
			size_t max = h->size - sizeof(*c);

			e.pid = c->pid;
			e.tid = c->tid;
			snprintf(e.comm, sizeof(e.comm), "%.*s", (int)strnlen((const char *)(c + 1), max),
				 (const char *)(c + 1));
			err = sideband__push(&sd->comm, &sd->nr_comm, &e);
		} else if (h->type == PERF_RECORD_AUX && h->size >= 32) {
			memcpy(&e.a, (const char *)h + 8, 8);
			memcpy(&e.b, (const char *)h + 16, 8);
			memcpy(&e.c, (const char *)h + 24, 8);
			e.seq = sd->nr_aux;
			err = sideband__push(&sd->aux, &sd->nr_aux, &e);
		} else if (h->type == PERF_RECORD_AUX_OUTPUT_HW_ID && h->size >= 16) {
			memcpy(&e.a, (const char *)h + 8, 8);
			err = sideband__push(&sd->hw_id, &sd->nr_hw_id, &e);
		} else if (h->type == PERF_RECORD_SAMPLE && s.attr && s.attr->attr.type != aux_type &&
			   !(s.attr->attr.type == PERF_TYPE_SOFTWARE && s.attr->attr.config == PERF_COUNT_SW_DUMMY)) {
			e.name = sideband__name(sd, s.id);
			err = sideband__push(&sd->edge, &sd->nr_edge, &e);
		}
	}
	if (err)
		return err;
	return ret < 0 ? ret : 0;
}

void sideband__free(struct sideband *sd)
{
	free(sd->itrace);
	free(sd->comm);
	free(sd->aux);
	free(sd->edge);
	free(sd->hw_id);
	free(sd->bufs);
	for (size_t i = 0; i < sd->nr_names; i++)
		free(sd->names[i]);
	free(sd->names);
	free(sd->name_ids);
	memset(sd, 0, sizeof(*sd));
}

const char *sideband__comm(const struct sideband *sd, __u32 tid)
{
	const char *c = NULL;

	for (size_t i = 0; i < sd->nr_comm; i++)
		if (sd->comm[i].tid == tid)
			c = sd->comm[i].comm;
	return c;
}

const struct sideband_ev *sideband__aux_of(const struct sideband *sd, int cpu, __u64 offset)
{
	for (size_t j = 0; j < sd->nr_aux; j++) {
		const struct sideband_ev *a = &sd->aux[j];
		__u64 start = a->a, size = a->b;

		if (a->c & PERF_AUX_FLAG_OVERWRITE)
			start = a->a >= size ? a->a - size : 0;
		if ((cpu < 0 || a->cpu < 0 || a->cpu == cpu) && offset >= start && offset - start < size)
			return a;
	}
	return NULL;
}
