// SPDX-License-Identifier: BSD-2-Clause
/* PERF_RECORD_AUXTRACE_INFO for Intel PT, CoreSight ETMv4/ETE and Arm SPE, as perf 6.1 writes them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "auxtrig/format/auxtrace_info.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/sys/pmu.h"

#define AUXTRACE_INFO_MAX_SIZE 65535 /* header.size is a u16 */

/* cs_etm attr.config bits, include/linux/coresight-pmu.h ETM_OPT_* */
#define ETM_OPT_BRANCH_BROADCAST 8
#define ETM_OPT_CYCACC		 12
#define ETM_OPT_CTXTID		 14
#define ETM_OPT_CTXTID2		 15
#define ETM_OPT_TS		 28
#define ETM_OPT_RETSTK		 29
/* TRCCONFIGR bits, ETM4_CFG_BIT_* */
#define ETM4_CFG_BIT_BB		 3
#define ETM4_CFG_BIT_CYCACC	 4
#define ETM4_CFG_BIT_CTXTID	 6
#define ETM4_CFG_BIT_VMID	 7
#define ETM4_CFG_BIT_TS		 11
#define ETM4_CFG_BIT_RETSTK	 12
#define ETM4_CFG_BIT_VMID_OPT	 15

#define TRCDEVARCH_ARCHPART(x)	 ((x) & 0xfff)
#define TRCDEVARCH_ARCHVER(x)	 (((x) >> 12) & 0xf)

static struct pdata_record_auxtrace_info *auxtrace_info__alloc(__u32 type, size_t nr_priv,
								size_t *len)
{
	size_t size = sizeof(struct pdata_record_auxtrace_info) + nr_priv * sizeof(__u64);
	struct pdata_record_auxtrace_info *rec;

	if (size > AUXTRACE_INFO_MAX_SIZE) {
		pr_err("AUXTRACE_INFO would be %zu bytes, more than a perf record can hold (65535)\n",
		       size);
		errno = E2BIG;
		return NULL;
	}
	rec = calloc(1, size);
	if (!rec)
		return NULL;
	rec->header.type = PDATA_RECORD_AUXTRACE_INFO;
	rec->header.size = size;
	rec->type = type;
	*len = size;
	return rec;
}

static __u64 auxtrace_info__mask(const struct pmu *pmu, const char *term)
{
	const struct pmu_format *f = pmu__find_format(pmu, term);

	return f ? f->mask : 0;
}

int auxtrace_info__intel_pt(const struct pmu *pmu, const struct perf_event_attr *attr,
			    const struct auxtrace_info_pt_opts *opts,
			    struct pdata_record_auxtrace_info **rec, size_t *len)
{
	size_t filter_len = opts->filter ? strlen(opts->filter) : 0;
	size_t filter_u64 = filter_len ? (filter_len + 1 + 7) / 8 : 0;
	__u64 event_trace = 0, *priv;

	if (attr->type != pmu->type) {
		pr_err("intel_pt AUXTRACE_INFO: attr type %u is not %s's type %u; the decoder would not find the event\n",
		       attr->type, pmu->name, pmu->type);
		return -EINVAL;
	}
	*rec = auxtrace_info__alloc(PDATA_AUXTRACE_INTEL_PT, AUXTRACE_PT_PRIV_MAX + filter_u64 + 1, len);
	if (!*rec)
		return -errno;
	priv = (*rec)->priv;
	pmu__cap_value(pmu, "event_trace", &event_trace);

