// SPDX-License-Identifier: BSD-2-Clause
/*
 * Symbols of the traced binaries, against perf 6.1: PLT entries are named
 * "NAME@plt" as perf synthesises them, in a program gcc links against glibc
 * here (for the build's architecture: x86-64 or arm64) and in an arm64
 * position-independent program and shared library clang and ld.lld build
 * here (its text is not at its file offset). The probe is Arm SPE: one load record per address of interest
 * (perf names a record's PC the same way whatever the binary's
 * architecture), written into a perf.data file with the binary mapped as
 * perf records it. perf script and auxtrig script must print the same lines.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/sys/elf_image.h"
#include "perf_oracle.h"

#define SPE_PMU_TYPE	11
#define SPE_EVENT_ID	77
#define SPE_PID		4242

static char *dir;

static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int n, st;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", dir);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *auxtrig(void)
{
	static char bin[4200];
	const char *build = getenv("AUXTRIG_BUILD"), *top = getenv("AUXTRIG_TOP");

	if (build && *build)
		snprintf(bin, sizeof(bin), "%s/auxtrig", build);
	else
		snprintf(bin, sizeof(bin), "%s/build/auxtrig", top && *top ? top : ".");
	return bin;
}

/* ---- a stream of SPE load records, one per PC ----------------------------- */

struct spe_buf {
	unsigned char b[8192];
	size_t len;
};

static void spe_u8(struct spe_buf *s, unsigned char v)
{
	assert_true(s->len < sizeof(s->b));
	s->b[s->len++] = v;
}

static void spe_le(struct spe_buf *s, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		spe_u8(s, v >> (8 * i));
}

/* PC (EL0, NS), LD, events RETIRED|L1D-ACCESS, data VA, CONTEXT pid, timestamp; padded to 64 bytes. */
static void spe_load(struct spe_buf *s, uint64_t pc, uint64_t ts)
{
	spe_u8(s, 0xb0);
	spe_le(s, (pc & ((1ULL << 56) - 1)) | (1ULL << 63), 8);
	spe_u8(s, 0x49);
	spe_u8(s, 0x00);
	spe_u8(s, 0x52);
	spe_le(s, (1 << 1) | (1 << 2), 2);
	spe_u8(s, 0xb2);
	spe_le(s, 0x7f0000001000ULL, 8);
	spe_u8(s, 0x65);
	spe_le(s, SPE_PID, 4);
	spe_u8(s, 0x71);
	spe_le(s, ts, 8);
	while (s->len % 64)
		spe_u8(s, 0);
}

/* perf.data: TIME_CONV, SPE AUXTRACE_INFO, COMM and MMAP2 of @bin at @start, one buffer of @s. */
static void write_spe_file(const char *path, const char *bin, __u64 start, __u64 len, const struct spe_buf *s)
{
	struct perf_event_attr attr = { 0 };
	struct perf_event_mmap_page pc = { 0 };
	struct pdata_writer *w;
	__u64 ids[] = { SPE_EVENT_ID };
	struct {
		struct pdata_record_auxtrace_info h;
		__u64 priv[2];
	} info = { 0 };
	struct pdata_record_auxtrace at = { 0 };
	struct synth_map m = { .start = start, .end = start + len, .pgoff = 0, .prot = 7 };
	char rec[4400];
	size_t n;

	attr.type = SPE_PMU_TYPE;
	attr.size = sizeof(attr);
	attr.sample_period = 1;
	attr.sample_type = PDATA_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	w = pdata_writer__open(path, true);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &attr, "arm_spe_0//u", ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	/* perf 6.1 copies the time conversion when it reads the AUXTRACE_INFO: it comes first */
	pc.time_mult = 1;
	pc.cap_user_time_zero = 1;
	assert_int_equal(synth__time_conv(w, &pc), 0);
	info.h.header.type = PDATA_RECORD_AUXTRACE_INFO;
	info.h.header.size = sizeof(info);
	info.h.type = PDATA_AUXTRACE_ARM_SPE;
	info.priv[0] = SPE_PMU_TYPE;
	info.priv[1] = 1;
	assert_int_equal(pdata_writer__write(w, &info, sizeof(info)), 0);
	n = synth__comm_record(rec, sizeof(rec), SPE_PID, SPE_PID, "pltdemo");
	assert_true(n > 0);
	assert_int_equal(pdata_writer__write(w, rec, n), 0);
	snprintf(m.path, sizeof(m.path), "%s", bin);
	n = synth__mmap2_record(rec, sizeof(rec), SPE_PID, SPE_PID, &m);
	assert_true(n > 0);
	assert_int_equal(pdata_writer__write(w, rec, n), 0);
	at.offset = 0;
	at.reference = 1;
	at.idx = 0;
	at.tid = (__u32)-1;
	at.cpu = 0;
	assert_int_equal(pdata_writer__write_auxtrace(w, &at, s->b, s->len, NULL, 0), 0);
	assert_int_equal(pdata_writer__finish_round(w), 0);
	assert_int_equal(pdata_writer__close(w), 0);
	pdata_writer__delete(w);
}

