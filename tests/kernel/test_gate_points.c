// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate's probe-point programs against the real kernel (root): every one
 * of them (uprobe, uretprobe, usdt, kprobe, kretprobe, mem) passes the
 * verifier, and the kprobe and mem attach code runs to the kernel's answer.
 * Where `auxtrig probe` finds kprobes or firing breakpoints, the trigger at
 * such a point must count our own calls or writes; where it does not (no
 * kprobes; breakpoints that open but never fire, or cannot open at all), the
 * kprobe attach must fail and the breakpoint must stay silent or fail to
 * attach, which is why the recorder refuses those points there.
 *
 * Exit 0 pass, 1 fail, 77 skip (not root).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>

#include "auxtrig/record/gate.h"
#include "auxtrig/sys/probe.h"

static int failures;

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			failures++;                                                   \
		}                                                                     \
	} while (0)

static volatile long watched;

static struct gate *gate_new(void)
{
	struct gate_opts o = { .nr_cpus = libbpf_num_possible_cpus() };

	return gate__open(&o);
}

static const struct gate_trigger mark = { .action = GATE_ACT_MARK };

/* Every probe-point program loads: the verifier accepts them all. */
static void test_all_point_programs_load(void)
{
	static const enum point_kind kinds[] = { POINT_UPROBE, POINT_URETPROBE, POINT_USDT,
						 POINT_KPROBE, POINT_KRETPROBE, POINT_MEM };
	struct gate *g = gate_new();

	CHECK(g, "gate__open: %s", strerror(errno));
	if (!g)
		return;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct point p = { .kind = kinds[i] };

		snprintf(p.symbol, sizeof(p.symbol), "f%zu", i);
		CHECK(gate__add_point_trigger(g, &p, &mark, NULL) == (int)i, "point %s", point__kind_name(kinds[i]));
	}
	CHECK(gate__load(g) == 0, "the point programs did not load (run the test with -v for libbpf's log)");
	gate__close(g);
}

static void test_kprobe_point(void)
{
	struct point p = { .kind = POINT_KPROBE, .at_enter = true };
	bool have = probe__bpf_fires(&probe_ops__kernel, PROBE_BPF_KPROBE);
	struct gate_trigger_stats ts;
	struct gate *g = gate_new();
	int err;

	snprintf(p.symbol, sizeof(p.symbol), "do_sys_openat2");
	if (!g || gate__add_point_trigger(g, &p, &mark, NULL) != 0 || gate__load(g) ||
	    gate__add_target(g, getpid())) {
		CHECK(0, "cannot build a gate with a kprobe point");
		gate__close(g);
		return;
	}
	err = gate__attach(g);
	if (!have) {
		CHECK(err < 0, "the kprobe attached on a kernel where auxtrig probe finds no kprobes");
		gate__close(g);
		return;
	}
	CHECK(err == 0, "kprobe attach: %s", strerror(-err));
	gate__arm(g);
	for (int i = 0; i < 3; i++)
		close(open("/", O_RDONLY | O_CLOEXEC));
	gate__disarm(g);
	gate__trigger_stats(g, 0, &ts);
	CHECK(ts.evaluated >= 3, "kprobe trigger evaluated %llu times for 3 opens",
	      (unsigned long long)ts.evaluated);
	gate__close(g);
}

/* Can this machine open a hardware breakpoint at all (whether it fires or not)? */
static bool bp_opens(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_BREAKPOINT,
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (unsigned long)&watched,
		.bp_len = sizeof(watched),
		.exclude_kernel = 1,
		.disabled = 1,
	};
	int fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void test_mem_point(void)
{
	struct point p = { .kind = POINT_MEM, .offset = (unsigned long)&watched, .len = sizeof(watched),
			   .access = POINT_MEM_W };
	bool fires = probe__hw_breakpoint_fires(&probe_ops__kernel);
	struct gate_trigger_stats ts;
	struct gate *g = gate_new();
	int err;

	if (!g || gate__add_point_trigger(g, &p, &mark, NULL) != 0 || gate__load(g) ||
	    gate__add_target(g, getpid())) {
		CHECK(0, "cannot build a gate with a mem point");
		gate__close(g);
		return;
	}
	/* Breakpoints open even where they never fire: the attach runs to the end, unless they cannot open. */
	err = gate__attach(g);
	if (err && !fires && !bp_opens()) {
		gate__close(g);
		return;
	}
	CHECK(err == 0, "mem attach (a breakpoint per CPU with the gate's program): %s", strerror(-err));
	gate__arm(g);
	for (int i = 0; i < 4; i++)
		watched = i + 1;
	gate__disarm(g);
	gate__trigger_stats(g, 0, &ts);
	if (fires)
		CHECK(ts.evaluated == 4, "mem trigger evaluated %llu times for 4 writes",
		      (unsigned long long)ts.evaluated);
	else
		CHECK(ts.evaluated == 0, "breakpoints auxtrig probe finds silent fired %llu times",
		      (unsigned long long)ts.evaluated);
	gate__close(g);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-v"))
		libbpf_set_print(quiet); /* the kprobe attach fails here on purpose */
	if (geteuid() != 0) {
		printf("needs root (BPF)\n");
		return 77;
	}
	test_all_point_programs_load();
	test_kprobe_point();
	test_mem_point();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
