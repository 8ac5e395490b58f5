// SPDX-License-Identifier: BSD-2-Clause
/*
 * A trigger the expression language cannot say: snapshot when a thread's
 * third consecutive read() fails. The count of failures in a row lives in a
 * map of our own, per thread; a read that succeeds resets it.
 *
 *   auxtrig record -S -e syscalls:sys_enter_close \
 *       --trigger-prog build/examples/triggers/read_fails.bpf.o -- ./app
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "auxtrig/trigger.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define REASON_THIRD_READ_FAILURE 3

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} fails_in_a_row SEC(".maps");

SEC("tp/syscalls/sys_exit_read")
int third_read_failure(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0, *n;
	long ret = ctx->ret;

	if (!auxtrig_armed() || !auxtrig_is_target())
		return AUXTRIG_PASS;
	if (ret >= 0) {
		bpf_map_delete_elem(&fails_in_a_row, &tid);
		return AUXTRIG_PASS;
	}
	n = bpf_map_lookup_elem(&fails_in_a_row, &tid);
	if (!n) {
		bpf_map_update_elem(&fails_in_a_row, &tid, &zero, BPF_ANY);
		n = bpf_map_lookup_elem(&fails_in_a_row, &tid);
		if (!n)
			return AUXTRIG_PASS;
	}
	if (++*n == 3)
		auxtrig_snapshot(ctx, REASON_THIRD_READ_FAILURE, ret);
	return AUXTRIG_PASS;
}
