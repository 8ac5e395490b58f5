/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CMD_H
#define AUXTRIG_CMD_H

/*
 * cmd/ layer, the front-ends: one function per subcommand (a file each in user/cmd/),
 * called by main.c; each parses its command line and hands over to record/ or decode/.
 * No cmd.c: one header for the six entry points, which only main.c calls.
 */

/**
 * DOC: subcommands
 *
 * Each subcommand lives in its own user/ file and returns a process exit
 * code: 0 success, 1 runtime failure, 2 usage error.
 */

#include "auxtrig/sys/exit_code.h"

/** cmd_record() - `auxtrig record`: user/cmd/record.c */
int cmd_record(int argc, char **argv);
/** cmd_probe() - `auxtrig probe`: user/cmd/probe.c */
int cmd_probe(int argc, char **argv);
/** cmd_repair() - `auxtrig repair`: user/cmd/repair.c */
int cmd_repair(int argc, char **argv);
/** cmd_list() - `auxtrig list`: user/cmd/list.c */
int cmd_list(int argc, char **argv);
/** cmd_report() - `auxtrig report`: user/cmd/report.c */
int cmd_report(int argc, char **argv);
/** cmd_script() - `auxtrig script`: user/cmd/script_cmd.c (decoding: user/decode/script.c) */
int cmd_script(int argc, char **argv);

#endif
