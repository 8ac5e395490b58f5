// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate: decides in the kernel, per thread, whether a tracepoint hit is
 * inside a trigger window, and if so hands the raw record to userspace through
 * the per-CPU bpf-output perf event. See include/auxtrig/gate_abi.h.
 *
 *           open_mask hit (and --where holds)
 *   closed  --------------------------------->  open   -- RECORD hits are
 *     ^                                          |        recorded while open
 *     +------------- close_mask hit ------------+
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include <bpf/usdt.bpf.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/gate_maps.bpf.h"
#include "auxtrig/expr_abi.h"
#include "expr.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* libbpf 1.1 (Debian 12) stops at PT_REGS_PARM5; later versions define the sixth. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) ((x)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x) (((const struct user_pt_regs *)(x))->regs[5])
#endif
#endif

const volatile __u32 filter_targets = 1;	/* 0: every process (-a) */
const volatile __u32 target_threads = 0;	/* 1: gate_targets holds thread ids (-t) */
const volatile __u32 filter_cpus = 0;		/* 1: record only on CPUs in gate_cpus (-C) */
const volatile __u32 no_windows = 0;		/* no --window: every hit is inside */
const volatile __u32 have_where = 0;		/* --where given: gate_where holds it */
const volatile __u32 uprobe_enter_type = 0;	/* record types of auxtrig:uprobe_enter/exit */
const volatile __u32 uprobe_exit_type = 0;
/* Snapshot triggers exist: threads whose records a freeze held back are noted (gate_held). */
const volatile __u32 have_snap_triggers = 0;
__u64 snap_points;	/* snapshot points emitted (GATE_OUT_POINT numbers) */

/*
 * Per thread, the syscall of its last record a snapshot's freeze held back
 * since its last recorded syscall entry: a snapshot trigger at the end of a
 * call of that syscall would find the call incomplete.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __s32);
} gate_held SEC(".maps");

/* Per uprobe window: the cast that types its function's return value (GATE_TP_RET_*), 0 none. */
const volatile __u8 uprobe_window_ret[GATE_MAX_WINDOWS] = {};
const volatile __u32 signal_edges = 0;		/* 1: window edges to gate_ctl (userspace-gated AUX) */
const volatile __u32 signal_threads = 0;	/* 1: the targets' new threads to gate_ctl (GATE_MSG_THREAD) */
const volatile __u32 resume_type = 0;		/* record types of auxtrig:resume/pause */
const volatile __u32 pause_type = 0;
const volatile __u32 hold_windows = 0;		/* --min/--max-duration: windows are timed */
const volatile __u64 min_duration_ns = 0;
const volatile __u64 max_duration_ns = 0;	/* 0: no maximum */
const volatile __u32 env_fields = ~0u;		/* builtins conditions read: bit EXPR_F_x (fill_env) */
const volatile __u32 need_elapsed = 0;		/* a condition reads $elapsed: fill_env() times it */
const volatile __u32 entry_args = 0;		/* at syscall exits fill_env() gives the entry's arguments */
const volatile __u32 need_duration = 0;		/* a syscall exit's condition reads $duration */
const volatile __u32 call_frames = 0;		/* a uretprobe point reads its call's entry (gate_calls) */
const volatile __u32 mark_strs = 0;		/* marks carry a string (mark(str(argN))): gate_mark_rec */

const volatile struct gate_trigger gate_triggers[GATE_MAX_TRIGGERS] = {};

struct gate_stats stats[GATE_STATS_SLOTS];
/*
 * once/every/after: each trigger's matches, global as the policies are; an
 * atomic add only while it can still change the outcome (see policy_fires()).
 */
__u64 trig_policy[GATE_MAX_TRIGGERS];
struct gate_edge_stats edge_stats;
__u64 trig_tat[GATE_MAX_TRIGGERS];	/* limit:N/s: each trigger's theoretical arrival time (GCRA) */
__u64 window_seq;			/* the last window id handed out */
__u64 thread_msgs_dropped;		/* GATE_MSG_THREAD lost: gate_ctl was full */

/* What the loader set (gate_abi.h, "who writes what"): read only here. */
static __always_inline struct gate_config *gconfig(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_config, &zero);
}

/* What BPF sets: a freeze, a pending one. */
static __always_inline struct gate_runtime *gruntime(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_runtime, &zero);
}

/* A stop, set by BPF only (gate_abi.h, "who writes what"). */
static __always_inline struct gate_stop *gstop(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_stop, &zero);
}

static __always_inline int armed(void)
{
	struct gate_config *gc = gconfig();

	return gc && gc->armed;
}

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
 * A thread's windows went from none open to some (GATE_ACT_EDGE_OPEN) or back
 * (GATE_ACT_EDGE_CLOSE): tell the recorder, which gates the AUX events from
 * userspace when the kernel cannot pause/resume them (gate_abi.h).
 */
static __always_inline void emit_edge(__u32 action, __u64 before, __u64 after)
{
	__u64 now = bpf_ktime_get_ns(), pid_tgid;
	struct gate_ctl_msg *msg;

	if (!signal_edges)
		return;
	msg = bpf_ringbuf_reserve(&gate_ctl, sizeof(*msg), 0);
	if (!msg) {
		__sync_fetch_and_add(&edge_stats.dropped, 1);
		return;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	__builtin_memset(msg, 0, sizeof(*msg));
	msg->type = GATE_MSG_EDGE;
	msg->size = sizeof(*msg);
	msg->trigger = GATE_EDGE_TRIGGER;
	msg->action = action;
	msg->pid = pid_tgid >> 32;
	msg->tid = (__u32)pid_tgid;
	msg->time_ns = now;
	msg->args[0] = before;
	msg->args[1] = after;
	bpf_ringbuf_submit(msg, BPF_RB_FORCE_WAKEUP);
	__sync_fetch_and_add(&edge_stats.sent, 1);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_TPS);
	__type(key, __u32);
	__type(value, struct gate_tp);
} gate_tps SEC(".maps");

/*
 * Twice the largest record, so that "size & (GATE_SCRATCH - 1)" is a bound the
 * verifier can see while never truncating a size already checked against
 * GATE_RECORD_MAX.
 */
#define GATE_SCRATCH (2 * GATE_RECORD_MAX)

/* What the gate emits: the sample IP perf would report, then the record. */
/* The compiled --where condition, checked when a window would open. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_prog);
} gate_where SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_env);
} gate_env SEC(".maps");

/*
 * The conditions' state (once/after/every counters, $count per thread) is in
 * expr_state and expr_counts (bpf/expr.bpf.h), one slot per condition.
 */
#define GATE_SLOT_WHERE		0
#define GATE_SLOT_TRIGGER(i)	(1 + (i))
_Static_assert(GATE_SLOT_TRIGGER(GATE_MAX_TRIGGERS - 1) < EXPR_MAX_SLOTS, "a state slot per condition");

/*
 * $elapsed at a syscall's exit with no window open: when this thread entered
 * it. Stamped at the entry tracepoints flagged GATE_TP_STAMP_ENTRY (those of
 * exit points whose conditions read $elapsed); LRU, so it never fills.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, GATE_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct gate_sys_entry);
} gate_sys_entries SEC(".maps");

/* The calls in progress at uretprobe points that read their entry (struct gate_calls). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, GATE_MAX_CALL_THREADS);
	__type(key, struct gate_call_key);
	__type(value, struct gate_calls);
} gate_calls SEC(".maps");

/* An empty struct gate_calls, to create a thread's entry from (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_calls);
} gate_calls_empty SEC(".maps");

/* The conditions of the triggers (--on ... if EXPR). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GATE_MAX_TRIGGERS);
	__type(key, __u32);
	__type(value, struct expr_prog);
} gate_trig_progs SEC(".maps");

/* The triggers' counters, per CPU, and the hand-over to gate_fire. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_trig_pcpu);
} gate_trig_pcpu SEC(".maps");

/* gate_fire, for the points' own programs to tail-call (slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gate_fire_prog SEC(".maps");

/* The shared probe programs, for the probe points' own programs to tail-call (GATE_PROBE_*). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, GATE_PROBE_PROGS);
	__type(key, __u32);
	__type(value, __u32);
} gate_probe_progs SEC(".maps");

/* The usdt points' own programs, by point number n (see GATE_PROBE_USDT). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, GATE_MAX_POINTS);
	__type(key, __u32);
	__type(value, __u32);
} gate_usdt_conds SEC(".maps");

struct record_buf {
	struct gate_out_hdr hdr;
	__u8 data[GATE_SCRATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record_buf);
} gate_scratch SEC(".maps");

static __always_inline struct gate_stats *my_stats(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= GATE_STATS_SLOTS)
		cpu = GATE_STATS_SLOTS - 1;
	/*
	 * Linux 6.1's verifier loses the clamp's bound on the way to a 64-bit
	 * offset ("R1 unbounded memory access" at st->unknown_tp++); the mask
	 * (a no-op after the clamp, which barrier_var keeps clang from seeing)
	 * bounds it for every verifier.
	 */
	barrier_var(cpu);
	return &stats[cpu & (GATE_STATS_SLOTS - 1)];
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

