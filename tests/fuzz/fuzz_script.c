// SPDX-License-Identifier: BSD-2-Clause
/*
 * The whole decode path of `auxtrig script` on any perf.data file (seeds:
 * the real captures of ../shared/data, mutated): the reader, the sideband,
 * the binaries (the simpleperf capture's, under its symfs), the planning of
 * the pieces, the decode workers and their output; for files without
 * hardware trace the events and their call stacks (record -g, seeds in
 * corpus/script/). The mode comes from the
 * input's size: branches, --itrace=i, --windows, --call-trace, --packets.
 *
 * What must hold: no crash and no hang of auxtrig itself. A decoding
 * library that crashes on a piece (OpenCSD does on some) costs that piece
 * only: it runs in a worker process, whose death is reported, not suffered.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "auxtrig/decode/script.h"
#include "auxtrig/sys/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const symfs = "../shared/data/perf/cs_etm-arm64/symfs";
	struct script_opts o = { .itrace = 'b', .jobs = 1 + (size / 5) % 2 };
	char path[4096];
	int rc;

	fuzz_file__write("fuzz_script.data", data, size, path, sizeof(path));
	switch (size % 5) {
	case 1:
		o.itrace = 'i';
		break;
	case 2:
		o.windows = true;
		break;
	case 3:
		o.windows = o.call_trace = true;
		break;
	case 4:
		o.packets = true;
		break;
	}
	o.input = path;
	o.symfs = access(symfs, F_OK) ? NULL : symfs;
	o.buildid_dir = "/nonexistent";
	o.kallsyms = "/nonexistent";	/* binaries__add_kallsyms() has its own target, fuzz_kallsyms */
	log__set_level(LOG_ERR);
	rc = script__run(&o);
	if (rc < 0 || rc > 3)
		abort();	/* an exit status outside the documented ones */
	unlink(path);
	return 0;
}
