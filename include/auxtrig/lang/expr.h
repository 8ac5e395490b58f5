/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_H
#define AUXTRIG_EXPR_H

/*
 * lang/ layer: the condition language (user/lang/expr.c): --where and --on conditions
 * compiled by cmd/record_plan.c into programs bpf/expr.bpf.h interprets. Evaluated
 * in userspace: auxtrig/lang/expr_eval.h; printed: auxtrig/lang/expr_dump.h.
 */

/**
 * DOC: the condition language
 *
 * expr__compile() turns a one-line condition such as
 * ``comm == "nginx" && ret == -ENOENT`` into a struct expr_prog (see
 * auxtrig/expr_abi.h) that BPF runs with expr_eval() (bpf/expr.bpf.h) and
 * userspace with expr__eval(); both have the same semantics. The language
 * reference is auxtrig-expr(7).
 *
 * Identifiers other than errno names are resolved by a callback the caller
 * supplies, so the caller decides which fields exist where (``ret`` only at
 * an exit point, tracepoint fields from the tracepoint's format file).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "auxtrig/expr_abi.h"

/** enum expr_field_kind - what an identifier names. */
enum expr_field_kind {
	EXPR_FIELD_BUILTIN,  /* one of struct expr_env's fields: @builtin */
	EXPR_FIELD_REC_INT,  /* integer in the tracepoint record: @offset, @size (1, 2, 4, 8), @is_signed */
	EXPR_FIELD_REC_STR,  /* char[@size] in the tracepoint record at @offset */
	EXPR_FIELD_REC_LOC,  /* __data_loc char[] in the tracepoint record: u32 at @offset */
	EXPR_FIELD_VAR,      /* a $variable: @builtin is EXPR_VAR_* */
};

/**
 * struct expr_field - a resolved identifier.
 * @kind: see enum expr_field_kind.
 * @builtin: EXPR_F_* for EXPR_FIELD_BUILTIN (EXPR_F_COUNT for comm, which is a
 *           string); EXPR_VAR_* for EXPR_FIELD_VAR.
 * @offset: byte offset in the record.
 * @size: byte size in the record.
 * @is_signed: sign-extend an integer record field.
 */
struct expr_field {
	enum expr_field_kind kind;
	unsigned int builtin;
	unsigned int offset;
	unsigned int size;
	bool is_signed;
};

#define EXPR_F_COMM EXPR_F_COUNT /* expr_field.builtin of `comm` (a string, not an EXPR_OP_FIELD) */

/**
 * typedef expr_resolve_fn - resolve a field name for the compiler.
 * @ctx: the caller's resolve_ctx.
 * @name: the identifier as written (arg0..arg5 for str(argN) too; $count,
 *        $elapsed with their '$', so a resolver may refuse a variable too).
 * @field: filled on success.
 * @why: on a refusal, a short reason shown to the user ("only at an exit point").
 * @why_size: bytes at @why.
 *
 * Return: 0, -ENOENT for an unknown name, or another -errno with @why set
 * when the name exists but is not valid here.
 */
typedef int (*expr_resolve_fn)(void *ctx, const char *name, struct expr_field *field, char *why,
			       size_t why_size);

struct expr_vars;

/**
 * struct expr_compile_opts - how to compile.
 * @resolve: field resolver; NULL accepts exactly the builtins (expr__resolve_builtin()).
 * @resolve_ctx: passed to @resolve.
 * @vars: the recording's variables of your own (expr_vars.h): a condition
 *        reads those an action defined, an action defines those it sets;
 *        NULL: none, $name is refused.
 */
struct expr_compile_opts {
	expr_resolve_fn resolve;
	void *resolve_ctx;
	struct expr_vars *vars;
};

/**
 * expr__resolve_builtin() - resolve the builtin field names.
 * @name: pid tid ppid uid gid comm cpu cgroup nr ret arg0..arg5, and the
 *        variables $count and $elapsed (EXPR_FIELD_VAR).
 * @field: filled on success.
 *
 * For resolvers that accept builtins and add their own fields or refusals.
 *
 * Return: 0 or -ENOENT.
 */
int expr__resolve_builtin(const char *name, struct expr_field *field);

/** expr__builtin_name() - the name of builtin field EXPR_F_@f ("pid", ...); "?" past them. */
const char *expr__builtin_name(unsigned int f);

/** expr__var_name() - the name of variable EXPR_VAR_@v ("$elapsed", ...); "?" past them. */
const char *expr__var_name(unsigned int v);

struct tp_format;

/**
 * expr__resolve_tp_field() - resolve @name as a field of tracepoint @fmt,
 * for resolvers of conditions at tracepoints.
 * @fmt: the tracepoint's format (tracefs__load_format()).
 * @name: the identifier.
 * @field: filled on success.
 * @why: on a refusal, why.
 * @why_size: bytes at @why.
 *
 * Integer fields compare as the type their declaration names
 * (tp_field__int_type()): an int in an 8-byte slot, as every int syscall
 * argument is (sys_enter_openat's dfd), is its low 4 bytes sign-extended,
 * so dfd == -100 holds for AT_FDCWD whatever the upper half of the slot;
 * fields of types the table does not know keep the format's size and
 * "signed:". char[N] arrays and __data_loc char[] are strings.
 *
 * Return: 0; -ENOENT when @fmt has no such field; -EINVAL with @why for a
 * common_* field (the kernel overwrote them before BPF runs) or one of a
 * size no integer has.
 */