	priv[AUXTRACE_PT_PMU_TYPE] = pmu->type;
	priv[AUXTRACE_PT_TIME_SHIFT] = opts->time.time_shift;
	priv[AUXTRACE_PT_TIME_MULT] = opts->time.time_mult;
	priv[AUXTRACE_PT_TIME_ZERO] = opts->time.time_zero;
	priv[AUXTRACE_PT_CAP_USER_TIME_ZERO] = opts->time.cap_user_time_zero && opts->time.time_mult;
	priv[AUXTRACE_PT_TSC_BIT] = auxtrace_info__mask(pmu, "tsc");
	priv[AUXTRACE_PT_NORETCOMP_BIT] = auxtrace_info__mask(pmu, "noretcomp");
	priv[AUXTRACE_PT_HAVE_SCHED_SWITCH] = opts->have_sched_switch;
	priv[AUXTRACE_PT_SNAPSHOT_MODE] = opts->snapshot;
	priv[AUXTRACE_PT_PER_CPU_MMAPS] = opts->per_cpu_mmaps;
	priv[AUXTRACE_PT_MTC_BIT] = auxtrace_info__mask(pmu, "mtc");
	priv[AUXTRACE_PT_MTC_FREQ_BITS] = auxtrace_info__mask(pmu, "mtc_period");
	priv[AUXTRACE_PT_TSC_CTC_N] = opts->tsc_ctc_n;
	priv[AUXTRACE_PT_TSC_CTC_D] = opts->tsc_ctc_d;
	priv[AUXTRACE_PT_CYC_BIT] = auxtrace_info__mask(pmu, "cyc");
	priv[AUXTRACE_PT_MAX_NONTURBO_RATIO] = opts->max_nonturbo_ratio;
	priv[AUXTRACE_PT_FILTER_STR_LEN] = filter_len;
	if (filter_len)
		memcpy(&priv[AUXTRACE_PT_PRIV_MAX], opts->filter, filter_len); /* NUL-padded by calloc */
	priv[AUXTRACE_PT_PRIV_MAX + filter_u64] = event_trace;
	return 0;
}

__u64 auxtrace_info__cs_trcconfigr(__u64 config)
{
	__u64 r = 0;

	if (config & (1ULL << ETM_OPT_CYCACC))
		r |= 1ULL << ETM4_CFG_BIT_CYCACC;
	if (config & (1ULL << ETM_OPT_CTXTID))
		r |= 1ULL << ETM4_CFG_BIT_CTXTID;
	if (config & (1ULL << ETM_OPT_TS))
		r |= 1ULL << ETM4_CFG_BIT_TS;
	if (config & (1ULL << ETM_OPT_RETSTK))
		r |= 1ULL << ETM4_CFG_BIT_RETSTK;
	if (config & (1ULL << ETM_OPT_CTXTID2))
		r |= (1ULL << ETM4_CFG_BIT_VMID) | (1ULL << ETM4_CFG_BIT_VMID_OPT);
	if (config & (1ULL << ETM_OPT_BRANCH_BROADCAST))
		r |= 1ULL << ETM4_CFG_BIT_BB;
	return r;
}

__u64 auxtrace_info__cs_trace_id(int cpu)
{
	if (cpu < 0)
		return 0;
	if (cpu < 48)
		return 0x10 + 2 * cpu;	/* the legacy IDs, even, 0x10..0x6e */
	if (cpu < 48 + 56)
		return 0x01 + 2 * (cpu - 48);	/* the odd ones, 0x01..0x6f, in allocation order */
	return 0;
}

static const struct pmu_etm_cpu *auxtrace_info__etm(const struct pmu *pmu, int cpu)
{
	for (size_t i = 0; i < pmu->nr_etm_cpus; i++)
		if (pmu->etm_cpus[i].cpu == cpu)
			return &pmu->etm_cpus[i];
	return NULL;
}

static bool auxtrace_info__is_ete(const struct pmu_etm_cpu *c)
{
	return c->has_trcdevarch && TRCDEVARCH_ARCHVER(c->trcdevarch) == 5 &&
	       TRCDEVARCH_ARCHPART(c->trcdevarch) == 0xa13;
}

int auxtrace_info__cs_etm(const struct pmu *pmu, const struct perf_event_attr *attr,
			  const int *cpus, size_t nr_cpus, bool snapshot,
			  struct pdata_record_auxtrace_info **rec, size_t *len)
{
	size_t nr_priv = 3, off = 3;
	__u64 *priv;

