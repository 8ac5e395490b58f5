// SPDX-License-Identifier: BSD-2-Clause
/*
 * One AUX recording session: per CPU (or per thread) an AUX-led group, the
 * leader's data ring and AUX area, read into perf.data. Order of calls in
 * aux_session.h. Here: the session built, opened, started, its threads
 * followed, stopped. What it writes into the file's header:
 * aux_session_info.c; gated from userspace: aux_session_gate.c; its rings
 * read: aux_session_drain.c; snapshots: aux_session_snapshot.c; the state
 * they share: include/auxtrig/record/internal/aux_session.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/record/attr_print.h"
#include "auxtrig/record/internal/aux_session.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"

/* ---- describing ---------------------------------------------------------- */

static bool is_pow2(size_t n)
{
	return n && !(n & (n - 1));
}

static int aux_session__check_sizes(const struct aux_session *s)
{
	const struct aux_session_opts *o = &s->o;
	size_t page = sysconf(_SC_PAGESIZE), aux = o->aux_pages * page, min;

	if (!is_pow2(o->data_pages)) {
		pr_err("%s: data ring of %zu pages: must be a power of 2 (-m)\n", s->ev.name, o->data_pages);
		return -EINVAL;
	}
	if (!is_pow2(o->aux_pages)) {
		pr_err("%s: AUX area of %zu pages: must be a power of 2 (-m ,N)\n", s->ev.name, o->aux_pages);
		return -EINVAL;
	}
	/* perf 6.1 intel_pt_recording_options() */
	if (s->ev.kind == AUX_PMU_INTEL_PT) {
		min = o->snapshot ? 4096 : 8192;
		if (aux < min) {
			pr_err("Invalid mmap size for Intel Processor Trace: must be at least %zuKiB and a power of 2\n",
			       min / 1024);
			return -EINVAL;
		}
	}
	if (o->snapshot && o->snapshot_size > aux) {
		pr_err("Snapshot size %zu must not be greater than AUX area tracing mmap size %zu\n",
		       o->snapshot_size, aux);
		return -EINVAL;
	}
	return 0;
}

static enum aux_group_mode aux_session__mode(const struct aux_session_opts *o)
{
	bool resume = false, pause = false;

	if (o->gate_from_userspace)
		return AUX_GROUP_WINDOW; /* windows, even with no point of their own (-w prog) */
	for (size_t i = 0; i < o->nr_triggers; i++) {
		resume |= o->triggers[i].action == AUXTRIG_AUX_RESUME;
		pause |= o->triggers[i].action == AUXTRIG_AUX_PAUSE;
	}
	if (resume)
		return AUX_GROUP_WINDOW;
	return pause ? AUX_GROUP_FREEZE : AUX_GROUP_SNAPSHOT;
}

/*
 * The kernel's @name PMU ("uprobe", "kprobe") that a probe window's trigger
 * opens its event on; NULL, said why, if the kernel has none.
 */
static const struct pmu *probe_pmu(const struct aux_session *s, const char *name, const char *config)
{
	const struct pmu *pmu = pmu_set__find(s->pmus, name);

	if (!pmu)
		pr_err("%s: a %s window needs the kernel's \"%s\" PMU (%s), and %s/bus/event_source/devices has none\n",
		       s->ev.name, name, name, config, s->o.sysfs_root ?: "/sys");
	return pmu;
}

