// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig script` on CoreSight ETMv4/ETE trace, as perf 6.1 decodes it
 * (util/cs-etm.c, timeless decoding):
 *
 * - the trace is cut where PERF_RECORD_AUX records say it was published
 *   (each piece decoded from a reset decoder), or taken buffer by buffer
 *   when the file has no AUXTRACE index to match them with;
 * - the pieces are decoded queue by queue (AUXTRACE idx, one per CPU
 *   buffer), in record order within a queue, not in file order;
 * - within a queue, the branch samples are made from one element stream:
 *   the trace IDs of a shared sink interleave as the decoder emits them, a
 *   sample is the CPU of the element that completes it, and its "from" may
 *   be the last instruction of another trace ID (perf keeps one previous
 *   packet per queue in this mode);
 * - a buffer flagged RAW (PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW: TRBE, no
 *   formatter frames) is one source, the ETM of the buffer's CPU.
 *
 * The decoding itself (OpenCSD) runs in decode_pool workers, one job per
 * piece: a piece that crashes the library costs one error line. The
 * workers send the elements back; samples, ranges and windows are made here,
 * in order, so one worker and many give the same output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/csd_decoder.h"
#include "auxtrig/decode/csd_timed.h"
#include "auxtrig/decode/decode_pool.h"
#include "auxtrig/decode/internal/script.h"
#include "auxtrig/decode/thread_table.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"
#include "uapi/linux/perf_event_aux.h"

/* CoreSight AUXTRACE_INFO priv[] (perf-aux.md §2.1, perf util/cs-etm.h). */
#define CS_PRIV_VERSION		0
#define CS_PRIV_PMU_TYPE_CPUS	1
#define CS_PRIV_HDR		3
#define CS_ETMV3_MAGIC		0x3030303030303030ULL
#define CS_ETMV4_MAGIC		0x4040404040404040ULL
#define CS_ETE_MAGIC		0x5050505050505050ULL
#define CS_ETMV4_V0_PARAMS	7	/* version 0 blocks: magic, cpu, then 7 registers */
#define CS_TRACE_ID_UNUSED	(1ULL << 31)	/* newer perf: the ID comes in a HW_ID record */
#define CS_ETM_OPT_TS		(1ULL << 28)	/* the cs_etm event's timestamp option (attr config) */

/*
 * Up to this many stretches of code are given to OpenCSD as buffers it reads
 * itself (cheaper than a callback per instruction); past it, or if they
 * overlap, the callback serves them (OpenCSD searches its buffers linearly).
 */
#define CS_MAX_SPANS		64

/* Worker -> parent records: a kind byte, then its body. */
enum { CS_REC_TEXT = 1, CS_REC_COUNT, CS_REC_ERR };

struct cs_rec_count {
	__u8 kind, trace_id, pad[6];
	__u64 packets, elems, ranges;
};

/* One ETM (or ETE) as the AUXTRACE_INFO and the HW_ID records describe it. */
struct script_cs_etm {
	int cpu;
	bool ete;
	__u32 devarch;
	struct csd_etmv4_regs regs;
};

/* One piece of trace, decoded from a reset decoder. */
struct script_cs_job {
	const unsigned char *data;
	size_t len;
	__u64 aux_offset;		/* of data[0] */
	__u32 idx;			/* queue: the AUXTRACE mmap index */
	int cpu;			/* the buffer's CPU */
	bool raw;
	const struct sideband_ev *aux;	/* the PERF_RECORD_AUX that published it, or NULL */
	const struct sideband_buf *buf;	/* the AUXTRACE record it is in */
	int queue_tid;			/* perf's queue->tid: the thread of the queue's first buffer */
};

struct script_cs {
	struct script_session *s;
	struct script_cs_etm *etms;
	size_t nr_etms;
	int cpu_of_id[128];
	struct script_cs_job *jobs;
	size_t nr_jobs;
	/* worker side, per job */
	struct decode_out *out;
	const struct script_cs_job *job;
	FILE *wfile;			/* the worker's output, sent as text records */
	bool w_known;			/* the branch state and thread are known (see the worker side) */
	bool w_br_known, w_tid_known;
	__u64 w_packets[128], w_elems[128], w_ranges[128];
	/* parent side */
	__u32 queue;			/* of the branch state */
	bool have_queue;
	struct csd_branches br;
	int br_cpu;			/* CPU of the element being fed */
	int tid;			/* the thread of the samples (perf's traceid queue's tid) */
	int pid_fmt;			/* what a context element's thread is: 0 none, 1 CONTEXTIDR, 2 VMID */
	struct thread_table *threads;	/* the threads as the file's records leave them */
	__u64 latest_time;		/* timed: the last PERF_RECORD_AUX's time (perf's sample time) */
	__u64 packets[128], elems[128], ranges[128];
	struct script_win **wins;	/* this job's windows, in open order; [win_head, nr_wins) not printed */
	size_t win_head, nr_wins, cap_wins;
	size_t win_of_id[128];		/* index + 1 into wins of each ID's open window */
	const char *why_of_id[128];
	struct script_win_printer printer;
	size_t failed;			/* pieces that could not be decoded */
	int err;
	/* timed decode (the cs_etm event's timestamp option): one job for all pieces */
	bool timed;
	bool *skip;			/* pieces left out after crashing the decoder */
	bool crashed;			/* a run crashed: run again without that piece */
	struct binary_span spans[CS_MAX_SPANS];	/* the code, served by OpenCSD itself if it fits */
	size_t nr_spans;
	struct cs_addr_slot *addr_slot;	/* the text of addresses printed (script_cs__addr()) */
	char *addr_arena;		/* the texts the slots point into */
	size_t addr_arena_len;
	unsigned char *lines;		/* worker: a CS_REC_TEXT record of sample lines being filled */
	size_t nr_lines;		/* its bytes, the kind byte included */
};

#define CS_LINES_MAX	(1 << 16)

static const char *script_cs__name_job(const struct script_cs_job *job, char *buf, size_t size)
{
	if (job->aux)
		snprintf(buf, size, "PERF_RECORD_AUX #%zu (cpu %d, offset %#llx, size %#llx%s)", job->aux->seq + 1,
			 job->aux->cpu, (unsigned long long)job->aux->a, (unsigned long long)job->aux->b,
			 job->raw ? ", RAW" : "");
	else
		snprintf(buf, size, "AUXTRACE record #%zu (cpu %d, offset %#llx, size %#llx, at file offset %#llx)",
			 job->buf->seq + 1, job->cpu, (unsigned long long)job->buf->offset,
			 (unsigned long long)job->buf->size, (unsigned long long)job->buf->file_offset);
	return buf;
}

/* ---- the AUXTRACE_INFO ------------------------------------------------- */

