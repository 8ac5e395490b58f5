// SPDX-License-Identifier: BSD-2-Clause
/*
 * csd_timed: CoreSight branch samples in the order of the trace's
 * timestamps, as perf 6.1's util/cs-etm.c makes them when the cs_etm event
 * had its timestamp option. See csd_timed.h.
 *
 * The model, in perf's terms (cs-etm.c, cs-etm-decoder.c):
 *  - the OpenCSD element callback turns elements into packets queued per
 *    trace ID and answers WAIT where perf does: at the first timestamp
 *    after a discontinuity (hard), after every range once a timestamp is
 *    known (soft: the next range's estimated time), and when a packet queue
 *    is full;
 *  - the front end takes a trace ID's packets and makes branch samples
 *    from (previous packet, packet), swapping the two as perf does;
 *  - at the end of each buffer (or a full queue without a timestamp) every
 *    trace ID of the queue is processed, in trace ID order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/decode/auxtrace_heap.h"
#include "auxtrig/decode/csd_timed.h"
#include "auxtrig/decode/script_line.h"
#include "auxtrig/sys/log.h"

#define CT_PKT_MAX	1024			/* CS_ETM_PACKET_MAX_BUFFER */
#define CT_INVAL_ADDR	0xdeadbeefdeadbeefULL	/* CS_ETM_INVAL_ADDR */

/* TRCCONFIGR bits that say which context ID is the thread (cs_etm__get_pid_fmt()) */
#define CT_CFG_CTXTID	(1u << 6)
#define CT_CFG_VMID	(1u << 7)
#define CT_CFG_VMID_OPT	(1u << 15)

enum ct_type { CT_EMPTY, CT_RANGE, CT_DISCONT, CT_EXC, CT_EXC_RET };
enum ct_pid_fmt { CT_PID_UNKNOWN, CT_PID_CTXTID, CT_PID_VMID };

/* struct cs_etm_packet, the fields branch samples use */
struct ct_pkt {
	__u64 start, end;
	int cpu;
	__u8 type;
	__u8 last_size;
	bool taken;
	__u8 last_type, last_subtype, last_cond, isa;
	__u16 exc_num;
	__u32 flags;		/* perf's cs_etm__set_sample_flags() */
};

/* struct cs_etm_traceid_queue with its struct cs_etm_packet_queue */
struct ct_tidq {
	struct ct_pkt slot[2];
	struct ct_pkt *packet, *prev;
	__u32 head, tail, count;
	__u32 instr_count;
	__u64 cs_ts, next_ts;
	int tid;			/* from a context ID, -1 before one */
	int queue_tid;			/* the queue's (its first buffer's) */
	struct ct_pkt buf[CT_PKT_MAX];
};

/* struct cs_etm_queue */
struct ct_queue {
	const struct csd_timed_queue *q;
	struct csd_decoder *d;
	size_t next;			/* the next piece to fetch */
	const struct csd_timed_piece *cur;
	size_t used, len;		/* of @cur: taken, left */
	__u8 pending;			/* trace ID whose timestamp waits to be read, 0: none */
	struct ct_tidq *tidq[128];
};

struct ct_run {
	const struct csd_timed_ops *ops;
	void *ctx;
	int cpu_of_id[128];
	__u32 configr_of_id[128];
	enum ct_pid_fmt pid_fmt;	/* perf caches it once known */
	struct ct_queue *cur;		/* the queue being decoded */
	bool warned;			/* about a timestamp perf cannot use */
	bool code_as_buffers;		/* ops->code is all kernel code: OpenCSD reads it itself */
};

/* ---- the decoder side: elements into packets -------------------------------- */

static void ct_tidq__clear(struct ct_tidq *t)
{
	t->head = t->tail = t->count = 0;
}

static struct ct_tidq *ct_tidq(struct ct_run *r, struct ct_queue *q, __u8 id)
{
	struct ct_tidq *t = q->tidq[id & 0x7f];

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->packet = &t->slot[0];
	t->prev = &t->slot[1];
	t->tid = -1;
	t->queue_tid = q->q->tid;
	q->tidq[id & 0x7f] = t;
	(void)r;
	return t;
}

