/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_ABI_H
#define AUXTRIG_EXPR_ABI_H

/**
 * DOC: compiled condition programs (BPF <-> user ABI)
 *
 * A --where condition is compiled in userspace (user/expr.c) into a small
 * stack-machine program, struct expr_prog, which BPF keeps in an array map and
 * runs with expr_eval() from bpf/expr.bpf.h; user/expr.c runs the very same
 * bytecode with expr__eval(). Both evaluators have one semantics:
 *
 * - every value is a 64-bit signed integer; + - * wrap around; comparisons
 *   are signed; / and % truncate toward zero like C, and a division or
 *   modulo by zero makes the whole condition false;
 * - strings never live on the stack: one fused instruction (EXPR_OP_STR)
 *   reads a string (comm, str(argN), a tracepoint string field) into a
 *   63-byte buffer and compares or glob-matches it with a string-table
 *   literal, pushing 0 or 1;
 * - a memory read that fails (bad str() pointer, a record field outside
 *   the record) makes the whole condition false;
 * - jumps only go forward, so a program runs at most nr_insns steps;
 * - the condition is true when the value left on top of the stack is not 0.
 *
 * Only fixed-width types: the struct is copied byte for byte into a map.
 */

#ifdef __bpf__
/* BPF side: __u8 .. __s64 come from vmlinux.h. */
#else
#include <linux/types.h>
#endif

#define EXPR_MAX_INSNS   128 /* instructions in one program */
#define EXPR_MAX_STACK   16  /* evaluation stack slots (power of 2) */
#define EXPR_STRTAB_SIZE 512 /* bytes of string literals, NULs included (power of 2) */
#define EXPR_STR_MAX     64  /* string buffer: at most 63 bytes + NUL are compared */
#define EXPR_COMM_LEN    16
#define EXPR_NR_ARGS     6
#define EXPR_MAX_VARS    4   /* reserved for $variables (stateful conditions) */
#define EXPR_GLOB_STEPS  8192 /* bound on one glob match: >= 64 * 65 + 64 */

/* Opcodes. Operands: a (u8), b (u16), c (u32), imm (s64). */
#define EXPR_OP_PUSH     0x01 /* push imm */
#define EXPR_OP_FIELD    0x02 /* push builtin field a (EXPR_F_*) */
#define EXPR_OP_REC      0x03 /* push record field: offset b, size a & 0xf (1,2,4,8), signed if a & EXPR_REC_SIGNED */
#define EXPR_OP_STR      0x04 /* push 0/1: string source a (EXPR_S_*) vs strtab[b..], c = source operand, imm = EXPR_STR_* */

#define EXPR_OP_ADD      0x10 /* binary: pop y, pop x, push x op y */
#define EXPR_OP_SUB      0x11
#define EXPR_OP_MUL      0x12
#define EXPR_OP_DIV      0x13 /* y == 0: condition is false */
#define EXPR_OP_MOD      0x14 /* y == 0: condition is false */
#define EXPR_OP_AND      0x15
#define EXPR_OP_OR       0x16
#define EXPR_OP_XOR      0x17
#define EXPR_OP_EQ       0x18
#define EXPR_OP_NE       0x19
#define EXPR_OP_LT       0x1a /* signed */
#define EXPR_OP_LE       0x1b
#define EXPR_OP_GT       0x1c
#define EXPR_OP_GE       0x1d

#define EXPR_OP_NEG      0x20 /* unary: replace top */
#define EXPR_OP_BNOT     0x21 /* ~x */
#define EXPR_OP_LNOT     0x22 /* !x */
#define EXPR_OP_BOOL     0x23 /* x != 0 */

#define EXPR_OP_JFALSE   0x30 /* top == 0: keep it, jump to b; else pop (&&) */
#define EXPR_OP_JTRUE    0x31 /* top != 0: replace with 1, jump to b; else pop (||) */

/* 0x40..0x4f: reserved for stateful conditions ($count, $elapsed, once, after N, every N). */

