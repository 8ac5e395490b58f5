// SPDX-License-Identifier: BSD-2-Clause
/* The events of a recording: tracepoints and auxtrig's own events, with their types. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/record/event_list.h"
#include "auxtrig/record/syscall_strings.h"

/* The common header every format starts with. */
#define OWN_HEADER \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"

/*
 * auxtrig:snapshot: when each snapshot was taken, why, and how much it held.
 * %u is the type id.
 */
#define MARKER_FORMAT \
	"name: snapshot\n" \
	"ID: %u\n" \
	"format:\n" \
	OWN_HEADER \
	"\n" \
	"\tfield:unsigned int nr;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned int cpus;\toffset:12;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned long records;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:char reason[16];\toffset:24;\tsize:16;\tsigned:0;\n" \
	"\tfield:int tid;\toffset:40;\tsize:4;\tsigned:1;\n" \
	"\tfield:unsigned int lost;\toffset:44;\tsize:4;\tsigned:0;\n" \
	"\tfield:long value;\toffset:48;\tsize:8;\tsigned:1;\n" \
	"\n" \
	"print fmt: \"nr=%%u reason=%%s records=%%lu tid=%%d value=%%ld lost=%%u\", REC->nr, REC->reason, REC->records, " \
	"REC->tid, REC->value, REC->lost\n"
_Static_assert(offsetof(struct own_snapshot_rec, reason) == 24 && offsetof(struct own_snapshot_rec, value) == 48,
	       "auxtrig:snapshot format");

/* uprobe windows' own events. */
#define OWN_COMMON \
	OWN_HEADER "\n" \
	"\tfield:unsigned int window;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned int depth;\toffset:12;\tsize:4;\tsigned:0;\n"
#define UPROBE_ENTER_FORMAT \
	"name: uprobe_enter\nID: %u\nformat:\n" OWN_COMMON \
	"\tfield:unsigned long arg0;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg1;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg2;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg3;\toffset:40;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg4;\toffset:48;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg5;\toffset:56;\tsize:8;\tsigned:0;\n\n" \
	"print fmt: \"window=%%u depth=%%u arg0=0x%%lx arg1=0x%%lx arg2=0x%%lx\", REC->window, REC->depth, " \
	"REC->arg0, REC->arg1, REC->arg2\n"
#define UPROBE_EXIT_FORMAT \
	"name: uprobe_exit\nID: %u\nformat:\n" OWN_COMMON \
	"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n" \
	"print fmt: \"window=%%u depth=%%u ret=%%ld\", REC->window, REC->depth, REC->ret\n"

/* The fields of auxtrig:mark and the records like it: trigger, nr, ret, arg0..arg5. */
#define MARK_FIELDS \
	"\tfield:unsigned int trigger;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:int nr;\toffset:12;\tsize:4;\tsigned:1;\n" \
	"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n" \
	"\tfield:unsigned long arg0;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg1;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg2;\toffset:40;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg3;\toffset:48;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg4;\toffset:56;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long arg5;\toffset:64;\tsize:8;\tsigned:0;\n"

/*
 * auxtrig:mark, auxtrig:resume / auxtrig:pause (the edges of --on resume/pause
 * windows) and auxtrig:stop (where a stop action ended the run).
 */
#define MARK_LIKE_FORMAT(NAME) \
	"name: " NAME "\nID: %u\nformat:\n" OWN_HEADER "\n" \
	MARK_FIELDS "\n" \
	"print fmt: \"trigger=%%u nr=%%d ret=%%ld arg0=0x%%lx arg1=0x%%lx arg2=0x%%lx\", REC->trigger, REC->nr, " \
	"REC->ret, REC->arg0, REC->arg1, REC->arg2\n"

/* auxtrig:mark in a run with a mark(str(argN)) trigger: the string after the record */
#define MARK_STR_FORMAT \
	"name: mark\nID: %u\nformat:\n" OWN_HEADER "\n" \
	MARK_FIELDS \
	"\tfield:__data_loc char[] str;\toffset:72;\tsize:4;\tsigned:0;\n\n" \
	"print fmt: \"trigger=%%u nr=%%d ret=%%ld arg0=0x%%lx arg1=0x%%lx arg2=0x%%lx str=\\\"%%s\\\"\", " \
	"REC->trigger, REC->nr, REC->ret, REC->arg0, REC->arg1, REC->arg2, __get_str(str)\n"

