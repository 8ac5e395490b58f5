// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig list [GLOB]`: the points and events this machine offers, one a
 * line, as the point grammar and -e write them (like perf list, bpftrace -l).
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/lang/point_catalog.h"
#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/sys/probe.h"
#include "auxtrig/sys/tracefs.h"

struct list_opts {
	const char *glob;
	const char *sysfs_root;
	const char *tracefs_root;
	bool names;		/* names only: for scripts and completion */
	bool all_kprobes;
};

struct list_out {
	const struct list_opts *o;
	unsigned long n;
};

static void list__line(struct list_out *out, const char *name, const char *what)
{
	out->n++;
	if (out->o->names)
		printf("%s\n", name);
	else
		printf("%-44s [%s]\n", name, what);
}

static int list__point(const char *point, const char *kind, void *arg)
{
	list__line(arg, point, kind);
	return 0;
}

static void list__usage(FILE *f)
{
	fprintf(f,
		"USAGE: auxtrig list [--names] [GLOB]\n"
		"       auxtrig list usdt:PATH[:GLOB] | uprobe:PATH[:GLOB]\n"
		"\n"
		"List the points (--on, -w) and events (-e) this machine offers, one a line,\n"
		"as auxtrig writes them: syscall:NAME, tp:SYSTEM:EVENT, the PMUs (hardware\n"
		"trace PMUs with -e NAME//), and whether kprobe:/kretprobe: and mem: points\n"
		"can fire here. GLOB is a shell glob over the names (tracepoints match by\n"
		"SYSTEM:EVENT too). usdt:PATH lists the USDT probes of a binary, uprobe:PATH\n"
		"its functions. Exit status 1 when nothing matches.\n"
		"\n"
		"OPTIONS:\n"
		"  --names            names only, no kinds (for scripts)\n"
		"  -v, --verbose      debug messages\n"
		"  -h, --help         this help\n"
		"\n"
		"TESTING:\n"
		"  --sysfs-root DIR   PMUs under DIR/bus/event_source/devices instead of /sys\n"
		"  --tracefs DIR      tracepoints under DIR/events instead of the mounted tracefs\n"
		"\n"
		"EXAMPLES:\n"
		"  auxtrig list 'syscall:open*'\n"
		"  auxtrig list 'sched:*'\n"
		"  auxtrig list usdt:./build/examples/usdt_demo\n"
		"  auxtrig list 'uprobe:/bin/bash:*readline*'\n");
}

/* kprobe:SYMBOL from available_filter_functions, when kprobes fire here. */
static int list__kprobes(struct list_out *out, const char *glob)
{
	const char *root = tracefs__root();
	const char *kind = !strncmp(glob, "kretprobe:", 10) ? "kretprobe" : "kprobe";
	char path[PATH_MAX], line[512], point[600];
	FILE *f;

	if (!root)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/available_filter_functions", root);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = '\0';
		snprintf(point, sizeof(point), "%s:%s", kind, line);
		if (line[0] && !fnmatch(glob, point, 0))
			list__line(out, point, kind);
	}
	fclose(f);
	return 0;
}

/* The PMUs, AUX ones with how to record them and whether they pause in the kernel. */
static int list__pmus(struct list_out *out, const char *glob)
{
	struct pmu_set *set = NULL;
	int err = pmu__scan(out->o->sysfs_root, &set);

	if (err)
		return err;
	for (size_t i = 0; i < set->nr; i++) {
		const struct pmu *p = set->pmus[i];
		char name[300], what[300];

		snprintf(name, sizeof(name), "%s//", p->name);
		if (glob && fnmatch(glob, name, 0) && fnmatch(glob, p->name, 0))
			continue;
		if (p->aux) {
			enum probe_pause pause = out->o->sysfs_root ? PROBE_PAUSE_UNKNOWN
					       : probe__aux_pmu_pause(p, &probe_ops__kernel, NULL);

			snprintf(what, sizeof(what), "hardware trace PMU: -e %s//; pauses in the kernel: %s", p->name,
				 pause == PROBE_PAUSE_YES ? "yes" : pause == PROBE_PAUSE_UNKNOWN ? "unknown (auxtrig probe)"
											: "no, windows gated from userspace");
		} else {
			snprintf(what, sizeof(what), "PMU, type %u", p->type);
		}
		list__line(out, name, what);
	}
	pmu_set__delete(set);
	return 0;
}

