/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_BINARIES_H
#define AUXTRIG_BINARIES_H

/*
 * decode/ layer: the traced binaries of a perf.data file (user/decode/binaries.c),
 * found as perf finds them and mapped once; on sys/elf_image.h, used by the decoders.
 */

/**
 * DOC: the traced binaries of a perf.data file
 *
 * The executable mappings the file's MMAP/MMAP2 records describe (user
 * space and kernel: the kernel's modules are kernel MMAP records naming the
 * .ko), each with the binary behind it. A binary is looked for the way
 * perf 6.1 looks for it, and mapped into memory once, the first time a
 * decoder or a symbol lookup needs it:
 *
 * 1. in the build-ID cache, when the file names its build ID (HEADER_BUILD_ID
 *    or an MMAP2 record with one): BUILDID_DIR/.build-id/xx/yyyy... (a file,
 *    or a directory holding "elf"); BUILDID_DIR is $PERF_BUILDID_DIR, else
 *    $HOME/.debug, as for perf;
 * 2. at SYMFS + the recorded path (SYMFS "" without --symfs);
 * 3. for [vdso], the image binaries__add_vdso() gave (the running kernel's).
 *
 * A candidate whose build ID differs from the recorded one is not used
 * (perf refuses it too). Only regular files are opened.
 *
 * The decoders read code through binaries__read(): from the mapping, no
 * system call per read. What a mapping shows at an address is what perf
 * reads there: for ELF executables and shared objects the file bytes of the
 * PT_LOAD segment the address falls in (up to p_filesz), for a relocatable
 * object (a kernel module) its .text section where the kernel put it, for
 * anything else the file bytes at address - start + pgoff.
 *
 * A module's .text is seldom at the mapping's start (the module's start in
 * /proc/modules): the kernel lays the sections out one after another (arm64:
 * .plt and .text.ftrace_trampoline first). A symbol of the .ko's .text that
 * the kallsyms given (binaries__add_kallsyms(), binaries__add_kernel_code())
 * names once among the module's ("NAME\t[module]") places it: at the
 * symbol's kallsyms address less its st_value (simpleperf's rule). The
 * module's other code sections likewise, else at their sh_addr (0) as perf
 * 6.1 maps them. Without such a symbol, .text is at the mapping's start, as
 * perf 6.1 takes it, and a warning says so (not when the kernel's code is
 * read from kcore, which then serves the modules too).
 *
 * Symbols and names are printed as perf script -F sym,symoff,dso prints
 * them (see binaries__symoff(), binaries__dso_name()).
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct binaries;
struct binary;

/**
 * struct binary_map - one executable mapping.
 * @kernel: in the kernel's address space (the kernel, modules and, as perf
 *          6.1 makes them, maps of a module's other code sections at their
 *          sh_addr, which is 0 in a .ko)
 */
struct binary_map {
	__u64 start, end;	/* [start, end) */
	__u64 pgoff;
	struct binary *bin;
	bool kernel;
};

/**
 * binaries__new() - an empty set.
 * @symfs: directory the recorded paths are under, or NULL
 * @buildid_dir: the build-ID cache directory, or NULL for perf's default
 */
struct binaries *binaries__new(const char *symfs, const char *buildid_dir);

/** binaries__delete() - unmap every binary; NULL is fine. */
void binaries__delete(struct binaries *b);

/**
 * binaries__add_build_id() - the build ID the file records for @filename
 * (HEADER_BUILD_ID entry), used to find it in the build-ID cache.
 * Return: 0 or -ENOMEM.
 */
int binaries__add_build_id(struct binaries *b, const char *filename, const __u8 *bid, size_t len);

/**
 * binaries__add_mmap() - an executable mapping, in record order: a later
 * one replaces the earlier ones it overlaps.
 * @kernel: a kernel-space record (the kernel or a module)
 * @bid, @bid_len: the build ID an MMAP2 record carries, or NULL/0
 * Return: 0 or -ENOMEM.
 */
int binaries__add_mmap(struct binaries *b, __u64 start, __u64 len, __u64 pgoff, const char *filename,
		       bool kernel, const __u8 *bid, size_t bid_len);

/** binaries__nr_maps() - number of mappings, both address spaces. */
size_t binaries__nr_maps(const struct binaries *b);

/**
 * binaries__set_kernel_start() - addresses from @start up are the kernel's
 * (perf's machine__kernel_start(): 1 << 63 by default, the kernel map's
 * start when the file has one and was not recorded on x86_64).
 */
void binaries__set_kernel_start(struct binaries *b, __u64 start);

/** binaries__kernel_map_start() - the start of the [kernel.kallsyms] mapping, 0 if none. */
__u64 binaries__kernel_map_start(const struct binaries *b);

/** binaries__is_kernel() - is @addr a kernel address? */
bool binaries__is_kernel(const struct binaries *b, __u64 addr);

/**
 * binaries__find() - the mapping that holds @addr in the address space of
 * @addr (kernel or user), or NULL.
 */
const struct binary_map *binaries__find(const struct binaries *b, __u64 addr);

