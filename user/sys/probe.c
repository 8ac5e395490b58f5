// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig probe`: what auxtrig can do on this machine, and why not.
 * Every verdict comes from trying the smallest thing that proves it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/hw_breakpoint.h>
#include <bpf/libbpf.h>

#include "uapi/linux/perf_event_aux.h"
#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/sys/probe.h"
#include "auxtrig/sys/tracefs.h"
#include "skel/probe.skel.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The kernel function the kprobe and fentry programs attach to; open(2) reaches it. */
#define PROBE_KFUNC "do_sys_openat2"

#define PROBE_TRIGGERS 3

static const char *const bpf_kind_names[PROBE_BPF_NR] = {
	[PROBE_BPF_TRACEPOINT] = "tracepoint",
	[PROBE_BPF_RAW_TP] = "raw_tp",
	[PROBE_BPF_UPROBE] = "uprobe",
	[PROBE_BPF_KPROBE] = "kprobe",
	[PROBE_BPF_FENTRY] = "fentry",
	[PROBE_BPF_RINGBUF] = "ringbuf",
};

const char *probe_bpf_kind__name(enum probe_bpf_kind kind)
{
	return kind < PROBE_BPF_NR ? bpf_kind_names[kind] : "?";
}

const char *probe_pause__name(enum probe_pause pause)
{
	switch (pause) {
	case PROBE_PAUSE_YES:
		return "yes";
	case PROBE_PAUSE_NO_PMU:
		return "no_pmu";
	case PROBE_PAUSE_NO_KERNEL:
		return "no_kernel";
	default:
		return "unknown";
	}
}

const char *probe__errno_name(int err, char *buf, size_t size)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);

	if (n)
		return n;
	snprintf(buf, size, "E%d", err < 0 ? -err : err);
	return buf;
}

/* ---- the real kernel ---------------------------------------------------- */

static int kernel_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			     unsigned long flags)
{
	return perf_sys__event_open(&perf_sys__kernel, attr, pid, cpu, group_fd, flags);
}

static int kernel_event_read(int fd, __u64 *count)
{
	ssize_t n = read(fd, count, sizeof(*count));

	if (n < 0)
		return -errno;
	return n == sizeof(*count) ? 0 : -EIO;
}

static int kernel_event_ioctl(int fd, unsigned long request)
{
	return perf_sys__ioctl(&perf_sys__kernel, fd, request, 0);
}

static void kernel_event_close(int fd)
{
	perf_sys__close(&perf_sys__kernel, fd);
}

__attribute__((noinline, used)) int probe_uprobe_target(int x)
{
	/* Keep the call and the function: the uprobe needs a real entry to hit. */
	__asm__ __volatile__("" : "+r"(x));
	return x + 1;
}

static int ringbuf_count(void *ctx, void *data, size_t size)
{
	(*(__u64 *)ctx)++;
	return 0;
}

static struct bpf_program *probe_bpf__prog(struct probe_bpf *skel, enum probe_bpf_kind kind)
{
	switch (kind) {
	case PROBE_BPF_TRACEPOINT:
		return skel->progs.count_sys_enter_getpid;
	case PROBE_BPF_RAW_TP:
		return skel->progs.count_raw_sys_enter;
	case PROBE_BPF_UPROBE:
		return skel->progs.count_uprobe_target;
	case PROBE_BPF_KPROBE:
		return skel->progs.count_kprobe_openat2;
	case PROBE_BPF_FENTRY:
		return skel->progs.count_fentry_openat2;
	default:
		return skel->progs.ringbuf_sys_enter_getpid;
	}
}

static __u64 probe_bpf__hits(struct probe_bpf *skel, enum probe_bpf_kind kind)
{
	switch (kind) {
	case PROBE_BPF_TRACEPOINT:
		return skel->bss->tracepoint_hits;
	case PROBE_BPF_RAW_TP:
		return skel->bss->raw_tp_hits;
	case PROBE_BPF_UPROBE:
		return skel->bss->uprobe_hits;
	case PROBE_BPF_KPROBE:
		return skel->bss->kprobe_hits;
	case PROBE_BPF_FENTRY:
		return skel->bss->fentry_hits;
	default:
		return 0;
	}
}

