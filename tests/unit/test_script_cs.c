// SPDX-License-Identifier: BSD-2-Clause
/*
 * auxtrig script on CoreSight files built from the real Juno ETMv4 capture
 * (cs_fixture.c), against perf 6.1 on the same files:
 *
 *  - six trace IDs in one buffer: the same samples, in the same order, on
 *    the same CPUs as perf prints them (its timeless decode keeps one
 *    previous packet per queue, so a sample may start in another ID);
 *  - pieces cut by PERF_RECORD_AUX records, queues in idx order;
 *  - a RAW (unformatted, TRBE) buffer decoded; one it cannot decode named;
 *  - a kernel module (an ET_REL .ko compiled here around the capture's code)
 *    found under --symfs and in the build-ID cache, mapped as perf maps it;
 *  - a buffer that crashes OpenCSD (and perf) costs one line, not the run;
 *  - --packets indices from the AUX offset, as perf report -D;
 *  - --windows headers name the AUX record of their own piece;
 *  - pipe-mode files and standard input;
 *  - ETMv3/PTM refused with exit status 3;
 *  - trace IDs from PERF_RECORD_AUX_OUTPUT_HW_ID;
 *  - -j N prints what -j 1 prints;
 *  - with the cs_etm timestamp option, perf's order by trace timestamps
 *    (streams of the capture with TIMESTAMP packets inserted): one ETB of
 *    six trace IDs, and one RAW queue per CPU.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/decode/binaries.h"
#include "cs_fixture.h"
#include "uapi/linux/perf_event_aux.h"
#include "perf_oracle.h"

static char *dir;

static void need_data(void)
{
	const char *ci = getenv("CI");

	if (cs_fixture__data_dir())
		return;
	if (ci && !strcmp(ci, "true"))
		fail_msg("shared test data not found");
	print_message("skip: shared test data not found\n");
	skip();
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

/* Run a shell command (formatted) in the test directory; return its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[16384];
	va_list ap;
	int n, st;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", dir);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* perf with no config, no pager, the build-ID cache @bdir ("/nonexistent": none; perf reads no variable for it). */
static int perf(const char *bdir, const char *args)
{
	return sh("PAGER=cat PERF_PAGER=cat PERF_CONFIG=/dev/null '%s' --buildid-dir %s %s", perf_oracle__path(), bdir,
		  args);
}

static int run(const char *args)
{
	return sh("PERF_BUILDID_DIR=/nonexistent '%s' script %s", auxtrig(), args);
}

