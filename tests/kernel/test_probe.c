// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig probe` against the real kernel (root), on whatever machine this
 * is. Each verdict is checked against evidence the test gathers itself, not
 * against what one machine happened to have:
 *
 * - kprobes: the kernel registers a kprobe PMU or kprobe_events;
 * - hardware breakpoints: the test opens its own write watchpoint and counts
 *   its own writes (cannot open / opens but never fires / fires);
 * - aux_action: the kernel's BTF has perf_event_attr.aux_action;
 * - AUX trace PMUs: their directories in sysfs;
 * - tracepoints, raw_tp, uprobes, the ring buffer: every machine auxtrig
 *   runs on has them, so they must fire;
 * - fentry, which has no such evidence: the verdict must be coherent
 *   (ok and fired, or missing with the step and errno that failed).
 *
 * The text and the --json of the CLI must say the same. The other branches
 * of each verdict are covered by fixtures in tests/unit/test_probe.c.
 *
 * Exit 0 pass, 1 fail, 77 skip (not root).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <bpf/btf.h>

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

/* A verdict without outside evidence: fired for every trigger, or failed at a named step. */
static void check_coherent(const struct probe_report *r, enum probe_bpf_kind k)
{
	const struct probe_bpf_result *b = &r->bpf[k];

	if (b->attached && b->hits) {
		check_fired(r, k);
		return;
	}
	CHECK(b->err < 0 && b->step && !b->hits, "bpf %s: not fired, but step=%s err=%d hits=%llu",
	      probe_bpf_kind__name(k), b->step ? b->step : "-", b->err, (unsigned long long)b->hits);
}

/* What hardware breakpoints do here, by the test's own write watchpoint. */
enum bp_truth { BP_CANNOT_OPEN, BP_SILENT, BP_FIRE };

static volatile int watched;

static enum bp_truth bp_truth(int *open_err)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_BREAKPOINT,
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (unsigned long)&watched,
		.bp_len = HW_BREAKPOINT_LEN_4,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	__u64 count = 0;
	int fd;

	fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		*open_err = -errno;
		return BP_CANNOT_OPEN;
	}
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 4; i++)
		watched = i + 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close(fd);
	return count ? BP_FIRE : BP_SILENT;
}

/* Does a BTF struct (anonymous unions and structs included) have member @name? */
static bool btf_has_member(const struct btf *btf, __u32 id, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;

	if (!t || depth > 4 || (!btf_is_struct(t) && !btf_is_union(t)))
		return false;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && !strcmp(n, name))
			return true;
		if ((!n || !*n) && btf_has_member(btf, btf__resolve_type(btf, m->type), name, depth + 1))
			return true;
	}
	return false;
}

/* 1: the kernel's perf_event_attr has aux_action; 0: it has not; -1: no BTF to tell. */
static int kernel_has_aux_action(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id, has;

	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, "perf_event_attr", BTF_KIND_STRUCT);
	has = id > 0 ? btf_has_member(btf, id, "aux_action", 0) : -1;
	btf__free(btf);
	return has;
}

static const char *errno_str(int err)
{
	static char buf[32];

	switch (-err) {
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOSPC: return "ENOSPC";
	}
	snprintf(buf, sizeof(buf), "errno %d", -err);
	return buf;
}

struct truth {
	bool kprobes;
	enum bp_truth bp;
	int bp_err;
	int aux_action;
	size_t nr_aux;
};

static char *run_cli(const char *args)
{
	const char *build = getenv("AUXTRIG_BUILD");
	char cmd[4096];
	char *buf = calloc(1, 65536);
	size_t n;
	FILE *p;
	int rc;

	snprintf(cmd, sizeof(cmd), "'%s/auxtrig' probe %s", build ? build : "build", args);
	p = popen(cmd, "r");
	CHECK(p && buf, "cannot run %s", cmd);
	if (!p || !buf) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, 65535, p);
	buf[n] = '\0';
	rc = pclose(p);
	CHECK(rc == 0, "%s exited with status %d", cmd, rc);
	return buf;
}

static void expect_in(const char *what, const char *buf, const char *fragment)
{
	CHECK(strstr(buf, fragment), "%s lacks \"%s\" in:\n%s", what, fragment, buf);
}