/* A thread's window (its first open window) starts now. */
static __always_inline void window_start(struct gate_thread *th)
{
	th->opened_ns = bpf_ktime_get_ns();
	th->id = hold_windows ? __sync_add_and_fetch(&window_seq, 1) : 0;
}

/*
 * A thread's last open window closed: with --min/--max-duration, tell the
 * recorder whether the window's held records are written. Not subject to -C
 * or a freeze: without its verdict a window's records would wait forever.
 */
static __always_inline void window_end(void *ctx, const struct gate_thread *th, struct gate_stats *st)
{
	struct {
		struct gate_out_hdr hdr;
		struct gate_verdict_rec rec;
	} v = {};
	struct gate_ctl_msg *m;
	__u64 d;

	if (!hold_windows || !th || !th->id)
		return;
	d = bpf_ktime_get_ns() - th->opened_ns;
	v.hdr.window = th->id;
	v.hdr.flags = GATE_OUT_VERDICT;
	if (d >= min_duration_ns && (!max_duration_ns || d <= max_duration_ns))
		v.hdr.flags |= GATE_OUT_KEEP;
	v.rec.common_pid = (__u32)bpf_get_current_pid_tgid();
	v.rec.duration_ns = d;
	if (!bpf_perf_event_output(ctx, &gate_events, BPF_F_CURRENT_CPU, &v, sizeof(v)))
		return;
	/* The data ring is full: the verdict goes on the control ring, so the window does not wait forever. */
	m = bpf_ringbuf_reserve(&gate_ctl, sizeof(*m), 0);
	if (!m) {
		st->output_lost++;
		return;
	}
	__builtin_memset(m, 0, sizeof(*m));
	m->type = GATE_MSG_VERDICT;
	m->size = sizeof(*m);
	m->action = GATE_ACT_VERDICT;
	m->tid = v.rec.common_pid;
	m->time_ns = bpf_ktime_get_ns();
	m->ret = !!(v.hdr.flags & GATE_OUT_KEEP);
	m->args[0] = th->id;
	m->args[1] = d;
	bpf_ringbuf_submit(m, BPF_RB_FORCE_WAKEUP);
}

static __always_inline int is_target(__u64 pid_tgid)
{
	__u32 key = target_threads ? (__u32)pid_tgid : pid_tgid >> 32;

	return !filter_targets || bpf_map_lookup_elem(&gate_targets, &key);
}

/* -C: CPUs whose events are recorded (windows still open and close anywhere). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GATE_STATS_SLOTS);
	__type(key, __u32);
	__type(value, __u8);
} gate_cpus SEC(".maps");

static __always_inline int cpu_recorded(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u8 *on;

	if (!filter_cpus)
		return 1;
	on = bpf_map_lookup_elem(&gate_cpus, &cpu);
	return on && *on;
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
 * A syscall entry's user strings (gate_tp.str_off, gate_abi.h): one u32
 * __data_loc per string from the record's fixed @size on, the strings after
 * them, each cut at GATE_STR_MAX with "..." at its end. Returns the record's
 * new end (@end when there are none).
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
		__u32 off = tp->str_off[i], loc;
		const char *ptr;
		long len;

		if (!off)
			break;
		if (off + 8 > size)
			break;
		barrier_var(off);
		off &= GATE_STR_FIXED_MAX - 1;
		ptr = *(const char **)&buf->data[off];
		/* below 2048 (the assertion after this function): the mask shows the verifier so */
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
		loc = size + 4 * i;
		barrier_var(loc);
		loc &= 255;
		*(__u32 *)&buf->data[loc] = ((__u32)len << 16) | at;
		at += (__u32)len & (GATE_STR_MAX * 2 - 1);
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
	       GATE_STR_FIXED_MAX + 4 * GATE_MAX_STRS <= 256, "the masks of append_user_strings()");

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

static __always_inline void stamp_syscall_entry(void *ctx, const struct gate_tp *tp, __u32 tid)
{
	struct gate_sys_entry e = { .ns = bpf_ktime_get_ns() };
	int nr = -1;

	bpf_probe_read_kernel(&nr, sizeof(nr), ctx + 8);
	e.nr = nr;
	if (entry_args) {
		/* only the arguments the record has (fill_env() says why) */
		__u32 sz = tp->size > 16 ? tp->size - 16 : 0;

		if (sz > sizeof(e.args))
			sz = sizeof(e.args);
		if (sz)
			bpf_probe_read_kernel(e.args, sz, ctx + 16);
	}
	bpf_map_update_elem(&gate_sys_entries, &tid, &e, BPF_ANY);
}

/*
 * $elapsed: since the thread's open windows opened (gate_thread.opened_ns: with
 * nested windows, the outermost), else, at a syscall exit, since this thread
 * entered that syscall; unset (the condition is false) when neither is known.
 */
static __always_inline void fill_elapsed(struct expr_env *env, const struct gate_tp *tp, int nr)
{
	__u32 tid = env->tid;
	struct gate_thread *th = bpf_map_lookup_elem(&gate_threads, &tid);
	struct gate_sys_entry *e;
	__u64 now = bpf_ktime_get_ns(), start = 0;

	if (th && th->open) {
		start = th->opened_ns;
	} else if (tp->flags & GATE_TP_SYSCALL_EXIT) {
		e = bpf_map_lookup_elem(&gate_sys_entries, &tid);
		if (e && e->nr == nr)
			start = e->ns;
	}
	if (!start || start > now)
		return;
	env->vars[EXPR_VAR_ELAPSED] = now - start;
	env->vars_set |= 1u << EXPR_VAR_ELAPSED;
}

/*
 * The environment conditions see: the current thread and, at a syscall's
 * entry, its number and arguments (struct syscall_trace_enter: int nr at 8,
 * 4 bytes of padding, unsigned long args[] from 16, as many as the syscall
 * has), at its exit, number and return value (struct syscall_trace_exit:
 * int nr at 8, long ret at 16); $elapsed when a condition reads it. At
 * raw_syscalls:sys_enter/sys_exit the number is a long at 8: its low 4 bytes
 * (little-endian) are the int read here.
 */
