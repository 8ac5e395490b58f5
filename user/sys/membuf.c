// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/sys/membuf.h"

void membuf__add(struct membuf *b, const void *p, size_t len)
{
	size_t cap;
	char *n;

	if (b->err || !len)
		return;
	if (b->len + len > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->p, cap);
		if (!n) {
			b->err = -ENOMEM;
			return;
		}
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
}

void membuf__u8(struct membuf *b, __u8 v)
{
	membuf__add(b, &v, sizeof(v));
}

void membuf__u32(struct membuf *b, __u32 v)
{
	membuf__add(b, &v, sizeof(v));
}

void membuf__u64(struct membuf *b, __u64 v)
{
	membuf__add(b, &v, sizeof(v));
}

void membuf__cstr(struct membuf *b, const char *s)
{
	membuf__add(b, s, strlen(s) + 1);
}
