/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_RECORD_H
#define AUXTRIG_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/lang/point.h"
#include "auxtrig/sys/tracefs.h"

/**
 * struct window_spec - one --window: a start point and a stop point
 * @text:	as the user typed it, for messages
 * @kind:	WINDOW_*
 * @start, @stop: the points (include/auxtrig/lang/point.h); WINDOW_UPROBE: @start
 *		is the function, whose return closes the window
 */
enum window_kind {
	WINDOW_SYSCALL,		/* syscall:NAME or syscall:*: a syscall's entry to its exit */
	WINDOW_UPROBE,		/* uprobe:PATH:SYMBOL[+OFF]: the call, entry to return */
	WINDOW_POINTS,		/* START..STOP: from one point to another, per thread */
	WINDOW_PROG,		/* prog: opened and closed by trigger programs (auxtrig_resume/pause) */
};

struct window_spec {
	const char *text;
	enum window_kind kind;
	struct point start, stop;
};

/**
 * struct record_opts - everything `auxtrig record` was asked to do. Filled by
 * user/cmd/record.c from the command line, read by user/record/recorder.c.
 */
struct record_opts {
	struct window_spec *windows;
	size_t nr_windows;
	char **events;		/* -e specs, one tracepoint pattern each */
	size_t nr_events;
	const char *where;	/* --where EXPR or NULL */
	char **ons;		/* --on POINT [if EXPR]:ACTION[,POLICY] */
	size_t nr_ons;
	char **trigger_progs;	/* --trigger-prog FILE.bpf.o|.bpf.c */
	size_t nr_trigger_progs;
	const char *output;	/* -o, default "auxtrig.data" */
	bool force;		/* -f */
	const char *pids;	/* -p list, or NULL */
	const char *tids;	/* -t list, or NULL */
	bool all;		/* -a: every process */
	const char *cpus;	/* -C list, or NULL: every CPU */
	char **command;		/* argv after "--", NULL-terminated */
	size_t mmap_pages;	/* -m, per-CPU data ring pages */
	size_t aux_pages;	/* -m ,AUX: per-CPU AUX area pages (hardware trace) */
	bool snapshot;		/* -S: flight recorder (overwrite rings) */
	bool snapshot_at_exit;	/* -S e...: one more snapshot at the end */
	const char *control;	/* --control fifo:CTL[,ACK] | fd:CTL[,ACK] */
	const char *aux_event;	/* -e PMU/terms/mods: hardware trace through the AUX area */
	bool dry_run;		/* --dry-run: print what would be opened, open nothing */
	const char *sysfs_root;	/* --sysfs-root: PMU discovery elsewhere (tests, fixtures) */
	const char *min_duration;	/* --min-duration T: write only windows that lasted >= T */
	const char *max_duration;	/* --max-duration T: write only windows that lasted <= T */
	unsigned long long min_duration_ns, max_duration_ns;	/* the same, parsed */
	unsigned long long hold_size;	/* --hold-size: bytes held for their verdict; 0 = default */
	int verbose;
	bool quiet;
	int full_argc;		/* the whole command line, for the file's CMDLINE */
	char **full_argv;
};

/**
 * window_spec__parse() - "syscall:NAME", "syscall:*", "uprobe:PATH:SYMBOL[+OFF]",
 * "prog" or "START..STOP" with any two points (include/auxtrig/lang/point.h).
 * Return: 0 or -EINVAL with a message printed.
 */
int window_spec__parse(struct window_spec *w, const char *text);

/** recorder__run() - record as @opts say. Return: a process exit code (cmd.h). */
int recorder__run(const struct record_opts *opts);

struct aux_session_ops;

/**
 * recorder__run_with() - recorder__run() with hardware trace (-e PMU//)
 * opened through @aux_ops, the kernel as the AUX session sees it
 * (aux_session.h); NULL = the running kernel. The same code runs either way:
 * tests hand in a model of the kernel's AUX ring for PMUs this machine lacks.
 */
int recorder__run_with(const struct record_opts *opts, const struct aux_session_ops *aux_ops);

#endif
