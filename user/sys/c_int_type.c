// SPDX-License-Identifier: BSD-2-Clause
/* C integer type names: see include/auxtrig/sys/c_int_type.h. */
#include <stdbool.h>
#include <string.h>

#include "auxtrig/sys/c_int_type.h"

static const char *const specifiers[C_INT_NR_SPECIFIERS] = {
	[C_INT_SIGNED] = "signed", [C_INT_UNSIGNED] = "unsigned", [C_INT_CHAR] = "char",
	[C_INT_SHORT] = "short",   [C_INT_INT] = "int",		  [C_INT_LONG] = "long",
};

/* Integer typedefs: bytes, negative when signed. The fixed-width ones first (NR_FIXED). */
static const struct {
	const char *name;
	int size;
} typedefs[] = {
	{ "s8", -1 },	     { "s16", -2 },	 { "s32", -4 },	       { "s64", -8 },
	{ "u8", 1 },	     { "u16", 2 },	 { "u32", 4 },	       { "u64", 8 },
	{ "__s8", -1 },	     { "__s16", -2 },	 { "__s32", -4 },      { "__s64", -8 },
	{ "__u8", 1 },	     { "__u16", 2 },	 { "__u32", 4 },       { "__u64", 8 },
	{ "int8_t", -1 },    { "int16_t", -2 },	 { "int32_t", -4 },    { "int64_t", -8 },
	{ "uint8_t", 1 },    { "uint16_t", 2 },	 { "uint32_t", 4 },    { "uint64_t", 8 },
	{ "size_t", (int)sizeof(size_t) },	 { "ssize_t", -(int)sizeof(size_t) },
#define NR_FIXED 26
	{ "bool", 1 },	     { "_Bool", 1 },	 { "uint", 4 },	       { "ulong", (int)sizeof(long) },
	{ "pid_t", -4 },     { "uid_t", 4 },	 { "gid_t", 4 },       { "qid_t", 4 },
	{ "umode_t", 2 },    { "mode_t", 4 },	 { "dev_t", 4 },       { "clockid_t", -4 },
	{ "timer_t", -4 },   { "mqd_t", -4 },	 { "key_t", -4 },      { "key_serial_t", -4 },
	{ "rwf_t", -4 },     { "gfp_t", 4 },	 { "fmode_t", 4 },     { "loff_t", -8 },
	{ "off_t", -(int)sizeof(long) },	 { "aio_context_t", (int)sizeof(long) },
	{ "ino_t", (int)sizeof(long) },		 { "sector_t", 8 },
};

_Static_assert(NR_FIXED <= sizeof(typedefs) / sizeof(typedefs[0]), "NR_FIXED counts the fixed-width names");

static bool is(const char *word, size_t len, const char *name)
{
	return strlen(name) == len && !memcmp(word, name, len);
}

int c_int_type__specifier(const char *word, size_t len)
{
	for (int i = 0; i < C_INT_NR_SPECIFIERS; i++)
		if (is(word, len, specifiers[i]))
			return i;
	return -1;
}

unsigned int c_int_type__size(const int n[C_INT_NR_SPECIFIERS])
{
	int words = 0;

	for (int i = 0; i < C_INT_NR_SPECIFIERS; i++)
		words += n[i];
	if (!words || n[C_INT_SIGNED] + n[C_INT_UNSIGNED] > 1 || n[C_INT_CHAR] + n[C_INT_SHORT] > 1 ||
	    n[C_INT_INT] > 1 || n[C_INT_LONG] > 2 || (n[C_INT_CHAR] && (n[C_INT_INT] || n[C_INT_LONG])) ||
	    (n[C_INT_SHORT] && n[C_INT_LONG]))
		return 0;
	return n[C_INT_CHAR] ? 1 : n[C_INT_SHORT] ? 2 : n[C_INT_LONG] == 2 ? 8 : n[C_INT_LONG] ? sizeof(long) : 4;
}

int c_int_type__typedef(const char *word, size_t len, bool kernel)
{
	size_t nr = kernel ? sizeof(typedefs) / sizeof(typedefs[0]) : NR_FIXED;

	for (size_t i = 0; i < nr; i++)
		if (is(word, len, typedefs[i].name))
			return typedefs[i].size;
	return 0;
}
