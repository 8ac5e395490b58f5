/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_EMIT_BPF_H
#define AUXTRIG_GATE_EMIT_BPF_H

/*
 * What the gate writes to the per-CPU bpf-output events: a tracepoint's raw
 * record (emit()), a record of auxtrig's own (emit_own(): uprobe windows,
 * marks), a snapshot's point; none while a snapshot's freeze or a stop holds.
 */
#include "state.bpf.h"

/*
 * A snapshot trigger fired: count the record as held back, emit nothing. A
 * delayed one (snapshot+T) set a deadline instead: the first record past it
 * freezes the recorder.
 */
static __always_inline int frozen(struct gate_stats *st)
{
	struct gate_runtime *rt = gruntime();
	struct gate_stop *sp = gstop();

	/* A stop action fired: nothing from its moment (or deadline) on, ever. */
	if (sp && sp->at && bpf_ktime_get_ns() >= sp->at) {
		st->stopped++;
		return 1;
	}
	if (!rt)
		return 0;
	if (!rt->frozen && rt->freeze_at && bpf_ktime_get_ns() > rt->freeze_at)
		rt->frozen = 1;
	if (!rt->frozen)
		return 0;
	st->frozen++;
	return 1;
}

/*
 * The window a record emitted now belongs to. Only while windows are timed
 * (--min/--max-duration): the recorder then holds the record until the
 * window's verdict.
 */
static __always_inline void out_hdr(struct gate_out_hdr *h)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gate_thread *th;

	h->window = 0;
	h->flags = 0;
	if (!hold_windows)
		return;
	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (th && th->open && th->id) {
		h->window = th->id;
		h->flags = GATE_OUT_HELD;
	}
}

/*
 * The record as perf would have sampled it: the first 8 bytes (common_type,
 * common_flags, common_preempt_count, common_pid) are not what the kernel
 * wrote, because perf_trace_run_bpf_submit() and the syscall tracepoints store
 * the pt_regs pointer there before running BPF. They are rebuilt from what we
 * know: the tracepoint id and the current thread. flags and preempt_count
 * cannot be recovered and read as 0.
 */
struct common_header {
	__u16 type;
	__u8 flags;
	__u8 preempt_count;
	__s32 pid;
};

/*
 * One user string of a record: the string the pointer at record offset @off
 * points to, copied to @at and cut at GATE_STR_MAX with "..." at its end (an
 * unreadable one: empty), its u32 __data_loc stored at @loc. Returns where
 * the next string goes. The masks show the verifier the bounds the callers
 * know (the assertion after append_user_strings()): a pointer inside the
 * fixed part, a __data_loc below 256, a string below 2048.
 */
static __always_inline __u32 append_user_str(struct record_buf *buf, __u32 off, __u32 loc, __u32 at)
{
	const char *ptr;
	long len;

	barrier_var(off);
	off &= GATE_STR_FIXED_MAX - 1;
	ptr = *(const char **)&buf->data[off];
	barrier_var(at);
	at &= 2047;
	len = bpf_probe_read_user_str(&buf->data[at], GATE_STR_MAX, ptr);
	if (len <= 0) {
		buf->data[at] = 0; /* unreadable: an empty string */
		len = 1;
	} else if (len == GATE_STR_MAX) {
		buf->data[at + GATE_STR_MAX - 4] = '.';
		buf->data[at + GATE_STR_MAX - 3] = '.';
		buf->data[at + GATE_STR_MAX - 2] = '.';
	}
	barrier_var(loc);
	loc &= 255;
	*(__u32 *)&buf->data[loc] = ((__u32)len << 16) | at;
	return at + ((__u32)len & (GATE_STR_MAX * 2 - 1));
}

/*
 * A syscall entry's user strings (gate_tp.str_off, gate_abi.h): one u32
 * __data_loc per string from the record's fixed @size on, the strings after
 * them (append_user_str()). Returns the record's new end (@end when there
 * are none).
 */
