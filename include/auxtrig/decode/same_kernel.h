/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SAME_KERNEL_H
#define AUXTRIG_SAME_KERNEL_H

/*
 * decode/ layer: was a trace file recorded on the running kernel
 * (user/decode/same_kernel.c)? Then this machine's kallsyms, /proc/kcore
 * and auxtrig's own vDSO are the file's, as perf takes them.
 */

#include <stdbool.h>

struct pdata_reader;

/**
 * same_kernel__running() - the file's kernel is the running one: the same
 * release (HEADER_OSRELEASE) and, when the file recorded one for
 * [kernel.kallsyms] (HEADER_BUILD_ID) and /sys/kernel/notes has one, the
 * same build ID. A file without a release is another kernel's.
 */
bool same_kernel__running(struct pdata_reader *r);

#endif
