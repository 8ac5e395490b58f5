/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_VARS_H
#define AUXTRIG_EXPR_VARS_H

/*
 * lang/ layer: variables of your own in the condition language
 * (user/lang/expr_vars.c): their names, which the compiler numbers for a
 * whole recording, and the table of their values in userspace, the twin of
 * the BPF map expr_uvars (bpf/expr.bpf.h).
 */

/**
 * DOC: variables of your own
 *
 * A recording's --on actions set variables (``{ $fails[tid] += 1; $last =
 * $now }``) that its conditions read (``$fails[tid] >= 3``). A variable is
 * global (``$last``) or has one value per thread (``$fails[tid]``); each is
 * one or the other everywhere, holds a 64-bit signed integer and reads 0
 * until set. The names are defined by the actions that set them: a
 * condition that reads a name no action sets is refused, as are a string
 * assigned to one, and more than EXPR_MAX_UVARS of them. The values of all
 * threads and variables share one table of EXPR_UVAR_ENTRIES entries; a set
 * that needs a new entry in a full table fails, is counted, and the action
 * or condition doing it is false.
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "auxtrig/expr_abi.h"

/**
 * struct expr_vars - the names of one recording's variables
 * @name:	"$fails", in the order they were defined (index: EXPR_OP_UGET a)
 * @per_thread:	written $name[tid]
 * @nr:		how many
 */
struct expr_vars {
	char name[EXPR_MAX_UVARS][EXPR_UVAR_NAME_MAX];
	bool per_thread[EXPR_MAX_UVARS];
	unsigned int nr;
};

/**
 * expr_vars__define() - @name ("$fails"), per thread or not, as an action
 * sets it: its index, new or the one it has.
 * Return: the index; -EINVAL with @why (it is the other kind elsewhere, the
 * name is too long or a builtin's); -E2BIG past EXPR_MAX_UVARS.
 */
int expr_vars__define(struct expr_vars *v, const char *name, bool per_thread, char *why, size_t why_size);

/**
 * expr_vars__find() - the index of @name as a condition reads it.
 * Return: the index; -ENOENT when no action sets it; -EINVAL with @why when
 * it is the other kind (global read as $x[tid], or the reverse).
 */
int expr_vars__find(const struct expr_vars *v, const char *name, bool per_thread, char *why, size_t why_size);

/** struct expr_uvars - the values in userspace (opaque), as the BPF map expr_uvars holds them. */
struct expr_uvars;

/** expr_uvars__new() - an empty table of @max entries. NULL with errno set. */
struct expr_uvars *expr_uvars__new(unsigned int max);

/** expr_uvars__delete() - free @u; NULL is fine. */
void expr_uvars__delete(struct expr_uvars *u);

/** expr_uvars__get() - variable @var of thread @tid (EXPR_UVAR_GLOBAL: the global one); 0 when never set. */
__s64 expr_uvars__get(const struct expr_uvars *u, __u32 var, __u32 tid);

/** expr_uvars__set() - set it. Return: 0, -E2BIG when it has no entry and the table is full. */
int expr_uvars__set(struct expr_uvars *u, __u32 var, __u32 tid, __s64 value);

/** expr_uvars__used() - entries in use. */
unsigned int expr_uvars__used(const struct expr_uvars *u);

#endif
