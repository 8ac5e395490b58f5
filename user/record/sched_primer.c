// SPDX-License-Identifier: BSD-2-Clause
/* A perf event opened on the side while the gate loads (auxtrig/record/sched_primer.h). */
#include <unistd.h>

#include "auxtrig/record/sched_primer.h"
#include "auxtrig/sys/perf_sys.h"

static void *sched_primer__run(void *arg)
{
	struct sched_primer *pr = arg;
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	pr->fd = perf_sys__event_open(&perf_sys__kernel, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return NULL;
}

void sched_primer__start(struct sched_primer *pr)
{
	pr->fd = -1;
	pr->started = !pthread_create(&pr->thread, NULL, sched_primer__run, pr);
}

void sched_primer__stop(struct sched_primer *pr)
{
	if (!pr->started)
		return;
	pthread_join(pr->thread, NULL);
	pr->started = false;
	if (pr->fd >= 0)
		close(pr->fd);
	pr->fd = -1;
}
