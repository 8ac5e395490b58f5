// SPDX-License-Identifier: BSD-2-Clause
/*
 * The Intel PT decoder on any buffer (seed: the Skylake capture of
 * ../shared/data, whose PSBs the decoder finds inside the file): the packet
 * walk, and the branch walk twice, once decoding the packets it needs
 * itself (ipt_decoder__branches()) and once with libipt's packet decoder
 * for every packet (ipt_decoder__branches_ref()).
 *
 * What must hold: no crash, no hang; every packet inside the buffer, each
 * where the one before ended or later, except a PSB libipt resyncs on after
 * a bad packet, which may begin up to 15 bytes back (never at or before the
 * PSB before it); the bytes skipped inside the buffer; and the two branch
 * walks give the same branches
 * (from, to, offset, TSC), in the same order, for every input: the fast
 * walk's promise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "auxtrig/decode/ipt_decoder.h"

#define MAX_BRANCHES	4096

struct walk {
	struct ipt_branch br[MAX_BRANCHES];
	size_t n;
	__u64 hash;	/* of the branches past MAX_BRANCHES */
};

static int on_branch(const struct ipt_branch *br, void *ctx)
{
	struct walk *w = ctx;

	if (w->n < MAX_BRANCHES)
		w->br[w->n] = *br;
	else
		w->hash = (w->hash * 1000003) ^ br->from ^ (br->to << 1) ^ (br->offset << 2) ^ (br->tsc << 3);
	w->n++;
	return 0;
}

struct pkts {
	size_t len;
	__u64 end;	/* of the packet before */
	__u64 psb;	/* offset + 1 of the last PSB, 0 before the first */
	size_t n;
};

static int on_packet(const struct pt_packet *pkt, __u64 offset, void *ctx)
{
	struct pkts *p = ctx;
	char s[256];

	if (offset >= p->len || pkt->size > p->len - offset)
		abort();	/* a packet outside the buffer */
	if (p->n && offset < p->end &&
	    (pkt->type != ppt_psb || offset + 15 < p->end || offset + 1 <= p->psb))
		abort();	/* back into the packets before, and not libipt's resync */
	if (pkt->type == ppt_psb)
		p->psb = offset + 1;
	p->end = offset + pkt->size;
	p->n++;
	ipt_decoder__packet_str(pkt, s, sizeof(s));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct walk fast, ref;
	struct ipt_timing timing = { .ref_tsc = 0x1234567800000000ULL, .mtc_period = 3, .tsc_ctc_n = 2, .tsc_ctc_d = 1 };
	const struct ipt_timing *t = size % 2 ? &timing : NULL;
	struct pkts p = { .len = size };
	struct ipt_packet_stats st;

	if (ipt_decoder__packets(data, size, on_packet, &p, &st))
		abort();
	if (st.packets != p.n || st.skipped > size)
		abort();
	memset(&fast, 0, sizeof(fast));
	memset(&ref, 0, sizeof(ref));
	if (ipt_decoder__branches(data, size, t, on_branch, &fast) ||
	    ipt_decoder__branches_ref(data, size, t, on_branch, &ref))
		abort();
	if (fast.n != ref.n || fast.hash != ref.hash)
		abort();
	for (size_t i = 0; i < fast.n && i < MAX_BRANCHES; i++)
		if (memcmp(&fast.br[i], &ref.br[i], sizeof(fast.br[i])))
			abort();	/* the fast walk differs from libipt's */
	return 0;
}
