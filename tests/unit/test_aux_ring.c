// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AUX ring reader against the model of the kernel's side of the ring
 * (aux_model.c), for each PMU's rules. The reader maps the model's memfd
 * exactly as it maps a perf event (aux_ring__mmap()), reads the model's
 * PERF_RECORD_AUX records through the data ring reader, and every byte it
 * hands out is compared with what the "hardware" stored: a pattern with a
 * period of 251 bytes, so an offset wrong by any multiple of a buffer size
 * shows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/record/aux_ring.h"
#include "auxtrig/record/data_ring.h"
#include "aux_model.h"

struct pmu_case {
	const char *name;
	enum aux_model_pmu model;
	const struct aux_pmu_ops *ops;
};

static struct pmu_case pmus[] = {
	{ "intel_pt", AUX_MODEL_INTEL_PT, &aux_pmu_intel_pt },
	{ "cs_etm", AUX_MODEL_CS_ETM, &aux_pmu_cs_etm },
	{ "arm_spe", AUX_MODEL_ARM_SPE, &aux_pmu_arm_spe },
};

#define MAX_STREAM (4u << 20)
#define MAX_RECS 512

struct rec {
	__u32 type;
	__u64 offset, size, flags;
	__u32 pid, tid, cpu;
	__u64 time, id;
};

struct rig {
	const struct pmu_case *pmu;
	struct aux_model m;
	struct aux_ring r;
	struct data_ring dr;
	size_t page;
	unsigned char *stored;	/* every byte the model stored, in the order stored */
	uint64_t nstored;
	uint64_t produced;	/* bytes the hardware produced, stored or not */
	int cpu;
	struct rec recs[MAX_RECS];
	size_t nrecs;
	struct pdata_record_auxtrace bufs[MAX_RECS];
	uint64_t buflen[MAX_RECS];	/* unpadded: bufs[].size includes padding */
	size_t nbufs;
};

static unsigned char pat(uint64_t i)
{
	return 1 + i % 251; /* never 0: the wrap scans look for non-zero bytes */
}

static int model_ctl(struct aux_ring *r, bool enable, void *arg)
{
	if (enable)
		aux_model__enable(arg);
	else
		aux_model__disable(arg);
	return 0;
}

static void rig_init_cpu(struct rig *g, const struct pmu_case *pmu, bool overwrite, size_t aux_pages,
			 __u32 watermark, size_t snapshot_size, int cpu)
{
	struct aux_model_config mc = {
		.pmu = pmu->model, .overwrite = overwrite, .data_pages = 4, .aux_pages = aux_pages,
		.aux_watermark = watermark, .pid = 4242, .tid = 4243, .cpu = cpu, .id = 77,
	};
	struct aux_ring_config rc = {
		.ops = pmu->ops, .overwrite = overwrite, .snapshot_size = snapshot_size,
		.idx = cpu == 3 ? 2 : cpu, .cpu = cpu, .tid = 4242, .per_cpu = true, .enable = model_ctl,
	};

	memset(g, 0, sizeof(*g));
	g->pmu = pmu;
	g->cpu = cpu;
	g->page = sysconf(_SC_PAGESIZE);
	assert_int_equal(aux_model__init(&g->m, &mc), 0);
	rc.enable_arg = &g->m;
	assert_int_equal(aux_ring__mmap(&g->r, aux_model__fd(&g->m), aux_model__user_page(&g->m), aux_pages, &rc), 0);
	assert_int_equal(aux_model__check_aux_mmap(&g->m), 0);
	g->dr.base = aux_model__user_page(&g->m);
	g->dr.size = g->m.data_size;
	g->dr.bounce = malloc(65536);
	assert_non_null(g->dr.bounce);
	g->stored = calloc(1, MAX_STREAM);
	assert_non_null(g->stored);
	aux_model__enable(&g->m);
}

/* CPU 3, mmap index 2. */
static void rig_init(struct rig *g, const struct pmu_case *pmu, bool overwrite, size_t aux_pages,
		     __u32 watermark, size_t snapshot_size)
{
	rig_init_cpu(g, pmu, overwrite, aux_pages, watermark, snapshot_size, 3);
}

static void rig_exit(struct rig *g)
{
	aux_ring__munmap(&g->r);
	aux_model__exit(&g->m);
	free(g->dr.bounce);
	free(g->stored);
}

static size_t bufsize(const struct rig *g)
{
	return g->r.size;
}

/* The hardware produces @len more bytes of the pattern. Return: bytes stored. */
static size_t hw(struct rig *g, size_t len)
{
	unsigned char *chunk = malloc(len ? len : 1);
	size_t n;

	assert_non_null(chunk);
	for (size_t i = 0; i < len; i++)
		chunk[i] = pat(g->produced + i);
	n = aux_model__hw_write(&g->m, chunk, len);
	assert_true(g->nstored + n <= MAX_STREAM);
	memcpy(g->stored + g->nstored, chunk, n);
	g->nstored += n;
	g->produced += len;
	free(chunk);
	return n;
}

