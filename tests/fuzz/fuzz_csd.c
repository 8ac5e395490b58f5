// SPDX-License-Identifier: BSD-2-Clause
/*
 * CoreSight trace through `auxtrig script`: the input is the trace itself,
 * frame-formatted as an ETB, ETR or perf AUX buffer holds it (seed: the
 * real Juno capture of ../shared/data), written with the Juno's six ETMv4
 * descriptions and its memory image into a perf.data file (cs_fixture), then
 * decoded: branches or windows, one piece or cut in two by its AUX records,
 * formatted or, one input in three, as a RAW (TRBE) buffer of CPU 0.
 *
 * OpenCSD 1.3.3 dereferences NULL on some buffers: the decode must survive
 * that (a worker dies, one line says so) and never hang.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "auxtrig/decode/script.h"
#include "auxtrig/sys/log.h"
#include "cs_fixture.h"
#include "cs_fixture.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cs_fixture_opts fx = { .trace = data, .trace_len = size, .nr_aux = 1 + size % 2 };
	struct script_opts o = { .itrace = 'b', .jobs = 1 };
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	int rc;

	if (size < 16 || !cs_fixture__data_dir())
		return 0;
	if (size % 3 == 0) {
		fx.first_cpu = 0;
		fx.nr_cpus = 1;
		fx.aux_flags = 0x100;	/* PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW */
	}
	snprintf(path, sizeof(path), "%s/fuzz_csd.%d.data", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	log__set_level(LOG_ERR);
	if (cs_fixture__write(path, &fx, NULL))
		abort();
	o.input = path;
	o.windows = (size / 3) % 2;
	o.buildid_dir = "/nonexistent";
	rc = script__run(&o);
	if (rc < 0 || rc > 3)
		abort();
	unlink(path);
	return 0;
}
