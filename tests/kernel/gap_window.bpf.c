// SPDX-License-Identifier: BSD-2-Clause
/*
 * A trigger program for tests/lab/test_lab_prog_windows: the window is open
 * in the busy gap after every odd clock_nanosleep() of the target (the 1st,
 * 3rd, 5th...), opened with auxtrig_resume() at that call's exit and closed
 * with auxtrig_pause() at the entry of the next clock_nanosleep(). The
 * workload (examples/window_clock, spinning in its gaps) has one thread, which
 * runs on a CPU for the whole window: hardware trace of the window is not
 * cut by the thread sleeping.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "auxtrig/trigger.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 calls;

SEC("tp/syscalls/sys_exit_clock_nanosleep")
int gap_open(void *ctx)
{
	if (!auxtrig_armed() || !auxtrig_is_target())
		return AUXTRIG_PASS;
	if (++calls % 2 == 1)
		auxtrig_resume(ctx);
	return AUXTRIG_PASS;
}

SEC("tp/syscalls/sys_enter_clock_nanosleep")
int gap_close(void *ctx)
{
	if (auxtrig_armed() && auxtrig_is_target())
		auxtrig_pause(ctx);
	return AUXTRIG_PASS;
}
