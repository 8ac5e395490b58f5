// SPDX-License-Identifier: BSD-2-Clause
/*
 * ipt_decoder: Intel PT packets and IP-packet branches with libipt.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "auxtrig/decode/ipt_decoder.h"
#include "auxtrig/sys/log.h"

int ipt_decoder__packets(const void *buf, size_t len, ipt_packet_fn fn, void *ctx,
			 struct ipt_packet_stats *stats)
{
	struct ipt_packet_stats st = { 0 };
	struct pt_packet_decoder *dec;
	struct pt_config cfg;
	uint64_t off = 0, synced_at = 0;
	int err = 0, ret;

	pt_config_init(&cfg);
	/* libipt wants non-const pointers but never writes through them. */
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return -ENOMEM;
	ret = pt_pkt_sync_forward(dec);
	/* the offset is asked for after each sync only: packets follow each other */
	bool have_off = false;

	while (ret >= 0) {
		struct pt_packet pkt;

		if (!have_off) {
			if (pt_pkt_get_offset(dec, &off) < 0)
				break;
			if (off > synced_at)
				st.skipped += off - synced_at;
			have_off = true;
		}
		ret = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (ret == -pte_eos)
			break;
		if (ret < 0) {
			/*
			 * A bad packet: count it and let libipt find the next PSB. It
			 * looks up to 15 bytes back, into the packets just listed (a
			 * PSB they misread): such a PSB is listed again, before the
			 * bad packet; only bytes jumped over forward are skipped.
			 */
			st.errors++;
			ret = pt_pkt_sync_forward(dec);
			if (ret < 0)
				st.skipped += len - off;
			else if (pt_pkt_get_sync_offset(dec, &synced_at) >= 0 && synced_at > off)
				st.skipped += synced_at - off;
			have_off = false;
			continue;
		}
		synced_at = off + pkt.size;
		st.packets++;
		if (pkt.type == ppt_pad)
			st.pads++;
		if (fn) {
			err = fn(&pkt, off, ctx);
			if (err)
				break;
		}
		off += pkt.size;
	}
	if (ret == -pte_eos && st.packets == 0 && !st.errors)
		st.skipped = len;
	pt_pkt_free_decoder(dec);
	if (stats)
		*stats = st;
	return err;
}

static const char *ipt_decoder__packet_name(enum pt_packet_type t)
{
	switch (t) {
	case ppt_pad: return "PAD";
	case ppt_psb: return "PSB";
	case ppt_psbend: return "PSBEND";
	case ppt_fup: return "FUP";
	case ppt_tip: return "TIP";
	case ppt_tip_pge: return "TIP.PGE";
	case ppt_tip_pgd: return "TIP.PGD";
	case ppt_tnt_8: return "TNT";
	case ppt_tnt_64: return "TNT64";
	case ppt_mode: return "MODE";
	case ppt_pip: return "PIP";
	case ppt_vmcs: return "VMCS";
	case ppt_cbr: return "CBR";
	case ppt_tsc: return "TSC";
	case ppt_tma: return "TMA";
	case ppt_mtc: return "MTC";
	case ppt_cyc: return "CYC";
	case ppt_stop: return "STOP";
	case ppt_ovf: return "OVF";
	case ppt_mnt: return "MNT";
	case ppt_exstop: return "EXSTOP";
	case ppt_mwait: return "MWAIT";
	case ppt_pwre: return "PWRE";
	case ppt_pwrx: return "PWRX";
	case ppt_ptw: return "PTW";
	case ppt_unknown: return "UNKNOWN";
	case ppt_invalid: break;
	}
	return "INVALID";
}

