// SPDX-License-Identifier: BSD-2-Clause
/* A point's own gate program, as BPF instructions: see include/auxtrig/record/gate_front.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>

#include "auxtrig/lang/expr_bpf.h"
#include "auxtrig/record/gate_front.h"
#include "auxtrig/sys/arch.h"
#include "auxtrig/sys/log.h"

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R_CTX BPF_REG_6
#define R_PCPU BPF_REG_8
#define R_FIRE BPF_REG_9
#define FP BPF_REG_10

#define SCRATCH_OFF (-8)			/* the program's own 8 bytes */
#define IDS_OFF (-16)				/* pid_tgid, where this CPU's state does not keep it */
#define NOW_OFF (-24)				/* $elapsed: the time it is read */
#define FRAME_OFF (NOW_OFF - EXPR_BPF_FRAME)	/* the compiled conditions' */

/* syscalls:sys_enter_X / sys_exit_X and raw_syscalls: nr at 8, args from 16 / ret at 16. */
#define SYS_NR_OFF 8
#define SYS_ARGS_OFF 16

/*
 * Where struct pt_regs keeps the instruction pointer, a function's first six
 * arguments and its return value, as the kernel lays it out (and as a
 * kprobe program's context is): PT_REGS_PARM1..6 and PT_REGS_RC of libbpf,
 * from the architecture's table (sys/arch.h). Unset on an architecture
 * auxtrig does not know: the programs that read them are refused.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#define PT_REGS_IP_OFF (arch__host()->regs_ip)
#define PT_REGS_ARG_OFF(n) (arch__host()->regs_arg[n])
#define PT_REGS_RC_OFF (arch__host()->regs_ret)
_Static_assert(ARCH_NR_REG_ARGS == EXPR_NR_ARGS, "a register per argument of a condition");
#endif

/* What the ops read values with (their ctx). */
struct front {
	const struct gate_front_spec *s;
	int cpu_state; /* pid_tgid in gate_trig_pcpu.cur_pid_tgid (r8), else at IDS_OFF */
};

static int refuse(char *why, size_t size, const char *fmt, unsigned int arg)
{
	if (why && size)
		snprintf(why, size, fmt, arg);
	return -EOPNOTSUPP;
}

static int reads_field(const struct expr_prog *p, unsigned int f)
{
	for (__u32 i = 0; i < p->nr_insns && i < EXPR_MAX_INSNS; i++)
		if (p->insns[i].op == EXPR_OP_FIELD && p->insns[i].a == f)
			return 1;
	return 0;
}

int gate_front__needs_task(const struct gate_front_spec *s)
{
	if (s->where && reads_field(s->where, EXPR_F_PPID))
		return 1;
	for (__u32 i = 0; i < GATE_MAX_TRIGGERS; i++)
		if ((s->trig_mask & (1u << i)) && s->conds && s->conds[i] && reads_field(s->conds[i], EXPR_F_PPID))
			return 1;
	return 0;
}

/* Does @p read the thread's ids (pid, tid, or $count, which is counted per tid)? */
static int reads_ids(const struct expr_prog *p)
{
	return (p->flags & (EXPR_PROG_COUNT | EXPR_PROG_ELAPSED | EXPR_PROG_DURATION | EXPR_PROG_UVARS)) ||
	       reads_field(p, EXPR_F_PID) ||
	       reads_field(p, EXPR_F_TID);
}

static int needs_ids(const struct gate_front_spec *s)
{
	/* a call's entry is the thread's: entry.argN reads its ids too */
	if (s->filter_targets || s->call_frames || (s->entry_args && (s->tp_flags & GATE_TP_SYSCALL_EXIT)) ||
	    (s->where && reads_ids(s->where)))
		return 1;
	for (__u32 i = 0; i < GATE_MAX_TRIGGERS; i++)
		if ((s->trig_mask & (1u << i)) && s->conds && s->conds[i] && reads_ids(s->conds[i]))
			return 1;
	return 0;
}

int gate_front__uses_cpu_state(const struct gate_front_spec *s)
{
	/* a syscall tracepoint runs in its thread's context, never in an interrupt or inside the scheduler */
	return s->switch_hook && (s->tp_flags & (GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT)) &&
	       (needs_ids(s) || !s->trig_mask);
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

/* r0 = the current task (a BTF pointer the verifier lets us read). */
static void current_task(struct bpf_asm *a)
{
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_task_btf));
}

/*
 * r0 = usdt argument @n, as the shared gate_point_usdt decoded it into the
 * environment (gate_env) before it tail-called this program.
 */
static void usdt_arg(struct bpf_asm *a, const struct gate_front_spec *s, unsigned int n, int fail)
{
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, FP, SCRATCH_OFF, 0));
	bpf_asm__map_lookup(a, s->env_fd, SCRATCH_OFF, fail);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, R0, offsetof(struct expr_env, args) + 8 * n));
}

/* @reg = pid_tgid (tgid << 32 | tid), which the prologue fetched. */
static void load_ids(struct bpf_asm *a, const struct front *fr, int reg)
{
	if (fr->cpu_state)
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, reg, R_PCPU, offsetof(struct gate_trig_pcpu, cur_pid_tgid)));
	else
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, reg, FP, IDS_OFF));
}

static void call_frame(struct bpf_asm *a, const struct front *fr, int fail);
static void sys_entry_arg(struct bpf_asm *a, const struct front *fr, unsigned int n, int reg);
/* where call_frame()'s r0 has @member of the call's frame */
#define CALL_FRAME_OFF(member) ((short)(offsetof(struct gate_calls, frames) + offsetof(struct gate_call_frame, member)))

