// SPDX-License-Identifier: BSD-2-Clause
/*
 * etm4_decoder: auxtrig's own ETMv4 instruction trace decoder, producing
 * the generic trace elements OpenCSD 1.3's decoder produces (A64 code, the
 * configurations in etm4_decoder.h). Three stages per input byte:
 *
 *   frame deformatter ──► per trace ID packet parser ──► element generator
 *   (16-byte frames)      (address history, TS)          (P0 queue, waypoint walks)
 *
 * The element generator keeps OpenCSD's order: packets that are not P0
 * elements (trace on, address, context, timestamp, event, exception return)
 * wait in a queue until the next atom or exception commits them, and all the
 * elements one packet commits are built (code walked) before the first of
 * them is delivered, so a memory callback sees the state the elements
 * delivered before it left, as with OpenCSD.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/decode/etm4_decoder.h"

/* decoder states, as OpenCSD's: an element NO_SYNC, then an A-sync, then a trace info */
enum { E4_NO_SYNC, E4_WAIT_SYNC, E4_WAIT_TINFO, E4_DECODE };

/* queued (not yet committed) items */
enum { Q_TRC_ON, Q_ADDR, Q_CTXT, Q_TS, Q_EVENT, Q_ATOM, Q_EXCEP, Q_EXCEP_RET };

struct e4_ctxt {
	__u32 ctxt_id, vmid;
	__u8 el, sf, ns, updated, updated_c, updated_v;
};

struct e4_item {
	__u8 kind;
	__u8 is;		/* Q_ADDR, Q_CTXT: instruction set bit */
	__u8 prev_same;		/* Q_EXCEP: address is also a branch target */
	__u8 nr_atoms;		/* Q_ATOM */
	__u32 bits;		/* Q_ATOM: E bits, oldest first; Q_EXCEP: number; Q_EVENT */
	__u64 index;
	__u64 val;		/* Q_ADDR: address; Q_TS: timestamp */
	struct e4_ctxt ctxt;
};

/* the walk from an address to the next waypoint, cached */
struct e4_wp {
	__u64 start, end;	/* end: after the waypoint, or where code could not be read */
	__u64 target;		/* direct branch target */
	__u32 nr_instr;
	__u32 gen;		/* valid while the decoder's wp_gen is this (0: never) */
	__u8 found;		/* 0: no waypoint before unreadable code */
	__u8 id;		/* the trace ID whose code it is */
	__u8 type, subtype, cond;
};

struct e4_out {
	__u64 index;
	__u8 id;
	ocsd_generic_trace_elem e;
};

struct etm4_src {
	__u8 id;
	__u8 vmid_bytes, cid_bytes;
	/* packet parser */
	__u8 synced, got_bytes;
	/* before the first A-sync: OpenCSD's packet of unsynchronised bytes */
	__u8 u_hdr;		/* the next byte starts one */
	__u8 u_fn;		/* what the next byte is read as: E4_U_* */
	__u32 u_len;		/* its bytes held */
	__u64 u_pidx;		/* its index */
	__u8 pkt[40];
	int n;
	__u64 pkt_index;
	__u64 hist[3];
	__u8 hist_is[3];
	__u64 ts;
	/* element generator */
	int state;
	__u8 need_ctxt, need_addr, is64, pending_addr, ctxt_seen, prev_overflow;
	__u8 isa;
	__u8 i_type, i_subtype, i_cond;
	__u64 instr_addr;
	__u64 cur_index;
	struct e4_item *q;
	size_t nr_q, cap_q;
	/* what every element carries over from the one before (OpenCSD's persistent data), kept over resets */
	ocsd_pe_context pctx;
	__u8 pisa;
	/* check mode */
	__u8 excep_wait;	/* 1: an exception waits for its address; 2: its context came */
};

struct etm4_decoder {
	int formatted;
	int check;		/* parsing for etm4_decoder__check(): no walks, no elements */
	int unsupported;	/* check: found something OpenCSD must decode */
	int fatal;
	int volatile_code;
	int eot_id;		/* etm4_decoder__eot(): the next trace ID to end */
	struct etm4_src *src[128];
	struct etm4_src *only;	/* the raw source */
	/* deformatter */
	__u8 frame[16];
	int nr_frame;
	__u64 frame_index;
	__u8 cur_id;
	__u8 run_id[16], run_byte[16];
	__u64 run_at[16];
	int nr_run, at_run;
	/* elements built, not yet delivered */
	struct e4_out *out;
	size_t nr_out, cap_out, at_out;
	etm4_read_fn read;
	void *read_ctx;
	csd_elem_resp_fn fn;
	void *fn_ctx;
	struct e4_wp *wp;
	__u32 wp_gen;		/* the cached walks' generation: a new one forgets them all */
};

#define E4_NO_ID 0xff

struct etm4_decoder *etm4_decoder__new(int formatted)
{
	struct etm4_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->formatted = formatted;
	d->cur_id = E4_NO_ID;
	d->wp_gen = 1;
	return d;
}

void etm4_decoder__delete(struct etm4_decoder *d)
{
	if (!d)
		return;
	for (int i = 0; i < 128; i++) {
		if (d->src[i])
			free(d->src[i]->q);
		free(d->src[i]);
	}
	free(d->out);
	free(d->wp);
	free(d);
}

/* CONFIGR bits: what this decoder does not decode */
#define E4_CFG_INSTP0	(3u << 1)
#define E4_CFG_CCI	(1u << 4)
#define E4_CFG_COND	(7u << 8)
#define E4_CFG_RS	(1u << 12)
#define E4_CFG_QE	(3u << 13)
#define E4_CFG_DATA	(3u << 16)

