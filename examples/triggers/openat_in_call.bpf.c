// SPDX-License-Identifier: BSD-2-Clause
/*
 * A uprobe and a syscall together: mark every openat() that fails while the
 * thread is inside a call of a user function. The function's calls are
 * auxtrig's window 0 (-w uprobe:PATH:SYMBOL, entry to return, recursion
 * counted); this program only asks whether the thread is in it.
 *
 *   auxtrig record -w uprobe:build/examples/uprobe_demo:handle \
 *       --trigger-prog build/examples/triggers/openat_in_call.bpf.o -- build/examples/uprobe_demo
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "auxtrig/trigger.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define REASON_OPENAT_FAILED_IN_CALL 7

SEC("tp/syscalls/sys_exit_openat")
int openat_failed_in_call(struct trace_event_raw_sys_exit *ctx)
{
	long ret = ctx->ret;

	if (!auxtrig_armed() || !auxtrig_is_target() || ret >= 0)
		return AUXTRIG_PASS;
	if (auxtrig_in_window(0))
		auxtrig_mark(ctx, REASON_OPENAT_FAILED_IN_CALL, ret);
	return AUXTRIG_PASS;
}
