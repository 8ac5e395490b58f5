// SPDX-License-Identifier: BSD-2-Clause
/*
 * Decoders on real captures (../shared/data, see its README.md): Intel PT
 * packets and branches with libipt, CoreSight ETMv4 with OpenCSD on the
 * Juno ETB snapshot and on simpleperf's cs_etm perf.data.
 *
 * The data lives beside the repository, never in it. Missing data is a skip
 * on a developer machine and a failure under CI=true, where it must be there.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>

#include <intel-pt.h>
#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/decode/csd_decoder.h"
#include "auxtrig/decode/ipt_decoder.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/pdata_writer.h"
#include "cs_fixture.h"

#define PT_FILE		"perf/intel_pt-skylake/perf.data.intel_pt-4.14"
#define ETM_FILE	"perf/cs_etm-arm64/perf_etm.data"
#define ETM_IMAGE	"perf/cs_etm-arm64/symfs/data/local/tmp/etm_test_loop"
#define JUNO_DIR	"coresight/juno_r1_1"
#define JUNO_REF	"reference/juno_r1_1-0x10-decode.txt.gz"

static char data_dir[4096];

/* $AUXTRIG_TOP/../shared/data, else ../shared/data from the repository root (the cwd of make). */
static int find_data(void)
{
	const char *top = getenv("AUXTRIG_TOP");
	char probe[4200];
	struct stat st;

	snprintf(data_dir, sizeof(data_dir), "%s/../shared/data", top ? top : ".");
	snprintf(probe, sizeof(probe), "%s/README.md", data_dir);
	return stat(probe, &st) == 0 ? 0 : -ENOENT;
}

static void need_data(void)
{
	const char *ci = getenv("CI");

	if (find_data() == 0)
		return;
	if (ci && !strcmp(ci, "true"))
		fail_msg("shared test data not found at %s (CI clones shared/ beside the repository)", data_dir);
	print_message("skip: shared test data not found at %s\n", data_dir);
	skip();
}

static char *data_path(const char *rel)
{
	static char path[2][4200];
	static int which;

	which ^= 1;
	snprintf(path[which], sizeof(path[which]), "%s/%s", data_dir, rel);
	return path[which];
}

/* ---- Intel PT ---------------------------------------------------------- */

struct pt_buf {
	const void *data;
	size_t size;
	int cpu;
};

/* The AUXTRACE buffers of the Skylake capture, in file order. */
static struct pdata_reader *pt_buffers(struct pt_buf *bufs, int max, int *nr)
{
	struct pdata_reader *r = pdata_reader__open(data_path(PT_FILE));
	struct pdata_event ev;
	__u64 pos = 0;

	assert_non_null(r);
	*nr = 0;
	while (pdata_reader__next(r, &pos, &ev) > 0) {
		const struct pdata_record_auxtrace *at = (const void *)ev.header;

		if (ev.header->type != PDATA_RECORD_AUXTRACE)
			continue;
		assert_true(*nr < max);
		bufs[*nr].data = ev.aux;
		bufs[*nr].size = ev.aux_size;
		bufs[*nr].cpu = (int)at->cpu;
		(*nr)++;
	}
	return r;
}

static void test_ipt_decoder_packet_counts(void **state)
{
	struct ipt_packet_stats st[2];
	struct pt_buf bufs[4];
	struct pdata_reader *r;
	int nr;

	need_data();
	r = pt_buffers(bufs, 4, &nr);
	assert_int_equal(nr, 2);
	assert_int_equal(bufs[0].cpu, 0);
	assert_int_equal(bufs[0].size, 12240);
	assert_int_equal(bufs[1].cpu, 3);
	assert_int_equal(bufs[1].size, 137728);
	for (int i = 0; i < 2; i++)
		assert_int_equal(ipt_decoder__packets(bufs[i].data, bufs[i].size, NULL, NULL, &st[i]), 0);
	assert_int_equal(st[0].packets, 9980);
	assert_int_equal(st[1].packets, 95129);
	assert_int_equal(st[0].errors + st[1].errors, 0);
	/* perf 6.1's `report -D` shows the same non-PAD packets. */
	assert_int_equal(st[0].packets - st[0].pads + st[1].packets - st[1].pads, 85093);
	pdata_reader__delete(r);
}

struct br_log {
	struct ipt_branch v[1024];
	int nr;
};