static void ct_tidq__reset_ts(struct ct_tidq *t)
{
	t->cs_ts = t->next_ts = 0;
	t->instr_count = 0;
}

/* cs_etm_decoder__buffer_packet() */
static enum csd_resp ct_buffer(struct ct_run *r, struct ct_tidq *t, __u8 id, enum ct_type type)
{
	struct ct_pkt *p;

	if (t->count >= CT_PKT_MAX - 1 || r->cpu_of_id[id & 0x7f] < 0)
		return CSD_FATAL;
	t->tail = (t->tail + 1) & (CT_PKT_MAX - 1);
	t->count++;
	p = &t->buf[t->tail];
	memset(p, 0, sizeof(*p));
	p->type = type;
	p->cpu = r->cpu_of_id[id & 0x7f];
	p->start = p->end = CT_INVAL_ADDR;
	return t->count == CT_PKT_MAX - 1 ? CSD_WAIT : CSD_CONT;
}

static enum csd_resp ct_on_elem(const struct csd_elem *elem, void *ctx)
{
	struct ct_run *r = ctx;
	struct ct_queue *q = r->cur;
	const ocsd_generic_trace_elem *e = elem->elem;
	__u8 id = elem->trace_id & 0x7f;
	struct ct_tidq *t = ct_tidq(r, q, id);
	enum csd_resp resp;
	int tid = -1;

	if (!t)
		return CSD_FATAL;
	if (r->ops->progress && q->cur)
		r->ops->progress(r->ctx, q->cur->id, elem->index);
	switch (e->elem_type) {
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		ct_tidq__reset_ts(t);
		return ct_buffer(r, t, id, CT_DISCONT);
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE: {
		struct ct_pkt *p;

		resp = ct_buffer(r, t, id, CT_RANGE);
		if (resp == CSD_FATAL)
			return resp;
		p = &t->buf[t->tail];
		p->start = e->st_addr;
		p->end = e->en_addr;
		p->last_size = e->last_instr_sz;
		p->taken = (e->last_i_type == OCSD_INSTR_BR || e->last_i_type == OCSD_INSTR_BR_INDIRECT) &&
			   e->last_instr_exec;
		p->last_type = e->last_i_type;
		p->last_subtype = e->last_i_subtype;
		p->last_cond = e->last_instr_cond;
		p->isa = e->isa;
		if (resp == CSD_WAIT)	/* a full queue, which a timestamp would have emptied */
			return resp;
		t->instr_count += e->num_instr_range;
		/* cs_etm_decoder__do_soft_timestamp() */
		if (!t->cs_ts)
			return CSD_CONT;
		t->cs_ts = t->next_ts;
		t->next_ts += t->instr_count;
		t->instr_count = 0;
		q->pending = id;
		return CSD_WAIT;
	}
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		resp = ct_buffer(r, t, id, CT_EXC);
		if (resp != CSD_FATAL)
			t->buf[t->tail].exc_num = (__u16)e->exception_number;
		return resp;
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET:
		return ct_buffer(r, t, id, CT_EXC_RET);
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		/* cs_etm_decoder__do_hard_timestamp() */
		if (t->cs_ts) {
			t->next_ts = e->timestamp;
			return CSD_CONT;
		}
		if (!e->timestamp || t->instr_count > e->timestamp) {
			/* perf: "Zero Coresight timestamp", "Timestamp calculation underflow" */
			if (!r->warned)
				pr_warn("CoreSight: timestamp %#llx at AUX offset %#llx is %s: the trace up to the next "
					"timestamp is ordered as if it had none (as perf does)\n",
					(unsigned long long)e->timestamp, (unsigned long long)elem->index,
					e->timestamp ? "smaller than the instructions counted before it" : "zero");
			r->warned = true;
			t->cs_ts = 0;
		} else {
			t->cs_ts = e->timestamp - t->instr_count;
		}
		t->next_ts = e->timestamp;
		t->instr_count = 0;
		q->pending = id;
		return CSD_WAIT;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		/* cs_etm_decoder__set_tid() */
		if (r->pid_fmt == CT_PID_UNKNOWN) {
			__u32 cfg = r->configr_of_id[id];

			if (r->cpu_of_id[id] < 0)
				return CSD_FATAL;
			if (cfg & (CT_CFG_VMID | CT_CFG_VMID_OPT))
				r->pid_fmt = CT_PID_VMID;
			else if (cfg & CT_CFG_CTXTID)
				r->pid_fmt = CT_PID_CTXTID;
		}
		if (r->pid_fmt == CT_PID_CTXTID && e->context.ctxt_id_valid)
			tid = (int)e->context.context_id;
		else if (r->pid_fmt == CT_PID_VMID && e->context.vmid_valid)
			tid = (int)e->context.vmid;
		if (tid == -1)
			return CSD_CONT;
		t->tid = tid;
		/* "a timestamp is generated after a PE_CONTEXT element" */
		ct_tidq__reset_ts(t);
		return CSD_CONT;
	default:
		return CSD_CONT;
	}
}

