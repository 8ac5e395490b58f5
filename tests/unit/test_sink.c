// SPDX-License-Identifier: BSD-2-Clause
/*
 * record_sink: auxtrig's own samples with and without a callchain (-g), their
 * byte layout, and the real perf 6.1 reading the callchain.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/format/tracing_data.h"
#include "auxtrig/record/cpu_events.h"
#include "auxtrig/record/sink.h"
#include "perf_oracle.h"

#define TP_ID 0x100000000000001ULL
#define DUMMY_ID 201

struct fixture {
	struct test_datafile file;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_int_equal(test_datafile__new(&f->file), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	test_datafile__delete(&f->file);
	free(f);
	return 0;
}

/* A sys_enter_openat record (common header, nr, dfd, filename, flags, mode) of type @common_type. */
static void openat_rec(unsigned char rec[48], __u16 common_type, __u32 pid)
{
	__u64 dfd = (__u64)(long)-100, filename = 0x7ffd1234, flags = 0x80241, mode = 0644;
	__s32 nr = 257;

	memset(rec, 0, 48);
	memcpy(rec + 0, &common_type, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 8, &nr, 4);
	memcpy(rec + 16, &dfd, 8);
	memcpy(rec + 24, &filename, 8);
	memcpy(rec + 32, &flags, 8);
	memcpy(rec + 40, &mode, 8);
}

/*
 * A file as record -g writes it: the tracepoint's attr from cpu_events (with
 * @callchain, PERF_SAMPLE_CALLCHAIN), tracing data from the fixture tracefs,
 * a kernel map and the target's COMM/MMAP2, then one own sample of the
 * tracepoint through the sink with @chain.
 */
static void write_file(struct fixture *f, bool callchain, const __u64 *chain, __u64 nr_chain)
{
	struct tracing_event ev = { "syscalls", "sys_enter_openat" };
	char tracefs[4096], kallsyms[4200], buf[512];
	struct perf_event_attr a;
	struct record_sink k;
	struct sink_own_from from;
	struct synth_map m = {};
	struct pdata_writer *w;
	unsigned char rec[48];
	__u64 tp_type, side_id = DUMMY_ID, tp_id = TP_ID;
	void *td;
	size_t td_len, len;
	FILE *ks;

	snprintf(tracefs, sizeof(tracefs), "%s", test_fixture_path("tracefs"));
	assert_int_equal(tracing_data__event_id(tracefs, &ev, &tp_type), 0);
	assert_int_equal(tracing_data__build(tracefs, &ev, 1, &td, &td_len), 0);
	w = pdata_writer__open(f->file.path, false);
	assert_non_null(w);
	cpu_events__attr_tracepoint(&a, tp_type, callchain);
	assert_int_equal(!!(a.sample_type & PERF_SAMPLE_CALLCHAIN), callchain);
	assert_int_equal(pdata_writer__add_attr(w, &a, "syscalls:sys_enter_openat", &tp_id, 1), 0);
	cpu_events__attr_sideband(&a, false);
	assert_int_equal(pdata_writer__add_attr(w, &a, "dummy:u", &side_id, 1), 0);
	assert_int_equal(pdata_writer__set_tracing_data(w, td, td_len), 0);
	free(td);
	assert_int_equal(pdata_writer__begin_data(w), 0);

	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", f->file.dir);
	ks = fopen(kallsyms, "w");
	assert_non_null(ks);
	fputs("ffffffff81000000 T _stext\nffffffff81000000 T _text\nffffffff81000100 T do_syscall_64\n", ks);
	fclose(ks);
	assert_int_equal(synth__kernel_mmap(w, kallsyms), 0);
	len = synth__comm_record(buf, sizeof(buf), getpid(), getpid(), "stack_demo");
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	assert_int_equal(synth__parse_maps_line("55d0c0a00000-55d0c0a01000 r-xp 00001000 fe:01 1234567    /nonexistent/stack_demo\n", &m), 0);
	len = synth__mmap2_record(buf, sizeof(buf), getpid(), getpid(), &m);
	assert_int_equal(pdata_writer__write(w, buf, len), 0);

	record_sink__init(&k, w, NULL, false);
	k.callchain = callchain;
	k.last_time = 1000000123456ULL;
	openat_rec(rec, (__u16)tp_type, getpid());
	from.pid = from.tid = getpid();
	from.chain = chain;
	from.nr_chain = nr_chain;
	assert_int_equal(record_sink__write_own(&k, TP_ID, &from, rec, sizeof(rec)), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);
}

