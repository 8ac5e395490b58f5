/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_ABI_H
#define AUXTRIG_GATE_ABI_H

/**
 * DOC: the gate's BPF <-> user ABI
 *
 * bpf/gate/tracepoint.bpf.c runs one program on every tracepoint auxtrig uses. For each
 * hit it looks up what that tracepoint means (struct gate_tp, keyed by the
 * tracepoint's id, which the loader passes as the attach cookie) and:
 *
 *   open_mask       opens these windows on the current thread (if --where
 *                   holds), then records the hit
 *   close_mask      records the hit, then closes these windows
 *   GATE_TP_RECORD  records the hit if the thread has any window open
 *
 * A window's own start and end are recorded only when that window really
 * opened, so every recorded start has its end and vice versa.
 *
 * "Records" means: copy the raw tracepoint record (the bytes perf would put in
 * PERF_SAMPLE_RAW), after a struct gate_out_hdr, into the per-CPU bpf-output
 * perf event, so the kernel stamps it with time, tid and cpu. Nothing outside a
 * window leaves the kernel (except, with --min/--max-duration, the records of
 * windows too short or too long, which the recorder drops: see below). The
 * programs always return 1: a tracepoint's BPF programs are ANDed for every
 * perf user of it, so returning 0 would hide the event from a concurrent
 * `perf record` or bpftrace.
 */

#ifndef __VMLINUX_H__	/* BPF side: vmlinux.h already has the __u types */
#include <linux/types.h>
#endif

#define GATE_MAX_WINDOWS	64	/* window ids are bits of a u64 */
#define GATE_MAX_TPS		1024
#define GATE_MAX_DYN		8	/* __data_loc/__rel_loc fields per tracepoint */
#define GATE_MAX_THREADS	65536
#define GATE_UPROBE_VETOED_MAX	8192	/* threads inside a vetoed call of a uprobe window at once */
#define GATE_MAX_TARGETS	8192
#define GATE_RECORD_MAX		8192	/* PERF_MAX_TRACE_SIZE: no tracepoint record is larger */
/*
 * A syscall entry with user string arguments (gate_tp.str_off: openat's
 * filename, renameat2's oldname and newname, mount's dev_name, dir_name and
 * type) is recorded with the strings after its fixed fields: one u32
 * __data_loc per string from the record's fixed size on, then the strings,
 * each up to GATE_STR_MAX bytes with its NUL; a string cut there ends in
 * "..." (the file's format for the event says so: event_list.c).
 */
#define GATE_STR_MAX		256
/*
 * The calls in progress of a thread at a uretprobe or kretprobe point whose triggers read
 * their entry (GATE_TP_CALL_ENTRY): map gate_calls, key {tid, point key},
 * one frame per call by depth, so each return of a recursion sees its own
 * call's entry. Calls deeper than GATE_CALL_DEPTH are counted in @depth but
 * not kept: their returns have no entry values (the condition is false).
 */
#define GATE_CALL_DEPTH		16	/* a power of 2: the programs mask the index with it */
#define GATE_MAX_CALL_THREADS	4096	/* (thread, point) pairs in gate_calls, LRU: ~3.7 MB */

struct gate_call_key {
	__u32 tid;
	__u32 point;	/* GATE_POINT_BASE + n, the uretprobe point's key */
};

/**
 * struct gate_call_frame - a call's entry
 * @ns:		bpf_ktime_get_ns() at the entry
 * @args:	the function's first six argument registers
 */
struct gate_call_frame {
	__u64 ns;
	__u64 args[6];
};

/**
 * struct gate_calls - a thread's calls in progress of one function
 * @depth:	calls entered and not yet returned
 * @frames:	the entries of the outermost GATE_CALL_DEPTH of them, by depth
 */
struct gate_calls {
	__u32 depth;
	__u32 __pad;
	struct gate_call_frame frames[GATE_CALL_DEPTH];
};

