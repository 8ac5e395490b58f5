// SPDX-License-Identifier: BSD-2-Clause
/*
 * path_demo: system calls with known path arguments, for the strings in
 * records, marks that carry values and conditions on a call's entry at its
 * exit.
 *
 * Each round:
 *   openat("/etc/passwd")                   succeeds (then closed)
 *   openat("/etc/auxtrig-missing")          fails with ENOENT
 *   openat("/nonexistent/auxtrig-missing")  fails with ENOENT
 * then, with -d DIR, once (DIR must exist and be empty):
 *   openat(DIR/a, O_CREAT)                  creates a (then closed)
 *   renameat2(AT_FDCWD, DIR/a, AT_FDCWD, DIR/b, RENAME_NOREPLACE)
 *   linkat(AT_FDCWD, DIR/b, AT_FDCWD, DIR/c, 0)
 *   symlinkat("b", AT_FDCWD, DIR/d)
 *
 * usage: path_demo [-r ROUNDS] [-d DIR]   (default 3 rounds)
 *
 * Built statically, so no dynamic loader opens files before main().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

static void expect(long got, long want, const char *what)
{
	if (got != want) {
		fprintf(stderr, "path_demo: %s returned %ld (errno %d), expected %ld\n", what, got, errno, want);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	char a[4096], b[4096], c[4096], d[4096];
	int rounds = 3, opt;
	long fd;

	while ((opt = getopt(argc, argv, "r:d:")) != -1) {
		switch (opt) {
		case 'r': rounds = atoi(optarg); break;
		case 'd': dir = optarg; break;
		default:
			fprintf(stderr, "usage: path_demo [-r ROUNDS] [-d DIR]\n");
			return 2;
		}
	}
	for (int i = 0; i < rounds; i++) {
		fd = syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY);
		if (fd < 0)
			expect(fd, 0, "openat(/etc/passwd)");
		syscall(SYS_close, fd);
		expect(syscall(SYS_openat, AT_FDCWD, "/etc/auxtrig-missing", O_RDONLY), -1, "openat(/etc/auxtrig-missing)");
		expect(syscall(SYS_openat, AT_FDCWD, "/nonexistent/auxtrig-missing", O_RDONLY), -1,
		       "openat(/nonexistent/auxtrig-missing)");
	}
	if (dir) {
		snprintf(a, sizeof(a), "%s/a", dir);
		snprintf(b, sizeof(b), "%s/b", dir);
		snprintf(c, sizeof(c), "%s/c", dir);
		snprintf(d, sizeof(d), "%s/d", dir);
		fd = syscall(SYS_openat, AT_FDCWD, a, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			expect(fd, 0, "openat(DIR/a, O_CREAT)");
		syscall(SYS_close, fd);
		expect(syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE), 0, "renameat2");
		expect(syscall(SYS_linkat, AT_FDCWD, b, AT_FDCWD, c, 0), 0, "linkat");
		expect(syscall(SYS_symlinkat, "b", AT_FDCWD, d), 0, "symlinkat");
	}
	printf("path_demo: pid %d, %d rounds: %d openat of /etc/passwd, %d of missing files%s\n", getpid(), rounds,
	       rounds, 2 * rounds, dir ? ", renameat2, linkat, symlinkat in the directory" : "");
	return 0;
}
