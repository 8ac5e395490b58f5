#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Syscall windows on the emulated Intel PT unit (a real kernel, not real hardware). With aux_action
# (6.12): sys_enter_getpid resumes and sys_exit_getpid pauses the trace in the kernel, one
# TIP.PGE/TIP.PGD pair per call, the PTWRITEs inside naming the calling thread, nothing outside a
# window; perf 6.1 and auxtrig script read the same. Without it (6.1): aux_action is refused, the
# run takes the userspace-gated path and says so; its edge-to-ioctl latency is measured and
# printed, and windows shorter than that round trip are counted as missed, never half-traced.
. "$(dirname "$0")/lib.sh"
need_trace_unit

record_pt_windows syscall:getpid 4
if [ $in_kernel = 0 ]; then
	grep -q "intel_pt/ptw/u: this kernel has no aux_action" "$tmp/err" || fail "no word of the missing aux_action: $(cat "$tmp/err")"
	lat=$(grep -o 'edge-to-ioctl latency median [0-9.]* us, p99 [0-9.]* us' "$tmp/err") ||
		fail "no measured latency: $(cat "$tmp/err")"
	echo "measured on this guest: $lat" >&2
fi
echo ok
