// SPDX-License-Identifier: BSD-2-Clause
/*
 * The perf.data reader (user/format/pdata_reader.c) on any bytes: it either
 * refuses the file or hands out a header, attrs, features and records that
 * all lie inside the file, each record 8-byte aligned, and no read of the
 * file's data may be misaligned (UBSan) or out of bounds (ASan). Every byte
 * handed out is read here, so an overlong size shows up as an ASan report.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/format/pdata_reader.h"

static volatile unsigned char sink;

static void touch(const void *p, size_t n);

/* pdata_reader__event_names(): every name handed out is NUL-terminated inside the file. */
static int touch_name(void *ctx, __u64 id, const char *name)
{
	(void)ctx;
	(void)id;
	touch(name, strlen(name) + 1);
	return 0;
}

static void touch(const void *p, size_t n)
{
	const unsigned char *b = p;
	unsigned char x = 0;

	for (size_t i = 0; i < n; i++)
		x ^= b[i];
	sink = x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pdata_auxtrace_index_entry *idx = NULL;
	struct pdata_reader *r = pdata_reader__new_mem(data, size, "fuzz.data");
	const struct pdata_file_header *h;
	struct pdata_event ev;
	struct pdata_sample s;
	size_t n, nr = 0;
	__u64 pos = 0;
	int ret, records = 0;

	if (!r)
		return 0;
	h = pdata_reader__header(r);
	if (h->size == 16) {
		/*
		 * Pipe mode: the reader reads its own copy, every record padded to
		 * 8 bytes, which can be longer than the input (ASan bounds it).
		 */
		if (h->data.offset != 16 || h->data.size % 8)
			abort();
	} else if (h->data.offset % 8 || h->data.offset > size || h->data.size > size - h->data.offset) {
		abort();	/* accepted a data section outside the file */
	}
	n = pdata_reader__nr_attrs(r);
	for (size_t i = 0; i < n; i++) {
		const struct pdata_reader_attr *a = pdata_reader__attr(r, i);

		touch(a->ids, a->nr_ids * sizeof(*a->ids));
		if (a->nr_ids && !pdata_reader__attr_by_id(r, a->ids[0]))
			abort();
	}
	if (pdata_reader__attr(r, n))
		abort();
	for (unsigned int f = 0; f < 256; f++) {
		const void *body;
		size_t len;
		const char *str;

		if (pdata_reader__feature(r, f, &body, &len))
			continue;
		touch(body, len);
		str = pdata_reader__feature_string(r, f);
		if (str)
			touch(str, strlen(str) + 1);
	}
	ret = pdata_reader__event_names(r, touch_name, NULL);
	if (ret && ret != -ENOENT && ret != -EINVAL)
		abort();
	if (!pdata_reader__auxtrace_index(r, &idx, &nr))
		touch(idx, nr * sizeof(*idx));
	free(idx);
	while ((ret = pdata_reader__next(r, &pos, &ev)) == 1 && records++ < 100000) {
		if ((uintptr_t)ev.header % 8 || ev.file_offset % 8)
			abort();	/* records are handed out 8-byte aligned */
		touch(ev.header, ev.header->size);
		if (ev.aux)
			touch(ev.aux, ev.aux_size);
		ret = pdata_reader__parse_sample(r, &ev, &s);
		if (ret && ret != -EINVAL && ret != -ENOENT)
			abort();
		if (!ret && (s.present & PERF_SAMPLE_CALLCHAIN)) {
			/* a callchain's nr entries lie inside its record (auxtrig script prints them) */
			if (s.nr_callchain > ev.header->size / 8 ||
			    (const char *)(s.callchain + s.nr_callchain) > (const char *)ev.header + ev.header->size)
				abort();
			touch(s.callchain, 8 * s.nr_callchain);
		}
	}
	if (ret != 0 && ret != 1 && ret != -EPROTO)
		abort();
	pdata_reader__delete(r);
	return 0;
}
