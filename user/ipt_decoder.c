// SPDX-License-Identifier: BSD-2-Clause
/*
 * ipt_decoder: Intel PT packets and IP-packet branches with libipt.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "auxtrig/ipt_decoder.h"
#include "auxtrig/log.h"

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
	while (ret >= 0) {
		struct pt_packet pkt;

		if (pt_pkt_get_offset(dec, &off) < 0)
			break;
		if (off > synced_at)
			st.skipped += off - synced_at;
		ret = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (ret == -pte_eos)
			break;
		if (ret < 0) {
			/* A bad packet: count it and look for the next PSB. */
			st.errors++;
			ret = pt_pkt_sync_forward(dec);
			if (ret >= 0 && pt_pkt_get_sync_offset(dec, &synced_at) >= 0)
				st.skipped += synced_at - off;
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

int ipt_decoder__branches(const void *buf, size_t len, ipt_branch_fn fn, void *ctx)
{
	return 0;
}
