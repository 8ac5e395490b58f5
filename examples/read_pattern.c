// SPDX-License-Identifier: BSD-2-Clause
/*
 * read_pattern: numbered syscalls with reads that fail or succeed in a given
 * pattern, for trigger programs with state (examples/triggers/read_fails).
 *
 * Makes close(1000000 + i) for i = 0..N-1; before every 100th, a read():
 * the k-th of them fails (fd -1, EBADF) if PATTERN[k] is 'F', waits 50 ms
 * and fails with EAGAIN (a socket with a receive timeout) if it is 'W', else
 * reads a byte from /dev/zero. "FSFFSFFF" makes the third failure in a row
 * the read before close #700; "SWSFWSSW" has slow reads before closes #100,
 * #400 and #700, and only there.
 *
 * usage: read_pattern N PATTERN
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

/* A socket whose read waits 50 ms for nothing, then fails with EAGAIN. */
static int slow_socket(void)
{
	struct timeval tv = { 0, 50000 };
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	return sv[0]; /* sv[1] stays open: nothing ever arrives, the read times out */
}

int main(int argc, char **argv)
{
	int zero = open("/dev/zero", O_RDONLY), slow = -1;
	long n;
	char c;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || zero < 0) {
		fprintf(stderr, "usage: read_pattern N PATTERN\n");
		return 2;
	}
	if (strchr(argv[2], 'W') && (slow = slow_socket()) < 0) {
		perror("read_pattern: socketpair");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if (i % 100 == 0 && (size_t)(i / 100) < strlen(argv[2])) {
			char k = argv[2][i / 100];

			syscall(SYS_read, k == 'F' ? -1 : k == 'W' ? slow : zero, &c, 1);
		}
		syscall(SYS_close, 1000000 + i);
	}
	return 0;
}
