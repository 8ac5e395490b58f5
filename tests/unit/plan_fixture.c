// SPDX-License-Identifier: BSD-2-Clause
/* Command lines into plans, for cmocka tests (see plan_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plan_fixture.h"

void built__build(struct built *b, const char *const *args, bool add_target)
{
	char **argv = b->argv;
	int argc = 0, saved, fd;
	FILE *f = tmpfile();
	size_t n;

	memset(b, 0, sizeof(*b));
	argv[argc++] = "record";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	if (add_target) {
		argv[argc++] = "--";
		argv[argc++] = "true";
	}
	argv[argc] = NULL;
	assert_non_null(f);
	fflush(stderr);
	saved = dup(2);
	fd = fileno(f);
	dup2(fd, 2);
	b->err = record_args__parse(&b->a, argc, argv);
	if (!b->err)
		b->err = record_plan__build(&b->p, &b->a);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(b->msg, 1, sizeof(b->msg) - 1, f);
	b->msg[n] = '\0';
	fclose(f);
}

void built__done(struct built *b)
{
	record_plan__exit(&b->p);
	record_args__exit(&b->a);
}

void built__refused(struct built *b, int err, const char *fragment)
{
	if (b->err != err || !strstr(b->msg, fragment))
		fail_msg("expected %d with \"%s\", got %d: %s", err, fragment, b->err, b->msg);
	built__done(b);
}
