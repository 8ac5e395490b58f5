// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate loader (auxtrig/record/gate.h): the gate configured from the plan
 * and window map, its maps written while it runs, its counters read, armed,
 * disarmed, detached. Loading, attaching and describing it are
 * gate_load.c, gate_attach.c (gate_probe.c) and gate_describe.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "auxtrig/expr_abi.h"
#include "auxtrig/record/plan.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/progress.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/record/internal/gate.h"
#include "skel/gate.skel.h"

static void config_update(struct gate *g);

struct gate *gate__open(const struct gate_opts *opts)
{
	struct gate *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return NULL;
	g->detach_sigfd = -1;
	g->skel = gate_bpf__open();
	if (!g->skel) {
		err = -errno;
		pr_err("cannot open the gate BPF object: %s\n", strerror(-err));
		free(g);
		errno = -err;
		return NULL;
	}
	g->skel->rodata->filter_targets = !opts->all_processes;
	g->skel->rodata->target_threads = opts->threads;
	g->config.all = opts->all_processes;
	g->nr_cpus = opts->nr_cpus;
	g->sys = opts->sys;
	bpf_map__set_max_entries(g->skel->maps.gate_events, opts->nr_cpus);
	return g;
}

__u32 gate__syscall_flags(const struct tp_format *fmt)
{
	const char *name = fmt->name;
	int sc = !strcmp(fmt->system, "syscalls"), raw = !strcmp(fmt->system, "raw_syscalls");

	/* raw_syscalls' records have the same layout: id at 8, args at 16 / ret at 16 */
	if ((sc && !strncmp(name, "sys_enter_", 10)) || (raw && !strcmp(name, "sys_enter")))
		return GATE_TP_SYSCALL_ENTER;
	if ((sc && !strncmp(name, "sys_exit_", 9)) || (raw && !strcmp(name, "sys_exit")))
		return GATE_TP_SYSCALL_EXIT;
	return 0;
}

int gate__add_tp(struct gate *g, const struct tp_format *fmt, __u64 open_mask, __u64 close_mask,
		 __u32 flags)
{
	struct gate_tp_entry *e = NULL, *tmp;
	size_t nr_dyn = 0;

	for (size_t i = 0; i < g->nr_tps; i++)
		if (g->tps[i].id == fmt->id)
			e = &g->tps[i];
	if (!e) {
		if (g->nr_tps == GATE_MAX_TPS) {
			pr_err("too many tracepoints: at most %d\n", GATE_MAX_TPS);
			return -E2BIG;
		}
		tmp = realloc(g->tps, (g->nr_tps + 1) * sizeof(*g->tps));
		if (!tmp)
			return -ENOMEM;
		g->tps = tmp;
		e = &g->tps[g->nr_tps++];
		memset(e, 0, sizeof(*e));
		e->id = fmt->id;
		snprintf(e->system, sizeof(e->system), "%s", fmt->system);
		snprintf(e->name, sizeof(e->name), "%s", fmt->name);
		e->tp.size = fmt->size;
		/*
		 * A syscall tracepoint's BPF context holds its fixed fields only
		 * (perf_call_bpf_enter()/perf_call_bpf_exit()): the kernel's own
		 * __data_loc strings (Linux 6.19+) are not there, their words are
		 * garbage; the gate appends its own strings (event_list.h).
		 */
		for (size_t i = 0; i < fmt->nr_fields && strcmp(fmt->system, "syscalls"); i++) {
			if (!fmt->fields[i].is_dynamic)
				continue;
			if (nr_dyn == GATE_MAX_DYN) {
				pr_warn("%s:%s has more than %d dynamic fields; the rest are cut\n",
					fmt->system, fmt->name, GATE_MAX_DYN);
				break;
			}
			e->tp.dyn_off[nr_dyn] = fmt->fields[i].offset;
			e->tp.dyn_flags[nr_dyn] = fmt->fields[i].is_rel ? GATE_DYN_REL : 0;
			nr_dyn++;
		}
		e->tp.nr_dyn = nr_dyn;
		/* raw_syscalls:sys_enter's, by syscall number (syscall_strings.h) */
		if (syscall_strings__is_raw_enter(fmt))
			flags |= GATE_TP_RAW_STRS;
		/* a syscall entry's user strings ride after its record (event_list.c says how) */
		{
			const struct tp_field *s[GATE_MAX_STRS];
			size_t nr = event_list__string_fields(fmt, s, GATE_MAX_STRS);

			for (size_t i = 0; i < nr; i++)
				e->tp.str_off[i] = s[i]->offset;
		}
	}
	if (!strcmp(fmt->system, "syscalls") || !strcmp(fmt->system, "raw_syscalls"))
		flags |= GATE_TP_USER_REGS;
	flags |= gate__syscall_flags(fmt);
	e->tp.open_mask |= open_mask;
	e->tp.close_mask |= close_mask;
	e->tp.flags |= flags;
	return 0;
}

