/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PLAN_H
#define AUXTRIG_PLAN_H

/*
 * record/ layer: the plan, what the recorder receives (user/record/plan.c frees it);
 * built from the command line by cmd/record_plan.c.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/lang/point.h"
#include "auxtrig/lang/window_spec.h"
#include "auxtrig/record/event_list.h"
#include "auxtrig/sys/tracefs.h"

/**
 * DOC: the plan of a recording
 *
 * Everything `auxtrig record` was asked to do, resolved: the command line is
 * parsed once (user/cmd/record_plan.c), every name looked up (tracepoints,
 * files), every condition compiled and every refusal made before the
 * recorder (user/record/recorder.c) sees it. The plan is data: the recorder
 * reads it and parses no string. The texts it keeps are for messages.
 */

struct aux_event;
struct expr_prog;
struct pmu_set;

/**
 * struct plan_trigger - one --on, resolved
 * @text:	as typed, for messages
 * @pt:		the point
 * @fmt:	a tracepoint point: its format (read from tracefs)
 * @t:		action, policy and delay, as the gate takes them
 * @cond:	the compiled condition, or NULL (always)
 */
struct plan_trigger {
	const char *text;
	struct point pt;
	struct tp_format fmt;
	struct gate_trigger t;
	struct expr_prog *cond;
};

/** enum plan_control_kind - --control: none, two FIFOs by path, or two open fds. */
enum plan_control_kind {
	PLAN_CONTROL_NONE,
	PLAN_CONTROL_FIFO,
	PLAN_CONTROL_FD,
};

/**
 * struct plan_control - --control fifo:CTL[,ACK] | fd:CTL[,ACK]
 * @kind:	PLAN_CONTROL_*
 * @ctl, @ack:	FIFO: the paths (@ack "" if none)
 * @ctl_fd, @ack_fd: FD: the descriptors (@ack_fd -1 if none)
 * @text:	as typed
 */
struct plan_control {
	enum plan_control_kind kind;
	char ctl[PATH_MAX], ack[PATH_MAX];
	int ctl_fd, ack_fd;
	const char *text;
};

/**
 * struct record_plan - one recording, resolved
 *
 * What is recorded:
 * @windows, @nr_windows:	-w, parsed
 * @events:			every event of the file: window-end tracepoints, -e
 *				events (GATE_TP_RECORD), auxtrig's own events, typed
 * @where, @where_text:		--where, compiled (NULL: none)
 * @triggers, @nr_triggers:	--on
 * @user_window:		an --on resumes or pauses: -e records only inside windows
 * @mark_type, @resume_type, @pause_type, @stop_type: record types of auxtrig:mark/resume/pause/stop (0: none)
 * @uprobe_enter_type, @uprobe_exit_type: those of auxtrig:uprobe_enter/exit (uprobe windows)
 * @trigger_progs, @nr_trigger_progs: --trigger-prog files
 * @min_duration_ns, @max_duration_ns: --min/--max-duration (0: none)
 * @min_duration, @max_duration: their texts, NULL if not given
 * @hold_size:			--hold-size: bytes held for their verdict (0: the default,
 *				WINDOW_HOLD_DEFAULT_LIMIT)
 * @aux_event:			-e PMU/TERMS/MODS as typed (for messages): hardware trace, or NULL
 * @aux:			that event resolved against @pmus for this recording (per
 *				CPU, -m's AUX size, -S): the attr to open, its PMU and sink
 * @pmus:			the PMUs of --sysfs-root (or /sys), read once (with @aux)
 * @sysfs_root:			--sysfs-root, or NULL
 *
 * Of whom, where:
 * @command:			argv after "--", or NULL
 * @pids, @nr_pids, @threads:	-p PIDs (or with @threads, -t TIDs)
 * @pids_text:			the -p/-t list as typed
 * @all:			-a
 * @cpu_mask, @nr_possible:	-C (every CPU by default), over the possible CPUs
 * @cpus_given:			-C was given
 *
 * Buffers and output:
 * @mmap_pages, @aux_pages:	-m N[,A]
 * @snapshot, @snapshot_at_exit: -S[e]
 * @output, @force:		-o, -f
 * @control:			--control
 * @dry_run, @verbose, @quiet:	--dry-run, -v, -q
 * @full_argc, @full_argv:	the whole command line, for the file's CMDLINE
 */
struct record_plan {
	struct window_spec *windows;
	size_t nr_windows;
	struct event_list events;
	struct expr_prog *where;
	const char *where_text;
	struct plan_trigger *triggers;
	size_t nr_triggers;
	bool user_window;
	unsigned int mark_type, resume_type, pause_type, stop_type;
	unsigned int uprobe_enter_type, uprobe_exit_type;
	char **trigger_progs;
	size_t nr_trigger_progs;
	unsigned long long min_duration_ns, max_duration_ns;
	const char *min_duration, *max_duration;
	unsigned long long hold_size;
	const char *aux_event;
	struct aux_event *aux;
	struct pmu_set *pmus;
	const char *sysfs_root;

	char **command;
	pid_t *pids;
	size_t nr_pids;
	bool threads;
	const char *pids_text;
	bool all;
	bool *cpu_mask;
	int nr_possible;
	bool cpus_given;

	size_t mmap_pages, aux_pages;
	bool snapshot, snapshot_at_exit;
	bool callchain;		/* -g: every gate record carries its thread's kernel and user stack */
	const char *output;
	bool force;
	struct plan_control control;
	bool dry_run;
	int verbose;
	bool quiet;
	int full_argc;
	char **full_argv;
};

/** record_plan__has_windows() - are there windows (-w, or --on resume/pause)? */
static inline bool record_plan__has_windows(const struct record_plan *p)
{
	return p->nr_windows || p->user_window;
}

/** record_plan__exit() - free what the plan owns; the strings it borrows from argv stay. */
void record_plan__exit(struct record_plan *p);

#endif
