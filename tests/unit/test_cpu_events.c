// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recorder's per-CPU events (user/record/cpu_events.c) on the perf
 * system-call seam, played by tests/unit/fake_kernel.c: which events it
 * opens and maps on which CPUs, where sideband goes, what a drain and a
 * flight-recorder snapshot hand out (and the PAUSE_OUTPUT around it), the
 * order of unmap and close, and what a failure at each step leaves in the
 * "kernel": nothing open, nothing mapped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/record/cpu_events.h"
#include "auxtrig/sys/target.h"
#include "fake_kernel.h"

#define PAGES 4

struct t {
	struct fake_kernel k;
	struct perf_sys sys;
	struct cpu_events ce;
	bool mask[4];
	pid_t pid;
	struct target target;
	/* what a drain or snapshot handed out: the u64 after each header */
	__u64 got[64];
	size_t nr_got;
};

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_int_equal(fake_kernel__init(&t->k, 0, NULL, NULL, 0), 0);
	t->sys = fake_kernel__sys(&t->k);
	t->mask[0] = t->mask[1] = t->mask[2] = true;	/* -C 0-2 of 4 possible */
	t->k.offline = 1u << 1;				/* CPU 1 is offline */
	t->pid = 4242;
	t->target.is_command = true;
	t->target.pids = &t->pid;
	t->target.nr_pids = 1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	fake_kernel__exit(&t->k);
	free(t);
	return 0;
}

static int record(void *ctx, const struct perf_event_header *h)
{
	struct t *t = ctx;
	__u64 v;

	assert_true(h->size >= sizeof(*h) + sizeof(v));
	memcpy(&v, h + 1, sizeof(v));
	assert_true(t->nr_got < 64);
	t->got[t->nr_got++] = v;
	return 0;
}

static void emit(struct t *t, int fd, __u64 v, int expect)
{
	struct {
		struct perf_event_header h;
		__u64 v;
	} rec = { { PERF_RECORD_SAMPLE, 0, sizeof(rec) }, v };

	assert_int_equal(fake_kernel__emit(&t->k, fd, &rec.h), expect);
}

/* Nothing open, nothing mapped, nothing closed under a live mapping, no call on a dead fd. */
static void nothing_left(const struct t *t)
{
	assert_int_equal(fake_kernel__nr_open(&t->k), 0);
	assert_int_equal(fake_kernel__nr_mapped(&t->k), 0);
	assert_int_equal(t->k.closed_mapped, 0);
	assert_int_equal(t->k.bad_calls, 0);
}

static int open_all(struct t *t, bool snapshot)
{
	int err = cpu_events__open(&t->ce, &t->sys, t->mask, 4, PAGES, snapshot, false);

	return err ?: cpu_events__follow(&t->ce, &t->target);
}

/* Streaming: one bpf-output event and ring per online CPU, the command's sideband redirected into it. */
static void test_cpu_events_open_map_and_follow(void **state)
{
	struct t *t = *state;
	size_t page = sysconf(_SC_PAGESIZE);

	assert_int_equal(open_all(t, false), 0);
	/* CPU 1 is offline: skipped, not an error; CPU 3 is not in -C */
	assert_int_equal(t->ce.nr_cpus, 2);
	assert_int_equal(t->ce.cpus[0].cpu, 0);
	assert_int_equal(t->ce.cpus[1].cpu, 2);
	for (size_t i = 0; i < t->ce.nr_cpus; i++) {
		const struct cpu_slot *c = &t->ce.cpus[i];
		const struct fake_kernel_event *e = fake_kernel__event(&t->k, c->out_fd);

		assert_non_null(e);
		assert_int_equal(e->type, PERF_TYPE_SOFTWARE);
		assert_int_equal(e->config, PERF_COUNT_SW_BPF_OUTPUT);
		assert_int_equal(e->pid, -1);
		assert_false(e->backward);
		assert_int_equal(c->out_id, e->id);
		/* one read-write mapping: the user page and PAGES data pages */
		assert_int_equal(fake_kernel__calls_of(&t->k, FAKE_MMAP, c->out_fd, 0), 1);
		for (size_t m = 0; m < FAKE_KERNEL_MAX_MAPS; m++)
			if (t->k.maps[m].addr && t->k.maps[m].fd == c->out_fd) {
				assert_int_equal(t->k.maps[m].len, (PAGES + 1) * page);
				assert_int_equal(t->k.maps[m].prot, PROT_READ | PROT_WRITE);
			}
	}
	/* the command's sideband: a dummy per CPU, enabled at its exec, into that CPU's ring */
	assert_int_equal(t->ce.nr_side, 2);
	for (size_t i = 0; i < t->ce.nr_side; i++) {
		const struct fake_kernel_event *e = fake_kernel__event(&t->k, t->ce.side_fds[i]);

		assert_non_null(e);
		assert_int_equal(e->config, PERF_COUNT_SW_DUMMY);
		assert_int_equal(e->pid, t->pid);
		assert_false(e->enabled);
		assert_int_equal(e->output, t->ce.cpus[i].out_fd);
		assert_int_equal(t->ce.side_ids[i], e->id);
		assert_true(cpu_events__is_side_id(&t->ce, e->id));
	}
	assert_false(cpu_events__is_side_id(&t->ce, t->ce.cpus[0].out_id));
	cpu_events__close(&t->ce);
	nothing_left(t);
}

