/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SCHED_PRIMER_H
#define AUXTRIG_SCHED_PRIMER_H

/* record/ layer: the recorder's start-up primer (user/record/sched_primer.c). */
#include <pthread.h>
#include <stdbool.h>

/*
 * Start-up: the first perf event bound to a task, when no other task's event
 * is open, makes the kernel switch its context-switch hooks on and wait for
 * an RCU grace period (account_event(): about 15 ms on the development VM).
 * The sideband follows the targets with such events, after the gate is
 * loaded: a thread opens one on itself (a dummy, never enabled) while the
 * gate loads, so that the wait overlaps the load instead of following it,
 * and the sideband finds the hooks on. Closed once the sideband is open.
 */
struct sched_primer {
	pthread_t thread;
	bool started;
	int fd;
};

/** sched_primer__start() - open the dummy event on a thread of its own; never fails (the wait is then not hidden). */
void sched_primer__start(struct sched_primer *pr);
/** sched_primer__stop() - join the thread and close its event (once the sideband is open). */
void sched_primer__stop(struct sched_primer *pr);

#endif