/* The one sample of the file, parsed by auxtrig's reader (@r kept open for its pointers). */
static struct pdata_reader *read_sample(const char *path, struct pdata_sample *s, __u16 *size)
{
	struct pdata_reader *r = pdata_reader__open(path);
	struct pdata_event ev;
	__u64 pos = 0;
	int found = 0;

	assert_non_null(r);
	while (pdata_reader__next(r, &pos, &ev) == 1) {
		if (ev.header->type != PERF_RECORD_SAMPLE)
			continue;
		assert_int_equal(pdata_reader__parse_sample(r, &ev, s), 0);
		*size = ev.header->size;
		found++;
	}
	assert_int_equal(found, 1);
	return r;
}

static const __u64 demo_chain[] = {
	PERF_CONTEXT_KERNEL, 0xffffffff81000110ULL, PERF_CONTEXT_USER, 0x55d0c0a00010ULL, 0x55d0c0a00020ULL,
};

/* -g: the chain follows the fixed head, as nr then the entries, and the record after it. */
static void test_sink_own_sample_carries_callchain(void **state)
{
	struct fixture *f = *state;
	struct pdata_reader *r;
	struct pdata_sample s;
	__u16 size;

	write_file(f, true, demo_chain, 5);
	r = read_sample(f->file.path, &s, &size);
	assert_true(s.present & PERF_SAMPLE_CALLCHAIN);
	assert_int_equal(s.nr_callchain, 5);
	assert_memory_equal(s.callchain, demo_chain, sizeof(demo_chain));
	assert_true(s.present & PERF_SAMPLE_RAW);
	assert_int_equal(s.raw_size, 48);
	assert_int_equal(*(const __s32 *)((const char *)s.raw + 8), 257);
	/* head 56, nr 8, 5 entries, raw size 4 + 48, padded to 8 */
	assert_int_equal(size, (56 + 8 + 40 + 4 + 48 + 7) & ~7);
	pdata_reader__delete(r);
}

/* -g, but nothing to say where (auxtrig's own records): an empty chain, still the layout perf expects. */
static void test_sink_own_sample_empty_callchain(void **state)
{
	struct fixture *f = *state;
	struct pdata_reader *r;
	struct pdata_sample s;
	__u16 size;

	write_file(f, true, NULL, 7);
	r = read_sample(f->file.path, &s, &size);
	assert_true(s.present & PERF_SAMPLE_CALLCHAIN);
	assert_int_equal(s.nr_callchain, 0);
	assert_int_equal(s.raw_size, 48);
	assert_int_equal(*(const __s32 *)((const char *)s.raw + 8), 257);
	pdata_reader__delete(r);
}

/* Without -g no callchain, whatever the caller passes. */
static void test_sink_own_sample_without_callchain(void **state)
{
	struct fixture *f = *state;
	struct pdata_reader *r;
	struct pdata_sample s;
	__u16 size;

	write_file(f, false, demo_chain, 5);
	r = read_sample(f->file.path, &s, &size);
	assert_false(s.present & PERF_SAMPLE_CALLCHAIN);
	assert_int_equal(s.raw_size, 48);
	assert_int_equal(size, (56 + 4 + 48 + 7) & ~7);
	pdata_reader__delete(r);
}