/*
 * At a syscall's exit point, what the thread's entry of that syscall had: its
 * time ($elapsed with no window open counts from it) and its arguments (a
 * mark's str(argN)). The gate stamps the entries per thread; @why names what
 * needs them in the one line of an error.
 */
static int gate_stamp_syscall(struct gate *g, const struct tp_format *exit, const char *why)
{
	struct tp_format enter;
	char name[TP_NAME_MAX];
	int err;

	if (!strcmp(exit->system, "raw_syscalls") && !strcmp(exit->name, "sys_exit"))
		snprintf(name, sizeof(name), "sys_enter"); /* syscall:*:exit */
	else if (!strcmp(exit->system, "syscalls") && !strncmp(exit->name, "sys_exit_", 9))
		snprintf(name, sizeof(name), "sys_enter_%s", exit->name + 9);
	else
		return 0;
	memset(&enter, 0, sizeof(enter));
	err = tracefs__load_format(exit->system, name, &enter);
	if (err) {
		pr_err("%s at %s:%s needs %s:%s: %s\n", why, exit->system, exit->name, exit->system, name,
		       strerror(-err));
		return err;
	}
	err = gate__add_tp(g, &enter, 0, 0, GATE_TP_STAMP_ENTRY);
	tp_format__exit(&enter);
	return err;
}

static int triggers_full(const struct gate *g)
{
	if (g->nr_triggers < GATE_MAX_TRIGGERS)
		return 0;
	pr_err("too many --on triggers: at most %d\n", GATE_MAX_TRIGGERS);
	return -E2BIG;
}

/* The trigger's rodata and condition; the caller sets its bit in its point's trig_mask. */
static int trigger_add(struct gate *g, const struct gate_trigger *t, const struct expr_prog *cond)
{
	int i = g->nr_triggers;

	if (cond) {
		g->trig_cond[i] = malloc(sizeof(*cond));
		if (!g->trig_cond[i])
			return -ENOMEM;
		memcpy(g->trig_cond[i], cond, sizeof(*cond));
	}
	g->skel->rodata->gate_triggers[i] = *t;
	g->skel->rodata->gate_triggers[i].has_cond = cond != NULL;
	if (t->mark_str)
		g->skel->rodata->mark_strs = 1; /* every mark record then has the str field */
	if (t->action == GATE_ACT_SNAPSHOT)
		g->skel->rodata->have_snap_triggers = 1; /* threads whose records a freeze held back are noted */
	g->nr_triggers++;
	return i;
}

