#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A BPF program on a tracepoint filters it for every perf user (results are
# ANDed). auxtrig's gate must never hide events from a concurrent perf record.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

rounds=20
perf_record_bg "$tmp/perf.err" -q -e syscalls:sys_enter_openat,syscalls:sys_exit_openat -a -o "$tmp/perf.data"
# auxtrig records windows for one demo, while another demo runs outside any window.
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/a.data" -- "$DEMO" -r $rounds >/dev/null &
aux_pid=$!
"$DEMO" -r $rounds >"$tmp/other.out"
other=$(sed -n 's/^openat_demo: pid \([0-9]*\).*/\1/p' "$tmp/other.out")
wait $aux_pid || fail "auxtrig failed"
perf_record_end "$tmp/perf.err"

n=$(perf script -F comm,pid,event -i "$tmp/perf.data" 2>/dev/null | awk -v p="$other" '$1 == "openat_demo" && $2 == p' | grep -c sys_enter_openat)
assert_eq "$n" $((2 * rounds)) "perf's openat events of the demo auxtrig did not trace"
n=$(perf script -F comm,pid,event -i "$tmp/perf.data" 2>/dev/null | awk -v p="$other" '$1 == "openat_demo" && $2 == p' | grep -c sys_exit_openat)
assert_eq "$n" $((2 * rounds)) "perf's openat exits of that demo"
n=$(pscript "$tmp/a.data" | grep -c sys_enter_openat)
assert_eq "$n" $((2 * rounds)) "auxtrig's windows"
echo ok
