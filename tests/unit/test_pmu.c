// SPDX-License-Identifier: BSD-2-Clause
/* PMU discovery against the sysfs fixtures in tests/fixtures/. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"

static char fixture_root[PATH_MAX];

static const char *fixture(const char *name)
{
	const char *top = getenv("AUXTRIG_TOP");

	snprintf(fixture_root, sizeof(fixture_root), "%s/tests/fixtures/%s", top ? top : ".", name);
	return fixture_root;
}

static int setup_intel_pt(void **state)
{
	struct pmu_set *set;

	assert_int_equal(pmu__scan(fixture("sysfs-intel_pt"), &set), 0);
	*state = set;
	return 0;
}

static int setup_cs_etm(void **state)
{
	struct pmu_set *set;

	assert_int_equal(pmu__scan(fixture("sysfs-cs_etm"), &set), 0);
	*state = set;
	return 0;
}

static int setup_arm_spe(void **state)
{
	struct pmu_set *set;

	assert_int_equal(pmu__scan(fixture("sysfs-arm_spe"), &set), 0);
	*state = set;
	return 0;
}

static int teardown_set(void **state)
{
	pmu_set__delete(*state);
	return 0;
}

static void test_pmu_format_parse(void **state)
{
	enum pmu_config_word w;
	__u64 m;

	assert_int_equal(pmu_format__parse("config:0-3", &w, &m), 0);
	assert_int_equal(w, PMU_CONFIG);
	assert_int_equal(m, 0xf);
	assert_int_equal(pmu_format__parse("config1:5\n", &w, &m), 0);
	assert_int_equal(w, PMU_CONFIG1);
	assert_int_equal(m, 1ull << 5);
	assert_int_equal(pmu_format__parse("config:0,3-4", &w, &m), 0);
	assert_int_equal(w, PMU_CONFIG);
	assert_int_equal(m, 0x19);
	assert_int_equal(pmu_format__parse("config2:0-63", &w, &m), 0);
	assert_int_equal(w, PMU_CONFIG2);
	assert_true(m == ~0ull);
	assert_int_equal(pmu_format__parse("config3:0-11", &w, &m), 0);
	assert_int_equal(w, PMU_CONFIG3);

	assert_int_equal(pmu_format__parse("config4:1", &w, &m), -EINVAL);
	assert_int_equal(pmu_format__parse("config:64", &w, &m), -EINVAL);
	assert_int_equal(pmu_format__parse("config:5-3", &w, &m), -EINVAL);
	assert_int_equal(pmu_format__parse("config:", &w, &m), -EINVAL);
	assert_int_equal(pmu_format__parse("config:1,", &w, &m), -EINVAL);
	assert_int_equal(pmu_format__parse("config:1x", &w, &m), -EINVAL);
	assert_int_equal(pmu_format__parse("1-3", &w, &m), -EINVAL);
}

static void test_pmu_format_encode_noncontiguous(void **state)
{
	struct pmu_format f = { .name = "x", .word = PMU_CONFIG, .mask = 0x19, .spec = "config:0,3-4" };

	assert_int_equal(pmu_format__max(&f), 7);
	assert_int_equal(pmu_format__encode(&f, 1), 0x1);
	assert_int_equal(pmu_format__encode(&f, 2), 0x8);
	assert_int_equal(pmu_format__encode(&f, 7), 0x19);
}

static void test_pmu_scan_intel_pt(void **state)
{
	struct pmu_set *set = *state;
	struct pmu *pt = pmu_set__find(set, "intel_pt");
	const struct pmu_format *f;

	assert_non_null(pt);
	assert_int_equal(pt->type, 8);
	assert_true(pt->aux);
	assert_int_equal(pt->nr_addr_filters, 2);
	assert_int_equal(pt->nr_formats, 14);
	assert_int_equal(pt->nr_caps, 18);
	/* intel_pt, intel_bts */
	assert_int_equal(pmu_set__nr_aux(set), 2);
	assert_false(pmu_set__find(set, "software")->aux);
	assert_int_equal(pmu_set__find(set, "tracepoint")->type, 2);
	assert_int_equal(pmu_set__find(set, "software")->nr_addr_filters, -1);

	f = pmu__find_format(pt, "mtc_period");
	assert_non_null(f);
	assert_int_equal(f->word, PMU_CONFIG);
	assert_int_equal(f->mask, 0xfull << 14);
	assert_string_equal(f->spec, "config:14-17");
	f = pmu__find_format(pt, "notnt");
	assert_int_equal(f->mask, 1ull << 55);
	assert_null(pmu__find_format(pt, "nosuch"));
}

