/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_AUX_EVENT_H
#define AUXTRIG_AUX_EVENT_H

/*
 * lang/ layer, the languages: -e PMU/TERMS/MODS resolved against PMU descriptions
 * (user/lang/aux_event.c); called by cmd/record_plan.c, the result read by record/.
 */

/**
 * DOC: AUX event specs
 *
 * Turns a perf-style event spec for a hardware-trace PMU into the
 * perf_event_attr perf 6.1 would open for it, against a PMU set from
 * pmu__scan() (so tests run against sysfs fixtures):
 *
 *   intel_pt//u   intel_pt/cyc,cyc_thresh=2/k   cs_etm/@tmc_etr0,timestamp/u
 *   arm_spe/ts_enable=1,load_filter=1/   arm_spe_0//
 *
 * Like perf's parse_events, the PMU's default config is applied first and
 * the spec's terms on top (a term clears its field, then sets it):
 *
 * - intel_pt: intel_pt_default_config() of [6.1]
 *   tools/perf/arch/x86/util/intel-pt.c: "tsc", ",mtc,mtc_period=P" if
 *   caps/mtc and caps/mtc_periods, ",psb_period=Q" if caps/psb_cyc and
 *   caps/mtc_periods and caps/psb_periods, ",pt,branch" if those formats exist;
 *   P and Q are intel_pt_pick_bit(caps, 3). Skylake: 0x300e601. pt=0 is
 *   forced back to 1 with perf's warning.
 * - cs_etm: for per-CPU recording perf 6.1's cs_etm_recording_options() ORs
 *   in the "contextid" format bits (if TRCIDR2.CIDSIZE == 4) and
 *   "timestamp" (if TRCIDR0.TSSIZE != 0) after the terms; "@sink" selects a
 *   sink by name and becomes term sinkid = the sink's id.
 * - arm_spe: no config bits by default; sample_period = caps/min_interval
 *   (4096 if absent), perf 6.1's arm_spe_pmu_default_config() as
 *   arm_spe_recording_options() applies it ([6.1] arch/arm64/util/arm-spe.c).
 *
 * Every AUX event gets freq = 0 and, SPE aside, sample_period = 1 (as perf's
 * recording options set); all get sample_type %PDATA_SAMPLE_TYPE, sample_id_all = 1,
 * disabled = 1, exclude_guest = 1 (perf's event_attr_init() with
 * perf_guest false) and size 128. Modifiers: "u" sets exclude_kernel and
 * exclude_hv, "k" exclude_user and exclude_hv, both together nothing (perf's
 * modifier parser). Intel PT in full-trace mode also gets aux_watermark =
 * AUX buffer size / 4.
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

struct pmu;
struct pmu_set;

/** enum aux_pmu_kind - which trace hardware an AUX PMU drives. */
enum aux_pmu_kind {
	AUX_PMU_OTHER = 0,
	AUX_PMU_INTEL_PT,
	AUX_PMU_CS_ETM,
	AUX_PMU_ARM_SPE,
};

#define AUX_EVENT_NAME_MAX 128
#define AUX_EVENT_SINK_MAX 64

/**
 * struct aux_event_opts - how the event will be recorded.
 * @per_thread: one event per thread (cpu -1) instead of one per CPU; perf
 *              6.1 adds CoreSight contextid/timestamp only per CPU.
 * @snapshot: overwrite (snapshot) mode; no aux_watermark then.
 * @aux_mmap_size: AUX buffer bytes; 0 means perf's privileged default 4 MiB.
 */
struct aux_event_opts {
	bool per_thread;
	bool snapshot;
	size_t aux_mmap_size;
};

/**
 * struct aux_event - a parsed AUX event.
 * @attr: the attr to open.
 * @pmu: the PMU it opens (owned by the set given to aux_event__parse()).
 * @kind: the trace hardware.
 * @name: the spec as given ("intel_pt//u"), for messages and EVENT_DESC.
 * @sink: CoreSight sink selected with "@name", "" if none.
 */
struct aux_event {
	struct perf_event_attr attr;
	const struct pmu *pmu;
	enum aux_pmu_kind kind;
	char name[AUX_EVENT_NAME_MAX];
	char sink[AUX_EVENT_SINK_MAX];
};

/** aux_pmu__kind() - the kind of AUX PMU named @name (arm_spe_0 → ARM_SPE). */
enum aux_pmu_kind aux_pmu__kind(const char *name);

/**
 * aux_event__parse() - parse @spec ("pmu/terms/modifiers") into @ev.
 * @ev: filled on success.
 * @set: the PMUs of this machine (or a fixture).
 * @spec: the event spec.
 * @opts: recording mode; NULL = per-CPU full trace with 4 MiB buffers.
 *
 * "arm_spe" also matches a PMU "arm_spe_<N>" (the first, as perf's suffix
 * match does). Errors are reported with pr_err(), naming the valid terms or
 * values.
 *
 * Return: 0; -ENOENT no such PMU ("try: auxtrig probe") or unknown term;
 * -EINVAL malformed spec, unknown modifier, unknown sink, or a PMU that
 * does not record through the AUX area; -ERANGE bad term value;
 * -EOPNOTSUPP config3 term or a default perf would refuse (CoreSight without
 * context ID / timestamp support).
 */
int aux_event__parse(struct aux_event *ev, const struct pmu_set *set, const char *spec,
		     const struct aux_event_opts *opts);

/**
 * aux_event__intel_pt_pick_bit() - perf's intel_pt_pick_bit(): of the
 * values whose bit is set in @bits, the highest <= @target, else the lowest
 * above it; -1 if @bits is 0.
 */
int aux_event__intel_pt_pick_bit(__u64 bits, int target);

#endif
