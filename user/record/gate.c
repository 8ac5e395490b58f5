// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/expr_abi.h"
#include "auxtrig/record/event_list.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/lang/point_catalog.h"
#include "auxtrig/record/gate_front.h"
#include "auxtrig/record/plan.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/elf_image.h"
#include "auxtrig/sys/func_type.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/progress.h"
#include "skel/gate.skel.h"

struct gate_tp_entry {
	__u32 id;
	char system[TP_NAME_MAX];
	char name[TP_NAME_MAX];
	struct gate_tp tp;
};

struct gate {
	struct progress *progress;	/* a terminal's status line, or NULL */
	struct gate_bpf *skel;
	struct gate_tp_entry *tps;
	size_t nr_tps;
	struct bpf_link **links;
	size_t nr_links;
	struct expr_prog *where;
	struct expr_prog *trig_cond[GATE_MAX_TRIGGERS];
	int nr_triggers;
	struct ring_buffer *ctl;
	struct gate_config config;	/* ours to write: the BPF side never does */
	struct gate_uprobe {
		int window;
		char *path, *symbol;
		unsigned long offset;
	} *uprobes;
	size_t nr_uprobes;
	struct gate_point {
		struct point pt;
		struct gate_tp tp;
		struct func_type ret_type; /* return probes: the function's return type */
		int ret_err;		   /* ... or why it is not known */
		__u8 ret_cast;		   /* what types ret (EXPR_OP_CAST's operand), 0 none */
		bool ret_noted;		   /* the user was told ret is untyped here */
	} *points;		/* probe points: key GATE_POINT_BASE + index */
	size_t nr_points;
	int nr_cpus;
	__u32 pids[GATE_FRONT_MAX_PIDS];	/* the first targets: constants in the points' own programs */
	int nr_pids;
	const struct perf_sys *sys;	/* perf events of breakpoints and own programs (NULL: the kernel) */
	int *fds;			/* the points' own programs, perf events and links, closed last to first */
	size_t nr_fds;
	int cpu_state;			/* one of them remembers the running thread: gate_sched_switch */
	struct gate_front_task task;	/* task_struct offsets, once one of them needs them */
	int have_task;
	int probe_open_err;		/* why a point's own probe did not open (attach_probe_front()) */
	bool user_progs;		/* --trigger-prog: its programs open windows of their own (gate_threads) */
};

static void config_update(struct gate *g);

/* An LRU map no program of this run writes: the smallest a common LRU takes on any machine. */
#define SMALL_LRU 1024

