/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_POINT_CATALOG_H
#define AUXTRIG_POINT_CATALOG_H

#include <stddef.h>

/**
 * DOC: the points this machine offers
 *
 * The names the point grammar (point.h) can be given here: syscalls and
 * tracepoints from tracefs, the USDT probes and functions of a binary. Used
 * by `auxtrig list`, by bash completion (through `auxtrig list`) and to
 * suggest the nearest names when a point or event is unknown.
 */

/**
 * struct point_syntax - one kind of point, as `auxtrig list` explains it
 * @prefix:	what its text starts with ("syscall:")
 * @syntax:	the forms ("syscall:NAME[:enter|:exit]")
 * @what:	one phrase
 */
struct point_syntax {
	const char *prefix;
	const char *syntax;
	const char *what;
};

/** point_syntaxes - every kind of point, in the order point.h lists them. */
extern const struct point_syntax point_syntaxes[];
/** point_nr_syntaxes - how many point_syntaxes[] holds. */
extern const size_t point_nr_syntaxes;

/** enum point_names - a set of names to list or to search for the nearest */
enum point_names {
	POINT_NAMES_SYSCALL,	/* syscall NAMEs: events/syscalls/sys_enter_NAME */
	POINT_NAMES_TRACEPOINT,	/* "SYSTEM:EVENT" of every tracepoint */
	POINT_NAMES_USDT,	/* "PROVIDER:NAME" of the USDT probes of a file */
	POINT_NAMES_FUNC,	/* the functions of a file */
};

/**
 * point_catalog__foreach() - every point matching @glob, as the point grammar
 * writes it: "syscall:NAME", "tp:SYSTEM:EVENT", "usdt:PATH:PROVIDER:NAME",
 * "uprobe:PATH:SYMBOL".
 * @glob:	a shell glob over those names, or NULL for every syscall and
 *		tracepoint. A tracepoint also matches by its -e name
 *		("sched:*"), a syscall by its --on forms ("syscall:open*:exit").
 *		"usdt:PATH[:GLOB]" lists the file's USDT probes and
 *		"uprobe:PATH[:GLOB]" (or uretprobe:) its functions: PATH is
 *		never a glob.
 * @cb:		called per point, sorted within each kind, with the point and
 *		its kind ("syscall", "tracepoint", "usdt", "uprobe"); a non-zero
 *		return stops the walk and is returned
 * Return: the number of matches (>= 0); -ENOENT tracefs is not mounted or
 * PATH does not exist; -ENOEXEC PATH is not an ELF file; other -errno.
 */
int point_catalog__foreach(const char *glob, int (*cb)(const char *point, const char *kind, void *arg),
			   void *arg);

/**
 * point_catalog__suggest() - the known names nearest to an unknown one, as a
 * phrase to append to the error: " (did you mean syscall:sendfile64?)".
 * @names:	which names to search
 * @path:	POINT_NAMES_USDT, POINT_NAMES_FUNC: the file; else NULL
 * @unknown:	the name as given: a syscall NAME, "SYSTEM:EVENT",
 *		"PROVIDER:NAME", a function
 * @fmt:	how to write a candidate, with one %s ("syscall:%s:enter")
 * @buf:	the phrase, or "" when no name is near (or @unknown is a glob)
 *
 * Near means few edits (insertions, deletions, substitutions, swaps of
 * neighbours; at most 1 for short names, up to 3 for long ones) or one name
 * being the start of the other (sendfile, sendfile64). The best ones are
 * given, at most three.
 */
void point_catalog__suggest(enum point_names names, const char *path, const char *unknown, const char *fmt,
			    char *buf, size_t size);

struct point;

/**
 * point_catalog__suggest_point() - point_catalog__suggest() for a parsed
 * point the machine does not have (a syscall, tracepoint, USDT probe or
 * function), the candidates written into @as_typed in place of the unknown
 * name: "syscall:sendfile:enter" -> " (did you mean syscall:sendfile64:enter?)".
 * @as_typed:	the text the user gave that holds the point (a --on point, a
 *		-w window); the first occurrence of the name is replaced
 */
void point_catalog__suggest_point(const struct point *p, const char *as_typed, char *buf, size_t size);

/**
 * point_catalog__distance() - the edit distance between two names (optimal
 * string alignment: insert, delete, substitute, swap neighbours), capped at
 * 255. Exposed for tests.
 */
unsigned int point_catalog__distance(const char *a, const char *b);

#endif
