// SPDX-License-Identifier: BSD-2-Clause
/*
 * The output file's start: its header (attrs, features, tracing data) and
 * the synthesized records of what already runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/format/tracing_data.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/record/internal/recorder.h"
/* ---- the output file ------------------------------------------------------ */

bool recorder__output_is_stdout(const struct record_plan *p)
{
	return !strcmp(p->output, "-");
}

const char *recorder__output_name(const struct record_plan *p)
{
	return recorder__output_is_stdout(p) ? "standard output" : p->output;
}

int recorder__claim_stdout(struct recorder *s)
{
	int fd, err;

	if (isatty(STDOUT_FILENO)) {
		pr_err("-o -: standard output is a terminal; pipe it into a reader (auxtrig script -i -) or name a file\n");
		return -ENOTTY;
	}
	fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		err = -errno;
		pr_err("-o -: cannot write to standard output: %s\n",
		       err == -EBADF ? "it is closed" : strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	s->out_fd = fd;
	return 0;
}

struct pdata_writer *recorder__open_output(struct recorder *s)
{
	struct pdata_writer *w;

	if (!recorder__output_is_stdout(s->plan))
		return pdata_writer__open(s->plan->output, s->plan->force);
	/*
	 * A reader that goes away ends the run with EPIPE (a write error, said
	 * and counted) instead of killing auxtrig. Set now, after the command
	 * was forked: it keeps the default.
	 */
	signal(SIGPIPE, SIG_IGN);
	w = pdata_writer__open_pipe(s->out_fd, recorder__output_name(s->plan));
	if (w)
		s->out_fd = -1;	/* the writer's now */
	return w;
}

int recorder__write_header(struct recorder *s)
{
	const struct record_plan *p = s->plan;
	const struct event_list *ev = &p->events;
	struct perf_event_attr a;
	struct tracing_event *events;
	char **texts;
	void *td = NULL;
	size_t td_len = 0;
	char name[2 * TP_NAME_MAX + 2];
	int err = 0;

	for (size_t i = 0; i < ev->nr && !err; i++) {
		cpu_events__attr_tracepoint(&a, ev->ev[i].fmt.id, p->callchain);
		snprintf(name, sizeof(name), "%s:%s", ev->ev[i].fmt.system, ev->ev[i].fmt.name);
		err = pdata_writer__add_attr(s->w, &a, name, &ev->ev[i].id, 1);
	}
	if (err)
		return err;

	if (p->snapshot) {
		__u64 id = MARKER_ID;

		cpu_events__attr_tracepoint(&a, ev->marker_type, p->callchain);
		err = pdata_writer__add_attr(s->w, &a, "auxtrig:snapshot", &id, 1);
		if (err)
			return err;
	}

	if (s->hw.aux) {
		err = aux_session__add_attrs(s->hw.aux, s->w);
		if (err)
			return err;
	}
	err = cpu_events__add_attrs(&s->ce, s->w);
	if (err)
		return err;

	events = calloc(ev->nr + 1, sizeof(*events));
	texts = calloc(ev->nr + 1, sizeof(*texts));	/* formats of records that carry a string */
	if (!events || !texts) {
		free(events);
		free(texts);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ev->nr && !err; i++) {
		events[i].system = ev->ev[i].fmt.system;
		events[i].name = ev->ev[i].fmt.name;
		events[i].format = ev->ev[i].own_format;
		if (!events[i].format) {
			err = event_list__file_format(&ev->ev[i], &texts[i]);
			events[i].format = texts[i];
		}
	}
	if (err) {
		pr_err("cannot write the format of a syscall with a string argument: %s\n", strerror(-err));
		goto out_texts;
	}
	if (p->snapshot) {
		events[ev->nr].system = "auxtrig";
		events[ev->nr].name = "snapshot";
		events[ev->nr].format = ev->marker_format;
	}
	err = tracing_data__build(tracefs__root(), events, ev->nr + p->snapshot, &td, &td_len);
out_texts:
	for (size_t i = 0; i < ev->nr; i++)
		free(texts[i]);
	free(texts);
	free(events);
	if (err) {
		pr_err("cannot collect the tracepoint formats for the file: %s\n", strerror(-err));
		return err;
	}
	err = pdata_writer__set_tracing_data(s->w, td, td_len);
	free(td);
	if (err)
		return err;
	err = pdata_writer__set_cmdline(s->w, p->full_argc, p->full_argv);
	if (err)
		return err;
	return pdata_writer__begin_data(s->w);
}

/* -a: every process that runs now. */
static int synthesize_all(struct recorder *s)
{
	pid_t *pids;
	size_t nr;
	int err = target__processes(&pids, &nr);

	for (size_t i = 0; !err && i < nr; i++) {
		err = synth__threads(s->w, pids[i]);
		if (err == -ESRCH || err == -ENOENT || err == -EACCES)
			err = 0; /* gone meanwhile, or a kernel thread without maps */
	}
	free(pids);
	return err;
}

int recorder__synthesize(struct recorder *s)
{
	int err;

	if (s->ce.nr_cpus) {
		/*
		 * TSC to perf time, for decoders that need it (SPE, CoreSight,
		 * jitdump). Before AUXTRACE_INFO: perf 6.1's SPE decoder takes the
		 * conversion when it reads AUXTRACE_INFO, and divides by zero
		 * without it.
		 */
		err = synth__time_conv(s->w, data_ring__user_page(&s->ce.cpus[0].ring));
		if (err && err != -EOPNOTSUPP && err != -EAGAIN)	/* -EAGAIN: said, not written */
			return err;
	}
	if (s->hw.aux) {
		err = aux_session__write_info(s->hw.aux, s->w);
		if (err)
			return err;
	}
	err = synth__kernel_mmap(s->w, NULL);
	if (err)
		pr_debug("no kernel map record: %s\n", strerror(-err));
	if (s->plan->snapshot || s->plan->nr_triggers) {
		/* Snapshot markers and trigger counters are auxtrig's own samples: name their thread. */
		char buf[128];
		size_t n = synth__comm_record(buf, sizeof(buf), getpid(), getpid(), "auxtrig");

		err = n ? pdata_writer__write(s->w, buf, n) : -EINVAL;
		if (err)
			return err;
	}
	if (s->target.all) {
		err = synthesize_all(s);
		if (err)
			return err;
	}
	for (size_t i = 0, gone = 0; i < s->target.nr_pids; i++) {
		err = synth__threads(s->w, s->target.pids[i]);
		if (err == -ESRCH && ++gone == s->target.nr_pids) {
			/* perf refuses a target that is not there; ours went while we attached */
			pr_err("nothing to record: the %s exited while auxtrig attached to %s\n",
			       s->target.threads ? "thread" : "process", s->target.nr_pids > 1 ? "them" : "it");
			return err;
		}
		if (err == -ESRCH) {
			pr_warn("%s %d exited while auxtrig attached: nothing of it is recorded\n",
				s->target.threads ? "thread" : "process", s->target.pids[i]);
		} else if (err) {
			pr_err("cannot describe process %d in the file: %s\n", s->target.pids[i], strerror(-err));
			return err;
		}
	}
	return record_sink__end_synthesis(&s->sink);
}
