// SPDX-License-Identifier: BSD-2-Clause
/* Hardware-trace groups: AUX leader, pause/resume triggers, tracking event. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "auxtrig/record/aux_group.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/sys/pmu.h"

static __u32 aux_group__action(const struct perf_event_attr *attr)
{
	return *perf_attr_aux_action((struct perf_event_attr *)attr);
}

static void aux_group__set_action(struct perf_event_attr *attr, __u32 action)
{
	*perf_attr_aux_action(attr) = action;
}

void aux_group_caps__from_probe(struct aux_group_caps *caps, enum probe_pause pause)
{
	caps->kernel_aux_action = pause == PROBE_PAUSE_YES || pause == PROBE_PAUSE_NO_PMU;
	caps->pmu_aux_pause = pause == PROBE_PAUSE_YES;
}

int aux_group__init(struct aux_group *g, const struct aux_event *ev, enum aux_group_mode mode,
		    int cpu)
{
	memset(g, 0, sizeof(*g));
	if (ev->kind == AUX_PMU_OTHER && (!ev->pmu || !ev->pmu->aux)) {
		pr_err("%s cannot lead a trace group: not an AUX area PMU\n", ev->name);
		return -EINVAL;
	}
	g->mode = mode;
	g->cpu = cpu;
	g->kind = ev->kind;
	g->leader_aux = ev->pmu ? ev->pmu->aux : ev->kind != AUX_PMU_OTHER;
	g->leader.attr = ev->attr;
	snprintf(g->leader.name, sizeof(g->leader.name), "%s", ev->name);
	if (mode == AUX_GROUP_WINDOW)
		aux_group__set_action(&g->leader.attr, AUXTRIG_AUX_START_PAUSED);
	return 0;
}

/* A trigger: sampling on every hit, no exclude_user/kernel (a syscall
 * tracepoint fires with user regs; exclude_* would silently drop hits). */
static struct aux_group_event *aux_group__new_member(struct aux_group *g, __u32 type, __u32 action)
{
	struct aux_group_event *m;

	if (g->nr_members >= AUX_GROUP_MAX_MEMBERS) {
		pr_err("trace group of %s is full (%d triggers)\n", g->leader.name,
		       AUX_GROUP_MAX_MEMBERS);
		return NULL;
	}
	m = &g->members[g->nr_members++];
	memset(m, 0, sizeof(*m));
	m->attr.size = sizeof(m->attr);
	m->attr.type = type;
	m->attr.sample_period = 1;
	m->attr.sample_type = PDATA_SAMPLE_TYPE;
	m->attr.sample_id_all = 1;
	m->attr.exclude_guest = 1;
	aux_group__set_action(&m->attr, action);
	return m;
}

int aux_group__add_tracepoint(struct aux_group *g, const char *name, __u64 id, __u32 action)
{
	struct aux_group_event *m = aux_group__new_member(g, PERF_TYPE_TRACEPOINT, action);

	if (!m)
		return -E2BIG;
	m->attr.config = id;
	snprintf(m->name, sizeof(m->name), "%s", name);
	return 0;
}

int aux_group__add_uprobe(struct aux_group *g, const struct pmu *uprobe, const char *path,
			  __u64 offset, bool retprobe, __u32 action)
{
	struct aux_group_event *m = aux_group__new_member(g, uprobe->type, action);
	int err;

	if (!m)
		return -E2BIG;
	if (retprobe) {
		err = pmu__config_term(uprobe, "retprobe", 1, &m->attr);
		if (err) {
			g->nr_members--;
			return err;
		}
	}
	m->attr.config1 = (__u64)(uintptr_t)path; /* uprobe_path */
	m->attr.config2 = offset;		   /* probe_offset */
	m->path = path;
	snprintf(m->name, sizeof(m->name), "%s:%s+%#llx", retprobe ? "uretprobe" : "uprobe", path,
		 (unsigned long long)offset);
	return 0;
}

int aux_group__add_kprobe(struct aux_group *g, const struct pmu *kprobe, const char *symbol,
			  __u64 offset, bool retprobe, __u32 action)
{
	struct aux_group_event *m = aux_group__new_member(g, kprobe->type, action);
	int err;

	if (!m)
		return -E2BIG;
	if (retprobe) {
		err = pmu__config_term(kprobe, "retprobe", 1, &m->attr);
		if (err) {
			g->nr_members--;
			return err;
		}
	}
	m->attr.config1 = (__u64)(uintptr_t)symbol; /* kprobe_func */
	m->attr.config2 = offset;		     /* probe_offset */
	m->path = symbol;
	if (offset)
		snprintf(m->name, sizeof(m->name), "%s:%s+%#llx", retprobe ? "kretprobe" : "kprobe", symbol,
			 (unsigned long long)offset);
	else
		snprintf(m->name, sizeof(m->name), "%s:%s", retprobe ? "kretprobe" : "kprobe", symbol);
	return 0;
}

