/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SYS_FD_LIMIT_H
#define AUXTRIG_SYS_FD_LIMIT_H

/*
 * The open-file limit. A recording of hundreds of tracepoints holds several
 * descriptors for each (its perf events on every CPU, the gate's program and
 * link), more than the usual soft limit of 1024: auxtrig raises its soft
 * limit to the hard one, as perf does, and gives the command it starts the
 * limit it would have had.
 */

/**
 * fd_limit__raise() - raise RLIMIT_NOFILE's soft limit to its hard limit,
 * remembering the soft limit it had. Nothing is said if it cannot: opening
 * then fails with EMFILE where it would have anyway.
 */
void fd_limit__raise(void);

/**
 * fd_limit__restore() - in a child about to exec the command: the soft limit
 * from before fd_limit__raise() (async-signal-safe: a setrlimit() call).
 */
void fd_limit__restore(void);

#endif /* AUXTRIG_SYS_FD_LIMIT_H */
