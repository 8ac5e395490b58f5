// SPDX-License-Identifier: BSD-2-Clause
/*
 * pdata_reader on real perf.data files (../shared/data: perf's Intel PT
 * capture and simpleperf's CoreSight one), on a file of our own
 * pdata_writer, and on truncated and randomly corrupted copies:
 * whatever the bytes, the reader must answer with an error, never crash or
 * read outside its buffer.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "tmpdir.h"

#include "auxtrig/decode/ipt_decoder.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/pdata_reader.h"

#define PT_FILE		"perf/intel_pt-skylake/perf.data.intel_pt-4.14"
#define ETM_FILE	"perf/cs_etm-arm64/perf_etm.data"

static char data_dir[4096];

static void need_data(void)
{
	const char *top = getenv("AUXTRIG_TOP");
	const char *ci = getenv("CI");
	char probe[4200];
	struct stat st;

	snprintf(data_dir, sizeof(data_dir), "%s/../shared/data", top ? top : ".");
	snprintf(probe, sizeof(probe), "%s/README.md", data_dir);
	if (stat(probe, &st) == 0)
		return;
	if (ci && !strcmp(ci, "true"))
		fail_msg("shared test data not found at %s (CI clones shared/ beside the repository)", data_dir);
	print_message("skip: shared test data not found at %s\n", data_dir);
	skip();
}

static void *slurp(const char *rel, size_t *len)
{
	char path[4300];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", data_dir, rel);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

static void *slurp_path(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

struct walk {
	int records;
	int auxtrace;
	__u64 aux_bytes;
	int samples;
	int ret;
};

/* Iterate every record and parse every sample/trailer; what a decoder does. */
static struct walk walk_all(const struct pdata_reader *r)
{
	struct walk w = { 0 };
	struct pdata_event ev;
	__u64 pos = 0;

