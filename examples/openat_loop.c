// SPDX-License-Identifier: BSD-2-Clause
/*
 * openat_loop: a tight, exactly counted loop of failing openat() calls, for
 * measuring what an armed trigger costs per hit (tests/bench/trigger_cost.sh).
 *
 * One thread makes COUNT openat(AT_FDCWD, PATH, O_RDONLY) calls on a PATH that
 * does not exist (each fails with ENOENT) and prints the calls made and the
 * nanoseconds per call, measured around the loop with CLOCK_MONOTONIC. It
 * starts only when a line arrives on standard input, so a tracer can attach
 * first, and after printing it waits for end of input before exiting, so the
 * tracer's counters can be read while it is still attached.
 *
 * usage: openat_loop COUNT PATH
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	long count, fails = 0;
	char line[16];
	double ns;

	if (argc != 3 || (count = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: openat_loop COUNT PATH\n");
		return 2;
	}
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < count; i++) {
		int fd = openat(AT_FDCWD, argv[2], O_RDONLY);

		if (fd >= 0)
			close(fd);
		else
			fails++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / count;
	printf("calls %ld failed %ld ns_per_call %.1f\n", count, fails, ns);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return fails == count ? 0 : 1;
}