int etm4_decoder__add_source(struct etm4_decoder *d, const struct csd_etmv4_regs *r)
{
	__u8 id = r->traceidr & 0x7f;
	__u32 version = ((r->idr1 >> 8) & 0xf) << 4 | ((r->idr1 >> 4) & 0xf);
	__u32 vmidsz = (r->idr2 >> 10) & 0x1f, cidsz = (r->idr2 >> 5) & 0x1f;
	struct etm4_src *s;

	if (r->configr & (E4_CFG_INSTP0 | E4_CFG_CCI | E4_CFG_COND | E4_CFG_RS | E4_CFG_QE | E4_CFG_DATA))
		return -EOPNOTSUPP;
	if (r->idr8 & 0xff)		/* MAXSPEC: speculative trace */
		return -EOPNOTSUPP;
	if ((r->idr2 & 0x80000000u) && version >= 0x43)	/* WFI/WFE traced as branches */
		return -EOPNOTSUPP;
	if (d->src[id] || (!d->formatted && d->only))
		return -EOPNOTSUPP;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->id = id;
	s->vmid_bytes = vmidsz == 1 ? 1 : version > 0x40 && vmidsz == 2 ? 2 : version > 0x40 && vmidsz == 4 ? 4 : 0;
	s->cid_bytes = cidsz == 4 ? 4 : 0;
	d->src[id] = s;
	if (!d->formatted)
		d->only = s;
	return 0;
}

void etm4_decoder__set_read_fn(struct etm4_decoder *d, etm4_read_fn fn, void *ctx)
{
	d->read = fn;
	d->read_ctx = ctx;
}

void etm4_decoder__set_elem_fn(struct etm4_decoder *d, csd_elem_resp_fn fn, void *ctx)
{
	d->fn = fn;
	d->fn_ctx = ctx;
}

void etm4_decoder__set_volatile_code(struct etm4_decoder *d, int on)
{
	d->volatile_code = on;
}

static void e4_src__reset(struct etm4_src *s)
{
	s->synced = s->got_bytes = 0;
	s->u_hdr = 1;
	s->u_len = 0;
	s->n = 0;
	memset(s->hist, 0, sizeof(s->hist));
	memset(s->hist_is, 0, sizeof(s->hist_is));
	s->ts = 0;
	s->state = E4_NO_SYNC;
	s->need_ctxt = s->need_addr = 1;
	s->is64 = 0;
	s->pending_addr = 0;
	s->ctxt_seen = 0;
	s->prev_overflow = 0;
	s->isa = ocsd_isa_arm;
	s->i_type = OCSD_INSTR_OTHER;
	s->i_subtype = OCSD_S_INSTR_NONE;
	s->i_cond = 0;
	s->instr_addr = 0;
	s->cur_index = 0;
	s->nr_q = 0;
	s->excep_wait = 0;
}

void etm4_decoder__reset(struct etm4_decoder *d)
{
	for (int i = 0; i < 128; i++)
		if (d->src[i])
			e4_src__reset(d->src[i]);
	d->nr_frame = 0;
	d->cur_id = E4_NO_ID;
	d->nr_run = d->at_run = 0;
	d->nr_out = d->at_out = 0;
	d->fatal = 0;
	d->eot_id = 0;
}

/* ---- elements ---- */

static ocsd_generic_trace_elem *e4_out__add(struct etm4_decoder *d, struct etm4_src *s, __u64 index, int type)
{
	struct e4_out *o;

	if (d->check)
		return NULL;
	if (d->nr_out == d->cap_out) {
		size_t cap = d->cap_out ? d->cap_out * 2 : 64;
		struct e4_out *v = realloc(d->out, cap * sizeof(*v));

		if (!v) {
			d->fatal = 1;
			return NULL;
		}
		d->out = v;
		d->cap_out = cap;
	}
	o = &d->out[d->nr_out++];
	memset(o, 0, sizeof(*o));
	o->index = index;
	o->id = s->id;
	o->e.elem_type = type;
	o->e.context = s->pctx;
	o->e.isa = s->pisa;
	return &o->e;
}

/* forget every cached walk, at once */
static void etm4_decoder__forget_code(struct etm4_decoder *d)
{
	if (!++d->wp_gen) {	/* wrapped: generation 0 means never valid */
		memset(d->wp, 0, ETM4_WP_CACHE_SIZE * sizeof(*d->wp));
		d->wp_gen = 1;
	}
}

/* deliver what was built: 1 if a callback asked to wait, -EIO if fatal */
static int e4_deliver(struct etm4_decoder *d)
{
	while (d->at_out < d->nr_out) {
		struct e4_out *o = &d->out[d->at_out++];
		struct csd_elem e = { .index = o->index, .trace_id = o->id, .elem = &o->e };
		enum csd_resp r = d->fn ? d->fn(&e, d->fn_ctx) : CSD_CONT;

		if (o->e.elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT && d->volatile_code && d->wp)
			etm4_decoder__forget_code(d);
		if (r == CSD_FATAL) {
			d->fatal = 1;
			return -EIO;
		}
		if (r == CSD_WAIT)
			return 1;
	}
	d->nr_out = d->at_out = 0;
	return 0;
}

/* ---- A64 instructions: OpenCSD's classification for an ARMv8 (not v8.3) PE ---- */

static void e4_a64_classify(__u32 in, __u64 addr, struct e4_wp *w)
{
	w->subtype = OCSD_S_INSTR_NONE;
	w->cond = 0;
	if ((in & 0xffdffc1f) == 0xd61f0000) {			/* BR, BLR */
		w->type = OCSD_INSTR_BR_INDIRECT;
		if (in & 0x00200000)
			w->subtype = OCSD_S_INSTR_BR_LINK;
	} else if ((in & 0xfffffc1f) == 0xd65f0000) {		/* RET */
		w->type = OCSD_INSTR_BR_INDIRECT;
		w->subtype = OCSD_S_INSTR_V8_RET;
	} else if (in == 0xd69f03e0) {				/* ERET */
		w->type = OCSD_INSTR_BR_INDIRECT;
		w->subtype = OCSD_S_INSTR_V8_ERET;
	} else if ((in & 0x7c000000) == 0x34000000) {		/* CB, TB */
		w->type = OCSD_INSTR_BR;
		w->cond = 1;
		if ((in & 0x7e000000) == 0x34000000)
			w->target = addr + (__u64)(__s64)((__s32)((in & 0x00ffffe0) << 8) >> 11);
		else
			w->target = addr + (__u64)(__s64)((__s32)((in & 0x0007ffe0) << 13) >> 16);
	} else if ((in & 0xff000010) == 0x54000000) {		/* B.cond */
		w->type = OCSD_INSTR_BR;
		w->cond = 1;
		w->target = addr + (__u64)(__s64)((__s32)((in & 0x00ffffe0) << 8) >> 11);
	} else if ((in & 0x7c000000) == 0x14000000) {		/* B, BL */
		w->type = OCSD_INSTR_BR;
		if (in & 0x80000000)
			w->subtype = OCSD_S_INSTR_BR_LINK;
		w->target = addr + (__u64)(__s64)((__s32)((in & 0x03ffffff) << 6) >> 4);
	} else if ((in & 0xfffff0ff) == 0xd50330df) {		/* ISB */
		w->type = OCSD_INSTR_ISB;
	} else {
		w->type = OCSD_INSTR_OTHER;
	}
}

