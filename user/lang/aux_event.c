// SPDX-License-Identifier: BSD-2-Clause
/* AUX event specs → perf_event_attr, the way perf 6.1 builds them. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/sys/pmu.h"

#define AUX_DEFAULT_MMAP_SIZE (4u << 20) /* perf's privileged default */

/* CoreSight ETM4 ID register fields perf 6.1 checks (cs_etm_set_context_id/_timestamp). */
#define TRCIDR0_TSSIZE(v)	(((v) >> 24) & 0x1f)
#define TRCIDR2_CIDSIZE(v)	(((v) >> 5) & 0x1f)

enum aux_pmu_kind aux_pmu__kind(const char *name)
{
	if (!strcmp(name, "intel_pt"))
		return AUX_PMU_INTEL_PT;
	if (!strcmp(name, "cs_etm"))
		return AUX_PMU_CS_ETM;
	if (!strncmp(name, "arm_spe", 7))
		return AUX_PMU_ARM_SPE;
	return AUX_PMU_OTHER;
}

int aux_event__intel_pt_pick_bit(__u64 bits, int target)
{
	int pos, pick = -1;

	for (pos = 0; bits && pos < 64; bits >>= 1, pos++) {
		if (!(bits & 1))
			continue;
		if (pos <= target || pick < 0)
			pick = pos;
		if (pos >= target)
			break;
	}
	return pick;
}

/* "arm_spe" finds "arm_spe_0": perf matches a PMU name followed by _<digits>. */
static const struct pmu *aux_event__find_pmu(const struct pmu_set *set, const char *name)
{
	size_t len = strlen(name);
	const struct pmu *pmu = pmu_set__find(set, name);

	if (pmu)
		return pmu;
	for (size_t i = 0; i < set->nr; i++) {
		const char *n = set->pmus[i]->name;
		const char *p;

		if (strncmp(n, name, len) || n[len] != '_' || !n[len + 1])
			continue;
		for (p = n + len + 1; isdigit((unsigned char)*p); p++)
			;
		if (!*p)
			return set->pmus[i];
	}
	return NULL;
}

/* intel_pt_default_config() of perf 6.1, term by term. */
static int aux_event__intel_pt_defaults(const struct pmu *pmu, struct perf_event_attr *attr)
{
	__u64 mtc = 1, psb_cyc = 1, mtc_periods = 0, psb_periods = 0;
	int err = 0, pick;

	pmu__cap_value(pmu, "mtc", &mtc);
	pmu__cap_value(pmu, "psb_cyc", &psb_cyc);
	pmu__cap_value(pmu, "mtc_periods", &mtc_periods);
	pmu__cap_value(pmu, "psb_periods", &psb_periods);

	if (pmu__find_format(pmu, "tsc"))
		err = err ?: pmu__config_term(pmu, "tsc", 1, attr);
	if (mtc && mtc_periods) {
		pick = aux_event__intel_pt_pick_bit(mtc_periods, 3);
		err = err ?: pmu__config_term(pmu, "mtc", 1, attr);
		err = err ?: pmu__config_term(pmu, "mtc_period", pick, attr);
	}
	if (psb_cyc && mtc_periods && psb_periods) {
		pick = aux_event__intel_pt_pick_bit(psb_periods, 3);
		err = err ?: pmu__config_term(pmu, "psb_period", pick, attr);
	}
	if (pmu__find_format(pmu, "pt") && pmu__find_format(pmu, "branch")) {
		err = err ?: pmu__config_term(pmu, "pt", 1, attr);
		err = err ?: pmu__config_term(pmu, "branch", 1, attr);
	}
	return err;
}

static __u64 aux_event__format_bits(const struct pmu *pmu, const char *name)
{
	const struct pmu_format *f = pmu__find_format(pmu, name);

	return f && f->word == PMU_CONFIG ? f->mask : 0;
}

/* cs_etm_recording_options() of perf 6.1, per-CPU branch: contextid + timestamp. */
static int aux_event__cs_etm_defaults(const struct pmu *pmu, struct perf_event_attr *attr)
{
	__u64 ctxid = aux_event__format_bits(pmu, "contextid");
	__u64 ts = aux_event__format_bits(pmu, "timestamp");

	for (size_t i = 0; i < pmu->nr_etm_cpus; i++) {
		const struct pmu_etm_cpu *c = &pmu->etm_cpus[i];

		if ((c->trcidr_present & (1u << 2)) && TRCIDR2_CIDSIZE(c->trcidr[2]) != 0x4) {
			pr_err("cs_etm: CONTEXTIDR_EL1 isn't supported on cpu%d (TRCIDR2 %#x); "
			       "perf refuses this too\n", c->cpu, c->trcidr[2]);
			return -EOPNOTSUPP;
		}
		if ((c->trcidr_present & (1u << 0)) && !TRCIDR0_TSSIZE(c->trcidr[0])) {
			pr_err("cs_etm: timestamps aren't supported on cpu%d (TRCIDR0 %#x); "
			       "perf refuses this too\n", c->cpu, c->trcidr[0]);
			return -EOPNOTSUPP;
		}
	}
	attr->config |= ctxid | ts;
	return 0;
}

