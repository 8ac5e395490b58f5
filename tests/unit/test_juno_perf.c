// SPDX-License-Identifier: BSD-2-Clause
/*
 * Real CoreSight trace through our perf.data writer into perf 6.1: the
 * Juno r1 ETMv4 capture (../shared/data/coresight/juno_r1_1, an ETB buffer
 * of six ETMs, trace IDs 0x10..0x15) is written as one AUXTRACE buffer, with
 * an AUXTRACE_INFO (CoreSight header version 1, one ETMv4 block per CPU)
 * built from the capture's register values (device_N.ini). perf report -D
 * must dump exactly the packets OpenCSD's trc_pkt_lister lists for trace
 * ID 0x10 (reference/juno_r1_1-0x10-decode.txt.gz); and auxtrig script must give
 * the branch samples perf script gives on the same file, per trace ID.
 *
 * What is compared, exactly: every "Idx:N; ID:10;" packet line of perf's
 * dump, in order, against the reference's packet lines with their raw-byte
 * column removed (perf's printer does not show it) and without the 214
 * repeated I_NOT_SYNC packets the lister's full-decode mode emits while it
 * looks for the first A-sync (perf dumps in packet-only mode: one
 * I_NOT_SYNC, README "29,237 in packet-only mode"). That is 29,237 lines,
 * the first one an I_NOT_SYNC at Idx 86, then from Idx 1650 the I_ASYNC.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "auxtrig/format/auxtrace_info.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "cs_fixture.h"
#include "perf_oracle.h"

#define JUNO_DIR	"coresight/juno_r1_1"
#define JUNO_REF	"reference/juno_r1_1-0x10-decode.txt.gz"
#define CS_PMU_TYPE	10
#define EVENT_ID	4242
#define NR_ETMS		6
#define JUNO_DUMP_ADDR	0xffffffc000081000ULL
#define JUNO_DUMP_LEN	0x50000

static char data_dir[4096];

static void need_data(void)
{
	const char *top = getenv("AUXTRIG_TOP"), *ci = getenv("CI");
	char probe[4200];
	struct stat st;

	snprintf(data_dir, sizeof(data_dir), "%s/../shared/data", top ? top : ".");
	snprintf(probe, sizeof(probe), "%s/README.md", data_dir);
	if (stat(probe, &st) == 0)
		return;
	if (ci && !strcmp(ci, "true"))
		fail_msg("shared test data not found at %s", data_dir);
	print_message("skip: shared test data not found at %s\n", data_dir);
	skip();
}

static const char *data_path(const char *rel)
{
	static char path[2][4200];
	static int which;

	which ^= 1;
	snprintf(path[which], sizeof(path[which]), "%s/%s", data_dir, rel);
	return path[which];
}

/* Value of KEY in [SECTION]-less "key=value" file (cpu_N.ini: name=cpu_0), or NULL. */
static char *ini_str(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	static char val[256];
	char line[256];
	size_t n = strlen(key);
	char *ret = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, n) && line[n] == '=') {
			snprintf(val, sizeof(val), "%s", line + n + 1);
			val[strcspn(val, "\r\n")] = 0;
			ret = val;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * The CoreSight AUXTRACE_INFO perf record would have written on the Juno:
 * header version 1, then per CPU N (cpu_N -> ETM_N in trace.ini) the ETMv4
 * block of device "ETM_N": TRCCONFIGR, TRCTRACEIDR, TRCIDR0/1/2/8, TRCAUTHSTATUS.
 */
static size_t juno_info(__u64 *buf, size_t max_u64, __u64 trace_id[NR_ETMS], int first_cpu, int nr_cpus)
{
	struct pdata_record_auxtrace_info *h = (void *)buf;
	__u64 *priv = h->priv;
	size_t n = 3;

	memset(buf, 0, max_u64 * 8);
	priv[0] = AUXTRACE_CS_HEADER_VERSION;
	priv[1] = ((__u64)CS_PMU_TYPE << 32) | nr_cpus;
	priv[2] = 0;
	for (int cpu = first_cpu; cpu < first_cpu + nr_cpus; cpu++) {
		char want[32], path[4300];
		int dev;

		snprintf(want, sizeof(want), "ETM_%d", cpu);
		for (dev = 0; dev < 32; dev++) {
			const char *name;

			snprintf(path, sizeof(path), "%s/device_%d.ini", data_path(JUNO_DIR), dev);
			name = ini_str(path, "name");
			if (name && !strcmp(name, want))
				break;
		}
		assert_true(dev < 32);
		assert_true(sizeof(*h) / 8 + n + 10 <= max_u64);
		priv[n++] = AUXTRACE_CS_ETMV4_MAGIC;
		priv[n++] = cpu;
		priv[n++] = AUXTRACE_CS_ETMV4_NR_PARAMS;
		priv[n++] = cs_fixture__ini_reg(path, "TRCCONFIGR");
		priv[n++] = trace_id[cpu] = cs_fixture__ini_reg(path, "TRCTRACEIDR");
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR0");
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR1");
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR2");
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR8");
		priv[n++] = cs_fixture__ini_reg(path, "TRCAUTHSTATUS");
		for (size_t i = n - 7; i < n; i++)
			assert_true(priv[i] != (__u64)-1);
	}
	h->header.type = PDATA_RECORD_AUXTRACE_INFO;
	h->header.size = sizeof(*h) + n * 8;
	h->type = PDATA_AUXTRACE_CS_ETM;
	return h->header.size;
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

static void write_juno(const char *path, __u64 trace_id[NR_ETMS], int first_cpu, int nr_cpus)
{
	struct perf_event_attr attr = { 0 };
	struct pdata_record_auxtrace at = { 0 };
	struct pdata_writer *w;
	__u64 ids[] = { EVENT_ID }, info[128];
	struct {
		struct perf_event_header h;
		__u64 aux_offset, aux_size, flags;
		struct pdata_sample_id sid;
	} aux = { 0 };
	size_t len, info_len;
	void *trace;

	attr.type = CS_PMU_TYPE;
	attr.size = sizeof(attr);
	attr.sample_period = 1;
	attr.sample_type = PDATA_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	w = pdata_writer__open(path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &attr, "cs_etm//k", ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	info_len = juno_info(info, 128, trace_id, first_cpu, nr_cpus);
	assert_int_equal(pdata_writer__write(w, info, info_len), 0);
	/*
	 * The traced code: the capture's memory image, as a kernel map at the
	 * address it was dumped from (snapshot cpu_N.ini [dump1]). perf makes a
	 * path-named kernel map a module map and reads the file's bytes at
	 * address - start; auxtrig script maps it the same way.
	 */
	{
		char buf[4400];
		struct pdata_record_mmap *mm = (void *)buf;
		const char *img = data_path(JUNO_DIR "/kernel_dump.bin");
		size_t n = (sizeof(*mm) + strlen(img) + 1 + 7) & ~7UL;

		memset(buf, 0, sizeof(buf));
		mm->header.type = PERF_RECORD_MMAP;
		mm->header.misc = PERF_RECORD_MISC_KERNEL;
		mm->header.size = n + sizeof(struct pdata_sample_id);
		mm->pid = (__u32)-1;
		mm->tid = 0;
		mm->start = JUNO_DUMP_ADDR;
		mm->len = JUNO_DUMP_LEN;
		mm->pgoff = 0;
		strcpy(buf + sizeof(*mm), img);
		assert_int_equal(pdata_writer__write(w, buf, mm->header.size), 0);
	}
	trace = slurp(data_path(JUNO_DIR "/cstrace.bin"), &len);
	assert_int_equal(len, 65536);
	at.offset = 0;
	at.reference = 0x1234;
	at.idx = 0;
	at.tid = (__u32)-1;
	at.cpu = 0;
	/* what the kernel says when the ETB's 64 KiB land in the AUX buffer */
	aux.h.type = PERF_RECORD_AUX;
	aux.h.size = sizeof(aux);
	aux.aux_offset = 0;
	aux.aux_size = len;
	aux.flags = 0;
	aux.sid.pid = aux.sid.tid = (__u32)-1;
	aux.sid.time = 1000000;
	aux.sid.cpu = 0;
	aux.sid.id = EVENT_ID;
	assert_int_equal(pdata_writer__write(w, &aux, sizeof(aux)), 0);
	assert_int_equal(pdata_writer__write_auxtrace(w, &at, trace, len, NULL, 0), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);
	free(trace);
}

struct lines {
	char **v;
	size_t nr, cap;
};

static void lines_add(struct lines *l, const char *s, size_t len)
{
	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	l->v[l->nr] = strndup(s, len);
	assert_non_null(l->v[l->nr]);
	l->nr++;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->v[i]);
	free(l->v);
}

/* "Idx:N; ID:xx;" at @s: the length of that prefix, else 0. */
static size_t packet_prefix(const char *s, unsigned int id)
{
	char want[16];
	const char *p = s + 4;
	size_t n;

	if (strncmp(s, "Idx:", 4))
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == s + 4)
		return 0;
	n = snprintf(want, sizeof(want), "; ID:%x;", id);
	return strncmp(p, want, n) ? 0 : (size_t)(p - s) + n;
}

/* perf's dump: lines "\tIdx:N; ID:10;\tI_... : ..." */
static void perf_packets(const char *out, unsigned int id, struct lines *l)
{
	for (const char *p = out; p && *p;) {
		const char *nl = strchrnul(p, '\n');

		if (*p == '\t' && packet_prefix(p + 1, id))
			lines_add(l, p + 1, nl - p - 1);
		p = *nl ? nl + 1 : NULL;
	}
}

/*
 * The reference's packet lines "Idx:N; ID:10; [0x95 ... ];\tI_... : ..." as
 * "Idx:N; ID:10;\tI_... : ...", the I_NOT_SYNC packets after the first left out.
 */
static size_t ref_packets(const char *path, unsigned int id, struct lines *l)
{
	gzFile gz = gzopen(path, "rb");
	char line[4096], buf[4096];
	size_t all = 0, not_sync = 0;

	assert_non_null(gz);
	while (gzgets(gz, line, sizeof(line))) {
		size_t pre = packet_prefix(line, id);
		const char *raw_end;

		line[strcspn(line, "\n")] = 0;
		if (!pre || strncmp(line + pre, " [", 2) || !(raw_end = strstr(line + pre, "];")))
			continue; /* elements, headers */
		all++;
		if (strstr(raw_end, "I_NOT_SYNC") && not_sync++)
			continue;
		snprintf(buf, sizeof(buf), "%.*s%s", (int)pre, line, raw_end + 2);
		lines_add(l, buf, strlen(buf));
	}
	gzclose(gz);
	return all;
}

/* memmem, not strstr: ASan's strstr measures the whole rest of @hay at every call. */
static size_t count(const char *hay, const char *needle)
{
	const char *end = hay + strlen(hay);
	size_t n = 0, len = strlen(needle);

	for (const char *p = hay; (p = memmem(p, end - p, needle, len)); p++)
		n++;
	return n;
}

/* perf's complaint about the kernel map, which a foreign kernel trace cannot satisfy. */
static const char *const kmap_warning =
	"Warning:\nKernel address maps (/proc/{kallsyms,modules}) were restricted.\n";

static void test_juno_perf_dump_matches_reference(void **state)
{
	struct lines got = { 0 }, ref = { 0 };
	__u64 trace_id[NR_ETMS];
	char *dir, path[4300], *out, *hit;
	const char *args[] = { "report", "-D", "-i", path, NULL };
	const char *bad;
	size_t all;

	(void)state;
	need_data();
	perf_oracle__need();
	dir = test_tmpdir__new();
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/juno.data", dir);
	write_juno(path, trace_id, 0, NR_ETMS);
	for (int cpu = 0; cpu < NR_ETMS; cpu++)
		assert_int_equal(trace_id[cpu], 0x10 + cpu);
	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);

	/* perf took our metadata: six ETMv4 blocks, the registers of the capture */
	assert_non_null(strstr(out, "PERF_RECORD_AUXTRACE_INFO type: 3"));
	assert_int_equal(count(out, "\tMagic number\t\t       4040404040404040\n"), NR_ETMS);
	assert_int_equal(count(out, "\tTRCCONFIGR\t\t       c1\n"), NR_ETMS);
	assert_int_equal(count(out, "\tTRCIDR0\t\t\t       28000ea1\n"), NR_ETMS);
	assert_non_null(strstr(out, "\tTRCTRACEIDR\t\t       15\n"));
	assert_non_null(strstr(out, "PERF_RECORD_AUXTRACE size: 0x10000  offset: 0"));
	assert_non_null(strstr(out, "PERF_RECORD_AUX offset: 0 size: 0x10000 flags: 0 []"));
	/* ... the only thing it says is that it has no kernel map for the Juno's kernel */
	hit = strstr(out, kmap_warning);
	if (hit)
		memmove(hit, hit + strlen(kmap_warning), strlen(hit + strlen(kmap_warning)) + 1);
	if ((bad = perf_oracle__problem(out)))
		fail_msg("perf says: %.*s", (int)(strchrnul(bad, '\n') - bad), bad);

	perf_packets(out, 0x10, &got);
	all = ref_packets(data_path(JUNO_REF), 0x10, &ref);
	assert_int_equal(all, 29451);		/* the README's count, full-decode mode */
	assert_int_equal(ref.nr, 29237);	/* packet-only mode */
	if (got.nr != ref.nr)
		fail_msg("perf dumps %zu packets for trace ID 0x10, the reference has %zu", got.nr, ref.nr);
	for (size_t i = 0; i < got.nr; i++)
		if (strcmp(got.v[i], ref.v[i]))
			fail_msg("packet %zu differs:\n perf: %s\n  ref: %s", i, got.v[i], ref.v[i]);
	assert_string_equal(got.v[0], "Idx:86; ID:10;\tI_NOT_SYNC : I Stream not synchronised");
	assert_string_equal(got.v[1], "Idx:1650; ID:10;\tI_ASYNC : Alignment Synchronisation.");
	/* the other sources are demultiplexed too (their counts have no reference here) */
	for (unsigned int id = 0x11; id <= 0x15; id++) {
		struct lines other = { 0 };

		perf_packets(out, id, &other);
		if (id == 0x14)
			assert_int_equal(other.nr, 0);	/* no packets for 0x14 in the capture */
		else
			assert_true(other.nr > 0);
		lines_free(&other);
	}
	lines_free(&got);
	lines_free(&ref);
	free(out);
	test_tmpdir__delete(dir);
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
	*out = calloc(1, 4 << 20);
	assert_non_null(*out);
	n = fread(*out, 1, (4 << 20) - 1, p);
	(*out)[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * "ffffffc000096a0c [unknown] (kernel_dump.bin) => ..." as "ffffffc000096a0c =>
 * ...": the addresses only (perf names a path-named kernel map by its base
 * name, auxtrig by the path; neither has symbols for the image).
 */
static void branch_lines(const char *out, struct lines *l)
{
	for (const char *p = out; p && *p;) {
		const char *nl = strchrnul(p, '\n');
		char buf[512], *d = buf;

		for (const char *q = p; q < nl && d < buf + sizeof(buf) - 1; q++) {
			if (*q == '[' || *q == '(') {	/* skip "[unknown]", "(dso)" */
				const char *c = memchr(q, *q == '[' ? ']' : ')', nl - q);

				if (c) {
					q = c;
					continue;
				}
			}
			if (*q == ' ' && (d == buf || d[-1] == ' '))
				continue;
			*d++ = *q;
		}
		while (d > buf && d[-1] == ' ')
			d--;
		*d = 0;
		if (*buf)
			lines_add(l, buf, strlen(buf));
		p = *nl ? nl + 1 : NULL;
	}
}

/*
 * auxtrig script against perf script on files we wrote: for each ETM of the
 * capture alone (its AUXTRACE_INFO block only, so both decode one trace ID;
 * the buffer and the kernel image map as in write_juno()), the branch samples perf
 * 6.1 synthesises (--itrace=b) and auxtrig's are the same, in order. The
 * counts per trace ID 0x10..0x15 are what perf finds: 4184, 28, 0, 43, 0, 182.
 */
static void test_juno_script_branches_match_perf(void **state)
{
	static const size_t want[NR_ETMS] = { 4184, 28, 0, 43, 0, 182 };
	__u64 trace_id[NR_ETMS];
	char *dir, path[4300], *out;
	const char *pargs[] = { "script", "-i", path, "--itrace=b", "-F", "ip,addr,sym,symoff,dso", NULL };
	const char *aargs[] = { "-i", path, "-F", "ip,addr,sym,symoff,dso", NULL };
	const char *bad;

	(void)state;
	need_data();
	perf_oracle__need();
	dir = test_tmpdir__new();
	assert_non_null(dir);
	for (int cpu = 0; cpu < NR_ETMS; cpu++) {
		struct lines p = { 0 }, a = { 0 };

		snprintf(path, sizeof(path), "%s/juno-cpu%d.data", dir, cpu);
		write_juno(path, trace_id, cpu, 1);
		assert_int_equal(trace_id[cpu], 0x10 + cpu);
		assert_int_equal(perf_oracle__run(NULL, pargs, &out), 0);
		if ((bad = perf_oracle__problem(out)))
			fail_msg("perf script says: %.*s", (int)(strchrnul(bad, '\n') - bad), bad);
		branch_lines(out, &p);
		free(out);
		assert_int_equal(run_auxtrig(aargs, &out), 0);
		branch_lines(out, &a);
		free(out);
		if (p.nr != want[cpu] || a.nr != p.nr)
			fail_msg("trace ID %#x: perf %zu branches, auxtrig %zu, expected %zu", 0x10 + cpu, p.nr, a.nr,
				 want[cpu]);
		for (size_t i = 0; i < p.nr; i++)
			if (strcmp(p.v[i], a.v[i]))
				fail_msg("trace ID %#x, branch %zu: perf '%s', auxtrig '%s'", 0x10 + cpu, i, p.v[i],
					 a.v[i]);
		if (cpu == 0) {
			assert_string_equal(p.v[0], "0 => ffffffc000096a00");
			assert_string_equal(p.v[1], "ffffffc000096a0c => ffffffc000083280"); /* an exception */
		}
		lines_free(&p);
		lines_free(&a);
	}
	test_tmpdir__delete(dir);
}

/*
 * auxtrig script --windows against perf script --itrace=i1i -F ip (one
 * sample per instruction) on the same single-ETM files: the same
 * instructions in the same order, per trace ID 38212, 225, 0, 342, 0, 1467,
 * each window headed by its CPU and the PERF_RECORD_AUX that carried it.
 */
static void test_juno_script_windows_match_perf(void **state)
{
	static const size_t want[NR_ETMS] = { 38212, 225, 0, 342, 0, 1467 };
	__u64 trace_id[NR_ETMS];
	char *dir, path[4300], *out, hdr[256];
	const char *pargs[] = { "script", "-i", path, "--itrace=i1i", "-F", "ip", NULL };
	const char *aargs[] = { "-i", path, "--windows", NULL };

	(void)state;
	need_data();
	perf_oracle__need();
	dir = test_tmpdir__new();
	assert_non_null(dir);
	for (int cpu = 0; cpu < NR_ETMS; cpu++) {
		struct lines p = { 0 }, a = { 0 };
		size_t windows = 0;

		snprintf(path, sizeof(path), "%s/juno-cpu%d.data", dir, cpu);
		write_juno(path, trace_id, cpu, 1);
		assert_int_equal(perf_oracle__run(NULL, pargs, &out), 0);
		branch_lines(out, &p);	/* just the addresses */
		free(out);
		assert_int_equal(run_auxtrig(aargs, &out), 0);
		snprintf(hdr, sizeof(hdr), "# window 1: cpu %d\n", cpu);
		if (want[cpu] && !strstr(out, hdr))
			fail_msg("no '%s' in:\n%.2000s", hdr, out);
		/* the AUX offset of the window's first packet, and the record that published it */
		if (want[cpu] && (!strstr(out, "instructions, trace at AUX offset 0x") ||
		    !strstr(out, " (PERF_RECORD_AUX offset 0 size 0x10000 flags none)\n")))
			fail_msg("window 1 does not name its AUX record:\n%.2000s", out);
		for (const char *q = out; q && *q;) {
			const char *nl = strchrnul(q, '\n');

			if (*q == '#')
				windows += !strncmp(q, "# window ", 9);
			else if (nl > q)
				lines_add(&a, q, strcspn(q, " \n"));	/* the address column */
			q = *nl ? nl + 1 : NULL;
		}
		free(out);
		if (p.nr != want[cpu] || a.nr != p.nr)
			fail_msg("trace ID %#x: perf %zu instructions, auxtrig %zu, expected %zu", 0x10 + cpu, p.nr,
				 a.nr, want[cpu]);
		for (size_t i = 0; i < p.nr; i++)
			if (strcmp(p.v[i], a.v[i]))
				fail_msg("trace ID %#x, instruction %zu: perf %s, auxtrig %s", 0x10 + cpu, i, p.v[i],
					 a.v[i]);
		assert_true(want[cpu] ? windows > 0 : windows == 0);
		lines_free(&p);
		lines_free(&a);
	}
	test_tmpdir__delete(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_juno_perf_dump_matches_reference),
		cmocka_unit_test(test_juno_script_branches_match_perf),
		cmocka_unit_test(test_juno_script_windows_match_perf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
