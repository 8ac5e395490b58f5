// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig probe` against simulated machines: the sysfs fixtures for the
 * PMUs and fake probe_ops for the kernel (aux_action known or not, PMU with
 * or without pause/resume, breakpoints that fire or not, BPF results).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "uapi/linux/perf_event_aux.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/cmd/probe.h"
#include "auxtrig/sys/caps.h"

/* The simulated machine. */
static struct machine {
	bool kernel_aux_action;
	__u32 pause_type;	/* PMU type that has PERF_PMU_CAP_AUX_PAUSE, 0 none */
	__u32 openable[4];	/* PMU types whose events open, 0-terminated */
	int bp_open_err;	/* -errno for breakpoint open, 0 opens */
	int bp_ioctl_err;	/* -errno for enabling it, 0 works */
	__u64 bp_count;		/* what the breakpoint counter reads */
	struct probe_bpf_result bpf[PROBE_BPF_NR];
	bool unprivileged;
	int opens;
} m;

static int fake_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			   unsigned long flags)
{
	__u32 aux = *perf_attr_aux_action(attr);
	bool openable = false;

	m.opens++;
	assert_int_equal(attr->size, PERF_ATTR_SIZE_VER7);
	if (aux && !m.kernel_aux_action)
		return -EINVAL; /* __reserved_3 must be zero */
	if (attr->type == PERF_TYPE_SOFTWARE)
		return aux ? -EOPNOTSUPP : 100;
	if (attr->type == PERF_TYPE_BREAKPOINT)
		return m.bp_open_err ? m.bp_open_err : 101;
	for (int i = 0; i < 4 && m.openable[i]; i++)
		openable |= m.openable[i] == attr->type;
	if (!openable)
		return -ENOENT;
	if (aux && attr->type != m.pause_type)
		return -EOPNOTSUPP;
	return 102;
}

static int fake_event_read(int fd, __u64 *count)
{
	assert_int_equal(fd, 101);
	*count = m.bp_count;
	return 0;
}

static int fake_event_ioctl(int fd, unsigned long request)
{
	assert_int_equal(fd, 101);
	return m.bp_ioctl_err;
}

static void fake_event_close(int fd)
{
	assert_true(fd >= 100);
}

static void fake_bpf_try(enum probe_bpf_kind kind, struct probe_bpf_result *res)
{
	*res = m.bpf[kind];
}

static void fake_privileges(struct probe_report *r)
{
	r->euid = m.unprivileged ? 1000 : 0;
	r->cap_perfmon = r->cap_bpf = r->cap_sys_admin = !m.unprivileged;
	r->paranoid = 2;
	r->mlock_kb = 516;
	r->rlimit_memlock = 8 << 20;
}

static bool fake_btf(void)
{
	return true;
}

static int fake_cgroup2_mount(char *out, size_t size)
{
	snprintf(out, size, "/sys/fs/cgroup");
	return 0;
}

static const struct probe_ops fake_ops = {
	.event_open = fake_event_open,
	.event_read = fake_event_read,
	.event_ioctl = fake_event_ioctl,
	.event_close = fake_event_close,
	.bpf_try = fake_bpf_try,
	.privileges = fake_privileges,
	.btf = fake_btf,
	.cgroup2_mount = fake_cgroup2_mount,
};

static const struct probe_bpf_result bpf_ok = { .loaded = true, .attached = true, .hits = 3, .triggers = 3 };

/*
 * The development VM: tracepoints, raw_tp, uprobes and ring buffer work;
 * kprobes and fentry don't. Each test changes what it is about.
 */