/**
 * binaries__find_in() - the mapping that holds @addr in the kernel's
 * (@kernel) or user space; with @fallback, if there is none there, in
 * @addr's own space (perf's thread__find_map_fb(), how perf script resolves
 * a sample's addr field in the space of its ip).
 */
const struct binary_map *binaries__find_in(const struct binaries *b, __u64 addr, bool kernel, bool fallback);

/**
 * binaries__read() - up to @len bytes of code at @addr, as the decoders
 * read them (see DOC); the first use of a binary looks for it and maps it.
 * Return: bytes copied to @buf (0: nothing there).
 */
size_t binaries__read(struct binaries *b, __u64 addr, void *buf, size_t len);

/**
 * struct binary_span - a stretch of addresses binaries__read() serves from
 * one place of one mapped binary: @len bytes at @addr are @bytes.
 */
struct binary_span {
	__u64 addr, len;
	const void *bytes;
};

/**
 * binaries__spans() - every address binaries__read() can read, as spans
 * (of the binaries loaded so far: call binaries__load_all() first), sorted
 * by address and disjoint; a read within one span gives its bytes.
 * @out: receives up to @max spans
 * Return: how many there are (more than @max: only @max written).
 */
size_t binaries__spans(struct binaries *b, struct binary_span *out, size_t max);

/**
 * binaries__load_all() - look for every binary now (a forked decoder then
 * shares the mappings instead of looking again).
 * Return: how many binaries were found.
 */
size_t binaries__load_all(struct binaries *b);

/** binaries__nr_binaries() - distinct recorded file names. */
size_t binaries__nr_binaries(const struct binaries *b);

/**
 * binaries__missing() - the recorded name of missing binary @i (after
 * binaries__load_all()), NULL past the last one.
 */
const char *binaries__missing(const struct binaries *b, size_t i);

/**
 * binaries__symoff() - "sym+0xoff" of @addr as perf prints -F sym,symoff
 * ("[unknown]" without a symbol); @with_off false gives "sym" alone.
 * Return: @buf.
 */
char *binaries__symoff(struct binaries *b, __u64 addr, bool with_off, char *buf, size_t size);

/** binaries__map_symoff() - as binaries__symoff(), @addr being in mapping @m (NULL: none). */
char *binaries__map_symoff(struct binaries *b, const struct binary_map *m, __u64 addr, bool with_off, char *buf,
			   size_t size);

/**
 * binaries__dso_name() - the name perf prints for the binary at @addr
 * (-F dso): the recorded path for user space, "[name]" for a kernel module
 * (name.ko), the base name of another kernel image, "[unknown]" outside
 * every mapping.
 */
const char *binaries__dso_name(const struct binaries *b, __u64 addr);

/**
 * binaries__add_kallsyms() - symbols for the kernel image ([kernel.kallsyms])
 * from a kallsyms file (/proc/kallsyms), as perf 6.1 takes them when it
 * finds no vmlinux: the kernel's own code symbols (types T, t, W, w), each
 * reaching to the next; module symbols are not taken for it, but kept to
 * place the modules' code (see DOC). They serve the [kernel.kallsyms]
 * mapping when its image was not found, replacing those of an earlier call;
 * call it before the first look at a module.
 * Return: 0, -ENODATA for a file without a symbol at a non-zero address
 * (kptr_restrict shows zeros), -ENOMEM, or -errno from opening @path.
 */
int binaries__add_kallsyms(struct binaries *b, const char *path);

/**
 * binaries__add_kernel_code() - the kernel's code from kcore file @kcore (a
 * kept copy, or /proc/kcore of the running kernel), its symbols, modules'
 * too, from kallsyms file @kallsyms, as perf 6.1 takes a --kcore recording
 * (dso__load_kcore()): every kernel address in that code reads from it and
 * is named in [kernel.kallsyms], module code too, replacing the kernel's
 * and the modules' maps. When @kcore cannot be opened or read, the symbols
 * from @kallsyms stay.
 * Return: 0, or -errno (-ENODATA: kallsyms shows no addresses).
 */
int binaries__add_kernel_code(struct binaries *b, const char *kcore, const char *kallsyms);

/**
 * binaries__add_vdso() - the image behind the file's [vdso] mappings: the
 * vDSO of this process (@len bytes at @image, copied), for a file recorded
 * on the running kernel, where every process of this ABI maps that same
 * image (perf 6.1 takes its own vDSO for [vdso] too). Used only when the
 * build-ID cache has no image for the recorded build ID.
 * Return: 0, or -ENOMEM.
 */
int binaries__add_vdso(struct binaries *b, const void *image, size_t len);

/**
 * binaries__add_own_vdso() - binaries__add_vdso() with this process's vDSO,
 * where /proc/self/maps says [vdso] is.
 * Return: 0, -ENOENT without one, or -ENOMEM.
 */
int binaries__add_own_vdso(struct binaries *b);

/** binaries__map_dso_name() - the name of mapping @m's binary, "[unknown]" for NULL. */
const char *binaries__map_dso_name(const struct binary_map *m);

#endif
