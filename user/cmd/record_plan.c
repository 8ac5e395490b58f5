// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig record`'s command line, into a resolved plan
 * (include/auxtrig/cmd/record_plan.h): every string the recording needs is
 * parsed here, once, and every refusal made before anything is created.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "auxtrig/cmd/record_plan.h"
#include "auxtrig/record/control.h"
#include "auxtrig/lang/aux_event.h"
#include "auxtrig/lang/duration.h"
#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_dump.h"
#include "auxtrig/lang/on_spec.h"
#include "auxtrig/lang/point_catalog.h"
#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/cpumap.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"

/* ---- the options, as text --------------------------------------------------- */

enum { OPT_WHERE = 1000, OPT_CONTROL, OPT_ON, OPT_DRY_RUN, OPT_SYSFS_ROOT, OPT_TRIGGER_PROG, OPT_MIN_DURATION,
       OPT_MAX_DURATION, OPT_HOLD_SIZE };

static const struct option record_options[] = {
	{ "window", required_argument, NULL, 'w' },
	{ "event", required_argument, NULL, 'e' },
	{ "where", required_argument, NULL, OPT_WHERE },
	{ "on", required_argument, NULL, OPT_ON },
	{ "min-duration", required_argument, NULL, OPT_MIN_DURATION },
	{ "max-duration", required_argument, NULL, OPT_MAX_DURATION },
	{ "hold-size", required_argument, NULL, OPT_HOLD_SIZE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "trigger-prog", required_argument, NULL, OPT_TRIGGER_PROG },
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "snapshot", optional_argument, NULL, 'S' },
	{ "callchain", no_argument, NULL, 'g' },
	{ "control", required_argument, NULL, OPT_CONTROL },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{}
};

static int push(void *arrayp, size_t *nr, const void *item)
{
	void **tmp = realloc(*(void ***)arrayp, (*nr + 1) * sizeof(void *));

	if (!tmp)
		return -ENOMEM;
	tmp[(*nr)++] = (void *)item;
	*(void ***)arrayp = tmp;
	return 0;
}

static int add_events(struct record_args *a, const char *arg)
{
	char *copy, *tok, *save = NULL, *name;
	int err = 0;

	/* intel_pt/tsc,mtc=1/u: a PMU event, whose terms have commas of their own. */
	if (strchr(arg, '/')) {
		if (a->aux_event) {
			pr_err("-e %s: only one hardware trace event per run (already: %s)\n", arg, a->aux_event);
			return -EINVAL;
		}
		a->aux_event = arg;
		return 0;
	}
	copy = strdup(arg);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		name = strdup(tok);
		err = name ? push(&a->events, &a->nr_events, name) : -ENOMEM;
		if (err)
			free(name);
	}
	free(copy);
	return err;
}