struct gate *gate__open(const struct gate_opts *opts)
{
	struct gate *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return NULL;
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
		for (size_t i = 0; i < fmt->nr_fields; i++) {
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

static struct bpf_program *point_prog(const struct gate *g, enum point_kind kind)
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
	struct bpf_program *prog = point_prog(g, p->kind);

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

__u64 gate__expr_lost(const struct gate *g)
{
	struct expr_slot_state ss;
	__u64 sum = 0;

	for (__u32 slot = 0; slot < EXPR_MAX_SLOTS; slot++)
		if (!bpf_map__lookup_elem(g->skel->maps.expr_state, &slot, sizeof(slot), &ss, sizeof(ss), 0))
			sum += ss.count_lost;
	return sum;
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

/* Does the tracepoint only run triggers (its own program may run them, gate_front.h)? */
static bool tp_front_eligible(const struct gate_tp *tp)
{
	/* entry.argN at an exit: the program reads the entry (gate_front_spec.entry_args), gate_fire the marks' */
	const __u32 mine = GATE_TP_USER_REGS | GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT | GATE_TP_ENTRY_ARGS;

	return tp->trig_mask && !tp->open_mask && !tp->close_mask && !(tp->flags & ~mine);
}

/*
 * Is the tracepoint recorded at every hit by a target (no windows), with no
 * triggers and no strings after its fixed fields (__data_loc fields, a
 * syscall entry's user string)? Its own program records it
 * (gate_front__build_record()).
 */
static bool tp_record_eligible(const struct gate *g, const struct gate_tp *tp)
{
	const __u32 mine = GATE_TP_RECORD | GATE_TP_USER_REGS | GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT;

	return !tp->trig_mask && g->skel->rodata->no_windows && !tp->nr_dyn && !tp->str_off[0] &&
	       (tp->flags & GATE_TP_RECORD) && !(tp->flags & ~mine);
}

static bool tps_all_own(struct gate *g);

/* Does a tracepoint belong to a syscall:* window (gate_any_memo)? */
static bool any_syscall_window(const struct gate *g)
{
	for (size_t i = 0; i < g->nr_tps; i++)
		if (g->tps[i].tp.flags & GATE_TP_SYSCALL_ANY)
			return true;
	return false;
}
static bool probe_trig_only(struct gate *g, const struct gate_point *pt);

/*
 * Start-up: only the shared programs this run uses are verified. gate_fire
 * runs the actions of tracepoints' own programs; a probe kind's shared
 * program is needed unless each of its points only runs triggers, in a
 * program of its own.
 */
static void shared_autoload(struct gate *g)
{
	static const enum point_kind kinds[] = { POINT_UPROBE, POINT_URETPROBE, POINT_KPROBE, POINT_KRETPROBE };
	bool tp_triggers = false;

	for (size_t i = 0; i < g->nr_tps; i++)
		tp_triggers |= !!g->tps[i].tp.trig_mask;
	bpf_program__set_autoload(g->skel->progs.gate_fire, tp_triggers);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bool used = false, shared = false;

		for (size_t i = 0; i < g->nr_points; i++)
			if (g->points[i].pt.kind == kinds[k]) {
				used = true;
				shared |= !probe_trig_only(g, &g->points[i]);
			}
		if (used)
			bpf_program__set_autoload(point_prog(g, kinds[k]), shared);
	}
	/* after gate_sched_switch's: the points' programs are built as they will be */
	bpf_program__set_autoload(g->skel->progs.gate_tracepoint, !tps_all_own(g));
}

int gate__load(struct gate *g)
{
	int err, uses_count = g->where && (g->where->flags & EXPR_PROG_COUNT), stamps = 0;

	/* Only the builtins some condition reads are fetched at each hit. */
	g->skel->rodata->env_fields = g->where ? expr__builtins_used(g->where) : 0;
	for (int i = 0; i < g->nr_triggers; i++)
		if (g->trig_cond[i]) {
			g->skel->rodata->env_fields |= expr__builtins_used(g->trig_cond[i]);
			uses_count |= !!(g->trig_cond[i]->flags & EXPR_PROG_COUNT);
		}
	for (size_t i = 0; i < g->nr_tps; i++)
		stamps |= !!(g->tps[i].tp.flags & GATE_TP_STAMP_ENTRY);
	/*
	 * Start-up: what this run does not use is neither verified nor
	 * allocated (a preallocated LRU map of 65536 entries costs milliseconds):
	 * the uprobe windows' programs, $count's counters, the syscall entry
	 * stamps of $elapsed.
	 */
	/* a syscall point with a program of its own may remember the running thread (gate_front.h) */
	for (size_t i = 0; i < g->nr_tps; i++)
		if ((g->tps[i].tp.flags & (GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT)) &&
		    (tp_front_eligible(&g->tps[i].tp) || tp_record_eligible(g, &g->tps[i].tp)))
			bpf_program__set_autoload(g->skel->progs.gate_sched_switch, true);
	bpf_program__set_autoload(g->skel->progs.gate_uprobe_enter, g->nr_uprobes > 0);
	bpf_program__set_autoload(g->skel->progs.gate_uprobe_exit, g->nr_uprobes > 0);
	shared_autoload(g);
	if (!uses_count)
		bpf_map__set_max_entries(g->skel->maps.expr_counts, SMALL_LRU);
	if (!stamps)
		bpf_map__set_max_entries(g->skel->maps.gate_sys_entries, SMALL_LRU);
	if (!g->skel->rodata->call_frames)
		bpf_map__set_max_entries(g->skel->maps.gate_calls, SMALL_LRU);
	/* no window opens, so no thread state is made: 65536 preallocated entries took milliseconds */
	if (g->skel->rodata->no_windows && !g->user_progs)
		bpf_map__set_max_entries(g->skel->maps.gate_threads, 1);
	/* not preallocated, but their buckets are: only syscall:* windows and snapshot triggers fill them */
	if (!any_syscall_window(g))
		bpf_map__set_max_entries(g->skel->maps.gate_any_memo, 1);
	if (!g->skel->rodata->have_snap_triggers)
		bpf_map__set_max_entries(g->skel->maps.gate_held, 1);
	err = gate_bpf__load(g->skel);
	if (err) {
		char names[256] = "";
		struct bpf_program *prog;

		/* One of the programs loaded for this run: name them all. */
		bpf_object__for_each_program(prog, g->skel->obj) {
			size_t n = strlen(names);

			if (bpf_program__autoload(prog))
				snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "", bpf_program__name(prog));
		}
		pr_err("the kernel refused the gate BPF programs (%s): %s (run with -vv for the verifier log)\n",
		       names, strerror(-err));
		return err;
	}
	if (g->where) {
		__u32 zero = 0;

		err = bpf_map__update_elem(g->skel->maps.gate_where, &zero, sizeof(zero), g->where,
					   sizeof(*g->where), BPF_ANY);
		if (err) {
			pr_err("cannot load the --where condition into the gate: %s\n", strerror(-err));
			return err;
		}
	}
	for (int i = 0; i < g->nr_triggers; i++) {
		__u32 key = i;

		if (!g->trig_cond[i])
			continue;
		err = bpf_map__update_elem(g->skel->maps.gate_trig_progs, &key, sizeof(key), g->trig_cond[i],
					   sizeof(*g->trig_cond[i]), BPF_ANY);
		if (err) {
			pr_err("cannot load the condition of trigger %d into the gate: %s\n", i + 1,
			       strerror(-err));
			return err;
		}
	}
	if (bpf_program__autoload(g->skel->progs.gate_fire)) {
		__u32 zero = 0;
		int fd = bpf_program__fd(g->skel->progs.gate_fire);

		err = bpf_map__update_elem(g->skel->maps.gate_fire_prog, &zero, sizeof(zero), &fd, sizeof(fd), BPF_ANY);
		if (err) {
			pr_err("cannot hand gate_fire to the points' programs: %s\n", strerror(-err));
			return err;
		}
	}
	{
		/* the shared probe programs, for the probe points' own programs (gate_front__build_probe()) */
		struct bpf_program *shared[GATE_PROBE_PROGS] = {
			[GATE_PROBE_UPROBE] = g->skel->progs.gate_point_uprobe,
			[GATE_PROBE_URETPROBE] = g->skel->progs.gate_point_uretprobe,
			[GATE_PROBE_KPROBE] = g->skel->progs.gate_point_kprobe,
			[GATE_PROBE_KRETPROBE] = g->skel->progs.gate_point_kretprobe,
			[GATE_PROBE_WINDOW] = g->skel->progs.gate_uprobe_enter,
			[GATE_PROBE_FIRE_ENTRY] = g->skel->progs.gate_fire_entry,
			[GATE_PROBE_FIRE_RETURN] = g->skel->progs.gate_fire_return,
			[GATE_PROBE_USDT] = g->skel->progs.gate_point_usdt_decided,
		};

		for (__u32 k = 0; k < GATE_PROBE_PROGS; k++) {
			int fd = bpf_program__autoload(shared[k]) ? bpf_program__fd(shared[k]) : -1;

			if (fd < 0)
				continue;
			err = bpf_map__update_elem(g->skel->maps.gate_probe_progs, &k, sizeof(k), &fd, sizeof(fd),
						   BPF_ANY);
			if (err) {
				pr_err("cannot hand %s to the probe points' programs: %s\n", bpf_program__name(shared[k]),
				       strerror(-err));
				return err;
			}
		}
	}
	for (size_t i = 0; i < g->nr_points; i++) {
		__u32 key = GATE_POINT_BASE + i;

		err = bpf_map__update_elem(g->skel->maps.gate_tps, &key, sizeof(key), &g->points[i].tp,
					   sizeof(g->points[i].tp), BPF_ANY);
		if (err) {
			pr_err("cannot configure the %s point in the gate: %s\n",
			       point__kind_name(g->points[i].pt.kind), strerror(-err));
			return err;
		}
	}
	for (size_t i = 0; i < g->nr_tps; i++) {
		err = bpf_map__update_elem(g->skel->maps.gate_tps, &g->tps[i].id, sizeof(__u32),
					   &g->tps[i].tp, sizeof(g->tps[i].tp), BPF_ANY);
		if (err) {
			pr_err("cannot configure %s:%s in the gate: %s\n", g->tps[i].system,
			       g->tps[i].name, strerror(-err));
			return err;
		}
	}
	return 0;
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

static int add_link(struct gate *g, struct bpf_link *link)
{
	struct bpf_link **tmp;

	tmp = realloc(g->links, (g->nr_links + 1) * sizeof(*tmp));
	if (!tmp) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	g->links = tmp;
	g->links[g->nr_links++] = link;
	return 0;
}

static int keep_fd(struct gate *g, int fd)
{
	int *tmp = realloc(g->fds, (g->nr_fds + 1) * sizeof(*tmp));

	if (!tmp) {
		perf_sys__close(g->sys, fd);
		return -ENOMEM;
	}
	g->fds = tmp;
	g->fds[g->nr_fds++] = fd;
	return 0;
}

/* mem:PATH:SYMBOL: the symbol's address in a position-dependent executable. */
static int elf_symbol_address(const char *path, const char *name, unsigned long *addr)
{
	struct elf_image *img = elf_image__open(path);
	__u64 v;
	int err;

	if (!img)
		return -errno;
	if (elf_image__type(img) == 0)
		err = -ENOEXEC;
	else if (elf_image__type(img) != ET_EXEC)
		err = -EOPNOTSUPP; /* PIE or library: the address is known only once it is mapped */
	else
		err = elf_image__symbol_value(img, name, &v);
	if (!err)
		*addr = v;
	elf_image__delete(img);
	return err;
}

/*
 * mem: a hardware breakpoint per CPU with the gate's program on it. The
 * address is virtual, so any process touching it on that CPU fires it; the
 * program keeps only the targets'.
 */
static int attach_mem(struct gate *g, size_t n)
{
	const struct point *p = &g->points[n].pt;
	int prog_fd = bpf_program__fd(g->skel->progs.gate_point_mem);
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_BREAKPOINT,
		.sample_period = 1,
		.bp_len = p->len,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	unsigned long addr = p->offset;
	int fd, link, err;

	if (p->path[0]) {
		err = elf_symbol_address(p->path, p->symbol, &addr);
		if (err) {
			pr_err("mem:%s:%s: %s\n", p->path, p->symbol,
			       err == -EOPNOTSUPP ? "the file is position-independent, so the address is known only at run time; give mem:ADDR"
			       : err == -ENOENT	  ? "no such symbol in that file"
						  : strerror(-err));
			return err == -EOPNOTSUPP ? -EINVAL : err;
		}
	}
	a.bp_addr = addr;
	a.bp_type = p->access == POINT_MEM_X ? HW_BREAKPOINT_X :
		    p->access == POINT_MEM_R ? HW_BREAKPOINT_R :
		    p->access == POINT_MEM_W ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
	for (int cpu = 0; cpu < g->nr_cpus; cpu++) {
		fd = perf_sys__event_open(g->sys, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd == -ENODEV)
			continue; /* an offline CPU */
		if (fd < 0) {
			pr_err("cannot set a hardware breakpoint at 0x%lx on CPU %d: %s\n", addr, cpu, strerror(-fd));
			return fd;
		}
		err = keep_fd(g, fd);
		if (err)
			return err;
		link = perf_sys__attach_bpf(g->sys, fd, prog_fd, GATE_POINT_BASE + n);
		if (link < 0) {
			pr_err("cannot attach the gate to the breakpoint at 0x%lx: %s\n", addr, strerror(-link));
			return link;
		}
		err = keep_fd(g, link);
		if (err)
			return err;
	}
	return 0;
}

/* The type of PMU @pmu (uprobe, kprobe) and the config bit of its return probes. */
static int probe_pmu(const char *pmu, __u32 *type, int *ret_bit)
{
	char path[128], buf[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%u", type) == 1;
	fclose(f);
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/retprobe", pmu);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = ok && fgets(buf, sizeof(buf), f) && sscanf(buf, "config:%d", ret_bit) == 1;
	fclose(f);
	return ok && *ret_bit >= 0 && *ret_bit < 64 ? 0 : -EINVAL;
}

/*
 * The perf event of a uprobe (at @symbol + @offset of @path, or at file offset
 * @offset without a symbol) or a kprobe (@symbol + @offset), as libbpf opens
 * it for its own programs. Return: its fd or -errno.
 */
static int probe_event_open(struct gate *g, bool kernel, bool ret, const char *path, const char *symbol,
			    unsigned long offset)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	__u64 off = 0;
	int bit, err;

	err = probe_pmu(kernel ? "kprobe" : "uprobe", &attr.type, &bit);
	if (err)
		return err;
	if (kernel) {
		attr.config1 = (__u64)(uintptr_t)symbol;
		attr.config2 = offset;
	} else {
		if (symbol && symbol[0]) {
			struct elf_image *img = elf_image__open(path);

			if (!img)
				return -errno;
			err = elf_image__symbol_file_offset(img, symbol, &off);
			elf_image__delete(img);
			if (err)
				return err;
		}
		attr.config1 = (__u64)(uintptr_t)path;
		attr.config2 = off + offset;
	}
	attr.config = ret ? 1ULL << bit : 0;
	return perf_sys__event_open(g->sys, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

/* What every compiled front program of the gate reads: its maps, the targets, the triggers. */
static void front_spec_init(const struct gate *g, struct gate_front_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->config_fd = bpf_map__fd(g->skel->maps.gate_config);
	spec->targets_fd = bpf_map__fd(g->skel->maps.gate_targets);
	spec->pcpu_fd = bpf_map__fd(g->skel->maps.gate_trig_pcpu);
	spec->bss_fd = bpf_map__fd(g->skel->maps.bss);
	spec->expr_state_fd = bpf_map__fd(g->skel->maps.expr_state);
	spec->counts_fd = bpf_map__fd(g->skel->maps.expr_counts);
	spec->threads_fd = bpf_map__fd(g->skel->maps.gate_threads);
	spec->sys_entries_fd = bpf_map__fd(g->skel->maps.gate_sys_entries);
	spec->calls_fd = bpf_map__fd(g->skel->maps.gate_calls);
	spec->policy_off = offsetof(struct gate_bpf__bss, trig_policy);
	spec->filter_targets = g->skel->rodata->filter_targets;
	spec->target_threads = g->skel->rodata->target_threads;
	spec->nr_pids = g->nr_pids;
	memcpy(spec->pids, g->pids, sizeof(spec->pids));
	spec->triggers = (const struct gate_trigger *)g->skel->rodata->gate_triggers;
	spec->conds = (const struct expr_prog *const *)g->trig_cond;
	spec->entry_args = g->skel->rodata->entry_args;
}

/*
 * The task_struct offsets in @spec, from the kernel's BTF only when a condition
 * reads the task (ppid), and once: it takes milliseconds. Return: 0, or
 * -EOPNOTSUPP with @why.
 */
static int front_task(struct gate *g, struct gate_front_spec *spec, char *why, size_t why_size)
{
	int err;

	if (gate_front__needs_task(spec) && !g->have_task) {
		err = gate_front__task_offsets(&g->task);
		if (err) {
			snprintf(why, why_size, "no task_struct layout in the kernel's BTF: %s", strerror(-err));
			return -EOPNOTSUPP;
		}
		g->have_task = 1;
	}
	spec->task = g->task;
	return 0;
}

/*
 * Load what @a holds (@err: how building it went) as a @type program named
 * @name, and free @a. No verifier log unless the load fails: logging slows
 * the verifier, and a log too small fails the load; on a failure it is
 * loaded once more for the log, which -vv shows. Return: the program's fd,
 * kept by the gate, with its size in @nr; -EOPNOTSUPP with @why when the
 * shared program is to run the conditions instead; another -errno when the
 * gate itself fails.
 */
static int load_front(struct gate *g, struct bpf_asm *a, int err, enum bpf_prog_type type, const char *name,
		      size_t *nr, char *why, size_t why_size)
{
	static char log[256 * 1024];
	LIBBPF_OPTS(bpf_prog_load_opts, po, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	const struct bpf_insn *insns;
	int fd, lfd;

	if (!err)
		err = bpf_asm__finish(a, &insns, nr);
	if (err) {
		bpf_asm__delete(a);
		return err == -EOPNOTSUPP ? err : (snprintf(why, why_size, "%s", strerror(-err)), -EOPNOTSUPP);
	}
	fd = bpf_prog_load(type, name, "Dual BSD/GPL", insns, *nr, NULL);
	if (fd < 0) {
		err = -errno;
		log[0] = 0;
		lfd = bpf_prog_load(type, name, "Dual BSD/GPL", insns, *nr, &po);
		if (lfd >= 0)
			close(lfd);
		pr_debug("%s\n", log);
		bpf_asm__delete(a);
		snprintf(why, why_size, "the kernel refused its program (%zu instructions): %s; -vv shows why", *nr,
			 strerror(-err));
		return -EOPNOTSUPP;
	}
	bpf_asm__delete(a);
	err = keep_fd(g, fd);
	return err ? err : fd;
}

/*
 * A probe point (@n >= 0) or a uprobe window's entry (@u) whose conditions
 * the compiler can express gets a program of its own that evaluates them and
 * tail-calls the shared one (gate_front__build_probe()). Return: 0 when
 * attached, -EOPNOTSUPP with @why when the shared program is attached instead.
 */
/* The spec of probe point @pt's (or uprobe window @u's) own program (attach_probe_front()). */
static void probe_spec(struct gate *g, const struct gate_point *pt, const struct gate_uprobe *u,
		       struct gate_front_spec *spec)
{
	const struct point *p = pt ? &pt->pt : NULL;
	bool ret;

	front_spec_init(g, spec);
	spec->fire_fd = bpf_map__fd(g->skel->maps.gate_probe_progs);
	spec->probe_progs_fd = spec->fire_fd;
	spec->vetoed_fd = bpf_map__fd(g->skel->maps.gate_uprobe_vetoed);
	spec->no_windows = g->skel->rodata->no_windows;
	spec->where = g->where;
	spec->probe = GATE_FRONT_ENTRY;
	if (u) {
		spec->is_window = 1;
		spec->window = u->window;
		spec->probe_key = GATE_UPROBE_WINDOW_KEY(u->window);
		spec->probe_prog = GATE_PROBE_WINDOW;
	} else {
		ret = p->kind == POINT_URETPROBE || p->kind == POINT_KRETPROBE;
		spec->probe = ret ? GATE_FRONT_RETURN : GATE_FRONT_ENTRY;
		spec->ret_cast = (pt->tp.flags & GATE_TP_RET_MASK) >> GATE_TP_RET_SHIFT;
		spec->probe_key = GATE_POINT_BASE + (pt - g->points);
		spec->probe_prog = p->kind == POINT_UPROBE ? GATE_PROBE_UPROBE :
				   p->kind == POINT_URETPROBE ? GATE_PROBE_URETPROBE :
				   p->kind == POINT_KPROBE ? GATE_PROBE_KPROBE : GATE_PROBE_KRETPROBE;
		spec->open_mask = pt->tp.open_mask;
		spec->close_mask = pt->tp.close_mask;
		spec->trig_mask = pt->tp.trig_mask;
		/* the shared program pops the call (call_pop()): it runs after this one, never instead */
		spec->call_frames = !!(pt->tp.flags & GATE_TP_CALL_ENTRY);
	}
}

/*
 * Start-up: is probe point @pt one that only runs triggers, all of them in a
 * program of its own (attach_probe_front())? Built here as it will be at
 * attach (the maps' fds aside). Then its kind's shared program need not be
 * verified unless another point of that kind uses it.
 */
static bool probe_trig_only(struct gate *g, const struct gate_point *pt)
{
	struct gate_front_spec spec;
	const struct bpf_insn *insns;
	struct bpf_asm *a;
	char why[256];
	size_t nr;
	int err;

	if (pt->pt.kind != POINT_UPROBE && pt->pt.kind != POINT_URETPROBE && pt->pt.kind != POINT_KPROBE &&
	    pt->pt.kind != POINT_KRETPROBE)
		return false;
	probe_spec(g, pt, NULL, &spec);
	if (spec.open_mask || spec.close_mask || spec.call_frames || front_task(g, &spec, why, sizeof(why)))
		return false;
	spec.fire_prog = spec.probe == GATE_FRONT_RETURN ? GATE_PROBE_FIRE_RETURN : GATE_PROBE_FIRE_ENTRY;
	a = bpf_asm__new();
	if (!a)
		return false;
	err = gate_front__build(a, &spec, why, sizeof(why));
	if (!err)
		err = bpf_asm__finish(a, &insns, &nr);
	bpf_asm__delete(a);
	return !err;
}

static int attach_probe_front(struct gate *g, const struct gate_point *pt, const struct gate_uprobe *u, char *why,
			      size_t why_size)
{
	struct gate_front_spec spec;
	const struct point *p = pt ? &pt->pt : NULL;
	bool kernel = false, ret = false, trig_only = false;
	struct bpf_asm *a;
	size_t nr;
	int fd, pfd, lfd, err;

	probe_spec(g, pt, u, &spec);
	if (!u) {
		kernel = p->kind == POINT_KPROBE || p->kind == POINT_KRETPROBE;
		ret = p->kind == POINT_URETPROBE || p->kind == POINT_KRETPROBE;
	}
	err = front_task(g, &spec, why, why_size);
	if (err)
		return err;
	a = bpf_asm__new();
	if (!a)
		return -ENOMEM;
	/*
	 * A point that only runs triggers: all of it in its own program (conditions,
	 * counters, policies), the actions in gate_fire_entry/return. Else, or if a
	 * condition does not compile, the conditions only, before the shared program.
	 */
	if (!u && !spec.open_mask && !spec.close_mask && !spec.call_frames) {
		spec.fire_prog = ret ? GATE_PROBE_FIRE_RETURN : GATE_PROBE_FIRE_ENTRY;
		err = gate_front__build(a, &spec, why, why_size);
		if (!err)
			trig_only = true;
		if (err == -EOPNOTSUPP) {
			bpf_asm__delete(a);
			a = bpf_asm__new();
			if (!a)
				return -ENOMEM;
		}
	}
	if (!trig_only)
		err = gate_front__build_probe(a, &spec, why, why_size);
	fd = load_front(g, a, err, BPF_PROG_TYPE_KPROBE, "gate_probe", &nr, why, why_size);
	if (fd < 0)
		return fd;
	pfd = u ? probe_event_open(g, false, false, u->path, u->symbol, u->offset)
		: probe_event_open(g, kernel, ret, p->path, p->symbol, p->offset);
	if (pfd < 0) {
		/* the shared program's attach says what is wrong with the point, if anything is */
		g->probe_open_err = pfd;
		snprintf(why, why_size, "cannot open its probe for its own program: %s", strerror(-pfd));
		return -EOPNOTSUPP;
	}
	err = keep_fd(g, pfd);
	if (err)
		return err;
	lfd = perf_sys__attach_bpf(g->sys, pfd, fd, spec.probe_key);
	if (lfd < 0) {
		snprintf(why, why_size, "cannot attach its own program: %s", strerror(-lfd));
		return -EOPNOTSUPP;
	}
	err = keep_fd(g, lfd);
	if (err)
		return err;
	if (trig_only)
		pr_info("%s: its own gate program, %zu instructions, triggers compiled\n", point__kind_name(p->kind), nr);
	else
		pr_info("%s: conditions compiled, %zu instructions, in a program of its own before the shared one\n",
			u ? "uprobe window" : point__kind_name(p->kind), nr);
	return 0;
}

/*
 * Usdt point @n's conditions compiled: its own program, which the shared
 * gate_point_usdt tail-calls once it has put the arguments in the
 * environment (GATE_PROBE_USDT). Return: 0 when in place, -EOPNOTSUPP with
 * @why when the shared program interprets them.
 */
static int usdt_front(struct gate *g, size_t n, char *why, size_t why_size)
{
	const struct gate_point *pt = &g->points[n];
	struct gate_front_spec spec;
	struct bpf_asm *a;
	__u32 k = n;
	size_t nr;
	int fd, err;

	front_spec_init(g, &spec);
	spec.probe_progs_fd = bpf_map__fd(g->skel->maps.gate_probe_progs);
	spec.vetoed_fd = bpf_map__fd(g->skel->maps.gate_uprobe_vetoed);
	spec.env_fd = bpf_map__fd(g->skel->maps.gate_env);
	spec.no_windows = g->skel->rodata->no_windows;
	spec.where = g->where;
	spec.probe = GATE_FRONT_USDT;
	spec.probe_key = GATE_POINT_BASE + n;
	spec.probe_prog = GATE_PROBE_USDT;
	spec.open_mask = pt->tp.open_mask;
	spec.close_mask = pt->tp.close_mask;
	spec.trig_mask = pt->tp.trig_mask;
	err = front_task(g, &spec, why, why_size);
	if (err)
		return err;
	a = bpf_asm__new();
	if (!a)
		return -ENOMEM;
	err = gate_front__build_probe(a, &spec, why, why_size);
	fd = load_front(g, a, err, BPF_PROG_TYPE_KPROBE, "gate_usdt", &nr, why, why_size);
	if (fd < 0)
		return fd;
	err = bpf_map__update_elem(g->skel->maps.gate_usdt_conds, &k, sizeof(k), &fd, sizeof(fd), BPF_ANY);
	if (err) {
		snprintf(why, why_size, "cannot hand its program to the shared one: %s", strerror(-err));
		return -EOPNOTSUPP;
	}
	pr_info("usdt: conditions compiled, %zu instructions, in a program of its own after the shared one's arguments\n",
		nr);
	return 0;
}

/* Does a condition run at usdt point @tp (its triggers', or the --where of a window it opens)? */
static bool usdt_has_cond(const struct gate *g, const struct gate_tp *tp)
{
	if (g->where && tp->open_mask)
		return true;
	for (int i = 0; i < GATE_MAX_TRIGGERS; i++)
		if ((tp->trig_mask & (1u << i)) && g->trig_cond[i])
			return true;
	return false;
}

static int attach_point(struct gate *g, size_t n)
{
	const struct point *p = &g->points[n].pt;
	struct bpf_program *prog = point_prog(g, p->kind);
	__u64 key = GATE_POINT_BASE + n;
	struct bpf_link *link = NULL;
	char why[256];
	int err;

	if (g->points[n].tp.flags & GATE_TP_CALL_ENTRY) {
		/* the calls' entries first, so that no return is seen without its entry */
		LIBBPF_OPTS(bpf_uprobe_opts, eo, .func_name = p->symbol, .bpf_cookie = key);
		/* a kprobe program too (BPF_PROG_TYPE_KPROBE), at the kernel function's entry */
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .offset = p->offset, .bpf_cookie = key);

		if (p->kind == POINT_KRETPROBE)
			link = bpf_program__attach_kprobe_opts(g->skel->progs.gate_call_enter, p->symbol, &ko);
		else
			link = bpf_program__attach_uprobe_opts(g->skel->progs.gate_call_enter, -1, p->path, p->offset,
							       &eo);
		if (!link) {
			err = -errno;
			pr_err("cannot attach to the entry of %s:%s%s%s (for entry.argN, $duration): %s\n",
			       point__kind_name(p->kind), p->path, p->path[0] ? ":" : "", p->symbol, strerror(-err));
			return err;
		}
		err = add_link(g, link);
		if (err)
			return err;
		link = NULL;
	}
	if (p->kind == POINT_UPROBE || p->kind == POINT_URETPROBE || p->kind == POINT_KPROBE ||
	    p->kind == POINT_KRETPROBE) {
		g->probe_open_err = 0;
		err = attach_probe_front(g, &g->points[n], NULL, why, sizeof(why));
		if (!err)
			return 0;
		if (err != -EOPNOTSUPP)
			return err;
		if (!bpf_program__autoload(prog)) {
			/* its own program could be built at load (probe_trig_only()): no shared one to fall back on */
			if (g->probe_open_err) {
				errno = -g->probe_open_err;
				goto fail; /* the point itself: said as the shared program's attach would */
			}
			pr_err("cannot attach to %s:%s%s%s: %s; its kind's shared program was not loaded, as the point's own program could be built\n",
			       point__kind_name(p->kind), p->path, p->path[0] ? ":" : "", p->symbol, why);
			return -EINVAL;
		}
		if (!strstr(why, "no condition to compile"))
			pr_info("%s:%s%s%s: conditions interpreted by the shared gate program: %s\n",
				point__kind_name(p->kind), p->path, p->path[0] ? ":" : "", p->symbol, why);
	} else if (p->kind == POINT_USDT && usdt_has_cond(g, &g->points[n].tp)) {
		err = usdt_front(g, n, why, sizeof(why));
		if (err && err != -EOPNOTSUPP)
			return err;
		if (err && !strstr(why, "no condition to compile"))
			pr_info("usdt:%s:%s:%s: conditions interpreted by the shared gate program: %s\n", p->path,
				p->provider, p->symbol, why);
	}
	switch (p->kind) {
	case POINT_UPROBE:
	case POINT_URETPROBE: {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = p->symbol, .retprobe = p->kind == POINT_URETPROBE,
			    .bpf_cookie = key);

		link = bpf_program__attach_uprobe_opts(prog, -1, p->path, p->offset, &uo);
		break;
	}
	case POINT_USDT: {
		LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = key);

		link = bpf_program__attach_usdt(prog, -1, p->path, p->provider, p->symbol, &uo);
		break;
	}
	case POINT_KPROBE:
	case POINT_KRETPROBE: {
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .offset = p->offset, .retprobe = p->kind == POINT_KRETPROBE,
			    .bpf_cookie = key);

		link = bpf_program__attach_kprobe_opts(prog, p->symbol, &ko);
		break;
	}
	case POINT_MEM:
		return attach_mem(g, n);
	case POINT_TP:
		return -EINVAL;
	}
fail:
	if (!link) {
		char text[4096 + 600], near[1024] = "";

		err = -errno;
		point__format(p, text, sizeof(text));
		if (err == -ENOENT)
			point_catalog__suggest_point(p, text, near, sizeof(near));
		if (p->kind == POINT_USDT)
			pr_err("cannot attach to usdt:%s:%s:%s: %s%s\n", p->path, p->provider, p->symbol,
			       err == -ENOENT ? "no such USDT probe in that file" : strerror(-err), near);
		else
			pr_err("cannot attach to %s:%s%s%s: %s%s\n", point__kind_name(p->kind), p->path,
			       p->path[0] ? ":" : "", p->symbol,
			       err == -ENOENT ? "no such symbol" : strerror(-err), near);
		return err;
	}
	return add_link(g, link);
}

/*
 * Attach order matters where two tracepoints share one kernel hook (every
 * syscall tracepoint hangs off raw_syscalls:sys_enter/sys_exit): the kernel
 * runs a hook's users in the order they came. So window starts attach first
 * and tracepoints that only close windows last: a syscall:* window is then
 * open for the other syscall events of that very call, enter and exit alike.
 */
static int tp_attach_pass(const struct gate_tp *tp)
{
	if (tp->open_mask)
		return 0;
	return tp->close_mask ? 2 : 1;
}

/*
 * Build into @a the program of its own of tracepoint @e (@where: the
 * --where in front of the shared program; @record: recorded at every hit),
 * its spec in @spec. Before the gate is loaded the maps' fds are not known
 * yet: what is built then only says whether it can be. Return: 0, or
 * -EOPNOTSUPP with @why when the shared program is to run it instead.
 */
static int front_assemble(struct gate *g, const struct gate_tp_entry *e, bool where, bool record,
			  struct gate_front_spec *spec, struct bpf_asm *a, char *why, size_t why_size)
{
	int err;