char *ipt_decoder__packet_str(const struct pt_packet *pkt, char *out, size_t size)
{
	const char *name = ipt_decoder__packet_name(pkt->type);

	switch (pkt->type) {
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		if (pkt->payload.ip.ipc == pt_ipc_suppressed)
			snprintf(out, size, "%s no ip", name);
		else
			snprintf(out, size, "%s ipc=%d 0x%" PRIx64, name, pkt->payload.ip.ipc,
				 pkt->payload.ip.ip);
		break;
	case ppt_tnt_8:
	case ppt_tnt_64: {
		int n = snprintf(out, size, "%s ", name);

		for (int i = pkt->payload.tnt.bit_size - 1; i >= 0 && n + 1 < (int)size; i--)
			out[n++] = (pkt->payload.tnt.payload >> i) & 1 ? 'T' : 'N';
		out[n < (int)size ? n : (int)size - 1] = 0;
		break;
	}
	case ppt_tsc:
		snprintf(out, size, "%s 0x%" PRIx64, name, pkt->payload.tsc.tsc);
		break;
	case ppt_cbr:
		snprintf(out, size, "%s %u", name, pkt->payload.cbr.ratio);
		break;
	case ppt_mtc:
		snprintf(out, size, "%s 0x%x", name, pkt->payload.mtc.ctc);
		break;
	case ppt_cyc:
		snprintf(out, size, "%s 0x%" PRIx64, name, pkt->payload.cyc.value);
		break;
	case ppt_tma:
		snprintf(out, size, "%s ctc=0x%x fc=0x%x", name, pkt->payload.tma.ctc, pkt->payload.tma.fc);
		break;
	case ppt_pip:
		snprintf(out, size, "%s 0x%" PRIx64, name, pkt->payload.pip.cr3);
		break;
	case ppt_ptw:
		snprintf(out, size, "%s 0x%" PRIx64, name, pkt->payload.ptw.payload);
		break;
	case ppt_mode:
		if (pkt->payload.mode.leaf == pt_mol_exec)
			snprintf(out, size, "%s.Exec csl=%u csd=%u", name, pkt->payload.mode.bits.exec.csl,
				 pkt->payload.mode.bits.exec.csd);
		else
			snprintf(out, size, "%s.TSX intx=%u abrt=%u", name, pkt->payload.mode.bits.tsx.intx,
				 pkt->payload.mode.bits.tsx.abrt);
		break;
	default:
		snprintf(out, size, "%s", name);
		break;
	}
	return out;
}

/*
 * The branch walk: perf's decoder states, with the one outcome that is
 * certain without binaries: every attempt to follow code fails.
 */
enum ipt_walk_state {
	IPT_NO_PSB,	/* before the first PSB */
	IPT_NO_IP,	/* after an error: wait for an IP packet that needs no history */
	IPT_IN_SYNC,	/* ip known: the next packet that needs the code fails */
	IPT_FUP,	/* an async FUP at ip: the next TIP/TIP.PGD is its branch */
};

struct ipt_walk {
	enum ipt_walk_state state;
	__u64 ip;		/* current ip, 0 if unknown */
	__u64 last_ip;		/* IP compression base */
	int have_last_ip;
	int in_psb;		/* between PSB and PSBEND */
	__u64 psb_fup;		/* FUP ip seen in this PSB+, 0 if none */
	/* time, in TSC units, as perf's decoder keeps it */
	struct ipt_timing timing;
	__u64 tsc;		/* the current timestamp */
	__u64 tsc_base;		/* of the last TSC packet */
	__u64 ctc_base;		/* TSC at CTC 0 of the last TMA */
	__u64 ctc_delta;	/* CTC ticks since then, from MTC packets */
	__u32 last_mtc;
	int have_tma;
	__u64 tsc_ctc_mult;	/* n / d when d divides n, else 0 */
	ipt_branch_fn fn;
	void *ctx;
};

