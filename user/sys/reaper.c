// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/reaper.h"

/* Files the reaper keeps for removal: a recording makes a handful (two FIFOs, one object per .c). */
#define REAPER_MAX_FILES 32
/* How long the reaper tries to empty and remove the cgroup (a process in D state may hold it). */
#define REAPER_EMPTY_TRIES 1000
#define REAPER_EMPTY_STEP_NS 10000000L

enum reaper_op { REAPER_OWN = 1, REAPER_DISOWN, REAPER_BYE };

struct reaper_msg {
	unsigned int op;
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
};

struct reaper_file {
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
};

static struct {
	pid_t pid;
	int sock;			/* auxtrig's end; the reaper reads EOF when auxtrig is gone */
	unsigned int nr_owned;
	char cg[PATH_MAX];		/* the cgroup directory, "" without one */
	char procs[PATH_MAX];		/* its cgroup.procs */
	char kill[PATH_MAX];		/* its cgroup.kill */
	char parent_procs[PATH_MAX];	/* auxtrig's own cgroup.procs */
} reaper = { .pid = -1, .sock = -1 };

/* The reaper's own state (in its copy of the address space only). */
static struct reaper_file files[REAPER_MAX_FILES];
static char procs_buf[65536];

/*
 * auxtrig's cgroup v2 directory: the cgroup2 mount from mountinfo, and the
 * "0::PATH" line of /proc/self/cgroup relative to that mount's root.
 */