static char *slurp(const char *name)
{
	char path[4300];
	char *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = test_read_file(path, NULL);
	assert_non_null(s);
	return s;
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Files @a and @b of the test directory have the same bytes, else fail showing where. */
static void same(const char *a, const char *b)
{
	char *x = slurp(a), *y = slurp(b);

	if (strcmp(x, y)) {
		sh("diff '%s' '%s' | head -8 >&2", a, b);
		fail_msg("%s (%zu lines) and %s (%zu lines) differ", a, lines(x), b, lines(y));
	}
	free(x);
	free(y);
}

static void write_fixture(const char *name, const struct cs_fixture_opts *o)
{
	char path[4300];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(cs_fixture__write(path, o, NULL), 0);
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

#define FIELDS "cpu,ip,addr,sym,symoff,dso"

/*
 * The Juno ETB holds six ETMs: perf 6.1 (timeless: the cs_etm attr has no
 * timestamp option) decodes the buffer as one element stream. Its samples
 * and ours are the same bytes: 4440, each on the CPU of its trace ID, three
 * of them spanning two IDs.
 */
static void test_script_cs_trace_ids_in_one_buffer_as_perf(void **state)
{
	struct cs_fixture_opts o = { 0 };
	char *s;

	(void)state;
	need_data();
	perf_oracle__need();
	write_fixture("all.data", &o);
	assert_int_equal(perf("/nonexistent", "script -i all.data --itrace=b -F " FIELDS " >p.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i all.data -F " FIELDS " >a.txt"), 0);
	s = slurp("p.txt");
	assert_int_equal(lines(s), 4440);
	free(s);
	same("p.txt", "a.txt");
	/* the default lines too: perf script's (comm, tid, cpu, period, event, ip sym+off (dso) => addr ...) */
	assert_int_equal(perf("/nonexistent", "script -i all.data --itrace=b >p2.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i all.data >a2.txt"), 0);
	same("p2.txt", "a2.txt");
	/* every CPU of the capture that traced is there */
	for (int cpu = 0; cpu < CS_FIXTURE_NR_ETMS; cpu++) {
		char pat[32];

		if (cpu == 2 || cpu == 4)	/* IDs 0x12, 0x14: no instruction ranges */
			continue;
		snprintf(pat, sizeof(pat), "grep -q '^\\[00%d\\]' a.txt", cpu);
		assert_int_equal(sh("%s", pat), 0);
	}
}

/*
 * Pieces: two PERF_RECORD_AUX records in one buffer are decoded as two
 * pieces (the second from a reset decoder), as two buffers would be; and the
 * queues come in idx order, not file order.
 */
static void test_script_cs_pieces_and_queues_as_perf(void **state)
{
	static const int cpus[] = { 1, 0 };
	struct cs_fixture_opts split = { .first_cpu = 0, .nr_cpus = 1, .nr_aux = 2 };
	struct cs_fixture_opts bufs = { .first_cpu = 0, .nr_cpus = 1, .nr_bufs = 2 };
	struct cs_fixture_opts queues = { .nr_bufs = 2, .cpu_of_buf = cpus };

	(void)state;
	need_data();
	perf_oracle__need();
	write_fixture("split.data", &split);
	write_fixture("bufs.data", &bufs);
	write_fixture("queues.data", &queues);
	for (int i = 0; i < 3; i++) {
		const char *f = i == 0 ? "split" : i == 1 ? "bufs" : "queues";

		assert_int_equal(perf("/nonexistent", i == 0 ? "script -i split.data --itrace=b -F " FIELDS " >p.txt 2>/dev/null" :
						 i == 1 ? "script -i bufs.data --itrace=b -F " FIELDS " >p.txt 2>/dev/null" :
						 "script -i queues.data --itrace=b -F " FIELDS " >p.txt 2>/dev/null"), 0);
		assert_int_equal(sh("PERF_BUILDID_DIR=/nonexistent '%s' script -i %s.data -F " FIELDS " >a.txt", auxtrig(), f), 0);
		same("p.txt", "a.txt");
	}
	/* a buffer cut by its AUX records decodes as two buffers */
	assert_int_equal(sh("PERF_BUILDID_DIR=/nonexistent '%s' script -i split.data -F " FIELDS " >s.txt", auxtrig()), 0);
	assert_int_equal(sh("PERF_BUILDID_DIR=/nonexistent '%s' script -i bufs.data -F " FIELDS " >b.txt", auxtrig()), 0);
	same("s.txt", "b.txt");
}

/*
 * RAW: the trace of ID 0x10 alone, unformatted as TRBE writes it, in a buffer
 * whose PERF_RECORD_AUX says so: the same samples as the formatted buffer
 * (and as perf). A per-thread RAW buffer (cpu -1: a thread's TRBE trace from
 * whichever CPU it ran on) decodes with the first ETM block's parameters, as
 * perf 6.1's one decoder of a raw queue does (perf report -D; perf 6.1's
 * script exits with an error on this fixture): the same samples again
 * (it once could not be decoded at all). A RAW buffer of a CPU the AUXTRACE_INFO
 * does not describe cannot be decoded: exit 1 and one line naming its
 * record, never silence.
 */
static void test_script_cs_raw_buffer(void **state)
{
	struct cs_fixture_opts fmt = { .first_cpu = 0, .nr_cpus = 1 };
	struct cs_fixture_opts raw = { .first_cpu = 0, .nr_cpus = 1, .aux_flags = 0x100 };
	static const int cpu3[] = { 3 }, none[] = { -1 };
	size_t len, n;
	void *juno = cs_fixture__slurp(cs_fixture__path("coresight/juno_r1_1/cstrace.bin"), &len);
	unsigned char *stream;
	char *err;

	(void)state;
	need_data();
	perf_oracle__need();
	assert_non_null(juno);
	stream = cs_fixture__deformat(juno, len, 0x10, &n);
	assert_non_null(stream);
	assert_true(n > 30000);
	raw.trace = stream;
	raw.trace_len = n;
	write_fixture("fmt.data", &fmt);
	write_fixture("raw.data", &raw);
	assert_int_equal(run("-i fmt.data >f.txt"), 0);
	assert_int_equal(run("-i raw.data >r.txt 2>r.err"), 0);
	same("f.txt", "r.txt");
	assert_int_equal(perf("/nonexistent", "script -i raw.data --itrace=b >p.txt 2>/dev/null"), 0);
	same("p.txt", "r.txt");
	err = slurp("f.txt");
	assert_int_equal(lines(err), 4184);
	free(err);
	/* the windows and the instruction ranges of the RAW buffer are those of the formatted one */
	assert_int_equal(run("-i fmt.data --itrace=i >fi.txt"), 0);
	assert_int_equal(run("-i raw.data --itrace=i >ri.txt"), 0);
	same("fi.txt", "ri.txt");
	/* a per-thread RAW buffer: no CPU */
	raw.cpu_of_buf = none;
	write_fixture("rawt.data", &raw);
	assert_int_equal(run("-i rawt.data >rt.txt"), 0);
	same("r.txt", "rt.txt");
	/* a RAW buffer on CPU 3, which has no ETM block */
	raw.cpu_of_buf = cpu3;
	write_fixture("raw3.data", &raw);
	assert_int_equal(run("-i raw3.data >r3.txt 2>r3.err"), 1);
	err = slurp("r3.err");
	if (!strstr(err, "PERF_RECORD_AUX #1 (cpu 3, offset 0") || !strstr(err, "RAW") || !strstr(err, "CPU 3"))
		fail_msg("no line naming the record: %s", err);
	free(err);
	free(stream);
	free(juno);
}

/* The assembly of a kernel module around the capture's code: .text is the Juno memory image. */
static void write_module_source(const char *name, int with_build_id)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "\t.section .init.text,\"ax\",%%progbits\n"
		   "\t.globl init_module\n\t.type init_module,%%function\ninit_module:\n\tret\n"
		   "\t.size init_module, .-init_module\n"
		   "\t.text\n"
		   "\t.globl juno_text\n\t.type juno_text,%%function\njuno_text:\n"
		   "\t.incbin \"%s\", 0, 0x15a00\n\t.size juno_text, .-juno_text\n"
		   "\t.globl juno_fn\n\t.type juno_fn,%%function\njuno_fn:\n"
		   "\t.incbin \"%s\", 0x15a00\n\t.size juno_fn, .-juno_fn\n"
		   "\t.section .modinfo,\"a\",%%progbits\n\t.asciz \"license=GPL\"\n",
		cs_fixture__path("coresight/juno_r1_1/kernel_dump.bin"),
		cs_fixture__path("coresight/juno_r1_1/kernel_dump.bin"));
	if (with_build_id)
		fprintf(f, "\t.section .note.gnu.build-id,\"a\",%%note\n\t.p2align 2\n"
			   "\t.long 4\n\t.long 20\n\t.long 3\n\t.asciz \"GNU\"\n"
			   "\t.byte 0x1d,0xec,0x0d,0xe0,0x15,0x11,0x22,0x33,0x44,0x55,0x66,0x77,0x88,0x99,"
			   "0xaa,0xbb,0xcc,0xdd,0xee,0xff\n");
	fclose(f);
}

/*
 * A kernel module: the trace runs through the .text of juno.ko, an ET_REL
 * object compiled here (clang, arm64) whose .text is the capture's code,
 * loaded (as the kernel loads a module's .text) at the address the capture
 * ran at. Found under --symfs, and in the build-ID cache (as perf archive
 * lays it out) with nothing under --symfs: either way the same samples,
 * symbols and module names as perf, "[juno].init.text" included.
 */
