#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# -p PID: record a process that already runs (all its threads), and stop by
# itself when it exits. Its existing threads are described in the file.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

# The demo's threads exist, waiting, until auxtrig is armed; then they make their rounds.
"$DEMO" -r 400 -t 2 -W >"$tmp/demo.out" &
demo=$!
wait_for "$tmp/demo.out" "waiting" $demo
record_bg "$tmp/err" -w syscall:openat -o "$tmp/p.data" -p $demo
kill -USR1 $demo
wait $demo
wait $aux || fail "record -p failed: $(cat "$tmp/err")"
assert_perf_reads_cleanly "$tmp/p.data"
pscript "$tmp/p.data" >"$tmp/p.txt"
n=$(grep -c 'sys_enter_openat:' "$tmp/p.txt")
[ "$n" -gt 0 ] || fail "no windows recorded from a running process"
assert_eq "$(grep -c 'sys_exit_openat:' "$tmp/p.txt")" "$n" "exits match enters"
tids=$(awk '/sys_enter_openat:/ { print $2 }' "$tmp/p.txt" | sort -u | wc -l)
assert_eq "$tids" 3 "threads with windows (main + 2 existing threads)"
grep -v '^ *openat_demo ' "$tmp/p.txt" | grep . && fail "events from other processes"
# Existing threads were synthesized: perf knows their comm from the start.
perf script --show-task-events -i "$tmp/p.data" 2>/dev/null | grep -q 'PERF_RECORD_COMM.*openat_demo' ||
	fail "no COMM record for the running process"
echo ok
