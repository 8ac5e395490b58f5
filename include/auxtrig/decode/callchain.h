/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CALLCHAIN_H
#define AUXTRIG_CALLCHAIN_H

/*
 * decode/ layer: a sample's call stack (PERF_SAMPLE_CALLCHAIN) printed as
 * perf script prints it (user/decode/callchain.c), on decode/binaries.h.
 */

#include <linux/types.h>
#include <stdio.h>

struct binaries;

/**
 * callchain__fprintf() - the frames of a callchain, innermost first, one
 * line each as perf 6.1's script prints them by default:
 * "\t%16x SYM+0xOFF (DSO)\n".
 * @b:		the file's mappings (sideband__collect()), symbols looked up there
 * @ips:	the callchain's @nr entries as the sample holds them (not
 *		necessarily 8-byte aligned); PERF_CONTEXT_* markers are not
 *		printed, they say in which address space (kernel or user) the
 *		frames that follow are looked up
 *
 * The address printed is the one perf prints: for a frame inside a user
 * mapping (or a kernel module) relative to the binary (address - start +
 * pgoff), for the kernel image and outside every mapping the address
 * itself; a frame without a mapping or symbol prints "[unknown]".
 * Return: the number of frames printed.
 */
size_t callchain__fprintf(struct binaries *b, const void *ips, __u64 nr, FILE *out);

#endif
