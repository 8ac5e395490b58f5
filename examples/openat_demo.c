// SPDX-License-Identifier: BSD-2-Clause
/*
 * openat_demo: a workload whose system calls are known exactly, for the
 * demo of `make run` (docs/usage.md) and the kernel tests.
 *
 * Each round, on each thread:
 *   openat("/dev/null")                    succeeds
 *   openat("/nonexistent/auxtrig-demo")    fails with ENOENT
 *   read(fd, 1 byte)                       returns 0
 *   getpid()
 *   close(fd)
 *   clock_nanosleep(1 ms)                  sleeps: a context switch
 *
 * usage: openat_demo [-r ROUNDS] [-t THREADS] [-c CHILD_COMM] [-K] [-W]
 *   -r  rounds per thread (default 5)
 *   -t  extra threads doing the same rounds (default 0)
 *   -c  also fork a child process named CHILD_COMM doing the same rounds
 *   -K  crash (SIGSEGV) after the rounds, for fault tests
 *   -W  start the threads, print "openat_demo: pid N waiting", and start the rounds only at
 *       SIGUSR1: a tracer attaches with -p/-t first (no openat is made while waiting)
 *
 * Built statically, so no dynamic loader opens files before main().
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int rounds = 5;
static int wait_go;
static pthread_barrier_t go;

static void *do_rounds(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	char buf[1];

	(void)arg;
	if (wait_go)
		pthread_barrier_wait(&go);
	for (int i = 0; i < rounds; i++) {
		long fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
		long bad = syscall(SYS_openat, AT_FDCWD, "/nonexistent/auxtrig-demo", O_RDONLY);

		if (fd < 0 || bad != -1 || errno != ENOENT) {
			fprintf(stderr, "openat_demo: unexpected openat results\n");
			exit(1);
		}
		if (syscall(SYS_read, fd, buf, 1) != 0)
			exit(1);
		syscall(SYS_getpid);
		syscall(SYS_close, fd);
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ms, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *child_comm = NULL;
	int threads = 0, c, crash = 0;
	pthread_t *tids;
	pid_t child = -1, self = syscall(SYS_gettid); /* = pid; not getpid(), which is counted */

	while ((c = getopt(argc, argv, "r:t:c:KW")) != -1) {
		switch (c) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'c':
			child_comm = optarg;
			break;
		case 'K':
			crash = 1;
			break;
		case 'W':
			wait_go = 1;
			break;
		default:
			fprintf(stderr, "usage: openat_demo [-r ROUNDS] [-t THREADS] [-c CHILD_COMM] [-K] [-W]\n");
			return 2;
		}
	}
	if (rounds < 0 || threads < 0 || threads > 64) {
		fprintf(stderr, "openat_demo: bad -r or -t\n");
		return 2;
	}
	if (wait_go && child_comm) {
		fprintf(stderr, "openat_demo: -W and -c do not go together\n");
		return 2;
	}
	if (wait_go) {
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL); /* inherited by the threads */
		pthread_barrier_init(&go, NULL, threads + 1);
	}
	if (child_comm) {
		child = fork();
		if (child == 0) {
			prctl(PR_SET_NAME, child_comm);
			do_rounds(NULL);
			_exit(0);
		}
	}
	tids = calloc(threads ? threads : 1, sizeof(*tids));
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, do_rounds, NULL);
	if (wait_go) {
		sigset_t usr1;
		int sig;

		printf("openat_demo: pid %d waiting\n", self);
		fflush(stdout);
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigwait(&usr1, &sig);
	}
	do_rounds(NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	if (crash)
		*(volatile int *)0 = 1;
	int workers = threads + 1 + (child_comm ? 1 : 0);

	printf("openat_demo: pid %d, %d thread%s%s%s x %d rounds: %d openat (%d failed with ENOENT)\n",
	       self, threads + 1, threads ? "s" : "", child_comm ? " + child " : "",
	       child_comm ? child_comm : "", rounds, 2 * rounds * workers, rounds * workers);
	free(tids);
	return 0;
}
