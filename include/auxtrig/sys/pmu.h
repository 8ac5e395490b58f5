/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PMU_H
#define AUXTRIG_PMU_H

/*
 * sys/ layer: PMUs as sysfs (or a fixture) describes them (user/sys/pmu.c), for
 * lang/aux_event.c, the plan, record/ and sys/probe.c.
 */

/**
 * DOC: PMU discovery
 *
 * Reads what the kernel publishes about each perf PMU under
 * ``<root>/bus/event_source/devices/<pmu>/``: ``type``, ``format/<term>``,
 * ``caps/<cap>``, ``nr_addr_filters`` and, for CoreSight, ``sinks/<sink>`` and the
 * per-CPU ETM registers under ``cpuN/``. ``root`` is ``/sys`` on a real
 * machine; tests point it at tests/fixtures/sysfs-*.
 *
 * Value formats differ per driver and are kept as the kernel prints them
 * (``raw``) next to the parsed number:
 *
 * - intel_pt ``caps/<cap>``: hex without a prefix (pt.c pt_cap_show() "%x"), so
 *   ``mtc_periods`` "249" is 0x249.
 * - arm_spe ``caps/<cap>``: decimal (arm_spe_pmu_cap_show() "%u").
 * - CoreSight registers and sink ids: "0x..." (coresight_simple_show32(),
 *   etm_perf_sink_name_show()).
 * - ``format/<term>``: "config:0-3", "config1:5", "config:0,3-4"; arm_spe prints
 *   ranges without a trailing newline.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct perf_event_attr;

#define PMU_SYSFS_ROOT_DEFAULT "/sys"

/** enum pmu_config_word - which perf_event_attr config word a format term sets. */
enum pmu_config_word {
	PMU_CONFIG = 0,
	PMU_CONFIG1 = 1,
	PMU_CONFIG2 = 2,
	PMU_CONFIG3 = 3, /* attr size 136 only: auxtrig writes 128, see perf_event_aux.h */
};

/**
 * struct pmu_format - one ``format/<name>`` term.
 * @name: term name ("mtc_period").
 * @word: config word the term lives in.
 * @mask: bits of that word, possibly non-contiguous ("config:0,3-4").
 * @spec: the file's text, trimmed ("config:14-17").
 */
struct pmu_format {
	char *name;
	enum pmu_config_word word;
	__u64 mask;
	char *spec;
};

/**
 * struct pmu_cap - one ``caps/<name>`` file.
 * @name: capability name.
 * @raw: the file's text, trimmed.
 * @value: parsed value, valid when @numeric.
 * @numeric: false for text caps such as cpu/caps/pmu_name.
 */
struct pmu_cap {
	char *name;
	char *raw;
	__u64 value;
	bool numeric;
};

/**
 * struct pmu_sink - one CoreSight sink, ``cs_etm/sinks/<name>``.
 * @name: sink device name ("tmc_etr0"), what `@tmc_etr0` selects.
 * @id: the value to put in config2 (term sinkid) to select it.
 */
struct pmu_sink {
	char *name;
	__u32 id;
};

/* Register files perf reads per ETM (tools/perf/arch/arm/util/cs-etm.c). */
#define PMU_ETM_NR_TRCIDR 14

/**
 * struct pmu_etm_cpu - the ETMv4/ETE registers published for one CPU.
 * @cpu: CPU number (from the directory name cpuN).
 * @trcidr: ``trcidr/trcidr0`` .. ``trcidr13``; bit n of @trcidr_present says
 *          whether file n existed.
 * @trcidr_present: see @trcidr.
 * @trcauthstatus: ``mgmt/trcauthstatus``.
 * @trcdevarch: ``mgmt/trcdevarch`` (tells ETMv4 from ETE).
 * @trcconfig: ``mgmt/trcconfig`` (TRCCONFIGR; the driver names the file trcconfig).
 * @trctraceid: ``mgmt/trctraceid``.
 * @has_trcauthstatus: file existed; likewise for the others.
 */
struct pmu_etm_cpu {
	int cpu;
	__u32 trcidr[PMU_ETM_NR_TRCIDR];
	__u32 trcidr_present;
	__u32 trcauthstatus;
	__u32 trcdevarch;
	__u32 trcconfig;
	__u32 trctraceid;
	bool has_trcauthstatus;
	bool has_trcdevarch;
	bool has_trcconfig;
	bool has_trctraceid;
};

/**
 * struct pmu - one PMU as sysfs describes it. Owned by its &struct pmu_set
 * or, from pmu__read(), by the caller (free with pmu__delete()).
 * @name: directory name ("intel_pt", "cs_etm", "arm_spe_0").
 * @type: perf_event_attr.type to open it with.
 * @aux: an AUX-area (hardware) trace PMU, see pmu__is_aux_name().
 * @nr_addr_filters: ``nr_addr_filters``, -1 when the file is absent.
 * @formats, @nr_formats: format terms, sorted by name.
 * @caps, @nr_caps: capabilities, sorted by name.
 * @sinks, @nr_sinks: CoreSight sinks, sorted by name.
 * @etm_cpus, @nr_etm_cpus: CoreSight per-CPU ETM registers, by CPU number.
 */