int gate__add_trigger(struct gate *g, const struct tp_format *fmt, const struct gate_trigger *t,
		      const struct expr_prog *cond)
{
	int i, err;

	err = triggers_full(g);
	if (!err)
		err = gate__add_tp(g, fmt, 0, 0, 0);
	if (!err && cond && (cond->flags & EXPR_PROG_ELAPSED)) {
		g->skel->rodata->need_elapsed = 1;
		err = gate_stamp_syscall(g, fmt, "$elapsed");
	}
	if (!err && cond && (cond->flags & EXPR_PROG_DURATION)) {
		g->skel->rodata->need_duration = 1; /* since the thread entered this syscall */
		err = gate_stamp_syscall(g, fmt, "$duration");
	}
	if (!err && t->entry_args && !strncmp(fmt->name, "sys_exit", 8)) {
		g->skel->rodata->entry_args = 1; /* entry.argN, a mark's argN at an exit: the entry's */
		/* not the exit's own program, whose compiled conditions see no arguments at an exit */
		err = gate__add_tp(g, fmt, 0, 0, GATE_TP_ENTRY_ARGS);
		if (!err)
			err = gate_stamp_syscall(g, fmt, "entry.argN");
	}
	if (err)
		return err;
	i = trigger_add(g, t, cond);
	if (i < 0)
		return i;
	for (size_t k = 0; k < g->nr_tps; k++)
		if (g->tps[k].id == fmt->id)
			g->tps[k].tp.trig_mask |= 1u << i;
	return i;
}

struct bpf_program *gate__point_prog(const struct gate *g, enum point_kind kind)
{
	switch (kind) {
	case POINT_UPROBE:
		return g->skel->progs.gate_point_uprobe;
	case POINT_URETPROBE:
		return g->skel->progs.gate_point_uretprobe;
	case POINT_USDT:
		return g->skel->progs.gate_point_usdt;
	case POINT_KPROBE:
		return g->skel->progs.gate_point_kprobe;
	case POINT_KRETPROBE:
		return g->skel->progs.gate_point_kretprobe;
	case POINT_MEM:
		return g->skel->progs.gate_point_mem;
	case POINT_TP:
		break;
	}
	return NULL;
}

/*
 * ret at a return probe: typed by the function's return type where BTF or
 * DWARF tells it (func_type), as the cast EXPR_OP_CAST applies; 0 where the
 * whole register is the value (64-bit types, pointers) or nothing tells.
 * @t is filled, @err set to what the lookup returned.
 */
static __u8 ret_cast(const struct point *p, struct func_type *t, int *err)
{
	char where[4400];

	memset(t, 0, sizeof(*t));
	if (p->kind == POINT_URETPROBE)
		*err = func_type__from_elf(p->path, p->symbol, NULL, t);
	else if (p->kind == POINT_KRETPROBE)
		*err = func_type__from_kernel(p->symbol, t);
	else
		return *err = -EINVAL, 0;
	point__format(p, where, sizeof(where));
	if (*err) {
		pr_debug("%s: %s: ret is the whole return register\n", where,
			 *err == -ENODATA ? "no BTF or DWARF in the file" :
			 *err == -ENOTUNIQ ? "functions of that name return different types" :
			 *err == -ENOENT ? "its debug information does not describe the function" : strerror(-*err));
		return 0;
	}
	pr_debug("%s: ret is %s (%u bytes, %s, from %s)\n", where, t->name, t->size,
		 t->is_signed ? "signed" : "unsigned", t->source);
	if (!t->is_int || !t->size || t->size >= 8)
		return 0;
	return t->size | (t->is_signed ? EXPR_REC_SIGNED : 0);
}

