// SPDX-License-Identifier: BSD-2-Clause
/* Was a trace file recorded on the running kernel: see include/auxtrig/decode/same_kernel.h. */
#include <linux/perf_event.h>
#include <string.h>
#include <sys/utsname.h>

#include "auxtrig/decode/same_kernel.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/kcore.h"

/* HEADER_BUILD_ID's records: a perf_event_header, pid, 24 bytes of ID (size at 32 with misc bit 15), the name */
#define BID_REC_NAME_OFF 36
#define BID_REC_ID_OFF 12
#define BID_REC_SIZE_OFF 32
#define BID_MISC_HAS_SIZE (1 << 15)

bool same_kernel__running(struct pdata_reader *r)
{
	const char *release = pdata_reader__feature_string(r, PDATA_HEADER_OSRELEASE);
	const unsigned char *p, *end;
	__u8 bid[20];
	size_t len, size;
	const void *body;
	struct utsname u;

	if (!release || uname(&u) || strcmp(release, u.release))
		return false;
	if (pdata_reader__feature(r, PDATA_HEADER_BUILD_ID, &body, &size) || kcore__build_id("/sys/kernel/notes", bid, &len))
		return true;
	for (p = body, end = p + size; end - p > BID_REC_NAME_OFF;) {
		struct perf_event_header h;
		size_t blen = 20;

		memcpy(&h, p, sizeof(h));
		if (h.size <= BID_REC_NAME_OFF || h.size > end - p)
			break;
		if (h.misc & BID_MISC_HAS_SIZE)
			blen = p[BID_REC_SIZE_OFF] <= 20 ? p[BID_REC_SIZE_OFF] : 20;
		if (memchr(p + BID_REC_NAME_OFF, 0, h.size - BID_REC_NAME_OFF) &&
		    !strcmp((const char *)p + BID_REC_NAME_OFF, "[kernel.kallsyms]"))
			return blen == len && !memcmp(p + BID_REC_ID_OFF, bid, len);
		p += h.size;
	}
	return true;
}
