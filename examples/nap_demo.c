// SPDX-License-Identifier: BSD-2-Clause
/*
 * nap_demo: a recursive function whose calls last known times, for entry
 * values at exits (entry.argN, $duration at uretprobe: and syscall exits).
 *
 * Each round calls nap(DEPTH, MS): nap(d, ms) sleeps ms milliseconds
 * (clock_nanosleep) and, if d > 0, calls nap(d - 1, ms). So a call of nap()
 * with first argument d lasts at least (d + 1) * MS ms, and its calls return
 * innermost first: nap(0) ... nap(DEPTH), each with the argument it entered
 * with. Per round: DEPTH + 1 calls of nap() and as many clock_nanosleep()
 * calls of MS ms each.
 *
 * usage: nap_demo [ROUNDS [DEPTH [MS]]]   (defaults 3, 2 and 20)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) int nap(int depth, int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	if (depth > 0)
		return 1 + nap(depth - 1, ms);
	return 1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3, depth = argc > 2 ? atoi(argv[2]) : 2;
	int ms = argc > 3 ? atoi(argv[3]) : 20, sum = 0;

	for (int i = 0; i < rounds; i++)
		sum += nap(depth, ms);
	printf("nap_demo: %d rounds of nap(%d, %d): %d calls\n", rounds, depth, ms, sum);
	return 0;
}