static int aux_session__build(struct aux_session *s, struct aux_session_cpu *c, int cpu, bool warn)
{
	enum aux_group_mode mode = aux_session__mode(&s->o);
	int err;

	err = aux_group__init(&c->g, &s->ev, mode, cpu);
	for (size_t i = 0; !err && i < s->o.nr_triggers; i++) {
		const struct aux_session_trigger *t = &s->o.triggers[i];

		if (t->kind == AUX_TRIGGER_UPROBE || t->kind == AUX_TRIGGER_KPROBE) {
			bool up = t->kind == AUX_TRIGGER_UPROBE;
			const struct pmu *pmu = probe_pmu(s, up ? "uprobe" : "kprobe",
							   up ? "CONFIG_UPROBE_EVENTS" : "CONFIG_KPROBE_EVENTS");

			if (!pmu)
				return -ENOENT;
			err = (up ? aux_group__add_uprobe : aux_group__add_kprobe)(&c->g, pmu, t->path, t->offset,
										   t->retprobe, t->action);
		} else {
			err = aux_group__add_tracepoint(&c->g, t->name, t->id, t->action);
		}
		if (err == -E2BIG)
			pr_err("%s: more than %d triggers\n", s->ev.name, AUX_GROUP_MAX_MEMBERS);
	}
	if (err)
		return err;
	aux_group__add_tracking(&c->g);
	/* One warning for the session, not one per CPU. */
	if (s->o.gate_from_userspace && mode != AUX_GROUP_SNAPSHOT) {
		aux_group__fallback(&c->g); /* the caller says why */
		s->gated = true;
	} else if (warn)
		s->gated = aux_group__adapt(&c->g, &s->caps);
	else if (mode != AUX_GROUP_SNAPSHOT && !(s->caps.kernel_aux_action && s->caps.pmu_aux_pause))
		aux_group__fallback(&c->g);
	return aux_group__validate(&c->g, &s->caps);
}

/* A new slot for CPU @cpu (per CPU, @tid the session's pid) or thread @tid (cpu -1). */
static struct aux_session_cpu *aux_session__slot_new(struct aux_session *s, int cpu, pid_t tid)
{
	struct aux_session_cpu *c, **tmp;

