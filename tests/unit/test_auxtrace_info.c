// SPDX-License-Identifier: BSD-2-Clause
/*
 * auxtrace_info: the AUXTRACE_INFO records for Intel PT, CoreSight (ETMv4 and
 * ETE) and Arm SPE, byte by byte from the sysfs fixtures, and read back by
 * the real perf 6.1 (perf report -D prints every field we wrote).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/format/auxtrace_info.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/format/synth.h"
#include "perf_oracle.h"

struct fixture {
	struct test_datafile file;
	struct pmu_set *set;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_int_equal(test_datafile__new(&f->file), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pmu_set__delete(f->set);
	test_datafile__delete(&f->file);
	free(f);
	return 0;
}

static const struct pmu *scan(struct fixture *f, const char *fixture, const char *name)
{
	const struct pmu *pmu;

	assert_int_equal(pmu__scan(test_fixture_path(fixture), &f->set), 0);
	pmu = pmu_set__find(f->set, name);
	assert_non_null(pmu);
	return pmu;
}

static void parse(struct fixture *f, const char *spec, struct aux_event *ev)
{
	assert_int_equal(aux_event__parse(ev, f->set, spec, NULL), 0);
}

/*
 * 64 bytes of trace on cpu 0 as the kernel reports it (PERF_RECORD_AUX) and
 * perf record copies it (AUXTRACE). Without them CoreSight's decoder finds
 * no queued data and warns that it falls back to piped-mode decoding.
 */
static void write_aux(struct pdata_writer *w)
{
	struct {
		struct perf_event_header header;
		__u64 aux_offset, aux_size, flags;
		struct pdata_sample_id id;
	} aux = {};
	struct pdata_record_auxtrace rec = {};
	unsigned char payload[64] = {};

	rec.offset = 0;
	rec.reference = 0x1234;
	rec.idx = 0;
	rec.tid = (__u32)-1;
	rec.cpu = 0;
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, payload, sizeof(payload), NULL, 0), 0);
	aux.header.type = PERF_RECORD_AUX;
	aux.header.size = sizeof(aux);
	aux.aux_offset = 0;
	aux.aux_size = sizeof(payload);
	aux.id.pid = aux.id.tid = (__u32)-1;
	aux.id.time = 1000000000ULL;
	aux.id.cpu = 0;
	aux.id.id = 401;
	assert_int_equal(pdata_writer__write(w, &aux, sizeof(aux)), 0);
}

/* A file with the AUX attr, the tracking dummy, a kernel map and @info. */
static void write_file(struct fixture *f, const struct aux_event *ev, const void *info, size_t len)
{
	struct perf_event_attr dummy = {};
	__u64 aux_ids[] = { 401 }, dummy_ids[] = { 402 };
	struct pdata_writer *w;
	char path[4200];
	FILE *k;

	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.size = sizeof(dummy);
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.sample_period = 1;
	dummy.sample_type = PDATA_SAMPLE_TYPE;
	dummy.sample_id_all = 1;
	w = pdata_writer__open(f->file.path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &ev->attr, ev->name, aux_ids, 1), 0);
	assert_int_equal(pdata_writer__add_attr(w, &dummy, "dummy:u", dummy_ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(pdata_writer__write(w, info, len), 0);
	snprintf(path, sizeof(path), "%s/kallsyms", f->file.dir);
	k = fopen(path, "w");
	assert_non_null(k);
	fputs("ffffffff81000000 T _stext\nffffffff81000000 T _text\n", k);
	fclose(k);
	assert_int_equal(synth__kernel_mmap(w, path), 0);
	write_aux(w);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);
}

static char *perf_dump(struct fixture *f)
{
	const char *dump[] = { "report", "-D", "-i", f->file.path, NULL };
	const char *bad;
	char *out;

	assert_int_equal(perf_oracle__run(NULL, dump, &out), 0);
	bad = perf_oracle__problem(out);
	if (bad || strstr(out, "Unknown Header Version"))
		fail_msg("perf report -D reports a problem: %.200s\n%s", bad ? bad : "Unknown Header Version", out);
	return out;
}

static void expect(const char *out, const char *what)
{
	if (!strstr(out, what))
		fail_msg("perf report -D lacks '%s':\n%s", what, out);
}

