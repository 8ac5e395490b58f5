/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_EVAL_H
#define AUXTRIG_EXPR_EVAL_H

/*
 * lang/ layer: the userspace evaluator of compiled conditions
 * (user/lang/expr_eval.c), the twin of bpf/expr.bpf.h's expr_eval().
 */
#include "auxtrig/expr_abi.h"

/**
 * struct expr_state - the state of one condition between evaluations in
 * userspace: its once/after/every hit counters and its per-thread $count
 * counters (in BPF: the expr_state and expr_counts maps, one slot per
 * condition). Opaque.
 */
struct expr_state;

/** expr_state__new() - a state with every counter at 0. NULL with errno set. */
struct expr_state *expr_state__new(void);
/** expr_state__delete() - free @st (NULL is fine). */
void expr_state__delete(struct expr_state *st);

struct expr_uvars;

/**
 * expr_state__use_uvars() - the table of variables of your own (expr_vars.h)
 * @st's evaluations read and set: one for all the conditions and actions of a
 * recording, as BPF's expr_uvars map is; not owned.
 */
void expr_state__use_uvars(struct expr_state *st, struct expr_uvars *u);

/** expr_state__uvar_lost() - @st's evaluations that could not set a variable (its table full). */
__u64 expr_state__uvar_lost(const struct expr_state *st);

/**
 * expr__eval() - evaluate a compiled condition in userspace.
 * @prog: from expr__compile(), or built by hand and accepted by
 *        expr__validate(): a program not so checked is refused (-EINVAL),
 *        the check is not repeated here.
 * @env: the environment; @env->rec (with @env->rec_size bytes, always
 *       checked here) and the str(argN) pointers in @env->args are addresses
 *       in the calling process. str(argN) is read with process_vm_readv(),
 *       so 0 or a garbage pointer is a failed read, as in BPF, not a crash.
 *       $elapsed is @env->vars[EXPR_VAR_ELAPSED] when @env->vars_set says so.
 * @st: the condition's state, updated by this evaluation ($count of
 *      @env->tid, hit counters); may be NULL for a program whose flags and
 *      nr_hits are 0. One state per condition, as one slot in BPF.
 *
 * Same semantics as the BPF expr_eval(): 64-bit wraparound arithmetic, signed
 * comparisons, division or modulo by zero or a failed read make the condition
 * false, strings are compared on at most 63 bytes.
 *
 * Return: 1 (true), 0 (false), -EINVAL for an unchecked or malformed program
 * or a stateful one without @st, -ENOMEM when a thread's $count cannot be
 * stored.
 */
int expr__eval(const struct expr_prog *prog, const struct expr_env *env, struct expr_state *st);

#endif
