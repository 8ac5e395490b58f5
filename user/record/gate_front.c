// SPDX-License-Identifier: BSD-2-Clause
/* A point's own gate program, as BPF instructions: see include/auxtrig/record/gate_front.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>

#include "auxtrig/lang/expr_bpf.h"
#include "auxtrig/record/gate_front.h"

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R_CTX BPF_REG_6
#define R_TASK BPF_REG_7
#define R_PCPU BPF_REG_8
#define R_FIRE BPF_REG_9
#define FP BPF_REG_10

#define SCRATCH_OFF (-8)			/* the program's own 8 bytes */
#define FRAME_OFF (SCRATCH_OFF - EXPR_BPF_FRAME)	/* the compiled conditions' */

/* syscalls:sys_enter_X / sys_exit_X and raw_syscalls: nr at 8, args from 16 / ret at 16. */
#define SYS_NR_OFF 8
#define SYS_ARGS_OFF 16

static int refuse(char *why, size_t size, const char *fmt, unsigned int arg)
{
	if (why && size)
		snprintf(why, size, fmt, arg);
	return -EOPNOTSUPP;
}

/* r0 = the sign-extended @size-byte value just loaded into r0. */
static void sign_extend(struct bpf_asm *a, unsigned int size)
{
	if (size >= 8)
		return;
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_LSH, R0, 64 - 8 * size));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ARSH, R0, 64 - 8 * size));
}

static int bpf_size(unsigned int size)
{
	return size == 8 ? BPF_DW : size == 4 ? BPF_W : size == 2 ? BPF_H : BPF_B;
}

static int src_field(struct bpf_asm *a, void *ctx, unsigned int f, int fail, char *why, size_t why_size)
{
	const struct gate_front_spec *s = ctx;
	unsigned int n;

	switch (f) {
	case EXPR_F_PID:
		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R0, R_TASK, s->task.tgid));
		return 0;
	case EXPR_F_TID:
		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R0, R_TASK, s->task.pid));
		return 0;
	case EXPR_F_PPID:
		/* task->real_parent->tgid; 0 if there is none, as BPF_CORE_READ() reads it */
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R_TASK, s->task.real_parent));
		bpf_asm__emit(a, BA_MOV64_IMM(R0, 0));
		bpf_asm__emit(a, BA_INSN(BPF_JMP | BPF_JEQ | BPF_K, R1, 0, 1, 0));
		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R0, R1, s->task.tgid));
		return 0;
	case EXPR_F_UID:
	case EXPR_F_GID:
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_uid_gid));
		if (f == EXPR_F_UID) /* the low half: a 32-bit move zero-extends */
			bpf_asm__emit(a, BA_INSN(BPF_ALU | BPF_MOV | BPF_X, R0, R0, 0, 0));
		else
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_RSH, R0, 32));
		return 0;
	case EXPR_F_CPU:
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_smp_processor_id));
		return 0;
	case EXPR_F_CGROUP:
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_cgroup_id));
		return 0;
	case EXPR_F_NR:
		if (!(s->tp_flags & (GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT))) {
			bpf_asm__emit(a, BA_MOV64_IMM(R0, -1));
			return 0;
		}
		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R0, R_CTX, SYS_NR_OFF));
		sign_extend(a, 4);
		return 0;
	case EXPR_F_RET:
		if (!(s->tp_flags & GATE_TP_SYSCALL_EXIT)) {
			bpf_asm__emit(a, BA_MOV64_IMM(R0, 0));
			return 0;
		}
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, R_CTX, SYS_ARGS_OFF));
		return 0;
	}
	if (f < EXPR_F_ARG0 || f >= EXPR_F_ARG0 + EXPR_NR_ARGS)
		return -EINVAL;
	n = f - EXPR_F_ARG0;
	if (!(s->tp_flags & GATE_TP_SYSCALL_ENTER)) {
		bpf_asm__emit(a, BA_MOV64_IMM(R0, 0));
		return 0;
	}
	if (SYS_ARGS_OFF + 8 * (n + 1) > s->rec_size)
		return refuse(why, why_size, "arg%u is past this syscall's record: interpreted", n);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, R_CTX, SYS_ARGS_OFF + 8 * n));
	return 0;
}

