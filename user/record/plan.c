// SPDX-License-Identifier: BSD-2-Clause
/* The plan of a recording: only its lifetime here; user/cmd/record_plan.c builds it. */
#include <stdlib.h>
#include <string.h>

#include "auxtrig/record/plan.h"
#include "auxtrig/sys/pmu.h"

void record_plan__exit(struct record_plan *p)
{
	event_list__exit(&p->events);
	free(p->where);
	for (size_t i = 0; i < p->nr_triggers; i++) {
		tp_format__exit(&p->triggers[i].fmt);
		free(p->triggers[i].cond);
		free(p->triggers[i].sets);
		free(p->triggers[i].cond_text);
	}
	free(p->triggers);
	free(p->windows);
	free(p->trigger_progs);
	free(p->pids);
	free(p->cpu_mask);
	free(p->aux);
	pmu_set__delete(p->pmus);
	memset(p, 0, sizeof(*p));
}
