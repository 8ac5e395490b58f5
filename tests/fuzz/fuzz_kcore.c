// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kcore reader (sys/kcore.c: kcore__parse_phdrs(), kcore__plan()) on
 * any bytes as a kcore file's head: a refusal or segments inside what the
 * header says; the pieces kept for a kernel's text and modules lie inside
 * those segments and inside the ranges asked for.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "auxtrig/sys/kcore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kcore_seg segs[KCORE_MAX_SEGS];
	static struct kcore_piece pieces[KCORE_MAX_SEGS];
	const struct kcore_text t = {
		.stext = 0xffffffff81000000ULL, .etext = 0xffffffff82000000ULL,
		.mod_start = 0xffffffffc0000000ULL, .mod_end = 0xffffffffc1000000ULL,
		.tramp = { 0xfffffe0000001000ULL }, .nr_tramp = 1,
	};
	size_t need = 0, n;
	int nr = kcore__parse_phdrs(data, size, segs, &need);

	if (nr == -EAGAIN) {
		if (need <= size)
			abort();
		return 0;
	}
	if (nr == -EINVAL)
		return 0;
	if (nr < 0 || nr > KCORE_MAX_SEGS || need > size)
		abort();
	n = kcore__plan(&t, segs, (size_t)nr, 4096, pieces);
	for (size_t i = 0; i < n; i++) {
		const struct kcore_piece *p = &pieces[i];
		bool inside = false;

		for (int s = 0; s < nr && !inside; s++)
			inside = p->addr >= segs[s].addr && p->addr - segs[s].addr < segs[s].len &&
				 p->len <= segs[s].len - (p->addr - segs[s].addr) &&
				 p->src_offset == segs[s].offset + (p->addr - segs[s].addr);
		if (!inside || !p->len || p->dst_offset < 4096)
			abort();
	}
	return 0;
}
