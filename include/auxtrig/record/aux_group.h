/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_AUX_GROUP_H
#define AUXTRIG_AUX_GROUP_H

/*
 * record/ layer: one CPU's hardware-trace group (user/record/aux_group.c),
 * built and checked against the kernel's rules for aux_session.c.
 */

/**
 * DOC: hardware-trace groups
 *
 * One &struct aux_group describes the events opened on one CPU (or for one
 * thread, @cpu -1) for a hardware-trace window:
 *
 *   group leader   the AUX event (intel_pt, cs_etm, arm_spe), disabled = 1,
 *                  aux_start_paused for windows
 *   group members  trigger events, disabled = 0 so they run whenever the
 *                  leader does; sampling (period 1) because the kernel
 *                  pauses/resumes on each *overflow*; aux_resume opens the
 *                  window, aux_pause closes it
 *   tracking       perf's "dummy:u" sideband event (comm, mmap2, task,
 *                  context switches), not in the group. perf 6.1 uses two
 *                  dummies for Intel PT (tracking + a CPU-wide switch
 *                  event); one carrying both is equivalent for the decoder.
 *                  Not yet added: ksymbol/bpf_event and Intel PT's text_poke
 *                  event for kernel tracing.
 *
 * Modes: %AUX_GROUP_WINDOW (start paused, resume/pause triggers),
 * %AUX_GROUP_FREEZE (trace runs, a pause trigger freezes it on an error path;
 * recorded in snapshot mode), %AUX_GROUP_SNAPSHOT (plain snapshot or full
 * trace, no aux_action at all).
 *
 * aux_group__validate() applies the kernel's rules (kernel/events/core.c
 * perf_copy_attr(), perf_event_alloc(), perf_event_open() since 18d92bb57c39)
 * before anything is opened and returns the errno the kernel would.
 *
 * Without aux_action in the kernel or PERF_PMU_CAP_AUX_PAUSE in the PMU,
 * aux_group__fallback() describes the alternative: no aux_action bits, the
 * triggers *out of* the AUX group (a disabled leader would stop its members,
 * so triggers inside the group could never resume it), and
 * @gate_by_ioctl set: the recorder itself does PERF_EVENT_IOC_ENABLE /
 * PERF_EVENT_IOC_DISABLE on the AUX event when it sees a trigger.
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/sys/probe.h"
#include "uapi/linux/perf_event_aux.h"

struct pmu;

#define AUX_GROUP_MAX_MEMBERS 8

/** enum aux_group_mode - what the group records. */
enum aux_group_mode {
	AUX_GROUP_WINDOW = 0,
	AUX_GROUP_FREEZE,
	AUX_GROUP_SNAPSHOT,
};

/**
 * struct aux_group_event - one event of the group.
 * @attr: the attr to open.
 * @name: perf-style name ("syscalls:sys_enter_openat", "uprobe:/bin/x+0x1139").
 * @path: for uprobe events, the path config1 points at (borrowed from the
 *        caller, who keeps it alive until the event is opened); else NULL.
 */
struct aux_group_event {
	struct perf_event_attr attr;
	char name[AUX_EVENT_NAME_MAX];
	const char *path;
};

/**
 * struct aux_group - the events of one CPU or thread.
 * @mode: see &enum aux_group_mode.
 * @cpu: CPU to open on, -1 per thread.
 * @kind: trace hardware of the leader.
 * @leader_aux: the leader is an AUX area PMU's event (perf_get_aux_event()
 *              needs one to lead pause/resume triggers).
 * @leader: the AUX event.
 * @members, @nr_members: trigger events.
 * @tracking: the sideband dummy event, valid when @has_tracking.
 * @has_tracking: see @tracking.
 * @gate_by_ioctl: fallback: members are not grouped with the leader and the
 *                 recorder enables/disables the leader itself.
 */
struct aux_group {
	enum aux_group_mode mode;
	int cpu;
	enum aux_pmu_kind kind;
	bool leader_aux;
	struct aux_group_event leader;
	struct aux_group_event members[AUX_GROUP_MAX_MEMBERS];
	size_t nr_members;
	struct aux_group_event tracking;
	bool has_tracking;
	bool gate_by_ioctl;
};

/**
 * struct aux_group_caps - what `auxtrig probe` found.
 * @kernel_aux_action: the kernel knows attr.aux_action (6.13+, 6.12.24+).
 * @pmu_aux_pause: the AUX PMU has PERF_PMU_CAP_AUX_PAUSE.
 */
struct aux_group_caps {
	bool kernel_aux_action;
	bool pmu_aux_pause;
};

/**
 * aux_group_caps__from_probe() - caps from `auxtrig probe`'s verdict on the
 * AUX PMU (&enum probe_pause): YES → both; NO_PMU (EOPNOTSUPP) → kernel
 * only; NO_KERNEL (EINVAL) and UNKNOWN → neither, so the caller falls back
 * rather than guess.
 */