/* Drain the data ring: keep the records, feed PERF_RECORD_AUX to the reader. */
static void drain(struct rig *g)
{
	const struct perf_event_header *h;
	const unsigned char *p;
	struct rec *rc;
	size_t tr;

	data_ring__read_init(&g->dr);
	while ((h = data_ring__read_event(&g->dr))) {
		p = (const unsigned char *)h;
		assert_true(g->nrecs < MAX_RECS);
		rc = &g->recs[g->nrecs++];
		memset(rc, 0, sizeof(*rc));
		rc->type = h->type;
		if (h->type == PERF_RECORD_AUX) {
			assert_int_equal(h->size, 8 + 24 + AUX_MODEL_SAMPLE_ID_SIZE);
			memcpy(&rc->offset, p + 8, 8);
			memcpy(&rc->size, p + 16, 8);
			memcpy(&rc->flags, p + 24, 8);
			tr = 32;
			aux_ring__note_aux_record(&g->r, rc->flags);
		} else {
			assert_int_equal(h->type, PERF_RECORD_ITRACE_START);
			assert_int_equal(h->size, 8 + 8 + AUX_MODEL_SAMPLE_ID_SIZE);
			memcpy(&rc->pid, p + 8, 4);
			memcpy(&rc->tid, p + 12, 4);
			tr = 16;
		}
		/* sample_id: pid, tid, time, cpu, res, id */
		assert_memory_equal(p + tr, &(__u32){ 4242 }, 4);
		assert_memory_equal(p + tr + 4, &(__u32){ 4243 }, 4);
		memcpy(&rc->time, p + tr + 8, 8);
		memcpy(&rc->cpu, p + tr + 16, 4);
		memcpy(&rc->id, p + tr + 24, 8);
		assert_int_equal(rc->cpu, g->cpu);
		assert_int_equal(rc->id, 77);
	}
	data_ring__consume(&g->dr);
}

/* The segments hold stored[start, start + size); bytes before the stream are 0. */
static void assert_segments_of(const struct rig *g, const struct aux_ring *r, const struct aux_ring_read *rd,
			       int64_t start)
{
	assert_int_equal(rd->len1 + rd->len2, rd->size);
	assert_int_equal(rd->padded, (rd->size + 7) & ~7ull);
	assert_true(start + (int64_t)rd->size <= (int64_t)g->nstored);
	for (uint64_t i = 0; i < rd->size; i++) {
		const unsigned char *got = i < rd->len1 ? (const unsigned char *)rd->data1 + i
							: (const unsigned char *)rd->data2 + (i - rd->len1);
		int64_t at = start + (int64_t)i;
		unsigned char want = at < 0 ? 0 : g->stored[at];

		if (*got != want)
			fail_msg("%s: byte %llu of %llu (stream %lld): got %u, want %u", g->pmu->name,
				 (unsigned long long)i, (unsigned long long)rd->size, (long long)at, *got, want);
	}
	/* Segments point into the mapping: no copy. */
	if (rd->len1)
		assert_true((const unsigned char *)rd->data1 >= r->base &&
			    (const unsigned char *)rd->data1 + rd->len1 <= r->base + r->size);
	if (rd->len2)
		assert_ptr_equal(rd->data2, r->base);
}

static void assert_segments(const struct rig *g, const struct aux_ring_read *rd, int64_t start)
{
	assert_segments_of(g, &g->r, rd, start);
}

static void keep_auxtrace(struct rig *g, const struct aux_ring_read *rd)
{
	assert_true(g->nbufs < MAX_RECS);
	g->buflen[g->nbufs] = rd->size;
	aux_ring__auxtrace(&g->r, rd, 0x1234, &g->bufs[g->nbufs++]);
}

/*
 * A sched-out and sched-in (or a PMI with nothing new): the driver ends its
 * handle and begins the next, which is when the kernel reads aux_tail again
 * (perf_aux_output_begin()). Space the reader freed shows only then.
 */
static void sched(struct rig *g)
{
	aux_model__output_end(&g->m, 0);
}

/* One full-trace read, checked byte for byte, then consume (and re-enable if told). */
static int64_t full_read(struct rig *g)
{
	struct aux_ring_read rd;
	int64_t n;

	drain(g);
	n = aux_ring__read(&g->r, &rd);
	assert_true(n >= 0);
	if (n) {
		/* Normal mode: aux_head space is the stream of stored bytes. */
		assert_segments(g, &rd, (int64_t)rd.offset);
		keep_auxtrace(g, &rd);
	}
	if (aux_ring__consume(&g->r) == 1)
		assert_int_equal(aux_ring__enable(&g->r), 0);
	assert_int_equal(aux_model__user_page(&g->m)->aux_tail, aux_model__user_page(&g->m)->aux_head);
	return n;
}

/*
 * perf 6.1's CoreSight rule (§2.2): each PERF_RECORD_AUX range lies inside
 * exactly one AUXTRACE buffer of the same cpu. Normal mode: [offset,
 * offset + size); overwrite: [offset - min(size, auxtrace.size), offset).
 * Checked against the unpadded length: the padding holds no trace (real
 * CoreSight sizes are multiples of 16 frames, so perf sees no padding).
 */
static void assert_records_covered_n(const struct rig *const *gs, size_t n)
{
	size_t checked = 0;

	for (size_t k = 0; k < n; k++) {
		const struct rig *g = gs[k];

		for (size_t i = 0; i < g->nrecs; i++) {
			const struct rec *rc = &g->recs[i];
			int found = 0;

			if (rc->type != PERF_RECORD_AUX || !rc->size)
				continue;
			for (size_t l = 0; l < n; l++) {
				for (size_t j = 0; j < gs[l]->nbufs; j++) {
					const struct pdata_record_auxtrace *b = &gs[l]->bufs[j];
					uint64_t start = rc->offset, end = rc->offset + rc->size, len = gs[l]->buflen[j];

					if (b->cpu != rc->cpu)
						continue;
					if (rc->flags & PERF_AUX_FLAG_OVERWRITE) {
						end = rc->offset;
						start = end - (rc->size < len ? rc->size : len);
					}
					if (start >= b->offset && end <= b->offset + len)
						found++;
				}
			}
			if (found != 1)
				fail_msg("%s: PERF_RECORD_AUX cpu %u [%llu +%llu] flags %#llx is in %d AUXTRACE buffers",
					 g->pmu->name, rc->cpu, (unsigned long long)rc->offset,
					 (unsigned long long)rc->size, (unsigned long long)rc->flags, found);
			checked++;
		}
	}
	assert_true(checked > 0);
}

