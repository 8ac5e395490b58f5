// SPDX-License-Identifier: BSD-2-Clause
/*
 * read_pattern: numbered syscalls with reads that fail or succeed in a given
 * pattern, for trigger programs with state (examples/triggers/read_fails).
 *
 * Makes close(1000000 + i) for i = 0..N-1; before every 100th, a read():
 * the k-th of them fails (fd -1, EBADF) if PATTERN[k] is 'F', else reads a
 * byte from /dev/zero. "FSFFSFFF" makes the third failure in a row the read
 * before close #700.
 *
 * usage: read_pattern N PATTERN
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int zero = open("/dev/zero", O_RDONLY);
	long n;
	char c;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || zero < 0) {
		fprintf(stderr, "usage: read_pattern N PATTERN\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		if (i % 100 == 0 && (size_t)(i / 100) < strlen(argv[2]))
			syscall(SYS_read, argv[2][i / 100] == 'F' ? -1 : zero, &c, 1);
		syscall(SYS_close, 1000000 + i);
	}
	return 0;
}
