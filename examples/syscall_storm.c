// SPDX-License-Identifier: BSD-2-Clause
/*
 * syscall_storm: a high-rate, exactly counted syscall workload for benchmarks.
 *
 * THREADS threads each make COUNT getppid() calls as fast as they can, then
 * the process prints how many calls it made and how long that took. It
 * starts only when a line arrives on standard input, so a recorder can be
 * attached first (-p) and its own CPU time measured apart from the workload.
 *
 * usage: syscall_storm THREADS COUNT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long count;

static void *storm(void *arg)
{
	(void)arg;
	for (long i = 0; i < count; i++)
		syscall(SYS_getppid);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t tids[64];
	char line[16];
	int threads;

	if (argc != 3 || (threads = atoi(argv[1])) < 1 || threads > 64 || (count = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: syscall_storm THREADS COUNT\n");
		return 2;
	}
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, storm, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("calls %ld seconds %.6f\n", threads * count,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
