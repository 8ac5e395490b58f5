// SPDX-License-Identifier: BSD-2-Clause
/*
 * seq_demo: numbered system calls in phases, for flight-recorder tests.
 *
 * Phase p makes N calls close(1000000 + p * N + i), i = 0..N-1 (each fails
 * with EBADF), so every recorded sys_enter_close carries its sequence number
 * in its fd argument. After each phase but the last it prints
 * "phase p done" and waits for a line on standard input, so a test can take a
 * snapshot at a known point.
 *
 * With FAIL_AT, the call numbered FAIL_AT is preceded by an openat() of a
 * missing file (fails with ENOENT): an error path at a known point.
 *
 * usage: seq_demo N PHASES [FAIL_AT]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SEQ_BASE 1000000

int main(int argc, char **argv)
{
	long n, phases, fail_at = -1;
	char line[64];

	if ((argc != 3 && argc != 4) || (n = atol(argv[1])) <= 0 || (phases = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: seq_demo N PHASES [FAIL_AT]\n");
		return 2;
	}
	if (argc == 4)
		fail_at = atol(argv[3]);
	for (long p = 0; p < phases; p++) {
		for (long i = 0; i < n; i++) {
			if (p * n + i == fail_at)
				syscall(SYS_openat, AT_FDCWD, "/nonexistent/seq_demo", O_RDONLY);
			syscall(SYS_close, SEQ_BASE + p * n + i);
		}
		printf("phase %ld done\n", p);
		fflush(stdout);
		if (p + 1 < phases && !fgets(line, sizeof(line), stdin))
			return 1;
	}
	return 0;
}