	front_spec_init(g, spec);
	spec->fire_fd = bpf_map__fd(g->skel->maps.gate_fire_prog);
	spec->runtime_fd = bpf_map__fd(g->skel->maps.gate_runtime);
	spec->cpus_fd = bpf_map__fd(g->skel->maps.gate_cpus);
	spec->events_fd = bpf_map__fd(g->skel->maps.gate_events);
	spec->stats_off = offsetof(struct gate_bpf__bss, stats);
	spec->filter_cpus = g->skel->rodata->filter_cpus;
	spec->tp_id = e->id;
	spec->switch_hook = bpf_program__autoload(g->skel->progs.gate_sched_switch);
	spec->tp_flags = e->tp.flags;
	spec->rec_size = e->tp.size;
	spec->trig_mask = e->tp.trig_mask;
	if (where) {
		spec->open_mask = e->tp.open_mask;
		spec->where = g->where;
	} else if (!record && !tp_front_eligible(&e->tp)) {
		snprintf(why, why_size, "%s", "it also opens, closes or records windows");
		return -EOPNOTSUPP;
	}
	err = front_task(g, spec, why, why_size);
	if (err)
		return err;
	return where ? gate_front__build_where(a, spec, why, why_size)
	       : record ? gate_front__build_record(a, spec, why, why_size) : gate_front__build(a, spec, why, why_size);
}

/*
 * Start-up: does every tracepoint get a program of its own (gate__attach())?
 * Then the shared gate_tracepoint, thousands of instructions, need not be
 * verified. Each is built here as it will be at attach (the maps' fds
 * aside): what the compiler cannot express is known now.
 */
static bool tps_all_own(struct gate *g)
{
	struct gate_front_spec spec;
	const struct bpf_insn *insns;
	char why[256];
	size_t nr;

	for (size_t i = 0; i < g->nr_tps; i++) {
		const struct gate_tp_entry *e = &g->tps[i];
		bool record = tp_record_eligible(g, &e->tp);
		struct bpf_asm *a;
		int err;

		if (!record && !(e->tp.trig_mask && tp_front_eligible(&e->tp)))
			return false;
		a = bpf_asm__new();
		if (!a)
			return false;
		err = front_assemble(g, e, false, record, &spec, a, why, sizeof(why));
		if (!err)
			err = bpf_asm__finish(a, &insns, &nr);
		bpf_asm__delete(a);
		if (err)
			return false;
	}
	return true;
}

/*
 * A tracepoint that only runs triggers gets a program of its own
 * (gate_front.h), compiled conditions and all. Return: 0 when attached,
 * -EOPNOTSUPP with @why when the shared program is to run it instead.
 */
static int attach_front(struct gate *g, const struct gate_tp_entry *e, bool where, char *why, size_t why_size)
{
	struct gate_front_spec spec;
	struct perf_event_attr attr = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = e->id };
	struct bpf_asm *a;
	int fd, pfd, lfd, err;
	size_t nr = 0;

