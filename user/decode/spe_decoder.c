// SPDX-License-Identifier: BSD-2-Clause
/* spe_decoder: Arm SPE packets and records, read as perf 6.1 reads them. */
#include <stdbool.h>
#include <string.h>

#include "auxtrig/decode/spe_decoder.h"

size_t spe_decoder__packet(const void *buf, size_t len, struct spe_packet *pkt)
{
	const unsigned char *p = buf;
	unsigned int h, hdr = 1, sz;

	memset(pkt, 0, sizeof(*pkt));
	if (!len)
		return 0;
	h = p[0];
	if (h == 0x00 || h == 0x01) {
		pkt->type = h ? SPE_PKT_END : SPE_PKT_PAD;
		return pkt->size = 1;
	}
	if (h == 0x71) {
		pkt->type = SPE_PKT_TIMESTAMP;
		sz = 8;
	} else if ((h & 0xcf) == 0x42 || (h & 0xcf) == 0x43) {	/* 0b01ss001x */
		pkt->type = (h & 0xcf) == 0x42 ? SPE_PKT_EVENTS : SPE_PKT_DATA_SOURCE;
		sz = 1u << ((h >> 4) & 3);
	} else if ((h & 0xfc) == 0x64 || (h & 0xfc) == 0x48) {	/* 0b011001ii, 0b010010cc */
		pkt->type = (h & 0xfc) == 0x64 ? SPE_PKT_CONTEXT : SPE_PKT_OP_TYPE;
		pkt->index = h & 3;
		sz = 1u << ((h >> 4) & 3);
	} else {
		unsigned int ext = 0;

		if ((h & 0xe0) == 0x20) {	/* extended header: index bits 4:3, then the short header */
			if (len < 2)
				return 0;
			ext = (h & 3) << 3;
			h = p[1];
			hdr = 2;
		}
		if ((h & 0xf8) == 0xb0) {
			pkt->type = SPE_PKT_ADDRESS;
		} else if ((h & 0xf8) == 0x98) {
			pkt->type = SPE_PKT_COUNTER;
		} else {
			pkt->type = SPE_PKT_BAD;
			return pkt->size = 1;
		}
		pkt->index = ext | (h & 7);
		sz = 1u << ((h >> 4) & 3);
	}
	if (len < hdr + sz)
		return 0;
	for (unsigned int i = 0; i < sz; i++)
		pkt->payload |= (__u64)p[hdr + i] << (8 * i);
	return pkt->size = hdr + sz;
}

__u64 spe_packet__addr(const struct spe_packet *pkt)
{
	__u64 a = pkt->payload & ((1ULL << 56) - 1);
	unsigned int el = (pkt->payload >> 61) & 3, ns = pkt->payload >> 63;

	if (pkt->index <= 1) {
		if (ns && (el == 1 || el == 2))
			a |= 0xffULL << 56;
	} else if (pkt->index == 2) {
		if (((a >> 48) & 0xf0) == 0xf0)
			a |= 0xffULL << 56;
	}
	return a;
}

/*
 * The writer of spe_packet__desc(): words and numbers put by hand, cut as
 * snprintf cuts them. The --packets listing describes every packet, and
 * snprintf was most of what was left of its time once the hex was fast.
 */
struct spe_desc {
	char *p, *end;	/* end: the last byte, kept for the NUL */
};

static void spe_desc__str(struct spe_desc *d, const char *str)
{
	while (*str && d->p < d->end)
		*d->p++ = *str++;
}

/* @v in decimal, or as %#x prints it (0, or 0x and the digits) */
static void spe_desc__num(struct spe_desc *d, __u64 v, bool hex)
{
	char digits[24], *q = digits + sizeof(digits);

	*--q = 0;
	do {
		*--q = "0123456789abcdef"[hex ? v & 0xf : v % 10];
		v = hex ? v >> 4 : v / 10;
	} while (v);
	if (hex && q[0] != '0')
		spe_desc__str(d, "0x");
	spe_desc__str(d, q);
}