/* The full ip of an IP packet, or 0 if it has none or needs a lost history. */
static int ipt_walk__packet_ip(struct ipt_walk *w, const struct pt_packet *pkt, __u64 *ip)
{
	__u64 v = pkt->payload.ip.ip;

	switch (pkt->payload.ip.ipc) {
	case pt_ipc_suppressed:
		return 0;
	case pt_ipc_update_16:
	case pt_ipc_update_32:
	case pt_ipc_update_48:
		if (!w->have_last_ip)
			return 0;
		if (pkt->payload.ip.ipc == pt_ipc_update_16)
			v = (w->last_ip & ~0xffffULL) | (v & 0xffffULL);
		else if (pkt->payload.ip.ipc == pt_ipc_update_32)
			v = (w->last_ip & ~0xffffffffULL) | (v & 0xffffffffULL);
		else
			v = (w->last_ip & ~0xffffffffffffULL) | (v & 0xffffffffffffULL);
		break;
	case pt_ipc_sext_48:
		v &= 0xffffffffffffULL;
		if (v & (1ULL << 47))
			v |= 0xffff000000000000ULL;
		break;
	case pt_ipc_full:
		break;
	default:
		return 0;
	}
	w->last_ip = v;
	w->have_last_ip = 1;
	*ip = v;
	return 1;
}

static int ipt_walk__emit(struct ipt_walk *w, __u64 from, __u64 to, __u64 offset)
{
	struct ipt_branch br = { .from = from, .to = to, .offset = offset, .tsc = w->tsc };

	return w->fn(&br, w->ctx);
}

/* Following code failed: forget everything, as perf's NO_IP state does. */
static void ipt_walk__lose_sync(struct ipt_walk *w)
{
	w->state = IPT_NO_IP;
	w->ip = 0;
	w->last_ip = 0;
	w->have_last_ip = 0;
}

/* Combine a 7-byte TSC packet with the upper byte of @ref, choosing the closest wrap. */
static __u64 ipt_walk__tsc_8b(__u64 tsc, __u64 ref)
{
	tsc |= ref & (0xffULL << 56);
	if (tsc < ref) {
		if (ref - tsc > (1ULL << 55))
			tsc += 1ULL << 56;
	} else if (tsc - ref > (1ULL << 55)) {
		tsc -= 1ULL << 56;
	}
	return tsc;
}

static void ipt_walk__on_tsc(struct ipt_walk *w, __u64 payload)
{
	__u64 t;

	w->have_tma = 0;
	if (w->timing.ref_tsc) {
		t = ipt_walk__tsc_8b(payload, w->timing.ref_tsc);
		w->timing.ref_tsc = 0;
	} else if (w->tsc) {
		t = payload | (w->tsc & (0xffULL << 56));
		if (t < w->tsc)
			t += 1ULL << 56;	/* the 56-bit packet wrapped */
	} else {
		return;	/* no reference for the upper byte yet */
	}
	w->tsc_base = t;
	w->tsc = t;
}

static __u64 ipt_walk__ctc_to_tsc(const struct ipt_walk *w, __u64 ctc)
{
	if (w->tsc_ctc_mult)
		return ctc * w->tsc_ctc_mult;
	return ctc * w->timing.tsc_ctc_n / w->timing.tsc_ctc_d;
}

/* TMA: the CTC and the TSC fast counter at the last TSC give CTC 0's TSC. */
static void ipt_walk__on_tma(struct ipt_walk *w, __u32 ctc, __u32 fc)
{
	__u32 rem = ctc & ((1U << w->timing.mtc_period) - 1);

	if (!w->timing.tsc_ctc_d)
		return;
	w->last_mtc = (ctc >> w->timing.mtc_period) & 0xff;
	w->ctc_base = w->tsc_base - fc - ipt_walk__ctc_to_tsc(w, rem);
	w->ctc_delta = 0;
	w->have_tma = 1;
}

