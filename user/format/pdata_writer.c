// SPDX-License-Identifier: BSD-2-Clause
/*
 * perf.data writer, file mode and pipe mode. Formats follow perf 6.1's
 * reader (tools/perf/util/header.c); see include/auxtrig/format/pdata_writer.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "auxtrig/sys/log.h"
#include "auxtrig/sys/membuf.h"
#include "auxtrig/format/pdata_writer.h"
#include "uapi/linux/perf_event_aux.h"

#ifndef AUXTRIG_VERSION
#define AUXTRIG_VERSION "0.1"
#endif

#define WRITE_BUF_SIZE	(4u << 20)
/*
 * Room kept allocated past the data for what a salvage writes there: the
 * record that counts the losses and the small feature table. Without it, a
 * disk that fills up to within a few bytes of the last whole record leaves no
 * room for them, and the cut file could not say what it holds.
 */
#define SALVAGE_ROOM	4096u
#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

struct attr_entry {
	struct perf_event_attr attr;
	char *name;
	__u64 *ids;
	size_t nr_ids;
};

/* Growable byte buffer for feature bodies. */
#define PDATA_MAX_EARLY 16

struct pdata_writer {
	int fd;
	char *path;
	bool pipe;			/* pipe mode: written in order, never sought back */
	bool begun;
	bool closed;
	int err;			/* sticky first write error */

	struct attr_entry *attrs;
	size_t nr_attrs;
	__u64 *ids;			/* all ids, sorted, for lookups */
	size_t nr_ids;
	int sample_id_off;		/* byte offset of the id in a sample, -1: none */
	int trailer_id_from_end;	/* bytes from a trailer's end to its id, -1: none */
	int sample_time_off;		/* byte offset of time in a sample, -1: none */
	bool sample_id_all;

	void *tracing_data;
	size_t tracing_len;
	char **cmdline;
	int cmdline_argc;
	unsigned char *build_ids;	/* HEADER_BUILD_ID records (pdata_writer__add_build_id()) */
	size_t build_ids_len;

	__u64 data_offset;
	__u64 flushed;			/* file offset up to which the data is on disk */
	bool no_reserve;		/* the file system cannot preallocate (fallocate) */
	char machine[65];		/* the ARCH feature, if not this machine's (uname) */
	__u64 buf_records, buf_samples;	/* records (samples) in buf, not on disk yet */
	char *buf;
	size_t buf_len;

	/*
	 * Feature bodies known before recording starts are written before the
	 * data section, so that after every round only their small table needs
	 * writing after the data (see pdata_writer__flush()).
	 */
	struct pdata_file_section early[PDATA_MAX_EARLY];
	int early_feat[PDATA_MAX_EARLY];
	size_t nr_early;
	__u64 early_table_off;	/* a copy of their table, for auxtrig repair */
	__u64 early_bits[4];

	struct pdata_auxtrace_index_entry *aux_index;
	size_t nr_aux, cap_aux;
	bool have_auxtrace_info;
	bool have_sample_time;
	int trailer_time_from_end;	/* time in a non-sample record's sample_id trailer: bytes from its end, -1: none */
	__u64 newest_time;		/* newest time of any record written (samples and trailers) */

	struct pdata_writer_stats stats;
};

static int pwrite_all(int fd, const void *buf, size_t len, __u64 off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* @len bytes at file offset @off; a pipe is written in order, where the stream stands. */
static int writer_put(const struct pdata_writer *w, const void *buf, size_t len, __u64 off)
{
	return w->pipe ? write_all(w->fd, buf, len) : pwrite_all(w->fd, buf, len, off);
}

static int writer_fail(struct pdata_writer *w, int err, const char *what)
{
	if (!w->err) {
		w->err = err;
		pr_err("cannot write %s to %s: %s\n", what, w->path, strerror(-err));
	}
	return w->err;
}

/*
 * Before @len bytes of data go to the file at the end of its data: allocate
 * them and SALVAGE_ROOM after them, without changing the file's size. A full
 * disk then fails here, before anything is written, and the room reserved by
 * the previous call still holds what pdata_writer__salvage() writes.
 */
static int writer_reserve(struct pdata_writer *w, size_t len)
{
	if (w->no_reserve)
		return 0;
	if (!fallocate(w->fd, FALLOC_FL_KEEP_SIZE, w->flushed, len + SALVAGE_ROOM))
		return 0;
	if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG || errno == EIO)
		return -errno;
	w->no_reserve = true; /* EOPNOTSUPP and the like: write as before */
	return 0;
}

static int writer_flush(struct pdata_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->buf_len)
		return 0;
	err = writer_reserve(w, w->buf_len);
	if (!err)
		err = writer_put(w, w->buf, w->buf_len, w->flushed);
	if (err)
		return writer_fail(w, err, "data");
	w->flushed += w->buf_len;
	w->buf_len = 0;
	w->buf_records = w->buf_samples = 0;
	return 0;
}

/* Records that will never be in the file: after a write error, or in the buffer salvage drops. */
static void writer_lose(struct pdata_writer *w, __u64 records, __u64 samples, __u64 aux_bytes)
{
	w->stats.lost_records += records;
	w->stats.lost_samples += samples;
	w->stats.lost_aux_bytes += aux_bytes;
}

/* Append bytes to the data section; large chunks bypass the buffer. */
static int writer_append(struct pdata_writer *w, const void *p, size_t len)
{
	int err;

	if (w->err)
		return w->err;
	if (w->buf_len + len > WRITE_BUF_SIZE) {
		err = writer_flush(w);
		if (err)
			return err;
	}
	if (len >= WRITE_BUF_SIZE) {
		err = writer_reserve(w, len);
		if (!err)
			err = writer_put(w, p, len, w->flushed);
		if (err)
			return writer_fail(w, err, "data");
		w->flushed += len;
	} else {
		memcpy(w->buf + w->buf_len, p, len);
		w->buf_len += len;
	}
	w->stats.bytes += len;
	return 0;
}

