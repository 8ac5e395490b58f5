// SPDX-License-Identifier: BSD-2-Clause
/*
 * A trigger program for test_aux_gate_fallback: the window is open during
 * every second clock_nanosleep() call of the target (the 2nd, 4th, 6th...),
 * opened with auxtrig_resume() at its entry and closed with auxtrig_pause()
 * at its exit. The workload (examples/window_clock) has one thread.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "auxtrig/trigger.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 calls;

SEC("tp/syscalls/sys_enter_clock_nanosleep")
int nanosleep_enter(void *ctx)
{
	if (!auxtrig_armed() || !auxtrig_is_target())
		return AUXTRIG_PASS;
	if (++calls % 2 == 0)
		auxtrig_resume(ctx);
	return AUXTRIG_PASS;
}

SEC("tp/syscalls/sys_exit_clock_nanosleep")
int nanosleep_exit(void *ctx)
{
	if (auxtrig_armed() && auxtrig_is_target())
		auxtrig_pause(ctx);
	return AUXTRIG_PASS;
}
