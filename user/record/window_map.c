// SPDX-License-Identifier: BSD-2-Clause
/* The plan's windows, translated once: the gate's masks and the AUX group's triggers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/record/plan.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/elf_sym.h"
#include "auxtrig/sys/log.h"
#include "uapi/linux/perf_event_aux.h"

static struct aux_session_trigger *aux_add(struct window_map *m, __u32 action)
{
	struct aux_session_trigger *t;

	if (m->nr_aux == m->cap_aux) {
		size_t cap = m->cap_aux ? 2 * m->cap_aux : 8;
		void *tt = realloc(m->aux, cap * sizeof(*m->aux)), *nn;

		if (!tt)
			return NULL;
		m->aux = tt;
		nn = realloc(m->aux_names, cap * sizeof(*m->aux_names));
		if (!nn)
			return NULL;
		m->aux_names = nn;
		m->cap_aux = cap;
	}
	t = &m->aux[m->nr_aux];
	memset(t, 0, sizeof(*t));
	m->aux_names[m->nr_aux++][0] = '\0';
	t->action = action;
	return t;
}

/* A tracepoint resumes or pauses the trace. */
static int aux_add_tp(struct window_map *m, const struct tp_format *fmt, __u32 action)
{
	struct aux_session_trigger *t = aux_add(m, action);

	if (!t)
		return -ENOMEM;
	t->kind = AUX_TRIGGER_TRACEPOINT;
	t->id = fmt->id;
	snprintf(m->aux_names[m->nr_aux - 1], sizeof(m->aux_names[0]), "%s:%s", fmt->system, fmt->name);
	return 0;
}

/* A uprobe window: resume at the function's entry, pause at its return; @veto: --where's text, or NULL. */
static int aux_add_call(struct window_map *m, const struct window_spec *w, __u32 window, const char *veto)
{
	struct aux_session_trigger *t;
	__u64 off;
	int err;

	err = elf_sym__file_offset(w->start.path, w->start.symbol, &off);
	if (err)
		return err == -ENOEXEC ? -EINVAL : err;
	for (int ret = 0; ret < 2; ret++) {
		t = aux_add(m, ret ? AUXTRIG_AUX_PAUSE : AUXTRIG_AUX_RESUME);
		if (!t)
			return -ENOMEM;
		t->kind = AUX_TRIGGER_UPROBE;
		t->path = w->start.path;
		t->offset = off + w->start.offset;
		t->retprobe = ret;
		t->veto = veto;
		t->window = window;
	}
	return 0;
}

/* A kprobe or kretprobe end of a window between kernel function points. */
static int aux_add_kprobe(struct window_map *m, const struct point *pt, __u32 action)
{
	struct aux_session_trigger *t = aux_add(m, action);
	bool ret = pt->kind == POINT_KRETPROBE;

	if (!t)
		return -ENOMEM;
	t->kind = AUX_TRIGGER_KPROBE;
	t->path = pt->symbol;
	t->offset = ret ? 0 : pt->offset;
	t->retprobe = ret;
	snprintf(m->aux_names[m->nr_aux - 1], sizeof(m->aux_names[0]), "%s:%s", ret ? "kretprobe" : "kprobe", pt->symbol);
	return 0;
}

static bool is_kernel_probe(const struct point *pt)
{
	return pt->kind == POINT_KPROBE || pt->kind == POINT_KRETPROBE;
}

static const struct tp_format *event_fmt(const struct record_plan *p, const struct point *pt, size_t *idx)
{
	const struct rec_event *e = event_list__find(&p->events, pt->sys, pt->name);

	*idx = e - p->events.ev;
	return &e->fmt;
}

