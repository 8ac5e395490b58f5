// SPDX-License-Identifier: BSD-2-Clause
/*
 * A format file's text and a raw record (tp_format__parse, tp_print__format,
 * tp_print__fields): the input is the text, a NUL, then the record.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/format/tp_print.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	struct tp_format fmt = { 0 };
	char out[1024];

	if (!nul)
		return 0;
	if (tp_format__parse((const char *)data, &fmt))
		return 0;
	{
		size_t rsize = size - (size_t)(nul + 1 - data);
		void *rec = malloc(rsize ? rsize : 1);	/* exactly rsize bytes: ASan sees any over-read */

		if (rec) {
			memcpy(rec, nul + 1, rsize);
			if (tp_print__format(&fmt, rec, rsize, out, sizeof(out)))
				tp_print__fields(&fmt, rec, rsize, out, sizeof(out));
			free(rec);
		}
	}
	tp_format__exit(&fmt);
	return 0;
}
