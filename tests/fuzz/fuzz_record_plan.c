// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig record`'s command line into a plan (user/cmd/record_plan.c):
 * record_args__parse() and record_plan__build() on an argv made of the
 * input, one argument a line, after "record --sysfs-root
 * tests/fixtures/sysfs-intel_pt" (the input may name another root).
 * Tracepoints come from tests/fixtures/tracefs (the runner works from the
 * project root); the capabilities the plan asks (caps.h: do kprobes and
 * breakpoints fire?) are simulated as offered, so those plans are built
 * too, without a kernel.
 *
 * Promises checked: a refusal says why, in whole lines, and an accepted
 * plan prints no error; an accepted plan holds together (at most 64
 * windows and 8 triggers, buffers of powers of 2, a CPU, something to
 * record, hardware trace resolved iff asked for, one target); the same
 * command line gives the same answer twice; nothing leaks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sanitizer/common_interface_defs.h>

#include "auxtrig/cmd/record_plan.h"
#include "auxtrig/lang/aux_event.h"
#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/tracefs.h"

#define MAX_TEXT 8192
#define MAX_ARGS 64
#define PREFIX 3

static int msg_fd = -1;	/* stderr of one build, kept */
static char msg[65536];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	tracefs__set_root("tests/fixtures/tracefs");
	caps__simulate_all(1);
	msg_fd = memfd_create("fuzz_record_plan_stderr", MFD_CLOEXEC);
	if (msg_fd < 0)
		abort();
	/* stderr is the memfd during a build: the sanitizers report where stderr was */
	__sanitizer_set_report_fd((void *)(intptr_t)dup(2));
	return 0;
}

struct answer {
	int err;
	bool help;
	size_t nr_windows, nr_events, nr_triggers;
};

static bool pow2(size_t n)
{
	return n && !(n & (n - 1));
}

/* The plan holds together. */
static void check_plan(const struct record_args *a, const struct record_plan *p)
{
	bool cpu = false;

	if (p->nr_windows > 64 || p->nr_triggers > GATE_MAX_TRIGGERS)
		abort();
	if (!pow2(p->mmap_pages) || !pow2(p->aux_pages))
		abort();
	for (int i = 0; i < p->nr_possible; i++)
		cpu |= p->cpu_mask[i];
	if (!cpu)
		abort();
	if (!p->events.nr && !p->aux_event)
		abort();	/* nothing to record */
	if ((p->aux_event != NULL) != (p->aux != NULL) || (p->aux && (!p->pmus || !p->aux->pmu)))
		abort();	/* hardware trace resolved iff asked for */
	if (p->command && (p->nr_pids || p->pids_text))
		abort();	/* one target */
	for (size_t i = 0; i < p->nr_triggers; i++)
		if (!p->triggers[i].text || !p->triggers[i].t.action)
			abort();
}

/* Parse and build argv[0..argc) once; stderr into msg. */
static struct answer build(int argc, char **argv, size_t *msg_len)
{
	struct answer ans = {};
	struct record_plan p = {};
	struct record_args a;
	int saved;
	ssize_t n;

	fflush(stderr);
	saved = dup(2);
	if (saved < 0 || ftruncate(msg_fd, 0) || lseek(msg_fd, 0, SEEK_SET) || dup2(msg_fd, 2) < 0)
		abort();
	ans.err = record_args__parse(&a, argc, argv);
	ans.help = !ans.err && a.help;
	if (!ans.err && !ans.help) {
		ans.err = record_plan__build(&p, &a);
		if (!ans.err)
			check_plan(&a, &p);
		ans.nr_windows = p.nr_windows;
		ans.nr_events = p.events.nr;
		ans.nr_triggers = p.nr_triggers;
	}
	record_plan__exit(&p);
	record_args__exit(&a);
	fflush(stderr);
	if (dup2(saved, 2) < 0)
		abort();
	close(saved);
	n = pread(msg_fd, msg, sizeof(msg) - 1, 0);
	if (n < 0)
		abort();
	msg[n] = '\0';
	*msg_len = n;
	return ans;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[MAX_TEXT + 1];
	char *argv[PREFIX + MAX_ARGS + 1] = { "record", "--sysfs-root", "tests/fixtures/sysfs-intel_pt" };
	int argc = PREFIX;
	struct answer first, again;
	size_t len, len2;

	if (size > MAX_TEXT)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* one argument a line; a NUL ends the input */
	for (char *s = text, *nl; size && argc < PREFIX + MAX_ARGS; s = nl + 1) {
		nl = strchrnul(s, '\n');
		argv[argc++] = s;
		if (!*nl)
			break;
		*nl = '\0';
	}
	argv[argc] = NULL;

	first = build(argc, argv, &len);
	if (first.err > 0 || first.err < -4095)
		abort();	/* 0 or -errno */
	if (first.err && first.err != -ENOMEM && (!len || msg[len - 1] != '\n'))
		abort();	/* a refusal says why, in whole lines */
	if (!first.err && !first.help)
		for (const char *l = msg; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (!strncmp(l, "auxtrig: ", 9) && strncmp(l, "auxtrig: warning: ", 18))
				abort();	/* an accepted plan printed an error */

	again = build(argc, argv, &len2);
	if (first.err != again.err || first.help != again.help || first.nr_windows != again.nr_windows ||
	    first.nr_events != again.nr_events || first.nr_triggers != again.nr_triggers)
		abort();	/* the same command line, another answer */
	return 0;
}