static int log_branch(const struct ipt_branch *br, void *ctx)
{
	struct br_log *l = ctx;

	if (l->nr < 1024)
		l->v[l->nr] = *br;
	l->nr++;
	return 0;
}

static void test_ipt_decoder_branches(void **state)
{
	struct br_log *l0 = calloc(1, sizeof(*l0)), *l3 = calloc(1, sizeof(*l3));
	struct pt_buf bufs[4];
	struct pdata_reader *r;
	int nr;

	need_data();
	r = pt_buffers(bufs, 4, &nr);
	assert_int_equal(nr, 2);
	assert_int_equal(ipt_decoder__branches(bufs[0].data, bufs[0].size, NULL, log_branch, l0), 0);
	assert_int_equal(ipt_decoder__branches(bufs[1].data, bufs[1].size, NULL, log_branch, l3), 0);
	/* perf 6.1: 25+2+2+2 samples on CPU 0, 588 on CPU 3 (619 with =>). */
	assert_int_equal(l0->nr, 31);
	assert_int_equal(l3->nr, 588);
	/* The first ones of CPU 3: TIP.PGE, a full-IP TIP, and a FUP+TIP pair. */
	assert_int_equal(l3->v[0].from, 0);
	assert_int_equal(l3->v[0].to, 0xffffffffb960d302ULL);
	assert_int_equal(l3->v[1].to, 0xffffffffb98ab951ULL);
	assert_int_equal(l3->v[6].from, 0x7fb36d08bd60ULL);
	assert_int_equal(l3->v[6].to, 0xffffffffba001340ULL);
	/* One trace stop (FUP + TIP.PGD): the only sample with no target. */
	{
		int stops = 0, with_from = 0;

		for (int i = 0; i < l3->nr; i++) {
			if (!l3->v[i].to) {
				stops++;
				assert_int_equal(l3->v[i].from, 0xffffffffb960d300ULL);
			}
			with_from += l3->v[i].from != 0;
		}
		assert_int_equal(stops, 1);
		/* perf knows the source only for async FUP+TIP(.PGD) pairs: 4 on CPU 3. */
		assert_int_equal(with_from, 4);
	}
	/* Timed: TSC 0xbc4cbefc32 in the first PSB+, then MTC steps of 8 CTC = 400 TSC ticks. */
	{
		struct ipt_timing t = { .mtc_period = 3, .tsc_ctc_n = 100, .tsc_ctc_d = 2,
					.ref_tsc = 0xbc4cd584c2ULL };
		int mtc_refined = 0;

		l3->nr = 0;
		assert_int_equal(ipt_decoder__branches(bufs[1].data, bufs[1].size, &t, log_branch, l3), 0);
		assert_int_equal(l3->nr, 588);
		assert_int_equal(l3->v[0].tsc, 0xbc4cbefc32ULL);
		for (int i = 1; i < l3->nr; i++) {
			assert_true(l3->v[i].tsc >= l3->v[i - 1].tsc);
			mtc_refined += l3->v[i].tsc != l3->v[i - 1].tsc;
		}
		/* Far more distinct times than the 24 TSC packets of the file: MTC refines them. */
		assert_int_equal(mtc_refined + 1, 471);
		assert_int_equal(l3->v[l3->nr - 1].tsc, 0xbc4cd28bc0ULL);
	}
	/* Not enough trace for a sample: nothing, no crash. */
	assert_int_equal(ipt_decoder__branches(bufs[1].data, 16, NULL, log_branch, l0), 0);
	assert_int_equal(l0->nr, 31);
	pdata_reader__delete(r);
	free(l0);
	free(l3);
}

/* Every branch and its offset and time, into a growing array. */
struct br_all {
	struct ipt_branch *v;
	size_t nr, cap;
};

static int all_branch(const struct ipt_branch *br, void *ctx)
{
	struct br_all *a = ctx;

	if (a->nr == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		assert_non_null(a->v);
	}
	a->v[a->nr++] = *br;
	return 0;
}

/*
 * ipt_decoder__branches() decodes most packets itself and leaves the rest to
 * libipt: on both real buffers and on 400 corrupted copies of them (bytes
 * changed anywhere, buffers cut anywhere, so that reserved encodings, bad
 * packets, resyncs and packets cut by the end all happen), it gives the same
 * branches, offsets and times as the walk with libipt's packet decoder for
 * every packet. (Run once with 15,000 copies of another seed: the same.)
 */
