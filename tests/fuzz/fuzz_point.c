// SPDX-License-Identifier: BSD-2-Clause
/*
 * The point grammar (user/lang/point.c): any text is either refused with a
 * reason or parsed, and a parsed point printed by point__format() parses
 * back to the same point (what -vv and the refusal messages print is what
 * the user can type).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/point.h"

#define MAX_TEXT 8192

static bool same_point(const struct point *a, const struct point *b)
{
	return a->kind == b->kind && !strcmp(a->sys, b->sys) && !strcmp(a->name, b->name) &&
	       !strcmp(a->path, b->path) && !strcmp(a->symbol, b->symbol) && !strcmp(a->provider, b->provider) &&
	       a->offset == b->offset && a->len == b->len && a->access == b->access;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct point p, q;
	static char text[MAX_TEXT + 1], out[sizeof(p.path) + sizeof(p.symbol) + sizeof(p.provider) + 64];
	char why[256];

	if (size > MAX_TEXT)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(why, 0x5a, sizeof(why));
	if (point__parse(&p, text, why, sizeof(why))) {
		if (!memchr(why, 0, sizeof(why)) || !why[0])
			abort();	/* a refusal always says why */
		return 0;
	}
	if (!point__kind_name(p.kind)[0] || (p.at_enter && p.at_exit))
		abort();
	point__format(&p, out, sizeof(out));
	if (point__parse(&q, out, why, sizeof(why)) || !same_point(&p, &q))
		abort();	/* the printed form is not the point that was parsed */
	return 0;
}
