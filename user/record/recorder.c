// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recorder: one `auxtrig record` session, from a resolved plan to a file.
 *
 *   translate the windows -> decide the hardware-trace path -> load the gate
 *   -> fork the command (held) -> open per-CPU perf events and mmap their
 *   rings -> attach -> create the output file -> arm -> start the command ->
 *   drain rings until it exits or a signal arrives -> disarm -> final drain
 *   -> finish the file -> summary
 *
 * The pieces are objects of their own (include/auxtrig/record/): the plan,
 * the event list, the window map, the gate, hardware trace, the per-CPU
 * events, the sink, the control channel. This file runs them in order and
 * handles what reaches the loop: records, fired triggers, timers, signals,
 * control commands and snapshots.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/format/tracing_data.h"
#include "auxtrig/lang/expr.h"
#include "auxtrig/record/attr_print.h"
#include "auxtrig/record/aux_session.h"
#include "auxtrig/record/control.h"
#include "auxtrig/record/cpu_events.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/record/gate_front.h"
#include "auxtrig/record/hw_trace.h"
#include "auxtrig/record/record.h"
#include "auxtrig/record/sink.h"
#include "auxtrig/record/trigger_prog.h"
#include "auxtrig/record/window_hold.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/exit_code.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/membuf.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/progress.h"
#include "auxtrig/sys/reaper.h"
#include "auxtrig/sys/target.h"
#include "auxtrig/sys/tracefs.h"

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
static bool gate_sample__parse(const struct perf_event_header *h, bool callchain, struct gate_sample *g)
{
	size_t off = sizeof(struct cpu_events_out_head);

	if (h->type != PERF_RECORD_SAMPLE || h->size < off)
		return false;
	g->nr_chain = 0;
	g->chain_off = off + 8;
	if (callchain) {
		if (h->size < off + 8)
			return false;
		memcpy(&g->nr_chain, (const char *)h + off, 8);
		if (g->nr_chain > (h->size - off - 8) / 8)
			return false;
		off += 8 + 8 * g->nr_chain;
	}
	if (h->size < off + 4)
		return false;
	memcpy(&g->raw_size, (const char *)h + off, 4);
	g->raw_off = off + 4;
	if (g->raw_size < GATE_HDR_SIZE || g->raw_size > h->size - g->raw_off)
		return false;
	memcpy(&g->gh, (const char *)h + g->raw_off, sizeof(g->gh));
	return true;
}

