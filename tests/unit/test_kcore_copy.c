// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel's code kept with a recording (record/kcore_copy.c, sys/kcore.c)
 * and read back by the decoder (binaries__add_kernel_code()), on a made-up
 * /proc: kallsyms, modules and a kcore ELF file with the kernel's text, a
 * module area and memory that is not code. What is kept is the text and the
 * module area, byte for byte at their addresses, nothing else; the decoder
 * reads and names kernel and module addresses from it as perf does.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/record/kcore_copy.h"
#include "auxtrig/sys/kcore.h"
#include "perf_oracle.h"

#define KTEXT	0xffffffff81000000ULL
#define KDATA	0xffff888000000000ULL
#define KMOD	0xffffffffc0000000ULL

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = test_tmpdir__new();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[4200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!getenv("AUXTRIG_TEST_KEEP") && system(cmd))
		return -1;
	free(dir);
	return 0;
}

static void put(const char *name, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The byte at kernel address @a in the made-up memory. */
static unsigned char byte_at(unsigned long long a)
{
	return (unsigned char)(a * 7 + (a >> 12));
}

/* proc/kcore: the text (2 MiB), data (not code: no PF_X), the module area (64 KiB). */
static void write_kcore(const char *name)
{
	static const struct { unsigned long long addr, len; unsigned int flags; } seg[] = {
		{ KTEXT, 0x200000, PF_R | PF_W | PF_X }, { KDATA, 0x1000, PF_R | PF_W }, { KMOD, 0x10000, PF_R | PF_W | PF_X },
	};
	Elf64_Ehdr eh = { .e_type = ET_CORE, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 3 };
	unsigned long long off = 0x1000;
	char path[4200];
	int fd;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (int i = 0; i < 3; i++) {
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = seg[i].flags, .p_offset = off, .p_vaddr = seg[i].addr,
				  .p_filesz = seg[i].len, .p_memsz = seg[i].len, .p_align = 4096 };
		unsigned char *b = malloc(seg[i].len);

		assert_non_null(b);
		for (unsigned long long k = 0; k < seg[i].len; k++)
			b[k] = byte_at(seg[i].addr + k);
		assert_int_equal(pwrite(fd, &ph, sizeof(ph), sizeof(eh) + i * sizeof(ph)), sizeof(ph));
		assert_int_equal(pwrite(fd, b, seg[i].len, off), (ssize_t)seg[i].len);
		off += seg[i].len;
		free(b);
	}
	close(fd);
}

static void make_proc(void)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/proc", dir);
	mkdir(path, 0700);
	put("proc/kallsyms",
	    "ffffffff81000000 T _stext\n"
	    "ffffffff81000000 T startup_64\n"
	    "ffffffff81001000 T do_thing\n"
	    "ffffffff81001800 t helper\n"
	    "ffffffff81003000 T _etext\n"
	    "ffff888000000100 D some_data\n"
	    "ffffffffc0001000 t mod_fn\t[mymod]\n"
	    "ffffffffc0002000 t mod_fn2\t[mymod]\n");
	put("proc/modules", "mymod 16384 0 - Live 0xffffffffc0000000\n");
	write_kcore("proc/kcore");
}

/* The copy holds the text and the module area, at their addresses, and nothing else. */
static void test_kcore_copy_keeps_text_and_modules(void **state)
{
	static struct kcore_seg segs[KCORE_MAX_SEGS];
	struct kcore_copy_stats st;
	char from[4200], to[4200], path[4200];
	unsigned char *head = NULL;
	size_t head_len;
	int fd, n;

	(void)state;
	make_proc();
	snprintf(from, sizeof(from), "%s/proc", dir);
	snprintf(to, sizeof(to), "%s/out", dir);
	mkdir(to, 0700);
	assert_int_equal(kcore_copy__run(from, to, &st), 0);
	assert_int_equal(st.kernel_text, 0x3000);	/* _stext to the page of _etext */
	assert_int_equal(st.modules_text, 0x3000);	/* the module to the page after its last symbol */
	assert_int_equal(st.nr_modules, 1);
	assert_true(st.total < 0x8000);			/* not the 2 MiB of the text segment */
	snprintf(path, sizeof(path), "cmp -s '%s/kallsyms' '%s/kallsyms' && cmp -s '%s/modules' '%s/modules'", from, to,
		 from, to);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/kcore", to);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = kcore__read_segs(fd, segs, &head, &head_len);
	assert_int_equal(n, 2);
	assert_int_equal(segs[0].addr, KTEXT);
	assert_int_equal(segs[0].len, 0x3000);
	assert_int_equal(segs[1].addr, KMOD);
	assert_int_equal(segs[1].len, 0x3000);
	for (int i = 0; i < n; i++) {
		unsigned char b[64];

		assert_int_equal(segs[i].offset % 4096, 0);
		assert_int_equal(pread(fd, b, sizeof(b), segs[i].offset + 0x1010), (ssize_t)sizeof(b));
		for (size_t k = 0; k < sizeof(b); k++)
			assert_int_equal(b[k], byte_at(segs[i].addr + 0x1010 + k));
	}
	free(head);
	close(fd);
}

