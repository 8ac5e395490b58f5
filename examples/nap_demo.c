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
 * calls of MS ms each. With THREADS > 1, that many threads do the rounds at
 * once (the main thread one of them), thread t (0, 1, ...) with MS + 10 * t
 * ms, so that their calls interleave without keeping step.
 *
 * usage: nap_demo [ROUNDS [DEPTH [MS [THREADS]]]]   (defaults 3, 2, 20 and 1)
 */
#include <pthread.h>
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

static int rounds = 3, depth = 2, ms = 20;

struct worker {
	pthread_t id;
	int ms, sum;
};

static void *run(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < rounds; i++)
		w->sum += nap(depth, w->ms);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 4 ? atoi(argv[4]) : 1, total = 0;
	struct worker w[64] = { 0 };

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		depth = atoi(argv[2]);
	if (argc > 3)
		ms = atoi(argv[3]);
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "nap_demo: THREADS is 1 to 64\n");
		return 2;
	}
	for (int t = 0; t < threads; t++)
		w[t].ms = ms + 10 * t;
	for (int t = 1; t < threads; t++)
		if (pthread_create(&w[t].id, NULL, run, &w[t])) {
			fprintf(stderr, "nap_demo: cannot create a thread\n");
			return 1;
		}
	run(&w[0]);
	for (int t = 1; t < threads; t++)
		pthread_join(w[t].id, NULL);
	for (int t = 0; t < threads; t++)
		total += w[t].sum;
	printf("nap_demo: %d threads x %d rounds of nap(%d, %d): %d calls\n", threads, rounds, depth, ms, total);
	return 0;
}
