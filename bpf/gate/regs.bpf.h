/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_REGS_BPF_H
#define AUXTRIG_GATE_REGS_BPF_H

/*
 * The gate's access to a probe's registers beyond what bpf/bpf_tracing.h
 * gives on every libbpf the build meets.
 */
#include <bpf/bpf_tracing.h>

/* libbpf 1.1 (Debian 12) stops at PT_REGS_PARM5; later versions define the sixth. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) ((x)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x) (((const struct user_pt_regs *)(x))->regs[5])
#endif
#endif

#endif
