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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxtrig/sys/fd_limit.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/reaper.h"
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
	pid_t pid, parent;

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
	/*
	 * auxtrig adopts the command's orphans (a child whose parent exited
	 * would go to init), so that stopping the command finds its whole tree.
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		t->no_subreaper = true;
	parent = getpid();
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
		/*
		 * A SIGKILLed auxtrig cannot stop the command: the kernel does,
		 * when the parent dies. Set before exec (kept across it, but
		 * not by the command's own children); if auxtrig died before
		 * the prctl, the command has been reparented already: leave.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		/* Wait for "go"; EOF means auxtrig gave up: leave quietly. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		fd_limit__restore();
		execv(path, argv);
		err = errno;
		if (write(errp[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	/*
	 * Into the reaper's cgroup while it is held, before it can fork: all
	 * it starts is then in there, and dies with a SIGKILLed auxtrig.
	 */
	err = reaper__adopt(pid);
	if (err && err != -ENODEV)
		pr_debug("cannot move the command into its cgroup: %s; only the command itself dies with auxtrig\n",
			 strerror(-err));
	t->is_command = true;
	t->pids[0] = pid;
	t->nr_pids = 1;
	t->go_fd = go[1];
	t->err_fd = errp[0];
	return 0;
}

/* The state letter of the task whose stat file is @path ('R', 'S', 'Z'...), 0 when it is gone. */
static char task_state(const char *path)
{
	char buf[512], *rp;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	rp = strrchr(buf, ')');	/* the comm may hold anything, ')' too */
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

/*
 * Does @pid run: with @thread the thread itself, else any thread of the
 * process (one whose leader called pthread_exit() is a zombie leader with
 * threads that run). A zombie (Z) or dead (X) task keeps its /proc entry
 * until its parent reaps it: it has exited all the same.
 */
static bool target_runs(pid_t pid, bool thread)
{
	char path[96];
	struct dirent *de;
	bool runs = false;
	DIR *d;
	char st;

	if (thread) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		st = task_state(path);
		return st && st != 'Z' && st != 'X';
	}
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!runs && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", pid, de->d_name);
		st = task_state(path);
		runs = st && st != 'Z' && st != 'X';
	}
	closedir(d);
	return runs;
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
		if (!target_runs(pids[i], threads))
			return -ECHILD;	/* exited, not reaped yet */
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

/* Reap the command and the orphans of its tree auxtrig adopted as subreaper. */
static void reap_all(struct target *t)
{
	int status;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
		if (p == t->pids[0]) {
			t->status = status;
			t->exited = true;
		}
	}
}

bool target__poll_exit(struct target *t)
{
	if (t->exited)
		return true;
	if (t->all && !t->is_command)
		return false;
	if (t->is_command) {
		/* The command, and the orphans of its tree auxtrig adopted (reaped, not waited for). */
		reap_all(t);
		return t->exited;
	}
	for (size_t i = 0; i < t->nr_pids; i++) {
		if (target_runs(t->pids[i], t->threads))
			return false;
	}
	t->exited = true;
	return true;
}

/* The parent of @pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *rp;
	int ppid = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold anything, ')' included. */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/*
 * The one /proc walker: the numeric entries of @dir (/proc: every process;
 * /proc/PID/task: its threads), in the order the kernel lists them.
 */
static int proc_ids(const char *dir_path, pid_t **out, size_t *nr)
{
	pid_t *list = NULL, *tmp;
	size_t n = 0, cap = 0;
	struct dirent *d;
	int err = 0;
	DIR *dir;

	*out = NULL;
	*nr = 0;
	dir = opendir(dir_path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		long id = strtol(d->d_name, &end, 10);

		if (*end || id <= 0 || d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			tmp = realloc(list, cap * sizeof(*list));
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			list = tmp;
		}
		list[n++] = id;
	}
out:
	closedir(dir);
	if (err) {
		free(list);
		return err;
	}
	*out = list;
	*nr = n;
	return 0;
}

int target__processes(pid_t **pids, size_t *nr)
{
	return proc_ids("/proc", pids, nr);
}