static void assert_records_covered(const struct rig *g)
{
	assert_records_covered_n(&g, 1);
}

static size_t count_recs(const struct rig *g, __u32 type, __u64 flag)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nrecs; i++)
		if (g->recs[i].type == type && (!flag || (g->recs[i].flags & flag)))
			n++;
	return n;
}

/* ---- mapping ---- */

static void test_aux_ring_mmap_places_aux_after_the_data_pages(void **state)
{
	const struct pmu_case *pmu = *state;
	struct perf_event_mmap_page *pc;
	struct rig g;

	for (int ow = 0; ow < 2; ow++) {
		rig_init(&g, pmu, ow, 4, 0, 0);
		pc = aux_model__user_page(&g.m);
		assert_int_equal(pc->aux_offset, g.page * (1 + 4));
		assert_int_equal(pc->aux_size, 4 * g.page);
		assert_int_equal(g.r.size, 4 * g.page);
		/* The reader's mapping is a second view of the model's pages. */
		hw(&g, 100);
		assert_memory_equal(g.r.base, g.stored, 100);
		rig_exit(&g);
	}
}

static void test_aux_ring_mmap_rejects_non_power_of_2(void **state)
{
	const struct pmu_case *pmu = *state;
	struct aux_ring_config rc = { .ops = pmu->ops };
	struct aux_ring r;
	struct rig g;

	rig_init(&g, pmu, false, 4, 0, 0);
	assert_int_equal(aux_ring__mmap(&r, aux_model__fd(&g.m), aux_model__user_page(&g.m), 3, &rc), -EINVAL);
	assert_int_equal(aux_ring__mmap(&r, aux_model__fd(&g.m), aux_model__user_page(&g.m), 0, &rc), -EINVAL);
	rig_exit(&g);
}

/* The same reader on memory handed to it: the model's own view of the pages. */
static void test_aux_ring_init_mapped_reads_given_memory(void **state)
{
	const struct pmu_case *pmu = *state;
	struct aux_ring_config rc = { .ops = pmu->ops, .cpu = 3 };
	struct aux_ring_read rd;
	struct aux_ring r;
	struct rig g;

	rig_init(&g, pmu, false, 4, 0, 0);
	assert_int_equal(aux_ring__init_mapped(&r, -1, aux_model__user_page(&g.m), g.m.aux, 3 * g.page, &rc),
			 -EINVAL);
	assert_int_equal(aux_ring__init_mapped(&r, -1, aux_model__user_page(&g.m), g.m.aux, g.m.aux_size, &rc), 0);
	hw(&g, 5000);
	sched(&g);
	assert_int_equal(aux_ring__read(&r, &rd), 5000);
	assert_ptr_equal(rd.data1, g.m.aux);
	assert_segments_of(&g, &r, &rd, 0);
	assert_int_equal(aux_ring__consume(&r), 0);
	assert_int_equal(aux_model__user_page(&g.m)->aux_tail, 5000);
	aux_ring__munmap(&r); /* not ours to unmap: the model's pages stay */
	assert_int_equal(g.m.aux[0], pat(0));
	rig_exit(&g);
}

/* ---- full trace ---- */

static void test_aux_ring_full_trace_not_wrapped(void **state)
{
	struct rig g;

	rig_init(&g, *state, false, 4, 0, 0);
	hw(&g, 1001);
	aux_model__output_end(&g.m, 0);
	assert_int_equal(full_read(&g), 1001);
	assert_int_equal(g.bufs[0].offset, 0);
	assert_int_equal(g.bufs[0].size, 1008); /* padded to 8 */
	assert_int_equal(aux_ring__stats(&g.r)->wraps, 0);
	/* Nothing new: nothing handed out. */
	assert_int_equal(full_read(&g), 0);
	assert_records_covered(&g);
	rig_exit(&g);
}

static void test_aux_ring_full_trace_wrapped_gives_two_segments(void **state)
{
	struct aux_ring_read rd;
	struct rig g;
	size_t sz;

	rig_init(&g, *state, false, 4, 0, 0);
	sz = bufsize(&g);
	hw(&g, sz - 1000);
	aux_model__output_end(&g.m, 0);
	assert_int_equal(full_read(&g), sz - 1000);
	sched(&g);
	hw(&g, 3000);
	aux_model__output_end(&g.m, 0);
	drain(&g);
	assert_int_equal(aux_ring__read(&g.r, &rd), 3000);
	assert_int_equal(rd.offset, sz - 1000);
	assert_int_equal(rd.len1, 1000);
	assert_int_equal(rd.len2, 2000);
	assert_ptr_equal(rd.data1, g.r.base + sz - 1000);
	assert_segments(&g, &rd, sz - 1000);
	keep_auxtrace(&g, &rd);
	assert_int_equal(aux_ring__consume(&g.r), 0);
	assert_int_equal(aux_ring__stats(&g.r)->wraps, 1);
	assert_int_equal(aux_ring__stats(&g.r)->bytes, sz + 2000);
	assert_records_covered(&g);
	rig_exit(&g);
}

