// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AUX reader's offsets checked by their real consumer: perf 6.1's
 * CoreSight decoder looks up every PERF_RECORD_AUX in the AUXTRACE buffers
 * by aux_head-space offset and cpu (cs_etm__queue_aux_fragment()) and
 * says "CS ETM: Couldn't find auxtrace buffer for aux_offset" when one is
 * missing. The kernel model produces the records and the trace, the reader
 * hands out the segments, the perf.data writer writes them, perf reads.
 */
#include <stdio.h>
#include <stdlib.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/record/aux_ring.h"
#include "auxtrig/record/data_ring.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "aux_model.h"
#include "perf_oracle.h"

#define CS_PMU_TYPE 10
#define EVENT_ID 77

_Static_assert(AUX_MODEL_SAMPLE_ID_SIZE == PDATA_SAMPLE_ID_SIZE, "the model's trailer is PDATA_SAMPLE_TYPE's");

struct perf_case {
	const char *what;
	bool overwrite;
	bool masked;		/* write offsets masked to the buffer: what perf must reject */
};

static const struct perf_case perf_cases[] = {
	{ "full trace", false, false },
	{ "snapshot", true, false },
	{ "full trace, masked offsets (control)", false, true },
	{ "snapshot, masked offsets (control)", true, true },
};

static int model_ctl(struct aux_ring *r, bool enable, void *arg)
{
	if (enable)
		aux_model__enable(arg);
	else
		aux_model__disable(arg);
	return 0;
}

static size_t drain(struct data_ring *dr, struct aux_ring *r, struct pdata_writer *w)
{
	const struct perf_event_header *h;
	size_t n = 0;

	data_ring__read_init(dr);
	while ((h = data_ring__read_event(dr))) {
		if (h->type == PERF_RECORD_AUX) {
			__u64 flags;

			memcpy(&flags, (const char *)h + 24, 8);
			aux_ring__note_aux_record(r, flags);
			n++;
		}
		assert_int_equal(pdata_writer__write(w, h, h->size), 0);
	}
	data_ring__consume(dr);
	return n;
}

static void put(struct aux_ring *r, const struct aux_ring_read *rd, bool masked, struct pdata_writer *w)
{
	struct pdata_record_auxtrace rec;

	aux_ring__auxtrace(r, rd, 0x1234, &rec);
	if (masked)
		rec.offset &= r->size - 1;
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, rd->data1, rd->len1, rd->data2, rd->len2), 0);
}