static int setup_vm(void **state)
{
	memset(&m, 0, sizeof(m));
	m.kernel_aux_action = true;
	for (int k = 0; k < PROBE_BPF_NR; k++)
		m.bpf[k] = bpf_ok;
	m.bpf[PROBE_BPF_KPROBE] = (struct probe_bpf_result){ .loaded = true, .step = "attach", .err = -ENOENT };
	m.bpf[PROBE_BPF_FENTRY] = (struct probe_bpf_result){ .step = "load", .err = -EPERM };
	caps__set_off(0);	/* not AUXTRIG_CAPS_OFF of the unit test run: the simulated machine answers */
	log__set_level(-1);
	return 0;
}

static int teardown(void **state)
{
	log__set_level(LOG_INFO);
	free(*state);
	*state = NULL;
	return 0;
}

static char fixture_root[PATH_MAX];

static const char *fixture(const char *name)
{
	const char *top = getenv("AUXTRIG_TOP");

	snprintf(fixture_root, sizeof(fixture_root), "%s/tests/fixtures/%s", top ? top : ".", name);
	return fixture_root;
}

/* Run `auxtrig probe ARGS...` on the fake machine; the output is stored in *state. */
static int run(void **state, ...)
{
	char *argv[8] = { "probe" }, *buf = NULL;
	int argc = 1, rc;
	size_t len = 0;
	va_list ap;
	FILE *f;

	va_start(ap, state);
	while (argc < 7 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	rc = probe__main(argc, argv, &fake_ops, f);
	fclose(f);
	free(*state);
	*state = buf;
	return rc;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected to find\n  %s\nin\n%s", needle, hay);
}

/* Balanced braces/brackets outside strings, one object, newline-terminated. */
static void assert_json_shape(const char *s)
{
	int depth = 0;
	bool in_str = false;
	size_t len = strlen(s);

	assert_true(len > 2);
	assert_int_equal(s[0], '{');
	assert_int_equal(s[len - 1], '\n');
	assert_int_equal(s[len - 2], '}');
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			else
				assert_true((unsigned char)c >= 0x20);
			continue;
		}
		if (c == '"')
			in_str = true;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
		assert_true(depth >= 0);
		if (depth == 0)
			assert_true(i == len - 2 || i == len - 1);
	}
	assert_false(in_str);
	assert_int_equal(depth, 0);
}

static void test_probe_intel_pt_with_pause_resume(void **state)
{
	m.openable[0] = 8; /* intel_pt */
	m.pause_type = 8;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "  hardware trace       ok       2 AUX trace PMUs in ");
	assert_contains(*state, "  intel_pt             ok       type 8, 2 address filters; pause/resume yes");
	/* intel_bts: no event in our fake kernel */
	assert_contains(*state, "  intel_bts            unknown  type 9; cannot open its event");
	assert_contains(*state, "format: branch cyc cyc_thresh event");
	assert_contains(*state, "mtc_periods=249");

	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "\"aux_action\":{\"status\":\"ok\",\"kernel\":true,\"errno\":\"EOPNOTSUPP\"}");
	assert_contains(*state, "{\"name\":\"intel_pt\",\"type\":8,\"pause_resume\":\"yes\","
				"\"pause_resume_status\":\"ok\",\"errno\":null,\"nr_addr_filters\":2,");
	assert_contains(*state, "\"mtc_period\":\"config:14-17\"");
	assert_contains(*state, "\"psb_periods\":\"3f\"");
	assert_contains(*state, "{\"name\":\"intel_bts\",\"type\":9,\"pause_resume\":\"unknown\","
				"\"pause_resume_status\":\"unknown\",\"errno\":\"ENOENT\",\"nr_addr_filters\":null,");
	/* which path record's windows take: in the kernel here, unknown for intel_bts */
	assert_contains(*state, "\"nr_etm_cpus\":0,\"windows\":\"kernel\"}");
	assert_contains(*state, "\"nr_etm_cpus\":0,\"windows\":null}");
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "windows use in-kernel aux_pause/aux_resume");
}