/* The decoder reads and names kernel and module code from the copy, as perf with its kcore_dir. */
static void test_kcore_copy_read_back_by_the_decoder(void **state)
{
	char from[4200], to[4200], kcore[4200], kallsyms[4200], sym[128];
	struct kcore_copy_stats st;
	struct binaries *b;
	unsigned char buf[16];

	(void)state;
	make_proc();
	snprintf(from, sizeof(from), "%s/proc", dir);
	snprintf(to, sizeof(to), "%s/out2", dir);
	mkdir(to, 0700);
	assert_int_equal(kcore_copy__run(from, to, &st), 0);
	snprintf(kcore, sizeof(kcore), "%s/kcore", to);
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", to);
	b = binaries__new(NULL, "/nonexistent");
	assert_non_null(b);
	assert_int_equal(binaries__add_mmap(b, KTEXT, 0x1000000, KTEXT, "[kernel.kallsyms]_text", true, NULL, 0), 0);
	assert_int_equal(binaries__add_mmap(b, KMOD, 0x4000, 0, "/lib/modules/x/mymod.ko", true, NULL, 0), 0);
	assert_int_equal(binaries__add_kernel_code(b, kcore, kallsyms), 0);
	assert_int_equal(binaries__read(b, KTEXT + 0x1004, buf, sizeof(buf)), sizeof(buf));
	for (size_t k = 0; k < sizeof(buf); k++)
		assert_int_equal(buf[k], byte_at(KTEXT + 0x1004 + k));
	assert_int_equal(binaries__read(b, KMOD + 0x1010, buf, 4), 4);
	assert_int_equal(buf[0], byte_at(KMOD + 0x1010));
	assert_int_equal(binaries__read(b, KTEXT + 0x100000, buf, 4), 0);	/* past _etext: not kept */
	assert_int_equal(binaries__read(b, KDATA + 0x100, buf, 4), 0);
	assert_string_equal(binaries__symoff(b, KTEXT + 0x1004, true, sym, sizeof(sym)), "do_thing+0x4");
	assert_string_equal(binaries__symoff(b, KTEXT + 0x1804, true, sym, sizeof(sym)), "helper+0x4");
	/* module code: kallsyms' name, in [kernel.kallsyms] as perf maps all of kcore */
	assert_string_equal(binaries__symoff(b, KMOD + 0x1010, true, sym, sizeof(sym)), "mod_fn+0x10");
	assert_string_equal(binaries__dso_name(b, KMOD + 0x1010), "[kernel.kallsyms]");
	binaries__delete(b);
}

/*
 * A kernel map recorded up to the top of the address space (not up to the
 * first module, as perf record and auxtrig write it) hides the modules'
 * code from perf 6.1, whose dso__load_kcore() drops kcore maps inside it:
 * the decoder does the same, so that it prints what perf prints.
 */
static void test_kcore_copy_kernel_map_over_the_modules(void **state)
{
	char from[4200], to[4200], kcore[4200], kallsyms[4200], sym[128];
	struct kcore_copy_stats st;
	struct binaries *b;
	unsigned char buf[4];

	(void)state;
	make_proc();
	snprintf(from, sizeof(from), "%s/proc", dir);
	snprintf(to, sizeof(to), "%s/out3", dir);
	mkdir(to, 0700);
	assert_int_equal(kcore_copy__run(from, to, &st), 0);
	snprintf(kcore, sizeof(kcore), "%s/kcore", to);
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", to);
	b = binaries__new(NULL, "/nonexistent");
	assert_non_null(b);
	assert_int_equal(binaries__add_mmap(b, KTEXT, ~0ULL - KTEXT, KTEXT, "[kernel.kallsyms]_text", true, NULL, 0), 0);
	assert_int_equal(binaries__add_kernel_code(b, kcore, kallsyms), 0);
	assert_int_equal(binaries__read(b, KTEXT + 0x1004, buf, sizeof(buf)), sizeof(buf));
	assert_string_equal(binaries__symoff(b, KTEXT + 0x1004, true, sym, sizeof(sym)), "do_thing+0x4");
	assert_int_equal(binaries__read(b, KMOD + 0x1010, buf, sizeof(buf)), 0);
	assert_string_equal(binaries__dso_name(b, KMOD + 0x1010), "[unknown]");
	binaries__delete(b);
}

