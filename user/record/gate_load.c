// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate loaded: which of its programs the kernel verifies and loads
 * (the shared ones a point's own program makes unneeded are left out), its
 * maps sized to the run.
 */
#include <string.h>
#include <bpf/libbpf.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/record/internal/gate.h"
#include "auxtrig/record/syscall_strings.h"
#include "skel/gate.skel.h"

/* An LRU map no program of this run writes: the smallest a common LRU takes on any machine. */
#define SMALL_LRU 1024

/* Does the tracepoint only run triggers (its own program may run them, gate_front.h)? */
bool gate__tp_front_eligible(const struct gate_tp *tp)
{
	/* entry.argN at an exit: the program reads the entry (gate_front_spec.entry_args), gate_fire the marks' */
	const __u32 mine = GATE_TP_USER_REGS | GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT | GATE_TP_ENTRY_ARGS;

	return tp->trig_mask && !tp->open_mask && !tp->close_mask && !(tp->flags & ~mine);
}

/*
 * Is the tracepoint recorded at every hit by a target (no windows), with no
 * triggers and no strings after its fixed fields (__data_loc fields, a
 * syscall entry's user string)? Its own program records it
 * (gate_front__build_record()). Not a system call's when snapshot triggers
 * exist: the shared emit() notes the calls a freeze held back (gate_held),
 * so that a trigger at the end of such a call takes no snapshot lacking
 * its entry.
 */
bool gate__tp_record_eligible(const struct gate *g, const struct gate_tp *tp)
{
	const __u32 mine = GATE_TP_RECORD | GATE_TP_USER_REGS | GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT;

	if (g->skel->rodata->have_snap_triggers && (tp->flags & (GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT)))
		return false;
	return !tp->trig_mask && g->skel->rodata->no_windows && !tp->nr_dyn && !tp->str_off[0] &&
	       (tp->flags & GATE_TP_RECORD) && !(tp->flags & ~mine);
}

/* Are raw_syscalls:sys_enter records emitted with their strings (gate_raw_strs)? */
static bool raw_strings(const struct gate *g)
{
	for (size_t i = 0; i < g->nr_tps; i++)
		if (g->tps[i].tp.flags & GATE_TP_RAW_STRS)
			return g->raw_strs && g->raw_strs->nr;
	return false;
}

/* The string arguments of each syscall number, for raw_syscalls:sys_enter records. */
static int fill_raw_strings(struct gate *g)
{
	const struct syscall_strings *s = g->raw_strs;
	int err;

	if (!raw_strings(g))
		return 0;
	for (__u32 nr = 0; nr < s->nr && nr < GATE_MAX_SYSCALLS; nr++) {
		struct gate_raw_strs v;

		if (!s->str_off[nr][0])
			continue;
		memcpy(v.str_off, s->str_off[nr], sizeof(v.str_off));
		err = bpf_map__update_elem(g->skel->maps.gate_raw_strs, &nr, sizeof(nr), &v, sizeof(v), BPF_ANY);
		if (err) {
			pr_err("cannot tell the gate which arguments of syscall %u are strings: %s\n", nr,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Does a tracepoint belong to a syscall:* window (gate_any_memo)? */
static bool any_syscall_window(const struct gate *g)
{
	for (size_t i = 0; i < g->nr_tps; i++)
		if (g->tps[i].tp.flags & GATE_TP_SYSCALL_ANY)
			return true;
	return false;
}

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
				shared |= !gate__probe_trig_only(g, &g->points[i]);
			}
		if (used)
			bpf_program__set_autoload(gate__point_prog(g, kinds[k]), shared);
	}
	/* after gate_sched_switch's: the points' programs are built as they will be */
	bpf_program__set_autoload(g->skel->progs.gate_tracepoint, !gate__tps_all_own(g));
}

/* Before the load: what the conditions read, which programs load, how large the maps are. */
static void load_prepare(struct gate *g)
{
	int uses_count = g->where && (g->where->flags & EXPR_PROG_COUNT), stamps = 0;
	int uses_uvars = g->where && (g->where->flags & EXPR_PROG_UVARS);

	/* Only the builtins some condition reads are fetched at each hit. */
	g->skel->rodata->env_fields = g->where ? expr__builtins_used(g->where) : 0;
	for (int i = 0; i < g->nr_triggers; i++) {
		if (g->trig_cond[i]) {
			g->skel->rodata->env_fields |= expr__builtins_used(g->trig_cond[i]);
			uses_count |= !!(g->trig_cond[i]->flags & EXPR_PROG_COUNT);
			uses_uvars |= !!(g->trig_cond[i]->flags & EXPR_PROG_UVARS);
		}
		if (g->trig_sets[i]) {
			g->skel->rodata->env_fields |= expr__builtins_used(g->trig_sets[i]);
			uses_uvars = 1;
		}
	}
	/* the variables of your own: 4096 preallocated values only when some program has them */
	if (!uses_uvars)
		bpf_map__set_max_entries(g->skel->maps.expr_uvars, 1);
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
		    (gate__tp_front_eligible(&g->tps[i].tp) || gate__tp_record_eligible(g, &g->tps[i].tp)))
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
	if (!raw_strings(g))
		bpf_map__set_max_entries(g->skel->maps.gate_raw_strs, 1);
}

/* After the load: the conditions, the programs the points' own programs tail-call, the points. */
static int load_fill(struct gate *g)
{
	int err = fill_raw_strings(g);

	if (err)
		return err;

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

		if (g->trig_sets[i]) {
			err = bpf_map__update_elem(g->skel->maps.gate_trig_sets, &key, sizeof(key), g->trig_sets[i],
						   sizeof(*g->trig_sets[i]), BPF_ANY);
			if (err) {
				pr_err("cannot load the set action of trigger %d into the gate: %s\n", i + 1,
				       strerror(-err));
				return err;
			}
		}
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

int gate__load(struct gate *g)
{
	int err;

	load_prepare(g);
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
	return load_fill(g);
}
