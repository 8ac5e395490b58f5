// SPDX-License-Identifier: BSD-2-Clause
/*
 * migrate_demo: threads on several CPUs, each moved to another CPU inside a
 * window, with its system calls made at known places: for the lab's tests of
 * per-thread hardware trace.
 *
 * Each thread (the main one and -t more) binds itself to one CPU of the
 * process's affinity (thread i to the i-th allowed CPU, round robin), then
 * each round:
 *   getppid()                          a window opens at its exit
 *                                      (-w syscall:getppid:exit..syscall:getuid:enter)
 *   spin -s ms in user code
 *   sched_setaffinity(the next CPU)    moves it there, inside the window
 *   spin -s ms on the new CPU
 *   getuid()                           the window closes at its entry
 *   clock_nanosleep(1 ms)              outside any window: a context switch
 * Each of these system calls is made by its own syscall instruction; the
 * address after it (the user IP the thread's registers hold during the call,
 * where a trace unit that stops or starts in the call says it was) is printed
 * first:
 *   migrate_demo: sites getppid 0x... setaffinity 0x... getuid 0x... nanosleep 0x...
 * and after each round, outside the window:
 *   migrate_demo: thread TID round R cpu A -> B
 * At the end: "migrate_demo: pid P, N threads x R rounds".
 *
 * usage: migrate_demo [-r ROUNDS] [-t THREADS] [-L THREADS] [-s SPIN_MS] [-W] [-G]
 *   -r  rounds per thread (default 3)
 *   -t  extra threads, made at the start (default 1)
 *   -L  extra threads made later: when the rounds start (default 0)
 *   -s  milliseconds spun before and after the move (default 0)
 *   -W  make the -t threads, print "migrate_demo: pid N waiting", and start
 *       the rounds (and make the -L threads) only at SIGUSR1: a tracer
 *       attaches with -p/-t first
 *   -G  once every thread is made (the -L ones too), print "migrate_demo:
 *       pid N threads made" and start every thread's rounds only at
 *       SIGUSR2: a tracer that follows new threads has their trace open first
 *
 * x86-64 and arm64 (the sites are inline syscall / svc instructions); built statically.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * One system call instruction per site, labelled after it (the return address the kernel keeps:
 * x86-64 syscall and arm64 svc both leave the user IP just past themselves). noinline and noclone:
 * the label must be emitted once.
 */
#if defined(__x86_64__)
#define SITE(name)									\
	extern const char after_##name[];						\
	static __attribute__((noinline, noclone)) long site_##name(long nr, long a0,	\
								   long a1, long a2)	\
	{										\
		long ret;								\
		register long r10 __asm__("r10") = 0;					\
											\
		__asm__ volatile("syscall\n\t"						\
				 ".globl after_" #name "\n"				\
				 "after_" #name ":"					\
				 : "=a"(ret)						\
				 : "0"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10)		\
				 : "rcx", "r11", "memory");				\
		return ret;								\
	}
#elif defined(__aarch64__)
/* arm64: number in x8, arguments in x0..x2, the result in x0. */
#define SITE(name)									\
	extern const char after_##name[];						\
	static __attribute__((noinline, noclone)) long site_##name(long nr, long a0,	\
								   long a1, long a2)	\
	{										\
		register long x8 __asm__("x8") = nr;					\
		register long x0 __asm__("x0") = a0;					\
		register long x1 __asm__("x1") = a1;					\
		register long x2 __asm__("x2") = a2;					\
											\
		__asm__ volatile("svc #0\n\t"						\
				 ".globl after_" #name "\n"				\
				 "after_" #name ":"					\
				 : "+r"(x0)						\
				 : "r"(x8), "r"(x1), "r"(x2)				\
				 : "memory");						\
		return x0;								\
	}
#else
#error "migrate_demo's sites are x86-64 syscall or arm64 svc instructions"
#endif

SITE(getppid)
SITE(setaffinity)
SITE(getuid)
SITE(nanosleep)

static int rounds = 3, spin_ms, wait_go;
static int cpus[CPU_SETSIZE], nr_cpus;
static pthread_barrier_t go;

