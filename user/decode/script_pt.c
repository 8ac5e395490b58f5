// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig script` on Intel PT trace: branch samples from the IP packets
 * (as perf 6.1 reports them without the traced code), packets, and
 * --windows from libipt's instruction flow decoder over the traced
 * binaries, read from memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "auxtrig/decode/auxtrace_heap.h"
#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/ipt_decoder.h"
#include "auxtrig/decode/internal/script.h"
#include "auxtrig/decode/thread_table.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/tp_formats.h"
#include "auxtrig/format/tp_print.h"
#include "auxtrig/sys/log.h"

/* Intel PT AUXTRACE_INFO priv[] indices (perf-aux.md §2.1). */
#define IPT_PRIV_TIME_SHIFT	1
#define IPT_PRIV_TIME_MULT	2
#define IPT_PRIV_TIME_ZERO	3
#define IPT_PRIV_CAP_USER_TIME_ZERO 4
#define IPT_PRIV_TSC_BIT	5
#define IPT_PRIV_HAVE_SCHED_SWITCH 7
#define IPT_PRIV_PER_CPU_MMAPS	9
#define IPT_PRIV_MIN		10
#define IPT_PRIV_MTC_FREQ_BITS	11
#define IPT_PRIV_TSC_CTC_N	12
#define IPT_PRIV_TSC_CTC_D	13

/* A queue's stream: buffers that continue each other in aux_head space. */
struct script_pt_stream {
	const struct sideband_buf *first;
	const struct sideband_buf **bufs;	/* its buffers, @nr_bufs of them */
	const unsigned char *data;
	size_t len;
	unsigned char *joined;	/* owned copy when several buffers */
	size_t nr_bufs;
};

/*
 * What perf delivers in time order, in TSC units: the branch samples of
 * the trace, the file's other samples, and the records that say who runs
 * (COMM, FORK, context switches, ITRACE_START).
 */
enum { PT_ITEM_BRANCH, PT_ITEM_SAMPLE, PT_ITEM_COMM, PT_ITEM_FORK, PT_ITEM_SWITCH, PT_ITEM_ITRACE, PT_ITEM_OTHER };

struct script_pt_item {
	__u64 tsc;
	__u64 time;	/* a record's perf time (its order among the records) */
	__u64 seq;
	__u8 kind;
	__s32 cpu;
	union {
		struct {			/* BRANCH */
			__u64 from, to;
			__u32 flags;
			const struct sideband_buf *buf;	/* the AUXTRACE record it is in */
		} br;
		struct {			/* SAMPLE */
			__u64 file_pos;
		} smp;
		const struct sideband_ev *ev;	/* COMM, FORK, SWITCH, ITRACE */
	};
};

struct script_pt_samples {
	struct script_pt_item *v;
	size_t nr, cap;
	__u64 time_shift, time_mult, time_zero;
	const struct script_pt_stream *st;	/* the stream being decoded */
	__u64 last_tsc;			/* its decoder's time so far (perf's ptq->timestamp) */
	int have_time;
	bool timeless;
	struct ipt_timing timing;
};

static int script_pt_samples__add(struct script_pt_samples *s, const struct script_pt_item *one)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct script_pt_item *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->nr] = *one;
	s->v[s->nr].seq = s->nr;
	s->nr++;
	return 0;
}

/*
 * perf time to TSC, the inverse of the mmap page's conversion: perf's
 * decoder compares a record's time with its own TSC-based timestamps this
 * way. A record of time 0 (synthesized) comes first.
 */
static __u64 script_pt_samples__time_to_tsc(const struct script_pt_samples *s, __u64 ns)
{
	__u64 t, quot, rem;

	if (!s->have_time || !ns)
		return 0;
	t = ns - s->time_zero;
	quot = t / s->time_mult;
	rem = t % s->time_mult;
	return (quot << s->time_shift) + (rem << s->time_shift) / s->time_mult;
}

/* perf's tsc_to_perf_time() */
static __u64 script_pt_samples__tsc_to_time(const struct script_pt_samples *s, __u64 tsc)
{
	__u64 quot, rem;

	if (!s->have_time)
		return 0;
	quot = tsc >> s->time_shift;
	rem = tsc & ((1ULL << s->time_shift) - 1);
	return s->time_zero + quot * s->time_mult + ((rem * s->time_mult) >> s->time_shift);
}

/*
 * A branch of the decode without the code: after a loss of sync the walk
 * starts again ({0, ip}: perf's "tr strt"); a FUP and the TIP after it are
 * an asynchronous event ("hw int"), or its end ("tr end async") when the
 * trace stops there.
 */
