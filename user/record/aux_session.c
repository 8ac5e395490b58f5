// SPDX-License-Identifier: BSD-2-Clause
/*
 * One AUX recording session: per CPU (or per thread) an AUX-led group, the
 * leader's data ring and AUX area, read into perf.data. Order of calls in
 * aux_session.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/record/attr_print.h"
#include "auxtrig/lang/aux_event.h"
#include "auxtrig/record/aux_group.h"
#include "auxtrig/record/aux_ring.h"
#include "auxtrig/record/aux_session.h"
#include "auxtrig/record/sink.h"
#include "auxtrig/format/auxtrace_info.h"
#include "auxtrig/record/data_ring.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/sys/pmu.h"
#include "uapi/linux/perf_event_aux.h"

/*
 * One CPU's group (per CPU: @tid is the session's pid) or one thread's (per
 * thread, cpu -1). A thread's slot stays when its thread is gone (@closed),
 * so that every slot keeps its AUXTRACE idx. @file_leader_id and
 * @file_tracking_id: the ids its records carry in the file (its own, or for
 * a thread followed after the attrs were written the first slot's, as the
 * kernel gives an inherited event its parent's).
 */
struct aux_session_cpu {
	struct aux_session *s;
	struct aux_group g;
	pid_t tid;
	bool closed;
	bool exited;	/* snapshot mode: its thread exited; closed once a snapshot took its trace */
	__u64 exit_seq;	/* ...the how-manieth exit it was */
	int leader_fd;
	__u64 leader_id;
	int member_fds[AUX_GROUP_MAX_MEMBERS];
	int member_links[AUX_GROUP_MAX_MEMBERS];	/* veto programs' links, or -1 */
	int tracking_fd;
	__u64 tracking_id;
	__u64 file_leader_id, file_tracking_id;
	struct data_ring data;
	bool data_mapped;
	struct aux_ring aux;
	bool aux_mapped;
	/* per thread, gated: its window is open (its leader enabled), since when */
	bool gate_open;
	__u64 enabled_at;
};

struct aux_session {
	struct aux_session_opts o;
	int *cpu_list;
	struct aux_session_trigger *triggers;
	const struct pmu_set *pmus;	/* borrowed: what @ev was resolved against */
	struct aux_event ev;
	const struct aux_pmu_ops *pmu_ops;
	struct aux_group_caps caps;
	struct aux_session_cpu **cpus;	/* the slots: one per CPU, or one per thread */
	size_t nr_slots, cap_slots;
	__u64 exits;		/* snapshot mode, per thread: threads that exited so far */
	bool per_thread;
	struct perf_sys sys;	/* the kernel it was opened on */
	bool opened;
	bool started;
	bool attrs_added;	/* threads opened later carry the first slot's ids in the file */
	__u64 file_leader_id, file_tracking_id;
	unsigned char *scratch;	/* a record whose ids are rewritten */
	bool gated;
	bool gate_open;		/* gated per CPU: the recorder enabled the AUX events */
	bool stopping;
	bool no_flush;		/* snapshots stop the trace: the kernel refused to flush it running */
	struct aux_session_stats stats;
	char **paths;		/* uprobe triggers' binaries, owned */
	/* fallback gating: threads with a window open, edge counters, latencies */
	__u32 *open_tids;
	size_t nr_open, cap_open;
	__u64 enabled_at;	/* CLOCK_MONOTONIC when the gate last opened */
	struct aux_session_gate_stats gs;
	__u64 *lat;
	size_t nr_lat, cap_lat;
	__u64 threads_added, threads_failed;
};

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
static const char *aux_session__where(const struct aux_session_cpu *c, char *buf, size_t size)
{
	if (c->g.cpu >= 0)
		snprintf(buf, size, "CPU %d", c->g.cpu);
	else
		snprintf(buf, size, "thread %d", c->tid);
	return buf;
}

/* Gated: is the userspace gate of @c's trace open (per thread its own, per CPU the session's)? */
static bool aux_session__gate_is_open(const struct aux_session *s, const struct aux_session_cpu *c)
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

static void aux_session__close_slot(struct aux_session *s, struct aux_session_cpu *c);

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

static void aux_session__close_slot(struct aux_session *s, struct aux_session_cpu *c)
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
static struct aux_session_cpu *aux_session__first_open(const struct aux_session *s)
{
	for (size_t i = 0; i < s->nr_slots; i++)
		if (!s->cpus[i]->closed)
			return s->cpus[i];
	return NULL;
}