/* The PCs: inside each PLT entry (per .rela.plt), and in one named function. */
static size_t plt_pcs(const char *path, const char *fn, __u64 start, __u64 *pcs, size_t max)
{
	struct elf_image *img = elf_image__open(path);
	const struct elf_image_sec *plt, *rel;
	__u64 hdr, ent, off;
	size_t n = 0, nrel;

	assert_non_null(img);
	plt = elf_image__sec_by_name(img, ".plt");
	rel = elf_image__sec_by_name(img, ".rela.plt");
	assert_non_null(plt);
	assert_non_null(rel);
	nrel = rel->size / sizeof(Elf64_Rela);
	assert_true(nrel >= 2 && nrel + 2 <= max);
	hdr = ent = elf_image__machine(img) == EM_AARCH64 ? 16 : plt->entsize;
	if (elf_image__machine(img) == EM_AARCH64)
		hdr = 32;
	for (size_t i = 0; i < nrel; i++)
		pcs[n++] = start + plt->offset + hdr + i * ent + 4;
	pcs[n++] = start + plt->offset;		/* the PLT header: no symbol of its own */
	assert_int_equal(elf_image__symbol_file_offset(img, fn, &off), 0);
	pcs[n++] = start + off + 4;
	/* the same symbol by value (.symtab or .dynsym); a name that is not there */
	assert_int_equal(elf_image__symbol_value(img, fn, &ent), 0);
	assert_true(ent != 0);
	assert_int_equal(elf_image__symbol_file_offset(img, "auxtrig_no_such_function", &hdr), -ENOENT);
	assert_int_equal(elf_image__symbol_value(img, "auxtrig_no_such_function", &hdr), -ENOENT);
	elf_image__delete(img);
	return n;
}

/* Runs of blanks as one space: perf pads its columns to the widest event name of the file. */
static void squeeze(char *s)
{
	char *d = s;

	for (char *p = s; *p; p++) {
		if (*p == ' ' && (d == s || d[-1] == ' ' || d[-1] == '\n'))
			continue;
		if (*p == '\n' && d > s && d[-1] == ' ')
			d--;
		*d++ = *p;
	}
	*d = 0;
}

/*
 * Line by line, the outputs are the same, except that inside the PLT
 * [@plt_lo, @plt_hi) we may name the entry NAME@plt where perf names a
 * symbol that also covers it: perf 6.1 extends a size-0 symbol before the
 * PLT (glibc's _init) over the PLT before it adds the PLT symbols, and its
 * symbol tree's shape decides which of the two it finds.
 */
static void compare_lines(const char *bin, char *p, char *a, __u64 plt_lo, __u64 plt_hi)
{
	char *sp = NULL, *sa = NULL, *lp = strtok_r(p, "\n", &sp), *la = strtok_r(a, "\n", &sa);
	size_t n = 0, relaxed = 0;

	for (; lp && la; lp = strtok_r(NULL, "\n", &sp), la = strtok_r(NULL, "\n", &sa), n++) {
		char *pc_s;
		__u64 pc;

		if (!strcmp(lp, la))
			continue;
		/* "tid event: addr ip sym": the ip is the field before the symbol */
		pc_s = strstr(la, ": ");
		assert_non_null(pc_s);
		pc = strtoull(strchr(pc_s + 2, ' ') + 1, NULL, 16);
		if (pc >= plt_lo && pc < plt_hi && strstr(la, "@plt") && !strstr(lp, "@plt")) {
			relaxed++;
			continue;
		}
		fail_msg("%s: line %zu: perf '%s', auxtrig '%s'", bin, n + 1, lp, la);
	}
	if (lp || la)
		fail_msg("%s: perf and auxtrig print different numbers of lines", bin);
	assert_true(relaxed <= 2);	/* one entry, two samples */
}

