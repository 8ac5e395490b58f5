// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig probe` against the real kernel (root). Expectations come from
 * independent evidence (oracles below: is there a kprobe PMU? does bpftrace
 * find fentry? does a plain write breakpoint count? an AUX PMU directory in
 * sysfs?), so the same test holds on the CI VM (Linux 6.18: no kprobes,
 * fentry refused, breakpoints that never fire) and in the lab's guests
 * (Debian 6.12 and 6.1: all of them work). Tracepoints, raw_tp, uprobes and
 * the ring buffer must work everywhere.
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
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

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

/*
 * Oracles: evidence of each capability that does not come from auxtrig's probe code, so that the
 * test asserts auxtrig's verdict for whatever machine it runs on (the CI VM, the lab's guests).
 */
static bool oracle_kprobes(void)
{
	return !access("/sys/bus/event_source/devices/kprobe", F_OK) ||
	       !access("/sys/kernel/tracing/kprobe_events", F_OK);
}

/* bpftrace's own feature test for fentry ("kfunc"): 1 yes, 0 no, -1 no answer. */
static int oracle_kfunc(void)
{
	char line[256];
	int yes = -1;
	FILE *p = popen("bpftrace --info 2>&1", "r");

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, "kfunc: yes"))
			yes = 1;
		else if (strstr(line, "kfunc: no"))
			yes = 0;
	}
	pclose(p);
	return yes;
}

static volatile int bp_target;

/* A counting write breakpoint on our own variable, read back: how many of 4 writes it saw. */
static long long oracle_bp_hits(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(attr),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (unsigned long)&bp_target,
		.bp_len = HW_BREAKPOINT_LEN_4,
		.sample_period = 1,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	long long count = -1;
	int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);

	if (fd < 0)
		return -1;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 4; i++)
		bp_target = i;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = -1;
	close(fd);
	return count;
}

/* The CLI's --json: compact output, so exact fragments are stable; they follow the oracles. */
static void check_cli_json(bool kprobes, int kfunc, bool bp_fire, size_t nr_aux)
{
	const char *build = getenv("AUXTRIG_BUILD");
	char fragments[8][160];
	size_t nf = 0;
	char cmd[4096], buf[16384];
	size_t n;
	FILE *p;
	int rc;

	snprintf(fragments[nf++], sizeof(fragments[0]), "{\"version\":1,\"kernel\":{\"release\":");
	snprintf(fragments[nf++], sizeof(fragments[0]),
		 "\"tracepoint\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,");
	snprintf(fragments[nf++], sizeof(fragments[0]),
		 "\"uprobe\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,");
	snprintf(fragments[nf++], sizeof(fragments[0]), kprobes ?
		 "\"kprobe\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3," :
		 "\"kprobe\":{\"status\":\"missing\",");
	if (kfunc >= 0)
		snprintf(fragments[nf++], sizeof(fragments[0]), kfunc ?
			 "\"fentry\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3," :
			 "\"fentry\":{\"status\":\"missing\",\"loaded\":false,");
	snprintf(fragments[nf++], sizeof(fragments[0]), bp_fire ?
		 "\"hw_breakpoint\":{\"status\":\"ok\",\"opened\":true,\"fired\":true,\"hits\":4," :
		 "\"hw_breakpoint\":{\"status\":\"missing\",\"opened\":true,\"fired\":false,\"hits\":0,");
	snprintf(fragments[nf++], sizeof(fragments[0]), nr_aux ?
		 "\"hardware_trace\":{\"status\":\"ok\",\"sysfs_root\":\"/sys\",\"aux_pmus\":[{" :
		 "\"hardware_trace\":{\"status\":\"missing\",\"sysfs_root\":\"/sys\",\"aux_pmus\":[]}}");

	snprintf(cmd, sizeof(cmd), "'%s/auxtrig' probe --json", build ? build : "build");
	p = popen(cmd, "r");
	CHECK(p, "cannot run %s", cmd);
	if (!p)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	rc = pclose(p);
	CHECK(rc == 0, "%s exited with status %d", cmd, rc);
	for (size_t i = 0; i < nf; i++)
		CHECK(strstr(buf, fragments[i]), "--json lacks %s in:\n%s", fragments[i], buf);
}

int main(void)
{
	struct probe_opts opts = { 0 };
	struct probe_report r;
	bool kprobes, bp_fire;
	long long bp_hits;
	int err, kfunc;

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

	/* kprobes exist iff the kernel registers its kprobe PMU / kprobe_events: then they fire. */
	kprobes = oracle_kprobes();
	fprintf(stderr, "oracle: kprobes %s\n", kprobes ? "present" : "absent");
	if (kprobes)
		check_fired(&r, PROBE_BPF_KPROBE);
	else
		CHECK(r.bpf[PROBE_BPF_KPROBE].err && !r.bpf[PROBE_BPF_KPROBE].hits,
		      "kprobe reported usable on a kernel without kprobes");

	/* fentry: as bpftrace's feature test finds it. */
	kfunc = oracle_kfunc();
	fprintf(stderr, "oracle: bpftrace says kfunc %s\n", kfunc < 0 ? "?" : kfunc ? "yes" : "no");
	CHECK(kfunc >= 0, "bpftrace --info gave no kfunc line (make deps installs bpftrace)");
	if (kfunc == 1)
		check_fired(&r, PROBE_BPF_FENTRY);
	else if (kfunc == 0)
		CHECK(!r.bpf[PROBE_BPF_FENTRY].attached && r.bpf[PROBE_BPF_FENTRY].err,
		      "fentry: attached=%d err=%d where bpftrace finds none", r.bpf[PROBE_BPF_FENTRY].attached,
		      r.bpf[PROBE_BPF_FENTRY].err);

	/* breakpoints: auxtrig's count is the kernel's, whether they fire (4) or not (0). */
	bp_hits = oracle_bp_hits();
	fprintf(stderr, "oracle: a write breakpoint counted %lld of 4 writes\n", bp_hits);
	CHECK(bp_hits == 0 || bp_hits == 4, "oracle breakpoint counted %lld", bp_hits);
	bp_fire = bp_hits == 4;
	CHECK(r.bp_opened && !r.bp_err, "breakpoint did not open: %d", r.bp_err);
	CHECK(r.bp_hits == (__u64)bp_hits, "breakpoint fired %llu times, the kernel's own count is %lld",
	      (unsigned long long)r.bp_hits, bp_hits);

	/* aux_action: known with EOPNOTSUPP (or success) from the dummy, unknown with EINVAL. */
	CHECK((r.aux_action_known == 1 && (r.aux_action_err == -EOPNOTSUPP || r.aux_action_err == 0)) ||
	      (r.aux_action_known == 0 && r.aux_action_err == -EINVAL),
	      "aux_action known=%d err=%d", r.aux_action_known, r.aux_action_err);

	CHECK(r.nr_aux == sysfs_aux_dirs(), "%zu AUX PMUs reported, %zu in sysfs", r.nr_aux, sysfs_aux_dirs());
	CHECK(r.paranoid != INT_MIN && r.mlock_kb >= 0, "paranoid=%d mlock_kb=%ld", r.paranoid, r.mlock_kb);

	check_cli_json(kprobes, kfunc, bp_fire, r.nr_aux);
	probe_report__exit(&r);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	fprintf(stderr, "all checks passed\n");
	return 0;
}