static __always_inline struct expr_env *fill_env(void *ctx, const struct gate_tp *tp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct expr_env *env;
	__u32 zero = 0;
	int nr = -1;

	env = bpf_map_lookup_elem(&gate_env, &zero);
	if (!env)
		return NULL;
	__builtin_memset(env, 0, sizeof(*env));
	env->pid = pid_tgid >> 32;
	env->tid = (__u32)pid_tgid;
	env->cpu = bpf_get_smp_processor_id();
	/* The costlier builtins only if a condition reads them. */
	if (env_fields & (1u << EXPR_F_PPID))
		env->ppid = BPF_CORE_READ(task, real_parent, tgid);
	if (env_fields & ((1u << EXPR_F_UID) | (1u << EXPR_F_GID))) {
		__u64 uid_gid = bpf_get_current_uid_gid();

		env->uid = (__u32)uid_gid;
		env->gid = uid_gid >> 32;
	}
	if (env_fields & (1u << EXPR_F_CGROUP))
		env->cgroup = bpf_get_current_cgroup_id();
	if (env_fields & (1u << EXPR_F_COUNT)) /* comm */
		bpf_get_current_comm(env->comm, sizeof(env->comm));
	env->rec = (__u64)ctx;
	/*
	 * The readable bytes: the fixed fields, and with __data_loc fields the
	 * strings after them, which lie within the perf trace buffer.
	 */
	env->rec_size = tp->nr_dyn ? GATE_RECORD_MAX : tp->size;
	if (tp->flags & (GATE_TP_SYSCALL_ENTER | GATE_TP_SYSCALL_EXIT))
		bpf_probe_read_kernel(&nr, sizeof(nr), ctx + 8);
	if (tp->flags & GATE_TP_SYSCALL_ENTER) {
		/*
		 * Only the arguments the record has: sys_enter_NAME carries
		 * NAME's own count (openat 4, close 1); what lies after the
		 * record is not ours (on some kernels, the stack the record was
		 * built on), so arguments beyond it stay 0.
		 */
		__u32 sz = tp->size > 16 ? tp->size - 16 : 0;

		if (sz > sizeof(env->args))
			sz = sizeof(env->args);
		if (sz)
			bpf_probe_read_kernel(env->args, sz, ctx + 16);
	}
	if (tp->flags & GATE_TP_SYSCALL_EXIT) {
		bpf_probe_read_kernel(&env->ret, sizeof(env->ret), ctx + 16);
		/* the arguments this thread entered the syscall with, if its entry was stamped; its time */
		if (entry_args || need_duration) {
			struct gate_sys_entry *e = bpf_map_lookup_elem(&gate_sys_entries, &env->tid);
			__u64 now = bpf_ktime_get_ns();

			if (e && e->nr == nr && entry_args)
				__builtin_memcpy(env->args, e->args, sizeof(env->args));
			if (e && e->nr == nr && need_duration && e->ns && e->ns <= now) {
				env->vars[EXPR_VAR_DURATION] = now - e->ns;
				env->vars_set |= 1u << EXPR_VAR_DURATION;
			}
		}
	}
	env->nr = nr;
	if (need_elapsed)
		fill_elapsed(env, tp, nr);
	return env;
}

/* Does --where hold for this window start? */
static __always_inline int where_holds(void *ctx, const struct gate_tp *tp, __u32 key)
{
	struct gate_trig_pcpu *pc;
	struct expr_prog *prog;
	struct expr_env *env;
	__u32 zero = 0;

	if (!have_where)
		return 1;
	/* compiled: the program before this one at this tracepoint decided it for this hit */
	pc = bpf_map_lookup_elem(&gate_trig_pcpu, &zero);
	if (pc && pc->where_tp == key) {
		pc->where_tp = 0;
		return pc->where_verdict;
	}
	prog = bpf_map_lookup_elem(&gate_where, &zero);
	env = fill_env(ctx, tp);
	if (!prog || !env)
		return 0;
	return expr_eval(prog, env, GATE_SLOT_WHERE);
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

/*
 * limit:N/s as a token bucket of N tokens refilled at N per second, kept as
 * one theoretical arrival time per trigger (GCRA) so that every CPU updates
 * it with one compare-and-swap: a match is let through if the bucket's
 * arrival time is at most (N - 1) intervals ahead of now.
 */
static __always_inline int rate_allows(__u32 i, __u32 limit)
{
	__u64 now = bpf_ktime_get_ns(), step, tau, tat, next;

	if (!limit || i >= GATE_MAX_TRIGGERS)
		return 1;
	/*
	 * clang reloads @i from the stack, where the verifier no longer knows
	 * the check above: bound the value the index is computed from.
	 */
	barrier_var(i);
	i &= GATE_MAX_TRIGGERS - 1;
	step = 1000000000ULL / limit;
	tau = step * (limit - 1);
	for (int k = 0; k < 4; k++) {
		tat = *(volatile __u64 *)&trig_tat[i];
		next = tat > now ? tat : now;
		if (next - now > tau)
			return 0;
		if (__sync_val_compare_and_swap(&trig_tat[i], tat, next + step) == tat)
			return 1;
	}
	return 0; /* four CPUs raced us for the same token: count it as held back */
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

static __always_inline int windows_open(__u32 tid, struct gate_thread *th, __u64 open, __u64 opened,
					struct gate_stats *st);
static __always_inline __u64 windows_close(void *ctx, __u32 tid, __u64 open, __u64 mask, struct gate_stats *st);

/*
 * resume / pause: open or close the thread's recording window
 * (GATE_USER_WINDOW, the one auxtrig_resume()/auxtrig_pause() use). Each real
 * edge leaves an auxtrig:resume / auxtrig:pause record inside the window.
 * Return: 1 if the thread had no window open before this resume.
 */
static __always_inline int user_window(void *ctx, __u64 ip, const struct expr_env *env, __u32 i, __u32 action)
{
	__u64 bit = 1ULL << GATE_USER_WINDOW;
	struct gate_stats *st = my_stats();
	struct gate_thread *th;
	__u32 tid = env->tid;
	__u64 open;

	th = bpf_map_lookup_elem(&gate_threads, &tid);
	open = th ? th->open : 0;
	if (action == GATE_ACT_RESUME) {
		if (open & bit)
			return 0;
		if (windows_open(tid, th, open, bit, st))
			return 0;
		emit_mark(ctx, ip, env, i, resume_type);
		return !open;
	}
	if (!(open & bit))
		return 0;
	emit_mark(ctx, ip, env, i, pause_type);
	windows_close(ctx, tid, open, bit, st);
	return 0;
}

/*
 * The rate policy of trigger @i after a match: once, every N, after N, on
 * the trigger's global count of matches. The count is added to atomically,
 * but once "once" has fired or "after N" has been reached a plain read
 * decides: the per-point programs (gate_front.c) emit the same steps.
 */
static __always_inline int policy_fires(__u32 i, const volatile struct gate_trigger *t)
{
	__u64 *c = &trig_policy[i & (GATE_MAX_TRIGGERS - 1)], m;

	switch (t->policy) {
	case GATE_POLICY_ONCE:
		if (*(volatile __u64 *)c)
			return 0;
		return __sync_add_and_fetch(c, 1) == 1;
	case GATE_POLICY_EVERY:
		m = __sync_add_and_fetch(c, 1);
		return t->n && m % t->n == 0;
	case GATE_POLICY_AFTER:
		if (*(volatile __u64 *)c >= t->n)
			return 1;
		return __sync_add_and_fetch(c, 1) >= t->n;
	}
	return 1;
}

/*
 * Trigger @i fires (condition and policy passed): the rate limit, then the
 * action. A snapshot trigger freezes the flight recorder at once, here in the
 * kernel, so the snapshot ends exactly at the record that fired it; the
 * recorder unfreezes it once the snapshot is taken.
 * Return: 1 if a resume opened the thread's first window.
 */
static __always_inline int trigger_fire(void *ctx, __u32 i, struct expr_env *env, __u64 ip,
					struct gate_trigger_stats *ts)
{
	const volatile struct gate_trigger *t = &gate_triggers[i & (GATE_MAX_TRIGGERS - 1)];
	struct gate_ctl_msg *msg;
	__u32 point = 0;

	if (t->limit && !rate_allows(i, t->limit)) {
		ts->suppressed++;
		return 0;
	}
	if (t->action == GATE_ACT_SNAPSHOT) {
		struct gate_runtime *rt = gruntime();
		__u32 tid = env->tid;

		/*
		 * Only the trigger that freezes asks for a snapshot. One that
		 * fires while another snapshot is being taken, or whose call had
		 * records held back by one (gate_held: a call of the same
		 * syscall since the thread's last recorded entry), would get a
		 * snapshot that lacks its own call (and holds records of after
		 * it): it asks for none and counts as suppressed.
		 * snapshot+T: the first record past the deadline freezes (a
		 * pending one stays).
		 */
		__s32 *held = have_snap_triggers ? bpf_map_lookup_elem(&gate_held, &tid) : NULL;

		if (held && *held == env->nr) {
			bpf_map_delete_elem(&gate_held, &tid);
			ts->suppressed++;
			return 0;
		}
		if (!rt || rt->frozen ||
		    (!t->delay_ns && __sync_val_compare_and_swap(&rt->frozen, 0, 1))) {
			ts->suppressed++;
			return 0;
		}
		if (t->delay_ns && !rt->freeze_at)
			rt->freeze_at = bpf_ktime_get_ns() + t->delay_ns;
		if (!t->delay_ns)
			point = emit_point(ctx, ip);
	}
	ts->fired++;
	if (t->action == GATE_ACT_MARK) {
		struct gate_config *gc = gconfig();

		if (mark_strs)
			emit_mark_str(ctx, ip, env, i, gc ? gc->mark_type : 0, t->mark_str);
		else
			emit_mark(ctx, ip, env, i, gc ? gc->mark_type : 0);
		return 0; /* in the file, not on the control ring */
	}
	if (t->action == GATE_ACT_RESUME || t->action == GATE_ACT_PAUSE)
		return user_window(ctx, ip, env, i, t->action); /* in the kernel only */
	if (t->action == GATE_ACT_STOP) {
		struct gate_config *gc = gconfig();
		struct gate_stop *sp = gstop();
		__u64 at;

		/*
		 * Now: nothing more from any CPU (frozen()), then the stopping
		 * event's auxtrig:stop record. In that order: the record's time
		 * is later than the moment the stop was in force, which is what
		 * lets the recorder cut, at that record, whatever another CPU
		 * emitted at the same instant (gate_stop's comment). stop+T:
		 * nothing past the deadline; the recorder writes the record
		 * then. The earliest stop wins.
		 */
		at = bpf_ktime_get_ns() + t->delay_ns;
		if (sp && (!sp->at || at < sp->at)) {
			sp->trigger = i + 1;
			sp->at = at;
			if (!t->delay_ns && gc && gc->stop_type && !__sync_val_compare_and_swap(&sp->marked, 0, 1))
				emit_mark_rec(ctx, ip, env, i, gc->stop_type, true);
		}
	}
	msg = bpf_ringbuf_reserve(&gate_ctl, sizeof(*msg), 0);
	if (!msg) {
		ts->dropped++;
		return 0;
	}
	msg->type = GATE_MSG_ACTION;
	msg->size = sizeof(*msg);
	msg->point = point;
	msg->trigger = i;
	msg->action = t->action;
	msg->pid = env->pid;
	msg->tid = env->tid;
	msg->time_ns = bpf_ktime_get_ns();
	msg->ret = env->ret;
	__builtin_memcpy(msg->args, env->args, sizeof(msg->args));
	msg->delay_ns = t->delay_ns;
	bpf_ringbuf_submit(msg, BPF_RB_FORCE_WAKEUP);
	return 0;
}

static __always_inline struct gate_trig_pcpu *trig_pcpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_trig_pcpu, &zero);
}