static int script_cs__parse_info(struct script_cs *cs)
{
	struct script_session *s = cs->s;
	const __u64 *p = s->info->priv;
	size_t npriv = s->npriv, i = CS_PRIV_HDR;
	__u64 version, nr_cpu;

	if (npriv < CS_PRIV_HDR) {
		pr_err("%s: CoreSight AUXTRACE_INFO is %zu fields, too short\n", s->o->input, npriv);
		return EXIT_RUNTIME;
	}
	version = p[CS_PRIV_VERSION];
	nr_cpu = p[CS_PRIV_PMU_TYPE_CPUS] & 0xffffffff;
	if (version > 2) {
		pr_err("%s: CoreSight AUXTRACE_INFO version %llu: only 0 to 2 are known\n", s->o->input,
		       (unsigned long long)version);
		return EXIT_UNSUPPORTED;
	}
	if (nr_cpu > 4096)
		goto short_info;
	cs->etms = calloc(nr_cpu ? nr_cpu : 1, sizeof(*cs->etms));
	if (!cs->etms)
		return EXIT_RUNTIME;
	for (__u64 c = 0; c < nr_cpu; c++) {
		struct script_cs_etm *e = &cs->etms[cs->nr_etms];
		__u64 magic, cpu, nparams;
		const __u64 *reg;

		if (i + 2 > npriv)
			goto short_info;
		magic = p[i];
		cpu = p[i + 1];
		if (version >= 1) {
			if (i + 3 > npriv)
				goto short_info;
			nparams = p[i + 2];
			reg = &p[i + 3];
			i += 3;
		} else {
			nparams = magic == CS_ETMV3_MAGIC ? 4 : CS_ETMV4_V0_PARAMS;
			reg = &p[i + 2];
			i += 2;
		}
		if (nparams > npriv - i)
			goto short_info;
		i += nparams;
		if (magic == CS_ETMV3_MAGIC) {
			pr_err("%s: CPU %llu traced with ETMv3/PTM, which auxtrig does not decode (ETMv4 and ETE "
			       "only): decode it with perf script\n", s->o->input, (unsigned long long)cpu);
			return EXIT_UNSUPPORTED;
		}
		if (magic != CS_ETMV4_MAGIC && magic != CS_ETE_MAGIC) {
			pr_err("%s: CPU %llu has an unknown CoreSight trace unit (magic %#llx)\n", s->o->input,
			       (unsigned long long)cpu, (unsigned long long)magic);
			return EXIT_UNSUPPORTED;
		}
		if (nparams < 7 || (magic == CS_ETE_MAGIC && nparams < 8))
			goto short_info;
		e->cpu = (int)cpu;
		e->ete = magic == CS_ETE_MAGIC;
		e->regs.configr = reg[0];
		e->regs.traceidr = reg[1];
		e->regs.idr0 = reg[2];
		e->regs.idr1 = reg[3];
		e->regs.idr2 = reg[4];
		e->regs.idr8 = reg[5];
		if (e->ete)
			e->devarch = reg[7];
		/* the kernel's HW_ID record overrides the ID perf wrote (or left unused) */
		for (size_t h = 0; h < s->sd.nr_hw_id; h++) {
			const struct sideband_ev *hw = &s->sd.hw_id[h];

			if (hw->cpu == e->cpu && (hw->a >> 60) <= 1) {
				e->regs.traceidr = hw->a & 0x7f;
				break;
			}
		}
		if (reg[1] & CS_TRACE_ID_UNUSED && e->regs.traceidr == reg[1]) {
			pr_warn("%s: no trace ID for CPU %d (no PERF_RECORD_AUX_OUTPUT_HW_ID for it): its trace is "
				"not decoded\n", s->o->input, e->cpu);
			continue;
		}
		e->regs.traceidr &= 0x7f;
		if (cs->cpu_of_id[e->regs.traceidr] >= 0) {
			pr_err("%s: CPUs %d and %d have the same trace ID %#x\n", s->o->input,
			       cs->cpu_of_id[e->regs.traceidr], e->cpu, e->regs.traceidr);
			return EXIT_RUNTIME;
		}
		cs->cpu_of_id[e->regs.traceidr] = e->cpu;
		cs->nr_etms++;
	}
	if (i != npriv)
		pr_debug("%s: CoreSight AUXTRACE_INFO has %zu words after its %llu CPU blocks\n", s->o->input,
			 npriv - i, (unsigned long long)nr_cpu);
	return EXIT_OK;
short_info:
	pr_err("%s: CoreSight AUXTRACE_INFO is truncated\n", s->o->input);
	return EXIT_RUNTIME;
}

static const struct script_cs_etm *script_cs__etm_of_cpu(const struct script_cs *cs, int cpu)
{
	for (size_t i = 0; i < cs->nr_etms; i++)
		if (cs->etms[i].cpu == cpu)
			return &cs->etms[i];
	return NULL;
}

/*
 * The ETM whose parameters decode an unformatted (RAW, TRBE) piece: its CPU's.
 * A per-thread piece (cpu -1) names none: the thread's TRBE trace from every
 * CPU shares its buffer, with no trace ID; perf 6.1 decodes a raw queue with
 * one decoder made from the first ETM block (cs_etm__alloc_queue()), and so
 * does auxtrig, which the CPUs' identical registers but for the trace ID
 * allow (the thread is named by the trace's context IDs, not the CPU).
 */
static const struct script_cs_etm *script_cs__raw_etm(const struct script_cs *cs, int cpu)
{
	const struct script_cs_etm *e = script_cs__etm_of_cpu(cs, cpu);

	return e || cpu >= 0 || !cs->nr_etms ? e : &cs->etms[0];
}

/* ---- the pieces ----------------------------------------------------------- */