static int src_field(struct bpf_asm *a, void *ctx, unsigned int f, int fail, char *why, size_t why_size)
{
	const struct front *fr = ctx;
	const struct gate_front_spec *s = fr->s;
	unsigned int n;

	switch (f) {
	case EXPR_F_PID:
	case EXPR_F_TID:
		load_ids(a, fr, R0);
		if (f == EXPR_F_PID)
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_RSH, R0, 32));
		else /* the low half: a 32-bit move zero-extends */
			bpf_asm__emit(a, BA_INSN(BPF_ALU | BPF_MOV | BPF_X, R0, R0, 0, 0));
		return 0;
	case EXPR_F_PPID:
		/* task->real_parent->tgid; 0 if there is none, as BPF_CORE_READ() reads it */
		current_task(a);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, s->task.real_parent));
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
#ifdef PT_REGS_RC_OFF
		if (s->probe == GATE_FRONT_RETURN) {
			/* typed as the shared program types it (expr_cast()) */
			unsigned int size = s->ret_cast & EXPR_REC_SIZE_MASK;

			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, R_CTX, PT_REGS_RC_OFF));
			if (size != 1 && size != 2 && size != 4)
				return 0;
			if (s->ret_cast & EXPR_REC_SIGNED)
				sign_extend(a, size);
			else if (size == 4) /* a 32-bit move zero-extends */
				bpf_asm__emit(a, BA_INSN(BPF_ALU | BPF_MOV | BPF_X, R0, R0, 0, 0));
			else
				bpf_asm__emit(a, BA_ALU64_IMM(BPF_AND, R0, size == 1 ? 0xff : 0xffff));
			return 0;
		}
#endif
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
	if (s->probe == GATE_FRONT_USDT) {
		usdt_arg(a, s, n, fail);
		return 0;
	}
	if (s->probe == GATE_FRONT_RETURN && s->call_frames) {
		/* entry.argN at a uretprobe: the argument its call entered with */
		call_frame(a, ctx, fail);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, R0, CALL_FRAME_OFF(args) + 8 * n));
		return 0;
	}
#ifdef PT_REGS_RC_OFF
	if (s->probe == GATE_FRONT_ENTRY) {
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, R_CTX, PT_REGS_ARG_OFF(n)));
		return 0;
	}
#endif
	if ((s->tp_flags & GATE_TP_SYSCALL_EXIT) && s->entry_args) {
		sys_entry_arg(a, fr, n, R0); /* entry.argN at a syscall's exit */
		return 0;
	}
	if (!(s->tp_flags & GATE_TP_SYSCALL_ENTER)) {
		bpf_asm__emit(a, BA_MOV64_IMM(R0, 0));
		return 0;
	}
	if (SYS_ARGS_OFF + 8 * (n + 1) > s->rec_size)
		return refuse(why, why_size, "arg%u is past this syscall's record: interpreted", n);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, R_CTX, SYS_ARGS_OFF + 8 * n));
	return 0;
}

/* fp[@dst..] = @size bytes of the context at @off (bpf_probe_read_kernel()); goto @fail if that fails. */
static void copy_ctx(struct bpf_asm *a, int dst, unsigned int size, unsigned int off, int fail)
{
	bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, dst));
	bpf_asm__emit(a, BA_MOV64_IMM(R2, size));
	bpf_asm__emit(a, BA_MOV64_REG(R3, R_CTX));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R3, off));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_kernel));
	bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, fail);
}

static int src_rec_int(struct bpf_asm *a, void *ctx, unsigned int off, unsigned int size, int is_signed, int fail,
		       char *why, size_t why_size)
{
	const struct gate_front_spec *s = ((const struct front *)ctx)->s;

	if (off + size > s->rec_size) {
		expr_bpf__fail_always(a, fail);
		return 0;
	}
	if (off % size) {
		/* the context is read only at aligned offsets: copy it */
		copy_ctx(a, SCRATCH_OFF, size, off, fail);
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
	const struct front *fr = ctx;
	const struct gate_front_spec *s = fr->s;
	unsigned int off = arg & 0xffff, size = arg >> 16;

	switch (src) {
	case EXPR_S_COMM:
		/* bpf_get_current_comm(): NUL-terminated in its 16 bytes; the rest of the buffer 0 */
		for (int i = EXPR_COMM_LEN; i < EXPR_STR_MAX; i += 8)
			bpf_asm__emit(a, BA_ST_MEM(BPF_DW, FP, buf_off + i, 0));
		bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, buf_off));
		bpf_asm__emit(a, BA_MOV64_IMM(R2, EXPR_COMM_LEN));
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_comm));
		bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, fail);
		if (need_len)
			expr_bpf__strlen(a, buf_off, EXPR_COMM_LEN);
		return 0;
	case EXPR_S_USER:
		if (s->probe == GATE_FRONT_USDT && arg < EXPR_NR_ARGS) {
			usdt_arg(a, s, arg, fail);
			bpf_asm__emit(a, BA_MOV64_REG(R3, R0));
		} else
#ifdef PT_REGS_RC_OFF
		if (s->probe == GATE_FRONT_ENTRY && arg < EXPR_NR_ARGS) {
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R3, R_CTX, PT_REGS_ARG_OFF(arg)));
		} else
