// SPDX-License-Identifier: BSD-2-Clause
/* A sample's call stack as perf script prints it. */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <linux/perf_event.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/callchain.h"

size_t callchain__fprintf(struct binaries *b, const void *ips, __u64 nr, FILE *out)
{
	const unsigned char *p = ips;
	int space = -1;		/* 1 kernel, 0 user, -1 no marker yet: the address says */
	size_t printed = 0;

	for (__u64 i = 0; i < nr; i++) {
		const struct binary_map *m;
		char sym[512];
		__u64 ip, at;
		bool kernel;

		memcpy(&ip, p + 8 * i, 8);
		if (ip >= (__u64)PERF_CONTEXT_MAX) {
			/* perf's machine__resolve_callchain_sample(): a marker sets the address space */
			if (ip == (__u64)PERF_CONTEXT_KERNEL || ip == (__u64)PERF_CONTEXT_GUEST_KERNEL)
				space = 1;
			else if (ip == (__u64)PERF_CONTEXT_USER || ip == (__u64)PERF_CONTEXT_GUEST_USER)
				space = 0;
			continue;
		}
		kernel = space < 0 ? binaries__is_kernel(b, ip) : space;
		m = binaries__find_in(b, ip, kernel, false);
		/* perf's map__map_ip(): the kernel image's map is the identity */
		at = m && !(m->kernel && !strcmp(binaries__map_dso_name(m), "[kernel.kallsyms]")) ?
			ip - m->start + m->pgoff : ip;
		binaries__map_symoff(b, m, ip, true, sym, sizeof(sym));
		fprintf(out, "\t%16" PRIx64 " %s (%s)\n", (uint64_t)at, sym, binaries__map_dso_name(m));
		printed++;
	}
	return printed;
}
