// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig script` on Intel PT trace of two CPUs: the branch samples of the
 * two buffers come in the order perf 6.1 prints them, in a perf.data file
 * and in the same records as a pipe-mode stream.
 *
 * perf does not sort the samples of all queues by time: before each record
 * of the file (in time order) it runs the queue whose next sample is the
 * earliest, and that queue goes on while its samples are not later than
 * the next queue's (util/intel-pt.c intel_pt_process_queues(), the heap of
 * util/auxtrace.c). So samples of the same time stay with the queue that is
 * running, and a record between them decides which queue runs first.
 *
 * Each file is written here (PSB+ with a TSC, then TIP.PGE / TIP.PGD
 * windows: one branch sample, "0 => ip", per window at the last TSC). The
 * order expected is derived by hand from those rules below; when perf is
 * installed (always under CI) its output must be the same, line for line,
 * and its default lines (--itrace=b) byte for byte auxtrig's.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "perf_oracle.h"

#define PT_TYPE		8	/* the intel_pt PMU type, as AUXTRACE_INFO priv[0] says */
#define PT_TSC_BIT	(1ULL << 10)
#define PT_ID		77
#define T0		1000000000ULL	/* TSC = perf time in ns (time_mult 1, shift 0) */

/* One window of a CPU's trace: TIP.PGE at @ip, a TSC packet before it when @tsc is set. */
struct win {
	__u64 tsc;
	__u64 ip;
};

struct scenario {
	const struct win *cpu[2];	/* each CPU's windows, ended by { 0, 0 } */
	__u64 record_time;		/* a PERF_RECORD_AUX at this time after the trace; 0: none */
	const char *expect;		/* the lines of -F cpu,time,addr, in order */
};

struct pt_enc {
	unsigned char buf[1024];
	size_t len;
};

static void enc(struct pt_enc *e, const void *p, size_t n)
{
	assert_true(e->len + n <= sizeof(e->buf));
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

/* TSC: 0x19 and 7 bytes of the counter (Intel SDM vol. 3 ch. 32.4). */
static void enc_tsc(struct pt_enc *e, __u64 tsc)
{
	unsigned char p[8] = { 0x19 };

	for (int i = 0; i < 7; i++)
		p[1 + i] = (unsigned char)(tsc >> (8 * i));
	enc(e, p, sizeof(p));
}

/* PSB, TSC, MODE.Exec 64-bit, PSBEND; then per window [TSC] TIP.PGE ip (6 bytes), TIP.PGD suppressed. */
static void enc_trace(struct pt_enc *e, const struct win *w)
{
	static const unsigned char psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	static const unsigned char mode64[2] = { 0x99, 0x01 }, psbend[2] = { 0x02, 0x23 }, pgd = 0x01;

	enc(e, psb, sizeof(psb));
	enc_tsc(e, w[0].tsc);
	enc(e, mode64, sizeof(mode64));
	enc(e, psbend, sizeof(psbend));
	for (int i = 0; w[i].ip; i++) {
		unsigned char pge[7] = { 0x71 };	/* IPBytes 3: 6 bytes, sign-extended */

		if (i && w[i].tsc)
			enc_tsc(e, w[i].tsc);
		for (int b = 0; b < 6; b++)
			pge[1 + b] = (unsigned char)(w[i].ip >> (8 * b));
		enc(e, pge, sizeof(pge));
		enc(e, &pgd, 1);
	}
}

/* The file (@pipe: a pipe-mode stream in the file) of two CPUs' buffers. */
static void write_file(const char *path, const struct scenario *sc, bool pipe)
{
	struct perf_event_attr attr = { 0 };
	__u64 ids[] = { PT_ID };
	struct {
		struct pdata_record_auxtrace_info h;
		__u64 priv[18];
	} info = { 0 };
	struct pdata_writer *w;
	int fd = -1;

	attr.type = PT_TYPE;
	attr.size = sizeof(attr);
	attr.config = PT_TSC_BIT;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	if (pipe) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		w = pdata_writer__open_pipe(fd, path);
	} else {
		w = pdata_writer__open(path, true);
	}
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &attr, "intel_pt//u", ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);

	info.h.header.type = PDATA_RECORD_AUXTRACE_INFO;
	info.h.header.size = sizeof(info);
	info.h.type = PDATA_AUXTRACE_INTEL_PT;
	info.priv[0] = PT_TYPE;
	info.priv[1] = 0;		/* time_shift */
	info.priv[2] = 1;		/* time_mult */
	info.priv[3] = 0;		/* time_zero */
	info.priv[4] = 1;		/* cap_user_time_zero */
	info.priv[5] = PT_TSC_BIT;
	info.priv[6] = 1ULL << 11;	/* noretcomp */
	info.priv[9] = 1;		/* per-CPU mmaps */
	info.priv[10] = 1ULL << 9;	/* mtc */
	info.priv[11] = 0xfULL << 14;	/* mtc_period */
	info.priv[14] = 1ULL << 1;	/* cyc */
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);

	for (__u32 cpu = 0; cpu < 2; cpu++) {
		struct pdata_record_auxtrace at = { .reference = T0, .idx = cpu, .tid = (__u32)-1, .cpu = cpu };
		struct pt_enc e = { .len = 0 };

		enc_trace(&e, sc->cpu[cpu]);
		assert_int_equal(pdata_writer__write_auxtrace(w, &at, e.buf, e.len, NULL, 0), 0);
	}
	if (sc->record_time) {
		struct {
			struct perf_event_header h;
			__u64 aux_offset, aux_size, flags;
			struct pdata_sample_id sid;
		} aux = { 0 };

		aux.h.type = PERF_RECORD_AUX;
		aux.h.size = sizeof(aux);
		aux.aux_size = 64;
		aux.sid.pid = aux.sid.tid = (__u32)-1;
		aux.sid.time = sc->record_time;
		aux.sid.cpu = 0;
		aux.sid.id = PT_ID;
		assert_int_equal(pdata_writer__write(w, &aux, sizeof(aux)), 0);
	}
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);
}

