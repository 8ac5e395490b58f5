/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_AUXTRACE_INFO_H
#define AUXTRIG_AUXTRACE_INFO_H

/*
 * format/ layer, perf.data as both sides share it: the AUXTRACE_INFO record
 * (user/format/auxtrace_info.c), written by record/aux_session.c, read by decode/.
 */

/**
 * DOC: PERF_RECORD_AUXTRACE_INFO
 *
 * Builds the AUXTRACE_INFO record (type 70) that tells perf's decoder how the
 * trace was recorded, exactly as perf 6.1 writes and reads it
 * (tools/perf/arch/x86/util/intel-pt.c intel_pt_info_fill(),
 * arch/arm/util/cs-etm.c cs_etm_info_fill(), arch/arm64/util/arm-spe.c
 * arm_spe_info_fill()):
 *
 * - Intel PT (type 1): 17 u64 (PMU type, TSC conversion, format masks of
 *   tsc/noretcomp/mtc/mtc_period/cyc, sched-switch kind, snapshot, per-CPU,
 *   CPUID.15H, max non-turbo ratio, filter length), the address filter if
 *   any, then caps/event_trace: 18 u64, 160 bytes, without a filter.
 * - CoreSight (type 3): header version 1 (perf 6.1 refuses 2), PMU type <<
 *   32 | nr_cpu, snapshot; then per CPU an ETMv4 block (magic
 *   0x4040404040404040, 7 registers) or an ETE block (0x5050505050505050,
 *   8 registers). TRCCONFIGR is computed from attr.config as perf's
 *   cs_etmv4_get_config() does; TRCTRACEIDR is the ID the kernel gives the
 *   CPU (auxtrace_info__cs_trace_id(); perf 6.1 knows no other: it ignores
 *   PERF_RECORD_AUX_OUTPUT_HW_ID, which auxtrig script reads).
 * - Arm SPE (type 4): v1, PMU type and per-CPU flag.
 *
 * Records are malloc()ed, header.size set, ready for pdata_writer__write().
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct perf_event_attr;
struct pmu;
struct pdata_record_auxtrace_info;

/* Intel PT priv[] indices, [6.1] tools/perf/util/intel-pt.h */
enum auxtrace_info_intel_pt {
	AUXTRACE_PT_PMU_TYPE,
	AUXTRACE_PT_TIME_SHIFT,
	AUXTRACE_PT_TIME_MULT,
	AUXTRACE_PT_TIME_ZERO,
	AUXTRACE_PT_CAP_USER_TIME_ZERO,
	AUXTRACE_PT_TSC_BIT,
	AUXTRACE_PT_NORETCOMP_BIT,
	AUXTRACE_PT_HAVE_SCHED_SWITCH,
	AUXTRACE_PT_SNAPSHOT_MODE,
	AUXTRACE_PT_PER_CPU_MMAPS,
	AUXTRACE_PT_MTC_BIT,
	AUXTRACE_PT_MTC_FREQ_BITS,
	AUXTRACE_PT_TSC_CTC_N,
	AUXTRACE_PT_TSC_CTC_D,
	AUXTRACE_PT_CYC_BIT,
	AUXTRACE_PT_MAX_NONTURBO_RATIO,
	AUXTRACE_PT_FILTER_STR_LEN,
	AUXTRACE_PT_PRIV_MAX, /* 17; the filter string and Cap Event Trace follow */
};

#define AUXTRACE_CS_HEADER_VERSION	1
#define AUXTRACE_CS_ETMV4_MAGIC		0x4040404040404040ULL
#define AUXTRACE_CS_ETE_MAGIC		0x5050505050505050ULL
#define AUXTRACE_CS_ETMV4_NR_PARAMS	7
#define AUXTRACE_CS_ETE_NR_PARAMS	8

/**
 * struct auxtrace_time_conv - the TSC conversion of perf_event_mmap_page
 * (read under its seqlock by the caller).
 */
struct auxtrace_time_conv {
	__u16 time_shift;
	__u32 time_mult;
	__u64 time_zero;
	bool cap_user_time_zero;
};

/**
 * struct auxtrace_info_pt_opts - what the Intel PT record says about the recording.
 * @time: TSC conversion; priv CAP_USER_TIME_ZERO = cap_user_time_zero && time_mult.
 * @have_sched_switch: 0 none, 1 sched_switch tracepoint, 2 per-task
 *                     context_switch, 3 CPU-wide context switch records.
 * @snapshot: snapshot (overwrite) mode.
 * @per_cpu_mmaps: one AUX buffer per CPU.
 * @tsc_ctc_n: CPUID.15H EBX (0 if unknown); @tsc_ctc_d: CPUID.15H EAX.
 * @max_nonturbo_ratio: intel_pt/max_nonturbo_ratio (0 if unknown).
 * @filter: address filter string, or NULL.
 */
