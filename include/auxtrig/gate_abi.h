/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_ABI_H
#define AUXTRIG_GATE_ABI_H

/**
 * DOC: the gate's BPF <-> user ABI
 *
 * bpf/gate.bpf.c runs one program on every tracepoint auxtrig uses. For each
 * hit it looks up what that tracepoint means (struct gate_tp, keyed by the
 * tracepoint's id, which the loader passes as the attach cookie) and:
 *
 *   open_mask       opens these windows on the current thread (if --where
 *                   holds), then records the hit
 *   close_mask      records the hit, then closes these windows
 *   GATE_TP_RECORD  records the hit if the thread has any window open
 *
 * A window's own start and end are recorded only when that window really
 * opened, so every recorded start has its end and vice versa.
 *
 * "Records" means: copy the raw tracepoint record (the bytes perf would put in
 * PERF_SAMPLE_RAW) into the per-CPU bpf-output perf event, so the kernel
 * stamps it with time, tid and cpu. Nothing outside a window leaves the
 * kernel. The programs always return 1: a tracepoint's BPF programs are
 * ANDed for every perf user of it, so returning 0 would hide the event from
 * a concurrent `perf record` or bpftrace.
 */

#ifndef __VMLINUX_H__	/* BPF side: vmlinux.h already has the __u types */
#include <linux/types.h>
#endif

#define GATE_MAX_WINDOWS	64	/* window ids are bits of a u64 */
#define GATE_MAX_TPS		1024
#define GATE_MAX_DYN		8	/* __data_loc/__rel_loc fields per tracepoint */
#define GATE_MAX_THREADS	65536
#define GATE_MAX_TARGETS	8192
#define GATE_RECORD_MAX		8192	/* PERF_MAX_TRACE_SIZE: no tracepoint record is larger */

#define GATE_TP_RECORD		(1u << 0)
#define GATE_TP_USER_REGS	(1u << 1)	/* sample IP from user registers (syscall tracepoints) */
#define GATE_TP_SYSCALL_ENTER	(1u << 2)	/* struct syscall_trace_enter: nr and args for --where */

/* Flags of struct gate_tp.dyn_flags[i]. */
#define GATE_DYN_REL		(1u << 0)	/* __rel_loc: offset counts from the end of the field */

/**
 * struct gate_tp - what one tracepoint means to the gate (map gate_tps)
 * @open_mask:	windows this tracepoint opens (bit N = window N)
 * @close_mask:	windows this tracepoint closes
 * @flags:	GATE_TP_*
 * @size:	size of the fixed part of the record (from the format file)
 * @nr_dyn:	number of dynamic-location fields
 * @dyn_off:	offset of each dynamic-location u32 (len << 16 | offset)
 * @dyn_flags:	GATE_DYN_* per dynamic field
 */
struct gate_tp {
	__u64 open_mask;
	__u64 close_mask;
	__u32 flags;
	__u32 size;
	__u32 nr_dyn;
	__u32 __pad;
	__u16 dyn_off[GATE_MAX_DYN];
	__u8 dyn_flags[GATE_MAX_DYN];
};

/**
 * struct gate_thread - per-thread window state (map gate_threads, key tid)
 * @open:	bit N set while window N is open on this thread
 * @opened_ns:	bpf_ktime_get_ns() when the first open window opened
 */
struct gate_thread {
	__u64 open;
	__u64 opened_ns;
};

/**
 * struct gate_stats - counters, in the program's .bss (one per CPU slot)
 * @windows_opened:	windows that opened (passed --where)
 * @windows_closed:	windows that closed
 * @windows_filtered:	window starts rejected by --where
 * @recorded:		records handed to bpf_perf_event_output()
 * @output_lost:	bpf_perf_event_output() failures (ring full): lost records
 * @too_big:		records larger than GATE_RECORD_MAX: lost
 * @threads_full:	window opens lost because gate_threads was full
 * @unknown_tp:		hits on a tracepoint with no gate_tp entry (should be 0)
 */
struct gate_stats {
	__u64 windows_opened;
	__u64 windows_closed;
	__u64 windows_filtered;
	__u64 recorded;
	__u64 output_lost;
	__u64 too_big;
	__u64 threads_full;
	__u64 unknown_tp;
};

#define GATE_STATS_SLOTS	512	/* per-CPU slots in .bss; CPUs beyond share the last */

#endif
