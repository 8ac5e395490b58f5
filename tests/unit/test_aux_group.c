// SPDX-License-Identifier: BSD-2-Clause
/*
 * aux_group: golden attribute groups per use case and PMU fixture, and the
 * kernel's aux_action rules (each refused combination → the kernel's errno).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/record/attr_print.h"
#include "auxtrig/lang/aux_event.h"
#include "auxtrig/record/aux_group.h"
#include "auxtrig/sys/pmu.h"
#include "perf_oracle.h"

#define ENTER_OPENAT_ID 782 /* tests/fixtures/tracefs/events/syscalls/sys_enter_openat/id */
#define EXIT_OPENAT_ID  781
#define UPROBE_PATH     "/usr/bin/openat_demo"
#define UPROBE_OFFSET   0x1139

enum usecase { SYSCALL_WINDOW, UPROBE_WINDOW, ERROR_FREEZE, SNAPSHOT };
static const char *const usecase_names[] = { "syscall-window", "uprobe-window", "error-freeze", "snapshot" };

struct pmu_case {
	const char *fixture;
	const char *file;   /* golden suffix */
	const char *prefix; /* spec before the modifiers */
	bool aux_pause;     /* PERF_PMU_CAP_AUX_PAUSE */
};

static const struct pmu_case pmu_cases[] = {
	{ "sysfs-intel_pt", "intel_pt", "intel_pt//", true },
	{ "sysfs-cs_etm", "cs_etm", "cs_etm/@tmc_etr0/", true },
	{ "sysfs-arm_spe", "arm_spe", "arm_spe_0//", false },
};

static void read_tp_id(const char *name, __u64 expect)
{
	char rel[256], *s;

	snprintf(rel, sizeof(rel), "tracefs/events/syscalls/%s/id", name);
	s = test_read_file(test_fixture_path(rel), NULL);
	assert_non_null(s);
	assert_int_equal(strtoull(s, NULL, 10), expect);
	free(s);
}

static void build(struct pmu_set *set, const struct pmu_case *pc, enum usecase uc, struct aux_group *g)
{
	static const char *const mods[] = { "k", "u", "u", "" };
	static const enum aux_group_mode modes[] = { AUX_GROUP_WINDOW, AUX_GROUP_WINDOW, AUX_GROUP_FREEZE,
						     AUX_GROUP_SNAPSHOT };
	struct aux_event_opts opts = { .snapshot = uc >= ERROR_FREEZE, .aux_mmap_size = 4 << 20 };
	struct aux_group_caps caps = { .kernel_aux_action = true, .pmu_aux_pause = pc->aux_pause };
	struct aux_event ev;
	char spec[128];

	snprintf(spec, sizeof(spec), "%s%s", pc->prefix, mods[uc]);
	assert_int_equal(aux_event__parse(&ev, set, spec, &opts), 0);
	assert_int_equal(aux_group__init(g, &ev, modes[uc], 0), 0);
	switch (uc) {
	case SYSCALL_WINDOW:
		assert_int_equal(aux_group__add_tracepoint(g, "syscalls:sys_enter_openat", ENTER_OPENAT_ID,
							   AUXTRIG_AUX_RESUME), 0);
		assert_int_equal(aux_group__add_tracepoint(g, "syscalls:sys_exit_openat", EXIT_OPENAT_ID,
							   AUXTRIG_AUX_PAUSE), 0);
		break;
	case UPROBE_WINDOW:
		assert_int_equal(aux_group__add_uprobe(g, pmu_set__find(set, "uprobe"), UPROBE_PATH,
						       UPROBE_OFFSET, false, AUXTRIG_AUX_RESUME), 0);
		assert_int_equal(aux_group__add_uprobe(g, pmu_set__find(set, "uprobe"), UPROBE_PATH,
						       UPROBE_OFFSET, true, AUXTRIG_AUX_PAUSE), 0);
		break;
	case ERROR_FREEZE:
		assert_int_equal(aux_group__add_tracepoint(g, "syscalls:sys_exit_openat", EXIT_OPENAT_ID,
							   AUXTRIG_AUX_PAUSE), 0);
		break;
	case SNAPSHOT:
		break;
	}
	aux_group__add_tracking(g);
	assert_int_equal(aux_group__adapt(g, &caps), uc != SNAPSHOT && !pc->aux_pause);
	assert_int_equal(aux_group__validate(g, &caps), 0);
}

static void test_aux_group_matches_golden(void **state)
{
	int failures = 0;

	(void)state;
	read_tp_id("sys_enter_openat", ENTER_OPENAT_ID);
	read_tp_id("sys_exit_openat", EXIT_OPENAT_ID);
	for (size_t p = 0; p < sizeof(pmu_cases) / sizeof(pmu_cases[0]); p++) {
		struct pmu_set *set;

		assert_int_equal(pmu__scan(test_fixture_path(pmu_cases[p].fixture), &set), 0);
		for (int uc = SYSCALL_WINDOW; uc <= SNAPSHOT; uc++) {
			char rel[128], *golden, *out = NULL;
			size_t len = 0;
			struct aux_group g;
			FILE *fp = open_memstream(&out, &len);

			build(set, &pmu_cases[p], uc, &g);
			attr_print__group(fp, &g, ATTR_PRINT_PATHS);
			fclose(fp);
			snprintf(rel, sizeof(rel), "golden/%s-%s.txt", usecase_names[uc], pmu_cases[p].file);
			golden = test_read_file(test_fixture_path(rel), NULL);
			assert_non_null(golden);
			if (strcmp(golden, out)) {
				print_error("%s differs; got:\n%s\n", rel, out);
				failures++;
			}
			free(golden);
			free(out);
		}
		pmu_set__delete(set);
	}
	assert_int_equal(failures, 0);
}