int target__descendants(pid_t root, pid_t **out, size_t *nr)
{
	struct { pid_t pid, ppid; } *all = NULL;
	size_t nr_pids = 0, n = 0, found = 0;
	pid_t *pids, *list = NULL;
	bool grew = true;
	int err;

	*out = NULL;
	*nr = 0;
	err = target__processes(&pids, &nr_pids);
	if (err)
		return err;
	all = calloc(nr_pids ? nr_pids : 1, sizeof(*all));
	list = calloc(nr_pids ? nr_pids : 1, sizeof(*list));
	if (!all || !list) {
		free(pids);
		free(all);
		free(list);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr_pids; i++) {
		pid_t ppid = parent_of(pids[i]);

		if (ppid < 0)
			continue;
		all[n].pid = pids[i];
		all[n].ppid = ppid;
		n++;
	}
	free(pids);
	/* Every process whose parent is @root or in the list, until the list stops growing. */
	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			bool in = false, parent_in = all[i].ppid == root;

			for (size_t j = 0; j < found && !(in && parent_in); j++) {
				in |= list[j] == all[i].pid;
				parent_in |= list[j] == all[i].ppid;
			}
			if (!in && parent_in && all[i].pid != root) {
				list[found++] = all[i].pid;
				grew = true;
			}
		}
	}
	free(all);
	*out = list;
	*nr = found;
	return 0;
}

static bool pid_in(const pid_t *list, size_t nr, pid_t pid)
{
	for (size_t i = 0; i < nr; i++)
		if (list[i] == pid)
			return true;
	return false;
}

int target__stop_tree(struct target *t, unsigned int grace_ms)
{
	pid_t *termed = NULL, *tmp, root;
	size_t nr_termed = 0;
	unsigned int waited = 0;
	int sig = SIGTERM;

	if (!t->is_command || !t->nr_pids || (t->exited && t->no_subreaper))
		return 0;
	if (t->go_fd >= 0) {
		target__kill(t);	/* never started: nothing below it */
		return 0;
	}
	/*
	 * The command's tree: everything it started, orphans included (adopted
	 * by auxtrig as subreaper, so below auxtrig itself). Each process gets
	 * SIGTERM once; what is still there after @grace_ms gets SIGKILL. The
	 * tree is scanned again each round, so what forks meanwhile is found.
	 */
	root = t->no_subreaper ? t->pids[0] : getpid();
	for (;;) {
		pid_t *pids;
		size_t nr;

		reap_all(t);
		if (target__descendants(root, &pids, &nr))
			break;
		/* the reaper is auxtrig's child too, not the command's: it ends with auxtrig */
		for (size_t i = 0; i < nr; i++)
			if (pids[i] == reaper__pid())
				pids[i--] = pids[--nr];
		if (t->no_subreaper && !t->exited) {
			/* descendants of the command, not the command itself */
			tmp = realloc(pids, (nr + 1) * sizeof(*pids));
			if (!tmp) {
				free(pids);
				break;
			}
			pids = tmp;
			pids[nr++] = t->pids[0];
		}
		for (size_t i = 0; i < nr; i++) {
			if (sig == SIGKILL) {
				kill(pids[i], SIGKILL);
				continue;
			}
			if (pid_in(termed, nr_termed, pids[i]))
				continue;
			tmp = realloc(termed, (nr_termed + 1) * sizeof(*termed));
			if (!tmp) {
				kill(pids[i], SIGKILL);
				continue;
			}
			termed = tmp;
			if (!kill(pids[i], SIGTERM))
				termed[nr_termed++] = pids[i];
		}
		free(pids);
		if (!nr)
			break;
		if (sig == SIGTERM && waited >= grace_ms)
			sig = SIGKILL;
		if (waited >= grace_ms + 5000)
			break;	/* unkillable (D state): leave it */
		usleep(10000);
		waited += 10;
	}
	free(termed);
	if (!t->exited) {
		kill(t->pids[0], SIGKILL);
		waitpid(t->pids[0], &t->status, 0);
		t->exited = true;
	}
	return (int)nr_termed;
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
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	err = proc_ids(path, tids, nr);
	return err == -ENOENT ? -ESRCH : err;
}