static __u64 writer_offset(const struct pdata_writer *w)
{
	return w->flushed + w->buf_len;
}

struct pdata_writer *pdata_writer__open(const char *path, bool force)
{
	struct pdata_writer *w;
	struct stat st;
	int fd, err;

	if (!path || !*path) {
		pr_err("no output file name\n");
		errno = EINVAL;
		return NULL;
	}
	for (;;) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			break;
		err = errno;
		if (err != EEXIST || !force) {
			if (err == EEXIST)
				pr_err("cannot create %s: file exists (use --force to replace it)\n", path);
			else if (err == ENOENT)
				pr_err("cannot create %s: directory does not exist\n", path);
			else
				pr_err("cannot create %s: %s\n", path, strerror(err));
			errno = err;
			return NULL;
		}
		if (lstat(path, &st)) {
			err = errno;
			if (err == ENOENT)
				continue; /* vanished meanwhile: retry the exclusive create */
			pr_err("cannot replace %s: %s\n", path, strerror(err));
			errno = err;
			return NULL;
		}
		if (S_ISLNK(st.st_mode)) {
			pr_err("refusing to replace %s: it is a symbolic link (remove it or choose another output file)\n",
			       path);
			errno = ELOOP;
			return NULL;
		}
		if (!S_ISREG(st.st_mode)) {
			pr_err("refusing to replace %s: not a regular file\n", path);
			errno = EEXIST;
			return NULL;
		}
		if (unlink(path) && errno != ENOENT) {
			err = errno;
			pr_err("cannot replace %s: %s\n", path, strerror(err));
			errno = err;
			return NULL;
		}
		/* Created anew with O_EXCL: a link planted meanwhile fails with EEXIST, then ELOOP above. */
	}

	w = calloc(1, sizeof(*w));
	if (!w)
		goto err_nomem;
	w->fd = fd;
	w->path = strdup(path);
	w->buf = malloc(WRITE_BUF_SIZE);
	if (!w->path || !w->buf)
		goto err_nomem;
	w->sample_id_off = -1;
	w->trailer_id_from_end = -1;
	w->trailer_time_from_end = -1;
	w->sample_time_off = -1;
	return w;

err_nomem:
	if (w) {
		free(w->path);
		free(w->buf);
		free(w);
	}
	unlink(path);
	close(fd);
	pr_err("cannot create %s: out of memory\n", path);
	errno = ENOMEM;
	return NULL;
}

struct pdata_writer *pdata_writer__open_pipe(int fd, const char *name)
{
	struct pdata_writer *w = calloc(1, sizeof(*w));

	if (w) {
		w->path = strdup(name);
		w->buf = malloc(WRITE_BUF_SIZE);
	}
	if (!w || !w->path || !w->buf) {
		if (w) {
			free(w->path);
			free(w->buf);
			free(w);
		}
		pr_err("cannot write to %s: out of memory\n", name);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	w->pipe = true;
	w->no_reserve = true;	/* nothing to keep room in */
	w->sample_id_off = -1;
	w->trailer_id_from_end = -1;
	w->trailer_time_from_end = -1;
	w->sample_time_off = -1;
	return w;
}

/* perf 6.1 evsel.c: __perf_evsel__calc_id_pos() / __perf_evsel__calc_is_pos(). */
static int calc_id_pos(__u64 t)
{
	int idx = 0;

	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	idx += !!(t & PERF_SAMPLE_IP);
	idx += !!(t & PERF_SAMPLE_TID);
	idx += !!(t & PERF_SAMPLE_TIME);
	idx += !!(t & PERF_SAMPLE_ADDR);
	return idx;
}

static int calc_is_pos(__u64 t)
{
	int idx = 1;

	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	idx += !!(t & PERF_SAMPLE_CPU);
	idx += !!(t & PERF_SAMPLE_STREAM_ID);
	return idx;
}

static int calc_time_off(__u64 t)
{
	if (!(t & PERF_SAMPLE_TIME))
		return -1;
	return 8 + 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID));
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