#define GATE_MAX_STRS		4	/* user strings per record */
#define GATE_STR_FIXED_MAX	128	/* largest fixed part of a record with strings (syscall entries: 64) */
/*
 * The attach cookie of a hardware-trace --where program (gate_aux_veto_*):
 * the window in bits 0..31, whose member it is in bits 32..63: CPU + 1 for a
 * CPU's member, GATE_AUX_VETO_THREAD | tid for a thread's.
 */
#define GATE_AUX_VETO_THREAD	(1u << 31)

#define GATE_TP_RECORD		(1u << 0)
#define GATE_TP_USER_REGS	(1u << 1)	/* sample IP from user registers (syscall tracepoints) */
#define GATE_TP_SYSCALL_ENTER	(1u << 2)	/* struct syscall_trace_enter: nr and args for --where */
#define GATE_TP_SYSCALL_EXIT	(1u << 3)	/* struct syscall_trace_exit: nr and ret for conditions */
#define GATE_TP_SYSCALL_ANY	(1u << 4)	/* raw_syscalls:sys_enter/sys_exit opening/closing syscall:* windows */
#define GATE_TP_IN_ANY		(1u << 5)	/* a recorded syscalls:sys_*_X inside syscall:* windows */
/* A syscall entry whose exit has a condition reading $elapsed: note when the thread entered. */
#define GATE_TP_STAMP_ENTRY	(1u << 8)	/* (bit 8: clear of flags being added next to the others) */
/* A syscall exit whose triggers read the entry's arguments (entry.argN): gate_tracepoint's fill_env() */
#define GATE_TP_ENTRY_ARGS	(1u << 9)
/*
 * A uretprobe or kretprobe point whose triggers read its call's entry (entry.argN,
 * $duration): gate_call_enter, at the function's entry, pushes the call on
 * the thread's stack of calls (gate_calls); the return pops it.
 */
#define GATE_TP_CALL_ENTRY	(1u << 10)
/*
 * A return probe point (uretprobe, kretprobe) of a function whose return
 * type is narrower than the register (int): bits 16..20 hold the cast that
 * types ret before anything reads it, as EXPR_OP_CAST's operand (size 1, 2
 * or 4 | EXPR_REC_SIGNED); 0: ret is the whole register.
 */
#define GATE_TP_RET_SHIFT	16
#define GATE_TP_RET_MASK	(0x1fu << GATE_TP_RET_SHIFT)

/*
 * Triggers (--on): a tracepoint hit whose condition holds fires an action,
 * subject to a rate policy. Their conditions live in gate_trig_progs[i].
 */
#define GATE_MAX_TRIGGERS	8

#define GATE_ACT_SNAPSHOT	1	/* freeze the flight recorder, ask for a snapshot */
#define GATE_ACT_STOP		2	/* end the run */
#define GATE_ACT_MARK		3	/* write an auxtrig:mark record with the values */
#define GATE_ACT_RESUME		4	/* open the thread's recording window (GATE_USER_WINDOW) */
#define GATE_ACT_PAUSE		5	/* close it */
/*
 * Not an --on action: a window's verdict (GATE_OUT_VERDICT) that did not fit
 * in the full data ring, sent on the control ring instead (GATE_MSG_VERDICT):
 * args[0] the window id, args[1] its duration, ret 1 to keep it, 0 to drop it.
 */
#define GATE_ACT_VERDICT	6

#define GATE_POLICY_ALWAYS	0
#define GATE_POLICY_ONCE	1	/* the first match only */
#define GATE_POLICY_EVERY	2	/* every n-th match */
#define GATE_POLICY_AFTER	3	/* from the n-th match on */

/**
 * struct gate_trigger - one --on (rodata array gate_triggers)
 * @action:	GATE_ACT_*
 * @policy:	GATE_POLICY_*
 * @n:		the policy's N
 * @has_cond:	gate_trig_progs[i] holds a condition
 * @limit:	limit:N/s: at most N fires per second, 0: no limit. A token
 *		bucket of N tokens refilled at N per second (GCRA, one u64 of
 *		state per trigger): a burst fires N times, then one every 1/N s.
 *		Applied after @policy; what it holds back counts as suppressed.
 * @delay_ns:	snapshot+T / stop+T: the action takes effect T after the
 *		trigger. snapshot: the gate keeps emitting until
 *		gate_runtime.freeze_at, then freezes; the recorder takes the
 *		snapshot once that time has passed. stop: the recorder stops then.
 * @mark_str:	mark(str(argN)): N + 1, the mark record carries the user
 *		string argN points to (at a syscall's exit: the entry's argN);
 *		0: none
 * @entry_args:	at a syscall's exit, the arguments (conditions' entry.argN, the mark's) are those the
 *		thread entered the syscall with (the gate stamps the entries)
 */
