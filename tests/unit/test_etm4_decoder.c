// SPDX-License-Identifier: BSD-2-Clause
/*
 * auxtrig's own ETMv4 decoder (etm4_decoder.c) against OpenCSD: every
 * shipped ETMv4 capture, and the streams the tests and benches make from
 * them, decoded through csd_decoder once as it chooses (the own decoder
 * where it can) and once with AUXTRIG_CSD_DECODER=opencsd, must give the
 * same elements with the same fields the consumers read; and the own
 * decoder must have been the one used, so a silent fall back to OpenCSD
 * fails too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/decode/csd_decoder.h"
#include "auxtrig/decode/etm4_decoder.h"
#include "auxtrig/format/pdata_reader.h"
#include "cs_fixture.h"

#define JUNO_DIR	"coresight/juno_r1_1"
#define JUNO_BASE	0xffffffc000081000ULL
#define ETM_FILE	"perf/cs_etm-arm64/perf_etm.data"
#define ETM_IMAGE	"perf/cs_etm-arm64/symfs/data/local/tmp/etm_test_loop"

/* what the consumers (script_cs.c, csd_timed.c, script_windows.c) read of an element */
struct rec {
	__u64 index, st, en, ts;
	__u32 type, isa, itype, isub, sz, exec, num, exc;
	__u32 ctx_valid, ctx_id, vm_valid, vmid, el, b64, sec;
	__u8 id;
	int feed;	/* the csd_decoder__feed() call that delivered it */
};

struct recs {
	struct rec *r;
	size_t nr, cap;
	int feed;
	unsigned int wait_every;	/* feed mode: CSD_WAIT after every n-th element, and at timestamps */
};

static void recs_add(struct recs *l, const struct csd_elem *elem)
{
	const ocsd_generic_trace_elem *e = elem->elem;
	struct rec *r;

	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->r = realloc(l->r, l->cap * sizeof(*l->r));
		assert_non_null(l->r);
	}
	r = &l->r[l->nr++];
	memset(r, 0, sizeof(*r));
	r->index = elem->index;
	r->id = elem->trace_id;
	r->type = e->elem_type;
	r->feed = l->feed;
	switch (e->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		r->isa = e->isa;
		r->st = e->st_addr;
		r->en = e->en_addr;
		r->itype = e->last_i_type;
		r->isub = e->last_i_subtype;
		r->sz = e->last_instr_sz;
		r->exec = e->last_instr_exec;
		r->num = e->num_instr_range;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		r->st = e->st_addr;
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		r->en = e->en_addr;
		r->exc = e->exception_number;
		break;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		r->ts = e->timestamp;
		break;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		r->isa = e->isa;
		r->ctx_valid = e->context.ctxt_id_valid;
		r->ctx_id = e->context.ctxt_id_valid ? e->context.context_id : 0;
		r->vm_valid = e->context.vmid_valid;
		r->vmid = e->context.vmid_valid ? e->context.vmid : 0;
		r->el = e->context.exception_level;
		r->b64 = e->context.bits64;
		r->sec = e->context.security_level;
		break;
	default:
		break;
	}
}

static void on_elem(const struct csd_elem *elem, void *ctx)
{
	recs_add(ctx, elem);
}

static enum csd_resp on_elem_resp(const struct csd_elem *elem, void *ctx)
{
	struct recs *l = ctx;
	const ocsd_generic_trace_elem *e = elem->elem;

	recs_add(l, elem);
	if (e->elem_type == OCSD_GEN_TRC_ELEM_TIMESTAMP || (l->wait_every && l->nr % l->wait_every == 0))
		return CSD_WAIT;
	return CSD_CONT;
}

struct run {
	int formatted;
	const struct csd_etmv4_regs *regs;
	int nr_regs;
	const char *image;		/* mapped at image_addr from image_off, image_len bytes */
	__u64 image_addr, image_off, image_len;
	const void *buf;
	size_t len;
	int feed;			/* 1: csd_decoder__feed() with CSD_WAITs, as csd_timed.c */
	unsigned int wait_every;
};

/* the image, for a trace ID memory callback (csd_timed.c reads code through one) */
struct image {
	unsigned char *bytes;
	size_t len;
	__u64 addr;
	unsigned int nr_reads;
};