static void test_script_cs_kernel_module(void **state)
{
	static const __u8 bid[20] = { 0x1d, 0xec, 0x0d, 0xe0, 0x15, 0x11, 0x22, 0x33, 0x44, 0x55,
				      0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	struct cs_fixture_opts o = { .first_cpu = 0, .nr_cpus = 1, .image = "/lib/modules/6.1.0-juno/extra/juno.ko",
				     .image_len = 0x60000 };
	char *s;

	(void)state;
	need_data();
	perf_oracle__need();
	write_module_source("juno.S", 0);
	write_module_source("juno_bid.S", 1);
	if (sh("clang --target=aarch64-linux-gnu -c juno.S -o juno.ko && "
	       "clang --target=aarch64-linux-gnu -c juno_bid.S -o juno_bid.ko"))
		fail_msg("clang cannot build the arm64 module (make deps installs clang)");
	assert_int_equal(sh("mkdir -p symfs/lib/modules/6.1.0-juno/extra && cp juno.ko symfs/lib/modules/6.1.0-juno/extra/"), 0);
	write_fixture("mod.data", &o);
	assert_int_equal(perf("/nonexistent", "script -i mod.data --symfs symfs --itrace=b -F " FIELDS " >p.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i mod.data --symfs symfs -F " FIELDS " >a.txt 2>a.err"), 0);
	same("p.txt", "a.txt");
	s = slurp("a.txt");
	assert_int_equal(lines(s), 4184);
	assert_non_null(strstr(s, "[000]  ffffffc000096a0c juno_fn+0xc ([juno]) => ffffffc000083280 juno_text+0x2280 ([juno])\n"));
	assert_non_null(strstr(s, "init_module+0x0 ([juno].init.text)"));	/* perf's map of .init.text at 0 */
	free(s);
	/* callindent names the callee (call, trace start) and the function left (return, trace end) */
	assert_int_equal(perf("/nonexistent", "script -i mod.data --symfs symfs --itrace=b -F flags,callindent,ip,sym,addr,dso "
			      ">pc.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i mod.data --symfs symfs -F flags,callindent,ip,sym,addr,dso >ac.txt 2>/dev/null"), 0);
	same("pc.txt", "ac.txt");
	assert_int_equal(sh("grep -q '  call  *juno_fn  ' ac.txt"), 0);
	s = slurp("a.err");
	if (strstr(s, "none of"))
		fail_msg("the module was not found: %s", s);
	free(s);

	/* the build-ID cache: .build-id/1d/ec0de0...: a directory holding "elf" */
	o.image_bid = bid;
	write_fixture("modbid.data", &o);
	assert_int_equal(sh("mkdir -p cache/.build-id/1d/ec0de0151122334455667788 && "
			    "mkdir -p cache/lib/modules/juno.ko/1dec0de015112233445566778899aabbccddeeff && "
			    "cp juno_bid.ko cache/lib/modules/juno.ko/1dec0de015112233445566778899aabbccddeeff/elf && "
			    "rmdir cache/.build-id/1d/ec0de0151122334455667788 && "
			    "ln -s ../../lib/modules/juno.ko/1dec0de015112233445566778899aabbccddeeff "
			    "cache/.build-id/1d/ec0de015112233445566778899aabbccddeeff"), 0);
	assert_int_equal(perf("$PWD/cache", "script -i modbid.data --itrace=b -F " FIELDS " >pb.txt 2>/dev/null"), 0);
	assert_int_equal(sh("PERF_BUILDID_DIR=$PWD/cache '%s' script -i modbid.data -F " FIELDS " >ab.txt", auxtrig()), 0);
	same("pb.txt", "ab.txt");
	same("p.txt", "ab.txt");
	/* --buildid-dir says the same as the environment */
	assert_int_equal(run("-i modbid.data --buildid-dir cache -F " FIELDS " >ab2.txt"), 0);
	same("ab.txt", "ab2.txt");
	/* a file with another build ID is not used, whatever its path (perf refuses it too) */
	assert_int_equal(sh("mkdir -p symfs2/lib/modules/6.1.0-juno/extra && "
			    "cp juno.ko symfs2/lib/modules/6.1.0-juno/extra/"), 0);
	assert_int_equal(run("-i modbid.data --symfs symfs2 -F " FIELDS " >wrong.txt 2>wrong.err"), 0);
	s = slurp("wrong.txt");
	assert_int_equal(lines(s), 0);
	free(s);
	s = slurp("wrong.err");
	assert_non_null(strstr(s, "none of the 1 traced binaries was found"));
	free(s);
}

/*
 * A module whose .text the kernel put 0x1000 past the module's start (arm64
 * puts .plt and .text.ftrace_trampoline first), the MMAP record giving the
 * module's start: with --kallsyms naming a symbol of its .text where the
 * kernel put it, the module decodes as it ran (perf 6.1's lines for the same
 * module loaded with .text at its start); a name kallsyms gives the module
 * twice, or another module's symbol of that name, places nothing. Without
 * kallsyms, .text is taken at the module's start, as perf takes it, said in
 * one line: the wrong bytes, other samples.
 */
static void test_script_cs_kernel_module_placed_by_kallsyms(void **state)
{
	struct cs_fixture_opts o = { .first_cpu = 0, .nr_cpus = 1, .image = "/lib/modules/6.1.0-juno/extra/juno.ko",
				     .image_len = 0x60000 };
	char *s, *e;

	(void)state;
	need_data();
	perf_oracle__need();
	write_module_source("juno.S", 0);
	if (sh("clang --target=aarch64-linux-gnu -c juno.S -o juno.ko"))
		fail_msg("clang cannot build the arm64 module (make deps installs clang)");
	assert_int_equal(sh("mkdir -p symfs/lib/modules/6.1.0-juno/extra && cp juno.ko symfs/lib/modules/6.1.0-juno/extra/"), 0);
	write_fixture("at_start.data", &o);
	assert_int_equal(perf("/nonexistent", "script -i at_start.data --symfs symfs --itrace=b -F " FIELDS " >p.txt 2>/dev/null"), 0);
	o.image_start = CS_FIXTURE_DUMP_ADDR - 0x1000;
	o.image_len = 0x61000;
	write_fixture("placed.data", &o);
	assert_int_equal(sh("printf '%%s\\n' 'ffffffc000010000 T _text' 'ffffffc000070000 t juno_fn\t[other]' "
			    "'ffffffc000090000 t juno_text\t[juno]' 'ffffffc0000a0000 t juno_text\t[juno]' "
			    "'ffffffc000096a00 t juno_fn\t[juno]' >ks"), 0);

	assert_int_equal(run("-i placed.data --symfs symfs --kallsyms ks -F " FIELDS " >a.txt 2>a.err"), 0);
	same("p.txt", "a.txt");
	e = slurp("a.err");
	assert_null(strstr(e, "taken at the module's start"));
	free(e);
	assert_int_equal(run("-v -i placed.data --symfs symfs --kallsyms ks -F " FIELDS " >/dev/null 2>v.err"), 0);
	e = slurp("v.err");
	if (!strstr(e, "juno.ko: .text at 0xffffffc000081000 (module start + 0x1000), where kallsyms puts juno_fn"))
		fail_msg("-v does not say where .text was placed: %s", e);
	free(e);

	/* no kallsyms: the module's start, said once; not the samples of the trace */
	assert_int_equal(run("-i placed.data --symfs symfs -F " FIELDS " >g.txt 2>g.err"), 0);
	s = slurp("g.txt");
	assert_null(strstr(s, "[000]  ffffffc000096a0c juno_fn+0xc ([juno]) => ffffffc000083280 juno_text+0x2280 ([juno])\n"));
	free(s);
	e = slurp("g.err");
	if (!strstr(e, "juno.ko: no kallsyms names a symbol of its .text: taken at the module's start "
		       "0xffffffc000080000, as perf 6.1 takes it"))
		fail_msg("no word of the guess: %s", e);
	assert_null(strstr(strstr(e, "no kallsyms names") + 1, "no kallsyms names"));	/* once */
	free(e);

	/* kallsyms of another load of the module (elsewhere): refused, said */
	assert_int_equal(sh("printf '%%s\\n' 'ffffffc100096a00 t juno_fn\t[juno]' >ks2"), 0);
	assert_int_equal(run("-i placed.data --symfs symfs --kallsyms ks2 -F " FIELDS " >/dev/null 2>o.err"), 0);
	e = slurp("o.err");
	if (!strstr(e, "outside the module"))
		fail_msg("kallsyms of another load taken: %s", e);
	free(e);
}

/*
 * Through the binaries API: where kallsyms puts juno_fn, .text reads the
 * capture's code (and not at the module's start, where perf 6.1 would
 * take it), and init_module's kallsyms address places the module's
 * .init.text map there instead of at its sh_addr 0.
 */
static void test_script_cs_kernel_module_sections_placed(void **state)
{
	const __u64 start = CS_FIXTURE_DUMP_ADDR - 0x1000, init = 0xffffffc000070000ULL;
	unsigned char want[16], got[16];
	char symfs[4300], ks[4300], sym[128];
	struct binaries *b;
	size_t len;
	unsigned char *juno;
	FILE *f;

	(void)state;
	need_data();
	write_module_source("juno.S", 0);
	if (sh("clang --target=aarch64-linux-gnu -c juno.S -o juno.ko"))
		fail_msg("clang cannot build the arm64 module (make deps installs clang)");
	assert_int_equal(sh("mkdir -p symfs/lib/modules/6.1.0-juno/extra && cp juno.ko symfs/lib/modules/6.1.0-juno/extra/"), 0);
	snprintf(ks, sizeof(ks), "%s/ks", dir);
	f = fopen(ks, "w");
	assert_non_null(f);
	fprintf(f, "ffffffc000096a00 t juno_fn\t[juno]\n%llx t init_module\t[juno]\n", (unsigned long long)init);
	fclose(f);
	juno = cs_fixture__slurp(cs_fixture__path("coresight/juno_r1_1/kernel_dump.bin"), &len);
	assert_true(len > 0x15a10);
	memcpy(want, juno + 0x15a00, sizeof(want));
	free(juno);

	snprintf(symfs, sizeof(symfs), "%s/symfs", dir);
	b = binaries__new(symfs, "/nonexistent");
	assert_non_null(b);
	assert_int_equal(binaries__add_mmap(b, start, 0x61000, 0, "/lib/modules/6.1.0-juno/extra/juno.ko", true, NULL, 0), 0);
	assert_int_equal(binaries__add_kallsyms(b, ks), 0);
	assert_int_equal(binaries__read(b, CS_FIXTURE_DUMP_ADDR + 0x15a00, got, sizeof(got)), sizeof(got));
	assert_memory_equal(got, want, sizeof(got));
	assert_string_equal(binaries__symoff(b, CS_FIXTURE_DUMP_ADDR + 0x15a04, true, sym, sizeof(sym)), "juno_fn+0x4");
	assert_string_equal(binaries__dso_name(b, CS_FIXTURE_DUMP_ADDR + 0x15a04), "[juno]");
	/* the module's first 0x1000 bytes are not .text: nothing read, no symbol */
	assert_int_equal(binaries__read(b, start, got, sizeof(got)), 0);
	assert_string_equal(binaries__symoff(b, start + 0x10, true, sym, sizeof(sym)), "[unknown]");
	/* .init.text where kallsyms puts init_module, not at 0 */
	assert_string_equal(binaries__symoff(b, init, true, sym, sizeof(sym)), "init_module+0x0");
	assert_string_equal(binaries__dso_name(b, init), "[juno].init.text");
	assert_null(binaries__find_in(b, 2, true, false));
	binaries__delete(b);

	/* perf 6.1's guess: .text at the module's start, 0x1000 too low */
	b = binaries__new(symfs, "/nonexistent");
	assert_non_null(b);
	assert_int_equal(binaries__add_mmap(b, start, 0x61000, 0, "/lib/modules/6.1.0-juno/extra/juno.ko", true, NULL, 0), 0);
	assert_int_equal(binaries__read(b, start + 0x15a00, got, sizeof(got)), sizeof(got));
	assert_memory_equal(got, want, sizeof(got));
	assert_string_equal(binaries__map_dso_name(binaries__find_in(b, 2, true, false)), "[juno].init.text");
	binaries__delete(b);
}

/*
 * Byte 0xda43 of the Juno trace set to 0x1e makes OpenCSD 1.3.3 dereference
 * NULL (perf 6.1 dies of SIGSEGV on it). In a file of two buffers, the good
 * one is decoded, the bad one costs one error line naming its AUX record
 * and the offset reached, and the exit status is 1.
 */
static void test_script_cs_decoder_crash_costs_one_buffer(void **state)
{
	struct cs_fixture_opts o = { .first_cpu = 0, .nr_cpus = 1 };
	size_t len;
	unsigned char *juno = cs_fixture__slurp(cs_fixture__path("coresight/juno_r1_1/cstrace.bin"), &len), *two;
	char *err, *line;
	int rc;

	(void)state;
	need_data();
	perf_oracle__need();
	assert_non_null(juno);
	assert_int_equal(len, 65536);
	write_fixture("good.data", &o);
	assert_int_equal(run("-i good.data >good.txt"), 0);

	two = malloc(2 * len);
	assert_non_null(two);
	memcpy(two, juno, len);
	memcpy(two + len, juno, len);
	two[len + 0xda43] = 0x1e;
	o.trace = two + len;
	o.trace_len = len;
	write_fixture("bad.data", &o);
	rc = perf("/nonexistent", "script -i bad.data --itrace=b >/dev/null 2>&1");
	if (rc != 128 + 11)
		fail_msg("perf 6.1 exits %d on the corrupt buffer: not the crash this test is about", rc);

	o.trace = two;
	o.trace_len = 2 * len;
	o.nr_bufs = 2;
	write_fixture("goodbad.data", &o);
	assert_int_equal(run("-i goodbad.data >gb.txt 2>gb.err"), 1);
	same("good.txt", "gb.txt");
	err = slurp("gb.err");
	line = strstr(err, "crashed");
	if (!line || !strstr(err, "PERF_RECORD_AUX #2 (cpu 0, offset 0x10000, size 0x10000)") ||
	    !strstr(err, "at AUX offset 0x1d") || lines(err) != 1)
		fail_msg("not one line naming the second record and the offset: %s", err);
	free(err);

	/* bad first: the good buffer after it is decoded as on its own */
	memcpy(two, two + len, len);
	memcpy(two + len, juno, len);
	write_fixture("badgood.data", &o);
	assert_int_equal(run("-i badgood.data >bg.txt 2>bg.err"), 1);
	same("good.txt", "bg.txt");
	assert_int_equal(run("-i badgood.data -j 2 >bg2.txt 2>/dev/null"), 1);
	same("good.txt", "bg2.txt");
	/* the packet listing and the windows survive it too */
	assert_int_equal(run("-i badgood.data --packets >/dev/null 2>&1"), 1);
	assert_int_equal(run("-i badgood.data --windows >/dev/null 2>&1"), 1);
	free(two);
	free(juno);
}

/* Idx of the "Idx:N; ID:10;" lines of a listing, into @out: perf's dump and ours must agree. */
static void test_script_cs_packets_index_from_aux_offset(void **state)
{
	struct cs_fixture_opts o = { .first_cpu = 0, .nr_cpus = 1, .aux_base = 0x123400 };
	char *s;

	(void)state;
	need_data();
	perf_oracle__need();
	write_fixture("base.data", &o);
	assert_int_equal(perf("/nonexistent", "report -D -i base.data 2>/dev/null | grep -o 'Idx:[0-9]*; ID:10;' >p.txt"), 0);
	assert_int_equal(run("-i base.data --packets | grep -v I_NOT_SYNC | grep -o '^Idx:[0-9]*; ID:10; \\[' | "
			     "sed 's/ \\[$//' >a.txt"), 0);
	/* perf's dump starts with its one I_NOT_SYNC at the buffer's first bytes */
	assert_int_equal(sh("sed -i 1d p.txt"), 0);
	same("p.txt", "a.txt");
	s = slurp("a.txt");
	assert_non_null(strstr(s, "Idx:1195634; ID:10;"));	/* 0x123400 + 1650, the first I_ASYNC */
	assert_int_equal(lines(s), 29236);
	free(s);
}

/*
 * Two PERF_RECORD_AUX records publish the buffer's halves: a window whose
 * trace is in the second half names the second record, not the first.
 */
static void test_script_cs_windows_name_their_aux_record(void **state)
{
	struct cs_fixture_opts o = { .first_cpu = 0, .nr_cpus = 1, .nr_aux = 2 };
	char *s, *second;

	(void)state;
	need_data();
	write_fixture("halves.data", &o);
	assert_int_equal(run("-i halves.data --windows >w.txt"), 0);
	s = slurp("w.txt");
	assert_non_null(strstr(s, "(PERF_RECORD_AUX offset 0 size 0x8000 flags none)"));
	second = strstr(s, "(PERF_RECORD_AUX offset 0x8000 size 0x8000 flags none)");
	assert_non_null(second);
	/* and its AUX offset is in that half */
	assert_int_equal(sh("grep 'PERF_RECORD_AUX offset 0x8000 ' w.txt | grep -vq 'trace at AUX offset 0x[89a-f][0-9a-f]\\{3\\} '"), 1);
	free(s);
	/* the same windows with -j 3 */
	assert_int_equal(run("-i halves.data --windows -j 3 >w3.txt"), 0);
	same("w.txt", "w3.txt");
}

/* A pipe-mode stream (perf inject -o -), from a file and from standard input: the file-mode decode. */
static void test_script_cs_pipe_mode(void **state)
{
	struct cs_fixture_opts o = { 0 };
	char *s;

	(void)state;
	need_data();
	perf_oracle__need();
	write_fixture("file.data", &o);
	assert_int_equal(perf("/nonexistent", "inject -i file.data -o - >pipe.data 2>/dev/null"), 0);
	assert_int_equal(sh("head -c 16 pipe.data | od -An -tx8 | grep -q '0000000000000010'"), 0);
	assert_int_equal(run("-i file.data -F " FIELDS " >f.txt"), 0);
	assert_int_equal(run("-i pipe.data -F " FIELDS " >p.txt"), 0);
	assert_int_equal(sh("cat pipe.data | PERF_BUILDID_DIR=/nonexistent '%s' script -i - -F " FIELDS " >s.txt", auxtrig()), 0);
	same("f.txt", "p.txt");
	same("f.txt", "s.txt");
	s = slurp("f.txt");
	assert_int_equal(lines(s), 4440);
	free(s);
	/* a file-mode file on standard input reads too */
	assert_int_equal(sh("PERF_BUILDID_DIR=/nonexistent '%s' script -i - -F " FIELDS " <file.data >s2.txt", auxtrig()), 0);
	same("f.txt", "s2.txt");
}

/* ETMv3/PTM: refused, one line, no "warning", exit status 3 (the man page's). */
static void test_script_cs_etmv3_refused(void **state)
{
	struct cs_fixture_opts o = { .etmv3 = 1 };
	char *s;

	(void)state;
	need_data();
	write_fixture("v3.data", &o);
	assert_int_equal(run("-i v3.data >v3.txt 2>v3.err"), 3);
	s = slurp("v3.err");
	assert_int_equal(lines(s), 1);
	assert_null(strstr(s, "warning"));
	assert_non_null(strstr(s, "ETMv3/PTM"));
	free(s);
	s = slurp("v3.txt");
	assert_int_equal(strlen(s), 0);
	free(s);
}

/*
 * Trace IDs announced by the kernel (PERF_RECORD_AUX_OUTPUT_HW_ID, newer
 * kernels allocate them): they win over the AUXTRACE_INFO's TRCTRACEIDR. A
 * CPU whose ID perf left "unused" (bit 31) and no HW_ID names is skipped
 * with a warning.
 */
static void test_script_cs_hw_id(void **state)
{
	struct cs_fixture_opts good = { .first_cpu = 0, .nr_cpus = 1 };
	struct cs_fixture_opts hw = { .first_cpu = 0, .nr_cpus = 1, .first_traceidr = 0x42, .hw_id_cpu = 0,
				      .hw_id = 0x10 };
	struct cs_fixture_opts unused = { .first_cpu = 0, .nr_cpus = 1, .first_traceidr = (1ULL << 31) | 0x7f };
	char *s;

	(void)state;
	need_data();
	write_fixture("good.data", &good);
	write_fixture("hw.data", &hw);
	write_fixture("unused.data", &unused);
	assert_int_equal(run("-i good.data >g.txt"), 0);
	assert_int_equal(run("-i hw.data >h.txt"), 0);
	same("g.txt", "h.txt");
	run("-i unused.data >u.txt 2>u.err");
	s = slurp("u.err");
	assert_non_null(strstr(s, "no trace ID for CPU 0"));
	free(s);
}

/* -j N: the same bytes as -j 1, for every output. */
static void test_script_cs_jobs_same_output(void **state)
{
	struct cs_fixture_opts o = { .nr_bufs = 3, .nr_aux = 2, .repeat = 2 };
	static const char *const modes[] = { "-F " FIELDS, "--itrace=i", "--windows", "--call-trace", "--packets" };

	(void)state;
	need_data();
	write_fixture("many.data", &o);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		assert_int_equal(sh("PERF_BUILDID_DIR=/nonexistent '%s' script -i many.data %s >j1.txt", auxtrig(), modes[m]), 0);
		assert_int_equal(sh("PERF_BUILDID_DIR=/nonexistent '%s' script -i many.data %s -j 3 >j3.txt", auxtrig(), modes[m]), 0);
		same("j1.txt", "j3.txt");
	}
}