/* A drain hands out each ring's records in order, once; sideband arrives through the CPU's ring. */
static void test_cpu_events_drain(void **state)
{
	struct t *t = *state;
	bool any = false;

	assert_int_equal(open_all(t, false), 0);
	emit(t, t->ce.cpus[0].out_fd, 1, 0);
	emit(t, t->ce.side_fds[0], 2, 0);
	emit(t, t->ce.cpus[1].out_fd, 3, 0);
	emit(t, t->ce.cpus[0].out_fd, 4, 0);
	assert_int_equal(cpu_events__drain(&t->ce, record, t, &any), 0);
	assert_true(any);
	assert_int_equal(t->nr_got, 4);
	assert_int_equal(t->got[0], 1);
	assert_int_equal(t->got[1], 2);
	assert_int_equal(t->got[2], 4);
	assert_int_equal(t->got[3], 3);
	/* consumed: the next drain sees only what is new */
	any = false;
	t->nr_got = 0;
	assert_int_equal(cpu_events__drain(&t->ce, record, t, &any), 0);
	assert_false(any);
	emit(t, t->ce.side_fds[1], 5, 0);
	assert_int_equal(cpu_events__drain(&t->ce, record, t, &any), 0);
	assert_true(any);
	assert_int_equal(t->nr_got, 1);
	assert_int_equal(t->got[0], 5);
	cpu_events__close(&t->ce);
	nothing_left(t);
}

struct check_ctx {
	struct t *t;
	__u64 peeked[8];
	size_t nr_peeked;
	int verdict;
	bool emit_late;	/* the kernel writes a record while the check runs */
};

static int peeked(void *ctx, const struct perf_event_header *h)
{
	struct check_ctx *c = ctx;
	__u64 v;

	memcpy(&v, h + 1, sizeof(v));
	assert_true(c->nr_peeked < 8);
	c->peeked[c->nr_peeked++] = v;
	return 0;
}

static int check(void *ctx, struct cpu_events *ce)
{
	struct check_ctx *c = ctx;

	assert_int_equal(cpu_events__peek(ce, peeked, c), 0);
	if (c->emit_late)
		emit(c->t, ce->cpus[0].out_fd, 9, 0);
	return c->verdict;
}

static int record_checked(void *ctx, const struct perf_event_header *h)
{
	return record(((struct check_ctx *)ctx)->t, h);
}

/*
 * A checked drain (how a stop cuts a pass): the check sees, without taking
 * them, exactly the records the pass then hands out, those up to the heads
 * read first; what arrives meanwhile waits for the next pass. A check that
 * says wait leaves every record in its ring.
 */