static int script_cs__add_job(struct script_cs *cs, const struct script_cs_job *job)
{
	if (!cs->nr_jobs || (cs->nr_jobs >= 16 && !(cs->nr_jobs & (cs->nr_jobs - 1)))) {
		size_t cap = cs->nr_jobs ? 2 * cs->nr_jobs : 16;
		struct script_cs_job *v = realloc(cs->jobs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		cs->jobs = v;
	}
	cs->jobs[cs->nr_jobs++] = *job;
	return 0;
}

/* Is the AUX record @a's data in buffer @b? perf 6.1's cs_etm__queue_aux_fragment(). */
static bool script_cs__aux_in_buf(const struct sideband_ev *a, const struct sideband_buf *b, __u64 *off,
				  __u64 *size)
{
	if ((b->cpu == -1 && b->tid != a->tid) || b->cpu != a->cpu)
		return false;
	if (a->c & PERF_AUX_FLAG_OVERWRITE) {
		*size = a->b < b->size ? a->b : b->size;
		*off = a->a - *size;
	} else {
		*size = a->b;
		*off = a->a;
	}
	return *off >= b->offset && *off + *size <= b->offset + b->size && *off + *size >= *off;
}

static int script_cs__job_cmp(const void *x, const void *y)
{
	const struct script_cs_job *a = x, *b = y;

	if (a->idx != b->idx)
		return a->idx < b->idx ? -1 : 1;
	return a < b ? -1 : a > b;	/* stable: the array is in record order */
}

/*
 * The pieces as perf 6.1 queues them: one per PERF_RECORD_AUX (non-empty)
 * inside an AUXTRACE buffer of the same CPU when the file has an AUXTRACE
 * index, else one per buffer. Queue order, record order within a queue.
 */
static int script_cs__plan(struct script_cs *cs, bool whole_buffers)
{
	struct script_session *s = cs->s;
	const struct sideband *sd = &s->sd;
	struct pdata_auxtrace_index_entry *index = NULL;
	size_t nr_index = 0;
	bool raw_of_idx_set[4096] = { 0 }, raw_of_idx[4096] = { 0 };
	int err = 0;

	if (!whole_buffers && !pdata_reader__auxtrace_index(s->r, &index, &nr_index) && nr_index) {
		for (size_t a = 0; a < sd->nr_aux && !err; a++) {
			const struct sideband_ev *ae = &sd->aux[a];
			bool found = false;

			if (!ae->b)
				continue;
			for (size_t k = 0; k < sd->nr_bufs && !found; k++) {
				const struct sideband_buf *b = &sd->bufs[k];
				struct script_cs_job job = { 0 };
				__u64 off, size;

				if (!script_cs__aux_in_buf(ae, b, &off, &size))
					continue;
				found = true;
				job.data = (const unsigned char *)b->data + (off - b->offset);
				job.len = size;
				job.aux_offset = off;
				job.idx = b->idx;
				job.cpu = b->cpu;
				job.aux = ae;
				job.buf = b;
				/* perf: a queue's format is that of its first piece */
				if (b->idx < 4096 && !raw_of_idx_set[b->idx]) {
					raw_of_idx_set[b->idx] = true;
					raw_of_idx[b->idx] = ae->c & PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW;
				}
				job.raw = b->idx < 4096 ? raw_of_idx[b->idx] : (ae->c & PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW);
				err = script_cs__add_job(cs, &job);
			}
			if (!found)
				pr_warn("%s: no AUXTRACE buffer holds the data of PERF_RECORD_AUX #%zu (cpu %d, offset "
					"%#llx, size %#llx): not decoded\n", s->o->input, ae->seq + 1, ae->cpu,
					(unsigned long long)ae->a, (unsigned long long)ae->b);
		}
	}
	free(index);
	if (err)
		return err;
	if (!cs->nr_jobs) {
		/* whole buffers; the format from the AUX record that published the first byte */
		for (size_t k = 0; k < sd->nr_bufs && !err; k++) {
			const struct sideband_buf *b = &sd->bufs[k];
			const struct sideband_ev *ae = sideband__aux_of(sd, b->cpu, b->offset);
			struct script_cs_job job = {
				.data = b->data, .len = b->size, .aux_offset = b->offset, .idx = b->idx, .cpu = b->cpu,
				.raw = ae && (ae->c & PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW), .aux = ae, .buf = b,
			};

			if (!b->size)
				continue;
			err = script_cs__add_job(cs, &job);
		}
	}
	if (!err && cs->nr_jobs && !whole_buffers)
		qsort(cs->jobs, cs->nr_jobs, sizeof(*cs->jobs), script_cs__job_cmp);
	/* perf's queue->tid: that of the first buffer queued */
	for (size_t i = 0; i < cs->nr_jobs; i++) {
		const struct script_cs_job *first = &cs->jobs[i];

		for (size_t k = 0; k < i; k++)
			if (cs->jobs[k].idx == cs->jobs[i].idx) {
				first = &cs->jobs[k];
				break;
			}
		cs->jobs[i].queue_tid = first->buf ? (int)first->buf->tid : -1;
	}
	return err;
}

/* ---- worker side ----------------------------------------------------------- */

/*
 * A worker formats what it decodes itself: samples, ranges, windows and
 * listings go to the parent as text. Two things only the parent knows:
 *
 * - the branch state a piece starts with (the previous piece of the queue
 *   may still be decoding in another worker): the piece's first elements,
 *   up to the first one that sets the whole state (a range or a
 *   discontinuity), go as CS_REC_HEAD and the parent makes their samples;
 *   the worker's state after them is the same as the parent's, and it sends
 *   its state at the end (CS_REC_STATE);
 * - the number of a window (CS_REC_WIN_NUM where "# window N" goes).
 */
enum { CS_REC_HEAD = 10, CS_REC_STATE, CS_REC_WIN_NUM, CS_REC_PIECE_ERR };

/* A piece of the timed decode that could not be decoded, followed by the message. */
struct cs_rec_piece_err {
	__u8 kind, pad[7];
	__u64 piece, aux_offset;
};

/* Timed decode progress: the piece (+ 1) above bit 40, the offset into it below. */
#define CS_PROGRESS_PIECE_SHIFT	40

struct cs_rec_state {
	__u8 kind, pad[3];
	__s32 prev_type;
	__u64 prev_last_instr;
	__s32 prev_taken;
	__s32 tid;
	__u8 prev_last_size, prev_isa, pad2[2];
	__u32 prev_flags;
};

static size_t script_cs__read_code(void *ctx, __u64 addr, void *buf, size_t len)
{
	return binaries__read(ctx, addr, buf, len);
}

static void script_cs__send(struct script_cs *cs, __u8 kind, const void *body, size_t len)
{
	unsigned char rec[1100];

	if (len > sizeof(rec) - 1)
		len = sizeof(rec) - 1;
	rec[0] = kind;
	memcpy(rec + 1, body, len);
	decode_out__write(cs->out, rec, len + 1);
}

/* The worker's output stream: its buffer goes to the parent as CS_REC_TEXT records. */
static ssize_t script_cs__text_write(void *ctx, const char *buf, size_t size)
{
	struct script_cs *cs = ctx;
	static unsigned char rec[1 + 65536];
	size_t done = 0;

	while (done < size) {
		size_t n = size - done < sizeof(rec) - 1 ? size - done : sizeof(rec) - 1;

		rec[0] = CS_REC_TEXT;
		memcpy(rec + 1, buf + done, n);
		if (decode_out__write(cs->out, rec, n + 1))
			return -1;
		done += n;
	}
	return size;
}

/* In a worker: send the sample lines held, then what the output stream holds. */
static void script_cs__w_flush(struct script_cs *cs)
{
	if (cs->nr_lines > 1)
		decode_out__write(cs->out, cs->lines, cs->nr_lines);
	cs->nr_lines = 1;
	fflush(cs->wfile);
}

/* A sample line: in a worker straight into a text record, in the parent to the output. */
static void script_cs__line(struct script_cs *cs, const char *line, size_t n)
{
	if (!cs->lines) {
		fwrite_unlocked(line, 1, n, cs->s->out);
		return;
	}
	if (cs->nr_lines + n > CS_LINES_MAX) {
		decode_out__write(cs->out, cs->lines, cs->nr_lines);
		cs->nr_lines = 1;
	}
	memcpy(cs->lines + cs->nr_lines, line, n);
	cs->nr_lines += n;
}

static void script_cs__w_win_num(void *ctx)
{
	struct script_cs *cs = ctx;
	__u8 k = CS_REC_WIN_NUM;

	decode_out__write(cs->out, &k, 1);
}

static void script_cs__w_packet(const struct csd_packet *pkt, void *ctx)
{
	struct script_cs *cs = ctx;
	char line[1024];
	unsigned int id = pkt->trace_id & 0x7f;

	if (!pkt->eot) {
		cs->w_packets[id]++;
		decode_out__progress(cs->out, pkt->index);
	}
	if (cs->w_packets[id]) {
		csd_decoder__packet_line(pkt, line, sizeof(line));
		fputs(line, cs->s->out);
		fputc('\n', cs->s->out);
	}
}

static int script_cs__window_el(struct script_cs *cs, const struct script_cs_job *job, const struct csd_el *e);
static void script_cs__on_branch(const struct csd_branch *br, void *ctx);

/*
 * A context element: the thread from its context ID (CONTEXTIDR_EL1), or
 * from its VMID when the kernel runs at EL2 and traces CONTEXTIDR_EL2
 * (perf's cs_etm_decoder__set_tid()). Return: whether it said a thread.
 */
static bool script_cs__context(struct script_cs *cs, const struct csd_el *el)
{
	if (cs->pid_fmt == 1 && el->ctxt_id_valid)
		cs->tid = (int)el->context_id;
	else if (cs->pid_fmt == 2 && el->vmid_valid)
		cs->tid = (int)el->vmid;
	else
		return false;
	return true;
}

static void script_cs__w_elem(const struct csd_elem *elem, void *ctx)
{
	struct script_cs *cs = ctx;
	const struct script_cs_job *job = cs->job;
	const ocsd_generic_trace_elem *e = elem->elem;
	unsigned int id = elem->trace_id & 0x7f;
	struct csd_el el;

	decode_out__progress(cs->out, elem->index);
	if (cs->s->o->packets) {
		char line[1024];

		/* An idle decoder only reports end-of-trace: not part of the listing. */
		if (e->elem_type == OCSD_GEN_TRC_ELEM_EO_TRACE && !cs->w_packets[id])
			return;
		cs->w_elems[id]++;
		cs->w_ranges[id] += e->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE;
		csd_decoder__elem_line(elem, line, sizeof(line));
		fputs(line, cs->s->out);
		fputc('\n', cs->s->out);
		return;
	}
	switch (e->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET:
		break;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		if (cs->s->o->windows || cs->s->o->itrace == 'i' || !cs->pid_fmt)
			return;
		break;
	default:
		return;
	}
	csd_el__from(&el, elem);
	if (cs->s->o->windows) {
		if (!cs->err)
			cs->err = script_cs__window_el(cs, job, &el);
		return;
	}
	if (cs->s->o->itrace == 'i') {
		if (el.type == OCSD_GEN_TRC_ELEM_INSTR_RANGE)
			fprintf(cs->s->out, "[%03d] %16" PRIx64 " - %16" PRIx64 "\n", cs->cpu_of_id[id],
				(uint64_t)el.st_addr, (uint64_t)el.en_addr);
		return;
	}
	cs->br_cpu = cs->cpu_of_id[id];
	if (job->raw && cs->br_cpu < 0)
		cs->br_cpu = job->cpu;
	if (!cs->w_known) {
		unsigned char rec[1 + sizeof(el)];

		/*
		 * The samples of the elements before the branch state and the
		 * thread are known are the parent's to make; the worker follows
		 * the state they set.
		 */
		script_cs__w_flush(cs);
		rec[0] = CS_REC_HEAD;
		memcpy(rec + 1, &el, sizeof(el));
		decode_out__write(cs->out, rec, sizeof(rec));
		if (el.type == OCSD_GEN_TRC_ELEM_PE_CONTEXT) {
			cs->w_tid_known = script_cs__context(cs, &el) || cs->w_tid_known;
		} else if (cs->w_br_known || el.type == OCSD_GEN_TRC_ELEM_INSTR_RANGE ||
			   el.type == OCSD_GEN_TRC_ELEM_NO_SYNC || el.type == OCSD_GEN_TRC_ELEM_TRACE_ON) {
			cs->br.fn = NULL;	/* take the state this element sets, without its sample */
			if (!cs->w_br_known)
				cs->br.prev_type = 0;
			csd_branches__elem(&cs->br, &el);
			cs->br.fn = script_cs__on_branch;
			cs->w_br_known = true;
		}
		cs->w_known = cs->w_br_known && cs->w_tid_known;
		return;
	}
	if (el.type == OCSD_GEN_TRC_ELEM_PE_CONTEXT)
		script_cs__context(cs, &el);
	else
		csd_branches__elem(&cs->br, &el);
}

/* In a worker: the session's output goes to the parent as text records. */
static int script_cs__worker_out(struct script_cs *cs)
{
	cookie_io_functions_t io = { .write = script_cs__text_write };
	static char obuf[1 << 16];
	static unsigned char lines[CS_LINES_MAX];

	cs->lines = lines;
	cs->lines[0] = CS_REC_TEXT;
	cs->nr_lines = 1;
	if (!cs->wfile) {
		cs->wfile = fopencookie(cs, "w", io);
		if (!cs->wfile)
			return -ENOMEM;
		setvbuf(cs->wfile, obuf, _IOFBF, sizeof(obuf));
	}
	cs->s->out = cs->wfile;
	return 0;
}

/* The code for @d: the spans as OpenCSD buffers, or the callback. */
static int script_cs__add_code(struct script_cs *cs, struct csd_decoder *d)
{
	size_t i;

	for (i = 0; i < cs->nr_spans; i++)
		if (csd_decoder__add_mem_buffer(d, cs->spans[i].addr, cs->spans[i].bytes, cs->spans[i].len))
			break;
	if (cs->nr_spans && i == cs->nr_spans)
		return 0;
	if (i)	/* a buffer was refused after others were taken: a decoder without them */
		return -EAGAIN;
	return csd_decoder__set_mem_fn(d, script_cs__read_code, cs->s->bins);
}

static int script_cs__add_decoders(struct script_cs *cs, struct csd_decoder *d, const struct script_cs_job *job)
{
	for (size_t i = 0; i < cs->nr_etms; i++) {
		const struct script_cs_etm *e = &cs->etms[i];
		int err;

		if (job->raw && e != script_cs__raw_etm(cs, job->cpu))
			continue;
		err = e->ete ? csd_decoder__add_ete(d, &e->regs, e->devarch, 1) : csd_decoder__add_etmv4(d, &e->regs, 1);
		if (err)
			return err;
	}
	return 0;
}

static void script_cs__win_flush(struct script_cs *cs, bool all);

static int script_cs__run_job(size_t j, struct decode_out *out, void *ctx)
{
	struct script_cs *cs = ctx;
	const struct script_cs_job *job = &cs->jobs[j];
	struct csd_decoder *d;
	char msg[512] = "";
	int err;

	cs->out = out;
	cs->job = job;
	cs->err = 0;
	/* without context IDs in the trace, the thread is the queue's all along */
	cs->w_br_known = false;
	cs->w_tid_known = !cs->pid_fmt;
	cs->w_known = false;
	memset(cs->w_packets, 0, sizeof(cs->w_packets));
	memset(cs->w_elems, 0, sizeof(cs->w_elems));
	memset(cs->w_ranges, 0, sizeof(cs->w_ranges));
	memset(cs->why_of_id, 0, sizeof(cs->why_of_id));
	cs->printer.number = script_cs__w_win_num;
	cs->printer.number_ctx = cs;
	if (job->raw && !script_cs__raw_etm(cs, job->cpu)) {
		snprintf(msg, sizeof(msg), "an unformatted (RAW) buffer of CPU %d, whose ETM the AUXTRACE_INFO does "
			 "not describe", job->cpu);
		script_cs__send(cs, CS_REC_ERR, msg, strlen(msg));
		return -ENOENT;
	}
	if (script_cs__worker_out(cs))
		return -ENOMEM;
	d = csd_decoder__new(job->raw ? 0 : CSD_FORMATTED);
	if (!d)
		return -ENOMEM;
	err = script_cs__add_decoders(cs, d, job);
	if (!err)
		err = script_cs__add_code(cs, d);
	if (!err && cs->s->o->packets)
		err = csd_decoder__set_packet_fn(d, script_cs__w_packet, cs);
	csd_decoder__set_elem_fn(d, script_cs__w_elem, cs);
	if (!err) {
		err = csd_decoder__decode_at(d, job->data, job->len, job->aux_offset, msg, sizeof(msg));
		if (err) {
			script_cs__w_flush(cs);
			script_cs__send(cs, CS_REC_ERR, msg, strlen(msg));
		}
	}
	csd_decoder__delete(d);
	/* windows do not span pieces: a new decoder starts unsynced */
	if (cs->s->o->windows)
		script_cs__win_flush(cs, true);
	script_cs__w_flush(cs);
	if (cs->w_known) {
		struct cs_rec_state st = {
			.kind = CS_REC_STATE, .prev_type = cs->br.prev_type, .prev_last_instr = cs->br.prev_last_instr,
			.prev_taken = cs->br.prev_taken, .tid = cs->tid, .prev_last_size = cs->br.prev_last_size,
			.prev_isa = cs->br.prev_isa, .prev_flags = cs->br.prev_flags,
		};

		decode_out__write(out, &st, sizeof(st));
	}
	for (int id = 0; cs->s->o->packets && id < 128; id++) {
		struct cs_rec_count c = { .kind = CS_REC_COUNT, .trace_id = id };

		if (!cs->w_packets[id] && !cs->w_elems[id])
			continue;
		c.packets = cs->w_packets[id];
		c.elems = cs->w_elems[id];
		c.ranges = cs->w_ranges[id];
		decode_out__write(out, &c, sizeof(c));
	}
	return err ? err : cs->err;
}

/* ---- samples and windows (made in the workers; head samples in the parent) ---- */

static void script_cs__put(char *line, size_t *n, const char *s)
{
	size_t k = strlen(s);

	if (k > 1000 - *n)
		k = 1000 - *n;
	memcpy(line + *n, s, k);
	*n += k;
}

static void script_cs__print_addr(struct script_cs *cs, char *line, size_t *n, const struct binary_map *m,
				  __u64 addr)
{
	unsigned int f = cs->s->line.fields[PERF_TYPE_HARDWARE];
	char sym[256];

	script__hex16(line + *n, addr);
	*n += 16;
	if (f & SCRIPT_F_SYM) {
		script_cs__put(line, n, " ");
		script_cs__put(line, n, binaries__map_symoff(cs->s->bins, m, addr, f & SCRIPT_F_SYMOFF, sym, sizeof(sym)));
	}
	if (f & SCRIPT_F_DSO) {
		script_cs__put(line, n, " (");
		script_cs__put(line, n, binaries__map_dso_name(m));
		script_cs__put(line, n, ")");
	}
}

/*
 * The text of an address in a sample ("ip sym+off (dso)") depends on the
 * address, the sample's mode and whether the other mode is tried: branch
 * samples repeat their addresses (loops), so each text is made once. The
 * slots are small and the texts packed in one arena, so that the hits stay
 * in the CPU's caches (a table of whole texts, 1 MiB, missed them: 5% of
 * the decode). A full arena starts over.
 */
#define CS_ADDR_SLOTS		4096
#define CS_ADDR_TEXT		117
#define CS_ADDR_ARENA		(1u << 20)

struct cs_addr_slot {
	__u64 addr;
	__u32 off;		/* of the text in the arena */
	__u8 key;		/* 1 + kernel + 2 * fallback; 0: empty */
	__u8 len;
};

static void script_cs__addr(struct script_cs *cs, char *line, size_t *n, __u64 addr, bool kernel, bool fallback)
{
	__u8 key = 1 + kernel + 2 * fallback;
	struct cs_addr_slot *c = NULL;
	size_t at = *n, len;

	if (!cs->addr_slot) {
		cs->addr_slot = calloc(CS_ADDR_SLOTS, sizeof(*cs->addr_slot));
		cs->addr_arena = malloc(CS_ADDR_ARENA);
		if (!cs->addr_arena) {
			free(cs->addr_slot);
			cs->addr_slot = NULL;
		}
	}
	if (cs->addr_slot) {
		c = &cs->addr_slot[(addr ^ (addr >> 12) ^ key) % CS_ADDR_SLOTS];
		if (c->key == key && c->addr == addr) {
			memcpy(line + *n, cs->addr_arena + c->off, c->len);
			*n += c->len;
			return;
		}
	}
	script_cs__print_addr(cs, line, n, binaries__find_in(cs->s->bins, addr, kernel, fallback), addr);
	len = *n - at;
	if (!c || len > CS_ADDR_TEXT)
		return;
	if (cs->addr_arena_len + len > CS_ADDR_ARENA) {
		memset(cs->addr_slot, 0, CS_ADDR_SLOTS * sizeof(*cs->addr_slot));
		cs->addr_arena_len = 0;
	}
	c->addr = addr;
	c->key = key;
	c->len = len;
	c->off = cs->addr_arena_len;
	memcpy(cs->addr_arena + c->off, line + at, len);
	cs->addr_arena_len += len;
}

/*
 * perf's perf_sample__fprintf_callindent() for CoreSight: no call stack
 * (perf 6.1 keeps none for it: depth 0), the callee of a call or trace
 * start, the function a return or trace end leaves, "(dso)" first when no
 * address is printed. The column that follows depends on every line before:
 * a worker marks the callindent (CS_INDENT_START..CS_INDENT_END) and the
 * parent pads it (script_cs__indent_text()).
 */
#define CS_INDENT_START '\x02'
#define CS_INDENT_END '\x03'

static size_t script_cs__callindent(struct script_cs *cs, const struct csd_branch *br, bool kernel, char *buf)
{
	struct script_line *l = &cs->s->line;
	struct binaries *b = cs->s->bins;
	struct script_sample smp = { 0 };
	char name[256], *p = buf;
	bool callee = br->flags & (SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_TRACE_BEGIN);
	__u64 addr = 0;

	if (callee)
		addr = br->to;
	else if (br->flags & (SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_TRACE_END))
		addr = br->from;
	name[0] = '\0';
	if (callee || addr)
		binaries__map_symoff(b, binaries__find_in(b, addr, kernel, callee), addr, false, name, sizeof(name));
	smp.callee = name[0] && strcmp(name, "[unknown]") ? name : NULL;
	smp.callee_ip = addr;
	if (script_line__has(l, PERF_TYPE_HARDWARE, SCRIPT_F_DSO) && !script_line__has(l, PERF_TYPE_HARDWARE, SCRIPT_F_IP) &&
	    !script_line__has(l, PERF_TYPE_HARDWARE, SCRIPT_F_ADDR))
		p += sprintf(p, "(%.300s)\t", binaries__map_dso_name(binaries__find_in(b, br->from, kernel, false)));
	if (!cs->lines)
		return (size_t)(p - buf) + script_line__callindent(l, &smp, p);
	*p++ = CS_INDENT_START;
	if (smp.callee)
		p += sprintf(p, "%.200s", smp.callee);
	else if (smp.callee_ip)
		p += sprintf(p, "%16" PRIx64, (uint64_t)smp.callee_ip);
	*p++ = CS_INDENT_END;
	return (size_t)(p - buf);
}

/* In the parent: a worker's sample lines with their callindent columns padded as perf pads them. */
static void script_cs__indent_text(struct script_cs *cs, const char *t, size_t len)
{
	const char *end = t + len;

	while (t < end) {
		const char *s = memchr(t, CS_INDENT_START, (size_t)(end - t)), *e;

		if (!s) {
			fwrite(t, 1, (size_t)(end - t), cs->s->out);
			return;
		}
		fwrite(t, 1, (size_t)(s - t), cs->s->out);
		e = memchr(s, CS_INDENT_END, (size_t)(end - s));
		if (!e)
			e = end;
		fwrite(s + 1, 1, (size_t)(e - s - 1), cs->s->out);
		fprintf(cs->s->out, "%*s", script_line__indent_pad(&cs->s->line, (int)(e - s - 1)), "");
		t = e < end ? e + 1 : end;
	}
}

/*
 * A branch sample as perf script prints it: the sample's mode is that of its
 * ip (the "from" address, cs_etm__cpu_mode()); ip is looked up in that mode,
 * addr in that mode and then in its own (thread__find_map_fb()).
 */
static void script_cs__on_branch(const struct csd_branch *br, void *ctx)
{
	struct script_cs *cs = ctx;
	struct script_line *l = &cs->s->line;
	bool kernel = binaries__is_kernel(cs->s->bins, br->from);
	struct script_sample smp = {
		.period = 1, .cpu = cs->br_cpu, .tid = cs->tid, .time = cs->latest_time, .flags = br->flags,
	};
	char buf[1700], comm[24], *line = buf;
	size_t n = 0;

	/* in a worker, the line is made in place in the lines sent to the parent */
	if (cs->lines) {
		if (cs->nr_lines + sizeof(buf) > CS_LINES_MAX) {
			decode_out__write(cs->out, cs->lines, cs->nr_lines);
			cs->nr_lines = 1;
		}
		line = (char *)cs->lines + cs->nr_lines;
	}
	if (l->fields[PERF_TYPE_HARDWARE] & (SCRIPT_F_COMM | SCRIPT_F_PID)) {
		smp.comm = cs->tid == -1 ? ":-1" : thread_table__comm(cs->threads, cs->tid, comm);
		smp.pid = thread_table__pid(cs->threads, cs->tid);
	}
	if (l->fields[PERF_TYPE_HARDWARE] & ~(SCRIPT_F_CPU | SCRIPT_F_IP | SCRIPT_F_ADDR | SCRIPT_F_SYM |
					      SCRIPT_F_SYMOFF | SCRIPT_F_DSO) || l->flags) {
		n = script_line__head(l, PERF_TYPE_HARDWARE, NULL, &smp, line);
	} else if (l->fields[PERF_TYPE_HARDWARE] & SCRIPT_F_CPU) {
		/* the common case of -F cpu,ip,addr,...: no formatting */
		if (cs->br_cpu >= 0 && cs->br_cpu < 1000) {
			line[0] = '[';
			line[1] = '0' + cs->br_cpu / 100;
			line[2] = '0' + cs->br_cpu / 10 % 10;
			line[3] = '0' + cs->br_cpu % 10;
			line[4] = ']';
			line[5] = ' ';
			n = 6;
		} else {
			n = snprintf(line, sizeof(buf), "[%03d] ", cs->br_cpu);
		}
	}
	if (l->fields[PERF_TYPE_HARDWARE] & SCRIPT_F_CALLINDENT)
		n += script_cs__callindent(cs, br, kernel, line + n);
	if (l->fields[PERF_TYPE_HARDWARE] & SCRIPT_F_IP) {
		line[n++] = ' ';
		script_cs__addr(cs, line, &n, br->from, kernel, false);
	}
	if (script_line__branch_addr(l)) {
		memcpy(line + n, " => ", 4);
		n += 4;
		script_cs__addr(cs, line, &n, br->to, kernel, true);
	}
	if (l->fields[PERF_TYPE_HARDWARE] & (SCRIPT_F_INSN | SCRIPT_F_INSNLEN)) {
		/* perf's cs_etm__copy_insn(): the branch instruction's bytes, zeros if unreadable */
		smp.insn_len = br->from_size <= sizeof(smp.insn) ? br->from_size : 0;
		if (smp.insn_len)
			binaries__read(cs->s->bins, br->from, smp.insn, smp.insn_len);
		n += script_line__tail(l, PERF_TYPE_HARDWARE, &smp, line + n);
	} else {
		line[n++] = '\n';
	}
	if (cs->lines)
		cs->nr_lines += n;
	else
		script_cs__line(cs, line, n);
}

static int script_cs__win_push(struct script_cs *cs, struct script_win *w)
{
	if (cs->nr_wins == cs->cap_wins) {
		size_t cap = cs->cap_wins ? 2 * cs->cap_wins : 16;
		struct script_win **v = realloc(cs->wins, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		cs->wins = v;
		cs->cap_wins = cap;
	}
	cs->wins[cs->nr_wins++] = w;
	return 0;
}

/* Print the windows that are closed and have no open window before them. */
static void script_cs__win_flush(struct script_cs *cs, bool all)
{
	while (cs->win_head < cs->nr_wins && (all || cs->wins[cs->win_head]->done)) {
		script_win__print(&cs->printer, cs->wins[cs->win_head]);
		script_win__delete(cs->wins[cs->win_head]);
		cs->wins[cs->win_head++] = NULL;
	}
	if (cs->win_head == cs->nr_wins) {
		cs->win_head = cs->nr_wins = 0;
		memset(cs->win_of_id, 0, sizeof(cs->win_of_id));
	}
}

/*
 * CoreSight windows, per trace ID: a window opens at the first instruction
 * range after trace starts (TRACE_ON, or the first sync: NO_SYNC) and closes
 * at the next discontinuity or the end of the piece. A64 ranges are listed
 * instruction by instruction (4 bytes each, as perf's --itrace=i1i does);
 * the last instruction of a range is a call for a branch with link, a
 * return for RET. A window is printed as soon as it and those opened before
 * it are closed.
 */
static int script_cs__window_el(struct script_cs *cs, const struct script_cs_job *job, const struct csd_el *e)
{
	unsigned int id = e->trace_id & 0x7f;
	struct script_win *w = cs->win_of_id[id] ? cs->wins[cs->win_of_id[id] - 1] : NULL;

	switch (e->type) {
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		if (w)
			script_win__close(w, "trace discontinuity (TRACE_ON)");
		cs->win_of_id[id] = 0;
		cs->why_of_id[id] = e->type == OCSD_GEN_TRC_ELEM_TRACE_ON ? "trace on (TRACE_ON)" : "first sync";
		break;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		if (w)
			script_win__close(w, "end of the buffer");
		cs->win_of_id[id] = 0;
		break;
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		if (!w) {
			w = script_win__new(cs->cpu_of_id[id], job->idx, e->index, 0, e->st_addr,
					    cs->why_of_id[id] ? cs->why_of_id[id] : "trace on (TRACE_ON)");
			if (!w || script_cs__win_push(cs, w)) {
				script_win__delete(w);
				return -ENOMEM;
			}
			w->buf_cpu = job->cpu;
			cs->win_of_id[id] = cs->nr_wins;
		}
		if (e->isa == ocsd_isa_aarch64) {
			__u8 iclass = SCRIPT_INSN_OTHER;

			if (e->en_addr <= e->st_addr)
				break;
			if (e->last_instr_exec) {
				if (e->last_i_subtype == OCSD_S_INSTR_BR_LINK)
					iclass = SCRIPT_INSN_CALL;
				else if (e->last_i_subtype == OCSD_S_INSTR_V8_RET)
					iclass = SCRIPT_INSN_RETURN;
			}
			return script_win__add(w, e->st_addr, (e->en_addr - e->st_addr + 3) / 4, 4, iclass);
		}
		return script_win__add(w, e->st_addr, 1, 0, SCRIPT_INSN_OTHER);	/* T32/A32: the start only */
	default:
		break;
	}
	if (w && w->done)
		script_cs__win_flush(cs, false);
	return 0;
}

/* ---- timed decode (worker side) ------------------------------------------- */

static size_t script_cs__t_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	struct script_cs *cs = ctx;

	return binaries__read(cs->s->bins, addr, buf, len);
}

static bool script_cs__t_is_kernel(void *ctx, __u64 addr)
{
	struct script_cs *cs = ctx;

	return binaries__is_kernel(cs->s->bins, addr);
}

static void script_cs__t_branch(void *ctx, __u64 from, __u64 to, unsigned int from_size, __u32 flags, int cpu,
				int tid)
{
	struct script_cs *cs = ctx;
	struct csd_branch br = { .from = from, .to = to, .from_size = from_size, .flags = flags };

	cs->br_cpu = cpu;
	cs->tid = tid;
	script_cs__on_branch(&br, cs);
}

static void script_cs__t_progress(void *ctx, size_t piece, __u64 aux_offset)
{
	struct script_cs *cs = ctx;
	__u64 rel = aux_offset - cs->jobs[piece].aux_offset;

	decode_out__progress(cs->out, (__u64)(piece + 1) << CS_PROGRESS_PIECE_SHIFT |
				      (rel & ((1ULL << CS_PROGRESS_PIECE_SHIFT) - 1)));
}

static void script_cs__t_error(void *ctx, size_t piece, __u64 aux_offset, const char *msg)
{
	struct script_cs *cs = ctx;
	unsigned char rec[sizeof(struct cs_rec_piece_err) + 512];
	struct cs_rec_piece_err h = { .kind = CS_REC_PIECE_ERR, .piece = piece, .aux_offset = aux_offset };
	size_t n = strlen(msg) < 512 ? strlen(msg) : 512;

	script_cs__w_flush(cs);
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), msg, n);
	decode_out__write(cs->out, rec, sizeof(h) + n);
}

