// SPDX-License-Identifier: BSD-2-Clause
/* Hardware trace in a recording: the path its windows take, the AUX session's setup, edges, summary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/record/aux_session.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/record/hw_trace.h"
#include "auxtrig/record/plan.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/pmu.h"
#include "uapi/linux/perf_event_aux.h"

/*
 * Can the AUX event start paused and be paused/resumed by its group's
 * triggers? Tried, not guessed (as auxtrig probe does): the plan's event
 * with aux_start_paused, opened through the session's kernel. EOPNOTSUPP: the
 * kernel knows aux_action, the PMU lacks it; EINVAL: the kernel has no
 * aux_action. With --sysfs-root on the running kernel the PMU is a fixture,
 * not this machine's: the kernel is asked with a software event and the PMU
 * is taken to support it as its driver does upstream.
 */
static enum probe_pause pause_support(const struct record_plan *p, const struct perf_sys *sys)
{
	struct perf_event_attr a = { .size = sizeof(a), .disabled = 1 };
	int fd, err;

	if (p->sysfs_root && perf_sys__is_kernel(sys)) {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		*perf_attr_aux_action(&a) = AUXTRIG_AUX_START_PAUSED;
		fd = perf_sys__event_open(&perf_sys__kernel, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		err = fd < 0 ? -fd : 0;
		perf_sys__close(&perf_sys__kernel, fd);
		if (err == EINVAL)
			return PROBE_PAUSE_NO_KERNEL;
		return p->aux->kind == AUX_PMU_ARM_SPE ? PROBE_PAUSE_NO_PMU : PROBE_PAUSE_YES;
	}
	a = p->aux->attr;
	a.disabled = 1;
	*perf_attr_aux_action(&a) = AUXTRIG_AUX_START_PAUSED;
	fd = perf_sys__event_open(sys, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	err = fd < 0 ? -fd : 0;
	perf_sys__close(sys, fd);
	return !err ? PROBE_PAUSE_YES : err == EOPNOTSUPP ? PROBE_PAUSE_NO_PMU
		: err == EINVAL ? PROBE_PAUSE_NO_KERNEL : PROBE_PAUSE_UNKNOWN;
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
static void where_decide(struct hw_trace *hw, const struct record_plan *p)
{
	if (!p->where || hw->edges)
		return;
	for (size_t i = 0; i < p->nr_windows; i++) {
		if (p->windows[i].kind != WINDOW_UPROBE) {
			hw->where_gated = p->windows[i].text;
			hw->edges = true;
			return;
		}
	}
	hw->veto = p->nr_windows > 0;
}

/*
 * Windows that only BPF can decide cannot be aux_resume/aux_pause members: a
 * trigger program's windows (-w prog), and --on resume/pause with a condition
 * or rate policy (the kernel's aux action would act at every hit). Their
 * edges go to userspace, which gates the trace.
 */
static void prog_decide(struct hw_trace *hw, const struct record_plan *p)
{
	/*
	 * -w prog windows have no member of their own in the AUX group: the
	 * session learns that the run has windows only from this, even where
	 * the kernel already forces the gate (no aux_action), else it builds
	 * a whole-run group that disagrees with the gate's edges.
	 */
	for (size_t i = 0; i < p->nr_windows; i++)
		if (p->windows[i].kind == WINDOW_PROG) {
			snprintf(hw->prog_why, sizeof(hw->prog_why), "the windows of -w prog (trigger programs)");
			hw->prog_gated = hw->prog_why;
			break;
		}
	for (size_t i = 0; !hw->edges && !hw->prog_gated && i < p->nr_triggers; i++) {
		const struct plan_trigger *on = &p->triggers[i];

		if (on->t.action != GATE_ACT_RESUME && on->t.action != GATE_ACT_PAUSE)
			continue;
		if (on->cond || on->t.policy != GATE_POLICY_ALWAYS || on->t.limit) {
			snprintf(hw->prog_why, sizeof(hw->prog_why), "--on '%.200s' (a condition or policy)", on->text);
			hw->prog_gated = hw->prog_why;
		} else if (point__is_probe(&on->pt)) {
			/* only a tracepoint becomes an aux_resume/aux_pause member: the gate's probe program acts */
			snprintf(hw->prog_why, sizeof(hw->prog_why), "--on '%.200s' (a probe point: its BPF program)", on->text);
			hw->prog_gated = hw->prog_why;
		}
	}
	if (hw->prog_gated)
		hw->edges = true;
}

/*
 * A window with a mem: end is gated from userspace: the gate's breakpoint on
 * the address is the only one. An aux_resume/aux_pause breakpoint member in
 * the AUX group would be a second breakpoint on the same address, and two do
 * not both fire everywhere (under QEMU TCG only one does, the gate's; and
 * each takes one of the CPU's few debug registers). Nor can the member carry
 * the gate's program instead of the gate's own breakpoint: a breakpoint's BPF
 * program runs inside the overflow after the kernel's aux_pause and before
 * its aux_resume, which happen whatever it returns (kernel/events/core.c:
 * __perf_event_overflow()), so --where could not act on them.
 */
static void mem_decide(struct hw_trace *hw, const struct record_plan *p)
{
	for (size_t i = 0; !hw->prog_gated && !hw->where_gated && i < p->nr_windows; i++) {
		const struct window_spec *w = &p->windows[i];

		if ((w->kind == WINDOW_POINTS || w->kind == WINDOW_SYSCALL) &&
		    (w->start.kind == POINT_MEM || w->stop.kind == POINT_MEM)) {
			hw->mem_gated = w->text;
			hw->edges = true;
			return;
		}
	}
}

/*
 * Per thread, CoreSight's ETR and ETF keep one memory per session: every
 * event of one owner that runs while another holds the sink writes into that
 * one's memory, and the last to stop copies it out only if it is its own
 * (coresight-tmc-etr.c: tmc_enable_etr_sink_perf() and
 * tmc_update_etr_buffer(), which WARNs and flags the AUX record truncated
 * otherwise). So per-thread trace of threads that run at the same time is
 * lost. A TRBE is per CPU and has no such rule. Without "@sink", the kernel
 * takes a per-CPU sink where there is one (coresight_find_default_sink():
 * TRBE before ETR before ETF), and sysfs names TRBEs trbeN.
 */
static void sink_decide(struct hw_trace *hw, const struct record_plan *p)
{
	const struct pmu *pmu = p->aux->pmu;
	const char *shared = NULL;

	hw->shared_sink[0] = '\0';
	if (p->aux->kind != AUX_PMU_CS_ETM || !hw_trace__per_thread(p) || !pmu)
		return;
	if (p->aux->sink[0]) {
		if (strncmp(p->aux->sink, "trbe", 4))
			shared = p->aux->sink;
	} else {
		for (size_t i = 0; i < pmu->nr_sinks; i++) {
			if (!strncmp(pmu->sinks[i].name, "trbe", 4))
				return;
			shared = shared ? "the default sink (there is no TRBE)" : pmu->sinks[i].name;
		}
	}
	if (shared)
		snprintf(hw->shared_sink, sizeof(hw->shared_sink), "%s", shared);
}

const char *hw_trace__sink_note(const struct hw_trace *hw, const struct record_plan *p, char *buf, size_t size)
{
	if (!hw->shared_sink[0])
		return NULL;
	snprintf(buf, size,
		 "per thread through %s, a sink the CPUs share: the driver keeps one memory for the session, so the trace of "
		 "threads of the target that run at the same time is lost (counted as truncated AUX records); a per-CPU "
		 "sink (TRBE) or -a/-C keeps it",
		 hw->shared_sink);
	(void)p;
	return buf;
}

void hw_trace__decide(struct hw_trace *hw, const struct record_plan *p, const struct perf_sys *sys)
{
	hw->sys = sys;
	if (!p->aux)
		return;
	hw->pause = pause_support(p, sys);
	sink_decide(hw, p);
	hw->edges = record_plan__has_windows(p) && hw->pause != PROBE_PAUSE_YES;
	where_decide(hw, p);
	prog_decide(hw, p);
	mem_decide(hw, p);
}

bool hw_trace__per_thread(const struct record_plan *p)
{
	return p->aux && !p->all && !p->cpus_given && (p->command || p->nr_pids);
}

void hw_trace__map_aux(const struct hw_trace *hw, const struct record_plan *p, struct window_map_aux *out)
{
	out->on = p->aux_event != NULL;
	out->veto = hw->veto ? p->where_text : NULL;
	out->gated = hw->prog_gated || hw->where_gated || hw->mem_gated;
}

const char *hw_trace__path(const struct hw_trace *hw)
{
	return hw->edges ? "windows gated from userspace (PERF_EVENT_IOC_ENABLE/DISABLE on each edge the gate sends)"
			 : "windows by in-kernel aux_pause/aux_resume";
}

const char *hw_trace__note(const struct hw_trace *hw, const struct record_plan *p, char *buf, size_t size)
{
	bool uprobes = p->uprobe_enter_type != 0;

	if (hw->prog_gated)
		snprintf(buf, size,
			 "windows gated from userspace, because %s decide in BPF at each hit, which the kernel's aux_resume/aux_pause cannot wait for",
			 hw->prog_gated);
	else if (hw->where_gated)
		snprintf(buf, size,
			 "--where: windows gated from userspace, because -w %s has a tracepoint end, whose BPF programs every perf user shares: "
			 "no condition can stop the kernel's aux_resume there without hiding the event from other tools%s",
			 hw->where_gated, uprobes ? " (the run's uprobe windows are gated from userspace too)" : "");
	else if (hw->mem_gated)
		snprintf(buf, size,
			 "windows gated from userspace, because -w %s has a mem: end: the gate's hardware breakpoint is the only one "
			 "on that address (a second one, an aux_resume/aux_pause member, would not fire reliably beside it)",
			 hw->mem_gated);
	else if (hw->veto)
		snprintf(buf, size,
			 "--where: checked in the kernel by BPF programs on each uprobe window's own uprobe/uretprobe members, "
			 "which resume the trace only at an outermost call where it holds and pause it at that call's return");
	else
		return NULL;
	return buf;
}

/*
 * The AUX session: one group per thread of the target (or per CPU), the AUX
 * event leading; each window adds its opening point (a syscall's or
 * tracepoint's entry, a function's entry) as an aux_resume member and its
 * closing point as an aux_pause member, so the kernel resumes and pauses the
 * trace with no round trip through auxtrig. Where the kernel or PMU cannot
 * (hw->edges), the session is gated instead: the gate sends each thread's
 * window edges and hw_trace__edge() enables and disables the AUX events.
 */
int hw_trace__setup(struct hw_trace *hw, const struct record_plan *p, struct window_map *m, struct gate *g,
		    pid_t pid, const pid_t *tids, size_t nr_tids)
{
	static const int per_thread[] = { -1 };
	struct aux_session_opts ao = {};
	int *cpus = NULL, err = -ENOMEM;
	size_t nr_cpus = 0;

	if (!p->aux)
		return 0;
	aux_session__delete(hw->aux); /* --dry-run's, if any */
	hw->aux = NULL;
	cpus = calloc(p->nr_possible, sizeof(*cpus));
	if (!cpus)
		goto out;
	for (int c = 0; c < p->nr_possible; c++)
		if (p->cpu_mask[c])
			cpus[nr_cpus++] = c;
	ao.event = p->aux;
	ao.pmus = p->pmus;
	ao.sysfs_root = p->sysfs_root;
	ao.cpus = cpus;
	ao.nr_cpus = nr_cpus;
	/*
	 * Per task, not per CPU: the trigger tracepoints in the group then fire
	 * only in the target's context. (A BPF program on them could not veto
	 * other processes' hits without hiding them from every perf user too.)
	 * Per thread where there is a target: each thread's group follows it.
	 */
	ao.pid = pid;
	if (hw_trace__per_thread(p)) {
		ao.cpus = per_thread;
		ao.nr_cpus = 1;
		ao.tids = tids;
		ao.nr_tids = nr_tids;
		ao.pid = nr_tids ? tids[0] : 0; /* --dry-run: one group, opened for no thread */
	}
	ao.snapshot = p->snapshot;
	ao.data_pages = p->mmap_pages;
	ao.aux_pages = p->aux_pages;
	ao.snapshot_size = p->snapshot ? p->aux_pages * sysconf(_SC_PAGESIZE) : 0;
	/* loaded with the gate (gate__aux_veto()); not yet on --dry-run */
	for (size_t i = 0; g && i < m->nr_aux; i++)
		if (m->aux[i].veto)
			m->aux[i].veto_prog_fd = gate__aux_veto_fd(g, m->aux[i].retprobe);
	ao.triggers = m->aux;
	ao.nr_triggers = m->nr_aux;
	ao.pause_support = hw->pause;
	ao.gate_from_userspace = hw->where_gated || hw->prog_gated || hw->mem_gated;
	err = aux_session__new(&hw->aux, &ao);
	if (!err && aux_session__gated(hw->aux) != hw->edges) {
		/* the gate was loaded with edges on or off: the session must agree */
		pr_err("-e %s: the AUX session and the gate disagree on who gates the trace\n", p->aux_event);
		err = -EPROTO;
	}
out:
	free(cpus);
	return err;
}

int hw_trace__add_thread(struct hw_trace *hw, pid_t tid, __u64 created_ns)
{
	struct timespec ts;
	__u64 late;
	int idx;

	if (!hw->aux)
		return -EINVAL;
	idx = aux_session__add_thread(hw->aux, tid);
	if (idx == -ESRCH) {
		hw->threads_gone++; /* it ended before its group could be opened */
		return idx;
	}
	if (idx < 0 && idx != -EEXIST)
		pr_warn("thread %d of the target: cannot open its hardware trace (%s): its windows are not traced\n", tid,
			strerror(-idx));
	if (idx < 0 || !created_ns)
		return idx;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	late = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	late = late > created_ns ? late - created_ns : 0;
	hw->threads_added++;
	hw->threads_late_ns_sum += late;
	if (late > hw->threads_late_ns_max)
		hw->threads_late_ns_max = late;
	return idx;
}

int hw_trace__remove_thread(struct hw_trace *hw, pid_t tid, struct record_sink *k)
{
	int err;

	if (!hw->aux)
		return 0;
	err = aux_session__remove_thread(hw->aux, tid, k);
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

int hw_trace__edge(struct hw_trace *hw, const struct record_plan *p, const struct gate_ctl_msg *m)
{
	int err;

	if (!hw->aux || !hw->edges)
		return 0;
	err = aux_session__edge(hw->aux, m->action == GATE_ACT_EDGE_OPEN, m->tid, m->time_ns);
	if (err)
		pr_err("cannot %s %s for a window edge: %s\n", m->action == GATE_ACT_EDGE_OPEN ? "enable" : "disable",
		       p->aux_event, strerror(-err));
	return err;
}

void hw_trace__summary(const struct hw_trace *hw, const struct record_plan *p, const struct gate *g)
{
	struct aux_session_gate_stats gs;
	struct aux_session_stats st;
	struct gate_edge_stats es;
	__u64 full;

	if (hw->aux) {
		aux_session__stats(hw->aux, &st);
		pr_info("hardware trace %s: %llu trace buffer%s written (%.1f KiB), %llu AUX record%s%s\n", p->aux_event,
			(unsigned long long)st.auxtrace, st.auxtrace == 1 ? "" : "s", st.aux_bytes / 1024.0,
			(unsigned long long)st.aux_records, st.aux_records == 1 ? "" : "s",
			p->snapshot ? " (snapshot mode: only the snapshots' buffers are written)" : "");
		if (st.snapshot_overwritten)
			pr_warn("hardware trace %s: %llu bytes at the old end of snapshots were left out: the trace, running on "
				"while they were copied, wrote over them\n", p->aux_event,
				(unsigned long long)st.snapshot_overwritten);
		if (st.lost)
			pr_warn("hardware trace %s: %llu records of its sideband (AUX records, context switches, COMM, MMAP) were lost: its ring was full; try a larger -m\n",
				p->aux_event, (unsigned long long)st.lost_events);
		if (st.truncated_empty && hw->shared_sink[0])
			pr_warn("hardware trace %s: %llu AUX records truncated with no trace: per thread through %s, a sink the "
				"CPUs share, the trace of threads that ran at the same time was lost (the driver keeps one memory "
				"per session; a per-CPU sink (TRBE) or -a/-C keeps it)\n", p->aux_event,
				(unsigned long long)st.truncated_empty, hw->shared_sink);
		full = st.truncated - (hw->shared_sink[0] ? st.truncated_empty : 0);
		if (full || st.partial || st.collision)
			pr_warn("hardware trace %s: %llu AUX records truncated (the AUX area was full: trace was lost; "
				"a larger area, -m ,PAGES, gives auxtrig more time to read it), %llu partial (with gaps), "
				"%llu with collisions\n", p->aux_event, (unsigned long long)full,
				(unsigned long long)st.partial, (unsigned long long)st.collision);
		if (st.truncated && !hw->edges && record_plan__has_windows(p))
			pr_warn("hardware trace %s: after each truncation the kernel kept the trace stopped until auxtrig had read "
				"the area; the window edges of that time did not reach it, so until a thread's next window ended "
				"its trace may have been missing or run outside a window\n", p->aux_event);
	}

	if (hw->aux && aux_session__per_thread(hw->aux)) {
		if (hw->threads_added)
			pr_info("hardware trace per thread: %llu threads and processes the target created were traced from when "
				"their group was open, %.1f us after their creation on average, at most %.1f us (they ran "
				"untraced until then)\n", (unsigned long long)hw->threads_added,
				hw->threads_late_ns_sum / 1e3 / hw->threads_added, hw->threads_late_ns_max / 1e3);
		if (hw->threads_gone)
			pr_info("hardware trace per thread: %llu threads the target created ended before their group was open: "
				"not traced\n", (unsigned long long)hw->threads_gone);
		aux_session__stats(hw->aux, &st);
		if (st.threads_failed > hw->threads_gone)
			pr_warn("hardware trace per thread: %llu threads the target created could not be traced (see above)\n",
				(unsigned long long)(st.threads_failed - hw->threads_gone));
		if (st.exited_dropped)
			pr_warn("hardware trace per thread: the trace of %llu exited threads was dropped before a snapshot "
				"took it: at most %d exited threads' buffers wait for the next snapshot, the longest "
				"exited goes first\n", (unsigned long long)st.exited_dropped, AUX_SESSION_MAX_EXITED);
	}

	if (hw->aux && hw->veto && g) {
		__u64 resumed, vetoed, paused, untracked;

		gate__aux_veto_stats(g, &resumed, &vetoed, &paused, &untracked);
		pr_info("hardware trace --where: %llu outermost calls resumed the trace, %llu were vetoed; %llu returns paused it\n",
			(unsigned long long)resumed, (unsigned long long)vetoed, (unsigned long long)paused);
		if (untracked)
			pr_warn("hardware trace --where: %llu calls not traced: too many threads inside uprobe windows at once (8192)\n",
				(unsigned long long)untracked);
	}
	if (!hw->aux || !hw->edges)
		return;
	aux_session__gate_stats(hw->aux, &gs);
	gate__edge_stats(g, &es);
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
			(unsigned long long)gs.other_threads, p->aux_event);
	if (gs.late)
		pr_warn("hardware trace gate: %llu windows closed before auxtrig could enable the trace for them (shorter than the round trip): their trace is missing\n",
			(unsigned long long)gs.late);
}

void hw_trace__exit(struct hw_trace *hw)
{
	aux_session__delete(hw->aux);
	hw->aux = NULL;
}
