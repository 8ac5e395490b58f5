// SPDX-License-Identifier: BSD-2-Clause
/* --control: perf's commands on a FIFO or an fd, answered on another. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/record/control.h"
#include "auxtrig/record/plan.h"
#include "auxtrig/sys/log.h"

static const char *const commands[] = {
	[CONTROL_ENABLE] = "enable", [CONTROL_DISABLE] = "disable", [CONTROL_SNAPSHOT] = "snapshot",
	[CONTROL_STOP] = "stop", [CONTROL_PING] = "ping",
};

void control__init(struct control *c)
{
	c->ctl_fd = c->ack_fd = -1;
	c->owned = false;
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

static int control__open_fifo(const char *path, int *fd)
{
	int err;

	/* O_RDWR: never blocks on open, and never sees EOF when a writer leaves. */
	*fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
	err = -errno;
	pr_err("--control: cannot open %s: %s (create it with mkfifo)\n", path, strerror(-err));
	return err;
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
		err = control__open_fifo(pc->ctl, &c->ctl_fd);
		if (!err && pc->ack[0])
			err = control__open_fifo(pc->ack, &c->ack_fd);
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
	control__init(c);
}