/*
 * The timed decode is one job: perf's order interleaves all queues by time.
 * The pieces (in queue order, record order within a queue) become the
 * queues of csd_timed, without those that crashed the decoder before.
 */
static int script_cs__run_timed(size_t j, struct decode_out *out, void *ctx)
{
	struct script_cs *cs = ctx;
	struct csd_timed_code code[CS_MAX_SPANS];
	struct csd_timed_ops ops = {
		.read = script_cs__t_read, .is_kernel = script_cs__t_is_kernel, .branch = script_cs__t_branch,
		.progress = script_cs__t_progress, .error = script_cs__t_error,
		.code = code, .nr_code = cs->nr_spans,
	};
	struct csd_timed_piece *pieces = calloc(cs->nr_jobs ? cs->nr_jobs : 1, sizeof(*pieces));
	struct csd_timed_queue *queues = calloc(cs->nr_jobs ? cs->nr_jobs : 1, sizeof(*queues));
	struct csd_timed_etm *etms = calloc(cs->nr_etms ? cs->nr_etms : 1, sizeof(*etms));
	size_t nr_pieces = 0, nr_queues = 0;
	int err = -ENOMEM;

	(void)j;
	cs->out = out;
	for (size_t i = 0; i < cs->nr_spans; i++)
		code[i] = (struct csd_timed_code){ cs->spans[i].addr, cs->spans[i].len, cs->spans[i].bytes };
	if (!pieces || !queues || !etms || script_cs__worker_out(cs))
		goto out;
	for (size_t i = 0; i < cs->nr_etms; i++) {
		etms[i].cpu = cs->etms[i].cpu;
		etms[i].ete = cs->etms[i].ete;
		etms[i].devarch = cs->etms[i].devarch;
		etms[i].regs = cs->etms[i].regs;
	}
	for (size_t i = 0; i < cs->nr_jobs; i++) {
		const struct script_cs_job *job = &cs->jobs[i];
		struct csd_timed_piece *p = &pieces[nr_pieces];

		if (!nr_queues || queues[nr_queues - 1].idx != job->idx) {
			queues[nr_queues].idx = job->idx;
			queues[nr_queues].raw = job->raw;
			queues[nr_queues].cpu = job->cpu;
			queues[nr_queues].tid = job->queue_tid;
			queues[nr_queues].pieces = p;
			nr_queues++;
		}
		if (cs->skip[i])
			continue;
		p->data = job->data;
		p->len = job->len;
		p->aux_offset = job->aux_offset;
		p->id = i;
		queues[nr_queues - 1].nr_pieces++;
		nr_pieces++;
	}
	err = csd_timed__run(etms, cs->nr_etms, queues, nr_queues, &ops, cs);
	script_cs__w_flush(cs);
out:
	free(pieces);
	free(queues);
	free(etms);
	return err;
}

