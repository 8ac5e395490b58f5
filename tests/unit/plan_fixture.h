/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TESTS_PLAN_FIXTURE_H
#define AUXTRIG_TESTS_PLAN_FIXTURE_H

/**
 * DOC: command lines into plans, for cmocka tests
 *
 * `auxtrig record ARGS... -- true` through record_args__parse() and
 * record_plan__build(), as cmd_record() does, with what they printed on
 * stderr kept for the test to check. Tracepoints come from whatever
 * tracefs__set_root() the test set (tests/fixtures/tracefs).
 */

#include <stdbool.h>

#include "auxtrig/cmd/record_plan.h"

struct built {
	struct record_args a;
	struct record_plan p;
	int err;
	char msg[4096];		/* what it printed on stderr */
	char *argv[160];	/* the plan borrows from it */
};

/** built__build() - "record @args... [-- true]" parsed and built into @b. */
void built__build(struct built *b, const char *const *args, bool add_target);
/** built__done() - free the plan and the args. */
void built__done(struct built *b);
/** built__refused() - assert a refusal: @err, and a message holding @fragment; then built__done(). */
void built__refused(struct built *b, int err, const char *fragment);

#define BUILD(b, ...) built__build(b, (const char *const[]){ __VA_ARGS__, NULL }, true)
#define BUILD_NO_TARGET(b, ...) built__build(b, (const char *const[]){ __VA_ARGS__, NULL }, false)

#endif