struct session {
	const struct record_plan *plan;
	struct progress status;		/* the live line on a terminal */
	struct window_map map;
	struct gate *gate;
	struct target target;
	bool have_target;
	struct cpu_events ce;
	struct pdata_writer *w;
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

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int on_new_thread(struct session *s, pid_t tid, __u64 created_ns);
static int on_hangup(struct session *s, int fd);

/* ---- the gate, from plan and map ---------------------------------------------- */

static int gate_setup(struct session *s)
{
	const struct record_plan *p = s->plan;

	s->gate = gate__open_plan(p, &s->map);
	if (!s->gate)
		return -errno;
	if (p->min_duration || p->max_duration) {
		s->hold = window_hold__new();
		if (!s->hold)
			return -errno;
		/* Past the limit: --min-duration writes, --max-duration drops, the oldest held window. */
		window_hold__set_limit(s->hold, p->hold_size ? p->hold_size : WINDOW_HOLD_DEFAULT_LIMIT,
				       p->max_duration ? WINDOW_HOLD_DROP_OLDEST : WINDOW_HOLD_WRITE_OLDEST);
	}
	if (s->hw.edges)
		gate__signal_edges(s->gate);
	if (s->hw.veto)
		gate__aux_veto(s->gate);
	if (hw_trace__per_thread(s->plan) && !s->plan->dry_run)
		gate__signal_threads(s->gate);
	return gate__load(s->gate);
}

/* Each CPU's output event to the gate; with -C, the gate records only on those CPUs. */
static int gate_outputs(struct session *s)
{
	for (size_t i = 0; i < s->ce.nr_cpus; i++) {
		const struct cpu_slot *c = &s->ce.cpus[i];
		int err;

		if (s->plan->cpus_given) {
			err = gate__record_cpu(s->gate, c->cpu);
			if (err)
				return err;
		}
		err = gate__set_output(s->gate, c->cpu, c->out_fd);
		if (err) {
			pr_err("cannot hand CPU %d's ring to the gate: %s\n", c->cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* ---- records ------------------------------------------------------------------ */

/*
 * The cpumode of a sampled IP: kernel addresses have the top bit set on the
 * 64-bit machines auxtrig runs on (x86-64, arm64), user addresses do not.
 */
static __u16 sample_cpumode(__u64 ip)
{
	return (__s64)ip < 0 ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
}

/*
 * A gate sample's record type and perf time. Return: false for what is no
 * record of the gate (another record type, a verdict, a point, short data).
 */
static bool gate_sample_type(const struct session *s, const struct perf_event_header *h, __u16 *type, __u64 *time)
{
	struct gate_sample g;

	if (!gate_sample__parse(h, s->plan->callchain, &g) || g.raw_size < GATE_HDR_SIZE + 8)
		return false;
	if (g.gh.flags & (GATE_OUT_VERDICT | GATE_OUT_POINT))
		return false;
	memcpy(type, (const char *)h + g.raw_off + GATE_HDR_SIZE, sizeof(*type));
	memcpy(time, (const char *)h + OUT_TIME_OFF, sizeof(*time));
	return true;
}

static int find_stop_record(void *ctx, const struct perf_event_header *h)
{
	struct session *s = ctx;
	__u16 type;
	__u64 t;

	if (gate_sample_type(s, h, &type, &t) && type == s->plan->stop_type && (!s->stop_time || t < s->stop_time))
		s->stop_time = t;
	return 0;
}

/*
 * Before a pass hands its records on (the rings' heads are read): has the
 * gate stopped? Then the pass is cut at the auxtrig:stop record, wherever
 * it lies among the rings: what another CPU emitted at the stop's instant
 * may be read before it and be later (struct gate_stop). The stop is in
 * force before its record is emitted; until the record is in a ring (the
 * stopping program is still running), the pass waits, for 100 ms at most
 * (its output may have been lost).
 */
static int check_stop(void *ctx, struct cpu_events *ce)
{
	struct session *s = ctx;
	bool marked = false;
	int err;

	if (!s->plan->stop_type || s->plan->snapshot || s->stop_time || !s->gate || !gate__stopped(s->gate, NULL, &marked) || !marked)
		return 0; /* no stop, or one the recorder writes the record of (stop+T) */
	err = cpu_events__peek(ce, find_stop_record, s);
	if (err || s->stop_time)
		return err;
	if (!s->stop_wait_since)
		s->stop_wait_since = monotonic_ns();
	return monotonic_ns() - s->stop_wait_since < 100000000ULL;
}

/* A record of a CPU's ring: a gate sample becomes its tracepoint's; the rest goes as it is. */
static int process_record(void *ctx, const struct perf_event_header *h)
{
	struct session *s = ctx;
	char buf[65536 + 16] __attribute__((aligned(8)));

	if (h->type == PERF_RECORD_SAMPLE) {
		struct pdata_sample_head *out = (struct pdata_sample_head *)buf;
		const struct cpu_events_out_head *in = (const void *)h;
		const struct rec_event *e;
		struct gate_sample g;
		struct gate_out_hdr gh;
		__u32 rec_size;
		size_t off, chain;
		__u64 t;
		__u16 type;

		if (!gate_sample__parse(h, s->plan->callchain, &g) || g.raw_size < GATE_HDR_SIZE + 8) {
			s->unknown++;
			return 0;
		}
		gh = g.gh;
		if (gh.flags & GATE_OUT_VERDICT) /* A timed window closed: its held records are written or dropped. */
			return record_sink__verdict(&s->sink, gh.window, gh.flags & GATE_OUT_KEEP);
		if (gh.flags & GATE_OUT_POINT) /* a snapshot's end (take_snapshot()): not a record */
			return 0;
		memcpy(&type, (const char *)h + g.raw_off + GATE_HDR_SIZE, sizeof(type));
		e = event_list__by_type(&s->plan->events, type);
		if (!e) {
			s->unknown++;
			return 0;
		}
		memcpy(&t, (const char *)h + OUT_TIME_OFF, sizeof(t));
		/*
		 * A stop action: its auxtrig:stop record is the last of the file.
		 * The gate emits nothing after it; what another CPU was emitting
		 * at that very instant may still come later than it: not written.
		 */
		if (s->plan->stop_type && type == s->plan->stop_type && (!s->stop_time || t < s->stop_time))
			s->stop_time = t;
		else if (s->stop_time && t > s->stop_time) {
			s->after_stop++;
			return 0;
		}
		/*
		 * Same sample, as the tracepoint's: its id, the gate's IP with the
		 * cpumode that IP is in (the bpf-output event's sample says kernel
		 * whatever it carries: perf would look user IPs up in the kernel),
		 * tid, time and cpu as the kernel stamped them, period 1 (neither
		 * IP nor period is in the ring: CPU_EVENTS_OUT_SAMPLE_TYPE), the
		 * callchain as the kernel took it (-g), the bare record.
		 */
		rec_size = g.raw_size - GATE_HDR_SIZE;
		chain = g.raw_off - 4 - sizeof(*in); /* -g: u64 nr and the entries, else 0 */
		off = sizeof(*out) + chain;
		if (off + 4 + rec_size + 7 > UINT16_MAX) { /* 16 bytes longer than in the ring */
			s->unknown++;
			return 0;
		}
		out->header = in->header;
		out->header.misc = (in->header.misc & ~PERF_RECORD_MISC_CPUMODE_MASK) | sample_cpumode(gh.ip);
		out->id = e->id;
		out->ip = gh.ip;
		out->pid = in->pid;
		out->tid = in->tid;
		out->time = in->time;
		out->cpu = in->cpu;
		out->res = in->res;
		out->period = 1;
		memcpy(buf + sizeof(*out), (const char *)h + sizeof(*in), chain);
		memcpy(buf + off, &rec_size, sizeof(rec_size));
		memcpy(buf + off + 4, (const char *)h + g.raw_off + GATE_HDR_SIZE, rec_size);
		out->header.size = (off + 4 + rec_size + 7) & ~7u;
		memset(buf + off + 4 + rec_size, 0, out->header.size - off - 4 - rec_size);
		s->written++;
		if (t > s->sink.last_time)
			s->sink.last_time = t;
		if (gh.flags & GATE_OUT_HELD)
			return record_sink__write_held(&s->sink, gh.window, t, buf, out->header.size);
		return record_sink__write(&s->sink, &out->header);
	}
	if (h->type == PERF_RECORD_LOST) {
		const struct { struct perf_event_header h; __u64 id, lost; } *l = (const void *)h;

		if (cpu_events__is_side_id(&s->ce, l->id))
			s->lost_kernel_side += l->lost;
		else
			s->lost_kernel += l->lost;
	}
	return record_sink__write(&s->sink, h);
}

/*
 * One pass over every forward ring and the AUX session, then the sink's
 * round. Flight recorder: only the sideband rings, the AUX events' own
 * rings among them (their AUX records and the tracking event's switches,
 * COMM and MMAP); the AUX areas wait for a snapshot.
 */
static int drain(struct session *s)
{
	bool any = false;
	int err;

	err = cpu_events__drain_checked(&s->ce, check_stop, process_record, s, &any);
	if (!err && s->hw.aux) {
		int n = aux_session__drain(s->hw.aux, &s->sink);

		if (n < 0)
			err = n;
		any |= n > 0;
	}
	if (err) {
		if (s->hold && !s->plan->snapshot)
			window_hold__pass(s->hold);
		return err;
	}
	return record_sink__end_pass(&s->sink, any);
}

/*
 * Records the gate dropped that no PERF_RECORD_LOST in the file accounts for:
 * too big to copy, or lost to a full ring after the kernel's last LOST record.
 * Written as PERF_RECORD_LOST_SAMPLES, which perf report counts ("Total Lost
 * Samples"), attributed to the output event of the first CPU.
 */
/* A PERF_RECORD_LOST_SAMPLES of @lost, from auxtrig, after everything written. */
struct lost_samples_rec {
	struct perf_event_header h;
	__u64 lost;
	struct pdata_sample_id sid;
};

static void lost_samples_rec(struct session *s, __u64 lost, struct lost_samples_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->h.type = PERF_RECORD_LOST_SAMPLES;
	rec->h.size = sizeof(*rec);
	rec->lost = lost;
	rec->sid.pid = rec->sid.tid = getpid();
	/* Not older than anything written: perf may have flushed up to written_max already. */
	rec->sid.time = s->sink.written_max > s->sink.last_time ? s->sink.written_max : s->sink.last_time;
	rec->sid.id = s->ce.cpus[0].out_id;
}

/* What the gate lost that no PERF_RECORD_LOST of the kernel's in the file counts. */
static __u64 gate_losses(struct session *s)
{
	struct gate_stats st;

	gate__stats(s->gate, &st);
	return st.too_big + (st.output_lost > s->lost_kernel ? st.output_lost - s->lost_kernel : 0);
}

static int write_gate_losses(struct session *s)
{
	struct lost_samples_rec rec;
	__u64 lost = gate_losses(s);

	if (!lost || !s->ce.nr_cpus)
		return 0;
	lost_samples_rec(s, lost, &rec);
	return record_sink__write(&s->sink, &rec.h);
}

/* Each --on's counters, in the file as auxtrig:trigger_stats at the end of the run. */
static int write_trigger_stats(struct session *s)
{
	const struct rec_event *e = event_list__find(&s->plan->events, "auxtrig", "trigger_stats");
	struct own_trigger_stats_rec rec = {};
	int err = 0;

	for (size_t i = 0; e && i < s->plan->nr_triggers && !err; i++) {
		struct gate_trigger_stats ts;

		gate__trigger_stats(s->gate, i, &ts);
		rec.common_type = e->fmt.id;
		rec.common_pid = getpid();
		rec.trigger = i + 1;
		rec.evaluated = ts.evaluated;
		rec.matched = ts.matched;
		rec.fired = ts.fired;
		rec.suppressed = ts.suppressed;
		rec.dropped = ts.dropped;
		err = record_sink__write_own(&s->sink, e->id, NULL, &rec, sizeof(rec));
	}
	return err;
}

/* ---- snapshots ------------------------------------------------------------------ */

/* A gate sample's time; its point number if it is a snapshot point, else 0. */
static __u64 sample_time(const struct session *s, const struct perf_event_header *h, __u32 *point)
{
	struct gate_sample g;
	__u64 t;

	*point = 0;
	if (!gate_sample__parse(h, s->plan->callchain, &g))
		return 0;
	memcpy(&t, (const char *)h + OUT_TIME_OFF, sizeof(t));
	if (g.gh.flags & GATE_OUT_POINT)
		*point = g.gh.window ? g.gh.window : ~0u;
	return t;
}

/* A snapshot's records are collected first (snapshot_cut()), then written up to its point. */
static int snapshot_record(void *ctx, const struct perf_event_header *h)
{
	struct session *s = ctx;

	membuf__add(&s->snap_buf, h, h->size);
	return s->snap_buf.err;
}

/*
 * Write the collected records of a snapshot: those timed up to its trigger.
 * The trigger's point follows, in its CPU's ring, the records its event
 * emitted (a syscall's exit records, say): if the record just before it
 * there is the triggering thread's, the snapshot ends with that record,
 * else at the point. Later ones are what other CPUs emitted while the
 * trigger was being decided, before the freeze reached them: after the
 * triggering event, in no snapshot, counted lost. Return: records written,
 * or -errno.
 */
static long snapshot_cut(struct session *s, __u32 point, __u32 tid)
{
	const struct cpu_events_out_head *prev = NULL;
	__u64 end = 0, t;
	__u32 pt;
	long n = 0;
	int err;

	for (size_t off = 0; point && off < s->snap_buf.len;) {
		const struct perf_event_header *h = (const void *)(s->snap_buf.p + off);
		const struct cpu_events_out_head *sh = (const void *)h;

		off += h->size;
		t = sample_time(s, h, &pt);
		/* its own thread's point: another thread's, of the same trigger, can be in the rings too */
		if (pt == point && sh->tid == tid) {
			struct gate_sample g;

			end = prev && prev->cpu == sh->cpu && prev->tid == tid ? prev->time : t;
			/* -g: the point carries the trigger's call stack, for auxtrig:snapshot */
			if (s->plan->callchain && gate_sample__parse(h, true, &g)) {
				s->trigger.pid = sh->pid;
				s->trigger.tid = sh->tid;
				s->trigger.nr_chain = g.nr_chain < SINK_OWN_CHAIN_MAX ? g.nr_chain : SINK_OWN_CHAIN_MAX;
				memcpy(s->trigger_chain, (const char *)h + g.chain_off, 8 * s->trigger.nr_chain);
				s->trigger.chain = s->trigger_chain;
			}
			break;
		}
		prev = h->type == PERF_RECORD_SAMPLE && h->size >= sizeof(*sh) && !pt ? sh : NULL;
	}
	for (size_t off = 0; off < s->snap_buf.len;) {
		const struct perf_event_header *h = (const void *)(s->snap_buf.p + off);

		off += h->size;
		t = sample_time(s, h, &pt);
		if (pt)
			continue; /* points are not records */
		if (end && t > end) {
			s->snap_after_point++;
			continue;
		}
		err = process_record(s, h);
		if (err)
			return err;
		n += h->type == PERF_RECORD_SAMPLE;
	}
	s->snap_buf.len = 0;
	return n;
}

/*
 * The targets' records since the previous snapshot that are in none: held
 * back while a snapshot was being taken, or lost to a full or paused ring.
 */
static __u64 snapshot_losses(struct session *s)
{
	struct gate_stats st;
	__u64 now, lost;

	gate__stats(s->gate, &st);
	now = st.frozen + st.output_lost + st.too_big + s->lost_kernel + s->snap_after_point;
	lost = now - s->lost_at_snapshot;
	s->lost_at_snapshot = now;
	return lost;
}

/* The auxtrig:snapshot sample, timed as the newest record it follows. */
static int write_marker(struct session *s, const char *reason, __u64 records, __u64 lost)
{
	struct own_snapshot_rec rec = {
		.common_type = s->plan->events.marker_type,
		.common_pid = getpid(),
		.nr = s->nr_snapshots,
		.cpus = s->ce.nr_cpus,
		.records = records,
		.lost = lost > UINT32_MAX ? UINT32_MAX : lost,
	};

	snprintf(rec.reason, sizeof(rec.reason), "%s", reason);
	if (s->firing) {
		rec.tid = s->firing->tid;
		rec.value = s->firing->ret;
	}
	return record_sink__write_own(&s->sink, MARKER_ID, s->firing && s->trigger.chain ? &s->trigger : NULL, &rec,
				      sizeof(rec));
}

/*
 * Freeze each CPU's flight recorder, copy out what it holds that no earlier
 * snapshot took, and let it run again; the AUX session's snapshot first.
 */
static int take_snapshot(struct session *s, const char *reason)
{
	__u64 before = s->snapshot_records, lost;
	char hw[48] = "", held[160] = "";
	int err, aux_buffers = 0;

	if (!s->plan->snapshot) {
		pr_warn("snapshot (%s) ignored: not in flight-recorder mode (-S)\n", reason);
		return 0;
	}
	err = drain(s); /* the sideband the snapshot's records refer to */
	if (!err && s->hw.aux) {
		int n = aux_session__snapshot(s->hw.aux, &s->sink); /* the AUXTRACE records it wrote */

		if (n < 0)
			err = n;
		else
			aux_buffers = n;
	}
	s->snap_buf.len = 0;
	s->trigger.chain = NULL;
	if (!err)
		err = cpu_events__snapshot(&s->ce, snapshot_record, s);
	if (!err) {
		long n = snapshot_cut(s, s->firing ? s->firing->point : 0, s->firing ? s->firing->tid : 0);

		if (n < 0)
			err = n;
		else
			s->snapshot_records += n;
	}
	record_sink__snapshot_done(&s->sink);
	s->nr_snapshots++;
	lost = snapshot_losses(s);
	if (!err)
		err = write_marker(s, reason, s->snapshot_records - before, lost);
	if (!err)
		err = record_sink__flush(&s->sink);
	if (err)
		return err;
	if (s->hw.aux)
		snprintf(hw, sizeof(hw), ", %d hardware trace buffer%s", aux_buffers, aux_buffers == 1 ? "" : "s");
	if (lost)
		snprintf(held, sizeof(held),
			 "; %llu records since the previous snapshot are in none (held back while it was taken, or lost to the ring)",
			 (unsigned long long)lost);
	pr_info("snapshot %lu (%s): %llu records%s%s\n", s->nr_snapshots, reason,
		(unsigned long long)(s->snapshot_records - before), hw, held);
	return 0;
}

/* ---- fired triggers and their timers ------------------------------------------------ */

/* The snapshot a snapshot trigger asked for; the gate froze at the trigger or at its deadline. */
static int triggered_snapshot(struct session *s, const struct gate_ctl_msg *m)
{
	char reason[16];
	int err;

	if (m->trigger >= GATE_USER_TRIGGER_BASE)
		snprintf(reason, sizeof(reason), "prog:%u", m->trigger - GATE_USER_TRIGGER_BASE);
	else
		snprintf(reason, sizeof(reason), "on#%u", m->trigger + 1);
	s->firing = m;
	err = take_snapshot(s, reason);
	s->firing = NULL;
	gate__unfreeze(s->gate);
	return err;
}

/* snapshot+T and stop+T whose time has come. */
static int run_due(struct session *s)
{
	__u64 now = monotonic_ns();
	int err = 0;

	if (s->snapshot_due && now >= s->snapshot_due) {
		s->snapshot_due = 0;
		err = triggered_snapshot(s, &s->snapshot_msg);
	}
	if (s->stop_due && now >= s->stop_due) {
		s->stop_due = 0;
		s->stop = true;
		s->stop_requested = true;
	}
	return err;
}

static int on_ctl(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct record_plan *p = s->plan;
	const struct gate_ctl_msg *m = data;

	if (size < sizeof(*m) || m->size < sizeof(*m))
		return 0;
	if (m->type == GATE_MSG_EDGE)
		return hw_trace__edge(&s->hw, p, m);
	if (m->type == GATE_MSG_THREAD)
		return s->hw.aux && aux_session__per_thread(s->hw.aux) ? on_new_thread(s, m->tid, m->time_ns) : 0;
	if (m->type == GATE_MSG_VERDICT)
		return s->hold ? record_sink__verdict(&s->sink, m->args[0], m->ret) : 0;
	if (m->type != GATE_MSG_ACTION)
		return 0;
	if (m->trigger >= GATE_USER_TRIGGER_BASE)
		s->prog_fired++;
	if (m->action == GATE_ACT_SNAPSHOT && m->delay_ns) {
		/* The gate records until the deadline, then freezes; the loop snapshots then. */
		if (!s->snapshot_due) {
			s->snapshot_msg = *m;
			s->snapshot_due = m->time_ns + m->delay_ns;
		}
		return 0;
	}
	if (m->action == GATE_ACT_SNAPSHOT)
		return triggered_snapshot(s, m);
	if (m->action != GATE_ACT_STOP)
		return 0;
	/* The gate emits nothing past the stop already; the run ends here, or at the deadline. */
	if (!s->stop_fired || m->time_ns + m->delay_ns < s->stop_msg.time_ns + s->stop_msg.delay_ns) {
		s->stop_msg = *m;
		s->stop_fired = true;
	}
	if (m->delay_ns) {
		if (!s->stop_due || m->time_ns + m->delay_ns < s->stop_due) {
			s->stop_due = m->time_ns + m->delay_ns;
			pr_info("--on %s fired (tid %u): stopping in %.3f ms\n",
				m->trigger < p->nr_triggers ? p->triggers[m->trigger].text : "(trigger program)",
				m->tid, m->delay_ns / 1e6);
		}
		return 0;
	}
	if (m->trigger >= GATE_USER_TRIGGER_BASE)
		pr_info("trigger program: stop (reason %u, tid %u)\n", m->trigger - GATE_USER_TRIGGER_BASE, m->tid);
	else
		pr_info("--on %s fired (tid %u): stopping\n", p->triggers[m->trigger].text, m->tid);
	s->stop = true;
	s->stop_requested = true;
	return 0;
}

/*
 * The auxtrig:stop record, where the gate did not write it (stop+T: the
 * deadline is no event; or the stopping event was not recorded): after
 * everything written, with the values of the trigger that stopped the run.
 */
static int write_stop_marker(struct session *s)
{
	const struct gate_ctl_msg *m = &s->stop_msg;
	char buf[sizeof(struct pdata_sample_head) + 4 + sizeof(struct gate_mark_rec) + 8] = {};
	struct pdata_sample_head *h = (struct pdata_sample_head *)buf;
	struct gate_mark_rec rec = {
		.common_type = s->plan->stop_type,
		.common_pid = m->tid,
		.trigger = m->trigger + (m->trigger < GATE_USER_TRIGGER_BASE),
		.nr = -1,
		.ret = m->ret,
	};
	const struct rec_event *e = event_list__by_type(&s->plan->events, s->plan->stop_type);
	__u32 raw_size = sizeof(rec);
	__u64 newest = pdata_writer__newest_time(s->w);

	if (!s->stop_fired || s->stop_time || !e)
		return 0;
	memcpy(rec.args, m->args, sizeof(rec.args));
	h->header.type = PERF_RECORD_SAMPLE;
	h->header.misc = PERF_RECORD_MISC_USER;
	h->header.size = (sizeof(*h) + 4 + raw_size + 7) & ~7u;
	h->id = e->id;
	h->pid = m->pid;
	h->tid = m->tid;
	h->time = (s->sink.last_time > newest ? s->sink.last_time : newest) + 1;
	h->period = 1;
	memcpy(buf + sizeof(*h), &raw_size, 4);
	memcpy(buf + sizeof(*h) + 4, &rec, raw_size);
	s->stop_time = h->time;
	return record_sink__write(&s->sink, &h->header);
}

/* ---- --dry-run ------------------------------------------------------------------- */

/* GATE_FRONT_ENTRY or _RETURN: a probe point whose conditions compile (gate_front__build_probe()), else 0. */
static int probe_kind(const struct point *pt)
{
	switch (pt->kind) {
	case POINT_UPROBE:
	case POINT_KPROBE:
		return GATE_FRONT_ENTRY;
	case POINT_URETPROBE:
	case POINT_KRETPROBE:
		return GATE_FRONT_RETURN;
	case POINT_USDT:
		return GATE_FRONT_USDT;
	default:
		return 0;
	}
}

/*
 * --dry-run: how --where is decided at each window start: compiled to BPF in
 * a program the kernel runs before the shared one at a tracepoint
 * (gate_front__build_where()), in the point's own program at a uprobe,
 * uretprobe, kprobe or kretprobe point and a uprobe window's entry
 * (gate_front__build_probe()); else, or when the compiler cannot express
 * it, interpreted.
 */
static void dry_run_print_where(const struct session *s)
{
	const struct record_plan *p = s->plan;
	char why[256];

	if (!p->where || !record_plan__has_windows(p))
		return;
	for (size_t k = 0; k < p->events.nr; k++) {
		const struct rec_event *e = &p->events.ev[k];

		if (!s->map.tp[k].open_mask)
			continue;
		why[0] = 0;
		if (gate_front__check_cond(p->where, gate__syscall_flags(&e->fmt), e->fmt.size, why, sizeof(why)))
			printf("--where at %s:%s: interpreted by the shared gate program: %s\n", e->fmt.system, e->fmt.name,
			       why[0] ? why : "?");
		else
			printf("--where at %s:%s: compiled to BPF, decided before the shared gate program\n",
			       e->fmt.system, e->fmt.name);
	}
	for (size_t k = 0; k < s->map.nr_points + s->map.nr_calls; k++) {
		const struct point *pt = k < s->map.nr_points ? s->map.points[k].pt : s->map.calls[k - s->map.nr_points].fn;
		int probe = probe_kind(pt);
		char text[4096 + 600];

		if (k < s->map.nr_points && !s->map.points[k].open_mask)
			continue;
		point__format(pt, text, sizeof(text));
		why[0] = 0;
		if (!probe)
			snprintf(why, sizeof(why), "%s", "mem: points' programs are not compiled");
		if (why[0] || gate_front__check_probe_cond(p->where, probe, 1, 1, why, sizeof(why)))
			printf("--where at %s%s: interpreted by the shared gate program: %s\n",
			       k < s->map.nr_points ? "" : "uprobe window ", text, why[0] ? why : "?");
		else
			printf("--where at %s%s: compiled to BPF, decided in a program of its own %s\n",
			       k < s->map.nr_points ? "" : "uprobe window ", text,
			       probe == GATE_FRONT_USDT ? "that the shared one runs once it has the arguments" :
			       "before the shared one");
	}
}

/*
 * --dry-run: how trigger @i runs in the kernel: a tracepoint that only runs
 * triggers gets a program of its own with the condition compiled to BPF
 * (gate_front.h); otherwise the shared gate program interprets it.
 */
static void dry_run_print_trigger(const struct session *s, size_t i)
{
	const struct record_plan *p = s->plan;
	const struct plan_trigger *t = &p->triggers[i];
	__u32 flags = gate__syscall_flags(&t->fmt);
	char why[256] = "";

	if (point__is_probe(&t->pt)) {
		int probe = probe_kind(&t->pt), windows = 0;

		for (size_t k = 0; k < s->map.nr_points; k++)
			windows |= s->map.points[k].pt->kind == t->pt.kind && !strcmp(s->map.points[k].pt->path, t->pt.path) &&
				   !strcmp(s->map.points[k].pt->symbol, t->pt.symbol) &&
				   s->map.points[k].pt->offset == t->pt.offset;
		if (!probe)
			snprintf(why, sizeof(why), "mem: points run the shared gate programs");
		else if (t->cond && gate_front__check_probe_cond(t->cond, probe, 0, windows, why, sizeof(why)))
			why[0] = why[0] ? why[0] : '?';
		if (why[0])
			printf("trigger %zu: the shared gate program%s: %s\n", i + 1, t->cond ? ", condition interpreted" : "",
			       why);
		else
			printf("trigger %zu: the shared gate program%s\n", i + 1,
			       !t->cond ? "" : probe == GATE_FRONT_USDT ?
			       ", condition compiled to BPF in the point's own program, which it runs once it has the arguments" :
			       ", condition compiled to BPF in the point's own program before it");
		return;
	} else {
		for (size_t k = 0; k < p->events.nr; k++)
			if (p->events.ev[k].fmt.id == t->fmt.id &&
			    (s->map.tp[k].open_mask || s->map.tp[k].close_mask || (p->events.ev[k].flags & GATE_TP_RECORD)))
				snprintf(why, sizeof(why), "its tracepoint also opens, closes or records windows");
		if (!why[0] && t->cond && gate_front__check_cond(t->cond, flags, t->fmt.size, why, sizeof(why)))
			why[0] = why[0] ? why[0] : '?';
	}
	if (why[0])
		printf("trigger %zu: the shared gate program%s: %s\n", i + 1, t->cond ? ", condition interpreted" : "", why);
	else
		printf("trigger %zu: a program of its own%s\n", i + 1, t->cond ? ", condition compiled to BPF" : "");
}

static void dry_run_print(struct session *s)
{
	const struct record_plan *p = s->plan;
	struct perf_event_attr a;
	size_t page = sysconf(_SC_PAGESIZE);

	if (s->hw.aux) {
		char note[512];

		aux_session__print(s->hw.aux, stdout);
		if (record_plan__has_windows(p))
			printf("hardware trace: %s\n", hw_trace__path(&s->hw));
		if (hw_trace__note(&s->hw, p, note, sizeof(note)))
			printf("hardware trace: %s\n", note);
	}
	printf("per CPU (%d possible): bpf-output, the gate's output%s\n", p->nr_possible,
	       p->snapshot ? " (flight recorder)" : "");
	cpu_events__attr_output(&a, p->mmap_pages * page, p->snapshot, p->callchain);
	if (p->verbose >= 2)
		attr_print__event(stdout, &a);
	printf("per CPU and target thread: dummy, the sideband\n");
	cpu_events__attr_sideband(&a, p->command != NULL);
	if (p->verbose >= 2)
		attr_print__event(stdout, &a);
	printf("gate: %zu tracepoint%s, %zu window%s, %zu trigger%s%s\n", p->events.nr, p->events.nr == 1 ? "" : "s",
	       p->nr_windows, p->nr_windows == 1 ? "" : "s", p->nr_triggers, p->nr_triggers == 1 ? "" : "s",
	       p->where ? ", --where" : "");
	for (size_t i = 0; i < p->events.nr; i++) {
		const struct rec_event *e = &p->events.ev[i];

		printf("  %s:%s (type %u)%s%s%s\n", e->fmt.system, e->fmt.name, e->fmt.id,
		       s->map.tp[i].open_mask ? " opens a window" : "", s->map.tp[i].close_mask ? " closes a window" : "",
		       e->flags & GATE_TP_RECORD ? " recorded inside windows" : "");
	}
	for (size_t i = 0; i < p->nr_windows; i++) {
		const struct window_spec *w = &p->windows[i];
		char text[512];

		for (int end = 0; w->kind == WINDOW_POINTS && end < 2; end++) {
			if (!point__is_probe(end ? &w->stop : &w->start))
				continue;
			point__format(end ? &w->stop : &w->start, text, sizeof(text));
			printf("  %s (probe) %s a window\n", text, end ? "closes" : "opens");
		}
	}
	for (size_t i = 0; i < p->nr_triggers; i++) {
		char text[512];

		if (!point__is_probe(&p->triggers[i].pt))
			continue;
		point__format(&p->triggers[i].pt, text, sizeof(text));
		printf("  %s (probe) has trigger %zu\n", text, i + 1);
	}
	for (size_t i = 0; i < p->nr_triggers; i++)
		dry_run_print_trigger(s, i);
	dry_run_print_where(s);
}

/* ---- the output file ------------------------------------------------------ */

static int write_header(struct session *s)
{
	const struct record_plan *p = s->plan;
	const struct event_list *ev = &p->events;
	struct perf_event_attr a;
	struct tracing_event *events;
	char **texts;
	void *td = NULL;
	size_t td_len = 0;
	char name[2 * TP_NAME_MAX + 2];
	int err = 0;

	for (size_t i = 0; i < ev->nr && !err; i++) {
		cpu_events__attr_tracepoint(&a, ev->ev[i].fmt.id, p->callchain);
		snprintf(name, sizeof(name), "%s:%s", ev->ev[i].fmt.system, ev->ev[i].fmt.name);
		err = pdata_writer__add_attr(s->w, &a, name, &ev->ev[i].id, 1);
	}
	if (err)
		return err;

	if (p->snapshot) {
		__u64 id = MARKER_ID;

		cpu_events__attr_tracepoint(&a, ev->marker_type, p->callchain);
		err = pdata_writer__add_attr(s->w, &a, "auxtrig:snapshot", &id, 1);
		if (err)
			return err;
	}

	if (s->hw.aux) {
		err = aux_session__add_attrs(s->hw.aux, s->w);
		if (err)
			return err;
	}
	err = cpu_events__add_attrs(&s->ce, s->w);
	if (err)
		return err;

	events = calloc(ev->nr + 1, sizeof(*events));
	texts = calloc(ev->nr + 1, sizeof(*texts));	/* formats of records that carry a string */
	if (!events || !texts) {
		free(events);
		free(texts);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ev->nr && !err; i++) {
		events[i].system = ev->ev[i].fmt.system;
		events[i].name = ev->ev[i].fmt.name;
		events[i].format = ev->ev[i].own_format;
		if (!events[i].format) {
			err = event_list__file_format(&ev->ev[i], &texts[i]);
			events[i].format = texts[i];
		}
	}
	if (err) {
		pr_err("cannot write the format of a syscall with a string argument: %s\n", strerror(-err));
		goto out_texts;
	}
	if (p->snapshot) {
		events[ev->nr].system = "auxtrig";
		events[ev->nr].name = "snapshot";
		events[ev->nr].format = ev->marker_format;
	}
	err = tracing_data__build(tracefs__root(), events, ev->nr + p->snapshot, &td, &td_len);
out_texts:
	for (size_t i = 0; i < ev->nr; i++)
		free(texts[i]);
	free(texts);
	free(events);
	if (err) {
		pr_err("cannot collect the tracepoint formats for the file: %s\n", strerror(-err));
		return err;
	}
	err = pdata_writer__set_tracing_data(s->w, td, td_len);
	free(td);
	if (err)
		return err;
	err = pdata_writer__set_cmdline(s->w, p->full_argc, p->full_argv);
	if (err)
		return err;
	return pdata_writer__begin_data(s->w);
}

/* -a: every process that runs now. */
static int synthesize_all(struct session *s)
{
	pid_t *pids;
	size_t nr;
	int err = target__processes(&pids, &nr);

	for (size_t i = 0; !err && i < nr; i++) {
		err = synth__threads(s->w, pids[i]);
		if (err == -ESRCH || err == -ENOENT || err == -EACCES)
			err = 0; /* gone meanwhile, or a kernel thread without maps */
	}
	free(pids);
	return err;
}

static int synthesize(struct session *s)
{
	int err;

	if (s->ce.nr_cpus) {
		/*
		 * TSC to perf time, for decoders that need it (SPE, CoreSight,
		 * jitdump). Before AUXTRACE_INFO: perf 6.1's SPE decoder takes the
		 * conversion when it reads AUXTRACE_INFO, and divides by zero
		 * without it.
		 */
		err = synth__time_conv(s->w, data_ring__user_page(&s->ce.cpus[0].ring));
		if (err && err != -EOPNOTSUPP && err != -EAGAIN)	/* -EAGAIN: said, not written */
			return err;
	}
	if (s->hw.aux) {
		err = aux_session__write_info(s->hw.aux, s->w);
		if (err)
			return err;
	}
	err = synth__kernel_mmap(s->w, NULL);
	if (err)
		pr_debug("no kernel map record: %s\n", strerror(-err));
	if (s->plan->snapshot || s->plan->nr_triggers) {
		/* Snapshot markers and trigger counters are auxtrig's own samples: name their thread. */
		char buf[128];
		size_t n = synth__comm_record(buf, sizeof(buf), getpid(), getpid(), "auxtrig");

		err = n ? pdata_writer__write(s->w, buf, n) : -EINVAL;
		if (err)
			return err;
	}
	if (s->target.all) {
		err = synthesize_all(s);
		if (err)
			return err;
	}
	for (size_t i = 0, gone = 0; i < s->target.nr_pids; i++) {
		err = synth__threads(s->w, s->target.pids[i]);
		if (err == -ESRCH && ++gone == s->target.nr_pids) {
			/* perf refuses a target that is not there; ours went while we attached */
			pr_err("nothing to record: the %s exited while auxtrig attached to %s\n",
			       s->target.threads ? "thread" : "process", s->target.nr_pids > 1 ? "them" : "it");
			return err;
		}
		if (err == -ESRCH) {
			pr_warn("%s %d exited while auxtrig attached: nothing of it is recorded\n",
				s->target.threads ? "thread" : "process", s->target.pids[i]);
		} else if (err) {
			pr_err("cannot describe process %d in the file: %s\n", s->target.pids[i], strerror(-err));
			return err;
		}
	}
	return record_sink__end_synthesis(&s->sink);
}

/* ---- the loop ------------------------------------------------------------- */

/* perf's commands: enable, disable, snapshot, stop; and ping. */
static int control_command(void *ctx, enum control_cmd cmd)
{
	struct session *s = ctx;

	switch (cmd) {
	case CONTROL_ENABLE:
		gate__arm(s->gate);
		break;
	case CONTROL_DISABLE:
		gate__disarm(s->gate);
		break;
	case CONTROL_SNAPSHOT:
		return take_snapshot(s, "control");
	case CONTROL_STOP:
		s->stop = true;
		s->stop_requested = true;
		break;
	case CONTROL_PING:
		break; /* armed: answering is the point */
	}
	return 0;
}

static int setup_loop(struct session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0)
		return -errno;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	ev.data.fd = s->sigfd;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev))
		return -errno;
	if (control__fd(&s->ctl) >= 0) {
		ev.data.fd = control__fd(&s->ctl);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	if (gate__ctl_fd(s->gate) >= 0) {
		ev.data.fd = gate__ctl_fd(s->gate);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	for (size_t i = 0; s->hw.aux && i < aux_session__nr_fds(s->hw.aux); i++) {
		ev.data.fd = aux_session__fd(s->hw.aux, i);
		if (ev.data.fd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	for (size_t i = 0; i < s->ce.nr_cpus && !s->plan->snapshot; i++) {
		ev.data.fd = s->ce.cpus[i].out_fd;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	return 0;
}

static int handle_signals(struct session *s)
{
	struct signalfd_siginfo si;
	int err = 0;

	while (!err && read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue; /* target__poll_exit() reaps */
		if (si.ssi_signo == SIGUSR2) {
			err = take_snapshot(s, "SIGUSR2");
			continue;
		}
		s->signo = si.ssi_signo;
		s->stop = true;
	}
	return err;
}

/* The live line: windows, records, bytes, losses, a few times a second on a terminal. */
static void status_show(struct session *s)
{
	struct gate_stats st;
	__u64 lost, bytes;

	if (!progress__due(&s->status))
		return;
	gate__stats(s->gate, &st);
	bytes = s->w ? pdata_writer__stats(s->w)->bytes : 0;
	lost = (s->lost_kernel > st.output_lost ? s->lost_kernel : st.output_lost) + st.too_big + s->lost_kernel_side;
	progress__show(&s->status, false, "auxtrig: recording: %llu window%s, %llu record%s, %.1f KiB, lost %llu",
		       (unsigned long long)st.windows_opened, st.windows_opened == 1 ? "" : "s",
		       (unsigned long long)s->written, s->written == 1 ? "" : "s", bytes / 1024.0,
		       (unsigned long long)lost);
}

static int loop(struct session *s)
{
	struct epoll_event evs[16];
	int n, err, timeout;

	while (!s->stop) {
		__u64 due = s->snapshot_due, now = monotonic_ns();

		if (s->stop_due && (!due || s->stop_due < due))
			due = s->stop_due;
		timeout = 100;
		if (due)
			timeout = due <= now ? 0 : (due - now) / 1000000 + 1 < 100 ? (due - now) / 1000000 + 1 : 100;
		n = epoll_wait(s->epfd, evs, 16, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		err = 0;
		for (int i = 0; i < n && !err; i++) {
			if (evs[i].data.fd == s->sigfd)
				err = handle_signals(s);
			else if (evs[i].data.fd == control__fd(&s->ctl))
				err = control__read(&s->ctl, control_command, s);
			else if (evs[i].data.fd == gate__ctl_fd(s->gate))
				err = gate__ctl_consume(s->gate);
			else if (evs[i].events & EPOLLHUP)
				err = on_hangup(s, evs[i].data.fd);
		}
		if (!err)
			err = drain(s);
		if (!err)
			err = run_due(s);
		if (err)
			return err;
		if (target__poll_exit(&s->target))
			s->stop = true;
		status_show(s);
	}
	progress__clear(&s->status);
	return 0;
}

/* ---- setup and summary ---------------------------------------------------- */

static bool have_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* root, or CAP_SYS_ADMIN, or CAP_BPF (39) with CAP_PERFMON (38). */
bool recorder__privileged(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &h, d))
		return false;
	return have_cap(d, CAP_SYS_ADMIN) || (have_cap(d, 39) && have_cap(d, 38));
}

static void print_summary(struct session *s)
{
	const struct record_plan *p = s->plan;
	const struct window_hold_stats *hs = s->hold ? window_hold__stats(s->hold) : NULL;
	struct gate_stats st;
	__u64 lost, bytes = pdata_writer__stats(s->w)->bytes;

	gate__stats(s->gate, &st);
	if (hs)
		s->written -= hs->records_dropped + hs->records_unfinished + hs->records_early_dropped;
	s->written -= s->lost_disk < s->written ? s->lost_disk : s->written;
	/*
	 * A full ring makes both the gate (bpf_perf_event_output() fails) and
	 * the kernel (PERF_RECORD_LOST, emitted later) count the same loss;
	 * the kernel's count may lag at exit, the gate's cannot.
	 */
	lost = s->lost_kernel > st.output_lost ? s->lost_kernel : st.output_lost;
	lost += st.too_big + s->lost_kernel_side + (hs ? hs->records_lost : 0) + s->lost_disk;
	if (p->quiet && !lost && !st.threads_full && !st.vetoed_untracked)
		return;
	fprintf(stderr,
		"[ auxtrig record: %llu window%s, %llu event%s %s, %.1f KiB %s %s; lost %llu record%s ]\n",
		(unsigned long long)st.windows_opened, st.windows_opened == 1 ? "" : "s",
		(unsigned long long)s->written, s->written == 1 ? "" : "s",
		s->salvaged ? "recorded" : "written", bytes / 1024.0, s->salvaged ? "kept in" : "to",
		p->output, (unsigned long long)lost, lost == 1 ? "" : "s");
	if (lost - (hs ? hs->records_lost : 0) - s->lost_disk)
		pr_warn("%llu records were lost (ring full: %llu, sideband: %llu, larger than %d bytes: %llu): try a larger -m\n",
			(unsigned long long)(lost - (hs ? hs->records_lost : 0) - s->lost_disk),
			(unsigned long long)(s->lost_kernel > st.output_lost ? s->lost_kernel : st.output_lost),
			(unsigned long long)s->lost_kernel_side, GATE_RECORD_MAX,
			(unsigned long long)st.too_big);
	if (st.threads_full)
		pr_warn("%llu windows could not open: more than %d threads had windows open at once\n",
			(unsigned long long)st.threads_full, GATE_MAX_THREADS);
	if (st.vetoed_untracked)
		pr_warn("%llu calls vetoed by --where were not tracked (more than %d threads inside vetoed calls at once): "
			"calls nested in them may have opened their windows\n",
			(unsigned long long)st.vetoed_untracked, GATE_UPROBE_VETOED_MAX);
	if (gate__expr_lost(s->gate))
		pr_warn("%llu condition evaluations were false: a thread's $count could not be stored\n",
			(unsigned long long)gate__expr_lost(s->gate));
	for (size_t i = 0; i < p->nr_triggers; i++) {
		struct gate_trigger_stats ts;

		gate__trigger_stats(s->gate, i, &ts);
		pr_info("--on %s: evaluated %llu, matched %llu, fired %llu, suppressed %llu, dropped %llu\n",
			p->triggers[i].text, (unsigned long long)ts.evaluated, (unsigned long long)ts.matched,
			(unsigned long long)ts.fired, (unsigned long long)ts.suppressed,
			(unsigned long long)ts.dropped);
		if (ts.dropped)
			pr_warn("--on %s: %llu firings were lost (trigger channel full)\n", p->triggers[i].text,
				(unsigned long long)ts.dropped);
	}
	if (s->nr_progs)
		pr_info("trigger programs: %llu action%s sent to auxtrig\n", (unsigned long long)s->prog_fired,
			s->prog_fired == 1 ? "" : "s");
	if (st.frozen)
		pr_info("%llu records after a snapshot trigger were held back until its snapshot was taken\n",
			(unsigned long long)st.frozen);
	if (s->stop_fired)
		pr_info("stopped by %s%s (tid %u): the file ends at its auxtrig:stop record; %llu later record%s not written\n",
			s->stop_msg.trigger >= GATE_USER_TRIGGER_BASE ? "a trigger program" : "--on ",
			s->stop_msg.trigger >= GATE_USER_TRIGGER_BASE ? "" :
			s->stop_msg.trigger < p->nr_triggers ? p->triggers[s->stop_msg.trigger].text : "?",
			s->stop_msg.tid, (unsigned long long)(st.stopped + s->after_stop),
			st.stopped + s->after_stop == 1 ? "" : "s");
	if (p->snapshot)
		pr_info("%lu snapshot%s, %llu records from the flight recorder\n", s->nr_snapshots,
			s->nr_snapshots == 1 ? "" : "s", (unsigned long long)s->snapshot_records);
	if (s->unknown)
		pr_warn("%llu records from the gate matched no tracepoint and were dropped\n",
			(unsigned long long)s->unknown);
	if (st.windows_filtered)
		pr_info("%llu window starts did not match --where\n",
			(unsigned long long)st.windows_filtered);
	if (hs) {
		unsigned long long limit = p->hold_size ? p->hold_size : WINDOW_HOLD_DEFAULT_LIMIT;
		char lim[96], hold[32];

		if (limit % (1 << 20))
			snprintf(hold, sizeof(hold), "%llu KiB", limit >> 10);
		else
			snprintf(hold, sizeof(hold), "%llu MiB", limit >> 20);
		snprintf(lim, sizeof(lim), "%s%s%s%s%s", p->min_duration ? "shorter than " : "",
			 p->min_duration ? p->min_duration : "",
			 p->min_duration && p->max_duration ? " or " : "",
			 p->max_duration ? "longer than " : "", p->max_duration ? p->max_duration : "");
		pr_info("windows by duration: %llu written, %llu dropped (%s; %llu records not written)%s\n",
			(unsigned long long)(hs->kept + hs->early_written),
			(unsigned long long)(hs->dropped + hs->early_dropped), lim,
			(unsigned long long)(hs->records_dropped + hs->records_early_dropped),
			hs->early_written + hs->early_dropped ? ", some before their verdict (below)" : "");
		if (hs->unfinished)
			pr_warn("%llu windows were still open at the end (duration unknown): their %llu records were not written\n",
				(unsigned long long)hs->unfinished, (unsigned long long)hs->records_unfinished);
		if (hs->early_written)
			pr_warn("held records reached --hold-size %s: %llu window%s held longest %s written before "
				"%s verdict (%llu records); %llu of them then proved %s\n", hold,
				(unsigned long long)hs->early_written, hs->early_written == 1 ? "" : "s",
				hs->early_written == 1 ? "was" : "were", hs->early_written == 1 ? "its" : "their",
				(unsigned long long)hs->records_early_written,
				(unsigned long long)hs->early_written_wrong, lim);
		if (hs->early_dropped)
			pr_warn("held records reached --hold-size %s: %llu window%s held longest %s dropped before "
				"%s verdict (%llu records); %llu of them then proved within the limits: %llu records lost\n",
				hold, (unsigned long long)hs->early_dropped, hs->early_dropped == 1 ? "" : "s",
				hs->early_dropped == 1 ? "was" : "were", hs->early_dropped == 1 ? "its" : "their",
				(unsigned long long)hs->records_early_dropped,
				(unsigned long long)hs->early_dropped_wrong, (unsigned long long)hs->records_lost);
		pr_info("held for their verdict: at most %.1f MiB\n", hs->peak_bytes / 1048576.0);
	}
}

static int check_output_path(const char *path, bool force)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
			pr_err("cannot create %s: directory %s does not exist\n", path, dir);
			return -ENOENT;
		}
	}
	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode)) {
			pr_err("will not write %s: it is a symbolic link\n", path);
			return -ELOOP;
		}
		if (!force) {
			pr_err("%s exists: use -f to overwrite it, or -o to name another file\n", path);
			return -EEXIST;
		}
		if (!S_ISREG(st.st_mode)) {
			pr_err("will not overwrite %s: not a regular file\n", path);
			return -EEXIST;
		}
	}
	return 0;
}

