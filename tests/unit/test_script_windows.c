// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig script --windows` against perf 6.1 on a file we wrote: an Intel
 * PT stream encoded here (two windows over functions of this binary: trace
 * resumed at win_target, paused at its return) goes through the AUX ring
 * model and the recorder's AUX session into perf.data with our COMM/MMAP2.
 * Then:
 *  - perf script --itrace=i0ns -F ip,sym,symoff and auxtrig script --windows
 *    list the same instructions, in order, with the same symbols;
 *  - the window headers name the thread (ITRACE_START, COMM), the trace
 *    enable/disable that opened/closed each window, its time (TSC through
 *    the AUXTRACE_INFO conversion) and the PERF_RECORD_AUX that carried it;
 *  - --call-trace lists the call and the returns perf lists with
 *    --itrace=cr.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
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

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/record/aux_session.h"
#include "auxtrig/record/sink.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/format/tracing_data.h"
#include "fake_kernel.h"
#include "perf_oracle.h"

#if defined(__x86_64__)
/*
 * win_target: +0 mov %edi,%eax  +2 test %edi,%edi  +4 je +5  +6 call win_callee  +0xb ret
 * win_callee: +0 add $1,%eax  +3 ret
 */
__asm__(".text\n"
	".globl win_target\n.type win_target,@function\n"
	"win_target:\n"
	"\tmovl %edi, %eax\n"
	"\ttestl %edi, %edi\n"
	"\tje 1f\n"
	"\tcall win_callee\n"
	"1:\tret\n"
	".size win_target, .-win_target\n"
	".globl win_callee\n.type win_callee,@function\n"
	"win_callee:\n"
	"\taddl $1, %eax\n"
	"\tret\n"
	".size win_callee, .-win_callee\n"
	".globl win_return\n.type win_return,@function\n"
	"win_return:\n"
	"\tret\n"
	".size win_return, .-win_return\n");
int win_target(int x);
int win_callee(int x);
void win_return(void);

/* Intel SDM vol. 3 ch. 32.4 packet encodings. */
struct pt_enc {
	unsigned char buf[512];
	size_t len;
};