static void kernel_bpf_try(enum probe_bpf_kind kind, struct probe_bpf_result *res)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts, .func_name = "probe_uprobe_target");
	struct ring_buffer *rb = NULL;
	struct bpf_program *prog, *p;
	struct bpf_link *link = NULL;
	struct probe_bpf *skel;
	__u64 records = 0;
	int err;

	memset(res, 0, sizeof(*res));
	skel = probe_bpf__open();
	if (!skel) {
		res->step = "open";
		res->err = -errno;
		return;
	}
	skel->rodata->target_tgid = getpid();
	skel->rodata->getpid_nr = SYS_getpid;
	prog = probe_bpf__prog(skel, kind);
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == prog);
	/* Only the ring buffer test needs the ring buffer: its absence must not fail the others. */
	if (kind != PROBE_BPF_RINGBUF)
		bpf_map__set_autocreate(skel->maps.probe_events, false);
	if (kind == PROBE_BPF_FENTRY) {
		err = bpf_program__set_attach_target(prog, 0, PROBE_KFUNC);
		if (err) {
			res->step = "load";
			res->err = err;
			goto out;
		}
	}
	err = probe_bpf__load(skel);
	if (err) {
		res->step = "load";
		res->err = err;
		pr_debug("probe: %s program '%s' failed to load: %s\n", probe_bpf_kind__name(kind),
			 bpf_program__name(prog), strerror(-err));
		goto out;
	}
	res->loaded = true;

	switch (kind) {
	case PROBE_BPF_UPROBE:
		link = bpf_program__attach_uprobe_opts(prog, 0, "/proc/self/exe", 0, &uopts);
		break;
	case PROBE_BPF_KPROBE:
		link = bpf_program__attach_kprobe(prog, false, PROBE_KFUNC);
		break;
	default:
		link = bpf_program__attach(prog);
		break;
	}
	if (!link) {
		res->step = "attach";
		res->err = -errno;
		goto out;
	}
	res->attached = true;

	if (kind == PROBE_BPF_RINGBUF) {
		rb = ring_buffer__new(bpf_map__fd(skel->maps.probe_events), ringbuf_count, &records, NULL);
		if (!rb) {
			res->step = "poll";
			res->err = -errno;
			goto out;
		}
	}
	for (int i = 0; i < PROBE_TRIGGERS; i++) {
		if (kind == PROBE_BPF_UPROBE) {
			probe_uprobe_target(i);
		} else if (kind == PROBE_BPF_KPROBE || kind == PROBE_BPF_FENTRY) {
			int fd = open("/", O_RDONLY | O_CLOEXEC);

			if (fd >= 0)
				close(fd);
		} else {
			syscall(SYS_getpid); /* glibc no longer caches getpid(), but be explicit */
		}
	}
	res->triggers = PROBE_TRIGGERS;
	if (rb) {
		err = ring_buffer__poll(rb, 100);
		if (err < 0) {
			res->step = "poll";
			res->err = err;
		}
		res->hits = records;
	} else {
		res->hits = probe_bpf__hits(skel, kind);
	}
out:
	ring_buffer__free(rb);
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
}


/* ---- collecting --------------------------------------------------------- */

static int read_long(const char *path, long *val)
{
	char buf[64], *end;
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		err = -EIO;
	} else {
		errno = 0;
		*val = strtol(buf, &end, 10);
		if (errno || end == buf)
			err = -EINVAL;
	}
	fclose(f);
	return err;
}

/* tracefs mount point (tracefs__find_mount()), "" when not mounted. */
static void probe__tracefs(struct probe_report *r)
{
	if (tracefs__find_mount(r->tracefs, sizeof(r->tracefs)))
		r->tracefs[0] = '\0';
}

int probe__effective_caps(__u64 *eff)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*eff = data[0].effective | (__u64)data[1].effective << 32;
	return 0;
}

bool probe__may_record(void)
{
	__u64 eff;

	if (geteuid() == 0)
		return true;
	if (probe__effective_caps(&eff))
		return false;
	return (eff & (1ull << CAP_SYS_ADMIN)) || ((eff & (1ull << CAP_BPF)) && (eff & (1ull << CAP_PERFMON)));
}

