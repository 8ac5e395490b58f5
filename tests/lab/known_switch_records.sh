#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# perf 6.1 decodes a per-thread Intel PT file auxtrig wrote (issue #10, 4a): perf script --itrace=w
# gives the PTWRITEs of the emulated unit, one per window edge, with their thread.
# KNOWN FAILURE (lab, 6.12 and 6.1): perf stops with "Expecting CPU-wide context switch event":
# the AUXTRACE_INFO says HAVE_SCHED_SWITCH 3 (CPU-wide switch records) while the tracking event
# records per-thread switches. tests/run.sh --lab-guest runs it only with AUXTRIG_KNOWN_FAILURES=1 until fixed;
# then it becomes a test_lab_*.sh.
. "$(dirname "$0")/lib.sh"
need_trace_unit
kernel_aux_action || skip "the in-kernel path: needs a kernel with aux_action"
"$AUXTRIG" record -q -e intel_pt/ptw/u -w syscall:getpid -o "$tmp/pt.data" -- "$DEMO" -r 4 \
	>"$tmp/demo.out" 2>"$tmp/err" || fail "record failed: $(cat "$tmp/err")"
pid=$(sed -n 's/^openat_demo: pid \([0-9]*\).*/\1/p' "$tmp/demo.out")
perf script --itrace=w -F tid,synth -i "$tmp/pt.data" >"$tmp/w.txt" 2>"$tmp/w.err" ||
	fail "perf script --itrace=w failed: $(tail -3 "$tmp/w.err")"
assert_eq "$(grep -c 'payload' "$tmp/w.txt")" 8 "PTWRITE samples"
assert_eq "$(awk '{ print $1 }' "$tmp/w.txt" | sort -u)" "$pid" "their thread"
echo ok
