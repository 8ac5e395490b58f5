// SPDX-License-Identifier: BSD-2-Clause
/*
 * pdata_writer: byte layout, file-creation safety, error reporting, and the
 * real perf 6.1 reading what we write (perf script, report -D, --header-only).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/format/tracing_data.h"
#include "uapi/linux/perf_event_aux.h"
#include "perf_oracle.h"

#define TP_ID_A 101
#define TP_ID_B 102
#define DUMMY_ID_A 201
#define DUMMY_ID_B 202
#define PT_PMU_TYPE 9

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

static struct perf_event_attr attr_of(__u32 type, __u64 config)
{
	struct perf_event_attr a = {};

	a.type = type;
	a.size = sizeof(a);
	a.config = config;
	a.sample_period = 1;
	a.sample_type = PDATA_SAMPLE_TYPE;
	a.sample_id_all = 1;
	a.disabled = 1;
	return a;
}

static void add_tp_and_dummy(struct pdata_writer *w, __u64 tp_config, __u32 aux_action)
{
	struct perf_event_attr tp = attr_of(PERF_TYPE_TRACEPOINT, tp_config);
	struct perf_event_attr dummy = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	__u64 tp_ids[] = { TP_ID_A, TP_ID_B }, dummy_ids[] = { DUMMY_ID_A, DUMMY_ID_B };

	*perf_attr_aux_action(&dummy) = aux_action;
	assert_int_equal(pdata_writer__add_attr(w, &tp, "syscalls:sys_enter_openat", tp_ids, 2), 0);
	assert_int_equal(pdata_writer__add_attr(w, &dummy, "dummy:u", dummy_ids, 2), 0);
	/* byte-level tests only need some body; oracle tests replace it with real tracing data */
	assert_int_equal(pdata_writer__set_tracing_data(w, "tdata", 5), 0);
}

/* A sys_enter_openat sample as the kernel writes it: RAW = u32 size + record, padded to 8. */
static size_t openat_sample(void *buf, __u64 id, __u32 pid, __u32 tid, __u64 time, __u32 cpu, __u16 common_type)
{
	struct pdata_sample_head h = {};
	unsigned char raw[48] = {};
	__u32 raw_size = 52; /* ALIGN(48 + 4, 8) - 4: the kernel pads the raw data so the record stays aligned */
	__u64 dfd = (__u64)(long)-100, filename = 0x7ffd1234, flags = 0x80241, mode = 0644;
	__s32 nr = 257;
	char *p = buf;

	h.header.type = PERF_RECORD_SAMPLE;
	h.header.misc = PERF_RECORD_MISC_USER;
	h.header.size = sizeof(h) + 4 + raw_size;
	h.id = id;
	h.pid = pid;
	h.tid = tid;
	h.time = time;
	h.cpu = cpu;
	h.period = 1;
	memcpy(raw + 0, &common_type, 2);
	memcpy(raw + 4, &pid, 4);
	memcpy(raw + 8, &nr, 4);
	memcpy(raw + 16, &dfd, 8);
	memcpy(raw + 24, &filename, 8);
	memcpy(raw + 32, &flags, 8);
	memcpy(raw + 40, &mode, 8);
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), &raw_size, 4);
	memset(p + sizeof(h) + 4, 0, raw_size);
	memcpy(p + sizeof(h) + 4, raw, sizeof(raw));
	return h.header.size;
}

/*
 * perf report warns "Kernel address maps ... were restricted" when the file
 * has no kernel map, so every oracle file gets one, from a fake kallsyms.
 */
static void write_kernel_mmap(struct pdata_writer *w, const char *dir)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("ffffffff81000000 T _stext\nffffffff81000000 T _text\n", f);
	fclose(f);
	assert_int_equal(synth__kernel_mmap(w, path), 0);
}

/*
 * The file the oracle tests read: tracepoint + dummy, tracing data, COMM/MMAP2,
 * one openat sample. With @killed, the writer is dropped without closing after
 * a second, buffered-only sample, as if auxtrig had been killed.
 */
enum openat_end { OPENAT_CLOSED, OPENAT_KILLED, OPENAT_PIPE, OPENAT_PIPE_KILLED };

