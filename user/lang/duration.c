// SPDX-License-Identifier: BSD-2-Clause
/* Durations on the command line: see include/auxtrig/lang/duration.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/duration.h"

int duration__parse(const char *text, __u64 *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;

	if (!text || !(*text >= '0' && *text <= '9'))
		return -EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v *= units[i].ns;
		if (!(v >= 0 && v <= 86400e9))
			return -EINVAL;
		*ns = (__u64)(v + 0.5);
		return 0;
	}
	return -EINVAL;
}
