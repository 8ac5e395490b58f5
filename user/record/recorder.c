// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recorder: one `auxtrig record` session, software backend.
 *
 *   resolve tracepoints -> load the gate -> fork the command (held) ->
 *   open per-CPU perf events and mmap their rings -> attach -> create the
 *   output file -> arm -> start the command -> drain rings until it exits or
 *   a signal arrives -> disarm -> final drain -> finish the file -> summary
 *
 * Per CPU there is one ring: the bpf-output event the gate writes records to,
 * and the sideband (dummy) events of the targets redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT, so one pass over NR_CPUS rings sees everything.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "auxtrig/record/attr_print.h"
#include "auxtrig/record/aux_event.h"
#include "auxtrig/record/aux_session.h"
#include "auxtrig/cmd/cmd.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/sys/probe.h"
#include "auxtrig/sys/cpumap.h"
#include "auxtrig/record/data_ring.h"
#include "auxtrig/sys/elf_sym.h"
#include "auxtrig/lang/expr.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/record/record.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/sys/target.h"
#include "auxtrig/sys/tracefs.h"
#include "auxtrig/format/tracing_data.h"
#include "auxtrig/record/trigger_prog.h"
#include "auxtrig/lang/duration.h"
#include "auxtrig/record/window_hold.h"
#include "uapi/linux/perf_event_aux.h"

/*
 * A PDATA_SAMPLE_TYPE sample: header, id, ip, pid/tid, time, cpu/res, period,
 * u32 raw size, raw bytes, padding to 8. The gate's raw bytes are a struct
 * gate_out_hdr (the IP perf would have sampled, the window, flags) followed by
 * the tracepoint record.
 */
#define SAMPLE_ID_OFF offsetof(struct pdata_sample_head, id)
#define SAMPLE_IP_OFF offsetof(struct pdata_sample_head, ip)
#define SAMPLE_RAW_SIZE_OFF sizeof(struct pdata_sample_head)
#define SAMPLE_RAW_OFF (SAMPLE_RAW_SIZE_OFF + 4)
#define GATE_HDR_SIZE sizeof(struct gate_out_hdr)
_Static_assert(sizeof(struct gate_out_hdr) == 16, "gate_out_hdr");

/* Flight-recorder mode: per-CPU pages of the separate, streamed sideband ring. */
#define SIDEBAND_PAGES 16

/*
 * Records the gate emits are samples of the bpf-output event; in the file they
 * belong to the tracepoint they came from. Those ids are ours: no kernel event
 * has them, and they are far above what the kernel's counter reaches.
 */
#define TP_ID_BASE (1ULL << 56)
#define MARKER_ID (TP_ID_BASE - 1)

/*
 * auxtrig's own event in the file: one sample per snapshot, so perf script
 * shows when each snapshot was taken, why, and how much it held. It is
 * described like a tracepoint (its format travels in the file's tracing data
 * under the system name "auxtrig"); its type id is one no tracepoint in the
 * file uses.
 */
#define MARKER_FORMAT \
	"name: snapshot\n" \
	"ID: %u\n" \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n" \
	"\n" \
	"\tfield:unsigned int nr;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned int cpus;\toffset:12;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned long records;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:char reason[16];\toffset:24;\tsize:16;\tsigned:0;\n" \
	"\tfield:int tid;\toffset:40;\tsize:4;\tsigned:1;\n" \
	"\tfield:long value;\toffset:48;\tsize:8;\tsigned:1;\n" \
	"\n" \
	"print fmt: \"nr=%%u reason=%%s records=%%lu tid=%%d value=%%ld\", REC->nr, REC->reason, REC->records, REC->tid, REC->value\n"

struct marker_record {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 nr;
	__u32 cpus;
	__u64 records;
	char reason[16];
	__s32 tid;	/* the thread that fired the trigger, or 0 */
	__u32 __pad;
	__s64 value;	/* the return value that made the condition true, or 0 */
};

struct rec_tp {
	struct tp_format fmt;
	__u64 id;		/* the id samples of this tracepoint carry in the file */
	__u64 open_mask, close_mask;
	__u32 flags;
	__u64 written;
	char *own_format;	/* auxtrig's own event: its format text; not attached */
};

/* Formats of auxtrig's own window events (uprobe windows); %u is the type id. */
#define OWN_COMMON \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" \
	"\tfield:unsigned int window;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned int depth;\toffset:12;\tsize:4;\tsigned:0;\n"
#define UPROBE_ENTER_FORMAT \
	"name: uprobe_enter\nID: %u\nformat:\n" OWN_COMMON \
	"\tfield:unsigned long arg0;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg1;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg2;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg3;\toffset:40;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg4;\toffset:48;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg5;\toffset:56;\tsize:8;\tsigned:0;\n\n" \
	"print fmt: \"window=%%u depth=%%u arg0=0x%%lx arg1=0x%%lx arg2=0x%%lx\", REC->window, REC->depth, " \
	"REC->arg0, REC->arg1, REC->arg2\n"
#define UPROBE_EXIT_FORMAT \
	"name: uprobe_exit\nID: %u\nformat:\n" OWN_COMMON \
	"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n" \
	"print fmt: \"window=%%u depth=%%u ret=%%ld\", REC->window, REC->depth, REC->ret\n"


struct cpu_slot {
	int cpu;
	int out_fd;		/* bpf-output event: owns the ring */
	__u64 out_id;
	struct data_ring ring;	/* forward, or overwrite in snapshot mode */
	bool mapped;
	int side_fd;		/* snapshot mode: first sideband event, owns side_ring */
	struct data_ring side_ring;
	bool side_mapped;
};