/*
 * The triggers in @trig_mask (bit i = trigger i), at a point whose values the
 * caller has put in @env (tracepoint, uprobe, usdt, kprobe: each fills it its
 * own way): condition, then rate policy, then the action (trigger_fire()).
 * @ip is the sample IP of marks and of resume/pause edges. The points that
 * have their own program (gate_front.c) run the same steps with the
 * condition compiled, and gate_fire for the actions.
 * Return: 1 if a resume opened the thread's first window (the caller then
 * records this hit too, as a window's start is recorded).
 */
static __always_inline int run_triggers(void *ctx, __u32 trig_mask, struct expr_env *env, __u64 ip,
					__u32 decided, __u32 verdict)
{
	struct gate_trig_pcpu *pc = trig_pcpu();
	int resumed = 0;

	if (!pc)
		return 0;
	for (__u32 n = 0; n < GATE_MAX_TRIGGERS; n++) {
		const volatile struct gate_trigger *t;
		struct gate_trigger_stats *ts;
		struct expr_prog *prog;
		__u32 i = n;

		if (!(trig_mask & (1u << n)))
			continue;
		/* A bound the verifier keeps: clang may index with another copy of n. */
		barrier_var(i);
		i &= GATE_MAX_TRIGGERS - 1;
		t = &gate_triggers[i];
		ts = &pc->stats[i];
		ts->evaluated++;
		if (t->has_cond && (decided & (1u << i))) {
			/* compiled: the point's own program decided it for this hit */
			if (!(verdict & (1u << i)))
				continue;
		} else if (t->has_cond) {
			prog = bpf_map_lookup_elem(&gate_trig_progs, &i);
			if (!prog || !expr_eval(prog, env, GATE_SLOT_TRIGGER(i)))
				continue;
		}
		ts->matched++;
		if (!policy_fires(i, t)) {
			ts->suppressed++;
			continue;
		}
		resumed |= trigger_fire(ctx, i, env, ip, ts);
	}
	return resumed;
}

/*
 * syscall:* windows open at raw_syscalls:sys_enter and close at
 * raw_syscalls:sys_exit. Every syscalls:sys_enter_X/sys_exit_X tracepoint
 * hangs off those same two kernel hooks, and the kernel runs a hook's users
 * in the order they registered, which another tool holding syscall events
 * can change. So a recorded sys_enter_X opens syscall:* windows too (its
 * user fills GATE_TP_IN_ANY and the open bits), and raw_syscalls:sys_exit
 * leaves a note of what it closed for a sys_exit_X of the same call that runs
 * after it: either order records the same.
 */
struct any_memo {
	__u64 closed;	/* syscall:* windows the raw exit closed */
	__s32 nr;	/* in this syscall */
	__u32 __pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* used only with syscall:* windows */
	__type(key, __u32);
	__type(value, struct any_memo);
} gate_any_memo SEC(".maps");

static __always_inline int syscall_nr(void *ctx)
{
	int nr = -1;

	bpf_probe_read_kernel(&nr, sizeof(nr), ctx + 8);
	return nr;
}

/* At raw_syscalls:sys_enter/sys_exit, before the windows change: the note. */
static __always_inline void any_note(void *ctx, __u32 tid, const struct gate_tp *tp, __u64 open)
{
	struct any_memo m = {};

	if (!(tp->flags & GATE_TP_SYSCALL_ANY))
		return;
	if (tp->flags & GATE_TP_SYSCALL_ENTER) {
		bpf_map_delete_elem(&gate_any_memo, &tid);
	} else if (tp->close_mask & open) {
		m.closed = tp->close_mask & open;
		m.nr = syscall_nr(ctx);
		bpf_map_update_elem(&gate_any_memo, &tid, &m, BPF_ANY);
	}
}

/*
 * Is this hit inside a syscall:* window although the window state says no?
 * The raw enter after a sys_enter_X that opened its window (it is the
 * window's real start), or a sys_exit_X after the raw exit that closed it.
 */
static __always_inline int any_inside(void *ctx, __u32 tid, const struct gate_tp *tp, __u64 open_before, __u64 open)
{
	struct any_memo *m;

	if ((tp->flags & GATE_TP_SYSCALL_ANY) && (tp->flags & GATE_TP_SYSCALL_ENTER))
		return (tp->open_mask & open_before) != 0;
	if (!(tp->flags & GATE_TP_IN_ANY) || !(tp->flags & GATE_TP_SYSCALL_EXIT) || open)
		return 0;
	m = bpf_map_lookup_elem(&gate_any_memo, &tid);
	return m && m->closed && m->nr == syscall_nr(ctx);
}

/* The triggers at a tracepoint: its record and, for syscalls, number, args, ret. */
static __always_inline int tp_triggers(void *ctx, const struct gate_tp *tp)
{
	struct expr_env *env = fill_env(ctx, tp);
	struct pt_regs *regs = 0;

	if (!env)
		return 0;
	/* The IP of marks and of resume/pause edges: the user's, at a syscall tracepoint. */
	if (tp->flags & GATE_TP_USER_REGS)
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return run_triggers(ctx, tp->trig_mask, env, regs ? PT_REGS_IP_CORE(regs) : 0, 0, 0);
}

/*
 * Open windows @opened on thread @tid, whose state is @th (NULL: none yet)
 * with @open already open: the thread's first window starts its timing and
 * sends its edge. Return: 0, or -1 if the thread table is full.
 */
static __always_inline int windows_open(__u32 tid, struct gate_thread *th, __u64 open, __u64 opened,
					struct gate_stats *st)
{
	struct gate_thread fresh = {};