	int record = !where && tp_record_eligible(g, &e->tp);

	a = bpf_asm__new();
	if (!a)
		return -ENOMEM;
	err = front_assemble(g, e, where, record, &spec, a, why, why_size);
	fd = load_front(g, a, err, BPF_PROG_TYPE_TRACEPOINT, where ? "gate_where" : "gate_point", &nr, why, why_size);
	if (fd < 0)
		return fd;
	pfd = perf_sys__event_open(g->sys, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0 || keep_fd(g, pfd)) {
		err = pfd < 0 ? pfd : -ENOMEM;
		pr_err("cannot open %s:%s for its program: %s\n", e->system, e->name, strerror(-err));
		return err;
	}
	lfd = perf_sys__attach_bpf(g->sys, pfd, fd, e->id);
	if (lfd < 0 || keep_fd(g, lfd)) {
		err = lfd < 0 ? lfd : -ENOMEM;
		pr_err("cannot attach the gate's program to %s:%s: %s\n", e->system, e->name, strerror(-err));
		return err;
	}
	if (gate_front__uses_cpu_state(&spec))
		g->cpu_state = 1;
	if (where)
		pr_info("%s:%s: --where compiled, %zu instructions, before the shared gate program\n", e->system,
			e->name, nr);
	else
		pr_info("%s:%s: its own gate program, %zu instructions, %s\n", e->system, e->name, nr,
			record ? "recorded at every hit" : "triggers compiled");
	return 0;
}