#endif
		if (arg < EXPR_NR_ARGS && (s->tp_flags & GATE_TP_SYSCALL_EXIT) && s->entry_args) {
			sys_entry_arg(a, fr, arg, R3); /* str(entry.argN) at a syscall's exit */
		} else
		if (arg >= EXPR_NR_ARGS || !(s->tp_flags & GATE_TP_SYSCALL_ENTER) ||
		    SYS_ARGS_OFF + 8 * (arg + 1) > s->rec_size) {
			return refuse(why, why_size, "str(arg%u) is past this point's arguments: interpreted", arg);
		} else {
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R3, R_CTX, SYS_ARGS_OFF + 8 * arg));
		}
		expr_bpf__user_str(a, buf_off, need_len, fail);
		return 0;
	case EXPR_S_REC_ARRAY:
		if (off + size > s->rec_size) {
			expr_bpf__fail_always(a, fail);
			return 0;
		}
		if (size > EXPR_STR_MAX - 1)
			size = EXPR_STR_MAX - 1;
		expr_bpf__zero(a, buf_off);
		if (size)
			copy_ctx(a, buf_off, size, off, fail);
		if (need_len)
			expr_bpf__strlen(a, buf_off, size);
		return 0;
	case EXPR_S_REC_LOC: {
		/*
		 * The u32 at @off: the string's offset in the record (low half)
		 * and size (high half), written by the kernel with the record.
		 * The string lies after the fixed fields, within the perf trace
		 * buffer (GATE_RECORD_MAX bytes), as expr_eval() bounds it.
		 */
		if (off + 4 > s->rec_size || off % 4) {
			expr_bpf__fail_always(a, fail);
			return 0;
		}
		expr_bpf__data_loc_str(a, R_CTX, off, GATE_RECORD_MAX, buf_off, need_len, fail);
		return 0;
	}
	}
	return -EINVAL;
}

/*
 * r0 = the thread's innermost call of this uretprobe point's function, as
 * call_pop() in bpf/gate/point.bpf.c finds it (gate_calls, key {tid, point}): the
 * struct gate_calls plus the frame's offset from its first frame; goto
 * @fail where there is none (entered before the run, or too deep to keep).
 */
static void call_frame(struct bpf_asm *a, const struct front *fr, int fail)
{
	const struct gate_front_spec *s = fr->s;

	load_ids(a, fr, R1);
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF)); /* struct gate_call_key */
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, FP, SCRATCH_OFF + 4, (__s32)s->probe_key));
	bpf_asm__map_lookup(a, s->calls_fd, SCRATCH_OFF, fail);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R1, R0, offsetof(struct gate_calls, depth)));
	bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, fail);
	bpf_asm__jmp_imm(a, BPF_JGT, R1, GATE_CALL_DEPTH, fail);
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_SUB, R1, 1));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_AND, R1, GATE_CALL_DEPTH - 1)); /* the bound the verifier sees */
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_MUL, R1, sizeof(struct gate_call_frame)));
	bpf_asm__emit(a, BA_ALU64_REG(BPF_ADD, R0, R1));
}

/*
 * @reg = argument @n the thread entered this syscall with, as fill_env() in
 * bpf/gate/env.bpf.h has it at the exit: from gate_sys_entries (key tid) if that
 * entry is this syscall's (its nr), else 0. Clobbers r0..r5.
 */
static void sys_entry_arg(struct bpf_asm *a, const struct front *fr, unsigned int n, int reg)
{
	const struct gate_front_spec *s = fr->s;
	int none = bpf_asm__label(a), done = bpf_asm__label(a);

	load_ids(a, fr, R1);
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF)); /* the tid: the map's key */
	bpf_asm__ld_map_fd(a, R1, s->sys_entries_fd);
	bpf_asm__emit(a, BA_MOV64_REG(R2, FP));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R2, SCRATCH_OFF));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_map_lookup_elem));
	bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, none);
	/* the same syscall's entry: its number, as an int sign-extended */
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, offsetof(struct gate_sys_entry, nr)));
	bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R2, R_CTX, SYS_NR_OFF));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_LSH, R2, 32));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ARSH, R2, 32));
	bpf_asm__jmp_reg(a, BPF_JNE, R1, R2, none);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, reg, R0, offsetof(struct gate_sys_entry, args) + 8 * n));
	bpf_asm__jmp(a, done);
	bpf_asm__bind(a, none);
	bpf_asm__emit(a, BA_MOV64_IMM(reg, 0));
	bpf_asm__bind(a, done);
}

/*
 * $elapsed, as fill_elapsed() in bpf/gate/env.bpf.h: since the thread's open
 * windows opened, else at a syscall's exit since the thread entered it
 * (gate_sys_entries, stamped at the entry), else unset: the condition fails.
 * $duration, as fill_env() and call_pop(): at a syscall's exit since the
 * thread entered it, at a uretprobe since its call's entry.
 */