static void test_cpu_events_drain_checked(void **state)
{
	struct t *t = *state;
	struct check_ctx c = { .t = t, .verdict = 1 };
	bool any = false;

	assert_int_equal(open_all(t, false), 0);
	emit(t, t->ce.cpus[0].out_fd, 1, 0);
	emit(t, t->ce.cpus[1].out_fd, 2, 0);
	/* wait: seen, nothing taken */
	assert_int_equal(cpu_events__drain_checked(&t->ce, check, record_checked, &c, &any), 0);
	assert_false(any);
	assert_int_equal(t->nr_got, 0);
	assert_int_equal(c.nr_peeked, 2);
	/* go on: the same two, with one written during the check left for later */
	c.nr_peeked = 0;
	c.verdict = 0;
	c.emit_late = true;
	assert_int_equal(cpu_events__drain_checked(&t->ce, check, record_checked, &c, &any), 0);
	assert_true(any);
	assert_int_equal(c.nr_peeked, 2);
	assert_int_equal(t->nr_got, 2);
	assert_int_equal(t->got[0], 1);
	assert_int_equal(t->got[1], 2);
	c.emit_late = false;
	c.nr_peeked = 0;
	assert_int_equal(cpu_events__drain_checked(&t->ce, check, record_checked, &c, &any), 0);
	assert_int_equal(c.nr_peeked, 1);
	assert_int_equal(t->nr_got, 3);
	assert_int_equal(t->got[2], 9);
	cpu_events__close(&t->ce);
	nothing_left(t);
}

/*
 * Flight recorder: the output rings are overwritten backwards, mapped
 * read-only; each CPU's sideband gets a forward ring of its own, streamed.
 * A snapshot pauses each ring around the read and hands out, oldest
 * first, what no earlier snapshot took.
 */
static void test_cpu_events_flight_recorder(void **state)
{
	struct t *t = *state;
	bool any = false;

	t->pid = 4243;
	t->target.is_command = false;
	t->target.threads = true; /* -t: the thread only */
	assert_int_equal(open_all(t, true), 0);
	for (size_t i = 0; i < t->ce.nr_cpus; i++) {
		const struct cpu_slot *c = &t->ce.cpus[i];

		assert_true(fake_kernel__event(&t->k, c->out_fd)->backward);
		for (size_t m = 0; m < FAKE_KERNEL_MAX_MAPS; m++)
			if (t->k.maps[m].addr && t->k.maps[m].fd == c->out_fd)
				assert_int_equal(t->k.maps[m].prot, PROT_READ);
		/* the first (here: only) sideband event of the CPU owns the forward sideband ring */
		assert_int_equal(c->side_fd, t->ce.side_fds[i]);
		assert_int_equal(fake_kernel__calls_of(&t->k, FAKE_MMAP, c->side_fd, 0), 1);
		assert_int_equal(fake_kernel__event(&t->k, c->side_fd)->output, -1);
	}
	emit(t, t->ce.cpus[0].out_fd, 10, 0);
	emit(t, t->ce.cpus[0].out_fd, 11, 0);
	emit(t, t->ce.cpus[1].out_fd, 20, 0);
	emit(t, t->ce.side_fds[0], 99, 0);
	/* a drain streams the sideband only: the flight recorder waits for a snapshot */
	assert_int_equal(cpu_events__drain(&t->ce, record, t, &any), 0);
	assert_int_equal(t->nr_got, 1);
	assert_int_equal(t->got[0], 99);
	t->nr_got = 0;
	assert_int_equal(cpu_events__snapshot(&t->ce, record, t), 0);
	assert_int_equal(t->nr_got, 3);
	assert_int_equal(t->got[0], 10);
	assert_int_equal(t->got[1], 11);
	assert_int_equal(t->got[2], 20);
	for (size_t i = 0; i < t->ce.nr_cpus; i++) {
		int fd = t->ce.cpus[i].out_fd;

		assert_int_equal(fake_kernel__calls_of(&t->k, FAKE_IOCTL, fd, PERF_EVENT_IOC_PAUSE_OUTPUT), 2);
		assert_false(fake_kernel__event(&t->k, fd)->paused); /* running again */
	}
	/* the next snapshot: only what came since */
	emit(t, t->ce.cpus[0].out_fd, 12, 0);
	t->nr_got = 0;
	assert_int_equal(cpu_events__snapshot(&t->ce, record, t), 0);
	assert_int_equal(t->nr_got, 1);
	assert_int_equal(t->got[0], 12);
	/* the sideband rings are unmapped before their events are closed, like the rest */
	cpu_events__close(&t->ce);
	nothing_left(t);
}

