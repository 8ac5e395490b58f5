/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TARGET_H
#define AUXTRIG_TARGET_H

/*
 * sys/ layer: the processes recorded, a forked command or -p/-t (user/sys/target.c),
 * for the recorder, cpu_events.c and format/synth.c.
 */

#include <stdbool.h>
#include <sys/types.h>

/**
 * DOC: targets
 *
 * What is recorded: a command auxtrig starts (held stopped between fork and
 * exec until recording is armed, so its first instruction is covered), or
 * processes that already run (-p). Children are followed by the gate.
 */

struct target {
	bool is_command;
	bool threads;		/* -t: pids are thread ids */
	bool all;		/* -a: no end of its own unless there is a command */
	pid_t *pids;		/* the command's pid, or the -p list */
	size_t nr_pids;
	int go_fd;		/* command: write end of the "go" pipe */
	int err_fd;		/* command: read end of the exec-error pipe */
	bool exited;
	int status;		/* wait status once exited */
	bool no_subreaper;	/* PR_SET_CHILD_SUBREAPER failed: orphans of the command go to init */
};

/**
 * target__fork_command() - fork @argv[0] (searched in PATH), held before exec.
 * The command gets SIGKILL when auxtrig dies (PR_SET_PDEATHSIG), so that a
 * SIGKILLed auxtrig does not leave it running; it is moved into the reaper's
 * cgroup (reaper__adopt()) before it runs, so that its own children die too.
 * Return: 0, -ENOENT/-EACCES if it cannot be run (nothing forked), other -errno.
 */
int target__fork_command(struct target *t, char **argv);
/**
 * target__set_pids() - running processes (or with @threads, running
 * threads) @pids: each must be in /proc and running. Return: 0, -ESRCH
 * (none such), -ECHILD (it has exited: a zombie its parent has not reaped
 * yet), -ENOMEM. target__poll_exit() then ends the run when every one of them
 * has exited (zombies too: their /proc entry stays until they are reaped).
 */
int target__set_pids(struct target *t, const pid_t *pids, size_t nr, bool threads);
/**
 * target__start() - let the command exec.
 * Return: 0, or -errno of a failed exec (the child has then exited).
 */
int target__start(struct target *t);
/** target__poll_exit() - reap without blocking. Return: true once all targets are gone. */
bool target__poll_exit(struct target *t);
/**
 * target__processes() - every process that runs now (the numeric entries of
 * /proc, as the kernel lists them). Caller frees *pids. Return: 0, -errno.
 */
int target__processes(pid_t **pids, size_t *nr);
/**
 * target__descendants() - every process below @root (children, theirs...),
 * from /proc. Caller frees *pids. Return: 0, -errno.
 */
int target__descendants(pid_t root, pid_t **pids, size_t *nr);

/* How long the command's tree has between SIGTERM and SIGKILL when a run is stopped. */
#define TARGET_STOP_GRACE_MS 1000

/**
 * target__stop_tree() - stop the command and every process it started, in
 * its process group or not, orphans included (auxtrig adopts them as their
 * subreaper): SIGTERM once each, then SIGKILL for what is left after
 * @grace_ms; the command is reaped. perf 6.1 stops only its direct child.
 * -p/-t targets are left alone. Return: how many processes were sent SIGTERM.
 */
int target__stop_tree(struct target *t, unsigned int grace_ms);

/** target__kill() - kill a command that was never started (setup failed). */
void target__kill(struct target *t);
void target__exit(struct target *t);
/**
 * target__threads() - the thread ids of @pid from /proc/PID/task (the same
 * walker as target__processes()). Caller frees *tids. Return: 0, -ESRCH, -errno.
 */
int target__threads(pid_t pid, pid_t **tids, size_t *nr);

#endif