static void expect_all(const char *out, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect(out, want[i]);
}

#define EXPECT_ALL(out, want) expect_all(out, want, sizeof(want) / sizeof(want[0]))

static const struct auxtrace_info_pt_opts pt_opts = {
	.time = { .time_shift = 31, .time_mult = 1234567, .time_zero = 0xfffff00012345678ULL,
		  .cap_user_time_zero = true },
	.have_sched_switch = 3,
	.snapshot = false,
	.per_cpu_mmaps = true,
	.tsc_ctc_n = 334,
	.tsc_ctc_d = 2,
};

static void test_auxtrace_info_intel_pt_layout(void **state)
{
	struct fixture *f = *state;
	const struct pmu *pmu = scan(f, "sysfs-intel_pt", "intel_pt");
	struct auxtrace_info_pt_opts opts = pt_opts;
	struct pdata_record_auxtrace_info *rec;
	struct aux_event ev;
	size_t len;

	parse(f, "intel_pt//u", &ev);
	assert_int_equal(auxtrace_info__max_nonturbo_ratio(test_fixture_path("sysfs-intel_pt"),
							   &opts.max_nonturbo_ratio), 0);
	assert_int_equal(opts.max_nonturbo_ratio, 40);
	assert_int_equal(auxtrace_info__intel_pt(pmu, &ev.attr, &opts, &rec, &len), 0);
	/* perf 6.1: 17 + Cap Event Trace = 18 u64, record size 160 */
	assert_int_equal(len, 160);
	assert_int_equal(rec->header.type, PDATA_RECORD_AUXTRACE_INFO);
	assert_int_equal(rec->header.size, 160);
	assert_int_equal(rec->type, PDATA_AUXTRACE_INTEL_PT);
	assert_int_equal(rec->priv[AUXTRACE_PT_PMU_TYPE], 8);
	assert_int_equal(rec->priv[AUXTRACE_PT_TIME_SHIFT], 31);
	assert_int_equal(rec->priv[AUXTRACE_PT_TIME_MULT], 1234567);
	assert_int_equal(rec->priv[AUXTRACE_PT_TIME_ZERO], 0xfffff00012345678ULL);
	assert_int_equal(rec->priv[AUXTRACE_PT_CAP_USER_TIME_ZERO], 1);
	assert_int_equal(rec->priv[AUXTRACE_PT_TSC_BIT], 1 << 10);
	assert_int_equal(rec->priv[AUXTRACE_PT_NORETCOMP_BIT], 1 << 11);
	assert_int_equal(rec->priv[AUXTRACE_PT_HAVE_SCHED_SWITCH], 3);
	assert_int_equal(rec->priv[AUXTRACE_PT_SNAPSHOT_MODE], 0);
	assert_int_equal(rec->priv[AUXTRACE_PT_PER_CPU_MMAPS], 1);
	assert_int_equal(rec->priv[AUXTRACE_PT_MTC_BIT], 1 << 9);
	assert_int_equal(rec->priv[AUXTRACE_PT_MTC_FREQ_BITS], 0xf << 14);
	assert_int_equal(rec->priv[AUXTRACE_PT_TSC_CTC_N], 334);
	assert_int_equal(rec->priv[AUXTRACE_PT_TSC_CTC_D], 2);
	assert_int_equal(rec->priv[AUXTRACE_PT_CYC_BIT], 1 << 1);
	assert_int_equal(rec->priv[AUXTRACE_PT_MAX_NONTURBO_RATIO], 40);
	assert_int_equal(rec->priv[AUXTRACE_PT_FILTER_STR_LEN], 0);
	assert_int_equal(rec->priv[17], 0); /* caps/event_trace of Skylake */
	free(rec);

	/* no user time zero (or time_mult 0) ⇒ 0: the decoder then decodes timeless */
	opts.time.time_mult = 0;
	assert_int_equal(auxtrace_info__intel_pt(pmu, &ev.attr, &opts, &rec, &len), 0);
	assert_int_equal(rec->priv[AUXTRACE_PT_CAP_USER_TIME_ZERO], 0);
	free(rec);

	ev.attr.type = 9;
	assert_int_equal(auxtrace_info__intel_pt(pmu, &ev.attr, &opts, &rec, &len), -EINVAL);
}