static void write_openat_file_(const char *path, const char *dir, enum openat_end end)
{
	bool killed = end == OPENAT_KILLED || end == OPENAT_PIPE_KILLED;
	struct tracing_event ev = { "syscalls", "sys_enter_openat" };
	const char *tracefs = test_fixture_path("tracefs");
	char tracefs_copy[4096];
	struct synth_map m = {};
	char *argv[] = { "auxtrig", "record", "-e", "syscalls:sys_enter_openat" };
	struct pdata_writer *w;
	char buf[512];
	void *td;
	size_t td_len, len;
	__u64 tp_id;

	snprintf(tracefs_copy, sizeof(tracefs_copy), "%s", tracefs);
	assert_int_equal(tracing_data__event_id(tracefs_copy, &ev, &tp_id), 0);
	assert_int_equal(tracing_data__build(tracefs_copy, &ev, 1, &td, &td_len), 0);

	if (end == OPENAT_PIPE || end == OPENAT_PIPE_KILLED) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		assert_true(fd >= 0);
		w = pdata_writer__open_pipe(fd, "the test stream");
	} else {
		w = pdata_writer__open(path, false);
	}
	assert_non_null(w);
	add_tp_and_dummy(w, tp_id, 0);
	assert_int_equal(pdata_writer__set_tracing_data(w, td, td_len), 0);
	free(td);
	assert_int_equal(pdata_writer__set_cmdline(w, 4, argv), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);

	write_kernel_mmap(w, dir);
	len = synth__fork_record(buf, sizeof(buf), 4242, 1, 4242, 1);
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	len = synth__comm_record(buf, sizeof(buf), 4242, 4242, "openat_demo");
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	assert_int_equal(synth__parse_maps_line("55d0c0a00000-55d0c0a01000 r-xp 00001000 fe:01 1234567    /usr/bin/openat_demo\n", &m), 0);
	len = synth__mmap2_record(buf, sizeof(buf), 4242, 4242, &m);
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);

	len = openat_sample(buf, TP_ID_B, 4242, 4242, 1000000123456ULL, 3, tp_id);
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	if (killed) {
		len = openat_sample(buf, TP_ID_B, 4242, 4242, 1000000999999ULL, 3, tp_id);
		assert_int_equal(pdata_writer__write(w, buf, len), 0); /* never flushed */
	} else {
		assert_int_equal(pdata_writer__close(w), 0);
	}
	pdata_writer__delete(w);
}

static void write_openat_file(const char *path, const char *dir)
{
	write_openat_file_(path, dir, OPENAT_CLOSED);
}

static void assert_clean(const char *what, const char *out)
{
	const char *bad = perf_oracle__problem(out);

	if (bad)
		fail_msg("%s reports a problem: %.200s\n--- full output ---\n%s", what, bad, out);
}

static void test_pdata_writer_perf_script_decodes_openat(void **state)
{
	struct fixture *f = *state;
	const char *args[] = { "script", "-i", f->file.path, "--show-task-events", "--show-mmap-events", NULL };
	char *out;
	int rc;

	perf_oracle__need();
	write_openat_file(f->file.path, f->file.dir);
	rc = perf_oracle__run(NULL, args, &out);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_clean("perf script", out);
	/* comm, tid, cpu, time and the decoded fields of the RAW record */
	assert_non_null(strstr(out, "openat_demo  4242 [003]  1000.000123:"));
	assert_non_null(strstr(out, "syscalls:sys_enter_openat: dfd: 0xffffffffffffff9c, filename: 0x7ffd1234, flags: 0x00080241, mode: 0x000001a4"));
	assert_non_null(strstr(out, "PERF_RECORD_COMM: openat_demo:4242/4242"));
	assert_non_null(strstr(out, "PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x7effffff) @ 0xffffffff81000000]: x [kernel.kallsyms]_text"));
	assert_non_null(strstr(out, "PERF_RECORD_MMAP2 4242/4242: [0x55d0c0a00000(0x1000) @ 0x1000 fe:01 1234567 0]: r-xp /usr/bin/openat_demo"));
	free(out);
}

static void test_pdata_writer_perf_report_is_clean(void **state)
{
	struct fixture *f = *state;
	const char *dump[] = { "report", "-D", "-i", f->file.path, NULL };
	const char *hdr[] = { "report", "--header-only", "-i", f->file.path, NULL };
	static const char *const want[] = {
		"# hostname : ", "# os release : ", "# perf version : auxtrig ", "# arch : ", "# nrcpus online : ",
		"# cpudesc : ", "# cpuid : ", "# total memory : ", "# cmdline : auxtrig record -e syscalls:sys_enter_openat",
		"# event : name = syscalls:sys_enter_openat", "# event : name = dummy:u", "# time of first sample : 1000.000123",
	};
	char *out;

	perf_oracle__need();
	write_openat_file(f->file.path, f->file.dir);
	assert_int_equal(perf_oracle__run(NULL, dump, &out), 0);
	assert_clean("perf report -D", out);
	assert_non_null(strstr(out, "PERF_RECORD_SAMPLE("));
	assert_non_null(strstr(out, "PERF_RECORD_FINISHED_ROUND"));
	free(out);

	assert_int_equal(perf_oracle__run(NULL, hdr, &out), 0);
	print_message("%s", out);
	assert_clean("perf report --header-only", out);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("header lacks '%s':\n%s", want[i], out);
	free(out);
}