/*
 * Walk from @start: to the first waypoint (@to_addr 0), or until the next
 * instruction is at @match (@to_addr 1), or to unreadable code.
 */
static void e4_walk(struct etm4_decoder *d, struct etm4_src *s, __u64 start, int to_addr, __u64 match,
		    struct e4_wp *w)
{
	__u8 buf[256];
	size_t have = 0, at = 0;
	__u64 addr = start;

	memset(w, 0, sizeof(*w));
	w->start = start;
	w->type = s->i_type;	/* no instruction decoded: the last one's stays */
	w->subtype = s->i_subtype;
	w->cond = s->i_cond;
	for (;;) {
		__u32 in;

		if (have - at < 4) {
			have = d->read ? d->read(d->read_ctx, s->id, addr, buf, sizeof(buf)) : 0;
			at = 0;
			if (have > sizeof(buf))
				have = sizeof(buf);
			if (have < 4) {
				w->end = addr;
				return;
			}
		}
		memcpy(&in, buf + at, 4);
		at += 4;
		e4_a64_classify(in, addr, w);
		addr += 4;
		w->nr_instr++;
		if (to_addr ? addr == match : w->type != OCSD_INSTR_OTHER) {
			w->found = 1;
			w->end = addr;
			return;
		}
	}
}

static const struct e4_wp *e4_walk_cached(struct etm4_decoder *d, struct etm4_src *s, __u64 start)
{
	struct e4_wp *w;
	__u64 h = (start >> 2) * 0x9e3779b97f4a7c15ull;

	if (!d->wp) {
		d->wp = calloc(ETM4_WP_CACHE_SIZE, sizeof(*d->wp));
		if (!d->wp) {
			static struct e4_wp one;

			e4_walk(d, s, start, 0, 0, &one);
			return &one;
		}
	}
	h += (__u64)s->id * 0x2545f4914f6cdd1dull;
	w = &d->wp[(h >> 40) & (ETM4_WP_CACHE_SIZE - 1)];
	if (w->gen != d->wp_gen || w->start != start || w->id != s->id) {
		/* (a walk of no instruction has no type of its own: users look at nr_instr first) */
		e4_walk(d, s, start, 0, 0, w);
		w->id = s->id;
		w->gen = d->wp_gen;
	}
	return w;
}

static void e4_range(struct etm4_decoder *d, struct etm4_src *s, __u64 index, __u64 st, __u64 en, __u32 n,
		     int exec)
{
	ocsd_generic_trace_elem *e = e4_out__add(d, s, index, OCSD_GEN_TRC_ELEM_INSTR_RANGE);

	if (!e)
		return;
	e->isa = s->pisa = s->isa;
	e->st_addr = st;
	e->en_addr = en;
	e->num_instr_range = n;
	e->last_i_type = s->i_type;
	e->last_i_subtype = s->i_subtype;
	e->last_instr_exec = exec;
	e->last_instr_sz = 4;
	e->last_instr_cond = s->i_cond;
}

static void e4_atom(struct etm4_decoder *d, struct etm4_src *s, __u64 index, int taken)
{
	const struct e4_wp *w;
	__u64 st = s->instr_addr;

	if (d->check) {
		if (s->isa != ocsd_isa_aarch64)
			d->unsupported = 1;
		return;
	}
	if (s->isa != ocsd_isa_aarch64) {	/* never: check refused it */
		d->fatal = 1;
		return;
	}
	w = e4_walk_cached(d, s, st);
	if (w->nr_instr) {
		s->i_type = w->type;
		s->i_subtype = w->subtype;
		s->i_cond = w->cond;
	}
	if (w->found) {
		s->instr_addr = w->end;
		if (w->type == OCSD_INSTR_BR && taken)
			s->instr_addr = w->target;
		else if (w->type == OCSD_INSTR_BR_INDIRECT && taken)
			s->need_addr = 1;
		e4_range(d, s, index, st, w->end, w->nr_instr, taken);
		return;
	}
	s->instr_addr = w->end;
	s->need_addr = 1;
	if (st != w->end)
		e4_range(d, s, index, st, w->end, w->nr_instr, 1);
	ocsd_generic_trace_elem *e = e4_out__add(d, s, index, OCSD_GEN_TRC_ELEM_ADDR_NACC);

	if (e)
		e->st_addr = w->end;
}

static __u8 e4_isa(const struct etm4_src *s, int is)
{
	return is ? ocsd_isa_thumb2 : s->is64 ? ocsd_isa_aarch64 : ocsd_isa_arm;
}

static void e4_context(struct etm4_decoder *d, struct etm4_src *s, const struct e4_item *it, __u64 index)
{
	ocsd_generic_trace_elem *e = e4_out__add(d, s, index, OCSD_GEN_TRC_ELEM_PE_CONTEXT);

	s->is64 = it->ctxt.sf;
	s->isa = e4_isa(s, it->is);
	s->need_ctxt = 0;
	if (!e)
		return;
	e->context.bits64 = it->ctxt.sf;
	e->context.security_level = it->ctxt.ns ? ocsd_sec_nonsecure : ocsd_sec_secure;
	e->context.exception_level = it->ctxt.el;
	e->context.el_valid = 1;
	if (it->ctxt.updated_c) {
		e->context.ctxt_id_valid = 1;
		e->context.context_id = it->ctxt.ctxt_id;
	}
	if (it->ctxt.updated_v) {
		e->context.vmid_valid = 1;
		e->context.vmid = it->ctxt.vmid;
	}
	e->isa = s->pisa = s->isa;
	s->pctx = e->context;
}