/* What cannot be listed by name: probes that need a file, kprobes, breakpoints. */
static void list__kinds(struct list_out *out, const char *glob)
{
	char what[256];

	for (size_t i = 0; i < point_nr_syntaxes; i++) {
		const struct point_syntax *s = &point_syntaxes[i];

		if (glob && fnmatch(glob, s->prefix, 0) && strncmp(glob, s->prefix, strlen(s->prefix)))
			continue;
		if (!strcmp(s->prefix, "uprobe:") || !strcmp(s->prefix, "usdt:")) {
			snprintf(what, sizeof(what), "%s; list them: auxtrig list %sPATH", s->what, s->prefix);
		} else if (!strcmp(s->prefix, "kprobe:") || !strcmp(s->prefix, "kretprobe:")) {
			snprintf(what, sizeof(what), "%s; %s%s", s->what,
				 caps__has(CAPS_KPROBE) ? "fires here (auxtrig list 'kprobe:GLOB' lists them)"
							: "not on this machine: this kernel has no kprobes",
				 caps__switched_off(CAPS_KPROBE) ? " (reported so by " CAPS_OFF_ENV ")" : "");
		} else if (!strcmp(s->prefix, "mem:")) {
			snprintf(what, sizeof(what), "%s; %s%s", s->what,
				 caps__has(CAPS_HW_BREAKPOINT) ? "fires here" : "not on this machine: hardware breakpoints do not fire",
				 caps__switched_off(CAPS_HW_BREAKPOINT) ? " (reported so by " CAPS_OFF_ENV ")" : "");
		} else {
			continue;
		}
		list__line(out, s->syntax, what);
	}
}

static int list__run(const struct list_opts *o)
{
	struct list_out out = { .o = o };
	const char *g = o->glob;
	bool in_file = g && (!strncmp(g, "usdt:", 5) || !strncmp(g, "uprobe:", 7) || !strncmp(g, "uretprobe:", 10));
	bool kprobe = g && (!strncmp(g, "kprobe:", 7) || !strncmp(g, "kretprobe:", 10));
	int err;

	if (in_file) {
		err = point_catalog__foreach(g, list__point, &out);
		if (err == -EINVAL) {
			pr_err("list %s: expected %.*sPATH[:GLOB]\n", g, (int)(strchr(g, ':') - g + 1), g);
			return EXIT_USAGE;
		}
		if (err < 0) {
			pr_err("list %s: cannot read %s: %s\n", g, strchr(g, ':') + 1,
			       err == -ENOENT ? "no such file" : err == -ENOEXEC ? "not an ELF file" :
			       err == -ENODEV ? "not an ELF file (not even a regular file)" : strerror(-err));
			return EXIT_RUNTIME;
		}
	} else if (kprobe && !o->names && caps__has(CAPS_KPROBE)) {
		err = list__kprobes(&out, g);
		if (err)
			pr_warn("cannot read the kernel's function list: %s\n", strerror(-err));
	} else if (!kprobe) {
		err = point_catalog__foreach(g, list__point, &out);
		if (err == -ENOENT)
			pr_warn("tracefs is not mounted: no syscalls or tracepoints to list (mount it with 'mount -t tracefs nodev /sys/kernel/tracing', or run 'make deps')\n");
		else if (err < 0)
			pr_warn("cannot list tracepoints: %s\n", strerror(-err));
		err = list__pmus(&out, g);
		if (err)
			pr_warn("cannot read PMUs: %s\n", strerror(-err));
	}
	if (!o->names && !in_file)
		list__kinds(&out, g);
	if (!out.n) {
		char near[512] = "";
		const char *colon = g ? strchr(g, ':') : NULL;

		if (g && !strncmp(g, "syscall:", 8))
			point_catalog__suggest(POINT_NAMES_SYSCALL, NULL, g + 8, "syscall:%s", near, sizeof(near));
		else if (g && !strncmp(g, "tp:", 3))
			point_catalog__suggest(POINT_NAMES_TRACEPOINT, NULL, g + 3, "tp:%s", near, sizeof(near));
		else if (colon && !in_file && !kprobe)
			point_catalog__suggest(POINT_NAMES_TRACEPOINT, NULL, g, "%s", near, sizeof(near));
		pr_err("list: nothing matches '%s'%s\n", g ? g : "*", near);
		return EXIT_RUNTIME;
	}
	return fflush(stdout) ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "names", no_argument, NULL, 'n' },
		{ "sysfs-root", required_argument, NULL, 'S' },
		{ "tracefs", required_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct list_opts o = { 0 };
	int c, verbose = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o.names = true;
			break;
		case 'S':
			o.sysfs_root = optarg;
			break;
		case 'T':
			o.tracefs_root = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			list__usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "USAGE: auxtrig list [--names] [GLOB] (try: auxtrig list --help)\n");
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		pr_err("list: one GLOB at most, got '%s' and '%s' (quote a glob: 'sched:*')\n", argv[optind],
		       argv[optind + 1]);
		return EXIT_USAGE;
	}
	o.glob = optind < argc ? argv[optind] : NULL;
	if (verbose)
		log__set_level(LOG_INFO + verbose);
	log__route_libbpf();
	if (o.tracefs_root)
		tracefs__set_root(o.tracefs_root);
	return list__run(&o);
}
