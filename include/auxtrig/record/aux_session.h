/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_AUX_SESSION_H
#define AUXTRIG_AUX_SESSION_H

/*
 * record/ layer: a hardware-trace recording across CPUs (user/record/aux_session.c),
 * set up by hw_trace.c, on aux_group, aux_ring, data_ring and sys/perf_sys.h.
 */

/**
 * DOC: AUX recording session
 *
 * One hardware-trace recording: the parsed AUX event, one &struct aux_group
 * per CPU (or per thread of the target), and for each the leader's data
 * ring and AUX ring. The recorder calls, in this order:
 *
 *   aux_session__new()        build and validate the groups of the resolved event
 *   [aux_session__print()]    --dry-run -vv
 *   aux_session__open()       open the events, SET_OUTPUT the tracking
 *                             event into the leader, mmap data + AUX rings
 *   aux_session__add_attrs()  leader and tracking attrs with their ids
 *   pdata_writer__begin_data()
 *   aux_session__write_info() AUXTRACE_INFO (before any AUXTRACE)
 *   aux_session__start()      enable tracking and (unless gated) the leaders
 *   loop: epoll on aux_session__fd(0..nr_fds-1)
 *         aux_session__drain()     data rings + full-trace AUX reads
 *         aux_session__snapshot()  snapshot mode, on the trigger
 *         aux_session__enable()/__disable()   fallback gating only
 *         aux_session__add_thread()/__remove_thread()   per thread: a thread
 *                                  the target created (reported by the gate; traced once its group
 *                                  is open) / one that exited
 *   aux_session__stop()       disable everything, final drain (or snapshot)
 *   aux_session__stats(), aux_session__delete()
 *
 * Per thread (cpus { -1 }): each thread's group is opened for that thread on
 * every CPU (pid = tid, cpu = -1), so its pause state and its gate follow the
 * thread when it migrates; its AUX buffer is its own (AUXTRACE idx = the
 * thread's slot, tid = the thread, cpu = -1), as perf record --per-thread
 * writes. Such groups cannot be inherited (the kernel maps no inherited
 * per-task ring), so the recorder adds the threads the target creates as
 * the gate reports them (GATE_MSG_THREAD), after they started. A thread
 * added after aux_session__add_attrs() carries, in the file, the ids the
 * first thread's events have there (as the kernel gives inherited events
 * their parent's id): perf finds every record's event.
 *
 * The trigger events are opened and counted but not written to the file:
 * no record of theirs reaches the leader's ring (their samples have no ring
 * and are dropped by the kernel after the pause/resume ran), and a
 * tracepoint attr in the file would require HEADER_TRACING_DATA.
 *
 * Everything that talks to the kernel goes through the &struct perf_sys
 * given to aux_session__open() (perf_event_open, the ioctls, the ring
 * mmaps by data_ring__mmap() and aux_ring__mmap(), close, the veto
 * programs' links). Tests hand in the AUX ring model's (fake_kernel.c):
 * its "event fds" are memfds laid out as the kernel's mapping, so the
 * mapping code under test is the code that runs on a trace machine
 * (PROT_READ for snapshot rings included).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/record/aux_group.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/probe.h"

struct aux_session;
struct pdata_writer;
struct pmu_set;
struct record_sink;

/** enum aux_trigger_kind - where a trigger fires. */
enum aux_trigger_kind {
	AUX_TRIGGER_TRACEPOINT = 0,
	AUX_TRIGGER_UPROBE,
	AUX_TRIGGER_KPROBE,
};

/**
 * struct aux_session_trigger - one trigger: a point and an action.
 * @name: tracepoint "system:event" (uprobes are named from @path/@offset).
 * @id: tracepoint: the tracefs id.
 * @action: %AUXTRIG_AUX_RESUME (opens a window), %AUXTRIG_AUX_PAUSE
 *          (closes it, or freezes a snapshot ring).
 * @kind: a tracepoint (0), a user function's entry/return (the "uprobe" PMU),
 *        or a kernel function's (the "kprobe" PMU).
 * @path: uprobe: the binary; kprobe: the function's name (copied by
 *        aux_session__new()).
 * @offset: uprobe: file offset of the probed instruction; kprobe: bytes into
 *          the function.
 * @retprobe: uprobe, kprobe: at the function's return (a uretprobe, kretprobe).
 * @veto: uprobe: a condition's text (borrowed, for printing): a BPF program
 *        attached to the member decides which hits act (see @veto_prog_fd).
 *        Only on the in-kernel path; the userspace-gated one applies the
 *        condition in the gate itself.
 * @veto_prog_fd: that program (a BPF_PROG_TYPE_KPROBE program, the gate's
 *        gate_aux_veto_enter/exit), attached when the member is opened with
 *        the cookie (CPU + 1) << 32 | @window; 0 or less: not loaded yet
 *        (--dry-run), and aux_session__open() refuses.
 * @window: the window the member belongs to, for the program's cookie.
 */