int pdata_writer__add_attr(struct pdata_writer *w, const struct perf_event_attr *attr,
			   const char *name, const __u64 *ids, size_t nr_ids)
{
	struct attr_entry *e, *attrs;
	__u64 *all;
	__u64 t = attr->sample_type;

	if (w->begun) {
		pr_err("internal error: attr '%s' added after the data section began\n", name ?: "?");
		return -EINVAL;
	}
	if (w->nr_attrs) {
		const struct perf_event_attr *a0 = &w->attrs[0].attr;

		if (calc_id_pos(t) != calc_id_pos(a0->sample_type) ||
		    calc_is_pos(t) != calc_is_pos(a0->sample_type) ||
		    attr->sample_id_all != a0->sample_id_all) {
			pr_err("event '%s': sample_type 0x%llx/sample_id_all %u does not match the first event's 0x%llx/%u; perf would reject the file\n",
			       name ?: "?", (unsigned long long)t, attr->sample_id_all,
			       (unsigned long long)a0->sample_type, a0->sample_id_all);
			return -EINVAL;
		}
		if (calc_time_off(t) != w->sample_time_off)
			w->sample_time_off = -1;
	} else {
		w->sample_id_off = calc_id_pos(t) < 0 ? -1 : 8 + 8 * calc_id_pos(t);
		w->trailer_id_from_end = attr->sample_id_all && calc_is_pos(t) > 0 ? 8 * calc_is_pos(t) : -1;
		w->sample_time_off = calc_time_off(t);
		w->sample_id_all = attr->sample_id_all;
		/* The sample_id trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, each 8 bytes if present. */
		w->trailer_time_from_end = attr->sample_id_all && (t & PERF_SAMPLE_TIME) ?
			8 * (1 + !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
			     !!(t & PERF_SAMPLE_IDENTIFIER)) : -1;
	}

	attrs = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*attrs));
	if (!attrs)
		return -ENOMEM;
	w->attrs = attrs;
	all = realloc(w->ids, (w->nr_ids + nr_ids + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	w->ids = all;

	e = &attrs[w->nr_attrs];
	memset(e, 0, sizeof(*e));
	memcpy(&e->attr, attr, attr->size && attr->size < sizeof(e->attr) ? attr->size : sizeof(e->attr));
	e->attr.size = PDATA_ATTR_SIZE;
	e->name = strdup(name ?: "unknown");
	e->ids = malloc((nr_ids ?: 1) * sizeof(__u64));
	if (!e->name || !e->ids) {
		free(e->name);
		free(e->ids);
		return -ENOMEM;
	}
	if (nr_ids)
		memcpy(e->ids, ids, nr_ids * sizeof(__u64));
	e->nr_ids = nr_ids;
	w->nr_attrs++;

	if (nr_ids)
		memcpy(w->ids + w->nr_ids, ids, nr_ids * sizeof(__u64));
	w->nr_ids += nr_ids;
	qsort(w->ids, w->nr_ids, sizeof(__u64), cmp_u64);
	return 0;
}

int pdata_writer__set_tracing_data(struct pdata_writer *w, const void *buf, size_t len)
{
	void *copy = malloc(len ?: 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	free(w->tracing_data);
	w->tracing_data = copy;
	w->tracing_len = len;
	return 0;
}

static void free_cmdline(struct pdata_writer *w)
{
	for (int i = 0; i < w->cmdline_argc; i++)
		free(w->cmdline[i]);
	free(w->cmdline);
	w->cmdline = NULL;
	w->cmdline_argc = 0;
}

int pdata_writer__add_build_id(struct pdata_writer *w, __u16 misc, __s32 pid, const char *name, const __u8 *bid,
			       size_t len)
{
	/* perf's struct perf_record_header_build_id, the name padded to 64 bytes (write_buildid()) */
	size_t name_len = (strlen(name) + 1 + 63) / 64 * 64, size = 8 + 4 + 24 + name_len;
	unsigned char *v;
	struct perf_event_header h = { .type = 0, .misc = misc | (1 << 15), .size = (__u16)size };

	if (w->begun || len > 20 || size > 0xffff)
		return -EINVAL;
	v = realloc(w->build_ids, w->build_ids_len + size);
	if (!v)
		return -ENOMEM;
	w->build_ids = v;
	v += w->build_ids_len;
	memset(v, 0, size);
	memcpy(v, &h, sizeof(h));
	memcpy(v + 8, &pid, 4);
	memcpy(v + 12, bid, len);
	v[12 + 20] = (__u8)len;
	memcpy(v + 36, name, strlen(name));
	w->build_ids_len += size;
	return 0;
}

int pdata_writer__set_cmdline(struct pdata_writer *w, int argc, char **argv)
{
	free_cmdline(w);
	if (argc <= 0)
		return 0;
	w->cmdline = calloc(argc, sizeof(char *));
	if (!w->cmdline)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		w->cmdline[i] = strdup(argv[i] ?: "");
		if (!w->cmdline[i]) {
			w->cmdline_argc = i;
			free_cmdline(w);
			return -ENOMEM;
		}
	}
	w->cmdline_argc = argc;
	return 0;
}

static void header_fill(const struct pdata_writer *w, struct pdata_file_header *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = PDATA_MAGIC;
	h->size = sizeof(*h);
	h->attr_size = sizeof(struct pdata_file_attr);
	h->attrs.offset = sizeof(*h);
	h->attrs.size = w->nr_attrs * sizeof(struct pdata_file_attr);
	h->data.offset = w->data_offset;
	h->data.size = writer_offset(w) - w->data_offset;
	/* perf ignores event_types; auxtrig repair finds the feature table copy there. */
	h->event_types.offset = w->early_table_off;
	h->event_types.size = w->nr_early * sizeof(struct pdata_file_section);
	memcpy(h->adds_features, w->early_bits, sizeof(w->early_bits));
}

static bool feat_build(const struct pdata_writer *w, int feat, struct membuf *b);

/* Features whose bodies are known before recording; ascending bit order. */
static const int early_feats[] = {
	PDATA_HEADER_TRACING_DATA, PDATA_HEADER_BUILD_ID, PDATA_HEADER_HOSTNAME, PDATA_HEADER_OSRELEASE,
	PDATA_HEADER_VERSION, PDATA_HEADER_ARCH, PDATA_HEADER_NRCPUS, PDATA_HEADER_CPUDESC,
	PDATA_HEADER_CPUID, PDATA_HEADER_TOTAL_MEM, PDATA_HEADER_CMDLINE,
	PDATA_HEADER_EVENT_DESC,
};

/* Bodies at *off, then a copy of their table; *off moves past both. */
static int write_early_features(struct pdata_writer *w, __u64 *off)
{
	int err = 0;

	_Static_assert(sizeof(early_feats) / sizeof(early_feats[0]) <= PDATA_MAX_EARLY, "room");
	for (size_t i = 0; i < sizeof(early_feats) / sizeof(early_feats[0]) && !err; i++) {
		struct membuf b = {};

		if (!feat_build(w, early_feats[i], &b) || b.err) {
			err = b.err;
			free(b.p);
			continue;
		}
		err = pwrite_all(w->fd, b.p, b.len, *off);
		free(b.p);
		if (err)
			break;
		w->early[w->nr_early].offset = *off;
		w->early[w->nr_early].size = b.len;
		w->early_feat[w->nr_early++] = early_feats[i];
		w->early_bits[early_feats[i] / 64] |= 1ULL << (early_feats[i] % 64);
		*off += (b.len + 7) & ~7ULL;
	}
	if (!err) {
		w->early_table_off = *off;
		err = pwrite_all(w->fd, w->early, w->nr_early * sizeof(w->early[0]), *off);
		*off += w->nr_early * sizeof(w->early[0]);
	}
	return err ? writer_fail(w, err, "the feature sections") : 0;
}

/*
 * The file as it stands is complete: the feature table right after the data
 * and a header that says where the data ends. Written after every round, so
 * a run that is killed leaves a file perf reads up to its last round. (Between
 * the data and the header write there is a window of a few microseconds;
 * auxtrig repair closes it.)
 */
static int write_early_table(struct pdata_writer *w)
{
	struct pdata_file_header h;
	int err;

	err = pwrite_all(w->fd, w->early, w->nr_early * sizeof(w->early[0]), writer_offset(w));
	if (!err) {
		header_fill(w, &h);
		err = pwrite_all(w->fd, &h, sizeof(h), 0);
	}
	return err ? writer_fail(w, err, "the header") : 0;
}

/* A HEADER_* record of the pipe-mode header: @hdr, then @body, padded with zeros to 8 bytes. */
static int pipe_put_record(struct pdata_writer *w, __u32 type, const void *head, size_t head_len,
			   const void *body, size_t body_len)
{
	static const char zeros[8];
	size_t size = ALIGN8(sizeof(struct perf_event_header) + head_len + body_len);
	struct perf_event_header hdr = { .type = type, .size = size };
	int err;

	if (size > 0xffff)
		return -E2BIG;
	err = writer_append(w, &hdr, sizeof(hdr));
	if (!err && head_len)
		err = writer_append(w, head, head_len);
	if (!err && body_len)
		err = writer_append(w, body, body_len);
	if (!err && size - sizeof(hdr) - head_len - body_len)
		err = writer_append(w, zeros, size - sizeof(hdr) - head_len - body_len);
	return err;
}

/*
 * Pipe mode (perf-aux.md §1.5, perf 6.1's perf_event__synthesize_for_pipe()):
 * the 16-byte pipe header, a HEADER_ATTR per event with its ids, a
 * HEADER_FEATURE per feature known now and the end mark, then
 * HEADER_TRACING_DATA with the tracing data after it, outside the record.
 */
static int pipe_begin(struct pdata_writer *w)
{
	static const char zeros[8];
	const __u64 pipe_hdr[2] = { PDATA_MAGIC, 16 };
	int err = writer_append(w, pipe_hdr, sizeof(pipe_hdr));

	for (size_t i = 0; !err && i < w->nr_attrs; i++)
		err = pipe_put_record(w, PDATA_RECORD_HEADER_ATTR, &w->attrs[i].attr, PDATA_ATTR_SIZE,
				      w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(__u64));
	for (size_t i = 1; !err && i < sizeof(early_feats) / sizeof(early_feats[0]); i++) {
		__u64 feat = early_feats[i];	/* [0], TRACING_DATA, is a record of its own */
		struct membuf b = {};

		if (feat_build(w, feat, &b) && !b.err)
			err = pipe_put_record(w, PDATA_RECORD_HEADER_FEATURE, &feat, sizeof(feat), b.p, b.len);
		else
			err = b.err;
		free(b.p);
	}
	if (!err) {
		__u64 last = PDATA_HEADER_LAST_FEATURE;

		err = pipe_put_record(w, PDATA_RECORD_HEADER_FEATURE, &last, sizeof(last), NULL, 0);
	}
	if (!err && w->tracing_data) {
		__u32 td[2] = { ALIGN8(w->tracing_len), 0 };

		err = pipe_put_record(w, PDATA_RECORD_HEADER_TRACING_DATA, td, sizeof(td), NULL, 0);
		if (!err)
			err = writer_append(w, w->tracing_data, w->tracing_len);
		if (!err && td[0] != w->tracing_len)
			err = writer_append(w, zeros, td[0] - w->tracing_len);
	}
	if (err == -E2BIG || err == -ENOMEM) {
		pr_err("cannot write the stream's header to %s: %s\n", w->path, strerror(-err));
		return err;
	}
	if (!err)
		err = writer_flush(w);	/* the header goes out now: a reader can start */
	w->data_offset = w->flushed;
	w->stats.bytes = 0;	/* counts the records after the header, as in file mode */
	w->begun = true;
	return err;
}

int pdata_writer__begin_data(struct pdata_writer *w)
{
	struct pdata_file_header h;
	struct pdata_file_attr fa;
	__u64 ids_off;
	int err;

	if (w->begun || w->err)
		return w->err ?: -EINVAL;
	if (!w->nr_attrs) {
		pr_err("internal error: %s has no events\n", w->path);
		return -EINVAL;
	}
	for (size_t i = 0; i < w->nr_attrs; i++)
		if (w->attrs[i].attr.type == PERF_TYPE_TRACEPOINT && !w->tracing_data) {
			/* perf 6.1: "incompatible file format"; refuse before recording anything. */
			pr_err("internal error: tracepoint '%s' without tracing data; perf could not read %s\n",
			       w->attrs[i].name, w->path);
			return -EINVAL;
		}
	if (w->pipe)
		return pipe_begin(w);
	ids_off = sizeof(h) + w->nr_attrs * sizeof(fa);
	for (size_t i = 0; i < w->nr_attrs; i++) {
		struct attr_entry *e = &w->attrs[i];

		memset(&fa, 0, sizeof(fa));
		fa.attr = e->attr;
		fa.ids.offset = ids_off;
		fa.ids.size = e->nr_ids * sizeof(__u64);
		err = pwrite_all(w->fd, &fa, sizeof(fa), sizeof(h) + i * sizeof(fa));
		if (!err && e->nr_ids)
			err = pwrite_all(w->fd, e->ids, fa.ids.size, ids_off);
		if (err)
			return writer_fail(w, err, "attributes");
		ids_off += fa.ids.size;
	}
	err = write_early_features(w, &ids_off);
	if (err)
		return err;
	w->data_offset = ids_off;
	w->flushed = ids_off;
	err = writer_reserve(w, 0);
	if (err)
		return writer_fail(w, err, "data");
	w->begun = true;
	header_fill(w, &h);
	err = pwrite_all(w->fd, &h, sizeof(h), 0);
	if (err)
		return writer_fail(w, err, "the header");
	return 0;
}

static bool id_known(const struct pdata_writer *w, __u64 id)
{
	return !id || bsearch(&id, w->ids, w->nr_ids, sizeof(__u64), cmp_u64);
}

static int check_record(struct pdata_writer *w, const struct perf_event_header *hdr, const char *p)
{
	__u64 id;

	if (hdr->size < sizeof(*hdr) || hdr->size % 8) {
		pr_err("internal error: record type %u has bad size %u\n", hdr->type, hdr->size);
		return -EINVAL;
	}
	if (hdr->type == PDATA_RECORD_AUXTRACE) {
		pr_err("internal error: AUXTRACE records go through pdata_writer__write_auxtrace()\n");
		return -EINVAL;
	}
	if (hdr->type == PDATA_RECORD_ID_INDEX) {
		/* perf 6.1 fails the whole file on an ID_INDEX entry whose id no attr has. */
		struct pdata_record_id_index idx;
		struct pdata_id_index_entry e;

		if (hdr->size < sizeof(idx))
			return -EINVAL;
		memcpy(&idx, p, sizeof(idx));
		if (idx.nr > (hdr->size - sizeof(idx)) / sizeof(e)) {
			pr_err("internal error: ID_INDEX with %llu entries in %u bytes\n",
			       (unsigned long long)idx.nr, hdr->size);
			return -EINVAL;
		}
		for (__u64 i = 0; i < idx.nr; i++) {
			memcpy(&e, p + sizeof(idx) + i * sizeof(e), sizeof(e));
			if (!e.id || !id_known(w, e.id)) {
				pr_err("internal error: ID_INDEX names id %llu that no event in %s has\n",
				       (unsigned long long)e.id, w->path);
				return -EINVAL;
			}
		}
		return 0;
	}
	if (hdr->type >= PDATA_RECORD_HEADER_ATTR)
		return 0;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		if (w->sample_id_off < 0 || (size_t)w->sample_id_off + 8 > hdr->size)
			return 0;
		memcpy(&id, p + w->sample_id_off, 8);
	} else {
		if (w->trailer_id_from_end < 0 || (size_t)w->trailer_id_from_end > hdr->size - sizeof(*hdr))
			return 0;
		memcpy(&id, p + hdr->size - w->trailer_id_from_end, 8);
	}
	if (!id_known(w, id)) {
		pr_err("internal error: record type %u carries id %llu that no event in %s has; perf could not read the file\n",
		       hdr->type, (unsigned long long)id, w->path);
		return -EINVAL;
	}
	return 0;
}