	if (!th) {
		fresh.open = opened;
		window_start(&fresh);
		if (bpf_map_update_elem(&gate_threads, &tid, &fresh, BPF_NOEXIST)) {
			st->threads_full++;
			return -1;
		}
	} else {
		if (!open)
			window_start(th);
		th->open = open | opened;
	}
	st->windows_opened += __builtin_popcountll(opened);
	if (!open)
		emit_edge(GATE_ACT_EDGE_OPEN, 0, opened);
	return 0;
}

/*
 * Close the windows of @mask that are among @open on thread @tid: the last one
 * to close ends the thread's timing, sends its edge and drops its state.
 * Return: the windows still open.
 */
static __always_inline __u64 windows_close(void *ctx, __u32 tid, __u64 open, __u64 mask, struct gate_stats *st)
{
	struct gate_thread *th;

	st->windows_closed += __builtin_popcountll(mask & open);
	if (!(open & ~mask))
		emit_edge(GATE_ACT_EDGE_CLOSE, open, 0);
	open &= ~mask;
	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (!open) {
		window_end(ctx, th, st);
		bpf_map_delete_elem(&gate_threads, &tid);
	} else if (th) {
		th->open = open;
	}
	return open;
}

SEC("tracepoint")
int gate_tracepoint(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, key;
	struct gate_thread *th;
	struct gate_stats *st;
	struct gate_tp *tp;
	__u64 open = 0, opened = 0, open_before;
	int emitted;

	if (!armed() || !is_target(pid_tgid))
		return 1;
	st = my_stats();
	key = bpf_get_attach_cookie(ctx); /* the tracepoint's id, set at attach */
	tp = bpf_map_lookup_elem(&gate_tps, &key);
	if (!tp) {
		st->unknown_tp++;
		return 1;
	}
	if (tp->flags & GATE_TP_STAMP_ENTRY)
		stamp_syscall_entry(ctx, tp, tid);

	if (no_windows) {
		if (tp->flags & GATE_TP_RECORD)
			emit(ctx, key, tp, st);
		if (tp->trig_mask)
			tp_triggers(ctx, tp);
		return 1;
	}

	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (th)
		open = th->open;
	open_before = open;
	any_note(ctx, tid, tp, open);

	if (tp->open_mask) {
		opened = tp->open_mask & ~open;
		if (opened && !where_holds(ctx, tp, key)) {
			/* A sys_enter_X's refusal is counted at its raw_syscalls:sys_enter. */
			if (!(tp->flags & GATE_TP_IN_ANY))
				st->windows_filtered += __builtin_popcountll(opened);
			opened = 0;
		}
		if (opened) {
			if (windows_open(tid, th, open, opened, st))
				return 1;
			open |= opened;
		}
	}

	emitted = opened || (tp->close_mask & open) || ((tp->flags & GATE_TP_RECORD) && open) ||
		  any_inside(ctx, tid, tp, open_before, open);
	if (emitted)
		emit(ctx, key, tp, st);

	if (tp->close_mask & open)
		open = windows_close(ctx, tid, open, tp->close_mask, st);
	/* A resume that opened the thread's window: its hit starts the window. */
	if (tp->trig_mask && tp_triggers(ctx, tp) && !emitted && (tp->flags & GATE_TP_RECORD))
		emit(ctx, key, tp, st);
	return 1;
}

/*
 * The hand-over from a point's own program (gate_front.c) to gate_fire /
 * gate_fire_entry / gate_fire_return, which it tail-calls: the triggers it
 * let through at this hit (gate_trig_pcpu.fire_mask, taken and cleared) and
 * the point's struct gate_tp (the attach cookie is its key).
 * Return: the point, or NULL when nothing is to fire.
 */
static __always_inline struct gate_tp *fire_take(void *ctx, struct gate_trig_pcpu **pcp, __u32 *mask)
{
	struct gate_trig_pcpu *pc = trig_pcpu();
	__u32 key;

	if (!pc)
		return NULL;
	*pcp = pc;
	*mask = pc->fire_mask;
	pc->fire_mask = 0;
	key = bpf_get_attach_cookie(ctx);
	if (!*mask)
		return NULL;
	return bpf_map_lookup_elem(&gate_tps, &key);
}

/* trigger_fire() for each trigger of @mask, in trigger order, with the hit's values in @env. */
static __always_inline void fire_each(void *ctx, struct gate_trig_pcpu *pc, __u32 mask, struct expr_env *env,
				      __u64 ip)
{
	for (__u32 n = 0; n < GATE_MAX_TRIGGERS; n++) {
		__u32 i = n;

		if (!(mask & (1u << n)))
			continue;
		barrier_var(i);
		i &= GATE_MAX_TRIGGERS - 1;
		trigger_fire(ctx, i, env, ip, &pc->stats[i]);
	}
}

/*
 * The actions of the triggers a tracepoint's own program let through at this
 * hit (fire_take()), tail-called by it: the values of the hit as
 * tp_triggers() fills them, then fire_each().
 */
SEC("tracepoint")
int gate_fire(void *ctx)
{
	struct gate_trig_pcpu *pc = NULL;
	struct pt_regs *regs = 0;
	struct expr_env *env;
	struct gate_tp *tp;
	__u32 mask = 0;

	tp = fire_take(ctx, &pc, &mask);
	if (!tp || !pc)
		return 1;
	env = fill_env(ctx, tp);
	if (!env)
		return 1;
	if (tp->flags & GATE_TP_USER_REGS)
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	fire_each(ctx, pc, mask, env, regs ? PT_REGS_IP_CORE(regs) : 0);
	return 1;
}

/*
 * Per-thread hardware trace: a target's new thread or process needs its own
 * AUX group, which only userspace can open (GATE_MSG_THREAD). The new task
 * is not held: it may run before its group is open, and the recorder counts
 * how long that took.
 */
static __always_inline void emit_thread(__u32 parent, __u32 child)
{
	struct gate_ctl_msg *msg;

	msg = bpf_ringbuf_reserve(&gate_ctl, sizeof(*msg), 0);
	if (!msg) {
		__sync_fetch_and_add(&thread_msgs_dropped, 1);
		return;
	}
	__builtin_memset(msg, 0, sizeof(*msg));
	msg->type = GATE_MSG_THREAD;
	msg->size = sizeof(*msg);
	msg->pid = parent;
	msg->tid = child;
	msg->time_ns = bpf_ktime_get_ns();
	msg->args[0] = (__u32)bpf_get_current_pid_tgid();
	bpf_ringbuf_submit(msg, BPF_RB_FORCE_WAKEUP);
}

/* Follow the target's children: a fork by a target process makes a target. */
SEC("tp/sched/sched_process_fork")
int gate_follow_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32, child = ctx->child_pid;
	__u8 one = 1;

	if (!filter_targets || target_threads || !bpf_map_lookup_elem(&gate_targets, &parent))
		return 1;
	bpf_map_update_elem(&gate_targets, &child, &one, BPF_ANY);
	if (signal_threads)
		emit_thread(parent, child);
	return 1;
}

/*
 * A command auxtrig started becomes a target when it execs, not when it is
 * forked: between fork and exec the child is still auxtrig's code (it waits on
 * a pipe to be started), and those calls are not the command's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u8);
} gate_exec_targets SEC(".maps");

SEC("tp/sched/sched_process_exec")
int gate_follow_exec(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct gate_trig_pcpu *pc = trig_pcpu();
	__u8 one = 1;

	/* what this CPU's point programs know of the thread: an exec can change its id and its target-ness */
	if (pc)
		pc->cur_state = GATE_CUR_UNKNOWN;
	if (!bpf_map_lookup_elem(&gate_exec_targets, &pid))
		return 1;
	bpf_map_update_elem(&gate_targets, &pid, &one, BPF_ANY);
	bpf_map_delete_elem(&gate_exec_targets, &pid);
	return 1;
}

/*
 * --where on hardware trace: the veto programs' state (the programs are
 * below, with the uprobe windows). Per thread and window: the calls in
 * progress, whether the outermost passed, and the last hit any member's
 * program decided, so that the other members' programs, which the kernel
 * runs for the same hit, give the same answer and count nothing again.
 */
struct aux_veto_key {
	__u32 tid;
	__u32 window;
};