static int src_var(struct bpf_asm *a, void *ctx, unsigned int var, int fail, char *why, size_t why_size)
{
	const struct front *fr = ctx;
	const struct gate_front_spec *s = fr->s;
	int sys = bpf_asm__label(a), have = bpf_asm__label(a);

	if (var == EXPR_VAR_NOW)
		return -EOPNOTSUPP; /* the clock: expr_bpf__compile() calls it */
	if (var != EXPR_VAR_ELAPSED && var != EXPR_VAR_DURATION)
		return -EINVAL;
	if (var == EXPR_VAR_DURATION && !(s->probe == GATE_FRONT_RETURN && s->call_frames) &&
	    !(s->tp_flags & GATE_TP_SYSCALL_EXIT)) {
		expr_bpf__fail_always(a, fail); /* no call's entry here */
		return 0;
	}
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_ktime_get_ns));
	bpf_asm__emit(a, BA_STX_MEM(BPF_DW, FP, R0, NOW_OFF));
	load_ids(a, fr, R1);
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF)); /* the tid: the maps' key */
	if (var == EXPR_VAR_DURATION && s->probe == GATE_FRONT_RETURN && s->call_frames) {
		call_frame(a, fr, fail);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, CALL_FRAME_OFF(ns)));
	} else {
		if (var == EXPR_VAR_ELAPSED) {
			bpf_asm__map_lookup(a, s->threads_fd, SCRATCH_OFF, sys);
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, offsetof(struct gate_thread, open)));
			bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, sys);
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, offsetof(struct gate_thread, opened_ns)));
			bpf_asm__jmp(a, have);
		}
		bpf_asm__bind(a, sys);
		if (!(s->tp_flags & GATE_TP_SYSCALL_EXIT)) {
			expr_bpf__fail_always(a, fail);
		} else {
			bpf_asm__map_lookup(a, s->sys_entries_fd, SCRATCH_OFF, fail);
			/* the same syscall's entry: its number, as an int sign-extended */
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, offsetof(struct gate_sys_entry, nr)));
			bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R2, R_CTX, SYS_NR_OFF));
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_LSH, R2, 32));
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_ARSH, R2, 32));
			bpf_asm__jmp_reg(a, BPF_JNE, R1, R2, fail);
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, offsetof(struct gate_sys_entry, ns)));
		}
	}
	bpf_asm__bind(a, have);
	/* unset or in the future: no value */
	bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, fail);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R0, FP, NOW_OFF));
	bpf_asm__jmp_reg(a, BPF_JGT, R1, R0, fail);
	bpf_asm__emit(a, BA_ALU64_REG(BPF_SUB, R0, R1));
	return 0;
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

/* policy_fires() of bpf/gate/trigger.bpf.h: goto @no unless trigger @i's policy lets this match fire. */
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
		if (t->n <= INT32_MAX) { /* an immediate divisor: no run-time check for 0 */
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_MOD, R2, (__s32)t->n));
		} else {
			bpf_asm__ld_imm64(a, R3, t->n);
			bpf_asm__emit(a, BA_ALU64_REG(BPF_MOD, R2, R3));
		}
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

/*
 * Is the thread whose pid_tgid is in r0 a target? goto @yes or @no. The
 * first targets are constants; the map holds them all, and the ones that
 * came later (children, an exec'd command).
 */
static void target_check(struct bpf_asm *a, const struct gate_front_spec *s, int yes, int no)
{
	if (s->target_threads) /* the low half: a 32-bit move zero-extends */
		bpf_asm__emit(a, BA_INSN(BPF_ALU | BPF_MOV | BPF_X, R1, R0, 0, 0));
	else {
		bpf_asm__emit(a, BA_MOV64_REG(R1, R0));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_RSH, R1, 32));
	}
	for (int i = 0; i < s->nr_pids && i < GATE_FRONT_MAX_PIDS; i++)
		bpf_asm__jmp_imm(a, BPF_JEQ, R1, s->pids[i], yes);
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF));
	bpf_asm__map_lookup(a, s->targets_fd, SCRATCH_OFF, -1);
	bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, yes);
	bpf_asm__jmp(a, no);
}

/*
 * The thread's ids, and whether it is a target, goto @out if not. At a
 * syscall point both are remembered in this CPU's gate_trig_pcpu until the
 * next context switch (gate_sched_switch resets cur_state), so a thread's
 * hits after its first in a time slice need no helper call at all.
 */
static void prologue_ids(struct bpf_asm *a, const struct gate_front_spec *s, int cpu_state, int out)
{
	const int state = offsetof(struct gate_trig_pcpu, cur_state);
	int ok = bpf_asm__label(a), yes = bpf_asm__label(a), no = bpf_asm__label(a);

	if (cpu_state) {
		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R1, R_PCPU, state));
		bpf_asm__jmp_imm(a, BPF_JEQ, R1, GATE_CUR_TARGET, ok);
		if (s->filter_targets)
			bpf_asm__jmp_imm(a, BPF_JEQ, R1, GATE_CUR_OTHER, out);
	}
	if (cpu_state) {
		/* where its user registers are: for the sample IP of the records of recording points */
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_task_btf));
		bpf_asm__emit(a, BA_MOV64_REG(R1, R0));
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_task_pt_regs));
		bpf_asm__emit(a, BA_STX_MEM(BPF_DW, R_PCPU, R0, offsetof(struct gate_trig_pcpu, cur_regs)));
	}
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_pid_tgid));
	if (cpu_state)
		bpf_asm__emit(a, BA_STX_MEM(BPF_DW, R_PCPU, R0, offsetof(struct gate_trig_pcpu, cur_pid_tgid)));
	else
		bpf_asm__emit(a, BA_STX_MEM(BPF_DW, FP, R0, IDS_OFF));
	if (s->filter_targets)
		target_check(a, s, yes, no);
	bpf_asm__bind(a, yes);
	if (cpu_state)
		bpf_asm__emit(a, BA_ST_MEM(BPF_W, R_PCPU, state, GATE_CUR_TARGET));
	if (s->filter_targets) {
		bpf_asm__jmp(a, ok);
		bpf_asm__bind(a, no);
		if (cpu_state)
			bpf_asm__emit(a, BA_ST_MEM(BPF_W, R_PCPU, state, GATE_CUR_OTHER));
		bpf_asm__jmp(a, out);
	}
	bpf_asm__bind(a, ok);
}

/* goto @out unless the gate is armed (gate_config.armed, read in place). */
static void armed_check(struct bpf_asm *a, const struct gate_front_spec *s, int out)
{
	bpf_asm__ld_map_value(a, R1, s->config_fd, offsetof(struct gate_config, armed));
	bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R1, R1, 0));
	bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, out);
}

/*
 * R_PCPU = this CPU's struct gate_trig_pcpu, goto @out if none (a per-CPU
 * array lookup: inlined by the verifier since Linux 6.10).
 */
