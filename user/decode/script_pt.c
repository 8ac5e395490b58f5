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

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/ipt_decoder.h"
#include "auxtrig/decode/internal/script.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"

/* Intel PT AUXTRACE_INFO priv[] indices (perf-aux.md §2.1). */
#define IPT_PRIV_TIME_SHIFT	1
#define IPT_PRIV_TIME_MULT	2
#define IPT_PRIV_TIME_ZERO	3
#define IPT_PRIV_MIN		10
#define IPT_PRIV_MTC_FREQ_BITS	11
#define IPT_PRIV_TSC_CTC_N	12
#define IPT_PRIV_TSC_CTC_D	13

/* Intel PT samples and the file's other samples, merged by time in TSC units. */
struct script_pt_sample {
	__u64 tsc;
	__u64 from, to;
	__s32 cpu;
	int branch;	/* 0: a non-AUX sample (ip only) */
	__u64 seq;
};

struct script_pt_samples {
	struct script_pt_sample *v;
	size_t nr, cap;
	__u64 time_shift, time_mult, time_zero;
	int cpu;
	int have_time;
	struct ipt_timing timing;
};

static int script_pt_samples__add(struct script_pt_samples *s, const struct script_pt_sample *one)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct script_pt_sample *v = realloc(s->v, cap * sizeof(*v));

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
 * decoder compares a sample's time with its own TSC-based timestamps this way.
 */
static __u64 script_pt_samples__time_to_tsc(const struct script_pt_samples *s, __u64 ns)
{
	__u64 t, quot, rem;

	if (!s->have_time)
		return 0;
	t = ns - s->time_zero;
	quot = t / s->time_mult;
	rem = t % s->time_mult;
	return (quot << s->time_shift) + (rem << s->time_shift) / s->time_mult;
}

static int script_pt__branch(const struct ipt_branch *br, void *ctx)
{
	struct script_pt_samples *s = ctx;
	struct script_pt_sample one = {
		.tsc = br->tsc, .from = br->from, .to = br->to, .cpu = s->cpu, .branch = 1,
	};

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
 * perf decodes a queue up to the time of the next other event: a branch
 * whose timestamp is not below that event's comes after it.
 */
static int script_pt_sample__cmp(const void *a, const void *b)
{
	const struct script_pt_sample *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	if (x->branch != y->branch)
		return x->branch - y->branch;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A queue's stream: buffers that continue each other in aux_head space. */
struct script_pt_stream {
	const struct sideband_buf *first;
	const unsigned char *data;
	size_t len;
	unsigned char *joined;	/* owned copy when several buffers */
	size_t nr_bufs;
};

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
	for (size_t i = 0; i < nr; i++)
		free(v[i].joined);
	free(v);
}

static int script_pt__windows(struct script_session *ss);

int script_pt__run(struct script_session *ss)
{
	const struct pdata_record_auxtrace_info *info = ss->info;
	const struct script_opts *o = ss->o;
	struct script_pt_samples s = { 0 };
	struct script_pt_stream *streams = NULL;
	size_t nr_streams = 0;
	struct pdata_event ev;
	__u64 pos = 0;
	int err = 0, ret;

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
	while (!o->packets && (ret = pdata_reader__next(ss->r, &pos, &ev)) > 0) {
		struct pdata_sample smp;

		if (ev.header->type != PERF_RECORD_SAMPLE)
			continue;
		if (pdata_reader__parse_sample(ss->r, &ev, &smp) || !smp.attr)
			continue;
		/*
		 * The other events' samples are listed among the branches, as perf
		 * script does; not those of the intel_pt event itself (its PMU type
		 * is priv[0]) nor of the sideband dummy.
		 */
		if (smp.attr->attr.type == info->priv[0] ||
		    (smp.attr->attr.type == PERF_TYPE_SOFTWARE && smp.attr->attr.config == PERF_COUNT_SW_DUMMY))
			continue;
		{
			struct script_pt_sample one = {
				.tsc = script_pt_samples__time_to_tsc(&s, smp.time), .from = smp.ip, .to = smp.addr,
				.cpu = (smp.present & PERF_SAMPLE_CPU) ? (__s32)smp.cpu : -1,
			};

			err = script_pt_samples__add(&s, &one);
			if (err)
				break;
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
			s.cpu = st->first->cpu;
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
	if (s.nr)
		qsort(s.v, s.nr, sizeof(*s.v), script_pt_sample__cmp);
	for (size_t i = 0; i < s.nr; i++) {
		const struct script_pt_sample *x = &s.v[i];

		fprintf(ss->out, "[%03d] ", x->cpu);	/* perf: [-01] for samples without a CPU */
		if (x->branch)
			fprintf(ss->out, " %16" PRIx64 " => %16" PRIx64 "\n", (uint64_t)x->from, (uint64_t)x->to);
		else
			fprintf(ss->out, "%16" PRIx64 " %16" PRIx64 "\n", (uint64_t)x->to, (uint64_t)x->from);
	}
	free(s.v);
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
