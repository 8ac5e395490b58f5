/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_DECODE_POOL_H
#define AUXTRIG_DECODE_POOL_H

/*
 * decode/ layer: decode jobs run in worker processes, output kept in job order
 * (user/decode/decode_pool.c); used by script_cs.c.
 */

/**
 * DOC: decode pool
 *
 * Runs decode jobs (one per trace buffer) in forked worker processes and
 * hands their output back to the parent in job order, whatever the number
 * of workers: the parent sees the same records in the same order with one
 * worker or eight, so the output is byte-identical.
 *
 * A worker is a separate process so that a decoding library that crashes on
 * corrupt input (OpenCSD 1.3.3 dereferences NULL on some buffers) costs only
 * that job: the parent learns which job died, with what signal and at which
 * input offset the job last reported (decode_out__progress()), starts a new
 * worker for the jobs that remain, and goes on. The parent holds a job's
 * records until the job ends (in memory, past 8 MiB in a temporary file), so
 * a job that dies delivers none of them.
 *
 * Worker @w of @n runs jobs w, w + n, w + 2n... in that order and writes
 * each job's records into its own pipe; the parent reads job j from worker
 * j % n. A worker that runs ahead blocks on its full pipe: memory stays
 * bounded. Workers are forked after the parent has loaded what they need,
 * so they share it (copy on write) and must not write to stdout.
 *
 *     parent ── fork ──> worker 0: job 0, job 2, ... ──pipe──┐
 *            ── fork ──> worker 1: job 1, job 3, ... ──pipe──┤
 *            <── reads job 0, 1, 2, 3... in order ───────────┘
 */

#include <linux/types.h>
#include <stddef.h>

struct decode_out;

/**
 * struct decode_pool_ops - the jobs and what to do with their output.
 * @run: in a worker: do job @job, writing its output with decode_out__write();
 *       returns 0 or a negative errno, passed to @done
 * @recv: in the parent: one record of job @job, in order; non-zero stops the
 *        run (returned by decode_pool__run())
 * @done: in the parent: job @job finished with @status (what @run returned)
 * @crash: in the parent: job @job's worker died (@sig: the signal, 0 if it
 *         exited) after reporting input offset @progress; none of its
 *         records is delivered
 */
struct decode_pool_ops {
	int (*run)(size_t job, struct decode_out *out, void *ctx);
	int (*recv)(size_t job, const void *rec, size_t len, void *ctx);
	void (*done)(size_t job, int status, void *ctx);
	void (*crash)(size_t job, int sig, __u64 progress, void *ctx);
};

/**
 * decode_pool__run() - run jobs 0..@nr_jobs-1 on @nr_workers workers (0 is
 * taken as 1; at most @nr_jobs).
 * Return: 0, what @recv returned, or -errno if workers cannot be started.
 */
int decode_pool__run(size_t nr_jobs, unsigned int nr_workers, const struct decode_pool_ops *ops, void *ctx);

/**
 * decode_out__write() - in a worker: append one record (at most 1 MiB) to
 * the job's output. Return: 0 or -EPIPE (the parent is gone: stop).
 */
int decode_out__write(struct decode_out *out, const void *rec, size_t len);

/** decode_out__progress() - in a worker: the job has reached input offset @pos. */
void decode_out__progress(struct decode_out *out, __u64 pos);

#endif
