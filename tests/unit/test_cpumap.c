// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <cmocka.h>

#include "auxtrig/sys/cpumap.h"

static void test_cpumap_ranges_and_singles(void **state)
{
	bool m[8];

	(void)state;
	assert_int_equal(cpumap__parse("0-2,5,7", 8, m), 0);
	assert_true(m[0] && m[1] && m[2] && !m[3] && !m[4] && m[5] && !m[6] && m[7]);
	assert_int_equal(cpumap__parse("3", 8, m), 0);
	assert_true(m[3] && !m[2] && !m[4]);
}

static void test_cpumap_rejects_bad_lists(void **state)
{
	bool m[4];

	(void)state;
	assert_int_equal(cpumap__parse("", 4, m), -EINVAL);
	assert_int_equal(cpumap__parse("4", 4, m), -EINVAL);     /* no such CPU */
	assert_int_equal(cpumap__parse("2-1", 4, m), -EINVAL);   /* backwards */
	assert_int_equal(cpumap__parse("1,,2", 4, m), -EINVAL);
	assert_int_equal(cpumap__parse("a", 4, m), -EINVAL);
	assert_int_equal(cpumap__parse("1-", 4, m), -EINVAL);
	assert_int_equal(cpumap__parse("-1", 4, m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpumap_ranges_and_singles),
		cmocka_unit_test(test_cpumap_rejects_bad_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
