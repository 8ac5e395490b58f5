// SPDX-License-Identifier: BSD-2-Clause
/* A BPF instruction buffer with forward labels: see include/auxtrig/lang/bpf_asm.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/bpf_asm.h"

#define BPF_ASM_MAX_INSNS 65536 /* far above what the verifier takes (BPF_MAXINSNS is 4096 unprivileged, 1M privileged) */

struct bpf_asm_fixup {
	size_t at;	/* the jump */
	int label;
};

struct bpf_asm {
	struct bpf_insn *insns;
	size_t nr, max;
	long *labels;	/* position, -1 while unbound */
	int nr_labels, max_labels;
	struct bpf_asm_fixup *fixups;
	size_t nr_fixups, max_fixups;
	int err;
};

struct bpf_asm *bpf_asm__new(void)
{
	return calloc(1, sizeof(struct bpf_asm));
}

void bpf_asm__delete(struct bpf_asm *a)
{
	if (!a)
		return;
	free(a->insns);
	free(a->labels);
	free(a->fixups);
	free(a);
}

/* Room for one more of @size bytes at *@p: 0 or latches -ENOMEM. */
static int grow(struct bpf_asm *a, void **p, size_t nr, size_t *max, size_t size)
{
	void *tmp;
	size_t n;

	if (a->err)
		return a->err;
	if (nr < *max)
		return 0;
	n = *max ? 2 * *max : 64;
	tmp = realloc(*p, n * size);
	if (!tmp)
		return a->err = -ENOMEM;
	*p = tmp;
	*max = n;
	return 0;
}

void bpf_asm__emit(struct bpf_asm *a, struct bpf_insn insn)
{
	if (!a->err && a->nr >= BPF_ASM_MAX_INSNS)
		a->err = -E2BIG;
	if (grow(a, (void **)&a->insns, a->nr, &a->max, sizeof(*a->insns)))
		return;
	a->insns[a->nr++] = insn;
}

static void ld_imm64(struct bpf_asm *a, int reg, int src, __u32 lo, __u32 hi)
{
	bpf_asm__emit(a, BA_INSN(BPF_LD | BPF_DW | BPF_IMM, reg, src, 0, (__s32)lo));
	bpf_asm__emit(a, BA_INSN(0, 0, 0, 0, (__s32)hi));
}

void bpf_asm__ld_imm64(struct bpf_asm *a, int reg, __u64 v)
{
	ld_imm64(a, reg, 0, (__u32)v, v >> 32);
}

void bpf_asm__ld_map_fd(struct bpf_asm *a, int reg, int fd)
{
	ld_imm64(a, reg, BPF_PSEUDO_MAP_FD, fd, 0);
}

void bpf_asm__map_lookup(struct bpf_asm *a, int fd, int key_off, int miss)
{
	bpf_asm__ld_map_fd(a, BPF_REG_1, fd);
	bpf_asm__emit(a, BA_MOV64_REG(BPF_REG_2, BPF_REG_10));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, BPF_REG_2, key_off));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_map_lookup_elem));
	if (miss >= 0)
		bpf_asm__jmp_imm(a, BPF_JEQ, BPF_REG_0, 0, miss);
}

void bpf_asm__ld_map_value(struct bpf_asm *a, int reg, int fd, __u32 off)
{
	ld_imm64(a, reg, BPF_PSEUDO_MAP_VALUE, fd, off);
}

int bpf_asm__label(struct bpf_asm *a)
{
	size_t max = a->max_labels;

	if (grow(a, (void **)&a->labels, a->nr_labels, &max, sizeof(*a->labels)))
		return 0; /* latched: any id will do */
	a->max_labels = max;
	a->labels[a->nr_labels] = -1;
	return a->nr_labels++;
}

void bpf_asm__bind(struct bpf_asm *a, int label)
{
	if (a->err)
		return;
	if (label < 0 || label >= a->nr_labels || a->labels[label] >= 0) {
		a->err = -EINVAL;
		return;
	}
	a->labels[label] = a->nr;
}

int bpf_asm__is_used(const struct bpf_asm *a, int label)
{
	for (size_t i = 0; i < a->nr_fixups; i++)
		if (a->fixups[i].label == label)
			return 1;
	return 0;
}

static void jump(struct bpf_asm *a, struct bpf_insn insn, int label)
{
	if (grow(a, (void **)&a->fixups, a->nr_fixups, &a->max_fixups, sizeof(*a->fixups)))
		return;
	a->fixups[a->nr_fixups].at = a->nr;
	a->fixups[a->nr_fixups].label = label;
	a->nr_fixups++;
	bpf_asm__emit(a, insn);
}

void bpf_asm__jmp(struct bpf_asm *a, int label)
{
	jump(a, BA_INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0), label);
}

void bpf_asm__jmp_imm(struct bpf_asm *a, int op, int reg, __s32 imm, int label)
{
	jump(a, BA_INSN(BPF_JMP | BPF_OP(op) | BPF_K, reg, 0, 0, imm), label);
}

void bpf_asm__jmp_reg(struct bpf_asm *a, int op, int dst, int src, int label)
{
	jump(a, BA_INSN(BPF_JMP | BPF_OP(op) | BPF_X, dst, src, 0, 0), label);
}

size_t bpf_asm__len(const struct bpf_asm *a)
{
	return a->nr;
}

int bpf_asm__error(const struct bpf_asm *a)
{
	return a->err;
}

int bpf_asm__finish(struct bpf_asm *a, const struct bpf_insn **insns, size_t *nr)
{
	if (a->err)
		return a->err;
	for (size_t i = 0; i < a->nr_fixups; i++) {
		const struct bpf_asm_fixup *f = &a->fixups[i];
		long to = f->label >= 0 && f->label < a->nr_labels ? a->labels[f->label] : -1;
		long off = to - (long)f->at - 1;

		if (to < 0 || off < -32768 || off > 32767)
			return a->err = -EINVAL;
		a->insns[f->at].off = off;
	}
	*insns = a->insns;
	*nr = a->nr;
	return 0;
}