static void test_pmu_caps_intel_pt_are_hex(void **state)
{
	struct pmu *pt = pmu_set__find(*state, "intel_pt");
	const struct pmu_cap *c;
	__u64 v;

	assert_int_equal(pmu__cap_value(pt, "mtc_periods", &v), 0);
	assert_int_equal(v, 0x249);
	assert_int_equal(pmu__cap_value(pt, "cycle_thresholds", &v), 0);
	assert_int_equal(v, 0x3fff);
	assert_int_equal(pmu__cap_value(pt, "psb_periods", &v), 0);
	assert_int_equal(v, 0x3f);
	assert_int_equal(pmu__cap_value(pt, "num_address_ranges", &v), 0);
	assert_int_equal(v, 2);
	c = pmu__find_cap(pt, "mtc_periods");
	assert_string_equal(c->raw, "249");
	assert_int_equal(pmu__cap_value(pt, "nosuch", &v), -ENOENT);
}

static void test_pmu_caps_text_and_decimal(void **state)
{
	struct pmu *cpu = pmu_set__find(*state, "cpu");
	__u64 v;

	assert_int_equal(pmu__cap_value(cpu, "pmu_name", &v), -EINVAL);
	assert_string_equal(pmu__find_cap(cpu, "pmu_name")->raw, "skylake");
	/* Other PMUs print decimal: "32" stays 32, not 0x32. */
	assert_int_equal(pmu__cap_value(cpu, "branches", &v), 0);
	assert_int_equal(v, 32);
}

static void test_pmu_config_term_intel_pt(void **state)
{
	struct pmu *pt = pmu_set__find(*state, "intel_pt");
	struct perf_event_attr attr = { 0 };

	assert_int_equal(pmu__config_term(pt, "mtc_period", 3, &attr), 0);
	assert_int_equal(attr.config, 3ull << 14);
	assert_int_equal(pmu__config_term(pt, "tsc", 1, &attr), 0);
	assert_int_equal(pmu__config_term(pt, "mtc", 1, &attr), 0);
	assert_int_equal(attr.config, (3ull << 14) | (1ull << 10) | (1ull << 9));
	/* Setting a field again replaces it. */
	assert_int_equal(pmu__config_term(pt, "mtc_period", 6, &attr), 0);
	assert_int_equal(attr.config, (6ull << 14) | (1ull << 10) | (1ull << 9));
	/* perf's default psb_period=3: 0x300e601 with pt, branch, mtc_period=3. */
	memset(&attr, 0, sizeof(attr));
	assert_int_equal(pmu__config_term(pt, "pt", 1, &attr), 0);
	assert_int_equal(pmu__config_term(pt, "tsc", 1, &attr), 0);
	assert_int_equal(pmu__config_term(pt, "mtc", 1, &attr), 0);
	assert_int_equal(pmu__config_term(pt, "mtc_period", 3, &attr), 0);
	assert_int_equal(pmu__config_term(pt, "psb_period", 3, &attr), 0);
	assert_int_equal(pmu__config_term(pt, "branch", 1, &attr), 0);
	assert_int_equal(attr.config, 0x300e601);
	assert_int_equal(attr.config1, 0);
	assert_int_equal(attr.config2, 0);
}

static void test_pmu_config_term_rejects(void **state)
{
	struct pmu *pt = pmu_set__find(*state, "intel_pt");
	struct perf_event_attr attr = { 0 };

	log__set_level(-1); /* the messages are the point elsewhere, not here */
	assert_int_equal(pmu__config_term(pt, "bogus", 1, &attr), -ENOENT);
	/* 4-bit field */
	assert_int_equal(pmu__config_term(pt, "mtc_period", 16, &attr), -ERANGE);
	/* fits the field, but caps/mtc_periods 0x249 allows only 0, 3, 6, 9 */
	assert_int_equal(pmu__config_term(pt, "mtc_period", 4, &attr), -ERANGE);
	assert_int_equal(pmu__config_term(pt, "tsc", 2, &attr), -ERANGE);
	assert_int_equal(attr.config, 0);
	log__set_level(LOG_INFO);
}

