/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PROBE_H
#define AUXTRIG_PROBE_H

/*
 * sys/ layer: what this machine can do, tried (user/sys/probe.c); printed by
 * cmd/probe.c, asked by cmd/record_plan.c and record/hw_trace.c.
 */

/**
 * DOC: auxtrig probe
 *
 * Finds out what auxtrig can do on this machine by trying the smallest thing
 * that proves each feature (never by kernel version), and reports it as text
 * lines or one JSON object (keys documented in man/auxtrig-probe.1).
 *
 * Everything that talks to the kernel for a verdict (perf_event_open, reading
 * a counter, loading and attaching BPF) goes through &struct probe_ops so
 * unit tests can simulate a machine: an intel_pt with or without pause/resume,
 * a kernel with or without aux_action.
 */

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "auxtrig/sys/pmu.h"

struct perf_event_attr;
struct probe_report;

/** enum probe_status - the verdict on one line. */
enum probe_status {
	PROBE_UNKNOWN = 0, /* could not tell (e.g. no permission to try) */
	PROBE_OK,
	PROBE_MISSING,
};

/** enum probe_bpf_kind - the BPF attach types tried, one program each (bpf/probe.bpf.c). */
enum probe_bpf_kind {
	PROBE_BPF_TRACEPOINT,
	PROBE_BPF_RAW_TP,
	PROBE_BPF_UPROBE,
	PROBE_BPF_KPROBE,
	PROBE_BPF_FENTRY,
	PROBE_BPF_RINGBUF,
	PROBE_BPF_NR,
};

/**
 * struct probe_bpf_result - how far one BPF program got.
 * @loaded: the verifier accepted it.
 * @attached: it was attached to its hook.
 * @hits: times it ran for our own trigger (getpid() or the uprobe target);
 *        for the ring buffer, records received.
 * @triggers: how many times we triggered it.
 * @step: the step that failed ("open", "load", "attach", "poll"), or NULL.
 * @err: -errno of that step, 0 when none failed.
 */
struct probe_bpf_result {
	bool loaded;
	bool attached;
	__u64 hits;
	int triggers;
	const char *step;
	int err;
};

/**
 * struct probe_ops - the kernel as the probe sees it; swap for tests.
 * @event_open: perf_event_open(2); returns an fd or -errno.
 * @event_read: read a counting event's value; 0 or -errno.
 * @event_ioctl: ioctl(2) without argument (PERF_EVENT_IOC_ENABLE ...); 0 or -errno.
 * @event_close: close an fd from @event_open.
 * @bpf_try: load, attach and trigger the program for @kind, fill @res.
 * @privileges: fill @r's euid, cap_*, paranoid, mlock_kb and rlimit_memlock
 *              (capget(2), /proc/sys/kernel, getrlimit(2)).
 * @btf: is the kernel's BTF readable? (NULL: reported missing)
 * @cgroup2_mount: the cgroup v2 mount point into @out; 0 or -errno (NULL:
 *                 not asked, reported unknown).
 */
struct probe_ops {
	int (*event_open)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			  unsigned long flags);
	int (*event_read)(int fd, __u64 *count);
	int (*event_ioctl)(int fd, unsigned long request);
	void (*event_close)(int fd);
	void (*bpf_try)(enum probe_bpf_kind kind, struct probe_bpf_result *res);
	void (*privileges)(struct probe_report *r);
	bool (*btf)(void);
	int (*cgroup2_mount)(char *out, size_t size);
};

/** probe_ops__kernel - the real kernel. */
extern const struct probe_ops probe_ops__kernel;

/** enum probe_pause - can this AUX PMU start paused and pause/resume? */
enum probe_pause {
	PROBE_PAUSE_UNKNOWN = 0, /* the PMU's event could not be opened at all */
	PROBE_PAUSE_YES,	 /* open with aux_start_paused succeeded */
	PROBE_PAUSE_NO_PMU,	 /* EOPNOTSUPP: kernel knows aux_action, PMU lacks it */
	PROBE_PAUSE_NO_KERNEL,	 /* EINVAL: the kernel has no aux_action */
};

/**
 * struct probe_aux_pmu - one AUX trace PMU and what it can do.
 * @pmu: the PMU (owned by &probe_report.pmus).
 * @pause: the pause/resume verdict.
 * @err: -errno behind @pause (0 on success).
 */
struct probe_aux_pmu {
	const struct pmu *pmu;
	enum probe_pause pause;
	int err;
};

#define PROBE_BP_WRITES 4

