// SPDX-License-Identifier: BSD-2-Clause
/*
 * Arm SPE through the recorder's AUX session into perf 6.1: a stream of SPE
 * records encoded here (packet formats of the Arm ARM's Statistical
 * Profiling Extension chapter, as the kernel's
 * tools/perf/util/arm-spe-decoder/arm-spe-pkt-decoder reads them: address,
 * operation type, events, counter, context, timestamp, end, padding) is
 * stored by the AUX ring model of an arm_spe_0 PMU (tests/fixtures/sysfs-arm_spe),
 * read by aux_session as on a real machine and written with the SPE
 * AUXTRACE_INFO. perf report -D must decode every packet as encoded, and
 * perf script the samples perf synthesises from those records; auxtrig
 * script must print the same samples and read the packets the same way.
 */
#include <errno.h>
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
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/format/synth.h"
#include "fake_kernel.h"
#include "perf_oracle.h"

/* The code the records point at: functions of this binary, so perf names them. */
__attribute__((noinline)) int spe_load_fn(volatile int *p) { return *p + 1; }
__attribute__((noinline)) int spe_branch_fn(int x) { return x ? spe_load_fn(&x) : 0; }

/* ---- SPE packet encoder ------------------------------------------------- */

struct spe_enc {
	unsigned char buf[1024];
	size_t len;
	/* what perf's packet printer must say for each non-PAD packet */
	struct {
		size_t off;
		char desc[96];
	} want[64];
	size_t nr_want;
};

/* Expect @desc for the packet that starts at the current end of the stream. */
static void spe_want(struct spe_enc *e, const char *fmt, ...)
{
	va_list ap;

	assert_true(e->nr_want < 64);
	e->want[e->nr_want].off = e->len;
	va_start(ap, fmt);
	vsnprintf(e->want[e->nr_want].desc, sizeof(e->want[0].desc), fmt, ap);
	va_end(ap);
	e->nr_want++;
}