/* Intel PT: 18-u64 AUXTRACE_INFO (as perf 6.1 writes) then one AUXTRACE with PSB, PSBEND, PADs. */
static void test_pdata_writer_perf_reads_intel_pt_auxtrace(void **state)
{
	struct fixture *f = *state;
	const char *dump[] = { "report", "-D", "-i", f->file.path, NULL };
	const char *hdr[] = { "report", "--header-only", "-i", f->file.path, NULL };
	const char *decode[] = { "script", "-i", f->file.path, "--itrace=ed", "-F", "comm,tid,time", NULL };
	char log[4200];
	struct perf_event_attr pt = attr_of(PT_PMU_TYPE, 0x400 /* tsc */);
	struct perf_event_attr dummy = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	__u64 pt_ids[] = { 301 }, dummy_ids[] = { 302 };
	struct {
		struct pdata_record_auxtrace_info h;
		__u64 priv[18];
	} info = {};
	struct pdata_record_auxtrace rec = {};
	unsigned char psb[16], tail[8] = { 0x02, 0x23, 0, 0, 0, 0, 0, 0 }; /* PSBEND + 6 PAD */
	struct pdata_writer *w;
	char *out;

	perf_oracle__need();
	for (int i = 0; i < 16; i += 2) {
		psb[i] = 0x02;
		psb[i + 1] = 0x82;
	}
	*perf_attr_aux_action(&pt) = AUXTRIG_AUX_START_PAUSED; /* must not leak into EVENT_DESC */
	w = pdata_writer__open(f->file.path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &pt, "intel_pt//", pt_ids, 1), 0);
	assert_int_equal(pdata_writer__add_attr(w, &dummy, "dummy:u", dummy_ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);

	rec.size = 0;
	rec.offset = 0;
	rec.reference = 0x123456789ULL;
	rec.idx = 0;
	rec.tid = 4242;
	rec.cpu = 0;
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, psb, 16, tail, 8), -EINVAL);

	info.h.header.type = PDATA_RECORD_AUXTRACE_INFO;
	info.h.header.size = sizeof(info);
	info.h.type = PDATA_AUXTRACE_INTEL_PT;
	info.priv[0] = PT_PMU_TYPE;
	info.priv[1] = 10;		/* time_shift */
	info.priv[2] = 1000;		/* time_mult */
	info.priv[3] = 0;		/* time_zero */
	info.priv[4] = 1;		/* cap_user_time_zero */
	info.priv[5] = 0x400;		/* tsc bit */
	info.priv[6] = 0x800;		/* noretcomp bit */
	info.priv[7] = 0;		/* no sched_switch */
	info.priv[8] = 0;		/* not snapshot */
	info.priv[9] = 1;		/* per-cpu mmaps */
	info.priv[10] = 0x200;		/* mtc bit */
	info.priv[11] = 0xf << 14;	/* mtc freq bits */
	info.priv[12] = 2;		/* tsc_ctc_n */
	info.priv[13] = 1;		/* tsc_ctc_d */
	info.priv[14] = 0x2;		/* cyc bit */
	info.priv[15] = 0;		/* max non-turbo ratio */
	info.priv[16] = 0;		/* filter string length */
	info.priv[17] = 0;		/* cap event trace */
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);
	write_kernel_mmap(w, f->file.dir);
	/* 16 + 5 bytes, padded to 24 by the writer */
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, psb, 16, tail, 5), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__stats(w)->nr_by_type[PDATA_RECORD_AUXTRACE], 1);
	assert_int_equal(pdata_writer__stats(w)->auxtrace_bytes, 24);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);

	assert_int_equal(perf_oracle__run(NULL, dump, &out), 0);
	assert_clean("perf report -D (Intel PT)", out);
	assert_non_null(strstr(out, "PERF_RECORD_AUXTRACE_INFO"));
	assert_non_null(strstr(out, "  PMU Type            9"));
	assert_non_null(strstr(out, "  Cap Event Trace     0"));
	assert_non_null(strstr(out, "PERF_RECORD_AUXTRACE size: 0x18  offset: 0  ref: 0x123456789  idx: 0  tid: 4242  cpu: 0"));
	free(out);

	/*
	 * With a HEADER_AUXTRACE index perf 6.1 queues the buffers from the index
	 * and -D no longer dumps packets (intel_pt_process_auxtrace_event() only
	 * dumps when !data_queued). The decoder's debug log (--itrace=d, written
	 * to ./intel_pt.log) shows it read our payload through the index.
	 */
	assert_int_equal(perf_oracle__run(f->file.dir, decode, &out), 0);
	assert_clean("perf script --itrace=ed (Intel PT)", out);
	free(out);
	snprintf(log, sizeof(log), "%s/intel_pt.log", f->file.dir);
	out = test_read_file(log, NULL);
	assert_non_null(out);
	print_message("%s", out);
	assert_non_null(strstr(out, "queue 0 decoding cpu 0"));
	assert_non_null(strstr(out, "Reference timestamp 0x123456789"));
	assert_non_null(strstr(out, "00000000:  02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82 PSB"));
	assert_non_null(strstr(out, "00000010:  02 23 00 00 00 00 00 00                         PSBEND"));
	free(out);

	assert_int_equal(perf_oracle__run(NULL, hdr, &out), 0);
	assert_clean("perf report --header-only (Intel PT)", out);
	assert_non_null(strstr(out, "# event : name = intel_pt//"));
	free(out);
}

/* ---- byte-level checks, no perf needed ---- */

static void read_header(const char *path, struct pdata_file_header *h)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, h, sizeof(*h), 0), sizeof(*h));
	close(fd);
}

