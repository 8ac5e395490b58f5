#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Hardware-trace windows of every thread of the target, on the emulated Intel PT unit: openat_demo
# with one extra thread makes 2 x 4 getpid() calls, each a window of its own thread.
# KNOWN FAILURE (lab, 6.12): only the main thread's windows are traced; the thread the target
# creates has no AUX event (ITRACE_START only for the main thread; the groups are opened for the
# target's task without inherit). tests/run.sh --lab-guest runs it only with AUXTRIG_KNOWN_FAILURES=1 until fixed;
# then it becomes a test_lab_*.sh.
. "$(dirname "$0")/lib.sh"
need_trace_unit
kernel_aux_action || skip "the in-kernel path: needs a kernel with aux_action"
"$AUXTRIG" record -q -e intel_pt/ptw/u -w syscall:getpid -o "$tmp/pt.data" -- "$DEMO" -r 4 -t 1 \
	>"$tmp/demo.out" 2>"$tmp/err" || fail "record failed: $(cat "$tmp/err")"
pt_packets "$tmp/pt.data" >"$tmp/pkts"
windows_check "$tmp/pkts" >"$tmp/win" || fail "packets are not whole windows: $(grep BAD "$tmp/win")"
assert_eq "$(wc -l <"$tmp/win")" 8 "windows traced"
assert_eq "$(awk '{ print $1 }' "$tmp/win" | sort -u | wc -l)" 2 "threads traced"
echo ok
