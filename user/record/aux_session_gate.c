// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AUX session gated from userspace (when the kernel cannot pause and
 * resume the trace itself): the recorder reports each window edge, and the
 * trace is enabled while a window is open (per CPU: any thread's of the
 * target; per thread: that thread's own), with the edges' counts and their
 * latency.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "auxtrig/record/internal/aux_session.h"
#include "auxtrig/sys/log.h"

/* The userspace gate of every CPU's trace @open or not, and the trace with it. */
static int aux_session__gate(struct aux_session *s, bool open)
{
	if (!s->opened)
		return -EINVAL;
	s->gate_open = open;
	for (size_t i = 0; i < s->nr_slots; i++)
		s->cpus[i]->gate_open = open;
	return aux_session__ctl_all(s, open);
}

int aux_session__enable(struct aux_session *s)
{
	return aux_session__gate(s, true);
}

int aux_session__disable(struct aux_session *s)
{
	return aux_session__gate(s, false);
}

static __u64 aux_session__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void aux_session__latency(struct aux_session *s, __u64 stamp, __u64 done)
{
	__u64 ns = done > stamp ? done - stamp : 0, *tmp;

	if (s->nr_lat == s->cap_lat && s->cap_lat < (1u << 20)) {
		tmp = realloc(s->lat, (s->cap_lat ? 2 * s->cap_lat : 256) * sizeof(*tmp));
		if (tmp) {
			s->lat = tmp;
			s->cap_lat = s->cap_lat ? 2 * s->cap_lat : 256;
		}
	}
	if (s->nr_lat < s->cap_lat)
		s->lat[s->nr_lat++] = ns;
	if (!s->gs.lat_n || ns < s->gs.lat_min)
		s->gs.lat_min = ns;
	if (ns > s->gs.lat_max)
		s->gs.lat_max = ns;
	s->gs.lat_n++;
}

/*
 * Per thread, the gate switches each thread's own AUX event: on when its
 * first window opens, off when its last one closes, wherever it runs
 * meanwhile (the event follows the thread from CPU to CPU).
 */
static int aux_session__edge_thread(struct aux_session *s, bool open, __u32 tid, __u64 time_ns)
{
	struct aux_session_cpu *c = aux_session__thread_slot(s, (pid_t)tid);
	__u64 done;
	int err;

	if (!c) {
		s->gs.other_threads++;
		return 0;
	}
	if (open) {
		s->gs.opens++;
		if (c->gate_open) {
			s->gs.unmatched++; /* its close was lost: it stays open */
			return 0;
		}
		c->gate_open = true;
		err = aux_session__ctl_slot(s, c, true);
		done = aux_session__now();
		c->enabled_at = done;
		s->gs.enables++;
	} else {
		s->gs.closes++;
		if (!c->gate_open) {
			s->gs.unmatched++; /* its open was lost, or it opened before we were gating */
			return 0;
		}
		if (time_ns < c->enabled_at)
			s->gs.late++;
		c->gate_open = false;
		err = aux_session__ctl_slot(s, c, false);
		done = aux_session__now();
		s->gs.disables++;
	}
	aux_session__latency(s, time_ns, done);
	pr_debug("aux gate: %s tid %u at %llu: %s %s at %llu (+%llu ns)\n", open ? "open" : "close", tid,
		 (unsigned long long)time_ns, open ? "enabled" : "disabled", s->ev.name, (unsigned long long)done,
		 (unsigned long long)(done - time_ns));
	return err;
}

int aux_session__edge(struct aux_session *s, bool open, __u32 tid, __u64 time_ns)
{
	size_t i;
	__u64 done;
	int err;

	if (!s->opened || !s->gated)
		return -EINVAL;
	if (s->per_thread)
		return aux_session__edge_thread(s, open, tid, time_ns);
	/* a task's events per CPU follow that one thread (no inherit): another's windows are not its */
	if (s->o.pid > 0 && tid != (__u32)s->o.pid) {
		s->gs.other_threads++;
		return 0;
	}
	for (i = 0; i < s->nr_open && s->open_tids[i] != tid; i++)
		;
	if (open) {
		s->gs.opens++;
		if (i < s->nr_open) {
			s->gs.unmatched++; /* its close was lost: it stays open */
			return 0;
		}
		if (s->nr_open == s->cap_open) {
			size_t cap = s->cap_open ? 2 * s->cap_open : 16;
			__u32 *tmp = realloc(s->open_tids, cap * sizeof(*tmp));

			if (!tmp)
				return -ENOMEM;
			s->open_tids = tmp;
			s->cap_open = cap;
		}
		s->open_tids[s->nr_open++] = tid;
		if (s->nr_open > 1)
			return 0;
		err = aux_session__enable(s);
		done = aux_session__now();
		s->enabled_at = done;
		s->gs.enables++;
		aux_session__latency(s, time_ns, done);
		pr_debug("aux gate: open tid %u at %llu: enabled %s at %llu (+%llu ns)\n", tid,
			 (unsigned long long)time_ns, s->ev.name, (unsigned long long)done,
			 (unsigned long long)(done - time_ns));
		return err;
	}
	s->gs.closes++;
	if (i == s->nr_open) {
		s->gs.unmatched++; /* its open was lost, or it opened before we were gating */
		return 0;
	}
	s->open_tids[i] = s->open_tids[--s->nr_open];
	if (time_ns < s->enabled_at)
		s->gs.late++;
	if (s->nr_open)
		return 0;
	err = aux_session__disable(s);
	done = aux_session__now();
	s->gs.disables++;
	aux_session__latency(s, time_ns, done);
	pr_debug("aux gate: close tid %u at %llu: disabled %s at %llu (+%llu ns)\n", tid,
		 (unsigned long long)time_ns, s->ev.name, (unsigned long long)done,
		 (unsigned long long)(done - time_ns));
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

void aux_session__gate_stats(const struct aux_session *s, struct aux_session_gate_stats *st)
{
	*st = s->gs;
	if (!s->nr_lat)
		return;
	qsort(s->lat, s->nr_lat, sizeof(*s->lat), cmp_u64);
	st->lat_median = s->lat[s->nr_lat / 2];
	st->lat_p99 = s->lat[(s->nr_lat * 99) / 100 < s->nr_lat ? (s->nr_lat * 99) / 100 : s->nr_lat - 1];
}