/* MTC: 8 CTC bits; the time moves on by the CTC ticks since the last one. */
static void ipt_walk__on_mtc(struct ipt_walk *w, __u32 mtc)
{
	__u32 delta = mtc > w->last_mtc ? mtc - w->last_mtc : mtc + 256 - w->last_mtc;
	__u64 t;

	if (!w->have_tma)
		return;
	w->ctc_delta += (__u64)delta << w->timing.mtc_period;
	t = w->ctc_base + ipt_walk__ctc_to_tsc(w, w->ctc_delta);
	if (t >= w->tsc)
		w->tsc = t;	/* never backwards */
	w->last_mtc = mtc;
}

static int ipt_walk__packet(const struct pt_packet *pkt, __u64 offset, void *ctx)
{
	struct ipt_walk *w = ctx;
	__u64 ip = 0;
	int has_ip;

	switch (pkt->type) {
	case ppt_tsc:
		ipt_walk__on_tsc(w, pkt->payload.tsc.tsc);
		return 0;
	case ppt_tma:
		ipt_walk__on_tma(w, pkt->payload.tma.ctc, pkt->payload.tma.fc);
		return 0;
	case ppt_mtc:
		ipt_walk__on_mtc(w, pkt->payload.mtc.ctc);
		return 0;
	case ppt_psb:
		w->in_psb = 1;
		w->psb_fup = 0;
		w->last_ip = 0;
		if (w->state == IPT_NO_PSB)
			w->state = IPT_NO_IP;
		return 0;
	case ppt_psbend:
		w->in_psb = 0;
		if (!w->psb_fup)
			return 0;
		if (w->state == IPT_NO_IP) {
			/* The PSB+ FUP gives the ip without a sample. */
			w->ip = w->psb_fup;
			w->state = IPT_IN_SYNC;
		} else if (w->state == IPT_IN_SYNC && w->psb_fup != w->ip) {
			ipt_walk__lose_sync(w);
		}
		return 0;
	case ppt_ovf:
		ipt_walk__lose_sync(w);
		return 0;
	case ppt_tnt_8:
	case ppt_tnt_64:
		if (w->state == IPT_IN_SYNC || w->state == IPT_FUP)
			ipt_walk__lose_sync(w);
		return 0;
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		break;
	default:
		return 0;
	}
	if (w->state == IPT_NO_PSB)
		return 0;
	has_ip = ipt_walk__packet_ip(w, pkt, &ip);
	if (w->in_psb) {
		if (pkt->type == ppt_fup && has_ip)
			w->psb_fup = ip;
		return 0;
	}
	switch (w->state) {
	case IPT_NO_IP:
		if (!has_ip)
			return 0;
		w->ip = ip;
		w->state = IPT_IN_SYNC;
		return ipt_walk__emit(w, 0, ip, offset);
	case IPT_IN_SYNC:
		if (pkt->type == ppt_tip_pge) {
			if (!has_ip)
				return 0;
			w->ip = ip;
			return ipt_walk__emit(w, 0, ip, offset);
		}
		if (pkt->type == ppt_fup && has_ip && ip == w->ip) {
			w->state = IPT_FUP;
			return 0;
		}
		ipt_walk__lose_sync(w);
		return 0;
	case IPT_FUP:
		if (pkt->type == ppt_tip || pkt->type == ppt_tip_pgd) {
			__u64 from = w->ip;

			w->ip = has_ip ? ip : 0;
			w->state = w->ip ? IPT_IN_SYNC : IPT_NO_IP;
			return ipt_walk__emit(w, from, has_ip ? ip : 0, offset);
		}
		ipt_walk__lose_sync(w);
		return 0;
	case IPT_NO_PSB:
		break;
	}
	return 0;
}

/*
 * The packets the branch walk reads, decoded here without libipt's packet
 * decoder (its per-packet cost dominates large files): PAD, TNT, TIP,
 * TIP.PGE, TIP.PGD, FUP, TSC, MTC, MODE, CYC, PSB, PSBEND, OVF, TMA, CBR
 * and long TNT, each only when all its bytes are there and its encoding is
 * valid (Intel SDM vol. 3, 33.4.2). Anything else (another packet, a
 * reserved encoding, a packet cut by the end of the buffer) returns 0: libipt
 * decodes it, so what is valid and what is an error stays libipt's call.
 * Return: the packet's size, or 0.
 */