static void test_pdata_writer_layout(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w;
	struct pdata_file_header h;
	struct pdata_file_attr fa[2];
	struct pdata_file_section table[16];
	__u64 ids[2], feats;
	char *file;
	size_t len, nr_feats;
	int nbits = 0;

	w = pdata_writer__open(f->file.path, false);
	assert_non_null(w);
	add_tp_and_dummy(w, 782, AUXTRIG_AUX_PAUSE);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);

	file = test_read_file(f->file.path, &len);
	assert_non_null(file);
	memcpy(&h, file, sizeof(h));
	assert_memory_equal(file, "PERFILE2", 8);
	assert_int_equal(h.size, 104);
	assert_int_equal(h.attr_size, 144);
	assert_int_equal(h.attrs.offset, 104);
	assert_int_equal(h.attrs.size, 288);
	memcpy(fa, file + h.attrs.offset, sizeof(fa));
	assert_int_equal(fa[0].attr.size, 128);
	assert_int_equal(fa[1].attr.size, 128);
	assert_int_equal(fa[0].attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(fa[0].ids.size, 16);
	memcpy(ids, file + fa[1].ids.offset, 16);
	assert_int_equal(ids[0], DUMMY_ID_A);
	assert_int_equal(ids[1], DUMMY_ID_B);
	/* aux_action is kept in the attr section (perf tolerates it there) */
	assert_int_equal(*perf_attr_aux_action(&fa[1].attr), AUXTRIG_AUX_PAUSE);
	/* Between the ids and the data: the early feature bodies, then a copy of their table. */
	assert_true(h.event_types.offset > 104 + 288 + 32);
	assert_int_equal(h.data.offset, h.event_types.offset + h.event_types.size);
	assert_int_equal(h.data.size, 8); /* one FINISHED_ROUND */

	feats = h.adds_features[0];
	for (int b = 0; b < 64; b++)
		nbits += !!(feats & (1ULL << b));
	assert_true(feats & (1ULL << PDATA_HEADER_EVENT_DESC));
	assert_true(feats & (1ULL << PDATA_HEADER_CPUID));
	assert_true(feats & (1ULL << PDATA_HEADER_TRACING_DATA));
	assert_false(feats & 1); /* bit 0 is reserved; TRACING_DATA is bit 1 */

	assert_false(feats & (1ULL << PDATA_HEADER_AUXTRACE));
	assert_false(feats & (1ULL << PDATA_HEADER_SAMPLE_TIME));
	assert_false(feats & (1ULL << PDATA_HEADER_CMDLINE));
	nr_feats = nbits;
	assert_true(nr_feats <= 16);
	memcpy(table, file + h.data.offset + h.data.size, nr_feats * sizeof(table[0]));
	/* No late features here: the copy for auxtrig repair is the whole table. */
	assert_int_equal(h.event_types.size, nr_feats * sizeof(table[0]));
	assert_memory_equal(file + h.event_types.offset, table, h.event_types.size);
	/* TRACING_DATA is the first set bit, so the first table entry */
	assert_int_equal(table[0].size, 5);
	assert_memory_equal(file + table[0].offset, "tdata", 5);
	/* The EVENT_DESC copy has aux_action cleared: find it as the last set bit below 13. */
	{
		size_t idx = 0;
		struct perf_event_attr a;
		__u32 nr, sz;

		for (int b = 0; b < PDATA_HEADER_EVENT_DESC; b++)
			idx += !!(feats & (1ULL << b));
		memcpy(&nr, file + table[idx].offset, 4);
		memcpy(&sz, file + table[idx].offset + 4, 4);
		assert_int_equal(nr, 2);
		assert_int_equal(sz, 128);
		memcpy(&a, file + table[idx].offset + 8, sizeof(a));
		assert_int_equal(a.type, PERF_TYPE_TRACEPOINT);
		/* second attr: skip first (attr, nr_ids, name string, ids) */
		{
			size_t off = table[idx].offset + 8 + 128;
			__u32 n_ids, slen;

			memcpy(&n_ids, file + off, 4);
			memcpy(&slen, file + off + 4, 4);
			assert_int_equal(n_ids, 2);
			assert_string_equal(file + off + 8, "syscalls:sys_enter_openat");
			assert_int_equal(slen % 64, 0);
			off += 8 + slen + 8 * n_ids;
			memcpy(&a, file + off, sizeof(a));
			assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
			assert_int_equal(*perf_attr_aux_action(&a), 0);
		}
	}
	/* Bodies sit before the data: the file ends with the table. */
	assert_int_equal(len, h.data.offset + h.data.size + nr_feats * sizeof(table[0]));
	assert_true(table[nr_feats - 1].offset + table[nr_feats - 1].size <= h.event_types.offset);
	free(file);
}

static void test_pdata_writer_finish_round_updates_data_size(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);
	struct pdata_file_header h;
	char buf[256];
	size_t len;

	assert_non_null(w);
	add_tp_and_dummy(w, 782, 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	read_header(f->file.path, &h);
	assert_int_equal(h.data.size, 0);
	len = synth__comm_record(buf, sizeof(buf), 1, 1, "init");
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	/* As if killed here: the header already covers everything written. */
	read_header(f->file.path, &h);
	assert_int_equal(h.data.size, len + 8);
	assert_int_equal(pdata_writer__stats(w)->records, 2);
	assert_int_equal(pdata_writer__stats(w)->nr_by_type[PERF_RECORD_COMM], 1);
	assert_int_equal(pdata_writer__stats(w)->nr_by_type[PDATA_RECORD_FINISHED_ROUND], 1);
	assert_int_equal(pdata_writer__stats(w)->bytes, len + 8);
	pdata_writer__delete(w);
}

/*
 * A run killed after a round: no features, but data.size covers the rounds,
 * so perf reads the records. (Files with tracepoint attrs need the
 * TRACING_DATA feature written at close; perf refuses them without it.)
 */
