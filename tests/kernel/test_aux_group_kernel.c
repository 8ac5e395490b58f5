// SPDX-License-Identifier: BSD-2-Clause
/*
 * aux_group__validate() against the real kernel (root): for every refused
 * aux_action combination that can be built without trace hardware (a
 * software leader stands in where the AUX PMU would be), the errno our
 * validator predicts must be the one perf_event_open(2) returns, on a
 * kernel with aux_action (6.13+, 6.12.24+) and on one without (Debian 12's
 * 6.1, in the lab), where every aux_action bit is refused. Also: the
 * gate's --where veto program on a uprobe PMU member silences that member
 * only, not another event on the same function (a private prog array).
 *
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "auxtrig/record/aux_group.h"
#include "auxtrig/sys/elf_sym.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/sys/pmu.h"

static int failures;
/* What this kernel is found to have (main()): the validator predicts for that. */
static struct aux_group_caps kernel_caps = { .kernel_aux_action = true, .pmu_aux_pause = true };

static int event_open(struct perf_event_attr *attr, int group_fd)
{
	return perf_sys__event_open(&perf_sys__kernel, attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Open the group as the recorder would; the first failure's -errno, or 0. */
static int kernel_open(struct aux_group *g)
{
	int fds[AUX_GROUP_MAX_MEMBERS + 1], n = 0, err = 0;

	fds[n] = event_open(&g->leader.attr, -1);
	if (fds[n] < 0)
		return fds[n];
	n++;
	for (size_t i = 0; i < g->nr_members; i++) {
		fds[n] = event_open(&g->members[i].attr, fds[0]);
		if (fds[n] < 0) {
			err = fds[n];
			break;
		}
		n++;
	}
	while (n--)
		close(fds[n]);
	return err;
}

/* A software dummy leads, where the AUX event would: it has no CAP_AUX_PAUSE. */
static void sw_led(struct aux_group *g, __u64 tp_id, __u32 leader_action, __u32 member_action)
{
	memset(g, 0, sizeof(*g));
	g->cpu = -1;
	g->kind = AUX_PMU_OTHER;
	g->leader_aux = false;
	snprintf(g->leader.name, sizeof(g->leader.name), "dummy");
	g->leader.attr.size = sizeof(g->leader.attr);
	g->leader.attr.type = PERF_TYPE_SOFTWARE;
	g->leader.attr.config = PERF_COUNT_SW_DUMMY;
	g->leader.attr.disabled = 1;
	g->leader.attr.exclude_kernel = 1;
	*perf_attr_aux_action(&g->leader.attr) = leader_action;
	if (tp_id)
		aux_group__add_tracepoint(g, "syscalls:sys_enter_getpid", tp_id, member_action);
}

static void check(const char *what, struct aux_group *g)
{
	int predicted = aux_group__validate(g, &kernel_caps);
	int got = kernel_open(g);

	if (predicted != got) {
		fprintf(stderr, "FAIL %s: we predict %d (%s), the kernel says %d (%s)\n", what, predicted,
			strerror(-predicted), got, strerror(-got));
		failures++;
	} else {
		printf("ok   %s: %d %s\n", what, got, got ? strerror(-got) : "");
	}
}

/* The same, with a uprobe (entry) and a uretprobe (return) member from the kernel's "uprobe" PMU. */
static void uprobe_led(struct aux_group *g, const struct pmu *up, const char *path, __u64 off, __u32 entry_action,
		       __u32 return_action)
{
	sw_led(g, 0, 0, 0);
	if (aux_group__add_uprobe(g, up, path, off, false, entry_action) ||
	    aux_group__add_uprobe(g, up, path, off, true, return_action)) {
		fprintf(stderr, "FAIL cannot describe uprobe members on %s+%#llx\n", path, (unsigned long long)off);
		failures++;
	}
}

static __u64 tracepoint_id(const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];

	for (size_t i = 0; i < 2; i++) {
		FILE *f;
		unsigned long long id;

		snprintf(path, sizeof(path), "%s/events/syscalls/%s/id", roots[i], name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &id) != 1)
			id = 0;
		fclose(f);
		return id;
	}
	return 0;
}

