/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CMD_RECORD_PLAN_H
#define AUXTRIG_CMD_RECORD_PLAN_H

/*
 * cmd/ layer: `auxtrig record`'s command line into a plan (user/cmd/record_plan.c):
 * the one place options are parsed; the plan it builds is record/plan.h's.
 */

#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/record/plan.h"


/**
 * DOC: `auxtrig record`'s command line, into a plan
 *
 *   record_args__parse()   the options, as text (getopt; syntax of the
 *                          simple values: -m, -S, durations, -w)
 *   record_plan__build()   everything else, in one place: tracepoints and
 *                          files looked up, --where and --on compiled, -C,
 *                          -p/-t and --control parsed, every refusal made
 *   recorder__run()        records the plan (include/auxtrig/record/recorder.h)
 */

/**
 * struct record_args - the command line as text, between the two steps
 * Fields are borrowed from argv unless said otherwise.
 */
struct record_args {
	struct window_spec *windows;	/* owned */
	size_t nr_windows;
	char **events;			/* -e tracepoint patterns, owned */
	size_t nr_events;
	const char *aux_event;		/* -e PMU/TERMS/MODS */
	const char *where;
	const char **ons;		/* owned array */
	size_t nr_ons;
	char **trigger_progs;		/* owned array */
	size_t nr_trigger_progs;
	const char *output;
	bool force;
	const char *pids, *tids;
	bool all;
	const char *cpus;
	char **command;
	size_t mmap_pages, aux_pages;
	bool snapshot, snapshot_at_exit;
	bool callchain;			/* -g: call stacks on the gate's records */
	const char *control;
	bool dry_run;
	const char *sysfs_root;
	const char *min_duration, *max_duration;
	unsigned long long min_duration_ns, max_duration_ns;
	unsigned long long hold_size;	/* --hold-size, bytes; 0: not given */
	int verbose;
	bool quiet;
	bool help;			/* -h: print the usage, nothing else */
	int full_argc;
	char **full_argv;
};

/**
 * record_args__parse() - `record OPTIONS [-- COMMAND]` (@argv[0] is "record").
 * Return: 0 (with @a->help set for -h), or -EINVAL with a message printed.
 */
int record_args__parse(struct record_args *a, int argc, char **argv);

/** record_args__exit() - free what record_args__parse() allocated. */
void record_args__exit(struct record_args *a);

/**
 * record_plan__build() - resolve @a into @p. The plan takes the windows and
 * the trigger-program list from @a (@a keeps its strings alive).
 * Return: 0, or -errno with a message printed: -EINVAL, -ENOENT, -ERANGE
 * (the user's input: exit 2), others (exit 1).
 */
int record_plan__build(struct record_plan *p, struct record_args *a);

#endif