static int script_pt__branch(const struct ipt_branch *br, void *ctx)
{
	struct script_pt_samples *s = ctx;
	const struct script_pt_stream *st = s->st;
	struct script_pt_item one = { .kind = PT_ITEM_BRANCH, .cpu = st->first->cpu };
	__u64 at = 0;
	size_t k = 0;

	while (k + 1 < st->nr_bufs && br->offset >= at + st->bufs[k]->size)
		at += st->bufs[k++]->size;
	one.br.from = br->from;
	one.br.to = br->to;
	one.br.buf = st->bufs[k];

	if (br->tsc > s->last_tsc)
		s->last_tsc = br->tsc;
	one.tsc = s->last_tsc;
	if (!br->from)
		one.br.flags = SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TRACE_BEGIN;
	else if (br->to)
		one.br.flags = SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_ASYNC |
			       SCRIPT_IP_FLAG_INTERRUPT;
	else
		one.br.flags = SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_ASYNC | SCRIPT_IP_FLAG_TRACE_END;
	return script_pt_samples__add(s, &one);
}

static int script_pt__packet(const struct pt_packet *pkt, __u64 offset, void *ctx)
{
	struct script_session *ss = ctx;
	char line[128];

	fprintf(ss->out, "%#010" PRIx64 "  %s\n", (uint64_t)offset, ipt_decoder__packet_str(pkt, line, sizeof(line)));
	return 0;
}

/*
 * perf decodes a queue up to the time of the next other record: a branch
 * whose timestamp is not below that record's comes after it; records of the
 * same time come in file order.
 */
static int script_pt_item__cmp(const void *a, const void *b)
{
	const struct script_pt_item *x = a, *y = b;
	int bx = x->kind == PT_ITEM_BRANCH, by = y->kind == PT_ITEM_BRANCH;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	if (bx != by)
		return bx - by;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int script_pt__buf_cmp(const void *a, const void *b)
{
	const struct sideband_buf *const *x = a, *const *y = b;

	if ((*x)->idx != (*y)->idx)
		return (*x)->idx < (*y)->idx ? -1 : 1;
	return (*x)->seq < (*y)->seq ? -1 : (*x)->seq > (*y)->seq;
}

/*
 * Queue by queue (mmap index), in file order within a queue. Buffers that
 * continue each other (offset == previous end) are one trace stream,
 * decoded as one: a packet may straddle them. A gap (data lost) starts a
 * new stream, which the decoder syncs on its first PSB.
 */
static int script_pt__streams(struct script_session *ss, struct script_pt_stream **out, size_t *nr_out)
{
	const struct sideband *sd = &ss->sd;
	const struct sideband_buf **bufs = calloc(sd->nr_bufs ? sd->nr_bufs : 1, sizeof(*bufs));
	struct script_pt_stream *v = calloc(sd->nr_bufs ? sd->nr_bufs : 1, sizeof(*v));
	size_t nr = 0;

	if (!bufs || !v) {
		free(bufs);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sd->nr_bufs; i++)
		bufs[i] = &sd->bufs[i];
	qsort(bufs, sd->nr_bufs, sizeof(*bufs), script_pt__buf_cmp);
	for (size_t i = 0; i < sd->nr_bufs;) {
		const struct sideband_buf *first = bufs[i];
		size_t n = 1, total = first->size;
		struct script_pt_stream *st = &v[nr++];

		while (i + n < sd->nr_bufs && bufs[i + n]->idx == first->idx &&
		       bufs[i + n]->offset == bufs[i + n - 1]->offset + bufs[i + n - 1]->size)
			total += bufs[i + n++]->size;
		st->first = first;
		st->nr_bufs = n;
		st->bufs = malloc(n * sizeof(*st->bufs));
		if (!st->bufs) {
			*out = v;
			*nr_out = nr;
			free(bufs);
			return -ENOMEM;
		}
		memcpy(st->bufs, &bufs[i], n * sizeof(*st->bufs));
		st->len = total;
		st->data = first->data;
		if (n > 1) {
			size_t at = 0;

			st->joined = malloc(total ? total : 1);
			if (!st->joined) {
				*out = v;
				*nr_out = nr;
				free(bufs);
				return -ENOMEM;
			}
			for (size_t k = 0; k < n; k++) {
				memcpy(st->joined + at, bufs[i + k]->data, bufs[i + k]->size);
				at += bufs[i + k]->size;
			}
			st->data = st->joined;
		}
		i += n;
	}
	free(bufs);
	*out = v;
	*nr_out = nr;
	return 0;
}

static void script_pt__streams_free(struct script_pt_stream *v, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(v[i].joined);
		free(v[i].bufs);
	}
	free(v);
}

/* The intel_pt event's attr in the file, or NULL. */
static const struct perf_event_attr *script_pt__aux_attr(const struct script_session *ss)
{
	for (size_t i = 0; i < pdata_reader__nr_attrs(ss->r); i++) {
		const struct pdata_reader_attr *a = pdata_reader__attr(ss->r, i);

		if (a->attr.type == ss->info->priv[0] && a->nr_ids)
			return &a->attr;
	}
	return NULL;
}