/* Peak resident set (KiB) of the largest process of shell command @cmd (in the test directory), -1 if it failed. */
static long peak_rss_kib(const char *cmd)
{
	long v = -1;
	int p[2], st;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rusage ru;

		close(p[0]);
		/* only this child's descendants count: not what the test ran before */
		if (!sh("%s", cmd) && !getrusage(RUSAGE_CHILDREN, &ru))
			v = ru.ru_maxrss;
		if (write(p[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &v, sizeof(v)) != sizeof(v))
		v = -1;
	close(p[0]);
	waitpid(pid, &st, 0);
	return v;
}

/*
 * --windows prints each window as it closes: its memory follows the trace
 * it maps, not the instructions it prints. Eight times the buffers print
 * 60 MB more; the peak grows by less than the trace's own size plus 4 MiB
 * (holding the decode would take hundreds).
 */
static void test_script_cs_windows_stream(void **state)
{
	struct cs_fixture_opts small = { .repeat = 8 }, big = { .repeat = 64 };
	char cmd[8800], pa[4300], pb[4300], *s;
	long rss_small, rss_big;
	struct stat a, b;

	(void)state;
	need_data();
	write_fixture("small.data", &small);
	write_fixture("big.data", &big);
	snprintf(pa, sizeof(pa), "%s/small.data", dir);
	snprintf(pb, sizeof(pb), "%s/big.data", dir);
	assert_int_equal(stat(pa, &a), 0);
	assert_int_equal(stat(pb, &b), 0);
	snprintf(cmd, sizeof(cmd), "PERF_BUILDID_DIR=/nonexistent '%s' script -i small.data --windows | wc -c >small.n",
		 auxtrig());
	rss_small = peak_rss_kib(cmd);
	snprintf(cmd, sizeof(cmd), "PERF_BUILDID_DIR=/nonexistent '%s' script -i big.data --windows | wc -c >big.n",
		 auxtrig());
	rss_big = peak_rss_kib(cmd);
	assert_true(rss_small > 0 && rss_big > 0);
	s = slurp("big.n");
	assert_true(strtoull(s, NULL, 10) > 60000000);
	free(s);
	if (rss_big - rss_small > (b.st_size - a.st_size) / 1024 + 4096)
		fail_msg("--windows peak grew from %ld to %ld KiB for %lld more bytes of trace", rss_small, rss_big,
			 (long long)(b.st_size - a.st_size));
	print_message("--windows peak: %ld KiB (%lld bytes of trace), %ld KiB (%lld bytes)\n", rss_small,
		      (long long)a.st_size, rss_big, (long long)b.st_size);
}

/*
 * The code is read from memory: OpenCSD's file accessor made a seek and a
 * read per instruction fetch (193,000 lseek on this file). Under strace,
 * no read, pread or lseek touches the traced binary (it is mapped), in
 * the parent or the workers, for branches, ranges and windows.
 */
static void test_script_cs_code_from_memory(void **state)
{
	static const char *const modes[] = { "-F " FIELDS, "--itrace=i", "--windows" };
	struct cs_fixture_opts o = { .repeat = 4 };
	char *s;

	(void)state;
	need_data();
	if (sh("command -v strace >/dev/null")) {
		const char *ci = getenv("CI");

		if (ci && !strcmp(ci, "true"))
			fail_msg("strace not installed (make deps)");
		print_message("skip: strace not installed\n");
		skip();
	}
	write_fixture("mem.data", &o);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		assert_int_equal(sh("PERF_BUILDID_DIR=/nonexistent strace -f -y -qq -e trace=read,pread64,lseek,readv "
				    "-o st.txt '%s' script -i mem.data %s >out.txt", auxtrig(), modes[m]), 0);
		s = slurp("out.txt");
		assert_true(lines(s) > 1000);	/* the code was read */
		free(s);
		if (!sh("grep -q '[(][0-9]*<[^>]*kernel_dump[.]bin>' st.txt")) {
			sh("grep '[(][0-9]*<[^>]*kernel_dump[.]bin>' st.txt | head -3 >&2");
			fail_msg("%s: the traced binary is read through its file", modes[m]);
		}
	}
}

