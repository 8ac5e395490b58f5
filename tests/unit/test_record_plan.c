// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig record` command lines into resolved plans (user/cmd/record_plan.c),
 * every refusal with its message, and the plan's windows translated once
 * into the gate's masks and the AUX group's triggers (user/record/window_map.c).
 * Tracepoints come from tests/fixtures/tracefs: syscalls:sys_enter_openat
 * (id 782), syscalls:sys_exit_openat (781), sched:sched_switch (372).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "auxtrig/cmd/record_plan.h"
#include "auxtrig/lang/aux_event.h"
#include "auxtrig/lang/expr.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/tracefs.h"
#include "perf_oracle.h"
#include "plan_fixture.h"
#include "uapi/linux/perf_event_aux.h"

#define ENTER_OPENAT 782
#define EXIT_OPENAT 781
#define SCHED_SWITCH 372

/* The PMU fixtures, as --sysfs-root arguments (test_fixture_path()'s buffer is reused). */
static char pt_root[4096], cs_root[4096], spe_root[4096], no_aux_root[4096];

static int setup(void **state)
{
	snprintf(pt_root, sizeof(pt_root), "%s", test_fixture_path("sysfs-intel_pt"));
	snprintf(cs_root, sizeof(cs_root), "%s", test_fixture_path("sysfs-cs_etm"));
	snprintf(spe_root, sizeof(spe_root), "%s", test_fixture_path("sysfs-arm_spe"));
	snprintf(no_aux_root, sizeof(no_aux_root), "%s", test_fixture_path("sysfs-no_aux"));
	tracefs__set_root(test_fixture_path("tracefs"));
	caps__simulate_all(1);	/* a machine that offers everything; tests take each away */
	return 0;
}

static int teardown(void **state)
{
	tracefs__set_root(NULL);
	return 0;
}

static const struct rec_event *event(const struct record_plan *p, const char *sys, const char *name)
{
	const struct rec_event *e = event_list__find(&p->events, sys, name);

	if (!e)
		fail_msg("no event %s:%s in the plan", sys, name);
	return e;
}

/* ---- plans --------------------------------------------------------------------- */

static void test_record_plan_syscall_window_and_events(void **state)
{
	struct built b;

	BUILD(&b, "-w", "syscall:openat", "-e", "sched:sched_switch", "-o", "x.data", "-f");
	assert_int_equal(b.err, 0);
	assert_int_equal(b.p.nr_windows, 1);
	assert_int_equal(b.p.windows[0].kind, WINDOW_SYSCALL);
	/* the window's ends first, then -e, in the order given; ids of ours */
	assert_int_equal(b.p.events.nr, 3);
	assert_int_equal(b.p.events.ev[0].fmt.id, ENTER_OPENAT);
	assert_int_equal(b.p.events.ev[1].fmt.id, EXIT_OPENAT);
	assert_int_equal(b.p.events.ev[2].fmt.id, SCHED_SWITCH);
	assert_true(b.p.events.ev[2].id == EVENT_ID_BASE + 2);
	assert_int_equal(b.p.events.ev[0].flags, 0);
	assert_int_equal(b.p.events.ev[2].flags, GATE_TP_RECORD);
	/* records find their event by type; auxtrig:snapshot gets a type none has */
	assert_ptr_equal(event_list__by_type(&b.p.events, SCHED_SWITCH), &b.p.events.ev[2]);
	assert_null(event_list__by_type(&b.p.events, 1));
	assert_int_equal(b.p.events.marker_type, 65000);
	assert_string_equal(b.p.output, "x.data");
	assert_true(b.p.force);
	assert_string_equal(b.p.command[0], "true");
	assert_int_equal(b.p.mmap_pages, 128);
	assert_int_equal(b.p.aux_pages, 1024);
	assert_false(b.p.snapshot);
	assert_int_equal(b.p.nr_triggers, 0);
	assert_false(b.p.cpus_given);
	for (int i = 0; i < b.p.nr_possible; i++)
		assert_true(b.p.cpu_mask[i]);
	assert_int_equal(b.p.control.kind, PLAN_CONTROL_NONE);
	built__done(&b);
}