/* cs_etm__mem_access(): without a thread, only kernel code is found */
static size_t ct_read(void *ctx, __u8 trace_id, __u64 addr, void *buf, size_t len)
{
	struct ct_run *r = ctx;
	struct ct_tidq *t = ct_tidq(r, r->cur, trace_id);

	if (!t || (t->tid == -1 && !r->ops->is_kernel(r->ctx, addr)))
		return 0;
	return r->ops->read(r->ctx, addr, buf, len);
}

/* ---- the front end: packets into samples --------------------------------- */

static void ct_swap(struct ct_tidq *t)
{
	struct ct_pkt *p = t->packet;

	t->packet = t->prev;
	t->prev = p;
}

/* cs_etm__synth_branch_sample() */
static void ct_sample(struct ct_run *r, struct ct_tidq *t)
{
	__u64 from = t->prev->type == CT_DISCONT ? 0 : t->prev->end - t->prev->last_size;
	__u64 to = t->packet->type == CT_DISCONT ? 0 : t->packet->start;

	r->ops->branch(r->ctx, from, to, from ? t->prev->last_size : 0, t->prev->flags, t->packet->cpu,
		       t->tid != -1 ? t->tid : t->queue_tid);
}

/* cs_etm__flush(), at a discontinuity */
static void ct_flush(struct ct_run *r, struct ct_tidq *t)
{
	if (t->prev->type == CT_RANGE)
		ct_sample(r, t);
	ct_swap(t);
}

/* perf's cs_etm__set_sample_flags(): the packet's flags, and the previous packet's it implies */
static void ct_flags(struct ct_run *r, struct ct_tidq *t)
{
	const __u32 exc_ret = SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_INTERRUPT;
	struct ct_pkt *p = t->packet, *prev = t->prev;

	switch (p->type) {
	case CT_RANGE:
		p->flags = csd_flags__range(p->last_type, p->last_subtype, p->last_cond);
		if (prev->type == CT_DISCONT)
			prev->flags |= SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TRACE_BEGIN;
		if (prev->flags == exc_ret && csd_flags__is_svc(r->ops->read, r->ctx, p->isa, p->start))
			prev->flags = SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_SYSCALLRET;
		break;
	case CT_DISCONT:
		if (prev->type == CT_RANGE)
			prev->flags |= SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TRACE_END;
		break;
	case CT_EXC:
		p->flags = csd_flags__exception(p->exc_num, prev->type == CT_RANGE &&
				csd_flags__is_svc(r->ops->read, r->ctx, prev->isa, prev->end));
		if (prev->type == CT_RANGE)
			prev->flags = p->flags;
		break;
	case CT_EXC_RET:
		if (prev->type == CT_RANGE)
			prev->flags = exc_ret;
		break;
	default:
		break;
	}
}

/* cs_etm__process_traceid_queue() */
static void ct_process(struct ct_run *r, struct ct_tidq *t)
{
	while (t->count) {
		t->head = (t->head + 1) & (CT_PKT_MAX - 1);
		*t->packet = t->buf[t->head];
		t->count--;
		ct_flags(r, t);
		switch (t->packet->type) {
		case CT_RANGE:
			/* cs_etm__sample() */
			if (t->prev->type == CT_DISCONT || (t->prev->type == CT_RANGE && t->prev->taken))
				ct_sample(r, t);
			ct_swap(t);
			break;
		case CT_EXC:
		case CT_EXC_RET:
			/* cs_etm__exception(): the range before it ends in a taken branch */
			if (t->prev->type == CT_RANGE)
				t->prev->taken = true;
			break;
		case CT_DISCONT:
			ct_flush(r, t);
			break;
		default:
			break;
		}
	}
}

