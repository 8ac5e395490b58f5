// SPDX-License-Identifier: BSD-2-Clause
/*
 * window_clock: windows whose times are known, for timing the edges of
 * hardware-trace windows gated from userspace (tests/kernel/test_aux_gate_fallback.c,
 * which measures the round trip from the gate's stamp to auxtrig's ioctl).
 *
 * Each round: clock_nanosleep(WINDOW_MS) between two CLOCK_MONOTONIC stamps
 * (a syscall:clock_nanosleep window known to lie between them), then GAP_MS
 * outside any window: spinning on the vDSO clock without a system call (a
 * busy CPU), or with "sleep", in nanosleep(2) (an idle one; a different
 * system call, so not a clock_nanosleep window).
 * Each gap begins with a write of its number (1, 2, ...) to the global
 * variable "gap", for windows that open at a hardware breakpoint
 * (mem:PATH:gap/8:w, tests/lab/test_lab_mem_windows).
 * After the rounds each round's stamps are printed, one line each:
 *
 *   window I BEFORE_NS AFTER_NS
 *
 * usage: window_clock [ROUNDS [WINDOW_MS [GAP_MS [spin|sleep]]]]   (defaults 5, 20, 10, spin)
 *
 * Built statically, so no dynamic loader makes system calls before main().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long gap;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	long window_ms = argc > 2 ? atol(argv[2]) : 20, gap_ms = argc > 3 ? atol(argv[3]) : 10;
	int sleep_gap = argc > 4 && !strcmp(argv[4], "sleep");
	unsigned long long (*t)[2];

	if (rounds < 0 || rounds > 100000 || window_ms < 0 || gap_ms < 0) {
		fprintf(stderr, "usage: window_clock [ROUNDS [WINDOW_MS [GAP_MS [spin|sleep]]]]\n");
		return 2;
	}
	t = calloc(rounds ? rounds : 1, sizeof(*t));
	if (!t)
		return 1;
	for (int i = 0; i < rounds; i++) {
		struct timespec w = { window_ms / 1000, (window_ms % 1000) * 1000000 };
		struct timespec g = { gap_ms / 1000, (gap_ms % 1000) * 1000000 };
		unsigned long long end;

		t[i][0] = now_ns();
		clock_nanosleep(CLOCK_MONOTONIC, 0, &w, NULL);
		t[i][1] = now_ns();
		gap = i + 1;
		if (sleep_gap)
			syscall(SYS_nanosleep, &g, NULL);
		for (end = t[i][1] + gap_ms * 1000000ULL; now_ns() < end;)
			;
	}
	for (int i = 0; i < rounds; i++)
		printf("window %d %llu %llu\n", i, t[i][0], t[i][1]);
	free(t);
	return 0;
}