/* perf's intel_pt_timeless_decoding(): no TSC packets, or an event without time. */
static bool script_pt__timeless(const struct script_session *ss)
{
	__u64 tsc_bit = ss->info->priv[IPT_PRIV_TSC_BIT];
	bool timeless = true;

	if (!tsc_bit || !ss->info->priv[IPT_PRIV_CAP_USER_TIME_ZERO])
		return true;
	for (size_t i = 0; i < pdata_reader__nr_attrs(ss->r); i++) {
		const struct pdata_reader_attr *a = pdata_reader__attr(ss->r, i);

		if (!(a->attr.sample_type & PERF_SAMPLE_TIME))
			return true;
		if (a->attr.type == ss->info->priv[0]) {
			if (!(a->attr.config & tsc_bit))
				return true;
			timeless = false;
		}
	}
	return timeless;
}

/*
 * The file's other samples and the records that say who runs, as items to
 * merge with the branches (their position in the file kept, read again
 * when their turn comes); the fields decided.
 */
static int script_pt__collect(struct script_session *ss, struct script_pt_samples *s)
{
	const struct pdata_record_auxtrace_info *info = ss->info;
	struct pdata_event ev;
	__u64 pos = 0, at;
	int ret;

	s->timeless = script_pt__timeless(ss);
	/* the tracepoints' formats, for their samples' trace (none: a file without tracepoints) */
	if (tp_formats__read(ss->r, &ss->tp_formats))
		tp_formats__exit(&ss->tp_formats);
	if (script_line__init(&ss->line, &ss->o->fields, ss->r, &ss->sd, script_pt__aux_attr(ss), s->timeless,
			      info->priv[IPT_PRIV_PER_CPU_MMAPS]))
		return -EINVAL;
	for (at = pos; (ret = pdata_reader__next(ss->r, &pos, &ev)) > 0; at = pos) {
		struct script_pt_item one = { .smp = { .file_pos = at } };
		struct pdata_sample smp;

		switch (ev.header->type) {
		case PERF_RECORD_SAMPLE:
			one.kind = PT_ITEM_SAMPLE;
			break;
		case PERF_RECORD_COMM:
			one.kind = PT_ITEM_COMM;
			break;
		case PERF_RECORD_FORK:
			one.kind = PT_ITEM_FORK;
			break;
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE:
			one.kind = PT_ITEM_SWITCH;
			break;
		case PERF_RECORD_ITRACE_START:
			one.kind = PT_ITEM_ITRACE;
			break;
		default:
			/* perf's user records are not in time order; the others drive the queues */
			if (ev.header->type >= PDATA_RECORD_HEADER_ATTR)
				continue;
			one.kind = PT_ITEM_OTHER;
			break;
		}
		if (pdata_reader__parse_sample(ss->r, &ev, &smp)) {
			if (one.kind == PT_ITEM_SAMPLE)
				continue;
			memset(&smp, 0, sizeof(smp));	/* a synthesized record: no sample_id */
		}
		/*
		 * The other events' samples are listed among the branches, as perf
		 * script does; not those of the intel_pt event itself (its PMU type
		 * is priv[0]) nor of the sideband dummy: only their time counts.
		 */
		if (one.kind == PT_ITEM_SAMPLE &&
		    (!smp.attr || smp.attr->attr.type == info->priv[0] ||
		     (smp.attr->attr.type == PERF_TYPE_SOFTWARE && smp.attr->attr.config == PERF_COUNT_SW_DUMMY)))
			one.kind = PT_ITEM_OTHER;
		one.time = (smp.present & PERF_SAMPLE_TIME) ? smp.time : 0;
		one.tsc = script_pt_samples__time_to_tsc(s, one.time);
		one.cpu = (smp.present & PERF_SAMPLE_CPU) ? (__s32)smp.cpu : -1;
		ret = script_pt_samples__add(s, &one);
		if (ret)
			return ret;
	}
	return ret < 0 ? ret : 0;
}

/* " ip sym+off (dso)" of a sample's @addr (perf's sample__fprintf_sym()), looked up in @kernel's maps. */
static size_t script_pt__addr(struct script_session *ss, int ot, __u64 addr, bool kernel, bool fallback,
			      char *buf)
{
	const struct binary_map *m = binaries__find_in(ss->bins, addr, kernel, fallback);
	unsigned int f = ss->line.fields[ot];
	char sym[256], *p = buf;

	p += sprintf(p, "%16" PRIx64, (uint64_t)addr);
	if (f & SCRIPT_F_SYM)
		p += sprintf(p, " %s", binaries__map_symoff(ss->bins, m, addr, f & SCRIPT_F_SYMOFF, sym, sizeof(sym)));
	if (f & SCRIPT_F_DSO)
		p += sprintf(p, " (%.300s)", binaries__map_dso_name(m));
	return (size_t)(p - buf);
}

/* The thread a branch of buffer @b is perf's: the buffer's, or who runs on its CPU (perf's intel_pt_set_pid_tid_cpu()). */
static __s32 script_pt__branch_tid(const struct script_session *ss, struct thread_table *tt,
				   const struct sideband_buf *b)
{
	if ((__s32)b->tid == -1 || ss->info->priv[IPT_PRIV_HAVE_SCHED_SWITCH])
		return b->cpu >= 0 ? thread_table__current(tt, b->cpu) : (__s32)b->tid;
	return (__s32)b->tid;
}