/* Run @cmd through the shell; its standard output, malloc()ed. */
static char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *out = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(p);
	assert_non_null(out);
	n = fread(out, 1, (1 << 16) - 1, p);
	out[n] = 0;
	pclose(p);
	return out;
}

/* The lines of @out that are samples ("[cpu] time: ... => addr"), blanks squeezed, joined by '|'. */
static char *sample_lines(const char *out)
{
	char *res = calloc(1, strlen(out) + 2), *d = res;
	const char *p = out;

	assert_non_null(res);
	while (*p) {
		const char *eol = strchr(p, '\n'), *q = p;

		if (!eol)
			eol = p + strlen(p);
		while (q < eol && *q == ' ')
			q++;
		if (q < eol && *q == '[' && memmem(q, (size_t)(eol - q), "=>", 2)) {
			if (d != res)
				*d++ = '|';
			for (; q < eol; q++)
				if (*q != ' ' || (d[-1] != ' ' && d[-1] != '|'))
					*d++ = *q;
			while (d > res && d[-1] == ' ')
				d--;
		}
		p = *eol ? eol + 1 : eol;
	}
	*d = 0;
	return res;
}

static const char *auxtrig_bin(char *buf, size_t size)
{
	const char *build = getenv("AUXTRIG_BUILD"), *top = getenv("AUXTRIG_TOP");

	if (build && *build)
		snprintf(buf, size, "%s/auxtrig", build);
	else
		snprintf(buf, size, "%s/build/auxtrig", top && *top ? top : ".");
	return buf;
}

/* perf's default lines of @path (--itrace=b), byte for byte: who, when, event, ip => addr. */
static void check_default_lines(const char *perf, const char *bin, const char *path, bool pipe)
{
	char cmd[16384], *ours, *theirs;
	const char *in = pipe ? "-" : path;

	snprintf(cmd, sizeof(cmd), "%s%s%s'%s' script -i '%s' --itrace=b 2>/dev/null%s", pipe ? "cat '" : "",
		 pipe ? path : "", pipe ? "' | " : "", bin, in, pipe ? "" : " </dev/null");
	ours = run(cmd);
	snprintf(cmd, sizeof(cmd),
		 "%s%s%sPAGER=cat PERF_PAGER=cat PERF_CONFIG=/dev/null PERF_BUILDID_DIR=/nonexistent HOME=/nonexistent "
		 "'%s' script -i '%s' --itrace=b 2>/dev/null%s", pipe ? "cat '" : "", pipe ? path : "",
		 pipe ? "' | " : "", perf, in, pipe ? "" : " </dev/null");
	theirs = run(cmd);
	if (strcmp(ours, theirs))
		fail_msg("default lines (%s): perf 6.1:\n%s\nauxtrig:\n%s", pipe ? "pipe" : "file", theirs, ours);
	free(ours);
	free(theirs);
}

/*
 * auxtrig's order, and perf's when installed, for @sc written as a file and
 * as a pipe-mode stream (read from standard input, as `... | perf script -i -`).
 */