	while ((w.ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		struct pdata_sample s;

		w.records++;
		if (ev.header->type == PDATA_RECORD_AUXTRACE) {
			w.auxtrace++;
			w.aux_bytes += ev.aux_size;
			/* Touch both ends of the payload: must be inside the buffer. */
			if (ev.aux_size) {
				volatile unsigned char c = ((const unsigned char *)ev.aux)[0];

				c = ((const unsigned char *)ev.aux)[ev.aux_size - 1];
				(void)c;
			}
		}
		if (ev.header->type == PERF_RECORD_SAMPLE && !pdata_reader__parse_sample(r, &ev, &s))
			w.samples++;
		else if (ev.header->type < PERF_RECORD_MAX)
			pdata_reader__parse_sample(r, &ev, &s);
	}
	return w;
}

static void test_pdata_reader_intel_pt_file(void **state)
{
	struct pdata_auxtrace_index_entry *idx;
	const struct pdata_reader_attr *a;
	const struct pdata_file_header *h;
	struct pdata_reader *r;
	struct pdata_event ev;
	struct walk w;
	size_t nr;
	__u64 pos = 0;
	int cycles = 0;

	need_data();
	{
		char path[4300];

		snprintf(path, sizeof(path), "%s/%s", data_dir, PT_FILE);
		r = pdata_reader__open(path);
	}
	assert_non_null(r);
	h = pdata_reader__header(r);
	assert_int_equal(h->size, 104);
	assert_int_equal(h->attr_size, 128);	/* perf 4.14: a 112-byte attr + its ids section */
	assert_int_equal(pdata_reader__nr_attrs(r), 4);
	a = pdata_reader__attr(r, 0);
	assert_int_equal(a->attr.type, 6);	/* intel_pt PMU */
	assert_int_equal(a->attr.config, 0x300e601);
	assert_int_equal(a->nr_ids, 4);
	assert_int_equal(a->ids[0], 124);
	assert_ptr_equal(pdata_reader__attr_by_id(r, 128), pdata_reader__attr(r, 1));
	assert_null(pdata_reader__attr(r, 4));
	assert_string_equal(pdata_reader__feature_string(r, PDATA_HEADER_ARCH), "x86_64");
	assert_string_equal(pdata_reader__feature_string(r, PDATA_HEADER_CPUID), "GenuineIntel,6,78,3");
	assert_true(pdata_reader__has_feature(r, PDATA_HEADER_AUXTRACE));

	assert_int_equal(pdata_reader__auxtrace_index(r, &idx, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(idx[0].file_offset, 0x29c0);
	assert_int_equal(idx[1].file_offset, 0x7788);
	assert_int_equal(idx[0].sz, 48);
	free(idx);

	w = walk_all(r);
	assert_int_equal(w.ret, 0);
	assert_int_equal(w.records, 257);
	assert_int_equal(w.auxtrace, 2);
	assert_int_equal(w.aux_bytes, 12240 + 137728);

	/* The cycles samples: IP|TID|TIME|PERIOD|IDENTIFIER, no CPU. */
	while (pdata_reader__next(r, &pos, &ev) > 0) {
		struct pdata_sample s;

		if (ev.header->type != PERF_RECORD_SAMPLE)
			continue;
		assert_int_equal(pdata_reader__parse_sample(r, &ev, &s), 0);
		if (s.attr == pdata_reader__attr(r, 1)) {
			assert_false(s.present & PERF_SAMPLE_CPU);
			assert_true(s.present & PERF_SAMPLE_TIME);
			if (cycles++ == 0)
				assert_int_equal(s.ip, 0xffffffffb96071f4ULL);
		}
	}
	assert_int_equal(cycles, 15);
	pdata_reader__delete(r);
}

static void test_pdata_reader_simpleperf_file(void **state)
{
	struct pdata_auxtrace_index_entry *idx;
	struct pdata_reader *r;
	struct walk w;
	size_t len, nr;
	void *buf;

	need_data();
	buf = slurp(ETM_FILE, &len);
	r = pdata_reader__new_mem(buf, len, "perf_etm.data");
	assert_non_null(r);
	assert_int_equal(pdata_reader__nr_attrs(r), 1);
	assert_int_equal(pdata_reader__attr(r, 0)->nr_ids, 8);
	assert_string_equal(pdata_reader__feature_string(r, PDATA_HEADER_ARCH), "aarch64");
	assert_null(pdata_reader__feature_string(r, PDATA_HEADER_CPUID));
	/* simpleperf writes the index without perf's leading count. */
	assert_int_equal(pdata_reader__auxtrace_index(r, &idx, &nr), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(idx[0].file_offset, 0x26a8);
	free(idx);
	w = walk_all(r);
	assert_int_equal(w.ret, 0);
	assert_int_equal(w.records, 70);
	assert_int_equal(w.auxtrace, 1);
	assert_int_equal(w.aux_bytes, 384);
	pdata_reader__delete(r);
	free(buf);
}

static void test_pdata_reader_refuses_foreign(void **state)
{
	unsigned char buf[104] = { 0 };
	__u64 magic = __builtin_bswap64(PDATA_MAGIC), size = 16;

	memcpy(buf, &magic, 8);
	errno = 0;
	assert_null(pdata_reader__new_mem(buf, sizeof(buf), "swapped"));
	assert_int_equal(errno, EPROTONOSUPPORT);

	magic = PDATA_MAGIC;
	memcpy(buf, &magic, 8);
	memcpy(buf + 8, &size, 8);
	/* a pipe-mode header over zeroed records: a record of size 0 is corrupt */
	assert_null(pdata_reader__new_mem(buf, sizeof(buf), "pipe"));
	assert_int_equal(errno, EINVAL);

	memcpy(buf, "PERFILE1", 8);
	assert_null(pdata_reader__new_mem(buf, sizeof(buf), "v1"));
	assert_int_equal(errno, EINVAL);

	assert_null(pdata_reader__new_mem(buf, 0, "empty"));
	assert_int_equal(errno, EINVAL);

	assert_null(pdata_reader__open("/nonexistent/perf.data"));
	assert_int_equal(errno, ENOENT);
}

/* Shrink the data section to @len and drop the features, so truncation hits records. */
static void fit_data_section(unsigned char *buf, size_t len)
{
	struct pdata_file_header h;

	memcpy(&h, buf, sizeof(h));
	if (h.data.offset < len)
		h.data.size = len - h.data.offset;
	memset(h.adds_features, 0, sizeof(h.adds_features));
	memcpy(buf, &h, sizeof(h));
}

static void test_pdata_reader_truncated(void **state)
{
	size_t len, truncated_aux = 0, opened = 0;
	unsigned char *orig, *buf;

	need_data();
	orig = slurp(PT_FILE, &len);
	buf = malloc(len);
	assert_non_null(buf);
	log__set_level(-1);	/* thousands of expected errors */
	for (size_t cut = 0; cut < len; cut += cut < 0x3000 ? 1 : 97) {
		struct pdata_reader *r;
		struct walk w;

		/* As is: the header points past the end; must be refused. */
		memcpy(buf, orig, cut);
		r = pdata_reader__new_mem(buf, cut, "cut");
		if (r) {
			/* Only possible once everything the header names is inside. */
			assert_true(cut == len);
			pdata_reader__delete(r);
		} else {
			assert_true(errno == EINVAL || errno == EPROTONOSUPPORT);
		}
		/* With the data section shrunk to fit: the walk stops with -EPROTO or at the end. */
		if (cut < sizeof(struct pdata_file_header))
			continue;
		fit_data_section(buf, cut);
		r = pdata_reader__new_mem(buf, cut, "cut-fitted");
		if (!r)
			continue;
		opened++;
		w = walk_all(r);
		assert_true(w.ret == 0 || w.ret == -EPROTO);
		assert_true(w.aux_bytes <= 12240 + 137728);
		if (w.ret == -EPROTO && w.auxtrace < 2 && cut > 0x29c0 + 48)
			truncated_aux++;
		pdata_reader__delete(r);
	}
	log__set_level(LOG_INFO);
	print_message("%zu truncated files opened, %zu cut inside an AUXTRACE payload\n", opened, truncated_aux);
	assert_true(opened > 1000);
	/* Cuts inside the AUXTRACE payloads are noticed as such. */
	assert_true(truncated_aux > 100);
	free(buf);
	free(orig);
}

static void test_pdata_reader_corrupt(void **state)
{
	size_t len, opened = 0;
	unsigned char *orig, *buf;

	need_data();
	orig = slurp(PT_FILE, &len);
	buf = malloc(len);
	assert_non_null(buf);
	srand(20261122);
	log__set_level(-1);
	for (int round = 0; round < 3000; round++) {
		struct pdata_reader *r;
		int flips = 1 + rand() % 8;

		memcpy(buf, orig, len);
		for (int i = 0; i < flips; i++) {
			/* Half the hits in the header/attrs and first records, where sizes live. */
			size_t at = rand() % 2 ? (size_t)rand() % 0x3000 : (size_t)rand() % len;

			buf[at] = rand() & 0xff;
		}
		r = pdata_reader__new_mem(buf, len, "corrupt");
		if (!r)
			continue;
		opened++;
		{
			struct pdata_auxtrace_index_entry *idx;
			struct walk w;
			size_t nr;

			w = walk_all(r);
			assert_true(w.ret == 0 || w.ret == -EPROTO);
			if (!pdata_reader__auxtrace_index(r, &idx, &nr))
				free(idx);
			pdata_reader__feature_string(r, PDATA_HEADER_CPUID);
			pdata_reader__feature_string(r, PDATA_HEADER_ARCH);
		}
		pdata_reader__delete(r);
	}
	log__set_level(LOG_INFO);
	print_message("%zu corrupted files opened\n", opened);
	assert_true(opened > 100);
	free(buf);
	free(orig);
}

/*
 * A hand-made Intel PT stream: PSB+, TIP.PGE A, TNT (needs code: sync lost),
 * TIP B (full ip: sync again), FUP B (async, at the current ip), TIP C.
 */
static size_t make_pt_stream(unsigned char *b)
{
	static const __u64 ips[] = { 0xffffffff81000000ULL, 0x7f0000001000ULL, 0x7f0000001000ULL,
				     0xffffffff81000100ULL };
	static const unsigned char ops[] = { 0xd1 /* TIP.PGE, ipc 6 */, 0xcd /* TIP */, 0xdd /* FUP */, 0xcd };
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		b[n++] = 0x02;
		b[n++] = 0x82;
	}
	b[n++] = 0x02;
	b[n++] = 0x23;		/* PSBEND */
	for (int i = 0; i < 4; i++) {
		b[n++] = ops[i];
		memcpy(b + n, &ips[i], 8);
		n += 8;
		if (i == 0)
			b[n++] = 0x06;	/* TNT-8: one taken branch */
	}
	while (n % 8)
		b[n++] = 0;	/* PAD */
	return n;
}

#ifndef AUXTRIG_NO_LIBIPT
struct rt_branches {
	struct ipt_branch v[8];
	int nr;
};

static int rt_branch(const struct ipt_branch *br, void *ctx)
{
	struct rt_branches *b = ctx;

	if (b->nr < 8)
		b->v[b->nr] = *br;
	b->nr++;
	return 0;
}
#endif

/* pdata_reader__event_names() callback: "id=name " appended to a string. */
static int collect_name(void *ctx, __u64 id, const char *name)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%llu=%s ", (unsigned long long)id, name);
	return 0;
}

static void test_pdata_reader_reads_pdata_writer(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct perf_event_attr pt = { .type = 8, .size = sizeof(pt), .sample_period = 1,
				      .sample_type = PDATA_SAMPLE_TYPE, .sample_id_all = 1 };
	struct perf_event_attr dummy = pt;
	__u64 pt_ids[] = { 501, 502 }, dummy_ids[] = { 503 };
	struct {
		struct pdata_record_auxtrace_info h;
		__u64 priv[18];
	} info = { .h = { .header = { .type = PDATA_RECORD_AUXTRACE_INFO, .size = sizeof(info) },
			  .type = PDATA_AUXTRACE_INTEL_PT } };
	struct pdata_record_auxtrace rec = { .reference = 0x1234, .idx = 2, .tid = 77, .cpu = 2 };
	struct pdata_auxtrace_index_entry *idx;
	const struct pdata_record_auxtrace *at = NULL;
#ifndef AUXTRIG_NO_LIBIPT
	struct rt_branches br = { 0 };
#endif
	unsigned char stream[128];
	char names[256];
	const void *aux = NULL;
	struct pdata_writer *w;
	struct pdata_reader *r;
	struct pdata_event ev;
	size_t len, nr;
	__u64 pos = 0;
	int ret;

	assert_non_null(tmpdir__template(dir, sizeof(dir), "auxtrig-pdata-reader"));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.config = PERF_COUNT_SW_DUMMY;
	info.priv[0] = 8;
	len = make_pt_stream(stream);

	w = pdata_writer__open(path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &pt, "intel_pt//", pt_ids, 2), 0);
	assert_int_equal(pdata_writer__add_attr(w, &dummy, "dummy:u", dummy_ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);
	/* Split in two segments, as from a wrapped AUX ring. */
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, stream, 20, stream + 20, len - 20), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);