/*
 * perf's perf_sample__fprintf_callindent(): the thread's depth (a return
 * already popped, so one more), the callee of a call or trace start, the
 * function a return or trace end leaves; "(dso)" first when no address is
 * printed.
 */
static size_t script_pt__callindent(struct script_session *ss, struct thread_table *tt,
				    const struct script_pt_item *it, struct script_sample *smp, bool kernel, char *buf)
{
	const struct binary_map *m;
	__u32 flags = it->br.flags;
	char name[256], *p = buf;
	int depth;

	/* perf's buffer number, counted from 1: a new buffer empties the stack */
	thread_table__stack_event(tt, smp->tid, flags, it->br.from, it->br.to, 0, it->br.buf->seq + 1);
	depth = thread_table__stack_depth(tt, smp->tid);
	smp->depth = depth < 0 ? 0 : depth + (depth >= 0 && (flags & SCRIPT_IP_FLAG_RETURN));
	if (flags & (SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_TRACE_BEGIN)) {
		m = binaries__find_in(ss->bins, it->br.to, kernel, true);
		binaries__map_symoff(ss->bins, m, it->br.to, false, name, sizeof(name));
		smp->callee_ip = it->br.to;
	} else if (flags & (SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_TRACE_END)) {
		m = binaries__find_in(ss->bins, it->br.from, kernel, false);
		binaries__map_symoff(ss->bins, m, it->br.from, false, name, sizeof(name));
		smp->callee_ip = it->br.from;
	} else {
		name[0] = '\0';
	}
	smp->callee = name[0] && strcmp(name, "[unknown]") ? name : NULL;
	if (script_line__has(&ss->line, PERF_TYPE_HARDWARE, SCRIPT_F_DSO) &&
	    !script_line__has(&ss->line, PERF_TYPE_HARDWARE, SCRIPT_F_IP) &&
	    !script_line__has(&ss->line, PERF_TYPE_HARDWARE, SCRIPT_F_ADDR)) {
		m = binaries__find_in(ss->bins, it->br.from, kernel, false);
		p += sprintf(p, "(%.300s)\t", binaries__map_dso_name(m));
	}
	p += script_line__callindent(&ss->line, smp, p);
	return (size_t)(p - buf);
}

static void script_pt__print_branch(struct script_session *ss, struct thread_table *tt,
				    const struct script_pt_samples *s, const struct script_pt_item *it)
{
	struct script_line *l = &ss->line;
	struct script_sample smp = { .period = 1, .flags = it->br.flags, .cpu = it->cpu };
	char line[2048], comm[24], *p = line;
	bool kernel = binaries__is_kernel(ss->bins, it->br.from);

	smp.tid = script_pt__branch_tid(ss, tt, it->br.buf);
	smp.pid = smp.tid == -1 ? -1 : thread_table__pid(tt, smp.tid);
	smp.comm = thread_table__comm(tt, smp.tid, comm);
	smp.time = script_pt_samples__tsc_to_time(s, it->tsc);
	p += script_line__head(l, PERF_TYPE_HARDWARE, NULL, &smp, p);
	if (script_line__has(l, PERF_TYPE_HARDWARE, SCRIPT_F_CALLINDENT))
		p += script_pt__callindent(ss, tt, it, &smp, kernel, p);
	if (script_line__has(l, PERF_TYPE_HARDWARE, SCRIPT_F_IP)) {
		*p++ = ' ';
		p += script_pt__addr(ss, PERF_TYPE_HARDWARE, it->br.from, kernel, false, p);
	}
	if (script_line__branch_addr(l)) {
		p += sprintf(p, " => ");
		p += script_pt__addr(ss, PERF_TYPE_HARDWARE, it->br.to, kernel, true, p);
	}
	p += script_line__tail(l, PERF_TYPE_HARDWARE, &smp, p);
	fwrite(line, 1, (size_t)(p - line), ss->out);
}

/* Another event's sample, as perf's process_event() prints it. */
static void script_pt__print_sample(struct script_session *ss, struct thread_table *tt, const struct pdata_sample *smp)
{
	const struct perf_event_attr *a = &smp->attr->attr;
	int ot = script_line__output_type(a->type);
	struct script_line *l = &ss->line;
	struct script_sample one = {
		.pid = (__s32)smp->pid, .tid = (__s32)smp->tid, .time = smp->time, .period = smp->period,
		.cpu = (smp->present & PERF_SAMPLE_CPU) ? (__s32)smp->cpu : -1,
	};
	char line[2048], name[128], comm[24], *p = line;
	bool kernel = binaries__is_kernel(ss->bins, smp->ip);

	if (!l->fields[ot])
		return;
	one.comm = thread_table__comm(tt, one.tid, comm);
	script_line__evsel_name(&ss->sd, a, smp->id, name, sizeof(name));
	p += script_line__head(l, ot, name, &one, p);
	if (script_line__has(l, ot, SCRIPT_F_TRACE) && smp->raw && ss->tp_formats.nr) {
		const struct tp_format *fmt = tp_formats__find(&ss->tp_formats, (unsigned int)a->config);
		char trace[1024];

		if (fmt) {
			if (tp_print__format(fmt, smp->raw, smp->raw_size, trace, sizeof(trace)))
				tp_print__fields(fmt, smp->raw, smp->raw_size, trace, sizeof(trace));
			p += sprintf(p, "%s", trace);
		}
	}
	if (script_line__has(l, ot, SCRIPT_F_ADDR))
		p += sprintf(p, "%16" PRIx64, (uint64_t)smp->addr);
	if (script_line__has(l, ot, SCRIPT_F_IP)) {
		*p++ = ' ';
		p += script_pt__addr(ss, ot, smp->ip, kernel, false, p);
	}
	p += script_line__tail(l, ot, &one, p);
	fwrite(line, 1, (size_t)(p - line), ss->out);
}

