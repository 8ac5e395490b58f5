/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TP_SCRIPT_H
#define AUXTRIG_TP_SCRIPT_H

#include <stdio.h>

#include "auxtrig/format/pdata_reader.h"

struct script_opts; /* auxtrig/decode/script.h: script.c calls this with its options */

/**
 * tp_script__print() - every sample of @r as perf script prints it by
 * default for tracepoints: comm, tid, [cpu], time, the event's name padded
 * to the longest, and the record as its print fmt says (the fields when the
 * print fmt is beyond tp_print__format()); with call stacks (record -g),
 * each sample's frames under it (callchain__fprintf()) and a blank line.
 * @o:		@o->input names the file in messages; @o->symfs,
 *		@o->buildid_dir and @o->kallsyms say where the stacks' symbols are
 * Return: 0, -EPROTO a corrupt record (after printing what came before),
 * -ENOMEM, or -EINVAL malformed tracing data (each with a pr_err()).
 */
int tp_script__print(struct pdata_reader *r, const struct script_opts *o, FILE *out);

#endif
