// SPDX-License-Identifier: BSD-2-Clause
/* Linux errno names: see include/auxtrig/sys/errno_name.h. */
#include <string.h>

#include "auxtrig/sys/errno_name.h"

#include "errno_name_table.h"

const struct errno_entry *errno_name__find(int value)
{
	/* in value order, a few holes: a binary search */
	size_t lo = 0, hi = sizeof(errno_table) / sizeof(errno_table[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (errno_table[mid].value == value)
			return &errno_table[mid];
		if (errno_table[mid].value < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int errno_name__value(const char *name)
{
	for (size_t i = 0; i < sizeof(errno_table) / sizeof(errno_table[0]); i++)
		if (!strcmp(errno_table[i].name, name))
			return errno_table[i].value;
	return 0;
}
