/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CPU_EVENTS_H
#define AUXTRIG_CPU_EVENTS_H

/*
 * record/ layer: the per-CPU output events, sideband and rings of a recording
 * (user/record/cpu_events.c), opened by the recorder through sys/perf_sys.h.
 */

#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/record/data_ring.h"

struct pdata_writer;
struct perf_sys;
struct target;

/**
 * DOC: the per-CPU perf events of a recording
 *
 * Per CPU there is one ring: the bpf-output event the gate writes records
 * to, and the sideband (dummy) events of the targets redirected into it
 * with PERF_EVENT_IOC_SET_OUTPUT, so one pass over NR_CPUS rings sees
 * everything. In flight-recorder mode the output ring is overwritten and
 * backwards, and sideband must not be lost to it (perf needs every COMM
 * and MMAP to make sense of a snapshot), so each CPU gets a small forward
 * ring for sideband, streamed to the file.
 *
 *   cpu_events__open() -> cpu_events__follow() -> cpu_events__add_attrs()
 *   -> loop: cpu_events__drain() | cpu_events__snapshot() -> cpu_events__close()
 */

/**
 * struct cpu_slot - one CPU
 * @out_fd:	the bpf-output event; owns @ring
 * @out_id:	its id
 * @ring:	forward, or overwrite in flight-recorder mode
 * @side_fd:	flight recorder: the first sideband event, owns @side_ring
 */
struct cpu_slot {
	int cpu;
	int out_fd;
	__u64 out_id;
	struct data_ring ring;
	bool mapped;
	int side_fd;
	struct data_ring side_ring;
	bool side_mapped;
};

/**
 * struct cpu_events - every CPU's events
 * @cpus, @nr_cpus:	the CPUs recorded on (online, in -C)
 * @side_fds, @side_ids, @nr_side: the sideband events
 * @snapshot_mode:	flight recorder
 * @pages:		ring pages per CPU
 * @sys:		the perf system calls they go through (NULL: the kernel)
 */
struct cpu_events {
	struct cpu_slot *cpus;
	size_t nr_cpus;
	int *side_fds;
	__u64 *side_ids;
	size_t nr_side;
	bool snapshot_mode;
	bool callchain;
	size_t pages;
	const struct perf_sys *sys;
};

/**
 * CPU_EVENTS_OUT_SAMPLE_TYPE - what the bpf-output event's samples carry in
 * the ring: %PDATA_SAMPLE_TYPE without IP and PERIOD. The gate's own header
 * has the IP perf would report and the period is always 1, so the recorder
 * puts both back when it writes the sample as its tracepoint's; leaving them
 * out of the ring makes every record 16 bytes smaller there (a getppid()
 * entry: 72 bytes, as perf record's own sample of it, not 88), so a ring of
 * the same size holds as many records as perf's before one is lost. With -g
 * PERF_SAMPLE_CALLCHAIN is added, after the head (struct cpu_events_out_head).
 * The sample_id trailer of the ring's other records is the same as under
 * %PDATA_SAMPLE_TYPE: neither field is in it.
 */
#define CPU_EVENTS_OUT_SAMPLE_TYPE (PDATA_SAMPLE_TYPE & ~(__u64)(PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD))

/**
 * struct cpu_events_out_head - the fixed start of a bpf-output sample in the
 * ring (%CPU_EVENTS_OUT_SAMPLE_TYPE); with -g u64 nr and nr callchain entries
 * follow, then u32 raw_size and the raw bytes, the whole record padded to 8.
 */
struct cpu_events_out_head {
	struct perf_event_header header;
	__u64 id;
	__u32 pid, tid;
	__u64 time;
	__u32 cpu, res;
};
_Static_assert(sizeof(struct cpu_events_out_head) == 40, "bpf-output sample head");

/**
 * cpu_events__attr_output() - the bpf-output event's attr
 * (%CPU_EVENTS_OUT_SAMPLE_TYPE); with @callchain
 * (-g) its samples carry the kernel and user call stack of the thread the
 * gate ran on (PERF_SAMPLE_CALLCHAIN, at most kernel.perf_event_max_stack
 * entries).
 */
void cpu_events__attr_output(struct perf_event_attr *a, size_t ring_bytes, bool overwrite, bool callchain);
/** cpu_events__attr_sideband() - the sideband (dummy) event's attr. */
void cpu_events__attr_sideband(struct perf_event_attr *a, bool enable_on_exec);
/** cpu_events__attr_tracepoint() - the attr a tracepoint @type's samples are described with in the file. */
void cpu_events__attr_tracepoint(struct perf_event_attr *a, unsigned int type, bool callchain);

/**
 * cpu_events__open() - the output event and ring of each online CPU in
 * @mask (@nr_possible long), through @sys (NULL: the kernel); offline CPUs
 * are skipped; @callchain: the samples carry call stacks (-g). The caller
 * hands each &cpu_slot.out_fd to the gate.
 * Return: 0 or -errno, with a message; on failure, cpu_events__close()
 * closes what was opened.
 */
int cpu_events__open(struct cpu_events *ce, const struct perf_sys *sys, const bool *mask, int nr_possible,
		     size_t pages, bool snapshot_mode, bool callchain);

/** cpu_events__follow() - the targets' sideband on every CPU. Return: 0 or -errno, with a message. */
int cpu_events__follow(struct cpu_events *ce, const struct target *t);

/** cpu_events__add_attrs() - the sideband and bpf-output attrs with their ids. */
int cpu_events__add_attrs(const struct cpu_events *ce, struct pdata_writer *w);

/** cpu_events__is_side_id() - is @id a sideband event's? */
bool cpu_events__is_side_id(const struct cpu_events *ce, __u64 id);

/** typedef cpu_events_fn - one record of a ring; 0 or -errno (stops). */
typedef int (*cpu_events_fn)(void *ctx, const struct perf_event_header *h);

/**
 * cpu_events__drain() - every forward ring's records to @fn: streaming, the
 * CPUs' rings; flight recorder, only the sideband rings. @any: set if a
 * record was seen.
 */
int cpu_events__drain(struct cpu_events *ce, cpu_events_fn fn, void *ctx, bool *any);

/** A look at a pass's records before they are handed on: 0 go on, > 0 leave them all for the next pass, < 0 error. */
typedef int (*cpu_events_check_fn)(void *ctx, struct cpu_events *ce);

/**
 * cpu_events__drain_checked() - cpu_events__drain() in two steps: every
 * ring's head is read first, then @check runs (it may cpu_events__peek()
 * at the records up to those heads), then @fn gets exactly those records.
 */
int cpu_events__drain_checked(struct cpu_events *ce, cpu_events_check_fn check, cpu_events_fn fn, void *ctx,
			      bool *any);

/**
 * cpu_events__peek() - inside a cpu_events_check_fn: the pass's records, up
 * to the heads it read, to @fn, left in their rings.
 */
int cpu_events__peek(struct cpu_events *ce, cpu_events_fn fn, void *ctx);

/**
 * cpu_events__snapshot() - flight recorder: freeze each CPU's ring
 * (PERF_EVENT_IOC_PAUSE_OUTPUT: the kernel drops and counts what arrives
 * meanwhile), hand @fn what it holds that no earlier snapshot took, and
 * let it run again.
 */
int cpu_events__snapshot(struct cpu_events *ce, cpu_events_fn fn, void *ctx);

/** cpu_events__close() - unmap and close everything. */
void cpu_events__close(struct cpu_events *ce);

#endif
