/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EVENT_LIST_H
#define AUXTRIG_EVENT_LIST_H

/*
 * record/ layer: the events a recording writes to its file
 * (user/record/event_list.c), built by cmd/record_plan.c into the plan.
 */

#include <linux/types.h>
#include <stddef.h>

#include "auxtrig/record/syscall_strings.h"
#include "auxtrig/sys/tracefs.h"

/**
 * DOC: the events of a recording
 *
 * Every event a recording writes to the file, each described to perf as a
 * tracepoint: the kernel's tracepoints (window ends, -e events, trigger
 * points that are recorded) and auxtrig's own events (auxtrig:mark,
 * auxtrig:resume/pause, auxtrig:uprobe_enter/exit, auxtrig:trigger_stats,
 * auxtrig:snapshot), whose formats travel in the file's tracing data.
 *
 * Records the gate emits are samples of the bpf-output event; in the file
 * they belong to the event they came from, with an id of ours
 * (EVENT_ID_BASE + index): no kernel event has those ids.
 */

#define EVENT_ID_BASE	(1ULL << 56)
#define MARKER_ID	(EVENT_ID_BASE - 1)	/* auxtrig:snapshot's samples */

/**
 * struct rec_event - one event of the file
 * @fmt:	its format (auxtrig's own: names, id and size only)
 * @id:		the id its samples carry in the file
 * @flags:	GATE_TP_RECORD if -e asked for it (gate_abi.h)
 * @own_format:	auxtrig's own event: its format text; never attached
 */
struct rec_event {
	struct tp_format fmt;
	__u64 id;
	__u32 flags;
	char *own_format;
	/* the kernel's own __data_loc of each recorded string (event_list__string_slots()), 0: none */
	__u16 str_slot[GATE_MAX_STRS];
	__u8 nr_str_slots;	/* how many of str_slot to look at: 0 when none is set */
};

/**
 * struct event_list - the events, and the record type -> event table
 * @ev, @nr:		the events, in the order they were added
 * @by_type:		common_type -> index + 1 into @ev, 0 if none (event_list__index())
 * @marker_type:	a type id for auxtrig:snapshot that no event has
 * @marker_format:	its format text
 * @raw_strs:		with raw_syscalls:sys_enter, the string arguments of each
 *			system call number (syscall_strings.h); empty otherwise
 */
struct event_list {
	struct rec_event *ev;
	size_t nr;
	__u64 *by_type;
	size_t by_type_len;
	unsigned int marker_type;
	char *marker_format;
	struct syscall_strings raw_strs;
};

/*
 * Records of auxtrig's own events that userspace writes (the gate writes the
 * others, gate_abi.h): their layouts match the format texts in event_list.c.
 */

/* auxtrig:snapshot: one per snapshot (number, reason, size, the trigger's thread and value). */
struct own_snapshot_rec {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 nr;
	__u32 cpus;
	__u64 records;
	char reason[16];
	__s32 tid;	/* the thread that fired the trigger, or 0 */
	__u32 lost;	/* the targets' records since the previous snapshot in none:
			 * held back while a snapshot was taken, or lost to the ring */
	__s64 value;	/* the return value that made the condition true, or 0 */
};

/* auxtrig:trigger_stats: one --on's counters, written at the end of the run. */
struct own_trigger_stats_rec {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 trigger;
	__u32 __pad;
	__u64 evaluated, matched, fired, suppressed, dropped;
};

/** enum own_event - auxtrig's own events (event_list__add_own()). */
enum own_event {
	OWN_UPROBE_ENTER,
	OWN_UPROBE_EXIT,
	OWN_MARK,
	OWN_RESUME,
	OWN_PAUSE,
	OWN_TRIGGER_STATS,
	OWN_STOP,
	OWN_MARK_STR,	/* auxtrig:mark with a str field (mark(str(argN)), gate_abi.h) */
};

/**
 * event_list__add_tp() - the tracepoint SYSTEM:NAME (its format read from
 * tracefs), once; @flags OR-ed into its flags.
 * Return: its index, or -ENOENT (no such tracepoint), other -errno.
 */
int event_list__add_tp(struct event_list *l, const char *sys, const char *name, __u32 flags);

/** event_list__add_own() - one of auxtrig's own events. Return: its index or -errno. */
int event_list__add_own(struct event_list *l, enum own_event which);

/**
 * event_list__own_as() - the own event of record type @type becomes @which
 * (same type; name, format and size of @which), e.g. auxtrig:mark with its
 * str field once a trigger turns out to need it.
 * Return: 0, -ENOENT (no such event), -ENOMEM.
 */
int event_list__own_as(struct event_list *l, unsigned int type, enum own_event which);

/** event_list__find() - the event SYSTEM:NAME, or NULL. */
const struct rec_event *event_list__find(const struct event_list *l, const char *sys, const char *name);

/**
 * event_list__index() - after the last event is added: the record type ->
 * event table and a type id for auxtrig:snapshot. Return: 0 or -ENOMEM.
 */
int event_list__index(struct event_list *l);

/** event_list__by_type() - the event whose records have common_type @type, or NULL. */
static inline const struct rec_event *event_list__by_type(const struct event_list *l, __u16 type)
{
	size_t idx = type < l->by_type_len ? l->by_type[type] : 0;

	return idx ? &l->ev[idx - 1] : NULL;
}

/**
 * event_list__string_fields() - the user strings a syscall entry's record
 * carries (gate_abi.h, GATE_STR_MAX): its "const char *" arguments that are
 * not buffers (filename, pathname, oldname and newname, name...) and the
 * "char *" ones that are strings (mount's dev_name, dir_name and type), in
 * the record's order, at most @max of them into @fields.
 * Return: how many; 0 for other events.
 */
size_t event_list__string_fields(const struct tp_format *fmt, const struct tp_field **fields, size_t max);

/**
 * event_list__string_slots() - since Linux 6.19 a syscall entry's format has
 * a "__data_loc char[] __NAME_val" field per user string, which the kernel
 * fills in the records it writes, and prints with __get_str(). A BPF
 * program's context is not that record (perf_call_bpf_enter(): the fixed
 * arguments only), so the gate's copy has garbage there: the recorder points
 * each such field at the string the gate appended for NAME. Fills
 * @e->str_slot[i] with the offset of the field for the i-th string of
 * event_list__string_fields(), 0 where the format has none, and
 * @e->nr_str_slots (0 when there is none at all).
 */
void event_list__string_slots(struct rec_event *e);

/**
 * event_list__file_format() - the format the file gives @e when its records
 * carry strings (event_list__string_fields()): the kernel's, with a field
 * "__data_loc char[] NAME_str" per string from the record's fixed size on
 * (4 bytes each) and the print fmt showing each string instead of its
 * pointer ("filename: \"/etc/passwd\"").
 * Return: a malloc()ed text (*@text, the caller frees it), 0 when the event
 * has no string (*@text NULL), or -errno.
 */
int event_list__file_format(const struct rec_event *e, char **text);

/** event_list__exit() - free everything (the list may be half built). */
void event_list__exit(struct event_list *l);

#endif