static void test_ipt_decoder_fast_packets_as_libipt(void **state)
{
	struct ipt_timing t = { .mtc_period = 3, .tsc_ctc_n = 100, .tsc_ctc_d = 2, .ref_tsc = 0xbc4cd584c2ULL };
	struct pt_buf bufs[4];
	struct pdata_reader *r;
	unsigned int seed = 20261125;
	int nr;

	(void)state;
	need_data();
	r = pt_buffers(bufs, 4, &nr);
	assert_int_equal(nr, 2);
	for (int round = 0; round <= 400; round++) {
		const struct pt_buf *b = &bufs[round % 2];
		unsigned char *copy = malloc(b->size);
		struct br_all fast = { 0 }, ref = { 0 };
		size_t len = b->size;

		assert_non_null(copy);
		memcpy(copy, b->data, b->size);
		if (round > 1) {
			int n = 1 + rand_r(&seed) % 64;

			for (int k = 0; k < n; k++)
				copy[rand_r(&seed) % len] = rand_r(&seed);
			if (round % 3 == 0)
				len = rand_r(&seed) % len;
		}
		assert_int_equal(ipt_decoder__branches(copy, len, &t, all_branch, &fast), 0);
		assert_int_equal(ipt_decoder__branches_ref(copy, len, &t, all_branch, &ref), 0);
		for (size_t i = 0; i < fast.nr && i < ref.nr; i++)
			if (memcmp(&fast.v[i], &ref.v[i], sizeof(fast.v[i])))
				fail_msg("round %d, branch %zu: %#llx => %#llx at %#llx, libipt's walk %#llx => %#llx at %#llx",
					 round, i, (unsigned long long)fast.v[i].from, (unsigned long long)fast.v[i].to,
					 (unsigned long long)fast.v[i].offset, (unsigned long long)ref.v[i].from,
					 (unsigned long long)ref.v[i].to, (unsigned long long)ref.v[i].offset);
		if (fast.nr != ref.nr)
			fail_msg("round %d: %zu branches, libipt's walk %zu", round, fast.nr, ref.nr);
		if (round < 2)
			assert_int_equal(fast.nr, round == 0 ? 31 : 588);
		free(fast.v);
		free(ref.v);
		free(copy);
	}
	pdata_reader__delete(r);
}

/*
 * A CYC packet whose extension bytes go past 64 bits of payload is a bad
 * packet to libipt (it resyncs at the next PSB, and there is none): the
 * fast walk used to take it whole and report the TIP.PGE after it (found by
 * fuzz_ipt, tests/fuzz/crashers/ipt/cyc-past-64-bits). With 8 extension
 * bytes it is a packet for both.
 */
static void test_ipt_decoder_fast_long_cyc_as_libipt(void **state)
{
	unsigned char buf[64];

	(void)state;
	for (int ext = 7; ext <= 11; ext++) {
		struct br_all fast = { 0 }, ref = { 0 };
		size_t n = 0;

		for (int i = 0; i < 8; i++) {
			buf[n++] = 0x02;
			buf[n++] = 0x82;
		}
		buf[n++] = 0x02;	/* PSBEND */
		buf[n++] = 0x23;
		buf[n++] = 0x07;	/* CYC with extension bytes */
		for (int i = 0; i < ext; i++)
			buf[n++] = i + 1 < ext ? 0x01 : 0x00;
		buf[n++] = 0xd1;	/* TIP.PGE, 8-byte ip */
		for (int i = 0; i < 8; i++)
			buf[n++] = (0x7f0000401000ULL >> (8 * i)) & 0xff;
		assert_int_equal(ipt_decoder__branches(buf, n, NULL, all_branch, &fast), 0);
		assert_int_equal(ipt_decoder__branches_ref(buf, n, NULL, all_branch, &ref), 0);
		if (fast.nr != ref.nr)
			fail_msg("CYC with %d extension bytes: %zu branches, libipt's walk %zu", ext, fast.nr, ref.nr);
		if (ext <= 8)
			assert_int_equal(ref.nr, 1);
		free(fast.v);
		free(ref.v);
	}
}

struct pkt_log {
	__u64 off[16];
	enum pt_packet_type type[16];
	int nr;
};

