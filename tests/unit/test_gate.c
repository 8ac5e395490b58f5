// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate loader (user/record/gate.c) from command lines, without a kernel:
 * for a plan (and its windows, translated once), what it configures (the
 * BPF object's rodata, what each tracepoint and probe point means, the
 * triggers, which programs are loaded) and what it attaches, in which
 * order, as gate__describe() states it before gate__load(). Loading and
 * attaching for real is tests/kernel/ (test_gate_points, test_record_*).
 * Tracepoints come from tests/fixtures/tracefs: syscalls:sys_enter_openat
 * (782), syscalls:sys_exit_openat (781), sched:sched_switch (372).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/record/gate.h"
#include "auxtrig/record/window_map.h"
#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/tracefs.h"
#include "perf_oracle.h"
#include "plan_fixture.h"

struct gated {
	struct built b;
	struct window_map m;
	char *text;	/* gate__describe() */
};

static int setup(void **state)
{
	tracefs__set_root(test_fixture_path("tracefs"));
	caps__simulate_all(1);	/* a machine that offers everything; tests take each away */
	return 0;
}

static int teardown(void **state)
{
	tracefs__set_root(NULL);
	return 0;
}

/* The plan of "record @args [-- true]", its windows translated, the gate configured and described. */
static void gate_of(struct gated *t, const char *const *args, bool edges, bool veto)
{
	struct window_map_aux aux = {};
	bool target = true;
	struct gate *g;
	size_t len = 0;
	FILE *f;

	for (const char *const *a = args; *a; a++)
		if (!strcmp(*a, "-t") || !strcmp(*a, "-p"))
			target = false; /* the target is given: no command */
	built__build(&t->b, args, target);
	if (t->b.err)
		fail_msg("the plan was refused: %s", t->b.msg);
	assert_int_equal(window_map__build(&t->m, &t->b.p, &aux), 0);
	g = gate__open_plan(&t->b.p, &t->m);
	assert_non_null(g);
	if (edges)
		gate__signal_edges(g);
	if (veto)
		gate__aux_veto(g);
	f = open_memstream(&t->text, &len);
	assert_non_null(f);
	assert_true(gate__describe(g, f) > 0);
	fclose(f);
	gate__close(g);
}

#define GATE(t, ...) gate_of(t, (const char *const[]){ __VA_ARGS__, NULL }, false, false)

static void gated_exit(struct gated *t)
{
	window_map__exit(&t->m);
	built__done(&t->b);
	free(t->text);
}

