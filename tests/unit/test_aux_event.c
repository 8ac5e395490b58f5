// SPDX-License-Identifier: BSD-2-Clause
/* aux_event: perf-style AUX event specs against the sysfs fixtures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/sys/pmu.h"
#include "perf_oracle.h"

#define PT_DEFAULT 0x300e601ULL /* pt|tsc|mtc|branch|mtc_period=3|psb_period=3 */
#define CS_CTXID   (1ULL << 14)
#define CS_TS      (1ULL << 28)
#define CS_CYCACC  (1ULL << 12)

static int setup(void **state, const char *fixture)
{
	struct pmu_set *set;

	assert_int_equal(pmu__scan(test_fixture_path(fixture), &set), 0);
	*state = set;
	return 0;
}

static int setup_pt(void **state) { return setup(state, "sysfs-intel_pt"); }
static int setup_cs(void **state) { return setup(state, "sysfs-cs_etm"); }
static int setup_spe(void **state) { return setup(state, "sysfs-arm_spe"); }

static int teardown(void **state)
{
	pmu_set__delete(*state);
	return 0;
}

/* Run aux_event__parse() with stderr captured; returns its result, *msg malloc()ed. */
static int parse_msg(struct pmu_set *set, const char *spec, const struct aux_event_opts *opts,
		     struct aux_event *ev, char **msg)
{
	char path[] = "/tmp/auxtrig-aux-event-XXXXXX";
	int fd = mkstemp(path), saved = dup(2), err;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	err = aux_event__parse(ev, set, spec, opts);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	*msg = test_read_file(path, NULL);
	unlink(path);
	assert_non_null(*msg);
	return err;
}

static void expect_error(struct pmu_set *set, const char *spec, int err, const char *text)
{
	struct aux_event ev;
	char *msg;

	assert_int_equal(parse_msg(set, spec, NULL, &ev, &msg), err);
	if (!strstr(msg, text))
		fail_msg("%s: message '%s' lacks '%s'", spec, msg, text);
	free(msg);
}

static void test_aux_event_pick_bit_like_perf(void **state)
{
	(void)state;
	assert_int_equal(aux_event__intel_pt_pick_bit(0x249, 3), 3);	/* Skylake mtc_periods */
	assert_int_equal(aux_event__intel_pt_pick_bit(0x3f, 3), 3);	/* psb_periods */
	assert_int_equal(aux_event__intel_pt_pick_bit(0x241, 3), 0);	/* 0, 6, 9: highest <= 3 */
	assert_int_equal(aux_event__intel_pt_pick_bit(0x240, 3), 6);	/* 6, 9: lowest above */
	assert_int_equal(aux_event__intel_pt_pick_bit(0, 3), -1);
}

static void test_aux_event_intel_pt_default(void **state)
{
	struct aux_event ev;

	assert_int_equal(aux_event__parse(&ev, *state, "intel_pt//u", NULL), 0);
	assert_int_equal(ev.kind, AUX_PMU_INTEL_PT);
	assert_int_equal(ev.attr.type, 8);
	assert_int_equal(ev.attr.size, 128);
	assert_int_equal(ev.attr.config, PT_DEFAULT);
	assert_int_equal(ev.attr.sample_period, 1);
	assert_int_equal(ev.attr.freq, 0);
	assert_int_equal(ev.attr.sample_type, PDATA_SAMPLE_TYPE);
	assert_int_equal(ev.attr.sample_id_all, 1);
	assert_int_equal(ev.attr.exclude_kernel, 1);
	assert_int_equal(ev.attr.exclude_hv, 1);
	assert_int_equal(ev.attr.exclude_user, 0);
	assert_int_equal(ev.attr.exclude_guest, 1);
	assert_int_equal(ev.attr.aux_watermark, 1 << 20); /* 4 MiB / 4 */
	assert_string_equal(ev.name, "intel_pt//u");
}