static void load_pcpu(struct bpf_asm *a, const struct gate_front_spec *s, int out)
{
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, FP, SCRATCH_OFF, 0));
	bpf_asm__map_lookup(a, s->pcpu_fd, SCRATCH_OFF, out);
	bpf_asm__emit(a, BA_MOV64_REG(R_PCPU, R0));
}

int gate_front__build(struct bpf_asm *a, const struct gate_front_spec *s, char *why, size_t why_size)
{
	struct front fr = { .s = s, .cpu_state = gate_front__uses_cpu_state(s) };
	int out = bpf_asm__label(a), err;

	if (why && why_size)
		why[0] = 0;
	if (!s->trig_mask)
		return refuse(why, why_size, "no trigger at this point (%u)", s->trig_mask);
	if (s->probe && (s->open_mask || s->close_mask || s->is_window))
		return refuse(why, why_size, "it also opens or closes windows (%u)", 0);
	bpf_asm__emit(a, BA_MOV64_REG(R_CTX, BPF_REG_1));
	armed_check(a, s, out);
	load_pcpu(a, s, out);
	if (needs_ids(s))
		prologue_ids(a, s, fr.cpu_state, out);
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
				.ctx = &fr,
				.stack_off = FRAME_OFF,
				.state_fd = s->expr_state_fd,
				.counts_fd = s->counts_fd,
				.uvars_fd = s->uvars_fd,
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
	bpf_asm__emit(a, BA_MOV64_IMM(R3, s->probe ? s->fire_prog : 0));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_tail_call));
	/* tracepoint programs return 1: 0 would hide the hit from other perf users; probes' return 0, as the shared ones */
	bpf_asm__bind(a, out);
	bpf_asm__emit(a, BA_MOV64_IMM(R0, s->probe ? 0 : 1));
	bpf_asm__emit(a, BA_EXIT());
	return bpf_asm__error(a);
}


/* The common fields the shared program's emit() rebuilds (bpf/gate/emit.bpf.h, struct common_header). */
#define REC_HDR_OFF	(NOW_OFF - (int)sizeof(struct gate_out_hdr) - 256) /* gate_out_hdr, then the record */

/*
 * A record's program: r9 (R_FIRE) = this CPU's stats slot; a record the
 * recorder's freeze (a snapshot trigger, or past a delayed one's deadline)
 * holds back is counted, and goes to @out.
 */
static void record_stats_frozen(struct bpf_asm *a, const struct gate_front_spec *s, int out)
{
	int go = bpf_asm__label(a), held = bpf_asm__label(a);

	/* this CPU's stats slot: r9 = &stats[min(cpu, GATE_STATS_SLOTS - 1)] */
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_smp_processor_id));
	if (s->filter_cpus) {
		bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R0, SCRATCH_OFF));
		bpf_asm__map_lookup(a, s->cpus_fd, SCRATCH_OFF, out);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_B, R1, R0, 0));
		bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, out);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R0, FP, SCRATCH_OFF));
	}
	bpf_asm__emit(a, BA_INSN(BPF_JMP | BPF_JLT | BPF_K, R0, 0, 1, GATE_STATS_SLOTS));
	bpf_asm__emit(a, BA_MOV64_IMM(R0, GATE_STATS_SLOTS - 1));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_MUL, R0, sizeof(struct gate_stats)));
	bpf_asm__ld_map_value(a, R_FIRE, s->bss_fd, s->stats_off);
	bpf_asm__emit(a, BA_ALU64_REG(BPF_ADD, R_FIRE, R0));
	/* frozen by a snapshot trigger, or past a delayed one's deadline: held back, counted */
	bpf_asm__ld_map_value(a, R1, s->runtime_fd, 0);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_W, R2, R1, offsetof(struct gate_runtime, frozen)));
	bpf_asm__jmp_imm(a, BPF_JNE, R2, 0, held);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R2, R1, offsetof(struct gate_runtime, freeze_at)));
	bpf_asm__jmp_imm(a, BPF_JEQ, R2, 0, go);
	bpf_asm__emit(a, BA_STX_MEM(BPF_DW, FP, R2, SCRATCH_OFF));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_ktime_get_ns));
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R2, FP, SCRATCH_OFF));
	bpf_asm__jmp_reg(a, BPF_JLE, R0, R2, go);
	bpf_asm__ld_map_value(a, R1, s->runtime_fd, 0);
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, R1, offsetof(struct gate_runtime, frozen), 1));
	bpf_asm__bind(a, held);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R_FIRE, offsetof(struct gate_stats, frozen)));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, 1));
	bpf_asm__emit(a, BA_STX_MEM(BPF_DW, R_FIRE, R1, offsetof(struct gate_stats, frozen)));
	bpf_asm__jmp(a, out);
	bpf_asm__bind(a, go);
}

/* A record's program: the sample IP into the output header on the stack. */
static void record_sample_ip(struct bpf_asm *a, const struct gate_front_spec *s, const struct front *fr)
{
	int no_regs = bpf_asm__label(a);

	/*
	 * The sample IP perf would report, as emit() takes it: a syscall's user
	 * registers (the task's pt_regs), else the registers whose pointer the
	 * context's first 8 bytes hold (which the program may not load itself).
	 */
	bpf_asm__emit(a, BA_ST_MEM(BPF_DW, FP, REC_HDR_OFF + (int)offsetof(struct gate_out_hdr, ip), 0));
	bpf_asm__emit(a, BA_ST_MEM(BPF_DW, FP, REC_HDR_OFF + (int)offsetof(struct gate_out_hdr, window), 0));
	if ((s->tp_flags & GATE_TP_USER_REGS) && fr->cpu_state) {
		/* remembered with the thread's ids (prologue_ids()): one read per record */
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R3, R_PCPU, offsetof(struct gate_trig_pcpu, cur_regs)));
	} else if (s->tp_flags & GATE_TP_USER_REGS) {
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_get_current_task_btf));
		bpf_asm__emit(a, BA_MOV64_REG(R1, R0));
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_task_pt_regs));
		bpf_asm__emit(a, BA_MOV64_REG(R3, R0));
	} else {
		bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, SCRATCH_OFF));
		bpf_asm__emit(a, BA_MOV64_IMM(R2, 8));
		bpf_asm__emit(a, BA_MOV64_REG(R3, R_CTX));
		bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_kernel));
		bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, no_regs);
		bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R3, FP, SCRATCH_OFF));
	}
	bpf_asm__jmp_imm(a, BPF_JEQ, R3, 0, no_regs);