struct aux_veto_call {
	__u32 depth;	/* calls of the window's function in progress */
	__u32 passed;	/* the outermost one passed --where: its return pauses */
	__u64 start;	/* the thread's start_time: an entry left by a dead thread whose id was reused is stale */
	__u64 hit_sp;	/* the last hit: its stack pointer, */
	__u32 hit_exit;	/* whether it was a return, */
	__u32 hit_ret;	/* and what was answered */
};

/* Not an LRU: evicting a live call would leave its window resumed with no pause. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct aux_veto_key);
	__type(value, struct aux_veto_call);
} gate_aux_veto SEC(".maps");

const volatile __u32 aux_veto = 0;	/* the veto programs are loaded: gate_aux_veto has entries */

/*
 * uprobe windows on the gate's path, --where: the calls in progress of a
 * thread's window function whose outermost call --where vetoed (key: thread
 * and window). While there are some, the window stays shut: a nested call is
 * not an outermost one, whatever --where says of it, and the vetoed call's
 * return closes nothing. (Calls of an open window count in gate_thread.depth;
 * a window is open or vetoed, never both.)
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_UPROBE_VETOED_MAX);
	__type(key, struct aux_veto_key);
	__type(value, __u32);
} gate_uprobe_vetoed SEC(".maps");

/*
 * Every context switch: the syscall points' own programs (gate_front.c) know
 * nothing yet of the thread about to run (gate_trig_pcpu.cur_state). A raw
 * tracepoint (no record is built), loaded and attached only when such a
 * program may be.
 */
SEC("?raw_tp/sched_switch")
int gate_sched_switch(void *ctx)
{
	struct gate_trig_pcpu *pc = trig_pcpu();

	if (pc)
		pc->cur_state = GATE_CUR_UNKNOWN;
	return 0;
}

/*
 * A thread that exits with a window open leaves no state behind; a timed
 * window ends here, with what it lasted until the exit.
 */
SEC("tp/sched/sched_process_exit")
int gate_thread_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct gate_thread *th = bpf_map_lookup_elem(&gate_threads, &tid);

	if (th && th->open) {
		emit_edge(GATE_ACT_EDGE_CLOSE, th->open, 0);
		if (hold_windows)
			window_end(ctx, th, my_stats());
	}
	bpf_map_delete_elem(&gate_threads, &tid);
	bpf_map_delete_elem(&gate_any_memo, &tid);
	bpf_map_delete_elem(&gate_sys_entries, &tid);
	bpf_map_delete_elem(&gate_held, &tid);
	/* Its calls in progress at uretprobe points that read their entry (gate_call_enter). */
	for (__u32 n = 0; call_frames && n < GATE_MAX_POINTS; n++) {
		struct gate_call_key k = { .tid = tid, .point = GATE_POINT_BASE + n };

		bpf_map_delete_elem(&gate_calls, &k);
	}
	/* Its $count values too, so a thread that reuses the id starts from 0. */
	for (__u32 slot = 0; slot < EXPR_MAX_SLOTS; slot++) {
		struct expr_count_key ck = { .tid = tid, .slot = slot };

		bpf_map_delete_elem(&expr_counts, &ck);
	}
	/* A thread that exits inside a vetoed call (gate_uprobe_enter). */
	for (__u32 w = 0; have_where && w < GATE_MAX_WINDOWS; w++) {
		struct aux_veto_key vk = { .tid = tid, .window = w };

		bpf_map_delete_elem(&gate_uprobe_vetoed, &vk);
	}
	/* The veto programs keep a thread's entry after its calls returned (see gate_aux_veto_exit). */
	for (__u32 w = 0; aux_veto && w < GATE_MAX_WINDOWS; w++) {
		struct aux_veto_key vk = { .tid = tid, .window = w };

		bpf_map_delete_elem(&gate_aux_veto, &vk);
	}
	return 1;
}

/* ---- uprobe windows -------------------------------------------------------- */

/* The environment at a probe: the thread's builtins, no record, no syscall number. */
static __always_inline struct expr_env *probe_env(void *ctx)
{
	struct gate_tp none = {};
	struct expr_env *env = fill_env(ctx, &none);

	if (env)
		env->rec = 0;
	return env;
}

static __always_inline struct expr_env *probe_env_args(struct pt_regs *ctx)
{
	struct expr_env *env = probe_env(ctx);

	if (!env)
		return NULL;
	env->args[0] = PT_REGS_PARM1(ctx);
	env->args[1] = PT_REGS_PARM2(ctx);
	env->args[2] = PT_REGS_PARM3(ctx);
	env->args[3] = PT_REGS_PARM4(ctx);
	env->args[4] = PT_REGS_PARM5(ctx);
	env->args[5] = PT_REGS_PARM6(ctx);
	return env;
}

/*
 * Which of this hit's conditions did the point's own program decide (compiled,
 * gate_front__build_probe())? Their bits (struct gate_trig_pcpu.probe_mask),
 * with the verdicts in @verdict, taken (probe_key); 0 none.
 */
static __always_inline __u32 probe_decided(__u32 key, __u32 *verdict)
{
	struct gate_trig_pcpu *pc = trig_pcpu();

	if (!pc || pc->probe_key != key)
		return 0;
	pc->probe_key = 0;
	*verdict = pc->probe_verdict;
	return pc->probe_mask;
}

/* Does --where hold at a function's entry? @slot: the condition's state slot. */
static __always_inline int call_where_holds(struct pt_regs *ctx, __u32 slot)
{
	struct expr_prog *prog;
	struct expr_env *env;
	__u32 zero = 0;

	if (!have_where)
		return 1;
	prog = bpf_map_lookup_elem(&gate_where, &zero);
	env = probe_env_args(ctx);
	if (!prog || !env)
		return 0;
	return expr_eval(prog, env, slot);
}

SEC("uprobe")
int gate_uprobe_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, w = bpf_get_attach_cookie(ctx);
	struct gate_uprobe_enter_rec rec = {};
	struct gate_thread *th;
	struct gate_stats *st;
	__u32 depth, verdict = 0, decided;

	if (!armed() || !is_target(pid_tgid))
		return 0;
	st = my_stats();
	barrier_var(w);
	w &= GATE_MAX_WINDOWS - 1;
	decided = probe_decided(GATE_UPROBE_WINDOW_KEY(w), &verdict);
	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (!th || !th->depth[w]) {
		struct aux_veto_key vk = { .tid = tid, .window = w };
		__u32 *vetoed = have_where ? bpf_map_lookup_elem(&gate_uprobe_vetoed, &vk) : NULL;
		__u32 one = 1;

		if (vetoed) {
			/* A call nested in a vetoed one: the window stays shut. */
			if (*vetoed < 0xffffffff)
				(*vetoed)++;
			return 0;
		}
		/* The outermost call: the window opens here, if --where holds (compiled: decided already). */
		if ((decided & GATE_VERDICT_WHERE) ? !(verdict & GATE_VERDICT_WHERE)
						  : !call_where_holds(ctx, GATE_SLOT_WHERE)) {
			st->windows_filtered++;
			/* Its nested calls and its return must know it (without room, they cannot). */
			if (bpf_map_update_elem(&gate_uprobe_vetoed, &vk, &one, BPF_NOEXIST))
				st->vetoed_untracked++;
			return 0;
		}
		if (windows_open(tid, th, th ? th->open : 0, 1ULL << w, st))
			return 0;
		if (!th)
			th = bpf_map_lookup_elem(&gate_threads, &tid);
		if (!th)
			return 0;
	}
	if (th->depth[w] < 255)
		th->depth[w]++;
	depth = th->depth[w];

	rec.common_type = uprobe_enter_type;
	rec.common_pid = tid;
	rec.window = w;
	rec.depth = depth;
	rec.args[0] = PT_REGS_PARM1(ctx);
	rec.args[1] = PT_REGS_PARM2(ctx);
	rec.args[2] = PT_REGS_PARM3(ctx);
	rec.args[3] = PT_REGS_PARM4(ctx);
	rec.args[4] = PT_REGS_PARM5(ctx);
	rec.args[5] = PT_REGS_PARM6(ctx);
	emit_own(ctx, PT_REGS_IP(ctx), &rec, sizeof(rec), st);
	return 0;
}