static size_t ipt_fast__packet(const uint8_t *p, size_t left, struct pt_packet *pkt)
{
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };
	uint8_t b = p[0];

	if (b == 0x00) {
		pkt->type = ppt_pad;
		return pkt->size = 1;
	}
	if (b == 0x02) {
		if (left < 2)
			return 0;
		switch (p[1]) {
		case 0x23:
			pkt->type = ppt_psbend;
			return pkt->size = 2;
		case 0xf3:
			pkt->type = ppt_ovf;
			return pkt->size = 2;
		case 0x82:
			if (left < 16 || memcmp(p, psb, 16))
				return 0;
			pkt->type = ppt_psb;
			return pkt->size = 16;
		case 0x73:
			/* byte 4 and bits 7:1 of byte 6 are reserved: set, libipt calls it a bad packet */
			if (left < 7 || p[4] || (p[6] & 0xfe))
				return 0;
			pkt->type = ppt_tma;
			pkt->payload.tma.ctc = p[2] | (p[3] << 8);
			pkt->payload.tma.fc = p[5] | ((p[6] & 1) << 8);
			return pkt->size = 7;
		case 0x03:
			if (left < 4)
				return 0;
			pkt->type = ppt_cbr;
			pkt->payload.cbr.ratio = p[2];
			return pkt->size = 4;
		case 0xa3:
			/* the payload needs its stop bit */
			if (left < 8 || !(p[2] | p[3] | p[4] | p[5] | p[6] | p[7]))
				return 0;
			pkt->type = ppt_tnt_64;
			return pkt->size = 8;
		default:
			return 0;
		}
	}
	if (!(b & 1)) {				/* TNT-8: a stop bit and up to 6 bits */
		pkt->type = ppt_tnt_8;
		return pkt->size = 1;
	}
	if ((b & 3) == 3) {			/* CYC, its extension bytes while bit 0 says so */
		size_t n = 1;

		if (b & 4) {
			do {
				/* past 64 bits of payload libipt calls it a bad packet: its call */
				if (n >= left || n > 8)
					return 0;
			} while (p[n++] & 1);
		}
		pkt->type = ppt_cyc;
		return pkt->size = n;
	}
	switch (b) {
	case 0x19:
		if (left < 8)
			return 0;
		pkt->type = ppt_tsc;
		pkt->payload.tsc.tsc = 0;
		memcpy(&pkt->payload.tsc.tsc, p + 1, 7);
		return pkt->size = 8;
	case 0x59:
		if (left < 2)
			return 0;
		pkt->type = ppt_mtc;
		pkt->payload.mtc.ctc = p[1];
		return pkt->size = 2;
	case 0x99:
		return 0;			/* MODE: libipt fills its leaves */
	}
	switch (b & 0x1f) {
	case 0x01: pkt->type = ppt_tip_pgd; break;
	case 0x0d: pkt->type = ppt_tip; break;
	case 0x11: pkt->type = ppt_tip_pge; break;
	case 0x1d: pkt->type = ppt_fup; break;
	default:
		return 0;
	}
	{
		static const uint8_t bytes[8] = { 0, 2, 4, 6, 6, 0xff, 8, 0xff };
		unsigned int ipc = b >> 5, n = bytes[ipc];

		if (n == 0xff || left < 1 + n)
			return 0;		/* reserved IPBytes, or cut */
		pkt->payload.ip.ipc = ipc;
		pkt->payload.ip.ip = 0;
		memcpy(&pkt->payload.ip.ip, p + 1, n);
		return pkt->size = 1 + n;
	}
}

