// SPDX-License-Identifier: BSD-2-Clause
/* The user strings of raw_syscalls records: see include/auxtrig/record/syscall_strings.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "auxtrig/record/event_list.h"
#include "auxtrig/record/syscall_strings.h"
#include "auxtrig/sys/syscall_table.h"

bool syscall_strings__is_raw_enter(const struct tp_format *fmt)
{
	return !strcmp(fmt->system, "raw_syscalls") && !strcmp(fmt->name, "sys_enter");
}

/* The offsets of @fmt's string arguments in a raw record, into @off. */
static void string_offsets(const struct tp_format *fmt, __u8 off[GATE_MAX_STRS])
{
	const struct tp_field *strs[GATE_MAX_STRS];
	size_t nr = event_list__string_fields(fmt, strs, GATE_MAX_STRS), k = 0;
	unsigned int arg = 0;

	memset(off, 0, GATE_MAX_STRS);
	for (size_t i = 0; i < fmt->nr_fields && arg < SYSCALL_STRINGS_ARGS; i++) {
		const struct tp_field *f = &fmt->fields[i];

		if (f->is_common || !strcmp(f->name, "__syscall_nr"))
			continue;
		for (size_t j = 0; j < nr && k < GATE_MAX_STRS; j++)
			if (strs[j] == f)
				off[k++] = (__u8)(SYSCALL_RAW_ARGS_OFF + 8 * arg);
		arg++;
	}
}

int syscall_strings__build(struct syscall_strings *s, const char *machine)
{
	const struct syscall_table *t;
	struct utsname u;
	long nr;
	int err = 0;

	memset(s, 0, sizeof(*s));
	if (!machine) {
		if (uname(&u))
			return -errno;
		machine = u.machine;
	}
	t = syscall_table__for_arch(machine);
	if (!t)
		return -EOPNOTSUPP;
	s->nr = (size_t)syscall_table__size(t);
	s->str_off = calloc(s->nr, sizeof(*s->str_off));
	s->enter = calloc(s->nr, sizeof(*s->enter));
	if (!s->str_off || !s->enter) {
		syscall_strings__exit(s);
		return -ENOMEM;
	}
	for (nr = 0; (size_t)nr < s->nr && !err; nr++) {
		const char *name = syscall_table__tp_name(t, nr);
		char tp[TP_NAME_MAX];
		struct tp_format fmt;

		if (!name)
			continue;
		snprintf(tp, sizeof(tp), "sys_enter_%s", name);
		err = tracefs__load_format("syscalls", tp, &fmt);
		if (err == -ENOENT) {
			err = 0;	/* not in this kernel */
			continue;
		}
		if (err)
			break;
		string_offsets(&fmt, s->str_off[nr]);
		memcpy(s->enter[s->nr_enter++], tp, sizeof(tp));
		tp_format__exit(&fmt);
	}
	if (err)
		syscall_strings__exit(s);
	return err;
}

void syscall_strings__exit(struct syscall_strings *s)
{
	free(s->str_off);
	free(s->enter);
	memset(s, 0, sizeof(*s));
}