/* One record that says who runs, replayed as perf's Intel PT decoder and its machine take it. */
static int script_pt__replay_record(struct script_session *ss, struct thread_table *tt, const struct pdata_event *ev,
				    const struct pdata_sample *smp)
{
	const struct perf_event_header *h = ev->header;
	__u64 have_sched_switch = ss->info->priv[IPT_PRIV_HAVE_SCHED_SWITCH];
	int cpu = (smp->present & PERF_SAMPLE_CPU) ? (int)smp->cpu : -1;

	switch (h->type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
		return thread_table__add_record(tt, ev, smp);
	case PERF_RECORD_ITRACE_START:
		if (h->size >= 16 && ss->info->priv[IPT_PRIV_PER_CPU_MMAPS]) {
			__u32 pt[2];

			memcpy(pt, (const char *)h + 8, 8);
			thread_table__set_current(tt, cpu, (__s32)pt[0], (__s32)pt[1]);
		}
		return 0;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		bool out = h->misc & PERF_RECORD_MISC_SWITCH_OUT;

		/* perf's intel_pt_context_switch() */
		if (have_sched_switch == 3) {
			__u32 np[2];

			if (!out || h->type != PERF_RECORD_SWITCH_CPU_WIDE || h->size < 16)
				return 0;
			memcpy(np, (const char *)h + 8, 8);
			thread_table__set_current(tt, cpu, (__s32)np[0], (__s32)np[1]);
		} else if (!out) {
			thread_table__set_current(tt, cpu, (__s32)smp->pid, (__s32)smp->tid);
		}
		return 0;
	}
	case PERF_RECORD_SAMPLE:
		if (thread_table__add_record(tt, ev, smp))
			return -ENOMEM;
		script_pt__print_sample(ss, tt, smp);
		return 0;
	default:
		return 0;
	}
}

/* The items in perf's order: the records replayed, the samples printed. */
static int script_pt__replay(struct script_session *ss, const struct script_pt_samples *s)
{
	struct thread_table *tt = thread_table__new();
	int err = 0;

	if (!tt)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr && !err; i++) {
		const struct script_pt_item *it = &s->v[i];
		struct pdata_event ev;
		struct pdata_sample smp;
		__u64 pos = it->smp.file_pos;

		if (it->kind == PT_ITEM_BRANCH) {
			script_pt__print_branch(ss, tt, s, it);
			continue;
		}
		if (it->kind == PT_ITEM_OTHER)
			continue;
		if (pdata_reader__next(ss->r, &pos, &ev) <= 0)
			continue;
		if (pdata_reader__parse_sample(ss->r, &ev, &smp)) {
			if (it->kind == PT_ITEM_SAMPLE)
				continue;
			memset(&smp, 0, sizeof(smp));
		}
		err = script_pt__replay_record(ss, tt, &ev, &smp);
	}
	thread_table__delete(tt);
	return err;
}

/* A queue (an mmap index): its branches in decode order, [next, end) still to come. */
struct script_pt_queue {
	size_t next, end;
};

/*
 * perf's intel_pt_process_queues(): before an event of time @limit, the
 * queue whose next sample is earliest runs until its time passes the next
 * queue's (or reaches @limit); the sample that passed waits for its queue's
 * next turn. Samples of one time stay with the queue that is running.
 */
static int script_pt__run_queues(const struct script_pt_samples *s, struct auxtrace_heap *h,
				 struct script_pt_queue *qs, __u64 limit, struct script_pt_item *out, size_t *nr_out)
{
	while (h->cnt && h->a[0].ordinal < limit) {
		unsigned int qnr = h->a[0].queue_nr;
		struct script_pt_queue *q = &qs[qnr];
		__u64 ts = limit;

		auxtrace_heap__pop(h);
		if (h->cnt && h->a[0].ordinal + 1 < limit)
			ts = h->a[0].ordinal + 1;
		for (;;) {
			out[(*nr_out)++] = s->v[q->next++];
			if (q->next == q->end)
				break;			/* no more data: off the heap */
			if (s->v[q->next].tsc >= ts) {
				if (auxtrace_heap__add(h, qnr, s->v[q->next].tsc))
					return -ENOMEM;
				break;
			}
		}
	}
	return 0;
}