static int log_packet(const struct pt_packet *pkt, __u64 offset, void *ctx)
{
	struct pkt_log *l = ctx;

	if (l->nr < 16) {
		l->off[l->nr] = offset;
		l->type[l->nr] = pkt->type;
	}
	l->nr++;
	return 0;
}

/*
 * After a bad packet libipt resyncs on a PSB up to 15 bytes back, inside
 * packets already listed (here a MODE and a TNT that misread the PSB's
 * first bytes): the walk lists it after them and counts no bytes skipped
 * for it (it used to subtract: 2^64 - 2), only the 4 bytes after the last
 * bad packet, where no PSB follows (found by fuzz_ipt,
 * tests/fuzz/crashers/ipt/resync-into-listed-packets).
 */
static void test_ipt_decoder_packets_resync_into_listed(void **state)
{
	static const enum pt_packet_type want[] = { ppt_psb, ppt_psbend, ppt_mode, ppt_tnt_8, ppt_psb };
	static const __u64 want_off[] = { 0, 16, 18, 20, 19 };
	unsigned char buf[39];
	struct ipt_packet_stats st;
	struct pkt_log l = { .nr = 0 };
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 8; i++) {		/* PSB at 0 */
		buf[n++] = 0x02;
		buf[n++] = 0x82;
	}
	buf[n++] = 0x02;			/* PSBEND at 16 */
	buf[n++] = 0x23;
	buf[n++] = 0x99;			/* MODE at 18, its payload 0x02 a PSB's start */
	buf[n++] = 0x02;
	buf[n++] = 0x82;			/* TNT-8 at 20 */
	for (int i = 0; i < 7; i++) {		/* at 21: a PSB cut short by 02 ff (bad) */
		buf[n++] = 0x02;
		buf[n++] = 0x82;
	}
	buf[n++] = 0x02;
	buf[n++] = 0xff;
	buf[n++] = 0x00;
	buf[n++] = 0x00;
	assert_int_equal(n, sizeof(buf));
	assert_int_equal(ipt_decoder__packets(buf, n, log_packet, &l, &st), 0);
	assert_int_equal(l.nr, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(l.type[i], want[i]);
		assert_int_equal(l.off[i], want_off[i]);
	}
	assert_int_equal(st.packets, 5);
	assert_int_equal(st.errors, 2);
	assert_int_equal(st.skipped, 4);
}

/* Run `auxtrig script ARGS` with stdout into @out; returns its exit code. */
static int run_script(const char *out, char **argv, int argc)
{
	int saved = dup(STDOUT_FILENO), rc;

	fflush(stdout);
	assert_non_null(freopen(out, "w", stdout));
	rc = cmd_script(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	clearerr(stdout);
	return rc;
}

static size_t count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += !needle || strstr(line, needle);
	fclose(f);
	return n;
}

/*
 * CPU 3's buffer written back as two AUXTRACE records of one queue (a cut
 * inside the stream, as successive AUX reads give): decoded as one stream
 * it yields the same 588 branches; with a gap in between the second part
 * is a new stream that must resync first, and yields fewer.
 */