/* The CLI on this machine, text and --json, as the evidence says. */
static void check_cli(const struct truth *t, const struct probe_report *r)
{
	const struct probe_bpf_result *fe = &r->bpf[PROBE_BPF_FENTRY];
	char frag[512], *buf;

	buf = run_cli("--json");
	if (buf) {
		expect_in("--json", buf, "{\"version\":1,\"kernel\":{\"release\":");
		expect_in("--json", buf, "\"tracepoint\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,");
		expect_in("--json", buf, "\"uprobe\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,");
		expect_in("--json", buf, t->kprobes ? "\"kprobe\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,"
						     : "\"kprobe\":{\"status\":\"missing\",");
		if (fe->attached && fe->hits) {
			expect_in("--json", buf, "\"fentry\":{\"status\":\"ok\",\"loaded\":true,\"attached\":true,\"fired\":true,\"hits\":3,");
		} else {
			expect_in("--json", buf, "\"fentry\":{\"status\":\"missing\",");
			snprintf(frag, sizeof(frag), "\"errno\":\"%s\"}", errno_str(fe->err));
			expect_in("--json", buf, frag);
		}
		expect_in("--json", buf, t->aux_action ? "\"aux_action\":{\"status\":\"ok\",\"kernel\":true,\"errno\":\"EOPNOTSUPP\"}"
						       : "\"aux_action\":{\"status\":\"missing\",\"kernel\":false,\"errno\":\"EINVAL\"}");
		switch (t->bp) {
		case BP_FIRE:
			snprintf(frag, sizeof(frag), "\"hw_breakpoint\":{\"status\":\"ok\",\"opened\":true,\"fired\":true,"
				 "\"hits\":%d,\"writes\":%d,\"errno\":null}", PROBE_BP_WRITES, PROBE_BP_WRITES);
			break;
		case BP_SILENT:
			snprintf(frag, sizeof(frag), "\"hw_breakpoint\":{\"status\":\"missing\",\"opened\":true,\"fired\":false,"
				 "\"hits\":0,\"writes\":%d,\"errno\":null}", PROBE_BP_WRITES);
			break;
		case BP_CANNOT_OPEN:
			snprintf(frag, sizeof(frag), "\"hw_breakpoint\":{\"status\":\"missing\",\"opened\":false,\"fired\":false,"
				 "\"hits\":0,\"writes\":0,\"errno\":\"%s\"}", errno_str(t->bp_err));
			break;
		}
		expect_in("--json", buf, frag);
		expect_in("--json", buf, t->nr_aux ? "\"hardware_trace\":{\"status\":\"ok\",\"sysfs_root\":\"/sys\",\"aux_pmus\":[{"
						   : "\"hardware_trace\":{\"status\":\"missing\",\"sysfs_root\":\"/sys\",\"aux_pmus\":[]}}");
		free(buf);
	}

	buf = run_cli("");
	if (buf) {
		expect_in("text", buf, t->kprobes ? "\n  bpf kprobe           ok       loads, attaches, fired 3/3"
						  : "\n  bpf kprobe           missing  ");
		expect_in("text", buf, t->aux_action ? "\n  aux_action           ok       " : "\n  aux_action           missing  ");
		switch (t->bp) {
		case BP_FIRE:
			snprintf(frag, sizeof(frag), "\n  hw breakpoints       ok       fired %d/%d on writes to our own variable",
				 PROBE_BP_WRITES, PROBE_BP_WRITES);
			break;
		case BP_SILENT:
			snprintf(frag, sizeof(frag), "\n  hw breakpoints       missing  open but never fire (0/%d writes seen",
				 PROBE_BP_WRITES);
			break;
		case BP_CANNOT_OPEN:
			snprintf(frag, sizeof(frag), "\n  hw breakpoints       missing  cannot open: %s (%s)", strerror(-t->bp_err),
				 errno_str(t->bp_err));
			break;
		}
		expect_in("text", buf, frag);
		expect_in("text", buf, t->nr_aux ? "\n  hardware trace       ok       " : "\n  hardware trace       missing  ");
		free(buf);
	}
}

static const char *const bp_names[] = { "cannot open", "open but never fire", "fire" };