struct session {
	const struct record_opts *opts;
	struct rec_tp *tps;
	size_t nr_tps;
	__u64 *tp_by_type;	/* common_type -> index + 1 into tps, 0 if none */
	size_t tp_by_type_len;
	struct gate *gate;
	struct expr_prog *where;
	struct target target;
	bool have_target;
	struct cpu_slot *cpus;
	size_t nr_cpus;
	int nr_possible;
	bool *cpu_mask;		/* -C: CPUs to record on (all by default) */
	int *side_fds;		/* dummy sideband events */
	__u64 *side_ids;
	size_t nr_side;
	struct pdata_writer *w;
	int epfd, sigfd;
	int ctl_fd, ack_fd;	/* --control */
	bool created_file;
	bool stop;
	bool snapshot_mode;	/* -S: flight recorder */
	bool salvaged;		/* a write error cut the file short */
	bool have_uprobes;	/* uprobe windows: auxtrig's own enter/exit events */
	unsigned int mark_type;	/* auxtrig:mark's type, if an --on marks */
	struct on_spec *ons;	/* --on triggers */
	size_t nr_ons;
	bool user_window;	/* an --on resumes or pauses: -e records only inside windows */
	unsigned int resume_type, pause_type;	/* auxtrig:resume / auxtrig:pause */
	struct gate_ctl_msg snapshot_msg;	/* a delayed snapshot trigger (snapshot+T)... */
	__u64 snapshot_due;	/* ...due at this CLOCK_MONOTONIC ns, 0: none */
	__u64 stop_due;		/* stop+T: the run ends at this CLOCK_MONOTONIC ns, 0: none */
	struct window_hold *hold;	/* --min/--max-duration: records of open windows */
	__u64 written_max;	/* newest record time written to the file */
	__u64 fr_max_time;	/* written_max when the last FINISHED_ROUND was written */
	bool round_held;	/* a FINISHED_ROUND was held back for held records */
	const struct gate_ctl_msg *firing;	/* the trigger a snapshot answers, or NULL */
	bool stop_requested;
	struct aux_session *aux;	/* -e PMU/../: hardware trace */
	const struct aux_session_ops *aux_ops;	/* its kernel: NULL = the running one */
	enum probe_pause aux_pause;	/* can the AUX PMU pause/resume in the kernel? */
	bool aux_edges;		/* no: the gate signals window edges, auxtrig gates the trace */
	const char *aux_prog_gated;	/* a -w prog window or a conditional --on resume/pause moved the
					 * windows to userspace gating: why */
	char aux_prog_why[256];
	bool aux_veto;		/* --where on in-kernel uprobe windows: BPF programs veto their members */
	const char *aux_where_gated;	/* --where moved the windows to userspace gating: this window's fault */
	struct trigger_prog **progs;	/* --trigger-prog */
	size_t nr_progs;
	__u64 prog_fired;
	unsigned int marker_type;	/* tracepoint-style type id of auxtrig:snapshot */
	char *marker_format;
	__u64 last_time;	/* newest sample time seen */
	unsigned long nr_snapshots;
	__u64 snapshot_records;
	/* summary */
	__u64 written, lost_kernel, lost_kernel_side, unknown;
	int signo;
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

/* ---- tracepoints ---------------------------------------------------------- */

static struct rec_tp *tp_find(struct session *s, const char *sys, const char *name)
{
	for (size_t i = 0; i < s->nr_tps; i++)
		if (!strcmp(s->tps[i].fmt.system, sys) && !strcmp(s->tps[i].fmt.name, name))
			return &s->tps[i];
	return NULL;
}

static int tp_add(struct session *s, const char *sys, const char *name, __u64 open_mask, __u64 close_mask,
		  __u32 flags, struct rec_tp **out)
{
	struct rec_tp *tp = tp_find(s, sys, name), *tmp;
	int err;

	if (!tp) {
		tmp = realloc(s->tps, (s->nr_tps + 1) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		s->tps = tmp;
		tp = &s->tps[s->nr_tps];
		memset(tp, 0, sizeof(*tp));
		err = tracefs__load_format(sys, name, &tp->fmt);
		if (err)
			return err;
		tp->id = TP_ID_BASE + s->nr_tps;
		s->nr_tps++;
	}
	tp->open_mask |= open_mask;
	tp->close_mask |= close_mask;
	tp->flags |= flags;
	if (out)
		*out = tp;
	return 0;
}

/* auxtrig:mark, and auxtrig:resume / auxtrig:pause (the edges of --on resume/pause windows). */
#define MARK_FORMAT MARK_LIKE_FORMAT("mark")
#define MARK_LIKE_FORMAT(NAME) \
	"name: " NAME "\nID: %u\nformat:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" \
	"\tfield:unsigned int trigger;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:int nr;\toffset:12;\tsize:4;\tsigned:1;\n" \
	"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n" \
	"\tfield:unsigned long arg0;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg1;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg2;\toffset:40;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg3;\toffset:48;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg4;\toffset:56;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg5;\toffset:64;\tsize:8;\tsigned:0;\n\n" \
	"print fmt: \"trigger=%%u nr=%%d ret=%%ld arg0=0x%%lx arg1=0x%%lx arg2=0x%%lx\", REC->trigger, REC->nr, " \
	"REC->ret, REC->arg0, REC->arg1, REC->arg2\n"

/* auxtrig:trigger_stats: one --on's counters, written at the end of the run. */
struct gate_trigger_stats_rec {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 trigger;
	__u32 __pad;
	__u64 evaluated, matched, fired, suppressed, dropped;
};

#define TRIGGER_STATS_FORMAT \
	"name: trigger_stats\nID: %u\nformat:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" \
	"\tfield:unsigned int trigger;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned long evaluated;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long matched;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long fired;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long suppressed;\toffset:40;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long dropped;\toffset:48;\tsize:8;\tsigned:0;\n\n" \
	"print fmt: \"trigger=%%u evaluated=%%lu matched=%%lu fired=%%lu suppressed=%%lu dropped=%%lu\", " \
	"REC->trigger, REC->evaluated, REC->matched, REC->fired, REC->suppressed, REC->dropped\n"

/* A type id that no tracepoint in use has, from 65000 up. */
static unsigned int own_type(const struct session *s, unsigned int after)
{
	unsigned int t = after < 65000 ? 65000 : after + 1;

	for (;;) {
		bool used = false;

		for (size_t i = 0; i < s->nr_tps; i++)
			used |= s->tps[i].fmt.id == t;
		if (!used)
			return t;
		t++;
	}
}

/* An event of auxtrig's own, described to perf like a tracepoint. */
static int add_own_event(struct session *s, const char *name, const char *format, unsigned int size)
{
	/* Before the realloc, which may move s->tps. */
	unsigned int type = own_type(s, s->nr_tps ? s->tps[s->nr_tps - 1].fmt.id : 0);
	struct rec_tp *tmp = realloc(s->tps, (s->nr_tps + 1) * sizeof(*tmp)), *tp;

	if (!tmp)
		return -ENOMEM;
	s->tps = tmp;
	tp = &s->tps[s->nr_tps];
	memset(tp, 0, sizeof(*tp));
	snprintf(tp->fmt.system, sizeof(tp->fmt.system), "auxtrig");
	snprintf(tp->fmt.name, sizeof(tp->fmt.name), "%s", name);
	tp->fmt.id = type;
	tp->fmt.size = size;
	if (asprintf(&tp->own_format, format, type) < 0)
		return -ENOMEM;
	tp->id = TP_ID_BASE + s->nr_tps;
	s->nr_tps++;
	return 0;
}

static int add_event_cb(const char *sys, const char *name, void *arg)
{
	return tp_add(arg, sys, name, 0, 0, GATE_TP_RECORD, NULL);
}

/*
 * Probe points this machine cannot fire are refused before anything is
 * created, with what to use instead: tried as auxtrig probe tries them,
 * never assumed from a kernel version.
 */
static int point_available(const struct point *p, const char *opt, const char *text)
{
	static int kprobes = -1, breakpoints = -1;

	if (p->kind == POINT_KPROBE || p->kind == POINT_KRETPROBE) {
		if (kprobes < 0)
			kprobes = probe__bpf_fires(&probe_ops__kernel, PROBE_BPF_KPROBE);
		if (!kprobes) {
			pr_err("%s '%s': this kernel has no kprobes (auxtrig probe: bpf kprobe missing); use a syscall:NAME:enter, syscall:NAME:exit or tp:SYS:EVENT point instead\n",
			       opt, text);
			return -EINVAL;
		}
	}
	if (p->kind == POINT_MEM) {
		if (breakpoints < 0)
			breakpoints = probe__hw_breakpoint_fires(&probe_ops__kernel);
		if (!breakpoints) {
			pr_err("%s '%s': hardware breakpoints do not fire on this machine (auxtrig probe: hw breakpoints missing); use uprobe:PATH:SYMBOL on the code that touches the memory instead\n",
			       opt, text);
			return -EINVAL;
		}
	}
	return 0;
}

/* One end of a window: a tracepoint now, a probe point when the gate is built. */
static int window_end_add(struct session *s, const struct window_spec *w, const struct point *p,
			  __u64 open_mask, __u64 close_mask)
{
	int err;

	if (point__is_probe(p))
		return point_available(p, "--window", w->text);
	err = tp_add(s, p->sys, p->name, open_mask, close_mask, 0, NULL);
	if (err == -ENOENT) {
		pr_err("--window %s: unknown %s: there is no tracepoint %s:%s in %s/events\n", w->text,
		       !strcmp(p->sys, "syscalls") ? "syscall" : "tracepoint", p->sys, p->name, tracefs__root());
		return -EINVAL;
	}
	if (err)
		pr_err("--window %s: cannot read %s:%s: %s\n", w->text, p->sys, p->name, strerror(-err));
	return err;
}

/*
 * Recorded syscalls:sys_enter_X/sys_exit_X tracepoints are inside syscall:*
 * windows whichever order the kernel runs them and raw_syscalls' in (see
 * any_inside() in bpf/gate.bpf.c): entries may open those windows too, and
 * the raw tracepoints that open and close them keep the note that takes.
 */
static void syscall_any_members(struct session *s)
{
	const struct record_opts *o = s->opts;
	__u64 any = 0;

	for (size_t i = 0; i < o->nr_windows; i++)
		if (o->windows[i].kind == WINDOW_SYSCALL && !strcmp(o->windows[i].start.sys, "raw_syscalls"))
			any |= 1ULL << i;
	for (size_t i = 0; any && i < s->nr_tps; i++) {
		struct rec_tp *tp = &s->tps[i];

		if (!strcmp(tp->fmt.system, "raw_syscalls") && ((tp->open_mask | tp->close_mask) & any))
			tp->flags |= GATE_TP_SYSCALL_ANY;
		if (!(tp->flags & GATE_TP_RECORD) || strcmp(tp->fmt.system, "syscalls"))
			continue;
		tp->flags |= GATE_TP_IN_ANY;
		if (!strncmp(tp->fmt.name, "sys_enter_", 10))
			tp->open_mask |= any;
	}
}

static int resolve_tracepoints(struct session *s)
{
	const struct record_opts *o = s->opts;
	const char *root = tracefs__root();
	int err;

	if (!root) {
		pr_err("tracefs is not mounted: mount it with 'mount -t tracefs nodev /sys/kernel/tracing' (or run 'make deps')\n");
		return -ENOENT;
	}
	if (o->nr_windows > GATE_MAX_WINDOWS) {
		pr_err("too many windows: %zu, at most %d\n", o->nr_windows, GATE_MAX_WINDOWS);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->nr_windows; i++) {
		const struct window_spec *w = &o->windows[i];

		if (w->kind == WINDOW_UPROBE) {
			s->have_uprobes = true;
			continue;
		}
		if (w->kind == WINDOW_PROG) {
			if (!o->nr_trigger_progs) {
				pr_err("--window prog: the window of a trigger program needs --trigger-prog\n");
				return -EINVAL;
			}
			continue;
		}
		err = window_end_add(s, w, &w->start, 1ULL << i, 0);
		if (!err)
			err = window_end_add(s, w, &w->stop, 0, 1ULL << i);
		if (err)
			return err;
	}
	for (size_t i = 0; i < o->nr_events; i++) {
		err = tracefs__expand(o->events[i], add_event_cb, s);
		if (err == -EINVAL) {
			pr_err("-e %s: expected a tracepoint as SYSTEM:NAME (e.g. sched:sched_switch, syscalls:sys_enter_*)\n",
			       o->events[i]);
			return -EINVAL;
		}
		if (err == 0) {
			pr_err("-e %s: unknown tracepoint: nothing matches in %s/events (list them with 'ls %s/events')\n",
			       o->events[i], root, root);
			return -EINVAL;
		}
		if (err < 0) {
			pr_err("-e %s: %s\n", o->events[i], strerror(-err));
			return err;
		}
	}
	syscall_any_members(s);
	if (s->have_uprobes) {
		err = add_own_event(s, "uprobe_enter", UPROBE_ENTER_FORMAT, sizeof(struct gate_uprobe_enter_rec));
		if (!err)
			err = add_own_event(s, "uprobe_exit", UPROBE_EXIT_FORMAT, sizeof(struct gate_uprobe_exit_rec));
		if (err)
			return err;
	}
	return 0;
}

/*
 * After every event is known (tracepoints, auxtrig's own, --on marks): the
 * record type -> event table, and a type for auxtrig:snapshot none of them has.
 */
static int index_types(struct session *s)
{
	if (!s->nr_tps && !s->opts->aux_event) {
		pr_err("nothing to record: give --window, -e or an --on ...:mark (see auxtrig record --help)\n");
		return -EINVAL;
	}
	s->tp_by_type_len = 1;
	for (size_t i = 0; i < s->nr_tps; i++)
		if (s->tps[i].fmt.id + 1 > s->tp_by_type_len)
			s->tp_by_type_len = s->tps[i].fmt.id + 1;
	s->tp_by_type = calloc(s->tp_by_type_len, sizeof(*s->tp_by_type));
	if (!s->tp_by_type)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_tps; i++)
		s->tp_by_type[s->tps[i].fmt.id] = i + 1;
	/* A type id for auxtrig:snapshot that no tracepoint in the file has. */
	s->marker_type = 65000;
	while (s->marker_type < s->tp_by_type_len && s->tp_by_type[s->marker_type])
		s->marker_type++;
	if (asprintf(&s->marker_format, MARKER_FORMAT, s->marker_type) < 0)
		return -ENOMEM;
	return 0;
}

/* ---- --where ----------------------------------------------------------------- */

/*
 * --where is checked when a window would open: usually at an entry, where
 * every builtin is known except the return value. Windows that all open at
 * an exit point (syscall:NAME:exit.., uretprobe:..) know it.
 */
static int where_resolve(void *ctx, const char *name, struct expr_field *field, char *why,
			 size_t why_size)
{
	const struct record_opts *o = ctx;
	bool at_exit = o->nr_windows > 0;

	for (size_t i = 0; i < o->nr_windows; i++)
		at_exit &= o->windows[i].kind == WINDOW_POINTS && o->windows[i].start.at_exit;
	if (!strcmp(name, "ret") && !at_exit) {
		snprintf(why, why_size, "'ret' is known only when a window ends, and --where is checked when it opens (unless every window opens at an exit point, like syscall:openat:exit..syscall:close:enter)");
		return -EINVAL;
	}
	return expr__resolve_builtin(name, field);
}

static int compile_where(struct session *s)
{
	struct expr_compile_opts copts = { .resolve = where_resolve, .resolve_ctx = (void *)s->opts };
	struct expr_prog *prog;
	char err[256];
	int ret;

	if (!s->opts->where)
		return 0;
	if (!s->opts->nr_windows) {
		pr_err("--where selects windows: give at least one --window\n");
		return -EINVAL;
	}
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return -ENOMEM;
	ret = expr__compile(s->opts->where, &copts, prog, err, sizeof(err));
	if (ret) {
		char q[EXPR_QUOTE_MAX + 64];

		expr__quote(s->opts->where, err, q, sizeof(q));
		pr_err("--where %s: %s\n", q, err);
		free(prog);
		return -EINVAL;
	}
	if (s->opts->verbose >= 2)
		expr__dump(prog, stderr);
	s->where = prog;
	return 0;
}

/* ---- --on triggers ------------------------------------------------------------ */

static int take_snapshot(struct session *s, const char *reason);

struct on_spec {
	const char *text;
	struct point pt;
	struct tp_format fmt;
	struct gate_trigger t;
	struct expr_prog *cond;
	bool at_enter, at_exit;
};

/*
 * Fields a trigger's condition may name at its point: the builtins (ret only
 * at a syscall's exit, arguments only at its entry) and the tracepoint's own
 * fields by name. The common_* fields are not readable: the kernel has
 * overwritten them with a pt_regs pointer before BPF runs.
 */
static int on_resolve(void *ctx, const char *name, struct expr_field *field, char *why, size_t why_size)
{
	const struct on_spec *on = ctx;
	const struct tp_field *f;
	int err = expr__resolve_builtin(name, field);

	if (!err) {
		if (!strcmp(name, "ret") && !on->at_exit) {
			snprintf(why, why_size, "'ret' is known only at a %s",
				 point__is_probe(&on->pt) ? "return point (uretprobe:, kretprobe:, syscall:NAME:exit)"
							  : "syscall's exit point (syscall:NAME:exit)");
			return -EINVAL;
		}
		if (!strncmp(name, "arg", 3) && !on->at_enter) {
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
	f = tp_format__field(&on->fmt, name);
	if (!f)
		return -ENOENT;
	if (f->is_common) {
		snprintf(why, why_size, "'%s' is not readable from BPF (use pid, tid, comm)", name);
		return -EINVAL;
	}
	memset(field, 0, sizeof(*field));
	field->offset = f->offset;
	field->size = f->size;
	field->is_signed = f->is_signed;
	if (f->is_dynamic) {
		field->kind = EXPR_FIELD_REC_LOC;
	} else if (strstr(f->type, "char") && !strchr(f->type, '*') && f->size > 1) {
		field->kind = EXPR_FIELD_REC_STR; /* char name[N] */
	} else {
		field->kind = EXPR_FIELD_REC_INT;
		/* Syscall arguments declared int arrive as unextended registers. */
		if (on->at_enter && f->size == 8 && !strncmp(f->type, "int", 3)) {
			field->size = 4;
			field->is_signed = true;
		}
		if (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8) {
			snprintf(why, why_size, "'%s' is %u bytes: not an integer field", name, f->size);
			return -EINVAL;
		}
	}
	return 0;
}

static const char *const on_actions[] = {
	[GATE_ACT_SNAPSHOT] = "snapshot", [GATE_ACT_STOP] = "stop", [GATE_ACT_MARK] = "mark",
	[GATE_ACT_RESUME] = "resume", [GATE_ACT_PAUSE] = "pause",
};

/* "limit:N/s": N from 1 to 1,000,000,000. */
static int parse_limit(const char *arg, __u32 *limit)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (errno || end == arg || strcmp(end, "/s") || !n || n > 1000000000ULL)
		return -EINVAL;
	*limit = n;
	return 0;
}

/*
 * "POINT [if EXPR]:ACTION[+DELAY][,POLICY...]", the action found as the last
 * ":snapshot", ":stop", ... followed by the end, '+' or ','.
 */
static int on_parse(struct session *s, struct on_spec *on, const char *text)
{
	char *copy = strdup(text), *act = NULL, *p, *cond, *point, *pol, *save = NULL, err[256];
	struct expr_compile_opts copts = { .resolve = on_resolve, .resolve_ctx = on };
	int ret = -EINVAL;

	memset(on, 0, sizeof(*on));
	on->text = text;
	if (!copy)
		return -ENOMEM;
	for (p = copy; (p = strchr(p, ':')); p++) {
		for (size_t a = 1; a < sizeof(on_actions) / sizeof(on_actions[0]); a++) {
			size_t n = strlen(on_actions[a]);

			if (!strncmp(p + 1, on_actions[a], n) && (!p[1 + n] || p[1 + n] == ',' || p[1 + n] == '+')) {
				act = p;
				on->t.action = a;
			}
		}
	}
	if (!act) {
		pr_err("--on '%s': expected POINT [if EXPR]:ACTION with ACTION snapshot, stop, mark, resume or pause\n",
		       text);
		goto out;
	}
	*act = '\0';
	pol = strchr(act + 1, ',');
	if (pol)
		*pol = '\0';
	p = strchr(act + 1, '+');
	if (p) {
		if (duration__parse(p + 1, &on->t.delay_ns)) {
			pr_err("--on '%s': '+%s': expected a delay with its unit, e.g. snapshot+2ms (ns, us, ms, s)\n",
			       text, p + 1);
			goto out;
		}
		if (on->t.action != GATE_ACT_SNAPSHOT && on->t.action != GATE_ACT_STOP) {
			pr_err("--on '%s': only snapshot and stop take a delay (+T)\n", text);
			goto out;
		}
	}
	for (pol = pol ? strtok_r(pol + 1, ",", &save) : NULL; pol; pol = strtok_r(NULL, ",", &save)) {
		char *end;

		if (!strncmp(pol, "limit:", 6)) {
			if (parse_limit(pol + 6, &on->t.limit)) {
				pr_err("--on '%s': '%s': expected limit:N/s with N from 1, e.g. limit:10/s\n", text, pol);
				goto out;
			}
			continue;
		}
		if (on->t.policy != GATE_POLICY_ALWAYS) {
			pr_err("--on '%s': '%s': only one of once, every:N, after:N (limit:N/s combines with them)\n",
			       text, pol);
			goto out;
		}
		if (!strcmp(pol, "once")) {
			on->t.policy = GATE_POLICY_ONCE;
			continue;
		}
		if (!strncmp(pol, "every", 5) && (pol[5] == ':' || pol[5] == '='))
			on->t.policy = GATE_POLICY_EVERY;
		else if (!strncmp(pol, "after", 5) && (pol[5] == ':' || pol[5] == '='))
			on->t.policy = GATE_POLICY_AFTER;
		else {
			pr_err("--on '%s': unknown policy '%s' (once, every:N, after:N, limit:N/s)\n", text, pol);
			goto out;
		}
		on->t.n = strtoull(pol + 6, &end, 10);
		if (*end || !on->t.n) {
			pr_err("--on '%s': '%s' needs a count of 1 or more\n", text, pol);
			goto out;
		}
	}
	point = copy;
	cond = strstr(copy, " if ");
	if (cond) {
		*cond = '\0';
		cond += 4;
	}
	while (*point == ' ')
		point++;
	for (p = point + strlen(point); p > point && p[-1] == ' ';)
		*--p = '\0';
	if (point__parse(&on->pt, point, err, sizeof(err)) || point__check_path(&on->pt, err, sizeof(err))) {
		pr_err("--on '%s': %s\n", text, err);
		goto out;
	}
	on->at_enter = on->pt.at_enter;
	on->at_exit = on->pt.at_exit;
	if (point__is_probe(&on->pt)) {
		ret = point_available(&on->pt, "--on", text);
		if (ret)
			goto out;
	} else {
		ret = tracefs__load_format(on->pt.sys, on->pt.name, &on->fmt);
		if (ret == -ENOENT) {
			pr_err("--on '%s': unknown %s: there is no tracepoint %s:%s\n", text,
			       strcmp(on->pt.sys, "syscalls") ? "tracepoint" : "syscall", on->pt.sys, on->pt.name);
			ret = -EINVAL;
			goto out;
		}
		if (ret)
			goto out;
	}
	if (on->t.action == GATE_ACT_SNAPSHOT && !s->opts->snapshot) {
		pr_err("--on '%s': the snapshot action needs the flight recorder: add -S\n", text);
		ret = -EINVAL;
		goto out;
	}
	if (cond) {
		on->cond = calloc(1, sizeof(*on->cond));
		if (!on->cond) {
			ret = -ENOMEM;
			goto out;
		}
		ret = expr__compile(cond, &copts, on->cond, err, sizeof(err));
		if (ret) {
			char qt[EXPR_QUOTE_MAX + 64], qc[EXPR_QUOTE_MAX + 64];

			expr__quote(text, NULL, qt, sizeof(qt));
			expr__quote(cond, err, qc, sizeof(qc));
			pr_err("--on %s: condition %s: %s\n", qt, qc, err);
			ret = -EINVAL;
			goto out;
		}
	}
	ret = 0;
out:
	free(copy);
	return ret;
}

static int parse_ons(struct session *s)
{
	int err;

	s->ons = calloc(s->opts->nr_ons ? s->opts->nr_ons : 1, sizeof(*s->ons));
	if (!s->ons)
		return -ENOMEM;
	if (s->opts->nr_ons > GATE_MAX_TRIGGERS) {
		pr_err("too many --on triggers: %zu, at most %d\n", s->opts->nr_ons, GATE_MAX_TRIGGERS);
		return -EINVAL;
	}
	for (size_t i = 0; i < s->opts->nr_ons; i++) {
		err = on_parse(s, &s->ons[i], s->opts->ons[i]);
		s->nr_ons++;
		if (err)
			return err;
		if (s->ons[i].t.action == GATE_ACT_MARK && !s->mark_type) {
			err = add_own_event(s, "mark", MARK_FORMAT, sizeof(struct gate_mark_rec));
			if (err)
				return err;
			s->mark_type = s->tps[s->nr_tps - 1].fmt.id;
		}
		if ((s->ons[i].t.action == GATE_ACT_RESUME || s->ons[i].t.action == GATE_ACT_PAUSE) &&
		    !s->user_window) {
			s->user_window = true;
			err = add_own_event(s, "resume", MARK_LIKE_FORMAT("resume"), sizeof(struct gate_mark_rec));
			if (!err)
				err = add_own_event(s, "pause", MARK_LIKE_FORMAT("pause"), sizeof(struct gate_mark_rec));
			if (err)
				return err;
			s->resume_type = s->tps[s->nr_tps - 2].fmt.id;
			s->pause_type = s->tps[s->nr_tps - 1].fmt.id;
		}
	}
	if (s->nr_ons) {
		err = add_own_event(s, "trigger_stats", TRIGGER_STATS_FORMAT,
				    sizeof(struct gate_trigger_stats_rec));
		if (err)
			return err;
	}
	/* Trigger programs may mark too. */
	if (s->opts->nr_trigger_progs && !s->mark_type) {
		err = add_own_event(s, "mark", MARK_FORMAT, sizeof(struct gate_mark_rec));
		if (err)
			return err;
		s->mark_type = s->tps[s->nr_tps - 1].fmt.id;
	}
	return 0;
}

static int aux_gate_edge(struct session *s, const struct gate_ctl_msg *m);
static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The snapshot a snapshot trigger asked for; the gate froze at the trigger or at its deadline. */
static int triggered_snapshot(struct session *s, const struct gate_ctl_msg *m)
{
	char reason[16];
	int err;

	if (m->trigger >= GATE_USER_TRIGGER_BASE)
		snprintf(reason, sizeof(reason), "prog:%u", m->trigger - GATE_USER_TRIGGER_BASE);
	else
		snprintf(reason, sizeof(reason), "on#%u", m->trigger + 1);
	s->firing = m;
	err = take_snapshot(s, reason);
	s->firing = NULL;
	gate__unfreeze(s->gate);
	return err;
}

/* snapshot+T and stop+T whose time has come. */
static int run_due(struct session *s)
{
	__u64 now = monotonic_ns();
	int err = 0;

	if (s->snapshot_due && now >= s->snapshot_due) {
		s->snapshot_due = 0;
		err = triggered_snapshot(s, &s->snapshot_msg);
	}
	if (s->stop_due && now >= s->stop_due) {
		s->stop_due = 0;
		s->stop = true;
		s->stop_requested = true;
	}
	return err;
}

/*
 * --min-duration/--max-duration: the gate times each thread's window, and
 * the recorder holds its records until the window closes.
 */
static int check_durations(const struct session *s)
{
	const struct record_opts *o = s->opts;
	const char *opt = o->min_duration ? "--min-duration" : "--max-duration";

	if (!o->min_duration && !o->max_duration)
		return 0;
	if (o->max_duration && !o->max_duration_ns) {
		pr_err("--max-duration %s: a window lasts more than 0 ns\n", o->max_duration);
		return -EINVAL;
	}
	if (o->min_duration && o->max_duration && o->min_duration_ns > o->max_duration_ns) {
		pr_err("--min-duration %s is longer than --max-duration %s: no window could be written\n",
		       o->min_duration, o->max_duration);
		return -EINVAL;
	}
	if (!o->nr_windows && !s->user_window) {
		pr_err("%s selects windows by how long they lasted: give a --window (or an --on ...:resume)\n", opt);
		return -EINVAL;
	}
	if (o->aux_event) {
		pr_err("%s: hardware trace (-e %s) cannot be held back per window\n", opt, o->aux_event);
		return -EINVAL;
	}
	if (o->nr_trigger_progs) {
		pr_err("%s: windows of --trigger-prog programs are not timed yet\n", opt);
		return -EINVAL;
	}
	return 0;
}

static int write_held(void *ctx, const void *rec, size_t size);

static int on_ctl(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct gate_ctl_msg *m = data;
	int err = 0;

	if (size < sizeof(*m))
		return 0;
	if (m->action == GATE_ACT_EDGE_OPEN || m->action == GATE_ACT_EDGE_CLOSE)
		return aux_gate_edge(s, m);
	if (m->action == GATE_ACT_VERDICT)
		return s->hold ? window_hold__verdict(s->hold, m->args[0], m->ret, write_held, s) : 0;
	if (m->trigger >= GATE_USER_TRIGGER_BASE)
		s->prog_fired++;
	if (m->action == GATE_ACT_SNAPSHOT && m->delay_ns) {
		/* The gate records until the deadline, then freezes; the loop snapshots then. */
		if (!s->snapshot_due) {
			s->snapshot_msg = *m;
			s->snapshot_due = m->time_ns + m->delay_ns;
		}
	} else if (m->action == GATE_ACT_SNAPSHOT) {
		err = triggered_snapshot(s, m);
	} else if (m->action == GATE_ACT_STOP && m->delay_ns) {
		if (!s->stop_due || m->time_ns + m->delay_ns < s->stop_due) {
			s->stop_due = m->time_ns + m->delay_ns;
			pr_info("--on %s fired (tid %u): stopping in %.3f ms\n",
				m->trigger < s->nr_ons ? s->ons[m->trigger].text : "(trigger program)",
				m->tid, m->delay_ns / 1e6);
		}
	} else if (m->action == GATE_ACT_STOP) {
		if (m->trigger >= GATE_USER_TRIGGER_BASE)
			pr_info("trigger program: stop (reason %u, tid %u)\n", m->trigger - GATE_USER_TRIGGER_BASE,
				m->tid);
		else
			pr_info("--on %s fired (tid %u): stopping\n", s->ons[m->trigger].text, m->tid);
		s->stop = true;
		s->stop_requested = true;
	}
	return err;
}

static void attr_init_output(struct perf_event_attr *a, size_t ring_bytes, bool overwrite);
static void attr_init_sideband(struct perf_event_attr *a, bool enable_on_exec);

/* ---- hardware trace (AUX area) ---------------------------------------------- */

/*
 * Can the AUX event start paused and be paused/resumed by its group's
 * triggers? Tried, not guessed (as auxtrig probe does): the PMU's own event
 * with aux_start_paused, opened through the session's kernel. EOPNOTSUPP: the
 * kernel knows aux_action, the PMU lacks it; EINVAL: the kernel has no
 * aux_action. With --sysfs-root on the running kernel the PMU is a fixture,
 * not this machine's: the kernel is asked with a software event and the PMU
 * is taken to support it as its driver does upstream.
 */
static enum probe_pause aux_pause_support(const struct session *s)
{
	const struct record_opts *o = s->opts;
	const struct aux_session_ops *ops = s->aux_ops ?: &aux_session_ops__kernel;
	struct perf_event_attr a = { .size = sizeof(a), .disabled = 1 };
	struct aux_event_opts eo = { .per_thread = true };
	struct pmu_set *set = NULL;
	struct aux_event ev;
	int fd, err;

	char pmu_name[64];

	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	snprintf(pmu_name, sizeof(pmu_name), "%.*s", (int)strcspn(o->aux_event, "/"), o->aux_event);
	/* Without the PMU here, aux_session__new() will say so: ask only the kernel. */
	if ((o->sysfs_root && ops->kernel) || pmu__scan(o->sysfs_root, &set) || !pmu_set__find(set, pmu_name) ||
	    aux_event__parse(&ev, set, o->aux_event, &eo)) {
		pmu_set__delete(set);
		*perf_attr_aux_action(&a) = AUXTRIG_AUX_START_PAUSED;
		fd = perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		if (err == EINVAL)
			return PROBE_PAUSE_NO_KERNEL;
		return aux_pmu__kind(o->aux_event) == AUX_PMU_ARM_SPE ? PROBE_PAUSE_NO_PMU : PROBE_PAUSE_YES;
	}
	a = ev.attr;
	a.disabled = 1;
	*perf_attr_aux_action(&a) = AUXTRIG_AUX_START_PAUSED;
	fd = ops->event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC, ops->ctx);
	err = fd < 0 ? -fd : 0;
	if (fd >= 0) {
		if (ops->close)
			ops->close(fd, ops->ctx);
		else
			close(fd);
	}
	pmu_set__delete(set);
	return !err ? PROBE_PAUSE_YES : err == EOPNOTSUPP ? PROBE_PAUSE_NO_PMU
		: err == EINVAL ? PROBE_PAUSE_NO_KERNEL : PROBE_PAUSE_UNKNOWN;
}

/* Windows on hardware trace: paused and resumed in the kernel, or gated by auxtrig. */
static const char *aux_path(const struct session *s)
{
	return s->aux_edges ? "windows gated from userspace (PERF_EVENT_IOC_ENABLE/DISABLE on each edge the gate sends)"
			    : "windows by in-kernel aux_pause/aux_resume";
}

/*
 * --where on hardware trace. A uprobe window's members come from the uprobe
 * PMU, each with a private trace_event_call: the gate's veto programs,
 * attached to them, let only the windows --where opens resume the trace. A
 * tracepoint's BPF programs are shared by every perf user of it: a program
 * returning 0 there would hide the event from every other tool too, so a
 * condition cannot veto the kernel's aux_resume at it. Conditional windows
 * with a tracepoint end are gated from userspace instead, where the gate
 * signals only the windows --where opened; all windows of the run then are
 * (one AUX group per CPU cannot be half in-kernel, half gated).
 */
static void aux_where_decide(struct session *s)
{
	const struct record_opts *o = s->opts;

	if (!o->aux_event || !s->where || s->aux_edges)
		return;
	for (size_t i = 0; i < o->nr_windows; i++) {
		if (o->windows[i].kind != WINDOW_UPROBE) {
			s->aux_where_gated = o->windows[i].text;
			s->aux_edges = true;
			return;
		}
	}
	s->aux_veto = o->nr_windows > 0;
}

/*
 * Windows that only BPF can decide cannot be aux_resume/aux_pause members: a
 * trigger program's windows (-w prog), and --on resume/pause with a condition
 * or rate policy (the kernel's aux action would act at every hit). Their
 * edges go to userspace, which gates the trace.
 */
static void aux_prog_decide(struct session *s)
{
	const struct record_opts *o = s->opts;

	if (!o->aux_event || s->aux_edges)
		return;
	for (size_t i = 0; i < o->nr_windows; i++)
		if (o->windows[i].kind == WINDOW_PROG) {
			snprintf(s->aux_prog_why, sizeof(s->aux_prog_why), "the windows of -w prog (trigger programs)");
			s->aux_prog_gated = s->aux_prog_why;
			break;
		}
	for (size_t i = 0; !s->aux_prog_gated && i < s->nr_ons; i++) {
		const struct on_spec *on = &s->ons[i];

		if ((on->t.action == GATE_ACT_RESUME || on->t.action == GATE_ACT_PAUSE) &&
		    (on->cond || on->t.policy != GATE_POLICY_ALWAYS || on->t.limit)) {
			snprintf(s->aux_prog_why, sizeof(s->aux_prog_why), "--on '%.200s' (a condition or policy)",
				 on->text);
			s->aux_prog_gated = s->aux_prog_why;
		}
	}
	if (s->aux_prog_gated)
		s->aux_edges = true;
}

/* What --where does on hardware trace, or NULL when there is nothing to say. */
static const char *aux_where_note(const struct session *s, char *buf, size_t size)
{
	if (s->aux_prog_gated)
		snprintf(buf, size,
			 "windows gated from userspace, because %s decide in BPF at each hit, which the kernel's aux_resume/aux_pause cannot wait for",
			 s->aux_prog_gated);
	else if (s->aux_where_gated)
		snprintf(buf, size,
			 "--where: windows gated from userspace, because -w %s has a tracepoint end, whose BPF programs every perf user shares: "
			 "no condition can stop the kernel's aux_resume there without hiding the event from other tools%s",
			 s->aux_where_gated, s->have_uprobes ? " (the run's uprobe windows are gated from userspace too)" : "");
	else if (s->aux_veto)
		snprintf(buf, size,
			 "--where: checked in the kernel by BPF programs on each uprobe window's own uprobe/uretprobe members, "
			 "which resume the trace only at an outermost call where it holds and pause it at that call's return");
	else
		return NULL;
	return buf;
}

/*
 * One (point, action) trigger of the AUX session: the AUX events resume at
 * AUXTRIG_AUX_RESUME points and pause at AUXTRIG_AUX_PAUSE ones. Windows add
 * theirs here; other sources of (point, action) pairs may too.
 */
struct aux_trigger_list {
	struct aux_session_trigger *t;
	char (*names)[2 * TP_NAME_MAX + 2];
	size_t nr, cap;
};

static struct aux_session_trigger *aux_trigger_add(struct aux_trigger_list *l, __u32 action)
{
	struct aux_session_trigger *t;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		void *tt = realloc(l->t, cap * sizeof(*l->t)), *nn;