static void check_binary(const char *bin, const char *fn, __u64 start, const char *const want[])
{
	char path[4300], *p, *a;
	__u64 pcs[32];
	struct spe_buf s = { 0 };
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, bin);
	n = plt_pcs(path, fn, start, pcs, 32);
	for (size_t i = 0; i < n; i++)
		spe_load(&s, pcs[i], 1000 + i);
	snprintf(path, sizeof(path), "%s/%s.data", dir, bin);
	write_spe_file(path, bin, start, 0x100000, &s);
	assert_int_equal(sh("PAGER=cat PERF_CONFIG=/dev/null '%s' --buildid-dir /nonexistent script -i %s.data "
			    "--itrace=fmtbM -F tid,event,addr,ip,sym --symfs . >%s.p 2>/dev/null",
			    perf_oracle__path(), bin, bin), 0);
	assert_int_equal(sh("'%s' script -i %s.data --symfs . >%s.a", auxtrig(), bin, bin), 0);
	snprintf(path, sizeof(path), "%s/%s.p", dir, bin);
	p = test_read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/%s.a", dir, bin);
	a = test_read_file(path, NULL);
	assert_non_null(p);
	assert_non_null(a);
	squeeze(p);
	squeeze(a);
	for (int i = 0; want[i]; i++)
		if (!strstr(a, want[i]))
			fail_msg("auxtrig does not name %s:\n%s", want[i], a);
	compare_lines(bin, p, a, pcs[n - 2], pcs[n - 3] - 4 + 16);	/* header .. end of the last entry */
	free(p);
	free(a);
}

static int setup(void **state)
{
	(void)state;
	dir = test_tmpdir__new();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("AUXTRIG_TEST_KEEP"))
		sh("cd / && rm -rf '%s'", dir);
	free(dir);
	return 0;
}

/*
 * The build's own architecture: gcc's PIE against glibc (x86-64: .plt entries
 * of 16 bytes after a 16-byte header; arm64: after a 32-byte one). perf 6.1
 * names the first entry _init (see compare_lines()).
 */
static void test_script_syms_plt_cc(void **state)
{
	static const char *const want[] = { "calloc@plt", "free@plt", "printf@plt", " main", NULL };

	(void)state;
	perf_oracle__need();
	assert_int_equal(sh("printf '#include <stdio.h>\\n#include <stdlib.h>\\n"
			    "int main(int argc, char **argv) { void *p = calloc(1, argc); printf(\"%%%%p\\\\n\", p); "
			    "free(p); return 0; }\\n' >x.c && cc -O1 -o cc_plt x.c"), 0);
	check_binary("cc_plt", "main", 0x555555554000ULL, want);
}

/*
 * arm64: a PIE and a shared library from clang and ld.lld (a 32-byte PLT
 * header, 16-byte entries). lld puts .text at vaddr = offset + 0x10000.
 */
static void test_script_syms_plt_arm64(void **state)
{
	static const char *const want[] = { "foo@plt", "bar@plt", NULL };

	(void)state;
	perf_oracle__need();
	if (sh("printf 'int foo(int x) { return x + 1; }\\nint bar(int x) { return x * 2; }\\n' >lib.c && "
	       "printf 'int foo(int);\\nint bar(int);\\nint local_fn(int x) { return foo(x) + bar(x); }\\n"
	       "void _start(void) { local_fn(3); for (;;); }\\n' >main.c && "
	       "clang --target=aarch64-linux-gnu -fPIC -O1 -c lib.c -o lib.o && ld.lld -shared -o libfb.so lib.o && "
	       "clang --target=aarch64-linux-gnu -fPIE -O1 -c main.c -o main.o && "
	       "ld.lld -pie -o arm64_plt main.o libfb.so"))
		fail_msg("clang and ld.lld cannot build the arm64 binaries (make deps installs clang and lld)");
	check_binary("arm64_plt", "local_fn", 0x5555550000ULL, want);
}

