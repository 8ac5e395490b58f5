#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# script --format=chrome on recordings of known behaviour, checked with jq:
# uprobe windows nested by recursion with their return values, syscall
# windows as long as the workload's sleeps, marks with their values on the
# threads that fired them, START..STOP windows, a snapshot trigger.
. "$(dirname "$0")/lib.sh"
need_root
command -v jq >/dev/null || fail "jq is missing: run 'make deps'"

timeline() { # timeline NAME RECORD-ARGS... -- COMMAND...: $tmp/NAME.json
	local name=$1; shift
	"$AUXTRIG" record -q -o "$tmp/$name.data" "$@" >"$tmp/$name.out" 2>&1 || fail "$name: record failed: $(cat "$tmp/$name.out")"
	"$AUXTRIG" script --format=chrome -i "$tmp/$name.data" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		fail "$name: script --format=chrome failed: $(cat "$tmp/$name.err")"
	jq -e . "$tmp/$name.json" >/dev/null || fail "$name: not JSON"
}
q() { jq -r "$2" "$tmp/$1.json"; }

# uprobe_demo: 5 rounds of handle(2), which recurses twice: 15 calls, the
# outermost returning 3, the next 2, the innermost 1, each inside its caller;
# every level calls getppid() once.
timeline uprobe -w "uprobe:$build/examples/uprobe_demo:handle" -e syscalls:sys_enter_getppid -- "$build/examples/uprobe_demo"
assert_eq "$(q uprobe '[.traceEvents[] | select(.ph == "X" and .name == "handle")] | length')" 15 "handle() slices"
for r in 1 2 3; do
	assert_eq "$(q uprobe "[.traceEvents[] | select(.ph == \"X\" and .args.ret == $r)] | length")" 5 "calls returning $r"
done
# nesting: each call returning r lies inside one returning r + 1
nested=$(q uprobe '[.traceEvents[] | select(.ph == "X")] as $s | [$s[] | select(.args.ret < 3) as $in |
	[$s[] | select(.args.ret == $in.args.ret + 1 and .ts <= $in.ts and .ts + .dur >= $in.ts + $in.dur)] | length] | unique | join(",")')
assert_eq "$nested" 1 "each inner call inside exactly one caller"
assert_eq "$(q uprobe '[.traceEvents[] | select(.ph == "i" and .name == "syscalls:sys_enter_getppid")] | length')" 15 \
	"getppid() instants (inside handle() only)"

# sleep_pattern SMF: clock_nanosleep windows of 60 ms, 3 ms and 0.1 ms, each at
# least its sleep and at most 1 s more (emulated machines wake very late)
timeline sleep -w syscall:clock_nanosleep -- "$build/examples/sleep_pattern" SMF
q sleep '[.traceEvents[] | select(.ph == "X" and .name == "clock_nanosleep")] | sort_by(.ts) | .[].dur' >"$tmp/durs"
assert_eq "$(wc -l <"$tmp/durs")" 3 "clock_nanosleep slices"
paste "$tmp/durs" <(printf '60000\n3000\n100\n') | awk '$1 < $2 || $1 > $2 + 1000000 { bad = 1 } END { exit bad }' ||
	fail "sleep durations (us) not 60000, 3000, 100 (+1 s at most): $(tr '\n' ' ' <"$tmp/durs")"
assert_eq "$(q sleep '[.traceEvents[] | select(.ph == "X") | .cat] | unique | join(",")')" window "category of -w windows"

# openat_demo, 3 threads x 3 rounds: 9 failed openat, each marked on its own thread
timeline marks -w syscall:openat --on 'syscall:openat:exit if ret < 0:mark' -- "$DEMO" -r 3 -t 2
assert_eq "$(q marks '[.traceEvents[] | select(.ph == "i" and .name == "mark: syscall:openat:exit if ret < 0:mark" and .args.ret == -2 and .args.nr == '"$(syscall_nr openat)"')] | length')" 9 \
	"marks with their values"
assert_eq "$(q marks '[.traceEvents[] | select(.ph == "i") | .tid] | group_by(.) | map(length) | join(",")')" 3,3,3 \
	"marks per thread"
assert_eq "$(q marks '[.traceEvents[] | select(.ph == "M" and .name == "thread_name")] | length')" 3 "named threads"
assert_eq "$(q marks '[.traceEvents[] | select(.ph == "X" and .name == "openat")] | length')" 18 "openat slices"

# START..STOP: each successful openat until its close
timeline points -w 'syscall:openat:exit..syscall:close:enter' --where 'ret >= 0' -- "$DEMO" -r 3
assert_eq "$(q points '[.traceEvents[] | select(.ph == "X" and .name == "syscall:openat:exit..syscall:close:enter")] | length')" 3 \
	"START..STOP slices"

# a snapshot trigger: an instant on the thread whose failed openat fired it
timeline snap -S -e syscalls:sys_enter_openat --on 'syscall:openat:exit if ret < 0:snapshot,once' -- "$DEMO" -r 3
pid=$(sed -n 's/^openat_demo: pid \([0-9]*\),.*/\1/p' "$tmp/snap.out")
assert_eq "$(q snap "[.traceEvents[] | select(.ph == \"i\" and .name == \"snapshot 1\" and .tid == $pid and .args.value == -2)] | length")" 1 \
	"the snapshot on the triggering thread"
echo ok