#define TRIGGER_STATS_FORMAT \
	"name: trigger_stats\nID: %u\nformat:\n" OWN_HEADER "\n" \
	"\tfield:unsigned int trigger;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned long evaluated;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long matched;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long fired;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long suppressed;\toffset:40;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long dropped;\toffset:48;\tsize:8;\tsigned:0;\n\n" \
	"print fmt: \"trigger=%%u evaluated=%%lu matched=%%lu fired=%%lu suppressed=%%lu dropped=%%lu\", " \
	"REC->trigger, REC->evaluated, REC->matched, REC->fired, REC->suppressed, REC->dropped\n"
_Static_assert(offsetof(struct own_trigger_stats_rec, evaluated) == 16 && sizeof(struct own_trigger_stats_rec) == 56,
	       "auxtrig:trigger_stats format");

static const struct {
	const char *name, *format;
	unsigned int size;
} own_events[] = {
	[OWN_UPROBE_ENTER] = { "uprobe_enter", UPROBE_ENTER_FORMAT, sizeof(struct gate_uprobe_enter_rec) },
	[OWN_UPROBE_EXIT] = { "uprobe_exit", UPROBE_EXIT_FORMAT, sizeof(struct gate_uprobe_exit_rec) },
	[OWN_MARK] = { "mark", MARK_LIKE_FORMAT("mark"), sizeof(struct gate_mark_rec) },
	[OWN_RESUME] = { "resume", MARK_LIKE_FORMAT("resume"), sizeof(struct gate_mark_rec) },
	[OWN_PAUSE] = { "pause", MARK_LIKE_FORMAT("pause"), sizeof(struct gate_mark_rec) },
	[OWN_TRIGGER_STATS] = { "trigger_stats", TRIGGER_STATS_FORMAT, sizeof(struct own_trigger_stats_rec) },
	/* where a stop action ended the run: nothing later is in the file */
	[OWN_STOP] = { "stop", MARK_LIKE_FORMAT("stop"), sizeof(struct gate_mark_rec) },
	[OWN_MARK_STR] = { "mark", MARK_STR_FORMAT, sizeof(struct gate_mark_rec) + 4 },
};

const struct rec_event *event_list__find(const struct event_list *l, const char *sys, const char *name)
{
	for (size_t i = 0; i < l->nr; i++)
		if (!strcmp(l->ev[i].fmt.system, sys) && !strcmp(l->ev[i].fmt.name, name))
			return &l->ev[i];
	return NULL;
}