struct gate_trigger {
	__u32 action;
	__u32 policy;
	__u64 n;
	__u16 has_cond;
	__u8 mark_str;
	__u8 entry_args;
	__u32 limit;
	__u64 delay_ns;
};

/**
 * struct gate_trigger_stats - per trigger and CPU (struct gate_trig_pcpu), summed by the loader
 * @evaluated:	hits of the trigger's tracepoint by a target
 * @matched:	of those, where the condition held
 * @fired:	of those, where the rate policy let the action happen
 * @suppressed:	matched but held back by the rate policy
 * @dropped:	fired but the control message could not be queued (ring full)
 */
struct gate_trigger_stats {
	__u64 evaluated;
	__u64 matched;
	__u64 fired;
	__u64 suppressed;
	__u64 dropped;
};

/*
 * Control messages (BPF ringbuf gate_ctl, to the recorder), apart from the
 * trace data so a flood of it cannot drop them. Each starts with its type
 * and size, so the reader dispatches on the type and never guesses:
 */
#define GATE_MSG_ACTION		1	/* a fired --on or trigger program: @action GATE_ACT_SNAPSHOT/STOP */
#define GATE_MSG_EDGE		2	/* a thread's window edge: @action GATE_ACT_EDGE_OPEN/CLOSE */
#define GATE_MSG_VERDICT	3	/* a timed window's verdict: @action GATE_ACT_VERDICT */
/*
 * A target created a thread or process (rodata signal_threads: per-thread
 * hardware trace follows it): @tid the new one, @pid its creator's process,
 * @args[0] the creator's thread, @time_ns when (sched_process_fork: before
 * the new task first runs, which it may do before the recorder reads this).
 */
#define GATE_MSG_THREAD		4

/* struct gate_trig_pcpu.cur_state: what is known of the thread running on this CPU */
#define GATE_CUR_UNKNOWN	0	/* nothing since the last context switch (or exec) */
#define GATE_CUR_OTHER		1	/* not a target; cur_pid_tgid is its */
#define GATE_CUR_TARGET		2	/* a target (or every thread is); cur_pid_tgid is its */

/**
 * struct gate_trig_pcpu - one CPU's trigger counters (per-CPU array gate_trig_pcpu, key 0)
 * @stats:	per trigger: no atomics, the loader sums the CPUs
 * @fire_mask:	a point's own program (see gate_front.h) hands the triggers
 *		whose condition and policy passed at this hit to gate_fire,
 *		which it tail-calls: bit i = trigger i
 * @cur_state:	GATE_CUR_*: the syscall points' own programs remember whether
 *		the running thread is a target, and its ids, until the CPU
 *		switches threads: gate_sched_switch (every context switch) and
 *		gate_follow_exec (an exec can change a thread's id) reset it
 * @cur_pid_tgid: bpf_get_current_pid_tgid() of the running thread, while
 *		@cur_state is not GATE_CUR_UNKNOWN
 * @cur_regs:	the address of its user registers (bpf_task_pt_regs()), ditto
 * @where_tp:	a window start's --where, compiled (gate_front__build_where()):
 *		the program that runs before the shared one at that tracepoint
 *		leaves the verdict of this hit for it, keyed by the tracepoint's
 *		id; the shared program takes it (and clears @where_tp) instead
 *		of interpreting the condition
 * @where_verdict: 1 the --where holds, 0 it does not
 * @probe_key:	the same at a probe point (key GATE_POINT_BASE + n) or a uprobe
 *		window's entry (GATE_UPROBE_WINDOW_KEY(w)) whose conditions are
 *		compiled (gate_front__build_probe()): the point's own program
 *		evaluates them, leaves @probe_verdict keyed by @probe_key and
 *		tail-calls the shared program (gate_probe_progs), which takes
 *		them (and clears @probe_key) instead of interpreting
 * @probe_verdict: bit i: trigger i's condition holds; GATE_VERDICT_WHERE:
 *		the --where holds (decided only where a window would open)
 * @probe_mask:	the conditions of @probe_verdict that were decided (same bits):
 *		a condition the compiler cannot express is left to the
 *		interpreter, the others at that point still run compiled
 */