static void test_probe_intel_pt_without_pause_resume(void **state)
{
	m.openable[0] = 8;
	m.pause_type = 0; /* e.g. 6.12.24..6.12.109: aux_action known, PT not yet pausable */
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "  aux_action           ok       the kernel knows aux_start_paused");
	assert_contains(*state, "  intel_pt             ok       type 8, 2 address filters; pause/resume no (the PMU lacks it)");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "\"name\":\"intel_pt\",\"type\":8,\"pause_resume\":\"no_pmu\","
				"\"pause_resume_status\":\"missing\",\"errno\":\"EOPNOTSUPP\"");
	assert_contains(*state, "\"windows\":\"userspace\"}");
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "windows are gated from userspace");
}

static void test_probe_kernel_without_aux_action(void **state)
{
	m.kernel_aux_action = false; /* e.g. 6.1 */
	m.openable[0] = 8;
	m.pause_type = 8;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "  aux_action           missing  the kernel rejects aux_action (EINVAL)");
	assert_contains(*state, "  intel_pt             ok       type 8, 2 address filters; pause/resume no (the kernel lacks aux_action");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "\"aux_action\":{\"status\":\"missing\",\"kernel\":false,\"errno\":\"EINVAL\"}");
	assert_contains(*state, "\"pause_resume\":\"no_kernel\",\"pause_resume_status\":\"missing\",\"errno\":\"EINVAL\"");
	assert_contains(*state, "\"windows\":\"userspace\"}");
}

static void test_probe_cs_etm(void **state)
{
	m.openable[0] = 10;
	m.pause_type = 10; /* 6.16+ */
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-cs_etm"), NULL), 0);
	assert_contains(*state, "  hardware trace       ok       1 AUX trace PMU in ");
	assert_contains(*state, "  cs_etm               ok       type 10, 8 address filters, ETMs on 6 CPUs; pause/resume yes");
	assert_contains(*state, "sinks: tmc_etf0 tmc_etr0");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-cs_etm"), NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "\"sinkid\":\"config2:0-31\"");
	assert_contains(*state, "\"timestamp\":\"config:28\"");
	assert_contains(*state, "\"sinks\":{\"tmc_etf0\":1785649573,\"tmc_etr0\":2052745746}");
	assert_contains(*state, "\"nr_etm_cpus\":6");
}

static void test_probe_arm_spe_without_pause(void **state)
{
	m.openable[0] = 11;
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-arm_spe"), NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "{\"name\":\"arm_spe_0\",\"type\":11,\"pause_resume\":\"no_pmu\"");
	assert_contains(*state, "\"min_interval\":\"1024\"");
	assert_contains(*state, "\"event_filter\":\"config1:0-63\"");
}

static void test_probe_no_aux_pmu_says_tracepoints(void **state)
{
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  hardware trace       missing  no AUX trace PMU (intel_pt, cs_etm, arm_spe)");
	assert_contains(*state, "hardware trace is unavailable here; auxtrig records kernel event streams");
	assert_contains(*state, "(tracepoints) instead");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "\"hardware_trace\":{\"status\":\"missing\",\"sysfs_root\":\"");
	assert_contains(*state, "sysfs-no_aux\",\"aux_pmus\":[]}");
}

static void test_probe_bpf_lines(void **state)
{
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  bpf tracepoint       ok       loads, attaches, fired 3/3");
	assert_contains(*state, "  bpf uprobe           ok       loads, attaches, fired 3/3 on calls of our own function");
	assert_contains(*state, "  bpf kprobe           missing  attach failed: No such file or directory (ENOENT)");
	assert_contains(*state, "  bpf fentry           missing  load failed: Operation not permitted (EPERM)");
	assert_contains(*state, "  bpf ringbuf          ok");

	/* attached but silent is not "ok" */
	m.bpf[PROBE_BPF_RAW_TP].hits = 0;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  bpf raw_tp           missing  loads and attaches but never fired (0/3");

	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "\"kprobe\":{\"status\":\"missing\",\"loaded\":true,\"attached\":false,\"fired\":false,"
				"\"hits\":0,\"triggers\":0,\"error\":\"attach: No such file or directory\",\"errno\":\"ENOENT\"}");
	assert_contains(*state, "\"fentry\":{\"status\":\"missing\",\"loaded\":false,");
	assert_contains(*state, "\"raw_tp\":{\"status\":\"missing\",\"loaded\":true,\"attached\":true,\"fired\":false,");
	assert_contains(*state, "\"tracepoint\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,");
}