/*
 * cs_etm__clear_all_traceid_queues(): every trace ID's packets, in trace ID
 * order. perf 6.1 first flushed each one after that too, making a sample
 * from a stale packet; the perf 6.1 this follows (Debian's 6.1.192) has the
 * stable fix that removed it ("perf cs-etm: Don't flush when packet_queue
 * fills up").
 */
static void ct_process_all(struct ct_run *r, struct ct_queue *q)
{
	for (int id = 0; id < 128; id++)
		if (q->tidq[id])
			ct_process(r, q->tidq[id]);
}

/* ---- the queues ------------------------------------------------------------ */

/* cs_etm__get_data_block(): bytes left in the current piece, or the next piece's after a reset; 0: none left */
static size_t ct_data_block(struct ct_run *r, struct ct_queue *q)
{
	while (!q->len) {
		if (q->next >= q->q->nr_pieces) {
			q->cur = NULL;
			return 0;
		}
		q->cur = &q->q->pieces[q->next++];
		q->used = 0;
		q->len = q->cur->len;
		if (!q->len) {	/* perf: an empty buffer ends the queue */
			q->next = q->q->nr_pieces;
			continue;
		}
		if (csd_decoder__reset(q->d)) {
			r->ops->error(r->ctx, q->cur->id, q->cur->aux_offset, csd_decoder__last_error(q->d));
			q->len = 0;
		}
	}
	return q->len;
}

/* cs_etm__decode_data_block(): decode until a stop; a piece OpenCSD fails on is left there */
static void ct_decode(struct ct_run *r, struct ct_queue *q)
{
	size_t used = 0;
	int err;

	r->cur = q;
	err = csd_decoder__feed(q->d, q->cur->aux_offset + q->used, (const __u8 *)q->cur->data + q->used, q->len,
				&used);
	q->used += used;
	q->len -= used;
	if (err < 0) {
		r->ops->error(r->ctx, q->cur->id, q->cur->aux_offset + q->used, csd_decoder__last_error(q->d));
		q->len = 0;
		q->pending = 0;
	}
}

/* cs_etm__etmq_get_timestamp() */
static __u64 ct_timestamp(struct ct_queue *q, __u8 *id)
{
	struct ct_tidq *t;

	if (!q->pending)
		return 0;
	*id = q->pending;
	t = q->tidq[q->pending];
	q->pending = 0;
	return t ? t->cs_ts : 0;
}

static const struct csd_timed_etm *ct_etm_of_cpu(const struct csd_timed_etm *etms, size_t nr, int cpu)
{
	for (size_t i = 0; i < nr; i++)
		if (etms[i].cpu == cpu)
			return &etms[i];
	return NULL;
}

static int ct_queue__init(struct ct_run *r, struct ct_queue *q, const struct csd_timed_etm *etms, size_t nr_etms)
{
	int err = 0;

	q->d = csd_decoder__new(q->q->raw ? 0 : CSD_FORMATTED);
	if (!q->d)
		return -ENOMEM;
	for (size_t i = 0; i < nr_etms && !err; i++) {
		const struct csd_timed_etm *e = &etms[i];

		if (q->q->raw && e != ct_etm_of_cpu(etms, nr_etms, q->q->cpu))
			continue;
		err = e->ete ? csd_decoder__add_ete(q->d, &e->regs, e->devarch, 1) : csd_decoder__add_etmv4(q->d, &e->regs, 1);
	}
	if (!err && r->code_as_buffers) {
		for (size_t i = 0; i < r->ops->nr_code && !err; i++)
			err = csd_decoder__add_mem_buffer(q->d, r->ops->code[i].addr, r->ops->code[i].bytes,
							  r->ops->code[i].len);
	} else if (!err) {
		err = csd_decoder__set_mem_id_fn(q->d, ct_read, r);
	}
	csd_decoder__set_elem_resp_fn(q->d, ct_on_elem, r);
	return err;
}