struct gate_trig_pcpu {
	struct gate_trigger_stats stats[GATE_MAX_TRIGGERS];
	__u32 fire_mask;
	__u32 cur_state;
	__u64 cur_pid_tgid;
	__u64 cur_regs;
	__u32 where_tp;
	__u32 where_verdict;
	__u32 probe_key;
	__u32 probe_verdict;
	__u32 probe_mask;
	__u32 __pad;
};

#define GATE_VERDICT_WHERE	(1u << 31)

/* A uprobe window's entry, as struct gate_trig_pcpu.probe_key knows it: above every point's key. */
#define GATE_UPROBE_WINDOW_KEY(w)	(0x20000u + (w))

/* gate_probe_progs: the shared programs a probe point's own program tail-calls. */
#define GATE_PROBE_UPROBE	0	/* gate_point_uprobe */
#define GATE_PROBE_URETPROBE	1	/* gate_point_uretprobe */
#define GATE_PROBE_KPROBE	2	/* gate_point_kprobe */
#define GATE_PROBE_KRETPROBE	3	/* gate_point_kretprobe */
#define GATE_PROBE_WINDOW	4	/* gate_uprobe_enter */
#define GATE_PROBE_FIRE_ENTRY	5	/* gate_fire_entry: the actions of triggers at an entry, as gate_fire */
#define GATE_PROBE_FIRE_RETURN	6	/* gate_fire_return: ... at a return */
#define GATE_PROBE_USDT		7	/* gate_point_usdt_decided: the rest of a usdt hit (below) */
#define GATE_PROBE_PROGS	8

/*
 * A usdt point's conditions run the other way round: libbpf attaches the
 * shared gate_point_usdt (bpf_usdt_arg() decodes the arguments, as only its
 * specs know where they are), which puts them in the environment and
 * tail-calls the point's own program, gate_usdt_conds[n] (gate_front__build_probe(),
 * GATE_FRONT_USDT); that one decides the conditions and tail-calls
 * gate_point_usdt_decided with the verdicts. No program at n: interpreted.
 */

/**
 * struct gate_ctl_msg - one control message
 * @type:	GATE_MSG_*
 * @size:	sizeof(struct gate_ctl_msg)
 * @trigger:	index of the --on (GATE_USER_TRIGGER_BASE + reason: a trigger program)
 * @action:	GATE_ACT_*
 * @pid, @tid:	who made the condition true
 * @time_ns:	bpf_ktime_get_ns()
 * @ret:	the syscall's return value at an exit point, else 0
 * @args:	the syscall's arguments at an entry point, else 0
 * @delay_ns:	the action is due at @time_ns + @delay_ns (CLOCK_MONOTONIC)
 * @point:	a snapshot trigger: the number of its point record
 *		(GATE_OUT_POINT) in the data ring, 0 none
 */
struct gate_ctl_msg {
	__u16 type;
	__u16 size;
	__u32 trigger;
	__u32 action;
	__u32 pid;
	__u32 tid;
	__u32 point;
	__u64 time_ns;
	__s64 ret;
	__u64 args[6];
	__u64 delay_ns;
};

/*
 * Probe points (uprobe, uretprobe, usdt, kprobe, kretprobe, mem) have their
 * struct gate_tp in gate_tps under GATE_POINT_BASE + n, above every
 * tracepoint id (16 bits); the key is their attach cookie.
 */
#define GATE_POINT_BASE		0x10000
#define GATE_MAX_POINTS		64

