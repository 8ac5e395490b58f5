#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# uprobe windows with --where on the gate's path, driving the emulated Intel PT unit from
# userspace: the gate opens a window only at an outermost call where --where holds; the calls
# nested in a vetoed call and its return neither open nor close it (as the in-kernel veto
# programs do, test_lab_uprobe_where). uprobe_demo's handle(2) calls itself twice per round:
# --where 'arg0 == 1' holds only for a nested call, so it opens no window; 'every 2' counts
# outermost calls only. The gate once kept no depth for a vetoed call: 'arg0 == 1' opened a window
# at every round's first nested call. On 6.1 the kernel lacks aux_action; on 6.12 a syscall window
# next to the uprobe one makes the run gated from userspace (--where cannot veto the kernel's
# aux_resume at a tracepoint; the demo never calls sync(), so that window never opens).
# The same semantics with kernel events only: tests/kernel/test_record_uprobe.sh.
. "$(dirname "$0")/lib.sh"
need_trace_unit
ud=$build/examples/uprobe_demo

# run NAME ROUNDS WHERE: record uprobe_demo ROUNDS 2 on the trace unit, gated.
run() {
	"$AUXTRIG" record -e intel_pt/ptw/u -w "uprobe:$ud:handle" -w syscall:sync --where "$3" -o "$tmp/$1.data" \
		-- "$ud" "$2" 2 >"$tmp/$1.out" 2>"$tmp/$1.err" || fail "record ($1) failed: $(cat "$tmp/$1.err")"
	cat "$tmp/$1.err" >&2
	grep -q 'hardware trace gated from userspace: ' "$tmp/$1.err" ||
		fail "$1: not gated from userspace: $(cat "$tmp/$1.err")"
	pt_packets "$tmp/$1.data" >"$tmp/$1.pkts"
	pt_spans "$tmp/$1.pkts" >"$tmp/$1.spans" || fail "$1: $(grep BAD "$tmp/$1.spans")"
}

# --where 'arg0 == 1': only nested calls hold it: no window, no edge, no trace.
run where1 5 'arg0 == 1'
grep -q 'auxtrig record: 0 windows' "$tmp/where1.err" || fail "--where 'arg0 == 1' opened windows"
grep -q 'hardware trace gated from userspace: 0 edges sent' "$tmp/where1.err" ||
	fail "--where 'arg0 == 1' sent edges: $(grep 'hardware trace' "$tmp/where1.err")"
assert_eq "$(wc -l <"$tmp/where1.spans")" 0 "spans traced with --where 'arg0 == 1'"

# --where 'every 2' over 6 rounds: the 2nd, 4th and 6th outermost calls, each to its own return.
run every2 6 'every 2'
grep -q 'auxtrig record: 3 windows' "$tmp/every2.err" || fail "--where 'every 2': not 3 windows"
grep -q 'hardware trace gated from userspace: 6 edges sent (3 opens, 3 closes acted on)' "$tmp/every2.err" ||
	fail "--where 'every 2': not the 3 windows' edges: $(grep 'hardware trace' "$tmp/every2.err")"
[ -s "$tmp/every2.spans" ] || fail "--where 'every 2': no trace"
awk '$4 != "start" || $6 != "stop" { print "span " $3 ": " $4 ".." $6 }' "$tmp/every2.spans" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "spans not switched by the gate or the scheduler: $(head -3 "$tmp/bad")"
echo ok