/**
 * struct probe_report - everything `auxtrig probe` found out.
 *
 * @paranoid and @mlock_kb are INT_MIN / -1 when unreadable; @rlimit_memlock
 * is RLIM_INFINITY when unlimited. @aux_action_known is 1 (the kernel knows
 * aux_action), 0 (it does not) or -1 (could not tell); @aux_action_err is
 * the -errno the software dummy probe got. @bp_* is the hardware breakpoint
 * self-test: a write watchpoint on our own variable, written
 * %PROBE_BP_WRITES times. @caps_off: the capabilities (1u << &enum caps_id)
 * the switch (``AUXTRIG_CAPS_OFF``, caps.h) reported missing, not tried.
 * @cgroup2 is the cgroup v2 mount ("" without one), @cgroup2_err why not
 * (1: not asked).
 */
struct probe_report {
	char release[65];
	char machine[65];
	char sysfs_root[256];
	bool btf;
	char tracefs[256]; /* mount point, "" when not mounted */
	struct probe_bpf_result bpf[PROBE_BPF_NR];
	uid_t euid;
	bool cap_perfmon;
	bool cap_bpf;
	bool cap_sys_admin;
	int paranoid;
	long mlock_kb;
	unsigned long long rlimit_memlock;
	int aux_action_known;
	int aux_action_err;
	bool bp_opened;
	int bp_err;
	__u64 bp_hits;
	char cgroup2[256];
	int cgroup2_err;
	unsigned int caps_off;
	struct pmu_set *pmus;
	struct probe_aux_pmu *aux;
	size_t nr_aux;
};

/**
 * struct probe_opts - `auxtrig probe` options.
 * @sysfs_root: where PMU discovery looks (testing option), NULL for /sys.
 * @json: print JSON instead of text.
 * @caps_off: capabilities to report missing without trying them, as the
 *            switch asks (caps__off()); a mask of 1u << &enum caps_id.
 */
struct probe_opts {
	const char *sysfs_root;
	bool json;
	unsigned int caps_off;
};

/**
 * probe_report__collect() - run every probe.
 * @r: zeroed by the caller or not; filled here. Free with probe_report__exit().
 * @opts: options.
 * @ops: the kernel, usually &probe_ops__kernel.
 *
 * Missing features are results, not errors.
 *
 * Return: 0, or -ENOMEM.
 */
int probe_report__collect(struct probe_report *r, const struct probe_opts *opts,
			  const struct probe_ops *ops);

/**
 * probe__hw_breakpoint_fires() - the breakpoint self-test alone: does a write
 * watchpoint on our own variable count our writes? (What --on mem: needs.)
 */
bool probe__hw_breakpoint_fires(const struct probe_ops *ops);

/**
 * probe__effective_caps() - the calling thread's effective capabilities.
 * @eff: bit CAP_x for each capability held.
 * Return: 0, or -errno (capget() failed).
 */
int probe__effective_caps(__u64 *eff);

/** probe__may_record() - root, or CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON? (auxtrig record's check) */
bool probe__may_record(void);

/**
 * probe__aux_pmu_pause() - the pause/resume verdict on one AUX PMU alone (as
 * probe_report__collect() finds it for each), -errno behind it in @err.
 */
enum probe_pause probe__aux_pmu_pause(const struct pmu *pmu, const struct probe_ops *ops, int *err);

/** probe__bpf_fires() - one BPF self-test alone: did it attach and run for our trigger? */
bool probe__bpf_fires(const struct probe_ops *ops, enum probe_bpf_kind kind);

/**
 * probe_report__aux_switched_off() - are the machine's AUX PMUs reported
 * missing by the switch? (Never a --sysfs-root fixture's.)
 */
bool probe_report__aux_switched_off(const struct probe_report *r);

/** probe_report__exit() - free what probe_report__collect() allocated. */
void probe_report__exit(struct probe_report *r);

/** probe__errno_name() - "EOPNOTSUPP" for -95, "E123" when glibc has no name. */
const char *probe__errno_name(int err, char *buf, size_t size);

/** probe_bpf_kind__name() - the JSON key and text name ("tracepoint", "raw_tp", ...). */
const char *probe_bpf_kind__name(enum probe_bpf_kind kind);

/** probe_pause__name() - "yes", "no_pmu", "no_kernel", "unknown". */
const char *probe_pause__name(enum probe_pause pause);

/**
 * probe_uprobe_target() - the function of our own binary the uprobe
 * self-test attaches to. Returns @x + 1.
 */
int probe_uprobe_target(int x);

#endif
