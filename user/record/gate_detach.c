// SPDX-License-Identifier: BSD-2-Clause
/*
 * Detaching the gate at the end of a run. Each tracepoint's detach waits
 * for RCU grace periods in the kernel (tens of milliseconds on a small
 * machine), under a lock the kernel holds while it waits (event_mutex, in
 * perf_trace_destroy()): 722 syscall tracepoints take about 30 s, for perf
 * record as for auxtrig. Threads detach side by side so that what can
 * overlap does; progress shows on a terminal, a one-line note elsewhere; a
 * SIGINT, SIGTERM or SIGHUP meanwhile leaves what remains to a background
 * process of its own, so the run ends at once, its file complete.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "auxtrig/record/gate.h"
#include "auxtrig/record/internal/gate.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/progress.h"

/* Fewer tracepoints than this detach in about a second: no note. */
#define DETACH_NOTE_MIN 64

/*
 * Threads that detach side by side. Thread k of n destroys links k, k + n...
 * and closes the kept descriptors of chunk k, last first: a point's event
 * and its program's link were kept one after the other, so one thread
 * closes both and the program's detach and the event's removal of
 * different points overlap.
 */
struct detacher {
	struct bpf_link **links;
	size_t nr_links;
	const int *fds;
	size_t nr_fds;
	const struct perf_sys *sys;
	size_t k, n;
	size_t *done;
};

static void *detacher__run(void *arg)
{
	struct detacher *d = arg;
	size_t chunk = (d->nr_fds + d->n - 1) / d->n;
	size_t lo = d->k * chunk < d->nr_fds ? d->k * chunk : d->nr_fds;
	size_t hi = lo + chunk < d->nr_fds ? lo + chunk : d->nr_fds;

	for (size_t i = d->k; i < d->nr_links; i += d->n) {
		bpf_link__destroy(d->links[i]);
		__atomic_add_fetch(d->done, 1, __ATOMIC_RELAXED);
	}
	for (size_t i = hi; i-- > lo;) {
		perf_sys__close(d->sys, d->fds[i]);
		__atomic_add_fetch(d->done, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every descriptor that holds the gate in the kernel, sorted: taken before
 * the detachers start (they free the links). NULL when out of memory.
 */
static int *keep_set(const struct gate *g, size_t *nr)
{
	int *keep = malloc((g->nr_links + g->nr_fds + 1) * sizeof(int));

	*nr = 0;
	if (!keep)
		return NULL;
	for (size_t i = 0; i < g->nr_links; i++)
		if (bpf_link__fd(g->links[i]) >= 0)
			keep[(*nr)++] = bpf_link__fd(g->links[i]);
	for (size_t i = 0; i < g->nr_fds; i++)
		if (g->fds[i] >= 0)
			keep[(*nr)++] = g->fds[i];
	qsort(keep, *nr, sizeof(int), cmp_int);
	return keep;
}

/*
 * A child that holds only @keep (a copy of this process's descriptors at
 * the fork, less those the detachers closed already) until auxtrig has
 * exited, then dies: auxtrig's own closes are not the last ones and go
 * fast, and the kernel detaches as it closes the child's. It must outlive
 * auxtrig's descriptors, not only take copies: PR_SET_PDEATHSIG comes after
 * the exiting auxtrig has released all of them. It leaves the session (no
 * terminal's signals reach it) and holds nothing else: no standard output
 * or error a reader waits on, no socket of the reaper. Only
 * async-signal-safe calls after the fork (other threads run).
 * Return: its pid, or -errno.
 */
static pid_t detach_in_background(const int *keep, size_t nr)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		unsigned int next = 0;

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(0);	/* auxtrig is gone already: what this holds goes now */
		setsid();
		prctl(PR_SET_NAME, "auxtrig-detach");
		for (size_t i = 0; i < nr; i++) {
			if ((unsigned int)keep[i] > next)
				close_range(next, keep[i] - 1, 0);
			next = keep[i] + 1;
		}
		close_range(next, ~0U, 0);
		for (;;)
			pause();	/* until SIGKILL: the kernel then closes the rest, the slow part */
	}
	return pid;
}

/* Wait up to @ms for SIGINT, SIGTERM or SIGHUP on @sigfd (others are dropped: the run is over). */
static bool interrupted(int sigfd, int ms)
{
	struct pollfd pfd = { .fd = sigfd, .events = POLLIN };
	struct signalfd_siginfo si;

	if (sigfd < 0) {
		usleep(ms * 1000);
		return false;
	}
	if (poll(&pfd, 1, ms) <= 0)
		return false;
	while (read(sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP)
			return true;
	return false;
}

/* Start the detachers; returns how many threads run (the rest of the work is done here). */
static size_t start_detachers(struct gate *g, struct detacher *d, pthread_t *t, size_t n, size_t *done)
{
	size_t started = 0;

	for (size_t k = 0; k < n; k++) {
		d[k] = (struct detacher){ .links = g->links, .nr_links = g->nr_links, .fds = g->fds,
					  .nr_fds = g->nr_fds, .sys = g->sys, .k = k, .n = n, .done = done };
		if (pthread_create(&t[k], NULL, detacher__run, &d[k]))
			break;
		started++;
	}
	for (size_t k = started; k < n; k++)
		detacher__run(&d[k]);	/* no thread: this one does its share */
	return started;
}

void gate__detach_all(struct gate *g)
{
	enum { DETACHERS = 16 };
	struct detacher d[DETACHERS];
	pthread_t t[DETACHERS];
	size_t nr = g->nr_links + g->nr_fds, n = nr < DETACHERS ? nr : DETACHERS, started, done = 0, nr_keep = 0;
	bool shown = g->progress && g->progress->on;
	pid_t bg = 0;
	int *keep;

	if (nr < 8) {
		for (size_t i = 0; i < g->nr_links; i++)
			bpf_link__destroy(g->links[i]);
		for (size_t i = g->nr_fds; i-- > 0;)
			perf_sys__close(g->sys, g->fds[i]);
		return;
	}
	keep = g->detach_sigfd >= 0 ? keep_set(g, &nr_keep) : NULL;
	if (g->detach_note && !shown && g->nr_tps >= DETACH_NOTE_MIN)
		pr_info("detaching from %zu tracepoints: the kernel waits tens of milliseconds for each%s\n", g->nr_tps,
			keep ? "; Ctrl-C leaves it to the background" : "");
	started = start_detachers(g, d, t, n, &done);
	for (bool first = true; __atomic_load_n(&done, __ATOMIC_RELAXED) < nr; first = false) {
		if (shown)
			progress__show(g->progress, first, "auxtrig: detaching: %zu of %zu (the kernel waits for each%s)",
				       __atomic_load_n(&done, __ATOMIC_RELAXED), nr, keep ? "; Ctrl-C: in the background" : "");
		if (interrupted(keep ? g->detach_sigfd : -1, 50)) {
			bg = detach_in_background(keep, nr_keep);
			if (bg > 0)
				break;
			pr_warn("cannot detach in the background: %s; waiting for the kernel\n", strerror(-bg));
		}
	}
	/* In the background: what the threads still close is held by the child too, so it goes fast. */
	for (size_t k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	if (shown)
		progress__clear(g->progress);
	if (bg > 0)
		pr_info("the kernel goes on detaching from the tracepoints in the background (process %d, \"auxtrig-detach\")\n",
			bg);
	free(keep);
}

void gate__set_detach_watch(struct gate *g, int sigfd, bool note)
{
	g->detach_sigfd = sigfd;
	g->detach_note = note;
}