static size_t image_read(void *ctx, __u8 trace_id, __u64 addr, void *buf, size_t len)
{
	struct image *im = ctx;

	(void)trace_id;
	im->nr_reads++;
	if (addr < im->addr || addr - im->addr >= im->len)
		return 0;
	if (len > im->len - (addr - im->addr))
		len = im->len - (addr - im->addr);
	memcpy(buf, im->bytes + (addr - im->addr), len);
	return len;
}

/* decode @r once, with the own decoder allowed (@own) or not; return its use count */
static __u64 decode(const struct run *r, int own, struct recs *out)
{
	struct image im = { 0 };
	struct csd_decoder *d;
	__u64 nr_own;

	if (own)
		unsetenv("AUXTRIG_CSD_DECODER");
	else
		setenv("AUXTRIG_CSD_DECODER", "opencsd", 1);
	d = csd_decoder__new(r->formatted ? CSD_FORMATTED : 0);
	unsetenv("AUXTRIG_CSD_DECODER");
	assert_non_null(d);
	for (int i = 0; i < r->nr_regs; i++)
		assert_int_equal(csd_decoder__add_etmv4(d, &r->regs[i], 1), 0);
	if (r->image && r->feed) {
		/* as csd_timed.c: the code through a trace ID callback (cached walks forgotten at each context) */
		size_t n;
		unsigned char *all = cs_fixture__slurp(r->image, &n);

		assert_non_null(all);
		assert_true(r->image_off < n);
		im.len = r->image_len && r->image_len < n - r->image_off ? r->image_len : n - r->image_off;
		im.bytes = malloc(im.len);
		assert_non_null(im.bytes);
		memcpy(im.bytes, all + r->image_off, im.len);
		free(all);
		im.addr = r->image_addr;
		assert_int_equal(csd_decoder__set_mem_id_fn(d, image_read, &im), 0);
	} else if (r->image) {
		assert_int_equal(csd_decoder__map_file(d, r->image_addr, r->image, r->image_off, r->image_len), 0);
	}
	out->wait_every = r->wait_every;
	if (!r->feed) {
		csd_decoder__set_elem_fn(d, on_elem, out);
		assert_int_equal(csd_decoder__decode_at(d, r->buf, r->len, 0, NULL, 0), 0);
	} else {
		size_t done = 0;

		csd_decoder__set_elem_resp_fn(d, on_elem_resp, out);
		assert_int_equal(csd_decoder__reset(d), 0);
		while (done < r->len) {
			size_t used = 0;
			int err = csd_decoder__feed(d, done, (const __u8 *)r->buf + done, r->len - done, &used);

			assert_true(err >= 0);
			done += used;
			out->feed++;
		}
	}
	nr_own = csd_decoder__nr_own(d);
	csd_decoder__delete(d);
	free(im.bytes);
	return nr_own;
}

/* decode @r both ways, require the same elements; return whether the own decoder took it */
static int same_elements_maybe(const struct run *r, size_t min_elems, int quiet)
{
	struct recs a = { 0 }, b = { 0 };
	__u64 used_own = decode(r, 1, &a), used_ocsd = decode(r, 0, &b);

	assert_int_equal(used_ocsd, 0);
	if (!quiet)
		print_message("%zu elements, own decoder used for %llu buffer(s)\n", a.nr,
			      (unsigned long long)used_own);
	assert_true(b.nr >= min_elems);
	for (size_t i = 0; i < a.nr && i < b.nr; i++) {
		const struct rec *x = &a.r[i], *y = &b.r[i];

		if (!memcmp(x, y, sizeof(*x)))
			continue;
		fail_msg("element %zu of %zu differs (own / OpenCSD): id %#x/%#x idx %llu/%llu type %u/%u "
			 "st %#llx/%#llx en %#llx/%#llx itype %u/%u sub %u/%u exec %u/%u num %u/%u ts %#llx/%#llx "
			 "exc %u/%u ctx %u:%#x/%u:%#x vm %u:%#x/%u:%#x el %u/%u isa %u/%u feed %d/%d",
			 i, b.nr, x->id, y->id, (unsigned long long)x->index, (unsigned long long)y->index, x->type, y->type,
			 (unsigned long long)x->st, (unsigned long long)y->st, (unsigned long long)x->en,
			 (unsigned long long)y->en, x->itype, y->itype, x->isub, y->isub, x->exec, y->exec, x->num, y->num,
			 (unsigned long long)x->ts, (unsigned long long)y->ts, x->exc, y->exc, x->ctx_valid, x->ctx_id,
			 y->ctx_valid, y->ctx_id, x->vm_valid, x->vmid, y->vm_valid, y->vmid, x->el, y->el, x->isa, y->isa,
			 x->feed, y->feed);
	}
	assert_int_equal(a.nr, b.nr);
	free(a.r);
	free(b.r);
	return used_own > 0;
}

