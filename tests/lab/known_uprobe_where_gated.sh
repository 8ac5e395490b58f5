#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# uprobe windows with --where, on the gate's path (kernel events; hardware trace gated from
# userspace: 6.1, SPE, or --where with a syscall window): uprobe_demo's handle(2) calls itself
# twice per round, so --where 'arg0 == 1' is true only for nested calls and, as with the in-kernel
# veto programs (test_lab_uprobe_where, test_aux_gate_fallback: none), must open no window.
# KNOWN FAILURE (lab 6.1, and any kernel for kernel events): 5 windows, one per round: the gate keeps
# no depth for a vetoed outermost call (gate_uprobe_enter), so the first nested call counts as the
# outermost and opens the window. tests/run.sh --lab-guest runs it only with AUXTRIG_KNOWN_FAILURES=1
# until fixed; then it becomes a test_*.sh.
. "$(dirname "$0")/lib.sh"
ud=$build/examples/uprobe_demo
"$AUXTRIG" record -w "uprobe:$ud:handle" --where 'arg0 == 1' -o "$tmp/w1.data" -- "$ud" 5 2 \
	>"$tmp/out" 2>"$tmp/err" || fail "record failed: $(cat "$tmp/err")"
n=$(sed -n 's/.*auxtrig record: \([0-9]*\) windows.*/\1/p' "$tmp/err")
[ -n "$n" ] || fail "no summary line: $(cat "$tmp/err")"
assert_eq "$n" 0 "windows opened by --where 'arg0 == 1' (nested calls only)"
echo ok
