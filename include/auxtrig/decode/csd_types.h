/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CSD_TYPES_H
#define AUXTRIG_CSD_TYPES_H

/*
 * decode/ layer: the types both CoreSight decoders share (no .c): the ETMv4
 * registers a decoder is configured with, a generic trace element and the
 * element callback's answer. csd_decoder.h (over OpenCSD) and
 * etm4_decoder.h (auxtrig's own ETMv4 decoder, which csd_decoder.c drives
 * in OpenCSD's place) both include this, so that the own decoder needs no
 * part of the OpenCSD wrapper's interface.
 */
#include <linux/types.h>

/**
 * struct csd_etmv4_regs - the ETMv4 register values a decoder needs
 * (from a snapshot's device_N.ini or perf's AUXTRACE_INFO).
 */
struct csd_etmv4_regs {
	__u32 configr;
	__u32 traceidr;
	__u32 idr0, idr1, idr2, idr8;
	__u32 idr9, idr10, idr11, idr12, idr13;
};

/** struct csd_elem - one generic trace element. */
struct csd_elem {
	__u64 index;
	__u8 trace_id;
	const void *elem;	/* OpenCSD's ocsd_generic_trace_elem */
};

/**
 * enum csd_resp - what an element callback of csd_decoder__set_elem_resp_fn()
 * (or etm4_decoder__set_elem_fn()) returns: OpenCSD's datapath responses.
 */
enum csd_resp { CSD_CONT, CSD_WAIT, CSD_FATAL };

/** typedef csd_elem_resp_fn - receives each generic element and says whether decoding goes on. */
typedef enum csd_resp (*csd_elem_resp_fn)(const struct csd_elem *elem, void *ctx);

#endif