#ifdef PT_REGS_IP_OFF
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R3, PT_REGS_IP_OFF));
#endif
	bpf_asm__emit(a, BA_MOV64_REG(R1, FP));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, REC_HDR_OFF + (int)offsetof(struct gate_out_hdr, ip)));
	bpf_asm__emit(a, BA_MOV64_IMM(R2, 8));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_probe_read_kernel));
	bpf_asm__bind(a, no_regs);
}

int gate_front__build_record(struct bpf_asm *a, const struct gate_front_spec *s, char *why, size_t why_size)
{
	const __u32 mine = GATE_TP_RECORD | GATE_TP_USER_REGS | GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT;
	const int rec = REC_HDR_OFF + (int)sizeof(struct gate_out_hdr);
	struct front fr = { .s = s, .cpu_state = gate_front__uses_cpu_state(s) };
	int out = bpf_asm__label(a), lost = bpf_asm__label(a), stat;
	__u32 size = (s->rec_size + 7) & ~7u;

	if (why && why_size)
		why[0] = 0;
	if (s->trig_mask || !(s->tp_flags & GATE_TP_RECORD) || (s->tp_flags & ~mine))
		return refuse(why, why_size, "it does more than being recorded (%u)", s->tp_flags);
#ifndef PT_REGS_IP_OFF
	return refuse(why, why_size, "no pt_regs layout known for this architecture (%u)", 0);
#endif
	if (s->rec_size < 8 || size > 256)
		return refuse(why, why_size, "its records are larger than a point's own program copies (%u bytes)",
			      s->rec_size);
	bpf_asm__emit(a, BA_MOV64_REG(R_CTX, BPF_REG_1));
	armed_check(a, s, out);
	load_pcpu(a, s, out);
	prologue_ids(a, s, fr.cpu_state, out);
	record_stats_frozen(a, s, out);
	/*
	 * The record as perf would have sampled it, straight from the context:
	 * its first 8 bytes hold the pt_regs pointer, not the common fields,
	 * which are rebuilt (type, then flags and preempt_count 0, then the tid).
	 */
	for (__u32 off = 8, n; off < s->rec_size; off += n) {
		/* aligned loads, none past the record (the kernel refuses a program that reads further) */
		for (n = 8; n > 1 && (off % n || off + n > s->rec_size); n /= 2)
			;
		bpf_asm__emit(a, BA_LDX_MEM(bpf_size(n), R1, R_CTX, off));
		bpf_asm__emit(a, BA_STX_MEM(bpf_size(n), FP, R1, rec + (int)off));
	}
	/* the stack bytes the output reads beyond the record */
	for (__u32 off = s->rec_size; off < size; off++)
		bpf_asm__emit(a, BA_ST_MEM(BPF_B, FP, rec + (int)off, 0));
	load_ids(a, &fr, R1);
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_LSH, R1, 32)); /* the tid in the high half, type 0 below */
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_OR, R1, (__s32)(s->tp_id & 0xffff)));
	bpf_asm__emit(a, BA_STX_MEM(BPF_DW, FP, R1, rec));
	record_sample_ip(a, s, &fr);
	bpf_asm__emit(a, BA_MOV64_REG(R1, R_CTX));
	bpf_asm__ld_map_fd(a, R2, s->events_fd);
	bpf_asm__ld_imm64(a, R3, BPF_F_CURRENT_CPU);
	bpf_asm__emit(a, BA_MOV64_REG(BPF_REG_4, FP));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, BPF_REG_4, REC_HDR_OFF));
	bpf_asm__emit(a, BA_MOV64_IMM(BPF_REG_5, sizeof(struct gate_out_hdr) + s->rec_size));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_perf_event_output));
	bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, lost);
	stat = offsetof(struct gate_stats, recorded);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R_FIRE, stat));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, 1));
	bpf_asm__emit(a, BA_STX_MEM(BPF_DW, R_FIRE, R1, stat));
	bpf_asm__jmp(a, out);
	bpf_asm__bind(a, lost);
	stat = offsetof(struct gate_stats, output_lost);
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R_FIRE, stat));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_ADD, R1, 1));
	bpf_asm__emit(a, BA_STX_MEM(BPF_DW, R_FIRE, R1, stat));
	bpf_asm__bind(a, out);
	bpf_asm__emit(a, BA_MOV64_IMM(R0, 1));
	bpf_asm__emit(a, BA_EXIT());
	return bpf_asm__error(a);
}