/* A VM whose breakpoints open but never count (the kernel accepts them, the hypervisor drops them). */
static void test_probe_hw_breakpoint_open_but_silent(void **state)
{
	m.bp_count = 0;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  hw breakpoints       missing  open but never fire (0/4 writes seen, usual in VMs): "
				"no data-watch triggers here\n");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "\"hw_breakpoint\":{\"status\":\"missing\",\"opened\":true,\"fired\":false,\"hits\":0,\"writes\":4,\"errno\":null}");
	assert_false(probe__hw_breakpoint_fires(&fake_ops));
}

/* A machine (or VM) whose breakpoints fire: one count per write. */
static void test_probe_hw_breakpoint_fires(void **state)
{
	m.bp_count = 4;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  hw breakpoints       ok       fired 4/4 on writes to our own variable: data-watch triggers work\n");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "\"hw_breakpoint\":{\"status\":\"ok\",\"opened\":true,\"fired\":true,\"hits\":4,\"writes\":4,\"errno\":null}");
	assert_true(probe__hw_breakpoint_fires(&fake_ops));
}

/* A kernel or PMU without breakpoint slots: the open fails. */
static void test_probe_hw_breakpoint_cannot_open(void **state)
{
	m.bp_open_err = -ENODEV;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  hw breakpoints       missing  cannot open: No such device (ENODEV): no data-watch triggers\n");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "\"hw_breakpoint\":{\"status\":\"missing\",\"opened\":false,\"fired\":false,\"hits\":0,\"writes\":0,\"errno\":\"ENODEV\"}");
	assert_false(probe__hw_breakpoint_fires(&fake_ops));
}

/* Opened, but enabling it failed: the probe cannot tell, and mem: is not armed. */
static void test_probe_hw_breakpoint_enable_fails(void **state)
{
	m.bp_count = 4;
	m.bp_ioctl_err = -EBUSY;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  hw breakpoints       unknown  opened, but enabling or reading failed: Device or resource busy (EBUSY)\n");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "\"hw_breakpoint\":{\"status\":\"unknown\",\"opened\":true,\"fired\":false,\"hits\":0,\"writes\":4,\"errno\":\"EBUSY\"}");
	assert_false(probe__hw_breakpoint_fires(&fake_ops));
}

/* A kernel with kprobes (the lab's Debian guests): the line says they work, and kprobe: points are armed. */
static void test_probe_kprobes_present(void **state)
{
	m.bpf[PROBE_BPF_KPROBE] = bpf_ok;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  bpf kprobe           ok       loads, attaches, fired 3/3 on our open() calls: ");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "\"kprobe\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,"
				"\"hits\":3,\"triggers\":3,\"error\":null,\"errno\":null}");
	assert_true(probe__bpf_fires(&fake_ops, PROBE_BPF_KPROBE));

	/* ... and one without (this development VM): refused, with the reason. */
	m.bpf[PROBE_BPF_KPROBE] = (struct probe_bpf_result){ .loaded = true, .step = "attach", .err = -ENOENT };
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  bpf kprobe           missing  attach failed: No such file or directory (ENOENT): ");
	assert_false(probe__bpf_fires(&fake_ops, PROBE_BPF_KPROBE));
}