static void kernel_privileges(struct probe_report *r)
{
	long paranoid, mlock;
	struct rlimit rl;
	__u64 eff;

	r->euid = geteuid();
	if (!probe__effective_caps(&eff)) {
		r->cap_perfmon = eff & (1ull << CAP_PERFMON);
		r->cap_bpf = eff & (1ull << CAP_BPF);
		r->cap_sys_admin = eff & (1ull << CAP_SYS_ADMIN);
	}
	r->paranoid = read_long("/proc/sys/kernel/perf_event_paranoid", &paranoid) ? INT_MIN : (int)paranoid;
	r->mlock_kb = read_long("/proc/sys/kernel/perf_event_mlock_kb", &mlock) ? -1 : mlock;
	r->rlimit_memlock = getrlimit(RLIMIT_MEMLOCK, &rl) ? 0 : (unsigned long long)rl.rlim_cur;
}

static bool kernel_btf(void)
{
	return !access("/sys/kernel/btf/vmlinux", R_OK);
}

const struct probe_ops probe_ops__kernel = {
	.event_open = kernel_event_open,
	.event_read = kernel_event_read,
	.event_ioctl = kernel_event_ioctl,
	.event_close = kernel_event_close,
	.bpf_try = kernel_bpf_try,
	.privileges = kernel_privileges,
	.btf = kernel_btf,
	.cgroup2_mount = caps__cgroup2_mount,
};

static void attr__init(struct perf_event_attr *attr, __u32 type, __u64 config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = PERF_ATTR_SIZE_VER7;
	attr->type = type;
	attr->config = config;
	attr->disabled = 1;
	attr->exclude_kernel = 1; /* what an unprivileged user may open */
	attr->exclude_hv = 1;
}

/*
 * perf-aux.md §5: aux_start_paused on a software dummy gives EOPNOTSUPP on a
 * kernel that knows aux_action (no software PMU has PERF_PMU_CAP_AUX_PAUSE)
 * and EINVAL on one that doesn't (the bits were __reserved_3).
 */
static void probe__aux_action(struct probe_report *r, const struct probe_ops *ops)
{
	struct perf_event_attr attr;
	int fd;

	attr__init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	*perf_attr_aux_action(&attr) = AUXTRIG_AUX_START_PAUSED;
	fd = ops->event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		ops->event_close(fd);
		r->aux_action_known = 1;
		r->aux_action_err = 0;
		return;
	}
	r->aux_action_err = fd;
	r->aux_action_known = fd == -EOPNOTSUPP ? 1 : fd == -EINVAL ? 0 : -1;
}

static void probe__aux_pause(struct probe_aux_pmu *a, const struct probe_ops *ops)
{
	struct perf_event_attr attr;
	int fd;

	/* First the plain event: if even that fails, pause/resume can't be judged. */
	attr__init(&attr, a->pmu->type, 0);
	fd = ops->event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		a->pause = PROBE_PAUSE_UNKNOWN;
		a->err = fd;
		return;
	}
	ops->event_close(fd);

	*perf_attr_aux_action(&attr) = AUXTRIG_AUX_START_PAUSED;
	fd = ops->event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		ops->event_close(fd);
		a->pause = PROBE_PAUSE_YES;
		a->err = 0;
		return;
	}
	a->err = fd;
	a->pause = fd == -EOPNOTSUPP ? PROBE_PAUSE_NO_PMU :
		   fd == -EINVAL     ? PROBE_PAUSE_NO_KERNEL :
				       PROBE_PAUSE_UNKNOWN;
}

static volatile int bp_target;

/* A write watchpoint on our own variable: does it count our writes? */
static void probe__hw_breakpoint(struct probe_report *r, const struct probe_ops *ops)
{
	struct perf_event_attr attr;
	__u64 count = 0;
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.size = PERF_ATTR_SIZE_VER7;
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (unsigned long)&bp_target;
	attr.bp_len = HW_BREAKPOINT_LEN_4;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	fd = ops->event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		r->bp_opened = false;
		r->bp_err = fd;
		return;
	}
	r->bp_opened = true;
	err = ops->event_ioctl(fd, PERF_EVENT_IOC_RESET);
	if (!err)
		err = ops->event_ioctl(fd, PERF_EVENT_IOC_ENABLE);
	for (int i = 0; i < PROBE_BP_WRITES; i++)
		bp_target = i + 1;
	if (!err)
		err = ops->event_ioctl(fd, PERF_EVENT_IOC_DISABLE);
	if (!err)
		err = ops->event_read(fd, &count);
	r->bp_err = err;
	r->bp_hits = err ? 0 : count;
	ops->event_close(fd);
}