int gate_front__build_where(struct bpf_asm *a, const struct gate_front_spec *s, char *why, size_t why_size)
{
	struct front fr = { .s = s, .cpu_state = gate_front__uses_cpu_state(s) };
	struct expr_bpf_opts o = {
		.ops = &src_ops,
		.ctx = &fr,
		.stack_off = FRAME_OFF,
		.state_fd = s->expr_state_fd,
		.counts_fd = s->counts_fd,
		.uvars_fd = s->uvars_fd,
		.slot = 0, /* GATE_SLOT_WHERE */
	};
	const int key = offsetof(struct gate_trig_pcpu, where_tp);
	int out = bpf_asm__label(a), err;

	if (why && why_size)
		why[0] = 0;
	if (!s->where || !s->open_mask)
		return refuse(why, why_size, "no --where at a window start here (%u)", 0);
	bpf_asm__emit(a, BA_MOV64_REG(R_CTX, BPF_REG_1));
	load_pcpu(a, s, out);
	/* no verdict for this hit unless one is made below */
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, R_PCPU, key, 0));
	armed_check(a, s, out);
	prologue_ids(a, s, fr.cpu_state, out);
	/* the windows the thread has open (gate_threads, key tid): none of ours still to open, no --where */
	load_ids(a, &fr, R1);
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF));
	bpf_asm__map_lookup(a, s->threads_fd, SCRATCH_OFF, -1);
	bpf_asm__emit(a, BA_MOV64_IMM(R1, 0));
	bpf_asm__emit(a, BA_INSN(BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 1, 0));
	bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, offsetof(struct gate_thread, open)));
	bpf_asm__emit(a, BA_ALU64_IMM(BPF_XOR, R1, -1));
	bpf_asm__ld_imm64(a, R2, s->open_mask);
	bpf_asm__emit(a, BA_ALU64_REG(BPF_AND, R1, R2));
	bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, out);
	err = expr_bpf__compile(a, s->where, &o, why, why_size);
	if (err)
		return err;
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, R_PCPU, R0, offsetof(struct gate_trig_pcpu, where_verdict)));
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, R_PCPU, key, (__s32)s->tp_id));
	bpf_asm__bind(a, out);
	bpf_asm__emit(a, BA_MOV64_IMM(R0, 1));
	bpf_asm__emit(a, BA_EXIT());
	return bpf_asm__error(a);
}

static int reads_elapsed(const struct expr_prog *p)
{
	return !!(p->flags & EXPR_PROG_ELAPSED);
}

static int build_probe(struct bpf_asm *a, const struct gate_front_spec *s, int check, char *why, size_t why_size);

/* Can @s's program run @cond compiled? Compiled on its own, into nothing kept. */
static int probe_cond_ok(const struct gate_front_spec *s, const struct expr_prog *cond, char *why, size_t why_size)
{
	const struct expr_prog *conds[GATE_MAX_TRIGGERS] = { cond };
	struct gate_front_spec one = *s;
	struct bpf_asm *a;
	int err;

	one.where = cond == s->where ? cond : NULL;
	one.trig_mask = cond == s->where ? 0 : 1;
	one.conds = conds;
	a = bpf_asm__new();
	if (!a)
		return -ENOMEM;
	err = build_probe(a, &one, 1, why, why_size);
	bpf_asm__delete(a);
	return err;
}

int gate_front__build_probe(struct bpf_asm *a, const struct gate_front_spec *s, char *why, size_t why_size)
{
	return build_probe(a, s, 0, why, why_size);
}