int expr__resolve_tp_field(const struct tp_format *fmt, const char *name, struct expr_field *field, char *why,
			   size_t why_size);

/**
 * expr__compile() - compile a condition.
 * @src: the condition text.
 * @opts: resolver; NULL for builtins only.
 * @prog: filled on success (all of it, unused parts zeroed).
 * @err: on failure, "column N: what was expected, what was found".
 * @err_size: bytes at @err.
 *
 * Nothing is printed: the caller shows @err.
 *
 * Return: 0; -EINVAL for a syntax, type or field error; -E2BIG when the
 * program exceeds EXPR_MAX_INSNS, EXPR_MAX_STACK, EXPR_STRTAB_SIZE or
 * EXPR_MAX_HITS (once/after/every terms).
 */
int expr__compile(const char *src, const struct expr_compile_opts *opts, struct expr_prog *prog, char *err,
		  size_t err_size);

/**
 * expr__compile_action() - compile an --on action's statements, the text
 * between its braces: "$fails[tid] += 1; $last = $now" (=, +=, -=, ++, --,
 * separated by ';'). The program sets the variables in order (EXPR_OP_USET)
 * and is true when every one was set. The variables it sets are defined in
 * @opts->vars (which must be given).
 * Return: as expr__compile().
 */
int expr__compile_action(const char *src, const struct expr_compile_opts *opts, struct expr_prog *prog, char *err,
			 size_t err_size);

/**
 * expr__cast() - what EXPR_OP_CAST does to @x: keep its low @a &
 * EXPR_REC_SIZE_MASK bytes (1, 2 or 4; 8 or anything else: @x as it is) and
 * sign-extend them if @a has EXPR_REC_SIGNED, else zero-extend. The typed
 * return value of a function (ret at a return point) is narrowed the same.
 */
__s64 expr__cast(__s64 x, unsigned int a);

/**
 * expr__check() - the one check of a program's shape, made once before a
 * back end runs it (by expr__validate() for expr__eval(), by
 * expr_bpf__compile()): at most EXPR_MAX_INSNS instructions and
 * EXPR_MAX_HITS counters, known instructions, fields, variables, string
 * sources and record sizes, string patterns that end inside the string
 * table, forward jumps inside the program, a stack that never underflows
 * nor exceeds EXPR_MAX_STACK, the same depth wherever paths join, and a
 * result at the end.
 * @depth: receives the stack depth before each instruction and at the end
 *	   (-1 where nothing reaches)
 * @target: receives 1 for each instruction a jump lands on, else 0
 * @why: if not NULL, receives the reason for a refusal ("a malformed
 *	 program (stack underflow)")
 * Return: 0, or -EINVAL for a malformed program.
 */
int expr__check(const struct expr_prog *prog, int depth[EXPR_MAX_INSNS + 1], char target[EXPR_MAX_INSNS + 1],
		char *why, size_t why_size);

/**
 * expr__validate() - check @prog once (expr__check()) and mark it checked
 * (@prog->checked): expr__eval() runs only programs so marked, and relies on
 * the check for its stack and jumps instead of repeating it at every
 * evaluation. expr__compile() validates what it builds; a program built or
 * changed by hand is validated before it is evaluated.
 * @prog: the program; its mark is cleared when it is refused.
 * @why: if not NULL, receives the reason for a refusal, as expr__check().
 * @why_size: bytes at @why.
 * Return: 0, or -EINVAL for a malformed program (or a NULL @prog).
 */
int expr__validate(struct expr_prog *prog, char *why, size_t why_size);

/**
 * expr__binary() - @x OP @y in @v for the binary EXPR_OP_* @op, as both
 * interpreters compute it: 64-bit wraparound arithmetic, signed division
 * and modulo truncated toward zero, signed comparisons giving 0 or 1.
 * Return: 1; 0 for a division or modulo by zero (the condition is false);
 * -EINVAL for an operator that is not binary.
 */
int expr__binary(unsigned int op, __s64 x, __s64 y, __s64 *v);

/**
 * expr__builtins_used() - which builtin fields @prog reads: bit EXPR_F_x for
 * each EXPR_F_x it pushes, bit EXPR_F_COMM if it compares comm. The gate
 * fetches only these (ppid, uid, gid, cgroup and comm cost helper calls).
 */
__u32 expr__builtins_used(const struct expr_prog *prog);

/** EXPR_QUOTE_MAX - the longest text expr__quote() shows whole; longer ones are cut to it. */
#define EXPR_QUOTE_MAX 64

/**
 * expr__quote() - @src for an error message, on one line and bounded: quoted
 * whole when at most EXPR_QUOTE_MAX characters, else EXPR_QUOTE_MAX of them
 * around the column @err names ("column N: ...", from expr__compile(); the
 * start when @err is NULL or names none), with "..." where cut and which
 * characters they are: 'tid == 1 && ... == 2 &&' (characters 4001-4064 of
 * 9000). Control characters show as '?'.
 * @src: the text.
 * @err: expr__compile()'s message, or NULL.
 * @buf: the result; at least EXPR_QUOTE_MAX + 64 bytes to hold it all.
 * @size: bytes at @buf.
 */
void expr__quote(const char *src, const char *err, char *buf, size_t size);

/**
 * expr__errno_value() - the value of an errno name.
 * @name: e.g. "ENOENT".
 *
 * Return: the positive errno value, or 0 if @name is not in the table.
 */
int expr__errno_value(const char *name);

#endif