static char *print_group(const struct aux_group *g)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	attr_print__group(fp, g, ATTR_PRINT_PATHS);
	fclose(fp);
	return out;
}

/* The golden comparison sees a single wrong bit anywhere in the group. */
static void test_aux_group_golden_catches_a_wrong_bit(void **state)
{
	char *golden = test_read_file(test_fixture_path("golden/syscall-window-intel_pt.txt"), NULL);
	struct pmu_set *set;
	struct aux_group g;
	char *out;

	(void)state;
	assert_non_null(golden);
	assert_int_equal(pmu__scan(test_fixture_path("sysfs-intel_pt"), &set), 0);
	for (int mutation = 0; mutation <= 6; mutation++) {
		build(set, &pmu_cases[0], SYSCALL_WINDOW, &g);
		switch (mutation) {
		case 1: *perf_attr_aux_action(&g.members[0].attr) = AUXTRIG_AUX_PAUSE; break; /* swapped roles */
		case 2: *perf_attr_aux_action(&g.leader.attr) = 0; break;		  /* not start paused */
		case 3: g.leader.attr.config &= ~(1ULL << 10); break;			  /* no tsc */
		case 4: g.members[1].attr.exclude_kernel = 1; break;			  /* would drop hits */
		case 5: g.members[0].attr.config = EXIT_OPENAT_ID; break;		  /* wrong tracepoint */
		case 6: g.tracking.attr.context_switch = 0; break;			  /* no switch records */
		}
		out = print_group(&g);
		if (mutation == 0)
			assert_string_equal(out, golden);
		else if (!strcmp(out, golden))
			fail_msg("mutation %d not caught", mutation);
		free(out);
	}
	pmu_set__delete(set);
	free(golden);
}

/*
 * A thread's group (cpu -1) is the CPU's, switch records included: per
 * thread they tell perf on which CPU the thread ran (its AUXTRACE names the
 * thread), and perf 6.1 decodes them with HAVE_SCHED_SWITCH 0.
 */
static void test_aux_group_per_thread_is_the_golden_group(void **state)
{
	char *golden = test_read_file(test_fixture_path("golden/syscall-window-intel_pt.txt"), NULL), *out;
	const char *head;
	struct pmu_set *set;
	struct aux_group g;

	(void)state;
	assert_non_null(golden);
	assert_int_equal(pmu__scan(test_fixture_path("sysfs-intel_pt"), &set), 0);
	build(set, &pmu_cases[0], SYSCALL_WINDOW, &g);
	g.cpu = -1;
	aux_group__add_tracking(&g);
	out = print_group(&g);
	head = "group leader: intel_pt//k (window, per thread)\n";
	assert_memory_equal(out, head, strlen(head));
	assert_string_equal(out + strlen(head) - 1, strchr(golden, '\n'));
	assert_int_equal(g.tracking.attr.context_switch, 1);
	free(out);
	pmu_set__delete(set);
	free(golden);
}

struct rules {
	struct pmu_set *set;
	struct aux_group g;
	struct aux_group_caps caps;
};

static int setup_rules(void **state)
{
	struct rules *r = calloc(1, sizeof(*r));
	struct aux_event ev;

	assert_int_equal(pmu__scan(test_fixture_path("sysfs-intel_pt"), &r->set), 0);
	assert_int_equal(aux_event__parse(&ev, r->set, "intel_pt//u", NULL), 0);
	assert_int_equal(aux_group__init(&r->g, &ev, AUX_GROUP_WINDOW, 0), 0);
	assert_int_equal(aux_group__add_tracepoint(&r->g, "syscalls:sys_enter_openat", ENTER_OPENAT_ID,
						   AUXTRIG_AUX_RESUME), 0);
	assert_int_equal(aux_group__add_tracepoint(&r->g, "syscalls:sys_exit_openat", EXIT_OPENAT_ID,
						   AUXTRIG_AUX_PAUSE), 0);
	r->caps.kernel_aux_action = true;
	r->caps.pmu_aux_pause = true;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), 0);
	*state = r;
	return 0;
}

static int teardown_rules(void **state)
{
	struct rules *r = *state;

	pmu_set__delete(r->set);
	free(r);
	return 0;
}

static __u32 *action(struct perf_event_attr *a)
{
	return perf_attr_aux_action(a);
}

static void test_aux_group_refuses_pause_and_resume_on_one_event(void **state)
{
	struct rules *r = *state;

	*action(&r->g.members[0].attr) = AUXTRIG_AUX_PAUSE | AUXTRIG_AUX_RESUME;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
}