static void test_aux_ring_full_trace_exactly_full(void **state)
{
	struct rig g;
	size_t sz;

	rig_init(&g, *state, false, 4, 0, 0);
	sz = bufsize(&g);
	/* CIRC_SPACE: the kernel leaves one byte, so size - 1 is "full". */
	assert_int_equal(hw(&g, sz - 1), sz - 1);
	/*
	 * Nothing lost yet, but the next perf_aux_output_begin() finds no
	 * space: the kernel disables the event and wakes the reader, without
	 * a TRUNCATED record.
	 */
	sched(&g);
	assert_false(aux_model__enabled(&g.m));
	assert_true(aux_model__pollin(&g.m));
	assert_int_equal(full_read(&g), sz - 1);
	assert_int_equal(count_recs(&g, PERF_RECORD_AUX, PERF_AUX_FLAG_TRUNCATED), 0);
	assert_int_equal(aux_ring__stats(&g.r)->truncated, 0);
	/* consume() could not know (no TRUNCATED); perf enables after every read anyway. */
	assert_false(aux_model__enabled(&g.m));
	assert_int_equal(aux_ring__enable(&g.r), 0);
	assert_true(aux_model__enabled(&g.m));
	/* Full again from an odd head: the range wraps. */
	assert_int_equal(hw(&g, sz - 1), sz - 1);
	sched(&g);
	assert_int_equal(full_read(&g), sz - 1);
	assert_int_equal(g.bufs[1].offset, sz - 1);
	assert_int_equal(aux_ring__stats(&g.r)->wraps, 1);
	assert_int_equal(g.m.stats.dropped, 0);
	assert_records_covered(&g);
	rig_exit(&g);
}

static void test_aux_ring_full_trace_truncation_disables_until_consumed(void **state)
{
	const struct pmu_case *pmu = *state;
	struct rig g;
	size_t sz, got;

	rig_init(&g, pmu, false, 4, 0, 0);
	sz = bufsize(&g);
	hw(&g, 1000);
	aux_model__output_end(&g.m, 0);
	assert_int_equal(full_read(&g), 1000);
	sched(&g);
	/* The reader falls behind: 2 * size produced, size - 1 fit. */
	got = hw(&g, 2 * sz);
	assert_int_equal(got, sz - 1);
	if (pmu->model == AUX_MODEL_CS_ETM) {
		/* The ETR reports the loss when it is stopped. */
		assert_true(aux_model__enabled(&g.m));
		aux_model__output_end(&g.m, 0);
	}
	assert_false(aux_model__enabled(&g.m));
	/* Disabled: the hardware's next bytes go nowhere. */
	assert_int_equal(hw(&g, 500), 0);
	drain(&g);
	assert_int_equal(count_recs(&g, PERF_RECORD_AUX, PERF_AUX_FLAG_TRUNCATED), 1);
	assert_int_equal(aux_ring__stats(&g.r)->truncated, 1);
	/* Data before the cut intact; consume asks for the re-enable. */
	assert_int_equal(full_read(&g), sz - 1);
	assert_int_equal(aux_ring__stats(&g.r)->enables, 1);
	assert_true(aux_model__enabled(&g.m));
	/* After the re-enable new data arrives where aux_head left off. */
	assert_int_equal(hw(&g, 700), 700);
	aux_model__output_end(&g.m, 0);
	assert_int_equal(full_read(&g), 700);
	assert_int_equal(g.bufs[g.nbufs - 1].offset, 1000 + sz - 1);
	assert_int_equal(aux_ring__stats(&g.r)->enables, 1);
	assert_int_equal(g.m.stats.dropped, 2 * sz - (sz - 1) + 500);
	assert_records_covered(&g);
	rig_exit(&g);
}

/*
 * TRUNCATED disables the event even when the reader has freed space since
 * the handle began: the loss must be seen and the event re-enabled.
 */
static void test_aux_ring_full_trace_truncated_disables_despite_free_space(void **state)
{
	const struct pmu_case *pmu = *state;
	struct rig g;
	size_t sz;

	rig_init(&g, pmu, false, 4, 16384, 0); /* no wakeup PMI before the cut */
	sz = bufsize(&g);
	hw(&g, 1000);
	sched(&g); /* the next handle has sz - 1 - 1000 bytes */
	assert_int_equal(full_read(&g), 1000);
	assert_false(aux_model__pollin(&g.m));
	assert_int_equal(hw(&g, 2 * sz), sz - 1 - 1000);
	if (pmu->model == AUX_MODEL_CS_ETM)
		sched(&g);
	assert_true(aux_model__pollin(&g.m));
	assert_false(aux_model__enabled(&g.m));
	assert_int_equal(full_read(&g), sz - 1 - 1000);
	assert_int_equal(aux_ring__stats(&g.r)->truncated, 1);
	assert_true(aux_model__enabled(&g.m));
	assert_int_equal(hw(&g, 10), 10);
	sched(&g);
	assert_int_equal(full_read(&g), 10);
	assert_int_equal(g.bufs[g.nbufs - 1].offset, sz - 1);
	assert_records_covered(&g);
	rig_exit(&g);
}