/*
 * Window edges, for hardware trace gated from userspace (a kernel without
 * aux_action, or a PMU that cannot pause: Arm SPE). Only with the rodata
 * switch signal_edges set, the gate sends on gate_ctl, per thread, when the
 * thread's first window opens and when its last one closes (or it exits
 * inside one), stamped with bpf_ktime_get_ns() (CLOCK_MONOTONIC). The
 * recorder enables the AUX events while any thread has a window open.
 * A struct gate_ctl_msg of type GATE_MSG_EDGE with @trigger
 * GATE_EDGE_TRIGGER, @action one of these, @args[0] the thread's open
 * windows before, @args[1] after.
 * The codes are far from the --on actions so both can grow.
 */
#define GATE_ACT_EDGE_OPEN	16
#define GATE_ACT_EDGE_CLOSE	17
#define GATE_EDGE_TRIGGER	0xffffffffu

/**
 * struct gate_edge_stats - window-edge messages (.bss edge_stats, atomic)
 * @sent:	queued on gate_ctl
 * @dropped:	lost: gate_ctl was full
 */
struct gate_edge_stats {
	__u64 sent;
	__u64 dropped;
};

/**
 * struct gate_prog_stats - what user trigger programs' auxtrig_resume() and
 * auxtrig_pause() did (map gate_prog_stats, one entry, atomic adds): their
 * windows and edges are theirs, not the gate's, so the gate's own counters
 * (.bss) do not see them.
 * @windows_opened:	the thread's user window opened
 * @windows_closed:	the thread's user window closed
 * @edges_sent:		window edges queued on gate_ctl (hardware trace gated
 *			from userspace)
 * @edges_dropped:	window edges lost: gate_ctl was full
 */
struct gate_prog_stats {
	__u64 windows_opened;
	__u64 windows_closed;
	__u64 edges_sent;
	__u64 edges_dropped;
};

/* Flags of struct gate_tp.dyn_flags[i]. */
#define GATE_DYN_REL		(1u << 0)	/* __rel_loc: offset counts from the end of the field */

/**
 * struct gate_tp - what one tracepoint means to the gate (map gate_tps)
 * @open_mask:	windows this tracepoint opens (bit N = window N)
 * @close_mask:	windows this tracepoint closes
 * @flags:	GATE_TP_*
 * @size:	size of the fixed part of the record (from the format file)
 * @nr_dyn:	number of dynamic-location fields
 * @trig_mask:	triggers (--on) whose point this tracepoint is
 * @dyn_off:	offset of each dynamic-location u32 (len << 16 | offset)
 * @dyn_flags:	GATE_DYN_* per dynamic field
 * @str_off:	a syscall entry's user string arguments, in the order of the
 *		record's fields: the offset of each pointer field; the first 0
 *		ends the list
 */
struct gate_tp {
	__u64 open_mask;
	__u64 close_mask;
	__u32 flags;
	__u32 size;
	__u32 nr_dyn;
	__u32 trig_mask;	/* triggers (--on) at this tracepoint: bit i = trigger i */
	__u16 dyn_off[GATE_MAX_DYN];
	__u8 dyn_flags[GATE_MAX_DYN];
	__u8 str_off[GATE_MAX_STRS];	/* a syscall entry's user strings: offsets of their pointer fields, 0 ends */
	__u32 __pad;
};

/**
 * struct gate_thread - per-thread window state (map gate_threads, key tid)
 * @open:	bit N set while window N is open on this thread
 * @opened_ns:	bpf_ktime_get_ns() when the first open window opened
 * @depth:	per uprobe window, calls in progress on this thread
 * @id:		the thread's current window (from when @open leaves 0 until it
 *		is 0 again), numbered by the gate from 1; 0 for windows opened by
 *		user trigger programs, which are not timed (--min/max-duration)
 */
struct gate_thread {
	__u64 open;
	__u64 opened_ns;
	__u8 depth[GATE_MAX_WINDOWS];	/* uprobe windows: calls in progress (recursion) */
	__u64 id;
};