static void test_probe_unprivileged_bpf_is_unknown(void **state)
{
	m.unprivileged = true;
	for (int k = 0; k < PROBE_BPF_NR; k++)
		m.bpf[k] = (struct probe_bpf_result){ .step = "load", .err = -EPERM };
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  bpf tracepoint       unknown  cannot tell: loading BPF needs root or CAP_BPF (EPERM)");
	assert_contains(*state, "  bpf fentry           unknown  cannot tell");
	assert_contains(*state, "  privileges           missing  euid 1000, effective: none: loading BPF needs root");
	assert_contains(*state, "  perf_event_paranoid  missing  2: unprivileged users may trace only their own user space");
	assert_contains(*state, "  perf mlock           ok       perf_event_mlock_kb 516, RLIMIT_MEMLOCK 8192 KiB");
	assert_int_equal(run(state, "--json", "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "\"fentry\":{\"status\":\"unknown\",");
	assert_contains(*state, "\"privileges\":{\"euid\":1000,\"root\":false,\"cap_perfmon\":false,\"cap_bpf\":false,"
				"\"cap_sys_admin\":false,\"perf_event_paranoid\":2}");
	assert_contains(*state, "\"mlock\":{\"perf_event_mlock_kb\":516,\"rlimit_memlock\":8388608,\"rlimit_memlock_unlimited\":false}");

	/* as root the same EPERM is the kernel's answer: missing */
	m.unprivileged = false;
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
	assert_contains(*state, "  bpf fentry           missing  load failed: Operation not permitted (EPERM)");
	assert_contains(*state, "  privileges           ok       root; effective: CAP_PERFMON CAP_BPF CAP_SYS_ADMIN");
}

static void test_probe_options(void **state)
{
	int opens;

	assert_int_equal(run(state, "--help", NULL), 0);
	assert_contains(*state, "USAGE: auxtrig probe");
	assert_contains(*state, "--sysfs-root DIR");
	opens = m.opens;
	assert_int_equal(run(state, "--bogus", NULL), 2);
	assert_int_equal(run(state, "extra", NULL), 2);
	assert_int_equal(run(state, "--sysfs-root", NULL), 2);
	/* Issue #13, 7: a sysfs root that is not there was a machine without PMUs, exit 0. */
	assert_int_equal(run(state, "--sysfs-root", "/nonexistent", NULL), 2);
	assert_int_equal(run(state, "--sysfs-root", "/proc/self", NULL), 2);
	/* usage errors probe nothing */
	assert_int_equal(m.opens, opens);
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-no_aux"), NULL), 0);
}

static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	probe_json__string(f, s);
	fclose(f);
	return buf;
}

/*
 * AUXTRIG_CAPS_OFF: each capability it names is reported missing, saying so,
 * and not tried; the rest is this machine's answer. It only switches off:
 * what the machine lacks stays missing with its own reason.
 */