static void test_aux_group_refuses_reserved_bits(void **state)
{
	struct rules *r = *state;

	*action(&r->g.members[0].attr) = AUXTRIG_AUX_RESUME | (1u << 3);
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
	*action(&r->g.members[0].attr) = 1u << 31;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
}

static void test_aux_group_refuses_aux_output_with_pause(void **state)
{
	struct rules *r = *state;

	r->g.members[1].attr.aux_output = 1;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EOPNOTSUPP);
}

static void test_aux_group_refuses_pause_on_the_leader(void **state)
{
	struct rules *r = *state;

	*action(&r->g.leader.attr) = AUXTRIG_AUX_PAUSE;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
}

static void test_aux_group_refuses_start_paused_on_a_member(void **state)
{
	struct rules *r = *state;

	*action(&r->g.members[0].attr) = AUXTRIG_AUX_START_PAUSED;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EOPNOTSUPP);
}

static void test_aux_group_refuses_start_paused_without_pmu_cap(void **state)
{
	struct rules *r = *state;

	r->caps.pmu_aux_pause = false;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EOPNOTSUPP);
	/* leader without aux_start_paused: the members' pause/resume is what fails */
	*action(&r->g.leader.attr) = 0;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
}

static void test_aux_group_refuses_triggers_under_a_non_aux_leader(void **state)
{
	struct rules *r = *state;

	r->g.leader_aux = false; /* e.g. a software event leading */
	*action(&r->g.leader.attr) = 0;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
}

static void test_aux_group_refuses_counting_trigger(void **state)
{
	struct rules *r = *state;

	r->g.members[0].attr.sample_period = 0;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
}

static void test_aux_group_old_kernel_refuses_any_bit(void **state)
{
	struct rules *r = *state;

	r->caps.kernel_aux_action = false;
	assert_int_equal(aux_group__validate(&r->g, &r->caps), -EINVAL);
}

static void test_aux_group_falls_back_to_ioctl_gating(void **state)
{
	struct rules *r = *state;

	r->caps.kernel_aux_action = false;
	assert_true(aux_group__adapt(&r->g, &r->caps));
	assert_true(r->g.gate_by_ioctl);
	assert_int_equal(*action(&r->g.leader.attr), 0);
	assert_int_equal(*action(&r->g.members[0].attr), 0);
	assert_int_equal(*action(&r->g.members[1].attr), 0);
	assert_int_equal(r->g.leader.attr.disabled, 1);
	assert_int_equal(aux_group__validate(&r->g, &r->caps), 0);
}

static void test_aux_group_caps_from_probe(void **state)
{
	struct aux_group_caps c;

	(void)state;
	aux_group_caps__from_probe(&c, PROBE_PAUSE_YES);
	assert_true(c.kernel_aux_action && c.pmu_aux_pause);
	aux_group_caps__from_probe(&c, PROBE_PAUSE_NO_PMU);
	assert_true(c.kernel_aux_action && !c.pmu_aux_pause);
	aux_group_caps__from_probe(&c, PROBE_PAUSE_NO_KERNEL);
	assert_true(!c.kernel_aux_action && !c.pmu_aux_pause);
	aux_group_caps__from_probe(&c, PROBE_PAUSE_UNKNOWN);
	assert_true(!c.kernel_aux_action && !c.pmu_aux_pause);
}

static void test_aux_group_uprobe_points_at_path(void **state)
{
	struct rules *r = *state;
	static const char path[] = UPROBE_PATH;

	assert_int_equal(aux_group__add_uprobe(&r->g, pmu_set__find(r->set, "uprobe"), path, 0x40,
					       true, AUXTRIG_AUX_PAUSE), 0);
	assert_ptr_equal((const char *)(uintptr_t)r->g.members[2].attr.config1, path);
	assert_int_equal(r->g.members[2].attr.config2, 0x40);
	assert_int_equal(r->g.members[2].attr.config, 1);
	assert_int_equal(r->g.members[2].attr.type, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aux_group_matches_golden),
		cmocka_unit_test(test_aux_group_golden_catches_a_wrong_bit),
		cmocka_unit_test(test_aux_group_per_thread_is_the_golden_group),
#define RULE(t) cmocka_unit_test_setup_teardown(t, setup_rules, teardown_rules)
		RULE(test_aux_group_refuses_pause_and_resume_on_one_event),
		RULE(test_aux_group_refuses_reserved_bits),
		RULE(test_aux_group_refuses_aux_output_with_pause),
		RULE(test_aux_group_refuses_pause_on_the_leader),
		RULE(test_aux_group_refuses_start_paused_on_a_member),
		RULE(test_aux_group_refuses_start_paused_without_pmu_cap),
		RULE(test_aux_group_refuses_triggers_under_a_non_aux_leader),
		RULE(test_aux_group_refuses_counting_trigger),
		RULE(test_aux_group_old_kernel_refuses_any_bit),
		RULE(test_aux_group_falls_back_to_ioctl_gating),
		RULE(test_aux_group_uprobe_points_at_path),
		cmocka_unit_test(test_aux_group_caps_from_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
