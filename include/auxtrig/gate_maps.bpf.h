/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_MAPS_BPF_H
#define AUXTRIG_GATE_MAPS_BPF_H

/**
 * DOC: the gate's shared maps
 *
 * The maps the gate (bpf/gate/) shares with user trigger programs
 * (auxtrig/trigger.bpf.h). Both include this one definition: the loader hands
 * a trigger program the gate's maps by name (bpf_map__reuse_fd()), which
 * works only while their definitions agree. Each is __weak: every part of the
 * gate includes this header and defines them, and bpftool gen object keeps
 * one; a trigger program, one object, is not affected.
 */

/* armed, mark type, -a, edges: written by userspace only (gate_abi.h, "who writes what"). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_config);
} gate_config SEC(".maps") __weak;

/* frozen, freeze_at: written by BPF; userspace clears them after a snapshot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_runtime);
} gate_runtime SEC(".maps") __weak;

/* A stop action fired: nothing is emitted from gate_stop.at on. Written by BPF only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_stop);
} gate_stop SEC(".maps") __weak;

/* Per-CPU bpf-output perf events: where records go (size set by the loader). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} gate_events SEC(".maps") __weak;

/* Per-thread window state, keyed by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct gate_thread);
} gate_threads SEC(".maps") __weak;

/* The processes (tgid, or tid with -t) that are recorded. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} gate_targets SEC(".maps") __weak;

/* Fired triggers, to the recorder: apart from trace data, so a flood cannot drop them. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} gate_ctl SEC(".maps") __weak;

/* What trigger programs' windows did (struct gate_prog_stats): written by BPF only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_prog_stats);
} gate_prog_stats SEC(".maps") __weak;

#endif