/* PAUSE_OUTPUT 1, the read, PAUSE_OUTPUT 0: in that order, on each CPU. */
static void test_cpu_events_snapshot_pauses_around_the_read(void **state)
{
	struct t *t = *state;
	size_t first = 0;

	assert_int_equal(open_all(t, true), 0);
	first = t->k.nr_log;
	assert_int_equal(cpu_events__snapshot(&t->ce, record, t), 0);
	assert_int_equal(t->k.nr_log - first, 4);
	for (size_t i = 0; i < t->ce.nr_cpus; i++) {
		const struct fake_kernel_call *on = &t->k.log[first + 2 * i], *off = on + 1;

		assert_int_equal(on->op, FAKE_IOCTL);
		assert_int_equal(on->req, PERF_EVENT_IOC_PAUSE_OUTPUT);
		assert_int_equal(on->fd, t->ce.cpus[i].out_fd);
		assert_int_equal(on->arg, 1);
		assert_int_equal(off->req, PERF_EVENT_IOC_PAUSE_OUTPUT);
		assert_int_equal(off->fd, t->ce.cpus[i].out_fd);
		assert_int_equal(off->arg, 0);
	}
	/* a failed pause: the error, and no read of a ring the kernel still writes */
	t->k.fail_at = t->k.calls + 1;
	t->k.fail_err = -EIO;
	assert_int_equal(cpu_events__snapshot(&t->ce, record, t), -EIO);
	cpu_events__close(&t->ce);
	nothing_left(t);
}

/* A thread of -t that is gone by the time its sideband opens (ESRCH): skipped, not fatal. */
static void test_cpu_events_thread_gone(void **state)
{
	struct t *t = *state;

	t->target.is_command = false;
	t->target.threads = true;
	assert_int_equal(cpu_events__open(&t->ce, &t->sys, t->mask, 4, PAGES, false, false), 0);
	t->k.fail_at = t->k.calls + 1;
	t->k.fail_err = -ESRCH;
	assert_int_equal(cpu_events__follow(&t->ce, &t->target), 0);
	assert_int_equal(t->ce.nr_side, 0);
	cpu_events__close(&t->ce);
	nothing_left(t);
}

/*
 * A failure at each step (open, ID, mmap, SET_OUTPUT, of either CPU, in
 * either mode): the error comes back, and cpu_events__close() leaves
 * nothing open or mapped.
 */
static void fail_each_step(struct t *t, bool snapshot)
{
	unsigned int n, steps = 0;

	for (n = 1;; n++) {
		int err;

		memset(&t->ce, 0, sizeof(t->ce));
		t->k.calls = 0;
		t->k.fail_at = n;
		t->k.fail_err = -EPERM;
		err = open_all(t, snapshot);
		cpu_events__close(&t->ce);
		nothing_left(t);
		if (!err)
			break;
		assert_int_equal(err, -EPERM);
		steps++;
	}
	/*
	 * per CPU: open, ID, mmap; the offline CPU's open; per CPU sideband:
	 * open, ID, SET_OUTPUT (snapshot: the mmap of its own ring)
	 */
	assert_int_equal(steps, 2 * 3 + 1 + 2 * 3);
}

static void test_cpu_events_failure_at_each_step_leaks_nothing(void **state)
{
	fail_each_step(*state, false);
}

static void test_cpu_events_flight_recorder_failure_at_each_step_leaks_nothing(void **state)
{
	fail_each_step(*state, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cpu_events_open_map_and_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_events_drain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_events_drain_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_events_flight_recorder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_events_snapshot_pauses_around_the_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_events_thread_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_events_failure_at_each_step_leaks_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_events_flight_recorder_failure_at_each_step_leaks_nothing,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