static __always_inline __u32 append_user_strings(struct record_buf *buf, const struct gate_tp *tp, __u32 size,
						 __u32 end)
{
	__u32 nr = 0, at;

	if (!tp->str_off[0] || end != size || size > GATE_STR_FIXED_MAX)
		return end;
	for (int i = 0; i < GATE_MAX_STRS; i++)
		if (tp->str_off[i])
			nr = i + 1;
	at = size + 4 * nr;
	for (int i = 0; i < GATE_MAX_STRS; i++) {
		__u32 off = tp->str_off[i];

		if (!off)
			break;
		if (off + 8 > size)
			break;
		at = append_user_str(buf, off, size + 4 * i, at);
	}
	/*
	 * Below 2048 (the assertion below), but the 6.1 verifier loses the bound on
	 * the paths that break early (at = size + 4 * nr, size reloaded): the mask
	 * shows it the record's end fits the output buffer.
	 */
	barrier_var(at);
	return at & 2047;
}
_Static_assert(GATE_STR_FIXED_MAX + 4 * GATE_MAX_STRS + GATE_MAX_STRS * GATE_STR_MAX <= 2048 &&
	       GATE_STR_FIXED_MAX + 4 * GATE_MAX_STRS <= 256 &&
	       GATE_STR_FIXED_MAX + 4 * GATE_RAW_STR_ARGS + GATE_MAX_STRS * GATE_STR_MAX <= 2048 &&
	       GATE_STR_FIXED_MAX + 4 * GATE_RAW_STR_ARGS <= 256 &&
	       GATE_RAW_ARGS_OFF + 8 * GATE_RAW_STR_ARGS <= GATE_STR_FIXED_MAX,
	       "the masks of append_user_str()");

/*
 * A raw_syscalls:sys_enter record's user strings (GATE_TP_RAW_STRS): one u32
 * __data_loc per argument from the record's fixed @size on (0 for those that
 * are no string), the strings after them, as a syscall entry's are. Which
 * arguments are strings, the syscall number (the record's id) says
 * (gate_raw_strs). Returns the record's new end.
 */
static __always_inline __u32 append_raw_strings(struct record_buf *buf, __u32 size, __u32 end)
{
	const struct gate_raw_strs *rs;
	__u32 at, nr;
	__s64 id;

	if (end != size || size > GATE_STR_FIXED_MAX || size < GATE_RAW_ARGS_OFF + 8 * GATE_RAW_STR_ARGS)
		return end;
	barrier_var(size);
	size &= GATE_STR_FIXED_MAX - 1;
	for (int i = 0; i < GATE_RAW_STR_ARGS; i++)
		*(__u32 *)&buf->data[(size + 4 * i) & 255] = 0;
	at = size + 4 * GATE_RAW_STR_ARGS;
	id = *(__s64 *)&buf->data[8];
	if (id < 0 || id >= GATE_MAX_SYSCALLS)
		return at;
	nr = (__u32)id;
	rs = bpf_map_lookup_elem(&gate_raw_strs, &nr);
	if (!rs)
		return at;
	for (int i = 0; i < GATE_MAX_STRS; i++) {
		__u32 off = rs->str_off[i];

		if (off < GATE_RAW_ARGS_OFF || off >= GATE_RAW_ARGS_OFF + 8 * GATE_RAW_STR_ARGS)
			break;
		at = append_user_str(buf, off, size + 4 * ((off - GATE_RAW_ARGS_OFF) / 8), at);
	}
	barrier_var(at);
	return at & 2047;
}

/*
 * Copy the whole raw record, dynamic (__data_loc) payloads included, and emit
 * it. The fixed part is copied first so the dynamic locations can be read from
 * the copy (no variable-offset access to ctx), then, if the dynamic data
 * reaches further, the record is copied again at its full length.
 */
static __always_inline void emit(void *ctx, __u32 tp_id, const struct gate_tp *tp,
				 struct gate_stats *st)
{
	struct common_header hdr = {
		.type = tp_id,
		.pid = (__u32)bpf_get_current_pid_tgid(),
	};
	__u32 zero = 0, size = tp->size, end, loc, off;
	struct record_buf *buf;
	struct pt_regs *regs;

