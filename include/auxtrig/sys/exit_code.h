/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXIT_CODE_H
#define AUXTRIG_EXIT_CODE_H

/*
 * sys/ layer: the process exit codes every command returns (no .c).
 */

/**
 * enum exit_code - what `auxtrig` exits with: 0 success, 1 runtime
 * failure, 2 usage error, 3 input this build does not handle (auxtrig
 * script on ETMv3/PTM trace or an unknown AUX type). The front-ends
 * (include/auxtrig/cmd/cmd.h) return them, and so do the recorder, which
 * runs the whole command, and script__run().
 */
enum exit_code {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
	EXIT_UNSUPPORTED = 3,
};

#endif
