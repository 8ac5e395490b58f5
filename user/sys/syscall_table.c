// SPDX-License-Identifier: BSD-2-Clause
/* System call numbers per architecture: see include/auxtrig/sys/syscall_table.h. */
#include <string.h>

#include "auxtrig/sys/syscall_table.h"

#include "syscall_table_arm64.h"
#include "syscall_table_x86_64.h"

struct syscall_table {
	const char *arch;
	const struct syscall_entry *v;
	long nr;
};

#define TABLE(a) { #a, syscall_table_##a, (long)(sizeof(syscall_table_##a) / sizeof(syscall_table_##a[0])) }

static const struct syscall_table tables[] = { TABLE(x86_64), TABLE(arm64) };

const struct syscall_table *syscall_table__for_arch(const char *machine)
{
	if (!machine)
		return NULL;
	if (!strcmp(machine, "x86_64"))
		return &tables[0];
	if (!strcmp(machine, "aarch64") || !strcmp(machine, "arm64"))
		return &tables[1];
	return NULL;
}

const char *syscall_table__arch(const struct syscall_table *t)
{
	return t->arch;
}

long syscall_table__size(const struct syscall_table *t)
{
	return t->nr;
}

const struct syscall_entry *syscall_table__entry(const struct syscall_table *t, long nr)
{
	if (nr < 0 || nr >= t->nr || !t->v[nr].name)
		return NULL;
	return &t->v[nr];
}

const char *syscall_table__tp_name(const struct syscall_table *t, long nr)
{
	const struct syscall_entry *e = syscall_table__entry(t, nr);

	if (!e || !e->implemented)
		return NULL;
	return e->tp ?: e->name;
}

long syscall_table__nr(const struct syscall_table *t, const char *name)
{
	for (long i = 0; i < t->nr; i++) {
		const struct syscall_entry *e = &t->v[i];

		if (e->name && (!strcmp(e->name, name) || (e->tp && e->tp[0] && !strcmp(e->tp, name))))
			return i;
	}
	return -1;
}