/* Was the cs_etm event recorded with its timestamp option? perf 6.1 then decodes in time order. */
static bool script_cs__is_timed(const struct script_session *s)
{
	__u32 pmu = s->npriv > 1 ? s->info->priv[1] >> 32 : 0;

	for (size_t i = 0; i < pdata_reader__nr_attrs(s->r); i++) {
		const struct pdata_reader_attr *a = pdata_reader__attr(s->r, i);

		if (a && a->attr.type == pmu)
			return a->attr.config & CS_ETM_OPT_TS;
	}
	return false;
}

/*
 * What the sample lines need: their fields (script_line.h), the threads as
 * the file leaves them (perf makes the samples at the end, timeless, or
 * after the last record, timed), the time perf gives timed samples (that of
 * the last PERF_RECORD_AUX, perf's latest_kernel_timestamp) and what a
 * context element's thread is (the first trace unit's TRCCONFIGR).
 */
static int script_cs__lines(struct script_cs *cs)
{
	struct script_session *s = cs->s;
	const struct perf_event_attr *aux = NULL;
	__u32 pmu = s->npriv > 1 ? s->info->priv[1] >> 32 : 0;
	struct pdata_event ev;
	__u64 pos = 0;
	int ret;

	for (size_t i = 0; i < pdata_reader__nr_attrs(s->r); i++)
		if (pdata_reader__attr(s->r, i)->attr.type == pmu)
			aux = &pdata_reader__attr(s->r, i)->attr;
	if (script_line__init(&s->line, &s->o->fields, s->r, &s->sd, aux, !(aux && (aux->config & CS_ETM_OPT_TS)),
			      true))
		return EXIT_USAGE;
	cs->threads = thread_table__new();
	if (!cs->threads)
		return EXIT_RUNTIME;
	while ((ret = pdata_reader__next(s->r, &pos, &ev)) > 0) {
		struct pdata_sample smp;

		if (pdata_reader__parse_sample(s->r, &ev, &smp))
			memset(&smp, 0, sizeof(smp));
		if (thread_table__add_record(cs->threads, &ev, &smp))
			return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < s->sd.nr_aux; i++)
		if (s->sd.aux[i].time > cs->latest_time)
			cs->latest_time = s->sd.aux[i].time;
	if (cs->nr_etms) {
		__u32 cfg = cs->etms[0].regs.configr;

		cs->pid_fmt = cfg & ((1u << 7) | (1u << 15)) ? 2 : cfg & (1u << 6) ? 1 : 0;
	}
	return EXIT_OK;
}

