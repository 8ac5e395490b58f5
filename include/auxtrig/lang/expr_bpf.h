/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_BPF_H
#define AUXTRIG_EXPR_BPF_H

/*
 * lang/ layer: conditions compiled to BPF instructions (user/lang/expr_bpf.c),
 * for record/gate_front.c's per-point programs.
 */

/**
 * DOC: conditions compiled to BPF instructions
 *
 * expr_bpf__compile() translates a struct expr_prog (the bytecode of
 * expr__compile(), run by the interpreters expr__eval() and bpf/expr.bpf.h)
 * into straight-line BPF code appended to a struct bpf_asm: constants are
 * folded and inlined, string comparisons and globs are unrolled against
 * their constant pattern, jumps only go forward. The code leaves 1 in r0
 * when the condition holds, 0 when it does not or when the evaluation fails
 * (a failed read, a division by zero, an unset $elapsed, a $count that could
 * not be stored), with exactly the interpreters' semantics.
 *
 * Where the values come from is the caller's: a struct expr_bpf_ops emits the
 * code that reads a builtin, a record field, a string or a variable (a gate
 * program reads them from the current task and the tracepoint's record, the
 * test harness from a struct expr_env). The compiled code uses r0..r5 and
 * EXPR_BPF_FRAME bytes of stack at opts->stack_off; it keeps r6..r9, which
 * belong to the caller and its ops.
 *
 * State is the interpreters': once/after/every counters in expr_state (an
 * array map, addressed directly, one atomic add per term), $count in
 * expr_counts ({tid, slot} -> count, an LRU hash), per slot.
 *
 * Globs with '*' between other characters ("lib*ssl*.so") are matched by
 * an unrolled, bounded matcher against the constant pattern: each segment
 * between two stars is compared at every position it could start at, the
 * leftmost match after the segment before is taken.
 *
 * What it cannot express is refused with -EOPNOTSUPP and a reason (more
 * than EXPR_BPF_GLOB_BUDGET instructions of such matchers in one condition,
 * and whatever the ops refuse): the caller then runs the interpreter.
 */

#include <stddef.h>

#include "auxtrig/expr_abi.h"
#include "auxtrig/lang/bpf_asm.h"

/* Instructions of unrolled inner-'*' glob matchers one condition may take (the verifier walks each). */
#define EXPR_BPF_GLOB_BUDGET 16384

/* Stack bytes the compiled code uses: the value stack, a string buffer, $count and a map key. */
#define EXPR_BPF_FRAME (8 * EXPR_MAX_STACK + EXPR_STR_MAX + 16)

/**
 * struct expr_bpf_ops - where a compiled condition's values come from.
 *
 * Each emits code into @a that leaves the value in r0 (r1..r5 may be
 * clobbered, r6..r9 must be kept) or jumps to the label @fail when the
 * value cannot be had (the whole condition is then false). A value that can
 * never be had is a conditional jump the verifier sees is always taken, never
 * an unconditional one (code after it would be unreachable):
 * expr_bpf__fail_always(). Each returns 0, or -EOPNOTSUPP with a reason in
 * @why when it cannot read that value (the condition is then interpreted).
 *
 * @field:	builtin EXPR_F_* (not comm).
 * @rec_int:	an integer of @size bytes (1, 2, 4, 8) at @off in the record,
 *		sign-extended if @is_signed.
 * @str:	string source @src (EXPR_S_*) with operand @arg into the
 *		EXPR_STR_MAX bytes at r10 + @buf_off, NUL-terminated (at most
 *		63 bytes before it); with @need_len its length in r0 (0..63).
 * @var:	variable EXPR_VAR_* other than $count.
 */
struct expr_bpf_ops {
	int (*field)(struct bpf_asm *a, void *ctx, unsigned int f, int fail, char *why, size_t why_size);
	int (*rec_int)(struct bpf_asm *a, void *ctx, unsigned int off, unsigned int size, int is_signed, int fail,
		       char *why, size_t why_size);
	int (*str)(struct bpf_asm *a, void *ctx, unsigned int src, unsigned int arg, int buf_off, int need_len, int fail,
		   char *why, size_t why_size);
	int (*var)(struct bpf_asm *a, void *ctx, unsigned int var, int fail, char *why, size_t why_size);
};