		if (!tt)
			return NULL;
		l->t = tt;
		nn = realloc(l->names, cap * sizeof(*l->names));
		if (!nn)
			return NULL;
		l->names = nn;
		l->cap = cap;
	}
	t = &l->t[l->nr];
	memset(t, 0, sizeof(*t));
	l->names[l->nr++][0] = '\0'; /* t->name is set once the list stops moving */
	t->action = action;
	return t;
}

static int aux_trigger_add_tp(struct aux_trigger_list *l, const struct rec_tp *tp, __u32 action)
{
	struct aux_session_trigger *t = aux_trigger_add(l, action);

	if (!t)
		return -ENOMEM;
	t->kind = AUX_TRIGGER_TRACEPOINT;
	t->id = tp->fmt.id;
	snprintf(l->names[l->nr - 1], sizeof(l->names[0]), "%s:%s", tp->fmt.system, tp->fmt.name);
	return 0;
}

/* A uprobe window: resume at the function's entry, pause at its return; @veto: --where's text, or NULL. */
static int aux_trigger_add_uprobe(struct aux_trigger_list *l, const struct window_spec *w, __u32 window,
				  const char *veto)
{
	struct aux_session_trigger *t;
	__u64 off;
	int err;

	err = elf_sym__file_offset(w->start.path, w->start.symbol, &off);
	if (err)
		return err == -ENOEXEC ? -EINVAL : err;
	for (int ret = 0; ret < 2; ret++) {
		t = aux_trigger_add(l, ret ? AUXTRIG_AUX_PAUSE : AUXTRIG_AUX_RESUME);
		if (!t)
			return -ENOMEM;
		t->kind = AUX_TRIGGER_UPROBE;
		t->path = w->start.path;
		t->offset = off + w->start.offset;
		t->retprobe = ret;
		t->veto = veto;
		t->window = window;
	}
	return 0;
}

