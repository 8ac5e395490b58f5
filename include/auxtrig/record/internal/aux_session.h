/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_INTERNAL_AUX_SESSION_H
#define AUXTRIG_INTERNAL_AUX_SESSION_H

/*
 * record/ layer, inside the AUX session: the whole struct aux_session, which
 * auxtrig/record/aux_session.h keeps opaque, and what the session's files
 * call of each other: aux_session.c (built, opened, started, threads
 * followed, stopped), aux_session_info.c (the attrs and AUXTRACE_INFO it
 * writes into perf.data), aux_session_gate.c (the userspace gate: window
 * edges switching the trace), aux_session_drain.c (data rings and AUX data
 * into the file), aux_session_snapshot.c (snapshot mode). Only they include
 * this, as libperf's include/internal/ headers.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/record/aux_group.h"
#include "auxtrig/record/aux_ring.h"
#include "auxtrig/record/aux_session.h"
#include "auxtrig/record/data_ring.h"
#include "auxtrig/sys/perf_sys.h"

struct pmu_set;
struct record_sink;

/*
 * One CPU's group (per CPU: @tid is the session's pid) or one thread's (per
 * thread, cpu -1). A thread's slot stays when its thread is gone (@closed),
 * so that every slot keeps its AUXTRACE idx. @file_leader_id and
 * @file_tracking_id: the ids its records carry in the file (its own, or for
 * a thread followed after the attrs were written the first slot's, as the
 * kernel gives an inherited event its parent's).
 */
struct aux_session_cpu {
	struct aux_session *s;
	struct aux_group g;
	pid_t tid;
	bool closed;
	bool exited;	/* snapshot mode: its thread exited; closed once a snapshot took its trace */
	__u64 exit_seq;	/* ...the how-manieth exit it was */
	int leader_fd;
	__u64 leader_id;
	int member_fds[AUX_GROUP_MAX_MEMBERS];
	int member_links[AUX_GROUP_MAX_MEMBERS];	/* veto programs' links, or -1 */
	int tracking_fd;
	__u64 tracking_id;
	__u64 file_leader_id, file_tracking_id;
	struct data_ring data;
	bool data_mapped;
	struct aux_ring aux;
	bool aux_mapped;
	/* per thread, gated: its window is open (its leader enabled), since when */
	bool gate_open;
	__u64 enabled_at;
};

struct aux_session {
	struct aux_session_opts o;
	int *cpu_list;
	struct aux_session_trigger *triggers;
	const struct pmu_set *pmus;	/* borrowed: what @ev was resolved against */
	struct aux_event ev;
	const struct aux_pmu_ops *pmu_ops;
	struct aux_group_caps caps;
	struct aux_session_cpu **cpus;	/* the slots: one per CPU, or one per thread */
	size_t nr_slots, cap_slots;
	__u64 exits;		/* snapshot mode, per thread: threads that exited so far */
	bool per_thread;
	struct perf_sys sys;	/* the kernel it was opened on */
	bool opened;
	bool started;
	bool attrs_added;	/* threads opened later carry the first slot's ids in the file */
	__u64 file_leader_id, file_tracking_id;
	unsigned char *scratch;	/* a record whose ids are rewritten */
	bool gated;
	bool gate_open;		/* gated per CPU: the recorder enabled the AUX events */
	bool stopping;
	bool no_flush;		/* snapshots stop the trace: the kernel refused to flush it running */
	struct aux_session_stats stats;
	char **paths;		/* uprobe triggers' binaries, owned */
	/* fallback gating: threads with a window open, edge counters, latencies */
	__u32 *open_tids;
	size_t nr_open, cap_open;
	__u64 enabled_at;	/* CLOCK_MONOTONIC when the gate last opened */
	struct aux_session_gate_stats gs;
	__u64 *lat;
	size_t nr_lat, cap_lat;
	__u64 threads_added, threads_failed;
};

/* aux_session.c */

/* "CPU 3" or "thread 1234", for messages. */
const char *aux_session__where(const struct aux_session_cpu *c, char *buf, size_t size);
/* Gated: is the userspace gate of @c's trace open (per thread its own, per CPU the session's)? */
bool aux_session__gate_is_open(const struct aux_session *s, const struct aux_session_cpu *c);
/* Close @c's events and unmap its rings; the slot stays (@closed), keeping its idx. */
void aux_session__close_slot(struct aux_session *s, struct aux_session_cpu *c);
/* The first slot that is open (a thread's may be gone), or NULL. */
struct aux_session_cpu *aux_session__first_open(const struct aux_session *s);
/* Enable or disable @c's leader (and with it its group); said why on failure. Return: 0 or -errno. */
int aux_session__ctl_slot(struct aux_session *s, struct aux_session_cpu *c, bool enable);
/* The same for every open slot. Return: 0 or the first -errno. */
int aux_session__ctl_all(struct aux_session *s, bool enable);
/* The open slot of thread @tid, or NULL. */
struct aux_session_cpu *aux_session__thread_slot(const struct aux_session *s, pid_t tid);

/* aux_session_drain.c */

/* @c's data ring into @k. Return: the records written, or -errno. */
int aux_session__drain_data(struct aux_session *s, struct aux_session_cpu *c, struct record_sink *k);
/* One AUXTRACE record and its data @rd of @c's AUX area into @k. Return: 1, or -errno. */
int aux_session__put(struct aux_session *s, struct aux_session_cpu *c, const struct aux_ring_read *rd,
		     struct record_sink *k);
/* One slot: its records, and in full-trace mode its new AUX data. Return: records written, or -errno. */
int aux_session__drain_slot(struct aux_session *s, struct aux_session_cpu *c, struct record_sink *k);

#endif
