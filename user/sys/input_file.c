// SPDX-License-Identifier: BSD-2-Clause
/* Opening a file a user named for reading, never blocking on a FIFO (input_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/sys/input_file.h"

int input_file__open(const char *path, int flags, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
	int fl, err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* a regular file ignores O_NONBLOCK; a FIFO is read as a pipe from here on */
	if (S_ISFIFO(st->st_mode) || S_ISREG(st->st_mode)) {
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	return fd;
}

const char *input_file__kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	default:
		return "a regular file";
	}
}