const char *spe_packet__desc(const struct spe_packet *pkt, char *out, size_t size)
{
	static const char *const ev[] = {
		"EXCEPTION-GEN", "RETIRED", "L1D-ACCESS", "L1D-REFILL", "TLB-ACCESS", "TLB-REFILL", "NOT-TAKEN",
		"MISPRED", "LLC-ACCESS", "LLC-REFILL", "REMOTE-ACCESS",
	};
	static const char *const lat[] = { "TOT", "ISSUE", "XLAT" };
	struct spe_desc d = { out, size ? out + size - 1 : out };

	switch (pkt->type) {
	case SPE_PKT_PAD:
		return "PAD";
	case SPE_PKT_END:
		return "END";
	case SPE_PKT_BAD:
		return "BAD";
	case SPE_PKT_TIMESTAMP:
		spe_desc__str(&d, "TS ");
		spe_desc__num(&d, pkt->payload, false);
		break;
	case SPE_PKT_EVENTS:
		spe_desc__str(&d, "EV");
		/* the second byte's events only when the packet has one */
		for (unsigned int i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
			if ((pkt->payload & (1ULL << i)) && (i < 8 || pkt->size > 2)) {
				spe_desc__str(&d, " ");
				spe_desc__str(&d, ev[i]);
			}
		break;
	case SPE_PKT_DATA_SOURCE:
		spe_desc__str(&d, "SRC ");
		spe_desc__num(&d, pkt->payload, false);
		break;
	case SPE_PKT_OP_TYPE:
		if (pkt->index == 1) {
			spe_desc__str(&d, pkt->payload & 1 ? "ST" : "LD");
			spe_desc__str(&d, (pkt->payload & 0xfe) == 0 ? " GP-REG" : "");
		} else if (pkt->index == 2) {
			spe_desc__str(&d, "B");
			spe_desc__str(&d, pkt->payload & 1 ? " COND" : "");
			spe_desc__str(&d, pkt->payload & 2 ? " IND" : "");
		} else {
			spe_desc__str(&d, "OTHER");
		}
		break;
	case SPE_PKT_ADDRESS:
		if (pkt->index <= 1) {
			spe_desc__str(&d, pkt->index ? "TGT " : "PC ");
			spe_desc__num(&d, spe_packet__addr(pkt), true);
			spe_desc__str(&d, " el");
			spe_desc__num(&d, (pkt->payload >> 61) & 3, false);
			spe_desc__str(&d, " ns=");
			spe_desc__num(&d, pkt->payload >> 63, false);
		} else if (pkt->index == 2) {
			spe_desc__str(&d, "VA ");
			spe_desc__num(&d, spe_packet__addr(pkt), true);
		} else {
			spe_desc__str(&d, "ADDR ");
			spe_desc__num(&d, pkt->index, false);
			spe_desc__str(&d, " ");
			spe_desc__num(&d, pkt->payload, true);
		}
		break;
	case SPE_PKT_COUNTER:
		spe_desc__str(&d, "LAT ");
		spe_desc__num(&d, pkt->payload, false);
		spe_desc__str(&d, " ");
		spe_desc__str(&d, pkt->index < 3 ? lat[pkt->index] : "?");
		break;
	case SPE_PKT_CONTEXT:
		spe_desc__str(&d, "CONTEXT ");
		spe_desc__num(&d, pkt->payload, true);
		spe_desc__str(&d, pkt->index ? " el2" : " el1");
		break;
	default:
		return "?";
	}
	if (size)
		*d.p = 0;
	return out;
}

void spe_record__init(struct spe_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->context = (__u64)-1;
}

int spe_record__add(struct spe_record *rec, const struct spe_packet *pkt)
{
	switch (pkt->type) {
	case SPE_PKT_ADDRESS:
		if (pkt->index == 0)
			rec->from_ip = spe_packet__addr(pkt);
		else if (pkt->index == 1)
			rec->to_ip = spe_packet__addr(pkt);
		else if (pkt->index == 2)
			rec->va = spe_packet__addr(pkt);
		return 0;
	case SPE_PKT_OP_TYPE:
		if (pkt->index == 1)
			rec->op = pkt->payload & 1 ? 2 : 1;
		return 0;
	case SPE_PKT_EVENTS:
		rec->events = pkt->payload;
		return 0;
	case SPE_PKT_CONTEXT:
		rec->context = pkt->payload;
		return 0;
	case SPE_PKT_TIMESTAMP:
		rec->timestamp = pkt->payload;
		return 1;
	case SPE_PKT_END:
		return 1;
	default:
		return 0;
	}
}