static void same_elements(const struct run *r, size_t min_elems)
{
	assert_true(same_elements_maybe(r, min_elems, 0));
}

static void juno_regs(unsigned int id, struct csd_etmv4_regs *regs)
{
	if (cs_fixture__juno_regs(id, regs))
		fail_msg("no device with trace ID %#x", id);
}

/* The shared captures: skipped without them, except in CI, which always has them. */
static void need_data(void)
{
	const char *ci = getenv("CI");

	if (cs_fixture__data_dir())
		return;
	if (ci && !strcmp(ci, "true"))
		fail_msg("shared test data not found (CI clones shared/ beside the repository)");
	print_message("skip: shared test data not found\n");
	skip();
}

static void *need_juno(size_t *len, struct csd_etmv4_regs regs[6])
{
	void *trace;

	need_data();
	for (int i = 0; i < 6; i++)
		juno_regs(0x10 + i, &regs[i]);
	trace = cs_fixture__slurp(cs_fixture__path(JUNO_DIR "/cstrace.bin"), len);
	assert_non_null(trace);
	return trace;
}

static struct run juno_run(const struct csd_etmv4_regs *regs, int nr, const void *buf, size_t len)
{
	return (struct run){
		.formatted = 1, .regs = regs, .nr_regs = nr, .buf = buf, .len = len,
		.image = strdup(cs_fixture__path(JUNO_DIR "/kernel_dump.bin")), .image_addr = JUNO_BASE,
	};
}

/* The Juno ETB: six ETMs in one formatted buffer (the bench's CoreSight input). */
static void test_etm4_decoder_juno_as_opencsd(void **state)
{
	struct csd_etmv4_regs regs[6];
	size_t len;
	void *trace = need_juno(&len, regs);
	struct run r = juno_run(regs, 6, trace, len);

	same_elements(&r, 15000);
	free((void *)r.image);
	free(trace);
}

/* Each ETM's stream alone, unformatted (a TRBE or RAW buffer). */
static void test_etm4_decoder_juno_raw_as_opencsd(void **state)
{
	struct csd_etmv4_regs regs[6];
	size_t len;
	void *trace = need_juno(&len, regs);

	for (int i = 0; i < 6; i++) {
		size_t n;
		unsigned char *s = cs_fixture__deformat(trace, len, 0x10 + i, &n);
		struct run r = juno_run(&regs[i], 1, s, n);

		assert_non_null(s);
		if (!n) {
			free(s);
			free((void *)r.image);
			continue;
		}
		r.formatted = 0;
		same_elements(&r, 1);
		free(s);
		free((void *)r.image);
	}
	free(trace);
}

/* The six streams with timestamps, formatted again (the timed bench input), fed as csd_timed.c feeds. */
static void test_etm4_decoder_juno_timed_as_opencsd(void **state)
{
	struct csd_etmv4_regs regs[6];
	unsigned char *st[6];
	size_t sl[6], len, n;
	unsigned int ids[6];
	void *trace = need_juno(&len, regs);
	unsigned char *f;

	for (int i = 0; i < 6; i++) {
		size_t dl, nts;
		unsigned char *d = cs_fixture__deformat(trace, len, 0x10 + i, &dl);

		assert_non_null(d);
		st[i] = cs_fixture__stamp(d, dl, 7, 1000000 + 5000 * i, 3 + i, &sl[i], &nts);
		assert_non_null(st[i]);
		free(d);
		ids[i] = 0x10 + i;
		regs[i].configr |= 1u << 11;	/* TS */
	}
	f = cs_fixture__format((const unsigned char *const *)st, sl, ids, 6, 13, &n);
	assert_non_null(f);
	{
		struct run r = juno_run(regs, 6, f, n);

		same_elements(&r, 15000);
		r.feed = 1;
		same_elements(&r, 15000);
		r.wait_every = 3;
		same_elements(&r, 15000);
		free((void *)r.image);
	}
	for (int i = 0; i < 6; i++)
		free(st[i]);
	free(f);
	free(trace);
}