void aux_group__add_tracking(struct aux_group *g)
{
	struct perf_event_attr *a = &g->tracking.attr;

	memset(&g->tracking, 0, sizeof(g->tracking));
	snprintf(g->tracking.name, sizeof(g->tracking.name), "dummy:u");
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->sample_type = PDATA_SAMPLE_TYPE;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
	a->mmap = 1;
	a->comm = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->mmap2 = 1;
	a->comm_exec = 1;
	a->context_switch = 1;
	g->has_tracking = true;
}

/* One event, in the kernel's order; @leader_ok: the group leader is an AUX PMU with the cap. */
static int aux_group__check_event(const struct aux_group_event *e, bool is_leader, bool pmu_cap,
				  bool leader_ok, const struct aux_group_caps *caps)
{
	__u32 act = aux_group__action(&e->attr);
	bool pause = act & AUXTRIG_AUX_PAUSE, resume = act & AUXTRIG_AUX_RESUME;

	/* perf_copy_attr() */
	if (act && !caps->kernel_aux_action) {
		pr_err("%s: this kernel has no aux_action (needs 6.13 or 6.12.24+): EINVAL\n", e->name);
		return -EINVAL;
	}
	if (act & ~AUXTRIG_AUX_ACTION_MASK) {
		pr_err("%s: aux_action %#x has reserved bits 3..31 set: EINVAL\n", e->name, act);
		return -EINVAL;
	}
	/* perf_event_alloc() */
	if (e->attr.aux_output && (pause || resume)) {
		pr_err("%s: aux_output cannot be combined with aux_pause/aux_resume: EOPNOTSUPP\n",
		       e->name);
		return -EOPNOTSUPP;
	}
	if (pause && resume) {
		pr_err("%s: one event cannot both pause and resume; use two triggers: EINVAL\n",
		       e->name);
		return -EINVAL;
	}
	if ((act & AUXTRIG_AUX_START_PAUSED) && !pmu_cap) {
		pr_err("%s: aux_start_paused needs a PMU that can pause (PERF_PMU_CAP_AUX_PAUSE); %s: EOPNOTSUPP\n",
		       e->name, is_leader ? "this AUX PMU cannot" : "only the AUX leader can start paused");
		return -EOPNOTSUPP;
	}
	/* perf_event_open(): perf_need_aux_event() && !perf_get_aux_event() */
	if ((pause || resume) && (is_leader || !leader_ok)) {
		pr_err("%s: aux_pause/aux_resume need a group led by an AUX event whose PMU can pause%s: EINVAL\n",
		       e->name, is_leader ? " (not on the AUX event itself)" : "");
		return -EINVAL;
	}
	if ((pause || resume) && !e->attr.sample_period) {
		pr_err("%s: a pause/resume trigger must sample (period 1); a counting event never overflows, so it would never fire\n",
		       e->name);
		return -EINVAL;
	}
	return 0;
}

int aux_group__validate(const struct aux_group *g, const struct aux_group_caps *caps)
{
	bool leader_aux = g->leader_aux;
	bool leader_ok = leader_aux && caps->pmu_aux_pause && caps->kernel_aux_action &&
			 !g->gate_by_ioctl;
	int err;

	err = aux_group__check_event(&g->leader, true, leader_aux && caps->pmu_aux_pause, false,
				     caps);
	for (size_t i = 0; !err && i < g->nr_members; i++)
		err = aux_group__check_event(&g->members[i], false, false, leader_ok, caps);
	if (!err && g->has_tracking)
		err = aux_group__check_event(&g->tracking, false, false, false, caps);
	return err;
}

void aux_group__fallback(struct aux_group *g)
{
	aux_group__set_action(&g->leader.attr, 0);
	for (size_t i = 0; i < g->nr_members; i++)
		aux_group__set_action(&g->members[i].attr, 0);
	/* the recorder enables the leader itself; in window mode it starts disabled anyway */
	g->leader.attr.disabled = 1;
	g->gate_by_ioctl = g->mode != AUX_GROUP_SNAPSHOT;
}

bool aux_group__adapt(struct aux_group *g, const struct aux_group_caps *caps)
{
	if (g->mode == AUX_GROUP_SNAPSHOT)
		return false;
	if (caps->kernel_aux_action && caps->pmu_aux_pause)
		return g->gate_by_ioctl;
	pr_warn("%s: %s; gating the trace from userspace with PERF_EVENT_IOC_ENABLE/DISABLE "
		"(slower, and the first instructions after a trigger are lost)\n", g->leader.name,
		!caps->kernel_aux_action ? "this kernel has no aux_action (needs 6.13 or 6.12.24+)"
					 : "this PMU cannot pause/resume in the kernel");
	aux_group__fallback(g);
	return true;
}
