/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ETM4_DECODER_H
#define AUXTRIG_ETM4_DECODER_H

/*
 * decode/ layer: auxtrig's own ETMv4 instruction trace decoder
 * (user/decode/etm4_decoder.c), used by csd_decoder.c in place of OpenCSD
 * for the configurations and buffers it supports.
 */

/**
 * DOC: own ETMv4 decoder
 *
 * Turns CoreSight ETMv4 instruction trace (frame formatted or a single raw
 * source) into the same generic trace elements, in the same order and with
 * the same fields, as OpenCSD 1.3's ETMv4 decoder produces for them, so that
 * every consumer of csd_decoder's element callbacks prints the same bytes.
 * It is faster mainly because the walk from an address to the next waypoint
 * (branch, ISB) in A64 code is cached per start address
 * (%ETM4_WP_CACHE_SIZE entries), so an atom costs a lookup.
 *
 * It supports A64 code only and the configurations perf and the Juno
 * snapshots use: no data trace, no conditional or Q elements, no cycle
 * counts, no return stack, no speculation (TRCIDR8.MAXSPEC 0), no WFI/WFE
 * waypoints. etm4_decoder__add_source() refuses anything else; for a
 * buffer, etm4_decoder__check() parses the packets (without walking code)
 * and refuses a packet kind or a sequence it does not decode as OpenCSD
 * would (T32/A32 state, a bad packet, a trace ID that never
 * synchronises, an exception not followed by its address ...): csd_decoder
 * then decodes that buffer with OpenCSD, so the choice never changes the
 * output.
 *
 * Names use the etm4_ prefix: ocsd_ belongs to OpenCSD.
 */

#include <linux/types.h>
#include <stddef.h>

#include "auxtrig/decode/csd_types.h"

struct etm4_decoder;

/** ETM4_WP_CACHE_SIZE - waypoint walks cached per decoder (a power of two). */
#define ETM4_WP_CACHE_SIZE	(1u << 14)

/** typedef etm4_read_fn - copy up to @len code bytes at @addr for trace ID @id into @buf; return how many. */
typedef size_t (*etm4_read_fn)(void *ctx, __u8 id, __u64 addr, void *buf, size_t len);

/**
 * etm4_decoder__new() - a decoder for frame-formatted trace (@formatted 1)
 * or for a single raw source (@formatted 0).
 * Return: the decoder or NULL with errno set.
 */
struct etm4_decoder *etm4_decoder__new(int formatted);

/** etm4_decoder__delete() - free it; NULL is fine. */
void etm4_decoder__delete(struct etm4_decoder *d);

/**
 * etm4_decoder__add_source() - decode the trace ID in @regs->traceidr.
 * Return: 0, -EOPNOTSUPP for a configuration it does not decode (nothing
 * added), -ENOSPC past 128 sources.
 */
int etm4_decoder__add_source(struct etm4_decoder *d, const struct csd_etmv4_regs *regs);

/** etm4_decoder__set_read_fn() - where code is read from. */
void etm4_decoder__set_read_fn(struct etm4_decoder *d, etm4_read_fn fn, void *ctx);

/**
 * etm4_decoder__set_elem_fn() - @fn receives every element; %CSD_WAIT stops
 * etm4_decoder__feed() after it, %CSD_FATAL stops the decoding.
 */
void etm4_decoder__set_elem_fn(struct etm4_decoder *d, csd_elem_resp_fn fn, void *ctx);

/**
 * etm4_decoder__set_volatile_code() - code read for one context may differ
 * for the next: forget the cached walks at every PE context element.
 */
void etm4_decoder__set_volatile_code(struct etm4_decoder *d, int on);

/**
 * etm4_decoder__check() - whether this decoder, from its reset state,
 * decodes @len bytes as OpenCSD does; @eot 1 if the end of trace follows
 * them. Parses packets only; changes nothing.
 * Return: 1 yes, 0 no (OpenCSD must decode them), -ENOMEM.
 */
int etm4_decoder__check(struct etm4_decoder *d, const void *buf, size_t len, int eot);

/**
 * etm4_decoder__feed() - decode @len bytes, the first numbered @index;
 * elements left over by a %CSD_WAIT are delivered first.
 * @used: receives the bytes taken
 * Return: 0, 1 if an element callback said %CSD_WAIT, -EIO on %CSD_FATAL.
 */
int etm4_decoder__feed(struct etm4_decoder *d, __u64 index, const void *buf, size_t len, size_t *used);

/**
 * etm4_decoder__eot() - end of trace: the pending elements and one
 * end-of-trace element per source. Return: 0, 1 after a %CSD_WAIT (call
 * it again for the rest), or -EIO.
 */
int etm4_decoder__eot(struct etm4_decoder *d);

/** etm4_decoder__reset() - back to unsynchronised, pending elements dropped. */
void etm4_decoder__reset(struct etm4_decoder *d);

#endif
