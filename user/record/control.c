// SPDX-License-Identifier: BSD-2-Clause
/* --control: perf's commands on a FIFO or an fd, answered on another. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/record/control.h"
#include "auxtrig/record/plan.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/reaper.h"

static const char *const commands[] = {
	[CONTROL_ENABLE] = "enable", [CONTROL_DISABLE] = "disable", [CONTROL_SNAPSHOT] = "snapshot",
	[CONTROL_STOP] = "stop", [CONTROL_PING] = "ping",
};

void control__init(struct control *c)
{
	c->ctl_fd = c->ack_fd = -1;
	c->owned = false;
	c->created[0] = c->created[1] = NULL;
}

void control__ack(struct control *c, const char *msg)
{
	if (c->ack_fd >= 0 && write(c->ack_fd, msg, strlen(msg)) < 0)
		pr_debug("control: cannot write the ack: %s\n", strerror(errno));
}

static int control__command(struct control *c, const char *cmd, control_fn fn, void *ctx)
{
	int err;

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(cmd, commands[i]))
			continue;
		err = fn(ctx, i);
		control__ack(c, "ack\n");
		return err;
	}
	pr_warn("control: unknown command '%s' (enable, disable, snapshot, stop, ping)\n", cmd);
	control__ack(c, "error\n");
	return 0;
}

int control__read(struct control *c, control_fn fn, void *ctx)
{
	char buf[256], *line, *save = NULL;
	ssize_t n;
	int err = 0;

	n = read(c->ctl_fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line);

		while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len)
			err = control__command(c, line, fn, ctx);
	}
	return err;
}

const char *control__unsafe(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link, which is never followed (give the FIFO itself)";
	if (!S_ISFIFO(st->st_mode))
		return "not a FIFO (give a path that does not exist, and auxtrig makes one, or make one with mkfifo -m 600)";
	if (st->st_uid != geteuid())
		return "owned by another user, who could drive this recording (make your own with mkfifo -m 600)";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by other users, who could drive this recording (chmod go-w it)";
	return NULL;
}

int control__check_path(const char *path, char *why, size_t why_size)
{
	char dir[PATH_MAX], *slash;
	const char *bad;
	struct stat st;

	if (!lstat(path, &st)) {
		bad = control__unsafe(&st);
		if (!bad)
			return 0;
		snprintf(why, why_size, "%s is %s", path, bad);
		return -EPERM;
	}
	if (errno != ENOENT) {
		int err = -errno;

		snprintf(why, why_size, "cannot look at %s: %s", path, strerror(-err));
		return err;
	}
	/* Not there: made at the start, in a directory that must be. */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_size, "%s: no such directory to make the FIFO in", dir);
		return -ENOENT;
	}
	return 0;
}

/*
 * Open (or make, mode 0600) the FIFO at @path. The checks of
 * control__check_path() are made again on what was opened (fstat), so a
 * path swapped meanwhile is refused too.
 */
static int control__open_fifo(struct control *c, const char *path, int *fd, int which)
{
	const char *bad;
	struct stat st;
	int err;

	if (!mkfifo(path, 0600)) {
		c->created[which] = strdup(path);
		if (!c->created[which]) {
			unlink(path);
			return -ENOMEM;
		}
		reaper__own_file(path);	/* removed by the reaper if auxtrig is killed */
	} else if (errno != EEXIST) {
		err = -errno;
		pr_err("--control: cannot make the FIFO %s: %s\n", path, strerror(-err));
		return err;
	}
	/* O_RDWR: never blocks on open, and never sees EOF when a writer leaves. */
	*fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (*fd < 0) {
		err = -errno;
		pr_err("--control: cannot open %s: %s\n", path,
		       err == -ELOOP ? "a symbolic link, which is never followed" : strerror(-err));
		return err;
	}
	if (fstat(*fd, &st)) {
		err = -errno;
		pr_err("--control: cannot look at %s: %s\n", path, strerror(-err));
		return err;
	}
	bad = control__unsafe(&st);
	if (bad) {
		pr_err("--control: %s is %s\n", path, bad);
		return -EPERM;
	}
	return 0;
}

int control__open(struct control *c, const struct plan_control *pc)
{
	int err;

	control__init(c);
	switch (pc->kind) {
	case PLAN_CONTROL_NONE:
		return 0;
	case PLAN_CONTROL_FD:
		if (fcntl(pc->ctl_fd, F_GETFD) < 0 || (pc->ack_fd >= 0 && fcntl(pc->ack_fd, F_GETFD) < 0)) {
			pr_err("--control %s: expected fifo:CTL[,ACK] or fd:CTL[,ACK] with open file descriptors\n",
			       pc->text);
			return -EINVAL;
		}
		c->ctl_fd = pc->ctl_fd;
		c->ack_fd = pc->ack_fd;
		fcntl(c->ctl_fd, F_SETFL, fcntl(c->ctl_fd, F_GETFL) | O_NONBLOCK);
		return 0;
	case PLAN_CONTROL_FIFO:
		c->owned = true;
		err = control__open_fifo(c, pc->ctl, &c->ctl_fd, 0);
		if (!err && pc->ack[0])
			err = control__open_fifo(c, pc->ack, &c->ack_fd, 1);
		return err;
	}
	return -EINVAL;
}

void control__close(struct control *c)
{
	if (c->owned) {
		if (c->ctl_fd >= 0)
			close(c->ctl_fd);
		if (c->ack_fd >= 0)
			close(c->ack_fd);
	}
	for (int i = 0; i < 2; i++) {
		if (c->created[i]) {
			unlink(c->created[i]);
			reaper__disown_file(c->created[i]);
		}
		free(c->created[i]);
	}
	control__init(c);
}