static void test_aux_ring_watermark_wakeups(void **state)
{
	const struct pmu_case *pmu = *state;
	int wakeups = 0, want;
	struct rig g;

	/* 16 KiB, watermark 4 KiB; 40 writes of 300 bytes = 12000 bytes. */
	rig_init(&g, pmu, false, 4, 4096, 0);
	for (int i = 0; i < 40; i++) {
		hw(&g, 300);
		if (aux_model__pollin(&g.m)) {
			wakeups++;
			assert_true(full_read(&g) > 0);
		}
	}
	/*
	 * Intel PT and SPE interrupt at handle->wakeup: one wakeup per 4 KiB
	 * boundary crossed (4096, 8192). CoreSight publishes only when stopped.
	 */
	want = pmu->model == AUX_MODEL_CS_ETM ? 0 : 2;
	assert_int_equal(wakeups, want);
	aux_model__output_end(&g.m, 0);
	assert_int_equal(aux_model__pollin(&g.m), pmu->model == AUX_MODEL_CS_ETM); /* 12000 crosses 8192 */
	full_read(&g);
	/* Everything, in order, exactly once. */
	assert_int_equal(aux_ring__stats(&g.r)->bytes, 12000);
	assert_records_covered(&g);
	rig_exit(&g);
}

static void test_aux_ring_default_watermark_is_half_the_buffer(void **state)
{
	struct rig g;
	size_t sz;

	rig_init(&g, *state, false, 4, 0, 0);
	sz = bufsize(&g);
	hw(&g, sz / 2 - 1);
	aux_model__output_end(&g.m, 0);
	assert_false(aux_model__pollin(&g.m));
	hw(&g, 1);
	aux_model__output_end(&g.m, 0);
	assert_true(aux_model__pollin(&g.m));
	assert_int_equal(full_read(&g), sz / 2);
	rig_exit(&g);
}

static void test_aux_ring_partial_and_collision_are_counted(void **state)
{
	const struct aux_ring_stats *st;
	struct rig g;

	rig_init(&g, *state, false, 4, 0, 0);
	hw(&g, 100);
	aux_model__output_end(&g.m, PERF_AUX_FLAG_PARTIAL);
	hw(&g, 100);
	aux_model__output_end(&g.m, PERF_AUX_FLAG_COLLISION);
	/* A flag with no data still makes a record. */
	aux_model__output_end(&g.m, PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION);
	/* No data, no flag: no record. */
	aux_model__output_end(&g.m, 0);
	assert_int_equal(full_read(&g), 200);
	st = aux_ring__stats(&g.r);
	assert_int_equal(st->aux_records, 3);
	assert_int_equal(st->partial, 2);
	assert_int_equal(st->collision, 2);
	assert_int_equal(st->truncated, 0);
	assert_true(aux_model__enabled(&g.m));
	assert_int_equal(g.recs[1].offset, 0);
	assert_int_equal(g.recs[2].offset, 100);
	assert_int_equal(g.recs[3].offset, 200);
	assert_int_equal(g.recs[3].size, 0);
	assert_records_covered(&g);
	rig_exit(&g);
}

static void test_aux_ring_itrace_start_once(void **state)
{
	struct rig g;

	rig_init(&g, *state, false, 4, 0, 0);
	aux_model__disable(&g.m);
	aux_model__enable(&g.m);
	drain(&g);
	assert_int_equal(count_recs(&g, PERF_RECORD_ITRACE_START, 0), 1);
	assert_int_equal(g.recs[0].type, PERF_RECORD_ITRACE_START);
	assert_int_equal(g.recs[0].pid, 4242);
	assert_int_equal(g.recs[0].tid, 4243);
	rig_exit(&g);
}

/*
 * Many reads with irregular writes, PMIs and sched-outs: the AUXTRACE
 * buffers tile aux_head space with no gap or overlap, and every
 * PERF_RECORD_AUX falls in exactly one of them.
 */
static void test_aux_ring_full_trace_auxtrace_offsets_tile_aux_head_space(void **state)
{
	static const size_t writes[] = { 1, 7, 4095, 4096, 4097, 333, 8191, 12000, 5, 2048, 6000, 16383 };
	uint64_t next = 0;
	struct rig g;

	rig_init(&g, *state, false, 4, 2048, 0);
	for (size_t i = 0; i < 3 * sizeof(writes) / sizeof(writes[0]); i++) {
		hw(&g, writes[i % 12]);
		if (i % 3 == 0)
			aux_model__output_end(&g.m, i % 4 ? 0 : PERF_AUX_FLAG_PARTIAL);
		if (i % 2 == 0 || !aux_model__enabled(&g.m)) {
			aux_model__output_end(&g.m, 0);
			full_read(&g);
		}
	}
	aux_model__disable(&g.m);
	full_read(&g);
	for (size_t j = 0; j < g.nbufs; j++) {
		assert_int_equal(g.bufs[j].offset, next);
		assert_int_equal(g.bufs[j].header.type, 71);
		assert_int_equal(g.bufs[j].header.size, 48);
		assert_int_equal(g.bufs[j].size, (g.buflen[j] + 7) & ~7ull);
		assert_int_equal(g.bufs[j].idx, 2);
		assert_int_equal(g.bufs[j].cpu, 3);
		assert_int_equal(g.bufs[j].tid, 4242);
		next += g.buflen[j];
	}
	assert_int_equal(next, g.nstored);
	assert_int_equal(aux_ring__stats(&g.r)->bytes, g.nstored);
	assert_records_covered(&g);
	rig_exit(&g);
}

/*
 * Two CPUs' rings use the same aux_head space (both start at 0): only the
 * AUXTRACE cpu tells perf which buffer a PERF_RECORD_AUX belongs to.
 */
