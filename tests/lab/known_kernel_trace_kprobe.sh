#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A kprobe window recorded with -e intel_pt/ptw/k: auxtrig script prints perf 6.1's branch lines
# for it byte for byte (perf reads the kept kcore directory).
# KNOWN GAP (lab, 6.12): with the kernel's code at hand, perf's decoder walks it from the window's
# TIP.PGE: every direct call and jump it passes is a branch sample, and a TIP.PGD without an IP
# ends the trace at the first conditional or indirect branch ("__rcu_read_lock+0x20 => 0").
# auxtrig's branch samples come from the IP packets only (user/decode/script_pt.c), as perf makes
# them without the code: it prints each window's TIP.PGE line and none of the walked branches.
# (The syscall windows of test_lab_kernel_trace reach a branch at once, so they agree.)
# tests/run.sh --lab-guest runs it only with AUXTRIG_KNOWN_FAILURES=1.
. "$(dirname "$0")/lib.sh"
need_trace_unit
fn=__x64_sys_getpid
d=$tmp/kprobe.data
"$AUXTRIG" record -e intel_pt/ptw/k -w "kprobe:$fn..kretprobe:$fn" -o "$d" -- "$DEMO" -r 4 >/dev/null 2>"$tmp/err" ||
	fail "record failed: $(cat "$tmp/err")"
perf script -i "$d" --itrace=b >"$tmp/perf" 2>"$tmp/perf.err" || fail "perf script -i DIR failed: $(tail -3 "$tmp/perf.err")"
"$AUXTRIG" script -i "$d" >"$tmp/ours" 2>"$tmp/ours.err" || fail "auxtrig script -i DIR failed: $(cat "$tmp/ours.err")"
[ -s "$tmp/perf" ] || fail "perf printed no sample"
cmp -s "$tmp/perf" "$tmp/ours" || { diff "$tmp/perf" "$tmp/ours" | head -6; fail "auxtrig's lines differ from perf's"; }
echo ok