/* The tracepoints in the order they are attached: @order gets indices into g->tps. */
static void tp_attach_order(const struct gate *g, size_t *order)
{
	size_t n = 0;

	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < g->nr_tps; i++)
			if (tp_attach_pass(&g->tps[i].tp) == pass)
				order[n++] = i;
}

int gate__attach(struct gate *g)
{
	/* the task-lifetime programs: every recording needs them */
	const struct {
		struct bpf_program *prog;
		const char *what;
	} sched[] = {
		{ g->skel->progs.gate_follow_fork, "sched:sched_process_fork (needed to follow children)" },
		{ g->skel->progs.gate_follow_exec, "sched:sched_process_exec (needed to start a command)" },
		{ g->skel->progs.gate_thread_exit, "sched:sched_process_exit" },
	};
	size_t order[GATE_MAX_TPS];
	char why[256];
	struct bpf_link *link;
	int err;

	tp_attach_order(g, order);
	for (size_t k = 0; k < g->nr_tps; k++) {
		size_t i = order[k];
		/* One program for all tracepoints: the cookie tells it which one fired. */
		LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = g->tps[i].id);

		if (g->progress)
			progress__show(g->progress, !k, "auxtrig: attaching tracepoints: %zu of %zu", k + 1, g->nr_tps);
		err = g->tps[i].tp.trig_mask || tp_record_eligible(g, &g->tps[i].tp)
			      ? attach_front(g, &g->tps[i], false, why, sizeof(why))
			      : -EOPNOTSUPP;
		if (!err)
			continue;
		if (err != -EOPNOTSUPP)
			return err;
		if (!bpf_program__autoload(g->skel->progs.gate_tracepoint)) {
			/* built at load (tps_all_own()), refused now: the kernel's verifier */
			pr_err("cannot attach %s:%s: %s; its shared program was not loaded, as every tracepoint's own program could be built\n",
			       g->tps[i].system, g->tps[i].name, why);
			return -EINVAL;
		}
		if (g->tps[i].tp.trig_mask)
			pr_info("%s:%s: triggers run by the shared gate program, conditions interpreted: %s\n",
				g->tps[i].system, g->tps[i].name, why);
		/*
		 * A window start with a --where: its compiled verdict comes from a
		 * program attached before the shared one, which the kernel runs first.
		 */
		if (g->where && g->tps[i].tp.open_mask && !g->skel->rodata->no_windows) {
			err = attach_front(g, &g->tps[i], true, why, sizeof(why));
			if (err == -EOPNOTSUPP)
				pr_info("%s:%s: --where interpreted by the shared gate program: %s\n", g->tps[i].system,
					g->tps[i].name, why);
			else if (err)
				return err;
		}
		link = bpf_program__attach_tracepoint_opts(g->skel->progs.gate_tracepoint,
							   g->tps[i].system, g->tps[i].name, &opts);
		if (!link) {
			err = -errno;
			pr_err("cannot attach the gate to %s:%s: %s\n", g->tps[i].system, g->tps[i].name,
			       strerror(-err));
			return err;
		}
		err = add_link(g, link);
		if (err)
			return err;
	}
	if (g->cpu_state) {
		/* before arming: the points' programs remember nothing until then */
		link = bpf_program__attach(g->skel->progs.gate_sched_switch);
		if (!link || add_link(g, link)) {
			err = link ? -ENOMEM : -errno;
			pr_err("cannot attach to the sched_switch raw tracepoint: %s\n", strerror(-err));
			return err;
		}
	}
	for (size_t i = 0; i < g->nr_points; i++) {
		err = attach_point(g, i);
		if (err)
			return err;
	}
	for (size_t i = 0; i < g->nr_uprobes; i++) {
		const struct gate_uprobe *u = &g->uprobes[i];

		for (int ret = 0; ret < 2; ret++) {
			/* The window's number travels as the cookie: one program for all. */
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = u->symbol, .retprobe = ret,
				    .bpf_cookie = u->window);

			if (ret && u->offset)
				break; /* a return probe only at the function itself */
			if (!ret && g->where) {
				char why[256];

				err = attach_probe_front(g, NULL, u, why, sizeof(why));
				if (!err)
					continue;
				if (err != -EOPNOTSUPP)
					return err;
				pr_info("uprobe:%s:%s: --where interpreted by the shared gate program: %s\n", u->path,
					u->symbol, why);
			}
			link = bpf_program__attach_uprobe_opts(ret ? g->skel->progs.gate_uprobe_exit
								   : g->skel->progs.gate_uprobe_enter,
							       -1, u->path, u->offset, &uo);
			if (!link) {
				struct point pt = { .kind = POINT_UPROBE };
				char text[4096 + 600], near[1024] = "";

				err = -errno;
				snprintf(pt.path, sizeof(pt.path), "%s", u->path);
				snprintf(pt.symbol, sizeof(pt.symbol), "%s", u->symbol);
				snprintf(text, sizeof(text), "uprobe:%s:%s", u->path, u->symbol);
				if (err == -ENOENT)
					point_catalog__suggest_point(&pt, text, near, sizeof(near));
				pr_err("cannot attach to uprobe:%s:%s: %s%s\n", u->path, u->symbol,
				       err == -ENOENT ? "no such symbol in that file" : strerror(-err), near);
				return err;
			}
			err = add_link(g, link);
			if (err)
				return err;
		}
	}
	for (size_t i = 0; i < sizeof(sched) / sizeof(sched[0]); i++) {
		link = bpf_program__attach(sched[i].prog);
		if (!link || add_link(g, link)) {
			err = link ? -ENOMEM : -errno;
			pr_err("cannot attach to %s: %s\n", sched[i].what, strerror(-err));
			return err;
		}
	}
	return 0;
}

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
	tp_attach_order(g, order);
	for (size_t k = 0; k < g->nr_tps; k++) {
		const struct gate_tp_entry *e = &g->tps[order[k]];

		fprintf(f, "attach %zu: %s %s:%s cookie=%u\n", ++n,
			tp_front_eligible(&e->tp) || tp_record_eligible(g, &e->tp) ? "own-program-or-gate_tracepoint"
										   : "gate_tracepoint", e->system,
			e->name, e->id);
	}
	for (size_t i = 0; i < g->nr_points; i++) {
		point__format(&g->points[i].pt, text, sizeof(text));
		fprintf(f, "attach %zu: %s %s cookie=%#x%s\n", ++n, bpf_program__name(point_prog(g, g->points[i].pt.kind)),
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

/*
 * Threads that detach side by side. Thread k of n destroys links k, k + n...
 * and closes the kept descriptors of chunk k, last first: a point's event
 * and its program's link were kept one after the other, so one thread
 * closes both and the program's detach and the event's removal of
 * different points overlap.
 */
struct detacher {
	struct bpf_link **links;
	size_t nr_links;
	const int *fds;
	size_t nr_fds;
	const struct perf_sys *sys;
	size_t k, n;
	size_t *done;
};

static void *detacher__run(void *arg)
{
	struct detacher *d = arg;
	size_t chunk = (d->nr_fds + d->n - 1) / d->n;
	size_t lo = d->k * chunk < d->nr_fds ? d->k * chunk : d->nr_fds;
	size_t hi = lo + chunk < d->nr_fds ? lo + chunk : d->nr_fds;

	for (size_t i = d->k; i < d->nr_links; i += d->n) {
		bpf_link__destroy(d->links[i]);
		__atomic_add_fetch(d->done, 1, __ATOMIC_RELAXED);
	}
	for (size_t i = hi; i-- > lo;) {
		perf_sys__close(d->sys, d->fds[i]);
		__atomic_add_fetch(d->done, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Each tracepoint's detach waits for RCU grace periods in the kernel, tens
 * of milliseconds each on a small machine, once when its program is
 * detached and once when its last perf event goes; detaching side by side
 * lets the waits overlap. Destroys @g's links and closes its kept fds.
 */
static void detach_all(struct gate *g)
{
	enum { DETACHERS = 16 };
	struct detacher d[DETACHERS];
	pthread_t t[DETACHERS];
	size_t nr = g->nr_links + g->nr_fds, n = nr < DETACHERS ? nr : DETACHERS, started = 0, done = 0;

	if (nr < 8) {
		for (size_t i = 0; i < g->nr_links; i++)
			bpf_link__destroy(g->links[i]);
		for (size_t i = g->nr_fds; i-- > 0;)
			perf_sys__close(g->sys, g->fds[i]);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		d[k] = (struct detacher){ .links = g->links, .nr_links = g->nr_links, .fds = g->fds,
					  .nr_fds = g->nr_fds, .sys = g->sys, .k = k, .n = n, .done = &done };
		if (pthread_create(&t[k], NULL, detacher__run, &d[k]))
			break;
		started++;
	}
	for (size_t k = started; k < n; k++)
		detacher__run(&d[k]);	/* no thread: this one does its share */
	for (bool first = true; g->progress && __atomic_load_n(&done, __ATOMIC_RELAXED) < nr; first = false) {
		progress__show(g->progress, first, "auxtrig: detaching: %zu of %zu (the kernel waits for each)",
			       __atomic_load_n(&done, __ATOMIC_RELAXED), nr);
		usleep(50 * 1000);
	}
	for (size_t k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	progress__clear(g->progress);
}

void gate__set_progress(struct gate *g, struct progress *p)
{
	g->progress = p;
}

void gate__close(struct gate *g)
{
	if (!g)
		return;
	detach_all(g);
	free(g->links);
	free(g->fds);
	ring_buffer__free(g->ctl);
	gate_bpf__destroy(g->skel);
	for (int i = 0; i < GATE_MAX_TRIGGERS; i++)
		free(g->trig_cond[i]);
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