/* A chain longer than the bound keeps its innermost SINK_OWN_CHAIN_MAX entries. */
static void test_sink_own_sample_chain_is_bounded(void **state)
{
	struct fixture *f = *state;
	__u64 *chain = calloc(SINK_OWN_CHAIN_MAX + 10, sizeof(*chain));
	struct pdata_reader *r;
	struct pdata_sample s;
	__u16 size;

	assert_non_null(chain);
	chain[0] = PERF_CONTEXT_USER;
	for (int i = 1; i < SINK_OWN_CHAIN_MAX + 10; i++)
		chain[i] = 0x55d0c0a00000ULL + i;
	write_file(f, true, chain, SINK_OWN_CHAIN_MAX + 10);
	r = read_sample(f->file.path, &s, &size);
	assert_int_equal(s.nr_callchain, SINK_OWN_CHAIN_MAX);
	assert_memory_equal(s.callchain, chain, 8 * SINK_OWN_CHAIN_MAX);
	assert_int_equal(s.raw_size, 48);
	pdata_reader__delete(r);
	free(chain);
}

/* perf 6.1 reads the chain: kernel frame then user frames, each resolved against the file's maps. */
static void test_sink_perf_script_shows_callchain(void **state)
{
	struct fixture *f = *state;
	const char *args[] = { "script", "-i", f->file.path, NULL };
	const char *k, *kmap, *u1, *u2;
	char *out;
	int rc;

	perf_oracle__need();
	write_file(f, true, demo_chain, 5);
	rc = perf_oracle__run(NULL, args, &out);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_null(perf_oracle__problem(out));
	assert_non_null(strstr(out, "syscalls:sys_enter_openat: dfd: 0xffffffffffffff9c"));
	/* the kernel frame's symbol is the running kernel's (perf reads /proc/kallsyms) */
	k = strstr(out, "\tffffffff81000110 ");
	assert_non_null(k);
	kmap = strstr(k, " ([kernel.kallsyms])\n");
	assert_non_null(kmap);
	assert_true(kmap < strchr(k + 1, '\n'));
	/* user frames: the address in the mapped file (offset 0x1000 + 0x10), and the file */
	u1 = strstr(out, " 1010 [unknown] (/nonexistent/stack_demo)\n");
	u2 = strstr(out, " 1020 [unknown] (/nonexistent/stack_demo)\n");
	assert_non_null(u1);
	assert_non_null(u2);
	assert_true(k < u1 && u1 < u2);
	free(out);
}

/*
 * The sink writes every FINISHED_ROUND: one after the synthesized records in
 * either mode; in flight-recorder mode none at the end of a pass, when
 * streaming one per pass.
 */
static void test_sink_rounds_synthesis_and_passes(void **state)
{
	struct fixture *f = *state;

	for (int snapshot = 0; snapshot < 2; snapshot++) {
		struct pdata_writer *w = pdata_writer__open(f->file.path, true);
		struct perf_event_attr a;
		struct record_sink k;
		__u64 id = DUMMY_ID;

		assert_non_null(w);
		cpu_events__attr_sideband(&a, false);
		assert_int_equal(pdata_writer__add_attr(w, &a, "dummy:u", &id, 1), 0);
		assert_int_equal(pdata_writer__begin_data(w), 0);
		record_sink__init(&k, w, NULL, snapshot);
		assert_int_equal(record_sink__end_synthesis(&k), 0);
		assert_int_equal(pdata_writer__stats(w)->nr_by_type[PDATA_RECORD_FINISHED_ROUND], 1);
		assert_int_equal(record_sink__end_pass(&k, true), 0);
		assert_int_equal(pdata_writer__stats(w)->nr_by_type[PDATA_RECORD_FINISHED_ROUND], snapshot ? 1 : 2);
		assert_int_equal(pdata_writer__close(w), 0);
		pdata_writer__delete(w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sink_own_sample_carries_callchain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_own_sample_empty_callchain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_own_sample_without_callchain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_own_sample_chain_is_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_perf_script_shows_callchain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_rounds_synthesis_and_passes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
