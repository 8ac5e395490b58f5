/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_STATE_BPF_H
#define AUXTRIG_GATE_STATE_BPF_H

/*
 * What the gate's programs (the .bpf.c files of bpf/gate/, linked into one
 * object by bpftool gen object) share: the loader's configuration (.rodata),
 * the counters BPF keeps (.bss), the maps, and the accessors every program
 * uses. The variables are declared here and defined once, in state.bpf.c.
 * The maps are defined here, __weak as libbpf's usdt.bpf.h defines its own:
 * every part that includes this header holds them, and the linker keeps one.
 * The helpers are static __always_inline: each program is verified whole, as
 * one function, as it was before the split.
 */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "auxtrig/gate_abi.h"
#include "auxtrig/gate_maps.bpf.h"
#include "auxtrig/expr_abi.h"
#include "expr.bpf.h"
#include "regs.bpf.h"

extern const volatile __u32 filter_targets;
extern const volatile __u32 target_threads;
extern const volatile __u32 filter_cpus;
extern const volatile __u32 no_windows;
extern const volatile __u32 have_where;
extern const volatile __u32 uprobe_enter_type;
extern const volatile __u32 uprobe_exit_type;
extern const volatile __u32 have_snap_triggers;
extern const volatile __u32 have_set_actions;
extern const volatile __u8 uprobe_window_ret[GATE_MAX_WINDOWS];
extern const volatile __u32 signal_edges;
extern const volatile __u32 signal_threads;
extern const volatile __u32 resume_type;
extern const volatile __u32 pause_type;
extern const volatile __u32 hold_windows;
extern const volatile __u64 min_duration_ns;
extern const volatile __u64 max_duration_ns;
extern const volatile __u32 env_fields;
extern const volatile __u32 need_elapsed;
extern const volatile __u32 entry_args;
extern const volatile __u32 need_duration;
extern const volatile __u32 call_frames;
extern const volatile __u32 mark_strs;
extern const volatile __u32 aux_veto;
extern const volatile struct gate_trigger gate_triggers[GATE_MAX_TRIGGERS];

extern __u64 snap_points;
extern __u64 snaps_begun;
extern __u64 snaps_done;
extern struct gate_stats stats[GATE_STATS_SLOTS];
extern __u64 trig_policy[GATE_MAX_TRIGGERS];
extern struct gate_edge_stats edge_stats;
extern __u64 trig_tat[GATE_MAX_TRIGGERS];
extern __u64 window_seq;
extern __u64 thread_msgs_dropped;

/*
 * Per thread, the syscall of its last record a snapshot's freeze held back
 * since its last recorded syscall entry, or the entry a snapshot took but
 * cut as later than its trigger (the recorder notes it, gate__hold_cut()): a
 * snapshot trigger at the end of a call of that syscall would find the call
 * incomplete.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __s32);
} gate_held SEC(".maps") __weak;

/* raw_syscalls:sys_enter records: the string arguments of each syscall number (GATE_TP_RAW_STRS). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GATE_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, struct gate_raw_strs);
} gate_raw_strs SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_MAX_TPS);
	__type(key, __u32);
	__type(value, struct gate_tp);
} gate_tps SEC(".maps") __weak;

/* The compiled --where condition, checked when a window would open. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_prog);
} gate_where SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_env);
} gate_env SEC(".maps") __weak;

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
} gate_sys_entries SEC(".maps") __weak;

/* The calls in progress at uretprobe and kretprobe points that read their entry (struct gate_calls). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, GATE_MAX_CALL_THREADS);
	__type(key, struct gate_call_key);
	__type(value, struct gate_calls);
} gate_calls SEC(".maps") __weak;

/* An empty struct gate_calls, to create a thread's entry from (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_calls);
} gate_calls_empty SEC(".maps") __weak;

/* The conditions of the triggers (--on ... if EXPR). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GATE_MAX_TRIGGERS);
	__type(key, __u32);
	__type(value, struct expr_prog);
} gate_trig_progs SEC(".maps") __weak;

/* The statements of --on set actions ({ $v = ... }: GATE_ACT_SET), per trigger. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GATE_MAX_TRIGGERS);
	__type(key, __u32);
	__type(value, struct expr_prog);
} gate_trig_sets SEC(".maps") __weak;

/* The triggers' counters, per CPU, and the hand-over to gate_fire. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gate_trig_pcpu);
} gate_trig_pcpu SEC(".maps") __weak;

/* gate_fire, for the points' own programs to tail-call (slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gate_fire_prog SEC(".maps") __weak;

/* The shared probe programs, for the probe points' own programs to tail-call (GATE_PROBE_*). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, GATE_PROBE_PROGS);
	__type(key, __u32);
	__type(value, __u32);
} gate_probe_progs SEC(".maps") __weak;

/* The usdt points' own programs, by point number n (see GATE_PROBE_USDT). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, GATE_MAX_POINTS);
	__type(key, __u32);
	__type(value, __u32);
} gate_usdt_conds SEC(".maps") __weak;

/*
 * Twice the largest record, so that "size & (GATE_SCRATCH - 1)" is a bound the
 * verifier can see while never truncating a size already checked against
 * GATE_RECORD_MAX.
 */
#define GATE_SCRATCH (2 * GATE_RECORD_MAX)

/* What the gate emits: the sample IP perf would report, then the record. */
struct record_buf {
	struct gate_out_hdr hdr;
	__u8 data[GATE_SCRATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record_buf);
} gate_scratch SEC(".maps") __weak;

/* -C: CPUs whose events are recorded (windows still open and close anywhere). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GATE_STATS_SLOTS);
	__type(key, __u32);
	__type(value, __u8);
} gate_cpus SEC(".maps") __weak;

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
} gate_any_memo SEC(".maps") __weak;

/*
 * --where on hardware trace: the veto programs' state (the programs are in
 * aux_veto.bpf.c; a thread's exit drops its entries). Per thread and window: the calls in
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
} gate_aux_veto SEC(".maps") __weak;


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
} gate_uprobe_vetoed SEC(".maps") __weak;

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

static __always_inline int is_target(__u64 pid_tgid)
{
	__u32 key = target_threads ? (__u32)pid_tgid : pid_tgid >> 32;

	return !filter_targets || bpf_map_lookup_elem(&gate_targets, &key);
}


static __always_inline int cpu_recorded(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u8 *on;

	if (!filter_cpus)
		return 1;
	on = bpf_map_lookup_elem(&gate_cpus, &cpu);
	return on && *on;
}

static __always_inline struct gate_trig_pcpu *trig_pcpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gate_trig_pcpu, &zero);
}

#endif
