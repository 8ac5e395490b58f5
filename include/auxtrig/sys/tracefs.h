/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TRACEFS_H
#define AUXTRIG_TRACEFS_H

/*
 * sys/ layer: tracepoint names and formats from tracefs (user/sys/tracefs.c),
 * for the plan, the gate and format/tracing_data.c.
 */

#include <stdbool.h>
#include <stddef.h>

/**
 * DOC: tracefs
 *
 * Finding tracepoints by name and reading their format files. The tracefs
 * root is found from /proc/mounts (tracefs, or debugfs/tracing on old
 * systems).
 */

#define TP_NAME_MAX 128

/**
 * struct tp_field - one field of a tracepoint record, from its format file
 * @name:	field name ("filename", "common_pid", "__data_loc char[] name" -> "name")
 * @type:	C type as the format file spells it ("const char *")
 * @offset:	byte offset in the raw record
 * @size:	size in bytes
 * @is_signed:	from "signed:1"
 * @is_dynamic:	__data_loc (u32 len << 16 | offset) field
 * @is_rel:	__rel_loc: offset counts from the end of this field
 * @is_common:	one of the common_* header fields
 * @is_array:	declared NAME[N]
 */
struct tp_field {
	char name[64];
	char type[64];
	unsigned int offset;
	unsigned int size;
	bool is_signed;
	bool is_dynamic;
	bool is_rel;
	bool is_common;
	bool is_array;
};

/**
 * struct tp_format - a tracepoint: its names, id and fields
 * @system, @name:	"syscalls", "sys_enter_openat"
 * @id:		tracepoint id (perf attr.config, record common_type)
 * @size:	end of the last fixed field: bytes of the record before dynamic data
 * @nr_fields, @fields: every field, common ones first
 * @print_fmt:	the "print fmt:" line after its label, or NULL
 */
struct tp_format {
	char system[TP_NAME_MAX];
	char name[TP_NAME_MAX];
	unsigned int id;
	unsigned int size;
	size_t nr_fields;
	struct tp_field *fields;
	char *print_fmt;
};

/**
 * tp_field__int_type() - the integer type @f's declaration names, as C
 * sizes it: "int" 4 bytes signed, "unsigned long" 8 unsigned, "pid_t" 4
 * signed, "umode_t" 2 unsigned, "u32" 4 unsigned, ... The record may hold
 * it in more bytes than that: every syscall argument is an 8-byte slot,
 * so an int argument (dfd, -100) is there as the register passed it,
 * 0x00000000ffffff9c, and only its low 4 bytes, sign-extended, are the
 * int. The format's "signed:" says nothing of that (0 for every argument).
 * @size, @is_signed: set on success.
 *
 * Return: 0; -ENOENT for a pointer, array, string, struct, enum or a
 * typedef this table does not know (then the format's size and "signed:"
 * are all there is).
 */
int tp_field__int_type(const struct tp_field *f, unsigned int *size, bool *is_signed);

/**
 * tracefs__set_root() - use @root as the tracefs mount point from now on
 * (tests: tests/fixtures/tracefs); NULL: find it again.
 */
void tracefs__set_root(const char *root);

/**
 * tracefs__find_mount() - where tracefs is mounted, from /proc/mounts:
 * /sys/kernel/tracing, else /sys/kernel/debug/tracing, else the first
 * tracefs mount, else debugfs's tracing directory (old systems).
 * Return: 0 with the path in @buf, -ENOENT (@buf "") or -errno.
 */
int tracefs__find_mount(char *buf, size_t size);

/** tracefs__root() - the tracefs mount point, or NULL with errno set (ENOENT: not mounted). */
const char *tracefs__root(void);

/**
 * tracefs__load_format() - read events/SYSTEM/NAME/{id,format}.
 * Return: 0, -ENOENT if there is no such tracepoint, other -errno.
 */
int tracefs__load_format(const char *system, const char *name, struct tp_format *fmt);
/**
 * tp_format__parse() - the fields, id and print fmt of one format file's
 * text (as tracefs has it, or as a perf.data file's tracing data carries
 * it). @fmt's system and name are left as they are ("name:" is not read).
 * Return: 0, -EINVAL for a malformed field line or no "ID:", -ENOMEM.
 */
int tp_format__parse(const char *text, struct tp_format *fmt);
/** tp_format__exit() - free what tracefs__load_format() or tp_format__parse() allocated. */
void tp_format__exit(struct tp_format *fmt);
/** tp_format__field() - the field called NAME, or NULL. */
const struct tp_field *tp_format__field(const struct tp_format *fmt, const char *name);

/**
 * tracefs__expand() - every tracepoint matching "SYS:NAME", where either part
 * may be a shell glob ("syscalls:sys_enter_*", "sched:*").
 * @pattern:	the spec as the user typed it
 * @cb:		called with system and name for each match, sorted; a non-zero
 *		return stops the walk and is returned
 * Return: number of matches (>= 0) or -errno; 0 matches is not an error here.
 */
int tracefs__expand(const char *pattern, int (*cb)(const char *system, const char *name, void *arg),
		    void *arg);

#endif