static void test_pdata_writer_killed_run_is_readable(void **state)
{
	struct fixture *f = *state;
	const char *args[] = { "script", "-i", f->file.path, "--show-task-events", NULL };
	struct perf_event_attr dummy = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	struct pdata_writer *w;
	__u64 id = 5;
	char buf[256], *out;
	size_t len;

	perf_oracle__need();
	dummy.exclude_kernel = 1; /* no kernel map in this file: keep perf's kptr warning away */
	w = pdata_writer__open(f->file.path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &dummy, "dummy:u", &id, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	len = synth__comm_record(buf, sizeof(buf), 77, 77, "before_kill");
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	len = synth__comm_record(buf, sizeof(buf), 78, 78, "after_round");
	assert_int_equal(pdata_writer__write(w, buf, len), 0); /* buffered, lost with the process */
	pdata_writer__delete(w);			  /* no close: as if killed */

	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);
	assert_clean("perf script on a killed run", out);
	assert_non_null(strstr(out, "PERF_RECORD_COMM: before_kill:77/77"));
	assert_null(strstr(out, "after_round"));
	free(out);
}

/* A tracepoint file killed mid-run: perf needs its tracing data, which is there. */
static void test_pdata_writer_killed_tracepoint_run_is_readable(void **state)
{
	struct fixture *f = *state;
	const char *args[] = { "script", "-i", f->file.path, NULL };
	char *out;

	perf_oracle__need();
	write_openat_file_(f->file.path, f->file.dir, OPENAT_KILLED);
	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);
	assert_clean("perf script on a killed tracepoint run", out);
	assert_non_null(strstr(out, "1000.000123: syscalls:sys_enter_openat:"));
	assert_null(strstr(out, "1000.000999"));
	free(out);
}

/*
 * -o -: the pipe-mode stream. auxtrig's reader finds the attrs with their
 * ids, the features and the tracing data in the stream's records, and perf
 * script (which reads pipe mode from a file as from a pipe) prints the
 * sample with its event's name and fields, without a warning.
 */
static void test_pdata_writer_pipe_stream(void **state)
{
	struct fixture *f = *state;
	const char *args[] = { "script", "-i", f->file.path, NULL };
	const struct pdata_reader_attr *a;
	struct pdata_reader *r;
	const void *body;
	size_t size;
	__u64 magic_size[2], pos = 0;
	struct pdata_event ev;
	unsigned int samples = 0;
	char *out;
	FILE *fp;

	write_openat_file_(f->file.path, f->file.dir, OPENAT_PIPE);
	fp = fopen(f->file.path, "rb");
	assert_non_null(fp);
	assert_int_equal(fread(magic_size, 1, sizeof(magic_size), fp), sizeof(magic_size));
	fclose(fp);
	assert_true(magic_size[0] == PDATA_MAGIC && magic_size[1] == 16);

	r = pdata_reader__open(f->file.path);
	assert_non_null(r);
	assert_int_equal(pdata_reader__nr_attrs(r), 2);
	a = pdata_reader__attr_by_id(r, TP_ID_B);
	assert_non_null(a);
	assert_int_equal(a->attr.type, PERF_TYPE_TRACEPOINT);
	assert_non_null(pdata_reader__attr_by_id(r, DUMMY_ID_A));
	assert_int_equal(pdata_reader__feature(r, PDATA_HEADER_TRACING_DATA, &body, &size), 0);
	assert_true(size >= 8 && !memcmp((const char *)body + 3, "tracing", 7));
	assert_true(pdata_reader__has_feature(r, PDATA_HEADER_EVENT_DESC));
	assert_true(pdata_reader__has_feature(r, PDATA_HEADER_CMDLINE));
	assert_false(pdata_reader__has_feature(r, PDATA_HEADER_AUXTRACE));
	while (pdata_reader__next(r, &pos, &ev) > 0)
		samples += ev.header->type == PERF_RECORD_SAMPLE;
	assert_int_equal(samples, 1);
	pdata_reader__delete(r);

	perf_oracle__need();
	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);
	assert_clean("perf script on a pipe-mode stream", out);
	assert_non_null(strstr(out, "openat_demo  4242 [003]  1000.000123:"));
	assert_non_null(strstr(out, "syscalls:sys_enter_openat: dfd: 0xffffffffffffff9c, filename: 0x7ffd1234"));
	free(out);
}

/*
 * A stream whose writer was killed: what its last flush sent is read, by
 * auxtrig and by perf; a record cut short by the kill (a pipe takes a long
 * write in parts) ends it, with a warning, and nothing before it is lost.
 */
static void test_pdata_writer_killed_pipe_stream(void **state)
{
	struct fixture *f = *state;
	const char *args[] = { "script", "-i", f->file.path, NULL };
	struct pdata_reader *r;
	struct pdata_event ev;
	struct stat st;
	__u64 pos = 0;
	unsigned int samples = 0, comms = 0;
	char *out;

	write_openat_file_(f->file.path, f->file.dir, OPENAT_PIPE_KILLED);
	assert_int_equal(stat(f->file.path, &st), 0);
	/* ... and the kill came inside a write: half a record more */
	{
		char half[24] = {};
		struct perf_event_header *h = (void *)half;
		FILE *fp = fopen(f->file.path, "ab");

		h->type = PERF_RECORD_COMM;
		h->size = 48;
		assert_non_null(fp);
		assert_int_equal(fwrite(half, 1, sizeof(half), fp), sizeof(half));
		fclose(fp);
	}
	r = pdata_reader__open(f->file.path);
	assert_non_null(r);
	while (pdata_reader__next(r, &pos, &ev) > 0) {
		samples += ev.header->type == PERF_RECORD_SAMPLE;
		comms += ev.header->type == PERF_RECORD_COMM;
	}
	assert_int_equal(samples, 1);	/* the flushed one; the buffered one died with the writer */
	assert_int_equal(comms, 1);	/* openat_demo's; not the half record */
	pdata_reader__delete(r);

	perf_oracle__need();
	perf_oracle__run(NULL, args, &out);	/* its status after a cut record is perf's business */
	assert_non_null(strstr(out, "1000.000123: syscalls:sys_enter_openat:"));
	assert_null(strstr(out, "1000.000999"));
	free(out);
}