/* The description holds @line, whole. */
static void has(const struct gated *t, const char *line)
{
	const char *p = t->text;
	size_t n = strlen(line);

	for (; (p = strstr(p, line)); p += n)
		if ((p == t->text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return;
	fail_msg("no line \"%s\" in:\n%s", line, t->text);
}

static void lacks(const struct gated *t, const char *fragment)
{
	if (strstr(t->text, fragment))
		fail_msg("\"%s\" should not be in:\n%s", fragment, t->text);
}

/* The index of @line among the "attach N:" lines (it must be there). */
static int attach_index(const struct gated *t, const char *what)
{
	const char *p = strstr(t->text, what);
	int n;

	if (!p)
		fail_msg("nothing attaches \"%s\":\n%s", what, t->text);
	while (p > t->text && p[-1] != '\n')
		p--;
	if (sscanf(p, "attach %d:", &n) != 1)
		fail_msg("\"%s\" is not on an attach line:\n%s", what, t->text);
	return n;
}

/* A syscall window and a recorded tracepoint: masks, flags, and starts attached before ends. */
static void test_gate_syscall_window(void **state)
{
	struct gated t;

	GATE(&t, "-w", "syscall:openat", "-e", "sched:sched_switch");
	has(&t, "gate: filter_targets=1 target_threads=0 filter_cpus=0 no_windows=0 have_where=0 need_elapsed=0 "
		"signal_edges=0 hold_windows=0 min_ns=0 max_ns=0");
	has(&t, "tp syscalls:sys_enter_openat id=782 size=48 dyn=0 open=0x1 close=0 trig=0 flags=user_regs,syscall_enter");
	has(&t, "tp syscalls:sys_exit_openat id=781 size=24 dyn=0 open=0 close=0x1 trig=0 flags=user_regs,syscall_exit");
	has(&t, "tp sched:sched_switch id=372 size=64 dyn=0 open=0 close=0 trig=0 flags=record");
	/* the window opens before sched_switch's hook runs, and closes after: starts, others, ends */
	assert_true(attach_index(&t, "gate_tracepoint syscalls:sys_enter_openat cookie=782") <
		    attach_index(&t, "gate_tracepoint sched:sched_switch cookie=372"));
	assert_true(attach_index(&t, "gate_tracepoint sched:sched_switch cookie=372") <
		    attach_index(&t, "gate_tracepoint syscalls:sys_exit_openat cookie=781"));
	/* children followed, the command started, threads forgotten: always, last */
	has(&t, "attach 4: gate_follow_fork sched:sched_process_fork");
	has(&t, "attach 5: gate_follow_exec sched:sched_process_exec");
	has(&t, "attach 6: gate_thread_exit sched:sched_process_exit");
	/* only the programs of what is used are loaded */
	lacks(&t, "gate_point_");
	lacks(&t, "gate_aux_veto");
	gated_exit(&t);
}

/* Two windows on one tracepoint: one entry, the masks merged; a window start attaches first. */
static void test_gate_windows_merge_per_tracepoint(void **state)
{
	struct gated t;

	GATE(&t, "-w", "syscall:openat", "-w", "tp:sched:sched_switch..syscall:openat:exit");
	has(&t, "tp syscalls:sys_exit_openat id=781 size=24 dyn=0 open=0 close=0x3 trig=0 flags=user_regs,syscall_exit");
	has(&t, "tp sched:sched_switch id=372 size=64 dyn=0 open=0x2 close=0 trig=0 flags=-");
	assert_non_null(strstr(t.text, "tp syscalls:sys_exit_openat"));
	assert_null(strstr(strstr(t.text, "tp syscalls:sys_exit_openat") + 1, "tp syscalls:sys_exit_openat"));
	has(&t, "attach 1: gate_tracepoint syscalls:sys_enter_openat cookie=782");
	has(&t, "attach 2: gate_tracepoint sched:sched_switch cookie=372");
	has(&t, "attach 3: gate_tracepoint syscalls:sys_exit_openat cookie=781");
	gated_exit(&t);
}

/* No windows, -a, -t, -C: the rodata says so. */
static void test_gate_targets_and_cpus(void **state)
{
	struct gated t;

	GATE(&t, "-e", "sched:sched_switch", "-C", "0");
	has(&t, "gate: filter_targets=1 target_threads=0 filter_cpus=1 no_windows=1 have_where=0 need_elapsed=0 "
		"signal_edges=0 hold_windows=0 min_ns=0 max_ns=0");
	gated_exit(&t);

	GATE(&t, "-e", "sched:sched_switch", "-a");
	has(&t, "gate: filter_targets=0 target_threads=0 filter_cpus=0 no_windows=1 have_where=0 need_elapsed=0 "
		"signal_edges=0 hold_windows=0 min_ns=0 max_ns=0");
	gated_exit(&t);

	gate_of(&t, (const char *const[]){ "-w", "syscall:openat", "-t", "1", NULL }, false, false);
	has(&t, "gate: filter_targets=1 target_threads=1 filter_cpus=0 no_windows=0 have_where=0 need_elapsed=0 "
		"signal_edges=0 hold_windows=0 min_ns=0 max_ns=0");
	gated_exit(&t);
}

/*
 * A function window: a uprobe at the entry and one at the return, the
 * window's number as the cookie; at an offset into the function, the entry
 * only. auxtrig's own record types for them.
 */
static void test_gate_uprobe_windows(void **state)
{
	struct gated t;

	GATE(&t, "-w", "uprobe:/proc/self/exe:main", "-w", "uprobe:/proc/self/exe:main+4", "--where", "tid != 1");
	has(&t, "gate: filter_targets=1 target_threads=0 filter_cpus=0 no_windows=0 have_where=1 need_elapsed=0 "
		"signal_edges=0 hold_windows=0 min_ns=0 max_ns=0");
	has(&t, "types: mark=0 resume=0 pause=0 uprobe_enter=65000 uprobe_exit=65001");
	has(&t, "attach 1: gate_uprobe_enter /proc/self/exe:main+0 cookie=0");
	has(&t, "attach 2: gate_uprobe_exit /proc/self/exe:main cookie=0");
	has(&t, "attach 3: gate_uprobe_enter /proc/self/exe:main+0x4 cookie=1");
	has(&t, "attach 4: gate_follow_fork sched:sched_process_fork");
	lacks(&t, "gate_uprobe_exit /proc/self/exe:main cookie=1");
	lacks(&t, "\ntp ");
	gated_exit(&t);
}

/*
 * Probe points (here a uprobe opening a window that a syscall closes, and a
 * breakpoint): keyed above the tracepoints, each loading only its kind's
 * program.
 */
static void test_gate_probe_points(void **state)
{
	struct gated t;

	GATE(&t, "-w", "uprobe:/bin/true:main..syscall:openat:exit", "-w", "mem:0x1000:w..syscall:openat:exit");
	has(&t, "point 0 uprobe:/bin/true:main open=0x1 close=0 trig=0 flags=-");
	has(&t, "point 1 mem:0x1000/4:w open=0x2 close=0 trig=0 flags=-");
	has(&t, "tp syscalls:sys_exit_openat id=781 size=24 dyn=0 open=0 close=0x3 trig=0 flags=user_regs,syscall_exit");
	has(&t, "programs: gate_tracepoint gate_fire gate_follow_fork gate_follow_exec gate_thread_exit gate_uprobe_enter "
		"gate_uprobe_exit gate_point_uprobe gate_fire_entry gate_point_mem");
	has(&t, "attach 2: gate_point_uprobe uprobe:/bin/true:main cookie=0x10000");
	has(&t, "attach 3: gate_point_mem mem:0x1000/4:w cookie=0x10001 (a breakpoint per CPU)");
	lacks(&t, "gate_point_kprobe");
	lacks(&t, "gate_point_usdt");
	gated_exit(&t);

	/* on a machine whose breakpoints never fire, a mem: end never reaches the gate */
	caps__simulate(CAPS_HW_BREAKPOINT, 0);
	BUILD(&t.b, "-w", "mem:0x1000:w..syscall:openat:exit");
	built__refused(&t.b, -EINVAL, "hardware breakpoints do not fire on this machine");
	GATE(&t, "-w", "uprobe:/bin/true:main..syscall:openat:exit");
	has(&t, "point 0 uprobe:/bin/true:main open=0x1 close=0 trig=0 flags=-");
	lacks(&t, "gate_point_mem");
	gated_exit(&t);
	caps__simulate(CAPS_HW_BREAKPOINT, 1);
}

/*
 * --on: each trigger's action, policy and delay; its bit on its point; a
 * tracepoint that only runs triggers may get a program of its own, one
 * that also closes a window keeps the shared one. $elapsed at a syscall's
 * exit stamps its entry.
 */
static void test_gate_triggers(void **state)
{
	struct gated t;

	GATE(&t, "-S", "-w", "uprobe:/bin/true:main..syscall:openat:exit",
	     "--on", "syscall:openat:exit if ret < 0:snapshot+2ms,every:3", "--on", "syscall:openat:enter:mark",
	     "--on", "uprobe:/bin/true:main:stop");
	has(&t, "types: mark=65000 resume=0 pause=0 uprobe_enter=0 uprobe_exit=0");
	has(&t, "tp syscalls:sys_exit_openat id=781 size=24 dyn=0 open=0 close=0x1 trig=0x1 flags=user_regs,syscall_exit");
	has(&t, "tp syscalls:sys_enter_openat id=782 size=48 dyn=0 open=0 close=0 trig=0x2 flags=user_regs,syscall_enter");
	has(&t, "point 0 uprobe:/bin/true:main open=0x1 close=0 trig=0x4 flags=-");
	has(&t, "trigger 1: action=1 policy=2 n=3 limit=0 delay_ns=2000000 cond=yes");
	has(&t, "trigger 2: action=3 policy=0 n=0 limit=0 delay_ns=0 cond=no");
	has(&t, "trigger 3: action=2 policy=0 n=0 limit=0 delay_ns=0 cond=no");
	has(&t, "attach 1: own-program-or-gate_tracepoint syscalls:sys_enter_openat cookie=782");
	has(&t, "attach 2: gate_tracepoint syscalls:sys_exit_openat cookie=781");
	gated_exit(&t);

	GATE(&t, "-e", "sched:sched_switch", "--on", "syscall:openat:exit if $elapsed > 1000000:stop");
	has(&t, "gate: filter_targets=1 target_threads=0 filter_cpus=0 no_windows=1 have_where=0 need_elapsed=1 "
		"signal_edges=0 hold_windows=0 min_ns=0 max_ns=0");
	has(&t, "tp syscalls:sys_enter_openat id=782 size=48 dyn=0 open=0 close=0 trig=0 flags=user_regs,syscall_enter,stamp_entry");
	has(&t, "tp syscalls:sys_exit_openat id=781 size=24 dyn=0 open=0 close=0 trig=0x1 flags=user_regs,syscall_exit");
	gated_exit(&t);
}

/* --min/--max-duration: timed windows. */
static void test_gate_timed_windows(void **state)
{
	struct gated t;

	GATE(&t, "-w", "syscall:openat", "--min-duration", "1ms", "--max-duration", "2s");
	has(&t, "gate: filter_targets=1 target_threads=0 filter_cpus=0 no_windows=0 have_where=0 need_elapsed=0 "
		"signal_edges=0 hold_windows=1 min_ns=1000000 max_ns=2000000000");
	gated_exit(&t);
}

/* Hardware trace's choices (hw_trace.c): window edges to userspace, or the veto programs loaded. */
static void test_gate_hardware_trace_paths(void **state)
{
	struct gated t;

	gate_of(&t, (const char *const[]){ "-w", "syscall:openat", NULL }, true, false);
	has(&t, "gate: filter_targets=1 target_threads=0 filter_cpus=0 no_windows=0 have_where=0 need_elapsed=0 "
		"signal_edges=1 hold_windows=0 min_ns=0 max_ns=0");
	lacks(&t, "gate_aux_veto");
	gated_exit(&t);

	gate_of(&t, (const char *const[]){ "-w", "uprobe:/proc/self/exe:main", "--where", "arg0 == 2", NULL }, false,
		true);
	has(&t, "programs: gate_tracepoint gate_fire gate_follow_fork gate_follow_exec gate_thread_exit gate_uprobe_enter "
		"gate_uprobe_exit gate_aux_veto_enter gate_aux_veto_exit");
	gated_exit(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_syscall_window),
		cmocka_unit_test(test_gate_windows_merge_per_tracepoint),
		cmocka_unit_test(test_gate_targets_and_cpus),
		cmocka_unit_test(test_gate_uprobe_windows),
		cmocka_unit_test(test_gate_probe_points),
		cmocka_unit_test(test_gate_triggers),
		cmocka_unit_test(test_gate_timed_windows),
		cmocka_unit_test(test_gate_hardware_trace_paths),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