/* ---- parent side ----------------------------------------------------------- */

/* write(2) all of @buf. Return: 0 or -errno (which stops the decoding). */
static int script_cs__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

static int script_cs__recv(size_t j, const void *rec, size_t len, void *ctx)
{
	struct script_cs *cs = ctx;
	const struct script_cs_job *job = &cs->jobs[j];
	const __u8 *p = rec;

	if (!len)
		return 0;
	switch (p[0]) {
	case CS_REC_TEXT:
		if (cs->s->line.fields[PERF_TYPE_HARDWARE] & SCRIPT_F_CALLINDENT) {
			script_cs__indent_text(cs, (const char *)p + 1, len - 1);
			return 0;
		}
		/* a worker's full buffer goes out as it is, without a copy through stdio */
		if (len - 1 >= 16384 && !fflush(cs->s->out))
			return script_cs__write_all(fileno(cs->s->out), p + 1, len - 1);
		fwrite(p + 1, 1, len - 1, cs->s->out);
		return 0;
	case CS_REC_WIN_NUM:
		fprintf(cs->s->out, "# window %zu", ++cs->printer.printed);
		return 0;
	case CS_REC_HEAD: {
		struct csd_el el;

		if (len < 1 + sizeof(el))
			return 0;
		memcpy(&el, p + 1, sizeof(el));
		cs->br_cpu = cs->cpu_of_id[el.trace_id & 0x7f];
		if (job->raw && cs->br_cpu < 0)
			cs->br_cpu = job->cpu;
		if (el.type == OCSD_GEN_TRC_ELEM_PE_CONTEXT)
			script_cs__context(cs, &el);
		else
			csd_branches__elem(&cs->br, &el);
		return 0;
	}
	case CS_REC_STATE: {
		struct cs_rec_state st;

		if (len < sizeof(st))
			return 0;
		memcpy(&st, p, sizeof(st));
		cs->br.prev_type = st.prev_type;
		cs->br.prev_last_instr = st.prev_last_instr;
		cs->br.prev_taken = st.prev_taken;
		cs->br.prev_last_size = st.prev_last_size;
		cs->br.prev_isa = st.prev_isa;
		cs->br.prev_flags = st.prev_flags;
		cs->tid = st.tid;
		return 0;
	}
	case CS_REC_COUNT: {
		struct cs_rec_count c;

		if (len < sizeof(c))
			return 0;
		memcpy(&c, p, sizeof(c));
		cs->packets[c.trace_id & 0x7f] += c.packets;
		cs->elems[c.trace_id & 0x7f] += c.elems;
		cs->ranges[c.trace_id & 0x7f] += c.ranges;
		return 0;
	}
	case CS_REC_PIECE_ERR: {
		struct cs_rec_piece_err h;
		char name[256];

		if (len < sizeof(h))
			return 0;
		memcpy(&h, p, sizeof(h));
		if (h.piece >= cs->nr_jobs)
			return 0;
		fflush(cs->s->out);
		pr_err("%s: the trace of %s could not be decoded past AUX offset %#llx: %.*s\n", cs->s->o->input,
		       script_cs__name_job(&cs->jobs[h.piece], name, sizeof(name)), (unsigned long long)h.aux_offset,
		       (int)(len - sizeof(h)), (const char *)p + sizeof(h));
		cs->failed++;
		return 0;
	}
	case CS_REC_ERR: {
		char name[256];

		fflush(cs->s->out);
		pr_err("%s: the trace of %s could not be decoded: %.*s\n", cs->s->o->input,
		       script_cs__name_job(job, name, sizeof(name)), (int)(len - 1), (const char *)p + 1);
		return 0;
	}
	default:
		return 0;
	}
}

