// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fired triggers (the gate's control ring) and their timers: snapshot and
 * stop actions, snapshot+T and stop+T, the auxtrig:stop record.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/record/internal/recorder.h"
/* ---- fired triggers and their timers ------------------------------------------------ */

/* The snapshot a snapshot trigger asked for; the gate froze at the trigger or at its deadline. */
int recorder__triggered_snapshot(struct recorder *s, const struct gate_ctl_msg *m)
{
	char reason[16];
	int err;

	if (m->trigger >= GATE_USER_TRIGGER_BASE)
		snprintf(reason, sizeof(reason), "prog:%u", m->trigger - GATE_USER_TRIGGER_BASE);
	else
		snprintf(reason, sizeof(reason), "on#%u", m->trigger + 1);
	s->firing = m;
	err = recorder__take_snapshot(s, reason);
	s->firing = NULL;
	gate__unfreeze(s->gate);
	return err;
}

/* snapshot+T and stop+T whose time has come. */
int recorder__run_due(struct recorder *s)
{
	__u64 now = recorder__monotonic_ns();
	int err = 0;

	if (s->snapshot_due && now >= s->snapshot_due) {
		s->snapshot_due = 0;
		err = recorder__triggered_snapshot(s, &s->snapshot_msg);
	}
	if (s->stop_due && now >= s->stop_due) {
		s->stop_due = 0;
		s->stop = true;
		s->stop_requested = true;
	}
	return err;
}

int recorder__on_ctl(void *ctx, void *data, size_t size)
{
	struct recorder *s = ctx;
	const struct record_plan *p = s->plan;
	const struct gate_ctl_msg *m = data;

	if (size < sizeof(*m) || m->size < sizeof(*m))
		return 0;
	if (m->type == GATE_MSG_EDGE)
		return hw_trace__edge(&s->hw, p, m);
	if (m->type == GATE_MSG_THREAD)
		return s->hw.aux && aux_session__per_thread(s->hw.aux) ? recorder__on_new_thread(s, m->tid, m->time_ns) : 0;
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
		return recorder__triggered_snapshot(s, m);
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
int recorder__write_stop_marker(struct recorder *s)
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
