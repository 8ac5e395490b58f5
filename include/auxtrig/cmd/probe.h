/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CMD_PROBE_H
#define AUXTRIG_CMD_PROBE_H

/*
 * cmd/ layer: `auxtrig probe`'s printing (user/cmd/probe.c), text or JSON,
 * of the report sys/probe.h collects.
 */

#include <stdio.h>

#include "auxtrig/sys/probe.h"

/**
 * DOC: `auxtrig probe`, the front-end
 *
 * Prints the report include/auxtrig/sys/probe.h collects: one line per
 * capability, or one JSON object (--json).
 */

/** probe_report__print_text() - one line per capability: name, ok/missing, meaning. */
void probe_report__print_text(const struct probe_report *r, FILE *f);

/** probe_report__print_json() - the same as one JSON object and a newline. */
void probe_report__print_json(const struct probe_report *r, FILE *f);

/**
 * probe_json__string() - write @s as a JSON string literal (quotes included),
 * escaping '"', '\\' and every control character; NULL writes null. Bytes
 * >= 0x80 pass through (sysfs and uname are UTF-8 or ASCII).
 */
void probe_json__string(FILE *f, const char *s);

/**
 * probe__main() - `auxtrig probe` with injectable kernel and output.
 * @argc, @argv: arguments, argv[0] being "probe".
 * @ops: the kernel.
 * @out: where the report goes (usage errors go to stderr).
 *
 * Return: exit code: 0 (report printed, whatever is missing), 1 (could not
 * run), 2 (bad options).
 */
int probe__main(int argc, char **argv, const struct probe_ops *ops, FILE *out);

#endif
