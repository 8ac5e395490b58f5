// SPDX-License-Identifier: BSD-2-Clause
/*
 * The syscall view (auxtrig script --format=syscalls) on any perf.data file:
 * the reader, the tracepoint formats, the pairing of enter and exit records
 * per thread, raw_syscalls numbers by the file's architecture, each argument
 * read by its format's name and type (strings through their __data_loc), the
 * return values. Seeds: recordings of openat_demo with -w syscall:openat and
 * with -S -w 'syscall:*' and a snapshot trigger (corpus/syscall_view/).
 *
 * What must hold: no crash, no leak, no read outside the input; every
 * refusal says why (a negative errno, never something else).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "auxtrig/decode/syscall_view.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pdata_reader *r;
	char path[4096];
	FILE *out;
	int err;

	fuzz_file__write("fuzz_syscall_view.data", data, size, path, sizeof(path));
	log__set_level(LOG_ERR);
	r = pdata_reader__open(path);
	if (r) {
		out = fopen("/dev/null", "w");
		if (!out)
			abort();
		err = syscall_view__print(r, path, out);
		if (err > 0)
			abort();	/* 0 or -errno, nothing else */
		fclose(out);
		pdata_reader__delete(r);
	}
	unlink(path);
	return 0;
}
