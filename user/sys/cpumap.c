// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/sys/cpumap.h"

int cpumap__parse(const char *list, int nr_cpus, bool *mask)
{
	const char *p = list;
	bool any = false;
	char *end;

	memset(mask, 0, nr_cpus * sizeof(*mask));
	while (*p) {
		long lo, hi;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			hi = strtol(p, &end, 10);
		}
		if (lo > hi || hi >= nr_cpus)
			return -EINVAL;
		for (long c = lo; c <= hi; c++)
			mask[c] = true;
		any = true;
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return any ? 0 : -EINVAL;
}
