// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recorder: one `auxtrig record` session, from a resolved plan to a file.
 *
 *   translate the windows -> decide the hardware-trace path -> load the gate
 *   -> fork the command (held) -> open per-CPU perf events and mmap their
 *   rings -> attach -> create the output file -> arm -> start the command ->
 *   drain rings until it exits or a signal arrives -> disarm -> final drain
 *   -> finish the file -> summary
 *
 * The pieces are objects of their own (include/auxtrig/record/): the plan,
 * the event list, the window map, the gate, hardware trace, the per-CPU
 * events, the sink, the control channel. This file runs them in order and
 * handles what reaches the loop: records, fired triggers, timers, signals,
 * control commands and snapshots.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/sys/fd_limit.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/record/gate.h"
#include "auxtrig/record/kcore_copy.h"
#include "auxtrig/record/recorder.h"
#include "auxtrig/record/trigger_prog.h"
#include "auxtrig/record/window_hold.h"
#include "auxtrig/sys/exit_code.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/reaper.h"
#include "auxtrig/record/internal/recorder.h"
#include "auxtrig/record/sched_primer.h"

/*
 * Locate a ring's sample (@callchain: the output event samples callchains).
 * Return: false for another record type or one whose sizes do not add up.
 */
bool gate_sample__parse(const struct perf_event_header *h, bool callchain, struct gate_sample *g)

{
	size_t off = sizeof(struct cpu_events_out_head);

	if (h->type != PERF_RECORD_SAMPLE || h->size < off)
		return false;
	g->nr_chain = 0;
	g->chain_off = off + 8;
	if (callchain) {
		if (h->size < off + 8)
			return false;
		memcpy(&g->nr_chain, (const char *)h + off, 8);
		if (g->nr_chain > (h->size - off - 8) / 8)
			return false;
		off += 8 + 8 * g->nr_chain;
	}
	if (h->size < off + 4)
		return false;
	memcpy(&g->raw_size, (const char *)h + off, 4);
	g->raw_off = off + 4;
	if (g->raw_size < GATE_HDR_SIZE || g->raw_size > h->size - g->raw_off)
		return false;
	memcpy(&g->gh, (const char *)h + g->raw_off, sizeof(g->gh));
	return true;
}
__u64 recorder__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int on_hangup(struct recorder *s, int fd);

/* ---- the gate, from plan and map ---------------------------------------------- */

static int gate_setup(struct recorder *s)
{
	const struct record_plan *p = s->plan;

	s->gate = gate__open_plan(p, &s->map);
	if (!s->gate)
		return -errno;
	if (p->min_duration || p->max_duration) {
		s->hold = window_hold__new();
		if (!s->hold)
			return -errno;
		/* Past the limit: --min-duration writes, --max-duration drops, the oldest held window. */
		window_hold__set_limit(s->hold, p->hold_size ? p->hold_size : WINDOW_HOLD_DEFAULT_LIMIT,
				       p->max_duration ? WINDOW_HOLD_DROP_OLDEST : WINDOW_HOLD_WRITE_OLDEST);
	}
	if (s->hw.edges)
		gate__signal_edges(s->gate);
	if (s->hw.veto)
		gate__aux_veto(s->gate);
	if (hw_trace__per_thread(s->plan) && !s->plan->dry_run)
		gate__signal_threads(s->gate);
	return gate__load(s->gate);
}