static void test_ipt_decoder_queue_joins_buffers(void **state)
{
	char dir[] = "/tmp/auxtrig-decode-XXXXXX", path[64], out[64];
	const struct pdata_record_auxtrace_info *info = NULL;
	struct perf_event_attr pt = { .size = sizeof(pt), .sample_period = 1,
				      .sample_type = PDATA_SAMPLE_TYPE, .sample_id_all = 1 };
	__u64 id = 1;
	struct pt_buf bufs[4];
	struct pdata_reader *r;
	struct pdata_event ev;
	__u64 pos = 0;
	int nr;

	need_data();
	r = pt_buffers(bufs, 4, &nr);
	while (pdata_reader__next(r, &pos, &ev) > 0)
		if (ev.header->type == PDATA_RECORD_AUXTRACE_INFO)
			info = (const void *)ev.header;
	assert_non_null(info);
	pt.type = info->priv[0];
	pt.config = pdata_reader__attr(r, 0)->attr.config;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	snprintf(out, sizeof(out), "%s/out.txt", dir);

	for (int gap = 0; gap < 2; gap++) {
		struct pdata_record_auxtrace rec = { .idx = 3, .cpu = 3, .reference = 0xbc4cd584c2ULL };
		const size_t cut = 70000;	/* a multiple of 8: the writer pads payloads */
		char *argv[] = { "script", "-i", path, NULL };
		struct pdata_writer *w;
		size_t n;

		unlink(path);
		w = pdata_writer__open(path, false);
		assert_non_null(w);
		assert_int_equal(pdata_writer__add_attr(w, &pt, "intel_pt//", &id, 1), 0);
		assert_int_equal(pdata_writer__begin_data(w), 0);
		assert_int_equal(pdata_writer__write(w, info, info->header.size), 0);
		assert_int_equal(pdata_writer__write_auxtrace(w, &rec, bufs[1].data, cut, NULL, 0), 0);
		rec.offset = cut + (gap ? 4096 : 0);
		assert_int_equal(pdata_writer__write_auxtrace(w, &rec, (const char *)bufs[1].data + cut,
							      bufs[1].size - cut, NULL, 0), 0);
		assert_int_equal(pdata_writer__close(w), 0);
		pdata_writer__delete(w);

		assert_int_equal(run_script(out, argv, 3), 0);
		n = count_lines(out, "=>");
		if (!gap)
			assert_int_equal(n, 588);
		else
			assert_int_equal(n, 578);	/* resync at the next PSB loses 10 */
		print_message("%s: %zu branches\n", gap ? "with a gap" : "contiguous", n);
	}
	unlink(out);
	unlink(path);
	rmdir(dir);
	pdata_reader__delete(r);
}

/* ---- CoreSight: the Juno snapshot --------------------------------------- */

struct listing {
	char **lines;
	size_t nr, cap;
	size_t packets, elems;
};

static void listing_add(struct listing *l, const char *s)
{
	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->lines = realloc(l->lines, l->cap * sizeof(*l->lines));
		assert_non_null(l->lines);
	}
	l->lines[l->nr] = strdup(s);
	assert_non_null(l->lines[l->nr]);
	l->nr++;
}

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->lines[i]);
	free(l->lines);
}

static void juno_on_packet(const struct csd_packet *pkt, void *ctx)
{
	struct listing *l = ctx;
	char line[1024];

	if (!pkt->eot)
		l->packets++;
	listing_add(l, csd_decoder__packet_line(pkt, line, sizeof(line)));
}

static void juno_on_elem(const struct csd_elem *elem, void *ctx)
{
	struct listing *l = ctx;
	char line[1024];

	l->elems++;
	listing_add(l, csd_decoder__elem_line(elem, line, sizeof(line)));
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n ? n : 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

/* The decode lines of the reference listing (those trc_pkt_lister prints per packet/element). */
static void read_reference(const char *path, struct listing *ref)
{
	gzFile gz = gzopen(path, "rb");
	char line[4096];

	assert_non_null(gz);
	while (gzgets(gz, line, sizeof(line))) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "Idx:", 4) || !strncmp(line, "ID:", 3)) {
			listing_add(ref, line);
			if (strstr(line, "OCSD_GEN_TRC_ELEM_"))
				ref->elems++;
			else if (line[0] == 'I' && line[1] == 'd')
				ref->packets++;
		}
	}
	gzclose(gz);
}

static void test_csd_decoder_juno_listing(void **state)
{
	struct listing got = { 0 }, ref = { 0 };
	struct csd_etmv4_regs regs;
	struct csd_decoder *d;
	size_t len, same = 0;
	void *trace;

	need_data();
	assert_int_equal(cs_fixture__juno_regs(0x10, &regs), 0);
	assert_int_equal(regs.idr0, 0x28000EA1);
	d = csd_decoder__new(CSD_FORMATTED);
	assert_non_null(d);
	assert_int_equal(csd_decoder__add_etmv4(d, &regs, 1), 0);
	assert_int_equal(csd_decoder__map_file(d, 0xffffffc000081000ULL, data_path(JUNO_DIR "/kernel_dump.bin"), 0, 0), 0);
	assert_int_equal(csd_decoder__set_packet_fn(d, juno_on_packet, &got), 0);
	csd_decoder__set_elem_fn(d, juno_on_elem, &got);
	trace = slurp(data_path(JUNO_DIR "/cstrace.bin"), &len);
	assert_int_equal(len, 65536);
	assert_int_equal(csd_decoder__decode(d, trace, len), 0);
	csd_decoder__delete(d);
	free(trace);

	assert_int_equal(got.packets, 29451);
	assert_int_equal(got.elems, 14496);
	read_reference(data_path(JUNO_REF), &ref);
	assert_int_equal(ref.packets, 29451);
	assert_int_equal(ref.elems, 14496);
	assert_int_equal(got.nr, ref.nr);
	for (size_t i = 0; i < got.nr; i++) {
		if (!strcmp(got.lines[i], ref.lines[i])) {
			same++;
			continue;
		}
		fail_msg("listing line %zu differs:\n  got: %s\n  ref: %s", i + 1, got.lines[i], ref.lines[i]);
	}
	assert_int_equal(same, ref.nr);
	listing_free(&got);
	listing_free(&ref);
}

