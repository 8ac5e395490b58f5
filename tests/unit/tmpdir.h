/* SPDX-License-Identifier: BSD-2-Clause */
/* Where unit tests make their files: $TMPDIR when set (as mkstemp(3) users expect), else /tmp. */
#ifndef AUXTRIG_TESTS_TMPDIR_H
#define AUXTRIG_TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/**
 * tmpdir__template() - a mkdtemp()/mkstemp() template under $TMPDIR
 * @buf: where to write "<dir>/<name>-XXXXXX"
 * @size: its size
 * @name: the file's or directory's name prefix
 *
 * Return: @buf, or NULL when the template does not fit (the caller asserts).
 */
static inline char *tmpdir__template(char *buf, size_t size, const char *name)
{
	const char *dir = getenv("TMPDIR");
	int n;

	if (!dir || !*dir)
		dir = "/tmp";
	n = snprintf(buf, size, "%s/%s-XXXXXX", dir, name);
	return n > 0 && (size_t)n < size ? buf : NULL;
}

#endif