/* ---- the timestamp option: perf's timed order ------------------------------ */

/*
 * The capture's six streams, each with TIMESTAMP packets (the capture has
 * none: its ETMs ran without TRCCONFIGR.TS): every @every packets, stream i
 * counting from @ts0 + @tsk * i by @step + i.
 */
static void stamped(unsigned int every, __u64 ts0, __u64 tsk, __u64 step, unsigned char *st[CS_FIXTURE_NR_ETMS],
		    size_t sl[CS_FIXTURE_NR_ETMS])
{
	size_t len;
	unsigned char *juno = cs_fixture__slurp(cs_fixture__path("coresight/juno_r1_1/cstrace.bin"), &len);

	assert_non_null(juno);
	for (int i = 0; i < CS_FIXTURE_NR_ETMS; i++) {
		size_t dl, nts = 0;
		unsigned char *d = cs_fixture__deformat(juno, len, 0x10 + i, &dl);

		assert_non_null(d);
		st[i] = cs_fixture__stamp(d, dl, every, ts0 + tsk * i, step + i, &sl[i], &nts);
		assert_non_null(st[i]);
		/* ID 0x14 traced nothing; every other stream has its timestamps */
		assert_true(i == 4 || nts > 0);
		free(d);
	}
	free(juno);
}

/* The stamped streams frame-formatted in one ETB-like buffer, cut into @nr_bufs buffers of CPU 0. */
static void write_timed_formatted(const char *name, unsigned int every, __u64 ts0, __u64 tsk, __u64 step,
				  int nr_bufs, bool ts_option)
{
	struct cs_fixture_timed t = {
		.every = every, .ts0 = ts0, .tsk = tsk, .step = step, .nr_bufs = nr_bufs, .ts_option = ts_option,
	};
	char path[4300];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(cs_fixture__write_timed(path, &t), 0);
}