/**
 * struct gate_sys_entry - a thread's syscall entry (map gate_sys_entries, key
 * tid), for $elapsed and the entry's arguments at the syscall's exit
 * @ns:		bpf_ktime_get_ns() at the entry
 * @nr:		the syscall's number (sign-extended int)
 * @args:	its arguments (those the entry's record has; the others 0)
 */
struct gate_sys_entry {
	__u64 ns;
	__s64 nr;
	__u64 args[6];
};

/**
 * DOC: what the gate emits
 *
 * Every record the gate hands to the bpf-output event is a struct
 * gate_out_hdr followed by the record (a tracepoint's raw bytes, or one of
 * auxtrig's own events). The recorder strips the header.
 *
 * --min-duration/--max-duration: a window's duration is known only when it
 * closes, so its records cross to userspace anyway and wait there. While the
 * gate times windows (rodata hold_windows), a record emitted inside a timed
 * window carries GATE_OUT_HELD and the window's id; when the window closes the
 * gate emits a verdict (GATE_OUT_VERDICT, with GATE_OUT_KEEP if the duration
 * was within the limits, and a struct gate_verdict_rec as the record). The
 * recorder writes the window's held records if kept, drops them if not. The
 * verdict may arrive before records of the same window emitted on another CPU
 * (the thread migrated): the id, not the ring, ties them together.
 */
#define GATE_OUT_HELD		(1u << 0)	/* wait for the window's verdict */
#define GATE_OUT_VERDICT	(1u << 1)	/* the window @window closed */
#define GATE_OUT_KEEP		(1u << 2)	/* with VERDICT: write the window */
/*
 * A snapshot trigger's moment, in the data ring of its CPU (@window: the
 * point's number, struct gate_ctl_msg.point; the record: 8 bytes of
 * nothing, common_type 0). Its sample time is where the snapshot ends: a
 * record another CPU was emitting at that very instant and timed later
 * belongs to no snapshot. Never written to the file.
 */
#define GATE_OUT_POINT		(1u << 3)

/**
 * struct gate_out_hdr - before every emitted record
 * @ip:		the sample IP perf would report
 * @window:	the thread's window id (struct gate_thread.id), 0 outside timed windows
 * @flags:	GATE_OUT_*
 */
struct gate_out_hdr {
	__u64 ip;
	__u32 window;
	__u32 flags;
};

/* The record of a verdict: common_type 0 (no event), the window's duration. */
struct gate_verdict_rec {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u64 duration_ns;
};

/*
 * Uprobe windows (-w uprobe:PATH:SYMBOL): the window is open from the
 * outermost call's entry to its return. Their own entries and returns are
 * recorded as auxtrig:uprobe_enter / auxtrig:uprobe_exit, events of auxtrig's
 * own whose formats travel in the file's tracing data.
 */
struct gate_uprobe_enter_rec {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 window;
	__u32 depth;		/* 1 for the outermost call */
	__u64 args[6];
};

/*
 * auxtrig:mark, written by a --on ...:mark trigger with the values that fired it.
 * In a run with a mark(str(argN)) trigger every mark record is followed by a
 * u32 __data_loc (field str, offset 72) and its string (empty for the others).
 */
struct gate_mark_rec {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 trigger;		/* 1-based, as --on options are counted */
	__u32 nr;		/* syscall number, or -1 */
	__s64 ret;
	__u64 args[6];
};

struct gate_uprobe_exit_rec {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 window;
	__u32 depth;
	__s64 ret;
};

/**
 * struct gate_stats - counters, in the program's .bss (one per CPU slot)
 * @windows_opened:	windows that opened (passed --where)
 * @windows_closed:	windows that closed
 * @windows_filtered:	window starts rejected by --where
 * @recorded:		records handed to bpf_perf_event_output()
 * @output_lost:	bpf_perf_event_output() failures (ring full): lost records
 * @too_big:		records larger than GATE_RECORD_MAX: lost
 * @threads_full:	window opens lost because gate_threads was full
 * @unknown_tp:		hits on a tracepoint with no gate_tp entry (should be 0)
 * @frozen:		records not emitted because a snapshot trigger had frozen
 *			the recorder (on purpose: the trace ends at the trigger)
 * @stopped:		records not emitted because a stop action had fired
 *			(on purpose: nothing later than the stop is written)
 * @vetoed_untracked:	uprobe windows (gate path): outermost calls --where
 *			vetoed that gate_uprobe_vetoed had no room for, so a
 *			call nested in one may have opened its window
 */
