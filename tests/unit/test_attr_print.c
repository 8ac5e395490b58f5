// SPDX-License-Identifier: BSD-2-Clause
/*
 * attr_print: perf record -vv's attr format. The oracle test has the real
 * perf 6.1 record an event with -vv and compares perf's printed attr with
 * ours for the attr perf wrote into its perf.data.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "auxtrig/record/attr_print.h"
#include "auxtrig/format/pdata.h"
#include "uapi/linux/perf_event_aux.h"
#include "perf_oracle.h"

static char *print_attr(const struct perf_event_attr *attr)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	attr_print__event(fp, attr);
	fclose(fp);
	return out;
}

static void test_attr_print_same_as_perf_record_vv(void **state)
{
	char *dir = test_tmpdir__new(), path[4200], *out, *file, *block, *end, *ours;
	const char *args[] = { "record", "-vv", "-N", "-e", "cpu-clock:u", "-c", "12345", "-o", path, "--", "true", NULL };
	struct pdata_file_header *h;
	struct perf_event_attr attr;

	(void)state;
	if (!perf_oracle__path()) {
		test_tmpdir__delete(dir);
		skip();
	}
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	if (perf_oracle__run(NULL, args, &out) != 0) {
		print_message("perf record cannot run here, skipping:\n%s\n", out);
		free(out);
		test_tmpdir__delete(dir);
		skip();
	}
	/* perf's first attr block: "perf_event_attr:" up to the dotted line */
	block = strstr(out, "perf_event_attr:\n");
	assert_non_null(block);
	end = strstr(block, "-----");
	assert_non_null(end);
	*end = '\0';
	assert_non_null(strstr(block, "  exclude_kernel                   1\n")); /* the :u we asked for */
	assert_non_null(strstr(block, "  { sample_period, sample_freq }   12345\n"));

	file = test_read_file(path, NULL);
	assert_non_null(file);
	h = (struct pdata_file_header *)file;
	memcpy(&attr, file + h->attrs.offset, sizeof(attr));
	ours = print_attr(&attr);
	if (strcmp(ours, block))
		fail_msg("perf printed:\n%s\nwe print:\n%s", block, ours);
	free(ours);
	free(file);
	free(out);
	test_tmpdir__delete(dir);
}

static void test_attr_print_aux_action_and_reserved_bits(void **state)
{
	struct perf_event_attr a = { .type = 8, .size = 128 };
	char *out;

	(void)state;
	*perf_attr_aux_action(&a) = AUXTRIG_AUX_START_PAUSED | AUXTRIG_AUX_RESUME | (1u << 5);
	out = print_attr(&a);
	assert_string_equal(out, "perf_event_attr:\n"
				 "  type                             8\n"
				 "  size                             128\n"
				 "  aux_start_paused                 1\n"
				 "  aux_resume                       1\n"
				 "  aux_action                       0x20\n");
	free(out);
}

static void test_attr_print_formats_like_perf(void **state)
{
	struct perf_event_attr a = {};
	char *out;

	(void)state;
	a.sample_type = PDATA_SAMPLE_TYPE | PERF_SAMPLE_ADDR;
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_GROUP;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY;
	a.use_clockid = 1;
	a.clockid = -1;
	a.wakeup_events = 3;
	a.bp_type = 3;
	a.bp_addr = 0x1000;
	a.bp_len = 8;
	out = print_attr(&a);
	assert_string_equal(out, "perf_event_attr:\n"
				 "  sample_type                      IP|TID|TIME|ADDR|CPU|PERIOD|RAW|IDENTIFIER\n"
				 "  read_format                      ID|GROUP\n"
				 "  use_clockid                      1\n"
				 "  { wakeup_events, wakeup_watermark } 3\n"
				 "  bp_type                          3\n"
				 "  { bp_addr, config1 }             0x1000\n"
				 "  { bp_len, config2 }              0x8\n"
				 "  branch_sample_type               USER|ANY\n"
				 "  clockid                          -1\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attr_print_same_as_perf_record_vv),
		cmocka_unit_test(test_attr_print_aux_action_and_reserved_bits),
		cmocka_unit_test(test_attr_print_formats_like_perf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