/* @check: @s has one condition, just to see whether it compiles. */
static int build_probe(struct bpf_asm *a, const struct gate_front_spec *s, int check, char *why, size_t why_size)
{
	struct front fr = { .s = s, .cpu_state = 0 };
	struct expr_bpf_opts o = {
		.ops = &src_ops,
		.ctx = &fr,
		.stack_off = FRAME_OFF,
		.state_fd = s->expr_state_fd,
		.counts_fd = s->counts_fd,
		.uvars_fd = s->uvars_fd,
	};
	int where = s->where && !s->no_windows && (s->is_window || s->open_mask);
	int out = bpf_asm__label(a), conds = 0, err;
	__u32 mask = 0;

	if (why && why_size)
		why[0] = 0;
#ifndef PT_REGS_RC_OFF
	return refuse(why, why_size, "no pt_regs layout known for this architecture (%u)", 0);
#endif
	if (!s->is_window && s->probe != GATE_FRONT_ENTRY && s->probe != GATE_FRONT_RETURN && s->probe != GATE_FRONT_USDT)
		return refuse(why, why_size, "not a uprobe, uretprobe, usdt, kprobe or kretprobe point (%u)", s->probe);

	for (__u32 i = 0; !s->is_window && i < GATE_MAX_TRIGGERS; i++) {
		if (!(s->trig_mask & (1u << i)) || !s->conds || !s->conds[i])
			continue;
		/* the shared program opens and closes the point's windows before it runs the triggers */
		if (check && reads_elapsed(s->conds[i]) && (s->open_mask || s->close_mask))
			return refuse(why, why_size,
				      "$elapsed at a point that opens or closes windows is read after them (trigger %u)",
				      i + 1);
		if (!check && probe_cond_ok(s, s->conds[i], why, why_size)) {
			pr_info("trigger %u: condition interpreted by the shared gate program: %s\n", i + 1, why);
			continue;
		}
		mask |= 1u << i;
		conds++;
	}
	if (where && !check && probe_cond_ok(s, s->where, why, why_size)) {
		pr_info("--where interpreted by the shared gate program: %s\n", why);
		where = 0;
	}
	if (!where && !conds) /* the last refusal's reason stays in @why */
		return why && why[0] ? -EOPNOTSUPP : refuse(why, why_size, "no condition to compile here%.0u", 0);
	if (where)
		mask |= GATE_VERDICT_WHERE;
	bpf_asm__emit(a, BA_MOV64_REG(R_CTX, BPF_REG_1));
	armed_check(a, s, out);
	load_pcpu(a, s, out);
	/* not armed or not a target: the shared program would do nothing either */
	prologue_ids(a, s, 0, out);
	bpf_asm__emit(a, BA_MOV64_IMM(R_FIRE, 0));
	if (where) {
		int skip = bpf_asm__label(a);

		/* the thread's windows (gate_threads, key tid) */
		load_ids(a, &fr, R1);
		bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF));
		bpf_asm__map_lookup(a, s->threads_fd, SCRATCH_OFF, -1);
		bpf_asm__emit(a, BA_MOV64_IMM(R1, 0));
		if (s->is_window) {
			/* only at the outermost call: none of window's calls in progress */
			bpf_asm__emit(a, BA_INSN(BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 1, 0));
			bpf_asm__emit(a, BA_LDX_MEM(BPF_B, R1, R0,
						    offsetof(struct gate_thread, depth) + (s->window & (GATE_MAX_WINDOWS - 1))));
			bpf_asm__jmp_imm(a, BPF_JNE, R1, 0, skip);
			/*
			 * nor at a call nested in an outermost one it vetoed (the
			 * shared program counts it there): a stateful --where
			 * ('every 2') counts outermost calls only
			 */
			load_ids(a, &fr, R1);
			bpf_asm__emit(a, BA_STX_MEM(BPF_W, FP, R1, SCRATCH_OFF));
			bpf_asm__emit(a, BA_ST_MEM(BPF_W, FP, SCRATCH_OFF + 4, (__s32)(s->window & (GATE_MAX_WINDOWS - 1))));
			bpf_asm__map_lookup(a, s->vetoed_fd, SCRATCH_OFF, -1);
			bpf_asm__jmp_imm(a, BPF_JNE, R0, 0, skip);
		} else {
			/* only where one of the point's windows is still to open */
			bpf_asm__emit(a, BA_INSN(BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 1, 0));
			bpf_asm__emit(a, BA_LDX_MEM(BPF_DW, R1, R0, offsetof(struct gate_thread, open)));
			bpf_asm__emit(a, BA_ALU64_IMM(BPF_XOR, R1, -1));
			bpf_asm__ld_imm64(a, R2, s->open_mask);
			bpf_asm__emit(a, BA_ALU64_REG(BPF_AND, R1, R2));
			bpf_asm__jmp_imm(a, BPF_JEQ, R1, 0, skip);
		}
		o.slot = 0; /* GATE_SLOT_WHERE */
		err = expr_bpf__compile(a, s->where, &o, why, why_size);
		if (err)
			return err;
		bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, skip);
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_OR, R_FIRE, (__s32)GATE_VERDICT_WHERE));
		bpf_asm__bind(a, skip);
	}
	for (__u32 i = 0; !s->is_window && i < GATE_MAX_TRIGGERS; i++) {
		int next = bpf_asm__label(a);

		if (!(mask & (1u << i)))
			continue;
		o.slot = 1 + i; /* GATE_SLOT_TRIGGER(i) */
		err = expr_bpf__compile(a, s->conds[i], &o, why, why_size);
		if (err)
			return err;
		bpf_asm__jmp_imm(a, BPF_JEQ, R0, 0, next);
		bpf_asm__emit(a, BA_ALU64_IMM(BPF_OR, R_FIRE, 1 << i));
		bpf_asm__bind(a, next);
	}
	bpf_asm__emit(a, BA_STX_MEM(BPF_W, R_PCPU, R_FIRE, offsetof(struct gate_trig_pcpu, probe_verdict)));
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, R_PCPU, offsetof(struct gate_trig_pcpu, probe_mask), (__s32)mask));
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, R_PCPU, offsetof(struct gate_trig_pcpu, probe_key), (__s32)s->probe_key));
	/* the rest of the hit: the shared program, which takes the verdicts */
	bpf_asm__emit(a, BA_MOV64_REG(R1, R_CTX));
	bpf_asm__ld_map_fd(a, R2, s->probe_progs_fd);
	bpf_asm__emit(a, BA_MOV64_IMM(R3, s->probe_prog));
	bpf_asm__emit(a, BA_CALL(BPF_FUNC_tail_call));
	/* no tail call (never expected): the verdicts must not outlive this hit */
	bpf_asm__emit(a, BA_ST_MEM(BPF_W, R_PCPU, offsetof(struct gate_trig_pcpu, probe_key), 0));
	bpf_asm__bind(a, out);
	bpf_asm__emit(a, BA_MOV64_IMM(R0, 0));
	bpf_asm__emit(a, BA_EXIT());
	return bpf_asm__error(a);
}

int gate_front__check_probe_cond(const struct expr_prog *cond, int probe, int where, int windows, char *why,
				 size_t why_size)
{
	const struct expr_prog *conds[GATE_MAX_TRIGGERS] = { cond };
	struct gate_front_spec spec = {
		.probe = probe,
		.probe_key = 1,
		.where = where ? cond : NULL,
		.open_mask = where || windows,
		.trig_mask = where ? 0 : 1,
		.conds = conds,
	};
	struct bpf_asm *a = bpf_asm__new();
	int err;

	if (!a)
		return -ENOMEM;
	err = build_probe(a, &spec, 1, why, why_size);
	bpf_asm__delete(a);
	return err;
}

int gate_front__check_cond(const struct expr_prog *cond, __u32 tp_flags, __u32 rec_size, char *why, size_t why_size)
{
	struct gate_front_spec spec = { .tp_flags = tp_flags, .rec_size = rec_size };
	struct front fr = { .s = &spec };
	struct expr_bpf_opts o = { .ops = &src_ops, .ctx = &fr, .stack_off = FRAME_OFF, .slot = 1 };
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