static void test_probe_caps_off_switch(void **state)
{
	const char *off = "reported missing by AUXTRIG_CAPS_OFF (a test aid; unset it to try this machine)\n";
	char want[256];
	unsigned int mask;
	char bad[16];

	m.bp_count = PROBE_BP_WRITES;
	assert_int_equal(run(state, NULL), 0);
	assert_contains(*state, "  cgroup v2            ok       mounted at /sys/fs/cgroup: a recorded command's whole process tree dies with auxtrig\n");
	assert_contains(*state, "  btf                  ok       /sys/kernel/btf/vmlinux");

	caps__set_off(CAPS_ALL);
	m.opens = 0;
	assert_int_equal(run(state, NULL), 0);
	for (const char *const *w = (const char *const[]){ "btf", "bpf kprobe", "bpf fentry", "cgroup v2", "hw breakpoints",
							     "hardware trace", NULL }; *w; w++) {
		snprintf(want, sizeof(want), "  %-20s missing  %s", *w, off);
		assert_contains(*state, want);
	}
	assert_contains(*state, "  bpf tracepoint       ok       loads, attaches, fired 3/3");
	assert_contains(*state, "  aux_action           ok");
	assert_int_equal(run(state, "--json", NULL), 0);
	assert_json_shape(*state);
	assert_contains(*state, "\"hw_breakpoint\":{\"status\":\"missing\",\"opened\":false,\"fired\":false,\"hits\":0,\"writes\":0,"
				"\"errno\":null,\"reported_missing_by\":\"AUXTRIG_CAPS_OFF\"}");
	assert_contains(*state, "\"cgroup2\":{\"status\":\"missing\",\"path\":null,\"reported_missing_by\":\"AUXTRIG_CAPS_OFF\"}");
	assert_contains(*state, "\"kprobe\":{\"status\":\"missing\",\"loaded\":false,");

	/* a fixture's PMUs are not this machine's: the switch leaves them alone */
	assert_int_equal(run(state, "--sysfs-root", fixture("sysfs-intel_pt"), NULL), 0);
	assert_contains(*state, "  hardware trace       ok       2 AUX trace PMUs in ");

	/* one capability: the others are tried; the switch never turns one on */
	caps__set_off(1u << CAPS_HW_BREAKPOINT);
	m.bp_count = 0;
	assert_int_equal(run(state, NULL), 0);
	snprintf(want, sizeof(want), "  %-20s missing  %s", "hw breakpoints", off);
	assert_contains(*state, want);
	assert_contains(*state, "  bpf kprobe           missing  attach failed: No such file or directory (ENOENT)");
	assert_contains(*state, "  btf                  ok");

	assert_int_equal(caps__parse("all", &mask, bad, sizeof(bad)), 0);
	assert_int_equal(mask, CAPS_ALL);
	assert_int_equal(caps__parse("kprobe, btf", &mask, bad, sizeof(bad)), 0);
	assert_int_equal(mask, 1u << CAPS_KPROBE | 1u << CAPS_BTF);
	assert_int_equal(caps__parse("kprobe,on", &mask, bad, sizeof(bad)), -EINVAL);
	assert_string_equal(bad, "on");
	assert_int_equal(mask, 1u << CAPS_KPROBE);
	assert_int_equal(caps__parse("", &mask, bad, sizeof(bad)), 0);
	assert_int_equal(mask, 0);

	/* what the seam answers: a test's answer first, then the switch */
	caps__set_off(1u << CAPS_KPROBE);
	assert_false(caps__has(CAPS_KPROBE));
	assert_true(caps__switched_off(CAPS_KPROBE));
	caps__simulate(CAPS_KPROBE, 1);
	assert_true(caps__has(CAPS_KPROBE));
	assert_false(caps__switched_off(CAPS_KPROBE));
	caps__simulate(CAPS_KPROBE, 0);
	caps__set_off(0);
	assert_false(caps__has(CAPS_KPROBE));
	assert_false(caps__allowed(CAPS_KPROBE));
	caps__simulate(CAPS_KPROBE, -1);
	caps__set_off(0);
}

static void test_probe_json_string_escapes(void **state)
{
	struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "\"plain\"" },
		{ "a\"b", "\"a\\\"b\"" },
		{ "back\\slash", "\"back\\\\slash\"" },
		{ "nl\ntab\tcr\r", "\"nl\\ntab\\tcr\\r\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
		{ "\b\f", "\"\\b\\f\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "", "\"\"" },
		{ NULL, "null" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_of(cases[i].in);

		assert_string_equal(got, cases[i].out);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_probe_intel_pt_with_pause_resume, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_intel_pt_without_pause_resume, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_kernel_without_aux_action, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_cs_etm, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_arm_spe_without_pause, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_no_aux_pmu_says_tracepoints, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_bpf_lines, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_hw_breakpoint_open_but_silent, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_hw_breakpoint_fires, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_hw_breakpoint_cannot_open, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_hw_breakpoint_enable_fails, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_kprobes_present, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_unprivileged_bpf_is_unknown, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_options, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_caps_off_switch, setup_vm, teardown),
		cmocka_unit_test_setup_teardown(test_probe_json_string_escapes, setup_vm, teardown),
	};

	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