/* Each CPU's output event to the gate; with -C, the gate records only on those CPUs. */
static int gate_outputs(struct recorder *s)
{
	for (size_t i = 0; i < s->ce.nr_cpus; i++) {
		const struct cpu_slot *c = &s->ce.cpus[i];
		int err;

		if (s->plan->cpus_given) {
			err = gate__record_cpu(s->gate, c->cpu);
			if (err)
				return err;
		}
		err = gate__set_output(s->gate, c->cpu, c->out_fd);
		if (err) {
			pr_err("cannot hand CPU %d's ring to the gate: %s\n", c->cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* ---- records ------------------------------------------------------------------ */

/*
 * The cpumode of a sampled IP: kernel addresses have the top bit set on the
 * 64-bit machines auxtrig runs on (x86-64, arm64), user addresses do not.
 */
static __u16 sample_cpumode(__u64 ip)
{
	return (__s64)ip < 0 ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
}

/*
 * A gate sample's record type and perf time. Return: false for what is no
 * record of the gate (another record type, a verdict, a point, short data).
 */
static bool gate_sample_type(const struct recorder *s, const struct perf_event_header *h, __u16 *type, __u64 *time)
{
	struct gate_sample g;

	if (!gate_sample__parse(h, s->plan->callchain, &g) || g.raw_size < GATE_HDR_SIZE + 8)
		return false;
	if (g.gh.flags & (GATE_OUT_VERDICT | GATE_OUT_POINT))
		return false;
	memcpy(type, (const char *)h + g.raw_off + GATE_HDR_SIZE, sizeof(*type));
	memcpy(time, (const char *)h + OUT_TIME_OFF, sizeof(*time));
	return true;
}

static int find_stop_record(void *ctx, const struct perf_event_header *h)
{
	struct recorder *s = ctx;
	__u16 type;
	__u64 t;

	if (gate_sample_type(s, h, &type, &t) && type == s->plan->stop_type && (!s->stop_time || t < s->stop_time))
		s->stop_time = t;
	return 0;
}

/*
 * Before a pass hands its records on (the rings' heads are read): has the
 * gate stopped? Then the pass is cut at the auxtrig:stop record, wherever
 * it lies among the rings: what another CPU emitted at the stop's instant
 * may be read before it and be later (struct gate_stop). The stop is in
 * force before its record is emitted; until the record is in a ring (the
 * stopping program is still running), the pass waits, for 100 ms at most
 * (its output may have been lost).
 */
static int check_stop(void *ctx, struct cpu_events *ce)
{
	struct recorder *s = ctx;
	bool marked = false;
	int err;

	if (!s->plan->stop_type || s->plan->snapshot || s->stop_time || !s->gate || !gate__stopped(s->gate, NULL, &marked) || !marked)
		return 0; /* no stop, or one the recorder writes the record of (stop+T) */
	err = cpu_events__peek(ce, find_stop_record, s);
	if (err || s->stop_time)
		return err;
	if (!s->stop_wait_since)
		s->stop_wait_since = recorder__monotonic_ns();
	return recorder__monotonic_ns() - s->stop_wait_since < 100000000ULL;
}

/* A record of a CPU's ring: a gate sample becomes its tracepoint's; the rest goes as it is. */
int recorder__process_record(void *ctx, const struct perf_event_header *h)
{
	struct recorder *s = ctx;
	char buf[65536 + 16] __attribute__((aligned(8)));

	if (h->type == PERF_RECORD_SAMPLE) {
		struct pdata_sample_head *out = (struct pdata_sample_head *)buf;
		const struct cpu_events_out_head *in = (const void *)h;
		const struct rec_event *e;
		struct gate_sample g;
		struct gate_out_hdr gh;
		__u32 rec_size;
		size_t off, chain;
		__u64 t;
		__u16 type;

		if (!gate_sample__parse(h, s->plan->callchain, &g) || g.raw_size < GATE_HDR_SIZE + 8) {
			s->unknown++;
			return 0;
		}
		gh = g.gh;
		if (gh.flags & GATE_OUT_VERDICT) /* A timed window closed: its held records are written or dropped. */
			return record_sink__verdict(&s->sink, gh.window, gh.flags & GATE_OUT_KEEP);
		if (gh.flags & GATE_OUT_POINT) /* a snapshot's end (recorder__take_snapshot()): not a record */
			return 0;
		memcpy(&type, (const char *)h + g.raw_off + GATE_HDR_SIZE, sizeof(type));
		e = event_list__by_type(&s->plan->events, type);
		if (!e) {
			s->unknown++;
			return 0;
		}
		memcpy(&t, (const char *)h + OUT_TIME_OFF, sizeof(t));
		/*
		 * A stop action: its auxtrig:stop record is the last of the file.
		 * The gate emits nothing after it; what another CPU was emitting
		 * at that very instant may still come later than it: not written.
		 */
		if (s->plan->stop_type && type == s->plan->stop_type && (!s->stop_time || t < s->stop_time))
			s->stop_time = t;
		else if (s->stop_time && t > s->stop_time) {
			s->after_stop++;
			return 0;
		}
		/*
		 * Same sample, as the tracepoint's: its id, the gate's IP with the
		 * cpumode that IP is in (the bpf-output event's sample says kernel
		 * whatever it carries: perf would look user IPs up in the kernel),
		 * tid, time and cpu as the kernel stamped them, period 1 (neither
		 * IP nor period is in the ring: CPU_EVENTS_OUT_SAMPLE_TYPE), the
		 * callchain as the kernel took it (-g), the bare record.
		 */
		rec_size = g.raw_size - GATE_HDR_SIZE;
		chain = g.raw_off - 4 - sizeof(*in); /* -g: u64 nr and the entries, else 0 */
		off = sizeof(*out) + chain;
		if (off + 4 + rec_size + 7 > UINT16_MAX) { /* 16 bytes longer than in the ring */
			s->unknown++;
			return 0;
		}
		out->header = in->header;
		out->header.misc = (in->header.misc & ~PERF_RECORD_MISC_CPUMODE_MASK) | sample_cpumode(gh.ip);
		out->id = e->id;
		out->ip = gh.ip;
		out->pid = in->pid;
		out->tid = in->tid;
		out->time = in->time;
		out->cpu = in->cpu;
		out->res = in->res;
		out->period = 1;
		memcpy(buf + sizeof(*out), (const char *)h + sizeof(*in), chain);
		memcpy(buf + off, &rec_size, sizeof(rec_size));
		memcpy(buf + off + 4, (const char *)h + g.raw_off + GATE_HDR_SIZE, rec_size);
		out->header.size = (off + 4 + rec_size + 7) & ~7u;
		memset(buf + off + 4 + rec_size, 0, out->header.size - off - 4 - rec_size);
		s->written++;
		if (t > s->sink.last_time)
			s->sink.last_time = t;
		if (gh.flags & GATE_OUT_HELD)
			return record_sink__write_held(&s->sink, gh.window, t, buf, out->header.size);
		return record_sink__write(&s->sink, &out->header);
	}
	if (h->type == PERF_RECORD_LOST) {
		const struct { struct perf_event_header h; __u64 id, lost; } *l = (const void *)h;

		if (cpu_events__is_side_id(&s->ce, l->id))
			s->lost_kernel_side += l->lost;
		else
			s->lost_kernel += l->lost;
	}
	return record_sink__write(&s->sink, h);
}

/*
 * One pass over every forward ring and the AUX session, then the sink's
 * round. Flight recorder: only the sideband rings, the AUX events' own
 * rings among them (their AUX records and the tracking event's switches,
 * COMM and MMAP); the AUX areas wait for a snapshot.
 */
int recorder__drain(struct recorder *s)
{
	bool any = false;
	int err;

	err = cpu_events__drain_checked(&s->ce, check_stop, recorder__process_record, s, &any);
	if (!err && s->hw.aux) {
		int n = aux_session__drain(s->hw.aux, &s->sink);

		if (n < 0)
			err = n;
		any |= n > 0;
	}
	if (err) {
		if (s->hold && !s->plan->snapshot)
			window_hold__pass(s->hold);
		return err;
	}
	return record_sink__end_pass(&s->sink, any);
}

/* ---- the loop ------------------------------------------------------------- */

/* perf's commands: enable, disable, snapshot, stop; and ping. */
static int control_command(void *ctx, enum control_cmd cmd)
{
	struct recorder *s = ctx;

	switch (cmd) {
	case CONTROL_ENABLE:
		gate__arm(s->gate);
		break;
	case CONTROL_DISABLE:
		gate__disarm(s->gate);
		break;
	case CONTROL_SNAPSHOT:
		return recorder__take_snapshot(s, "control");
	case CONTROL_STOP:
		s->stop = true;
		s->stop_requested = true;
		break;
	case CONTROL_PING:
		break; /* armed: answering is the point */
	}
	return 0;
}

static int setup_loop(struct recorder *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0)
		return -errno;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	ev.data.fd = s->sigfd;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev))
		return -errno;
	if (control__fd(&s->ctl) >= 0) {
		ev.data.fd = control__fd(&s->ctl);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	if (gate__ctl_fd(s->gate) >= 0) {
		ev.data.fd = gate__ctl_fd(s->gate);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	for (size_t i = 0; s->hw.aux && i < aux_session__nr_fds(s->hw.aux); i++) {
		ev.data.fd = aux_session__fd(s->hw.aux, i);
		if (ev.data.fd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	for (size_t i = 0; i < s->ce.nr_cpus && !s->plan->snapshot; i++) {
		ev.data.fd = s->ce.cpus[i].out_fd;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	return 0;
}

static int handle_signals(struct recorder *s)
{
	struct signalfd_siginfo si;
	int err = 0;

	while (!err && read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue; /* target__poll_exit() reaps */
		if (si.ssi_signo == SIGUSR2) {
			err = recorder__take_snapshot(s, "SIGUSR2");
			continue;
		}
		s->signo = si.ssi_signo;
		s->stop = true;
	}
	return err;
}

/* The live line: windows, records, bytes, losses, a few times a second on a terminal. */
static void status_show(struct recorder *s)
{
	struct gate_stats st;
	__u64 lost, paused, bytes;

	if (!progress__due(&s->status))
		return;
	gate__stats(s->gate, &st);
	bytes = s->w ? pdata_writer__stats(s->w)->bytes : 0;
	lost = recorder__ring_lost(s, &st, &paused) + st.too_big + s->lost_kernel_side;
	progress__show(&s->status, false, "auxtrig: recording: %llu window%s, %llu record%s, %.1f KiB, lost %llu",
		       (unsigned long long)st.windows_opened, st.windows_opened == 1 ? "" : "s",
		       (unsigned long long)s->written, s->written == 1 ? "" : "s", bytes / 1024.0,
		       (unsigned long long)lost);
}

static int loop(struct recorder *s)
{
	struct epoll_event evs[16];
	int n, err, timeout;

	while (!s->stop) {
		__u64 due = s->snapshot_due, now = recorder__monotonic_ns();

		if (s->stop_due && (!due || s->stop_due < due))
			due = s->stop_due;
		timeout = 100;
		if (due)
			timeout = due <= now ? 0 : (due - now) / 1000000 + 1 < 100 ? (due - now) / 1000000 + 1 : 100;
		n = epoll_wait(s->epfd, evs, 16, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		err = 0;
		for (int i = 0; i < n && !err; i++) {
			if (evs[i].data.fd == s->sigfd)
				err = handle_signals(s);
			else if (evs[i].data.fd == control__fd(&s->ctl))
				err = control__read(&s->ctl, control_command, s);
			else if (evs[i].data.fd == gate__ctl_fd(s->gate))
				err = gate__ctl_consume(s->gate);
			else if (evs[i].events & EPOLLHUP)
				err = on_hangup(s, evs[i].data.fd);
		}
		if (!err)
			err = recorder__drain(s);
		if (!err)
			err = recorder__run_due(s);
		if (err)
			return err;
		if (target__poll_exit(&s->target))
			s->stop = true;
		status_show(s);
	}
	progress__clear(&s->status);
	return 0;
}

/* ---- setup and summary ---------------------------------------------------- */

static int check_output_path(const char *path, bool force)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
			pr_err("cannot create %s: directory %s does not exist\n", path, dir);
			return -ENOENT;
		}
	}
	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode)) {
			pr_err("will not write %s: it is a symbolic link\n", path);
			return -ELOOP;
		}
		if (!force) {
			pr_err("%s exists: use -f to overwrite it, or -o to name another file\n", path);
			return -EEXIST;
		}
		if (!S_ISREG(st.st_mode)) {
			pr_err("will not overwrite %s: not a regular file\n", path);
			return -EEXIST;
		}
	}
	return 0;
}

/*
 * Per-thread hardware trace: a thread or process the target created, which
 * the gate reported (GATE_MSG_THREAD), gets its group; it ran untraced until
 * then (hw_trace__add_thread() counts how long).
 */
int recorder__on_new_thread(struct recorder *s, pid_t tid, __u64 created_ns)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int idx;

	idx = hw_trace__add_thread(&s->hw, tid, created_ns);
	if (idx < 0)
		return 0; /* gone already, or warned: the run goes on without its trace */
	pr_debug("thread %d: hardware trace open\n", tid);
	ev.data.fd = aux_session__fd(s->hw.aux, idx);
	if (s->epfd >= 0 && ev.data.fd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno; /* drained on the loop's timer all the same */
	return 0;
}

/*
 * A per-thread group's leader hung up: its thread exited and the kernel has
 * stopped its events, so what they published is all there is: written, and
 * the group closed. In snapshot mode the group stays (out of the poll set)
 * until the next snapshot has taken its trace (the exit's at the latest),
 * which closes it. Another fd hanging up is left out of the poll set.
 */
static int on_hangup(struct recorder *s, int fd)
{
	int err;

	for (size_t i = 0; s->hw.aux && i < aux_session__nr_fds(s->hw.aux); i++) {
		if (aux_session__fd(s->hw.aux, i) != fd)
			continue;
		if (s->plan->snapshot)
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
		err = hw_trace__remove_thread(&s->hw, aux_session__tid(s->hw.aux, i), &s->sink);
		return err;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	return 0;
}

/* -p: the threads there are now, the ones created before the gate reported new ones among them. */
static int add_current_threads(struct recorder *s)
{
	pid_t *tids;
	size_t nr;
	int err;

	for (size_t i = 0; i < s->target.nr_pids; i++) {
		if (target__threads(s->target.pids[i], &tids, &nr))
			continue; /* gone */
		err = 0;
		for (size_t j = 0; j < nr && !err; j++)
			err = recorder__on_new_thread(s, tids[j], 0);
		free(tids);
		if (err)
			return err;
	}
	return 0;
}

/* The threads a per-thread session starts with: the command's, -t's, or every thread of -p's processes. */
static int initial_threads(const struct target *t, pid_t **tids, size_t *nr)
{
	pid_t *one, *tmp;
	size_t nr_one;

	*tids = NULL;
	*nr = 0;
	if (t->is_command || t->threads || t->all) {
		*tids = malloc((t->nr_pids + 1) * sizeof(**tids));
		if (!*tids)
			return -ENOMEM;
		memcpy(*tids, t->pids, t->nr_pids * sizeof(**tids));
		*nr = t->nr_pids;
		return 0;
	}
	for (size_t i = 0; i < t->nr_pids; i++) {
		int err = target__threads(t->pids[i], &one, &nr_one);

		if (err)
			return err;
		tmp = realloc(*tids, (*nr + nr_one + 1) * sizeof(*tmp));
		if (!tmp) {
			free(one);
			return -ENOMEM;
		}
		memcpy(tmp + *nr, one, nr_one * sizeof(*tmp));
		*tids = tmp;
		*nr += nr_one;
		free(one);
	}
	return 0;
}

/* The targets: a command forked and held, or the -p/-t list checked against /proc. */
static int target_setup(struct recorder *s, int *ret)
{
	const struct record_plan *p = s->plan;
	int err = 0;

	if (p->command) {
		err = target__fork_command(&s->target, p->command);
		if (err) {
			pr_err("cannot run '%s': %s\n", p->command[0],
			       err == -ENOENT ? "command not found" : strerror(-err));
			*ret = err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
			return err;
		}
	} else if (p->nr_pids) {
		err = target__set_pids(&s->target, p->pids, p->nr_pids, p->threads);
		if (err) {
			pr_err("%s %s: %s\n", p->threads ? "-t" : "-p", p->pids_text,
			       err == -ESRCH ? (p->threads ? "no such thread" : "no such process") :
			       err == -ECHILD ? (p->threads ? "the thread has exited" : "the process has exited (a zombie its parent has not reaped)")
					      : strerror(-err));
			*ret = EXIT_RUNTIME;
			return err;
		}
	}
	s->target.all = p->all;
	s->have_target = true;
	return 0;
}

static void session_exit(struct recorder *s)
{
	free(s->snap_buf.p);
	cpu_events__close(&s->ce);
	for (size_t i = 0; i < s->nr_progs; i++)
		trigger_prog__close(s->progs[i]);
	free(s->progs);
	gate__close(s->gate);
	window_hold__delete(s->hold);
	hw_trace__exit(&s->hw);
	window_map__exit(&s->map);
	if (s->have_target)
		target__exit(&s->target);
	if (s->sigfd > 0)
		close(s->sigfd);
	control__close(&s->ctl);
	if (s->epfd > 0)
		close(s->epfd);
}

static bool usage_error(int err)
{
	return err == -EINVAL || err == -ENOENT || err == -ERANGE;
}

int recorder__run(const struct record_plan *p)
{
	return recorder__run_with(p, NULL);
}

/*
 * Everything before arming: the gate, trigger programs, targets, hardware
 * trace, CPU rings, attaching, the control FIFO, the file's header and
 * synthesized records. Return: 0, or -1 with @ret the exit status (said why).
 */
static int session_prepare(struct recorder *s, const struct perf_sys *aux_sys, struct sched_primer *primer, int *ret)
{
	const struct record_plan *p = s->plan;
	pid_t *tids = NULL;
	size_t nr_tids = 0;
	int err;

	s->kcore = kcore_copy__wanted(p->aux);
	if (recorder__output_is_stdout(p)) {
		if (s->kcore) {
			pr_err("-o -: kernel trace is written to a directory (the kernel's code beside the data); name one with -o\n");
			*ret = EXIT_USAGE;
			return -1;
		}
		err = recorder__claim_stdout(s);
		if (err) {
			*ret = err == -ENOTTY ? EXIT_USAGE : EXIT_RUNTIME;
			return -1;
		}
	} else if (s->kcore ? kcore_copy__open_dir(p->output, p->force, s->data_path, sizeof(s->data_path)) :
			      check_output_path(p->output, p->force)) {
		return -1;
	}

	if (!p->all) /* -a: the sideband is per CPU, bound to no task */
		sched_primer__start(primer);
	if (gate_setup(s))
		return -1;
	if (p->nr_trigger_progs) {
		s->progs = calloc(p->nr_trigger_progs, sizeof(*s->progs));
		if (!s->progs)
			return -1;
		for (size_t i = 0; i < p->nr_trigger_progs; i++) {
			s->progs[i] = trigger_prog__open(p->trigger_progs[i], s->gate);
			if (!s->progs[i]) {
				*ret = errno == EINVAL || errno == ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
				return -1;
			}
			s->nr_progs++;
		}
	}
	if ((p->nr_triggers || s->nr_progs || s->hw.edges || s->hold || hw_trace__per_thread(p)) && gate__ctl_open(s->gate, recorder__on_ctl, s)) {
		pr_err("cannot open the trigger channel: %s\n", strerror(errno));
		return -1;
	}

	if (target_setup(s, ret))
		return -1;
	if (hw_trace__per_thread(p)) {
		/* before the threads are listed: one created meanwhile is held, not missed */
		err = initial_threads(&s->target, &tids, &nr_tids);
		if (err) {
			pr_err("%s: cannot list the threads of the target: %s\n", p->aux_event, strerror(-err));
			return -1;
		}
	}
	err = hw_trace__setup(&s->hw, p, &s->map, s->gate, p->all ? -1 : s->target.pids[0], tids, nr_tids);
	free(tids);
	tids = NULL;
	if (err) {
		*ret = usage_error(err) ? EXIT_USAGE : EXIT_RUNTIME;
		return -1;
	}
	for (size_t i = 0; i < s->target.nr_pids; i++)
		if (s->target.is_command ? gate__add_exec_target(s->gate, s->target.pids[i])
					: gate__add_target(s->gate, s->target.pids[i]))
			return -1;

	if (cpu_events__open(&s->ce, &perf_sys__kernel, p->cpu_mask, p->nr_possible, p->mmap_pages, p->snapshot, p->callchain) ||
	    gate_outputs(s) || cpu_events__follow(&s->ce, &s->target))
		return -1;
	sched_primer__stop(primer);
	if (s->hw.aux && aux_session__open(s->hw.aux, aux_sys))
		return -1;
	progress__init(&s->status, stderr, 250, !p->quiet);
	progress__set_global(&s->status);
	gate__set_progress(s->gate, &s->status);
	err = gate__attach(s->gate);
	progress__clear(&s->status);
	if (err) {
		*ret = err == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME; /* e.g. no such symbol */
		return -1;
	}
	if (control__open(&s->ctl, &p->control))
		return -1;
	if (setup_loop(s)) {
		pr_err("cannot set up the event loop: %s\n", strerror(errno));
		return -1;
	}
	gate__set_detach_watch(s->gate, s->sigfd, !p->quiet);
	/* -p: threads created after they were listed and before the gate followed the process */
	if (hw_trace__per_thread(p) && !s->target.is_command && !s->target.threads && add_current_threads(s))
		return -1;

	s->w = s->kcore ? pdata_writer__open(s->data_path, p->force) : recorder__open_output(s);
	if (!s->w)
		return -1;	/* pdata_writer__open() said why */
	s->created_file = true;
	if (p->aux && !p->aux->attr.exclude_kernel)
		kcore_copy__keep(s->w, s->kcore ? p->output : NULL);
	record_sink__init(&s->sink, s->w, s->hold, p->snapshot);
	s->sink.callchain = p->callchain;
	err = recorder__write_header(s);
	if (err) {
		pr_err("cannot write %s: %s\n", recorder__output_name(p), strerror(-err));
		return -1;
	}
	/* recorder__synthesize() names its cause (a target's /proc unreadable, gone; the writer's own) */
	return recorder__synthesize(s) ? -1 : 0;
}

/* Arm the gate, start the hardware trace and the command. Return: 0 or -1 (said why). */
static int session_start(struct recorder *s)
{
	const struct record_plan *p = s->plan;
	int err;

	gate__arm(s->gate);
	if (s->hw.aux && aux_session__start(s->hw.aux)) {
		gate__disarm(s->gate);
		return -1;
	}
	err = target__start(&s->target);
	if (err) {
		pr_err("cannot run '%s': %s\n", p->command[0], strerror(-err));
		gate__disarm(s->gate);
		return -1;
	}
	if (!p->quiet)
		pr_info("recording %zu tracepoint%s in %zu window%s on %zu CPU%s; Ctrl-C to stop\n",
			p->events.nr, p->events.nr == 1 ? "" : "s", p->nr_windows, p->nr_windows == 1 ? "" : "s",
			s->ce.nr_cpus, s->ce.nr_cpus == 1 ? "" : "s");
	if (!p->quiet && s->hw.aux) {
		char note[512];

		pr_info("hardware trace %s: %s\n", p->aux_event,
			record_plan__has_windows(p) ? hw_trace__path(&s->hw) : "the whole run");
		if (hw_trace__note(&s->hw, p, note, sizeof(note)))
			pr_info("hardware trace %s: %s\n", p->aux_event, note);
		if (hw_trace__sink_note(&s->hw, p, note, sizeof(note)))
			pr_warn("hardware trace %s: %s\n", p->aux_event, note);
	}
	return 0;
}

/*
 * After the loop (which ended with @err): disarm, take in what the rings
 * and the trigger channel still hold, the end markers and counts, the exit
 * snapshot, and close the file. Return: 0 or -errno of a write.
 */
static int session_finish(struct recorder *s, int err)
{
	const struct record_plan *p = s->plan;

	gate__disarm(s->gate);
	if (!err)
		err = gate__ctl_consume(s->gate); /* triggers that fired at the very end */
	if (!err)
		err = recorder__drain(s);
	if (!err && s->snapshot_due) {
		/* snapshot+T still waiting: everything recorded is before its deadline. */
		s->snapshot_due = 0;
		err = recorder__triggered_snapshot(s, &s->snapshot_msg);
	}
	if (!err)
		err = recorder__write_stop_marker(s);
	if (!err)
		err = recorder__write_gate_losses(s);
	if (!err)
		err = recorder__write_trigger_stats(s);
	if (!err && p->snapshot_at_exit)
		err = recorder__take_snapshot(s, "exit");
	if (s->hold)
		window_hold__end(s->hold); /* windows still open have no verdict: not written */
	if (!err && s->hw.aux)
		err = aux_session__stop(s->hw.aux, &s->sink);
	if (!err)
		err = pdata_writer__close(s->w);
	return err;
}

/*
 * Disk full or I/O error @err, while recording or finishing: keep what is on
 * disk, readable, and count what never reached it: the records of the writes
 * that failed, those still in the writer's buffer, and those still in the
 * rings (drained now, each write failing and counted), in one
 * PERF_RECORD_LOST_SAMPLES where the cut left room.
 */
static void session_salvage(struct recorder *s, int err)
{
	const struct record_plan *p = s->plan;
	struct lost_samples_rec rec;
	const struct pdata_writer_stats *ws;
	__u64 lost;
	int serr;

	if (pdata_writer__failed(s->w)) {
		bool any = false;

		cpu_events__drain(&s->ce, recorder__process_record, s, &any);
	}
	s->lost_disk = pdata_writer__stats(s->w)->lost_samples + pdata_writer__pending_samples(s->w);
	lost = s->lost_disk + recorder__gate_losses(s);
	if (lost && s->ce.nr_cpus)
		recorder__lost_samples_rec(s, lost, &rec);
	serr = pdata_writer__salvage(s->w, lost && s->ce.nr_cpus ? &rec : NULL, sizeof(rec));
	ws = pdata_writer__stats(s->w);
	s->salvaged = true;
	if (serr)
		pr_err("recording stopped: %s could not be completed: %s\n", recorder__output_name(p), strerror(-serr));
	else if (err == -EPIPE)
		pr_err("recording stopped: the reader of %s went away; it had what was written before\n",
		       recorder__output_name(p));
	else
		pr_err("recording stopped: %s (%s); %s holds what was written before it\n",
		       strerror(-err), err == -ENOSPC ? "disk full" : "write error", recorder__output_name(p));
	if (!serr && s->lost_disk)
		pr_err("%llu samples recorded never reached %s (%s)\n", (unsigned long long)s->lost_disk,
		       recorder__output_name(p), ws->salvage_record ? "the file counts them as lost samples"
				       : recorder__output_is_stdout(p) ? "the stream could not take their count either"
				       : "no room left in the file to count them there");
}

int recorder__run_with(const struct record_plan *p, const struct perf_sys *aux_sys)
{
	struct recorder s = { .plan = p, .epfd = -1, .sigfd = -1, .out_fd = -1, .target = { .go_fd = -1, .err_fd = -1 } };
	struct window_map_aux maux;
	struct sched_primer primer = { .fd = -1 };
	int err, ret = EXIT_RUNTIME;

	control__init(&s.ctl);
	/*
	 * First, while auxtrig holds no thread, BPF object or perf event: the
	 * reaper cleans up after a SIGKILLed auxtrig (the command's cgroup, the
	 * files it makes).
	 */
	if (!p->dry_run)
		reaper__start(p->command != NULL);
	/* hundreds of tracepoints hold more descriptors than the usual soft limit of 1024 */
	fd_limit__raise();
	/* decided before the gate loads: it sends window edges only for the userspace-gated path */
	hw_trace__decide(&s.hw, p, aux_sys);
	hw_trace__map_aux(&s.hw, p, &maux);
	err = window_map__build(&s.map, p, &maux);
	if (!err && p->dry_run)
		err = hw_trace__setup(&s.hw, p, &s.map, NULL, -1, NULL, 0);
	if (!err && p->dry_run) {
		recorder__dry_run(&s);
		ret = EXIT_OK;
		goto out;
	}
	if (err) {
		/* Bad input: unknown names, malformed specs, out-of-range terms. */
		ret = usage_error(err) ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (session_prepare(&s, aux_sys, &primer, &ret) || session_start(&s))
		goto out;

	control__ack(&s.ctl, ""); /* nothing: "ping" answers once armed */
	err = loop(&s);
	err = session_finish(&s, err);
	if (err) {
		session_salvage(&s, err);
		goto out_summary;
	}
	ret = EXIT_OK;
	if ((s.signo || s.stop_requested) && s.target.is_command)
		target__stop_tree(&s.target, TARGET_STOP_GRACE_MS);
	else if (s.target.is_command && s.target.exited && WIFSIGNALED(s.target.status))
		pr_warn("%s was killed by signal %d (%s); the file holds everything up to then\n",
			p->command[0], WTERMSIG(s.target.status), strsignal(WTERMSIG(s.target.status)));
out_summary:
	s.created_file = false; /* it holds what was recorded: keep it */
	recorder__print_summary(&s);
	hw_trace__summary(&s.hw, p, s.gate);
out:
	sched_primer__stop(&primer);
	if (s.created_file)
		pdata_writer__unlink(s.w);
	if (s.have_target && !s.target.exited)
		target__stop_tree(&s.target, TARGET_STOP_GRACE_MS);
	pdata_writer__delete(s.w);
	if (s.out_fd >= 0)
		close(s.out_fd);
	session_exit(&s);
	reaper__stop();
	progress__set_global(NULL);
	return ret;
}