static void spin(int ms)
{
	struct timespec a, b;

	if (!ms)
		return;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void bind_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (site_setaffinity(SYS_sched_setaffinity, 0, sizeof(set), (long)&set)) {
		fprintf(stderr, "migrate_demo: cannot move to cpu %d\n", cpu);
		exit(1);
	}
}

static int gate_go;
static pthread_barrier_t all_go;	/* -G: every thread, at SIGUSR2 */

#define LATE 0x10000	/* do_rounds() of a -L thread: made after the start, it waits for nobody */

static void *do_rounds(void *arg)
{
	int i = (int)(long)arg & ~LATE, at = i % nr_cpus;
	struct timespec ms = { 0, 1000000 };
	long tid = syscall(SYS_gettid);

	bind_to(cpus[at]);
	if (wait_go && !((long)arg & LATE))
		pthread_barrier_wait(&go);
	if (gate_go)
		pthread_barrier_wait(&all_go);
	for (int r = 0; r < rounds; r++) {
		int next = (at + 1) % nr_cpus, from, to;

		site_getppid(SYS_getppid, 0, 0, 0);		/* the window opens */
		spin(spin_ms);
		from = sched_getcpu();
		bind_to(cpus[next]);				/* moves, inside the window */
		to = sched_getcpu();
		spin(spin_ms);
		site_getuid(SYS_getuid, 0, 0, 0);		/* the window closes */
		at = next;
		printf("migrate_demo: thread %ld round %d cpu %d -> %d\n", tid, r, from, to);
		fflush(stdout);
		site_nanosleep(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (long)&ms);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, late = 0, c;
	pthread_t *tids;
	cpu_set_t set;

	while ((c = getopt(argc, argv, "r:t:L:s:WG")) != -1) {
		switch (c) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'L':
			late = atoi(optarg);
			break;
		case 's':
			spin_ms = atoi(optarg);
			break;
		case 'W':
			wait_go = 1;
			break;
		case 'G':
			gate_go = 1;
			break;
		default:
			fprintf(stderr, "usage: migrate_demo [-r ROUNDS] [-t THREADS] [-L THREADS] [-s SPIN_MS] [-W] [-G]\n");
			return 2;
		}
	}
	if (rounds < 0 || threads < 0 || late < 0 || threads + late > 64 || spin_ms < 0) {
		fprintf(stderr, "migrate_demo: bad -r, -t, -L or -s\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(set), &set)) {
		perror("migrate_demo: sched_getaffinity");
		return 1;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[nr_cpus++] = cpu;
	printf("migrate_demo: sites getppid %p setaffinity %p getuid %p nanosleep %p\n", (void *)after_getppid,
	       (void *)after_setaffinity, (void *)after_getuid, (void *)after_nanosleep);
	printf("migrate_demo: %d cpus\n", nr_cpus);
	fflush(stdout);
	if (wait_go) {
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL); /* inherited by the threads */
		pthread_barrier_init(&go, NULL, threads + 1);
	}
	if (gate_go) {
		sigset_t usr2;

		sigemptyset(&usr2);
		sigaddset(&usr2, SIGUSR2);
		sigprocmask(SIG_BLOCK, &usr2, NULL); /* inherited by the threads */
		pthread_barrier_init(&all_go, NULL, threads + late + 1);
	}
	tids = calloc(threads + late + 1, sizeof(*tids));
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, do_rounds, (void *)(long)(i + 1));
	if (wait_go) {
		sigset_t usr1;
		int sig;

		printf("migrate_demo: pid %d waiting\n", getpid());
		fflush(stdout);
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigwait(&usr1, &sig);
	}
	for (int i = threads; i < threads + late; i++)
		pthread_create(&tids[i], NULL, do_rounds, (void *)((long)(i + 1) | LATE));
	if (gate_go) {
		sigset_t usr2;
		int sig;

		printf("migrate_demo: pid %d threads made\n", getpid());
		fflush(stdout);
		sigemptyset(&usr2);
		sigaddset(&usr2, SIGUSR2);
		sigwait(&usr2, &sig);
	}
	do_rounds((void *)0L);
	for (int i = 0; i < threads + late; i++)
		pthread_join(tids[i], NULL);
	printf("migrate_demo: pid %d, %d threads x %d rounds\n", getpid(), threads + late + 1, rounds);
	free(tids);
	return 0;
}