/*
 * Per-thread hardware trace: a thread or process the target created, which
 * the gate reported (GATE_MSG_THREAD), gets its group; it ran untraced until
 * then (hw_trace__add_thread() counts how long).
 */
static int on_new_thread(struct session *s, pid_t tid, __u64 created_ns)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int idx;

	idx = hw_trace__add_thread(&s->hw, tid, created_ns);
	if (idx < 0)
		return 0; /* gone already, or warned: the run goes on without its trace */
	pr_debug("thread %d: hardware trace open\n", tid);
	ev.data.fd = aux_session__fd(s->hw.aux, idx);
	if (s->epfd >= 0 && ev.data.fd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno; /* drained on the loop's timer all the same */
	return 0;
}

/*
 * A per-thread group's leader hung up: its thread exited and the kernel has
 * stopped its events, so what they published is all there is: written, and
 * the group closed. In snapshot mode the group stays (out of the poll set)
 * until the next snapshot has taken its trace (the exit's at the latest),
 * which closes it. Another fd hanging up is left out of the poll set.
 */
static int on_hangup(struct session *s, int fd)
{
	int err;

	for (size_t i = 0; s->hw.aux && i < aux_session__nr_fds(s->hw.aux); i++) {
		if (aux_session__fd(s->hw.aux, i) != fd)
			continue;
		if (s->plan->snapshot)
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
		err = hw_trace__remove_thread(&s->hw, aux_session__tid(s->hw.aux, i), &s->sink);
		return err;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	return 0;
}

/* -p: the threads there are now, the ones created before the gate reported new ones among them. */
static int add_current_threads(struct session *s)
{
	pid_t *tids;
	size_t nr;
	int err;

	for (size_t i = 0; i < s->target.nr_pids; i++) {
		if (target__threads(s->target.pids[i], &tids, &nr))
			continue; /* gone */
		err = 0;
		for (size_t j = 0; j < nr && !err; j++)
			err = on_new_thread(s, tids[j], 0);
		free(tids);
		if (err)
			return err;
	}
	return 0;
}

/* The threads a per-thread session starts with: the command's, -t's, or every thread of -p's processes. */
static int initial_threads(const struct target *t, pid_t **tids, size_t *nr)
{
	pid_t *one, *tmp;
	size_t nr_one;

	*tids = NULL;
	*nr = 0;
	if (t->is_command || t->threads || t->all) {
		*tids = malloc((t->nr_pids + 1) * sizeof(**tids));
		if (!*tids)
			return -ENOMEM;
		memcpy(*tids, t->pids, t->nr_pids * sizeof(**tids));
		*nr = t->nr_pids;
		return 0;
	}
	for (size_t i = 0; i < t->nr_pids; i++) {
		int err = target__threads(t->pids[i], &one, &nr_one);

		if (err)
			return err;
		tmp = realloc(*tids, (*nr + nr_one + 1) * sizeof(*tmp));
		if (!tmp) {
			free(one);
			return -ENOMEM;
		}
		memcpy(tmp + *nr, one, nr_one * sizeof(*tmp));
		*tids = tmp;
		*nr += nr_one;
		free(one);
	}
	return 0;
}

/* The targets: a command forked and held, or the -p/-t list checked against /proc. */
static int target_setup(struct session *s, int *ret)
{
	const struct record_plan *p = s->plan;
	int err = 0;

	if (p->command) {
		err = target__fork_command(&s->target, p->command);
		if (err) {
			pr_err("cannot run '%s': %s\n", p->command[0],
			       err == -ENOENT ? "command not found" : strerror(-err));
			*ret = err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
			return err;
		}
	} else if (p->nr_pids) {
		err = target__set_pids(&s->target, p->pids, p->nr_pids, p->threads);
		if (err) {
			pr_err("%s %s: %s\n", p->threads ? "-t" : "-p", p->pids_text,
			       err == -ESRCH ? (p->threads ? "no such thread" : "no such process") :
			       err == -ECHILD ? (p->threads ? "the thread has exited" : "the process has exited (a zombie its parent has not reaped)")
					      : strerror(-err));
			*ret = EXIT_RUNTIME;
			return err;
		}
	}
	s->target.all = p->all;
	s->have_target = true;
	return 0;
}

static void session_exit(struct session *s)
{
	free(s->snap_buf.p);
	cpu_events__close(&s->ce);
	for (size_t i = 0; i < s->nr_progs; i++)
		trigger_prog__close(s->progs[i]);
	free(s->progs);
	gate__close(s->gate);
	window_hold__delete(s->hold);
	hw_trace__exit(&s->hw);
	window_map__exit(&s->map);
	if (s->have_target)
		target__exit(&s->target);
	if (s->sigfd > 0)
		close(s->sigfd);
	control__close(&s->ctl);
	if (s->epfd > 0)
		close(s->epfd);
}

static bool usage_error(int err)
{
	return err == -EINVAL || err == -ENOENT || err == -ERANGE;
}

/*
 * Start-up: the first perf event bound to a task, when no other task's event
 * is open, makes the kernel switch its context-switch hooks on and wait for
 * an RCU grace period (account_event(): about 15 ms on the development VM).
 * The sideband follows the targets with such events, after the gate is
 * loaded: a thread opens one on itself (a dummy, never enabled) while the
 * gate loads, so that the wait overlaps the load instead of following it,
 * and the sideband finds the hooks on. Closed once the sideband is open.
 */
struct sched_primer {
	pthread_t thread;
	bool started;
	int fd;
};

static void *sched_primer__run(void *arg)
{
	struct sched_primer *pr = arg;
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	pr->fd = perf_sys__event_open(&perf_sys__kernel, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return NULL;
}

static void sched_primer__start(struct sched_primer *pr)
{
	pr->fd = -1;
	pr->started = !pthread_create(&pr->thread, NULL, sched_primer__run, pr);
}

static void sched_primer__stop(struct sched_primer *pr)
{
	if (!pr->started)
		return;
	pthread_join(pr->thread, NULL);
	pr->started = false;
	if (pr->fd >= 0)
		close(pr->fd);
	pr->fd = -1;
}

int recorder__run(const struct record_plan *p)
{
	return recorder__run_with(p, NULL);
}

/*
 * Everything before arming: the gate, trigger programs, targets, hardware
 * trace, CPU rings, attaching, the control FIFO, the file's header and
 * synthesized records. Return: 0, or -1 with @ret the exit status (said why).
 */
static int session_prepare(struct session *s, const struct perf_sys *aux_sys, struct sched_primer *primer, int *ret)
{
	const struct record_plan *p = s->plan;
	pid_t *tids = NULL;
	size_t nr_tids = 0;
	int err;

	if (check_output_path(p->output, p->force))
		return -1;

	if (!p->all) /* -a: the sideband is per CPU, bound to no task */
		sched_primer__start(primer);
	if (gate_setup(s))
		return -1;
	if (p->nr_trigger_progs) {
		s->progs = calloc(p->nr_trigger_progs, sizeof(*s->progs));
		if (!s->progs)
			return -1;
		for (size_t i = 0; i < p->nr_trigger_progs; i++) {
			s->progs[i] = trigger_prog__open(p->trigger_progs[i], s->gate);
			if (!s->progs[i]) {
				*ret = errno == EINVAL || errno == ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
				return -1;
			}
			s->nr_progs++;
		}
	}
	if ((p->nr_triggers || s->nr_progs || s->hw.edges || s->hold || hw_trace__per_thread(p)) && gate__ctl_open(s->gate, on_ctl, s)) {
		pr_err("cannot open the trigger channel: %s\n", strerror(errno));
		return -1;
	}

	if (target_setup(s, ret))
		return -1;
	if (hw_trace__per_thread(p)) {
		/* before the threads are listed: one created meanwhile is held, not missed */
		err = initial_threads(&s->target, &tids, &nr_tids);
		if (err) {
			pr_err("%s: cannot list the threads of the target: %s\n", p->aux_event, strerror(-err));
			return -1;
		}
	}
	err = hw_trace__setup(&s->hw, p, &s->map, s->gate, p->all ? -1 : s->target.pids[0], tids, nr_tids);
	free(tids);
	tids = NULL;
	if (err) {
		*ret = usage_error(err) ? EXIT_USAGE : EXIT_RUNTIME;
		return -1;
	}
	for (size_t i = 0; i < s->target.nr_pids; i++)
		if (s->target.is_command ? gate__add_exec_target(s->gate, s->target.pids[i])
					: gate__add_target(s->gate, s->target.pids[i]))
			return -1;

	if (cpu_events__open(&s->ce, &perf_sys__kernel, p->cpu_mask, p->nr_possible, p->mmap_pages, p->snapshot, p->callchain) ||
	    gate_outputs(s) || cpu_events__follow(&s->ce, &s->target))
		return -1;
	sched_primer__stop(primer);
	if (s->hw.aux && aux_session__open(s->hw.aux, aux_sys))
		return -1;
	progress__init(&s->status, stderr, 250, !p->quiet);
	progress__set_global(&s->status);
	gate__set_progress(s->gate, &s->status);
	err = gate__attach(s->gate);
	progress__clear(&s->status);
	if (err) {
		*ret = err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME; /* e.g. no such symbol */
		return -1;
	}
	if (control__open(&s->ctl, &p->control))
		return -1;
	if (setup_loop(s)) {
		pr_err("cannot set up the event loop: %s\n", strerror(errno));
		return -1;
	}
	/* -p: threads created after they were listed and before the gate followed the process */
	if (hw_trace__per_thread(p) && !s->target.is_command && !s->target.threads && add_current_threads(s))
		return -1;

	s->w = pdata_writer__open(p->output, p->force);
	if (!s->w)
		return -1;	/* pdata_writer__open() said why */
	s->created_file = true;
	record_sink__init(&s->sink, s->w, s->hold, p->snapshot);
	s->sink.callchain = p->callchain;
	err = write_header(s);
	if (err) {
		pr_err("cannot write %s: %s\n", p->output, strerror(-err));
		return -1;
	}
	/* synthesize() names its cause (a target's /proc unreadable, gone; the writer's own) */
	return synthesize(s) ? -1 : 0;
}

/* Arm the gate, start the hardware trace and the command. Return: 0 or -1 (said why). */
static int session_start(struct session *s)
{
	const struct record_plan *p = s->plan;
	int err;

	gate__arm(s->gate);
	if (s->hw.aux && aux_session__start(s->hw.aux)) {
		gate__disarm(s->gate);
		return -1;
	}
	err = target__start(&s->target);
	if (err) {
		pr_err("cannot run '%s': %s\n", p->command[0], strerror(-err));
		gate__disarm(s->gate);
		return -1;
	}
	if (!p->quiet)
		pr_info("recording %zu tracepoint%s in %zu window%s on %zu CPU%s; Ctrl-C to stop\n",
			p->events.nr, p->events.nr == 1 ? "" : "s", p->nr_windows, p->nr_windows == 1 ? "" : "s",
			s->ce.nr_cpus, s->ce.nr_cpus == 1 ? "" : "s");
	if (!p->quiet && s->hw.aux) {
		char note[512];

		pr_info("hardware trace %s: %s\n", p->aux_event,
			record_plan__has_windows(p) ? hw_trace__path(&s->hw) : "the whole run");
		if (hw_trace__note(&s->hw, p, note, sizeof(note)))
			pr_info("hardware trace %s: %s\n", p->aux_event, note);
	}
	return 0;
}

/*
 * After the loop (which ended with @err): disarm, take in what the rings
 * and the trigger channel still hold, the end markers and counts, the exit
 * snapshot, and close the file. Return: 0 or -errno of a write.
 */
static int session_finish(struct session *s, int err)
{
	const struct record_plan *p = s->plan;

	gate__disarm(s->gate);
	if (!err)
		err = gate__ctl_consume(s->gate); /* triggers that fired at the very end */
	if (!err)
		err = drain(s);
	if (!err && s->snapshot_due) {
		/* snapshot+T still waiting: everything recorded is before its deadline. */
		s->snapshot_due = 0;
		err = triggered_snapshot(s, &s->snapshot_msg);
	}
	if (!err)
		err = write_stop_marker(s);
	if (!err)
		err = write_gate_losses(s);
	if (!err)
		err = write_trigger_stats(s);
	if (!err && p->snapshot_at_exit)
		err = take_snapshot(s, "exit");
	if (s->hold)
		window_hold__end(s->hold); /* windows still open have no verdict: not written */
	if (!err && s->hw.aux)
		err = aux_session__stop(s->hw.aux, &s->sink);
	if (!err)
		err = pdata_writer__close(s->w);
	return err;
}

/*
 * Disk full or I/O error @err, while recording or finishing: keep what is on
 * disk, readable, and count what never reached it: the records of the writes
 * that failed, those still in the writer's buffer, and those still in the
 * rings (drained now, each write failing and counted), in one
 * PERF_RECORD_LOST_SAMPLES where the cut left room.
 */
static void session_salvage(struct session *s, int err)
{
	const struct record_plan *p = s->plan;
	struct lost_samples_rec rec;
	const struct pdata_writer_stats *ws;
	__u64 lost;
	int serr;

	if (pdata_writer__failed(s->w)) {
		bool any = false;

		cpu_events__drain(&s->ce, process_record, s, &any);
	}
	s->lost_disk = pdata_writer__stats(s->w)->lost_samples + pdata_writer__pending_samples(s->w);
	lost = s->lost_disk + gate_losses(s);
	if (lost && s->ce.nr_cpus)
		lost_samples_rec(s, lost, &rec);
	serr = pdata_writer__salvage(s->w, lost && s->ce.nr_cpus ? &rec : NULL, sizeof(rec));
	ws = pdata_writer__stats(s->w);
	s->salvaged = true;
	if (serr)
		pr_err("recording stopped: %s could not be completed: %s\n", p->output, strerror(-serr));
	else
		pr_err("recording stopped: %s (%s); %s holds what was written before it\n",
		       strerror(-err), err == -ENOSPC ? "disk full" : "write error", p->output);
	if (!serr && s->lost_disk)
		pr_err("%llu samples recorded never reached %s (%s)\n", (unsigned long long)s->lost_disk,
		       p->output, ws->salvage_record ? "the file counts them as lost samples"
						      : "no room left in the file to count them there");
}

int recorder__run_with(const struct record_plan *p, const struct perf_sys *aux_sys)
{
	struct session s = { .plan = p, .epfd = -1, .sigfd = -1, .target = { .go_fd = -1, .err_fd = -1 } };
	struct window_map_aux maux;
	struct sched_primer primer = { .fd = -1 };
	int err, ret = EXIT_RUNTIME;

	control__init(&s.ctl);
	/*
	 * First, while auxtrig holds no thread, BPF object or perf event: the
	 * reaper cleans up after a SIGKILLed auxtrig (the command's cgroup, the
	 * files it makes).
	 */
	if (!p->dry_run)
		reaper__start(p->command != NULL);
	/* decided before the gate loads: it sends window edges only for the userspace-gated path */
	hw_trace__decide(&s.hw, p, aux_sys);
	hw_trace__map_aux(&s.hw, p, &maux);
	err = window_map__build(&s.map, p, &maux);
	if (!err && p->dry_run)
		err = hw_trace__setup(&s.hw, p, &s.map, NULL, -1, NULL, 0);
	if (!err && p->dry_run) {
		dry_run_print(&s);
		ret = EXIT_OK;
		goto out;
	}
	if (err) {
		/* Bad input: unknown names, malformed specs, out-of-range terms. */
		ret = usage_error(err) ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (session_prepare(&s, aux_sys, &primer, &ret) || session_start(&s))
		goto out;

	control__ack(&s.ctl, ""); /* nothing: "ping" answers once armed */
	err = loop(&s);
	err = session_finish(&s, err);
	if (err) {
		session_salvage(&s, err);
		goto out_summary;
	}
	ret = EXIT_OK;
	if ((s.signo || s.stop_requested) && s.target.is_command)
		target__stop_tree(&s.target, TARGET_STOP_GRACE_MS);
	else if (s.target.is_command && s.target.exited && WIFSIGNALED(s.target.status))
		pr_warn("%s was killed by signal %d (%s); the file holds everything up to then\n",
			p->command[0], WTERMSIG(s.target.status), strsignal(WTERMSIG(s.target.status)));
out_summary:
	s.created_file = false; /* it holds what was recorded: keep it */
	print_summary(&s);
	hw_trace__summary(&s.hw, p, s.gate);
out:
	sched_primer__stop(&primer);
	if (s.created_file)
		pdata_writer__unlink(s.w);
	if (s.have_target && !s.target.exited)
		target__stop_tree(&s.target, TARGET_STOP_GRACE_MS);
	pdata_writer__delete(s.w);
	session_exit(&s);
	reaper__stop();
	progress__set_global(NULL);
	return ret;
}