static void account_record(struct pdata_writer *w, const struct perf_event_header *hdr, const char *p)
{
	w->stats.records++;
	if (hdr->type < PDATA_RECORD_TYPE_MAX)
		w->stats.nr_by_type[hdr->type]++;
	if (hdr->type == PDATA_RECORD_AUXTRACE_INFO)
		w->have_auxtrace_info = true;
	if (hdr->type == PERF_RECORD_SAMPLE && w->sample_time_off >= 0 &&
	    (size_t)w->sample_time_off + 8 <= hdr->size) {
		__u64 t;

		memcpy(&t, p + w->sample_time_off, 8);
		if (!w->have_sample_time || t < w->stats.first_sample_time)
			w->stats.first_sample_time = t;
		if (!w->have_sample_time || t > w->stats.last_sample_time)
			w->stats.last_sample_time = t;
		w->have_sample_time = true;
		if (t > w->newest_time)
			w->newest_time = t;
	} else if (hdr->type != PERF_RECORD_SAMPLE && hdr->type < PDATA_RECORD_HEADER_ATTR && w->trailer_time_from_end > 0 &&
		   hdr->size >= sizeof(*hdr) + (size_t)w->trailer_time_from_end) {
		__u64 t;

		memcpy(&t, p + hdr->size - w->trailer_time_from_end, 8);
		if (t > w->newest_time)
			w->newest_time = t;
	}
}