static int aux_event__parse_value(const char *s, __u64 *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int aux_event__apply_terms(struct aux_event *ev, char *terms)
{
	const struct pmu *pmu = ev->pmu;
	char *save = NULL, *t;
	int err;

	for (t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		__u64 value = 1;

		if (t[0] == '@') {
			size_t i;

			for (i = 0; i < pmu->nr_sinks; i++)
				if (!strcmp(pmu->sinks[i].name, t + 1))
					break;
			if (i == pmu->nr_sinks) {
				char list[512] = "";

				for (size_t j = 0; j < pmu->nr_sinks; j++)
					snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
						 j ? ", " : "", pmu->sinks[j].name);
				pr_err("%s: no sink '%s' (sinks: %s)\n", ev->name, t + 1,
				       pmu->nr_sinks ? list : "none");
				return -EINVAL;
			}
			snprintf(ev->sink, sizeof(ev->sink), "%s", pmu->sinks[i].name);
			err = pmu__config_term(pmu, "sinkid", pmu->sinks[i].id, &ev->attr);
			if (err)
				return err;
			continue;
		}
		if (eq) {
			*eq = '\0';
			if (aux_event__parse_value(eq + 1, &value)) {
				pr_err("%s: term %s needs a number, not '%s'\n", ev->name, t, eq + 1);
				return -EINVAL;
			}
		}
		if (ev->kind == AUX_PMU_INTEL_PT && !strcmp(t, "pt") && value == 0) {
			pr_warn("pt=0 doesn't make sense, forcing pt=1\n");
			value = 1;
		}
		err = pmu__config_term(pmu, t, value, &ev->attr);
		if (err)
			return err;
	}
	return 0;
}

static int aux_event__apply_modifiers(struct aux_event *ev, const char *mods)
{
	bool u = false, k = false;

	for (const char *m = mods; *m; m++) {
		if (*m == 'u')
			u = true;
		else if (*m == 'k')
			k = true;
		else {
			pr_err("%s: unknown modifier '%c' (valid: u, k)\n", ev->name, *m);
			return -EINVAL;
		}
	}
	/* perf: the first of u/k excludes everything, each then re-includes its level */
	if (u != k) {
		ev->attr.exclude_user = !u;
		ev->attr.exclude_kernel = !k;
		ev->attr.exclude_hv = 1;
	}
	return 0;
}

int aux_event__parse(struct aux_event *ev, const struct pmu_set *set, const char *spec,
		     const struct aux_event_opts *opts)
{
	static const struct aux_event_opts defaults;
	char buf[AUX_EVENT_NAME_MAX], *slash, *terms, *mods;
	int err;

	if (!opts)
		opts = &defaults;
	memset(ev, 0, sizeof(*ev));
	if (strlen(spec) >= sizeof(buf)) {
		pr_err("event spec too long: %.40s...\n", spec);
		return -EINVAL;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", spec);
	snprintf(buf, sizeof(buf), "%s", spec);

	slash = strchr(buf, '/');
	if (!slash || !strchr(slash + 1, '/')) {
		pr_err("%s: expected PMU/terms/modifiers, e.g. intel_pt//u\n", spec);
		return -EINVAL;
	}
	*slash = '\0';
	terms = slash + 1;
	slash = strchr(terms, '/');
	*slash = '\0';
	mods = slash + 1;

	ev->pmu = aux_event__find_pmu(set, buf);
	if (!ev->pmu) {
		pr_err("cannot use %s: no such PMU on this machine (try: auxtrig probe)\n", buf);
		return -ENOENT;
	}
	if (!ev->pmu->aux) {
		pr_err("cannot use %s: %s does not record through the AUX area "
		       "(AUX PMUs: intel_pt, cs_etm, arm_spe)\n", spec, ev->pmu->name);
		return -EINVAL;
	}
	ev->kind = aux_pmu__kind(ev->pmu->name);

	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = ev->pmu->type;
	if (ev->kind == AUX_PMU_INTEL_PT) {
		err = aux_event__intel_pt_defaults(ev->pmu, &ev->attr);
		if (err)
			return err;
	}
	/*
	 * SPE records carry a timestamp only with ts_enable; without it perf
	 * cannot place a sample in time next to the other CPUs' events. As perf
	 * does per CPU (arm_spe_recording_options(): ts_enable if unset); before
	 * the user's terms, so that ts_enable=0 still turns it off.
	 */
	if (ev->kind == AUX_PMU_ARM_SPE && !opts->per_thread && pmu__find_format(ev->pmu, "ts_enable")) {
		err = pmu__config_term(ev->pmu, "ts_enable", 1, &ev->attr);
		if (err)
			return err;
	}
	err = aux_event__apply_terms(ev, terms);
	if (err)
		return err;
	if (ev->kind == AUX_PMU_CS_ETM && !opts->per_thread) {
		err = aux_event__cs_etm_defaults(ev->pmu, &ev->attr);
		if (err)
			return err;
	}
	err = aux_event__apply_modifiers(ev, mods);
	if (err)
		return err;

	ev->attr.freq = 0;
	ev->attr.sample_period = 1;
	if (ev->kind == AUX_PMU_ARM_SPE) {
		/* arm_spe_pmu_default_config(): the sampling interval is caps/min_interval */
		__u64 min_interval = 4096;

		pmu__cap_value(ev->pmu, "min_interval", &min_interval);
		ev->attr.sample_period = min_interval;
	}
	ev->attr.sample_type = PDATA_SAMPLE_TYPE;
	ev->attr.sample_id_all = 1;
	ev->attr.disabled = 1;
	ev->attr.exclude_guest = 1;
	if (ev->kind == AUX_PMU_INTEL_PT && !opts->snapshot)
		ev->attr.aux_watermark = (opts->aux_mmap_size ?: AUX_DEFAULT_MMAP_SIZE) / 4;
	return 0;
}