/* Runs of one CPU in @name's "[NNN] ..." lines. */
static size_t cpu_changes(const char *name)
{
	char cmd[4400], buf[32] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cut -c1-5 '%s/%s' | uniq | wc -l", dir, name);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	pclose(f);
	return strtoul(buf, NULL, 10);
}

/*
 * With the cs_etm timestamp option, perf 6.1 orders the six trace IDs of
 * the ETB by their timestamps, range by range; auxtrig prints the same
 * bytes (three buffers: each from a reset decoder, what OpenCSD had not
 * delivered at the end of one dropped as perf drops it), and not the
 * order it prints for the same trace without the option.
 */
static void test_script_cs_timed_order_as_perf(void **state)
{
	char *s;

	(void)state;
	need_data();
	perf_oracle__need();
	write_timed_formatted("timed.data", 20, 1000, 7, 100, 3, true);
	assert_int_equal(perf("/nonexistent", "script -i timed.data --itrace=b -F " FIELDS " >p.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i timed.data -F " FIELDS " >a.txt"), 0);
	s = slurp("p.txt");
	assert_true(lines(s) > 4000);
	free(s);
	same("p.txt", "a.txt");
	/* interleaved by time: far more runs of one CPU than six trace IDs in turn per buffer */
	assert_true(cpu_changes("a.txt") > 40);
	assert_int_equal(run("-i timed.data -F " FIELDS " -j 2 >a2.txt"), 0);
	same("a.txt", "a2.txt");

	/* the same trace without the option: timeless, as perf, and another order */
	write_timed_formatted("timeless.data", 20, 1000, 7, 100, 3, false);
	assert_int_equal(perf("/nonexistent", "script -i timeless.data --itrace=b -F " FIELDS " >pl.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i timeless.data -F " FIELDS " >al.txt"), 0);
	same("pl.txt", "al.txt");
	assert_int_not_equal(sh("cmp -s a.txt al.txt"), 0);

	/* equal times everywhere (the heap's own order), and timestamps perf cannot use (zero, too small) */
	write_timed_formatted("ties.data", 7, 5000, 0, 0, 2, true);
	assert_int_equal(perf("/nonexistent", "script -i ties.data --itrace=b -F " FIELDS " >pt.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i ties.data -F " FIELDS " >at.txt"), 0);
	same("pt.txt", "at.txt");
	write_timed_formatted("small.data", 20, 0, 0, 1, 2, true);
	assert_int_equal(perf("/nonexistent", "script -i small.data --itrace=b -F " FIELDS " >ps.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i small.data -F " FIELDS " >as.txt 2>as.err"), 0);
	same("ps.txt", "as.txt");
	s = slurp("as.err");
	if (lines(s) != 1 || !strstr(s, "is zero: the trace up to the next timestamp is ordered as if it had none"))
		fail_msg("not one warning about the zero timestamp: %s", s);
	free(s);
}