static void test_aux_ring_full_trace_two_cpus_match_by_cpu(void **state)
{
	const struct pmu_case *pmu = *state;
	struct rig *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	const struct rig *both[2];

	assert_non_null(a);
	assert_non_null(b);
	rig_init_cpu(a, pmu, false, 4, 0, 0, 0);
	rig_init_cpu(b, pmu, false, 4, 0, 0, 1);
	hw(a, 3000);
	hw(b, 2000);
	sched(a);
	sched(b);
	assert_int_equal(full_read(a), 3000);
	assert_int_equal(full_read(b), 2000);
	assert_int_equal(a->bufs[0].cpu, 0);
	assert_int_equal(b->bufs[0].cpu, 1);
	assert_int_equal(a->bufs[0].idx, 0);
	assert_int_equal(b->bufs[0].idx, 1);
	both[0] = a;
	both[1] = b;
	assert_records_covered_n(both, 2);
	rig_exit(a);
	rig_exit(b);
	free(a);
	free(b);
}

/* ---- snapshots ---- */

#define WHOLE ((int64_t)-1)

/*
 * One snapshot step: the hardware writes @write bytes, then a snapshot.
 * @want: bytes handed out (WHOLE: the whole buffer)
 * @dup: the PMU's rules take bytes that an earlier snapshot handed out
 */
struct snap_step {
	size_t write;
	int64_t want;
	bool dup;
};

struct snap_case {
	const char *what;
	enum aux_model_pmu pmu;
	size_t aux_pages;
	size_t snapshot_size;
	size_t nsteps;
	struct snap_step steps[8];
};

/* Buffers are 4 pages (16 KiB with 4 KiB pages) unless said otherwise. */
static const struct snap_case snap_cases[] = {
	{ "not wrapped, then new data, then none", AUX_MODEL_INTEL_PT, 4, 0, 4,
	  { { 1000, 1000 }, { 500, 500 }, { 0, 0 }, { 3, 3 } } },
	{ "not wrapped, then new data, then none", AUX_MODEL_CS_ETM, 4, 0, 4,
	  { { 1000, 1000 }, { 500, 500 }, { 0, 0 }, { 3, 3 } } },
	{ "not wrapped, then new data, then none", AUX_MODEL_ARM_SPE, 4, 0, 4,
	  { { 1000, 1000 }, { 500, 500 }, { 0, 0 }, { 3, 3 } } },
	/* Intel PT small snapshots: sticky wrap, whole buffer from then on. */
	{ "wrapped", AUX_MODEL_INTEL_PT, 4, 0, 4,
	  { { 1000, 1000 }, { 20000, WHOLE }, { 0, WHOLE, true }, { 10, WHOLE, true } } },
	/* CoreSight: monotonic head, only ever the new bytes, newest kept. */
	{ "wrapped", AUX_MODEL_CS_ETM, 4, 0, 5,
	  { { 1000, 1000 }, { 20000, WHOLE }, { 0, 0 }, { 10, 10 }, { 40000, WHOLE } } },
	/* Arm SPE: sticky wrap as perf's arm_spe_find_snapshot(). */
	{ "wrapped", AUX_MODEL_ARM_SPE, 4, 0, 4,
	  { { 1000, 1000 }, { 20000, WHOLE }, { 0, WHOLE, true }, { 10, WHOLE, true } } },
	{ "exactly full", AUX_MODEL_INTEL_PT, 4, 0, 1, { { 16384, WHOLE } } },
	{ "exactly full", AUX_MODEL_CS_ETM, 4, 0, 2, { { 16384, WHOLE }, { 0, 0 } } },
	{ "exactly full", AUX_MODEL_ARM_SPE, 4, 0, 1, { { 16384, WHOLE } } },
	/*
	 * Nearly full: Intel PT's scan of the last 4 KiB sees data and takes the
	 * whole buffer, 100 never-written zero bytes first (PAD packets to the
	 * decoder); SPE scans only from head to the end and gets it right
	 * (perf rounds that head down to 8 bytes and would not).
	 */
	{ "nearly full", AUX_MODEL_INTEL_PT, 4, 0, 1, { { 16284, WHOLE } } },
	{ "nearly full", AUX_MODEL_CS_ETM, 4, 0, 1, { { 16284, 16284 } } },
	{ "nearly full", AUX_MODEL_ARM_SPE, 4, 0, 1, { { 16284, 16284 } } },
	/* Snapshot size below the buffer: the newest bytes, never repeated. */
	{ "clamped", AUX_MODEL_INTEL_PT, 4, 4096, 4, { { 1000, 1000 }, { 6000, 4096 }, { 0, 0 }, { 100, 100 } } },
	{ "clamped", AUX_MODEL_CS_ETM, 4, 4096, 4, { { 1000, 1000 }, { 6000, 4096 }, { 0, 0 }, { 100, 100 } } },
	{ "clamped", AUX_MODEL_ARM_SPE, 4, 4096, 4, { { 1000, 1000 }, { 6000, 4096 }, { 0, 0 }, { 100, 100 } } },
	/*
	 * Intel PT large snapshots (256 KiB, > 64 KiB): wrap detection by the
	 * reference bytes (32 KiB before the previous head), not sticky.
	 */
	{ "reference buffer", AUX_MODEL_INTEL_PT, 64, 0, 8,
	  { { 10000, 10000 }, { 100000, 100000 }, { 0, 0 }, { 300000, WHOLE }, { 50, 50 }, { 0, 0 },
	    /* through the buffer's end, short of the saved bytes: not wrapped */
	    { 200000, 200000 },
	    /* 100 bytes into the 32 KiB before the previous head: wrapped */
	    { 262144 - 32768 + 100, WHOLE, true } } },
	{ "large", AUX_MODEL_CS_ETM, 64, 0, 6,
	  { { 10000, 10000 }, { 100000, 100000 }, { 0, 0 }, { 300000, WHOLE }, { 50, 50 }, { 0, 0 } } },
};