static void test_auxtrace_info_intel_pt_filter(void **state)
{
	struct fixture *f = *state;
	const struct pmu *pmu = scan(f, "sysfs-intel_pt", "intel_pt");
	struct auxtrace_info_pt_opts opts = pt_opts;
	struct pdata_record_auxtrace_info *rec;
	struct aux_event ev;
	const char *filter = "filter main @ /usr/bin/openat_demo"; /* 34 chars → 40 bytes */
	size_t len;
	char *out;

	parse(f, "intel_pt//u", &ev);
	opts.filter = filter;
	assert_int_equal(auxtrace_info__intel_pt(pmu, &ev.attr, &opts, &rec, &len), 0);
	assert_int_equal(len, 16 + 8 * (17 + 5 + 1));
	assert_int_equal(rec->priv[AUXTRACE_PT_FILTER_STR_LEN], strlen(filter));
	assert_string_equal((const char *)&rec->priv[17], filter);
	assert_int_equal(rec->priv[17 + 5], 0); /* Cap Event Trace after the padded string */

	perf_oracle__need();
	write_file(f, &ev, rec, len);
	out = perf_dump(f);
	expect(out, "  Filter string len.  34\n");
	expect(out, "  Filter string       filter main @ /usr/bin/openat_demo\n");
	expect(out, "  Cap Event Trace     0\n");
	free(out);
	free(rec);
}

static void test_auxtrace_info_intel_pt_perf_reads_it(void **state)
{
	struct fixture *f = *state;
	const struct pmu *pmu = scan(f, "sysfs-intel_pt", "intel_pt");
	struct auxtrace_info_pt_opts opts = pt_opts;
	struct pdata_record_auxtrace_info *rec;
	struct aux_event ev;
	size_t len;
	char *out;
	static const char *const want[] = {
		"PERF_RECORD_AUXTRACE_INFO type: 1",
		"  PMU Type            8\n",
		"  Time Shift          31\n",
		"  Time Muliplier      1234567\n",
		"  Time Zero           18446726481828927096\n",
		"  Cap Time Zero       1\n",
		"  TSC bit             0x400\n",
		"  NoRETComp bit       0x800\n",
		"  Have sched_switch   3\n",
		"  Snapshot mode       0\n",
		"  Per-cpu maps        1\n",
		"  MTC bit             0x200\n",
		"  MTC freq bits       0x3c000\n",
		"  TSC:CTC numerator   334\n",
		"  TSC:CTC denominator 2\n",
		"  CYC bit             0x2\n",
		"  Max non-turbo ratio 40\n",
		"  Filter string len.  0\n",
		"  Cap Event Trace     0\n",
	};

	perf_oracle__need();
	parse(f, "intel_pt//u", &ev);
	opts.max_nonturbo_ratio = 40;
	assert_int_equal(auxtrace_info__intel_pt(pmu, &ev.attr, &opts, &rec, &len), 0);
	write_file(f, &ev, rec, len);
	out = perf_dump(f);
	EXPECT_ALL(out, want);
	free(out);
	free(rec);
}

static void test_auxtrace_info_cs_etm_layout(void **state)
{
	struct fixture *f = *state;
	const struct pmu *pmu = scan(f, "sysfs-cs_etm", "cs_etm");
	struct pdata_record_auxtrace_info *rec;
	int cpus[] = { 0, 1, 2, 3, 4, 5 };
	struct aux_event ev;
	size_t len;

	parse(f, "cs_etm//u", &ev);
	assert_int_equal(auxtrace_info__cs_etm(pmu, &ev.attr, cpus, 6, true, &rec, &len), 0);
	assert_int_equal(len, 16 + 8 * (3 + 6 * 10));
	assert_int_equal(rec->type, PDATA_AUXTRACE_CS_ETM);
	assert_int_equal(rec->priv[0], 1);
	assert_int_equal(rec->priv[1], (10ULL << 32) | 6);
	assert_int_equal(rec->priv[2], 1);
	for (int c = 0; c < 6; c++) {
		const __u64 *b = &rec->priv[3 + 10 * c];

		assert_int_equal(b[0], AUXTRACE_CS_ETMV4_MAGIC);
		assert_int_equal(b[1], c);
		assert_int_equal(b[2], 7);
		assert_int_equal(b[3], 0x840); /* contextid → CID(6), timestamp → TS(11) */
		assert_int_equal(b[4], 0x10 + 2 * c);
		assert_int_equal(b[5], 0x28000ea1); /* Juno TRCIDR0 */
		assert_int_equal(b[6], c < 4 ? 0x4100f403 : 0x4100f402); /* A57 r1 / A53 */
		assert_int_equal(b[7], 0x488);
		assert_int_equal(b[8], 0);
		assert_int_equal(b[9], 0xcc);
	}
	free(rec);

	cpus[0] = 6;
	assert_int_equal(auxtrace_info__cs_etm(pmu, &ev.attr, cpus, 1, false, &rec, &len), -ENOENT);
}