struct pmu {
	char *name;
	__u32 type;
	bool aux;
	int nr_addr_filters;
	struct pmu_format *formats;
	size_t nr_formats;
	struct pmu_cap *caps;
	size_t nr_caps;
	struct pmu_sink *sinks;
	size_t nr_sinks;
	struct pmu_etm_cpu *etm_cpus;
	size_t nr_etm_cpus;
};

/**
 * struct pmu_set - every PMU found under one sysfs root, sorted by name.
 * @root: the sysfs root scanned.
 * @pmus, @nr: the PMUs.
 */
struct pmu_set {
	char *root;
	struct pmu **pmus;
	size_t nr;
};

/**
 * pmu__scan() - read every PMU under @root/bus/event_source/devices.
 * @root: sysfs root, NULL for "/sys".
 * @set: on success, a new set the caller frees with pmu_set__delete().
 *
 * A missing devices directory gives an empty set (a kernel without perf
 * events still gets a report). Entries without a readable ``type`` are
 * skipped with a debug message.
 *
 * Return: 0, or -errno (-ENOMEM, or why the directory can't be read).
 */
int pmu__scan(const char *root, struct pmu_set **set);

/**
 * pmu__check_root() - whether a sysfs root the user named is one: a directory
 * holding bus/event_source/devices. pmu__scan() takes a root without PMUs as
 * a machine without them; a --sysfs-root that is not there is a mistake.
 * @root: the directory.
 * @why: on failure, what is wrong (one phrase, naming the path).
 * @why_size: bytes at @why.
 * Return: 0, or -errno (-ENOENT, -ENOTDIR, -EACCES...) with @why set.
 */
int pmu__check_root(const char *root, char *why, size_t why_size);

/**
 * pmu__read() - read one PMU directory.
 * @root: sysfs root, NULL for "/sys".
 * @name: PMU directory name.
 * @pmu: on success, a new PMU the caller frees with pmu__delete().
 *
 * Return: 0, -ENOENT when there is no such PMU, or another -errno.
 */
int pmu__read(const char *root, const char *name, struct pmu **pmu);

/** pmu__delete() - free a PMU from pmu__read(); NULL is fine. */
void pmu__delete(struct pmu *pmu);

/** pmu_set__delete() - free a set and all its PMUs; NULL is fine. */
void pmu_set__delete(struct pmu_set *set);

/** pmu_set__find() - the PMU named @name, or NULL. */
struct pmu *pmu_set__find(const struct pmu_set *set, const char *name);

/** pmu_set__nr_aux() - how many AUX trace PMUs the set holds. */
size_t pmu_set__nr_aux(const struct pmu_set *set);

/**
 * pmu__is_aux_name() - whether a PMU of this name records through the AUX
 * area: intel_pt, intel_bts, cs_etm, arm_spe*, hisi_ptt*. sysfs has no flag
 * for it; perf decides by name the same way.
 */
bool pmu__is_aux_name(const char *name);

/** pmu__find_format() - the format term @name, or NULL. */
const struct pmu_format *pmu__find_format(const struct pmu *pmu, const char *name);

/** pmu__find_cap() - the capability @name, or NULL. */
const struct pmu_cap *pmu__find_cap(const struct pmu *pmu, const char *name);

/**
 * pmu__cap_value() - a numeric capability.
 * @pmu: the PMU.
 * @name: capability name.
 * @value: set on success.
 *
 * Return: 0, -ENOENT when absent, -EINVAL when its text is not a number.
 */
int pmu__cap_value(const struct pmu *pmu, const char *name, __u64 *value);

/**
 * pmu_format__parse() - parse a format spec such as "config1:0-3,8".
 * @spec: the text (surrounding whitespace allowed).
 * @word: set to the config word.
 * @mask: set to the bit mask (never 0 on success).
 *
 * Return: 0, or -EINVAL for anything else (unknown word, bit > 63, hi < lo).
 */
int pmu_format__parse(const char *spec, enum pmu_config_word *word, __u64 *mask);

/**
 * pmu_format__max() - the largest value the term's bits can hold.
 */
__u64 pmu_format__max(const struct pmu_format *fmt);

/**
 * pmu_format__encode() - scatter @value into the term's bits, lowest value
 * bit into the lowest mask bit (how perf fills non-contiguous formats).
 * The caller has checked @value <= pmu_format__max().
 */
__u64 pmu_format__encode(const struct pmu_format *fmt, __u64 value);

/**
 * pmu__config_term() - set term @name to @value in @attr.
 * @pmu: the PMU whose formats define the term.
 * @name: term name ("mtc_period", "timestamp", "sinkid").
 * @value: term value; 1 for a flag given without "=value".
 * @attr: its config/config1/config2 word gets the bits (old bits of the
 *        field are cleared first).
 *
 * Unknown terms, values that don't fit the field and, for intel_pt, periods
 * and thresholds the CPU does not list in caps/mtc_periods,
 * caps/cycle_thresholds or caps/psb_periods are rejected with a pr_err()
 * naming the valid terms or values.
 *
 * Return: 0; -ENOENT unknown term; -ERANGE bad value; -EOPNOTSUPP for a
 * config3 term (auxtrig writes attr size 128, which has no config3).
 */
int pmu__config_term(const struct pmu *pmu, const char *name, __u64 value,
		     struct perf_event_attr *attr);

#endif
