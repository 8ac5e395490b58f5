// SPDX-License-Identifier: BSD-2-Clause
/*
 * pdata_reader: a bounds-checked reader of perf.data files (file mode).
 * Layout: /work/shared/reference/perf-aux.md §1-2, include/auxtrig/format/pdata.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/sys/input_file.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata_reader.h"

/* "PERFILE2" as read by a machine of the other endianness. */
#define PDATA_MAGIC_SWAPPED	__builtin_bswap64(PDATA_MAGIC)
/* PERF_RECORD_AUXTRACE header.size perf writes; payload follows. */
#define AUXTRACE_RECORD_MIN	sizeof(struct pdata_record_auxtrace)

struct pdata_reader {
	char *name;
	unsigned char *buf;
	size_t len;
	bool mapped;		/* buf is an mmap of the file */
	bool pipe;		/* pipe mode: attrs and features are records of the stream */
	struct pdata_file_header hdr;
	struct pdata_reader_attr *attrs;
	size_t nr_attrs;
	struct pdata_file_section feat[PDATA_HEADER_LAST_FEATURE];
	bool has_identifier;	/* every attr samples PERF_SAMPLE_IDENTIFIER */
};

/* True if [off, off + size) lies inside the buffer; overflow-safe. */
static bool pdata_reader__in_bounds(const struct pdata_reader *r, __u64 off, __u64 size)
{
	return off <= r->len && size <= r->len - off;
}

static int pdata_reader__parse_attrs(struct pdata_reader *r)
{
	const struct pdata_file_header *h = &r->hdr;
	__u64 esz = h->attr_size;

	if (esz < PERF_ATTR_SIZE_VER0 + sizeof(struct pdata_file_section) || esz > 4096) {
		pr_err("%s: attr_size %llu in the file header is not plausible (corrupt file?)\n",
		       r->name, (unsigned long long)esz);
		return -EINVAL;
	}
	if (!pdata_reader__in_bounds(r, h->attrs.offset, h->attrs.size) || h->attrs.size % esz) {
		pr_err("%s: attr section [%#llx, +%llu) is outside the file or not a multiple of %llu (truncated?)\n",
		       r->name, (unsigned long long)h->attrs.offset, (unsigned long long)h->attrs.size,
		       (unsigned long long)esz);
		return -EINVAL;
	}
	r->nr_attrs = h->attrs.size / esz;
	r->attrs = calloc(r->nr_attrs ? r->nr_attrs : 1, sizeof(*r->attrs));
	if (!r->attrs)
		return -ENOMEM;
	r->has_identifier = r->nr_attrs > 0;
	for (size_t i = 0; i < r->nr_attrs; i++) {
		const unsigned char *e = r->buf + h->attrs.offset + i * esz;
		struct pdata_reader_attr *a = &r->attrs[i];
		size_t asz = esz - sizeof(struct pdata_file_section);
		struct pdata_file_section ids;

		memcpy(&a->attr, e, asz < sizeof(a->attr) ? asz : sizeof(a->attr));
		memcpy(&ids, e + asz, sizeof(ids));
		if (ids.size % sizeof(__u64) || !pdata_reader__in_bounds(r, ids.offset, ids.size)) {
			pr_err("%s: ids of attr %zu [%#llx, +%llu) are outside the file (truncated?)\n",
			       r->name, i, (unsigned long long)ids.offset, (unsigned long long)ids.size);
			return -EINVAL;
		}
		a->nr_ids = ids.size / sizeof(__u64);
		a->ids = calloc(a->nr_ids ? a->nr_ids : 1, sizeof(__u64));
		if (!a->ids)
			return -ENOMEM;
		memcpy(a->ids, r->buf + ids.offset, ids.size);
		if (!(a->attr.sample_type & PERF_SAMPLE_IDENTIFIER))
			r->has_identifier = false;
	}
	return 0;
}