int main(void)
{
	struct probe_opts opts = { 0 };
	struct probe_report r;
	struct truth t = { 0 };
	int err;

	if (geteuid() != 0) {
		fprintf(stderr, "needs root: it loads BPF programs\n");
		return 77;
	}
	log__route_libbpf();
	t.kprobes = !access("/sys/bus/event_source/devices/kprobe", F_OK) ||
		    !access("/sys/kernel/tracing/kprobe_events", F_OK);
	t.bp = bp_truth(&t.bp_err);
	t.aux_action = kernel_has_aux_action();
	t.nr_aux = sysfs_aux_dirs();
	fprintf(stderr, "this machine, by the test's own evidence: kprobes %s; hardware breakpoints %s; "
			"aux_action %s; %zu AUX PMU(s)\n",
		t.kprobes ? "yes" : "no", bp_names[t.bp], t.aux_action < 0 ? "unknown (no BTF)" : t.aux_action ? "yes" : "no",
		t.nr_aux);

	err = probe_report__collect(&r, &opts, &probe_ops__kernel);
	CHECK(!err, "probe_report__collect: %d", err);
	probe_report__print_text(&r, stderr);

	CHECK(r.release[0], "no kernel release");
	CHECK(r.btf, "BTF missing, but %s", access("/sys/kernel/btf/vmlinux", R_OK) ? "absent" : "readable");
	CHECK(!strcmp(r.tracefs, "/sys/kernel/tracing"), "tracefs at '%s'", r.tracefs);
	CHECK(r.euid == 0 && r.cap_bpf && r.cap_perfmon && r.cap_sys_admin, "root without its capabilities");

	/* What every machine auxtrig runs on has. */
	check_fired(&r, PROBE_BPF_TRACEPOINT);
	check_fired(&r, PROBE_BPF_RAW_TP);
	check_fired(&r, PROBE_BPF_UPROBE);
	check_fired(&r, PROBE_BPF_RINGBUF);

	/* kprobes fire iff the kernel has them. */
	if (t.kprobes)
		check_fired(&r, PROBE_BPF_KPROBE);
	else
		CHECK(r.bpf[PROBE_BPF_KPROBE].err && !r.bpf[PROBE_BPF_KPROBE].hits,
		      "kprobe reported usable on a kernel without a kprobe PMU or kprobe_events");
	check_coherent(&r, PROBE_BPF_FENTRY);

	/* Breakpoints: the same verdict as the test's own watchpoint. */
	switch (t.bp) {
	case BP_FIRE:
		CHECK(r.bp_opened && !r.bp_err && r.bp_hits == PROBE_BP_WRITES,
		      "breakpoints fire here, but the probe saw opened=%d err=%d hits=%llu (one per write expected)",
		      r.bp_opened, r.bp_err, (unsigned long long)r.bp_hits);
		CHECK(probe__hw_breakpoint_fires(&probe_ops__kernel), "breakpoints fire, --on mem: would be refused");
		break;
	case BP_SILENT:
		CHECK(r.bp_opened && !r.bp_err && r.bp_hits == 0,
		      "breakpoints open but never fire here, but the probe saw opened=%d err=%d hits=%llu", r.bp_opened,
		      r.bp_err, (unsigned long long)r.bp_hits);
		CHECK(!probe__hw_breakpoint_fires(&probe_ops__kernel), "silent breakpoints, --on mem: would be armed");
		break;
	case BP_CANNOT_OPEN:
		CHECK(!r.bp_opened && r.bp_err == t.bp_err, "breakpoints cannot open here (%d), but the probe saw opened=%d err=%d",
		      t.bp_err, r.bp_opened, r.bp_err);
		break;
	}

	/* aux_action as the kernel's own BTF declares it. */
	CHECK(t.aux_action >= 0, "no vmlinux BTF to tell whether the kernel knows aux_action");
	if (t.aux_action == 1)
		CHECK(r.aux_action_known == 1 && r.aux_action_err == -EOPNOTSUPP,
		      "perf_event_attr has aux_action, but known=%d err=%d (expected EOPNOTSUPP from the sw dummy)",
		      r.aux_action_known, r.aux_action_err);
	else if (t.aux_action == 0)
		CHECK(r.aux_action_known == 0 && r.aux_action_err == -EINVAL,
		      "perf_event_attr has no aux_action, but known=%d err=%d (expected EINVAL)", r.aux_action_known,
		      r.aux_action_err);

	CHECK(r.nr_aux == t.nr_aux, "%zu AUX PMUs reported, %zu in sysfs", r.nr_aux, t.nr_aux);
	CHECK(r.paranoid != INT_MIN && r.mlock_kb >= 0, "paranoid=%d mlock_kb=%ld", r.paranoid, r.mlock_kb);

	check_cli(&t, &r);
	probe_report__exit(&r);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	fprintf(stderr, "all checks passed\n");
	return 0;
}
