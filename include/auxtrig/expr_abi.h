/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_ABI_H
#define AUXTRIG_EXPR_ABI_H

/**
 * DOC: compiled condition programs (BPF <-> user ABI)
 *
 * A --where condition is compiled in userspace (user/lang/expr.c) into a small
 * stack-machine program, struct expr_prog, which BPF keeps in an array map and
 * runs with expr_eval() from bpf/expr.bpf.h; user/lang/expr.c runs the very same
 * bytecode with expr__eval(). Both evaluators have one semantics:
 *
 * - every value is a 64-bit signed integer; + - * wrap around; comparisons
 *   are signed; / and % truncate toward zero like C, and a division or
 *   modulo by zero makes the whole condition false; a cast (EXPR_OP_CAST)
 *   keeps the low 1, 2 or 4 bytes and sign- or zero-extends them, as C
 *   converts to a narrower type and back;
 * - strings never live on the stack: one fused instruction (EXPR_OP_STR)
 *   reads a string (comm, str(argN), a tracepoint string field) into a
 *   63-byte buffer and compares or glob-matches it with a string-table
 *   literal, pushing 0 or 1;
 * - a memory read that fails (bad str() pointer, a record field outside
 *   the record) makes the whole condition false;
 * - jumps only go forward, so a program runs at most nr_insns steps;
 * - the condition is true when the value left on top of the stack is not 0.
 *
 * State (0x40..0x4f). A condition may keep state between evaluations; the
 * caller names where with a slot (one per condition, < EXPR_MAX_SLOTS) and
 * the evaluator keeps, per slot:
 *
 * - $count (EXPR_VAR_COUNT): one counter per thread (env->tid). Every
 *   evaluation of a program that reads $count adds 1 to the counter of
 *   env->tid before the first instruction runs, whether or not the
 *   instruction that reads it is reached (&&, || short-circuit): $count is
 *   the number of times this thread has reached the condition's point, 1 at
 *   its first. In BPF the counters live in an LRU hash keyed {tid, slot}
 *   (expr_counts): it never fills, the least recently used thread's counter
 *   is dropped first (it restarts at 1); a counter that cannot be stored is
 *   counted in expr_state[slot].count_lost and that evaluation is false.
 * - hit counters (EXPR_OP_HIT, one per once/after/every term, a < nr_hits):
 *   global to the slot, not per thread, atomic in BPF. The counter adds 1 each
 *   time its instruction runs, so behind && or || it counts the evaluations
 *   that got that far; the term is then, with n the new count:
 *     once      n == 1         (the first evaluation only)
 *     after N   n >= N         (the N-th evaluation and every later one)
 *     every N   n % N == 0     (the N-th, 2N-th, ... evaluation)
 *   N >= 1 (the compiler refuses 0).
 * - variables the caller fills (env->vars[a], valid when bit a of
 *   env->vars_set is set): $elapsed (EXPR_VAR_ELAPSED), nanoseconds since
 *   the thread's open window opened or, at a syscall exit with no window,
 *   since that syscall's entry; $duration (EXPR_VAR_DURATION), at an exit,
 *   nanoseconds since the thread entered that very call (a syscall's entry,
 *   a function's entry at its uretprobe, nested calls each their own).
 *   Reading a variable that is not set makes the whole condition false,
 *   like a failed read.
 *
 * The counters start at 0 when the caller creates the state (the gate at
 * load; expr_state__new() in userspace) and are never reset during a run.
 *
 * Variables of your own (0x42, 0x43): integers the conditions and actions of
 * one recording share, global ($last) or one per thread ($fails[tid], keyed
 * by env->tid), numbered by the compiler (a < EXPR_MAX_UVARS), kept in one
 * table of at most EXPR_UVAR_ENTRIES values for all slots (in BPF the hash
 * map expr_uvars, key struct expr_uvar_key; in userspace struct expr_uvars).
 * Reading a variable never set gives 0. Setting one that has no entry yet
 * when the table is full fails: the evaluation is false and the slot's
 * uvar_lost counts it. $now (EXPR_VAR_NOW) is env->vars[EXPR_VAR_NOW] when
 * the caller set it (tests), else the clock (bpf_ktime_get_ns(), or
 * CLOCK_MONOTONIC in userspace: the same clock).
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
#define EXPR_MAX_VARS    4   /* $variables: env->vars[], EXPR_VAR_* */
#define EXPR_MAX_UVARS   16  /* variables of your own in one recording */
#define EXPR_UVAR_ENTRIES 4096 /* their values, all threads and variables together */
#define EXPR_UVAR_GLOBAL 0xffffffffu /* struct expr_uvar_key.tid of a global variable */
#define EXPR_UVAR_NAME_MAX 32 /* bytes of a variable's name, '$' and NUL included */
#define EXPR_MAX_HITS    8   /* once/after/every terms in one program */
#define EXPR_MAX_SLOTS   16  /* conditions with state in one BPF object */
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
#define EXPR_OP_CAST     0x24 /* (type)x: keep the low a & 0xf bytes (1, 2, 4), sign-extend if a & EXPR_REC_SIGNED */