/* The windows' (point, action) triggers. */
static int aux_triggers_from_windows(struct session *s, struct aux_trigger_list *l)
{
	const struct record_opts *o = s->opts;
	int err = 0;

	for (size_t i = 0; !err && i < o->nr_windows; i++) {
		const struct window_spec *w = &o->windows[i];

		switch (w->kind) {
		case WINDOW_UPROBE:
			err = aux_trigger_add_uprobe(l, w, i, s->aux_veto ? o->where : NULL);
			break;
		case WINDOW_PROG:
			/* No point to make a member of: aux_prog_decide() put the run on the gated path. */
			break;
		default:
			if (point__is_probe(&w->start) || point__is_probe(&w->stop)) {
				pr_err("-e %s with -w %s: windows between probe points drive only kernel event streams so far; use a syscall, tracepoint or uprobe window\n",
				       o->aux_event, w->text);
				err = -EINVAL;
				break;
			}
			err = aux_trigger_add_tp(l, tp_find(s, w->start.sys, w->start.name), AUXTRIG_AUX_RESUME);
			if (!err)
				err = aux_trigger_add_tp(l, tp_find(s, w->stop.sys, w->stop.name), AUXTRIG_AUX_PAUSE);
		}
	}
	/* --on POINT:resume / POINT:pause: the point itself resumes or pauses the trace. */
	for (size_t i = 0; !err && i < s->nr_ons; i++) {
		const struct on_spec *on = &s->ons[i];
		__u32 action = on->t.action == GATE_ACT_RESUME ? AUXTRIG_AUX_RESUME
			     : on->t.action == GATE_ACT_PAUSE ? AUXTRIG_AUX_PAUSE : 0;
		struct aux_session_trigger *t;

		if (!action || s->aux_prog_gated || s->aux_where_gated)
			continue; /* gated from userspace by choice: the gate's window edges switch the trace */
		t = aux_trigger_add(l, action);
		if (!t)
			return -ENOMEM;
		t->kind = AUX_TRIGGER_TRACEPOINT;
		t->id = on->fmt.id;
		snprintf(l->names[l->nr - 1], sizeof(l->names[0]), "%s:%s", on->fmt.system, on->fmt.name);
	}
	return err;
}

/*
 * The AUX session: one group per CPU, the AUX event leading; each window adds
 * its opening point (a syscall's or tracepoint's entry, a function's entry)
 * as an aux_resume member and its closing point as an aux_pause member, so
 * the kernel resumes and pauses the trace with no round trip through
 * auxtrig. Where the kernel or PMU cannot (s->aux_edges), the session is
 * gated instead: the gate sends each thread's window edges and
 * aux_gate_edge() enables and disables the AUX events.
 */
static int aux_setup(struct session *s, pid_t pid)
{
	const struct record_opts *o = s->opts;
	struct aux_trigger_list trig = {};
	struct aux_session_opts ao = {};
	int *cpus = NULL, err = -ENOMEM;
	size_t nr_cpus = 0;

	if (!o->aux_event)
		return 0;
	cpus = calloc(s->nr_possible, sizeof(*cpus));
	if (!cpus)
		goto out;
	for (int c = 0; c < s->nr_possible; c++)
		if (s->cpu_mask[c])
			cpus[nr_cpus++] = c;
	err = aux_triggers_from_windows(s, &trig);
	if (err)
		goto out;
	ao.event_spec = o->aux_event;
	ao.sysfs_root = o->sysfs_root;
	ao.cpus = cpus;
	ao.nr_cpus = nr_cpus;
	/*
	 * Per task, not per CPU: the trigger tracepoints in the group then fire
	 * only in the target's context. (A BPF program on them could not veto
	 * other processes' hits without hiding them from every perf user too.)
	 */
	ao.pid = pid;
	ao.snapshot = o->snapshot;
	ao.data_pages = o->mmap_pages;
	ao.aux_pages = o->aux_pages;
	ao.snapshot_size = o->snapshot ? o->aux_pages * sysconf(_SC_PAGESIZE) : 0;
	for (size_t i = 0; i < trig.nr; i++) {
		trig.t[i].name = trig.names[i];
		/* loaded with the gate (gate__aux_veto()); not yet on --dry-run */
		if (trig.t[i].veto && s->gate)
			trig.t[i].veto_prog_fd = gate__aux_veto_fd(s->gate, trig.t[i].retprobe);
	}
	ao.triggers = trig.t;
	ao.nr_triggers = trig.nr;
	ao.pause_support = s->aux_pause;
	ao.gate_from_userspace = s->aux_where_gated || s->aux_prog_gated;
	err = aux_session__new(&s->aux, &ao);
	if (!err && aux_session__gated(s->aux) != s->aux_edges) {
		/* the gate was loaded with edges on or off: the session must agree */
		pr_err("-e %s: the AUX session and the gate disagree on who gates the trace\n", o->aux_event);
		err = -EPROTO;
	}
out:
	free(cpus);
	free(trig.t);
	free(trig.names);
	return err;
}

/* A window edge from the gate: the fallback enables/disables the AUX events. */
static int aux_gate_edge(struct session *s, const struct gate_ctl_msg *m)
{
	int err;

	if (!s->aux || !s->aux_edges)
		return 0;
	err = aux_session__edge(s->aux, m->action == GATE_ACT_EDGE_OPEN, m->tid, m->time_ns);
	if (err)
		pr_err("cannot %s %s for a window edge: %s\n", m->action == GATE_ACT_EDGE_OPEN ? "enable" : "disable",
		       s->opts->aux_event, strerror(-err));
	return err;
}

/* End of run: what the userspace gate did, and how long its round trips took. */
static void aux_gate_summary(const struct session *s)
{
	struct aux_session_gate_stats gs;
	struct gate_edge_stats es;

	if (s->aux && s->aux_veto && s->gate) {
		__u64 resumed, vetoed, paused, untracked;

		gate__aux_veto_stats(s->gate, &resumed, &vetoed, &paused, &untracked);
		pr_info("hardware trace --where: %llu outermost calls resumed the trace, %llu were vetoed; %llu returns paused it\n",
			(unsigned long long)resumed, (unsigned long long)vetoed, (unsigned long long)paused);
		if (untracked)
			pr_warn("hardware trace --where: %llu calls not traced: too many threads inside uprobe windows at once (8192)\n",
				(unsigned long long)untracked);
	}
	if (!s->aux || !s->aux_edges)
		return;
	aux_session__gate_stats(s->aux, &gs);
	gate__edge_stats(s->gate, &es);
	pr_info("hardware trace gated from userspace: %llu edges sent (%llu opens, %llu closes acted on), trace on %llu times, off %llu times; "
		"edge-to-ioctl latency median %.1f us, p99 %.1f us, max %.1f us over %llu switches\n",
		(unsigned long long)es.sent, (unsigned long long)gs.opens, (unsigned long long)gs.closes,
		(unsigned long long)gs.enables, (unsigned long long)gs.disables, gs.lat_median / 1e3, gs.lat_p99 / 1e3,
		gs.lat_max / 1e3, (unsigned long long)gs.lat_n);
	if (es.dropped || gs.unmatched)
		pr_warn("hardware trace gate: %llu window edges lost (control ring full), %llu unmatched: the trace may have run outside windows or missed some\n",
			(unsigned long long)es.dropped, (unsigned long long)gs.unmatched);
	if (gs.other_threads)
		pr_info("hardware trace gate: %llu edges of other threads than %s traces were ignored\n",
			(unsigned long long)gs.other_threads, s->opts->aux_event);
	if (gs.late)
		pr_warn("hardware trace gate: %llu windows closed before auxtrig could enable the trace for them (shorter than the round trip): their trace is missing\n",
			(unsigned long long)gs.late);
}