struct gate_stats {
	__u64 windows_opened;
	__u64 windows_closed;
	__u64 windows_filtered;
	__u64 recorded;
	__u64 output_lost;
	__u64 too_big;
	__u64 threads_full;
	__u64 unknown_tp;
	__u64 frozen;
	__u64 stopped;
	__u64 vetoed_untracked;
};

#define GATE_STATS_SLOTS	512	/* per-CPU slots in .bss; CPUs beyond share the last (a power of 2) */

/**
 * DOC: who writes what
 *
 * The switches every program obeys are split by their writer, so that no
 * write of one side can undo the other's:
 *
 *   struct gate_config   (map gate_config)   written by userspace only
 *   struct gate_runtime  (map gate_runtime)  written by BPF (the gate and user
 *                                            trigger programs); userspace only
 *                                            clears it after the snapshot it
 *                                            asked for (gate__unfreeze())
 *   struct gate_stop     (map gate_stop)     written by BPF only: a stop is
 *                                            never undone, not even by the
 *                                            unfreeze of a snapshot taken
 *                                            meanwhile
 *
 * Arming, disarming or any other configuration update can then never clear
 * a freeze a snapshot trigger set meanwhile. Both maps are shared by name
 * with user trigger programs (include/auxtrig/trigger.bpf.h).
 */

/**
 * struct gate_config - set by the loader
 * @armed:	set once everything is attached; programs do nothing before
 * @mark_type:	record type of auxtrig:mark (0: no marks in this run)
 * @all:	every process is a target (-a); else gate_targets lists them
 * @edges:	hardware trace is gated from userspace: trigger programs send
 *		their windows' edges (GATE_MSG_EDGE) on gate_ctl too
 * @stop_type:	record type of auxtrig:stop (0: no stop action in this run)
 */
struct gate_config {
	__u32 armed;
	__u32 mark_type;
	__u32 all;
	__u32 edges;
	__u32 stop_type;
	__u32 __pad;
};

/**
 * struct gate_runtime - set by BPF
 * @frozen:	a snapshot trigger fired: nothing is emitted until the recorder
 *		has taken the snapshot and clears it. Set with a
 *		compare-and-swap (64 bits: what BPF has): only the trigger that
 *		froze asks for a snapshot; one that fires while frozen has had its
 *		own records held back, so it asks for none (it counts as
 *		suppressed) and no snapshot lacks its triggering call
 * @freeze_at:	a delayed snapshot trigger (snapshot+T) fired: the first record
 *		past this bpf_ktime_get_ns() sets @frozen; 0: none pending
 */
struct gate_runtime {
	__u64 frozen;
	__u64 freeze_at;
};

/**
 * struct gate_stop - a stop action fired (map gate_stop, set by BPF only)
 * @at:		bpf_ktime_get_ns() from which nothing more is emitted: the
 *		stopping event's, or its deadline (stop+T); 0: no stop
 * @trigger:	what stopped: the --on trigger (1-based), or 1000 + the reason
 *		of a trigger program
 * @marked:	the auxtrig:stop record was emitted (once, by the stopping
 *		event itself; with stop+T the recorder writes it); 64 bits for
 *		the compare-and-swap BPF has
 *
 * A stop that is now sets @at before it emits its record. A record another
 * CPU emitted at the same instant may carry a later perf time than the stop
 * record (its time is taken after the gate's check), but only if it reached
 * its ring after @at was set: the recorder reads the rings' heads, then this
 * map, and cuts at the stop record whatever it reads once @at is set.
 */
struct gate_stop {
	__u64 at;
	__u32 trigger;
	__u32 __pad;
	__u64 marked;
};

/* The window user trigger programs open and close (auxtrig_resume/auxtrig_pause). */
#define GATE_USER_WINDOW	(GATE_MAX_WINDOWS - 1)

