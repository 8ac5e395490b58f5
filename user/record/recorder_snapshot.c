// SPDX-License-Identifier: BSD-2-Clause
/*
 * Snapshots of the flight recorder: the frozen rings written up to the
 * trigger's point, with a marker saying why and what was lost.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/record/gate.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/record/internal/recorder.h"
/* ---- snapshots ------------------------------------------------------------------ */

/* A gate sample's time; its point number if it is a snapshot point, else 0. */
static __u64 sample_time(const struct recorder *s, const struct perf_event_header *h, __u32 *point)
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
	struct recorder *s = ctx;

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
static long snapshot_cut(struct recorder *s, __u32 point, __u32 tid)
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
			struct gate_sample g;

			/* its thread's trigger at the end of this call, if any, is to take no snapshot */
			if (gate_sample__parse(h, s->plan->callchain, &g) && g.raw_size > GATE_HDR_SIZE)
				gate__hold_cut(s->gate, (const char *)h + g.raw_off + GATE_HDR_SIZE,
					       g.raw_size - GATE_HDR_SIZE, ((const struct cpu_events_out_head *)h)->tid);
			s->snap_after_point++;
			continue;
		}
		err = recorder__process_record(s, h);
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
static __u64 snapshot_losses(struct recorder *s)
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
static int write_marker(struct recorder *s, const char *reason, __u64 records, __u64 lost)
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
int recorder__take_snapshot(struct recorder *s, const char *reason)
{
	__u64 before = s->snapshot_records, lost;
	char hw[48] = "", held[160] = "";
	int err, aux_buffers = 0;

	if (!s->plan->snapshot) {
		pr_warn("snapshot (%s) ignored: not in flight-recorder mode (-S)\n", reason);
		return 0;
	}
	gate__snapshot_begin(s->gate);
	err = recorder__drain(s); /* the sideband the snapshot's records refer to */
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
	gate__snapshot_end(s->gate);
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