static void script_cs__job_start(struct script_cs *cs, const struct script_cs_job *job)
{
	/* one branch state per queue (perf: one traceid queue per etm queue when timeless) */
	if (!cs->have_queue || cs->queue != job->idx) {
		memset(&cs->br, 0, sizeof(cs->br));
		cs->br.fn = script_cs__on_branch;
		cs->br.ctx = cs;
		cs->br.read = script_cs__read_code;
		cs->br.read_ctx = cs->s->bins;
		cs->queue = job->idx;
		cs->have_queue = true;
		cs->tid = job->queue_tid;
	}
	if (cs->s->o->packets)
		fprintf(cs->s->out, "# AUXTRACE idx %u cpu %d offset %#llx size %llu%s\n", job->idx, job->cpu,
			(unsigned long long)job->aux_offset, (unsigned long long)job->len,
			job->raw ? " (RAW: unformatted)" : "");
}

static void script_cs__done(size_t j, int status, void *ctx)
{
	struct script_cs *cs = ctx;

	if (status)
		cs->failed++;
	if (!cs->timed && j + 1 < cs->nr_jobs)
		script_cs__job_start(cs, &cs->jobs[j + 1]);
}

static void script_cs__crash(size_t j, int sig, __u64 progress, void *ctx)
{
	struct script_cs *cs = ctx;
	const struct script_cs_job *job = &cs->jobs[j];
	char name[256];

	if (cs->timed) {
		size_t piece = progress >> CS_PROGRESS_PIECE_SHIFT;

		/* nothing of that run was delivered: run it again without the piece it crashed on */
		if (!piece || piece > cs->nr_jobs || cs->skip[piece - 1]) {
			pr_err("%s: the decoder crashed (%s) before reaching any trace: nothing decoded\n",
			       cs->s->o->input, sig ? strsignal(sig) : "it exited");
			cs->failed++;
			return;
		}
		job = &cs->jobs[piece - 1];
		cs->skip[piece - 1] = true;
		cs->crashed = true;
		progress = job->aux_offset + (progress & ((1ULL << CS_PROGRESS_PIECE_SHIFT) - 1));
	}
	fflush(cs->s->out);
	pr_err("%s: the decoder crashed (%s) on the trace of %s, at AUX offset %#llx: that buffer is not "
	       "decoded, the others are\n", cs->s->o->input, sig ? strsignal(sig) : "it exited",
	       script_cs__name_job(job, name, sizeof(name)),
	       (unsigned long long)(progress > job->aux_offset ? progress : job->aux_offset));
	cs->failed++;
	if (!cs->timed && j + 1 < cs->nr_jobs)
		script_cs__job_start(cs, &cs->jobs[j + 1]);
}