SEC("uretprobe")
int gate_uprobe_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, w = bpf_get_attach_cookie(ctx);
	struct gate_uprobe_exit_rec rec = {};
	struct gate_thread *th;
	struct gate_stats *st;

	if (!armed() || !is_target(pid_tgid))
		return 0;
	st = my_stats();
	barrier_var(w);
	w &= GATE_MAX_WINDOWS - 1;
	th = bpf_map_lookup_elem(&gate_threads, &tid);
	if (!th || !th->depth[w]) {
		struct aux_veto_key vk = { .tid = tid, .window = w };
		__u32 *vetoed = have_where ? bpf_map_lookup_elem(&gate_uprobe_vetoed, &vk) : NULL;

		/* The return of a vetoed call (the last one: the window may open again), */
		if (vetoed && --(*vetoed) == 0)
			bpf_map_delete_elem(&gate_uprobe_vetoed, &vk);
		return 0; /* or of a call that began before we were armed */
	}

	rec.common_type = uprobe_exit_type;
	rec.common_pid = tid;
	rec.window = w;
	rec.depth = th->depth[w];
	rec.ret = expr_cast(PT_REGS_RC(ctx), uprobe_window_ret[w]);
	emit_own(ctx, PT_REGS_IP(ctx), &rec, sizeof(rec), st);

	if (--th->depth[w] == 0)
		windows_close(ctx, tid, th->open, 1ULL << w, st);
	return 0;
}

/* ---- probe points: uprobe, uretprobe, usdt, kprobe, kretprobe, mem --------- */

/*
 * At a uretprobe point that reads its call's entry: pop the thread's
 * innermost call of the function (gate_call_enter pushed it), whose
 * arguments are then arg0..arg5 (entry.argN) and whose time $duration
 * counts from. No call (it entered before the run was armed) or one too
 * deep to keep: no values, and a condition reading them is false.
 */
static __always_inline void call_pop(struct expr_env *env, __u32 tid, __u32 key)
{
	struct gate_call_key k = { .tid = tid, .point = key };
	struct gate_calls *c = bpf_map_lookup_elem(&gate_calls, &k);
	struct gate_call_frame *f;
	__u64 now = bpf_ktime_get_ns();
	__u32 d;

	if (!c || !c->depth)
		return;
	d = --c->depth;
	if (d >= GATE_CALL_DEPTH)
		return;
	f = &c->frames[d & (GATE_CALL_DEPTH - 1)];
	__builtin_memcpy(env->args, f->args, sizeof(env->args));
	if (f->ns && f->ns <= now) {
		env->vars[EXPR_VAR_DURATION] = now - f->ns;
		env->vars_set |= 1u << EXPR_VAR_DURATION;
	}
}

/*
 * A probe point (--on POINT, or an end of --window START..STOP) has a
 * struct gate_tp in gate_tps too, keyed GATE_POINT_BASE + n (the attach
 * cookie; usdt's own cookie for usdt). It opens and closes windows and runs
 * triggers like a tracepoint, with the values its program put in @env; it
 * records nothing itself (a mark trigger at it does).
 */
static __always_inline void point_hit(void *ctx, __u32 key, struct expr_env *env, __u64 ip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, zero = 0;
	struct gate_thread *th;
	struct expr_prog *where;
	struct gate_stats *st = my_stats();
	struct gate_tp *tp;
	__u64 open = 0, opened;
	__u32 verdict = 0, decided = probe_decided(key, &verdict);

	tp = bpf_map_lookup_elem(&gate_tps, &key);
	if (!tp) {
		st->unknown_tp++;
		return;
	}
	/* a function returning int: its ret typed before anything reads it */
	if (tp->flags & GATE_TP_RET_MASK)
		env->ret = expr_cast(env->ret, (tp->flags & GATE_TP_RET_MASK) >> GATE_TP_RET_SHIFT);
	if (call_frames && (tp->flags & GATE_TP_CALL_ENTRY))
		call_pop(env, tid, key);
	if (!no_windows && (tp->open_mask || tp->close_mask)) {
		th = bpf_map_lookup_elem(&gate_threads, &tid);
		if (th)
			open = th->open;
		opened = tp->open_mask & ~open;
		if (opened && have_where && (decided & GATE_VERDICT_WHERE)) {
			if (!(verdict & GATE_VERDICT_WHERE)) {
				st->windows_filtered += __builtin_popcountll(opened);
				opened = 0;
			}
		} else if (opened && have_where) {
			where = bpf_map_lookup_elem(&gate_where, &zero);
			if (!where || !expr_eval(where, env, GATE_SLOT_WHERE)) {
				st->windows_filtered += __builtin_popcountll(opened);
				opened = 0;
			}
		}
		if (opened) {
			if (windows_open(tid, th, open, opened, st))
				return;
			open |= opened;
		}
		if (tp->close_mask & open)
			windows_close(ctx, tid, open, tp->close_mask, st);
	}
	if (tp->trig_mask)
		run_triggers(ctx, tp->trig_mask, env, ip, decided, verdict);
}

/*
 * At the entry of a function whose uretprobe point reads its call's entry
 * (GATE_TP_CALL_ENTRY; the cookie is that point's key): push the call on
 * the thread's stack of its calls, its time and arguments if it is one of
 * the outermost GATE_CALL_DEPTH.
 */
SEC("?uprobe")
int gate_call_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct gate_call_key k = { .tid = (__u32)pid_tgid, .point = (__u32)bpf_get_attach_cookie(ctx) };
	struct gate_call_frame *f;
	struct gate_calls *c;
	__u32 zero = 0, d;

	if (!armed() || !is_target(pid_tgid))
		return 0;
	c = bpf_map_lookup_elem(&gate_calls, &k);
	if (!c) {
		c = bpf_map_lookup_elem(&gate_calls_empty, &zero);
		if (!c || bpf_map_update_elem(&gate_calls, &k, c, BPF_NOEXIST))
			return 0;
		c = bpf_map_lookup_elem(&gate_calls, &k);
		if (!c)
			return 0;
	}
	d = c->depth;
	if (d < GATE_CALL_DEPTH) {
		f = &c->frames[d & (GATE_CALL_DEPTH - 1)];
		f->ns = bpf_ktime_get_ns();
		f->args[0] = PT_REGS_PARM1(ctx);
		f->args[1] = PT_REGS_PARM2(ctx);
		f->args[2] = PT_REGS_PARM3(ctx);
		f->args[3] = PT_REGS_PARM4(ctx);
		f->args[4] = PT_REGS_PARM5(ctx);
		f->args[5] = PT_REGS_PARM6(ctx);
	}
	c->depth = d + 1;
	return 0;
}

/* A function's entry (uprobe, kprobe): its arguments are arg0..arg5. */
static __always_inline int function_entry(struct pt_regs *ctx)
{
	struct expr_env *env;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env_args(ctx);
	if (env)
		point_hit(ctx, bpf_get_attach_cookie(ctx), env, PT_REGS_IP(ctx));
	return 0;
}

/* A function's return (uretprobe, kretprobe): its return value is ret. */
static __always_inline int function_return(struct pt_regs *ctx)
{
	struct expr_env *env;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env(ctx);
	if (!env)
		return 0;
	env->ret = PT_REGS_RC(ctx);
	point_hit(ctx, bpf_get_attach_cookie(ctx), env, PT_REGS_IP(ctx));
	return 0;
}

SEC("?uprobe")
int gate_point_uprobe(struct pt_regs *ctx)
{
	return function_entry(ctx);
}

SEC("?uretprobe")
int gate_point_uretprobe(struct pt_regs *ctx)
{
	return function_return(ctx);
}

/* USDT: the probe's own arguments (bpf_usdt_arg() decodes their locations). */
SEC("?usdt")
int gate_point_usdt(struct pt_regs *ctx)
{
	struct expr_env *env;
	__u32 key;
	int n;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env(ctx);
	if (!env)
		return 0;
	n = bpf_usdt_arg_cnt(ctx);
	for (int i = 0; i < EXPR_NR_ARGS; i++) {
		long v = 0;

		if (i < n && !bpf_usdt_arg(ctx, i, &v))
			env->args[i] = v;
	}
	key = bpf_usdt_cookie(ctx);
	/* the point's conditions compiled: its own program decides them, then gate_point_usdt_decided */
	bpf_tail_call(ctx, &gate_usdt_conds, key - GATE_POINT_BASE);
	point_hit(ctx, key, env, PT_REGS_IP(ctx));
	return 0;
}

