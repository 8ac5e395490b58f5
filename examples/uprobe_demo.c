// SPDX-License-Identifier: BSD-2-Clause
/*
 * uprobe_demo: a function with known behaviour, for uprobe windows.
 *
 * Each round: getppid() and a failing openat() outside any call of handle(),
 * then handle(DEPTH), which recurses DEPTH more times; every level makes one
 * getppid(), and the innermost one failing openat(). So per round there is
 * 1 getppid() and 1 failed openat() outside handle(), DEPTH + 1 getppid()
 * and 1 failed openat() inside it, and handle() returns DEPTH + 1 from the
 * outermost call.
 *
 * usage: uprobe_demo [ROUNDS [DEPTH]]   (defaults 5 and 2)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) int handle(int depth)
{
	syscall(SYS_getppid);
	if (depth > 0)
		return 1 + handle(depth - 1);
	syscall(SYS_openat, AT_FDCWD, "/nonexistent/in-handle", O_RDONLY);
	return 1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, depth = argc > 2 ? atoi(argv[2]) : 2, sum = 0;

	for (int i = 0; i < rounds; i++) {
		syscall(SYS_getppid);
		syscall(SYS_openat, AT_FDCWD, "/nonexistent/outside", O_RDONLY);
		sum += handle(depth);
	}
	printf("uprobe_demo: %d rounds, handle(%d) returned %d in all\n", rounds, depth, sum);
	return 0;
}