static void test_aux_event_intel_pt_terms_on_top_of_defaults(void **state)
{
	struct aux_event_opts snap = { .snapshot = true };
	struct aux_event ev;

	assert_int_equal(aux_event__parse(&ev, *state, "intel_pt/tsc,mtc,mtc_period=3,branch/u", NULL), 0);
	assert_int_equal(ev.attr.config, PT_DEFAULT);
	assert_int_equal(aux_event__parse(&ev, *state, "intel_pt/cyc,cyc_thresh=2/k", NULL), 0);
	assert_int_equal(ev.attr.config, PT_DEFAULT | 0x2 | (2 << 19));
	assert_int_equal(ev.attr.exclude_user, 1);
	assert_int_equal(ev.attr.exclude_kernel, 0);
	assert_int_equal(aux_event__parse(&ev, *state, "intel_pt/mtc_period=0,psb_period=0,noretcomp/", &snap), 0);
	assert_int_equal(ev.attr.config, (PT_DEFAULT & ~(0xfULL << 14) & ~(0xfULL << 24)) | (1 << 11));
	assert_int_equal(ev.attr.exclude_user + ev.attr.exclude_kernel + ev.attr.exclude_hv, 0);
	assert_int_equal(ev.attr.aux_watermark, 0); /* snapshot: no wakeups */
	assert_int_equal(aux_event__parse(&ev, *state, "intel_pt/tsc=0/uk", NULL), 0);
	assert_int_equal(ev.attr.config, PT_DEFAULT & ~(1ULL << 10));
	assert_int_equal(ev.attr.exclude_user + ev.attr.exclude_kernel + ev.attr.exclude_hv, 0);
}

static void test_aux_event_intel_pt_forces_pt(void **state)
{
	struct aux_event ev;
	char *msg;

	assert_int_equal(parse_msg(*state, "intel_pt/pt=0/", NULL, &ev, &msg), 0);
	assert_int_equal(ev.attr.config & 1, 1);
	assert_non_null(strstr(msg, "pt=0 doesn't make sense, forcing pt=1"));
	free(msg);
}

static void test_aux_event_intel_pt_rejects_bad_values(void **state)
{
	expect_error(*state, "intel_pt/mtc_period=2/", -ERANGE, "this CPU supports 0, 3, 6, 9");
	expect_error(*state, "intel_pt/cyc_thresh=14/", -ERANGE, "cyc_thresh");
	expect_error(*state, "intel_pt/psb_period=6/", -ERANGE, "psb_period");
	expect_error(*state, "intel_pt/frobnicate/", -ENOENT, "mtc_period");
	expect_error(*state, "intel_pt/mtc_period=x/", -EINVAL, "needs a number");
	expect_error(*state, "intel_pt//x", -EINVAL, "unknown modifier 'x'");
	expect_error(*state, "intel_pt", -EINVAL, "expected PMU/terms/modifiers");
}

static void test_aux_event_unknown_pmu(void **state)
{
	expect_error(*state, "cs_etm//u", -ENOENT, "no such PMU on this machine (try: auxtrig probe)");
	expect_error(*state, "cpu//u", -EINVAL, "does not record through the AUX area");
}

