// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AUX session in perf.data's header: the leader's and tracking event's
 * attrs with every slot's ids, and the AUXTRACE_INFO record (per PMU: Intel
 * PT's TSC conversion and switch mode, CoreSight's ETM registers, SPE) that
 * perf and auxtrig script decode the AUX data with.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>

#include "auxtrig/format/auxtrace_info.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/record/internal/aux_session.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"

int aux_session__add_attrs(struct aux_session *s, struct pdata_writer *w)
{
	const struct aux_session_cpu *c0 = aux_session__first_open(s);
	size_t n = s->nr_slots, nl = 0, nt = 0;
	__u64 *ids = calloc(n, sizeof(*ids)), *tids = calloc(n, sizeof(*tids));
	int err = -ENOMEM;

	if (!ids || !tids)
		goto out;
	err = -EINVAL;
	if (!c0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (s->cpus[i]->closed)
			continue;
		ids[nl++] = s->cpus[i]->leader_id;
		if (s->cpus[i]->tracking_fd >= 0)
			tids[nt++] = s->cpus[i]->tracking_id;
	}
	err = pdata_writer__add_attr(w, &c0->g.leader.attr, s->ev.name, ids, nl);
	if (!err && nt)
		err = pdata_writer__add_attr(w, &c0->g.tracking.attr, c0->g.tracking.name, tids, nt);
	if (!err) {
		s->attrs_added = true;
		s->file_leader_id = c0->leader_id;
		s->file_tracking_id = c0->tracking_id;
	}
out:
	free(ids);
	free(tids);
	return err;
}

/* perf_event_mmap_page's TSC conversion under its seqlock (perf_read_tsc_conversion()). */
static void aux_session__time_conv(const struct perf_event_mmap_page *pc, struct auxtrace_time_conv *tc)
{
	__u32 seq;

	for (int tries = 0; tries < 20000; tries++) {
		if (tries && !(tries % 100)) {	/* as synth__time_conv(): let a held writer finish */
			struct timespec ms = { .tv_nsec = 1000000 };

			nanosleep(&ms, NULL);
		}
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		tc->time_shift = pc->time_shift;
		tc->time_mult = pc->time_mult;
		tc->time_zero = pc->time_zero;
		tc->cap_user_time_zero = pc->cap_user_time_zero;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == seq && !(seq & 1))
			return;
	}
}

/*
 * INTEL_PT_HAVE_SCHED_SWITCH: how perf 6.1 (util/intel-pt.c) learns which
 * thread a CPU's trace belongs to, from the switch records the tracking event
 * makes. 3: the CPU-wide switch-out records (PERF_RECORD_SWITCH_CPU_WIDE) that
 * only a CPU-wide event (pid -1) makes; any other switch record stops the
 * decoder ("Expecting CPU-wide context switch event"). 2: a per-task event's
 * own switch records (PERF_RECORD_SWITCH): each switch-in names the thread now
 * on the CPU (perf record -p without -a). 0: per-thread buffers, whose
 * AUXTRACE records name their thread: with any other value perf asks the
 * queue's CPU for its current thread instead, and a per-thread queue has none.
 * (Per thread the tracking event still records its switches: perf learns from
 * them on which CPU the thread ran.)
 */
static int aux_session__switch_mode(const struct aux_session *s, const struct aux_session_cpu *c0)
{
	if (!c0->g.has_tracking || !c0->g.tracking.attr.context_switch || s->per_thread)
		return 0;
	return s->o.pid < 0 ? 3 : 2;
}

/*
 * CoreSight: one block of ETM registers per CPU whose trace the file holds.
 * A thread's event (per thread) traces it on whichever CPU it runs, and the
 * decoder finds each CPU's trace ID in these blocks: every CPU with an ETM,
 * as perf's cs_etm_info_fill() describes every online CPU when the event's
 * CPU map is the per-thread one. Per CPU, the session's CPUs.
 */
static int aux_session__cs_etm_info(const struct aux_session *s, struct pdata_record_auxtrace_info **rec,
				    size_t *len)
{
	const struct pmu *pmu = s->ev.pmu;
	int *cpus;
	int err;

	if (!s->per_thread)
		return auxtrace_info__cs_etm(pmu, &s->ev.attr, s->o.cpus, s->o.nr_cpus, s->o.snapshot, rec, len);
	if (!pmu->nr_etm_cpus) {
		pr_err("%s: no cpuN/ under %s: no CPU has an ETM perf could trace a thread with\n", s->ev.name,
		       pmu->name);
		return -ENOENT;
	}
	cpus = calloc(pmu->nr_etm_cpus, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (size_t i = 0; i < pmu->nr_etm_cpus; i++)
		cpus[i] = pmu->etm_cpus[i].cpu;
	err = auxtrace_info__cs_etm(pmu, &s->ev.attr, cpus, pmu->nr_etm_cpus, s->o.snapshot, rec, len);
	free(cpus);
	return err;
}

int aux_session__write_info(struct aux_session *s, struct pdata_writer *w)
{
	struct pdata_record_auxtrace_info *rec = NULL;
	const struct aux_session_cpu *c0 = aux_session__first_open(s);
	size_t len = 0;
	int err;

	if (!s->opened || !c0)
		return -EINVAL;
	switch (s->ev.kind) {
	case AUX_PMU_INTEL_PT: {
		struct auxtrace_info_pt_opts po = {
			.have_sched_switch = aux_session__switch_mode(s, c0),
			.snapshot = s->o.snapshot,
			.per_cpu_mmaps = !s->per_thread,
		};

		aux_session__time_conv(data_ring__user_page(&c0->data), &po.time);
		auxtrace_info__host_tsc_ctc(&po.tsc_ctc_n, &po.tsc_ctc_d);
		auxtrace_info__max_nonturbo_ratio(s->o.sysfs_root, &po.max_nonturbo_ratio);
		err = auxtrace_info__intel_pt(s->ev.pmu, &s->ev.attr, &po, &rec, &len);
		break;
	}
	case AUX_PMU_CS_ETM:
		err = aux_session__cs_etm_info(s, &rec, &len);
		break;
	case AUX_PMU_ARM_SPE:
		err = auxtrace_info__arm_spe(s->ev.pmu, !s->per_thread, &rec, &len);
		break;
	default:
		err = -EOPNOTSUPP;
	}
	if (err) {
		pr_err("%s: cannot describe the trace for perf (AUXTRACE_INFO): %s\n", s->ev.name, strerror(-err));
		return err;
	}
	if (s->pmu_ops->info_fill)
		err = s->pmu_ops->info_fill(&c0->aux, rec->priv, (len - sizeof(*rec)) / sizeof(__u64));
	if (!err)
		err = pdata_writer__write(w, rec, len);
	free(rec);
	return err;
}