struct auxtrace_info_pt_opts {
	struct auxtrace_time_conv time;
	int have_sched_switch;
	bool snapshot;
	bool per_cpu_mmaps;
	__u32 tsc_ctc_n;
	__u32 tsc_ctc_d;
	__u64 max_nonturbo_ratio;
	const char *filter;
};

/**
 * auxtrace_info__intel_pt() - the Intel PT record.
 * @pmu: intel_pt from pmu__scan() (formats and caps/event_trace).
 * @attr: the intel_pt attr (its type must be @pmu's).
 * @opts: see &struct auxtrace_info_pt_opts.
 * @rec: set to the malloc()ed record; @len: its size.
 * Return: 0, -EINVAL type mismatch, -E2BIG filter too long, -ENOMEM.
 */
int auxtrace_info__intel_pt(const struct pmu *pmu, const struct perf_event_attr *attr,
			    const struct auxtrace_info_pt_opts *opts,
			    struct pdata_record_auxtrace_info **rec, size_t *len);

/**
 * auxtrace_info__cs_etm() - the CoreSight record, header version 1.
 * @pmu: cs_etm from pmu__scan() (per-CPU trcidr/mgmt registers).
 * @attr: the cs_etm attr; its config gives TRCCONFIGR.
 * @cpus, @nr_cpus: the CPUs recorded, in mmap order.
 * @snapshot: snapshot mode.
 * @rec, @len: as for auxtrace_info__intel_pt().
 * Return: 0; -ENOENT a CPU without registers in sysfs; -EOPNOTSUPP an ETMv3/PTM
 * (not read by pmu.c); -E2BIG more than 64 KiB; -ENOMEM.
 */
int auxtrace_info__cs_etm(const struct pmu *pmu, const struct perf_event_attr *attr,
			  const int *cpus, size_t nr_cpus, bool snapshot,
			  struct pdata_record_auxtrace_info **rec, size_t *len);

/**
 * auxtrace_info__arm_spe() - the Arm SPE v1 record (2 u64).
 * Return: 0 or -ENOMEM.
 */
int auxtrace_info__arm_spe(const struct pmu *pmu, bool per_cpu_mmaps,
			   struct pdata_record_auxtrace_info **rec, size_t *len);

/**
 * auxtrace_info__cs_trcconfigr() - TRCCONFIGR for an attr.config, as perf's
 * cs_etmv4_get_config(): cycacc→CCI(4), contextid→CID(6), timestamp→TS(11),
 * retstack→RS(12), contextid2→VMID(7)|VMIDOPT(15), branch_broadcast→BB(3).
 */
__u64 auxtrace_info__cs_trcconfigr(__u64 config);

/**
 * auxtrace_info__cs_trace_id() - the CoreSight trace ID of @cpu's ETM.
 *
 * CPUs 0..47: the legacy 0x10 + 2 * cpu (CORESIGHT_LEGACY_CPU_TRACE_ID), the
 * ID kernels before 6.3 always use and later ones prefer. From CPU 48 on
 * that would be 0x70 and up, which are not trace IDs (valid: 0x01..0x6f);
 * the kernel's allocator (drivers/hwtracing/coresight/coresight-trace-id.c,
 * TRACE_ID_PREFER_ODD) gives such a CPU the first free odd ID, which is
 * 0x01 + 2 * (cpu - 48) when the CPUs take their IDs in order. The kernel
 * announces the ID it chose in a PERF_RECORD_AUX_OUTPUT_HW_ID record, which
 * auxtrig script prefers to this value.
 *
 * Return: the ID, or 0 for a CPU beyond the 104 that IDs can name.
 */
__u64 auxtrace_info__cs_trace_id(int cpu);

/**
 * auxtrace_info__host_tsc_ctc() - CPUID.15H of this machine.
 * Return: 0, or -EOPNOTSUPP off x86 or without leaf 0x15 (then both 0).
 */
int auxtrace_info__host_tsc_ctc(__u32 *n, __u32 *d);

/**
 * auxtrace_info__max_nonturbo_ratio() - read intel_pt/max_nonturbo_ratio.
 * @root: sysfs root, NULL for /sys.
 * Return: 0, or -errno (then @ratio is 0).
 */
int auxtrace_info__max_nonturbo_ratio(const char *root, __u64 *ratio);

#endif
