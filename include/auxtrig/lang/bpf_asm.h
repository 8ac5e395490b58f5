/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_BPF_ASM_H
#define AUXTRIG_BPF_ASM_H

/*
 * lang/ layer: a BPF instruction buffer (user/lang/bpf_asm.c), for the programs
 * expr_bpf.c and record/gate_front.c build at run time.
 */

/**
 * DOC: a BPF instruction buffer with forward labels
 *
 * struct bpf_asm collects BPF instructions for programs auxtrig builds at run
 * time (compiled conditions, the gate's per-point programs). Jumps name a
 * label, bound later to the position it stands for; bpf_asm__finish()
 * writes every jump's offset. Pure code: nothing here talks to the kernel.
 * Map references are BPF_LD_IMM64 with a pseudo source (a map fd or a map
 * value), resolved by the kernel at load time.
 *
 * Errors latch: after the first one (no memory, too many instructions, an
 * unbound label) every call is a no-op and bpf_asm__finish() returns it.
 *
 *   struct bpf_asm *a = bpf_asm__new();
 *   int out = bpf_asm__label(a);
 *   bpf_asm__emit(a, BA_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_6, 8));
 *   bpf_asm__jmp_imm(a, BPF_JEQ, BPF_REG_1, 0, out);
 *   ...
 *   bpf_asm__bind(a, out);
 *   bpf_asm__emit(a, BA_MOV64_IMM(BPF_REG_0, 1));
 *   bpf_asm__emit(a, BA_EXIT());
 *   err = bpf_asm__finish(a, &insns, &nr);
 */

#include <stddef.h>
#include <linux/bpf.h>

/* BPF_ATOMIC and BPF_FETCH (Linux 5.12) in headers older than that. */
#ifndef BPF_ATOMIC
#define BPF_ATOMIC 0xc0
#endif
#ifndef BPF_FETCH
#define BPF_FETCH 0x01
#endif

#define BA_INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

#define BA_ALU64_IMM(op, d, i)	BA_INSN(BPF_ALU64 | BPF_OP(op) | BPF_K, d, 0, 0, i)
#define BA_ALU64_REG(op, d, s)	BA_INSN(BPF_ALU64 | BPF_OP(op) | BPF_X, d, s, 0, 0)
#define BA_ALU32_IMM(op, d, i)	BA_INSN(BPF_ALU | BPF_OP(op) | BPF_K, d, 0, 0, i)
#define BA_MOV64_IMM(d, i)	BA_ALU64_IMM(BPF_MOV, d, i)
#define BA_MOV64_REG(d, s)	BA_ALU64_REG(BPF_MOV, d, s)
#define BA_NEG64(d)		BA_INSN(BPF_ALU64 | BPF_NEG, d, 0, 0, 0)
#define BA_LDX_MEM(sz, d, s, o)	BA_INSN(BPF_LDX | BPF_SIZE(sz) | BPF_MEM, d, s, o, 0)
#define BA_STX_MEM(sz, d, s, o)	BA_INSN(BPF_STX | BPF_SIZE(sz) | BPF_MEM, d, s, o, 0)
#define BA_ST_MEM(sz, d, o, i)	BA_INSN(BPF_ST | BPF_SIZE(sz) | BPF_MEM, d, 0, o, i)
/* *(u64 *)(d + o) += s, and s = the old value: atomic (BPF_ATOMIC | BPF_FETCH). */
#define BA_ATOMIC_FETCH_ADD64(d, s, o) BA_INSN(BPF_STX | BPF_DW | BPF_ATOMIC, d, s, o, BPF_ADD | BPF_FETCH)
#define BA_CALL(helper)		BA_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, helper)
#define BA_EXIT()		BA_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* BPF_LD_IMM64 is two instructions: bpf_asm__ld_imm64() emits both. */
#ifndef BPF_PSEUDO_MAP_VALUE
#define BPF_PSEUDO_MAP_VALUE 2
#endif

struct bpf_asm;

/** bpf_asm__new() - an empty buffer. NULL with errno set. */
struct bpf_asm *bpf_asm__new(void);
/** bpf_asm__delete() - free @a (NULL is fine). */
void bpf_asm__delete(struct bpf_asm *a);

/** bpf_asm__emit() - append one instruction. */
void bpf_asm__emit(struct bpf_asm *a, struct bpf_insn insn);
/** bpf_asm__ld_imm64() - @reg = @v (two instructions). */
void bpf_asm__ld_imm64(struct bpf_asm *a, int reg, __u64 v);
/** bpf_asm__ld_map_fd() - @reg = the map @fd (for helpers that take a map). */
void bpf_asm__ld_map_fd(struct bpf_asm *a, int reg, int fd);
/**
 * bpf_asm__map_lookup() - r0 = bpf_map_lookup_elem(map @fd, fp + @key_off),
 * the key already stored at @key_off; if @miss >= 0, goto @miss when r0 is
 * NULL (the check the verifier wants before r0 is read). Clobbers r1-r5.
 */
void bpf_asm__map_lookup(struct bpf_asm *a, int fd, int key_off, int miss);
/** bpf_asm__ld_map_value() - @reg = the address of byte @off of element 0 of array map @fd. */
void bpf_asm__ld_map_value(struct bpf_asm *a, int reg, int fd, __u32 off);

/** bpf_asm__label() - a new unbound label: its id (>= 0). */
int bpf_asm__label(struct bpf_asm *a);
/** bpf_asm__bind() - @label stands for the next instruction emitted. */
void bpf_asm__bind(struct bpf_asm *a, int label);
/** bpf_asm__is_used() - does any jump name @label? */
int bpf_asm__is_used(const struct bpf_asm *a, int label);
/** bpf_asm__jmp() - goto @label. */
void bpf_asm__jmp(struct bpf_asm *a, int label);
/** bpf_asm__jmp_imm() - if (@reg @op @imm) goto @label; @op a BPF_J* such as BPF_JEQ (64-bit compare). */
void bpf_asm__jmp_imm(struct bpf_asm *a, int op, int reg, __s32 imm, int label);
/** bpf_asm__jmp_reg() - if (@dst @op @src) goto @label. */
void bpf_asm__jmp_reg(struct bpf_asm *a, int op, int dst, int src, int label);

/** bpf_asm__len() - instructions so far. */
size_t bpf_asm__len(const struct bpf_asm *a);
/** bpf_asm__error() - the first error so far (0 or -errno). */
int bpf_asm__error(const struct bpf_asm *a);
/**
 * bpf_asm__finish() - resolve every jump.
 * @insns: set to the instructions (owned by @a, valid until it is deleted).
 * @nr: set to their number.
 *
 * Return: 0; -EINVAL for a jump to an unbound label or one out of range;
 * the first latched error.
 */
int bpf_asm__finish(struct bpf_asm *a, const struct bpf_insn **insns, size_t *nr);

#endif