__u64 pdata_writer__newest_time(const struct pdata_writer *w)
{
	return w->newest_time;
}

int pdata_writer__write(struct pdata_writer *w, const void *records, size_t len)
{
	const char *p = records;
	struct perf_event_header hdr;
	__u64 nr = 0, samples = 0;
	size_t off;
	int err;

	if (w->err) {
		/* Nothing reaches the file any more: count what does not. */
		for (off = 0; len - off >= sizeof(hdr); off += hdr.size) {
			memcpy(&hdr, p + off, sizeof(hdr));
			if (hdr.size < sizeof(hdr) || hdr.size > len - off)
				break;
			nr++;
			samples += hdr.type == PERF_RECORD_SAMPLE;
		}
		writer_lose(w, nr, samples, 0);
		return w->err;
	}
	if (!w->begun || w->closed)
		return -EINVAL;
	for (off = 0; off < len; off += hdr.size) {
		if (len - off < sizeof(hdr)) {
			pr_err("internal error: %zu trailing bytes are not a record\n", len - off);
			return -EINVAL;
		}
		memcpy(&hdr, p + off, sizeof(hdr));
		if (hdr.size > len - off) {
			pr_err("internal error: record type %u of size %u overruns its buffer\n", hdr.type, hdr.size);
			return -EINVAL;
		}
		err = check_record(w, &hdr, p + off);
		if (err)
			return err;
	}
	for (off = 0; off < len; off += hdr.size) {
		memcpy(&hdr, p + off, sizeof(hdr));
		account_record(w, &hdr, p + off);
		nr++;
		samples += hdr.type == PERF_RECORD_SAMPLE;
	}
	err = writer_append(w, records, len);
	if (err) {
		writer_lose(w, nr, samples, 0);
	} else if (len < WRITE_BUF_SIZE) {
		w->buf_records += nr;	/* in the buffer (written directly when larger) */
		w->buf_samples += samples;
	}
	return err;
}

