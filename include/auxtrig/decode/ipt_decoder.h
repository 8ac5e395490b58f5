/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_IPT_DECODER_H
#define AUXTRIG_IPT_DECODER_H

/*
 * decode/ layer: Intel PT packet and branch decoding over libipt
 * (user/decode/ipt_decoder.c), driven by script_pt.c.
 */

/**
 * DOC: Intel PT decoder
 *
 * Decodes one Intel PT AUX buffer (the payload of one PERF_RECORD_AUXTRACE)
 * with libipt's packet decoder. Two levels:
 *
 * - packets: every packet libipt finds after synchronising on the first
 *   PSB, resynchronising on the next PSB after a decode error (libipt
 *   looks up to 15 bytes back for it: that PSB may begin inside the
 *   packets listed just before the error, and is listed after them);
 * - branches: the branch samples that can be derived without the traced
 *   binaries, from the IP packets (TIP, TIP.PGE, TIP.PGD, FUP) alone, the
 *   way perf's Intel PT decoder reports them when it cannot walk the code:
 *   see ipt_decoder__branches().
 *
 * Names use the ipt_ prefix: pt_ belongs to libipt.
 */

#include <linux/types.h>
#include <stddef.h>

struct pt_packet;

/**
 * struct ipt_packet_stats - what ipt_decoder__packets() found.
 * @packets: packets decoded, PAD included
 * @pads: PAD packets
 * @errors: decode errors (each followed by a resync)
 * @skipped: bytes before the first PSB, jumped over while resynchronising,
 *	or after a bad packet with no PSB after it
 */
struct ipt_packet_stats {
	__u64 packets;
	__u64 pads;
	__u64 errors;
	__u64 skipped;
};

/**
 * typedef ipt_packet_fn - called for each packet; @offset is the packet's
 * offset in the buffer. A non-zero return stops the walk and is returned.
 */
typedef int (*ipt_packet_fn)(const struct pt_packet *pkt, __u64 offset, void *ctx);

/**
 * ipt_decoder__packets() - decode every packet of an Intel PT buffer.
 * @buf: trace bytes (not modified)
 * @len: bytes
 * @fn: callback per packet, or NULL to only count
 * @ctx: passed to @fn
 * @stats: filled with counts (may be NULL)
 *
 * Return: 0, -ENOMEM, or what @fn returned.
 */
int ipt_decoder__packets(const void *buf, size_t len, ipt_packet_fn fn, void *ctx,
			 struct ipt_packet_stats *stats);

/**
 * ipt_decoder__packet_str() - one-line description of @pkt (ptdump-like:
 * name and payload) into @out; returns @out.
 */
char *ipt_decoder__packet_str(const struct pt_packet *pkt, char *out, size_t size);

/**
 * struct ipt_branch - a branch sample.
 * @from: source ip, 0 when unknown (no binary to walk to the branch)
 * @to: target ip, 0 when tracing stops
 * @offset: buffer offset of the packet that produced it
 * @tsc: its time in TSC units: the last TSC packet advanced by the MTC
 *       packets since (as perf's decoder computes it), 0 if none yet
 */
struct ipt_branch {
	__u64 from;
	__u64 to;
	__u64 offset;
	__u64 tsc;
};

/**
 * struct ipt_timing - what turns timing packets into TSC values, from the
 * AUXTRACE_INFO record and the AUXTRACE record of the buffer.
 * @ref_tsc: the buffer's reference TSC (AUXTRACE .reference): the upper 8
 *           bits a 7-byte TSC packet lacks
 * @mtc_period: IA32_RTIT_CTL.MTCFreq (the mtc_period config term): MTC
 *              packets carry CTC bits [mtc_period + 7 : mtc_period]
 * @tsc_ctc_n: CPUID.15H EBX, TSC:CTC ratio numerator
 * @tsc_ctc_d: CPUID.15H EAX, denominator (0: MTC packets are not used)
 */
struct ipt_timing {
	__u64 ref_tsc;
	unsigned int mtc_period;
	__u32 tsc_ctc_n;
	__u32 tsc_ctc_d;
};

/** typedef ipt_branch_fn - called for each branch; non-zero stops the walk. */
typedef int (*ipt_branch_fn)(const struct ipt_branch *br, void *ctx);

/**
 * ipt_decoder__branches() - branch samples of one buffer without binaries.
 * @buf: trace bytes
 * @len: bytes
 *
 * Without the code nothing between two IP packets can be followed: every
 * attempt fails and, like perf's decoder, the walk then forgets the current
 * ip and the IP-compression history and waits for a packet that needs
 * neither. What is reported is exactly what perf 6.1 reports in that
 * situation:
 *
 * - after a loss of sync, the first TIP, TIP.PGE, TIP.PGD or FUP with a
 *   full (uncompressed) ip: {0, ip}; a FUP inside PSB+ sets the ip silently;
 * - in sync, a TIP.PGE: {0, ip};
 * - in sync, a FUP at the current ip (an async event: nothing to walk) and
 *   the TIP or TIP.PGD after it: {fup ip, tip ip} ({fup ip, 0} if the
 *   target is suppressed);
 * - in sync, anything that needs the code (TNT, TIP, a FUP elsewhere, a
 *   PSB+ FUP elsewhere, OVF) loses sync.
 *
 * @timing: how to time them, or NULL for TSC packets only
 *
 * Return: 0, -ENOMEM, or what @fn returned.
 */
int ipt_decoder__branches(const void *buf, size_t len, const struct ipt_timing *timing,
			  ipt_branch_fn fn, void *ctx);

/**
 * ipt_decoder__branches_ref() - the same walk with libipt's packet decoder
 * for every packet. ipt_decoder__branches() decodes the packets the walk
 * needs itself (libipt's per-packet cost dominates large files) and leaves
 * the others, and every reserved or cut encoding, to libipt; this one is
 * what it is tested against (test_decode), packet for packet.
 */
int ipt_decoder__branches_ref(const void *buf, size_t len, const struct ipt_timing *timing,
			      ipt_branch_fn fn, void *ctx);

#endif