/* --dry-run: what would be opened, per CPU, and nothing is. */
static void dry_run_print(struct session *s)
{
	struct perf_event_attr a;
	size_t page = sysconf(_SC_PAGESIZE);

	if (s->aux) {
		char note[512];

		aux_session__print(s->aux, stdout);
		if (s->opts->nr_windows || s->user_window)
			printf("hardware trace: %s\n", aux_path(s));
		if (aux_where_note(s, note, sizeof(note)))
			printf("hardware trace: %s\n", note);
	}
	printf("per CPU (%d possible): bpf-output, the gate's output%s\n", s->nr_possible,
	       s->snapshot_mode ? " (flight recorder)" : "");
	attr_init_output(&a, s->opts->mmap_pages * page, s->snapshot_mode);
	if (s->opts->verbose >= 2)
		attr_print__event(stdout, &a);
	printf("per CPU and target thread: dummy, the sideband\n");
	attr_init_sideband(&a, s->opts->command != NULL);
	if (s->opts->verbose >= 2)
		attr_print__event(stdout, &a);
	printf("gate: %zu tracepoint%s, %zu window%s, %zu trigger%s%s\n", s->nr_tps, s->nr_tps == 1 ? "" : "s",
	       s->opts->nr_windows, s->opts->nr_windows == 1 ? "" : "s", s->nr_ons, s->nr_ons == 1 ? "" : "s",
	       s->where ? ", --where" : "");
	for (size_t i = 0; i < s->nr_tps; i++)
		printf("  %s:%s (type %u)%s%s%s\n", s->tps[i].fmt.system, s->tps[i].fmt.name, s->tps[i].fmt.id,
		       s->tps[i].open_mask ? " opens a window" : "", s->tps[i].close_mask ? " closes a window" : "",
		       s->tps[i].flags & GATE_TP_RECORD ? " recorded inside windows" : "");
	for (size_t i = 0; i < s->opts->nr_windows; i++) {
		const struct window_spec *w = &s->opts->windows[i];
		char text[512];

		for (int end = 0; w->kind == WINDOW_POINTS && end < 2; end++) {
			if (!point__is_probe(end ? &w->stop : &w->start))
				continue;
			point__format(end ? &w->stop : &w->start, text, sizeof(text));
			printf("  %s (probe) %s a window\n", text, end ? "closes" : "opens");
		}
	}
	for (size_t i = 0; i < s->nr_ons; i++) {
		char text[512];

		if (!point__is_probe(&s->ons[i].pt))
			continue;
		point__format(&s->ons[i].pt, text, sizeof(text));
		printf("  %s (probe) has trigger %zu\n", text, i + 1);
	}
}

/* ---- perf events ---------------------------------------------------------- */

static void attr_init_common(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_type = PDATA_SAMPLE_TYPE; /* every attr: one layout */
	a->sample_id_all = 1;
}