	if (!cpu_recorded())
		return;
	if (frozen(st)) {
		/* a snapshot trigger at the end of this call would find it incomplete: note the call */
		if (have_snap_triggers && (tp->flags & (GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT))) {
			__u32 tid = (__u32)bpf_get_current_pid_tgid();
			__s32 nr = -1;

			bpf_probe_read_kernel(&nr, sizeof(nr), ctx + 8);
			bpf_map_update_elem(&gate_held, &tid, &nr, BPF_ANY);
		}
		return;
	}
	buf = bpf_map_lookup_elem(&gate_scratch, &zero);
	if (!buf)
		return;
	if (size > GATE_RECORD_MAX || size < sizeof(hdr)) {
		st->too_big++;
		return;
	}
	/* Keep clang from dropping the mask it believes redundant: the verifier needs it. */
	barrier_var(size);
	size &= GATE_SCRATCH - 1;
	if (bpf_probe_read_kernel(buf->data, size, ctx))
		return;

	end = size;
	for (int i = 0; i < GATE_MAX_DYN; i++) {
		if (i >= tp->nr_dyn)
			break;
		off = tp->dyn_off[i];
		if (off > GATE_RECORD_MAX - 4)
			break;
		loc = *(__u32 *)&buf->data[off];
		if (tp->dyn_flags[i] & GATE_DYN_REL)
			loc = (loc & 0xffff0000) | ((loc & 0xffff) + off + 4);
		if ((loc & 0xffff) + (loc >> 16) > end)
			end = (loc & 0xffff) + (loc >> 16);
	}
	if (end > GATE_RECORD_MAX) {
		st->too_big++;
		return;
	}
	barrier_var(end);
	end &= GATE_SCRATCH - 1;
	if (end > size && bpf_probe_read_kernel(buf->data, end, ctx))
		return;
	/*
	 * The sample IP perf itself reports: for syscall tracepoints the user
	 * registers of the syscall; for the others the caller's registers, which
	 * are the pt_regs pointer those first 8 bytes hold.
	 */
	if (tp->flags & GATE_TP_USER_REGS)
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	else
		regs = *(struct pt_regs **)buf->data;
	buf->hdr.ip = regs ? PT_REGS_IP_CORE(regs) : 0;
	out_hdr(&buf->hdr);
	__builtin_memcpy(buf->data, &hdr, sizeof(hdr));
	if (tp->flags & GATE_TP_RAW_STRS)
		end = append_raw_strings(buf, size, end);
	else
		end = append_user_strings(buf, tp, size, end);

	if (bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, buf, sizeof(buf->hdr) + end)) {
		st->output_lost++;
		return;
	}
	st->recorded++;
	/* A new call of the thread is recorded from its start: what a freeze held back is before it. */
	if (have_snap_triggers && (tp->flags & GATE_TP_SYSCALL_ENTER)) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();

		bpf_map_delete_elem(&gate_held, &tid);
	}
}

/* Emit a record auxtrig built (not a tracepoint's). */
static __always_inline void emit_own_now(void *ctx, __u64 ip, const void *rec, __u32 size, struct gate_stats *st)
{
	struct record_buf *buf;
	__u32 zero = 0;

	if (!cpu_recorded())
		return;
	buf = bpf_map_lookup_elem(&gate_scratch, &zero);
	if (!buf)
		return;
	buf->hdr.ip = ip;
	out_hdr(&buf->hdr);
	barrier_var(size);
	size &= GATE_SCRATCH - 1;
	if (bpf_probe_read_kernel(buf->data, size, rec))
		return;
	if (bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, buf, sizeof(buf->hdr) + size))
		st->output_lost++;
	else
		st->recorded++;
}

/* A record of auxtrig's own, unless the recorder is frozen or stopped. */
static __always_inline void emit_own(void *ctx, __u64 ip, const void *rec, __u32 size, struct gate_stats *st)
{
	if (frozen(st))
		return;
	emit_own_now(ctx, ip, rec, size, st);
}

