// SPDX-License-Identifier: BSD-2-Clause
/* HEADER_TRACING_DATA bodies (tp_formats__parse) as any file may carry them. */
#include <stddef.h>
#include <stdint.h>

#include "auxtrig/format/tp_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_formats f;

	if (!tp_formats__parse(data, size, &f) && f.nr)
		tp_formats__find(&f, f.v[0].id);
	tp_formats__exit(&f);
	return 0;
}