static void attr_init_output(struct perf_event_attr *a, size_t ring_bytes, bool overwrite)
{
	attr_init_common(a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	if (overwrite) {
		/* Flight recorder: the kernel keeps the newest records, nobody is woken. */
		a->write_backward = 1;
		return;
	}
	/* Wake the reader a quarter full; the loop also drains on a timer. */
	a->watermark = 1;
	a->wakeup_watermark = ring_bytes / 4;
}

static void attr_init_sideband(struct perf_event_attr *a, bool enable_on_exec)
{
	attr_init_common(a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->build_id = 1; /* MMAP2 carries the build id, so perf finds the right binary later */
	a->inherit = 1;
	a->disabled = enable_on_exec;
	a->enable_on_exec = enable_on_exec;
}

static void attr_init_tracepoint(struct perf_event_attr *a, const struct rec_tp *tp)
{
	attr_init_common(a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = tp->fmt.id;
	a->sample_period = 1;
}

static int event_id(int fd, __u64 *id)
{
	return ioctl(fd, PERF_EVENT_IOC_ID, id) ? -errno : 0;
}

static int open_cpu_events(struct session *s)
{
	size_t page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr a;
	int err;

	s->cpus = calloc(s->nr_possible, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	attr_init_output(&a, s->opts->mmap_pages * page, s->snapshot_mode);
	for (int cpu = 0; cpu < s->nr_possible; cpu++) {
		struct cpu_slot *c = &s->cpus[s->nr_cpus];
		int fd;

		if (!s->cpu_mask[cpu])
			continue;
		fd = perf_event_open(&a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0 && errno == ENODEV)
			continue; /* offline CPU */
		if (fd < 0) {
			err = -errno;
			pr_err("cannot open the output event on CPU %d: %s\n", cpu, strerror(-err));
			return err;
		}
		if (s->opts->cpus) {
			err = gate__record_cpu(s->gate, cpu);
			if (err)
				return err;
		}
		c->cpu = cpu;
		c->out_fd = fd;
		c->side_fd = -1;
		s->nr_cpus++;
		err = event_id(fd, &c->out_id);
		if (err)
			return err;
		err = data_ring__mmap(&c->ring, fd, cpu, s->opts->mmap_pages, s->snapshot_mode);
		if (err == -EPERM) {
			pr_err("cannot map %zu KiB per CPU: over the locked-memory limit (raise /proc/sys/kernel/perf_event_mlock_kb or use a smaller -m)\n",
			       s->opts->mmap_pages * page / 1024);
			return err;
		}
		if (err) {
			pr_err("cannot map the ring of CPU %d: %s\n", cpu, strerror(-err));
			return err;
		}
		c->mapped = true;
		err = gate__set_output(s->gate, cpu, fd);
		if (err) {
			pr_err("cannot hand CPU %d's ring to the gate: %s\n", cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int add_side_fd(struct session *s, int fd)
{
	int *fds = realloc(s->side_fds, (s->nr_side + 1) * sizeof(int));
	__u64 *ids;

	if (!fds)
		return -ENOMEM;
	s->side_fds = fds;
	ids = realloc(s->side_ids, (s->nr_side + 1) * sizeof(__u64));
	if (!ids)
		return -ENOMEM;
	s->side_ids = ids;
	s->side_fds[s->nr_side] = fd;
	s->nr_side++;
	return event_id(fd, &s->side_ids[s->nr_side - 1]);
}

/*
 * Where sideband goes. Streaming: into the CPU's one ring. Flight recorder:
 * the output ring is overwritten and backwards, and sideband must not be lost
 * to it (perf needs every COMM and MMAP to make sense of a snapshot), so each
 * CPU gets a small forward ring for sideband, streamed to the file.
 */
static int sideband_output(struct session *s, struct cpu_slot *c, int fd)
{
	int err;

	if (!s->snapshot_mode)
		return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->out_fd) ? -errno : 0;
	if (c->side_fd >= 0)
		return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->side_fd) ? -errno : 0;
	err = data_ring__mmap(&c->side_ring, fd, c->cpu, SIDEBAND_PAGES, 0);
	if (err)
		return err;
	c->side_fd = fd;
	c->side_mapped = true;
	return 0;
}

/* Sideband (COMM, MMAP2, FORK, EXIT) of one thread, inherited by its children. */
static int open_sideband_for(struct session *s, pid_t tid, bool enable_on_exec)
{
	struct perf_event_attr a;
	int fd, err;

	attr_init_sideband(&a, enable_on_exec);
	for (size_t i = 0; i < s->nr_cpus; i++) {
		fd = perf_event_open(&a, tid, s->cpus[i].cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			if (err == -ESRCH)
				return err; /* the thread is gone: not an error for -p */
			pr_err("cannot follow thread %d on CPU %d: %s\n", tid, s->cpus[i].cpu, strerror(-err));
			return err;
		}
		err = add_side_fd(s, fd);
		if (err) {
			close(fd);
			return err;
		}
		err = sideband_output(s, &s->cpus[i], fd);
		if (err) {
			pr_err("cannot redirect sideband of thread %d into CPU %d's ring: %s\n", tid,
			       s->cpus[i].cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int open_sideband(struct session *s)
{
	int err;

	if (s->target.all)
		return open_sideband_for(s, -1, false);
	if (s->target.is_command)
		return open_sideband_for(s, s->target.pids[0], true);
	if (s->target.threads) {
		for (size_t i = 0; i < s->target.nr_pids; i++) {
			err = open_sideband_for(s, s->target.pids[i], false);
			if (err && err != -ESRCH)
				return err;
		}
		return 0;
	}
	for (size_t i = 0; i < s->target.nr_pids; i++) {
		pid_t *tids;
		size_t nr;

		err = target__threads(s->target.pids[i], &tids, &nr);
		if (err) {
			pr_err("process %d: %s\n", s->target.pids[i], strerror(-err));
			return err;
		}
		for (size_t j = 0; j < nr && !err; j++) {
			err = open_sideband_for(s, tids[j], false);
			if (err == -ESRCH)
				err = 0;
		}
		free(tids);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the output file ------------------------------------------------------ */

static int write_header(struct session *s)
{
	const struct record_opts *o = s->opts;
	struct perf_event_attr a;
	struct tracing_event *events;
	__u64 *ids;
	void *td = NULL;
	size_t td_len = 0;
	char name[2 * TP_NAME_MAX + 2];
	int err = 0;

	for (size_t i = 0; i < s->nr_tps && !err; i++) {
		attr_init_tracepoint(&a, &s->tps[i]);
		snprintf(name, sizeof(name), "%s:%s", s->tps[i].fmt.system, s->tps[i].fmt.name);
		err = pdata_writer__add_attr(s->w, &a, name, &s->tps[i].id, 1);
	}
	if (err)
		return err;

	if (s->snapshot_mode) {
		__u64 id = MARKER_ID;

		attr_init_common(&a);
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = s->marker_type;
		a.sample_period = 1;
		err = pdata_writer__add_attr(s->w, &a, "auxtrig:snapshot", &id, 1);
		if (err)
			return err;
	}

	if (s->aux) {
		err = aux_session__add_attrs(s->aux, s->w);
		if (err)
			return err;
	}

	attr_init_sideband(&a, false);
	if (s->nr_side) {
		err = pdata_writer__add_attr(s->w, &a, "dummy:u", s->side_ids, s->nr_side);
		if (err)
			return err;
	}
	ids = calloc(s->nr_cpus, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_cpus; i++)
		ids[i] = s->cpus[i].out_id;
	attr_init_output(&a, 0, s->snapshot_mode);
	err = pdata_writer__add_attr(s->w, &a, "bpf-output", ids, s->nr_cpus);
	free(ids);
	if (err)
		return err;

	events = calloc(s->nr_tps + 1, sizeof(*events));
	if (!events)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_tps; i++) {
		events[i].system = s->tps[i].fmt.system;
		events[i].name = s->tps[i].fmt.name;
		events[i].format = s->tps[i].own_format;
	}
	if (s->snapshot_mode) {
		events[s->nr_tps].system = "auxtrig";
		events[s->nr_tps].name = "snapshot";
		events[s->nr_tps].format = s->marker_format;
	}
	err = tracing_data__build(tracefs__root(), events, s->nr_tps + s->snapshot_mode, &td, &td_len);
	free(events);
	if (err) {
		pr_err("cannot collect the tracepoint formats for the file: %s\n", strerror(-err));
		return err;
	}
	err = pdata_writer__set_tracing_data(s->w, td, td_len);
	free(td);
	if (err)
		return err;
	err = pdata_writer__set_cmdline(s->w, o->full_argc, o->full_argv);
	if (err)
		return err;
	return pdata_writer__begin_data(s->w);
}

/* -a: every process that runs now. */
static int synthesize_all(struct session *s)
{
	struct dirent *d;
	DIR *proc = opendir("/proc");
	int err = 0;

	if (!proc)
		return -errno;
	while (!err && (d = readdir(proc))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		err = synth__threads(s->w, atoi(d->d_name));
		if (err == -ESRCH || err == -ENOENT || err == -EACCES)
			err = 0; /* gone meanwhile, or a kernel thread without maps */
	}
	closedir(proc);
	return err;
}

static int synthesize(struct session *s)
{
	int err;

	if (s->nr_cpus) {
		/*
		 * TSC to perf time, for decoders that need it (SPE, CoreSight,
		 * jitdump). Before AUXTRACE_INFO: perf 6.1's SPE decoder takes the
		 * conversion when it reads AUXTRACE_INFO, and divides by zero
		 * without it.
		 */
		err = synth__time_conv(s->w, data_ring__user_page(&s->cpus[0].ring));
		if (err && err != -EOPNOTSUPP)
			return err;
	}
	if (s->aux) {
		err = aux_session__write_info(s->aux, s->w);
		if (err)
			return err;
	}
	err = synth__kernel_mmap(s->w, NULL);
	if (err)
		pr_debug("no kernel map record: %s\n", strerror(-err));
	if (s->snapshot_mode || s->nr_ons) {
		/* Snapshot markers and trigger counters are auxtrig's own samples: name their thread. */
		char buf[128];
		size_t n = synth__comm_record(buf, sizeof(buf), getpid(), getpid(), "auxtrig");

		err = n ? pdata_writer__write(s->w, buf, n) : -EINVAL;
		if (err)
			return err;
	}
	if (s->target.all) {
		err = synthesize_all(s);
		if (err)
			return err;
	}
	for (size_t i = 0; i < s->target.nr_pids; i++) {
		err = synth__threads(s->w, s->target.pids[i]);
		if (err && err != -ESRCH) {
			pr_err("cannot describe process %d in the file: %s\n", s->target.pids[i], strerror(-err));
			return err;
		}
	}
	return pdata_writer__finish_round(s->w);
}

/* ---- the loop ------------------------------------------------------------- */

static bool is_side_id(const struct session *s, __u64 id)
{
	for (size_t i = 0; i < s->nr_side; i++)
		if (s->side_ids[i] == id)
			return true;
	return false;
}

/*
 * Write records of the rings, noting the newest time written: perf's
 * ordered-events queue, at each FINISHED_ROUND, flushes up to the newest time
 * it had seen at the round before, and a record older than what it flushed
 * comes out of order. drain() holds rounds back for held records with that.
 */
static int ring_write(struct session *s, const struct perf_event_header *h)
{
	__u64 t = 0;

	if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof(struct pdata_sample_head))
		memcpy(&t, (const char *)h + offsetof(struct pdata_sample_head, time), sizeof(t));
	else if (h->type < 64 /* PERF_RECORD_USER_TYPE_START: synthesized types have no trailer */ && h->size >= sizeof(*h) + PDATA_SAMPLE_ID_SIZE)
		memcpy(&t, (const char *)h + h->size - PDATA_SAMPLE_ID_SIZE + offsetof(struct pdata_sample_id, time),
		       sizeof(t));
	if (t > s->written_max)
		s->written_max = t;
	return pdata_writer__write(s->w, h, h->size);
}

static int write_held(void *ctx, const void *rec, size_t size)
{
	(void)size;
	return ring_write(ctx, rec);
}

static int process_record(struct session *s, const struct perf_event_header *h)
{
	char buf[65536];

	if (h->type == PERF_RECORD_SAMPLE) {
		struct perf_event_header *out = (struct perf_event_header *)buf;
		struct gate_out_hdr gh;
		__u32 raw_size, rec_size;
		__u16 type;
		size_t idx;
		__u64 t;

		if (h->size < SAMPLE_RAW_OFF + GATE_HDR_SIZE + 2) {
			s->unknown++;
			return 0;
		}
		memcpy(&raw_size, (const char *)h + SAMPLE_RAW_SIZE_OFF, sizeof(raw_size));
		if (raw_size < GATE_HDR_SIZE + 8 || SAMPLE_RAW_OFF + raw_size > h->size) {
			s->unknown++;
			return 0;
		}
		memcpy(&gh, (const char *)h + SAMPLE_RAW_OFF, sizeof(gh));
		if (gh.flags & GATE_OUT_VERDICT) {
			/* A timed window closed: its held records are written or dropped. */
			if (!s->hold)
				return 0;
			return window_hold__verdict(s->hold, gh.window, gh.flags & GATE_OUT_KEEP, write_held, s);
		}
		memcpy(&type, (const char *)h + SAMPLE_RAW_OFF + GATE_HDR_SIZE, sizeof(type));
		idx = type < s->tp_by_type_len ? s->tp_by_type[type] : 0;
		if (!idx) {
			s->unknown++;
			return 0;
		}
		/* Same sample, as the tracepoint's: its id, the gate's IP, the bare record. */
		rec_size = raw_size - GATE_HDR_SIZE;
		memcpy(buf, h, SAMPLE_RAW_SIZE_OFF);
		memcpy(buf + SAMPLE_ID_OFF, &s->tps[idx - 1].id, sizeof(__u64));
		memcpy(buf + SAMPLE_IP_OFF, &gh.ip, sizeof(gh.ip));
		memcpy(buf + SAMPLE_RAW_SIZE_OFF, &rec_size, sizeof(rec_size));
		memcpy(buf + SAMPLE_RAW_OFF, (const char *)h + SAMPLE_RAW_OFF + GATE_HDR_SIZE, rec_size);
		out->size = (SAMPLE_RAW_OFF + rec_size + 7) & ~7u;
		memset(buf + SAMPLE_RAW_OFF + rec_size, 0, out->size - SAMPLE_RAW_OFF - rec_size);
		s->tps[idx - 1].written++;
		s->written++;
		memcpy(&t, (const char *)h + offsetof(struct pdata_sample_head, time), sizeof(t));
		if (t > s->last_time)
			s->last_time = t;
		if ((gh.flags & GATE_OUT_HELD) && s->hold)
			return window_hold__record(s->hold, gh.window, t, buf, out->size, write_held, s);
		return ring_write(s, out);
	}
	if (h->type == PERF_RECORD_LOST) {
		const struct { struct perf_event_header h; __u64 id, lost; } *l = (const void *)h;

		if (is_side_id(s, l->id))
			s->lost_kernel_side += l->lost;
		else
			s->lost_kernel += l->lost;
	}
	return ring_write(s, h);
}

static int drain_ring(struct session *s, struct data_ring *r, bool *any)
{
	const struct perf_event_header *h;
	int err = 0;

	if (!data_ring__read_init(r))
		return 0;
	while ((h = data_ring__read_event(r))) {
		err = process_record(s, h);
		if (err)
			break;
		*any = true;
	}
	data_ring__consume(r);
	return err;
}

/*
 * One pass over every forward ring. Streaming: the CPUs' rings, then a round.
 * Flight recorder: only the sideband rings, and no round, because a later
 * snapshot brings records older than what is written now and perf must sort
 * them all together.
 */
static int drain(struct session *s)
{
	bool any = false;
	int err = 0;

	for (size_t i = 0; i < s->nr_cpus && !err; i++) {
		if (s->snapshot_mode) {
			if (s->cpus[i].side_mapped)
				err = drain_ring(s, &s->cpus[i].side_ring, &any);
		} else {
			err = drain_ring(s, &s->cpus[i].ring, &any);
		}
	}
	if (!err && s->aux && !s->snapshot_mode) {
		int n = aux_session__drain(s->aux, s->w); /* writes its own round */

		if (n < 0)
			err = n;
	}
	if (s->hold && !s->snapshot_mode)
		window_hold__pass(s->hold); /* with -S, a pass is a snapshot */
	if (err || (!any && !s->round_held))
		return err;
	if (s->snapshot_mode)
		return pdata_writer__flush(s->w);
	/*
	 * This round would let perf flush up to fr_max_time: not while a held
	 * record (written later, when its window closes) is older than that.
	 */
	if (s->hold && window_hold__oldest(s->hold) <= s->fr_max_time) {
		s->round_held = true;
		return pdata_writer__flush(s->w);
	}
	s->round_held = false;
	s->fr_max_time = s->written_max;
	return pdata_writer__finish_round(s->w);
}

/*
 * Records the gate dropped that no PERF_RECORD_LOST in the file accounts for:
 * too big to copy, or lost to a full ring after the kernel's last LOST record.
 * Written as PERF_RECORD_LOST_SAMPLES, which perf report counts ("Total Lost
 * Samples"), attributed to the output event of the first CPU.
 */
static int write_gate_losses(struct session *s)
{
	struct {
		struct perf_event_header h;
		__u64 lost;
		struct pdata_sample_id sid;
	} rec = {};
	struct gate_stats st;
	__u64 lost;

	gate__stats(s->gate, &st);
	lost = st.too_big + (st.output_lost > s->lost_kernel ? st.output_lost - s->lost_kernel : 0);
	if (!lost || !s->nr_cpus)
		return 0;
	rec.h.type = PERF_RECORD_LOST_SAMPLES;
	rec.h.size = sizeof(rec);
	rec.lost = lost;
	rec.sid.pid = rec.sid.tid = getpid();
	/* Not older than anything written: perf may have flushed up to written_max already. */
	rec.sid.time = s->written_max > s->last_time ? s->written_max : s->last_time;
	rec.sid.id = s->cpus[0].out_id;
	return pdata_writer__write(s->w, &rec, sizeof(rec));
}

static int snapshot_record(const struct perf_event_header *h, void *arg)
{
	struct session *s = arg;

	s->snapshot_records++;
	return process_record(s, h);
}

/* The auxtrig:snapshot sample, timed as the newest record it follows. */
/*
 * A sample of one of auxtrig's own events, written by auxtrig itself (not the
 * gate): its thread is auxtrig's, its time just after the newest record seen.
 */
static int write_own_sample(struct session *s, __u64 id, const void *raw, __u32 raw_size)
{
	char buf[sizeof(struct pdata_sample_head) + 4 + 256 + 8] = {};
	struct pdata_sample_head *h = (struct pdata_sample_head *)buf;
	size_t size = (sizeof(*h) + 4 + raw_size + 7) & ~7ul;

	if (size > sizeof(buf))
		return -E2BIG;
	h->header.type = PERF_RECORD_SAMPLE;
	h->header.misc = PERF_RECORD_MISC_USER;
	h->header.size = size;
	h->id = id;
	h->pid = h->tid = getpid();
	h->time = (s->last_time > pdata_writer__newest_time(s->w) ? s->last_time : pdata_writer__newest_time(s->w)) + 1;
	h->period = 1;
	memcpy(buf + sizeof(*h), &raw_size, 4);
	memcpy(buf + sizeof(*h) + 4, raw, raw_size);
	return pdata_writer__write(s->w, buf, size);
}

/* The auxtrig:snapshot sample, timed as the newest record it follows. */
static int write_marker(struct session *s, const char *reason, __u64 records)
{
	struct marker_record rec = {
		.common_type = s->marker_type,
		.common_pid = getpid(),
		.nr = s->nr_snapshots,
		.cpus = s->nr_cpus,
		.records = records,
	};

	snprintf(rec.reason, sizeof(rec.reason), "%s", reason);
	if (s->firing) {
		rec.tid = s->firing->tid;
		rec.value = s->firing->ret;
	}
	return write_own_sample(s, MARKER_ID, &rec, sizeof(rec));
}

/* Each --on's counters, in the file as auxtrig:trigger_stats at the end of the run. */
static int write_trigger_stats(struct session *s)
{
	const struct rec_tp *tp = tp_find(s, "auxtrig", "trigger_stats");
	struct gate_trigger_stats_rec rec = {};
	int err = 0;

	for (size_t i = 0; tp && i < s->nr_ons && !err; i++) {
		struct gate_trigger_stats ts;

		gate__trigger_stats(s->gate, i, &ts);
		rec.common_type = tp->fmt.id;
		rec.common_pid = getpid();
		rec.trigger = i + 1;
		rec.evaluated = ts.evaluated;
		rec.matched = ts.matched;
		rec.fired = ts.fired;
		rec.suppressed = ts.suppressed;
		rec.dropped = ts.dropped;
		err = write_own_sample(s, tp->id, &rec, sizeof(rec));
	}
	return err;
}

/*
 * Freeze each CPU's flight recorder (PERF_EVENT_IOC_PAUSE_OUTPUT: the kernel
 * drops and counts what arrives meanwhile), copy out what it holds that no
 * earlier snapshot took, and let it run again.
 */
static int take_snapshot(struct session *s, const char *reason)
{
	__u64 before = s->snapshot_records;
	int err;

	if (!s->snapshot_mode) {
		pr_warn("snapshot (%s) ignored: not in flight-recorder mode (-S)\n", reason);
		return 0;
	}
	err = drain(s); /* the sideband the snapshot's records refer to */
	if (!err && s->aux)
		err = aux_session__snapshot(s->aux, s->w);
	for (size_t i = 0; i < s->nr_cpus && !err; i++) {
		struct cpu_slot *c = &s->cpus[i];
		int n;

		if (ioctl(c->out_fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1))
			return -errno;
		n = data_ring__snapshot(&c->ring, snapshot_record, s);
		if (ioctl(c->out_fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0) && n >= 0)
			n = -errno;
		if (n < 0)
			err = n;
	}
	if (s->hold)
		window_hold__pass(s->hold);
	s->nr_snapshots++;
	if (!err)
		err = write_marker(s, reason, s->snapshot_records - before);
	if (!err)
		err = pdata_writer__flush(s->w);
	if (err)
		return err;
	pr_info("snapshot %lu (%s): %llu records\n", s->nr_snapshots, reason,
		(unsigned long long)(s->snapshot_records - before));
	return 0;
}

/* ---- --control ------------------------------------------------------------ */

static void control_ack(struct session *s, const char *msg)
{
	if (s->ack_fd >= 0 && write(s->ack_fd, msg, strlen(msg)) < 0)
		pr_debug("control: cannot write the ack: %s\n", strerror(errno));
}

/* perf's commands, one per line: enable, disable, snapshot, stop; and ping. */
static int control_command(struct session *s, const char *cmd)
{
	int err = 0;

	if (!strcmp(cmd, "enable")) {
		gate__arm(s->gate);
	} else if (!strcmp(cmd, "disable")) {
		gate__disarm(s->gate);
	} else if (!strcmp(cmd, "snapshot")) {
		err = take_snapshot(s, "control");
	} else if (!strcmp(cmd, "stop")) {
		s->stop = true;
		s->stop_requested = true;
	} else if (!strcmp(cmd, "ping")) {
		; /* armed: answering is the point */
	} else {
		pr_warn("control: unknown command '%s' (enable, disable, snapshot, stop, ping)\n", cmd);
		control_ack(s, "error\n");
		return 0;
	}
	control_ack(s, "ack\n");
	return err;
}

static int control_read(struct session *s)
{
	char buf[256], *line, *save = NULL;
	ssize_t n;
	int err = 0;

	n = read(s->ctl_fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line);

		while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len)
			err = control_command(s, line);
	}
	return err;
}

/* "fifo:CTL[,ACK]" or "fd:CTL[,ACK]". */
static int control_open(struct session *s)
{
	const char *spec = s->opts->control;
	char ctl[PATH_MAX], *ack;
	int err;

	s->ctl_fd = s->ack_fd = -1;
	if (!spec)
		return 0;
	if (!strncmp(spec, "fd:", 3)) {
		char *end;

		s->ctl_fd = strtol(spec + 3, &end, 10);
		if (end == spec + 3 || (*end && *end != ',') || fcntl(s->ctl_fd, F_GETFD) < 0)
			goto bad;
		if (*end == ',') {
			s->ack_fd = strtol(end + 1, &end, 10);
			if (*end || fcntl(s->ack_fd, F_GETFD) < 0)
				goto bad;
		}
		fcntl(s->ctl_fd, F_SETFL, fcntl(s->ctl_fd, F_GETFL) | O_NONBLOCK);
		return 0;
	}
	if (strncmp(spec, "fifo:", 5) || !spec[5])
		goto bad;
	snprintf(ctl, sizeof(ctl), "%s", spec + 5);
	ack = strchr(ctl, ',');
	if (ack)
		*ack++ = '\0';
	/* O_RDWR: never blocks on open, and never sees EOF when a writer leaves. */
	s->ctl_fd = open(ctl, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (s->ctl_fd < 0) {
		err = -errno;
		pr_err("--control: cannot open %s: %s (create it with mkfifo)\n", ctl, strerror(-err));
		return err;
	}
	if (ack) {
		s->ack_fd = open(ack, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (s->ack_fd < 0) {
			err = -errno;
			pr_err("--control: cannot open %s: %s (create it with mkfifo)\n", ack, strerror(-err));
			return err;
		}
	}
	return 0;
bad:
	pr_err("--control %s: expected fifo:CTL[,ACK] or fd:CTL[,ACK] with open file descriptors\n", spec);
	s->ctl_fd = s->ack_fd = -1;
	return -EINVAL;
}

static int setup_loop(struct session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0)
		return -errno;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	ev.data.fd = s->sigfd;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev))
		return -errno;
	if (s->ctl_fd >= 0) {
		ev.data.fd = s->ctl_fd;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->ctl_fd, &ev))
			return -errno;
	}
	if (gate__ctl_fd(s->gate) >= 0) {
		ev.data.fd = gate__ctl_fd(s->gate);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	for (size_t i = 0; s->aux && i < aux_session__nr_fds(s->aux); i++) {
		ev.data.fd = aux_session__fd(s->aux, i);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	for (size_t i = 0; i < s->nr_cpus && !s->snapshot_mode; i++) {
		ev.data.fd = s->cpus[i].out_fd;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->cpus[i].out_fd, &ev))
			return -errno;
	}
	return 0;
}

static int handle_signals(struct session *s)
{
	struct signalfd_siginfo si;
	int err = 0;

	while (!err && read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue; /* target__poll_exit() reaps */
		if (si.ssi_signo == SIGUSR2) {
			err = take_snapshot(s, "SIGUSR2");
			continue;
		}
		s->signo = si.ssi_signo;
		s->stop = true;
	}
	return err;
}

static int loop(struct session *s)
{
	struct epoll_event evs[16];
	int n, err, timeout;

	while (!s->stop) {
		__u64 due = s->snapshot_due, now = monotonic_ns();

		if (s->stop_due && (!due || s->stop_due < due))
			due = s->stop_due;
		timeout = 100;
		if (due)
			timeout = due <= now ? 0 : (due - now) / 1000000 + 1 < 100 ? (due - now) / 1000000 + 1 : 100;
		n = epoll_wait(s->epfd, evs, 16, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		err = 0;
		for (int i = 0; i < n && !err; i++) {
			if (evs[i].data.fd == s->sigfd)
				err = handle_signals(s);
			else if (evs[i].data.fd == s->ctl_fd)
				err = control_read(s);
			else if (evs[i].data.fd == gate__ctl_fd(s->gate))
				err = gate__ctl_consume(s->gate);
		}
		if (!err)
			err = drain(s);
		if (!err)
			err = run_due(s);
		if (err)
			return err;
		if (target__poll_exit(&s->target))
			s->stop = true;
	}
	return 0;
}

/* ---- setup and summary ---------------------------------------------------- */

static bool have_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* root, or CAP_SYS_ADMIN, or CAP_BPF (39) with CAP_PERFMON (38). */
static bool have_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &h, d))
		return false;
	return have_cap(d, CAP_SYS_ADMIN) || (have_cap(d, 39) && have_cap(d, 38));
}

static void print_summary(struct session *s)
{
	const struct window_hold_stats *hs = s->hold ? window_hold__stats(s->hold) : NULL;
	struct gate_stats st;
	__u64 lost, bytes = pdata_writer__stats(s->w)->bytes;

	gate__stats(s->gate, &st);
	if (hs)
		s->written -= hs->records_dropped + hs->records_unfinished + hs->records_early_dropped;
	/*
	 * A full ring makes both the gate (bpf_perf_event_output() fails) and
	 * the kernel (PERF_RECORD_LOST, emitted later) count the same loss;
	 * the kernel's count may lag at exit, the gate's cannot.
	 */
	lost = s->lost_kernel > st.output_lost ? s->lost_kernel : st.output_lost;
	lost += st.too_big + s->lost_kernel_side + (hs ? hs->records_lost : 0);
	if (s->opts->quiet && !lost && !st.threads_full)
		return;
	fprintf(stderr,
		"[ auxtrig record: %llu window%s, %llu event%s %s, %.1f KiB %s %s; lost %llu record%s ]\n",
		(unsigned long long)st.windows_opened, st.windows_opened == 1 ? "" : "s",
		(unsigned long long)s->written, s->written == 1 ? "" : "s",
		s->salvaged ? "recorded" : "written", bytes / 1024.0, s->salvaged ? "kept in" : "to",
		s->opts->output, (unsigned long long)lost, lost == 1 ? "" : "s");
	if (lost - (hs ? hs->records_lost : 0))
		pr_warn("%llu records were lost (ring full: %llu, sideband: %llu, larger than %d bytes: %llu): try a larger -m\n",
			(unsigned long long)(lost - (hs ? hs->records_lost : 0)),
			(unsigned long long)(s->lost_kernel > st.output_lost ? s->lost_kernel : st.output_lost),
			(unsigned long long)s->lost_kernel_side, GATE_RECORD_MAX,
			(unsigned long long)st.too_big);
	if (st.threads_full)
		pr_warn("%llu windows could not open: more than %d threads had windows open at once\n",
			(unsigned long long)st.threads_full, GATE_MAX_THREADS);
	if (gate__expr_lost(s->gate))
		pr_warn("%llu condition evaluations were false: a thread's $count could not be stored\n",
			(unsigned long long)gate__expr_lost(s->gate));
	for (size_t i = 0; i < s->nr_ons; i++) {
		struct gate_trigger_stats ts;

		gate__trigger_stats(s->gate, i, &ts);
		pr_info("--on %s: evaluated %llu, matched %llu, fired %llu, suppressed %llu, dropped %llu\n",
			s->ons[i].text, (unsigned long long)ts.evaluated, (unsigned long long)ts.matched,
			(unsigned long long)ts.fired, (unsigned long long)ts.suppressed,
			(unsigned long long)ts.dropped);
		if (ts.dropped)
			pr_warn("--on %s: %llu firings were lost (trigger channel full)\n", s->ons[i].text,
				(unsigned long long)ts.dropped);
	}
	if (s->nr_progs)
		pr_info("trigger programs: %llu action%s sent to auxtrig\n", (unsigned long long)s->prog_fired,
			s->prog_fired == 1 ? "" : "s");
	if (st.frozen)
		pr_info("%llu records after a snapshot trigger were held back until its snapshot was taken\n",
			(unsigned long long)st.frozen);
	if (s->snapshot_mode)
		pr_info("%lu snapshot%s, %llu records from the flight recorder\n", s->nr_snapshots,
			s->nr_snapshots == 1 ? "" : "s", (unsigned long long)s->snapshot_records);
	if (s->unknown)
		pr_warn("%llu records from the gate matched no tracepoint and were dropped\n",
			(unsigned long long)s->unknown);
	if (st.windows_filtered)
		pr_info("%llu window starts did not match --where\n",
			(unsigned long long)st.windows_filtered);
	if (hs) {
		unsigned long long limit = s->opts->hold_size ? s->opts->hold_size : WINDOW_HOLD_DEFAULT_LIMIT;
		char lim[96], hold[32];

		if (limit % (1 << 20))
			snprintf(hold, sizeof(hold), "%llu KiB", limit >> 10);
		else
			snprintf(hold, sizeof(hold), "%llu MiB", limit >> 20);
		snprintf(lim, sizeof(lim), "%s%s%s%s%s", s->opts->min_duration ? "shorter than " : "",
			 s->opts->min_duration ? s->opts->min_duration : "",
			 s->opts->min_duration && s->opts->max_duration ? " or " : "",
			 s->opts->max_duration ? "longer than " : "", s->opts->max_duration ? s->opts->max_duration : "");
		pr_info("windows by duration: %llu written, %llu dropped (%s; %llu records not written)%s\n",
			(unsigned long long)(hs->kept + hs->early_written),
			(unsigned long long)(hs->dropped + hs->early_dropped), lim,
			(unsigned long long)(hs->records_dropped + hs->records_early_dropped),
			hs->early_written + hs->early_dropped ? ", some before their verdict (below)" : "");
		if (hs->unfinished)
			pr_warn("%llu windows were still open at the end (duration unknown): their %llu records were not written\n",
				(unsigned long long)hs->unfinished, (unsigned long long)hs->records_unfinished);
		if (hs->early_written)
			pr_warn("held records reached --hold-size %s: %llu window%s held longest %s written before "
				"their verdict (%llu records); %llu of them then proved %s\n", hold,
				(unsigned long long)hs->early_written, hs->early_written == 1 ? "" : "s",
				hs->early_written == 1 ? "was" : "were", (unsigned long long)hs->records_early_written,
				(unsigned long long)hs->early_written_wrong, lim);
		if (hs->early_dropped)
			pr_warn("held records reached --hold-size %s: %llu window%s held longest %s dropped before "
				"their verdict (%llu records); %llu of them then proved within the limits: %llu records lost\n",
				hold, (unsigned long long)hs->early_dropped, hs->early_dropped == 1 ? "" : "s",
				hs->early_dropped == 1 ? "was" : "were", (unsigned long long)hs->records_early_dropped,
				(unsigned long long)hs->early_dropped_wrong, (unsigned long long)hs->records_lost);
		pr_info("held for their verdict: at most %.1f MiB\n", hs->peak_bytes / 1048576.0);
	}
}

static int check_output_path(const char *path, bool force)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
			pr_err("cannot create %s: directory %s does not exist\n", path, dir);
			return -ENOENT;
		}
	}
	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode)) {
			pr_err("will not write %s: it is a symbolic link\n", path);
			return -ELOOP;
		}
		if (!force) {
			pr_err("%s exists: use -f to overwrite it, or -o to name another file\n", path);
			return -EEXIST;
		}
		if (!S_ISREG(st.st_mode)) {
			pr_err("will not overwrite %s: not a regular file\n", path);
			return -EEXIST;
		}
	}
	return 0;
}

