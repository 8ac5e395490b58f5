// SPDX-License-Identifier: BSD-2-Clause
/* Per-CPU output events, the targets' sideband, and their rings. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/record/cpu_events.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/target.h"

/* Flight-recorder mode: per-CPU pages of the separate, streamed sideband ring. */
#define SIDEBAND_PAGES 16

static void attr_init_common(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_type = PDATA_SAMPLE_TYPE; /* every attr: one layout */
	a->sample_id_all = 1;
}

void cpu_events__attr_output(struct perf_event_attr *a, size_t ring_bytes, bool overwrite, bool callchain)
{
	attr_init_common(a);
	a->sample_type = CPU_EVENTS_OUT_SAMPLE_TYPE;
	if (callchain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	if (overwrite) {
		/* Flight recorder: the kernel keeps the newest records, nobody is woken. */
		a->write_backward = 1;
		return;
	}
	/* Wake the reader a quarter full; the loop also drains on a timer. */
	a->watermark = 1;
	a->wakeup_watermark = ring_bytes / 4;
}

void cpu_events__attr_sideband(struct perf_event_attr *a, bool enable_on_exec)
{
	attr_init_common(a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->build_id = 1; /* MMAP2 carries the build id, so perf finds the right binary later */
	a->inherit = 1;
	a->disabled = enable_on_exec;
	a->enable_on_exec = enable_on_exec;
}

void cpu_events__attr_tracepoint(struct perf_event_attr *a, unsigned int type, bool callchain)
{
	attr_init_common(a);
	if (callchain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = type;
	a->sample_period = 1;
}

int cpu_events__open(struct cpu_events *ce, const struct perf_sys *sys, const bool *mask, int nr_possible,
		     size_t pages, bool snapshot_mode, bool callchain)
{
	size_t page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr a;
	int err;

	ce->sys = sys;
	ce->snapshot_mode = snapshot_mode;
	ce->callchain = callchain;
	ce->pages = pages;
	ce->cpus = calloc(nr_possible, sizeof(*ce->cpus));
	if (!ce->cpus)
		return -ENOMEM;
	cpu_events__attr_output(&a, pages * page, snapshot_mode, callchain);
	for (int cpu = 0; cpu < nr_possible; cpu++) {
		struct cpu_slot *c = &ce->cpus[ce->nr_cpus];
		int fd;

		if (!mask[cpu])
			continue;
		fd = perf_sys__event_open(sys, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd == -ENODEV)
			continue; /* offline CPU */
		if (fd < 0) {
			pr_err("cannot open the output event on CPU %d: %s\n", cpu, strerror(-fd));
			return fd;
		}
		c->cpu = cpu;
		c->out_fd = fd;
		c->side_fd = -1;
		ce->nr_cpus++;
		err = perf_sys__id(sys, fd, &c->out_id);
		if (err)
			return err;
		err = data_ring__mmap(&c->ring, sys, fd, cpu, pages, snapshot_mode);
		if (err == -EPERM) {
			pr_err("cannot map %zu KiB per CPU: over the locked-memory limit (raise /proc/sys/kernel/perf_event_mlock_kb or use a smaller -m)\n",
			       pages * page / 1024);
			return err;
		}
		if (err) {
			pr_err("cannot map the ring of CPU %d: %s\n", cpu, strerror(-err));
			return err;
		}
		c->mapped = true;
	}
	return 0;
}

static int add_side_fd(struct cpu_events *ce, int fd)
{
	int *fds = realloc(ce->side_fds, (ce->nr_side + 1) * sizeof(int));
	__u64 *ids;

	if (!fds)
		return -ENOMEM;
	ce->side_fds = fds;
	ids = realloc(ce->side_ids, (ce->nr_side + 1) * sizeof(__u64));
	if (!ids)
		return -ENOMEM;
	ce->side_ids = ids;
	ce->side_fds[ce->nr_side] = fd;
	ce->nr_side++;
	return perf_sys__id(ce->sys, fd, &ce->side_ids[ce->nr_side - 1]);
}

/* Where sideband goes: into the CPU's one ring, or (flight recorder) its own forward ring. */
static int sideband_output(struct cpu_events *ce, struct cpu_slot *c, int fd)
{
	int err;

	if (!ce->snapshot_mode)
		return perf_sys__set_output(ce->sys, fd, c->out_fd);
	if (c->side_fd >= 0)
		return perf_sys__set_output(ce->sys, fd, c->side_fd);
	err = data_ring__mmap(&c->side_ring, ce->sys, fd, c->cpu, SIDEBAND_PAGES, 0);
	if (err)
		return err;
	c->side_fd = fd;
	c->side_mapped = true;
	return 0;
}

/* Sideband (COMM, MMAP2, FORK, EXIT) of one thread, inherited by its children. */
static int follow_thread(struct cpu_events *ce, pid_t tid, bool enable_on_exec)
{
	struct perf_event_attr a;
	int fd, err;

	cpu_events__attr_sideband(&a, enable_on_exec);
	for (size_t i = 0; i < ce->nr_cpus; i++) {
		fd = perf_sys__event_open(ce->sys, &a, tid, ce->cpus[i].cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = fd;
			if (err == -ESRCH)
				return err; /* the thread is gone: not an error for -p */
			pr_err("cannot follow thread %d on CPU %d: %s\n", tid, ce->cpus[i].cpu, strerror(-err));
			return err;
		}
		err = add_side_fd(ce, fd);
		if (err) {
			perf_sys__close(ce->sys, fd);
			return err;
		}
		err = sideband_output(ce, &ce->cpus[i], fd);
		if (err) {
			pr_err("cannot redirect sideband of thread %d into CPU %d's ring: %s\n", tid,
			       ce->cpus[i].cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

int cpu_events__follow(struct cpu_events *ce, const struct target *t)
{
	int err;

	if (t->all)
		return follow_thread(ce, -1, false);
	if (t->is_command)
		return follow_thread(ce, t->pids[0], true);
	if (t->threads) {
		for (size_t i = 0; i < t->nr_pids; i++) {
			err = follow_thread(ce, t->pids[i], false);
			if (err && err != -ESRCH)
				return err;
		}
		return 0;
	}
	for (size_t i = 0; i < t->nr_pids; i++) {
		pid_t *tids;
		size_t nr;

		err = target__threads(t->pids[i], &tids, &nr);
		if (err) {
			pr_err("process %d: %s\n", t->pids[i], strerror(-err));
			return err;
		}
		for (size_t j = 0; j < nr && !err; j++) {
			err = follow_thread(ce, tids[j], false);
			if (err == -ESRCH)
				err = 0;
		}
		free(tids);
		if (err)
			return err;
	}
	return 0;
}

int cpu_events__add_attrs(const struct cpu_events *ce, struct pdata_writer *w)
{
	struct perf_event_attr a;
	__u64 *ids;
	int err;

	cpu_events__attr_sideband(&a, false);
	if (ce->nr_side) {
		err = pdata_writer__add_attr(w, &a, "dummy:u", ce->side_ids, ce->nr_side);
		if (err)
			return err;
	}
	ids = calloc(ce->nr_cpus, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < ce->nr_cpus; i++)
		ids[i] = ce->cpus[i].out_id;
	cpu_events__attr_output(&a, 0, ce->snapshot_mode, ce->callchain);
	/*
	 * None of its samples is in the file (each is written as its
	 * tracepoint's) and its other records' trailer is the same either way:
	 * described with the file's one layout, perf script reads the file
	 * without asking for an IP this event's ring samples do not have.
	 */
	a.sample_type = PDATA_SAMPLE_TYPE | (ce->callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	err = pdata_writer__add_attr(w, &a, "bpf-output", ids, ce->nr_cpus);
	free(ids);
	return err;
}

bool cpu_events__is_side_id(const struct cpu_events *ce, __u64 id)
{
	for (size_t i = 0; i < ce->nr_side; i++)
		if (ce->side_ids[i] == id)
			return true;
	return false;
}

/* The ring a pass reads on CPU slot @i: streaming, its own; flight recorder, its sideband (or none). */
static struct data_ring *pass_ring(struct cpu_events *ce, size_t i)
{
	if (!ce->snapshot_mode)
		return &ce->cpus[i].ring;
	return ce->cpus[i].side_mapped ? &ce->cpus[i].side_ring : NULL;
}

/* @r's records up to the head read at the pass's start; @consume: give their room back. */
static int read_ring(struct data_ring *r, cpu_events_fn fn, void *ctx, bool *any, bool consume)
{
	const struct perf_event_header *h;
	uint64_t tail = r->tail;
	int err = 0;

	while ((h = data_ring__read_event(r))) {
		err = fn(ctx, h);
		if (err)
			break;
		if (any)
			*any = true;
	}
	if (consume)
		data_ring__consume(r);
	else
		r->tail = tail;
	return err;
}

int cpu_events__peek(struct cpu_events *ce, cpu_events_fn fn, void *ctx)
{
	int err = 0;

	for (size_t i = 0; i < ce->nr_cpus && !err; i++) {
		struct data_ring *r = pass_ring(ce, i);

		if (r)
			err = read_ring(r, fn, ctx, NULL, false);
	}
	return err;
}

int cpu_events__drain_checked(struct cpu_events *ce, cpu_events_check_fn check, cpu_events_fn fn, void *ctx,
			      bool *any)
{
	int err = 0;

	/* Every head first: what @check sees is exactly what @fn gets. */
	for (size_t i = 0; i < ce->nr_cpus; i++) {
		struct data_ring *r = pass_ring(ce, i);

		if (r)
			data_ring__read_init(r);
	}
	if (check) {
		err = check(ctx, ce);
		if (err) /* > 0: every record stays for the next pass */
			return err < 0 ? err : 0;
	}
	for (size_t i = 0; i < ce->nr_cpus && !err; i++) {
		struct data_ring *r = pass_ring(ce, i);

		if (r && r->head != r->tail)
			err = read_ring(r, fn, ctx, any, true);
	}
	return err;
}

int cpu_events__drain(struct cpu_events *ce, cpu_events_fn fn, void *ctx, bool *any)
{
	return cpu_events__drain_checked(ce, NULL, fn, ctx, any);
}

struct snapshot_ctx {
	cpu_events_fn fn;
	void *ctx;
};

static int snapshot_record(const struct perf_event_header *h, void *arg)
{
	struct snapshot_ctx *sc = arg;

	return sc->fn(sc->ctx, h);
}

int cpu_events__snapshot(struct cpu_events *ce, cpu_events_fn fn, void *ctx)
{
	struct snapshot_ctx sc = { fn, ctx };

	for (size_t i = 0; i < ce->nr_cpus; i++) {
		struct cpu_slot *c = &ce->cpus[i];
		int n, err;

		err = perf_sys__pause_output(ce->sys, c->out_fd, true);
		if (err)
			return err;
		n = data_ring__snapshot(&c->ring, snapshot_record, &sc);
		err = perf_sys__pause_output(ce->sys, c->out_fd, false);
		if (err && n >= 0)
			n = err;
		if (n < 0)
			return n;
	}
	return 0;
}

void cpu_events__close(struct cpu_events *ce)
{
	/* Every ring unmapped before the event that owns it is closed. */
	for (size_t i = 0; i < ce->nr_cpus; i++) {
		if (ce->cpus[i].side_mapped)
			data_ring__munmap(&ce->cpus[i].side_ring);
		if (ce->cpus[i].mapped)
			data_ring__munmap(&ce->cpus[i].ring);
	}
	for (size_t i = 0; i < ce->nr_side; i++)
		perf_sys__close(ce->sys, ce->side_fds[i]);
	for (size_t i = 0; i < ce->nr_cpus; i++)
		perf_sys__close(ce->sys, ce->cpus[i].out_fd);
	free(ce->cpus);
	free(ce->side_fds);
	free(ce->side_ids);
	memset(ce, 0, sizeof(*ce));
}