int script_cs__run(struct script_session *s)
{
	struct script_cs cs = { .s = s };
	struct decode_pool_ops ops = {
		.run = script_cs__run_job, .recv = script_cs__recv, .done = script_cs__done,
		.crash = script_cs__crash,
	};
	size_t found;
	int rc, err;

	cs.printer.s = s;
	for (int i = 0; i < 128; i++)
		cs.cpu_of_id[i] = -1;
	rc = script_cs__parse_info(&cs);
	if (rc)
		goto out;
	rc = EXIT_RUNTIME;
	if (!cs.nr_etms) {
		pr_err("%s: the CoreSight AUXTRACE_INFO describes no trace unit that can be decoded\n", s->o->input);
		goto out;
	}
	if (script_cs__plan(&cs, s->o->packets))
		goto out;
	if (!s->o->packets && !s->o->windows && s->o->itrace != 'i') {
		rc = script_cs__lines(&cs);
		if (rc)
			goto out;
		rc = EXIT_RUNTIME;
	}
	/* look for every binary once, before the workers fork: they share the mappings */
	found = binaries__load_all(s->bins);
	cs.nr_spans = binaries__spans(s->bins, cs.spans, CS_MAX_SPANS);
	if (cs.nr_spans > CS_MAX_SPANS)
		cs.nr_spans = 0;
	if (cs.nr_spans) {
		/* does OpenCSD take them all? (the workers' decoders then do too) */
		struct csd_decoder *d = csd_decoder__new(CSD_FORMATTED);

		for (size_t i = 0; i < cs.nr_spans; i++)
			if (!d || csd_decoder__add_mem_buffer(d, cs.spans[i].addr, cs.spans[i].bytes, cs.spans[i].len))
				cs.nr_spans = 0;
		csd_decoder__delete(d);
	}
	if (binaries__nr_maps(s->bins) && !found && !s->o->packets)
		pr_warn("%s: none of the %zu traced binaries was found%s: no instruction ranges (try --symfs DIR "
			"or --buildid-dir DIR)\n", s->o->input, binaries__nr_binaries(s->bins),
			s->o->symfs ? " under --symfs" : "");
	else if (found < binaries__nr_binaries(s->bins) && !s->o->packets) {
		pr_info("%s: %zu of the %zu traced binaries found%s\n", s->o->input, found,
			binaries__nr_binaries(s->bins), log__level() >= LOG_DEBUG ? "; missing:" : " (-v lists the others)");
		for (size_t i = 0; binaries__missing(s->bins, i); i++)
			pr_debug("  %s\n", binaries__missing(s->bins, i));
	}
	cs.timed = !s->o->packets && !s->o->windows && s->o->itrace != 'i' && script_cs__is_timed(s);
	if (cs.timed) {
		/* one job, run again without each piece that crashes the decoder */
		ops.run = script_cs__run_timed;
		cs.skip = calloc(cs.nr_jobs ? cs.nr_jobs : 1, sizeof(*cs.skip));
		if (!cs.skip)
			goto out;
		pr_debug("%s: the cs_etm event has its timestamp option: decoding in timestamp order\n", s->o->input);
		do {
			cs.crashed = false;
			memset(&cs.br, 0, sizeof(cs.br));
			err = decode_pool__run(cs.nr_jobs ? 1 : 0, 1, &ops, &cs);
		} while (!err && cs.crashed);
	} else {
		if (cs.nr_jobs)
			script_cs__job_start(&cs, &cs.jobs[0]);
		err = decode_pool__run(cs.nr_jobs, s->o->jobs, &ops, &cs);
	}
	if (err) {
		pr_err("%s: decoding stopped: %s\n", s->o->input, strerror(-err));
		goto out;
	}
	for (int id = 0; s->o->packets && id < 128; id++)
		if (cs.packets[id] || cs.elems[id])
			fprintf(s->out, "# trace ID %#x: %llu packets, %llu elements, %llu instruction ranges\n", id,
				(unsigned long long)cs.packets[id], (unsigned long long)cs.elems[id],
				(unsigned long long)cs.ranges[id]);
	if (s->o->windows)
		script_win_printer__finish(&cs.printer);
	rc = cs.failed ? EXIT_RUNTIME : EXIT_OK;
out:
	thread_table__delete(cs.threads);
	for (size_t i = cs.win_head; i < cs.nr_wins; i++)
		script_win__delete(cs.wins[i]);
	free(cs.wins);
	free(cs.addr_slot);
	free(cs.addr_arena);
	free(cs.skip);
	free(cs.jobs);
	free(cs.etms);
	return rc;
}