/*
 * One RAW (TRBE) buffer per CPU, each cut in two: perf decodes the queues
 * to their first timestamps and then interleaves them by time. The same
 * samples in the same order; the CPU column differs on purpose (perf 6.1
 * decodes every RAW buffer as the first CPU's and prints CPU 0, auxtrig as
 * the buffer's own CPU's).
 */
static void test_script_cs_timed_queues_as_perf(void **state)
{
	struct cs_fixture_timed t = { .every = 9, .ts0 = 1000, .tsk = 50, .step = 2, .nr_bufs = 2, .raw = true,
				      .ts_option = true };
	char path[4300], *s;

	(void)state;
	need_data();
	perf_oracle__need();
	snprintf(path, sizeof(path), "%s/raw.data", dir);
	assert_int_equal(cs_fixture__write_timed(path, &t), 0);
	assert_int_equal(perf("/nonexistent", "script -i raw.data --itrace=b -F ip,addr,sym,symoff,dso >p.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i raw.data -F ip,addr,sym,symoff,dso >a.txt"), 0);
	s = slurp("p.txt");
	assert_true(lines(s) > 3500);
	free(s);
	same("p.txt", "a.txt");
	assert_int_equal(perf("/nonexistent", "script -i raw.data --itrace=b -F cpu,ip >pc.txt 2>/dev/null"), 0);
	assert_int_equal(sh("grep -vq '^\\[000\\]' pc.txt"), 1);	/* none: perf's CPU 0 everywhere */
	assert_int_equal(run("-i raw.data -F cpu,ip,addr >ac.txt"), 0);
	assert_true(cpu_changes("ac.txt") > 20);
}