	for (size_t i = 0; i < nr_cpus; i++) {
		const struct pmu_etm_cpu *c = auxtrace_info__etm(pmu, cpus[i]);

		if (!c) {
			pr_err("cs_etm: no ETM registers for cpu%d under %s/cpu%d (is its ETM probed?)\n",
			       cpus[i], pmu->name, cpus[i]);
			return -ENOENT;
		}
		if (!(c->trcidr_present & 1)) {
			pr_err("cs_etm: cpu%d has no trcidr/trcidr0: an ETMv3/PTM, which auxtrig cannot describe yet\n",
			       cpus[i]);
			return -EOPNOTSUPP;
		}
		if (!auxtrace_info__cs_trace_id(cpus[i])) {
			pr_err("cs_etm: cpu%d: CoreSight trace IDs (0x01..0x6f) name 104 CPUs at most\n", cpus[i]);
			return -ERANGE;
		}
		nr_priv += 3 + (auxtrace_info__is_ete(c) ? AUXTRACE_CS_ETE_NR_PARAMS
							  : AUXTRACE_CS_ETMV4_NR_PARAMS);
	}
	*rec = auxtrace_info__alloc(PDATA_AUXTRACE_CS_ETM, nr_priv, len);
	if (!*rec)
		return -errno;
	priv = (*rec)->priv;
	priv[0] = AUXTRACE_CS_HEADER_VERSION;
	priv[1] = ((__u64)pmu->type << 32) | nr_cpus;
	priv[2] = snapshot;
	for (size_t i = 0; i < nr_cpus; i++) {
		const struct pmu_etm_cpu *c = auxtrace_info__etm(pmu, cpus[i]);
		bool ete = auxtrace_info__is_ete(c);
		__u64 *b = &priv[off];

		b[0] = ete ? AUXTRACE_CS_ETE_MAGIC : AUXTRACE_CS_ETMV4_MAGIC;
		b[1] = cpus[i];
		b[2] = ete ? AUXTRACE_CS_ETE_NR_PARAMS : AUXTRACE_CS_ETMV4_NR_PARAMS;
		b[3] = auxtrace_info__cs_trcconfigr(attr->config);
		b[4] = auxtrace_info__cs_trace_id(cpus[i]);
		b[5] = c->trcidr[0];
		b[6] = c->trcidr[1];
		b[7] = c->trcidr[2];
		b[8] = c->trcidr[8];
		b[9] = c->trcauthstatus;
		if (ete)
			b[10] = c->trcdevarch;
		off += 3 + b[2];
	}
	return 0;
}

int auxtrace_info__arm_spe(const struct pmu *pmu, bool per_cpu_mmaps,
			   struct pdata_record_auxtrace_info **rec, size_t *len)
{
	*rec = auxtrace_info__alloc(PDATA_AUXTRACE_ARM_SPE, 2, len);
	if (!*rec)
		return -errno;
	(*rec)->priv[0] = pmu->type;
	(*rec)->priv[1] = per_cpu_mmaps;
	return 0;
}

int auxtrace_info__host_tsc_ctc(__u32 *n, __u32 *d)
{
	*n = *d = 0;
#if defined(__x86_64__) || defined(__i386__)
	unsigned int eax, ebx, ecx, edx;

	if (__get_cpuid_max(0, NULL) >= 0x15) {
		__cpuid(0x15, eax, ebx, ecx, edx);
		*n = ebx;
		*d = eax;
		return 0;
	}
#endif
	return -EOPNOTSUPP;
}

int auxtrace_info__max_nonturbo_ratio(const char *root, __u64 *ratio)
{
	char path[4096], buf[32];
	ssize_t n;
	int fd, err;

	*ratio = 0;
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/max_nonturbo_ratio",
		 root ? root : PMU_SYSFS_ROOT_DEFAULT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_debug("cannot read %s: %s\n", path, strerror(-err));
		return err;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	*ratio = strtoull(buf, NULL, 10);
	return 0;
}