static void check(const struct scenario *sc)
{
	struct test_datafile df;
	char bin[4200], cmd[16384], pipe_path[4200];
	const char *perf = perf_oracle__path();

	assert_int_equal(test_datafile__new(&df), 0);
	snprintf(df.path, sizeof(df.path), "%s/pt.data", df.dir);
	snprintf(pipe_path, sizeof(pipe_path), "%s/pt.pipe", df.dir);
	write_file(df.path, sc, false);
	write_file(pipe_path, sc, true);
	auxtrig_bin(bin, sizeof(bin));
	for (int pipe = 0; pipe < 2; pipe++) {
		char *out, *got;

		/* cat: perf 6.1 seeks its standard input when it is a file, and reads a stream from the wrong place */
		if (pipe)
			snprintf(cmd, sizeof(cmd), "cat '%s' | '%s' script -i - --itrace=b -F cpu,time,addr 2>&1",
				 pipe_path, bin);
		else
			snprintf(cmd, sizeof(cmd), "'%s' script -i '%s' --itrace=b -F cpu,time,addr 2>&1", bin, df.path);
		out = run(cmd);
		got = sample_lines(out);
		if (strcmp(got, sc->expect))
			fail_msg("auxtrig (%s):\n%s\nexpected: %s", pipe ? "pipe" : "file", out, sc->expect);
		free(got);
		free(out);
		if (!perf) {
			perf_oracle__need();	/* fails under CI, else the hand-derived order was the check */
			continue;
		}
		if (pipe)
			snprintf(cmd, sizeof(cmd),
				 "cat '%s' | PAGER=cat PERF_PAGER=cat PERF_CONFIG=/dev/null PERF_BUILDID_DIR=/nonexistent HOME=/nonexistent "
				 "'%s' script -i - --itrace=b -F cpu,time,addr 2>&1", pipe_path, perf);
		else
			snprintf(cmd, sizeof(cmd),
				 "PAGER=cat PERF_PAGER=cat PERF_CONFIG=/dev/null PERF_BUILDID_DIR=/nonexistent HOME=/nonexistent "
				 "'%s' script -i '%s' --itrace=b -F cpu,time,addr 2>&1 </dev/null", perf, df.path);
		out = run(cmd);
		got = sample_lines(out);
		if (strcmp(got, sc->expect))
			fail_msg("perf 6.1 (%s) says otherwise:\n%s\nexpected: %s", pipe ? "pipe" : "file", out,
				 sc->expect);
		free(got);
		free(out);
		check_default_lines(perf, bin, pipe ? pipe_path : df.path, pipe);
	}
	test_datafile__delete(&df);
}

/*
 * CPU 1 first (at 100 us), then its two samples at 150 us before CPU 0's
 * two at 150 us: CPU 1 runs until its time passes 150 us (CPU 0's next),
 * and its whole trace is not later than that. A sort by time with ties in
 * buffer order puts CPU 0's first.
 */
static void test_script_pt_order_ties_stay_with_running_queue(void **state)
{
	static const struct win cpu0[] = { { T0 + 150000, 0x400000 }, { 0, 0x400010 }, { T0 + 300000, 0x400020 }, { 0, 0 } };
	static const struct win cpu1[] = { { T0 + 100000, 0x500000 }, { T0 + 150000, 0x500010 }, { 0, 0x500020 }, { 0, 0 } };
	const struct scenario sc = {
		.cpu = { cpu0, cpu1 },
		.expect = "[001] 1.000100: => 500000|[001] 1.000150: => 500010|[001] 1.000150: => 500020|"
			  "[000] 1.000150: => 400000|[000] 1.000150: => 400010|[000] 1.000300: => 400020",
	};

	(void)state;
	check(&sc);
}

/*
 * A record at 1200 us stops each queue there: CPU 1 (its first sample
 * 1100 us) goes back on the heap at 1200 us before CPU 0 (1150 us) does,
 * so after the record CPU 1's samples at 1200 us come first. Without the
 * record CPU 0 would have run on through its own.
 */
static void test_script_pt_order_record_splits_queues(void **state)
{
	static const struct win cpu0[] = { { T0 + 1150000, 0x400000 }, { T0 + 1200000, 0x400010 }, { 0, 0x400020 }, { 0, 0 } };
	static const struct win cpu1[] = { { T0 + 1100000, 0x500000 }, { T0 + 1200000, 0x500010 }, { 0, 0x500020 }, { 0, 0 } };
	const struct scenario with = {
		.cpu = { cpu0, cpu1 },
		.record_time = T0 + 1200000,
		.expect = "[001] 1.001100: => 500000|[000] 1.001150: => 400000|[001] 1.001200: => 500010|"
			  "[001] 1.001200: => 500020|[000] 1.001200: => 400010|[000] 1.001200: => 400020",
	};
	const struct scenario without = {
		.cpu = { cpu0, cpu1 },
		.expect = "[001] 1.001100: => 500000|[000] 1.001150: => 400000|[000] 1.001200: => 400010|"
			  "[000] 1.001200: => 400020|[001] 1.001200: => 500010|[001] 1.001200: => 500020",
	};

	(void)state;
	check(&with);
	check(&without);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script_pt_order_ties_stay_with_running_queue),
		cmocka_unit_test(test_script_pt_order_record_splits_queues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