static int src_rec_int(struct bpf_asm *a, void *ctx, unsigned int off, unsigned int size, int is_signed, int fail,
		       char *why, size_t why_size)
{
	const struct gate_front_spec *s = ctx;

	if (off + size > s->rec_size) {
		expr_bpf__fail_always(a, fail);
		return 0;
	}
	if (off % size) {
		/* the context is read only at aligned offsets: copy it */
		bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, SCRATCH_OFF));
		bpf_asm__emit(a, BA_MOV64_IMM(R2, size));
		bpf_asm__emit(a, BA_MOV64_REG(R3, R_CTX));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R3, off));
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_kernel));
		bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, fail);
		bpf_asm__emit(a, BA_LDX_MEM(bpf_size(size), R0, FP, SCRATCH_OFF));
	} else {
		bpf_asm__emit(a, BA_LDX_MEM(bpf_size(size), R0, R_CTX, off));
	}
	if (is_signed)
		sign_extend(a, size);
	return 0;
}

static int src_str(struct bpf_asm *a, void *ctx, unsigned int src, unsigned int arg, int buf_off, int need_len,
		   int fail, char *why, size_t why_size)
{
	const struct gate_front_spec *s = ctx;
	unsigned int off = arg & 0xffff, size = arg >> 16;

	switch (src) {
	case EXPR_S_COMM:
		for (int i = EXPR_COMM_LEN; i < EXPR_STR_MAX; i += 8)
			bpf_asm__emit(a, BA_ST_MEM(BPF_DW, FP, buf_off + i, 0));
		for (int i = 0; i < EXPR_COMM_LEN; i += 8) {
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R_TASK, s->task.comm + i));
			bpf_asm__emit(a, BA_STX_MEM(BPF_DW, FP, R1, buf_off + i));
		}
		if (need_len)
			expr_bpf__strlen(a, buf_off, EXPR_COMM_LEN);
		return 0;
	case EXPR_S_USER:
		if (arg >= EXPR_NR_ARGS || !(s->tp_flags & GATE_TP_SYSCALL_ENTER) ||
		    SYS_ARGS_OFF + 8 * (arg + 1) > s->rec_size)
			return refuse(why, why_size, "str(arg%u) is past this point's arguments: interpreted", arg);
		bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, buf_off));
		bpf_asm__emit(a, BA_MOV64_IMM(R2, EXPR_STR_MAX));
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R3, R_CTX, SYS_ARGS_OFF + 8 * arg));
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_user_str));
		bpf_asm__jmp_imm(a, BPF_JSLT, R0, 0, fail);
		if (need_len)
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R0, -1));
		return 0;
	case EXPR_S_REC_ARRAY:
		if (off + size > s->rec_size) {
			expr_bpf__fail_always(a, fail);
			return 0;
		}
		if (size > EXPR_STR_MAX - 1)
			size = EXPR_STR_MAX - 1;
		expr_bpf__zero(a, buf_off);
		if (size) {
			bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, buf_off));
			bpf_asm__emit(a, BA_MOV64_IMM(R2, size));
			bpf_asm__emit(a, BA_MOV64_REG(R3, R_CTX));
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R3, off));
			bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_kernel));
			bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, fail);
		}
		if (need_len)
			expr_bpf__strlen(a, buf_off, size);
		return 0;
	}
	snprintf(why, why_size, "a __data_loc string field is interpreted");
	return -EOPNOTSUPP;
}

static int src_var(struct bpf_asm *a, void *ctx, unsigned int var, int fail, char *why, size_t why_size)
{
	snprintf(why, why_size, "$elapsed is interpreted");
	return -EOPNOTSUPP;
}

static const struct expr_bpf_ops src_ops = {
	.field = src_field,
	.rec_int = src_rec_int,
	.str = src_str,
	.var = src_var,
};

/* *(u64 *)(r8 + @off) += 1: this CPU's counter, no atomic. */
static void count(struct bpf_asm *a, __u32 i, size_t field)
{
	int off = offsetof(struct gate_trig_pcpu, stats) + i * sizeof(struct gate_trigger_stats) + field;

	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R_PCPU, off));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, 1));
	bpf_asm__emit(a, BA_STX_MEM(BPF_DW, R_PCPU, R1, off));
}