struct aux_session_trigger {
	const char *name;
	__u64 id;
	__u32 action;
	enum aux_trigger_kind kind;
	const char *path;
	__u64 offset;
	bool retprobe;
	const char *veto;
	int veto_prog_fd;
	__u32 window;
};

/**
 * struct aux_session_opts - what to record.
 * @event: the AUX event, resolved (aux_event__parse(), by the plan) for
 *         this session: per thread if @cpus is { -1 }, @snapshot, and
 *         @aux_pages for Intel PT's watermark (copied).
 * @pmus: the PMUs @event was resolved against; the uprobe PMU of uprobe
 *        triggers comes from it. Borrowed: must outlive the session.
 * @sysfs_root: where @pmus were read (NULL: /sys), for messages, and to
 *              check the PMU's type against /sys when opening on the
 *              running kernel.
 * @cpus, @nr_cpus: the CPUs, in mmap (idx) order; a single -1 records per
 *                 thread: one group and AUX buffer for each thread.
 * @pid: per CPU: -1 system-wide, or the target process whose events are
 *       opened on each CPU; per thread: the thread, when @tids is empty.
 * @tids, @nr_tids: per thread: the threads to record from the start
 *                  (borrowed); aux_session__add_thread() adds more.
 * @snapshot: snapshot (overwrite) AUX rings.
 * @snapshot_size: most bytes per CPU and snapshot; 0 = the AUX buffer.
 * @data_pages: data ring pages per CPU (power of 2).
 * @aux_pages: AUX pages per CPU (power of 2).
 * @triggers, @nr_triggers: resume/pause triggers. With a resume trigger the
 *           groups are windows (start paused); with only pause triggers
 *           they freeze the trace; with none, plain trace.
 * @pause_support: `auxtrig probe`'s verdict on the AUX PMU; anything but
 *                 %PROBE_PAUSE_YES falls back to gating from userspace.
 * @gate_from_userspace: gate from userspace even where the kernel could
 *                 pause and resume (the caller says why, e.g. a --where
 *                 that no BPF program can apply to a tracepoint trigger).
 * @max_exited: per thread, snapshot mode: at most this many exited threads'
 *              groups wait for the next snapshot (0: AUX_SESSION_MAX_EXITED);
 *              beyond, the longest exited is closed and counted
 *              (aux_session_stats.exited_dropped): memory stays bounded
 *              whatever the target's threads do.
 */
#define AUX_SESSION_MAX_EXITED 64

struct aux_session_opts {
	const struct aux_event *event;
	const struct pmu_set *pmus;
	const char *sysfs_root;
	const int *cpus;
	size_t nr_cpus;
	pid_t pid;
	const pid_t *tids;
	size_t nr_tids;
	bool snapshot;
	size_t snapshot_size;
	size_t data_pages;
	size_t aux_pages;
	const struct aux_session_trigger *triggers;
	size_t nr_triggers;
	enum probe_pause pause_support;
	bool gate_from_userspace;
	size_t max_exited;
};

/**
 * struct aux_session_stats - for the end-of-run summary.
 * @aux_records: PERF_RECORD_AUX seen; @truncated, @partial, @collision: of
 *               those with the flag; @truncated_empty: truncated with no
 *               data (the driver wrote nothing of this event's: a CoreSight
 *               sink another event held).
 * @itrace_starts: PERF_RECORD_ITRACE_START.
 * @lost: PERF_RECORD_LOST records; @lost_events: events they report lost.
 * @records: data-ring records written.
 * @auxtrace: AUXTRACE records written; @aux_bytes: their trace bytes.
 * @reenables: AUX events re-enabled after the kernel disabled them.
 * @snapshots: snapshots taken.
 * @snapshot_overwritten: bytes left out of snapshots taken with the trace
 *                        running: the hardware wrote over them while they
 *                        were copied.
 * @threads_added: per thread: threads added after the start.
 * @threads_failed: per thread: threads whose group could not be opened (not traced).
 * @exited_closed: per thread, snapshot mode: groups of exited threads closed
 *                 (buffers unmapped) after a snapshot took their trace.
 * @exited_dropped: per thread, snapshot mode: groups of exited threads closed
 *                  before any snapshot took their trace, the longest exited
 *                  first, to keep at most @max_exited (their trace is not in
 *                  the file).
 */