/* Called a known number of times under uprobe members. */
__attribute__((noinline)) int veto_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static __u64 read_count(int fd)
{
	__u64 n = 0;

	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return ~0ULL;
	return n;
}

/*
 * perf-aux.md section 7 on this kernel: events of the uprobe PMU have a private
 * prog array. Two members on the same function of this process, the gate's
 * veto program (unarmed: it lets nothing through) attached to one by a perf
 * link: that one counts no hit, the other counts every call. So a veto on
 * auxtrig's member hides nothing from other users of the same function.
 */
static void check_veto_is_private(const struct pmu *up, const char *self)
{
	enum { CALLS = 7 };
	struct gate_opts go = { .nr_cpus = 1 };
	struct gate *gate = gate__open(&go);
	struct aux_group g;
	int fds[4] = { -1, -1, -1, -1 }, links[2] = { -1, -1 };
	__u64 off, n[4];

	if (!gate || elf_sym__file_offset(self, "veto_target", &off)) {
		fprintf(stderr, "FAIL cannot open the gate or find veto_target()\n");
		failures++;
		return;
	}
	gate__aux_veto(gate);
	if (gate__load(gate)) {
		fprintf(stderr, "FAIL the kernel refused the gate with its veto programs\n");
		failures++;
		gate__close(gate);
		return;
	}
	uprobe_led(&g, up, self, off, 0, 0);
	for (int i = 0; i < 4; i++) {
		fds[i] = event_open(&g.members[i % 2].attr, -1); /* entry, return, entry, return */
		if (fds[i] < 0) {
			fprintf(stderr, "FAIL cannot open uprobe member %d: %s\n", i, strerror(-fds[i]));
			failures++;
			goto out;
		}
	}
	for (int i = 0; i < 2; i++) {
		links[i] = perf_sys__attach_bpf(&perf_sys__kernel, fds[i], gate__aux_veto_fd(gate, i), 0);
		if (links[i] < 0) {
			fprintf(stderr, "FAIL cannot attach the veto program to member %d: %s\n", i, strerror(-links[i]));
			failures++;
			goto out;
		}
	}
	for (int i = 0; i < CALLS; i++)
		veto_target(i);
	for (int i = 0; i < 4; i++)
		n[i] = read_count(fds[i]);
	if (n[0] || n[1] || n[2] != CALLS || n[3] != CALLS) {
		fprintf(stderr, "FAIL %d calls: vetoed members counted %llu entries, %llu returns; the others %llu, %llu\n",
			CALLS, (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2],
			(unsigned long long)n[3]);
		failures++;
	} else {
		printf("ok   a veto program on a uprobe PMU member is private: it counted 0 of %d calls, a second member on the same function %d\n",
		       CALLS, CALLS);
	}
out:
	for (int i = 0; i < 2; i++)
		if (links[i] >= 0)
			close(links[i]);
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	gate__close(gate);
}