/* A probe end of window @i. */
static int add_point(struct window_map *m, const struct point *pt, __u64 open_mask, __u64 close_mask)
{
	struct window_map_point *tmp = realloc(m->points, (m->nr_points + 1) * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	m->points = tmp;
	m->points[m->nr_points++] = (struct window_map_point){ pt, open_mask, close_mask };
	return 0;
}

/* One window: its ends for the gate and, with hardware trace, for the AUX group. */
static int map_window(struct window_map *m, const struct record_plan *p, size_t i, const struct window_map_aux *a)
{
	const struct window_spec *w = &p->windows[i];
	const struct point *ends[2] = { &w->start, &w->stop };
	size_t idx;
	int err;

	switch (w->kind) {
	case WINDOW_PROG:
		return 0; /* no point: the trigger programs open and close it (and gate the AUX group from userspace) */
	case WINDOW_UPROBE: {
		struct window_map_call *tmp = realloc(m->calls, (m->nr_calls + 1) * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		m->calls = tmp;
		m->calls[m->nr_calls++] = (struct window_map_call){ i, &w->start };
		return a->on ? aux_add_call(m, w, i, a->veto) : 0;
	}
	case WINDOW_SYSCALL:
	case WINDOW_POINTS:
		break;
	}
	for (int end = 0; end < 2; end++) {
		__u64 open = end ? 0 : 1ULL << i, close = end ? 1ULL << i : 0;

		if (point__is_probe(ends[end])) {
			err = add_point(m, ends[end], open, close);
			if (err)
				return err;
			continue;
		}
		event_fmt(p, ends[end], &idx);
		m->tp[idx].open_mask |= open;
		m->tp[idx].close_mask |= close;
	}
	if (!a->on)
		return 0;
	for (int end = 0; end < 2; end++) {
		__u32 action = end ? AUXTRIG_AUX_PAUSE : AUXTRIG_AUX_RESUME;

		if (is_kernel_probe(ends[end])) {
			err = aux_add_kprobe(m, ends[end], action);
		} else if (ends[end]->kind == POINT_MEM && a->gated) {
			continue; /* the gate's breakpoint sends its edges (hw_trace.c: mem_decide()) */
		} else if (point__is_probe(ends[end])) {
			pr_err("-e %s with -w %s: of the probe points only kprobe:, kretprobe: and mem: can end a hardware-trace window so far; use a syscall, tracepoint, kprobe, mem or uprobe window\n",
			       p->aux_event, w->text);
			return -EINVAL;
		} else {
			err = aux_add_tp(m, event_fmt(p, ends[end], &idx), action);
		}
		if (err)
			return err;
	}
	return 0;
}

/*
 * Recorded syscalls:sys_enter_X/sys_exit_X tracepoints are inside syscall:*
 * windows whichever order the kernel runs them and raw_syscalls' in (see
 * any_inside() in bpf/gate/tracepoint.bpf.c): entries may open those windows too, and
 * the raw tracepoints that open and close them keep the note that takes.
 */
static void map_syscall_any(struct window_map *m, const struct record_plan *p)
{
	__u64 any = 0;

	for (size_t i = 0; i < p->nr_windows; i++)
		if (p->windows[i].kind == WINDOW_SYSCALL && !strcmp(p->windows[i].start.sys, "raw_syscalls"))
			any |= 1ULL << i;
	for (size_t i = 0; any && i < p->events.nr; i++) {
		const struct rec_event *e = &p->events.ev[i];
		struct window_map_tp *tp = &m->tp[i];

		if (!strcmp(e->fmt.system, "raw_syscalls") && ((tp->open_mask | tp->close_mask) & any))
			tp->flags |= GATE_TP_SYSCALL_ANY;
		if (!(e->flags & GATE_TP_RECORD) || strcmp(e->fmt.system, "syscalls"))
			continue;
		tp->flags |= GATE_TP_IN_ANY;
		if (!strncmp(e->fmt.name, "sys_enter_", 10))
			tp->open_mask |= any;
	}
}

int window_map__build(struct window_map *m, const struct record_plan *p, const struct window_map_aux *a)
{
	int err = 0;

	memset(m, 0, sizeof(*m));
	m->tp = calloc(p->events.nr ? p->events.nr : 1, sizeof(*m->tp));
	if (!m->tp)
		return -ENOMEM;
	for (size_t i = 0; !err && i < p->nr_windows; i++)
		err = map_window(m, p, i, a);
	if (err)
		return err;
	map_syscall_any(m, p);
	/* --on POINT:resume / POINT:pause: the point itself resumes or pauses the trace. */
	for (size_t i = 0; a->on && !a->gated && !err && i < p->nr_triggers; i++) {
		const struct plan_trigger *on = &p->triggers[i];
		__u32 action = on->t.action == GATE_ACT_RESUME ? AUXTRIG_AUX_RESUME
			     : on->t.action == GATE_ACT_PAUSE ? AUXTRIG_AUX_PAUSE : 0;

		/* a probe point's own BPF program acts (hw_trace.c: prog_decide()); only tracepoints are members */
		if (action && !point__is_probe(&on->pt))
			err = aux_add_tp(m, &on->fmt, action);
	}
	for (size_t i = 0; i < m->nr_aux; i++)
		m->aux[i].name = m->aux_names[i];
	return err;
}

void window_map__exit(struct window_map *m)
{
	free(m->tp);
	free(m->points);
	free(m->calls);
	free(m->aux);
	free(m->aux_names);
	memset(m, 0, sizeof(*m));
}
