// SPDX-License-Identifier: BSD-2-Clause
/*
 * The end of a recording: what the gate and the kernel lost, written into
 * the file where perf counts it, the triggers' counters, and the summary
 * on stderr.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/expr_abi.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/record/window_hold.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/record/internal/recorder.h"
/*
 * Records the gate dropped that no PERF_RECORD_LOST in the file accounts for:
 * too big to copy, or lost to a full ring after the kernel's last LOST record.
 * Written as PERF_RECORD_LOST_SAMPLES, which perf report counts ("Total Lost
 * Samples"), attributed to the output event of the first CPU.
 */
void recorder__lost_samples_rec(struct recorder *s, __u64 lost, struct lost_samples_rec *rec)
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

__u64 recorder__ring_lost(const struct recorder *s, const struct gate_stats *st, __u64 *paused)
{
	/*
	 * A full ring makes both the gate (bpf_perf_event_output() fails) and
	 * the kernel (PERF_RECORD_LOST, emitted later) count the same loss;
	 * the kernel's count may lag at exit, the gate's cannot.
	 */
	__u64 ring = s->lost_kernel > st->output_lost ? s->lost_kernel : st->output_lost;

	*paused = 0;
	/*
	 * A flight recorder's rings overwrite, so they never fill: what they
	 * refused came while a snapshot paused them (a hit that passed the
	 * freeze before it was set), held back as the frozen ones are.
	 */
	if (s->plan->snapshot) {
		*paused = ring;
		ring = 0;
	}
	return ring;
}

/* What the gate lost that no PERF_RECORD_LOST of the kernel's in the file counts. */
__u64 recorder__gate_losses(struct recorder *s)
{
	struct gate_stats st;

	gate__stats(s->gate, &st);
	return st.too_big + (st.output_lost > s->lost_kernel ? st.output_lost - s->lost_kernel : 0);
}

int recorder__write_gate_losses(struct recorder *s)
{
	struct lost_samples_rec rec;
	__u64 lost = recorder__gate_losses(s);

	if (!lost || !s->ce.nr_cpus)
		return 0;
	recorder__lost_samples_rec(s, lost, &rec);
	return record_sink__write(&s->sink, &rec.h);
}

/* Each --on's counters, in the file as auxtrig:trigger_stats at the end of the run. */
int recorder__write_trigger_stats(struct recorder *s)
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

void recorder__print_summary(struct recorder *s)
{
	const struct record_plan *p = s->plan;
	const struct window_hold_stats *hs = s->hold ? window_hold__stats(s->hold) : NULL;
	struct gate_stats st;
	__u64 lost, ring, paused, bytes = pdata_writer__stats(s->w)->bytes;

	gate__stats(s->gate, &st);
	if (hs)
		s->written -= hs->records_dropped + hs->records_unfinished + hs->records_early_dropped;
	s->written -= s->lost_disk < s->written ? s->lost_disk : s->written;
	ring = recorder__ring_lost(s, &st, &paused);
	lost = ring + st.too_big + s->lost_kernel_side + (hs ? hs->records_lost : 0) + s->lost_disk;
	if (p->quiet && !lost && !st.threads_full && !st.vetoed_untracked)
		return;
	fprintf(stderr,
		"[ auxtrig record: %llu window%s, %llu event%s %s, %.1f KiB %s %s; lost %llu record%s ]\n",
		(unsigned long long)st.windows_opened, st.windows_opened == 1 ? "" : "s",
		(unsigned long long)s->written, s->written == 1 ? "" : "s",
		s->salvaged ? "recorded" : "written", bytes / 1024.0, s->salvaged && !recorder__output_is_stdout(p) ? "kept in" : "to",
		recorder__output_name(p), (unsigned long long)lost, lost == 1 ? "" : "s");
	if (lost - (hs ? hs->records_lost : 0) - s->lost_disk)
		pr_warn("%llu records were lost (ring full: %llu, sideband: %llu, larger than %d bytes: %llu): try a larger -m\n",
			(unsigned long long)(lost - (hs ? hs->records_lost : 0) - s->lost_disk),
			(unsigned long long)ring, (unsigned long long)s->lost_kernel_side, GATE_RECORD_MAX,
			(unsigned long long)st.too_big);
	if (st.threads_full)
		pr_warn("%llu windows could not open: more than %d threads had windows open at once\n",
			(unsigned long long)st.threads_full, GATE_MAX_THREADS);
	if (st.vetoed_untracked)
		pr_warn("%llu calls vetoed by --where were not tracked (more than %d threads inside vetoed calls at once): "
			"calls nested in them may have opened their windows\n",
			(unsigned long long)st.vetoed_untracked, GATE_UPROBE_VETOED_MAX);
	if (gate__uvar_lost(s->gate))
		pr_warn("%llu conditions and set actions were false: a variable of your own did not fit in the table "
			"of %d values\n", (unsigned long long)gate__uvar_lost(s->gate), EXPR_UVAR_ENTRIES);
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
			pr_warn("--on %s: %llu firings were lost (%s)\n", p->triggers[i].text, (unsigned long long)ts.dropped,
				p->triggers[i].sets ? "a variable did not fit in the table of variables" : "trigger channel full");
	}
	if (s->nr_progs)
		pr_info("trigger programs: %llu action%s sent to auxtrig\n", (unsigned long long)s->prog_fired,
			s->prog_fired == 1 ? "" : "s");
	if (st.frozen)
		pr_info("%llu records after a snapshot trigger were held back until its snapshot was taken\n",
			(unsigned long long)st.frozen);
	if (paused)
		pr_info("%llu records came while a snapshot paused the rings: they are in none\n",
			(unsigned long long)paused);
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
