/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_FUZZ_FILE_H
#define AUXTRIG_FUZZ_FILE_H

/* For targets whose reader takes a path: the input written to $TMPDIR/NAME.PID. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Write @data to a file of this process named after @name; its path in @path. Aborts on failure. */
static inline void fuzz_file__write(const char *name, const uint8_t *data, size_t size, char *path, size_t path_size)
{
	const char *tmp = getenv("TMPDIR");
	FILE *f;

	snprintf(path, path_size, "%s/%s.%d", tmp && *tmp ? tmp : "/tmp", name, (int)getpid());
	f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, size, 1, f) != 1)
		abort();
	fclose(f);
}

#endif