/* ---- the file ------------------------------------------------------------ */

int aux_session__add_attrs(struct aux_session *s, struct pdata_writer *w)
{
	const struct aux_session_cpu *c0 = aux_session__first_open(s);
	size_t n = s->nr_slots, nl = 0, nt = 0;
	__u64 *ids = calloc(n, sizeof(*ids)), *tids = calloc(n, sizeof(*tids));
	int err = -ENOMEM;

	if (!ids || !tids)
		goto out;
	err = -EINVAL;
	if (!c0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (s->cpus[i]->closed)
			continue;
		ids[nl++] = s->cpus[i]->leader_id;
		if (s->cpus[i]->tracking_fd >= 0)
			tids[nt++] = s->cpus[i]->tracking_id;
	}
	err = pdata_writer__add_attr(w, &c0->g.leader.attr, s->ev.name, ids, nl);
	if (!err && nt)
		err = pdata_writer__add_attr(w, &c0->g.tracking.attr, c0->g.tracking.name, tids, nt);
	if (!err) {
		s->attrs_added = true;
		s->file_leader_id = c0->leader_id;
		s->file_tracking_id = c0->tracking_id;
	}
out:
	free(ids);
	free(tids);
	return err;
}

/* perf_event_mmap_page's TSC conversion under its seqlock (perf_read_tsc_conversion()). */
static void aux_session__time_conv(const struct perf_event_mmap_page *pc, struct auxtrace_time_conv *tc)
{
	__u32 seq;

	for (int tries = 0; tries < 20000; tries++) {
		if (tries && !(tries % 100)) {	/* as synth__time_conv(): let a held writer finish */
			struct timespec ms = { .tv_nsec = 1000000 };

			nanosleep(&ms, NULL);
		}
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		tc->time_shift = pc->time_shift;
		tc->time_mult = pc->time_mult;
		tc->time_zero = pc->time_zero;
		tc->cap_user_time_zero = pc->cap_user_time_zero;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == seq && !(seq & 1))
			return;
	}
}

/*
 * INTEL_PT_HAVE_SCHED_SWITCH: how perf 6.1 (util/intel-pt.c) learns which
 * thread a CPU's trace belongs to, from the switch records the tracking event
 * makes. 3: the CPU-wide switch-out records (PERF_RECORD_SWITCH_CPU_WIDE) that
 * only a CPU-wide event (pid -1) makes; any other switch record stops the
 * decoder ("Expecting CPU-wide context switch event"). 2: a per-task event's
 * own switch records (PERF_RECORD_SWITCH): each switch-in names the thread now
 * on the CPU (perf record -p without -a). 0: per-thread buffers, whose
 * AUXTRACE records name their thread: with any other value perf asks the
 * queue's CPU for its current thread instead, and a per-thread queue has none.
 * (Per thread the tracking event still records its switches: perf learns from
 * them on which CPU the thread ran.)
 */
static int aux_session__switch_mode(const struct aux_session *s, const struct aux_session_cpu *c0)
{
	if (!c0->g.has_tracking || !c0->g.tracking.attr.context_switch || s->per_thread)
		return 0;
	return s->o.pid < 0 ? 3 : 2;
}

/*
 * CoreSight: one block of ETM registers per CPU whose trace the file holds.
 * A thread's event (per thread) traces it on whichever CPU it runs, and the
 * decoder finds each CPU's trace ID in these blocks: every CPU with an ETM,
 * as perf's cs_etm_info_fill() describes every online CPU when the event's
 * CPU map is the per-thread one. Per CPU, the session's CPUs.
 */
