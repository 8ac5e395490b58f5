/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PDATA_READER_H
#define AUXTRIG_PDATA_READER_H

/*
 * format/ layer: the perf.data reader (user/format/pdata_reader.c),
 * used by decode/ (script.c, sideband.c and the per-format decoders).
 */

/**
 * DOC: perf.data reader
 *
 * Reads a perf.data file ("PERFILE2", host endian) and hands out its parts:
 * the header, the attrs with their ids, the feature sections and the
 * records of the data section, one by one. A PERF_RECORD_AUXTRACE record is
 * returned together with its trailing payload, whose size comes from the
 * record's own size field. A regular file is mapped, not copied.
 *
 * Both layouts are read: file mode, and pipe mode (what perf record -o -
 * writes): there the attrs are PERF_RECORD_HEADER_ATTR records and the
 * features PERF_RECORD_HEADER_FEATURE records of the stream, and
 * pdata_reader__next() steps over the tracing data that follows a
 * PERF_RECORD_HEADER_TRACING_DATA record. The "data section" of a pipe-mode
 * file is everything after its 16-byte header; it has no AUXTRACE index.
 *
 * Everything is bounds-checked against the file: a truncated or corrupt file
 * gives -EINVAL (or -EPROTO for a bad record) and a pr_err() naming the
 * offset, never a read outside the buffer. The file's bytes are read with
 * memcpy(), never through a misaligned pointer, and every record handed out
 * is 8-byte aligned: a record size, an AUXTRACE payload size or a pipe-mode
 * tracing data size that is not a multiple of 8 (perf pads them all) is a
 * corrupt data section. Byte-swapped (other-endian) files are refused with
 * -EPROTONOSUPPORT.
 *
 * All pointers handed out point into the reader's buffer and stay valid
 * until pdata_reader__delete().
 */

#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/format/pdata.h"

struct pdata_reader;

/**
 * struct pdata_reader_attr - one attr of the attr section.
 * @attr: the attr, zero-extended to the size this build knows
 * @ids: its event ids (unaligned-safe copy)
 * @nr_ids: number of @ids
 */
struct pdata_reader_attr {
	struct perf_event_attr attr;
	__u64 *ids;
	size_t nr_ids;
};

/**
 * struct pdata_event - one record of the data section.
 * @header: the record (header.size bytes, at least 8, 8-aligned in the file)
 * @file_offset: file offset of @header
 * @aux: for PERF_RECORD_AUXTRACE: the payload that follows the record, else NULL
 * @aux_size: bytes of @aux
 */
struct pdata_event {
	const struct perf_event_header *header;
	__u64 file_offset;
	const void *aux;
	__u64 aux_size;
};

/**
 * struct pdata_sample - the fields of a sample (or of a sample_id trailer)
 * that the decoders use; a field not in the attr's sample_type is 0 and
 * its bit in @present is clear.
 */
struct pdata_sample {
	__u64 present;		/* PERF_SAMPLE_* bits found */
	__u64 id;
	__u64 ip;
	__u32 pid, tid;
	__u64 time;
	__u64 addr;
	__u32 cpu;
	__u64 period;
	const __u64 *callchain;	/* PERF_SAMPLE_CALLCHAIN: @nr_callchain ips (markers included) */
	__u64 nr_callchain;
	const void *raw;	/* PERF_SAMPLE_RAW: the payload (a tracepoint record), @raw_size bytes */
	__u32 raw_size;
	const struct pdata_reader_attr *attr;	/* the attr of @id, NULL if unknown */
};

/**
 * pdata_reader__open() - read and check a perf.data file.
 * @path: file name, "-" for standard input (a pipe is read to its end)
 *
 * Return: a new reader (free with pdata_reader__delete()), or NULL with
 * errno set: ENOENT/EACCES… from open, EINVAL for a corrupt or truncated
 * file, EPROTONOSUPPORT for byte-swapped files. The reason is logged with
 * pr_err().
 */
struct pdata_reader *pdata_reader__open(const char *path);

/**
 * pdata_reader__new_mem() - like pdata_reader__open() on @len bytes at @buf
 * (copied; the caller keeps @buf). @name is used in messages.
 */