/* @st (@len bytes) with every @every-th of the timestamp packets cs_fixture__stamp() put in made an overflow */
static unsigned int overflow_for_ts(unsigned char *st, size_t len, __u64 ts0, __u64 step, unsigned int every)
{
	unsigned int k = 0, nr = 0;

	for (__u64 ts = ts0;; ts += step, k++) {
		unsigned char pkt[8] = { 0x02 };
		unsigned char *at = NULL;

		for (int b = 0; b < 7; b++)
			pkt[1 + b] = ((ts >> (7 * b)) & 0x7f) | (b < 6 ? 0x80 : 0);
		for (size_t i = 0; i + 8 <= len && !at; i++)
			if (!memcmp(st + i, pkt, 8))
				at = st + i;
		if (!at)
			return nr;
		if (k % every == every - 1) {
			static const unsigned char ovf[8] = { 0x00, 0x05, 0x70, 0x70, 0x70, 0x70, 0x70, 0x70 };

			memcpy(at, ovf, 8);
			nr++;
		}
	}
}

/* The timed streams with overflows (and the trace lost up to the next A-sync after each). */
static void test_etm4_decoder_juno_overflow_as_opencsd(void **state)
{
	struct csd_etmv4_regs regs[6];
	unsigned char *st[6];
	size_t sl[6], len, n;
	unsigned int ids[6];
	void *trace = need_juno(&len, regs);
	unsigned char *f;

	for (int i = 0; i < 6; i++) {
		size_t dl, nts;
		unsigned char *d = cs_fixture__deformat(trace, len, 0x10 + i, &dl);

		assert_non_null(d);
		st[i] = cs_fixture__stamp(d, dl, 11, 2000000 + 7000 * i, 5 + i, &sl[i], &nts);
		assert_non_null(st[i]);
		if (dl > 1000)
			assert_true(overflow_for_ts(st[i], sl[i], 2000000 + 7000 * i, 5 + i, 9) > 0);
		free(d);
		ids[i] = 0x10 + i;
		regs[i].configr |= 1u << 11;	/* TS */
	}
	{
		struct run r = juno_run(&regs[0], 1, st[0], sl[0]);

		r.formatted = 0;
		same_elements(&r, 500);
		free((void *)r.image);
	}
	f = cs_fixture__format((const unsigned char *const *)st, sl, ids, 6, 13, &n);
	assert_non_null(f);
	{
		struct run r = juno_run(regs, 6, f, n);

		same_elements(&r, 1000);
		r.feed = 1;
		same_elements(&r, 1000);
		free((void *)r.image);
	}
	for (int i = 0; i < 6; i++)
		free(st[i]);
	free(f);
	free(trace);
}

/* simpleperf's cs_etm perf.data: its one AUXTRACE buffer, with its image. */
static void test_etm4_decoder_perf_etm_as_opencsd(void **state)
{
	const struct pdata_record_auxtrace_info *info = NULL;
	const struct pdata_record_auxtrace *at = NULL;
	struct csd_etmv4_regs regs = { 0 };
	const void *aux = NULL;
	struct pdata_reader *rd;
	struct pdata_event ev;
	__u64 pos = 0;
	char image[4200];

	need_data();
	rd = pdata_reader__open(cs_fixture__path(ETM_FILE));
	assert_non_null(rd);
	while (pdata_reader__next(rd, &pos, &ev) > 0) {
		if (ev.header->type == PDATA_RECORD_AUXTRACE_INFO)
			info = (const void *)ev.header;
		if (ev.header->type == PDATA_RECORD_AUXTRACE) {
			at = (const void *)ev.header;
			aux = ev.aux;
		}
	}
	assert_non_null(info);
	assert_non_null(at);
	{
		const __u64 *blk = &info->priv[3 + 7 * 10];	/* CPU 7's block, version 1 layout */

		regs.configr = blk[3];
		regs.traceidr = blk[4];
		regs.idr0 = blk[5];
		regs.idr1 = blk[6];
		regs.idr2 = blk[7];
		regs.idr8 = blk[8];
	}
	snprintf(image, sizeof(image), "%s", cs_fixture__path(ETM_IMAGE));
	{
		struct run r = {
			.formatted = 1, .regs = &regs, .nr_regs = 1, .buf = aux, .len = at->size,
			.image = image, .image_addr = 0x582b2b1000ULL, .image_off = 0x1000, .image_len = 0xf0,
		};

		same_elements(&r, 200);
		r.feed = 1;
		r.wait_every = 1;
		same_elements(&r, 200);
	}
	pdata_reader__delete(rd);
}