/**
 * struct expr_bpf_opts - how to compile one condition.
 * @ops, @ctx:	 where values come from.
 * @stack_off:	 the compiled code's stack: r10 + @stack_off .. + EXPR_BPF_FRAME
 *		 (negative, a multiple of 8).
 * @state_fd:	 the expr_state array map (hit counters, count_lost).
 * @counts_fd:	 the expr_counts LRU hash ($count).
 * @slot:	 the condition's state slot (< EXPR_MAX_SLOTS).
 * @uvars_fd:	 the expr_uvars hash (variables of your own); <= 0: a program
 *		 that reads or sets one is not compiled (-EOPNOTSUPP).
 */
struct expr_bpf_opts {
	const struct expr_bpf_ops *ops;
	void *ctx;
	int stack_off;
	int state_fd;
	int counts_fd;
	__u32 slot;
	int uvars_fd;
};

/**
 * expr_bpf__compile() - append @prog's code to @a.
 * @why: on -EOPNOTSUPP or -EINVAL, what could not be compiled.
 *
 * Return: 0 (r0 holds the result after the appended code), -EOPNOTSUPP
 * (interpret it instead), -EINVAL (a malformed program), -ENOMEM.
 */
int expr_bpf__compile(struct bpf_asm *a, const struct expr_prog *prog, const struct expr_bpf_opts *opts, char *why,
		      size_t why_size);

/** expr_bpf__fail_always() - a jump to @fail the verifier knows is taken (clobbers r0). */
void expr_bpf__fail_always(struct bpf_asm *a, int fail);

/** expr_bpf__zero() - the EXPR_STR_MAX bytes at r10 + @buf_off to 0. */
void expr_bpf__zero(struct bpf_asm *a, int buf_off);

/** expr_bpf__strlen() - r0 = the length of the NUL-terminated string at r10 + @buf_off, at most @max. */
void expr_bpf__strlen(struct bpf_asm *a, int buf_off, unsigned int max);

/**
 * expr_bpf__user_str() - the user string at the address in r3 into the
 * EXPR_STR_MAX bytes at r10 + @buf_off, NUL-terminated
 * (bpf_probe_read_user_str()); goto @fail if it cannot be read; r0 = its
 * length if @need_len. Clobbers r0-r5.
 */
void expr_bpf__user_str(struct bpf_asm *a, int buf_off, int need_len, int fail);

/**
 * expr_bpf__data_loc_str() - a tracepoint record's __data_loc string into the
 * EXPR_STR_MAX bytes at r10 + @buf_off, NUL-terminated: its u32 location is
 * at byte @off of the record at @rec_reg (offset in the low half, size in
 * the high one), and it must lie within the record's first @rec_max bytes.
 * An empty string leaves the buffer 0. r0 = its length if @need_len; goto
 * @fail if it lies past @rec_max or cannot be read. Clobbers r0-r3.
 */
void expr_bpf__data_loc_str(struct bpf_asm *a, int rec_reg, unsigned int off, unsigned int rec_max, int buf_off,
			    int need_len, int fail);

/**
 * struct expr_bpf_env - the values of a struct expr_env in memory, for
 * expr_bpf_env_ops (the test harness; any caller that fills an expr_env).
 * @env_reg:	the register (r6..r9) pointing at the struct expr_env,
 *		readable at constant offsets (a context or a map value).
 * @rec_fd:	array map whose element 0 holds the record at @rec_off; -1: no record.
 * @rec_off:	its offset in the map value.
 * @rec_size:	the record's readable bytes (reads past them fail).
 */
struct expr_bpf_env {
	int env_reg;
	int rec_fd;
	__u32 rec_off;
	__u32 rec_size;
};

/* Values from a struct expr_env (ctx: a struct expr_bpf_env). */
extern const struct expr_bpf_ops expr_bpf_env_ops;

#endif