static void ct_queue__fini(struct ct_queue *q)
{
	csd_decoder__delete(q->d);
	for (int i = 0; i < 128; i++)
		free(q->tidq[i]);
}

/* cs_etm__queue_first_cs_timestamp(): 1 with the queue's first stop on the heap, 0 if it has none */
static int ct_first(struct ct_run *r, struct ct_queue *q, struct auxtrace_heap *h)
{
	__u64 ts;
	__u8 id = 0;

	for (;;) {
		if (!ct_data_block(r, q))
			return 0;
		ct_decode(r, q);
		ts = ct_timestamp(q, &id);
		if (ts)
			break;
		/* packets before the first timestamp have no time: dropped */
		for (int i = 0; i < 128; i++)
			if (q->tidq[i])
				ct_tidq__clear(q->tidq[i]);
	}
	return auxtrace_heap__add(h, q->q->idx << 16 | id, ts) ? -ENOMEM : 1;
}

int csd_timed__run(const struct csd_timed_etm *etms, size_t nr_etms, const struct csd_timed_queue *queues,
		   size_t nr_queues, const struct csd_timed_ops *ops, void *ctx)
{
	struct ct_run r = { .ops = ops, .ctx = ctx };
	struct auxtrace_heap heap = { 0 };
	struct ct_queue *qs = calloc(nr_queues ? nr_queues : 1, sizeof(*qs));
	int err = 0;

	if (!qs)
		return -ENOMEM;
	for (int i = 0; i < 128; i++)
		r.cpu_of_id[i] = -1;
	for (size_t i = 0; i < nr_etms; i++) {
		r.cpu_of_id[etms[i].regs.traceidr & 0x7f] = etms[i].cpu;
		r.configr_of_id[etms[i].regs.traceidr & 0x7f] = etms[i].regs.configr;
	}
	r.code_as_buffers = ops->nr_code > 0;
	for (size_t i = 0; i < ops->nr_code; i++)
		if (!ops->is_kernel(ctx, ops->code[i].addr))
			r.code_as_buffers = false;
	for (size_t i = 0; i < nr_queues && !err; i++) {
		qs[i].q = &queues[i];
		if (queues[i].raw && !ct_etm_of_cpu(etms, nr_etms, queues[i].cpu)) {
			for (size_t k = 0; k < queues[i].nr_pieces; k++)
				ops->error(ctx, queues[i].pieces[k].id, queues[i].pieces[k].aux_offset,
					   "an unformatted (RAW) buffer of a CPU whose ETM the AUXTRACE_INFO does not describe");
			qs[i].next = queues[i].nr_pieces;
		}
		err = ct_queue__init(&r, &qs[i], etms, nr_etms);
	}
	/* each queue decoded to its first timestamp, in queue order */
	for (size_t i = 0; i < nr_queues && !err; i++)
		err = ct_first(&r, &qs[i], &heap) < 0 ? -ENOMEM : 0;
	while (!err && heap.cnt) {
		unsigned int cs_queue_nr = heap.a[0].queue_nr;
		struct ct_queue *q = NULL;
		__u8 id = cs_queue_nr & 0xffff;
		__u64 ts;

		for (size_t i = 0; i < nr_queues && !q; i++)
			if (queues[i].idx == cs_queue_nr >> 16)
				q = &qs[i];
		auxtrace_heap__pop(&heap);
		if (!q || !q->tidq[id]) {
			err = -EINVAL;
			break;
		}
		/* the packets of this trace ID up to its timestamp */
		ct_process(&r, q->tidq[id]);
		for (;;) {
			if (!ct_data_block(&r, q))
				break;
			ct_decode(&r, q);
			ts = ct_timestamp(q, &id);
			if (ts) {
				err = auxtrace_heap__add(&heap, q->q->idx << 16 | id, ts);
				break;
			}
			/* the end of a buffer, or a full packet queue: every trace ID processed and flushed */
			ct_process_all(&r, q);
		}
	}
	auxtrace_heap__free(&heap);
	for (size_t i = 0; i < nr_queues; i++)
		ct_queue__fini(&qs[i]);
	free(qs);
	return err;
}
