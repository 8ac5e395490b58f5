/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_DUMP_H
#define AUXTRIG_EXPR_DUMP_H

/* lang/ layer: a compiled condition printed (user/lang/expr_dump.c). */
#include <stdio.h>

#include "auxtrig/expr_abi.h"

/**
 * expr__dump() - print a program's instructions, one a line (for -vv).
 * @prog: the program.
 * @f: where to print.
 */
void expr__dump(const struct expr_prog *prog, FILE *f);

#endif