	r = pdata_reader__open(path);
	assert_non_null(r);
	assert_int_equal(pdata_reader__nr_attrs(r), 2);
	assert_int_equal(pdata_reader__attr(r, 0)->attr.type, 8);
	assert_int_equal(pdata_reader__attr(r, 0)->nr_ids, 2);
	assert_int_equal(pdata_reader__attr(r, 0)->ids[1], 502);
	assert_ptr_equal(pdata_reader__attr_by_id(r, 503), pdata_reader__attr(r, 1));
	names[0] = '\0';
	assert_int_equal(pdata_reader__event_names(r, collect_name, names), 0);
	assert_string_equal(names, "501=intel_pt// 502=intel_pt// 503=dummy:u ");
	assert_non_null(pdata_reader__feature_string(r, PDATA_HEADER_ARCH));
	assert_non_null(pdata_reader__feature_string(r, PDATA_HEADER_CPUID));
	assert_int_equal(pdata_reader__auxtrace_index(r, &idx, &nr), 0);
	assert_int_equal(nr, 1);
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		if (ev.header->type != PDATA_RECORD_AUXTRACE)
			continue;
		at = (const void *)ev.header;
		aux = ev.aux;
		assert_int_equal(ev.file_offset, idx[0].file_offset);
		assert_int_equal(ev.aux_size, len);
	}
	free(idx);
	assert_int_equal(ret, 0);
	assert_non_null(at);
	assert_int_equal(at->cpu, 2);
	assert_int_equal(at->reference, 0x1234);
	assert_memory_equal(aux, stream, len);

