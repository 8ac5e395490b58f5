// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt_demo: requests with USDT probes (<sys/sdt.h>), of known behaviour,
 * for usdt: points.
 *
 * Request i (0..N-1) is:
 *   getppid()                                outside the request
 *   demo:request_start(i)                    USDT probe, arg0 = i
 *   getppid()                                inside the request
 *   openat("/nonexistent/usdt_demo")         only if i % 3 == 2: fails with ENOENT
 *   demo:request_done(i, status)             USDT probe, arg0 = i, arg1 = 0 or -ENOENT (-2)
 *
 * and each failure increments the global "failures" (a write for mem: points).
 * So of N requests, N / 3 fail (ids 2, 5, 8, ...); there are 2N getppid()
 * calls, N of them inside a request.
 *
 * usage: usdt_demo [N]   (default 9)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile long failures;

static long request(long id)
{
	long status = 0;

	DTRACE_PROBE1(demo, request_start, id);
	syscall(SYS_getppid);
	if (id % 3 == 2 && syscall(SYS_openat, AT_FDCWD, "/nonexistent/usdt_demo", O_RDONLY) < 0)
		status = -errno;
	if (status)
		failures++;
	DTRACE_PROBE2(demo, request_done, id, status);
	return status;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 9;

	for (long i = 0; i < n; i++) {
		syscall(SYS_getppid);
		request(i);
	}
	printf("usdt_demo: %ld requests, %ld failed\n", n, failures);
	return 0;
}