/*
 * Pieces of the capture, as perf's AUX records cut a buffer: starting and
 * ending anywhere (in whole frames when formatted), without an A-sync,
 * in the middle of a packet. Whichever decoder takes each, the elements
 * are OpenCSD's; a stream that never synchronises goes to OpenCSD, so of
 * these small pieces about a quarter are the own decoder's.
 */
static void test_etm4_decoder_juno_pieces_as_opencsd(void **state)
{
	struct csd_etmv4_regs regs[6];
	size_t len, n, nr = 0, own = 0;
	void *trace = need_juno(&len, regs);
	unsigned char *raw = cs_fixture__deformat(trace, len, 0x10, &n);
	struct run r = juno_run(regs, 6, trace, len);

	assert_non_null(raw);
	for (size_t at = 0; at + 16 < len; at += 4096 + 48) {
		for (size_t size = 16; at + size <= len && size <= 8192; size = size * 3 + 16 * (at % 7)) {
			r.buf = (const __u8 *)trace + at;
			r.len = size;
			own += same_elements_maybe(&r, 0, 1);
			nr++;
		}
	}
	r.formatted = 0;
	r.nr_regs = 1;
	for (size_t at = 0; at + 1 < n; at += 1531) {
		for (size_t size = 1; at + size <= n && size <= 6000; size = size * 2 + at % 5) {
			r.buf = raw + at;
			r.len = size;
			own += same_elements_maybe(&r, 0, 1);
			nr++;
		}
	}
	print_message("%zu pieces, %zu decoded by the own decoder\n", nr, own);
	assert_true(own >= 100);
	free(raw);
	free((void *)r.image);
	free(trace);
}

/* What the own decoder does not decode goes to OpenCSD, whole buffers at a time. */
static void test_etm4_decoder_falls_back_whole(void **state)
{
	struct csd_etmv4_regs regs[6];
	size_t len;
	void *trace = need_juno(&len, regs);
	struct recs a = { 0 };
	struct run r = juno_run(regs, 6, trace, 4096);
	unsigned char *cut = malloc(len);

	/* a return stack configuration: OpenCSD for everything */
	regs[0].configr |= 1u << 12;
	assert_int_equal(decode(&r, 1, &a), 0);
	regs[0].configr &= ~(1u << 12);
	free(a.r);
	/* a reserved packet header in the stream of 0x10, late in the buffer: that buffer goes to OpenCSD */
	memcpy(cut, trace, len);
	for (size_t i = 2048; i < len; i += 16)
		if (!(cut[i] & 1) && !(cut[i + 15] & 1)) {
			cut[i] = 0x0a;	/* reserved */
			break;
		}
	r.buf = cut;
	r.len = len;
	memset(&a, 0, sizeof(a));
	assert_int_equal(decode(&r, 1, &a), 0);
	free(a.r);
	free(cut);
	free((void *)r.image);
	free(trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_etm4_decoder_juno_as_opencsd),
		cmocka_unit_test(test_etm4_decoder_juno_raw_as_opencsd),
		cmocka_unit_test(test_etm4_decoder_juno_timed_as_opencsd),
		cmocka_unit_test(test_etm4_decoder_perf_etm_as_opencsd),
		cmocka_unit_test(test_etm4_decoder_juno_pieces_as_opencsd),
		cmocka_unit_test(test_etm4_decoder_juno_overflow_as_opencsd),
		cmocka_unit_test(test_etm4_decoder_falls_back_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