static void test_pmu_config_term_error_lists_valid(void **state)
{
	struct pmu *pt = pmu_set__find(*state, "intel_pt");
	struct perf_event_attr attr = { 0 };
	char buf[4096] = "";
	FILE *saved = stderr, *f;

	f = fmemopen(buf, sizeof(buf) - 1, "w");
	assert_non_null(f);
	stderr = f;
	pmu__config_term(pt, "bogus", 1, &attr);
	pmu__config_term(pt, "mtc_period", 4, &attr);
	fflush(f);
	stderr = saved;
	fclose(f);
	assert_non_null(strstr(buf, "intel_pt has no term 'bogus'"));
	assert_non_null(strstr(buf, "mtc_period"));
	assert_non_null(strstr(buf, "psb_period"));
	assert_non_null(strstr(buf, "supports 0, 3, 6, 9"));
}

static void test_pmu_scan_cs_etm(void **state)
{
	struct pmu *etm = pmu_set__find(*state, "cs_etm");
	struct perf_event_attr attr = { 0 };
	const struct pmu_format *f;

	assert_non_null(etm);
	assert_true(etm->aux);
	assert_int_equal(etm->type, 10);
	assert_int_equal(etm->nr_addr_filters, 8);
	assert_int_equal(pmu_set__nr_aux(*state), 1);

	f = pmu__find_format(etm, "timestamp");
	assert_int_equal(f->word, PMU_CONFIG);
	assert_int_equal(f->mask, 1ull << 28);
	f = pmu__find_format(etm, "sinkid");
	assert_int_equal(f->word, PMU_CONFIG2);
	assert_int_equal(f->mask, 0xffffffffull);
	f = pmu__find_format(etm, "cc_threshold");
	assert_int_equal(f->word, PMU_CONFIG3);

	assert_int_equal(etm->nr_sinks, 2);
	assert_string_equal(etm->sinks[0].name, "tmc_etf0");
	assert_string_equal(etm->sinks[1].name, "tmc_etr0");
	assert_int_equal(etm->sinks[1].id, 0x7a5a6a12);

	assert_int_equal(pmu__config_term(etm, "timestamp", 1, &attr), 0);
	assert_int_equal(pmu__config_term(etm, "sinkid", etm->sinks[1].id, &attr), 0);
	assert_int_equal(attr.config, 1ull << 28);
	assert_int_equal(attr.config2, 0x7a5a6a12);
	log__set_level(-1);
	assert_int_equal(pmu__config_term(etm, "cc_threshold", 1, &attr), -EOPNOTSUPP);
	log__set_level(LOG_INFO);
}

static void test_pmu_cs_etm_registers_from_juno(void **state)
{
	struct pmu *etm = pmu_set__find(*state, "cs_etm");

	assert_int_equal(etm->nr_etm_cpus, 6);
	for (size_t i = 0; i < etm->nr_etm_cpus; i++) {
		const struct pmu_etm_cpu *e = &etm->etm_cpus[i];

		assert_int_equal(e->cpu, (int)i);
		assert_int_equal(e->trcidr_present, 0x3f07); /* 0-2, 8-13 captured */
		assert_int_equal(e->trcidr[0], 0x28000ea1);
		assert_int_equal(e->trcidr[2], 0x488);
		assert_true(e->has_trcauthstatus);
		assert_int_equal(e->trcauthstatus, 0xcc);
		assert_true(e->has_trcconfig);
		assert_int_equal(e->trcconfig, 0xc1);
		assert_int_equal(e->trctraceid, 0x10 + i);
		assert_false(e->has_trcdevarch);
	}
	assert_int_equal(etm->etm_cpus[0].trcidr[1], 0x4100f403);
	assert_int_equal(etm->etm_cpus[5].trcidr[1], 0x4100f402);
}