int event_list__add_tp(struct event_list *l, const char *sys, const char *name, __u32 flags)
{
	struct rec_event *e = (struct rec_event *)event_list__find(l, sys, name), *tmp;
	int err;

	if (!e) {
		tmp = realloc(l->ev, (l->nr + 1) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		l->ev = tmp;
		e = &l->ev[l->nr];
		memset(e, 0, sizeof(*e));
		err = tracefs__load_format(sys, name, &e->fmt);
		if (err)
			return err;
		/* its records carry their call's strings: which arguments are strings, by number */
		if (syscall_strings__is_raw_enter(&e->fmt)) {
			err = syscall_strings__build(&l->raw_strs, NULL);
			if (err && err != -EOPNOTSUPP) {
				tp_format__exit(&e->fmt);
				return err;
			}
		}
		event_list__string_slots(e);
		e->id = EVENT_ID_BASE + l->nr;
		l->nr++;
	}
	e->flags |= flags;
	return e - l->ev;
}

/* A type id that no tracepoint in use has, from 65000 up. */
static unsigned int own_type(const struct event_list *l, unsigned int after)
{
	unsigned int t = after < 65000 ? 65000 : after + 1;

	for (;;) {
		bool used = false;

		for (size_t i = 0; i < l->nr; i++)
			used |= l->ev[i].fmt.id == t;
		if (!used)
			return t;
		t++;
	}
}

int event_list__add_own(struct event_list *l, enum own_event which)
{
	/* the type from the list as it is, before realloc() may move it */
	unsigned int type = own_type(l, l->nr ? l->ev[l->nr - 1].fmt.id : 0);
	struct rec_event *tmp = realloc(l->ev, (l->nr + 1) * sizeof(*tmp)), *e;

	if (!tmp)
		return -ENOMEM;
	l->ev = tmp;
	e = &l->ev[l->nr];
	memset(e, 0, sizeof(*e));
	snprintf(e->fmt.system, sizeof(e->fmt.system), "auxtrig");
	snprintf(e->fmt.name, sizeof(e->fmt.name), "%s", own_events[which].name);
	e->fmt.id = type;
	e->fmt.size = own_events[which].size;
	if (asprintf(&e->own_format, own_events[which].format, type) < 0)
		return -ENOMEM;
	e->id = EVENT_ID_BASE + l->nr;
	l->nr++;
	return e - l->ev;
}

int event_list__own_as(struct event_list *l, unsigned int type, enum own_event which)
{
	for (size_t i = 0; i < l->nr; i++) {
		struct rec_event *e = &l->ev[i];
		char *format;

		if (!e->own_format || e->fmt.id != type)
			continue;
		if (asprintf(&format, own_events[which].format, type) < 0)
			return -ENOMEM;
		free(e->own_format);
		e->own_format = format;
		snprintf(e->fmt.name, sizeof(e->fmt.name), "%s", own_events[which].name);
		e->fmt.size = own_events[which].size;
		return 0;
	}
	return -ENOENT;
}

int event_list__index(struct event_list *l)
{
	l->by_type_len = 1;
	for (size_t i = 0; i < l->nr; i++)
		if (l->ev[i].fmt.id + 1 > l->by_type_len)
			l->by_type_len = l->ev[i].fmt.id + 1;
	l->by_type = calloc(l->by_type_len, sizeof(*l->by_type));
	if (!l->by_type)
		return -ENOMEM;
	for (size_t i = 0; i < l->nr; i++)
		l->by_type[l->ev[i].fmt.id] = i + 1;
	/* A type id for auxtrig:snapshot that no tracepoint in the file has. */
	l->marker_type = 65000;
	while (l->marker_type < l->by_type_len && l->by_type[l->marker_type])
		l->marker_type++;
	if (asprintf(&l->marker_format, MARKER_FORMAT, l->marker_type) < 0)
		return -ENOMEM;
	return 0;
}

void event_list__exit(struct event_list *l)
{
	for (size_t i = 0; i < l->nr; i++) {
		tp_format__exit(&l->ev[i].fmt);
		free(l->ev[i].own_format);
	}
	free(l->ev);
	free(l->by_type);
	free(l->marker_format);
	syscall_strings__exit(&l->raw_strs);
	memset(l, 0, sizeof(*l));
}

/*
 * Pointer arguments that are not NUL-terminated strings although declared
 * "const char *" (a buffer with its length), and those declared "char *"
 * that are (the kernel's prototypes lack the const).
 */
static const char *const not_strings[] = { "buf", "u_msg_ptr" };
static const struct {
	const char *syscall, *field;
} char_strings[] = {
	{ "mount", "dev_name" }, { "mount", "dir_name" }, { "mount", "type" },
	{ "umount", "name" }, { "utime", "filename" }, { "utimes", "filename" },
};

static bool is_string_arg(const char *syscall, const struct tp_field *f)
{
	if (f->is_common || f->size != 8)
		return false;
	if (!strcmp(f->type, "const char *")) {
		for (size_t i = 0; i < sizeof(not_strings) / sizeof(not_strings[0]); i++)
			if (!strcmp(f->name, not_strings[i]))
				return false;
		return true;
	}
	if (!strcmp(f->type, "char *"))
		for (size_t i = 0; i < sizeof(char_strings) / sizeof(char_strings[0]); i++)
			if (!strcmp(syscall, char_strings[i].syscall) && !strcmp(f->name, char_strings[i].field))
				return true;
	return false;
}

size_t event_list__string_fields(const struct tp_format *fmt, const struct tp_field **fields, size_t max)
{
	size_t n = 0;

	if (strcmp(fmt->system, "syscalls") || strncmp(fmt->name, "sys_enter_", 10))
		return 0;
	for (size_t i = 0; i < fmt->nr_fields && n < max; i++)
		if (is_string_arg(fmt->name + 10, &fmt->fields[i]))
			fields[n++] = &fmt->fields[i];
	return n;
}

/* The kernel's own __data_loc field of string argument @f ("__filename_val"), if its format has one. */
static const struct tp_field *kernel_string_field(const struct tp_format *fmt, const struct tp_field *f)
{
	char name[80];
	const struct tp_field *k;

	snprintf(name, sizeof(name), "__%s_val", f->name);
	k = tp_format__field(fmt, name);
	return k && k->is_dynamic && !k->is_rel && k->size == 4 ? k : NULL;
}

void event_list__string_slots(struct rec_event *e)
{
	const struct tp_field *fields[GATE_MAX_STRS], *k;
	size_t nr = event_list__string_fields(&e->fmt, fields, GATE_MAX_STRS);

	memset(e->str_slot, 0, sizeof(e->str_slot));
	e->nr_str_slots = 0;
	for (size_t i = 0; i < nr; i++)
		if ((k = kernel_string_field(&e->fmt, fields[i])) && k->offset + 4 <= e->fmt.size) {
			e->str_slot[i] = (__u16)k->offset;
			e->nr_str_slots = (__u8)(i + 1);
		}
}

/* Replace the first @from in *@s by @to. */
static int replace_once(char **s, const char *from, const char *to)
{
	char *at = strstr(*s, from), *n;

	if (!at)
		return -ENOENT;
	if (asprintf(&n, "%.*s%s%s", (int)(at - *s), *s, to, at + strlen(from)) < 0)
		return -ENOMEM;
	free(*s);
	*s = n;
	return 0;
}

/*
 * raw_syscalls:sys_enter carries the user strings of its call's arguments
 * (syscall_strings.h): one __data_loc per argument, "argN_str", after the
 * fixed fields; empty for the arguments that are no string. The print fmt
 * stays the kernel's, so perf script prints what it always did.
 */
static int raw_enter_format(char **t, unsigned int size)
{
	char to[160];
	int err = 0;

	for (unsigned int i = 0; i < SYSCALL_STRINGS_ARGS && !err; i++) {
		snprintf(to, sizeof(to),
			 "\n\tfield:__data_loc char[] arg%u_str;\toffset:%u;\tsize:4;\tsigned:0;\n\nprint fmt:", i,
			 size + 4 * i);
		err = replace_once(t, "\n\nprint fmt:", to) ? -EINVAL : 0;
	}
	return err;
}

int event_list__file_format(const struct rec_event *e, char **text)
{
	const struct tp_field *fields[GATE_MAX_STRS];
	size_t nr = event_list__string_fields(&e->fmt, fields, GATE_MAX_STRS);
	bool raw = syscall_strings__is_raw_enter(&e->fmt);
	char from[160], to[160], *t = NULL, *pf;
	int err = 0;

	*text = NULL;
	if (!nr && !raw)
		return 0;
	err = tracefs__format_text(e->fmt.system, e->fmt.name, &t);
	if (err)
		return err;
	if (raw) {
		err = raw_enter_format(&t, e->fmt.size);
		if (err)
			free(t);
		else
			*text = t;
		return err;
	}
	for (size_t i = 0; i < nr && !err; i++) {
		const struct tp_field *f = fields[i];

		/* the new fields, last of the fixed ones: before the blank line of "print fmt" */
		snprintf(to, sizeof(to),
			 "\n\tfield:__data_loc char[] %s_str;\toffset:%u;\tsize:4;\tsigned:0;\n\nprint fmt:", f->name,
			 e->fmt.size + 4 * (unsigned int)i);
		err = replace_once(&t, "\n\nprint fmt:", to) ? -EINVAL : 0;
		/*
		 * The pointer's conversion and argument become the string's. The
		 * conversion is found with what precedes its name (the format's
		 * opening quote or ", "), so "name" is not found inside "pathname".
		 */
		pf = err ? NULL : strstr(t, "print fmt:");
		/* a kernel that prints the string itself (__get_str(__NAME_val)) keeps its print fmt */
		if (!pf || kernel_string_field(&e->fmt, f))
			continue;
		snprintf(from, sizeof(from), "\"%s: 0x%%08lx", f->name);
		snprintf(to, sizeof(to), "\"%s: \\\"%%s\\\"", f->name);
		if (replace_once(&t, from, to)) {
			snprintf(from, sizeof(from), ", %s: 0x%%08lx", f->name);
			snprintf(to, sizeof(to), ", %s: \\\"%%s\\\"", f->name);
			if (replace_once(&t, from, to))
				continue;
		}
		snprintf(from, sizeof(from), "((unsigned long)(REC->%s))", f->name);
		snprintf(to, sizeof(to), "__get_str(%s_str)", f->name);
		err = replace_once(&t, from, to) ? -EINVAL : 0;
	}
	if (err) {
		free(t);
		return err;
	}
	*text = t;
	return 0;
}