struct per_id {
	size_t packets[128], elems[128];
};

static void count_packet(const struct csd_packet *pkt, void *ctx)
{
	struct per_id *c = ctx;

	if (!pkt->eot)
		c->packets[pkt->trace_id & 0x7f]++;
}

static void count_elem(const struct csd_elem *elem, void *ctx)
{
	struct per_id *c = ctx;

	c->elems[elem->trace_id & 0x7f]++;
}

/* All six ETMs of the snapshot in one tree: the frame demultiplexer at work. */
static void test_csd_decoder_juno_all_ids(void **state)
{
	/* README: per trace ID packet/element counts of trc_pkt_lister -decode. */
	static const size_t want[6][2] = {
		{ 29451, 14496 }, { 271, 107 }, { 106, 2 }, { 305, 142 }, { 0, 1 }, { 1331, 658 },
	};
	struct per_id *c = calloc(1, sizeof(*c));
	struct csd_decoder *d;
	size_t len;
	void *trace;

	need_data();
	assert_non_null(c);
	d = csd_decoder__new(CSD_FORMATTED);
	assert_non_null(d);
	for (unsigned int id = 0x10; id <= 0x15; id++) {
		struct csd_etmv4_regs regs;

		assert_int_equal(cs_fixture__juno_regs(id, &regs), 0);
		assert_int_equal(csd_decoder__add_etmv4(d, &regs, 1), 0);
	}
	assert_int_equal(csd_decoder__map_file(d, 0xffffffc000081000ULL, data_path(JUNO_DIR "/kernel_dump.bin"), 0, 0), 0);
	assert_int_equal(csd_decoder__set_packet_fn(d, count_packet, c), 0);
	csd_decoder__set_elem_fn(d, count_elem, c);
	trace = slurp(data_path(JUNO_DIR "/cstrace.bin"), &len);
	assert_int_equal(csd_decoder__decode(d, trace, len), 0);
	csd_decoder__delete(d);
	free(trace);
	for (int i = 0; i < 6; i++) {
		print_message("trace ID %#x: %zu packets, %zu elements\n", 0x10 + i, c->packets[0x10 + i],
			      c->elems[0x10 + i]);
		assert_int_equal(c->packets[0x10 + i], want[i][0]);
		assert_int_equal(c->elems[0x10 + i], want[i][1]);
	}
	free(c);
}

/* ---- CoreSight: simpleperf's perf.data ---------------------------------- */

struct etm_count {
	size_t packets, elems, ranges;
	struct csd_branches br;
	struct csd_branch first[4];
	size_t nr_br;
};

static void etm_on_packet(const struct csd_packet *pkt, void *ctx)
{
	struct etm_count *c = ctx;

	if (!pkt->eot && pkt->trace_id == 0x1e)
		c->packets++;
}

static void etm_on_branch(const struct csd_branch *br, void *ctx)
{
	struct etm_count *c = ctx;

	if (c->nr_br < 4)
		c->first[c->nr_br] = *br;
	c->nr_br++;
}

static void etm_on_elem(const struct csd_elem *elem, void *ctx)
{
	struct etm_count *c = ctx;
	const ocsd_generic_trace_elem *e = elem->elem;
	struct csd_el el;

	assert_int_equal(elem->trace_id, 0x1e);
	c->elems++;
	if (e->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE)
		c->ranges++;
	csd_el__from(&el, elem);
	csd_branches__elem(&c->br, &el);
}