static void test_pmu_scan_arm_spe(void **state)
{
	struct pmu *spe = pmu_set__find(*state, "arm_spe_0");
	const struct pmu_format *f;
	__u64 v;

	assert_non_null(spe);
	assert_true(spe->aux);
	assert_int_equal(spe->type, 11);
	assert_int_equal(spe->nr_formats, 9);
	/* ranges have no trailing newline in the kernel's strings */
	f = pmu__find_format(spe, "event_filter");
	assert_int_equal(f->word, PMU_CONFIG1);
	assert_true(f->mask == ~0ull);
	f = pmu__find_format(spe, "min_latency");
	assert_int_equal(f->word, PMU_CONFIG2);
	assert_int_equal(f->mask, 0xfff);
	/* decimal caps: "1024" is 1024 */
	assert_int_equal(pmu__cap_value(spe, "min_interval", &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(pmu__cap_value(spe, "count_size", &v), 0);
	assert_int_equal(v, 12);
	assert_false(pmu_set__find(*state, "armv8_pmuv3_0")->aux);
}

static void test_pmu_scan_missing_root(void **state)
{
	struct pmu_set *set;
	struct pmu *pmu;

	assert_int_equal(pmu__scan("/nonexistent-auxtrig-root", &set), 0);
	assert_int_equal(set->nr, 0);
	assert_int_equal(pmu_set__nr_aux(set), 0);
	assert_null(pmu_set__find(set, "intel_pt"));
	pmu_set__delete(set);
	assert_int_equal(pmu__read(fixture("sysfs-intel_pt"), "nosuch", &pmu), -ENOENT);
	assert_null(pmu);
	pmu_set__delete(NULL);
	pmu__delete(NULL);
}

static void test_pmu_is_aux_name(void **state)
{
	assert_true(pmu__is_aux_name("intel_pt"));
	assert_true(pmu__is_aux_name("intel_bts"));
	assert_true(pmu__is_aux_name("cs_etm"));
	assert_true(pmu__is_aux_name("arm_spe_0"));
	assert_true(pmu__is_aux_name("hisi_ptt0_2"));
	assert_false(pmu__is_aux_name("cpu"));
	assert_false(pmu__is_aux_name("software"));
}

/*
 * AUX trace PMUs reported missing (a test's answer or AUXTRIG_CAPS_OFF): the
 * machine's /sys then lists none, whatever this machine has; a --sysfs-root
 * fixture is not the machine and keeps its own.
 */
static void test_pmu_scan_aux_reported_missing(void **state)
{
	struct pmu_set *set = NULL;

	caps__simulate(CAPS_AUX_PMU, 0);
	assert_int_equal(pmu__scan(NULL, &set), 0);
	assert_int_equal(pmu_set__nr_aux(set), 0);
	assert_null(pmu_set__find(set, "intel_pt"));
	pmu_set__delete(set);
	assert_int_equal(pmu__scan(fixture("sysfs-intel_pt"), &set), 0);
	assert_non_null(pmu_set__find(set, "intel_pt"));
	assert_int_equal(pmu_set__nr_aux(set), 2);
	pmu_set__delete(set);
	caps__simulate(CAPS_AUX_PMU, -1);
}

static void test_pmu_check_root(void **state)
{
	char why[512];

	(void)state;
	assert_int_equal(pmu__check_root(fixture("sysfs-intel_pt"), why, sizeof(why)), 0);
	assert_int_equal(pmu__check_root("/nonexistent", why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "/nonexistent: No such file or directory (give a sysfs root such as /sys)");
	assert_int_equal(pmu__check_root("/etc/passwd", why, sizeof(why)), -ENOTDIR);
	assert_int_equal(pmu__check_root("/proc/self", why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "has no bus/event_source/devices/"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmu_format_parse),
		cmocka_unit_test(test_pmu_format_encode_noncontiguous),
		cmocka_unit_test(test_pmu_is_aux_name),
		cmocka_unit_test(test_pmu_scan_missing_root),
		cmocka_unit_test_setup_teardown(test_pmu_scan_intel_pt, setup_intel_pt, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_caps_intel_pt_are_hex, setup_intel_pt, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_caps_text_and_decimal, setup_intel_pt, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_config_term_intel_pt, setup_intel_pt, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_config_term_rejects, setup_intel_pt, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_config_term_error_lists_valid, setup_intel_pt, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_scan_cs_etm, setup_cs_etm, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_cs_etm_registers_from_juno, setup_cs_etm, teardown_set),
		cmocka_unit_test_setup_teardown(test_pmu_scan_arm_spe, setup_arm_spe, teardown_set),
		cmocka_unit_test(test_pmu_check_root),
		cmocka_unit_test(test_pmu_scan_aux_reported_missing),
	};

	return cmocka_run_group_tests_name("pmu", tests, NULL, NULL);
}