static void session_exit(struct session *s)
{
	for (size_t i = 0; i < s->nr_side; i++)
		close(s->side_fds[i]);
	for (size_t i = 0; i < s->nr_cpus; i++) {
		if (s->cpus[i].mapped)
			data_ring__munmap(&s->cpus[i].ring);
		if (s->cpus[i].side_mapped)
			data_ring__munmap(&s->cpus[i].side_ring);
		close(s->cpus[i].out_fd);
	}
	for (size_t i = 0; i < s->nr_progs; i++)
		trigger_prog__close(s->progs[i]);
	free(s->progs);
	free(s->cpus);
	free(s->cpu_mask);
	free(s->side_fds);
	free(s->side_ids);
	gate__close(s->gate);
	for (size_t i = 0; i < s->nr_tps; i++) {
		tp_format__exit(&s->tps[i].fmt);
		free(s->tps[i].own_format);
	}
	free(s->tps);
	free(s->tp_by_type);
	free(s->where);
	free(s->marker_format);
	for (size_t i = 0; i < s->nr_ons; i++) {
		tp_format__exit(&s->ons[i].fmt);
		free(s->ons[i].cond);
	}
	free(s->ons);
	window_hold__delete(s->hold);
	aux_session__delete(s->aux);
	if (s->have_target)
		target__exit(&s->target);
	if (s->sigfd > 0)
		close(s->sigfd);
	if (s->opts->control && !strncmp(s->opts->control, "fifo:", 5)) {
		if (s->ctl_fd >= 0)
			close(s->ctl_fd);
		if (s->ack_fd >= 0)
			close(s->ack_fd);
	}
	if (s->epfd > 0)
		close(s->epfd);
}

