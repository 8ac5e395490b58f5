/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_REAPER_H
#define AUXTRIG_REAPER_H

/*
 * sys/ layer: what a recording leaves behind when auxtrig itself is
 * SIGKILLed (user/sys/reaper.c), for target.c, the recorder, control.c and
 * trigger_prog.c.
 */

#include <stdbool.h>
#include <sys/types.h>

/**
 * DOC: reaper
 *
 * A SIGKILLed process cleans up nothing, so a recording hands its cleanup
 * to a small process forked when it starts: the reaper. It owns
 *
 * - a cgroup v2 child cgroup, auxtrig-PID, made beside auxtrig's own cgroup,
 *   that the command is moved into before it runs: whatever the command
 *   starts is in it, setsid() or double fork included;
 * - the files auxtrig made and removes at exit (--control FIFOs, the object
 *   a --trigger-prog .c compiles to), each with its device and inode number.
 *
 * The reaper waits on a socket only auxtrig holds (close-on-exec). When it
 * reads end of file, auxtrig is gone: if auxtrig said goodbye
 * (reaper__stop()), the processes still in the cgroup are moved to the
 * parent cgroup (a command's background children outlive a normal run, as
 * without auxtrig); if not (SIGKILL, crash), they are killed (cgroup.kill,
 * or SIGKILL to each where that file is missing). Then the cgroup is removed,
 * and each file is unlinked if it is still the one auxtrig made (same device
 * and inode): a file auxtrig did not make is never removed.
 *
 * Where cgroup v2 is not mounted or auxtrig cannot make a cgroup there, the
 * files are still removed, and only the command itself dies with auxtrig
 * (PR_SET_PDEATHSIG, see target__fork_command()).
 *
 * There is one reaper per process (the files and the command of this
 * recording), so these functions work on one hidden instance.
 */

/**
 * reaper__start() - fork the reaper; with @cgroup, make the cgroup first.
 * Call it before threads or BPF objects exist: the reaper closes every
 * descriptor it inherits but its socket. Return: 0, or -errno (no reaper:
 * the other functions then do nothing).
 */
int reaper__start(bool cgroup);
/** reaper__pid() - the reaper's pid (a child of auxtrig), or -1 without one. */
pid_t reaper__pid(void);
/**
 * reaper__adopt() - move @pid into the cgroup, before it runs anything.
 * Return: 0, -ENODEV without a cgroup, or -errno of the write.
 */
int reaper__adopt(pid_t pid);
/**
 * reaper__own_file() - @path was just made by auxtrig: remove it if auxtrig
 * dies before it does. Relative paths are taken from the working directory.
 */
void reaper__own_file(const char *path);
/** reaper__disown_file() - auxtrig removed @path itself: forget it. */
void reaper__disown_file(const char *path);
/**
 * reaper__stop() - a normal end: the reaper releases what is left in the
 * cgroup to the parent cgroup, removes the cgroup and the files still owned,
 * and exits; this waits for it.
 */
void reaper__stop(void);

#endif
