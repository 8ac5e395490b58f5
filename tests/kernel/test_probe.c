// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig probe` against the real kernel (root). Expectations come from
 * independent evidence where there is some (is there a kprobe PMU? an AUX
 * PMU directory in sysfs?) and otherwise are the facts of the CI VM
 * (Linux 6.18, no trace hardware): tracepoints, raw_tp, uprobes and the
 * ring buffer work and fire; fentry is refused; hardware breakpoints open
 * but never fire; the kernel knows aux_action.
 *
 * Exit 0 pass, 1 fail, 77 skip (not root).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/cmd/probe.h"

static int failures;

#define CHECK(cond, ...)                                             \
	do {                                                         \
		if (!(cond)) {                                       \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, \
				__LINE__, #cond);                    \
			fprintf(stderr, __VA_ARGS__);                \
			fputc('\n', stderr);                         \
			failures++;                                  \
		}                                                    \
	} while (0)

static size_t sysfs_aux_dirs(void)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' && pmu__is_aux_name(e->d_name);
	closedir(d);
	return n;
}

static void check_fired(const struct probe_report *r, enum probe_bpf_kind k)
{
	const struct probe_bpf_result *b = &r->bpf[k];

	CHECK(b->loaded && b->attached && !b->err, "bpf %s: loaded=%d attached=%d step=%s err=%d",
	      probe_bpf_kind__name(k), b->loaded, b->attached, b->step ? b->step : "-", b->err);
	CHECK(b->hits == (__u64)b->triggers && b->triggers == 3, "bpf %s: %llu hits for %d triggers",
	      probe_bpf_kind__name(k), (unsigned long long)b->hits, b->triggers);
}

/* The CLI's --json on this machine: compact output, so exact fragments are stable. */
static void check_cli_json(void)
{
	const char *build = getenv("AUXTRIG_BUILD");
	static const char *const fragments[] = {
		"{\"version\":1,\"kernel\":{\"release\":",
		"\"tracepoint\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,",
		"\"uprobe\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,",
		"\"kprobe\":{\"status\":\"missing\",",
		"\"fentry\":{\"status\":\"missing\",\"loaded\":false,",
		"\"errno\":\"EPERM\"}",
		"\"aux_action\":{\"status\":\"ok\",\"kernel\":true,\"errno\":\"EOPNOTSUPP\"}",
		"\"hw_breakpoint\":{\"status\":\"missing\",\"opened\":true,\"fired\":false,\"hits\":0,",
		"\"hardware_trace\":{\"status\":\"missing\",\"sysfs_root\":\"/sys\",\"aux_pmus\":[]}}",
	};
	char cmd[4096], buf[16384];
	size_t n;
	FILE *p;
	int rc;

	snprintf(cmd, sizeof(cmd), "'%s/auxtrig' probe --json", build ? build : "build");
	p = popen(cmd, "r");
	CHECK(p, "cannot run %s", cmd);
	if (!p)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	rc = pclose(p);
	CHECK(rc == 0, "%s exited with status %d", cmd, rc);
	for (size_t i = 0; i < sizeof(fragments) / sizeof(fragments[0]); i++)
		CHECK(strstr(buf, fragments[i]), "--json lacks %s in:\n%s", fragments[i], buf);
}

int main(void)
{
	struct probe_opts opts = { 0 };
	struct probe_report r;
	bool kprobes;
	int err;

	if (geteuid() != 0) {
		fprintf(stderr, "needs root: it loads BPF programs\n");
		return 77;
	}
	log__route_libbpf();
	err = probe_report__collect(&r, &opts, &probe_ops__kernel);
	CHECK(!err, "probe_report__collect: %d", err);
	probe_report__print_text(&r, stderr);

	CHECK(r.release[0], "no kernel release");
	CHECK(r.btf, "BTF missing, but %s", access("/sys/kernel/btf/vmlinux", R_OK) ? "absent" : "readable");
	CHECK(!strcmp(r.tracefs, "/sys/kernel/tracing"), "tracefs at '%s'", r.tracefs);
	CHECK(r.euid == 0 && r.cap_bpf && r.cap_perfmon && r.cap_sys_admin, "root without its capabilities");

	check_fired(&r, PROBE_BPF_TRACEPOINT);
	check_fired(&r, PROBE_BPF_RAW_TP);
	check_fired(&r, PROBE_BPF_UPROBE);
	check_fired(&r, PROBE_BPF_RINGBUF);

	/* kprobes exist iff the kernel registers its kprobe PMU / kprobe_events. */
	kprobes = !access("/sys/bus/event_source/devices/kprobe", F_OK) ||
		  !access("/sys/kernel/tracing/kprobe_events", F_OK);
	CHECK(kprobes == (r.bpf[PROBE_BPF_KPROBE].attached && r.bpf[PROBE_BPF_KPROBE].hits),
	      "kprobe verdict attached=%d hits=%llu, but kprobe support in sysfs/tracefs is %d",
	      r.bpf[PROBE_BPF_KPROBE].attached, (unsigned long long)r.bpf[PROBE_BPF_KPROBE].hits, kprobes);
	CHECK(!kprobes, "this VM was expected to have no kprobes");
	CHECK(r.bpf[PROBE_BPF_KPROBE].err && !r.bpf[PROBE_BPF_KPROBE].hits, "kprobe reported usable");

	/* fentry/fexit fail with EPERM on this VM */
	CHECK(!r.bpf[PROBE_BPF_FENTRY].attached && r.bpf[PROBE_BPF_FENTRY].err == -EPERM,
	      "fentry: attached=%d err=%d (expected EPERM)", r.bpf[PROBE_BPF_FENTRY].attached,
	      r.bpf[PROBE_BPF_FENTRY].err);

	/* breakpoints: open, but never count a write here */
	CHECK(r.bp_opened && !r.bp_err, "breakpoint did not open: %d", r.bp_err);
	CHECK(r.bp_hits == 0, "breakpoint fired %llu times on a VM where they never fire",
	      (unsigned long long)r.bp_hits);

	CHECK(r.aux_action_known == 1 && r.aux_action_err == -EOPNOTSUPP,
	      "aux_action known=%d err=%d (expected EOPNOTSUPP from the sw dummy)", r.aux_action_known,
	      r.aux_action_err);

	CHECK(r.nr_aux == sysfs_aux_dirs(), "%zu AUX PMUs reported, %zu in sysfs", r.nr_aux, sysfs_aux_dirs());
	CHECK(r.nr_aux == 0, "this VM was expected to have no AUX PMU");
	CHECK(r.paranoid != INT_MIN && r.mlock_kb >= 0, "paranoid=%d mlock_kb=%ld", r.paranoid, r.mlock_kb);

	probe_report__exit(&r);
	check_cli_json();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	fprintf(stderr, "all checks passed\n");
	return 0;
}