static const struct pmu_case *pmu_of(enum aux_model_pmu p)
{
	for (size_t i = 0; i < 3; i++)
		if (pmus[i].model == p)
			return &pmus[i];
	return NULL;
}

static void run_snap_case(const struct snap_case *sc)
{
	const struct pmu_case *pmu = pmu_of(sc->pmu);
	uint64_t prev_end = 0, mask, since_stop;
	struct aux_ring_read rd;
	struct rig g;
	size_t nrec0;
	int64_t n, want;

	rig_init(&g, pmu, true, sc->aux_pages, 0, sc->snapshot_size);
	drain(&g); /* ITRACE_START */
	mask = bufsize(&g) - 1;
	assert_int_equal(bufsize(&g), sc->aux_pages * 4096); /* the table assumes 4 KiB pages */
	for (size_t s = 0; s < sc->nsteps; s++) {
		const struct snap_step *st = &sc->steps[s];

		hw(&g, st->write);
		since_stop = st->write;
		assert_int_equal(aux_ring__snapshot_start(&g.r), 0);
		assert_false(aux_model__enabled(&g.m));
		nrec0 = g.nrecs;
		drain(&g);
		/* The stop's PERF_RECORD_AUX, per the driver's head rules. */
		if (pmu->model == AUX_MODEL_INTEL_PT || since_stop) {
			const struct rec *rc = &g.recs[g.nrecs - 1];

			assert_int_equal(g.nrecs, nrec0 + 1);
			assert_true(rc->flags & PERF_AUX_FLAG_OVERWRITE);
			if (pmu->model == AUX_MODEL_CS_ETM)
				assert_int_equal(rc->offset, g.nstored);
			else
				assert_int_equal(rc->offset, g.nstored & mask);
			if (pmu->model == AUX_MODEL_INTEL_PT)
				assert_int_equal(rc->size, bufsize(&g));
			else
				assert_int_equal(rc->size, since_stop < bufsize(&g) ? since_stop : bufsize(&g));
		} else {
			assert_int_equal(g.nrecs, nrec0);
		}
		n = aux_ring__snapshot(&g.r, &rd);
		want = st->want == WHOLE ? (int64_t)bufsize(&g) : st->want;
		if (n != want)
			fail_msg("%s %s step %zu: snapshot of %lld bytes, want %lld", pmu->name, sc->what, s,
				 (long long)n, (long long)want);
		/* Always the newest bytes: the range ends where the hardware is. */
		assert_segments(&g, &rd, (int64_t)g.nstored - n);
		if (n) {
			if (pmu->model == AUX_MODEL_CS_ETM)
				assert_int_equal(rd.offset, g.nstored - n);
			else
				assert_int_equal((rd.offset + n) & mask, g.nstored & mask);
			keep_auxtrace(&g, &rd);
		}
		if (!st->dup && g.nstored - n < prev_end)
			fail_msg("%s %s step %zu: %llu bytes handed out twice", pmu->name, sc->what, s,
				 (unsigned long long)(prev_end - (g.nstored - n)));
		if (st->dup)
			assert_true(g.nstored - n < prev_end);
		prev_end = g.nstored;
		assert_int_equal(aux_ring__snapshot_finish(&g.r), 0);
		assert_true(aux_model__enabled(&g.m));
	}
	/* perf's CoreSight rule holds for the monotonic head. */
	if (pmu->model == AUX_MODEL_CS_ETM)
		assert_records_covered(&g);
	/* Snapshot mode never touches aux_tail. */
	assert_int_equal(aux_model__user_page(&g.m)->aux_tail, 0);
	assert_int_equal(aux_ring__stats(&g.r)->aux_records, count_recs(&g, PERF_RECORD_AUX, 0));
	rig_exit(&g);
}

static void test_aux_ring_snapshot_table(void **state)
{
	(void)state;
	if (sysconf(_SC_PAGESIZE) != 4096)
		skip();
	for (size_t i = 0; i < sizeof(snap_cases) / sizeof(snap_cases[0]); i++)
		run_snap_case(&snap_cases[i]);
}

static void test_aux_ring_snapshot_refused_in_full_trace_mode(void **state)
{
	struct aux_ring_read rd;
	struct rig g;

	rig_init(&g, *state, false, 4, 0, 0);
	assert_int_equal(aux_ring__snapshot(&g.r, &rd), -EINVAL);
	assert_int_equal(aux_ring__snapshot_start(&g.r), -EINVAL);
	rig_exit(&g);
	rig_init(&g, *state, true, 4, 0, 0);
	assert_int_equal(aux_ring__read(&g.r, &rd), -EINVAL);
	rig_exit(&g);
}

