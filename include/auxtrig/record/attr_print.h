/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ATTR_PRINT_H
#define AUXTRIG_ATTR_PRINT_H

/*
 * record/ layer, the recording side: perf_event_attrs printed as perf -vv does
 * (user/record/attr_print.c), for --dry-run.
 */

/**
 * DOC: attr printer
 *
 * Prints a perf_event_attr the way ``perf record -vv`` does
 * (perf_event_attr__fprintf() in tools/perf/util/perf_event_attr_fprintf.c):
 * one line per non-zero field, "  %-32s %s", perf's field names in perf's
 * order ("{ sample_period, sample_freq }", "{ bp_addr, config1 }"...), hex
 * for config words, ``IP|TID|...`` for sample_type. The aux_action bits come
 * last, as aux_start_paused / aux_pause / aux_resume, where perf 6.14 prints
 * them; reserved aux_action bits 3..31 are printed as "aux_action" in hex
 * so a wrong bit is visible.
 */

#include <stdio.h>

struct perf_event_attr;
struct aux_group;

/** enum attr_print_flags - options for attr_print__group(). */
enum attr_print_flags {
	/* print a uprobe's config1 as its "path" instead of the pointer (stable output) */
	ATTR_PRINT_PATHS = 1 << 0,
};

/**
 * attr_print__fields() - the field lines of @attr.
 * Return: bytes written.
 */
int attr_print__fields(FILE *fp, const struct perf_event_attr *attr);

/**
 * attr_print__event() - "perf_event_attr:" and the field lines.
 * Return: bytes written.
 */
int attr_print__event(FILE *fp, const struct perf_event_attr *attr);

/**
 * attr_print__group() - a whole &struct aux_group: "group leader: NAME
 * (cpu N)", its attr, "group member: NAME" and attr for each trigger, then
 * "tracking event: dummy:u". In the fallback (gate_by_ioctl) the triggers
 * are printed as "trigger event: NAME (own group)" after a "gate:" line.
 * Return: bytes written.
 */
int attr_print__group(FILE *fp, const struct aux_group *g, unsigned int flags);

#endif
