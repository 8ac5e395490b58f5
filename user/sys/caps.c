// SPDX-License-Identifier: BSD-2-Clause
/* The optional capabilities of this machine: a test's answer, the switch, or the machine (caps.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/sys/probe.h"

static const char *const caps_names[CAPS_NR] = {
	[CAPS_HW_BREAKPOINT] = "hw_breakpoint",
	[CAPS_KPROBE] = "kprobe",
	[CAPS_FENTRY] = "fentry",
	[CAPS_CGROUP2] = "cgroup2",
	[CAPS_AUX_PMU] = "aux_pmu",
	[CAPS_BTF] = "btf",
};

static struct {
	signed char simulated[CAPS_NR];	/* 0 none, 1 offered, 2 missing (a test's answer) */
	signed char machine[CAPS_NR];	/* 0 not asked yet, 1 offered, 2 missing */
	int off_read;			/* the switch was read (or set) */
	unsigned int off;
} caps;

const char *caps__name(enum caps_id id)
{
	return id < CAPS_NR ? caps_names[id] : "?";
}

int caps__parse(const char *spec, unsigned int *mask, char *bad, size_t bad_size)
{
	const char *p = spec ? spec : "";
	int err = 0;

	*mask = 0;
	if (bad_size)
		bad[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, ", ");
		bool known = false;

		if (n == 3 && !strncmp(p, "all", 3)) {
			*mask |= CAPS_ALL;
			known = true;
		}
		for (int i = 0; i < CAPS_NR && !known; i++) {
			if (strlen(caps_names[i]) == n && !strncmp(p, caps_names[i], n)) {
				*mask |= 1u << i;
				known = true;
			}
		}
		if (!known && n && !err) {
			snprintf(bad, bad_size, "%.*s", (int)n, p);
			err = -EINVAL;
		}
		p += n;
		p += strspn(p, ", ");
	}
	return err;
}

unsigned int caps__off(void)
{
	if (!caps.off_read) {
		const char *spec = getenv(CAPS_OFF_ENV);
		char bad[64];

		caps.off_read = 1;
		if (caps__parse(spec, &caps.off, bad, sizeof(bad)))
			pr_warn("%s: unknown capability '%s', ignored (known: all, hw_breakpoint, kprobe, fentry, cgroup2, aux_pmu, btf)\n",
				CAPS_OFF_ENV, bad);
	}
	return caps.off;
}

void caps__set_off(unsigned int mask)
{
	caps.off_read = 1;
	caps.off = mask & CAPS_ALL;
}

void caps__simulate(enum caps_id id, int answer)
{
	if (id < CAPS_NR)
		caps.simulated[id] = answer < 0 ? 0 : answer ? 1 : 2;
}

void caps__simulate_all(int answer)
{
	for (int i = 0; i < CAPS_NR; i++)
		caps__simulate(i, answer);
}

bool caps__switched_off(enum caps_id id)
{
	return id < CAPS_NR && !caps.simulated[id] && (caps__off() & (1u << id));
}

bool caps__allowed(enum caps_id id)
{
	if (id >= CAPS_NR)
		return false;
	if (caps.simulated[id])
		return caps.simulated[id] == 1;
	return !(caps__off() & (1u << id));
}

int caps__cgroup2_mount(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int err = -ENOENT;

	if (!f)
		return -errno;
	/* "36 25 0:30 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw,..." */
	while (err && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char mnt[4096];

		if (sep && !strncmp(sep + 3, "cgroup2 ", 8) && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(out, size, "%s", mnt);
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* The machine's answer, tried as auxtrig probe tries it. */
static bool caps__machine(enum caps_id id)
{
	struct pmu_set *set = NULL;
	char mnt[4096];
	bool yes = false;

	switch (id) {
	case CAPS_HW_BREAKPOINT:
		return probe__hw_breakpoint_fires(&probe_ops__kernel);
	case CAPS_KPROBE:
		return probe__bpf_fires(&probe_ops__kernel, PROBE_BPF_KPROBE);
	case CAPS_FENTRY:
		return probe__bpf_fires(&probe_ops__kernel, PROBE_BPF_FENTRY);
	case CAPS_CGROUP2:
		return !caps__cgroup2_mount(mnt, sizeof(mnt));
	case CAPS_AUX_PMU:
		yes = !pmu__scan(NULL, &set) && pmu_set__nr_aux(set) > 0;
		pmu_set__delete(set);
		return yes;
	case CAPS_BTF:
		return !access("/sys/kernel/btf/vmlinux", R_OK);
	default:
		return false;
	}
}

bool caps__has(enum caps_id id)
{
	if (!caps__allowed(id))
		return false;
	if (caps.simulated[id])
		return true;
	if (!caps.machine[id])
		caps.machine[id] = caps__machine(id) ? 1 : 2;
	return caps.machine[id] == 1;
}
