// SPDX-License-Identifier: BSD-2-Clause
/*
 * Input files for the decode bench (tests/bench/decode.sh), from the real
 * captures in ../shared/data:
 *
 *   gen_decode cs OUT REPEAT       the Juno ETB (six ETMv4) as REPEAT buffers of 64 KiB
 *   gen_decode cstimed OUT REPEAT  its six streams with TIMESTAMP packets (one every 20),
 *                                  frame-formatted again, as REPEAT buffers, the cs_etm
 *                                  timestamp option on (perf's timed decode)
 *   gen_decode pt IN OUT REPEAT    the Intel PT capture IN with its AUXTRACE buffers
 *                                  repeated REPEAT times (each copy after a gap, so each
 *                                  is decoded from its first PSB, as after data loss)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/pdata_writer.h"
#include "cs_fixture.h"

static int gen_pt(const char *in, const char *out, int repeat)
{
	struct pdata_reader *r = pdata_reader__open(in);
	struct pdata_writer *w;
	struct pdata_event ev;
	__u64 pos = 0, shift = 0;
	int ret, err = 0;

	if (!r)
		return -errno;
	w = pdata_writer__open(out, true);
	if (!w) {
		pdata_reader__delete(r);
		return -errno;
	}
	for (size_t i = 0; !err && i < pdata_reader__nr_attrs(r); i++) {
		const struct pdata_reader_attr *a = pdata_reader__attr(r, i);

		err = pdata_writer__add_attr(w, &a->attr, NULL, a->ids, a->nr_ids);
	}
	if (!err)
		err = pdata_writer__begin_data(w);
	/* the file's records once, its buffers REPEAT times, each copy after a gap */
	for (int k = 0; !err && k < repeat; k++) {
		pos = 0;
		while (!err && (ret = pdata_reader__next(r, &pos, &ev)) > 0) {
			if (ev.header->type == PDATA_RECORD_AUXTRACE) {
				struct pdata_record_auxtrace at;

				memcpy(&at, ev.header, sizeof(at));
				at.offset += shift;
				err = pdata_writer__write_auxtrace(w, &at, ev.aux, ev.aux_size, NULL, 0);
				continue;
			}
			if (k)
				continue;
			err = pdata_writer__write(w, ev.header, ev.header->size);
		}
		shift += 1ULL << 32;
	}
	if (!err)
		err = pdata_writer__close(w);
	pdata_writer__delete(w);
	pdata_reader__delete(r);
	return err;
}

int main(int argc, char **argv)
{
	int err = -EINVAL;

	if (argc == 4 && !strcmp(argv[1], "cs")) {
		struct cs_fixture_opts o = { .repeat = atoi(argv[3]) };

		err = cs_fixture__write(argv[2], &o, NULL);
	} else if (argc == 4 && !strcmp(argv[1], "cstimed")) {
		struct cs_fixture_timed t = {
			.every = 20, .ts0 = 1000, .tsk = 7, .step = 100, .repeat = atoi(argv[3]), .ts_option = true,
		};

		err = cs_fixture__write_timed(argv[2], &t);
	} else if (argc == 5 && !strcmp(argv[1], "pt")) {
		err = gen_pt(argv[2], argv[3], atoi(argv[4]));
	} else {
		fprintf(stderr, "usage: gen_decode cs|cstimed OUT REPEAT | gen_decode pt IN OUT REPEAT\n");
		return 2;
	}
	if (err) {
		fprintf(stderr, "gen_decode: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