static int cgroup_own_dir(char *out, size_t len)
{
	char line[2 * PATH_MAX], root[PATH_MAX] = "", mnt[PATH_MAX] = "", cg[PATH_MAX] = "";
	const char *rel;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	/* id parent major:minor root mount-point options [optional...] - fstype source super-options */
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (sep && !strncmp(sep + 3, "cgroup2 ", 8) &&
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) == 2)
			break;
		mnt[0] = '\0';
	}
	fclose(f);
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(cg, sizeof(cg), "%s", line + 3);
			break;
		}
	}
	fclose(f);
	if (!mnt[0] || cg[0] != '/')
		return -ENOENT;
	/* mountinfo escapes spaces and such as \ooo: such paths are left alone */
	if (strchr(mnt, '\\') || strchr(root, '\\'))
		return -ENOENT;
	if (!strcmp(root, "/"))
		rel = cg;
	else if (!strncmp(cg, root, strlen(root)) && (!cg[strlen(root)] || cg[strlen(root)] == '/'))
		rel = cg + strlen(root);
	else
		return -ENOENT;	/* auxtrig's cgroup is outside what is mounted */
	snprintf(out, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "");
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Each process in the cgroup: SIGKILL, or with @release a move to the parent cgroup. */
static void cgroup_sweep(bool release)
{
	size_t n = 0;
	ssize_t r;
	char *p, *end;
	int fd;

	fd = open(reaper.procs, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (n < sizeof(procs_buf) - 1 && (r = read(fd, procs_buf + n, sizeof(procs_buf) - 1 - n)) > 0)
		n += r;
	close(fd);
	procs_buf[n] = '\0';
	/* a list cut by the buffer leaves the rest for the next sweep */
	for (p = procs_buf; *p; p = end) {
		long pid = strtol(p, &end, 10);
		char num[24];

		if (end == p)
			break;
		if (pid <= 0)
			continue;
		if (release) {
			snprintf(num, sizeof(num), "%ld", pid);
			write_str(reaper.parent_procs, num);
		} else {
			kill((pid_t)pid, SIGKILL);
		}
	}
}

/* Empty the cgroup (kill, or with @release move out, what is in it) and remove it. */
static void cgroup_remove(bool release)
{
	struct timespec step = { 0, REAPER_EMPTY_STEP_NS };

	for (int i = 0; i < REAPER_EMPTY_TRIES; i++) {
		if (!rmdir(reaper.cg) || errno != EBUSY)
			return;
		/* cgroup.kill (5.14+) kills every process in it at once, forks included */
		if (release || write_str(reaper.kill, "1"))
			cgroup_sweep(release);
		nanosleep(&step, NULL);
	}
}

static void files_remove(void)
{
	struct stat st;

	for (int i = 0; i < REAPER_MAX_FILES; i++) {
		struct reaper_file *f = &files[i];

		/* only the file auxtrig made: same device and inode as when it was made */
		if (f->path[0] && !lstat(f->path, &st) && st.st_dev == f->dev && st.st_ino == f->ino)
			unlink(f->path);
	}
}

static void files_apply(const struct reaper_msg *m)
{
	for (int i = 0; i < REAPER_MAX_FILES; i++) {
		struct reaper_file *f = &files[i];

		if (m->op == REAPER_OWN && !f->path[0]) {
			f->dev = m->dev;
			f->ino = m->ino;
			memcpy(f->path, m->path, sizeof(f->path));
			return;
		}
		if (m->op == REAPER_DISOWN && !strcmp(f->path, m->path)) {
			f->path[0] = '\0';
			return;
		}
	}
}

static void __attribute__((noreturn)) reaper_run(int sock)
{
	static const int quiet[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };
	struct reaper_msg m;
	bool bye = false;
	ssize_t n;
	int fd;

	prctl(PR_SET_NAME, "auxtrig-reaper");
	/* a ^C or a kill of the job reaches auxtrig, which stops the run: the reaper waits for that */
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	/* hold nothing of auxtrig's (output file, pipes, perf or BPF fds): only the socket, as fd 3 */
	if (sock != 3) {
		if (dup2(sock, 3) < 0)
			_exit(1);
		sock = 3;
	}
	close_range(4, ~0U, 0);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (fd > 3)
			close(fd);
	}
	if (chdir("/"))
		_exit(1);
	for (;;) {
		n = recv(sock, &m, sizeof(m), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* auxtrig is gone */
		if (n < (ssize_t)offsetof(struct reaper_msg, path))
			continue;
		m.path[sizeof(m.path) - 1] = '\0';
		if (m.op == REAPER_BYE)
			bye = true;
		else
			files_apply(&m);
	}
	if (reaper.cg[0])
		cgroup_remove(bye);
	files_remove();
	_exit(0);
}

int reaper__start(bool cgroup)
{
	char own[PATH_MAX];
	int sv[2], err;
	pid_t pid;

	if (reaper.pid > 0)
		return 0;
	reaper.cg[0] = '\0';
	reaper.nr_owned = 0;
	if (cgroup && !caps__allowed(CAPS_CGROUP2)) {
		pr_debug("cgroup v2 reported missing by %s: only the command itself dies with auxtrig\n", CAPS_OFF_ENV);
	} else if (cgroup && !cgroup_own_dir(own, sizeof(own))) {
		snprintf(reaper.cg, sizeof(reaper.cg), "%s/auxtrig-%d", own, (int)getpid());
		/* a leftover of an earlier auxtrig of this pid whose reaper was killed too: empty, take it */
		if (mkdir(reaper.cg, 0755) && !(errno == EEXIST && !rmdir(reaper.cg) && !mkdir(reaper.cg, 0755))) {
			pr_debug("no cgroup for the command (%s: %s): only the command itself dies with auxtrig\n",
				 reaper.cg, strerror(errno));
			reaper.cg[0] = '\0';
		} else {
			snprintf(reaper.procs, sizeof(reaper.procs), "%s/cgroup.procs", reaper.cg);
			snprintf(reaper.kill, sizeof(reaper.kill), "%s/cgroup.kill", reaper.cg);
			snprintf(reaper.parent_procs, sizeof(reaper.parent_procs), "%s/cgroup.procs", own);
		}
	} else if (cgroup) {
		pr_debug("no cgroup v2 mounted: only the command itself dies with auxtrig\n");
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		goto fail;
	}
	if (pid == 0) {
		close(sv[0]);
		reaper_run(sv[1]);
	}
	close(sv[1]);
	reaper.sock = sv[0];
	reaper.pid = pid;
	return 0;
fail:
	pr_debug("cannot start the reaper: %s; a SIGKILLed auxtrig leaves its files\n", strerror(-err));
	if (reaper.cg[0])
		rmdir(reaper.cg);
	reaper.cg[0] = '\0';
	return err;
}

pid_t reaper__pid(void)
{
	return reaper.pid;
}

int reaper__adopt(pid_t pid)
{
	char num[24];

	if (reaper.pid <= 0 || !reaper.cg[0])
		return -ENODEV;
	snprintf(num, sizeof(num), "%d", (int)pid);
	return write_str(reaper.procs, num);
}

static void reaper_send(unsigned int op, const char *path, const struct stat *st)
{
	struct reaper_msg m = { .op = op };
	size_t len = offsetof(struct reaper_msg, path);

	if (st) {
		m.dev = st->st_dev;
		m.ino = st->st_ino;
	}
	if (path) {
		char cwd[PATH_MAX];

		/* the reaper works from /: relative paths are made absolute */
		if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
			snprintf(m.path, sizeof(m.path), "%s/%s", cwd, path);
		else
			snprintf(m.path, sizeof(m.path), "%s", path);
		len += strlen(m.path) + 1;
	}
	if (send(reaper.sock, &m, len, MSG_NOSIGNAL) < 0)
		pr_debug("cannot reach the reaper: %s\n", strerror(errno));
}

void reaper__own_file(const char *path)
{
	struct stat st;

	if (reaper.pid <= 0 || lstat(path, &st))
		return;
	if (reaper.nr_owned == REAPER_MAX_FILES) {
		pr_debug("%s: the reaper keeps %d files, not more: left if auxtrig is killed\n", path,
			 REAPER_MAX_FILES);
		return;
	}
	reaper.nr_owned++;
	reaper_send(REAPER_OWN, path, &st);
}

void reaper__disown_file(const char *path)
{
	if (reaper.pid <= 0)
		return;
	if (reaper.nr_owned)
		reaper.nr_owned--;
	reaper_send(REAPER_DISOWN, path, NULL);
}

void reaper__stop(void)
{
	if (reaper.pid <= 0)
		return;
	reaper_send(REAPER_BYE, NULL, NULL);
	close(reaper.sock);
	while (waitpid(reaper.pid, NULL, 0) < 0 && errno == EINTR)
		;
	reaper.sock = -1;
	reaper.pid = -1;
	reaper.cg[0] = '\0';
}