/* This process's vDSO (every process of the running kernel and this ABI maps the same). */
static const void *own_vdso(size_t *len)
{
	unsigned long start = 0, end = 0;
	char line[4400];
	FILE *fp = fopen("/proc/self/maps", "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, " [vdso]\n") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(fp);
	if (!end)
		fail_msg("this process maps no [vdso]");
	*len = end - start;
	return (const void *)start;
}

/* Replace the file's OSRELEASE (the running kernel's release) by another of the same length. */
static void other_release(const char *path)
{
	struct utsname u;
	char other[sizeof(u.release)];

	assert_int_equal(uname(&u), 0);
	memcpy(other, u.release, sizeof(other));
	other[0] = other[0] == '0' ? '1' : '0';
	assert_int_equal(test_file_replace_last(path, u.release, strlen(u.release) + 1, other, strlen(u.release) + 1), 0);
}

/*
 * [vdso]: no file to find by its path, no build ID recorded. For a file of
 * the running kernel, auxtrig takes its own vDSO, as perf 6.1 does: both
 * name the vDSO's functions the same. A file from another kernel (another
 * release) leaves [vdso] without symbols: its vDSO was another.
 */
static void test_script_syms_vdso(void **state)
{
	const __u64 start = 0x7fff12340000ULL;
	const struct elf_image_sym *sym;
	struct elf_image *img;
	struct spe_buf s = { 0 };
	char path[4300], *p, *a, want[300];
	const void *vdso;
	size_t len, n = 0;

	(void)state;
	perf_oracle__need();
	vdso = own_vdso(&len);
	img = elf_image__new_mem(vdso, len, "[vdso]");
	assert_non_null(img);
	for (size_t k = 0; (sym = elf_image__sym(img, k)) && n < 8; k++) {
		if (sym->offset >= len)
			continue;
		if (!n)
			snprintf(want, sizeof(want), " %s\n", sym->name);
		spe_load(&s, start + sym->offset + (sym->end - sym->offset) / 2, 1000 + n++);
	}
	elf_image__delete(img);
	if (!n)
		fail_msg("this process's vDSO has no function symbols");
	snprintf(path, sizeof(path), "%s/vdso.data", dir);
	write_spe_file(path, "[vdso]", start, len, &s);
	assert_int_equal(sh("PAGER=cat PERF_CONFIG=/dev/null '%s' --buildid-dir /nonexistent script -i vdso.data "
			    "--itrace=fmtbM -F tid,event,addr,ip,sym >vdso.p 2>/dev/null", perf_oracle__path()), 0);
	assert_int_equal(sh("HOME=/nonexistent '%s' script -i vdso.data >vdso.a",
			    auxtrig()), 0);
	snprintf(path, sizeof(path), "%s/vdso.p", dir);
	p = test_read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/vdso.a", dir);
	a = test_read_file(path, NULL);
	assert_non_null(p);
	assert_non_null(a);
	squeeze(p);
	squeeze(a);
	if (!strstr(a, want) && !strstr(a, want + 1))
		fail_msg("auxtrig does not name the vDSO's%s", want);
	assert_string_equal(a, p);
	free(p);
	free(a);

	snprintf(path, sizeof(path), "%s/vdso.data", dir);
	other_release(path);
	assert_int_equal(sh("HOME=/nonexistent '%s' script -i vdso.data >vdso.o",
			    auxtrig()), 0);
	snprintf(path, sizeof(path), "%s/vdso.o", dir);
	a = test_read_file(path, NULL);
	assert_non_null(a);
	if (strstr(a, want))
		fail_msg("a file of another kernel: [vdso] named with this kernel's symbols:\n%s", a);
	assert_non_null(strstr(a, "[unknown]"));
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_script_syms_plt_cc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_syms_plt_arm64, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_syms_vdso, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