#ifndef AUXTRIG_NO_LIBIPT
	/* And the decoder finds the three branches the stream states (a build with libipt). */
	assert_int_equal(ipt_decoder__branches(aux, at->size, NULL, rt_branch, &br), 0);
	assert_int_equal(br.nr, 3);
	assert_int_equal(br.v[0].from, 0);
	assert_int_equal(br.v[0].to, 0xffffffff81000000ULL);
	assert_int_equal(br.v[1].from, 0);
	assert_int_equal(br.v[1].to, 0x7f0000001000ULL);
	assert_int_equal(br.v[2].from, 0x7f0000001000ULL);
	assert_int_equal(br.v[2].to, 0xffffffff81000100ULL);
#endif
	pdata_reader__delete(r);
	unlink(path);
	rmdir(dir);
}

/*
 * An AUXTRACE record whose payload size is not a multiple of 8 (perf pads it)
 * would put the next record at a misaligned offset: UBSan's "misaligned
 * address" in pdata_reader__next(). The payload here holds what looks like
 * records at the misaligned offsets, so a reader that follows the size hands
 * them out; ours refuses the AUXTRACE record and hands out nothing misaligned.
 */
static void test_pdata_reader_auxtrace_size_not_multiple_of_8(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct perf_event_attr pt = { .type = 8, .size = sizeof(pt), .sample_period = 1,
				      .sample_type = PDATA_SAMPLE_TYPE, .sample_id_all = 1 };
	__u64 ids[] = { 501 };
	struct {
		struct pdata_record_auxtrace_info h;
		__u64 priv[18];
	} info = { .h = { .header = { .type = PDATA_RECORD_AUXTRACE_INFO, .size = sizeof(info) },
			  .type = PDATA_AUXTRACE_INTEL_PT } };
	struct pdata_record_auxtrace rec = { .idx = 0, .tid = 77, .cpu = 0 };
	struct perf_event_header round = { .type = PDATA_RECORD_FINISHED_ROUND, .size = 8 };
	unsigned char payload[32] = { 0 };
	struct pdata_writer *w;
	struct pdata_reader *r;
	struct pdata_event ev;
	unsigned char *buf;
	size_t len;
	__u64 pos = 0, bad = 9, at = 0;
	int ret, before = 0;

	assert_non_null(tmpdir__template(dir, sizeof(dir), "auxtrig-pdata-reader"));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	memcpy(payload + 9, &round, sizeof(round));	/* "records" at payload + 9 and + 17 */
	memcpy(payload + 17, &round, sizeof(round));
	info.priv[0] = 8;
	w = pdata_writer__open(path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &pt, "intel_pt//", ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, payload, sizeof(payload), NULL, 0), 0);
	assert_int_equal(pdata_writer__write(w, &round, sizeof(round)), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);
	buf = slurp_path(path, &len);
	unlink(path);
	rmdir(dir);

	/* Find the AUXTRACE record and make its payload 9 bytes. */
	r = pdata_reader__new_mem(buf, len, "aligned");
	assert_non_null(r);
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0)
		if (ev.header->type == PDATA_RECORD_AUXTRACE)
			at = ev.file_offset;
	assert_int_equal(ret, 0);
	assert_true(at != 0);
	pdata_reader__delete(r);
	memcpy(buf + at + offsetof(struct pdata_record_auxtrace, size), &bad, sizeof(bad));

	r = pdata_reader__new_mem(buf, len, "misaligned");
	assert_non_null(r);
	pos = 0;
	log__set_level(-1);
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		if ((uintptr_t)ev.header % 8 || ev.file_offset % 8)
			fail_msg("record of type %u handed out at misaligned file offset %#llx", ev.header->type,
				 (unsigned long long)ev.file_offset);
		if (ev.file_offset < at)
			before++;
	}
	log__set_level(LOG_INFO);
	/* The records before it are read; the AUXTRACE record ends the walk as corrupt. */
	assert_int_equal(ret, -EPROTO);
	assert_true(before > 0);
	assert_true(pos == at - pdata_reader__header(r)->data.offset);
	pdata_reader__delete(r);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pdata_reader_intel_pt_file),
		cmocka_unit_test(test_pdata_reader_simpleperf_file),
		cmocka_unit_test(test_pdata_reader_refuses_foreign),
		cmocka_unit_test(test_pdata_reader_reads_pdata_writer),
		cmocka_unit_test(test_pdata_reader_truncated),
		cmocka_unit_test(test_pdata_reader_corrupt),
		cmocka_unit_test(test_pdata_reader_auxtrace_size_not_multiple_of_8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
