/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_RECORDER_H
#define AUXTRIG_RECORDER_H

/*
 * record/ layer: the recorder (user/record/recorder.c), which runs a plan
 * through the objects of record/; called by cmd/record.c.
 */

#include <stdbool.h>

#include "auxtrig/record/plan.h"

/**
 * DOC: the recorder
 *
 * Records a resolved plan (include/auxtrig/record/plan.h) into a perf.data
 * file. Its phases, each owned by an object of user/record/:
 *
 *   window_map__build()     the windows, translated once (window_map.c)
 *   hw_trace__decide()      hardware trace: which path (hw_trace.c)
 *   gate__open() .. load()  the BPF gate, configured from plan and map (gate.c)
 *   target, hw_trace__setup(), cpu_events__open()/__follow() (cpu_events.c)
 *   gate__attach(), control__open() (control.c), the file's header
 *   arm, start the command, the loop: rings -> sink (sink.c), triggers,
 *   control, signals, timers; snapshots
 *   disarm, last drain, losses and counters, close, summary
 */

/** recorder__run() - record as @p says. Return: a process exit code (cmd.h). */
int recorder__run(const struct record_plan *p);

struct perf_sys;

/**
 * recorder__run_with() - recorder__run() with hardware trace (-e PMU//)
 * opened through @aux_sys, the perf system calls of the AUX session
 * (perf_sys.h); NULL = the running kernel. The per-CPU output events and
 * the gate's always use the running kernel (the gate's BPF programs need
 * real perf events). The same code runs either way: tests hand in a model
 * of the kernel's AUX ring for PMUs this machine lacks.
 */
int recorder__run_with(const struct record_plan *p, const struct perf_sys *aux_sys);

#endif
