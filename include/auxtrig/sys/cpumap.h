/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CPUMAP_H
#define AUXTRIG_CPUMAP_H

/*
 * sys/ layer, the system: CPU lists (user/sys/cpumap.c), for -C
 * in cmd/record_plan.c.
 */

#include <stdbool.h>

/**
 * cpumap__parse() - a CPU list as perf and sysfs write it: "0-3,6,8-9".
 * @list: the text
 * @nr_cpus: CPUs 0..nr_cpus-1 exist; anything beyond is an error
 * @mask: filled, nr_cpus entries
 * Return: 0, or -EINVAL (bad syntax, CPU out of range, empty list).
 */
int cpumap__parse(const char *list, int nr_cpus, bool *mask);

#endif