/* What is not a kcore is refused; a short read asks for more. */
static void test_kcore_copy_parse_phdrs_refuses(void **state)
{
	static struct kcore_seg segs[KCORE_MAX_SEGS];
	unsigned char buf[4096] = { 0 };
	Elf64_Ehdr eh = { .e_phoff = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2 };
	size_t need;

	(void)state;
	assert_int_equal(kcore__parse_phdrs(buf, 10, segs, &need), -EAGAIN);
	assert_int_equal(kcore__parse_phdrs(buf, sizeof(buf), segs, &need), -EINVAL);	/* no ELF magic */
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	memcpy(buf, &eh, sizeof(eh));
	assert_int_equal(kcore__parse_phdrs(buf, sizeof(eh) + 10, segs, &need), -EAGAIN);
	assert_int_equal(need, sizeof(eh) + 2 * sizeof(Elf64_Phdr));
	assert_int_equal(kcore__parse_phdrs(buf, sizeof(buf), segs, &need), 0);	/* no PT_LOAD */
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	memcpy(buf, &eh, sizeof(eh));
	assert_int_equal(kcore__parse_phdrs(buf, sizeof(buf), segs, &need), -EINVAL);
}

/*
 * A trampoline page whose range passes the top of the address space: the
 * piece ends with its segment; nothing of an earlier plan stays (fuzz_kcore).
 */
static void test_kcore_copy_plan_range_at_the_top(void **state)
{
	static struct kcore_piece out[KCORE_MAX_SEGS];
	/* the trampoline's page plus the segment's length is past 2^64 */
	const struct kcore_seg seg = { .addr = 0xffff800000000000ULL, .len = 0x7fff00000000ULL, .offset = 0x1000 };
	const struct kcore_text t = { .stext = KTEXT, .etext = KTEXT + 0x1000, .tramp = { 0xfffffe0000001000ULL },
				      .nr_tramp = 1 };

	(void)state;
	memset(out, 0xff, sizeof(out));		/* an earlier plan's pieces are not taken over (fuzz_kcore) */
	assert_int_equal(kcore__plan(&t, &seg, 1, 4096, out), 1);
	assert_false(out[0].remap);
	assert_int_equal(out[0].addr, 0xfffffe0000001000ULL);
	assert_int_equal(out[0].len, 0xffffffff00000000ULL - 0xfffffe0000001000ULL);
	assert_int_equal(out[0].src_offset, 0x1000 + (0xfffffe0000001000ULL - seg.addr));
	assert_int_equal(out[0].dst_offset, 4096);
}

/* The recording directory: made, refused when it exists, cleared with -f only if it holds a recording. */
static void test_kcore_copy_open_dir(void **state)
{
	char path[4200], data[4200], cmd[8600];

	(void)state;
	snprintf(path, sizeof(path), "%s/rec.data", dir);
	assert_int_equal(kcore_copy__open_dir(path, false, data, sizeof(data)), 0);
	snprintf(cmd, sizeof(cmd), "%s/data", path);
	assert_string_equal(data, cmd);
	snprintf(cmd, sizeof(cmd), "test -d '%s/kcore_dir' && touch '%s' '%s/kcore_dir/kallsyms'", path, data, path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(kcore_copy__open_dir(path, false, data, sizeof(data)), -EEXIST);
	assert_int_equal(kcore_copy__open_dir(path, true, data, sizeof(data)), 0);
	snprintf(cmd, sizeof(cmd), "test ! -e '%s' && test ! -e '%s/kcore_dir/kallsyms' && touch '%s/other'", data,
		 path, path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(kcore_copy__open_dir(path, true, data, sizeof(data)), -EEXIST);
	snprintf(path, sizeof(path), "%s/plain", dir);
	put("plain", "x");
	assert_int_equal(kcore_copy__open_dir(path, true, data, sizeof(data)), -EEXIST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kcore_copy_keeps_text_and_modules),
		cmocka_unit_test(test_kcore_copy_read_back_by_the_decoder),
		cmocka_unit_test(test_kcore_copy_kernel_map_over_the_modules),
		cmocka_unit_test(test_kcore_copy_parse_phdrs_refuses),
		cmocka_unit_test(test_kcore_copy_plan_range_at_the_top),
		cmocka_unit_test(test_kcore_copy_open_dir),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
