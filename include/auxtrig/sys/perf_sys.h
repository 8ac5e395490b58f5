/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PERF_SYS_H
#define AUXTRIG_PERF_SYS_H

#include <linux/perf_event.h>
#include <sys/types.h>

/** perf_sys__event_open() - perf_event_open(2). Return: the fd, or -errno. */
int perf_sys__event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

#endif