/*
 * A snapshot trigger's point (GATE_OUT_POINT) in this CPU's data ring, past
 * the freeze it just set: where the snapshot ends. Return: its number, 0 if
 * it could not be emitted (the snapshot then takes whatever is there).
 */
static __always_inline __u32 emit_point(void *ctx, __u64 ip)
{
	struct {
		struct gate_out_hdr hdr;
		__u64 nothing;
	} p = {};
	__u32 n = __sync_add_and_fetch(&snap_points, 1);

	if (!cpu_recorded())
		return 0;
	p.hdr.ip = ip;
	p.hdr.window = n;
	p.hdr.flags = GATE_OUT_POINT;
	if (bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, &p, sizeof(p)))
		return 0;
	return n;
}

/* An auxtrig:mark-shaped record (mark, resume, pause) with the values that fired trigger @i, at @ip. */
static __always_inline void emit_mark_rec(void *ctx, __u64 ip, const struct expr_env *env, __u32 i, __u32 type,
					  bool stopping)
{
	struct gate_mark_rec mark = {
		.common_type = type,
		.common_pid = env->tid,
		.trigger = i + 1,
		.nr = env->nr,
		.ret = env->ret,
	};

	__builtin_memcpy(mark.args, env->args, sizeof(mark.args));
	if (stopping) /* the stop's own record: the stop is already in force */
		emit_own_now(ctx, ip, &mark, sizeof(mark), my_stats());
	else
		emit_own(ctx, ip, &mark, sizeof(mark), my_stats());
}

static __always_inline void emit_mark(void *ctx, __u64 ip, const struct expr_env *env, __u32 i, __u32 type)
{
	emit_mark_rec(ctx, ip, env, i, type, false);
}

/*
 * A mark in a run whose marks carry a string (mark_strs): the record, a
 * __data_loc at its end and the user string argN points to (@str = N + 1),
 * cut at GATE_STR_MAX with "..." as a syscall entry's are; empty with @str 0
 * or where it cannot be read.
 */
static __always_inline void emit_mark_str(void *ctx, __u64 ip, const struct expr_env *env, __u32 i, __u32 type,
					  __u32 str)
{
	const __u32 at = sizeof(struct gate_mark_rec) + 4;
	struct gate_stats *st = my_stats();
	struct gate_mark_rec *mark;
	struct record_buf *buf;
	__u32 zero = 0, size;
	long len = 0;

	if (frozen(st) || !cpu_recorded())
		return;
	buf = bpf_map_lookup_elem(&gate_scratch, &zero);
	if (!buf)
		return;
	mark = (struct gate_mark_rec *)buf->data;
	__builtin_memset(mark, 0, sizeof(*mark));
	mark->common_type = type;
	mark->common_pid = env->tid;
	mark->trigger = i + 1;
	mark->nr = env->nr;
	mark->ret = env->ret;
	__builtin_memcpy(mark->args, env->args, sizeof(mark->args));
	if (str) {
		__u32 k = (str - 1) & 7;

		if (k < EXPR_NR_ARGS)
			len = bpf_probe_read_user_str(&buf->data[at], GATE_STR_MAX, (const void *)env->args[k]);
	}
	if (len <= 0) {
		buf->data[at] = 0; /* none or unreadable: an empty string */
		len = 1;
	} else if (len == GATE_STR_MAX) {
		buf->data[at + GATE_STR_MAX - 4] = '.';
		buf->data[at + GATE_STR_MAX - 3] = '.';
		buf->data[at + GATE_STR_MAX - 2] = '.';
	}
	len &= GATE_STR_MAX * 2 - 1;
	*(__u32 *)&buf->data[sizeof(*mark)] = ((__u32)len << 16) | at;
	size = at + (__u32)len;
	barrier_var(size);
	size &= 1023;
	buf->hdr.ip = ip;
	out_hdr(&buf->hdr);
	if (bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, buf, sizeof(buf->hdr) + size))
		st->output_lost++;
	else
		st->recorded++;
}
_Static_assert(sizeof(struct gate_mark_rec) + 4 + GATE_STR_MAX <= 1024, "the mask of emit_mark_str()");
#endif