/*
 * The rest of a usdt hit whose own program decided its conditions (tail-called
 * with the verdicts, GATE_PROBE_USDT): the environment is as gate_point_usdt
 * left it. Never attached itself.
 */
SEC("?usdt")
int gate_point_usdt_decided(struct pt_regs *ctx)
{
	struct expr_env *env;
	__u32 zero = 0;

	if (!armed())
		return 0;
	env = bpf_map_lookup_elem(&gate_env, &zero);
	if (env)
		point_hit(ctx, bpf_usdt_cookie(ctx), env, PT_REGS_IP(ctx));
	return 0;
}

SEC("?kprobe")
int gate_point_kprobe(struct pt_regs *ctx)
{
	return function_entry(ctx);
}

SEC("?kretprobe")
int gate_point_kretprobe(struct pt_regs *ctx)
{
	return function_return(ctx);
}

/*
 * gate_fire of a trigger-only probe point's own program (gate_front__build()
 * with a probe): the actions of the triggers in fire_mask, with the values
 * the shared program would have put in the environment.
 */
static __always_inline int probe_fire(struct pt_regs *ctx, int ret)
{
	struct gate_trig_pcpu *pc = NULL;
	struct expr_env *env;
	struct gate_tp *tp;
	__u32 mask = 0;

	tp = fire_take(ctx, &pc, &mask);
	if (!tp || !pc)
		return 0;
	env = ret ? probe_env(ctx) : probe_env_args(ctx);
	if (!env)
		return 0;
	if (ret)
		env->ret = expr_cast(PT_REGS_RC(ctx), (tp->flags & GATE_TP_RET_MASK) >> GATE_TP_RET_SHIFT);
	fire_each(ctx, pc, mask, env, PT_REGS_IP(ctx));
	return 0;
}

SEC("?kprobe")
int gate_fire_entry(struct pt_regs *ctx)
{
	return probe_fire(ctx, 0);
}

SEC("?kprobe")
int gate_fire_return(struct pt_regs *ctx)
{
	return probe_fire(ctx, 1);
}

/* mem: a hardware breakpoint's perf event; the IP is the instruction that touched it. */
SEC("?perf_event")
int gate_point_mem(struct bpf_perf_event_data *ctx)
{
	struct expr_env *env;

	if (!armed() || !is_target(bpf_get_current_pid_tgid()))
		return 0;
	env = probe_env(ctx);
	if (env)
		point_hit(ctx, bpf_get_attach_cookie(ctx), env, PT_REGS_IP(&ctx->regs));
	return 0;
}

/* ---- --where on hardware trace: vetoes on the AUX group's uprobe members ---- */

/*
 * A uprobe window on hardware trace is a uprobe (aux_resume) and a uretprobe
 * (aux_pause) member of the AUX group, created through the kernel's "uprobe"
 * PMU: each has a private trace_event_call, so a program attached to it
 * decides for that event alone. Returning 0 drops the hit before
 * perf_tp_event(): no count, no overflow, no aux_resume/aux_pause; other
 * tools' events on the same function are not touched. The programs keep
 * their own per-thread call depth (the gate's uprobe programs on the same
 * function run in no fixed order with these) and let through only the
 * outermost call for which --where holds, and the return that ends it.
 *
 * Every member on the function is a uprobe consumer of its own, and a hit
 * runs the programs of all of them, one after the other, preemptible: the
 * member of each CPU (and, per thread, of each thread), of which the kernel
 * then fires only the one on the hit's CPU and thread. The first program to
 * see a hit decides it and counts it; the others give the same answer.
 * A hit is told from the next by its stack pointer and kind: two entries in
 * a row have different ones (a nested call's frame is below its caller's),
 * as have two returns; an entry and the return of the call before it at the
 * same depth differ in kind. (Deciding by the member's CPU instead, as this
 * did before, counted a call twice, or not at all, when the thread
 * migrated between two members' programs of one hit.)
 *
 * The attach cookie: the window in bits 0..31; bits 32..63 the member's CPU
 * + 1, or GATE_AUX_VETO_THREAD | tid for a thread's member, for the record.
 */
#define GATE_SLOT_AUX_VETO	(EXPR_MAX_SLOTS - 1)
_Static_assert(GATE_SLOT_AUX_VETO > GATE_SLOT_TRIGGER(GATE_MAX_TRIGGERS - 1), "a state slot of its own");

static __always_inline __u64 aux_veto_thread_start(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, start_time);
}

/*
 * Outermost calls let through (aux_resume), vetoed by --where; returns let
 * through (aux_pause); calls vetoed because gate_aux_veto was full.
 */
#define AUX_VETO_RESUMED	0
#define AUX_VETO_VETOED		1
#define AUX_VETO_PAUSED		2
#define AUX_VETO_UNTRACKED	3
__u64 aux_veto_stats[4];

static __always_inline __u32 aux_veto_window(struct pt_regs *ctx)
{
	return (__u32)bpf_get_attach_cookie(ctx) & (GATE_MAX_WINDOWS - 1);
}

/* Entry member (aux_resume): 1 only for the outermost call --where lets open. */
SEC("?uprobe")
int gate_aux_veto_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), sp = PT_REGS_SP(ctx);
	struct aux_veto_key key = { .tid = (__u32)pid_tgid, .window = aux_veto_window(ctx) };
	struct aux_veto_call *c, fresh = {};

	if (!armed() || !is_target(pid_tgid))
		return 0;
	fresh.start = aux_veto_thread_start();
	c = bpf_map_lookup_elem(&gate_aux_veto, &key);
	if (c && c->start == fresh.start) {
		if (!c->hit_exit && c->hit_sp == sp)
			return c->hit_ret; /* another member's program ran for this hit */
		c->hit_exit = 0;
		c->hit_sp = sp;
		if (c->depth) {
			if (c->depth < 0xffffffff)
				c->depth++; /* a nested call: the window is open already, or stays shut */
			c->hit_ret = 0;
			return 0;
		}
		c->depth = 1;
		c->passed = call_where_holds(ctx, GATE_SLOT_AUX_VETO);
		c->hit_ret = c->passed;
		__sync_fetch_and_add(&aux_veto_stats[c->passed ? AUX_VETO_RESUMED : AUX_VETO_VETOED], 1);
		return c->passed;
	}
	fresh.depth = 1;
	fresh.passed = call_where_holds(ctx, GATE_SLOT_AUX_VETO);
	fresh.hit_sp = sp;
	fresh.hit_ret = fresh.passed;
	if (bpf_map_update_elem(&gate_aux_veto, &key, &fresh, BPF_ANY)) {
		/* untracked: its return could not pause, so do not resume */
		__sync_fetch_and_add(&aux_veto_stats[AUX_VETO_UNTRACKED], 1);
		return 0;
	}
	__sync_fetch_and_add(&aux_veto_stats[fresh.passed ? AUX_VETO_RESUMED : AUX_VETO_VETOED], 1);
	return fresh.passed;
}

/*
 * Return member (aux_pause): 1 only at the return that closes a window the
 * entry opened. The entry stays (depth 0) for the other members' programs
 * of this return; the thread's exit deletes it.
 */
SEC("?uretprobe")
int gate_aux_veto_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), sp = PT_REGS_SP(ctx);
	struct aux_veto_key key = { .tid = (__u32)pid_tgid, .window = aux_veto_window(ctx) };
	struct aux_veto_call *c;

	/* no armed() check: a window resumed while armed still pauses after the disarm */
	c = bpf_map_lookup_elem(&gate_aux_veto, &key);
	if (!c || c->start != aux_veto_thread_start())
		return 0; /* a call that began before we were armed, or was never seen */
	if (c->hit_exit && c->hit_sp == sp)
		return c->hit_ret;
	c->hit_exit = 1;
	c->hit_sp = sp;
	c->hit_ret = 0;
	if (!c->depth || --c->depth)
		return 0;
	if (c->passed) {
		c->hit_ret = 1;
		__sync_fetch_and_add(&aux_veto_stats[AUX_VETO_PAUSED], 1);
	}
	return c->hit_ret;
}
