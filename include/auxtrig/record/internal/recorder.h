/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_INTERNAL_RECORDER_H
#define AUXTRIG_INTERNAL_RECORDER_H

/*
 * record/ layer, inside the recorder: one recording session (struct
 * recorder) and what the recorder's files call of each other: recorder.c
 * (set-up, the loop, the records), recorder_file.c (the file's start),
 * recorder_trigger.c (fired triggers, timers), recorder_snapshot.c,
 * recorder_dry_run.c, recorder_summary.c (losses, counters, the summary).
 * Only they include this, as libperf's include/internal/ headers.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <sys/types.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/record/control.h"
#include "auxtrig/record/cpu_events.h"
#include "auxtrig/record/hw_trace.h"
#include "auxtrig/record/plan.h"
#include "auxtrig/record/sink.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/membuf.h"
#include "auxtrig/sys/progress.h"
#include "auxtrig/sys/target.h"


/*
 * The gate's samples in a CPU's ring (CPU_EVENTS_OUT_SAMPLE_TYPE): header,
 * id, pid/tid, time, cpu/res, with -g the callchain (u64 nr, nr u64
 * entries), u32 raw size, raw bytes, padding to 8. The raw bytes are a struct
 * gate_out_hdr (the IP perf would have sampled, the window, flags) followed by
 * the tracepoint record. In the file they become PDATA_SAMPLE_TYPE samples
 * (struct pdata_sample_head: ip and period put back, 16 bytes longer).
 */
#define OUT_TIME_OFF offsetof(struct cpu_events_out_head, time)
#define GATE_HDR_SIZE sizeof(struct gate_out_hdr)
_Static_assert(sizeof(struct gate_out_hdr) == 16, "gate_out_hdr");

/* A gate sample of a ring, located: what follows the fixed head. */
struct gate_sample {
	__u64 nr_chain;		/* -g: the callchain's entries */
	size_t chain_off;	/* where they are in the record */
	size_t raw_off;		/* the raw bytes: gate_out_hdr, then the record */
	__u32 raw_size;
	struct gate_out_hdr gh;
};

/*
 * Locate a ring's sample (@callchain: the output event samples callchains).
 * Return: false for another record type or one whose sizes do not add up.
 */
bool gate_sample__parse(const struct perf_event_header *h, bool callchain, struct gate_sample *g);

struct recorder {
	const struct record_plan *plan;
	struct progress status;		/* the live line on a terminal */
	struct window_map map;
	struct gate *gate;
	struct target target;
	bool have_target;
	struct cpu_events ce;
	struct pdata_writer *w;
	int out_fd;			/* -o -: the stream's fd (standard output, moved) */
	bool kcore;			/* kernel trace: a directory, the kernel's code in it (kcore_copy.h) */
	char data_path[4096];
	struct record_sink sink;
	struct window_hold *hold;	/* --min/--max-duration: records of open windows */
	int epfd, sigfd;
	struct control ctl;
	bool created_file;
	bool stop;
	bool salvaged;		/* a write error cut the file short */
	__u64 lost_disk;	/* samples that never reached the file after a write error */
	struct gate_ctl_msg snapshot_msg;	/* a delayed snapshot trigger (snapshot+T)... */
	__u64 snapshot_due;	/* ...due at this CLOCK_MONOTONIC ns, 0: none */
	__u64 stop_due;		/* stop+T: the run ends at this CLOCK_MONOTONIC ns, 0: none */
	const struct gate_ctl_msg *firing;	/* the trigger a snapshot answers, or NULL */
	bool stop_requested;
	struct gate_ctl_msg stop_msg;	/* the first stop action's message... */
	bool stop_fired;		/* ...when one fired */
	__u64 stop_time;	/* perf time of the auxtrig:stop record, 0: not seen */
	__u64 after_stop;	/* samples later than it, not written */
	__u64 stop_wait_since;	/* the gate stopped, its record not yet in a ring: since (CLOCK_MONOTONIC ns) */
	struct hw_trace hw;	/* -e PMU/../: hardware trace */
	struct trigger_prog **progs;	/* --trigger-prog */
	size_t nr_progs;
	__u64 prog_fired;
	unsigned long nr_snapshots;
	__u64 snapshot_records;
	__u64 lost_at_snapshot;	/* the losses snapshot_losses() counted so far */
	struct membuf snap_buf;	/* a snapshot's records, until cut at its point */
	__u64 snap_after_point;	/* records timed after their snapshot's point: in none */
	__u64 trigger_chain[SINK_OWN_CHAIN_MAX];	/* -g: the call stack of the trigger a snapshot answers, */
	struct sink_own_from trigger;		/* and its thread (NULL chain: none) */
	/* summary */
	__u64 written, lost_kernel, lost_kernel_side, unknown;
	int signo;
};

/* A PERF_RECORD_LOST_SAMPLES of @lost, from auxtrig, after everything written. */
struct lost_samples_rec {
	struct perf_event_header h;
	__u64 lost;
	struct pdata_sample_id sid;
};

/* recorder.c: the clock bpf_ktime_get_ns() reads; a ring's record written (relabelled); a pass over the rings. */
__u64 recorder__monotonic_ns(void);
int recorder__process_record(void *ctx, const struct perf_event_header *h);
int recorder__drain(struct recorder *s);
/* A thread or process the target created gets its AUX group (per-thread hardware trace). */
int recorder__on_new_thread(struct recorder *s, pid_t tid, __u64 created_ns);

/*
 * -o -: the stream goes to standard output, in pipe mode, as perf record's
 * does. recorder__claim_stdout() refuses a terminal, moves standard output
 * to a descriptor of its own (s->out_fd) and points fd 1 at standard error,
 * so that the command's output (forked later) and auxtrig's own never mix
 * into the stream. Return: 0, or -errno (said why).
 */
bool recorder__output_is_stdout(const struct record_plan *p);
const char *recorder__output_name(const struct record_plan *p);
int recorder__claim_stdout(struct recorder *s);
/* The writer for the plan's output: the file, or the stream on s->out_fd; NULL: said why. */
struct pdata_writer *recorder__open_output(struct recorder *s);

/* recorder_file.c: the file's header, the synthesized records. */
int recorder__write_header(struct recorder *s);
int recorder__synthesize(struct recorder *s);

/* recorder_trigger.c: a control-ring message; the timers due; the auxtrig:stop record. */
int recorder__on_ctl(void *ctx, void *data, size_t size);
int recorder__run_due(struct recorder *s);
int recorder__triggered_snapshot(struct recorder *s, const struct gate_ctl_msg *m);
int recorder__write_stop_marker(struct recorder *s);

/* recorder_snapshot.c: a snapshot, taken for @reason. */
int recorder__take_snapshot(struct recorder *s, const char *reason);

/* recorder_dry_run.c: --dry-run's text. */
void recorder__dry_run(struct recorder *s);

/* recorder_summary.c: losses and counters into the file, the summary on stderr. */
/*
 * Records the output rings refused (the gate's and the kernel's counts of
 * one loss); with -S none: @paused gets them, refused while a snapshot
 * paused the rings.
 */
__u64 recorder__ring_lost(const struct recorder *s, const struct gate_stats *st, __u64 *paused);
__u64 recorder__gate_losses(struct recorder *s);
void recorder__lost_samples_rec(struct recorder *s, __u64 lost, struct lost_samples_rec *rec);
int recorder__write_gate_losses(struct recorder *s);
int recorder__write_trigger_stats(struct recorder *s);
void recorder__print_summary(struct recorder *s);

#endif