/* -g: the plan asks for call stacks; without it, none */
static void test_record_plan_callchain(void **state)
{
	struct built b;

	(void)state;
	BUILD(&b, "-g", "-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_true(b.p.callchain);
	built__done(&b);
	BUILD(&b, "--callchain", "-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_true(b.p.callchain);
	built__done(&b);
	BUILD(&b, "-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_false(b.p.callchain);
	built__done(&b);
}

static void test_record_plan_triggers_and_own_events(void **state)
{
	struct built b;

	BUILD(&b, "-S64K", "-e", "sched:*", "--on", "syscall:openat:exit if ret < 0:snapshot+2ms,every:3,limit:10/s",
	      "--on", "syscall:openat:enter:mark", "--on", "syscall:openat:enter:resume,once",
	      "--on", "syscall:openat:exit:pause");
	assert_int_equal(b.err, 0);
	assert_true(b.p.snapshot);
	assert_int_equal(b.p.mmap_pages * sysconf(_SC_PAGESIZE), 64 * 1024);
	assert_int_equal(b.p.nr_triggers, 4);
	assert_int_equal(b.p.triggers[0].t.action, GATE_ACT_SNAPSHOT);
	assert_true(b.p.triggers[0].t.delay_ns == 2000000);
	assert_int_equal(b.p.triggers[0].t.policy, GATE_POLICY_EVERY);
	assert_true(b.p.triggers[0].t.n == 3);
	assert_int_equal(b.p.triggers[0].t.limit, 10);
	assert_non_null(b.p.triggers[0].cond);
	assert_int_equal(b.p.triggers[0].fmt.id, EXIT_OPENAT);
	assert_int_equal(b.p.triggers[1].t.action, GATE_ACT_MARK);
	assert_null(b.p.triggers[1].cond);
	assert_int_equal(b.p.triggers[2].t.policy, GATE_POLICY_ONCE);
	assert_true(b.p.user_window);
	/* auxtrig's own events, typed above every tracepoint, in the order they are needed */
	assert_int_equal(b.p.mark_type, event(&b.p, "auxtrig", "mark")->fmt.id);
	assert_int_equal(b.p.resume_type, event(&b.p, "auxtrig", "resume")->fmt.id);
	assert_int_equal(b.p.pause_type, event(&b.p, "auxtrig", "pause")->fmt.id);
	assert_true(b.p.mark_type >= 65000 && b.p.resume_type == b.p.mark_type + 1 &&
		    b.p.pause_type == b.p.resume_type + 1);
	assert_non_null(strstr(event(&b.p, "auxtrig", "trigger_stats")->own_format, "field:unsigned long fired;"));
	assert_true(record_plan__has_windows(&b.p));
	/* the snapshot marker's type is none of them */
	assert_null(event_list__by_type(&b.p.events, b.p.events.marker_type));
	built__done(&b);
}

/* mark(VALUES): str(argN) puts the string field into auxtrig:mark; at an exit the entry's arguments */
static void test_record_plan_mark_values(void **state)
{
	const struct rec_event *mark;
	struct built b;

	BUILD(&b, "--on", "syscall:openat:exit if ret < 0:mark(str(arg1), ret),once", "--on",
	      "syscall:openat:enter:mark(arg0, nr)");
	assert_int_equal(b.err, 0);
	assert_int_equal(b.p.triggers[0].t.action, GATE_ACT_MARK);
	assert_int_equal(b.p.triggers[0].t.mark_str, 2);
	assert_int_equal(b.p.triggers[0].t.entry_args, 1);
	assert_int_equal(b.p.triggers[0].t.policy, GATE_POLICY_ONCE);
	assert_non_null(b.p.triggers[0].cond);
	assert_int_equal(b.p.triggers[1].t.mark_str, 0);
	assert_int_equal(b.p.triggers[1].t.entry_args, 0); /* at an entry: the hit's own */
	mark = event(&b.p, "auxtrig", "mark");
	assert_int_equal(mark->fmt.id, b.p.mark_type);
	assert_int_equal(mark->fmt.size, 76);
	assert_non_null(strstr(mark->own_format, "field:__data_loc char[] str;\toffset:72;\tsize:4;"));
	assert_non_null(strstr(mark->own_format, "str=\\\"%s\\\"\", REC->trigger"));
	built__done(&b);
	/* without str(): the mark as it always was */
	BUILD(&b, "--on", "syscall:openat:exit:mark(ret)");
	assert_int_equal(b.err, 0);
	assert_null(strstr(event(&b.p, "auxtrig", "mark")->own_format, "str"));
	assert_int_equal(event(&b.p, "auxtrig", "mark")->fmt.size, 72);
	built__done(&b);

	BUILD(&b, "--on", "syscall:openat:exit:mark(str(arg1)");
	built__refused(&b, -EINVAL, "mark( has no closing ')'");
	BUILD(&b, "--on", "syscall:openat:exit:mark()");
	built__refused(&b, -EINVAL, "mark(): name the values");
	BUILD(&b, "--on", "syscall:openat:exit:mark(str(arg1), str(arg2))");
	built__refused(&b, -EINVAL, "one str() per mark");
	BUILD(&b, "--on", "syscall:openat:exit:mark(str(arg6))");
	built__refused(&b, -EINVAL, "'str(arg6)' is not a value a mark carries: str(argN), argN, ret or nr");
	BUILD(&b, "--on", "syscall:openat:enter:mark(ret)");
	built__refused(&b, -EINVAL, "mark(ret): 'ret' is known only at a syscall's exit point");
	BUILD(&b, "--on", "tp:sched:sched_switch:mark(str(arg0))");
	built__refused(&b, -EINVAL, "mark(...) takes values only at syscall points");
}

static void test_record_plan_targets_buffers_control(void **state)
{
	struct built b;
	char pid[32];

	snprintf(pid, sizeof(pid), "%d,1", getpid());
	BUILD_NO_TARGET(&b, "-e", "sched:sched_switch", "-p", pid, "-C", "0", "-m", "64,256",
			"--control", "fifo:/tmp/ctl,/tmp/ack", "--min-duration", "1ms", "--max-duration", "2s",
			"-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_int_equal(b.p.nr_pids, 2);
	assert_int_equal(b.p.pids[0], getpid());
	assert_int_equal(b.p.pids[1], 1);
	assert_false(b.p.threads);
	assert_null(b.p.command);
	assert_true(b.p.cpus_given);
	assert_true(b.p.cpu_mask[0]);
	for (int i = 1; i < b.p.nr_possible; i++)
		assert_false(b.p.cpu_mask[i]);
	assert_int_equal(b.p.mmap_pages, 64);
	assert_int_equal(b.p.aux_pages, 256);
	assert_int_equal(b.p.control.kind, PLAN_CONTROL_FIFO);
	assert_string_equal(b.p.control.ctl, "/tmp/ctl");
	assert_string_equal(b.p.control.ack, "/tmp/ack");
	assert_true(b.p.min_duration_ns == 1000000ULL && b.p.max_duration_ns == 2000000000ULL);
	built__done(&b);

	BUILD_NO_TARGET(&b, "-e", "sched:sched_switch", "-t", "7", "--control", "fd:5");
	assert_int_equal(b.err, 0);
	assert_true(b.p.threads);
	assert_int_equal(b.p.control.kind, PLAN_CONTROL_FD);
	assert_int_equal(b.p.control.ctl_fd, 5);
	assert_int_equal(b.p.control.ack_fd, -1);
	built__done(&b);

	BUILD(&b, "-e", "intel_pt//u", "--dry-run", "--sysfs-root", pt_root);
	assert_int_equal(b.err, 0);
	assert_string_equal(b.p.aux_event, "intel_pt//u");
	assert_true(b.p.dry_run);
	assert_int_equal(b.p.events.nr, 0);
	built__done(&b);
}

static void test_record_plan_uprobe_window(void **state)
{
	struct built b;

	BUILD(&b, "-w", "uprobe:/proc/self/exe:main", "--where", "tid != 1");
	assert_int_equal(b.err, 0);
	assert_int_equal(b.p.windows[0].kind, WINDOW_UPROBE);
	assert_non_null(b.p.where);
	assert_int_equal(b.p.uprobe_enter_type, event(&b.p, "auxtrig", "uprobe_enter")->fmt.id);
	assert_int_equal(b.p.uprobe_exit_type, event(&b.p, "auxtrig", "uprobe_exit")->fmt.id);
	built__done(&b);
}

/* ---- refusals ------------------------------------------------------------------ */

static void test_record_plan_refuses_bad_options(void **state)
{
	struct built b;

	BUILD(&b, "-w", "nonsense");
	built__refused(&b, -EINVAL, "--window 'nonsense'");
	BUILD(&b, "-e", "intel_pt//u", "-e", "arm_spe//");
	built__refused(&b, -EINVAL, "only one hardware trace event per run");
	BUILD(&b, "-e", "sched:sched_switch", "-o", "");
	built__refused(&b, -EINVAL, "-o needs a file name");
	BUILD(&b, "-e", "sched:sched_switch", "-m", "100");
	built__refused(&b, -EINVAL, "-m 100: expected a power of 2");
	BUILD(&b, "-e", "sched:sched_switch", "-m", "128,3");
	built__refused(&b, -EINVAL, "-m 128,3: expected a power of 2");
	BUILD(&b, "-e", "sched:sched_switch", "-S1");
	built__refused(&b, -EINVAL, "-S1: expected [e][SIZE]");
	BUILD(&b, "-e", "sched:sched_switch", "--min-duration", "5");
	built__refused(&b, -EINVAL, "--min-duration 5: expected a duration with its unit");
	BUILD(&b, "-e", "sched:sched_switch", "--bogus");
	built__refused(&b, -EINVAL, "(try: auxtrig record --help)");
	BUILD(&b, "-e", "sched:sched_switch", "-p", "1");
	built__refused(&b, -EINVAL, "give one target");
	BUILD_NO_TARGET(&b, "-e", "sched:sched_switch", "-a", "-t", "1");
	built__refused(&b, -EINVAL, "give one target");
	BUILD_NO_TARGET(&b, "-e", "sched:sched_switch");
	built__refused(&b, -EINVAL, "nothing to record: give a command after --");
	BUILD_NO_TARGET(&b, "-e", "sched:sched_switch", "-p", "12,x");
	built__refused(&b, -EINVAL, "-p 12,x: expected PID[,PID...]");
	BUILD_NO_TARGET(&b, "-e", "sched:sched_switch", "-t", "0");
	built__refused(&b, -EINVAL, "-t 0: expected TID[,TID...]");
	BUILD(&b, "-e", "sched:sched_switch", "--control", "pipe:x");
	built__refused(&b, -EINVAL, "--control pipe:x: expected fifo:CTL[,ACK] or fd:CTL[,ACK]");
	BUILD(&b, "-e", "sched:sched_switch", "--control", "fd:x");
	built__refused(&b, -EINVAL, "--control fd:x: expected");
	BUILD(&b, "-e", "sched:sched_switch", "-C", "9999");
	built__refused(&b, -EINVAL, "-C 9999: expected a list of CPUs");
}

static void test_record_plan_refuses_bad_windows_and_events(void **state)
{
	const char *many[2 * 65 + 1];
	struct built b;

	for (int i = 0; i < 65; i++) {
		many[2 * i] = "-w";
		many[2 * i + 1] = "syscall:openat";
	}
	many[130] = NULL;
	built__build(&b, many, true);
	built__refused(&b, -EINVAL, "too many windows: 65, at most 64");
	BUILD(&b, "-w", "prog");
	built__refused(&b, -EINVAL, "--window prog: the window of a trigger program needs --trigger-prog");
	BUILD(&b, "-w", "syscall:nosuchcall");
	built__refused(&b, -EINVAL, "--window syscall:nosuchcall: unknown syscall: there is no tracepoint syscalls:sys_enter_nosuchcall");
	BUILD(&b, "-w", "tp:sched:nope..tp:sched:sched_switch");
	built__refused(&b, -EINVAL, "unknown tracepoint: there is no tracepoint sched:nope");
	BUILD(&b, "-e", "sched");
	built__refused(&b, -EINVAL, "-e sched: expected a tracepoint as SYSTEM:NAME");
	BUILD(&b, "-e", "sched:nothing_*");
	built__refused(&b, -EINVAL, "-e sched:nothing_*: unknown tracepoint: nothing matches");
	BUILD(&b, "--dry-run");
	built__refused(&b, -EINVAL, "nothing to record: give --window, -e or an --on ...:mark");
}

static void test_record_plan_refuses_bad_conditions(void **state)
{
	struct built b;

	BUILD(&b, "-e", "sched:sched_switch", "--where", "tid == 1");
	built__refused(&b, -EINVAL, "--where selects windows: give at least one --window");
	BUILD(&b, "-w", "syscall:openat", "--where", "tid ==");
	built__refused(&b, -EINVAL, "--where 'tid =='");
	BUILD(&b, "-w", "syscall:openat", "--where", "ret < 0");
	built__refused(&b, -EINVAL, "'ret' is known only when a window ends");
	BUILD(&b, "-w", "syscall:openat:exit..sched:sched_switch", "--where", "ret < 0");
	assert_int_equal(b.err, -EINVAL); /* sched:sched_switch is not a point: tp:sched:sched_switch */
	built__done(&b);
	BUILD(&b, "-w", "syscall:openat:exit..tp:sched:sched_switch", "--where", "ret < 0");
	assert_int_equal(b.err, 0); /* every window opens at an exit: ret is known */
	built__done(&b);
}

static void test_record_plan_refuses_bad_triggers(void **state)
{
	const char *many[2 * 9 + 1];
	struct built b;

	for (int i = 0; i < 9; i++) {
		many[2 * i] = "--on";
		many[2 * i + 1] = "syscall:openat:exit:mark";
	}
	many[18] = NULL;
	built__build(&b, many, true);
	built__refused(&b, -EINVAL, "too many --on triggers: 9, at most 8");
	BUILD(&b, "--on", "syscall:openat:exit");
	built__refused(&b, -EINVAL, "expected POINT [if EXPR]:ACTION with ACTION snapshot, stop, mark, resume or pause");
	BUILD(&b, "-S", "--on", "syscall:openat:exit:snapshot+2");
	built__refused(&b, -EINVAL, "'+2': expected a delay with its unit");
	BUILD(&b, "--on", "syscall:openat:exit:mark+2ms");
	built__refused(&b, -EINVAL, "only snapshot and stop take a delay");
	BUILD(&b, "--on", "syscall:openat:exit:mark,limit:0/s");
	built__refused(&b, -EINVAL, "expected limit:N/s with N from 1");
	BUILD(&b, "--on", "syscall:openat:exit:mark,once,every:2");
	built__refused(&b, -EINVAL, "only one of once, every:N, after:N");
	BUILD(&b, "--on", "syscall:openat:exit:mark,sometimes");
	built__refused(&b, -EINVAL, "unknown policy 'sometimes'");
	BUILD(&b, "--on", "syscall:openat:exit:mark,every:0");
	built__refused(&b, -EINVAL, "'every:0' needs a count of 1 or more");
	BUILD(&b, "--on", "bogus:thing:mark");
	built__refused(&b, -EINVAL, "--on 'bogus:thing:mark': ");
	BUILD(&b, "--on", "syscall:nosuch:exit:mark");
	built__refused(&b, -EINVAL, "unknown syscall: there is no tracepoint syscalls:sys_exit_nosuch");
	BUILD(&b, "--on", "syscall:openat:exit:snapshot");
	built__refused(&b, -EINVAL, "the snapshot action needs the flight recorder: add -S");
	BUILD(&b, "--on", "syscall:openat:enter if ret < 0:mark");
	built__refused(&b, -EINVAL, "'ret' is known only at a syscall's exit point");
	BUILD(&b, "--on", "syscall:openat:exit if arg0 == 1:mark");
	built__refused(&b, -EINVAL, "'arg0' is known only at a syscall's entry point");
	BUILD(&b, "--on", "tp:sched:sched_switch if common_pid == 1:mark");
	built__refused(&b, -EINVAL, "'common_pid' is not readable from BPF");
	BUILD(&b, "--on", "uprobe:/proc/self/exe:main if nr == 1:mark");
	built__refused(&b, -EINVAL, "'nr' is known only at syscall points");
}

static void test_record_plan_refuses_bad_durations(void **state)
{
	struct built b;

	BUILD(&b, "-w", "syscall:openat", "--max-duration", "0ns");
	built__refused(&b, -EINVAL, "--max-duration 0ns: a window lasts more than 0 ns");
	BUILD(&b, "-w", "syscall:openat", "--min-duration", "2ms", "--max-duration", "1ms");
	built__refused(&b, -EINVAL, "--min-duration 2ms is longer than --max-duration 1ms");
	BUILD(&b, "-e", "sched:sched_switch", "--min-duration", "1ms");
	built__refused(&b, -EINVAL, "--min-duration selects windows by how long they lasted");
	BUILD(&b, "-w", "syscall:openat", "-e", "intel_pt//u", "--max-duration", "1ms");
	built__refused(&b, -EINVAL, "--max-duration: hardware trace (-e intel_pt//u) cannot be held back per window");
	BUILD(&b, "-w", "syscall:openat", "--trigger-prog", "x.bpf.o", "--min-duration", "1ms");
	built__refused(&b, -EINVAL, "--min-duration: windows of --trigger-prog programs are not timed yet");

	/* the message promises 64K to 1T: both ends are taken */
	BUILD(&b, "-w", "syscall:openat", "--min-duration", "1ms", "--hold-size=1T");
	assert_int_equal(b.err, 0);
	assert_true(b.a.hold_size == 1ULL << 40);
	built__done(&b);
	BUILD(&b, "-w", "syscall:openat", "--min-duration", "1ms", "--hold-size=64K");
	assert_int_equal(b.err, 0);
	built__done(&b);
	BUILD(&b, "-w", "syscall:openat", "--min-duration", "1ms", "--hold-size=2T");
	built__refused(&b, -EINVAL, "--hold-size 2T: expected a size from 64K to 1T");
}

/* -S takes its size attached, as perf's: a detached size was taken as the command ("nothing to record"). */
static void test_record_plan_snapshot_size_detached(void **state)
{
	struct built b;

	BUILD_NO_TARGET(&b, "-S", "64K", "-w", "syscall:openat");
	built__refused(&b, -EINVAL, "-S 64K: a snapshot size goes right after -S, as perf's does: -S64K ('64K' was taken as the command)");
	BUILD_NO_TARGET(&b, "-Se1M", "-w", "syscall:openat", "--", "true");
	assert_int_equal(b.err, 0);
	built__done(&b);
	/* a command that only looks like a size, not right after -S, is a command */
	BUILD_NO_TARGET(&b, "-S", "-w", "syscall:openat", "--", "64K");
	assert_int_equal(b.err, 0);
	built__done(&b);
}

/* ---- probe points this machine can or cannot fire ------------------------------- */

/*
 * Asked of the capabilities (caps.h), each time, with what to use instead when
 * they do not fire; both answers simulated, and the switch's answer named.
 */
static void test_record_plan_probe_points_this_machine_fires(void **state)
{
	struct built b;

	caps__simulate(CAPS_KPROBE, 1);
	caps__simulate(CAPS_HW_BREAKPOINT, 1);
	BUILD(&b, "-w", "kprobe:do_sys_openat2..syscall:openat:exit", "--on", "mem:0x1000:w:stop");
	assert_int_equal(b.err, 0);
	assert_int_equal(b.p.windows[0].start.kind, POINT_KPROBE);
	assert_int_equal(b.p.triggers[0].pt.kind, POINT_MEM);
	built__done(&b);

	caps__simulate(CAPS_KPROBE, 0);
	BUILD(&b, "-w", "kprobe:do_sys_openat2..syscall:openat:exit");
	built__refused(&b, -EINVAL, "--window 'kprobe:do_sys_openat2..syscall:openat:exit': this kernel has no kprobes "
				    "(auxtrig probe: bpf kprobe missing); use a syscall:NAME:enter, syscall:NAME:exit or "
				    "tp:SYS:EVENT point instead");
	BUILD(&b, "-w", "syscall:openat", "--on", "kretprobe:do_sys_openat2:mark");
	built__refused(&b, -EINVAL, "this kernel has no kprobes");
	caps__simulate(CAPS_HW_BREAKPOINT, 0);
	BUILD(&b, "-w", "mem:0x1000:w..syscall:openat:exit");
	built__refused(&b, -EINVAL, "--window 'mem:0x1000:w..syscall:openat:exit': hardware breakpoints do not fire on "
				    "this machine (auxtrig probe: hw breakpoints missing); use uprobe:PATH:SYMBOL");

	/* AUXTRIG_CAPS_OFF reports them missing, and the message says who did */
	caps__simulate(CAPS_KPROBE, -1);
	caps__simulate(CAPS_HW_BREAKPOINT, -1);
	caps__set_off(1u << CAPS_KPROBE | 1u << CAPS_HW_BREAKPOINT);
	BUILD(&b, "-w", "kprobe:do_sys_openat2..syscall:openat:exit");
	built__refused(&b, -EINVAL, "(auxtrig probe: bpf kprobe missing, reported so by AUXTRIG_CAPS_OFF)");
	BUILD(&b, "-w", "mem:0x1000:w..syscall:openat:exit");
	built__refused(&b, -EINVAL, "(auxtrig probe: hw breakpoints missing, reported so by AUXTRIG_CAPS_OFF)");
	caps__set_off(0);
	caps__simulate_all(1);
}

/* Each parse starts afresh, even after one that stopped inside an option cluster ("-hv"). */
static void test_record_plan_each_parse_starts_afresh(void **state)
{
	char *help[] = { "record", "-hv", NULL };
	struct record_args a;
	struct built b;

	assert_int_equal(record_args__parse(&a, 2, help), 0);
	assert_true(a.help);
	assert_int_equal(a.verbose, 0); /* -h: the usage, nothing else */
	record_args__exit(&a);
	BUILD(&b, "-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_int_equal(b.a.verbose, 0);
	assert_int_equal(b.p.verbose, 0);
	built__done(&b);
}

/* ---- hardware trace: -e PMU/TERMS/MODS, resolved in the plan ---------------------- */

static void test_record_plan_hardware_trace_resolved(void **state)
{
	size_t page = sysconf(_SC_PAGESIZE);
	struct built b;

	/* Intel PT: perf's defaults for this CPU under the terms, "u", the watermark of -m's AUX size */
	BUILD(&b, "-e", "intel_pt/cyc,cyc_thresh=2/u", "--sysfs-root", pt_root, "-m", "16,8", "-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_non_null(b.p.aux);
	assert_non_null(b.p.pmus);
	assert_int_equal(b.p.aux->kind, AUX_PMU_INTEL_PT);
	assert_string_equal(b.p.aux->pmu->name, "intel_pt");
	assert_int_equal(b.p.aux->attr.type, 8);
	assert_int_equal(b.p.aux->attr.size, 128);
	assert_true(b.p.aux->attr.config & 1);		/* pt, a default */
	assert_true(b.p.aux->attr.config & (1 << 1));	/* cyc, the term */
	assert_true(b.p.aux->attr.exclude_kernel && !b.p.aux->attr.exclude_user);
	assert_true(b.p.aux->attr.disabled);
	assert_int_equal(b.p.aux->attr.aux_watermark, 8 * page / 4);
	assert_string_equal(b.p.aux->name, "intel_pt/cyc,cyc_thresh=2/u");
	built__done(&b);

	/* snapshot mode: no watermark */
	BUILD(&b, "-e", "intel_pt//", "--sysfs-root", pt_root, "-S", "-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_int_equal(b.p.aux->attr.aux_watermark, 0);
	built__done(&b);

	/* CoreSight: the sink by name, contextid and timestamp for per-CPU recording */
	BUILD(&b, "-e", "cs_etm/@tmc_etr0/k", "--sysfs-root", cs_root);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.p.aux->kind, AUX_PMU_CS_ETM);
	assert_string_equal(b.p.aux->sink, "tmc_etr0");
	assert_int_equal(b.p.aux->attr.config2, 0x7a5a6a12);
	assert_true(b.p.aux->attr.exclude_user && !b.p.aux->attr.exclude_kernel);
	built__done(&b);

	/* Arm SPE: "arm_spe" finds arm_spe_0, the sampling interval from its caps */
	BUILD(&b, "-e", "arm_spe/load_filter=1/", "--sysfs-root", spe_root);
	assert_int_equal(b.err, 0);
	assert_string_equal(b.p.aux->pmu->name, "arm_spe_0");
	assert_int_equal(b.p.aux->attr.sample_period, 1024);
	built__done(&b);

	/* no -e PMU//: nothing resolved, no PMU read */
	BUILD(&b, "-w", "syscall:openat");
	assert_int_equal(b.err, 0);
	assert_null(b.p.aux);
	assert_null(b.p.pmus);
	built__done(&b);
}

/* A copy of the CoreSight fixture whose CPU 3 has no timestamps (TRCIDR0.TSSIZE 0). */
static char *cs_without_timestamps(void)
{
	char *dir = test_tmpdir__new(), cmd[8300], path[4200];
	FILE *f;

	assert_non_null(dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/.' '%s/'", cs_root, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/cs_etm/cpu3/trcidr/trcidr0", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "0x00000ea1\n");
	fclose(f);
	return dir;
}

/* Every refusal of the spec, from the command line, before anything is opened. */
static void test_record_plan_refuses_bad_hardware_trace(void **state)
{
	char long_spec[200], *cs_nots;
	struct built b;

	BUILD(&b, "-e", "intel_pt//u", "-e", "cs_etm//", "--sysfs-root", pt_root);
	built__refused(&b, -EINVAL, "-e cs_etm//: only one hardware trace event per run (already: intel_pt//u)");
	BUILD(&b, "-e", "intel_pt/u", "--sysfs-root", pt_root);
	built__refused(&b, -EINVAL, "intel_pt/u: expected PMU/terms/modifiers, e.g. intel_pt//u");
	memset(long_spec, 't', sizeof(long_spec) - 1);
	long_spec[sizeof(long_spec) - 1] = '\0';
	memcpy(long_spec, "intel_pt/", 9);
	long_spec[sizeof(long_spec) - 2] = '/';
	BUILD(&b, "-e", long_spec, "--sysfs-root", pt_root);
	built__refused(&b, -EINVAL, "event spec too long: intel_pt/ttt");
	BUILD(&b, "-e", "cs_etm//u", "--sysfs-root", pt_root);
	built__refused(&b, -ENOENT, "cannot use cs_etm: no such PMU on this machine (try: auxtrig probe)");
	BUILD(&b, "-e", "intel_pt//u", "--sysfs-root", no_aux_root);
	built__refused(&b, -ENOENT, "cannot use intel_pt: no such PMU on this machine");
	/* A root that is not there is a mistake, not a machine without PMUs (issue #13, 7). */
	BUILD(&b, "-e", "intel_pt//u", "--sysfs-root", "/nonexistent-auxtrig-sysfs");
	built__refused(&b, -EINVAL, "--sysfs-root /nonexistent-auxtrig-sysfs: No such file or directory");
	BUILD(&b, "-e", "uprobe//", "--sysfs-root", pt_root);
	built__refused(&b, -EINVAL, "cannot use uprobe//: uprobe does not record through the AUX area");
	BUILD(&b, "-e", "intel_pt/frobnicate/u", "--sysfs-root", pt_root);
	built__refused(&b, -ENOENT, "intel_pt has no term 'frobnicate' (valid terms: ");
	BUILD(&b, "-e", "intel_pt/mtc_period=x/u", "--sysfs-root", pt_root);
	built__refused(&b, -EINVAL, "intel_pt/mtc_period=x/u: term mtc_period needs a number, not 'x'");
	BUILD(&b, "-e", "intel_pt/mtc_period=2/u", "--sysfs-root", pt_root);
	built__refused(&b, -ERANGE, "invalid mtc_period=2 for intel_pt: this CPU supports 0, 3, 6, 9");
	BUILD(&b, "-e", "intel_pt/cyc_thresh=99/u", "--sysfs-root", pt_root);
	built__refused(&b, -ERANGE, "out of range");
	BUILD(&b, "-e", "intel_pt//x", "--sysfs-root", pt_root);
	built__refused(&b, -EINVAL, "intel_pt//x: unknown modifier 'x' (valid: u, k)");
	BUILD(&b, "-e", "cs_etm/@tmc_etr9/", "--sysfs-root", cs_root);
	built__refused(&b, -EINVAL, "cs_etm/@tmc_etr9/: no sink 'tmc_etr9' (sinks: tmc_etf0, tmc_etr0)");
	BUILD(&b, "-e", "cs_etm/cc_threshold=4/", "--sysfs-root", cs_root);
	built__refused(&b, -EOPNOTSUPP, "cs_etm term cc_threshold sets config3, which auxtrig cannot write yet");
	cs_nots = cs_without_timestamps();
	BUILD(&b, "-e", "cs_etm//", "--sysfs-root", cs_nots);
	built__refused(&b, -EOPNOTSUPP, "cs_etm: timestamps aren't supported on cpu3");
	test_tmpdir__delete(cs_nots);
	/* one hardware event and it cannot be timed per window */
	BUILD(&b, "-e", "intel_pt//u", "--sysfs-root", pt_root, "-w", "syscall:openat", "--min-duration", "1ms");
	built__refused(&b, -EINVAL, "--min-duration: hardware trace (-e intel_pt//u) cannot be held back per window");
}

/* ---- windows, translated once ---------------------------------------------------- */

static void test_window_map_masks_and_aux_triggers(void **state)
{
	struct window_map_aux aux = { .on = true };
	struct window_map m;
	struct built b;

	BUILD(&b, "-e", "intel_pt//u", "--sysfs-root", pt_root, "-w", "syscall:openat", "-w",
	      "tp:sched:sched_switch..syscall:openat:exit", "-w", "uprobe:/proc/self/exe:main");
	assert_int_equal(b.err, 0);
	assert_int_equal(window_map__build(&m, &b.p, &aux), 0);
	/* window 0 opens at the entry, closes at the exit; window 1 opens at sched_switch, closes at the exit */
	assert_true(m.tp[0].open_mask == 1 && m.tp[0].close_mask == 0);
	assert_true(m.tp[1].open_mask == 0 && m.tp[1].close_mask == 3);
	assert_true(m.tp[2].open_mask == 2 && m.tp[2].close_mask == 0);
	assert_int_equal(m.nr_points, 0);
	assert_int_equal(m.nr_calls, 1);
	assert_int_equal(m.calls[0].window, 2);
	/* the same windows, as the AUX group's members: resume at each start, pause at each end */
	assert_int_equal(m.nr_aux, 6);
	assert_true(m.aux[0].kind == AUX_TRIGGER_TRACEPOINT && m.aux[0].id == ENTER_OPENAT &&
		    m.aux[0].action == AUXTRIG_AUX_RESUME);
	assert_string_equal(m.aux[0].name, "syscalls:sys_enter_openat");
	assert_true(m.aux[1].id == EXIT_OPENAT && m.aux[1].action == AUXTRIG_AUX_PAUSE);
	assert_true(m.aux[2].id == SCHED_SWITCH && m.aux[2].action == AUXTRIG_AUX_RESUME);
	assert_true(m.aux[3].id == EXIT_OPENAT && m.aux[3].action == AUXTRIG_AUX_PAUSE);
	assert_true(m.aux[4].kind == AUX_TRIGGER_UPROBE && !m.aux[4].retprobe && m.aux[4].window == 2 &&
		    m.aux[4].action == AUXTRIG_AUX_RESUME);
	assert_true(m.aux[5].retprobe && m.aux[5].action == AUXTRIG_AUX_PAUSE && m.aux[5].offset == m.aux[4].offset);
	window_map__exit(&m);
	built__done(&b);
}

static void test_window_map_probe_ends_and_syscall_any(void **state)
{
	struct window_map_aux aux = { .on = false };
	struct window_map m;
	struct built b;

	BUILD(&b, "-w", "uprobe:/proc/self/exe:main..syscall:openat:exit", "-e", "syscalls:sys_enter_openat",
	      "--on", "syscall:openat:enter:resume");
	assert_int_equal(b.err, 0);
	assert_int_equal(window_map__build(&m, &b.p, &aux), 0);
	assert_int_equal(m.nr_points, 1);
	assert_int_equal(m.points[0].pt->kind, POINT_UPROBE);
	assert_true(m.points[0].open_mask == 1 && m.points[0].close_mask == 0);
	assert_true(m.tp[0].close_mask == 1); /* sys_exit_openat, the window's end, is event 0 */
	assert_int_equal(m.nr_aux, 0);
	window_map__exit(&m);
	built__done(&b);

	/* hardware trace refuses windows between user probe points */
	BUILD(&b, "-e", "intel_pt//u", "--sysfs-root", pt_root, "-w", "uprobe:/proc/self/exe:main..syscall:openat:exit");
	assert_int_equal(b.err, 0);
	aux.on = true;
	assert_int_equal(window_map__build(&m, &b.p, &aux), -EINVAL);
	window_map__exit(&m);
	built__done(&b);

	/* but takes kprobe/kretprobe ends: kprobe PMU members that resume and pause, beside the gate's points */
	caps__simulate(CAPS_KPROBE, 1);
	BUILD(&b, "-e", "intel_pt//u", "--sysfs-root", pt_root, "-w", "kprobe:do_sys_openat2+4..kretprobe:do_sys_openat2",
	      "-w", "kprobe:vfs_read..syscall:openat:exit");
	assert_int_equal(b.err, 0);
	assert_int_equal(window_map__build(&m, &b.p, &aux), 0);
	assert_int_equal(m.nr_points, 3);
	assert_int_equal(m.nr_aux, 4);
	assert_int_equal(m.aux[0].kind, AUX_TRIGGER_KPROBE);
	assert_int_equal(m.aux[0].action, AUXTRIG_AUX_RESUME);
	assert_string_equal(m.aux[0].path, "do_sys_openat2");
	assert_true(m.aux[0].offset == 4 && !m.aux[0].retprobe);
	assert_string_equal(m.aux_names[0], "kprobe:do_sys_openat2");
	assert_int_equal(m.aux[1].kind, AUX_TRIGGER_KPROBE);
	assert_int_equal(m.aux[1].action, AUXTRIG_AUX_PAUSE);
	assert_true(m.aux[1].retprobe && m.aux[1].offset == 0);
	assert_string_equal(m.aux_names[1], "kretprobe:do_sys_openat2");
	assert_int_equal(m.aux[2].kind, AUX_TRIGGER_KPROBE);
	assert_int_equal(m.aux[3].kind, AUX_TRIGGER_TRACEPOINT);
	assert_int_equal(m.aux[3].action, AUXTRIG_AUX_PAUSE);
	assert_string_equal(m.aux_names[3], "syscalls:sys_exit_openat");
	window_map__exit(&m);
	built__done(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_plan_syscall_window_and_events),
		cmocka_unit_test(test_record_plan_triggers_and_own_events),
		cmocka_unit_test(test_record_plan_callchain),
		cmocka_unit_test(test_record_plan_mark_values),
		cmocka_unit_test(test_record_plan_targets_buffers_control),
		cmocka_unit_test(test_record_plan_uprobe_window),
		cmocka_unit_test(test_record_plan_refuses_bad_options),
		cmocka_unit_test(test_record_plan_refuses_bad_windows_and_events),
		cmocka_unit_test(test_record_plan_refuses_bad_conditions),
		cmocka_unit_test(test_record_plan_refuses_bad_triggers),
		cmocka_unit_test(test_record_plan_refuses_bad_durations),
		cmocka_unit_test(test_record_plan_snapshot_size_detached),
		cmocka_unit_test(test_record_plan_probe_points_this_machine_fires),
		cmocka_unit_test(test_record_plan_each_parse_starts_afresh),
		cmocka_unit_test(test_record_plan_hardware_trace_resolved),
		cmocka_unit_test(test_record_plan_refuses_bad_hardware_trace),
		cmocka_unit_test(test_window_map_masks_and_aux_triggers),
		cmocka_unit_test(test_window_map_probe_ends_and_syscall_any),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