static void test_pdata_writer_rejects_unknown_ids(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);
	char buf[256];
	size_t len;
	struct pdata_sample_id sid = {};

	assert_non_null(w);
	add_tp_and_dummy(w, 782, 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	len = openat_sample(buf, 999, 1, 1, 5, 0, 782);
	assert_int_equal(pdata_writer__write(w, buf, len), -EINVAL);
	len = openat_sample(buf, DUMMY_ID_B, 1, 1, 5, 0, 782);
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	/* a COMM whose trailer names an unknown id */
	len = synth__comm_record(buf, sizeof(buf), 1, 1, "init");
	sid.id = 12345;
	memcpy(buf + len - sizeof(sid), &sid, sizeof(sid));
	assert_int_equal(pdata_writer__write(w, buf, len), -EINVAL);
	sid.id = TP_ID_A;
	memcpy(buf + len - sizeof(sid), &sid, sizeof(sid));
	assert_int_equal(pdata_writer__write(w, buf, len), 0);
	/* a record overrunning its buffer / not a multiple of 8 */
	assert_int_equal(pdata_writer__write(w, buf, len - 8), -EINVAL);
	assert_int_equal(pdata_writer__stats(w)->records, 2);
	pdata_writer__delete(w);
}

static void test_pdata_writer_tracepoint_needs_tracing_data(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);
	struct perf_event_attr tp = attr_of(PERF_TYPE_TRACEPOINT, 782);
	__u64 id = 1;

	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &tp, "syscalls:sys_enter_openat", &id, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), -EINVAL);
	/* the caller then removes the file: nothing half-written stays behind */
	assert_int_equal(pdata_writer__unlink(w), 0);
	assert_int_equal(access(f->file.path, F_OK), -1);
	pdata_writer__delete(w);
}

static void test_pdata_writer_rejects_mismatched_sample_layout(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);
	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	__u64 id = 1, id2 = 2;

	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &a, "a", &id, 1), 0);
	a.sample_type = PERF_SAMPLE_ID | PERF_SAMPLE_TIME;
	assert_int_equal(pdata_writer__add_attr(w, &a, "b", &id2, 1), -EINVAL);
	a.sample_type = PDATA_SAMPLE_TYPE;
	a.sample_id_all = 0;
	assert_int_equal(pdata_writer__add_attr(w, &a, "c", &id2, 1), -EINVAL);
	assert_int_equal(pdata_writer__nr_attrs(w), 1);
	pdata_writer__delete(w);
}

static void test_pdata_writer_auxtrace_padding_and_index(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);
	struct pdata_record_auxtrace_info info = {};
	struct pdata_record_auxtrace rec = { .idx = 2, .cpu = 2, .tid = -1 }, got;
	struct pdata_file_header h;
	struct pdata_file_section table[16];
	const char a[5] = "abcde", b[6] = "fghijk";
	char *file;
	size_t len;
	__u64 nr;
	struct pdata_auxtrace_index_entry e;
	int idx = 0;

	assert_non_null(w);
	add_tp_and_dummy(w, 782, 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	info.header.type = PDATA_RECORD_AUXTRACE_INFO;
	info.header.size = sizeof(info);
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, a, 5, b, 6), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);

	file = test_read_file(f->file.path, &len);
	memcpy(&h, file, sizeof(h));
	assert_int_equal(h.data.size, 16 + 48 + 16);
	memcpy(&got, file + h.data.offset + 16, sizeof(got));
	assert_int_equal(got.header.type, PDATA_RECORD_AUXTRACE);
	assert_int_equal(got.header.size, 48);
	assert_int_equal(got.size, 16);
	assert_int_equal(got.idx, 2);
	assert_memory_equal(file + h.data.offset + 64, "abcdefghijk\0\0\0\0\0", 16);
	assert_true(h.adds_features[0] & (1ULL << PDATA_HEADER_AUXTRACE));
	for (int bit = 0; bit < PDATA_HEADER_AUXTRACE; bit++)
		idx += !!(h.adds_features[0] & (1ULL << bit));
	memcpy(table, file + h.data.offset + h.data.size, (idx + 1) * sizeof(table[0]));
	memcpy(&nr, file + table[idx].offset, 8);
	memcpy(&e, file + table[idx].offset + 8, sizeof(e));
	assert_int_equal(nr, 1);
	assert_int_equal(e.file_offset, h.data.offset + 16);
	assert_int_equal(e.sz, 48);
	free(file);
}

