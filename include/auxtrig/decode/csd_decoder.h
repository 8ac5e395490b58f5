/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CSD_DECODER_H
#define AUXTRIG_CSD_DECODER_H

/*
 * decode/ layer: CoreSight trace decoding over OpenCSD (user/decode/csd_decoder.c),
 * driven by script_cs.c.
 */

/**
 * DOC: CoreSight decoder
 *
 * A thin object over OpenCSD's C API (a "decode tree"): CoreSight
 * frame-formatted trace (ETB, ETR, perf AUX buffers) is demultiplexed by
 * trace ID and fed to one ETMv4 instruction decoder per ID, which turns it
 * into packets and, with the traced memory mapped in, into generic trace
 * elements (instruction ranges, exceptions, trace on/off...).
 *
 * The traced code is read from memory: csd_decoder__set_mem_fn() gives the
 * decoder a function that copies code bytes (from images mapped once), and
 * csd_decoder__map_file() maps a file region for it; OpenCSD's own file
 * accessor (a seek and a read per access) is not used.
 *
 * Packets and elements are delivered to callbacks in stream order;
 * csd_decoder__packet_line() and csd_decoder__elem_line() format them the
 * way OpenCSD's trc_pkt_lister prints them ("Idx:N; ID:xx; ...").
 *
 * csd_branches turns the element stream into the branch samples perf's
 * cs-etm decoder synthesises (perf script --itrace=b).
 *
 * Names use the csd_ prefix: ocsd_ belongs to OpenCSD.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/decode/csd_types.h"

struct csd_decoder;

/** struct csd_packet - one ETMv4 packet as the packet monitor saw it. */
struct csd_packet {
	__u64 index;		/* byte index of its first byte in the (formatted) buffer */
	__u8 trace_id;
	const void *pkt;	/* OpenCSD's ocsd_etmv4_i_pkt */
	const __u8 *raw;	/* its bytes, @size of them */
	__u32 size;
	int eot;		/* 1 for the end-of-trace notification (no packet) */
};

/**
 * struct csd_el - the parts of a generic trace element that samples and
 * windows are made of, in a form that can be copied between processes.
 * @type: OCSD_GEN_TRC_ELEM_*
 * @isa: ocsd_isa of an instruction range
 * @last_i_type, @last_i_subtype: ocsd_instr_type/_subtype of its last instruction
 * @timestamp: of an OCSD_GEN_TRC_ELEM_TIMESTAMP element
 */
struct csd_el {
	__u64 index;
	__u64 st_addr, en_addr;
	__u64 timestamp;
	__u8 trace_id;
	__u8 type;
	__u8 isa;
	__u8 last_i_type, last_i_subtype;
	__u8 last_instr_sz, last_instr_exec;
	__u8 ctxt_id_valid, vmid_valid;	/* PE_CONTEXT: which of these it carries */
	__u32 context_id, vmid;
	__u8 last_instr_cond;		/* INSTR_RANGE: its last instruction is conditional */
	__u8 pad2;
	__u16 exc_num;			/* EXCEPTION: its number */
};

/** csd_el__from() - @e's fields into @el. */
void csd_el__from(struct csd_el *el, const struct csd_elem *e);

/** typedef csd_packet_fn - receives each packet (and each trace ID's end of trace). */
typedef void (*csd_packet_fn)(const struct csd_packet *pkt, void *ctx);
/** typedef csd_elem_fn - receives each generic trace element. */
typedef void (*csd_elem_fn)(const struct csd_elem *elem, void *ctx);

/** CSD_FORMATTED - the input is CoreSight frame-formatted, frames memory aligned (ETB/ETR/perf). */
#define CSD_FORMATTED	0x1

/**
 * csd_decoder__new() - a decode tree.
 * @flags: %CSD_FORMATTED, or 0 for a raw single-source stream
 * Return: the decoder or NULL with errno set (ENOMEM, EINVAL).
 */
struct csd_decoder *csd_decoder__new(unsigned int flags);

/** csd_decoder__delete() - free the tree and its decoders; NULL is fine. */
void csd_decoder__delete(struct csd_decoder *d);

/**
 * csd_decoder__add_etmv4() - add an ETMv4 instruction decoder for the trace
 * ID in @regs->traceidr (ARMv8-A, Cortex-A profile).
 * @full: 1 to decode to elements, 0 for packets only
 * Return: 0 or -EINVAL (OpenCSD refused the configuration; logged).
 */
