// SPDX-License-Identifier: BSD-2-Clause
/* The tracepoint formats of a perf.data file's HEADER_TRACING_DATA. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/tp_formats.h"

static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

struct cursor {
	const unsigned char *p, *end;
};

static int take(struct cursor *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	memcpy(dst, c->p, n);
	c->p += n;
	return 0;
}

/* A NUL-terminated string in place. */
static const char *take_str(struct cursor *c)
{
	const unsigned char *nul = memchr(c->p, '\0', c->end - c->p);
	const char *s = (const char *)c->p;

	if (!nul)
		return NULL;
	c->p = nul + 1;
	return s;
}

/* u64 size, then that many bytes: the bytes, in place. */
static int take_sized(struct cursor *c, const char **data, size_t *size)
{
	uint64_t n;

	if (take(c, &n, 8) || n > (uint64_t)(c->end - c->p))
		return -EINVAL;
	*data = (const char *)c->p;
	*size = n;
	c->p += n;
	return 0;
}

static int add_format(struct tp_formats *f, const char *system, const char *text, size_t len)
{
	char *copy = malloc(len + 1), *name, *nl;
	struct tp_format fmt = { 0 }, *v;
	int err;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	name = strstr(copy, "name:");
	if (!name || tp_format__parse(copy, &fmt)) {
		free(copy);
		return 0;	/* not a format we can use: skip it */
	}
	name += 5;
	while (*name == ' ')
		name++;
	nl = strchr(name, '\n');
	if (nl)
		*nl = '\0';
	snprintf(fmt.system, sizeof(fmt.system), "%s", system);
	snprintf(fmt.name, sizeof(fmt.name), "%s", name);
	free(copy);
	v = realloc(f->v, (f->nr + 1) * sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		tp_format__exit(&fmt);
		return err;
	}
	f->v = v;
	f->v[f->nr++] = fmt;
	return 0;
}

int tp_formats__parse(const void *data, size_t size, struct tp_formats *f)
{
	struct cursor c = { data, (const unsigned char *)data + size };
	const char *version, *s;
	size_t len;
	uint32_t page_size, nr;
	uint8_t big_endian, long_size;
	char m[sizeof(magic)];
	int err;

	memset(f, 0, sizeof(*f));
	if (take(&c, m, sizeof(m)) || memcmp(m, magic, sizeof(m)))
		return -EINVAL;
	version = take_str(&c);
	if (!version)
		return -EINVAL;
	if (strcmp(version, "0.6"))
		return -EPROTONOSUPPORT;
	if (take(&c, &big_endian, 1) || take(&c, &long_size, 1) || take(&c, &page_size, 4))
		return -EINVAL;
	if (big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		return -EPROTONOSUPPORT;
	/* header_page, header_event: what perf needs for ftrace buffers, not us */
	for (int i = 0; i < 2; i++) {
		s = take_str(&c);
		if (!s || take_sized(&c, &s, &len))
			return -EINVAL;
	}
	if (take(&c, &nr, 4))
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		err = take_sized(&c, &s, &len);
		if (!err)
			err = add_format(f, "ftrace", s, len);
		if (err)
			goto fail;
	}
	err = -EINVAL;
	if (take(&c, &nr, 4))
		goto fail;
	for (uint32_t i = 0; i < nr; i++) {
		const char *system = take_str(&c);
		uint32_t n;

		if (!system || take(&c, &n, 4))
			goto fail;
		for (uint32_t j = 0; j < n; j++) {
			err = take_sized(&c, &s, &len);
			if (!err)
				err = add_format(f, system, s, len);
			if (err)
				goto fail;
			err = -EINVAL;
		}
	}
	/* kallsyms (u32 size), printk_formats (u32 size), saved_cmdlines (u64 size): optional tail */
	{
		uint32_t n32;

		if (take(&c, &n32, 4) || n32 > (size_t)(c.end - c.p))
			return 0;
		c.p += n32;
		if (take(&c, &n32, 4) || n32 > (size_t)(c.end - c.p))
			return 0;
		c.p += n32;
		if (take_sized(&c, &s, &len))
			return 0;
		f->cmdlines = malloc(len + 1);
		if (!f->cmdlines)
			return -ENOMEM;
		memcpy(f->cmdlines, s, len);
		f->cmdlines[len] = '\0';
	}
	return 0;
fail:
	tp_formats__exit(f);
	return err;
}

int tp_formats__read(const struct pdata_reader *r, struct tp_formats *f)
{
	const void *body;
	size_t size;

	memset(f, 0, sizeof(*f));
	if (pdata_reader__feature(r, PDATA_HEADER_TRACING_DATA, &body, &size))
		return -ENOENT;
	return tp_formats__parse(body, size, f);
}

const struct tp_format *tp_formats__find(const struct tp_formats *f, unsigned int id)
{
	for (size_t i = 0; i < f->nr; i++)
		if (f->v[i].id == id)
			return &f->v[i];
	return NULL;
}

void tp_formats__exit(struct tp_formats *f)
{
	for (size_t i = 0; i < f->nr; i++)
		tp_format__exit(&f->v[i]);
	free(f->v);
	free(f->cmdlines);
	memset(f, 0, sizeof(*f));
}
