// SPDX-License-Identifier: BSD-2-Clause
/*
 * stack_demo: system calls made from a known call path, for -g (call stacks).
 *
 * Each round:  main -> stack_demo_outer -> stack_demo_inner -> openat("/nonexistent/auxtrig-stack")
 * (fails with ENOENT), then close(-1) straight from main, then a 1 ms sleep.
 * The openat is issued by stack_demo_inner itself (inline system call
 * instruction, not through libc's syscall(), which keeps no frame): a
 * frame-pointer unwind from it sees stack_demo_inner, stack_demo_outer,
 * main, in that order. Built with frame pointers (Makefile).
 *
 * usage: stack_demo [-r ROUNDS]   (default 3)
 *
 * Built statically, so no dynamic loader opens files before main().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char missing[] = "/nonexistent/auxtrig-stack";
static volatile long last_ret;

/* a call after the system call: stack_demo_inner is no leaf, so it keeps its frame */
__attribute__((noinline)) void stack_demo_note(long ret)
{
	last_ret = ret;
}

/* openat(AT_FDCWD, path, O_RDONLY) issued in this very function's frame */
__attribute__((noinline)) long stack_demo_inner(const char *path)
{
	long ret;

#if defined(__x86_64__)
	register long r10 __asm__("r10") = 0;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_openat), "D"((long)AT_FDCWD), "S"(path), "d"((long)O_RDONLY), "r"(r10)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_openat;
	register long x0 __asm__("x0") = AT_FDCWD;
	register long x1 __asm__("x1") = (long)path;
	register long x2 __asm__("x2") = O_RDONLY;
	register long x3 __asm__("x3") = 0;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	ret = x0;
#else
#error "stack_demo: no inline system call for this architecture"
#endif
	stack_demo_note(ret);
	return last_ret;
}

__attribute__((noinline)) long stack_demo_outer(const char *path)
{
	long ret = stack_demo_inner(path);

	__asm__ volatile("" ::: "memory");
	return ret;
}

int main(int argc, char **argv)
{
	struct timespec ms = { 0, 1000000 };
	int rounds = 3, c;

	while ((c = getopt(argc, argv, "r:")) != -1) {
		if (c != 'r') {
			fprintf(stderr, "usage: stack_demo [-r ROUNDS]\n");
			return 2;
		}
		rounds = atoi(optarg);
	}
	for (int i = 0; i < rounds; i++) {
		long ret = stack_demo_outer(missing);

		if (ret != -ENOENT) {
			fprintf(stderr, "stack_demo: openat(%s) returned %ld, expected %d\n", missing, ret, -ENOENT);
			return 1;
		}
		close(-1);
		nanosleep(&ms, NULL);
	}
	return 0;
}
