/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TP_PRINT_H
#define AUXTRIG_TP_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "auxtrig/sys/tracefs.h"

/**
 * DOC: printing a tracepoint record
 *
 * A raw tracepoint record (a sample's PERF_SAMPLE_RAW) as its format's
 * "print fmt" says, the way perf script prints it (libtraceevent): the
 * printf format with its arguments evaluated on the record. The arguments
 * may use REC->field, integer and string literals, casts, C's arithmetic,
 * bit, comparison, logical and ?: operators, __get_str(), __print_flags()
 * and __print_symbolic(). Anything else (%pS, __print_hex, ...) makes
 * tp_print__format() fail, and the caller prints the fields instead
 * (tp_print__fields()).
 */

/**
 * tp_field__int() - an integer field of @raw, sign-extended when the field is
 * signed. Return: 0, -ERANGE the field lies outside @size, -EINVAL a string.
 */
int tp_field__int(const struct tp_field *f, const void *raw, size_t size, __s64 *v);

/**
 * tp_field__str() - a string field: char NAME[N] or __data_loc char[] NAME,
 * copied NUL-terminated into @buf. Return: @buf, or NULL when the field is
 * not a string or lies outside @size.
 */
const char *tp_field__str(const struct tp_field *f, const void *raw, size_t size, char *buf, size_t bufsize);

/** tp_field__is_str() - is @f a string (a char array, or __data_loc char[])? */
bool tp_field__is_str(const struct tp_field *f);

/**
 * tp_print__format() - @raw as @fmt's print fmt prints it.
 * Return: 0 with @buf filled (truncated to @size), -EINVAL when the print
 * fmt uses something not evaluated here or the record is too short.
 */
int tp_print__format(const struct tp_format *fmt, const void *raw, size_t size, char *buf, size_t bufsize);

/**
 * tp_print__fields() - every non-common field of @raw as "name=value",
 * space-separated: strings as they are, signed integers in decimal,
 * unsigned ones in hex (0x...).
 */
void tp_print__fields(const struct tp_format *fmt, const void *raw, size_t size, char *buf, size_t bufsize);

#endif
