/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_INTERNAL_GATE_H
#define AUXTRIG_INTERNAL_GATE_H

/*
 * record/ layer, inside the gate loader: the whole struct gate, which
 * auxtrig/record/gate.h keeps opaque, and what the loader's files call of
 * each other: gate.c (configured from the plan), gate_load.c (loaded),
 * gate_attach.c (tracepoints attached), gate_probe.c (probe points
 * attached), gate_describe.c (--dry-run -v). Only they include this, as
 * libperf's include/internal/ headers.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/lang/bpf_asm.h"
#include "auxtrig/lang/point.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/record/gate_front.h"
#include "auxtrig/sys/func_type.h"
#include "auxtrig/sys/tracefs.h"

struct gate_tp_entry {
	__u32 id;
	char system[TP_NAME_MAX];
	char name[TP_NAME_MAX];
	struct gate_tp tp;
};

struct gate {
	struct progress *progress;	/* a terminal's status line, or NULL */
	int detach_sigfd;		/* a signalfd whose SIGINT/TERM/HUP ends the wait for the detach, -1: none */
	bool detach_note;		/* not on a terminal: say a long detach in one line */
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


/* gate.c: the shared program of a probe point's kind. */
struct bpf_program *gate__point_prog(const struct gate *g, enum point_kind kind);

/* gate_load.c: can a tracepoint's own program (gate_front.h) run its triggers, record it? */
bool gate__tp_front_eligible(const struct gate_tp *tp);
bool gate__tp_record_eligible(const struct gate *g, const struct gate_tp *tp);

/* gate_attach.c: links and fds the gate closes; the own programs' common spec, task offsets, load. */
int gate__add_link(struct gate *g, struct bpf_link *link);
/* user/record/gate_detach.c: destroys @g's links and closes its kept fds. */
void gate__detach_all(struct gate *g);
int gate__keep_fd(struct gate *g, int fd);
void gate__front_spec_init(const struct gate *g, struct gate_front_spec *spec);
int gate__front_task(struct gate *g, struct gate_front_spec *spec, char *why, size_t why_size);
int gate__load_front(struct gate *g, struct bpf_asm *a, int err, enum bpf_prog_type type, const char *name,
		     size_t *nr, char *why, size_t why_size);
/* Does every tracepoint run its own program (the shared gate_tracepoint then need not load)? */
bool gate__tps_all_own(struct gate *g);
/* The tracepoints in the order they attach (tp_attach_pass()). */
void gate__tp_attach_order(const struct gate *g, size_t *order);

/* gate_probe.c: probe point @n attached; a point's or uprobe window's own program; trigger-only points. */
int gate__attach_point(struct gate *g, size_t n);
int gate__attach_probe_front(struct gate *g, const struct gate_point *pt, const struct gate_uprobe *u, char *why,
			     size_t why_size);
bool gate__probe_trig_only(struct gate *g, const struct gate_point *pt);

#endif