static int aux_session__cs_etm_info(const struct aux_session *s, struct pdata_record_auxtrace_info **rec,
				    size_t *len)
{
	const struct pmu *pmu = s->ev.pmu;
	int *cpus;
	int err;

	if (!s->per_thread)
		return auxtrace_info__cs_etm(pmu, &s->ev.attr, s->o.cpus, s->o.nr_cpus, s->o.snapshot, rec, len);
	if (!pmu->nr_etm_cpus) {
		pr_err("%s: no cpuN/ under %s: no CPU has an ETM perf could trace a thread with\n", s->ev.name,
		       pmu->name);
		return -ENOENT;
	}
	cpus = calloc(pmu->nr_etm_cpus, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (size_t i = 0; i < pmu->nr_etm_cpus; i++)
		cpus[i] = pmu->etm_cpus[i].cpu;
	err = auxtrace_info__cs_etm(pmu, &s->ev.attr, cpus, pmu->nr_etm_cpus, s->o.snapshot, rec, len);
	free(cpus);
	return err;
}

int aux_session__write_info(struct aux_session *s, struct pdata_writer *w)
{
	struct pdata_record_auxtrace_info *rec = NULL;
	const struct aux_session_cpu *c0 = aux_session__first_open(s);
	size_t len = 0;
	int err;

	if (!s->opened || !c0)
		return -EINVAL;
	switch (s->ev.kind) {
	case AUX_PMU_INTEL_PT: {
		struct auxtrace_info_pt_opts po = {
			.have_sched_switch = aux_session__switch_mode(s, c0),
			.snapshot = s->o.snapshot,
			.per_cpu_mmaps = !s->per_thread,
		};

		aux_session__time_conv(data_ring__user_page(&c0->data), &po.time);
		auxtrace_info__host_tsc_ctc(&po.tsc_ctc_n, &po.tsc_ctc_d);
		auxtrace_info__max_nonturbo_ratio(s->o.sysfs_root, &po.max_nonturbo_ratio);
		err = auxtrace_info__intel_pt(s->ev.pmu, &s->ev.attr, &po, &rec, &len);
		break;
	}
	case AUX_PMU_CS_ETM:
		err = aux_session__cs_etm_info(s, &rec, &len);
		break;
	case AUX_PMU_ARM_SPE:
		err = auxtrace_info__arm_spe(s->ev.pmu, !s->per_thread, &rec, &len);
		break;
	default:
		err = -EOPNOTSUPP;
	}
	if (err) {
		pr_err("%s: cannot describe the trace for perf (AUXTRACE_INFO): %s\n", s->ev.name, strerror(-err));
		return err;
	}
	if (s->pmu_ops->info_fill)
		err = s->pmu_ops->info_fill(&c0->aux, rec->priv, (len - sizeof(*rec)) / sizeof(__u64));
	if (!err)
		err = pdata_writer__write(w, rec, len);
	free(rec);
	return err;
}

/* ---- running ------------------------------------------------------------- */

static int aux_session__ctl_slot(struct aux_session *s, struct aux_session_cpu *c, bool enable)
{
	char where[32];
	int err;

	err = perf_sys__enable(&s->sys, c->leader_fd, enable);
	if (err)
		pr_err("cannot %s %s on %s: %s\n", enable ? "enable" : "disable", s->ev.name,
		       aux_session__where(c, where, sizeof(where)), strerror(-err));
	return err;
}

static int aux_session__ctl_all(struct aux_session *s, bool enable)
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

/* The userspace gate of every CPU's trace @open or not, and the trace with it. */
static int aux_session__gate(struct aux_session *s, bool open)
{
	if (!s->opened)
		return -EINVAL;
	s->gate_open = open;
	for (size_t i = 0; i < s->nr_slots; i++)
		s->cpus[i]->gate_open = open;
	return aux_session__ctl_all(s, open);
}

int aux_session__enable(struct aux_session *s)
{
	return aux_session__gate(s, true);
}

int aux_session__disable(struct aux_session *s)
{
	return aux_session__gate(s, false);
}

static __u64 aux_session__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void aux_session__latency(struct aux_session *s, __u64 stamp, __u64 done)
{
	__u64 ns = done > stamp ? done - stamp : 0, *tmp;

	if (s->nr_lat == s->cap_lat && s->cap_lat < (1u << 20)) {
		tmp = realloc(s->lat, (s->cap_lat ? 2 * s->cap_lat : 256) * sizeof(*tmp));
		if (tmp) {
			s->lat = tmp;
			s->cap_lat = s->cap_lat ? 2 * s->cap_lat : 256;
		}
	}
	if (s->nr_lat < s->cap_lat)
		s->lat[s->nr_lat++] = ns;
	if (!s->gs.lat_n || ns < s->gs.lat_min)
		s->gs.lat_min = ns;
	if (ns > s->gs.lat_max)
		s->gs.lat_max = ns;
	s->gs.lat_n++;
}

/* The open slot of thread @tid, or NULL. */
static struct aux_session_cpu *aux_session__thread_slot(const struct aux_session *s, pid_t tid)
{
	for (size_t i = 0; i < s->nr_slots; i++)
		if (s->cpus[i]->tid == tid && !s->cpus[i]->closed && !s->cpus[i]->exited)
			return s->cpus[i];
	return NULL;
}

/*
 * Per thread, the gate switches each thread's own AUX event: on when its
 * first window opens, off when its last one closes, wherever it runs
 * meanwhile (the event follows the thread from CPU to CPU).
 */
static int aux_session__edge_thread(struct aux_session *s, bool open, __u32 tid, __u64 time_ns)
{
	struct aux_session_cpu *c = aux_session__thread_slot(s, (pid_t)tid);
	__u64 done;
	int err;

	if (!c) {
		s->gs.other_threads++;
		return 0;
	}
	if (open) {
		s->gs.opens++;
		if (c->gate_open) {
			s->gs.unmatched++; /* its close was lost: it stays open */
			return 0;
		}
		c->gate_open = true;
		err = aux_session__ctl_slot(s, c, true);
		done = aux_session__now();
		c->enabled_at = done;
		s->gs.enables++;
	} else {
		s->gs.closes++;
		if (!c->gate_open) {
			s->gs.unmatched++; /* its open was lost, or it opened before we were gating */
			return 0;
		}
		if (time_ns < c->enabled_at)
			s->gs.late++;
		c->gate_open = false;
		err = aux_session__ctl_slot(s, c, false);
		done = aux_session__now();
		s->gs.disables++;
	}
	aux_session__latency(s, time_ns, done);
	pr_debug("aux gate: %s tid %u at %llu: %s %s at %llu (+%llu ns)\n", open ? "open" : "close", tid,
		 (unsigned long long)time_ns, open ? "enabled" : "disabled", s->ev.name, (unsigned long long)done,
		 (unsigned long long)(done - time_ns));
	return err;
}

int aux_session__edge(struct aux_session *s, bool open, __u32 tid, __u64 time_ns)
{
	size_t i;
	__u64 done;
	int err;

	if (!s->opened || !s->gated)
		return -EINVAL;
	if (s->per_thread)
		return aux_session__edge_thread(s, open, tid, time_ns);
	/* a task's events per CPU follow that one thread (no inherit): another's windows are not its */
	if (s->o.pid > 0 && tid != (__u32)s->o.pid) {
		s->gs.other_threads++;
		return 0;
	}
	for (i = 0; i < s->nr_open && s->open_tids[i] != tid; i++)
		;
	if (open) {
		s->gs.opens++;
		if (i < s->nr_open) {
			s->gs.unmatched++; /* its close was lost: it stays open */
			return 0;
		}
		if (s->nr_open == s->cap_open) {
			size_t cap = s->cap_open ? 2 * s->cap_open : 16;
			__u32 *tmp = realloc(s->open_tids, cap * sizeof(*tmp));

			if (!tmp)
				return -ENOMEM;
			s->open_tids = tmp;
			s->cap_open = cap;
		}
		s->open_tids[s->nr_open++] = tid;
		if (s->nr_open > 1)
			return 0;
		err = aux_session__enable(s);
		done = aux_session__now();
		s->enabled_at = done;
		s->gs.enables++;
		aux_session__latency(s, time_ns, done);
		pr_debug("aux gate: open tid %u at %llu: enabled %s at %llu (+%llu ns)\n", tid,
			 (unsigned long long)time_ns, s->ev.name, (unsigned long long)done,
			 (unsigned long long)(done - time_ns));
		return err;
	}
	s->gs.closes++;
	if (i == s->nr_open) {
		s->gs.unmatched++; /* its open was lost, or it opened before we were gating */
		return 0;
	}
	s->open_tids[i] = s->open_tids[--s->nr_open];
	if (time_ns < s->enabled_at)
		s->gs.late++;
	if (s->nr_open)
		return 0;
	err = aux_session__disable(s);
	done = aux_session__now();
	s->gs.disables++;
	aux_session__latency(s, time_ns, done);
	pr_debug("aux gate: close tid %u at %llu: disabled %s at %llu (+%llu ns)\n", tid,
		 (unsigned long long)time_ns, s->ev.name, (unsigned long long)done,
		 (unsigned long long)(done - time_ns));
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

void aux_session__gate_stats(const struct aux_session *s, struct aux_session_gate_stats *st)
{
	*st = s->gs;
	if (!s->nr_lat)
		return;
	qsort(s->lat, s->nr_lat, sizeof(*s->lat), cmp_u64);
	st->lat_median = s->lat[s->nr_lat / 2];
	st->lat_p99 = s->lat[(s->nr_lat * 99) / 100 < s->nr_lat ? (s->nr_lat * 99) / 100 : s->nr_lat - 1];
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

/* The trailer-less fields of the kernel records the session looks at. */
static void aux_session__note(struct aux_session *s, struct aux_session_cpu *c, const struct perf_event_header *h)
{
	__u64 v[2];

	switch (h->type) {
	case PERF_RECORD_AUX:
		memcpy(v, (const char *)h + 24, 8);
		aux_ring__note_aux_record(&c->aux, v[0]);
		s->stats.aux_records++;
		s->stats.truncated += !!(v[0] & PERF_AUX_FLAG_TRUNCATED);
		s->stats.partial += !!(v[0] & PERF_AUX_FLAG_PARTIAL);
		s->stats.collision += !!(v[0] & PERF_AUX_FLAG_COLLISION);
		break;
	case PERF_RECORD_ITRACE_START:
		s->stats.itrace_starts++;
		break;
	case PERF_RECORD_LOST:
		memcpy(v, (const char *)h + 8, 16);
		s->stats.lost++;
		s->stats.lost_events += v[1];
		break;
	}
}

/*
 * A record of a slot whose events are not in the file's attrs (a thread
 * followed after they were written) names, in its sample_id trailer, the
 * ids the file has for its events: the id is the trailer's last u64
 * (PERF_SAMPLE_IDENTIFIER); the leader's and tracking's rings hold no
 * samples.
 */
static const struct perf_event_header *aux_session__file_ids(struct aux_session *s, const struct aux_session_cpu *c,
							     const struct perf_event_header *h)
{
	__u64 id;

	if ((c->file_leader_id == c->leader_id && c->file_tracking_id == c->tracking_id) ||
	    h->type >= PERF_RECORD_MAX || h->type == PERF_RECORD_SAMPLE || h->size < sizeof(*h) + sizeof(id))
		return h;
	memcpy(&id, (const char *)h + h->size - sizeof(id), sizeof(id));
	if (id == c->leader_id)
		id = c->file_leader_id;
	else if (id == c->tracking_id)
		id = c->file_tracking_id;
	else
		return h;
	memcpy(s->scratch, h, h->size);
	memcpy(s->scratch + h->size - sizeof(id), &id, sizeof(id));
	return (const struct perf_event_header *)s->scratch;
}

/*
 * perf 6.1 matches a per-thread buffer (AUXTRACE cpu -1) to a CoreSight
 * PERF_RECORD_AUX only when the record's sample CPU is -1 too
 * (cs_etm__queue_aux_fragment() compares the AUXTRACE's cpu with the
 * sample's even per thread), as in its own per-thread files, whose cs_etm
 * event has no PERF_SAMPLE_CPU. auxtrig's records carry the CPU (one sample
 * layout for every attr): perf found no buffer for any of them ("CS ETM:
 * Couldn't find auxtrace buffer") and decoded whole buffers instead of the
 * pieces the kernel published. A per-thread CoreSight session's AUX records
 * name no CPU in the file: its trace IDs say which CPU traced what.
 */
static const struct perf_event_header *aux_session__file_cpu(struct aux_session *s,
							     const struct perf_event_header *h)
{
	const size_t cpu_at = h->size - 2 * sizeof(__u64); /* { u32 cpu, res; } { u64 identifier; } */
	const __u32 none = (__u32)-1;

	if (!s->per_thread || s->ev.kind != AUX_PMU_CS_ETM || h->type != PERF_RECORD_AUX ||
	    h->size < sizeof(*h) + 3 * sizeof(__u64) + 2 * sizeof(__u64))
		return h;
	if ((const unsigned char *)h != s->scratch)
		memcpy(s->scratch, h, h->size);
	memcpy(s->scratch + cpu_at, &none, sizeof(none));
	return (const struct perf_event_header *)s->scratch;
}

static int aux_session__drain_data(struct aux_session *s, struct aux_session_cpu *c, struct record_sink *k)
{
	const struct perf_event_header *h;
	int n = 0, err;

	data_ring__read_init(&c->data);
	while ((h = data_ring__read_event(&c->data))) {
		aux_session__note(s, c, h);
		err = record_sink__write(k, aux_session__file_cpu(s, aux_session__file_ids(s, c, h)));
		if (err)
			return err;
		n++;
	}
	data_ring__consume(&c->data);
	s->stats.records += n;
	return n;
}

/* AUXTRACE.reference: Intel PT wants the TSC at read time, the others any unique value. */
static __u64 aux_session__reference(const struct aux_session *s)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (s->ev.kind == AUX_PMU_INTEL_PT)
		return __builtin_ia32_rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int aux_session__put(struct aux_session *s, struct aux_session_cpu *c, const struct aux_ring_read *rd,
			    struct record_sink *k)
{
	struct pdata_record_auxtrace rec;
	int err;

	aux_ring__auxtrace(&c->aux, rd, aux_session__reference(s), &rec);
	err = record_sink__write_auxtrace(k, &rec, rd->data1, rd->len1, rd->data2, rd->len2);
	if (err)
		return err;
	s->stats.auxtrace++;
	s->stats.aux_bytes += rd->size;
	return 1;
}

/* One slot: its records, and in full-trace mode its new AUX data. */
static int aux_session__drain_slot(struct aux_session *s, struct aux_session_cpu *c, struct record_sink *k)
{
	struct aux_ring_read rd;
	int64_t got;
	int n = 0, err, truncated;
	char where[32];

	err = aux_session__drain_data(s, c, k);
	if (err < 0)
		return err;
	n += err;
	if (s->o.snapshot)
		return n;
	got = aux_ring__read(&c->aux, &rd);
	if (got < 0) {
		pr_err("%s on %s: AUX head and tail out of step: %s\n", s->ev.name,
		       aux_session__where(c, where, sizeof(where)), strerror((int)-got));
		return (int)got;
	}
	if (got > 0) {
		err = aux_session__put(s, c, &rd, k);
		if (err < 0)
			return err;
		n += err;
	}
	/* Released only after the copy is in the writer: the kernel may reuse the space now. */
	truncated = aux_ring__consume(&c->aux);
	/*
	 * The kernel disables the event when the buffer fills (TRUNCATED,
	 * or no space at all, which emits no record): perf re-enables after
	 * every read, enabling a running event being a no-op. Not while
	 * stopping, nor when the recorder's gate is closed.
	 */
	if ((!truncated && !got) || s->stopping || (s->gated && !aux_session__gate_is_open(s, c)))
		return n;
	err = aux_ring__enable(&c->aux);
	if (err) {
		pr_err("cannot re-enable %s on %s after the buffer filled: %s\n", s->ev.name,
		       aux_session__where(c, where, sizeof(where)), strerror(-err));
		return err;
	}
	s->stats.reenables += truncated;
	return n;
}

int aux_session__drain(struct aux_session *s, struct record_sink *k)
{
	int n = 0, err;

	if (!s->opened)
		return -EINVAL;
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		err = aux_session__drain_slot(s, s->cpus[i], k);
		if (err < 0)
			return err;
		n += err;
	}
	return n;
}

/*
 * Does the session pause and resume the trace in the kernel? Then a snapshot
 * must not disable it: a disabled leader schedules its group out, the
 * aux_pause/aux_resume of every window edge meanwhile is lost, and ENABLE
 * brings back the paused state the leader was left in, wrong for the
 * window the thread is in now.
 */
static bool aux_session__pauses_in_kernel(const struct aux_session *s)
{
	const struct aux_group *g = &s->cpus[0]->g;

	return g->mode != AUX_GROUP_SNAPSHOT && !g->gate_by_ioctl;
}

/* Every open CPU's data ring into @k, as a snapshot's first step. Return: 0 or -errno. */
static int aux_session__drain_all(struct aux_session *s, struct record_sink *k)
{
	int ret;

	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		ret = aux_session__drain_data(s, s->cpus[i], k);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* perf's way (§4.1): stop every CPU, so each driver publishes its head and AUX record; copy; restart. */
static int aux_session__snapshot_stopped(struct aux_session *s, struct record_sink *k)
{
	struct aux_ring_read rd;
	int64_t got;
	int n = 0, err = 0, ret;

	for (size_t i = 0; i < s->nr_slots && !err; i++)
		if (!s->cpus[i]->closed)
			err = aux_ring__snapshot_start(&s->cpus[i]->aux);
	if (!err)
		err = aux_session__drain_all(s, k);
	for (size_t i = 0; i < s->nr_slots && !err; i++) {
		struct aux_session_cpu *c = s->cpus[i];

		if (c->closed)
			continue;
		got = aux_ring__snapshot(&c->aux, &rd);
		if (got < 0)
			err = (int)got;
		else if (got > 0 && (ret = aux_session__put(s, c, &rd, k)) < 0)
			err = ret;
		else
			n += got > 0;
	}
	/* Restart even after a write error: the trace must not stay off. */
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		ret = aux_ring__snapshot_finish(&s->cpus[i]->aux);
		if (ret && !err)
			err = ret;
	}
	return err ? err : n;
}

static int aux_session__flush_all(struct aux_session *s)
{
	int err;

	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		err = aux_ring__flush(&s->cpus[i]->aux, s->ev.attr.sample_period);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Without stopping: flush every CPU's head, copy each range out while the
 * trace goes on, flush again and drop what the hardware may have written
 * over at the ranges' old ends meanwhile.
 */
static int aux_session__snapshot_running(struct aux_session *s, struct record_sink *k)
{
	struct aux_ring_read *rd = calloc(s->nr_slots, sizeof(*rd));
	unsigned char **copy = calloc(s->nr_slots, sizeof(*copy));
	int n = 0, err, ret;
	int64_t got;

	if (!rd || !copy) {
		free(rd);
		free(copy);
		return -ENOMEM;
	}
	err = aux_session__flush_all(s);
	if (err == -EINVAL) {
		/* the kernel would not take the period: the driver's heads are not flushed that way here */
		free(rd);
		free(copy);
		return -EOPNOTSUPP;
	}
	if (!err)
		err = aux_session__drain_all(s, k);
	for (size_t i = 0; i < s->nr_slots && !err; i++) {
		if (s->cpus[i]->closed)
			continue;
		got = aux_ring__snapshot(&s->cpus[i]->aux, &rd[i]);
		if (got < 0) {
			err = (int)got;
			break;
		}
		if (!got)
			continue;
		copy[i] = malloc(rd[i].size);
		if (!copy[i]) {
			err = -ENOMEM;
			break;
		}
		memcpy(copy[i], rd[i].data1, rd[i].len1);
		if (rd[i].len2)
			memcpy(copy[i] + rd[i].len1, rd[i].data2, rd[i].len2);
	}
	if (!err)
		err = aux_session__flush_all(s);
	for (size_t i = 0; i < s->nr_slots && !err; i++) {
		uint64_t over;

		if (!copy[i])
			continue;
		over = aux_ring__snapshot_overwritten(&s->cpus[i]->aux, &rd[i]);
		s->stats.snapshot_overwritten += over;
		if (over == rd[i].size)
			continue;
		rd[i].offset += over;
		rd[i].size -= over;
		rd[i].padded = (rd[i].size + 7) & ~(uint64_t)7;
		rd[i].data1 = copy[i] + over;
		rd[i].len1 = rd[i].size;
		rd[i].data2 = NULL;
		rd[i].len2 = 0;
		ret = aux_session__put(s, s->cpus[i], &rd[i], k);
		if (ret < 0)
			err = ret;
		else
			n++;
	}
	for (size_t i = 0; i < s->nr_slots; i++)
		free(copy[i]);
	free(copy);
	free(rd);
	return err ? err : n;
}

int aux_session__snapshot(struct aux_session *s, struct record_sink *k)
{
	int ret;

	if (!s->opened || !s->o.snapshot)
		return -EINVAL;
	ret = -EOPNOTSUPP;
	if (aux_session__pauses_in_kernel(s) && !s->no_flush) {
		ret = aux_session__snapshot_running(s, k);
		if (ret == -EOPNOTSUPP) {
			pr_warn("%s: the kernel refused PERF_EVENT_IOC_PERIOD on it: snapshots stop the trace to read it, "
				"and window edges during a snapshot are lost to the trace\n", s->ev.name);
			s->no_flush = true;
		}
	}
	if (ret == -EOPNOTSUPP)
		ret = aux_session__snapshot_stopped(s, k);
	if (ret < 0) {
		pr_err("%s: snapshot failed: %s\n", s->ev.name, strerror(-ret));
		return ret;
	}
	s->stats.snapshots++;
	/* what exited threads traced is in this snapshot: their groups and buffers can go */
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->exited && !s->cpus[i]->closed) {
			aux_session__close_slot(s, s->cpus[i]);
			s->stats.exited_closed++;
		}
	}
	return ret;
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
