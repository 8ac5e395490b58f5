#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# kprobe windows on the emulated Intel PT unit (a real kernel, not real hardware): a window from a
# kernel function's entry (kprobe) to its return (kretprobe). With aux_action (6.12) the group's
# members come from the kernel's "kprobe" PMU, the entry with aux_resume and the return with
# aux_pause: one TIP.PGE/TIP.PGD pair per call of the function by the target (getpid's syscall
# function, which only openat_demo's getpid() reaches), the PTWRITEs inside naming the demo's
# thread, nothing outside a window; perf 6.1 and auxtrig script read the same. Without it (6.1)
# the gate's kprobe programs send the edges and auxtrig gates the trace from userspace.
. "$(dirname "$0")/lib.sh"
need_trace_unit
"$AUXTRIG" probe | grep -q '^ *bpf kprobe *ok' || fail "the lab guests have kprobes: auxtrig probe says $("$AUXTRIG" probe | grep kprobe)"
fn=__x64_sys_getpid
grep -q " $fn\$" /proc/kallsyms || fail "no $fn in /proc/kallsyms (an x86-64 kernel's getpid syscall function)"

record_pt_windows "kprobe:$fn..kretprobe:$fn" 4
if [ $in_kernel = 1 ]; then
	# The members: the kprobe PMU's, resume at the entry, pause at the return.
	"$AUXTRIG" record --dry-run -vv -e intel_pt/ptw/u -w "kprobe:$fn..kretprobe:$fn" -- "$DEMO" >"$tmp/dry" 2>&1 ||
		fail "--dry-run failed: $(cat "$tmp/dry")"
	grep -q "kprobe:$fn" "$tmp/dry" && grep -q "kretprobe:$fn" "$tmp/dry" || fail "no kprobe members in --dry-run: $(cat "$tmp/dry")"
fi
echo ok
