// SPDX-License-Identifier: BSD-2-Clause
/*
 * openat_loop: a tight, exactly counted loop of failing openat() calls, for
 * measuring what an armed trigger costs per hit (tests/bench/trigger_cost.sh).
 *
 * One thread makes COUNT openat(AT_FDCWD, PATH, O_RDONLY) calls on a PATH that
 * does not exist (each fails with ENOENT) and prints the calls made and the
 * nanoseconds per call: over the whole loop, and the median over chunks of
 * CHUNK calls each timed on its own (CLOCK_MONOTONIC). A chunk the thread was
 * preempted in, or interrupted long, is an outlier the median ignores, so on a
 * busy machine the median is the cost of a call, the mean is not. It
 * starts only when a line arrives on standard input, so a tracer can attach
 * first, and after printing it waits for end of input before exiting, so the
 * tracer's counters can be read while it is still attached.
 *
 * usage: openat_loop COUNT PATH (COUNT is rounded down to whole chunks)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 100

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp_ns(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long count, chunks, fails = 0;
	int64_t t0, t1, *chunk_ns;
	char line[16];

	if (argc != 3 || (count = atol(argv[1])) < CHUNK) {
		fprintf(stderr, "usage: openat_loop COUNT PATH (COUNT >= %d)\n", CHUNK);
		return 2;
	}
	chunks = count / CHUNK;
	count = chunks * CHUNK;
	chunk_ns = calloc(chunks, sizeof(*chunk_ns));
	if (!chunk_ns)
		return 1;
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	t0 = now_ns();
	for (long c = 0; c < chunks; c++) {
		int64_t c0 = now_ns();

		for (int i = 0; i < CHUNK; i++) {
			int fd = openat(AT_FDCWD, argv[2], O_RDONLY);

			if (fd >= 0)
				close(fd);
			else
				fails++;
		}
		chunk_ns[c] = now_ns() - c0;
	}
	t1 = now_ns();
	qsort(chunk_ns, chunks, sizeof(*chunk_ns), cmp_ns);
	printf("calls %ld failed %ld ns_per_call %.1f median_ns_per_call %.1f\n", count, fails,
	       (double)(t1 - t0) / count, (double)chunk_ns[chunks / 2] / CHUNK);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return fails == count ? 0 : 1;
}
