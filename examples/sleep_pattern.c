// SPDX-License-Identifier: BSD-2-Clause
/*
 * sleep_pattern: numbered calls of known durations, for the tests of timed
 * windows (--min-duration, --max-duration) and delayed actions (snapshot+T).
 *
 * For each character k of PATTERN (k = 0, 1, ...), one step:
 *   getpid()
 *   close(BASE + k)                    fails with EBADF; the fd is the number
 *   clock_nanosleep(D)                 L: 250 ms, S: 60 ms, M: 3 ms, F: 0.1 ms
 *   getppid()
 * so a window from getpid to getppid lasts about D, and the close inside it
 * says which step it was. At the end it prints, per step, "k BEFORE AFTER":
 * the CLOCK_MONOTONIC times (bpf_ktime_get_ns()'s clock) just before and just
 * after its close, between which the close's tracepoints fired.
 *
 * usage: sleep_pattern PATTERN [BASE]   (BASE: default 1000000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long long *at;
	long base = argc == 3 ? atol(argv[2]) : 1000000;
	size_t n;

	if (argc < 2 || argc > 3 || !(n = strlen(argv[1])) || strspn(argv[1], "LSMF") != n || base <= 0) {
		fprintf(stderr, "usage: sleep_pattern PATTERN [BASE] (PATTERN of L: 250 ms, S: 60 ms, M: 3 ms, F: 0.1 ms)\n");
		return 2;
	}
	at = calloc(2 * n, sizeof(*at));
	if (!at)
		return 1;
	for (size_t k = 0; k < n; k++) {
		char c = argv[1][k];
		long ns = c == 'L' ? 250000000 : c == 'S' ? 60000000 : c == 'M' ? 3000000 : 100000;
		struct timespec d = { 0, ns }, now;

		syscall(SYS_getpid);
		clock_gettime(CLOCK_MONOTONIC, &now);
		at[2 * k] = now.tv_sec * 1000000000ULL + now.tv_nsec;
		syscall(SYS_close, base + k);
		clock_gettime(CLOCK_MONOTONIC, &now);
		at[2 * k + 1] = now.tv_sec * 1000000000ULL + now.tv_nsec;
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &d, NULL);
		syscall(SYS_getppid);
	}
	for (size_t k = 0; k < n; k++)
		printf("%zu %llu %llu\n", k, at[2 * k], at[2 * k + 1]);
	free(at);
	return 0;
}
