// SPDX-License-Identifier: BSD-2-Clause
/*
 * target: the one /proc walker behind -a (target__processes), the command's
 * tree (target__descendants) and a process's threads (target__threads).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxtrig/sys/target.h"

static bool has(const pid_t *list, size_t nr, pid_t pid)
{
	for (size_t i = 0; i < nr; i++)
		if (list[i] == pid)
			return true;
	return false;
}

static void test_target_processes_lists_self_and_init(void **state)
{
	pid_t *pids;
	size_t nr;

	(void)state;
	assert_int_equal(target__processes(&pids, &nr), 0);
	assert_true(nr >= 2);
	assert_true(has(pids, nr, getpid()));
	assert_true(has(pids, nr, 1));
	for (size_t i = 0; i < nr; i++)
		assert_true(pids[i] > 0);
	free(pids);
}

/* A child that forks a grandchild and waits; both found below us, we are not. */
static void test_target_descendants_finds_grandchild(void **state)
{
	int up[2], down[2];
	pid_t child, grandchild = 0, *pids;
	size_t nr;
	char c;

	(void)state;
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pid_t g;

		close(down[1]); /* so that the parent's close is EOF for both */
		g = fork();

		if (!g) {
			read(down[0], &c, 1);
			_exit(0);
		}
		write(up[1], &g, sizeof(g));
		read(down[0], &c, 1);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	assert_int_equal(read(up[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));
	assert_int_equal(target__descendants(getpid(), &pids, &nr), 0);
	assert_true(has(pids, nr, child));
	assert_true(has(pids, nr, grandchild));
	assert_false(has(pids, nr, getpid()));
	free(pids);
	assert_int_equal(target__descendants(grandchild, &pids, &nr), 0);
	assert_int_equal(nr, 0);
	free(pids);
	close(down[1]); /* both read EOF and exit */
	assert_int_equal(waitpid(child, NULL, 0), child);
	close(down[0]);
	close(up[0]);
	close(up[1]);
}

static int park_fd = -1;

static void *park(void *arg)
{
	char c;

	(void)arg;
	read(park_fd, &c, 1);
	return NULL;
}

static void test_target_threads_lists_every_thread(void **state)
{
	int fds[2];
	pthread_t th;
	pid_t *tids;
	size_t nr, before;

	(void)state;
	assert_int_equal(target__threads(getpid(), &tids, &before), 0);
	assert_true(has(tids, before, getpid()));
	free(tids);
	assert_int_equal(pipe(fds), 0);
	park_fd = fds[0];
	assert_int_equal(pthread_create(&th, NULL, park, NULL), 0);
	assert_int_equal(target__threads(getpid(), &tids, &nr), 0);
	assert_int_equal(nr, before + 1);
	assert_true(has(tids, nr, getpid()));
	free(tids);
	close(fds[1]);
	pthread_join(th, NULL);
	close(fds[0]);
}

static void test_target_threads_of_gone_process(void **state)
{
	pid_t child, *tids = NULL;
	size_t nr = 7;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(target__threads(child, &tids, &nr), -ESRCH);
	assert_null(tids);
	assert_int_equal(nr, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_processes_lists_self_and_init),
		cmocka_unit_test(test_target_descendants_finds_grandchild),
		cmocka_unit_test(test_target_threads_lists_every_thread),
		cmocka_unit_test(test_target_threads_of_gone_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
