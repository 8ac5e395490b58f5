/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TRIGGER_PROG_H
#define AUXTRIG_TRIGGER_PROG_H

/*
 * record/ layer: --trigger-prog objects (user/record/trigger_prog.c),
 * loaded onto the gate's maps by the recorder.
 */

struct gate;
struct trigger_prog;

/**
 * trigger_prog__open() - load a user trigger object (--trigger-prog) whose
 * maps named like the gate's (gate_config, gate_runtime, gate_ctl, gate_threads,
 * gate_targets, gate_events; see include/auxtrig/trigger.bpf.h) become the
 * gate's own, and attach each of its programs as its SEC() name says. A path
 * ending in .bpf.c is compiled with clang first. After gate__load(), before
 * gate__arm().
 * Return: the object, or NULL with errno set (EINVAL: not a usable object; the
 * reason was printed).
 */
struct trigger_prog *trigger_prog__open(const char *path, struct gate *g);
void trigger_prog__close(struct trigger_prog *p);

#endif