int pdata_writer__write_auxtrace(struct pdata_writer *w, const void *auxtrace_rec,
				 const void *data1, size_t len1, const void *data2, size_t len2)
{
	static const char zeros[8];
	struct pdata_record_auxtrace rec;
	size_t total = len1 + len2, pad = ALIGN8(total) - total;
	int err;

	if (w->err) {
		writer_lose(w, 1, 0, len1 + len2);
		return w->err;
	}
	if (!w->begun || w->closed)
		return -EINVAL;
	if (!w->have_auxtrace_info) {
		pr_err("internal error: AUXTRACE before AUXTRACE_INFO; perf 6.1 would reject %s\n", w->path);
		return -EINVAL;
	}
	if (!w->pipe && w->nr_aux == w->cap_aux) {	/* a pipe has no index */
		size_t cap = w->cap_aux ? 2 * w->cap_aux : 256;
		void *n = realloc(w->aux_index, cap * sizeof(*w->aux_index));

		if (!n)
			return -ENOMEM;
		w->aux_index = n;
		w->cap_aux = cap;
	}
	memcpy(&rec, auxtrace_rec, sizeof(rec));
	rec.header.type = PDATA_RECORD_AUXTRACE;
	rec.header.size = sizeof(rec);
	rec.size = total + pad;

	if (!w->pipe) {
		w->aux_index[w->nr_aux].file_offset = writer_offset(w);
		w->aux_index[w->nr_aux].sz = sizeof(rec);
	}
	err = writer_append(w, &rec, sizeof(rec));
	if (!err && len1)
		err = writer_append(w, data1, len1);
	if (!err && len2)
		err = writer_append(w, data2, len2);
	if (!err && pad)
		err = writer_append(w, zeros, pad);
	if (err) {
		__u64 start = w->aux_index[w->nr_aux].file_offset;

		/* What is on disk or buffered still ends at the record before this one. */
		if (start < w->flushed) {
			w->flushed = start;
			w->buf_len = 0;
		} else {
			w->buf_len = start - w->flushed;
		}
		writer_lose(w, 1, 0, total);
		return err;
	}
	w->nr_aux += !w->pipe;
	w->stats.records++;
	w->stats.nr_by_type[PDATA_RECORD_AUXTRACE]++;
	w->stats.auxtrace_bytes += total + pad;
	return 0;
}

int pdata_writer__finish_round(struct pdata_writer *w)
{
	struct perf_event_header hdr = { .type = PDATA_RECORD_FINISHED_ROUND, .size = sizeof(hdr) };
	int err;

	if (w->err)
		return w->err;
	if (!w->begun || w->closed)
		return -EINVAL;
	err = writer_append(w, &hdr, sizeof(hdr));
	if (err)
		return err;
	w->stats.records++;
	w->stats.nr_by_type[PDATA_RECORD_FINISHED_ROUND]++;
	return pdata_writer__flush(w);
}

int pdata_writer__flush(struct pdata_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->begun || w->closed)
		return -EINVAL;
	err = writer_flush(w);
	if (err || w->pipe)
		return err;
	return write_early_table(w);
}

/*
 * A pipe cannot be cut back: what went out stays, whole records up to the
 * last write that ended (a reader gone or a full disk behind the pipe drops
 * the rest). @last goes out if the pipe still takes it.
 */
static int pipe_salvage(struct pdata_writer *w, const void *last, size_t last_len)
{
	w->err = 0;
	w->stats.salvage_record = last && last_len && !write_all(w->fd, last, last_len);
	if (w->stats.salvage_record)
		w->stats.bytes += last_len;
	w->closed = true;
	close(w->fd);
	w->fd = -1;
	return 0;
}

int pdata_writer__salvage(struct pdata_writer *w, const void *last, size_t last_len)
{
	__u64 data_end;
	int err;

	if (!w->begun || w->closed || w->fd < 0)
		return -EINVAL;
	/* Drop what did not make it (counted as lost); what is on disk ends at a record boundary. */
	writer_lose(w, w->buf_records, w->buf_samples, 0);
	w->buf_records = w->buf_samples = 0;
	w->buf_len = 0;
	w->stats.bytes = w->flushed - w->data_offset;
	if (w->pipe)
		return pipe_salvage(w, last, last_len);
	w->err = 0;
	data_end = w->flushed;
	/*
	 * The record that says what was lost, then the table, go into the room
	 * writer_reserve() kept past the data; the file is cut to them after, as
	 * cutting first could free that room. Without the room (a file system
	 * that cannot preallocate), cut first and try the table alone.
	 */
	w->stats.salvage_record = false;
	if (last && last_len && !pwrite_all(w->fd, last, last_len, w->flushed)) {
		w->flushed += last_len;
		w->stats.salvage_record = true;
	}
	err = write_early_table(w);
	if (err && w->stats.salvage_record) {
		w->err = 0;
		w->flushed = data_end;
		w->stats.salvage_record = false;
		if (ftruncate(w->fd, data_end))
			return -errno;
		err = write_early_table(w);
	}
	if (w->stats.salvage_record)
		w->stats.bytes += last_len;
	if (!err && ftruncate(w->fd, w->flushed + w->nr_early * sizeof(w->early[0])))
		err = -errno;
	w->closed = true;
	close(w->fd);
	w->fd = -1;
	return err;
}

