/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXIT_CODE_H
#define AUXTRIG_EXIT_CODE_H

/**
 * enum exit_code - what `auxtrig` exits with: 0 success, 1 runtime
 * failure, 2 usage error. The front-ends (include/auxtrig/cmd/cmd.h)
 * return them, and so does the recorder, which runs the whole command.
 */
enum exit_code {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
};

#endif