static void test_pdata_writer_rejects_unknown_id_index(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);
	struct {
		struct pdata_record_id_index h;
		struct pdata_id_index_entry e[2];
	} rec = {};

	assert_non_null(w);
	add_tp_and_dummy(w, 782, 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	rec.h.header.type = PDATA_RECORD_ID_INDEX;
	rec.h.header.size = sizeof(rec);
	rec.h.nr = 2;
	rec.e[0].id = TP_ID_A;
	rec.e[1].id = 4711;
	assert_int_equal(pdata_writer__write(w, &rec, sizeof(rec)), -EINVAL);
	rec.e[1].id = DUMMY_ID_B;
	rec.h.nr = 3; /* more entries than the record holds */
	assert_int_equal(pdata_writer__write(w, &rec, sizeof(rec)), -EINVAL);
	rec.h.nr = 2;
	assert_int_equal(pdata_writer__write(w, &rec, sizeof(rec)), 0);
	pdata_writer__delete(w);
}

/* Payloads larger than the write buffer bypass it; offsets and the index must stay exact. */
static void test_pdata_writer_large_auxtrace(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);
	struct pdata_record_auxtrace_info info = { .header = { .type = PDATA_RECORD_AUXTRACE_INFO, .size = 16 } };
	struct pdata_record_auxtrace rec = {}, got;
	struct pdata_file_header h;
	size_t big = (5u << 20) + 3, small = 1u << 20, off, len;
	char *a = malloc(big), *b = malloc(small), *file;
	char comm[64];
	__u64 nr;
	struct pdata_auxtrace_index_entry e[2];
	struct pdata_file_section table[16];
	int idx = 0;

	assert_non_null(w);
	memset(a, 0xaa, big);
	memset(b, 0xbb, small);
	add_tp_and_dummy(w, 782, 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);
	len = synth__comm_record(comm, sizeof(comm), 1, 1, "x");
	assert_int_equal(pdata_writer__write(w, comm, len), 0);
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, a, big, b, small), 0);
	rec.idx = 1;
	assert_int_equal(pdata_writer__write_auxtrace(w, &rec, b, 8, NULL, 0), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);

	file = test_read_file(f->file.path, &len);
	assert_non_null(file);
	memcpy(&h, file, sizeof(h));
	off = h.data.offset + 16 + 56; /* after the info (16) and the comm (16 + 8 + 32) */
	memcpy(&got, file + off, sizeof(got));
	assert_int_equal(got.header.type, PDATA_RECORD_AUXTRACE);
	assert_int_equal(got.size, big + small + 5);
	assert_int_equal((unsigned char)file[off + 48], 0xaa);
	assert_int_equal((unsigned char)file[off + 48 + big - 1], 0xaa);
	assert_int_equal((unsigned char)file[off + 48 + big], 0xbb);
	assert_int_equal((unsigned char)file[off + 48 + big + small - 1], 0xbb);
	assert_int_equal(file[off + 48 + big + small], 0);
	for (int bit = 0; bit < PDATA_HEADER_AUXTRACE; bit++)
		idx += !!(h.adds_features[0] & (1ULL << bit));
	memcpy(table, file + h.data.offset + h.data.size, (idx + 1) * sizeof(table[0]));
	memcpy(&nr, file + table[idx].offset, 8);
	memcpy(e, file + table[idx].offset + 8, sizeof(e));
	assert_int_equal(nr, 2);
	assert_int_equal(e[0].file_offset, off);
	assert_int_equal(e[1].file_offset, off + 48 + got.size);
	memcpy(&got, file + e[1].file_offset, sizeof(got));
	assert_int_equal(got.idx, 1);
	assert_int_equal(got.size, 8);
	assert_int_equal(h.data.size, 16 + 56 + 48 + big + small + 5 + 48 + 8);
	free(file);
	free(a);
	free(b);
}