int recorder__run(const struct record_opts *o)
{
	return recorder__run_with(o, NULL);
}

int recorder__run_with(const struct record_opts *o, const struct aux_session_ops *aux_ops)
{
	struct session s = { .opts = o, .aux_ops = aux_ops, .epfd = -1, .sigfd = -1, .ctl_fd = -1, .ack_fd = -1,
			     .snapshot_mode = o->snapshot, .target = { .go_fd = -1, .err_fd = -1 } };
	struct gate_opts gopts = {};
	int err, ret = EXIT_RUNTIME;

	/* tracefs, BPF and system-wide perf events all need it: say so first. */
	if (!have_privileges()) {
		pr_err("record needs root, or CAP_BPF and CAP_PERFMON: run it with sudo\n");
		goto out;
	}

	/* Everything that can be wrong with the input is found before anything is created. */
	s.nr_possible = libbpf_num_possible_cpus();
	s.cpu_mask = calloc(s.nr_possible > 0 ? s.nr_possible : 1, sizeof(bool));
	if (s.nr_possible <= 0 || !s.cpu_mask)
		goto out;
	err = 0;
	if (o->cpus && cpumap__parse(o->cpus, s.nr_possible, s.cpu_mask)) {
		pr_err("-C %s: expected a list of CPUs 0-%d like 0-3,6\n", o->cpus, s.nr_possible - 1);
		err = -EINVAL;
	}
	for (int i = 0; !o->cpus && i < s.nr_possible; i++)
		s.cpu_mask[i] = true;
	if (!err)
		err = resolve_tracepoints(&s);
	if (!err)
		err = compile_where(&s);
	if (!err)
		err = parse_ons(&s);
	if (!err)
		err = check_durations(&s);
	if (!err)
		err = index_types(&s);
	if (!err && o->aux_event) {
		/* decided before the gate loads: it sends window edges only for the fallback */
		s.aux_pause = aux_pause_support(&s);
		s.aux_edges = (o->nr_windows || s.user_window) && s.aux_pause != PROBE_PAUSE_YES;
		aux_where_decide(&s);
		aux_prog_decide(&s);
	}
	if (!err && o->dry_run)
		err = aux_setup(&s, -1);
	if (!err && o->dry_run) {
		dry_run_print(&s);
		ret = EXIT_OK;
		goto out;
	}
	if (err) {
		/* Bad input: unknown names, malformed specs, out-of-range terms. */
		ret = err == -EINVAL || err == -ENOENT || err == -ERANGE ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (!o->dry_run && check_output_path(o->output, o->force))
		goto out;

	gopts.nr_cpus = s.nr_possible;
	gopts.all_processes = o->all;
	gopts.threads = o->tids != NULL;
	s.gate = gate__open(&gopts);
	if (!s.gate)
		goto out;
	if (!o->nr_windows && !s.user_window)
		gate__record_always(s.gate);
	if (s.user_window)
		gate__set_edge_types(s.gate, s.resume_type, s.pause_type);
	if (o->min_duration || o->max_duration) {
		gate__time_windows(s.gate, o->min_duration ? o->min_duration_ns : 0,
				   o->max_duration ? o->max_duration_ns : 0);
		s.hold = window_hold__new();
		if (s.hold)	/* past the limit: --min-duration writes, --max-duration drops, the oldest */
			window_hold__set_limit(s.hold, o->hold_size ? o->hold_size : WINDOW_HOLD_DEFAULT_LIMIT,
					       o->max_duration ? WINDOW_HOLD_DROP_OLDEST : WINDOW_HOLD_WRITE_OLDEST);
		if (!s.hold)
			goto out;
	}
	if (o->cpus)
		gate__record_only_cpus(s.gate);
	for (size_t i = 0; i < s.nr_tps; i++) {
		if (s.tps[i].own_format)
			continue; /* emitted by the gate's uprobe programs, not attached */
		err = gate__add_tp(s.gate, &s.tps[i].fmt, s.tps[i].open_mask, s.tps[i].close_mask,
				   s.tps[i].flags);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < o->nr_windows; i++) {
		const struct window_spec *w = &o->windows[i];

		if (w->kind == WINDOW_UPROBE &&
		    gate__add_uprobe_window(s.gate, i, w->start.path, w->start.symbol, w->start.offset))
			goto out;
		if (w->kind == WINDOW_POINTS && point__is_probe(&w->start) &&
		    gate__add_point(s.gate, &w->start, 1ULL << i, 0) < 0)
			goto out;
		if (w->kind == WINDOW_POINTS && point__is_probe(&w->stop) &&
		    gate__add_point(s.gate, &w->stop, 0, 1ULL << i) < 0)
			goto out;
	}
	if (s.have_uprobes) {
		const struct rec_tp *enter = tp_find(&s, "auxtrig", "uprobe_enter");
		const struct rec_tp *exit = tp_find(&s, "auxtrig", "uprobe_exit");

		gate__set_own_types(s.gate, enter->fmt.id, exit->fmt.id);
	}
	if (s.mark_type)
		gate__set_mark_type(s.gate, s.mark_type);
	if (s.where && gate__set_where(s.gate, s.where))
		goto out;
	for (size_t i = 0; i < s.nr_ons; i++)
		if ((point__is_probe(&s.ons[i].pt)
			     ? gate__add_point_trigger(s.gate, &s.ons[i].pt, &s.ons[i].t, s.ons[i].cond)
			     : gate__add_trigger(s.gate, &s.ons[i].fmt, &s.ons[i].t, s.ons[i].cond)) < 0)
			goto out;
	if (s.aux_edges)
		gate__signal_edges(s.gate);
	if (s.aux_veto)
		gate__aux_veto(s.gate);
	if (gate__load(s.gate))
		goto out;
	if (o->nr_trigger_progs) {
		s.progs = calloc(o->nr_trigger_progs, sizeof(*s.progs));
		if (!s.progs)
			goto out;
		for (size_t i = 0; i < o->nr_trigger_progs; i++) {
			s.progs[i] = trigger_prog__open(o->trigger_progs[i], s.gate);
			if (!s.progs[i]) {
				ret = errno == EINVAL || errno == ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
				goto out;
			}
			s.nr_progs++;
		}
	}
	if ((s.nr_ons || s.nr_progs || s.aux_edges || s.hold) && gate__ctl_open(s.gate, on_ctl, &s)) {
		pr_err("cannot open the trigger channel: %s\n", strerror(errno));
		goto out;
	}

	if (o->command) {
		err = target__fork_command(&s.target, o->command);
		if (err) {
			pr_err("cannot run '%s': %s\n", o->command[0],
			       err == -ENOENT ? "command not found" : strerror(-err));
			ret = err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
			goto out;
		}
	} else if (o->pids || o->tids) {
		const char *list = o->pids ? o->pids : o->tids;

		err = target__parse_pids(&s.target, list, o->tids != NULL);
		if (err) {
			pr_err("%s %s: %s\n", o->pids ? "-p" : "-t", list,
			       err == -ESRCH ? (o->pids ? "no such process" : "no such thread")
					     : (o->pids ? "expected PID[,PID...]" : "expected TID[,TID...]"));
			ret = err == -ESRCH ? EXIT_RUNTIME : EXIT_USAGE;
			goto out;
		}
	}
	s.target.all = o->all;
	s.have_target = true;
	err = aux_setup(&s, o->all ? -1 : s.target.pids[0]);
	if (err) {
		ret = err == -EINVAL || err == -ENOENT || err == -ERANGE ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	for (size_t i = 0; i < s.target.nr_pids; i++)
		if (s.target.is_command ? gate__add_exec_target(s.gate, s.target.pids[i])
					: gate__add_target(s.gate, s.target.pids[i]))
			goto out;

	if (open_cpu_events(&s) || open_sideband(&s))
		goto out;
	if (s.aux && aux_session__open(s.aux, s.aux_ops))
		goto out;
	err = gate__attach(s.gate);
	if (err) {
		ret = err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME; /* e.g. no such symbol */
		goto out;
	}
	if (control_open(&s))
		goto out;
	if (setup_loop(&s)) {
		pr_err("cannot set up the event loop: %s\n", strerror(errno));
		goto out;
	}

	s.w = pdata_writer__open(o->output, o->force);
	if (!s.w)
		goto out;	/* pdata_writer__open() said why */
	s.created_file = true;
	err = write_header(&s);
	if (!err)
		err = synthesize(&s);
	if (err) {
		pr_err("cannot write %s: %s\n", o->output, strerror(-err));
		goto out;
	}

	gate__arm(s.gate);
	if (s.aux && aux_session__start(s.aux)) {
		gate__disarm(s.gate);
		goto out;
	}
	err = target__start(&s.target);
	if (err) {
		pr_err("cannot run '%s': %s\n", o->command[0], strerror(-err));
		gate__disarm(s.gate);
		goto out;
	}
	if (!o->quiet)
		pr_info("recording %zu tracepoint%s in %zu window%s on %zu CPU%s; Ctrl-C to stop\n",
			s.nr_tps, s.nr_tps == 1 ? "" : "s", o->nr_windows, o->nr_windows == 1 ? "" : "s",
			s.nr_cpus, s.nr_cpus == 1 ? "" : "s");
	if (!o->quiet && s.aux) {
		char note[512];

		pr_info("hardware trace %s: %s\n", o->aux_event, o->nr_windows || s.user_window ? aux_path(&s) : "the whole run");
		if (aux_where_note(&s, note, sizeof(note)))
			pr_info("hardware trace %s: %s\n", o->aux_event, note);
	}

	control_ack(&s, ""); /* nothing: "ping" answers once armed */
	err = loop(&s);
	gate__disarm(s.gate);
	if (!err)
		err = gate__ctl_consume(s.gate); /* triggers that fired at the very end */
	if (!err)
		err = drain(&s);
	if (!err && s.snapshot_due) {
		/* snapshot+T still waiting: everything recorded is before its deadline. */
		s.snapshot_due = 0;
		err = triggered_snapshot(&s, &s.snapshot_msg);
	}
	if (!err)
		err = write_gate_losses(&s);
	if (!err)
		err = write_trigger_stats(&s);
	if (!err && o->snapshot_at_exit)
		err = take_snapshot(&s, "exit");
	if (s.hold)
		window_hold__end(s.hold); /* windows still open have no verdict: not written */
	if (!err && s.aux)
		err = aux_session__stop(s.aux, s.w);
	if (!err)
		err = pdata_writer__close(s.w);
	if (err) {
		/* Disk full or I/O error, while recording or finishing: keep what is on disk, readable. */
		int serr = pdata_writer__salvage(s.w);

		s.salvaged = true;
		if (serr)
			pr_err("recording stopped: %s could not be completed: %s\n", o->output, strerror(-serr));
		else
			pr_err("recording stopped: %s (%s); %s holds what was written before it\n",
			       strerror(-err), err == -ENOSPC ? "disk full" : "write error", o->output);
		goto out_summary;
	}
	ret = EXIT_OK;
	if ((s.signo || s.stop_requested) && s.target.is_command)
		target__kill(&s.target);
	else if (s.target.is_command && s.target.exited && WIFSIGNALED(s.target.status))
		pr_warn("%s was killed by signal %d (%s); the file holds everything up to then\n",
			o->command[0], WTERMSIG(s.target.status), strsignal(WTERMSIG(s.target.status)));
out_summary:
	s.created_file = false; /* it holds what was recorded: keep it */
	print_summary(&s);
	aux_gate_summary(&s);
out:
	if (s.created_file)
		pdata_writer__unlink(s.w);
	if (s.have_target && !s.target.exited)
		target__kill(&s.target);
	pdata_writer__delete(s.w);
	session_exit(&s);
	return ret;
}