/* policy_fires() of bpf/gate.bpf.c: goto @no unless trigger @i's policy lets this match fire. */
static void policy(struct bpf_asm *a, const struct gate_front_spec *s, __u32 i, int no)
{
	const struct gate_trigger *t = &s->triggers[i];
	__u32 off = s->policy_off + i * sizeof(__u64);
	int fire = bpf_asm__label(a);

	switch (t->policy) {
	case GATE_POLICY_ONCE:
		bpf_asm__ld_map_value(a, R1, s->bss_fd, off);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R2, R1, 0));
		bpf_asm__jmp_imm(a, BPF_JNE, R2, 0, no);
		bpf_asm__emit(a, BA_MOV64_IMM(R2, 1));
		bpf_asm__emit(a, BA_ATOMIC_FETCH_ADD64(R1, R2, 0));
		bpf_asm__jmp_imm(a, BPF_JNE, R2, 0, no); /* another CPU's was the first */
		break;
	case GATE_POLICY_EVERY:
		bpf_asm__ld_map_value(a, R1, s->bss_fd, off);
		bpf_asm__emit(a, BA_MOV64_IMM(R2, 1));
		bpf_asm__emit(a, BA_ATOMIC_FETCH_ADD64(R1, R2, 0));
		if (!t->n) {
			expr_bpf__fail_always(a, no);
			break;
		}
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R2, 1));
		bpf_asm__ld_imm64(a, R3, t->n);
		bpf_asm__emit(a, BA_ALU64_REG(BPF_MOD, R2, R3));
		bpf_asm__jmp_imm(a, BPF_JNE, R2, 0, no);
		break;
	case GATE_POLICY_AFTER:
		bpf_asm__ld_map_value(a, R1, s->bss_fd, off);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R2, R1, 0));
		bpf_asm__ld_imm64(a, R3, t->n);
		bpf_asm__jmp_reg(a, BPF_JGE, R2, R3, fire);
		bpf_asm__emit(a, BA_MOV64_IMM(R2, 1));
		bpf_asm__emit(a, BA_ATOMIC_FETCH_ADD64(R1, R2, 0));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R2, 1));
		bpf_asm__jmp_reg(a, BPF_JLT, R2, R3, no);
		break;
	}
	bpf_asm__bind(a, fire);
}

