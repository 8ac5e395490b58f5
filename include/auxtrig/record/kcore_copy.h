/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_KCORE_COPY_H
#define AUXTRIG_KCORE_COPY_H

/*
 * record/ layer: the kernel's code kept with a recording of kernel trace
 * (user/record/kcore_copy.c), as `perf record --kcore` keeps it; called by
 * recorder.c.
 */

/**
 * DOC: keeping the kernel's code
 *
 * Hardware trace of the kernel is decoded by walking the kernel's code, which
 * lives in memory only: the kernel may have patched itself (alternatives,
 * static keys, ftrace) and modules are wherever they were loaded. So, as
 * perf 6.1 does with --kcore (tools/perf/util/symbol-elf.c: kcore_copy()),
 * the recording becomes a directory:
 *
 *   DIR/data                  the perf.data file
 *   DIR/kcore_dir/kallsyms    /proc/kallsyms
 *   DIR/kcore_dir/modules     /proc/modules
 *   DIR/kcore_dir/kcore       an ELF core file with the parts of /proc/kcore
 *                             that hold code: the kernel's text (_stext to
 *                             _etext), the module area (the first module to
 *                             the page after the last module symbol) and the
 *                             entry trampolines, one PT_LOAD each
 *
 * which `perf script -i DIR` reads (perf_data__kallsyms_name(), then
 * dso__load_kcore() finds kcore beside kallsyms) and `auxtrig script -i DIR`
 * too. Only what the symbols bound is copied: a few to a few tens of MiB,
 * never all of memory.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/sys/kcore.h"

/**
 * struct kcore_copy_stats - what was kept.
 * @kernel_text: bytes of the kernel's own text
 * @modules_text: bytes of the module area
 * @total: the copy's size, headers included
 */
struct kcore_copy_stats {
	__u64 kernel_text, modules_text, total;
	size_t nr_modules;
};

/**
 * kcore_copy__run() - copy @proc_dir's kallsyms, modules and the code of its
 * kcore into @to_dir (which exists).
 * Return: 0, or -errno with one pr_err() line saying what could not be read
 * or written.
 */
int kcore_copy__run(const char *proc_dir, const char *to_dir, struct kcore_copy_stats *st);

struct aux_event;

/**
 * kcore_copy__wanted() - does hardware trace event @aux (NULL: none) trace
 * the kernel, and can its code be kept here? When it cannot, one line says
 * what is missing (the recording goes on, its kernel trace decodable on
 * this boot only).
 */
bool kcore_copy__wanted(const struct aux_event *aux);

/**
 * kcore_copy__missing() - why this machine's kernel code cannot be kept
 * ("/proc/kcore is missing", "not root"...), NULL when it can.
 */
const char *kcore_copy__missing(const char *proc_dir);

/**
 * kcore_copy__open_dir() - make @path the recording's directory (refusing
 * an existing one unless @force and it holds only a recording: data and
 * kcore_dir), with @path/kcore_dir in it; the perf.data file's path into
 * @data_path.
 * Return: 0 or -errno (said why).
 */
int kcore_copy__open_dir(const char *path, bool force, char *data_path, size_t size);

struct pdata_writer;

/**
 * kcore_copy__keep() - for a recording of kernel trace being written by @w:
 * the running kernel's build ID into its HEADER_BUILD_ID (so a decoder
 * knows whether it runs on the same kernel), and, when @dir is not NULL
 * (kcore_copy__open_dir()'s directory), the kernel's code into
 * @dir/kcore_dir, saying how much was kept, or why nothing was, in one line
 * on stderr. Before @w's data begins; the recording goes on either way.
 */
void kcore_copy__keep(struct pdata_writer *w, const char *dir);

#endif