static void enc(struct pt_enc *e, const void *p, size_t n)
{
	assert_true(e->len + n <= sizeof(e->buf));
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

/* PSB, TSC (7 bytes), MODE.Exec 64-bit, PSBEND. */
static void enc_psb_plus(struct pt_enc *e, uint64_t tsc)
{
	unsigned char t = 0x19;

	for (int i = 0; i < 8; i++)
		enc(e, "\x02\x82", 2);
	enc(e, &t, 1);
	enc(e, &tsc, 7);
	enc(e, "\x99\x01", 2);
	enc(e, "\x02\x23", 2);
}

static void enc_tsc(struct pt_enc *e, uint64_t tsc)
{
	unsigned char t = 0x19;

	enc(e, &t, 1);
	enc(e, &tsc, 7);
}

/* TIP.PGE (0x11) / TIP.PGD (0x01) with a full 8-byte IP (IPBytes 6). */
static void enc_tip(struct pt_enc *e, unsigned char op, uint64_t ip)
{
	unsigned char h = (6 << 5) | op;

	enc(e, &h, 1);
	enc(e, &ip, 8);
}

/* Short TNT of @n bits, oldest first in @bits[0]. */
static void enc_tnt(struct pt_enc *e, const int *bits, int n)
{
	unsigned char b = 1 << (n + 1);

	for (int i = 0; i < n; i++)
		b |= (bits[i] ? 1 : 0) << (n - i);
	enc(e, &b, 1);
}

static void enc_pad_to(struct pt_enc *e, size_t align)
{
	while (e->len % align)
		enc(e, "\x00", 1);
}

struct file {
	char *dir;
	char path[4200];
	uint64_t fn, callee, ret;
};

/*
 * Window 1: win_target(1): je not taken, call win_callee, its ret (a
 * compressed return: TNT taken), win_target's ret leaves the traced range
 * (TIP.PGD). Window 2: win_target(0): je taken, ret (TIP.PGD).
 */
static void write_edge_sample(struct pdata_writer *w, __u64 id, __u64 ip, __u64 time)
{
	struct {
		struct pdata_sample_head h;
		__u32 raw_size;
		unsigned char raw[52];	/* the 48-byte sys_enter_openat record, padded so the sample ends on 8 */
	} __attribute__((packed)) smp = { 0 };
	_Static_assert(sizeof(smp) == 112, "sample size");
	__u16 type = 782;
	__s32 pid = getpid(), nr = 257;
	__u64 dfd = (__u64)-100;

	smp.h.header.type = PERF_RECORD_SAMPLE;
	smp.h.header.misc = PERF_RECORD_MISC_USER;
	smp.h.header.size = sizeof(smp);
	smp.h.id = id;
	smp.h.ip = ip;
	smp.h.pid = smp.h.tid = getpid();
	smp.h.time = time;
	smp.h.cpu = 0;
	smp.h.period = 1;
	smp.raw_size = sizeof(smp.raw);
	memcpy(smp.raw, &type, 2);
	memcpy(smp.raw + 4, &pid, 4);
	memcpy(smp.raw + 8, &nr, 4);
	memcpy(smp.raw + 16, &dfd, 8);
	assert_int_equal(pdata_writer__write(w, &smp, sizeof(smp)), 0);
}

#define EDGE_ID 7777

/* flags the driver gives the one PERF_RECORD_AUX (perf_aux_output_flag()) */
static __u64 aux_flags;

static void write_file_edges(struct file *f, bool edges)
{
	static const int cpus[] = { 0 };
	const int w1[] = { 0, 1 }, w2[] = { 1 };
	struct aux_model_config mc = {
		.pmu = AUX_MODEL_INTEL_PT, .data_pages = 16, .aux_pages = 4,
		.pid = (__u32)getpid(), .tid = (__u32)getpid(),
	};
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path("sysfs-intel_pt"), .cpus = cpus,
		.nr_cpus = 1, .pid = -1, .data_pages = 16, .aux_pages = 4, .pause_support = PROBE_PAUSE_YES,
	};
	struct fake_kernel *k = calloc(1, sizeof(*k));
	struct perf_event_mmap_page *pc;
	struct perf_sys ops;
	struct aux_session *s;
	struct pdata_writer *w;
	struct record_sink sink;
	struct pmu_set *set;
	struct aux_event ev;
	struct pt_enc e = { 0 };

	assert_non_null(k);
	f->fn = (uint64_t)(uintptr_t)win_target;
	f->callee = (uint64_t)(uintptr_t)win_callee;
	f->ret = (uint64_t)(uintptr_t)win_return;
	assert_int_equal(win_target(1), 2);
	assert_int_equal(win_target(0), 0);

	enc_psb_plus(&e, 1000);
	enc_tip(&e, 0x11, f->fn);
	enc_tnt(&e, w1, 2);
	enc_tsc(&e, 2000);
	enc_tip(&e, 0x01, f->ret);
	enc_tsc(&e, 5000);
	enc_tip(&e, 0x11, f->fn);
	enc_tnt(&e, w2, 1);
	enc_tsc(&e, 6000);
	enc_tip(&e, 0x01, f->ret);
	enc_pad_to(&e, 32);

	/* the plan's part: -e intel_pt//u resolved against the fixture's PMUs */
	assert_int_equal(pmu__scan(o.sysfs_root, &set), 0);
	assert_int_equal(aux_event__parse(&ev, set, "intel_pt//u", NULL), 0);
	o.event = &ev;
	o.pmus = set;
	assert_int_equal(fake_kernel__init(k, ev.attr.type, &mc, cpus, 1), 0);
	/* a TSC conversion in the user page: 1 ns per tick (the model stamps its records 1, 2, ... ns: before the trace) */
	pc = aux_model__user_page(&k->models[0]);
	pc->time_shift = 0;
	pc->time_mult = 1;
	pc->time_zero = 0;
	pc->cap_user_time_zero = 1;
	ops = fake_kernel__sys(k);
	assert_int_equal(aux_session__new(&s, &o), 0);
	assert_int_equal(aux_session__open(s, &ops), 0);
	f->dir = test_tmpdir__new();
	assert_non_null(f->dir);
	snprintf(f->path, sizeof(f->path), "%s/pt.data", f->dir);
	w = pdata_writer__open(f->path, false);
	record_sink__init(&sink, w, NULL, false);
	assert_non_null(w);
	assert_int_equal(aux_session__add_attrs(s, w), 0);
	if (edges) {
		/* the window-edge tracepoint, as a recorder that keeps it would write it */
		struct tracing_event te = { "syscalls", "sys_enter_openat", NULL };
		struct perf_event_attr a = { 0 };
		__u64 id = EDGE_ID;
		size_t len;
		void *td;

		a.type = PERF_TYPE_TRACEPOINT;
		a.size = sizeof(a);
		a.config = 782; /* tests/fixtures/tracefs */
		a.sample_period = 1;
		a.sample_type = PDATA_SAMPLE_TYPE;
		a.sample_id_all = 1;
		assert_int_equal(pdata_writer__add_attr(w, &a, "syscalls:sys_enter_openat", &id, 1), 0);
		assert_int_equal(tracing_data__build(test_fixture_path("tracefs"), &te, 1, &td, &len), 0);
		assert_int_equal(pdata_writer__set_tracing_data(w, td, len), 0);
		free(td);
	}
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(aux_session__write_info(s, w), 0);
	assert_int_equal(synth__threads(w, getpid()), 0);
	assert_int_equal(aux_session__start(s), 0);
	if (edges) {
		/* the enters that opened the windows, just before their TIP.PGEs (TSC 1000, 5000) */
		write_edge_sample(w, EDGE_ID, f->fn, 900);
		write_edge_sample(w, EDGE_ID, f->fn, 4900);
	}
	assert_int_equal(aux_model__hw_write(&k->models[0], e.buf, e.len), e.len);
	aux_model__output_end(&k->models[0], aux_flags);
	fake_kernel__clock_sync(k);
	assert_true(aux_session__drain(s, &sink) > 0);
	assert_int_equal(aux_session__stop(s, &sink), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	aux_session__delete(s);
	pmu_set__delete(set);
	pdata_writer__delete(w);
	assert_true(fake_kernel__all_closed(k));
	fake_kernel__exit(k);
	free(k);
}

static void write_file(struct file *f)
{
	write_file_edges(f, false);
}

/* Run build/auxtrig script with @args; stdout into *out. Return: exit status. */
static int run_auxtrig(const char *const args[], char **out)
{
	const char *build = getenv("AUXTRIG_BUILD"), *top = getenv("AUXTRIG_TOP");
	char bin[4200], cmd[16384];
	size_t n;
	FILE *p;
	int st;

	if (build && *build)
		snprintf(bin, sizeof(bin), "%s/auxtrig", build);
	else
		snprintf(bin, sizeof(bin), "%s/build/auxtrig", top && *top ? top : ".");
	n = snprintf(cmd, sizeof(cmd), "'%s' script", bin);
	for (int i = 0; args[i]; i++)
		n += snprintf(cmd + n, sizeof(cmd) - n, " '%s'", args[i]);
	snprintf(cmd + n, sizeof(cmd) - n, " 2>&1");
	p = popen(cmd, "r");
	assert_non_null(p);
	*out = calloc(1, 1 << 20);
	assert_non_null(*out);
	n = fread(*out, 1, (1 << 20) - 1, p);
	(*out)[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs of blanks to one space, none at the ends. */
static void squeeze(char *s)
{
	char *d = s;

	for (char *p = s; *p; p++) {
		if ((*p == ' ' || *p == '\t') && (d == s || d[-1] == ' '))
			continue;
		*d++ = *p == '\t' ? ' ' : *p;
	}
	while (d > s && d[-1] == ' ')
		d--;
	*d = 0;
}

/* The lines of @out (squeezed), comments (#) left out if @skip_comments. */
static size_t lines(char *out, char **v, size_t max, int skip_comments)
{
	size_t n = 0;

	for (char *p = strtok(out, "\n"); p; p = strtok(NULL, "\n")) {
		squeeze(p);
		if (!*p || (skip_comments && *p == '#'))
			continue;
		assert_true(n < max);
		v[n++] = p;
	}
	return n;
}

static void test_script_windows_instructions_match_perf(void **state)
{
	struct file f = { 0 };
	char *perf_out, *ours, *pv[64], *ov[64], want[256], *hdr;
	const char *perf_args[] = { "script", "-i", f.path, "--itrace=i0ns", "-F", "ip,sym,symoff", NULL };
	const char *our_args[] = { "-i", f.path, "--windows", NULL };
	const char *bad;
	size_t np, no;

	(void)state;
	perf_oracle__need();
	write_file(&f);
	assert_int_equal(perf_oracle__run(NULL, perf_args, &perf_out), 0);
	if ((bad = perf_oracle__problem(perf_out)))
		fail_msg("perf script says: %s", perf_out);
	assert_int_equal(run_auxtrig(our_args, &ours), 0);
	hdr = strdup(ours);

	/* the same instructions, in order: 7 in window 1, 4 in window 2 */
	np = lines(perf_out, pv, 64, 0);
	no = lines(ours, ov, 64, 1);
	if (np != 11 || no != np)
		fail_msg("perf lists %zu instructions, auxtrig %zu (11 expected):\n%s", np, no, hdr);
	for (size_t i = 0; i < np; i++)
		if (strcmp(pv[i], ov[i]))
			fail_msg("instruction %zu: perf '%s', auxtrig '%s'", i, pv[i], ov[i]);
	snprintf(want, sizeof(want), "%" PRIx64 " win_callee+0x3", f.callee + 3);
	assert_string_equal(ov[5], want);

	/* the headers: whose, opened/closed by what, when, carried by which AUX record */
	snprintf(want, sizeof(want),
		 "# window 1: cpu 0, test_script_win %d/%d\n"
		 "#   opened by trace enable (TIP.PGE) at win_target+0x0\n"
		 "#   closed by trace disable (TIP.PGD) at win_return+0x0\n"
		 "#   time 0.000001000 .. 0.000002000, 7 instructions, trace at AUX offset 0x25 "
		 "(PERF_RECORD_AUX offset 0 size 0x60 flags none)\n", (int)getpid(), (int)getpid());
	if (!strstr(hdr, want))
		fail_msg("window 1's header is not\n%s\nin\n%s", want, hdr);
	assert_non_null(strstr(hdr, "#   time 0.000005000 .. 0.000006000, 4 instructions"));
	assert_non_null(strstr(hdr, "# 2 windows\n"));
	free(hdr);
	free(ours);
	free(perf_out);
	test_tmpdir__delete(f.dir);
}

static void test_script_windows_call_trace_matches_perf(void **state)
{
	struct file f = { 0 };
	char *perf_out, *ours, *pv[64], *ov[64], *copy;
	const char *perf_args[] = { "script", "-i", f.path, "--itrace=cr", "-F", "flags,ip,sym,symoff,addr", NULL };
	const char *our_args[] = { "-i", f.path, "--call-trace", NULL };
	const char *bad;
	size_t np, no;

	(void)state;
	perf_oracle__need();
	write_file(&f);
	assert_int_equal(perf_oracle__run(NULL, perf_args, &perf_out), 0);
	if ((bad = perf_oracle__problem(perf_out)))
		fail_msg("perf script says: %s", perf_out);
	assert_int_equal(run_auxtrig(our_args, &ours), 0);
	copy = strdup(ours);
	/*
	 * perf: "tr strt", the call, the callee's return, the "tr end return"
	 * that leaves the window; window 2: "tr strt", "tr end return". Ours
	 * says the same, indented by call depth, under the window headers.
	 */
	np = lines(perf_out, pv, 64, 0);
	no = lines(ours, ov, 64, 1);
	if (np != 6 || no != np)
		fail_msg("perf lists %zu calls/returns, auxtrig %zu (6 expected):\n%s", np, no, copy);
	for (size_t i = 0; i < np; i++)
		if (strcmp(pv[i], ov[i]))
			fail_msg("line %zu: perf '%s', auxtrig '%s'", i, pv[i], ov[i]);
	assert_non_null(strstr(copy, "\n  return ")); /* the callee's return, one call deep */
	free(copy);
	free(ours);
	free(perf_out);
	test_tmpdir__delete(f.dir);
}

/*
 * With the window-edge tracepoint in the file, each window's header names
 * the sys_enter_openat sample that preceded it; perf reads the same file.
 */
static void test_script_windows_name_their_edge_event(void **state)
{
	struct file f = { 0 };
	char *out;
	const char *our_args[] = { "-i", f.path, "--windows", NULL };
	const char *perf_args[] = { "script", "-i", f.path, "--itrace=i0ns", "-F", "event,ip,sym,symoff", NULL };
	const char *bad;

	(void)state;
	perf_oracle__need();
	write_file_edges(&f, true);
	assert_int_equal(run_auxtrig(our_args, &out), 0);
	if (!strstr(out, "#   opened by trace enable (TIP.PGE) at win_target+0x0, after syscalls:sys_enter_openat at "
			 "0.000000900\n"))
		fail_msg("window 1 does not name its enter:\n%s", out);
	if (!strstr(out, ", after syscalls:sys_enter_openat at 0.000004900\n#   closed by trace disable"))
		fail_msg("window 2 does not name its enter:\n%s", out);
	assert_non_null(strstr(out, "# 2 windows\n"));
	free(out);
	assert_int_equal(perf_oracle__run(NULL, perf_args, &out), 0);
	if ((bad = perf_oracle__problem(out)))
		fail_msg("perf script says: %s", out);
	{
		size_t n = 0;

		for (const char *p = out; (p = strstr(p, "syscalls:sys_enter_openat:")); p++)
			n++;
		assert_int_equal(n, 2);
	}
	free(out);
	test_tmpdir__delete(f.dir);
}

/*
 * --format=chrome: both windows as slices on the traced thread, the call to
 * win_callee nested inside window 1 (its time placed by instruction index
 * between the window's ends), the two window-edge samples as instants.
 */
static void test_script_windows_chrome_timeline(void **state)
{
	struct file f = { 0 };
	const char *our_args[] = { "-i", f.path, "--format=chrome", NULL };
	char *out, json[4200], cmd[8600], line[512];
	double win_ts[2], win_end[2], call_ts = -1, call_end = -1;
	int nwin = 0, ncall = 0, ninstant = 0, win_tid[2], call_tid = -1;
	FILE *p;

	(void)state;
	write_file_edges(&f, true);
	assert_int_equal(run_auxtrig(our_args, &out), 0);
	snprintf(json, sizeof(json), "%s/t.json", f.dir);
	p = fopen(json, "w");
	assert_non_null(p);
	fputs(out, p);
	fclose(p);
	/* jq parses it (it is JSON) and lists every event */
	snprintf(cmd, sizeof(cmd),
		 "jq -r '.traceEvents[] | select(.ph != \"M\") | [.ph, .cat, .name, .tid, .ts, (.dur // 0)] | @tsv' '%s'",
		 json);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char ph[8], cat[32], name[128];
		int tid;
		double ts, dur;

		if (sscanf(line, "%7s\t%31s\t%127[^\t]\t%d\t%lf\t%lf", ph, cat, name, &tid, &ts, &dur) != 6)
			fail_msg("unexpected event line: %s", line);
		if (!strcmp(ph, "X") && !strcmp(name, "hardware trace window") && nwin < 2) {
			win_tid[nwin] = tid;
			win_ts[nwin] = ts;
			win_end[nwin++] = ts + dur;
		} else if (!strcmp(ph, "X") && !strcmp(cat, "call")) {
			ncall++;
			assert_string_equal(name, "win_callee");
			call_tid = tid;
			call_ts = ts;
			call_end = ts + dur;
		} else if (!strcmp(ph, "i")) {
			ninstant++;
			assert_string_equal(name, "syscalls:sys_enter_openat");
		} else {
			fail_msg("unexpected event: %s", line);
		}
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(nwin, 2);
	assert_int_equal(ncall, 1);
	assert_int_equal(ninstant, 2);
	assert_int_equal(win_tid[0], call_tid);
	assert_int_equal(win_tid[1], call_tid);
	assert_true(call_tid > 0);
	/* nested: inside window 1, and window 1 before window 2 */
	assert_true(win_ts[0] < win_ts[1]);
	assert_true(call_ts > win_ts[0] && call_end < win_end[0]);
	free(out);
	test_tmpdir__delete(f.dir);
}

/* The AUX record's flags reach the header: a PARTIAL record (gaps in the trace). */
static void test_script_windows_show_aux_flags(void **state)
{
	struct file f = { 0 };
	const char *our_args[] = { "-i", f.path, "--windows", NULL };
	char *out;

	(void)state;
	aux_flags = PERF_AUX_FLAG_PARTIAL;
	write_file(&f);
	aux_flags = 0;
	assert_int_equal(run_auxtrig(our_args, &out), 0);
	if (!strstr(out, "(PERF_RECORD_AUX offset 0 size 0x60 flags PARTIAL)\n"))
		fail_msg("the PARTIAL flag is not in the header:\n%s", out);
	free(out);
	test_tmpdir__delete(f.dir);
}

/* A clear refusal, exit 2: --windows lists instructions, not packets. */
static void test_script_windows_usage(void **state)
{
	struct file f = { 0 };
	const char *both[] = { "-i", f.path, "--windows", "--packets", NULL };
	char *out;

	(void)state;
	write_file(&f);
	assert_int_equal(run_auxtrig(both, &out), 2);
	assert_non_null(strstr(out, "choose one"));
	assert_null(strchr(strchr(out, '\n') + 1, '\n')); /* one line */
	free(out);
	test_tmpdir__delete(f.dir);
}
#else
static void test_script_windows_chrome_timeline(void **state)
{
	(void)state;
	skip();
}

static void test_script_windows_show_aux_flags(void **state)
{
	(void)state;
	skip();
}

static void test_script_windows_name_their_edge_event(void **state)
{
	(void)state;
	skip();
}

static void test_script_windows_usage(void **state)
{
	(void)state;
	skip();
}

static void test_script_windows_instructions_match_perf(void **state)
{
	(void)state;
	skip(); /* the traced functions are x86-64 code */
}

static void test_script_windows_call_trace_matches_perf(void **state)
{
	(void)state;
	skip();
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script_windows_instructions_match_perf),
		cmocka_unit_test(test_script_windows_call_trace_matches_perf),
		cmocka_unit_test(test_script_windows_usage),
		cmocka_unit_test(test_script_windows_show_aux_flags),
		cmocka_unit_test(test_script_windows_name_their_edge_event),
		cmocka_unit_test(test_script_windows_chrome_timeline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
