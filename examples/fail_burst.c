// SPDX-License-Identifier: BSD-2-Clause
/*
 * fail_burst: openat failures whose timing is known, for the example of
 * variables of your own (auxtrig-expr(7)): "snapshot when the same thread
 * fails openat three times within 10 ms".
 *
 * Two threads, one after the other:
 *   "slow":  openat("/nonexistent/auxtrig-slow/N") fails with ENOENT four
 *            times, N = 1..4, 30 ms or more apart: never three within 10 ms;
 *   "burst": openat("/nonexistent/auxtrig-burst/a") fails once, then after
 *            50 ms or more "/nonexistent/auxtrig-burst/b1", "b2" and "b3"
 *            fail back to back: b3 is the third failure within 10 ms.
 * After each failing openat the thread calls getppid(), a point whose own
 * program reads the variables without setting any (the compiled evaluator).
 * Sleeps only get longer under load, never shorter, so no failure of
 * "slow" is ever within 10 ms of its second predecessor.
 *
 * usage: fail_burst
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *path)
{
	if (syscall(SYS_openat, AT_FDCWD, path, O_RDONLY) != -1 || errno != ENOENT) {
		fprintf(stderr, "fail_burst: openat(%s) did not fail with ENOENT\n", path);
		exit(1);
	}
	syscall(SYS_getppid);
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static void *slow(void *arg)
{
	char path[64];

	(void)arg;
	prctl(PR_SET_NAME, "slow");
	for (int i = 1; i <= 4; i++) {
		snprintf(path, sizeof(path), "/nonexistent/auxtrig-slow/%d", i);
		fail(path);
		nap_ms(30);
	}
	return NULL;
}

static void *burst(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "burst");
	fail("/nonexistent/auxtrig-burst/a");
	nap_ms(50);
	fail("/nonexistent/auxtrig-burst/b1");
	fail("/nonexistent/auxtrig-burst/b2");
	fail("/nonexistent/auxtrig-burst/b3");
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, slow, NULL) || pthread_join(t, NULL) ||
	    pthread_create(&t, NULL, burst, NULL) || pthread_join(t, NULL)) {
		fprintf(stderr, "fail_burst: cannot run its threads\n");
		return 1;
	}
	printf("fail_burst: pid %d: slow failed 4 times 30 ms apart, burst once then 3 times back to back\n",
	       (int)getpid());
	return 0;
}