/* CoreSight AUXTRACE_INFO, header version 1 (what perf 6.1 reads), one ETMv4 CPU. */
static void write_cs_info(struct pdata_writer *w, bool snapshot)
{
	struct {
		struct pdata_record_auxtrace_info h;
		__u64 priv[3 + 3 + 7];
	} info = {};

	info.h.header.type = PDATA_RECORD_AUXTRACE_INFO;
	info.h.header.size = sizeof(info);
	info.h.type = PDATA_AUXTRACE_CS_ETM;
	info.priv[0] = 1;				/* CS_HEADER_VERSION */
	info.priv[1] = ((__u64)CS_PMU_TYPE << 32) | 1;	/* pmu type, nr cpus */
	info.priv[2] = snapshot;			/* CS_ETM_SNAPSHOT */
	info.priv[3] = 0x4040404040404040ULL;		/* ETMv4 magic */
	info.priv[4] = 0;				/* cpu */
	info.priv[5] = 7;				/* params */
	info.priv[6] = 0x1;				/* TRCCONFIGR */
	info.priv[7] = 0x10;				/* TRCTRACEIDR: legacy 0x10 + 2 * cpu */
	info.priv[8] = 0x28000ea1;			/* TRCIDR0 */
	info.priv[9] = 0x4100f403;			/* TRCIDR1 */
	info.priv[10] = 0x00000488;			/* TRCIDR2 */
	info.priv[11] = 0;				/* TRCIDR8 */
	info.priv[12] = 0xcc;				/* TRCAUTHSTATUS */
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void run_perf_case(const struct perf_case *pc, const char *dir)
{
	static const size_t writes[] = { 5000, 7000, 9000, 3000, 12000, 100, 16000 };
	struct aux_model_config mc = {
		.pmu = AUX_MODEL_CS_ETM, .overwrite = pc->overwrite, .data_pages = 16, .aux_pages = 4,
		.pid = 4242, .tid = 4243, .cpu = 0, .id = EVENT_ID,
	};
	struct aux_ring_config rc = {
		.ops = &aux_pmu_cs_etm, .overwrite = pc->overwrite, .idx = 0, .cpu = 0, .tid = -1,
		.per_cpu = true, .enable = model_ctl,
	};
	struct perf_event_attr attr = {};
	struct data_ring dr = {};
	struct aux_ring_read rd;
	struct pdata_writer *w;
	struct aux_model m;
	struct aux_ring r;
	__u64 ids[] = { EVENT_ID };
	unsigned char buf[16000];
	char path[4096], *out;
	const char *args[] = { "report", "-D", "-i", path, NULL };
	size_t nrec = 0;

	snprintf(path, sizeof(path), "%s/%s%s.data", dir, pc->overwrite ? "snap" : "full", pc->masked ? "-masked" : "");
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 1 + i % 251;
	assert_int_equal(aux_model__init(&m, &mc), 0);
	rc.enable_arg = &m;
	assert_int_equal(aux_ring__mmap(&r, aux_model__fd(&m), aux_model__user_page(&m), 4, &rc), 0);
	dr.base = aux_model__user_page(&m);
	dr.size = m.data_size;
	dr.bounce = malloc(65536);
	assert_non_null(dr.bounce);

	attr.type = CS_PMU_TYPE;
	attr.size = sizeof(attr);
	attr.sample_period = 1;
	attr.sample_type = PDATA_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	w = pdata_writer__open(path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &attr, "cs_etm//", ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	write_cs_info(w, pc->overwrite);

	aux_model__enable(&m);
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		aux_model__hw_write(&m, buf, writes[i]);
		if (!pc->overwrite) {
			aux_model__output_end(&m, 0);
			nrec += drain(&dr, &r, w);
			if (aux_ring__read(&r, &rd) > 0)
				put(&r, &rd, pc->masked, w);
			if (aux_ring__consume(&r))
				assert_int_equal(aux_ring__enable(&r), 0);
			aux_model__output_end(&m, 0); /* the next handle sees the new tail */
		} else {
			assert_int_equal(aux_ring__snapshot_start(&r), 0);
			nrec += drain(&dr, &r, w);
			if (aux_ring__snapshot(&r, &rd) > 0)
				put(&r, &rd, pc->masked, w);
			assert_int_equal(aux_ring__snapshot_finish(&r), 0);
		}
		assert_int_equal(pdata_writer__finish_round(w), 0);
	}
	nrec += drain(&dr, &r, w);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);
	aux_ring__munmap(&r);
	aux_model__exit(&m);
	free(dr.bounce);
	assert_int_equal(nrec, 7);

	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);
	assert_int_equal(count(out, "PERF_RECORD_AUX offset:"), 7);
	assert_int_equal(count(out, "PERF_RECORD_AUXTRACE size:"), 7);
	if (pc->masked) {
		if (!strstr(out, "Couldn't find auxtrace buffer"))
			fail_msg("%s: perf took offsets outside aux_head space:\n%s", pc->what, out);
	} else if (strstr(out, "Couldn't find auxtrace buffer")) {
		fail_msg("%s: perf could not match a PERF_RECORD_AUX:\n%s", pc->what, out);
	}
	free(out);
}

static void test_aux_ring_perf_cs_etm_matches_every_aux_record(void **state)
{
	char *dir;

	(void)state;
	if (!perf_oracle__path()) {
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			fail_msg("perf is not installed, and CI=true requires the perf oracle");
		skip();
	}
	dir = test_tmpdir__new();
	assert_non_null(dir);
	for (size_t i = 0; i < sizeof(perf_cases) / sizeof(perf_cases[0]); i++)
		run_perf_case(&perf_cases[i], dir);
	test_tmpdir__delete(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aux_ring_perf_cs_etm_matches_every_aux_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