struct pdata_reader *pdata_reader__new_mem(const void *buf, size_t len, const char *name);

/** pdata_reader__delete() - free a reader; NULL is fine. */
void pdata_reader__delete(struct pdata_reader *r);

/** pdata_reader__header() - the file header (host endian). */
const struct pdata_file_header *pdata_reader__header(const struct pdata_reader *r);

/** pdata_reader__nr_attrs() - number of attrs in the attr section. */
size_t pdata_reader__nr_attrs(const struct pdata_reader *r);

/** pdata_reader__attr() - attr @i (0-based), NULL if out of range. */
const struct pdata_reader_attr *pdata_reader__attr(const struct pdata_reader *r, size_t i);

/** pdata_reader__attr_by_id() - the attr that owns event id @id, else NULL. */
const struct pdata_reader_attr *pdata_reader__attr_by_id(const struct pdata_reader *r, __u64 id);

/** pdata_reader__has_feature() - true if feature bit @feat (PDATA_HEADER_*) is set. */
bool pdata_reader__has_feature(const struct pdata_reader *r, unsigned int feat);

/**
 * pdata_reader__feature() - the body of feature section @feat.
 * Return: 0 and @data and @size set, -ENOENT if the feature is absent.
 */
int pdata_reader__feature(const struct pdata_reader *r, unsigned int feat, const void **data, size_t *size);

/**
 * pdata_reader__feature_string() - a perf_header_string feature (ARCH,
 * CPUID, HOSTNAME, OSRELEASE, VERSION, CPUDESC), NUL-terminated; NULL if
 * absent or malformed.
 */
const char *pdata_reader__feature_string(const struct pdata_reader *r, unsigned int feat);

/**
 * pdata_reader__event_names() - walk the EVENT_DESC feature: @fn(@ctx, id,
 * name) once for each event id it names, in the file's order (name points
 * into the reader's buffer). EVENT_DESC is u32 nr, u32 attr_size, then per
 * event: the attr, u32 nr_ids, u32 len and a NUL-terminated name of len
 * bytes, u64 ids[nr_ids]; at most 4096 events are read.
 *
 * Return: 0 when the section was walked to its end, a non-zero return of
 * @fn (the walk stops there), -ENOENT without the feature, -EINVAL when the
 * section is malformed (the ids before that point were handed out).
 */
int pdata_reader__event_names(const struct pdata_reader *r, int (*fn)(void *ctx, __u64 id, const char *name),
			      void *ctx);

/**
 * pdata_reader__auxtrace_index() - the HEADER_AUXTRACE index.
 * @r: reader
 * @entries: set to a new array (free() it) of the entries, in file order
 * @nr: set to their number
 *
 * Two layouts are accepted: perf's (u64 nr, then nr {file_offset, sz}
 * pairs) and simpleperf's (the pairs alone, no count, which perf 6.1
 * rejects with "Failed to process auxtrace index"). Every entry must point
 * at a PERF_RECORD_AUXTRACE of size sz inside the data section.
 *
 * Return: 0, -ENOENT if the feature is absent, -EINVAL if malformed,
 * -ENOMEM.
 */
int pdata_reader__auxtrace_index(const struct pdata_reader *r,
				 struct pdata_auxtrace_index_entry **entries, size_t *nr);

/**
 * pdata_reader__next() - the next record of the data section.
 * @r: reader
 * @pos: iterator state: set to 0 before the first call
 * @ev: filled with the record
 *
 * Return: 1 with @ev filled, 0 at the end of the data section, -EPROTO on a
 * record that does not fit (size < 8, beyond the section, an AUXTRACE
 * payload that is truncated); the iteration must then stop.
 */
int pdata_reader__next(const struct pdata_reader *r, __u64 *pos, struct pdata_event *ev);

/**
 * pdata_reader__parse_sample() - decode a PERF_RECORD_SAMPLE, or the
 * sample_id trailer of another kernel record, using the attr its id names
 * (or the first attr when the file has one sample layout).
 * Return: 0, -EINVAL if the record is too short for its sample_type,
 * -ENOENT if the attr is unknown.
 */
int pdata_reader__parse_sample(const struct pdata_reader *r, const struct pdata_event *ev,
			       struct pdata_sample *s);

#endif