struct aux_session_stats {
	__u64 aux_records;
	__u64 truncated;
	__u64 truncated_empty;
	__u64 partial;
	__u64 collision;
	__u64 itrace_starts;
	__u64 lost;
	__u64 lost_events;
	__u64 records;
	__u64 auxtrace;
	__u64 aux_bytes;
	__u64 reenables;
	__u64 snapshots;
	__u64 snapshot_overwritten;
	__u64 threads_added;
	__u64 threads_failed;
	__u64 exited_closed;
	__u64 exited_dropped;
};

/**
 * struct aux_session_gate_stats - the userspace-gated fallback's edges.
 * @opens, @closes: window edges handed to aux_session__edge().
 * @enables, @disables: times the AUX events were switched on / off.
 * @late: closing edges stamped before the trace was on for them: that
 *        window's trace is missing (the round trip took longer than it).
 * @unmatched: a close for a thread with no window open, or an open for
 *             one already open (an edge message was lost in between).
 * @other_threads: edges of threads no AUX event of the session traces
 *                 (a task's events per CPU follow that one thread; per
 *                 thread, one whose group could not be opened), ignored.
 * @lat_n: switches timed; @lat_min, @lat_median, @lat_p99, @lat_max:
 *         nanoseconds from the gate's stamp (bpf_ktime_get_ns()) to the
 *         ioctl's return (CLOCK_MONOTONIC).
 */
struct aux_session_gate_stats {
	__u64 opens;
	__u64 closes;
	__u64 enables;
	__u64 disables;
	__u64 late;
	__u64 unmatched;
	__u64 other_threads;
	__u64 lat_n;
	__u64 lat_min;
	__u64 lat_median;
	__u64 lat_p99;
	__u64 lat_max;
};

/**
 * aux_session__new() - describe the session; opens nothing.
 * @s: set to the new session.
 * @o: options (copied; @event, @cpus and @triggers too).
 *
 * Reports with pr_err(): an AUX PMU auxtrig cannot read, no uprobe PMU for
 * uprobe triggers, buffer sizes (powers of 2; Intel PT at least 8 KiB full trace, 4 KiB
 * snapshot, as perf), a snapshot size larger than the buffer, and the
 * kernel's refusals (aux_group__validate()). A PMU or kernel without
 * pause/resume gets the userspace-gated fallback with a warning.
 *
 * Return: 0, -ENOENT, -EINVAL, -EOPNOTSUPP, -ENOMEM.
 */
int aux_session__new(struct aux_session **s, const struct aux_session_opts *o);

/**
 * aux_session__print() - every group, attrs by name (perf -vv style, see
 * attr_print__group()). Return: bytes written.
 */
int aux_session__print(const struct aux_session *s, FILE *f);

/**
 * aux_session__open() - open every CPU's group and tracking event, read
 * their ids, redirect the tracking event into the leader's ring, mmap the
 * leader's data ring and AUX area (read-only in snapshot mode).
 * @sys: the kernel; NULL = &perf_sys__kernel. With a table that is the
 *       running kernel (@sys->kernel), a PMU described by a --sysfs-root
 *       fixture must have this machine's type.
 *
 * Return: 0 or -errno, with a message: -ENOENT the PMU is not on this
 * machine; -EPERM the mlock limit (perf_event_mlock_kb) or privileges;
 * -EOPNOTSUPP/-EINVAL the kernel refused an attr. On failure everything
 * opened so far is closed again.
 */
int aux_session__open(struct aux_session *s, const struct perf_sys *sys);

/** aux_session__add_attrs() - the AUX and tracking attrs with their ids. Return: 0 or -errno. */
int aux_session__add_attrs(struct aux_session *s, struct pdata_writer *w);

/**
 * aux_session__write_info() - PERF_RECORD_AUXTRACE_INFO for the PMU, after
 * pdata_writer__begin_data() and before any AUXTRACE. Intel PT's TSC
 * conversion is read from CPU 0's user page. Return: 0 or -errno.
 */
int aux_session__write_info(struct aux_session *s, struct pdata_writer *w);

/**
 * aux_session__start() - enable the tracking events, and the AUX events
 * unless the session is gated from userspace (windows without in-kernel
 * pause/resume: aux_session__enable() on the first trigger).
 * Return: 0 or -errno.
 */