/* Builtin fields (EXPR_OP_FIELD a). */
#define EXPR_F_PID       0
#define EXPR_F_TID       1
#define EXPR_F_PPID      2
#define EXPR_F_UID       3
#define EXPR_F_GID       4
#define EXPR_F_CPU       5
#define EXPR_F_CGROUP    6
#define EXPR_F_NR        7
#define EXPR_F_RET       8
#define EXPR_F_ARG0      9 /* .. EXPR_F_ARG0 + 5 */
#define EXPR_F_COUNT     (EXPR_F_ARG0 + EXPR_NR_ARGS)

/* String sources (EXPR_OP_STR a). */
#define EXPR_S_COMM      0 /* env->comm */
#define EXPR_S_USER      1 /* user string at env->args[c] (str(argN)) */
#define EXPR_S_REC_ARRAY 2 /* char[] in the record: offset c & 0xffff, size c >> 16 (truncated to 63) */
#define EXPR_S_REC_LOC   3 /* __data_loc char[] in the record: u32 at offset c */

/* String comparisons (EXPR_OP_STR imm). */
#define EXPR_STR_EQ      0 /* exact equality */
#define EXPR_STR_GLOB    1 /* '*' any sequence (slashes too), '?' one byte */

#define EXPR_REC_SIZE_MASK 0x0f
#define EXPR_REC_SIGNED    0x10

struct expr_insn {
	__u8 op;
	__u8 a;
	__u16 b;
	__u32 c;
	__s64 imm;
};

/**
 * struct expr_prog - a compiled condition.
 * @nr_insns: instructions used in @insns (1..EXPR_MAX_INSNS).
 * @max_stack: deepest stack the program needs (<= EXPR_MAX_STACK).
 * @strtab_len: bytes used in @strtab.
 * @flags: reserved, 0.
 * @nr_vars: reserved for $variables, 0.
 * @insns: the bytecode.
 * @strtab: string literals, each NUL-terminated, referenced by offset.
 */
struct expr_prog {
	__u32 nr_insns;
	__u32 max_stack;
	__u32 strtab_len;
	__u32 flags;
	__u32 nr_vars;
	__u32 reserved[3];
	struct expr_insn insns[EXPR_MAX_INSNS];
	char strtab[EXPR_STRTAB_SIZE];
};

/**
 * struct expr_env - what the caller fills in before evaluation.
 * @pid: thread-group id (bpf_get_current_pid_tgid() >> 32).
 * @tid: thread id (low 32 bits of bpf_get_current_pid_tgid()).
 * @ppid: parent's thread-group id.
 * @uid: bpf_get_current_uid_gid() & 0xffffffff.
 * @gid: bpf_get_current_uid_gid() >> 32.
 * @cpu: bpf_get_smp_processor_id().
 * @cgroup: bpf_get_current_cgroup_id().
 * @nr: syscall number (or -1).
 * @ret: return value at an exit point (sign-extended).
 * @args: syscall/function arguments; str(argN) reads a user string at args[N].
 * @rec: address of the raw tracepoint record: kernel memory read with
 *       bpf_probe_read_kernel() in BPF (e.g. the tracepoint ctx), an address
 *       in the calling process for expr__eval().
 * @rec_size: readable bytes at @rec; fields beyond it read as a failure
 *            (condition false). In BPF only, 0 means "not known, rely on
 *            bpf_probe_read_kernel() to fail".
 * @reserved: 0.
 * @comm: bpf_get_current_comm().
 * @vars: reserved for $variables (stateful conditions), 0.
 */
struct expr_env {
	__s64 pid;
	__s64 tid;
	__s64 ppid;
	__s64 uid;
	__s64 gid;
	__s64 cpu;
	__s64 cgroup;
	__s64 nr;
	__s64 ret;
	__u64 args[EXPR_NR_ARGS];
	__u64 rec;
	__u32 rec_size;
	__u32 reserved;
	char comm[EXPR_COMM_LEN];
	__s64 vars[EXPR_MAX_VARS];
};

_Static_assert(sizeof(struct expr_insn) == 16, "expr_insn ABI size");
_Static_assert(sizeof(struct expr_prog) == 32 + 16 * EXPR_MAX_INSNS + EXPR_STRTAB_SIZE, "expr_prog ABI size");
_Static_assert(sizeof(struct expr_env) == 9 * 8 + 8 * EXPR_NR_ARGS + 16 + EXPR_COMM_LEN + 8 * EXPR_MAX_VARS,
	       "expr_env ABI size");

#endif
