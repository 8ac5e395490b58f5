/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CAPS_H
#define AUXTRIG_CAPS_H

/*
 * sys/ layer: the optional capabilities of this machine, as the plan, the
 * gate, list, probe and the reaper ask them (user/sys/caps.c).
 */

/**
 * DOC: capabilities
 *
 * What a machine of our kind may or may not offer: hardware breakpoints
 * that fire, BPF kprobes and fentry, a cgroup v2 mount, AUX trace PMUs,
 * the kernel's BTF. Every question the recording side asks about them goes
 * through caps__has(), answered in this order:
 *
 * 1. a test's answer (caps__simulate()): unit tests set both answers and
 *    never depend on what the machine running them offers;
 * 2. the switch: ``AUXTRIG_CAPS_OFF=all`` or a comma-separated list of
 *    caps__name()s reports those capabilities missing. A test aid (make
 *    test runs the unit tests once more with ``all``), never a way to turn
 *    on what the machine lacks: it can only switch off;
 * 3. the machine, tried once per process as auxtrig probe tries it
 *    (user/sys/probe.c), never guessed from a kernel version.
 */

#include <stdbool.h>
#include <stddef.h>

/** enum caps_id - the optional capabilities. */
enum caps_id {
	CAPS_HW_BREAKPOINT,	/* hardware breakpoints open and fire: mem: points */
	CAPS_KPROBE,		/* BPF kprobes attach and run: kprobe:, kretprobe: points */
	CAPS_FENTRY,		/* BPF fentry programs attach and run */
	CAPS_CGROUP2,		/* a cgroup v2 mount holding auxtrig's cgroup: the command's cgroup */
	CAPS_AUX_PMU,		/* AUX trace PMUs (intel_pt, cs_etm, arm_spe) in /sys */
	CAPS_BTF,		/* the kernel's BTF: kretprobe return types */
	CAPS_NR,
};

#define CAPS_ALL ((1u << CAPS_NR) - 1)
/** The switch's environment variable. */
#define CAPS_OFF_ENV "AUXTRIG_CAPS_OFF"

/** caps__has() - does this machine offer @id (test answer, switch, machine; see DOC)? */
bool caps__has(enum caps_id id);

/**
 * caps__allowed() - false when a test's answer or the switch reports @id
 * missing, true otherwise: the machine is then the judge, where the caller
 * asks it itself (the PMU scan of /sys, the reaper's cgroup, the BTF load).
 */
bool caps__allowed(enum caps_id id);

/**
 * caps__off() - the capabilities the switch reports missing (a mask of
 * 1u << &enum caps_id): ``AUXTRIG_CAPS_OFF``, read once, or caps__set_off().
 * An unknown name in it is warned about once and ignored.
 */
unsigned int caps__off(void);

/** caps__switched_off() - is @id missing because the switch says so (and no test answered)? */
bool caps__switched_off(enum caps_id id);

/** caps__set_off() - as if ``AUXTRIG_CAPS_OFF`` named @mask (tests). */
void caps__set_off(unsigned int mask);

/**
 * caps__simulate() - a test's answer for @id: 1 (offered), 0 (missing), -1
 * (none: the switch and the machine answer again).
 */
void caps__simulate(enum caps_id id, int answer);

/** caps__simulate_all() - caps__simulate() for every capability. */
void caps__simulate_all(int answer);

/**
 * caps__parse() - ``all`` or ``NAME[,NAME]...`` into a mask.
 * @bad: the first unknown name, copied, "" when none.
 * Return: 0, or -EINVAL when a name is unknown (@mask then has the known ones).
 */
int caps__parse(const char *spec, unsigned int *mask, char *bad, size_t bad_size);

/** caps__name() - "hw_breakpoint", "kprobe", "fentry", "cgroup2", "aux_pmu", "btf". */
const char *caps__name(enum caps_id id);

/**
 * caps__cgroup2_mount() - the mount point of the cgroup v2 hierarchy from
 * /proc/self/mountinfo into @out; 0 or -ENOENT (the machine's answer to
 * %CAPS_CGROUP2, without the switch).
 */
int caps__cgroup2_mount(char *out, size_t size);

#endif