static void e4_ts_event(struct etm4_decoder *d, struct etm4_src *s, const struct e4_item *it)
{
	ocsd_generic_trace_elem *e;

	if (it->kind == Q_TS) {
		e = e4_out__add(d, s, it->index, OCSD_GEN_TRC_ELEM_TIMESTAMP);
		if (e)
			e->timestamp = it->val;
	} else if (it->kind == Q_EVENT) {
		e = e4_out__add(d, s, it->index, OCSD_GEN_TRC_ELEM_EVENT);
		if (e) {
			e->trace_event.ev_type = EVENT_NUMBERED;
			e->trace_event.ev_number = it->bits;
		}
	}
}

/* the exception at q[*i], its optional context and its address after it */
static void e4_exception(struct etm4_decoder *d, struct etm4_src *s, size_t *i)
{
	const struct e4_item *ex = &s->q[*i], *ctxt = NULL, *addr;
	__u64 ret;
	ocsd_generic_trace_elem *e;
	struct e4_wp w = { 0 };
	int nacc = 0;

	if (*i + 1 < s->nr_q && s->q[*i + 1].kind == Q_CTXT)
		ctxt = &s->q[++*i];
	if (*i + 1 >= s->nr_q || s->q[*i + 1].kind != Q_ADDR) {	/* never: check refused it */
		d->unsupported = d->fatal = 1;
		return;
	}
	addr = &s->q[++*i];
	ret = addr->val;
	if (ex->prev_same) {
		int b64 = ctxt ? ctxt->ctxt.sf : s->isa == ocsd_isa_aarch64;

		s->instr_addr = ret;
		s->isa = addr->is ? ocsd_isa_thumb2 : b64 ? ocsd_isa_aarch64 : ocsd_isa_arm;
		s->need_addr = 0;
	}
	if (ctxt)
		e4_context(d, s, ctxt, ex->index);
	if (s->instr_addr != ret) {
		if (s->isa != ocsd_isa_aarch64) {
			d->unsupported = 1;
			if (!d->check)
				d->fatal = 1;
			return;
		}
		if (!d->check) {
			e4_walk(d, s, s->instr_addr, 1, ret, &w);
			if (w.nr_instr) {
				s->i_type = w.type;
				s->i_subtype = w.subtype;
				s->i_cond = w.cond;
			}
			if (w.found) {
				e4_range(d, s, ex->index, s->instr_addr, w.end, w.nr_instr, 1);
			} else {
				s->need_addr = 1;
				if (s->instr_addr != w.end)
					e4_range(d, s, ex->index, s->instr_addr, w.end, w.nr_instr, 1);
				nacc = 1;
			}
			s->instr_addr = w.end;
		}
	}
	if (nacc) {
		e = e4_out__add(d, s, ex->index, OCSD_GEN_TRC_ELEM_ADDR_NACC);
		if (e)
			e->st_addr = s->instr_addr;
	}
	e = e4_out__add(d, s, ex->index, OCSD_GEN_TRC_ELEM_EXCEPTION);
	if (e) {
		e->en_addr = ret;
		e->excep_ret_addr = 1;
		e->excep_ret_addr_br_tgt = ex->prev_same;
		e->exception_number = ex->bits;
	}
}

/* commit every queued item (the newest is the P0 element that made the commit) */
static void e4_commit(struct etm4_decoder *d, struct etm4_src *s)
{
	for (size_t i = 0; i < s->nr_q && !d->fatal; i++) {
		struct e4_item *it = &s->q[i];
		ocsd_generic_trace_elem *e;

		switch (it->kind) {
		case Q_TRC_ON:
			e = e4_out__add(d, s, it->index, OCSD_GEN_TRC_ELEM_TRACE_ON);
			if (e)
				e->trace_on_reason = s->prev_overflow ? TRACE_ON_OVERFLOW : TRACE_ON_NORMAL;
			s->prev_overflow = 0;
			break;
		case Q_ADDR:
			s->instr_addr = it->val;
			s->isa = e4_isa(s, it->is);
			s->need_addr = 0;
			break;
		case Q_CTXT:
			if (it->ctxt.updated)
				e4_context(d, s, it, it->index);
			break;
		case Q_TS:
		case Q_EVENT:
			e4_ts_event(d, s, it);
			break;
		case Q_ATOM:
			for (int a = 0; a < it->nr_atoms && !d->fatal; a++)
				if (!s->need_ctxt && !s->need_addr)
					e4_atom(d, s, it->index, (it->bits >> a) & 1);
			break;
		case Q_EXCEP:
			e4_exception(d, s, &i);
			break;
		case Q_EXCEP_RET:
			e4_out__add(d, s, it->index, OCSD_GEN_TRC_ELEM_EXCEPTION_RET);
			break;
		}
	}
	s->nr_q = 0;
}

static struct e4_item *e4_push(struct etm4_decoder *d, struct etm4_src *s, int kind)
{
	struct e4_item *it;