static void test_aux_event_cs_etm_defaults_and_sink(void **state)
{
	struct aux_event_opts per_thread = { .per_thread = true };
	struct aux_event ev;

	assert_int_equal(aux_event__parse(&ev, *state, "cs_etm/@tmc_etr0/k", NULL), 0);
	assert_int_equal(ev.kind, AUX_PMU_CS_ETM);
	assert_int_equal(ev.attr.type, 10);
	assert_int_equal(ev.attr.config, CS_CTXID | CS_TS);
	assert_int_equal(ev.attr.config2, 0x7a5a6a12);
	assert_string_equal(ev.sink, "tmc_etr0");
	assert_int_equal(ev.attr.exclude_user, 1);
	assert_int_equal(ev.attr.aux_watermark, 0); /* perf sets none for cs_etm */

	assert_int_equal(aux_event__parse(&ev, *state, "cs_etm/timestamp,cycacc/u", NULL), 0);
	assert_int_equal(ev.attr.config, CS_CTXID | CS_TS | CS_CYCACC);
	assert_int_equal(ev.attr.config2, 0);

	/* perf 6.1 adds contextid/timestamp only per CPU */
	assert_int_equal(aux_event__parse(&ev, *state, "cs_etm/cycacc/u", &per_thread), 0);
	assert_int_equal(ev.attr.config, CS_CYCACC);

	expect_error(*state, "cs_etm/@tmc_etr9/", -EINVAL, "tmc_etf0, tmc_etr0");
	expect_error(*state, "cs_etm/cc_threshold=4/", -EOPNOTSUPP, "config3");
}

static void test_aux_event_cs_etm_refuses_without_timestamps(void **state)
{
	struct pmu *cs = pmu_set__find(*state, "cs_etm");

	cs->etm_cpus[3].trcidr[0] &= ~(0x1fu << 24); /* TRCIDR0.TSSIZE = 0 */
	expect_error(*state, "cs_etm//", -EOPNOTSUPP, "timestamps aren't supported on cpu3");
}

static void test_aux_event_arm_spe(void **state)
{
	struct aux_event ev;

	assert_int_equal(aux_event__parse(&ev, *state, "arm_spe/ts_enable=1,load_filter=1/", NULL), 0);
	assert_int_equal(ev.kind, AUX_PMU_ARM_SPE);
	assert_string_equal(ev.pmu->name, "arm_spe_0");
	assert_int_equal(ev.attr.type, 11);
	assert_int_equal(ev.attr.config, (1ULL << 0) | (1ULL << 33));
	assert_int_equal(ev.attr.sample_period, 1024); /* caps/min_interval */
	assert_int_equal(ev.attr.exclude_user + ev.attr.exclude_kernel, 0);

	/* per CPU, timestamps by default (ts_enable, config:0), as perf records SPE */
	assert_int_equal(aux_event__parse(&ev, *state, "arm_spe_0//", NULL), 0);
	assert_int_equal(ev.attr.config, 1ULL << 0);
	assert_int_equal(ev.attr.config1, 0);
	assert_int_equal(ev.attr.aux_watermark, 0);
	assert_int_equal(aux_event__parse(&ev, *state, "arm_spe_0/ts_enable=0/", NULL), 0);
	assert_int_equal(ev.attr.config, 0);
	{
		struct aux_event_opts per_thread = { .per_thread = true };

		assert_int_equal(aux_event__parse(&ev, *state, "arm_spe_0//", &per_thread), 0);
		assert_int_equal(ev.attr.config, 0);
	}

	assert_int_equal(aux_event__parse(&ev, *state, "arm_spe/min_latency=20,event_filter=0x2/u", NULL), 0);
	assert_int_equal(ev.attr.config2, 20);
	assert_int_equal(ev.attr.config1, 2);
	expect_error(*state, "arm_spe/min_latency=4096/", -ERANGE, "min_latency");
	expect_error(*state, "arm_sp//", -ENOENT, "no such PMU");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aux_event_pick_bit_like_perf),
		cmocka_unit_test_setup_teardown(test_aux_event_intel_pt_default, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_aux_event_intel_pt_terms_on_top_of_defaults, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_aux_event_intel_pt_forces_pt, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_aux_event_intel_pt_rejects_bad_values, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_aux_event_unknown_pmu, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_aux_event_cs_etm_defaults_and_sink, setup_cs, teardown),
		cmocka_unit_test_setup_teardown(test_aux_event_cs_etm_refuses_without_timestamps, setup_cs, teardown),
		cmocka_unit_test_setup_teardown(test_aux_event_arm_spe, setup_spe, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
