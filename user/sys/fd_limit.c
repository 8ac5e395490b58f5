// SPDX-License-Identifier: BSD-2-Clause
/* The open-file limit: see include/auxtrig/sys/fd_limit.h. */
#include <stdbool.h>
#include <sys/resource.h>

#include "auxtrig/sys/fd_limit.h"

static struct rlimit saved;
static bool raised;

void fd_limit__raise(void)
{
	struct rlimit rl;

	if (raised || getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	saved = rl;
	rl.rlim_cur = rl.rlim_max;
	if (!setrlimit(RLIMIT_NOFILE, &rl))
		raised = true;
}

void fd_limit__restore(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &saved);
}