static int script_pt_item__event_cmp(const void *a, const void *b)
{
	const struct script_pt_item *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The items in the order perf 6.1 prints them. The records come in time
 * order (perf's ordered events; the same time in file order). Each with a
 * time first lets the queues' branches before it out (run_queues); the
 * rest come at the end (perf's flush). A queue starts at its first branch
 * with a time: perf's intel_pt_setup_queue() drops the ones before.
 * Without timestamps (timeless decoding) nothing is interleaved by time.
 */
static int script_pt__order(struct script_pt_samples *s)
{
	struct script_pt_item *out = malloc((s->nr ? s->nr : 1) * sizeof(*out));
	struct script_pt_queue *qs = calloc(s->nr ? s->nr : 1, sizeof(*qs));
	struct auxtrace_heap h = { 0 };
	size_t nr_ev = 0, nr_out = 0;
	unsigned int nr_q = 0;
	int err = 0;

	if (!out || !qs) {
		err = -ENOMEM;
		goto done;
	}
	if (!s->nr)
		goto done;
	if (s->timeless) {
		qsort(s->v, s->nr, sizeof(*s->v), script_pt_item__cmp);
		goto done;
	}
	/* the records first (collected before the branches), then each queue's run of branches */
	while (nr_ev < s->nr && s->v[nr_ev].kind != PT_ITEM_BRANCH)
		nr_ev++;
	if (nr_ev)
		qsort(s->v, nr_ev, sizeof(*s->v), script_pt_item__event_cmp);
	for (size_t i = nr_ev, j; !err && i < s->nr; i = j) {
		for (j = i; j < s->nr && s->v[j].br.buf->idx == s->v[i].br.buf->idx; j++)
			;
		while (i < j && !s->v[i].tsc)
			i++;			/* before the queue's first timestamp */
		if (i < j) {
			qs[nr_q] = (struct script_pt_queue){ .next = i, .end = j };
			err = auxtrace_heap__add(&h, nr_q, s->v[i].tsc);
			nr_q++;
		}
	}
	for (size_t i = 0; !err && i < nr_ev; i++) {
		if (s->v[i].tsc)
			err = script_pt__run_queues(s, &h, qs, s->v[i].tsc, out, &nr_out);
		out[nr_out++] = s->v[i];
	}
	if (!err)
		err = script_pt__run_queues(s, &h, qs, UINT64_MAX, out, &nr_out);
	if (!err) {
		memcpy(s->v, out, nr_out * sizeof(*out));
		s->nr = nr_out;
	}
done:
	auxtrace_heap__free(&h);
	free(out);
	free(qs);
	return err;
}

static int script_pt__windows(struct script_session *ss);

int script_pt__run(struct script_session *ss)
{
	const struct pdata_record_auxtrace_info *info = ss->info;
	const struct script_opts *o = ss->o;
	struct script_pt_samples s = { 0 };
	struct script_pt_stream *streams = NULL;
	size_t nr_streams = 0;
	int err = 0;

	if (ss->npriv < IPT_PRIV_MIN) {
		pr_err("%s: Intel PT AUXTRACE_INFO has %zu fields, at least %d expected\n", o->input, ss->npriv,
		       IPT_PRIV_MIN);
		return EXIT_RUNTIME;
	}
	if (o->windows)
		return script_pt__windows(ss);
	if (o->itrace == 'i' && !o->packets) {
		pr_err("%s: --itrace=i needs the traced code, which Intel PT decoding here does not read "
		       "(use --itrace=b or --packets)\n", o->input);
		return EXIT_USAGE;
	}
	s.time_shift = info->priv[IPT_PRIV_TIME_SHIFT];
	s.time_mult = info->priv[IPT_PRIV_TIME_MULT];
	s.time_zero = info->priv[IPT_PRIV_TIME_ZERO];
	s.have_time = s.time_shift < 64 && s.time_mult;
	if (ss->npriv > IPT_PRIV_TSC_CTC_D) {
		__u64 mask = info->priv[IPT_PRIV_MTC_FREQ_BITS];

		for (size_t i = 0; mask && i < pdata_reader__nr_attrs(ss->r); i++) {
			const struct pdata_reader_attr *a = pdata_reader__attr(ss->r, i);

			if (a->attr.type == info->priv[0])	/* the intel_pt attr */
				s.timing.mtc_period = (a->attr.config & mask) >> __builtin_ctzll(mask);
		}
		s.timing.tsc_ctc_n = info->priv[IPT_PRIV_TSC_CTC_N];
		s.timing.tsc_ctc_d = info->priv[IPT_PRIV_TSC_CTC_D];
	}
	if (!o->packets) {
		err = script_pt__collect(ss, &s);
		if (err == -EINVAL) {
			free(s.v);
			return EXIT_USAGE;
		}
	}
	if (!err)
		err = script_pt__streams(ss, &streams, &nr_streams);
	for (size_t i = 0; !err && i < nr_streams; i++) {
		const struct script_pt_stream *st = &streams[i];

		if (o->packets) {
			struct ipt_packet_stats stats;

			fprintf(ss->out, "# AUXTRACE idx %u cpu %d", st->first->idx, st->first->cpu);
			if (st->first->cpu < 0)
				fprintf(ss->out, " tid %u", st->first->tid); /* per thread */
			fprintf(ss->out, " offset %#llx size %zu (%zu buffer%s)\n", (unsigned long long)st->first->offset,
				st->len, st->nr_bufs, st->nr_bufs > 1 ? "s" : "");
			err = ipt_decoder__packets(st->data, st->len, script_pt__packet, ss, &stats);
			if (!err)
				fprintf(ss->out, "# %llu packets, %llu PAD, %llu errors\n",
					(unsigned long long)stats.packets, (unsigned long long)stats.pads,
					(unsigned long long)stats.errors);
		} else {
			s.st = st;
			s.last_tsc = 0;
			s.timing.ref_tsc = st->first->reference;
			err = ipt_decoder__branches(st->data, st->len, &s.timing, script_pt__branch, &s);
		}
	}
	script_pt__streams_free(streams, nr_streams);
	if (err) {
		pr_err("%s: decoding failed: %s\n", o->input, strerror(-err));
		free(s.v);
		return EXIT_RUNTIME;
	}
	if (!o->packets) {
		err = script_pt__order(&s);
		if (!err)
			err = script_pt__replay(ss, &s);
	}
	free(s.v);
	if (err) {
		pr_err("%s: %s\n", o->input, strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* ---- --windows ----------------------------------------------------------- */

/*
 * One stream through libipt's instruction flow decoder, with the traced
 * binaries as its memory: every instruction executed, in windows cut at the
 * trace's own enable and disable events. A generator: script_pt_wgen__next()
 * decodes until the next window is complete.
 */
struct script_pt_wgen {
	struct script_session *ss;
	const struct script_pt_stream *st;
	struct pt_insn_decoder *dec;
	int status;
	bool need_sync, ending, eof;
	struct script_win *cur, *ready;
	int err;
};

static int script_pt__read_code(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx)
{
	size_t n = binaries__read(ctx, ip, buf, size);

	(void)asid;
	return n ? (int)n : -pte_nomap;
}

static int script_pt_wgen__init(struct script_pt_wgen *g, struct script_session *ss,
				const struct script_pt_stream *st)
{
	struct pt_config cfg;

	memset(g, 0, sizeof(*g));
	g->ss = ss;
	g->st = st;
	g->need_sync = true;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)st->data;
	cfg.end = (uint8_t *)st->data + st->len;
	g->dec = pt_insn_alloc_decoder(&cfg);
	if (!g->dec)
		return -ENOMEM;
	pt_image_set_callback(pt_insn_get_image(g->dec), script_pt__read_code, ss->bins);
	return 0;
}

static void script_pt_wgen__exit(struct script_pt_wgen *g)
{
	script_win__delete(g->cur);
	script_win__delete(g->ready);
	pt_insn_free_decoder(g->dec);
}

static struct script_win *script_pt_wgen__open(struct script_pt_wgen *g, __u64 off, __u64 tsc, __u64 ip,
					       const char *why)
{
	struct script_win *w = script_win__new(g->st->first->cpu, g->st->first->idx, g->st->first->offset + off, tsc,
					       ip, why);

	if (!w)
		g->err = -ENOMEM;
	else if (g->st->first->cpu < 0)
		w->tid = g->st->first->tid; /* per thread: the buffer is that thread's */
	return w;
}

/* One step of the decode; may complete a window into g->ready. */
static void script_pt_wgen__step(struct script_pt_wgen *g)
{
	uint64_t off = 0;

	if (g->ending) {
		g->ready = g->cur;
		g->cur = NULL;
		g->eof = true;
		return;
	}
	if (g->need_sync) {
		g->status = pt_insn_sync_forward(g->dec);
		g->need_sync = false;
		if (g->status < 0)
			g->ending = true;
		return;
	}
	if (g->status >= 0 && (g->status & pts_event_pending)) {
		struct pt_event evt;

		g->status = pt_insn_event(g->dec, &evt, sizeof(evt));
		if (g->status < 0)
			return;
		pt_insn_get_offset(g->dec, &off);
		if (evt.type == ptev_enabled) {
			struct script_win *w = script_pt_wgen__open(g, off, evt.has_tsc ? evt.tsc : 0,
								    evt.variant.enabled.ip,
								    evt.variant.enabled.resumed ? "trace resume (TIP.PGE)" :
												  "trace enable (TIP.PGE)");

			g->ready = g->cur;	/* one still open ends here, unclosed */
			g->cur = w;
		} else if ((evt.type == ptev_disabled || evt.type == ptev_async_disabled || evt.type == ptev_overflow) &&
			   g->cur) {
			struct script_win *w = g->cur;

			w->end_tsc = evt.has_tsc ? evt.tsc : 0;
			w->close_ip = evt.type == ptev_disabled ? evt.variant.disabled.ip :
				      evt.type == ptev_async_disabled ? evt.variant.async_disabled.ip : 0;
			script_win__close(w, evt.type == ptev_overflow ? "overflow (trace data lost)" :
					     evt.type == ptev_disabled ? "trace disable (TIP.PGD)" :
									 "trace disable (FUP, TIP.PGD)");
			g->ready = w;
			g->cur = NULL;
		}
		return;
	}
	if (g->status < 0 || (g->status & pts_eos)) {
		if (g->status < 0 && g->status != -pte_eos && g->cur) {
			char why[96];

			snprintf(why, sizeof(why), "decode error: %s", pt_errstr(pt_errcode(g->status)));
			script_win__close(g->cur, why);
			g->ready = g->cur;
			g->cur = NULL;
		}
		if (g->status == -pte_eos || (g->status >= 0 && (g->status & pts_eos)))
			g->ending = true;
		else
			g->need_sync = true;
		return;
	}
	{
		struct pt_insn insn;

		g->status = pt_insn_next(g->dec, &insn, sizeof(insn));
		if (g->status < 0)
			return;
		if (!g->cur) {
			/* tracing was on when the decoder synced (a PSB+ FUP) */
			uint64_t tsc = 0;

			pt_insn_get_offset(g->dec, &off);
			pt_insn_time(g->dec, &tsc, NULL, NULL);
			g->cur = script_pt_wgen__open(g, off, tsc, insn.ip, "trace already on (PSB+)");
			if (!g->cur)
				return;
		}
		g->err = script_win__add(g->cur, insn.ip, 1, 0,
					 insn.iclass == ptic_call || insn.iclass == ptic_far_call ? SCRIPT_INSN_CALL :
					 insn.iclass == ptic_return || insn.iclass == ptic_far_return ?
						 SCRIPT_INSN_RETURN : SCRIPT_INSN_OTHER);
	}
}

/* The next complete window of the stream (the caller owns it), or NULL at its end. */
static struct script_win *script_pt_wgen__next(struct script_pt_wgen *g)
{
	struct script_win *w;

	while (!g->ready && !g->eof && !g->err)
		script_pt_wgen__step(g);
	w = g->ready;
	g->ready = NULL;
	return w;
}

/* Does window @a (of stream @ia) come before @b (of @ib)? By start time, else by stream. */
static bool script_pt__win_before(const struct script_win *a, size_t ia, const struct script_win *b, size_t ib)
{
	if (a->start_tsc && b->start_tsc && a->start_tsc != b->start_tsc)
		return a->start_tsc < b->start_tsc;
	return ia < ib;
}

/*
 * The streams' windows merged by start time, each printed as soon as no
 * stream can have an earlier one: one pending window per stream in memory.
 */
static int script_pt__windows(struct script_session *ss)
{
	const struct pdata_record_auxtrace_info *info = ss->info;
	struct script_win_printer pr = { .s = ss };
	struct script_pt_stream *streams = NULL;
	struct script_pt_wgen *gens = NULL;
	struct script_win **head = NULL;
	size_t nr = 0;
	int err, rc = EXIT_RUNTIME;

	pr.time_shift = info->priv[IPT_PRIV_TIME_SHIFT];
	pr.time_mult = info->priv[IPT_PRIV_TIME_MULT];
	pr.time_zero = info->priv[IPT_PRIV_TIME_ZERO];
	pr.have_time = pr.time_shift < 64 && pr.time_mult;
	if (!binaries__nr_maps(ss->bins))
		pr_warn("%s: no executable mmap records: instructions cannot be followed\n", ss->o->input);
	err = script_pt__streams(ss, &streams, &nr);
	if (!err) {
		gens = calloc(nr ? nr : 1, sizeof(*gens));
		head = calloc(nr ? nr : 1, sizeof(*head));
		if (!gens || !head)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < nr; i++) {
		err = script_pt_wgen__init(&gens[i], ss, &streams[i]);
		if (!err) {
			head[i] = script_pt_wgen__next(&gens[i]);
			err = gens[i].err;
		}
	}
	while (!err) {
		size_t best = nr;

		for (size_t i = 0; i < nr; i++)
			if (head[i] && (best == nr || script_pt__win_before(head[i], i, head[best], best)))
				best = i;
		if (best == nr)
			break;
		script_win__print(&pr, head[best]);
		script_win__delete(head[best]);
		head[best] = script_pt_wgen__next(&gens[best]);
		err = gens[best].err;
	}
	if (err) {
		pr_err("%s: decoding failed: %s\n", ss->o->input, strerror(-err));
	} else {
		script_win_printer__finish(&pr);
		rc = EXIT_OK;
	}
	for (size_t i = 0; gens && i < nr; i++) {
		script_win__delete(head[i]);
		if (gens[i].dec)
			script_pt_wgen__exit(&gens[i]);
	}
	free(head);
	free(gens);
	script_pt__streams_free(streams, nr);
	return rc;
}