static int pdata_reader__parse_features(struct pdata_reader *r)
{
	const struct pdata_file_header *h = &r->hdr;
	__u64 table = h->data.offset + h->data.size;
	size_t slot = 0;

	for (unsigned int bit = 0; bit < PDATA_HEADER_FEAT_BITS; bit++) {
		struct pdata_file_section s;

		if (!(h->adds_features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		if (!pdata_reader__in_bounds(r, table + slot * sizeof(s), sizeof(s))) {
			pr_err("%s: feature table at %#llx is truncated (feature %u)\n",
			       r->name, (unsigned long long)table, bit);
			return -EINVAL;
		}
		memcpy(&s, r->buf + table + slot * sizeof(s), sizeof(s));
		slot++;
		if (!pdata_reader__in_bounds(r, s.offset, s.size)) {
			pr_err("%s: feature %u section [%#llx, +%llu) is outside the file (truncated?)\n",
			       r->name, bit, (unsigned long long)s.offset, (unsigned long long)s.size);
			return -EINVAL;
		}
		if (bit < PDATA_HEADER_LAST_FEATURE)
			r->feat[bit] = s;
	}
	return 0;
}

int pdata_reader__next(const struct pdata_reader *r, __u64 *pos, struct pdata_event *ev);

static int pdata_reader__add_attr(struct pdata_reader *r, const unsigned char *rec, size_t size)
{
	struct pdata_reader_attr *v, *a;
	__u32 asz;

	if (size < 8 + PERF_ATTR_SIZE_VER0) {
		pr_err("%s: HEADER_ATTR record of %zu bytes is too short\n", r->name, size);
		return -EINVAL;
	}
	memcpy(&asz, rec + 8 + offsetof(struct perf_event_attr, size), sizeof(asz));
	if (asz < PERF_ATTR_SIZE_VER0 || asz > size - 8 || (size - 8 - asz) % 8) {
		pr_err("%s: HEADER_ATTR record with attr.size %u in %zu bytes: corrupt\n", r->name, asz, size);
		return -EINVAL;
	}
	v = realloc(r->attrs, (r->nr_attrs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->attrs = v;
	a = &v[r->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, rec + 8, asz < sizeof(a->attr) ? asz : sizeof(a->attr));
	a->nr_ids = (size - 8 - asz) / 8;
	a->ids = calloc(a->nr_ids ? a->nr_ids : 1, sizeof(__u64));
	if (!a->ids)
		return -ENOMEM;
	memcpy(a->ids, rec + 8 + asz, a->nr_ids * 8);
	r->nr_attrs++;
	return 0;
}

/*
 * Pipe mode: the attrs are HEADER_ATTR records and the features
 * HEADER_FEATURE records of the stream (perf-aux.md §1.5); read them all now.
 */
/*
 * A pipe-mode stream keeps no alignment (HEADER_FEATURE records are any
 * size): copy it so that every record, and every payload after one, starts
 * at an 8-byte boundary, each padded with zeros to a multiple of 8 (the
 * header's size grows to match). Pointers handed out are then aligned as in
 * file mode. Return: 0, -ENOMEM, -EINVAL for a record that does not fit.
 */
static int pdata_reader__align_pipe(struct pdata_reader *r)
{
	size_t off = 16, out = 16, cap = r->len + r->len / 4 + 64;
	unsigned char *n = calloc(1, cap);

	if (!n)
		return -ENOMEM;
	memcpy(n, r->buf, 16);
	while (off < r->len) {
		struct perf_event_header h;
		__u64 payload = 0, rsz, psz;

		if (r->len - off < sizeof(h))
			goto cut;
		memcpy(&h, r->buf + off, sizeof(h));
		if (h.size < sizeof(h))
			goto bad;
		if (h.size > r->len - off)
			goto cut;
		if (h.type == PDATA_RECORD_AUXTRACE && h.size >= AUXTRACE_RECORD_MIN)
			memcpy(&payload, r->buf + off + 8, sizeof(payload));
		else if (h.type == PDATA_RECORD_HEADER_TRACING_DATA && h.size >= 16) {
			__u32 sz;

			memcpy(&sz, r->buf + off + 8, sizeof(sz));
			payload = sz;
		}
		if (payload > r->len - off - h.size)
			goto cut;
		rsz = (h.size + 7) & ~7ULL;
		psz = (payload + 7) & ~7ULL;
		if (rsz > 0xffff)
			goto bad;
		while (out + rsz + psz > cap) {
			unsigned char *b = realloc(n, 2 * cap);

			if (!b) {
				free(n);
				return -ENOMEM;
			}
			memset(b + cap, 0, cap);
			n = b;
			cap *= 2;
		}
		memcpy(n + out, r->buf + off, h.size);
		memcpy(n + out + rsz, r->buf + off + h.size, payload);	/* the payload follows the record */
		off += h.size + payload;
		h.size = rsz;
		memcpy(n + out, &h, sizeof(h));
		if (h.type == PDATA_RECORD_AUXTRACE && payload) {
			memcpy(n + out + 8, &psz, sizeof(psz));
		} else if (h.type == PDATA_RECORD_HEADER_TRACING_DATA && payload) {
			__u32 sz = psz;

			memcpy(n + out + 8, &sz, sizeof(sz));
		}
		out += rsz + psz;
	}
done:
	if (r->mapped)
		munmap(r->buf, r->len);
	else
		free(r->buf);
	r->mapped = false;
	r->buf = n;
	r->len = out;
	return 0;
cut:
	/*
	 * The stream ends inside its last record: the writer was killed in the
	 * middle of a write (a pipe takes a long write in parts). What came
	 * before is whole: read that, as perf does.
	 */
	pr_warn("%s: the stream ends inside a record at %#zx (only %zu of its bytes came; its writer was stopped?): "
		"reading the records before it\n", r->name, off, r->len - off);
	goto done;
bad:
	free(n);
	pr_err("%s: pipe-mode record at %#zx does not fit: corrupt or truncated stream\n", r->name, off);
	return -EINVAL;
}

static int pdata_reader__parse_pipe(struct pdata_reader *r)
{
	__u64 pos = 0;
	struct pdata_event ev;
	int ret, err;

	err = pdata_reader__align_pipe(r);
	if (err)
		return err;
	r->pipe = true;
	r->hdr.size = 16;
	r->hdr.data.offset = 16;
	r->hdr.data.size = r->len - 16;
	while (!err && (ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const unsigned char *rec = (const void *)ev.header;
		__u64 feat;

		if (ev.header->type == PDATA_RECORD_HEADER_ATTR) {
			err = pdata_reader__add_attr(r, rec, ev.header->size);
		} else if (ev.header->type == PDATA_RECORD_HEADER_FEATURE && ev.header->size >= 16) {
			memcpy(&feat, rec + 8, sizeof(feat));
			if (feat < PDATA_HEADER_LAST_FEATURE) {
				r->feat[feat].offset = ev.file_offset + 16;
				r->feat[feat].size = ev.header->size - 16;
				r->hdr.adds_features[feat / 64] |= 1ULL << (feat % 64);
			}
		} else if (ev.header->type == PDATA_RECORD_HEADER_TRACING_DATA && ev.header->size >= 16) {
			__u32 size;	/* the body follows the record; pdata_reader__next() checked it fits */

			memcpy(&size, rec + 8, sizeof(size));
			r->feat[PDATA_HEADER_TRACING_DATA].offset = ev.file_offset + ev.header->size;
			r->feat[PDATA_HEADER_TRACING_DATA].size = size;
			r->hdr.adds_features[0] |= 1ULL << PDATA_HEADER_TRACING_DATA;
		}
	}
	if (err)
		return err;
	if (ret < 0)
		return -EINVAL;
	r->has_identifier = r->nr_attrs > 0;
	for (size_t i = 0; i < r->nr_attrs; i++)
		if (!(r->attrs[i].attr.sample_type & PERF_SAMPLE_IDENTIFIER))
			r->has_identifier = false;
	return 0;
}

static struct pdata_reader *pdata_reader__setup(struct pdata_reader *r)
{
	int err;

	if (r->len < sizeof(__u64)) {
		pr_err("%s: %zu bytes is too short for a perf.data file\n", r->name, r->len);
		err = -EINVAL;
		goto fail;
	}
	memcpy(&r->hdr.magic, r->buf, sizeof(__u64));
	if (r->hdr.magic == PDATA_MAGIC_SWAPPED) {
		pr_err("%s: the file was written on a machine of the other endianness, which auxtrig does not "
		       "read: decode it with perf script\n", r->name);
		err = -EPROTONOSUPPORT;
		goto fail;
	}
	if (r->hdr.magic != PDATA_MAGIC) {
		pr_err("%s: not a perf.data file (no PERFILE2 magic)\n", r->name);
		err = -EINVAL;
		goto fail;
	}
	if (r->len < 16) {
		pr_err("%s: truncated file header\n", r->name);
		err = -EINVAL;
		goto fail;
	}
	memcpy(&r->hdr.size, r->buf + 8, sizeof(__u64));
	if (r->hdr.size == 16) {
		err = pdata_reader__parse_pipe(r);
		if (err)
			goto fail;
		return r;
	}
	if (r->hdr.size != sizeof(r->hdr) || r->len < sizeof(r->hdr)) {
		pr_err("%s: file header size %llu (file %zu bytes): expected %zu (corrupt or truncated)\n",
		       r->name, (unsigned long long)r->hdr.size, r->len, sizeof(r->hdr));
		err = -EINVAL;
		goto fail;
	}
	memcpy(&r->hdr, r->buf, sizeof(r->hdr));
	if (!pdata_reader__in_bounds(r, r->hdr.data.offset, r->hdr.data.size) || r->hdr.data.offset % 8) {
		pr_err("%s: data section [%#llx, +%llu) is outside the %zu-byte file (truncated?)\n",
		       r->name, (unsigned long long)r->hdr.data.offset, (unsigned long long)r->hdr.data.size, r->len);
		err = -EINVAL;
		goto fail;
	}
	err = pdata_reader__parse_attrs(r);
	if (err)
		goto fail;
	err = pdata_reader__parse_features(r);
	if (err)
		goto fail;
	return r;
fail:
	pdata_reader__delete(r);
	errno = -err;
	return NULL;
}

struct pdata_reader *pdata_reader__new_mem(const void *buf, size_t len, const char *name)
{
	struct pdata_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->name = strdup(name ? name : "(memory)");
	/* Exactly @len bytes, so that ASan sees any read past them (1 for an empty file). */
	r->buf = malloc(len ? len : 1);
	if (!r->name || !r->buf) {
		pdata_reader__delete(r);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(r->buf, buf, len);
	r->len = len;
	return pdata_reader__setup(r);
}

/* All of a pipe (or anything that cannot be mapped) into a malloc()ed buffer. */
static unsigned char *pdata_reader__slurp(int fd, const char *name, size_t *len)
{
	size_t cap = 1 << 20, got = 0;
	unsigned char *buf = malloc(cap + 8);

	while (buf) {
		ssize_t n;

		if (got == cap) {
			unsigned char *b = realloc(buf, 2 * cap + 8);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			pr_err("cannot read %s: %s\n", name, strerror(err));
			free(buf);
			errno = err;
			return NULL;
		}
		if (n == 0) {
			*len = got;
			return buf;
		}
		got += n;
	}
	free(buf);
	errno = ENOMEM;
	return NULL;
}

struct pdata_reader *pdata_reader__open(const char *path)
{
	struct pdata_reader *r = NULL;
	const char *name = strcmp(path, "-") ? path : "standard input";
	struct stat st;
	int err = 0, fd;

	/* never a blocking open: a FIFO nobody writes would hold us forever (input_file.h) */
	fd = strcmp(path, "-") ? input_file__open(path, 0, &st) : 0;
	if (fd < 0) {
		err = fd;
		pr_err("cannot open %s: %s\n", path, strerror(-err));
		goto out;
	}
	if (fd == 0 && fstat(fd, &st)) {
		err = -errno;
		pr_err("cannot stat %s: %s\n", name, strerror(-err));
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && fd != 0) {
		err = -EINVAL;
		pr_err("%s is %s, not a perf.data file or a pipe\n", path, input_file__kind(&st));
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->name = strdup(name))) {
		err = -ENOMEM;
		goto out;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (map == MAP_FAILED) {
			err = -errno;
			pr_err("cannot map %s: %s\n", name, strerror(-err));
			goto out;
		}
		r->buf = map;
		r->len = st.st_size;
		r->mapped = true;
	} else {
		r->buf = pdata_reader__slurp(fd, name, &r->len);
		if (!r->buf) {
			err = -errno;
			goto out;
		}
		if (!r->len && S_ISFIFO(st.st_mode) && fd != 0) {
			err = -ENODATA;
			pr_err("%s: a FIFO that gave nothing: nobody was writing to it (start its writer first)\n", path);
			goto out;
		}
	}
	if (fd > 0)
		close(fd);
	fd = -1;
	return pdata_reader__setup(r);	/* frees r on failure */
out:
	if (fd > 0)
		close(fd);
	pdata_reader__delete(r);
	if (err)
		errno = -err;
	return NULL;
}

void pdata_reader__delete(struct pdata_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->attrs && i < r->nr_attrs; i++)
		free(r->attrs[i].ids);
	free(r->attrs);
	if (r->mapped)
		munmap(r->buf, r->len);
	else
		free(r->buf);
	free(r->name);
	free(r);
}

const struct pdata_file_header *pdata_reader__header(const struct pdata_reader *r)
{
	return &r->hdr;
}

size_t pdata_reader__nr_attrs(const struct pdata_reader *r)
{
	return r->nr_attrs;
}

const struct pdata_reader_attr *pdata_reader__attr(const struct pdata_reader *r, size_t i)
{
	return i < r->nr_attrs ? &r->attrs[i] : NULL;
}

const struct pdata_reader_attr *pdata_reader__attr_by_id(const struct pdata_reader *r, __u64 id)
{
	for (size_t i = 0; i < r->nr_attrs; i++)
		for (size_t j = 0; j < r->attrs[i].nr_ids; j++)
			if (r->attrs[i].ids[j] == id)
				return &r->attrs[i];
	return NULL;
}

bool pdata_reader__has_feature(const struct pdata_reader *r, unsigned int feat)
{
	return feat < PDATA_HEADER_FEAT_BITS && (r->hdr.adds_features[feat / 64] & (1ULL << (feat % 64)));
}

int pdata_reader__feature(const struct pdata_reader *r, unsigned int feat, const void **data, size_t *size)
{
	if (feat >= PDATA_HEADER_LAST_FEATURE || !pdata_reader__has_feature(r, feat))
		return -ENOENT;
	*data = r->buf + r->feat[feat].offset;
	*size = r->feat[feat].size;
	return 0;
}

const char *pdata_reader__feature_string(const struct pdata_reader *r, unsigned int feat)
{
	const unsigned char *p;
	const void *data;
	size_t size;
	__u32 len;

	if (pdata_reader__feature(r, feat, &data, &size) || size < sizeof(len))
		return NULL;
	p = data;
	memcpy(&len, p, sizeof(len));
	if (!len || len > size - sizeof(len) || memchr(p + sizeof(len), 0, len) == NULL)
		return NULL;
	return (const char *)p + sizeof(len);
}

int pdata_reader__event_names(const struct pdata_reader *r, int (*fn)(void *ctx, __u64 id, const char *name),
			      void *ctx)
{
	const unsigned char *p, *end;
	const void *body;
	size_t size;
	__u32 nr, attr_size;

	if (pdata_reader__feature(r, PDATA_HEADER_EVENT_DESC, &body, &size))
		return -ENOENT;
	if (size < 8)
		return -EINVAL;
	p = body;
	end = p + size;
	memcpy(&nr, p, 4);
	memcpy(&attr_size, p + 4, 4);
	p += 8;
	for (__u32 i = 0; i < nr && i < 4096; i++) {
		__u32 nr_ids, len;

		if ((size_t)(end - p) < (size_t)attr_size + 8)
			return -EINVAL;
		p += attr_size;
		memcpy(&nr_ids, p, 4);
		memcpy(&len, p + 4, 4);
		p += 8;
		if ((size_t)(end - p) < len || (size_t)(end - p - len) / 8 < nr_ids || !memchr(p, 0, len))
			return -EINVAL;
		for (__u32 j = 0; j < nr_ids; j++) {
			__u64 id;
			int err;

			memcpy(&id, p + len + 8 * (size_t)j, 8);
			err = fn(ctx, id, (const char *)p);
			if (err)
				return err;
		}
		p += len + 8 * (size_t)nr_ids;
	}
	return 0;
}

/* True if @e names an AUXTRACE record of its size inside the data section. */
static bool pdata_reader__index_entry_ok(const struct pdata_reader *r, const struct pdata_auxtrace_index_entry *e)
{
	const struct pdata_file_header *h = &r->hdr;
	struct perf_event_header eh;

	if (e->file_offset < h->data.offset || e->file_offset % 8 ||
	    !pdata_reader__in_bounds(r, e->file_offset, sizeof(eh)) ||
	    e->file_offset + sizeof(eh) > h->data.offset + h->data.size)
		return false;
	memcpy(&eh, r->buf + e->file_offset, sizeof(eh));
	return eh.type == PDATA_RECORD_AUXTRACE && eh.size == e->sz;
}

int pdata_reader__auxtrace_index(const struct pdata_reader *r,
				 struct pdata_auxtrace_index_entry **entries, size_t *nr)
{
	const size_t esz = sizeof(**entries);
	const unsigned char *p;
	struct pdata_auxtrace_index_entry *v;
	const void *data;
	size_t size, skip = 0;
	__u64 n = 0;

	if (pdata_reader__feature(r, PDATA_HEADER_AUXTRACE, &data, &size))
		return -ENOENT;
	p = data;
	if (size >= sizeof(n))
		memcpy(&n, p, sizeof(n));
	if (size >= sizeof(n) && n <= (size - sizeof(n)) / esz && (size - sizeof(n)) % esz == 0) {
		skip = sizeof(n);		/* perf: u64 nr first */
	} else if (size % esz == 0) {
		n = size / esz;			/* simpleperf: no count */
	} else {
		pr_err("%s: auxtrace index of %zu bytes has neither perf's nor simpleperf's layout\n",
		       r->name, size);
		return -EINVAL;
	}
	v = calloc(n ? n : 1, esz);
	if (!v)
		return -ENOMEM;
	memcpy(v, p + skip, n * esz);
	for (size_t i = 0; i < n; i++) {
		if (!pdata_reader__index_entry_ok(r, &v[i])) {
			pr_err("%s: auxtrace index entry %zu (offset %#llx) is not an AUXTRACE record\n", r->name, i,
			       (unsigned long long)v[i].file_offset);
			free(v);
			return -EINVAL;
		}
	}
	*entries = v;
	*nr = n;
	return 0;
}

int pdata_reader__next(const struct pdata_reader *r, __u64 *pos, struct pdata_event *ev)
{
	const struct pdata_file_header *hdr = &r->hdr;
	struct perf_event_header h;
	__u64 off = hdr->data.offset + *pos;
	__u64 end = hdr->data.offset + hdr->data.size;

	if (*pos >= hdr->data.size)
		return 0;
	if (end - off < sizeof(h)) {
		pr_err("%s: truncated record header at %#llx\n", r->name, (unsigned long long)off);
		return -EPROTO;
	}
	/*
	 * Every read of the file's bytes is a memcpy(): nothing in a corrupt
	 * file can make a read misaligned. Records themselves stay 8-byte
	 * aligned (the data section starts aligned, sizes are multiples of 8,
	 * and so are AUXTRACE payloads: perf pads them), so the header handed
	 * out can be read as a struct.
	 */
	memcpy(&h, r->buf + off, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > end - off) {
		pr_err("%s: record at %#llx (type %u) has size %u: corrupt or truncated data section\n",
		       r->name, (unsigned long long)off, h.type, h.size);
		return -EPROTO;
	}
	memset(ev, 0, sizeof(*ev));
	ev->header = (const void *)(r->buf + off);
	ev->file_offset = off;
	if (h.type == PDATA_RECORD_AUXTRACE) {
		__u64 aux_size;

		if (h.size < AUXTRACE_RECORD_MIN) {
			pr_err("%s: AUXTRACE record at %#llx is %u bytes, shorter than %zu\n",
			       r->name, (unsigned long long)off, h.size, AUXTRACE_RECORD_MIN);
			return -EPROTO;
		}
		memcpy(&aux_size, r->buf + off + offsetof(struct pdata_record_auxtrace, size), sizeof(aux_size));
		if (aux_size > end - (off + h.size)) {
			pr_err("%s: AUXTRACE record at %#llx announces %llu payload bytes, only %llu left in the data section (truncated?)\n",
			       r->name, (unsigned long long)off, (unsigned long long)aux_size,
			       (unsigned long long)(end - (off + h.size)));
			return -EPROTO;
		}
		if (aux_size % 8) {
			pr_err("%s: AUXTRACE record at %#llx announces %llu payload bytes, not a multiple of 8 "
			       "(perf pads the payload): corrupt data section\n",
			       r->name, (unsigned long long)off, (unsigned long long)aux_size);
			return -EPROTO;
		}
		ev->aux = r->buf + off + h.size;
		ev->aux_size = aux_size;
		*pos += aux_size;
	} else if (h.type == PDATA_RECORD_HEADER_TRACING_DATA && r->pipe && h.size >= 16) {
		__u32 size;

		/* pipe mode: the tracing data follows the record, outside it, padded to 8 bytes */
		memcpy(&size, r->buf + off + 8, sizeof(size));
		if (size > end - (off + h.size)) {
			pr_err("%s: HEADER_TRACING_DATA record at %#llx announces %u bytes, only %llu left\n", r->name,
			       (unsigned long long)off, size, (unsigned long long)(end - (off + h.size)));
			return -EPROTO;
		}
		if (size % 8) {
			pr_err("%s: HEADER_TRACING_DATA record at %#llx announces %u bytes, not a multiple of 8 "
			       "(perf pads them): corrupt stream\n", r->name, (unsigned long long)off, size);
			return -EPROTO;
		}
		*pos += size;
	}
	*pos += h.size;
	return 1;
}

/* The attr a record belongs to: by IDENTIFIER when every attr has it, else the first. */
static const struct pdata_reader_attr *pdata_reader__event_attr(const struct pdata_reader *r,
								 const struct pdata_event *ev)
{
	const unsigned char *rec = (const void *)ev->header;
	size_t size = ev->header->size;
	__u64 id;

	if (!r->nr_attrs)
		return NULL;
	if (!r->has_identifier || size < sizeof(*ev->header) + sizeof(id))
		return &r->attrs[0];
	if (ev->header->type == PERF_RECORD_SAMPLE)
		memcpy(&id, rec + sizeof(*ev->header), sizeof(id));
	else
		memcpy(&id, rec + size - sizeof(id), sizeof(id));
	return pdata_reader__attr_by_id(r, id);
}

static int take_u64(const unsigned char **p, const unsigned char *end, __u64 *v)
{
	if (end - *p < 8)
		return -EINVAL;
	memcpy(v, *p, 8);
	*p += 8;
	return 0;
}

int pdata_reader__parse_sample(const struct pdata_reader *r, const struct pdata_event *ev,
			       struct pdata_sample *s)
{
	const unsigned char *rec = (const void *)ev->header;
	const unsigned char *end = rec + ev->header->size;
	const struct pdata_reader_attr *a = pdata_reader__event_attr(r, ev);
	const unsigned char *p;
	__u64 st, v;

	memset(s, 0, sizeof(*s));
	if (!a)
		return -ENOENT;
	s->attr = a;
	st = a->attr.sample_type;
	if (ev->header->type == PERF_RECORD_SAMPLE) {
		p = rec + sizeof(*ev->header);
		if (st & PERF_SAMPLE_IDENTIFIER) {
			if (take_u64(&p, end, &s->id))
				return -EINVAL;
		}
		if (st & PERF_SAMPLE_IP) {
			if (take_u64(&p, end, &s->ip))
				return -EINVAL;
		}
		if (st & PERF_SAMPLE_TID) {
			if (take_u64(&p, end, &v))
				return -EINVAL;
			s->pid = (__u32)v;
			s->tid = (__u32)(v >> 32);
		}
		if ((st & PERF_SAMPLE_TIME) && take_u64(&p, end, &s->time))
			return -EINVAL;
		if ((st & PERF_SAMPLE_ADDR) && take_u64(&p, end, &s->addr))
			return -EINVAL;
		if ((st & PERF_SAMPLE_ID) && take_u64(&p, end, &s->id))
			return -EINVAL;
		if ((st & PERF_SAMPLE_STREAM_ID) && take_u64(&p, end, &v))
			return -EINVAL;
		if (st & PERF_SAMPLE_CPU) {
			if (take_u64(&p, end, &v))
				return -EINVAL;
			s->cpu = (__u32)v;
		}
		if ((st & PERF_SAMPLE_PERIOD) && take_u64(&p, end, &s->period))
			return -EINVAL;
		s->present = st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				   PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD);
		if (st & PERF_SAMPLE_READ)
			return 0;	/* its layout depends on read_format: what follows is not read */
		if (st & PERF_SAMPLE_CALLCHAIN) {
			if (take_u64(&p, end, &s->nr_callchain) || s->nr_callchain > (__u64)(end - p) / 8)
				return -EINVAL;
			s->callchain = (const __u64 *)p;
			p += 8 * s->nr_callchain;
			s->present |= PERF_SAMPLE_CALLCHAIN;
		}
		if (st & PERF_SAMPLE_RAW) {
			if (end - p < 4)
				return -EINVAL;
			memcpy(&s->raw_size, p, 4);
			if (s->raw_size > (__u64)(end - p) - 4)
				return -EINVAL;
			s->raw = p + 4;
			s->present |= PERF_SAMPLE_RAW;
		}
		return 0;
	}
	/* A kernel record's sample_id trailer, read backwards from the end. */
	if (ev->header->type >= PERF_RECORD_MAX || !a->attr.sample_id_all)
		return 0;
	p = end;
#define TAKE_BACK(dst) do { if (p - rec < (ptrdiff_t)(sizeof(*ev->header) + 8)) return -EINVAL; \
			    p -= 8; memcpy(&(dst), p, 8); } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER)
		TAKE_BACK(s->id);
	if (st & PERF_SAMPLE_CPU) {
		TAKE_BACK(v);
		s->cpu = (__u32)v;
	}
	if (st & PERF_SAMPLE_STREAM_ID)
		TAKE_BACK(v);
	if (st & PERF_SAMPLE_ID)
		TAKE_BACK(s->id);
	if (st & PERF_SAMPLE_TIME)
		TAKE_BACK(s->time);
	if (st & PERF_SAMPLE_TID) {
		TAKE_BACK(v);
		s->pid = (__u32)v;
		s->tid = (__u32)(v >> 32);
	}
#undef TAKE_BACK
	s->present = st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			   PERF_SAMPLE_CPU);
	return 0;
}