#define EXPR_OP_JFALSE   0x30 /* top == 0: keep it, jump to b; else pop (&&) */
#define EXPR_OP_JTRUE    0x31 /* top != 0: replace with 1, jump to b; else pop (||) */

/* 0x40..0x4f: state, see the DOC above. */
#define EXPR_OP_VAR      0x40 /* push variable a (EXPR_VAR_*); unset: condition is false */
#define EXPR_OP_HIT      0x41 /* hit counter a += 1, push 0/1: kind b (EXPR_HIT_*), N = imm */
#define EXPR_OP_UGET     0x42 /* push variable of your own a (per thread when b, else global); never set: 0 */
#define EXPR_OP_USET     0x43 /* pop x into variable a (b as UGET); the table full: condition false */

/* Variables (EXPR_OP_VAR a). */
#define EXPR_VAR_COUNT   0 /* $count: from the evaluator's per-thread counter, not env->vars */
#define EXPR_VAR_ELAPSED 1 /* $elapsed: env->vars[1], nanoseconds, filled by the caller */
#define EXPR_VAR_DURATION 2 /* $duration: env->vars[2], nanoseconds since the call's entry, at exits */
#define EXPR_VAR_NOW     3 /* $now: nanoseconds of the monotonic clock (env->vars[3] when set) */
#define EXPR_NR_VAR_NAMES 4

/* Hit terms (EXPR_OP_HIT b). */
#define EXPR_HIT_ONCE    0 /* n == 1 */
#define EXPR_HIT_AFTER   1 /* n >= N */
#define EXPR_HIT_EVERY   2 /* n % N == 0 */

/* struct expr_prog.flags: what the caller must provide. */
#define EXPR_PROG_COUNT   (1u << EXPR_VAR_COUNT)   /* reads $count: bump the thread's counter */
#define EXPR_PROG_ELAPSED (1u << EXPR_VAR_ELAPSED) /* reads $elapsed: fill env->vars[1] */
#define EXPR_PROG_DURATION (1u << EXPR_VAR_DURATION) /* reads $duration: fill env->vars[2] */
#define EXPR_PROG_NOW     (1u << EXPR_VAR_NOW)     /* reads $now */
#define EXPR_PROG_UVARS   (1u << 8)                /* reads or sets variables of your own */

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

/** EXPR_PROG_CHECKED - struct expr_prog.checked of a program expr__validate() accepted. */
#define EXPR_PROG_CHECKED 0x6b636863u /* "chck" */

