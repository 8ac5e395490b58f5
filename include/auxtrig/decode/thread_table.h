/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_THREAD_TABLE_H
#define AUXTRIG_THREAD_TABLE_H

/*
 * decode/ layer: the threads of a recording as perf knows them at one point
 * of its records (user/decode/thread_table.c); used by the hardware-trace
 * decoders of `auxtrig script` to say who a sample is.
 */

/**
 * DOC: threads at a point of the file
 *
 * perf script names a sample's thread by what the records delivered before
 * it said: a thread's comm is its last COMM (or, before any, what it
 * inherited at its FORK, else ":TID"), its pid the one its records gave, and
 * the thread running on a CPU the last context switch or ITRACE_START of
 * that CPU. A decoder replays the records in perf's order into a
 * &struct thread_table and asks it at each sample.
 */

#include <linux/types.h>

struct thread_table;
struct pdata_event;
struct pdata_sample;

/** thread_table__new() - a table with perf's idle thread (0, "swapper") only; NULL on ENOMEM. */
struct thread_table *thread_table__new(void);
/** thread_table__delete() - free it; NULL is fine. */
void thread_table__delete(struct thread_table *t);

/** thread_table__comm() - @tid's comm now, ":TID" (in @buf, 24 bytes) if it has none. */
const char *thread_table__comm(struct thread_table *t, __s32 tid, char *buf);
/** thread_table__pid() - @tid's pid as its records said, -1 if unknown. */
__s32 thread_table__pid(struct thread_table *t, __s32 tid);

/** thread_table__set_comm() - a COMM record: @pid/@tid is now called @comm. Return: 0 or -ENOMEM. */
int thread_table__set_comm(struct thread_table *t, __s32 pid, __s32 tid, const char *comm);
/** thread_table__fork() - a FORK record: @tid (of @pid) inherits @ptid's comm. Return: 0 or -ENOMEM. */
int thread_table__fork(struct thread_table *t, __s32 pid, __s32 tid, __s32 ptid);
/** thread_table__set_pid() - a record of @pid/@tid (sample, MMAP...): it is known. Return: 0 or -ENOMEM. */
int thread_table__set_pid(struct thread_table *t, __s32 pid, __s32 tid);

/**
 * thread_table__add_record() - what a record says about threads: a COMM
 * names one, a FORK makes one from its parent, a sample, MMAP or
 * ITRACE_START says its pid (@smp: the record's sample or sample_id, zeroed
 * if it has none). Context switches are the decoder's to interpret.
 * Return: 0 or -ENOMEM.
 */
int thread_table__add_record(struct thread_table *t, const struct pdata_event *ev, const struct pdata_sample *smp);

/**
 * thread_table__set_current() - @cpu now runs @pid/@tid (a context switch,
 * an ITRACE_START: perf's machine__set_current_tid()). Return: 0, -ENOMEM,
 * or -EINVAL for a CPU number out of range (ignored by callers).
 */
int thread_table__set_current(struct thread_table *t, int cpu, __s32 pid, __s32 tid);
/** thread_table__current() - the thread @cpu runs, -1 if none was said. */
__s32 thread_table__current(const struct thread_table *t, int cpu);

/**
 * thread_table__stack_event() - a branch of @tid, for its call depth as
 * perf's thread_stack__event() keeps it: a call pushes its return address,
 * a return or a trace start pops to the entry of its target, a new
 * @trace_nr (perf: the AUX buffer's number) empties the stack.
 * @flags: SCRIPT_IP_FLAG_* (script_line.h)
 * Return: 0 or -ENOMEM.
 */
int thread_table__stack_event(struct thread_table *t, __s32 tid, __u32 flags, __u64 from, __u64 to,
			      unsigned int insn_len, __u64 trace_nr);
/** thread_table__stack_depth() - @tid's call depth, -1 if it has no stack yet. */
int thread_table__stack_depth(struct thread_table *t, __s32 tid);

#endif
