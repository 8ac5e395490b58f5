/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SUMMARY_H
#define AUXTRIG_SUMMARY_H

#include <stdio.h>

#include "auxtrig/format/pdata_reader.h"

/**
 * DOC: the summary of a recording (auxtrig report, script --summary)
 *
 * Like perf trace -s: per thread, per window kind (the slices of
 * timeline.h: syscall windows by syscall, START..STOP windows by their spec,
 * uprobe calls by function, resume..pause), the count, how many returned an
 * error (ret < 0), and the total, minimum, average and maximum duration;
 * then per window kind over all threads a latency histogram in power-of-two
 * microsecond buckets; per --on trigger its counters from the file
 * (auxtrig:trigger_stats: evaluated, matched, fired, suppressed, dropped)
 * and the marks and snapshots it left; and what was lost (PERF_RECORD_LOST,
 * LOST_SAMPLES, truncated AUX data).
 */

/**
 * summary__print() - the summary of @r on @out.
 * @name:	the file, for the heading and messages
 * Return: 0, or -errno with a pr_err().
 */
int summary__print(const struct pdata_reader *r, const char *name, FILE *out);

#endif
