// SPDX-License-Identifier: BSD-2-Clause
/*
 * uprobe_demo: a function with known behaviour, for uprobe windows.
 *
 * Each round: getppid() and a failing openat() outside any call of handle(),
 * then handle(DEPTH), which recurses DEPTH more times; every level makes one
 * getppid(), and the innermost one failing openat(). So per round there is
 * 1 getppid() and 1 failed openat() outside handle(), DEPTH + 1 getppid()
 * and 1 failed openat() inside it, and handle() returns DEPTH + 1 from the
 * outermost call. The innermost openat() is made by try_open(), which
 * returns an int: -ENOENT (-2), for return-value typing (uretprobe: points).
 *
 * usage: uprobe_demo [ROUNDS [DEPTH]]   (defaults 5 and 2)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* An int, as C functions return errors: 0 or -errno. */
__attribute__((noinline)) int try_open(const char *path)
{
	if (syscall(SYS_openat, AT_FDCWD, path, O_RDONLY) < 0)
		return -errno;
	return 0;
}

__attribute__((noinline)) int handle(int depth)
{
	syscall(SYS_getppid);
	if (depth > 0)
		return 1 + handle(depth - 1);
	try_open("/nonexistent/in-handle");
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