/* Control messages from user trigger programs carry trigger numbers from here. */
#define GATE_USER_TRIGGER_BASE	1000

/*
 * The layouts both sides compile against: this header is included by
 * bpf/gate/, user trigger programs and user/, so each of them checks
 * the same sizes and offsets.
 */
#define GATE_ABI_AT(type, field, off) _Static_assert(__builtin_offsetof(struct type, field) == (off), #type "." #field)
#define GATE_ABI_SIZE(type, size) _Static_assert(sizeof(struct type) == (size), #type " size")
GATE_ABI_SIZE(gate_trigger, 32);
GATE_ABI_AT(gate_trigger, n, 8);
GATE_ABI_AT(gate_trigger, delay_ns, 24);
GATE_ABI_SIZE(gate_trigger_stats, 40);
GATE_ABI_SIZE(gate_ctl_msg, 96);
GATE_ABI_AT(gate_ctl_msg, trigger, 4);
GATE_ABI_AT(gate_ctl_msg, time_ns, 24);
GATE_ABI_AT(gate_ctl_msg, args, 40);
GATE_ABI_AT(gate_ctl_msg, delay_ns, 88);
GATE_ABI_SIZE(gate_edge_stats, 16);
GATE_ABI_SIZE(gate_tp, 64);
GATE_ABI_AT(gate_tp, str_off, 56);
GATE_ABI_AT(gate_tp, __pad, 60);
GATE_ABI_AT(gate_tp, trig_mask, 28);
GATE_ABI_AT(gate_tp, dyn_off, 32);
GATE_ABI_AT(gate_tp, dyn_flags, 48);
GATE_ABI_SIZE(gate_thread, 88);
GATE_ABI_AT(gate_thread, depth, 16);
GATE_ABI_AT(gate_thread, id, 80);
GATE_ABI_SIZE(gate_out_hdr, 16);
GATE_ABI_AT(gate_out_hdr, flags, 12);
GATE_ABI_SIZE(gate_verdict_rec, 16);
GATE_ABI_SIZE(gate_uprobe_enter_rec, 64);
GATE_ABI_AT(gate_uprobe_enter_rec, args, 16);
GATE_ABI_SIZE(gate_uprobe_exit_rec, 24);
GATE_ABI_AT(gate_uprobe_exit_rec, ret, 16);
GATE_ABI_SIZE(gate_mark_rec, 72);
GATE_ABI_AT(gate_mark_rec, ret, 16);
GATE_ABI_AT(gate_mark_rec, args, 24);
GATE_ABI_SIZE(gate_stats, 88);
GATE_ABI_SIZE(gate_config, 24);
GATE_ABI_AT(gate_config, stop_type, 16);
GATE_ABI_SIZE(gate_runtime, 16);
GATE_ABI_AT(gate_runtime, freeze_at, 8);
GATE_ABI_SIZE(gate_stop, 24);
/* read and written in place by the points' own programs (gate_front.c), by these offsets */
GATE_ABI_SIZE(gate_trig_pcpu, 40 * GATE_MAX_TRIGGERS + 48);
GATE_ABI_AT(gate_trig_pcpu, fire_mask, 40 * GATE_MAX_TRIGGERS);
GATE_ABI_AT(gate_trig_pcpu, cur_pid_tgid, 40 * GATE_MAX_TRIGGERS + 8);
GATE_ABI_AT(gate_trig_pcpu, where_tp, 40 * GATE_MAX_TRIGGERS + 24);
GATE_ABI_AT(gate_trig_pcpu, probe_key, 40 * GATE_MAX_TRIGGERS + 32);
GATE_ABI_AT(gate_trig_pcpu, probe_mask, 40 * GATE_MAX_TRIGGERS + 40);
GATE_ABI_SIZE(gate_call_key, 8);
GATE_ABI_SIZE(gate_call_frame, 56);
GATE_ABI_SIZE(gate_calls, 8 + 56 * GATE_CALL_DEPTH);
GATE_ABI_AT(gate_calls, frames, 8);
GATE_ABI_SIZE(gate_sys_entry, 64);
GATE_ABI_AT(gate_sys_entry, nr, 8);

#endif