int csd_decoder__add_etmv4(struct csd_decoder *d, const struct csd_etmv4_regs *regs, int full);

/**
 * csd_decoder__add_ete() - add an ETE decoder (Armv9 trace, the ETMv4 register
 * set plus TRCDEVARCH in @devarch).
 * Return: 0 or -EINVAL (logged).
 */
int csd_decoder__add_ete(struct csd_decoder *d, const struct csd_etmv4_regs *regs, __u32 devarch, int full);

/**
 * typedef csd_mem_fn - copy up to @len bytes of code at @addr into @buf;
 * return how many (0: nothing there).
 */
typedef size_t (*csd_mem_fn)(void *ctx, __u64 addr, void *buf, size_t len);

/**
 * csd_decoder__set_mem_fn() - read all code through @fn (instead of mapped
 * files). Return: 0 or -EINVAL.
 */
int csd_decoder__set_mem_fn(struct csd_decoder *d, csd_mem_fn fn, void *ctx);

/** typedef csd_mem_id_fn - as &typedef csd_mem_fn, for the decoder of trace ID @trace_id. */
typedef size_t (*csd_mem_id_fn)(void *ctx, __u8 trace_id, __u64 addr, void *buf, size_t len);

/**
 * csd_decoder__set_mem_id_fn() - read all code through @fn, which is told
 * the trace ID asking (OpenCSD's trace ID memory callback, as perf uses
 * it). Instead of csd_decoder__set_mem_fn() and mapped files.
 * Return: 0 or -EINVAL.
 */
int csd_decoder__set_mem_id_fn(struct csd_decoder *d, csd_mem_id_fn fn, void *ctx);

/**
 * csd_decoder__add_mem_buffer() - @len bytes of code at @addr are at
 * @bytes (which must outlive the decoder): OpenCSD reads them itself,
 * without a callback. Instead of the callbacks; the buffers must not
 * overlap.
 * Return: 0, or -EINVAL (OpenCSD refused it: an overlap; nothing added).
 */
int csd_decoder__add_mem_buffer(struct csd_decoder *d, __u64 addr, const void *bytes, __u64 len);

/**
 * csd_decoder__map_file() - make @len bytes of file @path, from @offset,
 * readable to the decoders at address @addr (@len 0: to the end of file).
 * The file is mapped into memory once.
 * Return: 0 or -errno.
 */
int csd_decoder__map_file(struct csd_decoder *d, __u64 addr, const char *path, __u64 offset, __u64 len);

/**
 * csd_decoder__set_packet_fn() - call @fn for every packet (OpenCSD's packet
 * monitor) of every decoder added so far: add the decoders first.
 * Return: 0 or -EINVAL.
 */
int csd_decoder__set_packet_fn(struct csd_decoder *d, csd_packet_fn fn, void *ctx);

/** csd_decoder__set_elem_fn() - call @fn for every generic element. */
void csd_decoder__set_elem_fn(struct csd_decoder *d, csd_elem_fn fn, void *ctx);

/**
 * csd_decoder__decode() - feed @len bytes, then end-of-trace. With no
 * file mapped, code reads fail (elements: OCSD_GEN_TRC_ELEM_ADDR_NACC).
 * Return: 0, or -EIO if OpenCSD reported a fatal error.
 */
int csd_decoder__decode(struct csd_decoder *d, const void *buf, size_t len);

/**
 * csd_decoder__decode_at() - as csd_decoder__decode(), the first byte having
 * index @base (packets and elements are numbered from it: perf report -D
 * numbers a buffer's bytes from its AUX offset). On a fatal error @err_msg
 * (if not NULL) receives OpenCSD's message.
 */
int csd_decoder__decode_at(struct csd_decoder *d, const void *buf, size_t len, __u64 base, char *err_msg,
			   size_t err_size);

/**
 * csd_decoder__set_elem_resp_fn() - call @fn for every generic element,
 * instead of the csd_decoder__set_elem_fn() callback: %CSD_WAIT stops
 * csd_decoder__feed() after that element, %CSD_FATAL stops the decoding.
 */
void csd_decoder__set_elem_resp_fn(struct csd_decoder *d, csd_elem_resp_fn fn, void *ctx);

/**
 * csd_decoder__feed() - feed @len bytes (the first numbered @index) the way
 * perf's cs_etm_decoder__process_data_block() does: an element left waiting
 * by the last call is flushed first; stops at the next %CSD_WAIT, or when
 * all bytes are taken, without signalling end of trace.
 * @used: receives the number of bytes taken
 * Return: 0, 1 if it stopped at a %CSD_WAIT, or -EIO on a fatal error
 * (csd_decoder__last_error() says which).
 */