void pdata_writer__set_machine(struct pdata_writer *w, const char *machine)
{
	snprintf(w->machine, sizeof(w->machine), "%s", machine ?: "");
}

int pdata_writer__failed(const struct pdata_writer *w)
{
	return w->err;
}

__u64 pdata_writer__pending_samples(const struct pdata_writer *w)
{
	return w->buf_samples;
}

/* ---- feature sections ---- */

/* perf_header_string: u32 len (NUL and padding included), then the string padded with NULs to 64. */
static void header_string_add(struct membuf *b, const char *s)
{
	static const char zeros[PDATA_NAME_ALIGN];
	size_t olen = strlen(s) + 1, len = (olen + PDATA_NAME_ALIGN - 1) & ~(size_t)(PDATA_NAME_ALIGN - 1);

	membuf__u32(b, len);
	membuf__add(b, s, olen);
	membuf__add(b, zeros, len - olen);
}

/* First "key : value" of /proc/cpuinfo whose key is @key, whitespace squeezed. */
static int cpuinfo_value(const char *key, char *out, size_t outsz)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[1024];
	size_t klen = strlen(key);
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *v, *o = out;

		if (strncmp(line, key, klen) || (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':'))
			continue;
		v = strchr(line, ':');
		if (!v)
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		for (; *v && *v != '\n' && (size_t)(o - out) < outsz - 1; v++) {
			if ((*v == ' ' || *v == '\t') && o > out && o[-1] == ' ')
				continue;
			*o++ = *v == '\t' ? ' ' : *v;
		}
		*o = 0;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/* The string perf 6.1's get_cpuid() makes: x86 "Vendor,family,model,stepping", arm64 MIDR. */
static void cpuid_string(char *out, size_t outsz)
{
	char vendor[64], family[16], model[16], stepping[16];
	FILE *f;

	if (!cpuinfo_value("vendor_id", vendor, sizeof(vendor)) &&
	    !cpuinfo_value("cpu family", family, sizeof(family)) &&
	    !cpuinfo_value("model", model, sizeof(model)) &&
	    !cpuinfo_value("stepping", stepping, sizeof(stepping))) {
		snprintf(out, outsz, "%s,%s,%s,%s", vendor, family, model, stepping);
		return;
	}
	/* arm64: MIDR_EL1 with variant [23:20] and revision [3:0] cleared (perf 6.1 arch/arm64/util/header.c). */
	for (int cpu = 0; cpu < 4096; cpu++) {
		char path[128];
		unsigned long long midr;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/regs/identification/midr_el1", cpu);
		f = fopen(path, "re");
		if (!f) {
			if (errno == ENOENT && cpu > 0)
				break;
			continue;
		}
		if (fscanf(f, "%llx", &midr) == 1) {
			fclose(f);
			midr &= ~((0xfULL << 20) | 0xfULL);
			snprintf(out, outsz, "0x%016llx", midr);
			return;
		}
		fclose(f);
	}
	snprintf(out, outsz, "unknown");
}

static __u64 total_mem_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void feat_event_desc(const struct pdata_writer *w, struct membuf *b)
{
	membuf__u32(b, w->nr_attrs);
	membuf__u32(b, sizeof(struct perf_event_attr));
	for (size_t i = 0; i < w->nr_attrs; i++) {
		struct perf_event_attr a = w->attrs[i].attr;

		/* perf 6.1 read_event_desc() -> perf_attr_check() rejects __reserved_3 (aux_action). */
		*perf_attr_aux_action(&a) = 0;
		membuf__add(b, &a, sizeof(a));
		membuf__u32(b, w->attrs[i].nr_ids);
		header_string_add(b, w->attrs[i].name);
		membuf__add(b, w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(__u64));
	}
}