int gate_front__build(struct bpf_asm *a, const struct gate_front_spec *s, char *why, size_t why_size)
{
	int out = bpf_asm__label(a), ok = bpf_asm__label(a), err;

	if (why && why_size)
		why[0] = 0;
	if (!s->trig_mask)
		return refuse(why, why_size, "no trigger at this point (%u)", s->trig_mask);
	bpf_asm__emit(a, BA_MOV64_REG(R_CTX, BPF_REG_1));
	/* armed: gate_config.armed, read in place */
	bpf_asm__ld_map_value(a, R1, s->config_fd, offsetof(struct gate_config, armed));
	bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R1, R1, 0));
	bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, out);
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_task_btf));
	bpf_asm__emit(a, BA_MOV64_REG(R_TASK, R0));
	if (s->filter_targets) {
		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R1, R_TASK, (int)(s->target_threads ? s->task.pid : s->task.tgid)));
		for (int i = 0; i < s->nr_pids && i < GATE_FRONT_MAX_PIDS; i++)
			bpf_asm__jmp_imm(a, BPF_JEQ, R1, s->pids[i], ok);
		/* one that came later (a child, an exec'd command): the map */
		bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF));
		bpf_asm__ld_map_fd(a, R1, s->targets_fd);
		bpf_asm__emit(a, BA_MOV64_REG(R2, FP));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R2, SCRATCH_OFF));
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_map_lookup_elem));
		bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, out);
	}
	bpf_asm__bind(a, ok);
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, FP, SCRATCH_OFF, 0));
	bpf_asm__ld_map_fd(a, R1, s->pcpu_fd);
	bpf_asm__emit(a, BA_MOV64_REG(R2, FP));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R2, SCRATCH_OFF));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_map_lookup_elem));
	bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, out);
	bpf_asm__emit(a, BA_MOV64_REG(R_PCPU, R0));
	bpf_asm__emit(a, BA_MOV64_IMM(R_FIRE, 0));
	for (__u32 i = 0; i < GATE_MAX_TRIGGERS; i++) {
		int next, no;

		if (!(s->trig_mask & (1u << i)))
			continue;
		next = bpf_asm__label(a);
		no = bpf_asm__label(a);
		count(a, i, offsetof(struct gate_trigger_stats, evaluated));
		if (s->conds[i]) {
			struct expr_bpf_opts o = {
				.ops = &src_ops,
				.ctx = (void *)s,
				.stack_off = FRAME_OFF,
				.state_fd = s->expr_state_fd,
				.counts_fd = s->counts_fd,
				.slot = 1 + i, /* GATE_SLOT_TRIGGER(i) */
			};

			err = expr_bpf__compile(a, s->conds[i], &o, why, why_size);
			if (err)
				return err;
			bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, next);
		}
		count(a, i, offsetof(struct gate_trigger_stats, matched));
		policy(a, s, i, no);
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_OR, R_FIRE, 1 << i));
		if (bpf_asm__is_used(a, no)) {
			bpf_asm__jmp(a, next);
			bpf_asm__bind(a, no);
			count(a, i, offsetof(struct gate_trigger_stats, suppressed));
		}
		bpf_asm__bind(a, next);
	}
	/* the actions: gate_fire, with the triggers that fire */
	bpf_asm__jmp_imm(a, BPF_JEQ, R_FIRE, 0, out);
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, R_PCPU, R_FIRE, offsetof(struct gate_trig_pcpu, fire_mask)));
	bpf_asm__emit(a, BA_MOV64_REG(R1, R_CTX));
	bpf_asm__ld_map_fd(a, R2, s->fire_fd);
	bpf_asm__emit(a, BA_MOV64_IMM(R3, 0));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_tail_call));
	/* tracepoint programs return 1: 0 would hide the hit from other perf users */
	bpf_asm__bind(a, out);
	bpf_asm__emit(a, BA_MOV64_IMM(R0, 1));
	bpf_asm__emit(a, BA_EXIT());
	return bpf_asm__error(a);
}

int gate_front__check_cond(const struct expr_prog *cond, __u32 tp_flags, __u32 rec_size, char *why, size_t why_size)
{
	struct gate_front_spec spec = { .tp_flags = tp_flags, .rec_size = rec_size };
	struct expr_bpf_opts o = { .ops = &src_ops, .ctx = &spec, .stack_off = FRAME_OFF, .slot = 1 };
	struct bpf_asm *a = bpf_asm__new();
	int err;

	if (!a)
		return -ENOMEM;
	err = expr_bpf__compile(a, cond, &o, why, why_size);
	bpf_asm__delete(a);
	return err;
}

/* The byte offset of member @name of struct @type, looking into anonymous members. */
static int member_off(const struct btf *btf, __u32 type_id, const char *name, int base)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m;
	int off;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -ENOENT;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		__u32 bits = btf_member_bit_offset(t, i);

		if (n && !strcmp(n, name))
			return bits % 8 ? -EINVAL : base + (int)(bits / 8);
		if (!n || !n[0]) {
			off = member_off(btf, btf__resolve_type(btf, m->type), name, base + bits / 8);
			if (off >= 0)
				return off;
		}
	}
	return -ENOENT;
}

int gate_front__task_offsets(struct gate_front_task *t)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id, err = 0;

	if (!btf)
		return -errno;
	id = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	if (id < 0) {
		err = id;
		goto out;
	}
	t->tgid = member_off(btf, id, "tgid", 0);
	t->pid = member_off(btf, id, "pid", 0);
	t->comm = member_off(btf, id, "comm", 0);
	t->real_parent = member_off(btf, id, "real_parent", 0);
	if (t->tgid < 0 || t->pid < 0 || t->comm < 0 || t->real_parent < 0)
		err = -ENOENT;
out:
	btf__free(btf);
	return err;
}