int csd_decoder__feed(struct csd_decoder *d, __u64 index, const void *buf, size_t len, size_t *used);

/**
 * csd_decoder__reset() - back to unsynchronised, dropping whatever is
 * pending (perf's cs_etm_decoder__reset() between buffers).
 * Return: 0 or -EIO.
 */
int csd_decoder__reset(struct csd_decoder *d);

/**
 * csd_decoder__nr_own() - how many buffers (csd_decoder__decode_at() calls,
 * or pieces between csd_decoder__reset()s) auxtrig's own ETMv4 decoder
 * (etm4_decoder.h) decoded instead of OpenCSD.
 */
__u64 csd_decoder__nr_own(const struct csd_decoder *d);

/** csd_decoder__last_error() - OpenCSD's last error message, or "". */
const char *csd_decoder__last_error(struct csd_decoder *d);

/**
 * csd_decoder__packet_line() - @pkt as trc_pkt_lister prints it, without
 * the newline: "Idx:86; ID:10; [0x95 0xaf ];\tI_NOT_SYNC : ...", or
 * "ID:10\tEND OF TRACE DATA" for the end-of-trace notification.
 */
char *csd_decoder__packet_line(const struct csd_packet *pkt, char *out, size_t size);

/** csd_decoder__elem_line() - @elem as trc_pkt_lister prints it ("Idx:N; ID:xx; OCSD_GEN_TRC_ELEM_..."). */
char *csd_decoder__elem_line(const struct csd_elem *elem, char *out, size_t size);

/**
 * struct csd_branch - a branch sample.
 * @from: address of the last executed instruction of the range before, 0
 *        after a discontinuity
 * @to: first instruction of the next range, 0 when trace stops
 */
struct csd_branch {
	__u64 from;
	__u64 to;
	__u8 from_size;		/* bytes of the instruction at @from, 0 when @from is 0 */
	__u32 flags;		/* SCRIPT_IP_FLAG_* (script_line.h): perf's branch kind */
};

/*
 * perf 6.1's cs_etm__set_sample_flags() in pieces, for the samples' flags:
 * csd_flags__range() is an instruction range's kind by its last instruction
 * (a conditional branch, a call, a return...), csd_flags__exception() an
 * exception's (a system call, an interrupt, a trap) by its number and
 * whether the instruction before it is SVC; csd_flags__is_svc() reads the
 * instruction of @isa that ends at @end through @read.
 */
__u32 csd_flags__range(__u8 last_i_type, __u8 last_i_subtype, __u8 cond);
__u32 csd_flags__exception(unsigned int exc_num, bool svc);
bool csd_flags__is_svc(size_t (*read)(void *ctx, __u64 addr, void *buf, size_t len), void *ctx, __u8 isa,
		       __u64 end);

/** typedef csd_branch_fn - receives each branch sample. */
typedef void (*csd_branch_fn)(const struct csd_branch *br, void *ctx);

/**
 * struct csd_branches - branch synthesis state; zero it, set @fn/@ctx and
 * feed every element of one trace ID to csd_branches__elem().
 *
 * As perf 6.1's cs-etm does: an instruction range whose predecessor was a
 * discontinuity (trace on, no sync) or a range ending in a taken branch
 * gives {last instruction of the previous range, start of this range} (an
 * exception or exception return after a range counts as its taken branch,
 * perf's cs_etm__exception()); a
 * discontinuity after a range gives {last instruction, 0}. End of trace
 * gives nothing: perf resets the decoder at the end of a buffer instead of
 * signalling end-of-trace, so it never sees that element.
 */
struct csd_branches {
	csd_branch_fn fn;
	void *ctx;
	int prev_type;		/* private: 0 none, 1 range, 2 discontinuity */
	__u64 prev_last_instr;
	int prev_taken;
	__u8 prev_last_size;
	__u8 prev_isa;
	__u32 prev_flags;
	size_t (*read)(void *ctx, __u64 addr, void *buf, size_t len);	/* code, for the SVC checks (or NULL) */
	void *read_ctx;
	__u64 nr_ranges;	/* instruction ranges seen */
	__u64 nr_branches;	/* samples given to @fn */
};

/** csd_branches__elem() - feed one generic element. */
void csd_branches__elem(struct csd_branches *b, const struct csd_el *el);

#endif