/**
 * struct expr_prog - a compiled condition.
 * @nr_insns: instructions used in @insns (1..EXPR_MAX_INSNS).
 * @max_stack: deepest stack the program needs (<= EXPR_MAX_STACK).
 * @strtab_len: bytes used in @strtab.
 * @flags: EXPR_PROG_*: the state and variables the program reads.
 * @nr_hits: hit counters the program uses (EXPR_OP_HIT a < @nr_hits).
 * @checked: EXPR_PROG_CHECKED once expr__validate() (expr__compile() calls
 *	     it) accepted the program, else 0. Userspace only: expr__eval()
 *	     runs nothing else, BPF ignores it. A program changed afterwards
 *	     must be validated again.
 * @reserved: 0.
 * @insns: the bytecode.
 * @strtab: string literals, each NUL-terminated, referenced by offset.
 */
struct expr_prog {
	__u32 nr_insns;
	__u32 max_stack;
	__u32 strtab_len;
	__u32 flags;
	__u32 nr_hits;
	__u32 checked;
	__u32 reserved[2];
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
 * @vars_set: bit i set when @vars[i] holds a value (EXPR_VAR_ELAPSED, _DURATION);
 *            reading an unset variable makes the condition false.
 * @comm: bpf_get_current_comm().
 * @vars: variables the caller fills, EXPR_VAR_*; vars[EXPR_VAR_COUNT] is
 *        not read ($count comes from the evaluator's state).
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
	__u32 vars_set;
	char comm[EXPR_COMM_LEN];
	__s64 vars[EXPR_MAX_VARS];
};

/**
 * struct expr_slot_state - a condition's global state in BPF (array map
 * expr_state, indexed by slot; see bpf/expr.bpf.h)
 * @hits: the hit counters of once/after/every terms.
 * @count_lost: evaluations whose $count could not be stored (false).
 * @uvar_lost: evaluations that could not set a variable of their own: the
 *	table (EXPR_UVAR_ENTRIES) was full (false).
 * @reserved: 0.
 */
struct expr_slot_state {
	__u64 hits[EXPR_MAX_HITS];
	__u64 count_lost;
	__u64 uvar_lost;
	__u64 reserved[2];
};

/** struct expr_uvar_key - key of a variable of your own (map expr_uvars). */
struct expr_uvar_key {
	__u32 var;
	__u32 tid;	/* the thread, EXPR_UVAR_GLOBAL for a global variable */
};

/** struct expr_count_key - key of the per-thread $count map (expr_counts). */
struct expr_count_key {
	__u32 tid;
	__u32 slot;
};

_Static_assert(sizeof(struct expr_insn) == 16, "expr_insn ABI size");
_Static_assert(sizeof(struct expr_prog) == 32 + 16 * EXPR_MAX_INSNS + EXPR_STRTAB_SIZE, "expr_prog ABI size");
_Static_assert(sizeof(struct expr_env) == 9 * 8 + 8 * EXPR_NR_ARGS + 16 + EXPR_COMM_LEN + 8 * EXPR_MAX_VARS,
	       "expr_env ABI size");
_Static_assert(__builtin_offsetof(struct expr_insn, imm) == 8, "expr_insn.imm");
_Static_assert(__builtin_offsetof(struct expr_prog, insns) == 32, "expr_prog.insns");
_Static_assert(__builtin_offsetof(struct expr_env, args) == 72, "expr_env.args");
_Static_assert(__builtin_offsetof(struct expr_env, rec_size) == 72 + 8 * EXPR_NR_ARGS + 8, "expr_env.rec_size");
_Static_assert(__builtin_offsetof(struct expr_env, comm) == 72 + 8 * EXPR_NR_ARGS + 16, "expr_env.comm");
_Static_assert(sizeof(struct expr_slot_state) == 8 * EXPR_MAX_HITS + 32, "expr_slot_state ABI size");
_Static_assert(sizeof(struct expr_count_key) == 8, "expr_count_key ABI size");
_Static_assert(sizeof(struct expr_uvar_key) == 8, "expr_uvar_key ABI size");

#endif