static void test_auxtrace_info_cs_trcconfigr_follows_config(void **state)
{
	(void)state;
	assert_int_equal(auxtrace_info__cs_trcconfigr(0), 0);
	assert_int_equal(auxtrace_info__cs_trcconfigr(1ULL << 12), 1 << 4);	 /* cycacc */
	assert_int_equal(auxtrace_info__cs_trcconfigr(1ULL << 14), 1 << 6);	 /* contextid1 */
	assert_int_equal(auxtrace_info__cs_trcconfigr(1ULL << 15), 0x8080);	 /* contextid2 → VMID|VMIDOPT */
	assert_int_equal(auxtrace_info__cs_trcconfigr(1ULL << 28), 1 << 11);	 /* timestamp */
	assert_int_equal(auxtrace_info__cs_trcconfigr(1ULL << 29), 1 << 12);	 /* retstack */
	assert_int_equal(auxtrace_info__cs_trcconfigr(1ULL << 8), 1 << 3);	 /* branch_broadcast */
	assert_int_equal(auxtrace_info__cs_trcconfigr(0xf), 0);			 /* preset: not in TRCCONFIGR */
	assert_int_equal(auxtrace_info__cs_trace_id(0), 0x10);
	assert_int_equal(auxtrace_info__cs_trace_id(5), 0x1a);
	assert_int_equal(auxtrace_info__cs_trace_id(47), 0x6e);
}

/*
 * Trace IDs are 7 bits, 0x01..0x6f valid: CPUs 0..47 have the legacy even IDs,
 * the next 56 the odd ones in allocation order (the kernel's allocator), all
 * distinct, so that perf 6.1 (which refuses two CPUs with one ID) reads a
 * 104-CPU file; beyond that there is no ID.
 */
static void test_auxtrace_info_cs_trace_ids_distinct_and_valid(void **state)
{
	unsigned char seen[0x80] = { 0 };

	(void)state;
	for (int cpu = 0; cpu < 104; cpu++) {
		__u64 id = auxtrace_info__cs_trace_id(cpu);

		if (id < 0x01 || id > 0x6f)
			fail_msg("cpu %d: trace ID %#llx is not a valid one", cpu, (unsigned long long)id);
		if (seen[id]++)
			fail_msg("cpu %d: trace ID %#llx given twice", cpu, (unsigned long long)id);
	}
	assert_int_equal(auxtrace_info__cs_trace_id(48), 0x01);
	assert_int_equal(auxtrace_info__cs_trace_id(49), 0x03);
	assert_int_equal(auxtrace_info__cs_trace_id(103), 0x6f);
	assert_int_equal(auxtrace_info__cs_trace_id(104), 0);
}

static void test_auxtrace_info_cs_etm_perf_reads_it(void **state)
{
	struct fixture *f = *state;
	const struct pmu *pmu = scan(f, "sysfs-cs_etm", "cs_etm");
	struct pdata_record_auxtrace_info *rec;
	int cpus[] = { 0, 1, 2, 3, 4, 5 };
	struct aux_event ev;
	size_t len;
	char *out;
	static const char *const want[] = {
		"PERF_RECORD_AUXTRACE_INFO type: 3",
		"\tHeader version\t\t       1\n",
		"\tPMU type/num cpus\t       a00000006\n",
		"\tSnapshot\t\t       0\n",
		"\tMagic number\t\t       4040404040404040\n",
		"\tCPU\t\t\t       5\n",
		"\tNR_TRC_PARAMS\t\t       7\n",
		"\tTRCCONFIGR\t\t       850\n", /* TS(11)|CID(6)|CCI(4) */
		"\tTRCTRACEIDR\t\t       1a\n",
		"\tTRCIDR0\t\t\t       28000ea1\n",
		"\tTRCIDR1\t\t\t       4100f402\n",
		"\tTRCIDR2\t\t\t       488\n",
		"\tTRCIDR8\t\t\t       0\n",
		"\tTRCAUTHSTATUS\t\t       cc\n",
		"PERF_RECORD_AUXTRACE size: 0x40",
	};

	perf_oracle__need();
	parse(f, "cs_etm/cycacc/u", &ev);
	assert_int_equal(auxtrace_info__cs_etm(pmu, &ev.attr, cpus, 6, false, &rec, &len), 0);
	write_file(f, &ev, rec, len);
	out = perf_dump(f);
	EXPECT_ALL(out, want);
	free(out);
	free(rec);
}