static int add_window(struct record_args *a, const char *arg)
{
	struct window_spec *tmp = realloc(a->windows, (a->nr_windows + 1) * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	a->windows = tmp;
	if (window_spec__parse(&a->windows[a->nr_windows], arg))
		return -EINVAL;
	a->nr_windows++;
	return 0;
}

/* "4096", "64K", "1M", "4G" (B, K, M, G; either case) within [@min, @max]. */
static int parse_bytes(const char *arg, unsigned long long min, unsigned long long max,
		       unsigned long long *bytes)
{
	unsigned long long b;
	char *end;

	errno = 0;
	b = strtoull(arg, &end, 0);
	if (errno || end == arg || *arg == '-')
		return -EINVAL;
	switch (*end) {
	case 'T': case 't': b = b > (~0ULL >> 40) ? ~0ULL : b << 10; /* fallthrough */
	case 'G': case 'g': b = b > (~0ULL >> 30) ? ~0ULL : b << 10; /* fallthrough */
	case 'M': case 'm': b = b > (~0ULL >> 20) ? ~0ULL : b << 10; /* fallthrough */
	case 'K': case 'k': b = b > (~0ULL >> 10) ? ~0ULL : b << 10; end++; break;
	case 'B': case 'b': end++; break;
	}
	if (*end || b < min || b > max)
		return -EINVAL;
	*bytes = b;
	return 0;
}

/* Is @word (the command) a size meant for -S, written apart from it (-S 64K)? */
static bool snapshot_detached(const char *word)
{
	unsigned long long bytes;

	if (*word == 'e')
		word++;
	return *word >= '0' && *word <= '9' && !parse_bytes(word, 1, ~0ULL, &bytes);
}

/* -S[e][SIZE]: SIZE in bytes with K, M, G or T; becomes a power-of-2 page count. */
static int parse_snapshot(struct record_args *a, const char *arg)
{
	size_t page = sysconf(_SC_PAGESIZE), pages = 1;
	unsigned long long bytes;

	a->snapshot = true;
	if (!arg || !*arg)
		return 0;
	if (*arg == 'e') {
		a->snapshot_at_exit = true;
		arg++;
		if (!*arg)
			return 0;
	}
	if (parse_bytes(arg, page, 1ULL << 32, &bytes))
		return -EINVAL;
	while (pages * page < bytes)
		pages <<= 1;
	a->mmap_pages = pages;
	return 0;
}

/* -m N[,A]: powers of 2. */
static int parse_pages(struct record_args *a, const char *arg)
{
	char *end;

	errno = 0;
	a->mmap_pages = strtoul(arg, &end, 0);
	if (!errno && *end == ',') {
		a->aux_pages = strtoul(end + 1, &end, 0);
		if (!a->aux_pages || (a->aux_pages & (a->aux_pages - 1)))
			errno = EINVAL;
	}
	if (errno || *end || !a->mmap_pages || (a->mmap_pages & (a->mmap_pages - 1)) ||
	    a->mmap_pages > (1u << 20) || a->aux_pages > (1u << 20)) {
		pr_err("-m %s: expected a power of 2 number of pages (e.g. 128, or 128,1024)\n", arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_duration(struct record_args *a, int c, const char *arg)
{
	__u64 ns;

	if (duration__parse(arg, &ns)) {
		pr_err("--%s %s: expected a duration with its unit, e.g. 500us, 1ms, 2s\n",
		       c == OPT_MIN_DURATION ? "min-duration" : "max-duration", arg);
		return -EINVAL;
	}
	if (c == OPT_MIN_DURATION) {
		a->min_duration = arg;
		a->min_duration_ns = ns;
	} else {
		a->max_duration = arg;
		a->max_duration_ns = ns;
	}
	return 0;
}

int record_args__parse(struct record_args *a, int argc, char **argv)
{
	int c, err = 0, bare_s = 0;

	memset(a, 0, sizeof(*a));
	a->output = "auxtrig.data";
	a->mmap_pages = 128;
	a->aux_pages = 1024;
	a->full_argc = argc;
	a->full_argv = argv;
	optind = 0; /* glibc: forget the previous parse, even one that stopped inside "-hv" */
	while (!err && (c = getopt_long(argc, argv, "+w:e:o:fp:t:aC:m:S::gvqh", record_options, NULL)) != -1) {
		switch (c) {
		case 'w':
			err = add_window(a, optarg);
			break;
		case 'e':
			err = add_events(a, optarg);
			break;
		case OPT_WHERE:
			a->where = optarg;
			break;
		case OPT_ON:
			err = push(&a->ons, &a->nr_ons, optarg);
			break;
		case 'o':
			if (!*optarg) {
				pr_err("-o needs a file name\n");
				err = -EINVAL;
			}
			a->output = optarg;
			break;
		case 'f':
			a->force = true;
			break;
		case 'p':
			a->pids = optarg;
			break;
		case 't':
			a->tids = optarg;
			break;
		case 'a':
			a->all = true;
			break;
		case 'C':
			a->cpus = optarg;
			break;
		case 'm':
			err = parse_pages(a, optarg);
			break;
		case 'S':
			if (!optarg)
				bare_s = optind;	/* what follows a bare -S */
			err = parse_snapshot(a, optarg);
			if (err)
				pr_err("-S%s: expected [e][SIZE], SIZE from 4K to 4G (e.g. -S, -Se, -S64K, -Se1M)\n",
				       optarg);
			break;
		case 'g':
			a->callchain = true;
			break;
		case OPT_CONTROL:
			a->control = optarg;
			break;
		case OPT_DRY_RUN:
			a->dry_run = true;
			break;
		case OPT_TRIGGER_PROG:
			err = push(&a->trigger_progs, &a->nr_trigger_progs, optarg);
			break;
		case OPT_MIN_DURATION:
		case OPT_MAX_DURATION:
			err = parse_duration(a, c, optarg);
			break;
		case OPT_HOLD_SIZE:
			err = parse_bytes(optarg, 64 << 10, 1ULL << 40, &a->hold_size);
			if (err)
				pr_err("--hold-size %s: expected a size from 64K to 1T (e.g. 256M, 2G)\n", optarg);
			break;
		case OPT_SYSFS_ROOT:
			a->sysfs_root = optarg;
			break;
		case 'v':
			a->verbose++;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			a->help = true;
			return 0;
		default:
			fprintf(stderr, "(try: auxtrig record --help)\n");
			err = -EINVAL;
		}
	}
	if (err)
		return err == -ENOMEM ? err : -EINVAL;
	if (optind < argc)
		a->command = argv + optind;
	if (bare_s && a->command == argv + bare_s && snapshot_detached(a->command[0])) {
		pr_err("-S %s: a snapshot size goes right after -S, as perf's does: -S%s ('%s' was taken as the command)\n",
		       a->command[0], a->command[0], a->command[0]);
		return -EINVAL;
	}
	if ((a->command != NULL) + (a->pids != NULL) + (a->tids != NULL) > 1 ||
	    (a->all && (a->pids || a->tids))) {
		pr_err("give one target: a command, -p PID, -t TID or -a (-a may come with a command)\n");
		return -EINVAL;
	}
	if (!a->command && !a->pids && !a->tids && !a->all && !a->dry_run) {
		pr_err("nothing to record: give a command after --, -p PID, -t TID or -a (see auxtrig record --help)\n");
		return -EINVAL;
	}
	return 0;
}

void record_args__exit(struct record_args *a)
{
	for (size_t i = 0; i < a->nr_events; i++)
		free(a->events[i]);
	free(a->events);
	free(a->windows);
	free(a->ons);
	free(a->trigger_progs);
	memset(a, 0, sizeof(*a));
}

/* ---- windows and events -------------------------------------------------------- */

/*
 * Probe points this machine cannot fire are refused before anything is
 * created, with what to use instead: asked of the capabilities (caps.h:
 * tried as auxtrig probe tries them, never assumed from a kernel version).
 */
static int point_available(const struct point *p, const char *opt, const char *text)
{
	if (p->kind == POINT_KPROBE || p->kind == POINT_KRETPROBE) {
		if (!caps__has(CAPS_KPROBE)) {
			pr_err("%s '%s': this kernel has no kprobes (auxtrig probe: bpf kprobe missing%s); use a syscall:NAME:enter, syscall:NAME:exit or tp:SYS:EVENT point instead\n",
			       opt, text, caps__switched_off(CAPS_KPROBE) ? ", reported so by " CAPS_OFF_ENV : "");
			return -EINVAL;
		}
	}
	if (p->kind == POINT_MEM) {
		if (!caps__has(CAPS_HW_BREAKPOINT)) {
			pr_err("%s '%s': hardware breakpoints do not fire on this machine (auxtrig probe: hw breakpoints missing%s); use uprobe:PATH:SYMBOL on the code that touches the memory instead\n",
			       opt, text, caps__switched_off(CAPS_HW_BREAKPOINT) ? ", reported so by " CAPS_OFF_ENV : "");
			return -EINVAL;
		}
	}
	return 0;
}

/* One end of a window: a tracepoint of the file, or a probe point this machine can fire. */
static int window_end_add(struct record_plan *p, const struct window_spec *w, const struct point *pt)
{
	int err;

	if (point__is_probe(pt))
		return point_available(pt, "--window", w->text);
	err = event_list__add_tp(&p->events, pt->sys, pt->name, 0);
	if (err == -ENOENT) {
		char near[512];

		point_catalog__suggest_point(pt, w->text, near, sizeof(near));
		pr_err("--window %s: unknown %s: there is no tracepoint %s:%s in %s/events%s\n", w->text,
		       !strcmp(pt->sys, "syscalls") ? "syscall" : "tracepoint", pt->sys, pt->name, tracefs__root(), near);
		return -EINVAL;
	}
	if (err < 0)
		pr_err("--window %s: cannot read %s:%s: %s\n", w->text, pt->sys, pt->name, strerror(-err));
	return err < 0 ? err : 0;
}

static int add_event_cb(const char *sys, const char *name, void *arg)
{
	int err = event_list__add_tp(arg, sys, name, GATE_TP_RECORD);

	return err < 0 ? err : 0;
}

static int own_event(struct record_plan *p, enum own_event which, unsigned int *type)
{
	int i = event_list__add_own(&p->events, which);

	if (i < 0)
		return i;
	if (type)
		*type = p->events.ev[i].fmt.id;
	return 0;
}

static int resolve_events(struct record_plan *p, const struct record_args *a)
{
	const char *root = tracefs__root();
	bool uprobes = false;
	int err;

	if (!root) {
		pr_err("tracefs is not mounted: mount it with 'mount -t tracefs nodev /sys/kernel/tracing' (or run 'make deps')\n");
		return -ENOENT;
	}
	if (p->nr_windows > GATE_MAX_WINDOWS) {
		pr_err("too many windows: %zu, at most %d\n", p->nr_windows, GATE_MAX_WINDOWS);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->nr_windows; i++) {
		const struct window_spec *w = &p->windows[i];

		if (w->kind == WINDOW_UPROBE) {
			uprobes = true;
			continue;
		}
		if (w->kind == WINDOW_PROG) {
			if (!p->nr_trigger_progs) {
				pr_err("--window prog: the window of a trigger program needs --trigger-prog\n");
				return -EINVAL;
			}
			continue;
		}
		err = window_end_add(p, w, &w->start);
		if (!err)
			err = window_end_add(p, w, &w->stop);
		if (err)
			return err;
	}
	for (size_t i = 0; i < a->nr_events; i++) {
		err = tracefs__expand(a->events[i], add_event_cb, &p->events);
		if (err == -EINVAL) {
			pr_err("-e %s: expected a tracepoint as SYSTEM:NAME (e.g. sched:sched_switch, syscalls:sys_enter_*)\n",
			       a->events[i]);
			return -EINVAL;
		}
		if (err == 0) {
			char near[512];

			point_catalog__suggest(POINT_NAMES_TRACEPOINT, NULL, a->events[i], "%s", near, sizeof(near));
			pr_err("-e %s: unknown tracepoint: nothing matches in %s/events%s\n", a->events[i], root,
			       near[0] ? near : " (list them with 'auxtrig list')");
			return -EINVAL;
		}
		if (err < 0) {
			pr_err("-e %s: %s\n", a->events[i], strerror(-err));
			return err;
		}
	}
	if (uprobes) {
		err = own_event(p, OWN_UPROBE_ENTER, &p->uprobe_enter_type);
		if (!err)
			err = own_event(p, OWN_UPROBE_EXIT, &p->uprobe_exit_type);
		if (err)
			return err;
	}
	return 0;
}

/* ---- --where ----------------------------------------------------------------- */

/*
 * --where is checked when a window would open: usually at an entry, where
 * every builtin is known except the return value. Windows that all open at
 * an exit point (syscall:NAME:exit.., uretprobe:..) know it.
 */
static int where_resolve(void *ctx, const char *name, struct expr_field *field, char *why, size_t why_size)
{
	const struct record_plan *p = ctx;
	bool at_exit = p->nr_windows > 0;

	for (size_t i = 0; i < p->nr_windows; i++)
		at_exit &= p->windows[i].kind == WINDOW_POINTS && p->windows[i].start.at_exit;
	if (!strcmp(name, "ret") && !at_exit) {
		snprintf(why, why_size, "'ret' is known only when a window ends, and --where is checked when it opens (unless every window opens at an exit point, like syscall:openat:exit..syscall:close:enter)");
		return -EINVAL;
	}
	if (!strcmp(name, "$duration")) {
		snprintf(why, why_size, "'$duration' is known only in --on conditions at exits (syscall:NAME:exit, uretprobe:); in --where, $elapsed");
		return -EINVAL;
	}
	return expr__resolve_builtin(name, field);
}

static int compile_where(struct record_plan *p)
{
	struct expr_compile_opts copts = { .resolve = where_resolve, .resolve_ctx = p };
	struct expr_prog *prog;
	char err[256];
	int ret;

	if (!p->where_text)
		return 0;
	if (!p->nr_windows) {
		pr_err("--where selects windows: give at least one --window\n");
		return -EINVAL;
	}
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return -ENOMEM;
	ret = expr__compile(p->where_text, &copts, prog, err, sizeof(err));
	if (ret) {
		char q[EXPR_QUOTE_MAX + 64];

		expr__quote(p->where_text, err, q, sizeof(q));
		pr_err("--where %s: %s\n", q, err);
		free(prog);
		return -EINVAL;
	}
	if (p->verbose >= 2)
		expr__dump(prog, stderr);
	p->where = prog;
	return 0;
}

/* ---- --on triggers ------------------------------------------------------------ */

/*
 * Fields a trigger's condition may name at its point: the builtins (ret only
 * at a syscall's exit, arguments only at its entry) and the tracepoint's own
 * fields by name. The common_* fields are not readable: the kernel has
 * overwritten them with a pt_regs pointer before BPF runs.
 */
static int on_resolve(void *ctx, const char *name, struct expr_field *field, char *why, size_t why_size)
{
	struct plan_trigger *on = ctx;
	int err;

	/*
	 * entry.argN, $duration: the call's entry, at a syscall's exit (the gate
	 * stamps the thread's entries) or at a uretprobe or kretprobe
	 * (gate_call_enter pushes the thread's calls of the function, so each
	 * return of a recursion has its own)
	 */
	bool call_exit = on->pt.kind == POINT_URETPROBE || on->pt.kind == POINT_KRETPROBE ||
			 (!point__is_probe(&on->pt) && on->pt.at_exit &&
			  (!strcmp(on->pt.sys, "syscalls") || !strcmp(on->pt.sys, "raw_syscalls")));

	if (!strncmp(name, "entry.", 6) || !strcmp(name, "$duration")) {
		if (!call_exit) {
			snprintf(why, why_size,
				 "'%s' is known only at a syscall's exit point (syscall:NAME:exit) or a return point (uretprobe:, kretprobe:)",
				 name);
			return -EINVAL;
		}
		if (name[0] == '$')
			return expr__resolve_builtin(name, field);
		if (strncmp(name + 6, "arg", 3) || name[9] < '0' || name[9] > '5' || name[10]) {
			snprintf(why, why_size, "'%s': an entry's values are entry.arg0..entry.arg5", name);
			return -EINVAL;
		}
		err = expr__resolve_builtin(name + 6, field);
		if (!err)
			on->t.entry_args = 1;
		return err;
	}
	err = expr__resolve_builtin(name, field);

	if (!err) {
		if (!strcmp(name, "ret") && !on->pt.at_exit) {
			snprintf(why, why_size, "'ret' is known only at a %s",
				 point__is_probe(&on->pt) ? "return point (uretprobe:, kretprobe:, syscall:NAME:exit)"
							  : "syscall's exit point (syscall:NAME:exit)");
			return -EINVAL;
		}
		if (!strncmp(name, "arg", 3) && !on->pt.at_enter) {
			snprintf(why, why_size, "'%s' is known only at %s", name,
				 point__is_probe(&on->pt) ? "an entry point (uprobe:, usdt:, kprobe:, syscall:NAME:enter)"
							  : "a syscall's entry point (syscall:NAME:enter)");
			return -EINVAL;
		}
		if (!strcmp(name, "nr") && point__is_probe(&on->pt)) {
			snprintf(why, why_size, "'nr' is known only at syscall points");
			return -EINVAL;
		}
		return 0;
	}
	return expr__resolve_tp_field(&on->fmt, name, field, why, why_size);
}

/* --on TEXT: its grammar (lang/on_spec.c), then the point resolved and the condition compiled. */
static int on_parse(const struct record_plan *plan, struct plan_trigger *on, const char *text)
{
	struct expr_compile_opts copts = { .resolve = on_resolve, .resolve_ctx = on };
	struct on_spec spec;
	char err[256];
	int ret;

	memset(on, 0, sizeof(*on));
	on->text = text;
	ret = on_spec__parse(&spec, text);
	if (ret)
		goto out;
	on->pt = spec.pt;
	on->t = spec.t;
	if (point__is_probe(&on->pt)) {
		ret = point_available(&on->pt, "--on", text);
		if (ret)
			goto out;
	} else {
		ret = tracefs__load_format(on->pt.sys, on->pt.name, &on->fmt);
		if (ret == -ENOENT) {
			char near[512];

			point_catalog__suggest_point(&on->pt, spec.point, near, sizeof(near));
			pr_err("--on '%s': unknown %s: there is no tracepoint %s:%s%s\n", text,
			       strcmp(on->pt.sys, "syscalls") ? "tracepoint" : "syscall", on->pt.sys, on->pt.name, near);
			ret = -EINVAL;
			goto out;
		}
		if (ret)
			goto out;
	}
	if (on->t.action == GATE_ACT_SNAPSHOT && !plan->snapshot) {
		pr_err("--on '%s': the snapshot action needs the flight recorder: add -S\n", text);
		ret = -EINVAL;
		goto out;
	}
	ret = on_spec__mark_values(&spec);
	if (ret)
		goto out;
	on->t = spec.t;
	if (spec.cond) {
		on->cond = calloc(1, sizeof(*on->cond));
		if (!on->cond) {
			ret = -ENOMEM;
			goto out;
		}
		ret = expr__compile(spec.cond, &copts, on->cond, err, sizeof(err));
		if (ret) {
			char qt[EXPR_QUOTE_MAX + 64], qc[EXPR_QUOTE_MAX + 64];

			expr__quote(text, NULL, qt, sizeof(qt));
			expr__quote(spec.cond, err, qc, sizeof(qc));
			pr_err("--on %s: condition %s: %s\n", qt, qc, err);
			ret = -EINVAL;
			goto out;
		}
	}
out:
	on_spec__exit(&spec);
	return ret;
}

static int resolve_triggers(struct record_plan *p, const struct record_args *a)
{
	int err;

	p->triggers = calloc(a->nr_ons ? a->nr_ons : 1, sizeof(*p->triggers));
	if (!p->triggers)
		return -ENOMEM;
	if (a->nr_ons > GATE_MAX_TRIGGERS) {
		pr_err("too many --on triggers: %zu, at most %d\n", a->nr_ons, GATE_MAX_TRIGGERS);
		return -EINVAL;
	}
	for (size_t i = 0; i < a->nr_ons; i++) {
		struct plan_trigger *on = &p->triggers[i];

		err = on_parse(p, on, a->ons[i]);
		p->nr_triggers++;
		if (err)
			return err;
		if (on->t.action == GATE_ACT_MARK && !p->mark_type) {
			err = own_event(p, OWN_MARK, &p->mark_type);
			if (err)
				return err;
		}
		if (on->t.action == GATE_ACT_STOP && !p->stop_type) {
			err = own_event(p, OWN_STOP, &p->stop_type);
			if (err)
				return err;
		}
		if ((on->t.action == GATE_ACT_RESUME || on->t.action == GATE_ACT_PAUSE) && !p->user_window) {
			p->user_window = true;
			err = own_event(p, OWN_RESUME, &p->resume_type);
			if (!err)
				err = own_event(p, OWN_PAUSE, &p->pause_type);
			if (err)
				return err;
		}
	}
	for (size_t i = 0; i < p->nr_triggers; i++) {
		if (!p->triggers[i].t.mark_str)
			continue;
		/* every mark of the run has the str field then; trigger programs' marks have not */
		if (p->nr_trigger_progs) {
			pr_err("--on '%s': mark(str(...)) cannot be combined with --trigger-prog (whose marks carry no "
			       "string): drop one of them\n", p->triggers[i].text);
			return -EINVAL;
		}
		err = event_list__own_as(&p->events, p->mark_type, OWN_MARK_STR);
		if (err)
			return err;
		break;
	}
	if (p->nr_triggers) {
		err = own_event(p, OWN_TRIGGER_STATS, NULL);
		if (err)
			return err;
	}
	/* Trigger programs may mark and stop too. */
	if (p->nr_trigger_progs && !p->mark_type) {
		err = own_event(p, OWN_MARK, &p->mark_type);
		if (err)
			return err;
	}
	if (p->nr_trigger_progs && !p->stop_type)
		return own_event(p, OWN_STOP, &p->stop_type);
	return 0;
}

/*
 * --min-duration/--max-duration: the gate times each thread's window, and
 * the recorder holds its records until the window closes.
 */
static int check_durations(const struct record_plan *p)
{
	const char *opt = p->min_duration ? "--min-duration" : "--max-duration";

	if (!p->min_duration && !p->max_duration) {
		if (p->hold_size) {
			pr_err("--hold-size bounds the records held for --min-duration or --max-duration; give one of them\n");
			return -EINVAL;
		}
		return 0;
	}
	if (p->max_duration && !p->max_duration_ns) {
		pr_err("--max-duration %s: a window lasts more than 0 ns\n", p->max_duration);
		return -EINVAL;
	}
	if (p->min_duration && p->max_duration && p->min_duration_ns > p->max_duration_ns) {
		pr_err("--min-duration %s is longer than --max-duration %s: no window could be written\n",
		       p->min_duration, p->max_duration);
		return -EINVAL;
	}
	if (!record_plan__has_windows(p)) {
		pr_err("%s selects windows by how long they lasted: give a --window (or an --on ...:resume)\n", opt);
		return -EINVAL;
	}
	if (p->aux_event) {
		pr_err("%s: hardware trace (-e %s) cannot be held back per window\n", opt, p->aux_event);
		return -EINVAL;
	}
	if (p->nr_trigger_progs) {
		pr_err("%s: windows of --trigger-prog programs are not timed yet\n", opt);
		return -EINVAL;
	}
	return 0;
}

/* ---- hardware trace ------------------------------------------------------------- */

/*
 * -e PMU/TERMS/MODS: the spec resolved against the PMUs of --sysfs-root (or
 * /sys) into the attr the recording opens, per CPU, for -m's AUX size and
 * -S: every refusal of the spec (no such PMU, not an AUX PMU, unknown term,
 * value, sink or modifier, a default perf refuses) is made here.
 */
static int resolve_aux(struct record_plan *p)
{
	struct aux_event_opts eo = {
		.snapshot = p->snapshot,
		.aux_mmap_size = p->aux_pages * sysconf(_SC_PAGESIZE),
	};
	int err;

	if (!p->aux_event)
		return 0;
	err = pmu__scan(p->sysfs_root, &p->pmus);
	if (err) {
		pr_err("cannot read the PMUs under %s: %s\n", p->sysfs_root ?: PMU_SYSFS_ROOT_DEFAULT, strerror(-err));
		return err;
	}
	p->aux = calloc(1, sizeof(*p->aux));
	if (!p->aux)
		return -ENOMEM;
	return aux_event__parse(p->aux, p->pmus, p->aux_event, &eo);
}

/* ---- targets and --control ------------------------------------------------------- */

/* "PID[,PID...]": numbers only; whether they run is the recorder's to find out. */
static int parse_pids(struct record_plan *p, const char *list, bool threads)
{
	char *copy = strdup(list), *tok, *save = NULL, *end;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		long v;
		pid_t *tmp;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > INT32_MAX) {
			err = -EINVAL;
			break;
		}
		tmp = realloc(p->pids, (p->nr_pids + 1) * sizeof(pid_t));
		if (!tmp) {
			err = -ENOMEM;
			break;
		}
		p->pids = tmp;
		p->pids[p->nr_pids++] = v;
	}
	free(copy);
	if (!err && !p->nr_pids)
		err = -EINVAL;
	if (err == -EINVAL)
		pr_err("%s %s: %s\n", threads ? "-t" : "-p", list, threads ? "expected TID[,TID...]" : "expected PID[,PID...]");
	p->threads = threads;
	p->pids_text = list;
	return err;
}

/* "fifo:CTL[,ACK]" or "fd:CTL[,ACK]". */
static int parse_control(struct plan_control *c, const char *spec)
{
	char *ack, *end;

	c->text = spec;
	c->ctl_fd = c->ack_fd = -1;
	if (!strncmp(spec, "fd:", 3)) {
		c->kind = PLAN_CONTROL_FD;
		c->ctl_fd = strtol(spec + 3, &end, 10);
		if (end == spec + 3 || (*end && *end != ',') || c->ctl_fd < 0)
			goto bad;
		if (*end == ',') {
			c->ack_fd = strtol(end + 1, &end, 10);
			if (*end || c->ack_fd < 0)
				goto bad;
		}
		return 0;
	}
	if (strncmp(spec, "fifo:", 5) || !spec[5])
		goto bad;
	c->kind = PLAN_CONTROL_FIFO;
	snprintf(c->ctl, sizeof(c->ctl), "%s", spec + 5);
	ack = strchr(c->ctl, ',');
	if (ack) {
		*ack++ = '\0';
		snprintf(c->ack, sizeof(c->ack), "%s", ack);
	}
	if (!c->ctl[0])
		goto bad;
	/* Whoever can write these drives the recording: refused now, before anything starts. */
	for (int i = 0; i < 2; i++) {
		const char *path = i ? c->ack : c->ctl;
		char why[PATH_MAX + 256];

		if (*path && control__check_path(path, why, sizeof(why))) {
			pr_err("--control %s: %s\n", spec, why);
			c->kind = PLAN_CONTROL_NONE;
			return -EINVAL;
		}
	}
	return 0;
bad:
	pr_err("--control %s: expected fifo:CTL[,ACK] or fd:CTL[,ACK] with open file descriptors\n", spec);
	c->kind = PLAN_CONTROL_NONE;
	c->ctl_fd = c->ack_fd = -1;
	return -EINVAL;
}

/* ---- the plan ------------------------------------------------------------------- */

static int record_plan__resolve(struct record_plan *p, struct record_args *a);

int record_plan__build(struct record_plan *p, struct record_args *a)
{
	return record_plan__resolve(p, a);
}

static int record_plan__resolve(struct record_plan *p, struct record_args *a)
{
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->windows = a->windows;
	p->nr_windows = a->nr_windows;
	a->windows = NULL;
	a->nr_windows = 0;
	p->trigger_progs = a->trigger_progs;
	p->nr_trigger_progs = a->nr_trigger_progs;
	a->trigger_progs = NULL;
	a->nr_trigger_progs = 0;
	p->where_text = a->where;
	p->min_duration = a->min_duration;
	p->max_duration = a->max_duration;
	p->min_duration_ns = a->min_duration_ns;
	p->max_duration_ns = a->max_duration_ns;
	p->hold_size = a->hold_size;
	p->aux_event = a->aux_event;
	p->sysfs_root = a->sysfs_root;
	p->command = a->command;
	p->all = a->all;
	p->mmap_pages = a->mmap_pages;
	p->aux_pages = a->aux_pages;
	p->snapshot = a->snapshot;
	p->snapshot_at_exit = a->snapshot_at_exit;
	p->callchain = a->callchain;
	p->output = a->output;
	p->force = a->force;
	p->control.ctl_fd = p->control.ack_fd = -1;
	p->dry_run = a->dry_run;
	p->verbose = a->verbose;
	p->quiet = a->quiet;
	p->full_argc = a->full_argc;
	p->full_argv = a->full_argv;

	/* In the order the recorder always found them: the first wrong thing is the one reported. */
	p->nr_possible = libbpf_num_possible_cpus();
	p->cpu_mask = calloc(p->nr_possible > 0 ? p->nr_possible : 1, sizeof(bool));
	if (p->nr_possible <= 0 || !p->cpu_mask)
		return p->nr_possible <= 0 ? p->nr_possible ?: -ENODEV : -ENOMEM;
	p->cpus_given = a->cpus != NULL;
	if (a->cpus && cpumap__parse(a->cpus, p->nr_possible, p->cpu_mask)) {
		pr_err("-C %s: expected a list of CPUs 0-%d like 0-3,6\n", a->cpus, p->nr_possible - 1);
		return -EINVAL;
	}
	for (int i = 0; !a->cpus && i < p->nr_possible; i++)
		p->cpu_mask[i] = true;
	if (p->sysfs_root) {
		char why[PATH_MAX + 128];

		if (pmu__check_root(p->sysfs_root, why, sizeof(why))) {
			pr_err("--sysfs-root %s\n", why);
			return -EINVAL;
		}
	}
	err = resolve_events(p, a);
	if (!err)
		err = compile_where(p);
	if (!err)
		err = resolve_triggers(p, a);
	if (!err)
		err = check_durations(p);
	if (!err)
		err = resolve_aux(p);
	if (err)
		return err;
	if (!p->events.nr && !p->aux_event) {
		pr_err("nothing to record: give --window, -e or an --on ...:mark (see auxtrig record --help)\n");
		return -EINVAL;
	}
	err = event_list__index(&p->events);
	if (!err && (a->pids || a->tids))
		err = parse_pids(p, a->pids ? a->pids : a->tids, a->tids != NULL);
	if (!err && a->control)
		err = parse_control(&p->control, a->control);
	return err;
}