static void spe_bytes(struct spe_enc *e, const void *p, size_t n)
{
	assert_true(e->len + n <= sizeof(e->buf));
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

static void spe_u8(struct spe_enc *e, unsigned char b) { spe_bytes(e, &b, 1); }

/* Little-endian payload of 1 << sz bytes. */
static void spe_payload(struct spe_enc *e, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		spe_u8(e, (v >> (8 * i)) & 0xff);
}

/* Address packet, short header 0b10110iii: index 0 PC, 1 branch target, 2 data VA. */
enum { SPE_ADDR_PC = 0, SPE_ADDR_BRANCH = 1, SPE_ADDR_DATA_VA = 2 };
static void spe_addr(struct spe_enc *e, int index, uint64_t addr, int el, int ns)
{
	uint64_t v = addr & ((1ULL << 56) - 1);

	if (index != SPE_ADDR_DATA_VA)	/* PC/branch: NS bit 63, EL bits 62:61 */
		v |= ((uint64_t)ns << 63) | ((uint64_t)el << 61);
	if (index == SPE_ADDR_DATA_VA)
		spe_want(e, "VA %#" PRIx64, addr);
	else
		spe_want(e, "%s %#" PRIx64 " el%d ns=%d", index == SPE_ADDR_PC ? "PC" : "TGT", addr, el, ns);
	spe_u8(e, 0xb0 | index);
	spe_payload(e, v, 8);
}

/* Operation type, header 0b010010cc: class 1 load/store (payload bit 0: store), 2 branch (bit 0: conditional). */
enum { SPE_OP_LDST = 1, SPE_OP_BRANCH = 2 };
static void spe_op(struct spe_enc *e, int cls, unsigned char payload)
{
	if (cls == SPE_OP_LDST)
		spe_want(e, "%s GP-REG", payload & 1 ? "ST" : "LD");
	else
		spe_want(e, "B%s", payload & 1 ? " COND" : "");
	spe_u8(e, 0x48 | cls);
	spe_u8(e, payload);
}

/* Events, header 0b01ss0010 with a 2-byte payload (ss = 1). */
enum {
	SPE_EV_RETIRED = 1 << 1, SPE_EV_L1D_ACCESS = 1 << 2, SPE_EV_L1D_REFILL = 1 << 3,
	SPE_EV_TLB_ACCESS = 1 << 4, SPE_EV_TLB_WALK = 1 << 5, SPE_EV_NOT_TAKEN = 1 << 6,
	SPE_EV_MISPRED = 1 << 7,
};
static void spe_events(struct spe_enc *e, uint16_t ev)
{
	static const char *const names[] = {
		"EXCEPTION-GEN", "RETIRED", "L1D-ACCESS", "L1D-REFILL", "TLB-ACCESS", "TLB-REFILL",
		"NOT-TAKEN", "MISPRED",
	};
	char d[96] = "EV";

	for (int i = 0; i < 8; i++)
		if (ev & (1 << i))
			snprintf(d + strlen(d), sizeof(d) - strlen(d), " %s", names[i]);
	assert_true(ev < 0x100);
	spe_want(e, "%s", d);
	spe_u8(e, 0x52);
	spe_payload(e, ev, 2);
}

/* Counter, header 0b10011iii, 2-byte payload: index 0 total latency, 1 issue latency. */
static void spe_counter(struct spe_enc *e, int index, uint16_t v)
{
	spe_want(e, "LAT %u %s", v, index == 0 ? "TOT" : "ISSUE");
	spe_u8(e, 0x98 | index);
	spe_payload(e, v, 2);
}

/* Context, header 0b011001ii, 4-byte payload: index 1 CONTEXTIDR_EL2. */
static void spe_context(struct spe_enc *e, int index, uint32_t v)
{
	spe_want(e, "CONTEXT %#x el%d", v, index ? 2 : 1);
	spe_u8(e, 0x64 | index);
	spe_payload(e, v, 4);
}

/* Timestamp, header 0x71, 8 bytes: ends a record. */
static void spe_timestamp(struct spe_enc *e, uint64_t ts)
{
	spe_want(e, "TS %" PRIu64, ts);
	spe_u8(e, 0x71);
	spe_payload(e, ts, 8);
}

static void spe_pad_to(struct spe_enc *e, size_t align)
{
	while (e->len % align)
		spe_u8(e, 0x00);
}

/*
 * Three records, each padded to 64 bytes as the driver leaves them:
 *   1. a load at spe_load_fn that missed L1D and the TLB (data VA 0x7f0000001000),
 *   2. a mispredicted conditional branch at spe_branch_fn to spe_load_fn,
 *   3. a store at spe_load_fn that hit, ended by END instead of a timestamp.
 */
static void spe_stream(struct spe_enc *e, uint64_t load_ip, uint64_t branch_ip, pid_t pid)
{
	spe_addr(e, SPE_ADDR_PC, load_ip, 0, 1);
	spe_op(e, SPE_OP_LDST, 0x00);
	spe_events(e, SPE_EV_RETIRED | SPE_EV_L1D_ACCESS | SPE_EV_L1D_REFILL | SPE_EV_TLB_ACCESS | SPE_EV_TLB_WALK);
	spe_counter(e, 0, 42);
	spe_addr(e, SPE_ADDR_DATA_VA, 0x7f0000001000ULL, 0, 0);
	spe_context(e, 1, (uint32_t)pid);
	spe_timestamp(e, 0x1000);
	spe_pad_to(e, 64);

	spe_addr(e, SPE_ADDR_PC, branch_ip, 0, 1);
	spe_op(e, SPE_OP_BRANCH, 0x01);
	spe_events(e, SPE_EV_RETIRED | SPE_EV_MISPRED);
	spe_counter(e, 0, 7);
	spe_addr(e, SPE_ADDR_BRANCH, load_ip, 0, 1);
	spe_context(e, 1, (uint32_t)pid);
	spe_timestamp(e, 0x2000);
	spe_pad_to(e, 64);

	spe_addr(e, SPE_ADDR_PC, load_ip + 4, 0, 1);
	spe_op(e, SPE_OP_LDST, 0x01);
	spe_events(e, SPE_EV_RETIRED | SPE_EV_L1D_ACCESS | SPE_EV_TLB_ACCESS);
	spe_counter(e, 0, 3);
	spe_addr(e, SPE_ADDR_DATA_VA, 0x7f0000002008ULL, 0, 0);
	spe_context(e, 1, (uint32_t)pid);
	spe_want(e, "END");
	spe_u8(e, 0x01);
	spe_pad_to(e, 64);
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

static void test_spe_through_session_into_perf(void **state)
{
	static const int cpus[] = { 0 };
	struct aux_model_config mc = {
		.pmu = AUX_MODEL_ARM_SPE, .data_pages = 16, .aux_pages = 4,
		.pid = (__u32)getpid(), .tid = (__u32)getpid(),
	};
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path("sysfs-arm_spe"), .cpus = cpus,
		.nr_cpus = 1, .pid = -1, .data_pages = 16, .aux_pages = 4, .pause_support = PROBE_PAUSE_YES,
	};
	uint64_t load_ip = (uint64_t)(uintptr_t)spe_load_fn, branch_ip = (uint64_t)(uintptr_t)spe_branch_fn;
	struct fake_kernel *k = calloc(1, sizeof(*k));
	struct perf_sys ops;
	struct aux_session *s;
	struct pdata_writer *w;
	struct record_sink sink;
	struct pmu_set *set;
	struct aux_event ev;
	struct spe_enc e = { 0 };
	char *dir, path[4200], *out;
	const char *dump[] = { "report", "-D", "-i", path, NULL };
	const char *script[] = { "script", "-i", path, "--itrace=fmtbM", "-F", "tid,event,addr,ip,sym", NULL };
	char line[256], *p;
	const char *bad;

	(void)state;
	perf_oracle__need();
	assert_int_equal(spe_branch_fn(1), 2);
	spe_stream(&e, load_ip, branch_ip, getpid());

	/* the plan's part: -e arm_spe_0//u resolved against the fixture's PMUs */
	assert_int_equal(pmu__scan(o.sysfs_root, &set), 0);
	assert_int_equal(aux_event__parse(&ev, set, "arm_spe_0//u", NULL), 0);
	o.event = &ev;
	o.pmus = set;
	assert_int_equal(fake_kernel__init(k, ev.attr.type, &mc, cpus, 1), 0);
	ops = fake_kernel__sys(k);
	assert_int_equal(aux_session__new(&s, &o), 0);
	assert_int_equal(aux_session__open(s, &ops), 0);
	dir = test_tmpdir__new();
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/spe.data", dir);
	w = pdata_writer__open(path, false);
	record_sink__init(&sink, w, NULL, false);
	assert_non_null(w);
	assert_int_equal(aux_session__add_attrs(s, w), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	/*
	 * TIME_CONV from the leader's user page, as the recorder writes it: the
	 * model's page gets an arm64-like counter conversion, identity here (SPE
	 * timestamps are perf ns). perf 6.1's SPE decoder copies the conversion
	 * when it reads AUXTRACE_INFO (arm_spe_process_auxtrace_info()), so
	 * TIME_CONV must come BEFORE it, as perf record writes them; otherwise,
	 * like without the record, perf_time_to_tsc() divides by a time_mult of
	 * 0 and perf script dies of SIGFPE.
	 */
	{
		struct perf_event_mmap_page *pc = aux_model__user_page(&k->models[0]);

		pc->time_shift = 0;
		pc->time_mult = 1;
		pc->time_zero = 0;
		pc->cap_user_time_zero = 1;
		assert_int_equal(synth__time_conv(w, pc), 0);
	}
	assert_int_equal(aux_session__write_info(s, w), 0);
	assert_int_equal(synth__threads(w, getpid()), 0);
	assert_int_equal(aux_session__start(s), 0);
	assert_int_equal(aux_model__hw_write(&k->models[0], e.buf, e.len), e.len);
	aux_model__output_end(&k->models[0], 0);
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

	/* the dump: every packet at its offset, its bytes, perf's reading of it */
	assert_int_equal(perf_oracle__run(NULL, dump, &out), 0);
	assert_non_null(strstr(out, "PERF_RECORD_AUXTRACE_INFO type: 4\n  PMU Type           11\n"));
	snprintf(line, sizeof(line), "PERF_RECORD_AUXTRACE size: %#zx  offset: 0  ref: ", e.len);
	assert_non_null(strstr(out, line));
	snprintf(line, sizeof(line), ". ... ARM SPE data: size %#zx bytes\n", e.len);
	p = strstr(out, line);
	if (!p)
		fail_msg("perf did not decode the SPE buffer:\n%s", out);
	for (size_t i = 0; i < e.nr_want; i++) {
		size_t off = e.want[i].off, n = (i + 1 < e.nr_want ? e.want[i + 1].off : e.len) - off;
		char *nl;

		snprintf(line, sizeof(line), ".  %08zx:  ", off);
		p = strstr(p, line);
		if (!p)
			fail_msg("no packet at offset %#zx (%s) in perf's dump:\n%s", off, e.want[i].desc, out);
		nl = strchrnul(p, '\n');
		/* its bytes (up to the next packet, PADs aside) ... */
		for (size_t b = 0, at = strlen(line); b < n && e.buf[off + b]; b++, at += 3) {
			char hex[4];

			snprintf(hex, sizeof(hex), "%02x ", e.buf[off + b]);
			if (strncmp(p + at, hex, 3))
				fail_msg("packet at %#zx: byte %zu is not %s: %.*s", off, b, hex, (int)(nl - p), p);
		}
		/* ... and what perf read in them, ending the line */
		if ((size_t)(nl - p) < strlen(e.want[i].desc) ||
		    strncmp(nl - strlen(e.want[i].desc), e.want[i].desc, strlen(e.want[i].desc)) ||
		    nl[-(int)strlen(e.want[i].desc) - 1] != ' ')
			fail_msg("packet at %#zx: perf says '%.*s', encoded '%s'", off, (int)(nl - p), p, e.want[i].desc);
		p = nl;
	}
	assert_null(strstr(out, "BAD"));
	if ((bad = perf_oracle__problem(out)))
		fail_msg("perf says: %.*s", (int)(strchrnul(bad, '\n') - bad), bad);
	free(out);

	/*
	 * The samples perf 6.1 synthesises from the records (first-level cache,
	 * TLB, branch and memory events; instruction samples need a sampling
	 * period type SPE does not have): each at its PC, named by our MMAP2,
	 * the data address or branch target as addr, the thread from the
	 * ITRACE_START and the records' CONTEXT.
	 */
	assert_int_equal(perf_oracle__run(NULL, script, &out), 0);
	if ((bad = perf_oracle__problem(out)))
		fail_msg("perf script says: %.*s", (int)(strchrnul(bad, '\n') - bad), bad);
	{
		const struct { const char *ev; uint64_t addr, ip; const char *sym; } want[] = {
			{ "l1d-miss", 0x7f0000001000ULL, load_ip, "spe_load_fn" },
			{ "l1d-access", 0x7f0000001000ULL, load_ip, "spe_load_fn" },
			{ "tlb-miss", 0x7f0000001000ULL, load_ip, "spe_load_fn" },
			{ "tlb-access", 0x7f0000001000ULL, load_ip, "spe_load_fn" },
			{ "memory", 0x7f0000001000ULL, load_ip, "spe_load_fn" },
			{ "branch-miss", load_ip, branch_ip, "spe_branch_fn" },
			{ "l1d-access", 0x7f0000002008ULL, load_ip + 4, "spe_load_fn" },
			{ "tlb-access", 0x7f0000002008ULL, load_ip + 4, "spe_load_fn" },
			{ "memory", 0x7f0000002008ULL, load_ip + 4, "spe_load_fn" },
		};
		char got[256], exp[256];
		size_t i = 0;

		p = out;
		for (; i < sizeof(want) / sizeof(want[0]) && *p; i++) {
			char *nl = strchrnul(p, '\n');

			snprintf(got, sizeof(got), "%.*s", (int)(nl - p), p);
			squeeze(got);
			snprintf(exp, sizeof(exp), "%d %s: %" PRIx64 " %" PRIx64 " %s", (int)getpid(), want[i].ev,
				 want[i].addr, want[i].ip, want[i].sym);
			if (strcmp(got, exp))
				fail_msg("sample %zu: perf script printed '%s', expected '%s':\n%s", i, got, exp, out);
			p = *nl ? nl + 1 : nl;
		}
		if (i != sizeof(want) / sizeof(want[0]) || *p)
			fail_msg("perf script printed %zu samples, not 9:\n%s", i, out);
	}

	/* auxtrig script on the same file: the same samples, line for line */
	{
		const char *aargs[] = { "-i", path, NULL };
		char *ours, *pl, *ol, *ps = NULL, *os = NULL;
		size_t n = 0;

		assert_int_equal(run_auxtrig(aargs, &ours), 0);
		for (pl = strtok_r(out, "\n", &ps), ol = strtok_r(ours, "\n", &os); pl || ol;
		     pl = strtok_r(NULL, "\n", &ps), ol = strtok_r(NULL, "\n", &os), n++) {
			if (!pl || !ol)
				fail_msg("sample %zu: perf '%s', auxtrig '%s'", n, pl ? pl : "(none)", ol ? ol : "(none)");
			squeeze(pl);
			squeeze(ol);
			if (strcmp(pl, ol))
				fail_msg("sample %zu: perf '%s', auxtrig '%s'", n, pl, ol);
		}
		assert_int_equal(n, 9);
		free(ours);
	}
	free(out);

	/* auxtrig script --packets reads each packet as perf's dump does */
	{
		const char *aargs[] = { "-i", path, "--packets", NULL };
		char *ours;

		assert_int_equal(run_auxtrig(aargs, &ours), 0);
		p = ours;
		for (size_t i = 0; i < e.nr_want; i++) {
			char *nl;

			snprintf(line, sizeof(line), "\n%08zx ", e.want[i].off);
			p = strstr(p, line);
			if (!p)
				fail_msg("auxtrig lists no packet at %#zx:\n%s", e.want[i].off, ours);
			p++;
			nl = strchrnul(p, '\n');
			if ((size_t)(nl - p) < strlen(e.want[i].desc) ||
			    strncmp(nl - strlen(e.want[i].desc), e.want[i].desc, strlen(e.want[i].desc)))
				fail_msg("auxtrig: packet at %#zx is '%.*s', encoded '%s'", e.want[i].off, (int)(nl - p), p,
					 e.want[i].desc);
		}
		assert_non_null(strstr(ours, "\n# 3 records, 0 bad bytes\n"));
		free(ours);
	}
	test_tmpdir__delete(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spe_through_session_into_perf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