bool probe__hw_breakpoint_fires(const struct probe_ops *ops)
{
	struct probe_report r = {};

	probe__hw_breakpoint(&r, ops);
	return r.bp_opened && !r.bp_err && r.bp_hits;
}

enum probe_pause probe__aux_pmu_pause(const struct pmu *pmu, const struct probe_ops *ops, int *err)
{
	struct probe_aux_pmu a = { .pmu = pmu };

	probe__aux_pause(&a, ops);
	if (err)
		*err = a.err;
	return a.pause;
}

bool probe__bpf_fires(const struct probe_ops *ops, enum probe_bpf_kind kind)
{
	struct probe_bpf_result res;

	ops->bpf_try(kind, &res);
	return res.attached && res.hits;
}

bool probe_report__aux_switched_off(const struct probe_report *r)
{
	return r->caps_off & 1u << CAPS_AUX_PMU && !strcmp(r->sysfs_root, PMU_SYSFS_ROOT_DEFAULT);
}

int probe_report__collect(struct probe_report *r, const struct probe_opts *opts,
			  const struct probe_ops *ops)
{
	struct utsname u;
	size_t nr_aux;
	int err;

	memset(r, 0, sizeof(*r));
	if (!uname(&u)) {
		snprintf(r->release, sizeof(r->release), "%s", u.release);
		snprintf(r->machine, sizeof(r->machine), "%s", u.machine);
	}
	snprintf(r->sysfs_root, sizeof(r->sysfs_root), "%s",
		 opts->sysfs_root ? opts->sysfs_root : PMU_SYSFS_ROOT_DEFAULT);
	r->caps_off = opts->caps_off & CAPS_ALL;
	r->btf = !(r->caps_off & 1u << CAPS_BTF) && ops->btf && ops->btf();
	probe__tracefs(r);
	for (int k = 0; k < PROBE_BPF_NR; k++) {
		if ((k == PROBE_BPF_KPROBE && r->caps_off & 1u << CAPS_KPROBE) ||
		    (k == PROBE_BPF_FENTRY && r->caps_off & 1u << CAPS_FENTRY))
			continue; /* reported missing by the switch, not tried */
		ops->bpf_try(k, &r->bpf[k]);
	}
	ops->privileges(r);
	probe__aux_action(r, ops);
	if (!(r->caps_off & 1u << CAPS_HW_BREAKPOINT))
		probe__hw_breakpoint(r, ops);
	r->cgroup2_err = 1;
	if (!(r->caps_off & 1u << CAPS_CGROUP2) && ops->cgroup2_mount)
		r->cgroup2_err = ops->cgroup2_mount(r->cgroup2, sizeof(r->cgroup2));

	err = pmu__scan(r->sysfs_root, &r->pmus);
	if (err == -ENOMEM)
		return err;
	if (err) {
		pr_warn("cannot read PMUs under %s: %s\n", r->sysfs_root, strerror(-err));
		return 0;
	}
	nr_aux = pmu_set__nr_aux(r->pmus);
	r->aux = calloc(nr_aux ? nr_aux : 1, sizeof(*r->aux));
	if (!r->aux)
		return -ENOMEM;
	for (size_t i = 0; i < r->pmus->nr; i++) {
		struct probe_aux_pmu *a = &r->aux[r->nr_aux];

		if (!r->pmus->pmus[i]->aux || probe_report__aux_switched_off(r))
			continue;
		a->pmu = r->pmus->pmus[i];
		probe__aux_pause(a, ops);
		r->nr_aux++;
	}
	return 0;
}

void probe_report__exit(struct probe_report *r)
{
	pmu_set__delete(r->pmus);
	free(r->aux);
	r->pmus = NULL;
	r->aux = NULL;
	r->nr_aux = 0;
}