	if (s->nr_q == s->cap_q) {
		size_t cap = s->cap_q ? s->cap_q * 2 : 16;
		struct e4_item *v = realloc(s->q, cap * sizeof(*v));

		if (!v) {
			d->fatal = d->unsupported = 1;
			return NULL;
		}
		s->q = v;
		s->cap_q = cap;
	}
	it = &s->q[s->nr_q++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->index = s->pkt_index;
	return it;
}

/* ---- packets ---- */

static __u64 e4_le(const __u8 *p, int n)
{
	__u64 v = 0;

	for (int i = 0; i < n; i++)
		v |= (__u64)p[i] << (8 * i);
	return v;
}

/* bytes of a context payload from its info byte @p (its first) */
static int e4_ctxt_len(const struct etm4_src *s, __u8 info)
{
	return 1 + ((info & 0x40) ? s->vmid_bytes : 0) + ((info & 0x80) ? s->cid_bytes : 0);
}

static void e4_ctxt_parse(const struct etm4_src *s, const __u8 *p, struct e4_ctxt *c)
{
	int at = 1;

	c->el = p[0] & 3;
	c->sf = (p[0] >> 4) & 1;
	c->ns = (p[0] >> 5) & 1;
	c->updated = 1;
	c->updated_v = (p[0] >> 6) & 1;
	c->updated_c = (p[0] >> 7) & 1;
	if (c->updated_v) {
		c->vmid = (__u32)e4_le(p + at, s->vmid_bytes);
		at += s->vmid_bytes;
	}
	if (c->updated_c)
		c->ctxt_id = (__u32)e4_le(p + at, s->cid_bytes);
}

/*
 * The length of the packet in @p[0..@n): > @n needs more bytes, 0 more
 * bytes to tell, -1 a packet this decoder does not decode.
 */
static int e4_pkt_len(const struct etm4_src *s, const __u8 *p, int n)
{
	__u8 h = p[0];
	int i;

	switch (h) {
	case 0x00:	/* A-sync, discard, overflow */
		if (n < 2)
			return 0;
		if (p[1] == 0x03 || p[1] == 0x05)
			return 2;
		if (p[1] != 0x00)
			return -1;
		for (i = 2; i < n && i < 11; i++)
			if (p[i])
				return -1;
		if (n == 12 && p[11] != 0x80)
			return -1;
		return 12;
	case 0x01:	/* trace info: control byte, then its sections */
		if (n < 2)
			return 0;
		if (p[1] & 0x80)
			return -1;
		i = 2;
		for (int sect = 0; sect < 4; sect++) {
			if (!(p[1] & (1 << sect)))
				continue;
			for (int k = 0;; k++) {
				if (i >= n)
					return 0;
				if (k == 5)
					return -1;
				if (!(p[i++] & 0x80))
					break;
			}
		}
		return i;
	case 0x02:	/* timestamp, no cycle count */
		for (i = 1; i < n; i++)
			if (i == 9 || !(p[i] & 0x80))
				return i + 1;
		return 0;
	case 0x04:	/* trace on */
	case 0x07:	/* exception return */
	case 0x80:	/* context, same */
	case 0x90: case 0x91: case 0x92:	/* exact match address */
		return 1;
	case 0x06:	/* exception */
		if (n < 2)
			return 0;
		return p[1] & 0x80 ? 3 : 2;
	case 0x81:
		if (n < 2)
			return 0;
		return 1 + e4_ctxt_len(s, p[1]);
	case 0x82:	/* 32-bit address, IS0, with context */
		if (n < 6)
			return 0;
		return 5 + e4_ctxt_len(s, p[5]);
	case 0x85:	/* 64-bit address, IS0, with context */
		if (n < 10)
			return 0;
		return 9 + e4_ctxt_len(s, p[9]);
	case 0x95:	/* short address IS0 */
		if (n < 2)
			return 0;
		return p[1] & 0x80 ? 3 : 2;
	case 0x9a:
		return 5;
	case 0x9d:
		return 9;
	default:
		if (h >= 0x70 && h <= 0x7f)	/* 0x70: see e4_decode_pkt(); events */
			return 1;
		if (h >= 0xc0)			/* atoms */
			return 1;
		return -1;
	}
}

static void e4_hist_push(struct etm4_src *s, __u64 addr, __u8 is)
{
	s->hist[2] = s->hist[1];
	s->hist_is[2] = s->hist_is[1];
	s->hist[1] = s->hist[0];
	s->hist_is[1] = s->hist_is[0];
	s->hist[0] = addr;
	s->hist_is[0] = is;
}

/* an address packet's IS0 bits 2..: b0 7 bits, b1 7 bits, then whole bytes */
static __u64 e4_long_addr(const __u8 *p, int bytes)
{
	__u64 v = ((__u64)(p[0] & 0x7f) << 2) | ((__u64)(p[1] & 0x7f) << 9);

	for (int i = 2; i < bytes; i++)
		v |= (__u64)p[i] << (8 * i);
	return v;
}

static void e4_atoms(const __u8 h, __u32 *bits, __u8 *nr)
{
	if (h >= 0xf6 && h <= 0xf7) {
		*nr = 1;
		*bits = h & 1;
	} else if (h >= 0xf8) {
		*nr = 3;
		*bits = h & 7;
	} else if (h >= 0xd8 && h <= 0xdb) {
		*nr = 2;
		*bits = h & 3;
	} else if (h >= 0xdc && h <= 0xdf) {
		static const __u8 f4[] = { 0xe, 0x0, 0xa, 0x5 };

		*nr = 4;
		*bits = f4[h & 3];
	} else if ((h >= 0xd5 && h <= 0xd7) || h == 0xf5) {
		static const __u8 f5[] = { 0, 0x00, 0x0a, 0x15, 0, 0x1e };

		*nr = 5;
		*bits = f5[((h >> 3) & 4) | (h & 3)];
	} else {					/* F6: 3 to 23 E, then E or N */
		*nr = (h & 0x1f) + 4;
		*bits = (1u << (*nr - 1)) - 1;
		if (!(h & 0x20))
			*bits |= 1u << (*nr - 1);
	}
}

/*
 * Overflow or discard: OpenCSD's discardElements(): the timestamps and
 * events waiting are delivered, the rest dropped, and the decoder is
 * unsynchronised again (an element NO_SYNC for this very packet).
 */
static void e4_discard(struct etm4_decoder *d, struct etm4_src *s)
{
	for (size_t i = 0; i < s->nr_q; i++)
		e4_ts_event(d, s, &s->q[i]);
	s->nr_q = 0;
	s->pending_addr = 0;
	s->excep_wait = 0;
	s->need_ctxt = s->need_addr = 1;
	e4_out__add(d, s, s->pkt_index, OCSD_GEN_TRC_ELEM_NO_SYNC);
	s->state = E4_WAIT_SYNC;
}

/*
 * With d->check, instead of committing the queue: track the instruction set
 * as the commit would, flag what the own decoder does not decode, drop it.
 */
static void e4_check_commit(struct etm4_decoder *d, struct etm4_src *s)
{
	for (size_t i = 0; i < s->nr_q; i++) {
		struct e4_item *q = &s->q[i];

		if (q->kind == Q_ADDR) {
			s->isa = e4_isa(s, q->is);
		} else if (q->kind == Q_CTXT && q->ctxt.updated) {
			s->is64 = q->ctxt.sf;
			s->isa = e4_isa(s, q->is);
			s->need_ctxt = 0;
		} else if (q->kind == Q_ATOM) {
			if (!s->need_ctxt && s->isa != ocsd_isa_aarch64)
				d->unsupported = 1;
		} else if (q->kind == Q_EXCEP) {
			size_t k = i + 1;
			const struct e4_item *c = NULL;

			if (k < s->nr_q && s->q[k].kind == Q_CTXT)
				c = &s->q[k++];
			if (q->prev_same && k < s->nr_q) {
				int b64 = c ? c->ctxt.sf : s->isa == ocsd_isa_aarch64;

				s->isa = s->q[k].is ? ocsd_isa_thumb2 : b64 ? ocsd_isa_aarch64 : ocsd_isa_arm;
			}
			if (c) {
				s->is64 = c->ctxt.sf;
				s->isa = e4_isa(s, c->is);
				s->need_ctxt = 0;
			}
			/* the walk to the return address (none for a branch target) needs A64 */
			if (!q->prev_same && s->isa != ocsd_isa_aarch64)
				d->unsupported = 1;
			i = k;	/* its address */
			continue;
		}
	}
	s->nr_q = 0;
}

/*
 * An address packet (with a context, headers 0x82 and 0x85) queued.
 * Return: 1 when it is the address an exception waited for (the queue is
 * committed), 0, or -1 when the queue is full.
 */
static int e4_addr(struct etm4_decoder *d, struct etm4_src *s, const __u8 *p, __u64 addr, __u8 is)
{
	__u8 h = p[0];
	struct e4_item *it;

	if (h == 0x82 || h == 0x85) {
		it = e4_push(d, s, Q_CTXT);
		if (!it)
			return -1;
		e4_ctxt_parse(s, p + (h == 0x82 ? 5 : 9), &it->ctxt);
		it->is = is;
		if (!it->ctxt.sf)
			d->unsupported = 1;
		s->ctxt_seen = 1;
	}
	it = e4_push(d, s, Q_ADDR);
	if (!it)
		return -1;
	it->val = addr;
	it->is = is;
	if (is)
		d->unsupported = 1;
	if (s->pending_addr) {
		s->pending_addr = 0;
		return 1;
	}
	return 0;
}

/* the element generator's part of a packet, in state E4_DECODE */
static void e4_decode_pkt(struct etm4_decoder *d, struct etm4_src *s, const __u8 *p, int n, __u64 addr, __u8 is,
			  int is_addr)
{
	__u8 h = p[0];
	struct e4_item *it;
	int commit = 0;

	if (d->check && s->excep_wait) {
		/* an exception's address (with its context) must follow it */
		int ok = is_addr || (h == 0x81 && s->excep_wait == 1);

		if (!ok) {
			d->unsupported = 1;
			return;
		}
		s->excep_wait = is_addr ? 0 : 2;
	}
	switch (h) {
	case 0x00:
		if (n == 2) {
			s->prev_overflow |= p[1] == 0x05;
			e4_discard(d, s);
		}
		return;
	case 0x01:
		return;
	case 0x70:
		/*
		 * An ignore packet from ETMv4.3 on, a reserved header before:
		 * OpenCSD's decoder then loses sync while decoding (it does not
		 * look at it while waiting for an A-sync or a trace info, where
		 * this one is not called). OpenCSD decodes such a buffer.
		 */
		d->unsupported = 1;
		if (!d->check)
			d->fatal = 1;
		return;
	case 0x02:
		it = e4_push(d, s, Q_TS);
		if (it)
			it->val = s->ts;
		return;
	case 0x04:
		e4_push(d, s, Q_TRC_ON);
		return;
	case 0x06:
		it = e4_push(d, s, Q_EXCEP);
		if (!it)
			return;
		it->bits = (p[1] >> 1) & 0x1f;
		if (n == 3)
			it->bits |= (__u32)(p[2] & 0x1f) << 5;
		it->prev_same = ((p[1] & 1) | ((p[1] >> 5) & 2)) == 2;
		s->pending_addr = 1;
		if (d->check) {
			s->excep_wait = 1;
			if (s->isa != ocsd_isa_aarch64 && !s->ctxt_seen)
				d->unsupported = 1;
		}
		return;
	case 0x07:
		e4_push(d, s, Q_EXCEP_RET);
		return;
	case 0x80:
		it = e4_push(d, s, Q_CTXT);
		if (it)
			it->is = s->hist_is[0];
		return;
	case 0x81:
		it = e4_push(d, s, Q_CTXT);
		if (it) {
			e4_ctxt_parse(s, p + 1, &it->ctxt);
			it->is = s->hist_is[0];
			if (!it->ctxt.sf)
				d->unsupported = 1;
			s->ctxt_seen = 1;
		}
		return;
	default:
		break;
	}
	if (is_addr) {
		commit = e4_addr(d, s, p, addr, is);
		if (commit < 0)
			return;
	} else if (h >= 0x71 && h <= 0x7f) {
		it = e4_push(d, s, Q_EVENT);
		if (it)
			it->bits = h & 0xf;
		return;
	} else if (h >= 0xc0) {
		it = e4_push(d, s, Q_ATOM);
		if (!it)
			return;
		e4_atoms(h, &it->bits, &it->nr_atoms);
		if (d->check && (s->pending_addr || s->excep_wait))
			d->unsupported = 1;
		commit = 1;
	}
	if (commit) {
		if (d->check) {
			e4_check_commit(d, s);
			return;
		}
		e4_commit(d, s);
	}
}

/* a whole packet of source @s in s->pkt */
static void e4_packet(struct etm4_decoder *d, struct etm4_src *s)
{
	const __u8 *p = s->pkt;
	int n = s->n;
	__u8 h = p[0];
	__u64 addr = 0;
	__u8 is = 0;
	int is_addr = 0;

	/* the parser's part: address history, timestamp */
	switch (h) {
	case 0x01:
		memset(s->hist, 0, sizeof(s->hist));
		memset(s->hist_is, 0, sizeof(s->hist_is));
		if (d->check) {
			int i = 2;

			for (int sect = 0; sect < 4; sect++) {
				__u64 v = 0;
				int k = 0;

				if (!(p[1] & (1 << sect)))
					continue;
				do {
					v |= (__u64)(p[i] & 0x7f) << (7 * k++);
				} while (p[i++] & 0x80);
				/* INFO: no cycle counts, conditional or load/store P0; SPEC: no speculation */
				if ((sect == 0 || sect == 2) && v)
					d->unsupported = 1;
			}
		}
		break;
	case 0x02: {
		__u64 v = 0;
		int bytes = n - 1, bits;

		for (int i = 1; i < n; i++)
			v |= i == 9 ? (__u64)p[i] << 56 : (__u64)(p[i] & 0x7f) << (7 * (i - 1));
		bits = bytes < 7 ? bytes * 7 : 64;
		if (bits == 64)
			s->ts = v;
		else
			s->ts = (s->ts & ~((1ull << bits) - 1)) | (v & ((1ull << bits) - 1));
		break;
	}
	case 0x90: case 0x91: case 0x92:
		addr = s->hist[h & 3];
		is = s->hist_is[h & 3];
		e4_hist_push(s, addr, is);
		is_addr = 1;
		break;
	case 0x95: {
		__u64 v = (__u64)(p[1] & 0x7f) << 2, mask = 0x1ff;

		if (n == 3) {
			v |= (__u64)p[2] << 9;
			mask = 0x1ffff;
		}
		addr = (s->hist[0] & ~mask) | (v & mask);
		e4_hist_push(s, addr, 0);
		is_addr = 1;
		break;
	}
	case 0x82:
	case 0x9a:
		addr = (s->hist[0] & 0xffffffff00000000ull) | e4_long_addr(p + 1, 4);
		e4_hist_push(s, addr, 0);
		is_addr = 1;
		break;
	case 0x85:
	case 0x9d:
		addr = e4_long_addr(p + 1, 8);
		e4_hist_push(s, addr, 0);
		is_addr = 1;
		break;
	default:
		break;
	}

	/* the element generator's part: OpenCSD's processPacket() */
	s->cur_index = s->pkt_index;
	if (s->state == E4_NO_SYNC) {
		e4_out__add(d, s, s->pkt_index, OCSD_GEN_TRC_ELEM_NO_SYNC);
		s->state = E4_WAIT_SYNC;
	}
	switch (s->state) {
	case E4_WAIT_SYNC:
		if (h == 0x00 && n == 12)
			s->state = E4_WAIT_TINFO;
		return;
	case E4_WAIT_TINFO:
		s->need_ctxt = s->need_addr = 1;
		if (h == 0x01)
			s->state = E4_DECODE;
		return;
	default:
		e4_decode_pkt(d, s, p, n, addr, is, is_addr);
	}
}

/*
 * OpenCSD's packet processor before its first A-sync holds the bytes as one
 * packet and reports them when a zero (which may start an A-sync) follows
 * other bytes, when 8 have gathered, or when 12 zeros are more than an A-sync
 * needs (one at a time). Only the first report reaches the decoder: the
 * element NO_SYNC, at the index of the packet's first byte.
 */
enum { E4_U_NOTSYNC, E4_U_EXT, E4_U_ASYNC };

static void e4_unsynced(struct etm4_decoder *d, struct etm4_src *s)
{
	if (s->state != E4_NO_SYNC)
		return;
	s->cur_index = s->u_pidx;
	e4_out__add(d, s, s->u_pidx, OCSD_GEN_TRC_ELEM_NO_SYNC);
	s->state = E4_WAIT_SYNC;
}

/* a byte before the first A-sync */
static void e4_byte_unsynced(struct etm4_decoder *d, struct etm4_src *s, __u8 b, __u64 index)
{
	if (s->u_hdr) {
		s->u_hdr = 0;
		s->u_pidx = index;
		s->u_fn = E4_U_NOTSYNC;
	}
	s->u_len++;
	switch (s->u_fn) {
	case E4_U_NOTSYNC:
		if (b == 0x00) {
			if (s->u_len > 1) {
				e4_unsynced(d, s);
				s->u_len = 1;
			}
			s->u_pidx = index;
			s->u_fn = E4_U_EXT;
		} else if (s->u_len >= 8) {
			e4_unsynced(d, s);
			s->u_len = 0;
			s->u_pidx = index + 1;
		}
		return;
	case E4_U_EXT:		/* the byte after a zero: only another zero goes on to an A-sync */
		s->u_fn = b == 0x00 ? E4_U_ASYNC : E4_U_NOTSYNC;
		return;
	default:		/* E4_U_ASYNC */
		if (b == 0x00) {
			if (s->u_len == 12) {	/* a zero too many: reported, the packet's index stays */
				e4_unsynced(d, s);
				s->u_len = 11;
			}
			return;
		}
		if (s->u_len != 12) {
			s->u_fn = E4_U_NOTSYNC;
			return;
		}
		if (b != 0x80) {
			/* OpenCSD sends a bad sequence packet here: not decoded by this decoder */
			d->unsupported = 1;
			if (!d->check)
				d->fatal = 1;
			s->u_hdr = 1;
			s->u_len = 0;
			return;
		}
		s->synced = 1;
		s->n = 12;
		s->pkt_index = s->u_pidx;
		memset(s->pkt, 0, 11);
		s->pkt[11] = 0x80;
		e4_packet(d, s);
		s->n = 0;
		s->u_len = 0;
	}
}

/* one byte of source @s's stream */
static void e4_byte(struct etm4_decoder *d, struct etm4_src *s, __u8 b, __u64 index)
{
	int len;

	s->got_bytes = 1;
	if (!s->synced) {
		e4_byte_unsynced(d, s, b, index);
		return;
	}
	if (!s->n) {
		s->pkt_index = index;
		if (b >= 0xc0) {	/* an atom packet, most of the trace: one byte */
			s->pkt[0] = b;
			s->n = 1;
			e4_packet(d, s);
			s->n = 0;
			return;
		}
	}
	s->pkt[s->n++] = b;
	len = e4_pkt_len(s, s->pkt, s->n);
	if (len < 0 || len > (int)sizeof(s->pkt)) {
		d->unsupported = 1;
		if (!d->check)
			d->fatal = 1;
		s->n = 0;
		return;
	}
	if (len && len == s->n) {
		e4_packet(d, s);
		s->n = 0;
	}
}

/* ---- input: frames or a raw stream ---- */

/*
 * Unpack the frame in d->frame into (id, byte, index) triples. A byte's
 * index is OpenCSD's: that of the frame for the run of bytes of one ID
 * the frame starts with, that of the ID byte for a run after an ID change,
 * plus the byte's place in its run.
 */
static void e4_unpack(struct etm4_decoder *d, const __u8 *f)
{
	__u64 run = d->frame_index;
	int n = 0, off = 0;

#define E4_PUT(b) do { d->run_id[n] = d->cur_id; d->run_at[n] = run + off++; d->run_byte[n++] = (b); } while (0)
	for (int i = 0; i < 14; i += 2) {
		__u8 b = f[i];
		int aux = (f[15] >> (i / 2)) & 1, prev = 0;

		if (b & 1) {
			if ((b >> 1) != d->cur_id) {
				prev = aux;
				if (prev)
					E4_PUT(f[i + 1]);
				d->cur_id = b >> 1;
				if (off) {
					run = d->frame_index + i;
					off = 0;
				}
			}
		} else {
			E4_PUT((b & 0xfe) | aux);
		}
		if (!prev)
			E4_PUT(f[i + 1]);
	}
	if (f[14] & 1)
		d->cur_id = f[14] >> 1;
	else
		E4_PUT((f[14] & 0xfe) | ((f[15] >> 7) & 1));
#undef E4_PUT
	d->nr_run = n;
	d->at_run = 0;
}

/*
 * Feed the unpacked frame's bytes from d->at_run on; stop after a packet
 * that built elements (to deliver them before the next packet's walks).
 */
static void e4_run_frame(struct etm4_decoder *d, int stop_on_out)
{
	while (d->at_run < d->nr_run && !d->fatal) {
		int i = d->at_run++;
		__u8 id = d->run_id[i];

		if (id < 128 && d->src[id])
			e4_byte(d, d->src[id], d->run_byte[i], d->run_at[i]);
		if (stop_on_out && d->nr_out)
			return;
	}
}

static int e4_input(struct etm4_decoder *d, __u64 index, const __u8 *p, size_t len, size_t *used)
{
	size_t i = 0;
	int err = 0;

	*used = 0;
	for (;;) {
		if (d->nr_out) {
			err = e4_deliver(d);
			if (err)
				break;
		}
		if (d->fatal)
			return -EIO;
		if (d->formatted && d->at_run < d->nr_run) {
			e4_run_frame(d, !d->check);
			continue;
		}
		if (i >= len) {
			err = 0;
			break;
		}
		if (!d->formatted) {
			if (d->only)
				e4_byte(d, d->only, p[i], index + i);
			i++;
			continue;
		}
		if (!d->nr_frame) {
			d->frame_index = index + i;
			if (len - i >= 16) {	/* a whole frame in place */
				e4_unpack(d, p + i);
				i += 16;
				continue;
			}
		}
		d->frame[d->nr_frame++] = p[i++];
		if (d->nr_frame == 16) {
			d->nr_frame = 0;
			e4_unpack(d, d->frame);
		}
	}
	*used = i;
	return err < 0 ? -EIO : err;
}

int etm4_decoder__feed(struct etm4_decoder *d, __u64 index, const void *buf, size_t len, size_t *used)
{
	return e4_input(d, index, buf, len, used);
}

int etm4_decoder__eot(struct etm4_decoder *d)
{
	size_t used;
	int err = e4_input(d, 0, NULL, 0, &used);

	if (err)
		return err;
	for (; d->eot_id < 128; d->eot_id++) {
		struct etm4_src *s = d->src[d->eot_id];

		if (!s)
			continue;
		/* OpenCSD's commitElemOnEOT(): timestamps and events before the next P0 element */
		for (size_t i = 0; i < s->nr_q; i++) {
			int k = s->q[i].kind;

			if (k == Q_ATOM || k == Q_TRC_ON || k == Q_EXCEP || k == Q_EXCEP_RET)
				break;
			e4_ts_event(d, s, &s->q[i]);
		}
		s->nr_q = 0;
		/* a packet cut by the end still reaches OpenCSD's decoder: its index is the last */
		if (s->n)
			s->cur_index = s->pkt_index;
		e4_out__add(d, s, s->cur_index, OCSD_GEN_TRC_ELEM_EO_TRACE);
		err = e4_deliver(d);
		if (err) {
			d->eot_id++;
			return err;
		}
	}
	return 0;
}

int etm4_decoder__check(struct etm4_decoder *d, const void *buf, size_t len, int eot)
{
	struct etm4_decoder c;
	struct etm4_src *src[128] = { 0 };
	size_t used;
	int ok = 1;

	/* OpenCSD refuses frame-formatted blocks of partial frames */
	if (d->formatted && len % 16)
		return 0;
	/* a copy of the decoder, its sources fresh, nothing built or walked */
	c = *d;
	c.check = 1;
	c.unsupported = c.fatal = 0;
	c.out = NULL;
	c.nr_out = c.cap_out = c.at_out = 0;
	c.fn = NULL;
	c.only = NULL;
	c.nr_frame = 0;
	c.cur_id = E4_NO_ID;
	c.nr_run = c.at_run = 0;
	for (int i = 0; i < 128; i++) {
		if (!d->src[i])
			continue;
		src[i] = malloc(sizeof(*src[i]));
		if (!src[i]) {
			ok = -ENOMEM;
			goto out;
		}
		*src[i] = *d->src[i];
		src[i]->q = NULL;
		src[i]->nr_q = src[i]->cap_q = 0;
		e4_src__reset(src[i]);
		if (d->only == d->src[i])
			c.only = src[i];
	}
	memcpy(c.src, src, sizeof(c.src));
	e4_input(&c, 0, buf, len, &used);
	if (c.unsupported || c.fatal)
		ok = 0;
	for (int i = 0; i < 128 && ok == 1 && eot; i++) {
		struct etm4_src *s = src[i];

		/* a stream that never synchronised: OpenCSD ends it at an index of its own */
		if (s && s->got_bytes && !s->synced)
			ok = 0;
	}
out:
	for (int i = 0; i < 128; i++) {
		if (src[i])
			free(src[i]->q);
		free(src[i]);
	}
	return ok;
}