int gate__add_point(struct gate *g, const struct point *p, __u64 open_mask, __u64 close_mask)
{
	struct gate_point *e = NULL, *tmp;
	struct bpf_program *prog = gate__point_prog(g, p->kind);

	if (!prog)
		return -EINVAL;
	for (size_t i = 0; i < g->nr_points; i++)
		if (!memcmp(&g->points[i].pt, p, sizeof(*p)))
			e = &g->points[i];
	if (!e) {
		if (g->nr_points == GATE_MAX_POINTS) {
			pr_err("too many probe points: at most %d\n", GATE_MAX_POINTS);
			return -E2BIG;
		}
		tmp = realloc(g->points, (g->nr_points + 1) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		g->points = tmp;
		e = &g->points[g->nr_points++];
		memset(e, 0, sizeof(*e));
		e->pt = *p;
		if (p->kind == POINT_URETPROBE || p->kind == POINT_KRETPROBE) {
			e->ret_cast = ret_cast(p, &e->ret_type, &e->ret_err);
			e->tp.flags |= (__u32)e->ret_cast << GATE_TP_RET_SHIFT;
		}
		/* Only the programs of the kinds in use are loaded. */
		bpf_program__set_autoload(prog, true);
		/* the actions of a trigger-only point's own program (gate_front__build()) */
		if (p->kind == POINT_UPROBE || p->kind == POINT_KPROBE)
			bpf_program__set_autoload(g->skel->progs.gate_fire_entry, true);
		if (p->kind == POINT_URETPROBE || p->kind == POINT_KRETPROBE)
			bpf_program__set_autoload(g->skel->progs.gate_fire_return, true);
		/* the rest of a hit whose conditions its own program decided (GATE_PROBE_USDT) */
		if (p->kind == POINT_USDT)
			bpf_program__set_autoload(g->skel->progs.gate_point_usdt_decided, true);
	}
	e->tp.open_mask |= open_mask;
	e->tp.close_mask |= close_mask;
	return e - g->points;
}

/*
 * A trigger that reads ret at a return probe whose type nothing tells (a
 * condition on ret that is not cast, or a mark, which prints it): say that
 * a function returning int returns -2 as 4294967294 there, and what to write.
 */
static void ret_note(struct gate_point *e, const struct gate_trigger *t, const struct expr_prog *cond)
{
	char where[4400];
	bool raw = t->action == GATE_ACT_MARK;

	if ((e->pt.kind != POINT_URETPROBE && e->pt.kind != POINT_KRETPROBE) || !e->ret_err || e->ret_noted)
		return;
	for (__u32 i = 0; cond && i < cond->nr_insns && i < EXPR_MAX_INSNS; i++)
		raw |= cond->insns[i].op == EXPR_OP_FIELD && cond->insns[i].a == EXPR_F_RET &&
		       (i + 1 >= cond->nr_insns || cond->insns[i + 1].op != EXPR_OP_CAST);
	if (!raw)
		return;
	e->ret_noted = true;
	point__format(&e->pt, where, sizeof(where));
	pr_info("%s: %s, so ret is the whole return register: a function returning int returns -2 as 4294967294 "
		"there (in a condition, write (int)ret)\n", where,
		e->ret_err == -ENODATA ? "the file has no BTF or DWARF" :
		e->ret_err == -ENOTUNIQ ? "functions of that name return different types" :
		"no BTF or DWARF describes the function");
}

int gate__add_point_trigger(struct gate *g, const struct point *p, const struct gate_trigger *t,
			    const struct expr_prog *cond)
{
	int n, i;

	i = triggers_full(g);
	if (i)
		return i;
	n = gate__add_point(g, p, 0, 0);
	if (n < 0)
		return n;
	ret_note(&g->points[n], t, cond);
	if (cond && (cond->flags & EXPR_PROG_ELAPSED))
		g->skel->rodata->need_elapsed = 1; /* since the thread's window opened */
	/* entry.argN, $duration at a uretprobe or kretprobe: each call's entry, pushed by gate_call_enter */
	if ((p->kind == POINT_URETPROBE || p->kind == POINT_KRETPROBE) &&
	    (t->entry_args || (cond && (cond->flags & EXPR_PROG_DURATION)))) {
		g->points[n].tp.flags |= GATE_TP_CALL_ENTRY;
		g->skel->rodata->call_frames = 1;
		bpf_program__set_autoload(g->skel->progs.gate_call_enter, true);
	}
	i = trigger_add(g, t, cond);
	if (i >= 0)
		g->points[n].tp.trig_mask |= 1u << i;
	return i;
}

int gate__add_uprobe_window(struct gate *g, int w, const char *path, const char *symbol,
			    unsigned long offset)
{
	struct gate_uprobe *tmp = realloc(g->uprobes, (g->nr_uprobes + 1) * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	g->uprobes = tmp;
	tmp = &g->uprobes[g->nr_uprobes];
	tmp->window = w;
	tmp->offset = offset;
	tmp->path = strdup(path);
	tmp->symbol = strdup(symbol);
	if (!tmp->path || !tmp->symbol)
		return -ENOMEM;
	g->nr_uprobes++;
	/* its auxtrig:uprobe_exit records carry the return value typed as the function returns it */
	if (!offset && w >= 0 && w < GATE_MAX_WINDOWS) {
		struct point rp = { .kind = POINT_URETPROBE };
		struct func_type ft;
		int err;

		snprintf(rp.path, sizeof(rp.path), "%s", path);
		snprintf(rp.symbol, sizeof(rp.symbol), "%s", symbol);
		g->skel->rodata->uprobe_window_ret[w] = ret_cast(&rp, &ft, &err);
	}
	return 0;
}

void gate__set_own_types(struct gate *g, unsigned int enter, unsigned int exit)
{
	g->skel->rodata->uprobe_enter_type = enter;
	g->skel->rodata->uprobe_exit_type = exit;
}

void gate__signal_edges(struct gate *g)
{
	g->skel->rodata->signal_edges = 1;
	g->config.edges = 1; /* for trigger programs' windows (trigger.bpf.h), written at arm time */
}

void gate__signal_threads(struct gate *g)
{
	g->skel->rodata->signal_threads = 1;
}

__u64 gate__thread_msgs_dropped(const struct gate *g)
{
	return g->skel->bss->thread_msgs_dropped;
}

void gate__aux_veto(struct gate *g)
{
	g->skel->rodata->aux_veto = 1;
	bpf_program__set_autoload(g->skel->progs.gate_aux_veto_enter, true);
	bpf_program__set_autoload(g->skel->progs.gate_aux_veto_exit, true);
}

int gate__aux_veto_fd(const struct gate *g, bool retprobe)
{
	const struct bpf_program *p = retprobe ? g->skel->progs.gate_aux_veto_exit : g->skel->progs.gate_aux_veto_enter;

	return bpf_program__autoload(p) ? bpf_program__fd(p) : -ENOENT;
}

void gate__aux_veto_stats(const struct gate *g, __u64 *resumed, __u64 *vetoed, __u64 *paused, __u64 *untracked)
{
	*resumed = g->skel->bss->aux_veto_stats[0];
	*vetoed = g->skel->bss->aux_veto_stats[1];
	*paused = g->skel->bss->aux_veto_stats[2];
	*untracked = g->skel->bss->aux_veto_stats[3];
}

/* What trigger programs' auxtrig_resume()/auxtrig_pause() counted (zeros if unreadable). */
static struct gate_prog_stats prog_stats(const struct gate *g)
{
	struct gate_prog_stats ps = {};
	__u32 zero = 0;

	bpf_map__lookup_elem(g->skel->maps.gate_prog_stats, &zero, sizeof(zero), &ps, sizeof(ps), 0);
	return ps;
}

void gate__edge_stats(const struct gate *g, struct gate_edge_stats *out)
{
	struct gate_prog_stats ps = prog_stats(g);

	*out = g->skel->bss->edge_stats;
	out->sent += ps.edges_sent;
	out->dropped += ps.edges_dropped;
}

void gate__set_edge_types(struct gate *g, unsigned int resume, unsigned int pause)
{
	g->skel->rodata->resume_type = resume;
	g->skel->rodata->pause_type = pause;
}

void gate__time_windows(struct gate *g, __u64 min_ns, __u64 max_ns)
{
	g->skel->rodata->hold_windows = 1;
	g->skel->rodata->min_duration_ns = min_ns;
	g->skel->rodata->max_duration_ns = max_ns;
}

void gate__set_stop_type(struct gate *g, unsigned int type)
{
	g->config.stop_type = type; /* written with the configuration at arm time */
}

__u64 gate__stopped(const struct gate *g, __u32 *trigger, bool *marked)
{
	struct gate_stop st = {};
	__u32 zero = 0;

	if (bpf_map__lookup_elem(g->skel->maps.gate_stop, &zero, sizeof(zero), &st, sizeof(st), 0))
		return 0;
	if (trigger)
		*trigger = st.trigger;
	if (marked)
		*marked = st.marked;
	return st.at;
}

void gate__set_mark_type(struct gate *g, unsigned int type)
{
	g->config.mark_type = type; /* written with the configuration at arm time */
}

int gate__map_fd(const struct gate *g, const char *name)
{
	const struct bpf_map *m = bpf_object__find_map_by_name(g->skel->obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

int gate__ctl_open(struct gate *g, int (*cb)(void *ctx, void *data, size_t size), void *ctx)
{
	g->ctl = ring_buffer__new(bpf_map__fd(g->skel->maps.gate_ctl), cb, ctx, NULL);
	return g->ctl ? 0 : -errno;
}

int gate__ctl_fd(const struct gate *g)
{
	return g->ctl ? ring_buffer__epoll_fd(g->ctl) : -1;
}

int gate__ctl_consume(struct gate *g)
{
	int n = g->ctl ? ring_buffer__consume(g->ctl) : 0;

	return n < 0 ? n : 0;
}

void gate__unfreeze(struct gate *g)
{
	struct gate_runtime none = {};
	__u32 zero = 0;

	/* The one write of ours to what BPF owns: the snapshot it asked for is taken. */
	if (bpf_map__update_elem(g->skel->maps.gate_runtime, &zero, sizeof(zero), &none, sizeof(none), BPF_ANY))
		pr_warn("cannot let the gate record again after the snapshot: %s\n", strerror(errno));
}

/* The .bss the gate mapped: a full barrier each, as BPF reads them around its record and its freeze. */
void gate__snapshot_begin(struct gate *g)
{
	if (g)
		__atomic_add_fetch(&g->skel->bss->snaps_begun, 1, __ATOMIC_SEQ_CST);
}

void gate__snapshot_end(struct gate *g)
{
	if (g)
		__atomic_add_fetch(&g->skel->bss->snaps_done, 1, __ATOMIC_SEQ_CST);
}

void gate__hold_cut(struct gate *g, const void *rec, size_t size, __u32 tid)
{
	__u16 type;
	__s32 nr;

	if (!g || !g->skel->rodata->have_snap_triggers || size < 8 + sizeof(nr))
		return;
	memcpy(&type, rec, sizeof(type));
	for (size_t i = 0; i < g->nr_tps; i++) {
		if (g->tps[i].id != type)
			continue;
		/*
		 * An entry only: the thread's next recorded entry clears the note
		 * (emit()), so it cannot outlive the call. A cut exit is its own
		 * trigger's hit, which snaps_begun tells (trigger_fire()).
		 */
		if (!(g->tps[i].tp.flags & GATE_TP_SYSCALL_ENTER))
			return;
		/* the syscall's number, as emit() reads it: after the 8 common bytes */
		memcpy(&nr, (const char *)rec + 8, sizeof(nr));
		if (bpf_map__update_elem(g->skel->maps.gate_held, &tid, sizeof(tid), &nr, sizeof(nr), BPF_ANY))
			pr_debug("cannot note thread %u's cut call: %s\n", tid, strerror(errno));
		return;
	}
}

/* One loss counter of struct expr_slot_state (@uvar: uvar_lost, else count_lost), summed over the slots. */
static __u64 slots_lost(const struct gate *g, bool uvar)
{
	struct expr_slot_state ss;
	__u64 sum = 0;

	for (__u32 slot = 0; slot < EXPR_MAX_SLOTS; slot++)
		if (!bpf_map__lookup_elem(g->skel->maps.expr_state, &slot, sizeof(slot), &ss, sizeof(ss), 0))
			sum += uvar ? ss.uvar_lost : ss.count_lost;
	return sum;
}

__u64 gate__expr_lost(const struct gate *g)
{
	return slots_lost(g, false);
}

__u64 gate__uvar_lost(const struct gate *g)
{
	return slots_lost(g, true);
}

int gate__set_trigger_sets(struct gate *g, const struct expr_prog *sets)
{
	int i = g->nr_triggers - 1;

	if (i < 0 || g->trig_sets[i])
		return -EINVAL;
	g->trig_sets[i] = malloc(sizeof(*sets));
	if (!g->trig_sets[i])
		return -ENOMEM;
	memcpy(g->trig_sets[i], sets, sizeof(*sets));
	g->skel->rodata->have_set_actions = 1;
	for (size_t k = 0; k < g->nr_tps; k++)
		if (g->tps[k].tp.trig_mask & (1u << i))
			g->tps[k].tp.flags |= GATE_TP_SETS;
	for (size_t k = 0; k < g->nr_points; k++)
		if (g->points[k].tp.trig_mask & (1u << i))
			g->points[k].tp.flags |= GATE_TP_SETS;
	return 0;
}

void gate__trigger_stats(const struct gate *g, int i, struct gate_trigger_stats *out)
{
	int nr = libbpf_num_possible_cpus();
	struct gate_trig_pcpu *pc;
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	pc = nr > 0 ? calloc(nr, sizeof(*pc)) : NULL;
	if (!pc || i < 0 || i >= GATE_MAX_TRIGGERS ||
	    bpf_map__lookup_elem(g->skel->maps.gate_trig_pcpu, &zero, sizeof(zero), pc, nr * sizeof(*pc), 0)) {
		free(pc);
		return;
	}
	for (int cpu = 0; cpu < nr; cpu++) {
		out->evaluated += pc[cpu].stats[i].evaluated;
		out->matched += pc[cpu].stats[i].matched;
		out->fired += pc[cpu].stats[i].fired;
		out->suppressed += pc[cpu].stats[i].suppressed;
		out->dropped += pc[cpu].stats[i].dropped;
	}
	free(pc);
}

void gate__record_only_cpus(struct gate *g)
{
	g->skel->rodata->filter_cpus = 1;
}

static void config_update(struct gate *g)
{
	__u32 zero = 0;

	if (bpf_map__update_elem(g->skel->maps.gate_config, &zero, sizeof(zero), &g->config, sizeof(g->config),
				 BPF_ANY))
		pr_warn("cannot update the gate's configuration: %s\n", strerror(errno));
}

void gate__record_always(struct gate *g)
{
	g->skel->rodata->no_windows = 1;
}

int gate__set_where(struct gate *g, const struct expr_prog *prog)
{
	free(g->where);
	g->where = malloc(sizeof(*prog));
	if (!g->where)
		return -ENOMEM;
	memcpy(g->where, prog, sizeof(*prog));
	g->skel->rodata->have_where = 1;
	if (prog->flags & EXPR_PROG_ELAPSED)
		g->skel->rodata->need_elapsed = 1;
	return 0;
}

int gate__add_plan(struct gate *g, const struct record_plan *p, const struct window_map *m)
{
	if (!record_plan__has_windows(p))
		gate__record_always(g);
	g->user_progs = p->nr_trigger_progs > 0;
	if (p->user_window)
		gate__set_edge_types(g, p->resume_type, p->pause_type);
	if (p->min_duration || p->max_duration)
		gate__time_windows(g, p->min_duration ? p->min_duration_ns : 0, p->max_duration ? p->max_duration_ns : 0);
	if (p->cpus_given)
		gate__record_only_cpus(g);
	g->raw_strs = &p->events.raw_strs;
	for (size_t i = 0; i < p->events.nr; i++) {
		const struct rec_event *e = &p->events.ev[i];
		const struct window_map_tp *t = &m->tp[i];

		if (e->own_format)
			continue; /* emitted by the gate's own programs, not attached */
		if (gate__add_tp(g, &e->fmt, t->open_mask, t->close_mask, e->flags | t->flags))
			return -EINVAL;
	}
	for (size_t i = 0; i < m->nr_calls; i++) {
		const struct point *fn = m->calls[i].fn;

		if (gate__add_uprobe_window(g, m->calls[i].window, fn->path, fn->symbol, fn->offset))
			return -EINVAL;
	}
	for (size_t i = 0; i < m->nr_points; i++)
		if (gate__add_point(g, m->points[i].pt, m->points[i].open_mask, m->points[i].close_mask) < 0)
			return -EINVAL;
	if (p->uprobe_enter_type)
		gate__set_own_types(g, p->uprobe_enter_type, p->uprobe_exit_type);
	if (p->mark_type)
		gate__set_mark_type(g, p->mark_type);
	if (p->stop_type)
		gate__set_stop_type(g, p->stop_type);
	if (p->where && gate__set_where(g, p->where))
		return -EINVAL;
	for (size_t i = 0; i < p->nr_triggers; i++) {
		const struct plan_trigger *on = &p->triggers[i];

		if ((point__is_probe(&on->pt) ? gate__add_point_trigger(g, &on->pt, &on->t, on->cond)
					      : gate__add_trigger(g, &on->fmt, &on->t, on->cond)) < 0)
			return -EINVAL;
		if (on->sets && gate__set_trigger_sets(g, on->sets))
			return -EINVAL;
	}
	return 0;
}

struct gate *gate__open_plan(const struct record_plan *p, const struct window_map *m)
{
	struct gate_opts opts = {
		.nr_cpus = p->nr_possible,
		.all_processes = p->all,
		.threads = p->threads,
	};
	struct gate *g = gate__open(&opts);
	int err;

	if (!g)
		return NULL;
	err = gate__add_plan(g, p, m);
	if (err) {
		gate__close(g);
		errno = -err;
		return NULL;
	}
	return g;
}

int gate__set_output(struct gate *g, int cpu, int perf_fd)
{
	__u32 key = cpu;

	return bpf_map__update_elem(g->skel->maps.gate_events, &key, sizeof(key), &perf_fd,
				    sizeof(perf_fd), BPF_ANY);
}

int gate__add_target(struct gate *g, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (g->nr_pids < GATE_FRONT_MAX_PIDS)
		g->pids[g->nr_pids++] = pid;

	return bpf_map__update_elem(g->skel->maps.gate_targets, &key, sizeof(key), &one, sizeof(one),
				    BPF_ANY);
}

int gate__add_exec_target(struct gate *g, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	return bpf_map__update_elem(g->skel->maps.gate_exec_targets, &key, sizeof(key), &one, sizeof(one),
				    BPF_ANY);
}

int gate__record_cpu(struct gate *g, int cpu)
{
	__u32 key = cpu;
	__u8 one = 1;

	return bpf_map__update_elem(g->skel->maps.gate_cpus, &key, sizeof(key), &one, sizeof(one),
				    BPF_ANY);
}

void gate__arm(struct gate *g)
{
	g->config.armed = 1;
	config_update(g);
}

void gate__disarm(struct gate *g)
{
	g->config.armed = 0;
	config_update(g);
}

void gate__stats(const struct gate *g, struct gate_stats *sum)
{
	const struct gate_stats *s = g->skel->bss->stats;
	struct gate_prog_stats ps;

	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < GATE_STATS_SLOTS; i++) {
		sum->windows_opened += s[i].windows_opened;
		sum->windows_closed += s[i].windows_closed;
		sum->windows_filtered += s[i].windows_filtered;
		sum->recorded += s[i].recorded;
		sum->output_lost += s[i].output_lost;
		sum->too_big += s[i].too_big;
		sum->threads_full += s[i].threads_full;
		sum->unknown_tp += s[i].unknown_tp;
		sum->frozen += s[i].frozen;
		sum->stopped += s[i].stopped;
		sum->vetoed_untracked += s[i].vetoed_untracked;
	}
	ps = prog_stats(g);
	sum->windows_opened += ps.windows_opened;
	sum->windows_closed += ps.windows_closed;
}

void gate__set_progress(struct gate *g, struct progress *p)
{
	g->progress = p;
}

void gate__close(struct gate *g)
{
	if (!g)
		return;
	gate__detach_all(g);
	free(g->links);
	free(g->fds);
	ring_buffer__free(g->ctl);
	gate_bpf__destroy(g->skel);
	for (int i = 0; i < GATE_MAX_TRIGGERS; i++) {
		free(g->trig_cond[i]);
		free(g->trig_sets[i]);
	}
	for (size_t i = 0; i < g->nr_uprobes; i++) {
		free(g->uprobes[i].path);
		free(g->uprobes[i].symbol);
	}
	free(g->uprobes);
	free(g->points);
	free(g->where);
	free(g->tps);
	free(g);
}
