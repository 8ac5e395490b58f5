/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_INPUT_FILE_H
#define AUXTRIG_INPUT_FILE_H

/*
 * sys/ layer: opening a file a user named for reading (user/sys/input_file.c),
 * for every reader: perf.data files (script, report, repair), --kallsyms, ELF
 * files found under --symfs or the build-id directory, debug files.
 */

/**
 * DOC: input files
 *
 * A plain open(2) of a FIFO for reading blocks until somebody opens it for
 * writing, forever when nobody does. input_file__open() opens with
 * O_NONBLOCK, asks fstat(2) what it got, and only then gives a regular file
 * or a FIFO its blocking reads back: a FIFO is then read as a pipe is (a
 * FIFO without a writer when it was opened reads as empty at once, never
 * blocks), and the caller refuses, in one line, any kind it cannot read.
 */

#include <stdbool.h>
#include <sys/stat.h>

/**
 * input_file__open() - open @path read-only (plus @flags, e.g. O_NOFOLLOW)
 * without blocking on a FIFO; @st gets its fstat().
 * Return: the fd (close-on-exec), or -errno.
 */
int input_file__open(const char *path, int flags, struct stat *st);

/**
 * input_file__kind() - "a FIFO", "a directory", "a character device",
 * "a block device", "a socket", "a symbolic link" or "a regular file": what
 * @st is, for messages ("%s is %s, not a regular file").
 */
const char *input_file__kind(const struct stat *st);

#endif