/* A sched-out between snapshots publishes a head too; the next snapshot still takes each byte once. */
static void test_aux_ring_snapshot_after_sched_out(void **state)
{
	const struct pmu_case *pmu = *state;
	struct aux_ring_read rd;
	struct rig g;

	rig_init(&g, pmu, true, 4, 0, 0);
	hw(&g, 1000);
	aux_model__output_end(&g.m, 0); /* sched-out + sched-in */
	hw(&g, 234);
	aux_ring__snapshot_start(&g.r);
	drain(&g);
	assert_int_equal(aux_ring__snapshot(&g.r, &rd), 1234);
	assert_segments(&g, &rd, 0);
	keep_auxtrace(&g, &rd);
	aux_ring__snapshot_finish(&g.r);
	hw(&g, 66);
	aux_ring__snapshot_start(&g.r);
	drain(&g);
	assert_int_equal(aux_ring__snapshot(&g.r, &rd), 66);
	assert_segments(&g, &rd, 1234);
	keep_auxtrace(&g, &rd);
	if (pmu->model == AUX_MODEL_CS_ETM)
		assert_records_covered(&g);
	rig_exit(&g);
}

/* ---- records and ops ---- */

static void test_aux_ring_auxtrace_record_layout(void **state)
{
	struct pdata_record_auxtrace rec;
	struct aux_ring_read rd = { .offset = 0x123456789, .size = 13, .padded = 16 };
	struct aux_ring r = { .cfg = { .idx = 5, .cpu = -1, .tid = 99 } };
	unsigned char raw[48];

	(void)state;
	aux_ring__auxtrace(&r, &rd, 0xfeedfacecafe, &rec);
	memcpy(raw, &rec, 48);
	assert_int_equal(*(__u32 *)(raw + 0), 71);
	assert_int_equal(*(__u16 *)(raw + 6), 48);
	assert_int_equal(*(__u64 *)(raw + 8), 16);
	assert_int_equal(*(__u64 *)(raw + 16), 0x123456789);
	assert_int_equal(*(__u64 *)(raw + 24), 0xfeedfacecafe);
	assert_int_equal(*(__u32 *)(raw + 32), 5);
	assert_int_equal(*(__u32 *)(raw + 36), 99);
	assert_int_equal(*(__u32 *)(raw + 40), 0xffffffff);
	assert_int_equal(*(__u32 *)(raw + 44), 0);
}

static void test_aux_ring_pmu_ops_table(void **state)
{
	struct aux_ring r = { .cfg = { .overwrite = true, .per_cpu = true } };
	__u64 priv[18] = { 0 };

	(void)state;
	assert_ptr_equal(aux_pmu__find("intel_pt"), &aux_pmu_intel_pt);
	assert_ptr_equal(aux_pmu__find("cs_etm"), &aux_pmu_cs_etm);
	assert_ptr_equal(aux_pmu__find("arm_spe_0"), &aux_pmu_arm_spe);
	errno = 0;
	assert_null(aux_pmu__find("intel_bts"));
	assert_int_equal(errno, ENOENT);
	assert_true(aux_pmu_intel_pt.head_in_buffer);
	assert_false(aux_pmu_cs_etm.head_in_buffer);
	assert_true(aux_pmu_arm_spe.head_in_buffer);
	assert_null(aux_pmu_cs_etm.find_snapshot);
	/* The ring-dependent AUXTRACE_INFO words, at perf 6.1's indices. */
	assert_int_equal(aux_pmu_intel_pt.info_fill(&r, priv, 18), 0);
	assert_int_equal(priv[8], 1);
	assert_int_equal(priv[9], 1);
	memset(priv, 0, sizeof(priv));
	assert_int_equal(aux_pmu_cs_etm.info_fill(&r, priv, 3), 0);
	assert_int_equal(priv[2], 1);
	memset(priv, 0, sizeof(priv));
	assert_int_equal(aux_pmu_arm_spe.info_fill(&r, priv, 2), 0);
	assert_int_equal(priv[1], 1);
	assert_int_equal(aux_pmu_intel_pt.info_fill(&r, priv, 9), -EINVAL);
}

#define PER_PMU(fn)                                                   \
	{ #fn "/intel_pt", fn, NULL, NULL, &pmus[0] },                 \
	{ #fn "/cs_etm", fn, NULL, NULL, &pmus[1] },                   \
	{ #fn "/arm_spe", fn, NULL, NULL, &pmus[2] }

int main(void)
{
	const struct CMUnitTest tests[] = {
		PER_PMU(test_aux_ring_mmap_places_aux_after_the_data_pages),
		PER_PMU(test_aux_ring_mmap_rejects_non_power_of_2),
		PER_PMU(test_aux_ring_init_mapped_reads_given_memory),
		PER_PMU(test_aux_ring_full_trace_not_wrapped),
		PER_PMU(test_aux_ring_full_trace_wrapped_gives_two_segments),
		PER_PMU(test_aux_ring_full_trace_exactly_full),
		PER_PMU(test_aux_ring_full_trace_truncation_disables_until_consumed),
		PER_PMU(test_aux_ring_full_trace_truncated_disables_despite_free_space),
		PER_PMU(test_aux_ring_watermark_wakeups),
		PER_PMU(test_aux_ring_default_watermark_is_half_the_buffer),
		PER_PMU(test_aux_ring_partial_and_collision_are_counted),
		PER_PMU(test_aux_ring_itrace_start_once),
		PER_PMU(test_aux_ring_full_trace_auxtrace_offsets_tile_aux_head_space),
		PER_PMU(test_aux_ring_full_trace_two_cpus_match_by_cpu),
		PER_PMU(test_aux_ring_snapshot_refused_in_full_trace_mode),
		PER_PMU(test_aux_ring_snapshot_after_sched_out),
		cmocka_unit_test(test_aux_ring_snapshot_table),
		cmocka_unit_test(test_aux_ring_auxtrace_record_layout),
		cmocka_unit_test(test_aux_ring_pmu_ops_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
