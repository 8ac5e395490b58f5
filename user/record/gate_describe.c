// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the gate would configure and attach for a plan, as text (--dry-run
 * -v, and the unit tests' view of the loader).
 */
#include <bpf/libbpf.h>

#include "auxtrig/record/internal/gate.h"
#include "skel/gate.skel.h"

static void describe_flags(FILE *f, __u32 flags)
{
	static const struct {
		__u32 bit;
		const char *name;
	} names[] = {
		{ GATE_TP_RECORD, "record" },		{ GATE_TP_USER_REGS, "user_regs" },
		{ GATE_TP_SYSCALL_ENTER, "syscall_enter" }, { GATE_TP_SYSCALL_EXIT, "syscall_exit" },
		{ GATE_TP_SYSCALL_ANY, "syscall_any" },	{ GATE_TP_IN_ANY, "in_any" },
		{ GATE_TP_STAMP_ENTRY, "stamp_entry" },	{ GATE_TP_ENTRY_ARGS, "entry_args" },
		{ GATE_TP_CALL_ENTRY, "call_entry" },
	};
	const char *sep = "";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].bit))
			continue;
		fprintf(f, "%s%s", sep, names[i].name);
		sep = ",";
		flags &= ~names[i].bit;
	}
	if (flags)
		fprintf(f, "%s%#x", sep, flags);
	else if (!*sep)
		fprintf(f, "-");
}

static void describe_tp(FILE *f, const struct gate_tp *tp)
{
	fprintf(f, " open=%#llx close=%#llx trig=%#x flags=", (unsigned long long)tp->open_mask,
		(unsigned long long)tp->close_mask, tp->trig_mask);
	describe_flags(f, tp->flags);
}

int gate__describe(const struct gate *g, FILE *f)
{
	const struct gate_bpf__rodata *ro = g->skel->rodata;
	size_t order[GATE_MAX_TPS], n = 0;
	struct bpf_program *prog;
	char text[4096 + 600];
	long start = ftell(f);

	fprintf(f, "gate: filter_targets=%u target_threads=%u filter_cpus=%u no_windows=%u have_where=%u "
		   "need_elapsed=%u signal_edges=%u hold_windows=%u min_ns=%llu max_ns=%llu\n",
		ro->filter_targets, ro->target_threads, ro->filter_cpus, ro->no_windows, ro->have_where,
		ro->need_elapsed, ro->signal_edges, ro->hold_windows, (unsigned long long)ro->min_duration_ns,
		(unsigned long long)ro->max_duration_ns);
	fprintf(f, "types: mark=%u resume=%u pause=%u uprobe_enter=%u uprobe_exit=%u\n", g->config.mark_type,
		ro->resume_type, ro->pause_type, ro->uprobe_enter_type, ro->uprobe_exit_type);
	for (size_t i = 0; i < g->nr_tps; i++) {
		fprintf(f, "tp %s:%s id=%u size=%u dyn=%u", g->tps[i].system, g->tps[i].name, g->tps[i].id,
			g->tps[i].tp.size, g->tps[i].tp.nr_dyn);
		describe_tp(f, &g->tps[i].tp);
		fprintf(f, "\n");
	}
	for (size_t i = 0; i < g->nr_points; i++) {
		point__format(&g->points[i].pt, text, sizeof(text));
		fprintf(f, "point %zu %s", i, text);
		describe_tp(f, &g->points[i].tp);
		fprintf(f, "\n");
	}
	for (int i = 0; i < g->nr_triggers; i++) {
		const volatile struct gate_trigger *t = &ro->gate_triggers[i];

		fprintf(f, "trigger %d: action=%u policy=%u n=%llu limit=%u delay_ns=%llu cond=%s\n", i + 1, t->action,
			t->policy, (unsigned long long)t->n, t->limit, (unsigned long long)t->delay_ns,
			t->has_cond ? "yes" : "no");
		if (t->mark_str || t->entry_args)
			fprintf(f, "trigger %d: mark str=%s%.0d args=%s\n", i + 1, t->mark_str ? "arg" : "none",
				t->mark_str ? t->mark_str - 1 : 0, t->entry_args ? "entry" : "hit");
	}
	fprintf(f, "programs:");
	bpf_object__for_each_program(prog, g->skel->obj)
		if (bpf_program__autoload(prog))
			fprintf(f, " %s", bpf_program__name(prog));
	fprintf(f, "\n");
	/* what gate__attach() attaches, in its order */
	gate__tp_attach_order(g, order);
	for (size_t k = 0; k < g->nr_tps; k++) {
		const struct gate_tp_entry *e = &g->tps[order[k]];

		fprintf(f, "attach %zu: %s %s:%s cookie=%u\n", ++n,
			gate__tp_front_eligible(&e->tp) || gate__tp_record_eligible(g, &e->tp) ? "own-program-or-gate_tracepoint"
										   : "gate_tracepoint", e->system,
			e->name, e->id);
	}
	for (size_t i = 0; i < g->nr_points; i++) {
		point__format(&g->points[i].pt, text, sizeof(text));
		fprintf(f, "attach %zu: %s %s cookie=%#x%s\n", ++n, bpf_program__name(gate__point_prog(g, g->points[i].pt.kind)),
			text, GATE_POINT_BASE + (unsigned int)i,
			g->points[i].pt.kind == POINT_MEM ? " (a breakpoint per CPU)" : "");
	}
	for (size_t i = 0; i < g->nr_uprobes; i++) {
		const struct gate_uprobe *u = &g->uprobes[i];

		fprintf(f, "attach %zu: gate_uprobe_enter %s:%s+%#lx cookie=%d\n", ++n, u->path, u->symbol, u->offset,
			u->window);
		if (!u->offset)
			fprintf(f, "attach %zu: gate_uprobe_exit %s:%s cookie=%d\n", ++n, u->path, u->symbol, u->window);
	}
	fprintf(f, "attach %zu: gate_follow_fork sched:sched_process_fork\n", ++n);
	fprintf(f, "attach %zu: gate_follow_exec sched:sched_process_exec\n", ++n);
	fprintf(f, "attach %zu: gate_thread_exit sched:sched_process_exit\n", ++n);
	return start >= 0 ? (int)(ftell(f) - start) : 0;
}
