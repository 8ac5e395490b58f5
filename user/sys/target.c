// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxtrig/sys/target.h"

static int find_executable(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	struct stat st;
	int err = -ENOENT;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		if (stat(out, &st))
			return -errno;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		return access(out, X_OK) ? -errno : 0;
	}
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return -ENOMEM;
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", *dir ? dir : ".", name);
		if (stat(out, &st) || S_ISDIR(st.st_mode))
			continue;
		if (!access(out, X_OK)) {
			err = 0;
			break;
		}
		err = -EACCES;
	}
	free(copy);
	return err;
}

int target__fork_command(struct target *t, char **argv)
{
	int go[2], errp[2], err;
	char path[PATH_MAX];
	pid_t pid;

	memset(t, 0, sizeof(*t));
	t->go_fd = t->err_fd = -1;
	err = find_executable(argv[0], path, sizeof(path));
	if (err)
		return err;
	t->pids = calloc(1, sizeof(pid_t));
	if (!t->pids)
		return -ENOMEM;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(go[0]), close(go[1]), close(errp[0]), close(errp[1]);
		return err;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		close(errp[0]);
		/* Wait for "go"; EOF means auxtrig gave up: leave quietly. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execv(path, argv);
		err = errno;
		if (write(errp[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	t->is_command = true;
	t->pids[0] = pid;
	t->nr_pids = 1;
	t->go_fd = go[1];
	t->err_fd = errp[0];
	return 0;
}

int target__set_pids(struct target *t, const pid_t *pids, size_t nr, bool threads)
{
	char path[64];

	memset(t, 0, sizeof(*t));
	t->go_fd = t->err_fd = -1;
	t->threads = threads;
	for (size_t i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "/proc/%d", pids[i]);
		if (access(path, F_OK))
			return -ESRCH;
	}
	t->pids = malloc(nr * sizeof(pid_t));
	if (!t->pids)
		return -ENOMEM;
	memcpy(t->pids, pids, nr * sizeof(pid_t));
	t->nr_pids = nr;
	return 0;
}

int target__start(struct target *t)
{
	int exec_err = 0;
	ssize_t n;

	if (!t->is_command)
		return 0;
	if (write(t->go_fd, "g", 1) != 1)
		return -errno;
	close(t->go_fd);
	t->go_fd = -1;
	/* The error pipe closes on a successful exec (CLOEXEC) or carries errno. */
	n = read(t->err_fd, &exec_err, sizeof(exec_err));
	close(t->err_fd);
	t->err_fd = -1;
	if (n == sizeof(exec_err)) {
		waitpid(t->pids[0], &t->status, 0);
		t->exited = true;
		return -exec_err;
	}
	return 0;
}

bool target__poll_exit(struct target *t)
{
	char path[64];

	if (t->exited)
		return true;
	if (t->all && !t->is_command)
		return false;
	if (t->is_command) {
		if (waitpid(t->pids[0], &t->status, WNOHANG) == t->pids[0])
			t->exited = true;
		return t->exited;
	}
	for (size_t i = 0; i < t->nr_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%d", t->pids[i]);
		if (!access(path, F_OK))
			return false;
	}
	t->exited = true;
	return true;
}

void target__kill(struct target *t)
{
	if (!t->is_command || t->exited || !t->nr_pids)
		return;
	/* Closing "go" makes the held child exit without running anything. */
	if (t->go_fd >= 0) {
		close(t->go_fd);
		t->go_fd = -1;
	} else {
		kill(t->pids[0], SIGKILL);
	}
	waitpid(t->pids[0], &t->status, 0);
	t->exited = true;
}

void target__exit(struct target *t)
{
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	free(t->pids);
	t->pids = NULL;
}

int target__threads(pid_t pid, pid_t **tids, size_t *nr)
{
	char path[64];
	struct dirent *d;
	pid_t *list = NULL, *tmp;
	size_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		tmp = realloc(list, (n + 1) * sizeof(pid_t));
		if (!tmp) {
			free(list);
			closedir(dir);
			return -ENOMEM;
		}
		list = tmp;
		list[n++] = atoi(d->d_name);
	}
	closedir(dir);
	*tids = list;
	*nr = n;
	return 0;
}
