/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CONTROL_H
#define AUXTRIG_CONTROL_H

/*
 * record/ layer: the --control channel (user/record/control.c), read by the
 * recorder's loop.
 */

#include <stdbool.h>

struct plan_control;

/**
 * DOC: the --control channel
 *
 * perf record's control protocol: commands one per line on CTL (enable,
 * disable, snapshot, stop, ping), each answered "ack\n" on ACK ("error\n"
 * for an unknown one). FIFOs are opened O_RDWR, so opening never blocks and
 * a writer that leaves is no EOF; fds given as fd:CTL,ACK stay the caller's.
 *
 * Whoever can write CTL drives the recording and whoever can write ACK can
 * forge its answers, so a FIFO path is used only when it is safe (issue #13,
 * 2; perf 6.1 checks none of this): never through a symbolic link, only a
 * FIFO, owned by the recording user and not writable by group or others. A
 * path that does not exist yet is created as a FIFO of mode 0600, and
 * removed at the end.
 */

struct stat;

enum control_cmd {
	CONTROL_ENABLE,
	CONTROL_DISABLE,
	CONTROL_SNAPSHOT,
	CONTROL_STOP,
	CONTROL_PING,
};

/**
 * struct control - the channel
 * @ctl_fd, @ack_fd: -1 when not in use
 * @owned:	we opened them (FIFOs): control__close() closes them
 */
struct control {
	int ctl_fd, ack_fd;
	bool owned;
	char *created[2];	/* FIFOs control__open() made (CTL, ACK): removed by control__close() */
};

/**
 * control__unsafe() - why the file @st describes may not be a control FIFO
 * (a phrase naming the danger and what to do), or NULL when it may.
 */
const char *control__unsafe(const struct stat *st);

/**
 * control__check_path() - whether @path may serve as a control FIFO: not
 * there yet (it will be made) in a directory that is, or control__unsafe()
 * has no objection to what is there (seen with lstat(), so a symbolic link is
 * refused as one).
 * Return: 0, or -errno with @why set (-ENOENT: no such directory; -EPERM: unsafe).
 */
int control__check_path(const char *path, char *why, size_t why_size);

/** control__init() - no channel. */
void control__init(struct control *c);

/** control__open() - open the plan's channel (none: nothing). Return: 0 or -errno, with a message. */
int control__open(struct control *c, const struct plan_control *pc);

/** control__fd() - the fd to poll, or -1. */
static inline int control__fd(const struct control *c)
{
	return c->ctl_fd;
}

/** typedef control_fn - run one command; 0 or -errno (stops reading). */
typedef int (*control_fn)(void *ctx, enum control_cmd cmd);

/** control__read() - the commands waiting on CTL, each run by @fn and answered. */
int control__read(struct control *c, control_fn fn, void *ctx);

/** control__ack() - write @msg on ACK, if there is one. */
void control__ack(struct control *c, const char *msg);

/** control__close() - close what control__open() opened. */
void control__close(struct control *c);

#endif
