/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_C_INT_TYPE_H
#define AUXTRIG_C_INT_TYPE_H

/*
 * sys/ layer: C integer type names (user/sys/c_int_type.c), as tracepoint
 * declarations (sys/tracefs.c, tp_field__int_type()) and the casts of a
 * condition (lang/expr.c, "(u32)ret") write them: one table of typedefs and
 * one rule for combining "unsigned long long".
 */

#include <stdbool.h>
#include <stddef.h>

/* The C integer type specifiers, in the order c_int_type__size() counts them. */
enum c_int_specifier {
	C_INT_SIGNED,
	C_INT_UNSIGNED,
	C_INT_CHAR,
	C_INT_SHORT,
	C_INT_INT,
	C_INT_LONG,
	C_INT_NR_SPECIFIERS,
};

/** c_int_type__specifier() - which specifier @word (@len bytes) is, or -1 if none. */
int c_int_type__specifier(const char *word, size_t len);

/**
 * c_int_type__size() - the size in bytes of the type whose specifiers were
 * counted in @n (n[C_INT_SIGNED] ... n[C_INT_LONG]), as C combines them.
 * Return: the size; 0 if there is none or they do not make one type
 * ("short long", "signed unsigned", "long long long").
 */
unsigned int c_int_type__size(const int n[C_INT_NR_SPECIFIERS]);

/**
 * c_int_type__typedef() - integer typedef @word (@len bytes).
 * @kernel: also the kernel's typedefs that tracepoint declarations use
 *	(pid_t, gfp_t, loff_t, bool, ...); without, only the fixed-width names
 *	(s8..u64, __s8..__u64, int8_t..uint64_t, size_t, ssize_t).
 * Return: its size in bytes, negative when signed; 0 if not one of them.
 */
int c_int_type__typedef(const char *word, size_t len, bool kernel);

#endif