int main(void)
{
	struct perf_event_attr probe = { .size = sizeof(probe), .type = PERF_TYPE_SOFTWARE,
					 .config = PERF_COUNT_SW_DUMMY, .disabled = 1, .exclude_kernel = 1 };
	struct aux_group g;
	__u64 tp;
	int fd;

	if (geteuid()) {
		printf("skip: needs root\n");
		return 77;
	}
	log__set_level(LOG_ERR - 1); /* the validator's messages are expected here */
	*perf_attr_aux_action(&probe) = AUXTRIG_AUX_START_PAUSED;
	fd = event_open(&probe, -1);
	if (fd == -EINVAL) {
		printf("this kernel has no aux_action (dummy with aux_start_paused: EINVAL)\n");
		kernel_caps.kernel_aux_action = false;
	} else if (fd != -EOPNOTSUPP) {
		fprintf(stderr, "FAIL a software dummy with aux_start_paused gave %d: neither EOPNOTSUPP nor EINVAL\n", fd);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	tp = tracepoint_id("sys_enter_getpid");
	if (!tp) {
		printf("skip: no syscalls:sys_enter_getpid tracepoint (tracefs not mounted?)\n");
		return 77;
	}

	sw_led(&g, 0, AUXTRIG_AUX_START_PAUSED, 0);
	check("aux_start_paused on a PMU without CAP_AUX_PAUSE", &g);
	sw_led(&g, 0, AUXTRIG_AUX_PAUSE, 0);
	check("aux_pause on a lone event (no AUX leader)", &g);
	sw_led(&g, 0, AUXTRIG_AUX_PAUSE | AUXTRIG_AUX_RESUME, 0);
	check("aux_pause and aux_resume on one event", &g);
	sw_led(&g, 0, 1u << 3, 0);
	check("aux_action bit 3", &g);
	sw_led(&g, 0, 1u << 31, 0);
	check("aux_action bit 31", &g);
	sw_led(&g, 0, AUXTRIG_AUX_PAUSE, 0);
	g.leader.attr.aux_output = 1;
	check("aux_output with aux_pause", &g);
	sw_led(&g, tp, 0, AUXTRIG_AUX_RESUME);
	check("aux_resume trigger under a leader that cannot pause", &g);
	sw_led(&g, tp, 0, AUXTRIG_AUX_START_PAUSED);
	check("aux_start_paused on a tracepoint member", &g);
	sw_led(&g, tp, 0, AUXTRIG_AUX_PAUSE | AUXTRIG_AUX_RESUME);
	check("pause and resume on one tracepoint member", &g);
	sw_led(&g, tp, 0, 0);
	check("a plain group (accepted)", &g);

	/*
	 * Uprobe windows: members from the uprobe PMU (config1 = path, config2 =
	 * file offset, retprobe bit from its format), at main() of this binary.
	 */
	{
		static char self[4096];
		struct pmu *up = NULL;
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		__u64 off;

		if (n <= 0 || pmu__read(NULL, "uprobe", &up)) {
			printf("skip: no uprobe PMU in /sys/bus/event_source/devices\n");
			return 77;
		}
		self[n] = '\0';
		if (elf_sym__file_offset(self, "main", &off)) {
			fprintf(stderr, "FAIL cannot find main() in %s\n", self);
			pmu__delete(up);
			return 1;
		}
		uprobe_led(&g, up, self, off, 0, 0);
		check("uprobe and uretprobe members as auxtrig describes them (accepted)", &g);
		uprobe_led(&g, up, self, off, AUXTRIG_AUX_RESUME, AUXTRIG_AUX_PAUSE);
		check("uprobe aux_resume / uretprobe aux_pause under a leader that cannot pause", &g);
		uprobe_led(&g, up, self, off, AUXTRIG_AUX_START_PAUSED, 0);
		check("aux_start_paused on a uprobe member", &g);
		uprobe_led(&g, up, self, off, AUXTRIG_AUX_PAUSE | AUXTRIG_AUX_RESUME, 0);
		check("pause and resume on one uprobe member", &g);
		uprobe_led(&g, up, self, off, 0, AUXTRIG_AUX_PAUSE);
		g.members[1].attr.aux_output = 1;
		check("aux_output with aux_pause on a uretprobe member", &g);
		/* config1 really is the path the kernel opens: a missing binary is ENOENT */
		check_veto_is_private(up, self);
		uprobe_led(&g, up, self, off, 0, 0);
		g.members[1].attr.config1 = (__u64)(uintptr_t)"/no/such/binary";
		if (kernel_open(&g) != -ENOENT) {
			fprintf(stderr, "FAIL a uretprobe on a missing binary opened, or failed otherwise\n");
			failures++;
		} else {
			printf("ok   a uretprobe on a missing binary: ENOENT (config1 is the path)\n");
		}
		pmu__delete(up);
	}

	return failures ? 1 : 0;
}