	if (s->nr_slots == s->cap_slots) {
		size_t cap = s->cap_slots ? 2 * s->cap_slots : 8;

		tmp = realloc(s->cpus, cap * sizeof(*tmp));
		if (!tmp)
			return NULL;
		s->cpus = tmp;
		s->cap_slots = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->s = s;
	c->tid = tid;
	c->leader_fd = c->tracking_fd = -1;
	for (size_t j = 0; j < AUX_GROUP_MAX_MEMBERS; j++)
		c->member_fds[j] = c->member_links[j] = -1;
	aux_group__init(&c->g, &s->ev, aux_session__mode(&s->o), cpu); /* the CPU, for messages until built */
	s->cpus[s->nr_slots++] = c;
	return c;
}

int aux_session__new(struct aux_session **out, const struct aux_session_opts *o)
{
	const pid_t *tids = o->nr_tids ? o->tids : &o->pid;
	size_t nr_tids = o->nr_tids ? o->nr_tids : 1;
	struct aux_session_cpu *c;
	struct aux_session *s;
	int err;

	*out = NULL;
	if (!o->event || !o->pmus || !o->nr_cpus || !o->cpus) {
		pr_err("an AUX session needs an event and at least one CPU\n");
		return -EINVAL;
	}
	for (size_t i = 0; i < o->nr_cpus; i++) {
		if (o->cpus[i] < 0 && ((o->pid < 0 && !o->nr_tids) || o->nr_cpus > 1)) {
			pr_err("per-thread AUX recording (cpu -1) needs a target process (-p) and no other CPU\n");
			return -EINVAL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->o.tids = NULL; /* borrowed: the slots keep them */
	s->o.nr_tids = 0;
	s->per_thread = o->cpus[0] < 0;
	s->cpu_list = calloc(o->nr_cpus, sizeof(*s->cpu_list));
	s->triggers = calloc(o->nr_triggers + 1, sizeof(*s->triggers));
	s->scratch = malloc(1 << 16);
	if (!s->cpu_list || !s->triggers || !s->scratch) {
		err = -ENOMEM;
		goto err;
	}
	memcpy(s->cpu_list, o->cpus, o->nr_cpus * sizeof(*s->cpu_list));
	if (o->nr_triggers)
		memcpy(s->triggers, o->triggers, o->nr_triggers * sizeof(*s->triggers));
	/* uprobe (kprobe) events point config1 at the path (function) until they are opened: keep our own */
	s->paths = calloc(o->nr_triggers + 1, sizeof(*s->paths));
	if (!s->paths) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < o->nr_triggers; i++) {
		if (s->triggers[i].kind != AUX_TRIGGER_UPROBE && s->triggers[i].kind != AUX_TRIGGER_KPROBE)
			continue;
		s->paths[i] = strdup(s->triggers[i].path ?: "");
		if (!s->paths[i]) {
			err = -ENOMEM;
			goto err;
		}
		s->triggers[i].path = s->paths[i];
	}
	s->o.cpus = s->cpu_list;
	s->o.triggers = s->triggers;

	s->pmus = o->pmus;
	s->ev = *o->event;
	s->o.event = &s->ev;
	s->pmu_ops = aux_pmu__find(s->ev.pmu->name);
	if (!s->pmu_ops) {
		pr_err("%s: auxtrig cannot read %s's AUX area yet (supported: intel_pt, cs_etm, arm_spe)\n",
		       s->ev.name, s->ev.pmu->name);
		err = -EOPNOTSUPP;
		goto err;
	}
	err = aux_session__check_sizes(s);
	if (err)
		goto err;
	aux_group_caps__from_probe(&s->caps, o->pause_support);
	for (size_t i = 0; i < (s->per_thread ? nr_tids : o->nr_cpus); i++) {
		c = s->per_thread ? aux_session__slot_new(s, -1, tids[i]) : aux_session__slot_new(s, o->cpus[i], o->pid);
		if (!c) {
			err = -ENOMEM;
			goto err;
		}
		err = aux_session__build(s, c, c->g.cpu, i == 0);
		if (err)
			goto err;
	}
	*out = s;
	return 0;

err:
	aux_session__delete(s);
	return err;
}

/* Does trigger @i's member get its veto program? On the in-kernel path only. */
static bool aux_session__vetoed(const struct aux_session *s, const struct aux_session_cpu *c, size_t i)
{
	return i < s->o.nr_triggers && s->triggers[i].veto && !c->g.gate_by_ioctl;
}

int aux_session__print(const struct aux_session *s, FILE *f)
{
	int n = 0;

	for (size_t i = 0; i < s->nr_slots; i++) {
		const struct aux_session_cpu *c = s->cpus[i];

		n += attr_print__group(f, &c->g, ATTR_PRINT_PATHS);
		for (size_t j = 0; j < c->g.nr_members; j++) {
			const struct aux_session_trigger *t = &s->triggers[j];

			if (!aux_session__vetoed(s, c, j))
				continue;
			n += fprintf(f, "condition on %s: BPF program %s, %s --where '%s' holds\n", c->g.members[j].name,
				     t->retprobe ? "gate_aux_veto_exit" : "gate_aux_veto_enter",
				     t->retprobe ? "pauses only at the return of an outermost call where"
						 : "resumes only at an outermost call where",
				     t->veto);
		}
	}
	return n;
}

bool aux_session__gated(const struct aux_session *s)
{
	return s->gated;
}

bool aux_session__per_thread(const struct aux_session *s)
{
	return s->per_thread;
}

/* ---- opening ------------------------------------------------------------- */

/* "CPU 3" or "thread 1234", for messages. */
const char *aux_session__where(const struct aux_session_cpu *c, char *buf, size_t size)
{
	if (c->g.cpu >= 0)
		snprintf(buf, size, "CPU %d", c->g.cpu);
	else
		snprintf(buf, size, "thread %d", c->tid);
	return buf;
}

/* Gated: is the userspace gate of @c's trace open (per thread its own, per CPU the session's)? */
bool aux_session__gate_is_open(const struct aux_session *s, const struct aux_session_cpu *c)
{
	return s->per_thread ? c->gate_open : s->gate_open;
}

static int aux_session__ring_ctl(struct aux_ring *r, bool enable, void *arg)
{
	struct aux_session_cpu *c = arg;
	struct aux_session *s = c->s;

	/* a snapshot restarts the trace only where it ran: not through a closed userspace gate */
	if (enable && s->gated && !aux_session__gate_is_open(s, c))
		return 0;
	return perf_sys__enable(&s->sys, r->fd, enable);
}

/* The PMU type of the fixture we parsed against must be this machine's. */
static int aux_session__check_kernel_pmu(const struct aux_session *s)
{
	struct pmu *pmu;
	int err;

	err = pmu__read(NULL, s->ev.pmu->name, &pmu);
	if (err == -ENOENT) {
		pr_err("cannot open %s: no such PMU on this machine (try: auxtrig probe)\n", s->ev.pmu->name);
		return -ENOENT;
	}
	if (err) {
		pr_err("cannot open %s: reading /sys/bus/event_source/devices/%s: %s\n", s->ev.pmu->name,
		       s->ev.pmu->name, strerror(-err));
		return err;
	}
	if (pmu->type != s->ev.attr.type) {
		pr_err("cannot open %s: it has type %u here, but %u under %s (describe this machine's PMUs, not another's)\n",
		       s->ev.pmu->name, pmu->type, s->ev.attr.type, s->o.sysfs_root);
		err = -ENODEV;
	}
	pmu__delete(pmu);
	return err;
}

static int aux_session__open_one(struct aux_session *s, struct aux_session_cpu *c, struct aux_group_event *e,
				 int group_fd, int *fd)
{
	pid_t pid = s->per_thread ? c->tid : s->o.pid;
	char where[32];
	int err;

	err = perf_sys__event_open(&s->sys, &e->attr, pid, c->g.cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	if (err >= 0) {
		*fd = err;
		return 0;
	}
	aux_session__where(c, where, sizeof(where));
	switch (err) {
	case -ESRCH:
		/* a thread that exited meanwhile: the caller decides */
		pr_debug("cannot open %s for %s: it is gone\n", e->name, where);
		break;
	case -ENOENT:
	case -ENODEV:
		pr_err("cannot open %s on %s: no such PMU or CPU on this machine (try: auxtrig probe)\n", e->name,
		       where);
		break;
	case -EACCES:
	case -EPERM:
		pr_err("cannot open %s on %s: %s (needs CAP_PERFMON, or kernel.perf_event_paranoid <= %d)\n",
		       e->name, where, strerror(-err), s->o.pid < 0 && !s->per_thread ? 0 : 1);
		break;
	case -EOPNOTSUPP:
		pr_err("cannot open %s on %s: the kernel refused a feature of it (%s); try: auxtrig probe\n",
		       e->name, where, strerror(-err));
		break;
	default:
		pr_err("cannot open %s on %s: %s\n", e->name, where, strerror(-err));
	}
	return err;
}

static void aux_session__mlock_hint(const struct aux_session *s, int err)
{
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned long long need = (unsigned long long)(s->o.data_pages + 1 + s->o.aux_pages) * page *
				  s->nr_slots / 1024;
	long kb = -1;
	FILE *f;

	if (err != -EPERM) {
		pr_err("cannot map the rings of %s: %s\n", s->ev.name, strerror(-err));
		return;
	}
	f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "r");
	if (f) {
		if (fscanf(f, "%ld", &kb) != 1)
			kb = -1;
		fclose(f);
	}
	pr_err("cannot map the rings of %s: over the locked-memory limit: %llu KiB needed, kernel.perf_event_mlock_kb is %ld "
	       "(raise it, or RLIMIT_MEMLOCK, or use smaller -m)\n", s->ev.name, need, kb);
}

/*
 * The attach cookie of a --where program (bpf/gate/aux_veto.bpf.c gate_aux_veto_*):
 * the window, and whose member it is: a CPU's (CPU + 1) or a thread's, so
 * that of the programs a hit runs (every member's on that function, of every
 * CPU or thread of the process) only that member's acts.
 */
static __u64 aux_session__veto_cookie(const struct aux_session_cpu *c, __u32 window)
{
	__u32 whose = c->g.cpu >= 0 ? (__u32)(c->g.cpu + 1) : GATE_AUX_VETO_THREAD | (__u32)c->tid;

	return ((__u64)whose << 32) | window;
}

static int aux_session__open_slot(struct aux_session *s, struct aux_session_cpu *c, size_t idx)
{
	struct aux_ring_config rc = {
		.ops = s->pmu_ops,
		.overwrite = s->o.snapshot,
		.snapshot_size = s->o.snapshot_size,
		.idx = idx,
		.cpu = c->g.cpu,
		.tid = s->per_thread ? c->tid : s->o.pid,
		.per_cpu = c->g.cpu >= 0,
		.sys = &s->sys,
		.enable = aux_session__ring_ctl,
		.enable_arg = c,
	};
	char where[32];
	int err;

	aux_session__where(c, where, sizeof(where));
	err = aux_session__open_one(s, c, &c->g.leader, -1, &c->leader_fd);
	if (err)
		goto out;
	for (size_t i = 0; i < c->g.nr_members; i++) {
		err = aux_session__open_one(s, c, &c->g.members[i], c->g.gate_by_ioctl ? -1 : c->leader_fd,
					    &c->member_fds[i]);
		if (err)
			goto out;
		if (aux_session__vetoed(s, c, i)) {
			/* before the leader is enabled: the member never acts unvetoed */
			const struct aux_session_trigger *t = &s->triggers[i];

			err = t->veto_prog_fd > 0 ? perf_sys__attach_bpf(&s->sys, c->member_fds[i], t->veto_prog_fd,
									 aux_session__veto_cookie(c, t->window))
						  : -EBADF;
			if (err < 0) {
				pr_err("cannot attach the --where program to %s on %s: %s\n", c->g.members[i].name, where,
				       strerror(-err));
				goto out;
			}
			c->member_links[i] = err;
			err = 0;
		}
	}
	if (c->g.has_tracking) {
		err = aux_session__open_one(s, c, &c->g.tracking, -1, &c->tracking_fd);
		if (err)
			goto out;
	}
	err = perf_sys__id(&s->sys, c->leader_fd, &c->leader_id);
	if (!err && c->tracking_fd >= 0)
		err = perf_sys__id(&s->sys, c->tracking_fd, &c->tracking_id);
	if (err) {
		pr_err("cannot read the event ids on %s: %s\n", where, strerror(-err));
		goto out;
	}
	c->file_leader_id = s->attrs_added ? s->file_leader_id : c->leader_id;
	c->file_tracking_id = s->attrs_added ? s->file_tracking_id : c->tracking_id;
	err = data_ring__mmap(&c->data, &s->sys, c->leader_fd, c->g.cpu, s->o.data_pages, 0);
	if (err) {
		aux_session__mlock_hint(s, err);
		goto out;
	}
	c->data_mapped = true;
	err = aux_ring__mmap(&c->aux, c->leader_fd, data_ring__user_page(&c->data), s->o.aux_pages, &rc);
	if (err) {
		if (err == -ENOMEM && s->o.snapshot)
			pr_err("cannot map %zu AUX pages of %s in snapshot mode: no contiguous memory for a PMU without "
			       "scatter-gather; use a smaller AUX buffer\n", s->o.aux_pages, s->ev.name);
		else
			aux_session__mlock_hint(s, err);
		goto out;
	}
	c->aux_mapped = true;
	/* Sideband into the leader's ring: one ring per CPU (or thread) holds everything (after the mmap, as perf). */
	if (c->tracking_fd >= 0) {
		err = perf_sys__set_output(&s->sys, c->tracking_fd, c->leader_fd);
		if (err)
			pr_err("cannot redirect the tracking event into %s's ring on %s: %s\n", s->ev.name, where,
			       strerror(-err));
	}
out:
	if (err)
		aux_session__close_slot(s, c);
	return err;
}

void aux_session__close_slot(struct aux_session *s, struct aux_session_cpu *c)
{
	if (c->aux_mapped)
		aux_ring__munmap(&c->aux);
	if (c->data_mapped)
		data_ring__munmap(&c->data);
	c->aux_mapped = c->data_mapped = false;
	perf_sys__close(&s->sys, c->tracking_fd);
	for (size_t j = 0; j < AUX_GROUP_MAX_MEMBERS; j++) {
		perf_sys__close(&s->sys, c->member_links[j]); /* detaches the program */
		c->member_links[j] = -1;
	}
	for (size_t j = 0; j < AUX_GROUP_MAX_MEMBERS; j++)
		perf_sys__close(&s->sys, c->member_fds[j]);
	perf_sys__close(&s->sys, c->leader_fd);
	c->tracking_fd = c->leader_fd = -1;
	for (size_t j = 0; j < AUX_GROUP_MAX_MEMBERS; j++)
		c->member_fds[j] = -1;
	c->closed = true;
}

static void aux_session__close(struct aux_session *s)
{
	for (size_t i = 0; s->cpus && i < s->nr_slots; i++)
		aux_session__close_slot(s, s->cpus[i]);
	s->opened = false;
}

int aux_session__open(struct aux_session *s, const struct perf_sys *sys)
{
	size_t opened = 0;
	int err = 0;

	if (s->opened)
		return -EBUSY;
	s->sys = sys ? *sys : perf_sys__kernel;
	if (s->sys.kernel) {
		err = aux_session__check_kernel_pmu(s);
		if (err)
			return err;
	}
	for (size_t i = 0; i < s->nr_slots; i++) {
		s->cpus[i]->closed = false;
		err = aux_session__open_slot(s, s->cpus[i], i);
		/* per thread, a thread that exited since it was listed is left out */
		if (err == -ESRCH && s->per_thread)
			continue;
		if (err)
			break;
		opened++;
	}
	if (!err && !opened) {
		pr_err("cannot open %s: every thread of the target is gone\n", s->ev.name);
		err = -ESRCH;
	}
	if (err) {
		aux_session__close(s);
		return err;
	}
	s->opened = true;
	return 0;
}

/* The first slot that is open (a thread's may be gone), or NULL. */
struct aux_session_cpu *aux_session__first_open(const struct aux_session *s)
{
	for (size_t i = 0; i < s->nr_slots; i++)
		if (!s->cpus[i]->closed)
			return s->cpus[i];
	return NULL;
}

/* ---- running ------------------------------------------------------------- */

int aux_session__ctl_slot(struct aux_session *s, struct aux_session_cpu *c, bool enable)
{
	char where[32];
	int err;

	err = perf_sys__enable(&s->sys, c->leader_fd, enable);
	if (err)
		pr_err("cannot %s %s on %s: %s\n", enable ? "enable" : "disable", s->ev.name,
		       aux_session__where(c, where, sizeof(where)), strerror(-err));
	return err;
}

int aux_session__ctl_all(struct aux_session *s, bool enable)
{
	int err, ret = 0;

	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		err = aux_session__ctl_slot(s, s->cpus[i], enable);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

static int aux_session__start_slot(struct aux_session *s, struct aux_session_cpu *c)
{
	char where[32];
	int err;

	if (c->tracking_fd >= 0) {
		err = perf_sys__enable(&s->sys, c->tracking_fd, true);
		if (err) {
			pr_err("cannot enable the tracking event on %s: %s\n", aux_session__where(c, where, sizeof(where)),
			       strerror(-err));
			return err;
		}
	}
	return s->gated ? 0 : aux_session__ctl_slot(s, c, true);
}

int aux_session__start(struct aux_session *s)
{
	int err;

	if (!s->opened)
		return -EINVAL;
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		err = aux_session__start_slot(s, s->cpus[i]);
		if (err)
			return err;
	}
	s->started = true;
	return 0;
}

/* The open slot of thread @tid, or NULL. */
struct aux_session_cpu *aux_session__thread_slot(const struct aux_session *s, pid_t tid)
{
	for (size_t i = 0; i < s->nr_slots; i++)
		if (s->cpus[i]->tid == tid && !s->cpus[i]->closed && !s->cpus[i]->exited)
			return s->cpus[i];
	return NULL;
}

size_t aux_session__nr_fds(const struct aux_session *s)
{
	return s->opened ? s->nr_slots : 0;
}

int aux_session__fd(const struct aux_session *s, size_t i)
{
	if (!s->opened || i >= s->nr_slots || s->cpus[i]->closed)
		return -1;
	return perf_sys__poll_fd(&s->sys, s->cpus[i]->leader_fd);
}

pid_t aux_session__tid(const struct aux_session *s, size_t i)
{
	return i < s->nr_slots && s->per_thread ? s->cpus[i]->tid : -1;
}

int aux_session__add_thread(struct aux_session *s, pid_t tid)
{
	struct aux_session_cpu *c;
	size_t idx = s->nr_slots;
	int err;

	if (!s->per_thread || !s->opened)
		return -EINVAL;
	if (aux_session__thread_slot(s, tid))
		return -EEXIST;
	c = aux_session__slot_new(s, -1, tid);
	if (!c)
		return -ENOMEM;
	err = aux_session__build(s, c, -1, false);
	if (!err)
		err = aux_session__open_slot(s, c, idx);
	if (!err && s->started)
		err = aux_session__start_slot(s, c);
	if (err) {
		aux_session__close_slot(s, c); /* its slot stays, closed: the idx is not reused */
		s->threads_failed++;
		return err;
	}
	s->threads_added++;
	return (int)idx;
}

/*
 * Snapshot mode, per thread: before one more exited thread's group waits for
 * the next snapshot, close the longest exited ones beyond o.max_exited; what
 * they traced is lost, and counted.
 */
static void aux_session__bound_exited(struct aux_session *s)
{
	size_t max = s->o.max_exited ? s->o.max_exited : AUX_SESSION_MAX_EXITED;

	for (;;) {
		struct aux_session_cpu *oldest = NULL;
		size_t waiting = 0;

		for (size_t i = 0; i < s->nr_slots; i++) {
			struct aux_session_cpu *c = s->cpus[i];

			if (!c->exited || c->closed)
				continue;
			waiting++;
			if (!oldest || c->exit_seq < oldest->exit_seq)
				oldest = c;
		}
		if (waiting < max || !oldest)
			return;
		aux_session__close_slot(s, oldest);
		s->stats.exited_dropped++;
	}
}

int aux_session__remove_thread(struct aux_session *s, pid_t tid, struct record_sink *k)
{
	struct aux_session_cpu *c;
	int err;

	if (!s->per_thread || !s->opened)
		return -EINVAL;
	c = aux_session__thread_slot(s, tid);
	if (!c)
		return -ENOENT;
	if (s->o.snapshot) {
		/* its trace is for the next snapshot (the exit's at the latest), which closes the group */
		aux_session__bound_exited(s);
		c->exited = true;
		c->exit_seq = ++s->exits;
		return 0;
	}
	/* its events stopped when it exited: what they published is all there is */
	err = aux_session__drain_slot(s, c, k);
	aux_session__close_slot(s, c);
	return err < 0 ? err : 0;
}

int aux_session__stop(struct aux_session *s, struct record_sink *k)
{
	int err, ret;

	if (!s->opened)
		return -EINVAL;
	s->stopping = true;
	for (size_t i = 0; i < s->nr_slots; i++)
		if (s->cpus[i]->tracking_fd >= 0)
			perf_sys__enable(&s->sys, s->cpus[i]->tracking_fd, false);
	err = aux_session__ctl_all(s, false);
	ret = aux_session__drain(s, k);
	if (ret < 0 && !err)
		err = ret;
	return err;
}

void aux_session__stats(const struct aux_session *s, struct aux_session_stats *st)
{
	*st = s->stats;
	st->threads_added = s->threads_added;
	st->threads_failed = s->threads_failed;
}

void aux_session__delete(struct aux_session *s)
{
	if (!s)
		return;
	aux_session__close(s);
	for (size_t i = 0; s->cpus && i < s->nr_slots; i++)
		free(s->cpus[i]);
	for (size_t i = 0; s->paths && i < s->o.nr_triggers; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->open_tids);
	free(s->lat);
	free(s->cpus);
	free(s->cpu_list);
	free(s->triggers);
	free(s->scratch);
	free(s);
}