void aux_group_caps__from_probe(struct aux_group_caps *caps, enum probe_pause pause);

/**
 * aux_group__init() - start a group led by @ev.
 * @g: the group to fill.
 * @ev: the parsed AUX event (copied).
 * @mode: window, freeze or snapshot; %AUX_GROUP_WINDOW sets aux_start_paused.
 * @cpu: CPU, or -1 per thread.
 * Return: 0, or -EINVAL if @ev is not an AUX PMU's event.
 */
int aux_group__init(struct aux_group *g, const struct aux_event *ev, enum aux_group_mode mode,
		    int cpu);

/**
 * aux_group__add_tracepoint() - add a tracepoint trigger.
 * @g: the group.
 * @name: "system:event", for printing.
 * @id: the tracepoint id (tracefs events/<system>/<event>/id), goes to config.
 * @action: %AUXTRIG_AUX_RESUME, %AUXTRIG_AUX_PAUSE or 0 (a plain member).
 * Return: 0, or -E2BIG when the group is full. Rules are checked by
 * aux_group__validate(), not here, so refused combinations can be described.
 */
int aux_group__add_tracepoint(struct aux_group *g, const char *name, __u64 id, __u32 action);

/**
 * aux_group__add_uprobe() - add a uprobe PMU trigger.
 * @g: the group.
 * @uprobe: the "uprobe" PMU (type, format/retprobe) from pmu__scan().
 * @path: binary; config1 = its address, so it must outlive the open.
 * @offset: file offset of the probed instruction (config2).
 * @retprobe: a return probe (format term "retprobe", config:0).
 * @action: as for aux_group__add_tracepoint().
 * Return: 0, -E2BIG when full, or pmu__config_term()'s error.
 */
int aux_group__add_uprobe(struct aux_group *g, const struct pmu *uprobe, const char *path,
			  __u64 offset, bool retprobe, __u32 action);

/**
 * aux_group__add_kprobe() - add a kprobe PMU trigger.
 * @g: the group.
 * @kprobe: the "kprobe" PMU (type, format/retprobe) from pmu__scan().
 * @symbol: kernel function; config1 = its address, so it must outlive the open.
 * @offset: bytes into the function (config2; 0 for a return probe).
 * @retprobe: a return probe (format term "retprobe", config:0).
 * @action: as for aux_group__add_tracepoint().
 * Return: 0, -E2BIG when full, or pmu__config_term()'s error.
 */
int aux_group__add_kprobe(struct aux_group *g, const struct pmu *kprobe, const char *symbol,
			  __u64 offset, bool retprobe, __u32 action);

/**
 * aux_group__add_tracking() - add perf's "dummy:u" tracking event: mmap,
 * mmap2, comm, comm_exec, task and context_switch, sampling period 1. Its
 * switch records are CPU-wide ones (PERF_RECORD_SWITCH_CPU_WIDE,
 * INTEL_PT_HAVE_SCHED_SWITCH 3) only when it is opened for every task
 * (pid -1); for one task's events per CPU they are that task's own
 * (PERF_RECORD_SWITCH, 2); per thread too, where they tell perf on which
 * CPU the thread ran (0: the AUXTRACE names the thread).
 * aux_session__write_info() says which.
 */
void aux_group__add_tracking(struct aux_group *g);

/**
 * aux_group__validate() - check the kernel's rules before opening.
 * @g: the group.
 * @caps: what the kernel and PMU can do.
 *
 * Events are checked in opening order (leader, members), each in the
 * kernel's order: any aux_action bit without kernel support, or bits 3..31
 * (perf_copy_attr): -EINVAL; aux_output with aux_pause/aux_resume:
 * -EOPNOTSUPP; aux_pause with aux_resume: -EINVAL; aux_start_paused on a PMU
 * without the capability (every non-AUX PMU): -EOPNOTSUPP
 * (perf_event_alloc); aux_pause/aux_resume on the leader itself, or in a
 * group whose leader is not an AUX PMU with the capability: -EINVAL
 * (perf_event_open, perf_get_aux_event). auxtrig's own rule on top: a
 * pause/resume member that is not sampling would never fire: -EINVAL.
 * Each refusal is reported with pr_err().
 *
 * Return: 0 or the -errno the kernel would return.
 */
int aux_group__validate(const struct aux_group *g, const struct aux_group_caps *caps);

/**
 * aux_group__fallback() - turn @g into the userspace-gated description:
 * aux_action bits cleared everywhere, members ungrouped, @gate_by_ioctl set.
 */
void aux_group__fallback(struct aux_group *g);

/**
 * aux_group__adapt() - use aux_action if @caps allow it, else
 * aux_group__fallback() with a warning saying why. Snapshot groups are
 * left alone. Return: true if the group now gates by ioctl.
 */
bool aux_group__adapt(struct aux_group *g, const struct aux_group_caps *caps);

#endif