/*
 * The offset of the first PSB at or after @from, or @len. As libipt's
 * pt_find_psb(), a run of more than eight 02 82 pairs holds its PSB at its
 * end: the pairs before it are no packet.
 */
static size_t ipt_fast__find_psb(const uint8_t *p, size_t len, size_t from)
{
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };

	while (from + 16 <= len) {
		const uint8_t *q = memchr(p + from, 0x02, len - 15 - from);
		size_t end;

		if (!q)
			break;
		if (!memcmp(q, psb, 16)) {
			end = (size_t)(q - p) + 16;
			while (end + 1 < len && p[end] == 2 && p[end + 1] == 0x82)
				end += 2;
			return end - 16;
		}
		from = q - p + 1;
	}
	return len;
}

/*
 * ipt_decoder__packets()' walk with the fast decoder above, libipt for the
 * rest: the same packets, offsets, errors and resynchronisations.
 */
static int ipt_fast__walk(const void *buf, size_t len, ipt_packet_fn fn, void *ctx)
{
	const uint8_t *p = buf;
	struct pt_packet_decoder *dec;
	struct pt_config cfg;
	size_t off, sync;
	int err = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return -ENOMEM;
	off = sync = ipt_fast__find_psb(p, len, 0);
	while (off < len && !err) {
		struct pt_packet pkt;
		size_t n = ipt_fast__packet(p + off, len - off, &pkt);

		if (!n) {
			int ret = pt_pkt_sync_set(dec, off);

			if (ret >= 0)
				ret = pt_pkt_next(dec, &pkt, sizeof(pkt));
			if (ret == -pte_eos)
				break;
			if (ret < 0) {
				uint64_t at = sync, o;

				/*
				 * A bad packet. Where libipt resynchronises depends on its
				 * decoder's last sync point as well (it looks back into a PSB
				 * the bad packet may be part of): replay from that point to
				 * the bad packet, then let libipt find the PSB.
				 */
				pt_pkt_sync_set(dec, sync);
				while (pt_pkt_get_offset(dec, &o) >= 0 && o < off && pt_pkt_next(dec, &pkt, sizeof(pkt)) >= 0)
					;
				pt_pkt_next(dec, &pkt, sizeof(pkt));
				if (pt_pkt_sync_forward(dec) < 0 || pt_pkt_get_sync_offset(dec, &at) < 0)
					break;
				off = sync = at;
				continue;
			}
			n = pkt.size;
		}
		err = fn(&pkt, off, ctx);
		off += n;
	}
	pt_pkt_free_decoder(dec);
	return err;
}

static void ipt_walk__init(struct ipt_walk *w, const struct ipt_timing *timing, ipt_branch_fn fn, void *ctx)
{
	memset(w, 0, sizeof(*w));
	w->state = IPT_NO_PSB;
	w->fn = fn;
	w->ctx = ctx;
	if (timing)
		w->timing = *timing;
	if (w->timing.mtc_period > 15)
		w->timing.mtc_period = 15;
	if (w->timing.tsc_ctc_d && w->timing.tsc_ctc_n % w->timing.tsc_ctc_d == 0)
		w->tsc_ctc_mult = w->timing.tsc_ctc_n / w->timing.tsc_ctc_d;
}

int ipt_decoder__branches(const void *buf, size_t len, const struct ipt_timing *timing,
			  ipt_branch_fn fn, void *ctx)
{
	struct ipt_walk w;

	ipt_walk__init(&w, timing, fn, ctx);
	return ipt_fast__walk(buf, len, ipt_walk__packet, &w);
}

int ipt_decoder__branches_ref(const void *buf, size_t len, const struct ipt_timing *timing,
			      ipt_branch_fn fn, void *ctx)
{
	struct ipt_walk w;

	ipt_walk__init(&w, timing, fn, ctx);
	return ipt_decoder__packets(buf, len, ipt_walk__packet, &w, NULL);
}