/* An ETE (Armv9) CPU: TRCDEVARCH ARCHVER 5, ARCHPART 0xA13 → the ETE block with TRCDEVARCH. */
static void test_auxtrace_info_ete_perf_reads_it(void **state)
{
	struct fixture *f = *state;
	struct pmu *pmu = (struct pmu *)scan(f, "sysfs-cs_etm", "cs_etm");
	struct pdata_record_auxtrace_info *rec;
	int cpus[] = { 0, 1 };
	struct aux_event ev;
	size_t len;
	char *out;
	static const char *const want[] = {
		"\tMagic number\t\t       5050505050505050\n",
		"\tNR_TRC_PARAMS\t\t       8\n",
		"\tTRCDEVARCH                     47705a13\n",
		"\tMagic number\t\t       4040404040404040\n",
	};

	pmu->etm_cpus[0].has_trcdevarch = true;
	pmu->etm_cpus[0].trcdevarch = 0x47705a13;
	parse(f, "cs_etm//u", &ev);
	assert_int_equal(auxtrace_info__cs_etm(pmu, &ev.attr, cpus, 2, false, &rec, &len), 0);
	assert_int_equal(len, 16 + 8 * (3 + 11 + 10));
	assert_int_equal(rec->priv[3], AUXTRACE_CS_ETE_MAGIC);
	assert_int_equal(rec->priv[5], 8);
	assert_int_equal(rec->priv[13], 0x47705a13);
	assert_int_equal(rec->priv[14], AUXTRACE_CS_ETMV4_MAGIC);
	perf_oracle__need();
	write_file(f, &ev, rec, len);
	out = perf_dump(f);
	EXPECT_ALL(out, want);
	free(out);
	free(rec);
}

static void test_auxtrace_info_arm_spe_perf_reads_it(void **state)
{
	struct fixture *f = *state;
	const struct pmu *pmu = scan(f, "sysfs-arm_spe", "arm_spe_0");
	struct pdata_record_auxtrace_info *rec;
	struct aux_event ev;
	size_t len;
	char *out;
	static const char *const want[] = {
		"PERF_RECORD_AUXTRACE_INFO type: 4",
		"  PMU Type           11\n",
	};

	parse(f, "arm_spe/ts_enable=1,load_filter=1/", &ev);
	assert_int_equal(auxtrace_info__arm_spe(pmu, true, &rec, &len), 0);
	assert_int_equal(len, 32);
	assert_int_equal(rec->type, PDATA_AUXTRACE_ARM_SPE);
	assert_int_equal(rec->priv[0], 11);
	assert_int_equal(rec->priv[1], 1);
	perf_oracle__need();
	write_file(f, &ev, rec, len);
	out = perf_dump(f);
	EXPECT_ALL(out, want); /* perf 6.1 prints only the PMU type of a v1 record */
	free(out);
	free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
		T(test_auxtrace_info_intel_pt_layout),
		T(test_auxtrace_info_intel_pt_filter),
		T(test_auxtrace_info_intel_pt_perf_reads_it),
		T(test_auxtrace_info_cs_etm_layout),
		T(test_auxtrace_info_cs_trcconfigr_follows_config),
		T(test_auxtrace_info_cs_trace_ids_distinct_and_valid),
		T(test_auxtrace_info_cs_etm_perf_reads_it),
		T(test_auxtrace_info_ete_perf_reads_it),
		T(test_auxtrace_info_arm_spe_perf_reads_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