/*
 * perf's branch kinds (-F flags, cs_etm__set_sample_flags()) on the Juno
 * capture: calls, returns, conditional jumps, interrupts and their returns,
 * trace start and end, the same as perf 6.1 prints them, timeless (one
 * element stream) and timed (the queues by timestamp), formatted and RAW;
 * and callindent, whose column depends on every line before.
 */
static void test_script_cs_flags_as_perf(void **state)
{
	struct cs_fixture_timed t = { .every = 9, .ts0 = 1000, .tsk = 50, .step = 2, .nr_bufs = 2, .raw = true,
				      .ts_option = true };
	struct cs_fixture_opts o = { 0 };
	char path[4300];

	(void)state;
	need_data();
	perf_oracle__need();
	write_fixture("all.data", &o);
	assert_int_equal(perf("/nonexistent", "script -i all.data --itrace=b -F cpu,flags," FIELDS " >p.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i all.data -F cpu,flags," FIELDS " >a.txt"), 0);
	same("p.txt", "a.txt");
	/* each kind is there, so the comparison can fail */
	assert_int_equal(sh("grep -q ' call ' a.txt && grep -q ' return ' a.txt && grep -q ' jcc ' a.txt && "
			    "grep -q ' hw int ' a.txt && grep -q ' iret ' a.txt && grep -q ' tr strt ' a.txt && "
			    "grep -q ' tr end ' a.txt"), 0);
	write_timed_formatted("timed.data", 20, 1000, 7, 100, 3, true);
	assert_int_equal(perf("/nonexistent", "script -i timed.data --itrace=b -F flags,ip,addr,sym >pt.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i timed.data -F flags,ip,addr,sym >at.txt"), 0);
	same("pt.txt", "at.txt");
	assert_int_equal(run("-i timed.data -F flags,ip,addr,sym -j 2 >at2.txt"), 0);
	same("at.txt", "at2.txt");
	snprintf(path, sizeof(path), "%s/raw.data", dir);
	assert_int_equal(cs_fixture__write_timed(path, &t), 0);
	assert_int_equal(perf("/nonexistent", "script -i raw.data --itrace=b -F flags,ip,addr >pr.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i raw.data -F flags,ip,addr >ar.txt"), 0);
	same("pr.txt", "ar.txt");
	/* callindent: its column moves as perf moves it, across the workers' pieces (-j 2) and timed */
	assert_int_equal(perf("/nonexistent", "script -i all.data --itrace=b -F flags,callindent,ip,addr >pc.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i all.data -F flags,callindent,ip,addr -j 2 >ac.txt"), 0);
	same("pc.txt", "ac.txt");
	assert_true(sh("awk '{ print index($0, $2) }' ac.txt | sort -u | wc -l | grep -qx 4") == 0);
	assert_int_equal(perf("/nonexistent", "script -i timed.data --itrace=b -F +callindent >pc2.txt 2>/dev/null"), 0);
	assert_int_equal(run("-i timed.data -F +callindent >ac2.txt"), 0);
	same("pc2.txt", "ac2.txt");
}

/*
 * A piece that crashes OpenCSD in the timed decode: one error line naming
 * it, and the other queue's trace decoded as if it were alone.
 */
static void test_script_cs_timed_crash_costs_one_buffer(void **state)
{
	static const unsigned int ids[] = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15 };
	unsigned char *st[CS_FIXTURE_NR_ETMS], *f, *bad;
	size_t sl[CS_FIXTURE_NR_ETMS], n, len;
	struct cs_fixture_buf bufs[2];
	struct cs_fixture_opts o = {
		.config = CS_FIXTURE_ETM_OPT_TS, .configr_or = CS_FIXTURE_TRCCONFIGR_TS, .bufs = bufs, .nr_given = 1,
	};
	char *err;

	(void)state;
	need_data();
	stamped(20, 1000, 7, 100, st, sl);
	f = cs_fixture__format((const unsigned char *const *)st, sl, ids, CS_FIXTURE_NR_ETMS, 13, &n);
	bad = cs_fixture__slurp(cs_fixture__path("coresight/juno_r1_1/cstrace.bin"), &len);
	assert_non_null(f);
	assert_non_null(bad);
	bad[0xda43] = 0x1e;	/* see test_script_cs_decoder_crash_costs_one_buffer */
	bufs[0] = (struct cs_fixture_buf){ .data = f, .len = n, .cpu = 0 };
	bufs[1] = (struct cs_fixture_buf){ .data = bad, .len = len, .cpu = 1 };
	write_fixture("alone.data", &o);
	/* (the branches only: a timed sample's time is the last PERF_RECORD_AUX's, as perf prints it) */
	assert_int_equal(run("-i alone.data -F " FIELDS " >alone.txt"), 0);
	o.nr_given = 2;
	write_fixture("both.data", &o);
	assert_int_equal(run("-i both.data -F " FIELDS " >both.txt 2>both.err"), 1);
	same("alone.txt", "both.txt");
	err = slurp("both.err");
	if (!strstr(err, "crashed") || !strstr(err, "PERF_RECORD_AUX #2 (cpu 1, offset 0, size 0x10000)") ||
	    lines(err) != 1)
		fail_msg("not one line naming the second record: %s", err);
	free(err);
	for (int i = 0; i < CS_FIXTURE_NR_ETMS; i++)
		free(st[i]);
	free(f);
	free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_script_cs_trace_ids_in_one_buffer_as_perf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_pieces_and_queues_as_perf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_raw_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_kernel_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_kernel_module_placed_by_kallsyms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_kernel_module_sections_placed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_decoder_crash_costs_one_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_packets_index_from_aux_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_windows_name_their_aux_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_pipe_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_etmv3_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_hw_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_jobs_same_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_windows_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_code_from_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_timed_order_as_perf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_timed_queues_as_perf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_flags_as_perf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_cs_timed_crash_costs_one_buffer, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
