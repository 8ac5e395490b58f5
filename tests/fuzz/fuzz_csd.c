// SPDX-License-Identifier: BSD-2-Clause
/*
 * CoreSight trace through `auxtrig script`: the input is the trace itself,
 * frame-formatted as an ETB, ETR or perf AUX buffer holds it (seed: the
 * real Juno capture of ../shared/data), written with the Juno's six ETMv4
 * descriptions and its memory image into a perf.data file (cs_fixture), then
 * decoded: branches or windows, one piece or cut in two by its AUX records,
 * formatted or, one input in three, as a RAW (TRBE) buffer of CPU 0; and,
 * one formatted input in two, with the cs_etm timestamp option, each trace
 * ID's bytes given a TIMESTAMP packet every 97 bytes and framed again, for
 * perf's timed order (csd_timed); one branch input in two printed with
 * -F flags,callindent (perf's branch kinds, the column the parent pads).
 *
 * OpenCSD 1.3.3 dereferences NULL on some buffers: the decode must survive
 * that (a worker dies, one line says so) and never hang.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "auxtrig/decode/script.h"
#include "auxtrig/decode/script_fields.h"
#include "auxtrig/sys/log.h"
#include "cs_fixture.h"
#include "cs_fixture.c"

/* @data's trace IDs 0x10-0x15 with a TIMESTAMP packet every 97 bytes, framed again (malloc()ed). */
static unsigned char *stamped(const uint8_t *data, size_t size, size_t *out_len)
{
	static const unsigned int ids[CS_FIXTURE_NR_ETMS] = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15 };
	unsigned char *st[CS_FIXTURE_NR_ETMS] = { 0 }, *f = NULL;
	size_t sl[CS_FIXTURE_NR_ETMS] = { 0 };
	__u64 ts = 1000;

	for (int i = 0; i < CS_FIXTURE_NR_ETMS; i++) {
		size_t n;
		unsigned char *d = cs_fixture__deformat(data, size, ids[i], &n);

		st[i] = malloc(n + 8 * (n / 97 + 1) + 1);
		if (!d || !st[i]) {
			free(d);
			goto out;
		}
		for (size_t k = 0; k < n; k++) {
			if (k % 97 == 96) {
				st[i][sl[i]++] = 0x02;
				for (int b = 0; b < 7; b++)
					st[i][sl[i]++] = ((ts >> (7 * b)) & 0x7f) | (b < 6 ? 0x80 : 0);
				ts += 37 + i;
			}
			st[i][sl[i]++] = d[k];
		}
		free(d);
	}
	f = cs_fixture__format((const unsigned char *const *)st, sl, ids, CS_FIXTURE_NR_ETMS, 13, out_len);
out:
	for (int i = 0; i < CS_FIXTURE_NR_ETMS; i++)
		free(st[i]);
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cs_fixture_opts fx = { .trace = data, .trace_len = size, .nr_aux = 1 + size % 2 };
	unsigned char *timed = NULL;
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
	} else if ((size / 6) % 2) {
		timed = stamped(data, size, &fx.trace_len);
		if (!timed)
			abort();
		fx.trace = timed;
		fx.config = CS_FIXTURE_ETM_OPT_TS;
		fx.configr_or = CS_FIXTURE_TRCCONFIGR_TS;
	}
	snprintf(path, sizeof(path), "%s/fuzz_csd.%d.data", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	log__set_level(LOG_ERR);
	if (cs_fixture__write(path, &fx, NULL))
		abort();
	o.input = path;
	o.windows = !timed && (size / 3) % 2;
	/* one branch input in two with perf's flags and callindent (the parent pads the workers' columns) */
	if (!o.windows && (size / 5) % 2 && script_fields__parse(&o.fields, "cpu,flags,callindent,ip,sym,addr,dso"))
		abort();
	o.buildid_dir = "/nonexistent";
	rc = script__run(&o);
	if (rc < 0 || rc > 3)
		abort();
	unlink(path);
	free(timed);
	return 0;
}
