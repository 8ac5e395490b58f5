// SPDX-License-Identifier: BSD-2-Clause
/* The perf system calls. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "auxtrig/sys/perf_sys.h"

int perf_sys__event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	int fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : fd;
}
