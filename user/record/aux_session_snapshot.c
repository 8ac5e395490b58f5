// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AUX session's snapshots (snapshot mode, on a trigger): every slot's
 * AUX area copied into the file, either with the trace stopped (perf's way)
 * or, when the kernel pauses and resumes it in windows, while it runs; then
 * the groups of threads that exited meanwhile closed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/record/internal/aux_session.h"
#include "auxtrig/sys/log.h"

/*
 * Does the session pause and resume the trace in the kernel? Then a snapshot
 * must not disable it: a disabled leader schedules its group out, the
 * aux_pause/aux_resume of every window edge meanwhile is lost, and ENABLE
 * brings back the paused state the leader was left in, wrong for the
 * window the thread is in now.
 */
static bool aux_session__pauses_in_kernel(const struct aux_session *s)
{
	const struct aux_group *g = &s->cpus[0]->g;

	return g->mode != AUX_GROUP_SNAPSHOT && !g->gate_by_ioctl;
}

/* Every open CPU's data ring into @k, as a snapshot's first step. Return: 0 or -errno. */
static int aux_session__drain_all(struct aux_session *s, struct record_sink *k)
{
	int ret;

	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		ret = aux_session__drain_data(s, s->cpus[i], k);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* perf's way (§4.1): stop every CPU, so each driver publishes its head and AUX record; copy; restart. */
static int aux_session__snapshot_stopped(struct aux_session *s, struct record_sink *k)
{
	struct aux_ring_read rd;
	int64_t got;
	int n = 0, err = 0, ret;

	for (size_t i = 0; i < s->nr_slots && !err; i++)
		if (!s->cpus[i]->closed)
			err = aux_ring__snapshot_start(&s->cpus[i]->aux);
	if (!err)
		err = aux_session__drain_all(s, k);
	for (size_t i = 0; i < s->nr_slots && !err; i++) {
		struct aux_session_cpu *c = s->cpus[i];

		if (c->closed)
			continue;
		got = aux_ring__snapshot(&c->aux, &rd);
		if (got < 0)
			err = (int)got;
		else if (got > 0 && (ret = aux_session__put(s, c, &rd, k)) < 0)
			err = ret;
		else
			n += got > 0;
	}
	/* Restart even after a write error: the trace must not stay off. */
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		ret = aux_ring__snapshot_finish(&s->cpus[i]->aux);
		if (ret && !err)
			err = ret;
	}
	return err ? err : n;
}

static int aux_session__flush_all(struct aux_session *s)
{
	int err;

	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		err = aux_ring__flush(&s->cpus[i]->aux, s->ev.attr.sample_period);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Without stopping: flush every CPU's head, copy each range out while the
 * trace goes on, flush again and drop what the hardware may have written
 * over at the ranges' old ends meanwhile.
 */
static int aux_session__snapshot_running(struct aux_session *s, struct record_sink *k)
{
	struct aux_ring_read *rd = calloc(s->nr_slots, sizeof(*rd));
	unsigned char **copy = calloc(s->nr_slots, sizeof(*copy));
	int n = 0, err, ret;
	int64_t got;

	if (!rd || !copy) {
		free(rd);
		free(copy);
		return -ENOMEM;
	}
	err = aux_session__flush_all(s);
	if (err == -EINVAL) {
		/* the kernel would not take the period: the driver's heads are not flushed that way here */
		free(rd);
		free(copy);
		return -EOPNOTSUPP;
	}
	if (!err)
		err = aux_session__drain_all(s, k);
	for (size_t i = 0; i < s->nr_slots && !err; i++) {
		if (s->cpus[i]->closed)
			continue;
		got = aux_ring__snapshot(&s->cpus[i]->aux, &rd[i]);
		if (got < 0) {
			err = (int)got;
			break;
		}
		if (!got)
			continue;
		copy[i] = malloc(rd[i].size);
		if (!copy[i]) {
			err = -ENOMEM;
			break;
		}
		memcpy(copy[i], rd[i].data1, rd[i].len1);
		if (rd[i].len2)
			memcpy(copy[i] + rd[i].len1, rd[i].data2, rd[i].len2);
	}
	if (!err)
		err = aux_session__flush_all(s);
	for (size_t i = 0; i < s->nr_slots && !err; i++) {
		uint64_t over;

		if (!copy[i])
			continue;
		over = aux_ring__snapshot_overwritten(&s->cpus[i]->aux, &rd[i]);
		s->stats.snapshot_overwritten += over;
		if (over == rd[i].size)
			continue;
		rd[i].offset += over;
		rd[i].size -= over;
		rd[i].padded = (rd[i].size + 7) & ~(uint64_t)7;
		rd[i].data1 = copy[i] + over;
		rd[i].len1 = rd[i].size;
		rd[i].data2 = NULL;
		rd[i].len2 = 0;
		ret = aux_session__put(s, s->cpus[i], &rd[i], k);
		if (ret < 0)
			err = ret;
		else
			n++;
	}
	for (size_t i = 0; i < s->nr_slots; i++)
		free(copy[i]);
	free(copy);
	free(rd);
	return err ? err : n;
}

int aux_session__snapshot(struct aux_session *s, struct record_sink *k)
{
	int ret;

	if (!s->opened || !s->o.snapshot)
		return -EINVAL;
	ret = -EOPNOTSUPP;
	if (aux_session__pauses_in_kernel(s) && !s->no_flush) {
		ret = aux_session__snapshot_running(s, k);
		if (ret == -EOPNOTSUPP) {
			pr_warn("%s: the kernel refused PERF_EVENT_IOC_PERIOD on it: snapshots stop the trace to read it, "
				"and window edges during a snapshot are lost to the trace\n", s->ev.name);
			s->no_flush = true;
		}
	}
	if (ret == -EOPNOTSUPP)
		ret = aux_session__snapshot_stopped(s, k);
	if (ret < 0) {
		pr_err("%s: snapshot failed: %s\n", s->ev.name, strerror(-ret));
		return ret;
	}
	s->stats.snapshots++;
	/* what exited threads traced is in this snapshot: their groups and buffers can go */
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->exited && !s->cpus[i]->closed) {
			aux_session__close_slot(s, s->cpus[i]);
			s->stats.exited_closed++;
		}
	}
	return ret;
}