static void test_pdata_writer_refuses_existing_file(void **state)
{
	struct fixture *f = *state;
	int fd = open(f->file.path, O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	errno = 0;
	assert_null(pdata_writer__open(f->file.path, false));
	assert_int_equal(errno, EEXIST);
}

static void test_pdata_writer_force_replaces_regular_file(void **state)
{
	struct fixture *f = *state;
	char other[4200];
	struct pdata_writer *w;
	struct stat st;
	int fd = open(f->file.path, O_CREAT | O_WRONLY, 0644);
	char *content;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	/* a hard link to the old file must keep the old content */
	snprintf(other, sizeof(other), "%s/hardlink", f->file.dir);
	assert_int_equal(link(f->file.path, other), 0);
	w = pdata_writer__open(f->file.path, true);
	assert_non_null(w);
	assert_int_equal(stat(f->file.path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	pdata_writer__delete(w);
	content = test_read_file(other, NULL);
	assert_string_equal(content, "keep");
	free(content);
}

static void test_pdata_writer_force_refuses_symlink(void **state)
{
	struct fixture *f = *state;
	char target[4200];
	char *content;
	int fd;

	snprintf(target, sizeof(target), "%s/target", f->file.dir);
	fd = open(target, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "victim", 6), 6);
	close(fd);
	assert_int_equal(symlink(target, f->file.path), 0);
	errno = 0;
	assert_null(pdata_writer__open(f->file.path, true));
	assert_int_equal(errno, ELOOP);
	errno = 0;
	assert_null(pdata_writer__open(f->file.path, false));
	assert_int_equal(errno, EEXIST);
	content = test_read_file(target, NULL);
	assert_string_equal(content, "victim");
	free(content);
	/* a dangling symlink is not followed either */
	unlink(target);
	assert_null(pdata_writer__open(f->file.path, true));
	assert_int_equal(errno, ELOOP);
	assert_int_equal(access(target, F_OK), -1);
}

static void test_pdata_writer_missing_directory(void **state)
{
	struct fixture *f = *state;
	char path[4200];

	snprintf(path, sizeof(path), "%s/no/such/dir/perf.data", f->file.dir);
	errno = 0;
	assert_null(pdata_writer__open(path, false));
	assert_int_equal(errno, ENOENT);
	assert_null(pdata_writer__open(path, true));
	assert_int_equal(errno, ENOENT);
}

static void test_pdata_writer_unlink_removes_file(void **state)
{
	struct fixture *f = *state;
	struct pdata_writer *w = pdata_writer__open(f->file.path, false);

	assert_non_null(w);
	assert_int_equal(access(f->file.path, F_OK), 0);
	assert_int_equal(pdata_writer__unlink(w), 0);
	assert_int_equal(access(f->file.path, F_OK), -1);
	pdata_writer__delete(w);
	pdata_writer__delete(NULL);
}

/* A full disk must surface at finish_round and again at close, never be swallowed. */
static void test_pdata_writer_reports_write_errors(void **state)
{
	struct fixture *f = *state;
	struct rlimit old, lim;
	struct pdata_writer *w;
	char *buf = calloc(1, 65536);
	size_t len = 0;
	int err;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	w = pdata_writer__open(f->file.path, false);
	assert_non_null(w);
	add_tp_and_dummy(w, 782, 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	while (len + 64 <= 65536)
		len += synth__comm_record(buf + len, 65536 - len, 1, 1, "filler");
	lim = old;
	lim.rlim_cur = 8192;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(pdata_writer__write(w, buf, len), 0); /* buffered */
	err = pdata_writer__finish_round(w);
	assert_int_equal(err, -EFBIG);
	assert_int_equal(pdata_writer__write(w, buf, 64), -EFBIG); /* sticky */
	assert_int_equal(pdata_writer__close(w), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	pdata_writer__delete(w);
	free(buf);
}

/*
 * Issue #13, 4: on a full disk, what never reached the file was not counted.
 * Every record handed to the writer is either in the salvaged file or in the
 * lost counts, and the record salvage appends (what the recorder uses to say
 * so in the file) goes in where the cut left room.
 */
static void test_pdata_writer_counts_what_a_full_disk_loses(void **state)
{
	struct fixture *f = *state;
	struct rlimit old, lim;
	struct pdata_writer *w;
	struct pdata_reader *r;
	struct pdata_event ev;
	char rec[64], last[64];
	__u64 given = 0, pos = 0, on_disk = 0, last_seen = 0;
	size_t len, last_len;
	int err = 0, ret;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	w = pdata_writer__open(f->file.path, false);
	assert_non_null(w);
	add_tp_and_dummy(w, 782, 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	len = synth__comm_record(rec, sizeof(rec), 1, 1, "filler");
	last_len = synth__comm_record(last, sizeof(last), 2, 2, "lastword");
	lim = old;
	lim.rlim_cur = 64 << 10;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	/* Rounds of 100 records until the disk is full, and 1000 records more after. */
	for (int round = 0; round < 10000 && !err; round++) {
		for (int i = 0; i < 100; i++, given++)
			assert_true(pdata_writer__write(w, rec, len) == 0 || pdata_writer__failed(w));
		err = pdata_writer__finish_round(w);
	}
	assert_int_equal(err, -EFBIG);
	assert_int_equal(pdata_writer__failed(w), -EFBIG);
	for (int i = 0; i < 1000; i++, given++)
		assert_int_equal(pdata_writer__write(w, rec, len), -EFBIG);
	/* The cut frees the unflushed round: room for the last record. */
	assert_int_equal(pdata_writer__salvage(w, last, last_len), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_true(pdata_writer__stats(w)->salvage_record);

	r = pdata_reader__open(f->file.path);
	assert_non_null(r);
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		if (ev.header->type != PERF_RECORD_COMM)
			continue;
		if (!memcmp(ev.header, last, last_len))
			last_seen++;
		else
			on_disk++;
	}
	assert_int_equal(ret, 0);
	pdata_reader__delete(r);
	assert_int_equal(last_seen, 1);
	assert_true(on_disk > 0 && on_disk < given);
	assert_int_equal(pdata_writer__stats(w)->lost_records, given - on_disk);
	assert_int_equal(pdata_writer__stats(w)->lost_samples, 0);	/* COMM records are not samples */
	pdata_writer__delete(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pdata_writer_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_finish_round_updates_data_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_killed_run_is_readable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_killed_tracepoint_run_is_readable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_rejects_unknown_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_rejects_mismatched_sample_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_tracepoint_needs_tracing_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_auxtrace_padding_and_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_rejects_unknown_id_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_large_auxtrace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_refuses_existing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_force_replaces_regular_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_force_refuses_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_missing_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_unlink_removes_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_reports_write_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_counts_what_a_full_disk_loses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_perf_script_decodes_openat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_perf_report_is_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_perf_reads_intel_pt_auxtrace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_pipe_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdata_writer_killed_pipe_stream, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