int aux_session__start(struct aux_session *s);

/** aux_session__nr_fds() - fds to poll (one per CPU or thread: the leader's). */
size_t aux_session__nr_fds(const struct aux_session *s);

/** aux_session__fd() - the @i-th fd to poll, or -1 (none, or its thread is gone). */
int aux_session__fd(const struct aux_session *s, size_t i);

/** aux_session__tid() - per thread: the thread of the @i-th fd (-1 per CPU, or out of range). */
pid_t aux_session__tid(const struct aux_session *s, size_t i);

/** aux_session__gated() - whether the recorder must gate with __enable/__disable. */
bool aux_session__gated(const struct aux_session *s);

/** aux_session__per_thread() - one group per thread (cpus { -1 })? */
bool aux_session__per_thread(const struct aux_session *s);

/**
 * aux_session__add_thread() - per thread, after aux_session__open(): open,
 * and once started start, the group of thread @tid (a thread the target
 * created; it is traced from now on).
 * Return: its index for aux_session__fd(), or -errno (-EEXIST: it has one;
 * -EINVAL: not per thread or not open); a failure is counted
 * (threads_failed) and its windows are not traced.
 */
int aux_session__add_thread(struct aux_session *s, pid_t tid);

/**
 * aux_session__remove_thread() - per thread: thread @tid exited; its
 * records and trace go to @k, its group is closed. In snapshot mode its trace
 * is read only by a snapshot: the group stays until the next
 * aux_session__snapshot() has taken it, which then closes it and unmaps its
 * buffers (memory does not grow with every thread the target ever had).
 * Return: 0, -ENOENT (no such live thread), or the write error.
 */
int aux_session__remove_thread(struct aux_session *s, pid_t tid, struct record_sink *k);

/**
 * aux_session__drain() - every CPU: the data ring's records (AUX,
 * ITRACE_START, LOST, sideband) into the sink @k; in full-trace mode the
 * new AUX data as AUXTRACE, aux_tail advanced, the event re-enabled if the
 * kernel disabled it (TRUNCATED). The rounds are the sink's
 * (record_sink__end_pass()).
 * Return: records + AUXTRACE written, or -errno.
 */
int aux_session__drain(struct aux_session *s, struct record_sink *k);

/**
 * aux_session__snapshot() - snapshot mode: disable every AUX event (the
 * driver publishes aux_head), drain the data rings, write each CPU's
 * snapshot as AUXTRACE into @k, enable again.
 * Return: AUXTRACE written, or -errno (-EINVAL in full-trace mode).
 */
int aux_session__snapshot(struct aux_session *s, struct record_sink *k);

/** aux_session__enable() - fallback gating: PERF_EVENT_IOC_ENABLE every AUX event. */
int aux_session__enable(struct aux_session *s);

/** aux_session__disable() - fallback gating: PERF_EVENT_IOC_DISABLE every AUX event. */
int aux_session__disable(struct aux_session *s);

/**
 * aux_session__edge() - fallback gating: a window edge from the gate.
 * @open: a thread's first window opened (else its last one closed).
 * @tid: the thread.
 * @time_ns: the gate's stamp, CLOCK_MONOTONIC.
 *
 * Per thread, each thread's AUX event is enabled when its first window
 * opens and disabled when its last one closes. Per CPU, the AUX events are
 * enabled when the first thread opens a window and disabled when the last
 * one closes, in the order the edges come; a task's events per CPU (a @pid)
 * trace that thread only: other threads' edges are ignored. With -vv every
 * switch is logged with its latency.
 * Return: 0 or -errno (-EINVAL if the session is not gated).
 */
int aux_session__edge(struct aux_session *s, bool open, __u32 tid, __u64 time_ns);

/** aux_session__gate_stats() - the fallback's edge counters and latencies. */
void aux_session__gate_stats(const struct aux_session *s, struct aux_session_gate_stats *st);

/**
 * aux_session__stop() - disable everything and drain: full trace, the
 * final AUX data too; snapshot mode, only the data rings (for perf's
 * exit snapshot, call aux_session__snapshot() before). Return: 0 or -errno.
 */
int aux_session__stop(struct aux_session *s, struct record_sink *k);

/** aux_session__stats() - the counters so far. */
void aux_session__stats(const struct aux_session *s, struct aux_session_stats *st);

/** aux_session__delete() - unmap, close, free; accepts NULL. */
void aux_session__delete(struct aux_session *s);

#endif