/* Build the body of feature @feat into @b; returns false if the feature is not written. */
static bool feat_build(const struct pdata_writer *w, int feat, struct membuf *b)
{
	struct utsname u;
	char s[512];

	switch (feat) {
	case PDATA_HEADER_TRACING_DATA:
		if (!w->tracing_data)
			return false;
		membuf__add(b, w->tracing_data, w->tracing_len);
		return true;
	case PDATA_HEADER_BUILD_ID:
		if (!w->build_ids_len)
			return false;
		membuf__add(b, w->build_ids, w->build_ids_len);
		return true;
	case PDATA_HEADER_HOSTNAME:
	case PDATA_HEADER_OSRELEASE:
	case PDATA_HEADER_ARCH:
		if (uname(&u))
			return false;
		header_string_add(b, feat == PDATA_HEADER_HOSTNAME ? u.nodename :
			       feat == PDATA_HEADER_OSRELEASE ? u.release : w->machine[0] ? w->machine : u.machine);
		return true;
	case PDATA_HEADER_VERSION:
		header_string_add(b, "auxtrig " AUXTRIG_VERSION);
		return true;
	case PDATA_HEADER_NRCPUS: {
		long conf = sysconf(_SC_NPROCESSORS_CONF), onln = sysconf(_SC_NPROCESSORS_ONLN);

		membuf__u32(b, conf > 0 ? conf : 1);
		membuf__u32(b, onln > 0 ? onln : 1);
		return true;
	}
	case PDATA_HEADER_CPUDESC:
		if (cpuinfo_value("model name", s, sizeof(s)) && cpuinfo_value("CPU part", s, sizeof(s)))
			snprintf(s, sizeof(s), "unknown");
		header_string_add(b, s);
		return true;
	case PDATA_HEADER_CPUID:
		cpuid_string(s, sizeof(s));
		header_string_add(b, s);
		return true;
	case PDATA_HEADER_TOTAL_MEM:
		membuf__u64(b, total_mem_kb());
		return true;
	case PDATA_HEADER_CMDLINE:
		if (!w->cmdline_argc)
			return false;
		membuf__u32(b, w->cmdline_argc);
		for (int i = 0; i < w->cmdline_argc; i++)
			header_string_add(b, w->cmdline[i]);
		return true;
	case PDATA_HEADER_EVENT_DESC:
		feat_event_desc(w, b);
		return true;
	case PDATA_HEADER_AUXTRACE:
		if (!w->nr_aux)
			return false;
		membuf__u64(b, w->nr_aux);
		membuf__add(b, w->aux_index, w->nr_aux * sizeof(*w->aux_index));
		return true;
	case PDATA_HEADER_SAMPLE_TIME:
		if (!w->have_sample_time)
			return false;
		membuf__u64(b, w->stats.first_sample_time);
		membuf__u64(b, w->stats.last_sample_time);
		return true;
	default:
		return false;
	}
}

/*
 * At close: the features known only now (the AUXTRACE index, the sample time
 * range) go after the table; the table lists them with the early ones, all in
 * ascending bit order as perf expects.
 */
static int write_features(struct pdata_writer *w, __u64 features[4])
{
	static const int late_feats[] = { PDATA_HEADER_AUXTRACE, PDATA_HEADER_SAMPLE_TIME };
	enum { NR_LATE = sizeof(late_feats) / sizeof(late_feats[0]) };
	struct pdata_file_section table[PDATA_MAX_EARLY + NR_LATE];
	struct membuf late[NR_LATE] = {};
	int late_feat[NR_LATE];
	size_t nr = 0, nr_late = 0, e = 0, l = 0;
	__u64 table_off = writer_offset(w), off;
	int err = 0;

	memcpy(features, w->early_bits, sizeof(w->early_bits));
	for (size_t i = 0; i < NR_LATE; i++) {
		if (!feat_build(w, late_feats[i], &late[nr_late]) || late[nr_late].err) {
			err = late[nr_late].err;
			free(late[nr_late].p);
			memset(&late[nr_late], 0, sizeof(late[nr_late]));
			if (err)
				goto out;
			continue;
		}
		late_feat[nr_late++] = late_feats[i];
		features[late_feats[i] / 64] |= 1ULL << (late_feats[i] % 64);
	}
	off = table_off + (w->nr_early + nr_late) * sizeof(table[0]);
	/* Merge the two ascending lists. */
	while (e < w->nr_early || l < nr_late) {
		if (l == nr_late || (e < w->nr_early && w->early_feat[e] < late_feat[l])) {
			table[nr++] = w->early[e++];
		} else {
			table[nr].offset = off;
			table[nr++].size = late[l].len;
			off += late[l++].len;
		}
	}
	err = pwrite_all(w->fd, table, nr * sizeof(table[0]), table_off);
	off = table_off + nr * sizeof(table[0]);
	for (size_t i = 0; !err && i < nr_late; i++) {
		err = pwrite_all(w->fd, late[i].p, late[i].len, off);
		off += late[i].len;
	}
	if (!err && ftruncate(w->fd, off))
		err = -errno;
	if (err)
		writer_fail(w, err, "the feature sections");
out:
	for (size_t i = 0; i < NR_LATE; i++)
		free(late[i].p);
	return err;
}

int pdata_writer__close(struct pdata_writer *w)
{
	struct pdata_file_header h;
	__u64 features[4] = {};
	int err;

	if (w->closed)
		return w->err ?: -EINVAL;
	if (!w->begun) {
		err = pdata_writer__begin_data(w);
		if (err)
			goto out;
	}
	err = writer_flush(w);
	if (err || w->pipe)
		goto out;	/* a pipe ends with its last record */
	err = write_features(w, features);
	if (err)
		goto out;
	header_fill(w, &h);
	memcpy(h.adds_features, features, sizeof(features));
	err = pwrite_all(w->fd, &h, sizeof(h), 0);
	if (err) {
		writer_fail(w, err, "the header");
		goto out;
	}
out:
	if (err)
		return err; /* still open: pdata_writer__salvage() can cut back to the last whole record */
	w->closed = true;
	if (w->fd >= 0 && close(w->fd) && !err) {
		err = -errno;
		writer_fail(w, err, "(close)");
	}
	w->fd = -1;
	return err ?: w->err;
}

int pdata_writer__unlink(struct pdata_writer *w)
{
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	w->closed = true;
	if (w->pipe)
		return 0;	/* nothing to remove: the reader has what was sent */
	if (unlink(w->path))
		return -errno;
	return 0;
}

void pdata_writer__delete(struct pdata_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	free(w->ids);
	free(w->tracing_data);
	free_cmdline(w);
	free(w->build_ids);
	free(w->buf);
	free(w->aux_index);
	free(w->path);
	free(w);
}

const struct pdata_writer_stats *pdata_writer__stats(const struct pdata_writer *w)
{
	return &w->stats;
}

size_t pdata_writer__nr_attrs(const struct pdata_writer *w)
{
	return w->nr_attrs;
}
