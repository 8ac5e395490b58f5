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
 *   gen_decode spe OUT REPEAT      Arm SPE: REPEAT buffers of 64 KiB, each 1024 load records
 *                                  padded to 64 bytes as the driver leaves them (there is
 *                                  no SPE capture in the shared data)
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

/* One SPE load record at @ip and @va, padded to 64 bytes: the packets the lab's unit writes. */
static size_t spe_record(unsigned char *p, __u64 ip, __u64 va, __u64 ts, __u32 pid)
{
	size_t n = 0;

	p[n++] = 0xb0;	/* PC, el0 ns=1 */
	for (int i = 0; i < 8; i++)
		p[n++] = ((ip | 1ULL << 63) >> (8 * i)) & 0xff;
	p[n++] = 0x64;	/* CONTEXT */
	for (int i = 0; i < 4; i++)
		p[n++] = (pid >> (8 * i)) & 0xff;
	p[n++] = 0x49;	/* load, GP register */
	p[n++] = 0x00;
	p[n++] = 0x52;	/* events: retired, L1D access, L1D refill on every fourth */
	p[n++] = 0x06 | (ts % 4 ? 0 : 0x08);
	p[n++] = 0x00;
	p[n++] = 0x99;	/* issue latency */
	p[n++] = ts % 7;
	p[n++] = 0x00;
	p[n++] = 0x98;	/* total latency */
	p[n++] = 3 + ts % 11;
	p[n++] = 0x00;
	p[n++] = 0xb2;	/* data VA */
	for (int i = 0; i < 8; i++)
		p[n++] = (va >> (8 * i)) & 0xff;
	p[n++] = 0x71;	/* timestamp: ends the record */
	for (int i = 0; i < 8; i++)
		p[n++] = (ts >> (8 * i)) & 0xff;
	memset(p + n, 0, 64 - n);	/* PAD */
	return 64;
}

static int gen_spe(const char *out, int repeat)
{
	struct perf_event_attr attr = {
		.type = 11, .size = sizeof(attr), .sample_period = 1024, .sample_type = PDATA_SAMPLE_TYPE,
		.sample_id_all = 1, .disabled = 1, .exclude_kernel = 1,
	};
	__u64 ids[] = { 7 };
	__u64 info[sizeof(struct pdata_record_auxtrace_info) / 8 + 2] = { 0 };
	struct pdata_record_auxtrace_info *h = (void *)info;
	static unsigned char buf[64 << 10];
	struct pdata_writer *w = pdata_writer__open(out, true);
	__u64 ts = 1000000;
	int err;

	if (!w)
		return -errno;
	err = pdata_writer__add_attr(w, &attr, "arm_spe_0//u", ids, 1);
	if (!err)
		err = pdata_writer__begin_data(w);
	h->header.type = PDATA_RECORD_AUXTRACE_INFO;
	h->header.size = sizeof(info);
	h->type = PDATA_AUXTRACE_ARM_SPE;
	h->priv[0] = attr.type;
	h->priv[1] = 1;	/* per-CPU mmaps */
	if (!err)
		err = pdata_writer__write(w, info, sizeof(info));
	for (int k = 0; !err && k < repeat; k++) {
		struct pdata_record_auxtrace at = {
			.size = sizeof(buf), .offset = (__u64)k * sizeof(buf), .idx = k % 2, .tid = (__u32)-1, .cpu = k % 2,
		};

		for (size_t off = 0; off < sizeof(buf); ts += 3)
			off += spe_record(buf + off, 0x400000 + (ts % 4096) * 4, 0xffffc0001000ULL + (ts % 512) * 8, ts,
					  1234);
		err = pdata_writer__write_auxtrace(w, &at, buf, sizeof(buf), NULL, 0);
	}
	if (!err)
		err = pdata_writer__close(w);
	pdata_writer__delete(w);
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
	} else if (argc == 4 && !strcmp(argv[1], "spe")) {
		err = gen_spe(argv[2], atoi(argv[3]));
	} else if (argc == 5 && !strcmp(argv[1], "pt")) {
		err = gen_pt(argv[2], argv[3], atoi(argv[4]));
	} else {
		fprintf(stderr, "usage: gen_decode cs|cstimed|spe OUT REPEAT | gen_decode pt IN OUT REPEAT\n");
		return 2;
	}
	if (err) {
		fprintf(stderr, "gen_decode: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
