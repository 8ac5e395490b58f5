/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SCRIPT_FIELDS_H
#define AUXTRIG_SCRIPT_FIELDS_H

/*
 * decode/ layer: `auxtrig script -F`, perf script's field names
 * (user/decode/script_fields.c); parsed by cmd/script_cmd.c, resolved
 * against a file by script_line.h.
 */

/**
 * DOC: the fields of a sample line
 *
 * The names and meaning are perf script's (perf 6.1, builtin-script.c):
 * "-F comm,tid,ip" prints those fields only; "-F +flags,-time" adds to and
 * takes from the default set (the two forms do not mix). flags is perf's
 * "print_flags": it never counts as choosing fields, so with "-F +flags" a
 * branch sample still shows its "=> addr".
 */

#include <stdbool.h>

#define SCRIPT_F_CPU		(1u << 0)
#define SCRIPT_F_IP		(1u << 1)
#define SCRIPT_F_ADDR		(1u << 2)
#define SCRIPT_F_SYM		(1u << 3)
#define SCRIPT_F_SYMOFF		(1u << 4)
#define SCRIPT_F_DSO		(1u << 5)
#define SCRIPT_F_COMM		(1u << 6)
#define SCRIPT_F_TID		(1u << 7)
#define SCRIPT_F_PID		(1u << 8)
#define SCRIPT_F_TIME		(1u << 9)
#define SCRIPT_F_EVENT		(1u << 10)
#define SCRIPT_F_PERIOD		(1u << 11)
#define SCRIPT_F_CALLINDENT	(1u << 12)
#define SCRIPT_F_INSN		(1u << 13)
#define SCRIPT_F_INSNLEN	(1u << 14)
#define SCRIPT_F_TRACE		(1u << 15)	/* a tracepoint sample's record, by its print fmt */

/* perf script's default for hardware (and synthesized branch) samples */
#define SCRIPT_F_DEFAULT_HW	(SCRIPT_F_COMM | SCRIPT_F_TID | SCRIPT_F_CPU | SCRIPT_F_TIME | SCRIPT_F_EVENT | \
				 SCRIPT_F_IP | SCRIPT_F_SYM | SCRIPT_F_SYMOFF | SCRIPT_F_DSO | SCRIPT_F_PERIOD)

/**
 * struct script_fields - what -F said.
 * @given: -F was given with at least one field other than flags (perf's
 *         user_set: a branch sample prints "=> addr" only if @set has ADDR)
 * @replace: the list replaces the default (no +/-): @set is the fields
 * @set: the fields (with @replace), else those added
 * @del: the fields taken away (with +/-)
 * @flags: print the branch flags (perf's "flags")
 */
struct script_fields {
	bool given;
	bool replace;
	unsigned int set;
	unsigned int del;
	bool flags;
};

/**
 * script_fields__parse() - parse a -F argument into @f (zeroed first).
 * Return: 0, or -EINVAL with one pr_err() line naming the bad part.
 */
int script_fields__parse(struct script_fields *f, const char *arg);

/** script_fields__name() - perf's name of one SCRIPT_F_* bit. */
const char *script_fields__name(unsigned int bit);

#endif
