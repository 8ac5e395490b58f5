// SPDX-License-Identifier: BSD-2-Clause
/*
 * --dry-run: the plan as the recorder would run it, printed instead.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/record/attr_print.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/record/gate_front.h"
#include "auxtrig/record/internal/recorder.h"
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
static void dry_run_print_where(const struct recorder *s)
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
static void dry_run_print_trigger(const struct recorder *s, size_t i)
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

void recorder__dry_run(struct recorder *s)
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
		if (hw_trace__sink_note(&s->hw, p, note, sizeof(note)))
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
