/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SPE_DECODER_H
#define AUXTRIG_SPE_DECODER_H

/*
 * decode/ layer: Arm SPE record decoding (user/decode/spe_decoder.c),
 * driven by script_spe.c.
 */

/**
 * DOC: Arm SPE decoder
 *
 * Reads Arm Statistical Profiling Extension records (Arm ARM, chapter
 * "Statistical Profiling Extension", packet formats) the way perf 6.1's
 * arm-spe-pkt-decoder and arm-spe-decoder read them: a record is a run of
 * packets (address, operation type, events, counter, context, data source)
 * ended by a TIMESTAMP or an END packet; PAD bytes fill up. Every read is
 * bounds-checked: a packet cut by the end of the buffer is not returned.
 *
 * Names use the spe_ prefix: arm_spe_ belongs to perf.
 */

#include <linux/types.h>
#include <stddef.h>

enum spe_packet_type {
	SPE_PKT_BAD,		/* an unknown header: one byte, skipped */
	SPE_PKT_PAD,
	SPE_PKT_END,
	SPE_PKT_TIMESTAMP,
	SPE_PKT_ADDRESS,	/* index 0 PC, 1 branch target, 2 data VA, 3 data PA */
	SPE_PKT_COUNTER,	/* index 0 total, 1 issue, 2 translation latency */
	SPE_PKT_CONTEXT,	/* index 0 CONTEXTIDR_EL1, 1 CONTEXTIDR_EL2 */
	SPE_PKT_OP_TYPE,	/* index 0 other, 1 load/store, 2 branch */
	SPE_PKT_EVENTS,
	SPE_PKT_DATA_SOURCE,
};

/** struct spe_packet - one packet: @size bytes, header(s) included. */
struct spe_packet {
	enum spe_packet_type type;
	unsigned int index;
	__u64 payload;
	size_t size;
};

/**
 * spe_decoder__packet() - the packet at @buf.
 * Return: its size in bytes (at least 1), or 0 if @len is too short for it.
 */
size_t spe_decoder__packet(const void *buf, size_t len, struct spe_packet *pkt);

/**
 * spe_packet__addr() - an address packet's address, as perf's
 * arm_spe_calc_ip(): 56 bits; PC/target at EL1/EL2 (non-secure) and kernel
 * data addresses (bits 55:52 all set) get a top byte of 0xff.
 */
__u64 spe_packet__addr(const struct spe_packet *pkt);

/** spe_packet__desc() - what perf report -D says of @pkt ("PC 0x... el0 ns=1", "EV RETIRED ..."). */
const char *spe_packet__desc(const struct spe_packet *pkt, char *out, size_t size);

/* Event bits of the EVENTS packet. */
#define SPE_EV_L1D_ACCESS	(1ULL << 2)
#define SPE_EV_L1D_REFILL	(1ULL << 3)
#define SPE_EV_TLB_ACCESS	(1ULL << 4)
#define SPE_EV_TLB_WALK		(1ULL << 5)
#define SPE_EV_MISPRED		(1ULL << 7)
#define SPE_EV_LLC_ACCESS	(1ULL << 8)
#define SPE_EV_LLC_MISS		(1ULL << 9)
#define SPE_EV_REMOTE_ACCESS	(1ULL << 10)

/**
 * struct spe_record - what perf's arm_spe_read_record() keeps of a record.
 * @from_ip: PC; @to_ip: branch target; @va: data virtual address
 * @timestamp: 0 for a record ended by END
 * @context: CONTEXT payload, or (u64)-1
 * @events: EVENTS payload
 * @op: 0 no load/store, 1 load, 2 store
 */
struct spe_record {
	__u64 from_ip, to_ip, va, timestamp, context;
	__u64 events;
	int op;
};

/** spe_record__init() - an empty record (context (u64)-1). */
void spe_record__init(struct spe_record *rec);

/**
 * spe_record__add() - take @pkt into @rec.
 * Return: 1 if @pkt ended the record (TIMESTAMP or END), else 0.
 */
int spe_record__add(struct spe_record *rec, const struct spe_packet *pkt);

#endif