static void test_csd_decoder_perf_etm(void **state)
{
	struct etm_count c = { .br = { .fn = etm_on_branch } };
	const struct pdata_record_auxtrace_info *info = NULL;
	const struct pdata_record_auxtrace *at = NULL;
	struct csd_etmv4_regs regs = { 0 };
	const void *aux = NULL;
	struct pdata_reader *r;
	struct csd_decoder *d;
	struct pdata_event ev;
	__u64 pos = 0;

	need_data();
	c.br.ctx = &c;
	r = pdata_reader__open(data_path(ETM_FILE));
	assert_non_null(r);
	while (pdata_reader__next(r, &pos, &ev) > 0) {
		if (ev.header->type == PDATA_RECORD_AUXTRACE_INFO)
			info = (const void *)ev.header;
		if (ev.header->type == PDATA_RECORD_AUXTRACE) {
			at = (const void *)ev.header;
			aux = ev.aux;
		}
	}
	assert_non_null(info);
	assert_non_null(at);
	assert_int_equal(info->type, PDATA_AUXTRACE_CS_ETM);
	assert_int_equal(at->cpu, 7);
	assert_int_equal(at->size, 384);
	/* Version 1 layout: 3 header words, then per CPU magic, cpu, nr, 7 registers; CPU 7 is last. */
	assert_int_equal(info->priv[0], 1);
	assert_int_equal(info->priv[1] & 0xffffffff, 8);
	{
		const __u64 *blk = &info->priv[3 + 7 * 10];

		assert_int_equal(blk[0], 0x4040404040404040ULL);
		assert_int_equal(blk[1], 7);
		assert_int_equal(blk[2], 7);
		regs.configr = blk[3];
		regs.traceidr = blk[4];
		regs.idr0 = blk[5];
		regs.idr1 = blk[6];
		regs.idr2 = blk[7];
		regs.idr8 = blk[8];
	}
	assert_int_equal(regs.configr, 0x40);
	assert_int_equal(regs.traceidr, 0x1e);
	assert_int_equal(regs.idr0, 0x28000ea1);
	assert_int_equal(regs.idr1, 0x4100f423);
	assert_int_equal(regs.idr2, 0x20001088);

	d = csd_decoder__new(CSD_FORMATTED);
	assert_non_null(d);
	assert_int_equal(csd_decoder__add_etmv4(d, &regs, 1), 0);
	assert_int_equal(csd_decoder__map_file(d, 0x582b2b1000ULL, data_path(ETM_IMAGE), 0x1000, 0xf0), 0);
	assert_int_equal(csd_decoder__set_packet_fn(d, etm_on_packet, &c), 0);
	csd_decoder__set_elem_fn(d, etm_on_elem, &c);
	assert_int_equal(csd_decoder__decode(d, aux, at->size), 0);
	csd_decoder__delete(d);

	assert_int_equal(c.packets, 27);
	assert_int_equal(c.elems, 214);
	assert_int_equal(c.ranges, 208);
	assert_int_equal(c.nr_br, 208);
	assert_int_equal(c.first[0].from, 0);
	assert_int_equal(c.first[0].to, 0x582b2b1000ULL);
	assert_int_equal(c.first[1].from, 0x582b2b1004ULL);
	assert_int_equal(c.first[1].to, 0x582b2b100cULL);
	assert_int_equal(c.first[3].from, 0x582b2b10ecULL);
	assert_int_equal(c.first[3].to, 0);
	pdata_reader__delete(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipt_decoder_packet_counts),
		cmocka_unit_test(test_ipt_decoder_branches),
		cmocka_unit_test(test_ipt_decoder_fast_packets_as_libipt),
		cmocka_unit_test(test_ipt_decoder_fast_long_cyc_as_libipt),
		cmocka_unit_test(test_ipt_decoder_packets_resync_into_listed),
		cmocka_unit_test(test_ipt_decoder_queue_joins_buffers),
		cmocka_unit_test(test_csd_decoder_juno_listing),
		cmocka_unit_test(test_csd_decoder_juno_all_ids),
		cmocka_unit_test(test_csd_decoder_perf_etm),
	};

	/* Every test here needs the captures: say so once, as a skip run.sh shows. */
	if (find_data()) {
		const char *ci = getenv("CI");

		fprintf(stderr, "shared test data not found at %s%s\n", data_dir,
			ci && !strcmp(ci, "true") ? " (CI clones shared/ beside the repository: failing)" : "");
		return ci && !strcmp(ci, "true") ? 1 : 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
