// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate attached: tracepoints first (in the order syscall:* windows
 * need), with a program of their own where the compiler can express their
 * conditions (gate_front.c), then the probe points (gate_probe.c), the
 * uprobe windows and the thread bookkeeping programs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "auxtrig/lang/point_catalog.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/progress.h"
#include "auxtrig/record/internal/gate.h"
#include "skel/gate.skel.h"

int gate__add_link(struct gate *g, struct bpf_link *link)
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

int gate__keep_fd(struct gate *g, int fd)
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

/* What every compiled front program of the gate reads: its maps, the targets, the triggers. */
void gate__front_spec_init(const struct gate *g, struct gate_front_spec *spec)
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
int gate__front_task(struct gate *g, struct gate_front_spec *spec, char *why, size_t why_size)
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
int gate__load_front(struct gate *g, struct bpf_asm *a, int err, enum bpf_prog_type type, const char *name,
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
	err = gate__keep_fd(g, fd);
	return err ? err : fd;
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

	gate__front_spec_init(g, spec);
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
	} else if (!record && !gate__tp_front_eligible(&e->tp)) {
		snprintf(why, why_size, "%s", "it also opens, closes or records windows");
		return -EOPNOTSUPP;
	}
	err = gate__front_task(g, spec, why, why_size);
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
bool gate__tps_all_own(struct gate *g)
{
	struct gate_front_spec spec;
	const struct bpf_insn *insns;
	char why[256];
	size_t nr;

	for (size_t i = 0; i < g->nr_tps; i++) {
		const struct gate_tp_entry *e = &g->tps[i];
		bool record = gate__tp_record_eligible(g, &e->tp);
		struct bpf_asm *a;
		int err;

		if (!record && !(e->tp.trig_mask && gate__tp_front_eligible(&e->tp)))
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

	int record = !where && gate__tp_record_eligible(g, &e->tp);

	a = bpf_asm__new();
	if (!a)
		return -ENOMEM;
	err = front_assemble(g, e, where, record, &spec, a, why, why_size);
	fd = gate__load_front(g, a, err, BPF_PROG_TYPE_TRACEPOINT, where ? "gate_where" : "gate_point", &nr, why, why_size);
	if (fd < 0)
		return fd;
	pfd = perf_sys__event_open(g->sys, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0 || gate__keep_fd(g, pfd)) {
		err = pfd < 0 ? pfd : -ENOMEM;
		pr_err("cannot open %s:%s for its program: %s\n", e->system, e->name, strerror(-err));
		return err;
	}
	lfd = perf_sys__attach_bpf(g->sys, pfd, fd, e->id);
	if (lfd < 0 || gate__keep_fd(g, lfd)) {
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
void gate__tp_attach_order(const struct gate *g, size_t *order)
{
	size_t n = 0;

	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < g->nr_tps; i++)
			if (tp_attach_pass(&g->tps[i].tp) == pass)
				order[n++] = i;
}

/* Tracepoint @i: its own program where it has one, else (also) the shared gate_tracepoint. */
static int attach_tracepoint(struct gate *g, size_t i)
{
	/* One program for all tracepoints: the cookie tells it which one fired. */
	LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = g->tps[i].id);
	struct bpf_link *link;
	char why[256];
	int err;

	err = g->tps[i].tp.trig_mask || gate__tp_record_eligible(g, &g->tps[i].tp)
		      ? attach_front(g, &g->tps[i], false, why, sizeof(why))
		      : -EOPNOTSUPP;
	if (!err)
		return 0;
	if (err != -EOPNOTSUPP)
		return err;
	if (!bpf_program__autoload(g->skel->progs.gate_tracepoint)) {
		/* built at load (gate__tps_all_own()), refused now: the kernel's verifier */
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
	return gate__add_link(g, link);
}

/* A uprobe window: its entry (its own program with --where, where it has one) and its return. */
static int attach_uprobe_window(struct gate *g, const struct gate_uprobe *u)
{
	struct bpf_link *link;
	int err;

	for (int ret = 0; ret < 2; ret++) {
		/* The window's number travels as the cookie: one program for all. */
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = u->symbol, .retprobe = ret,
			    .bpf_cookie = u->window);

		if (ret && u->offset)
			break; /* a return probe only at the function itself */
		if (!ret && g->where) {
			char why[256];

			err = gate__attach_probe_front(g, NULL, u, why, sizeof(why));
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
		err = gate__add_link(g, link);
		if (err)
			return err;
	}
	return 0;
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
	struct bpf_link *link;
	int err;

	gate__tp_attach_order(g, order);
	for (size_t k = 0; k < g->nr_tps; k++) {
		if (g->progress)
			progress__show(g->progress, !k, "auxtrig: attaching tracepoints: %zu of %zu", k + 1, g->nr_tps);
		err = attach_tracepoint(g, order[k]);
		if (err)
			return err;
	}
	if (g->cpu_state) {
		/* before arming: the points' programs remember nothing until then */
		link = bpf_program__attach(g->skel->progs.gate_sched_switch);
		if (!link || gate__add_link(g, link)) {
			err = link ? -ENOMEM : -errno;
			pr_err("cannot attach to the sched_switch raw tracepoint: %s\n", strerror(-err));
			return err;
		}
	}
	for (size_t i = 0; i < g->nr_points; i++) {
		err = gate__attach_point(g, i);
		if (err)
			return err;
	}
	for (size_t i = 0; i < g->nr_uprobes; i++) {
		err = attach_uprobe_window(g, &g->uprobes[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < sizeof(sched) / sizeof(sched[0]); i++) {
		link = bpf_program__attach(sched[i].prog);
		if (!link || gate__add_link(g, link)) {
			err = link ? -ENOMEM : -errno;
			pr_err("cannot attach to %s: %s\n", sched[i].what, strerror(-err));
			return err;
		}
	}
	return 0;
}
