#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Targets other than a command: -t TID (one thread), -a (every process), -C (some CPUs).
. "$(dirname "$0")/lib.sh"
need_root
need_perf

# -t: only the chosen thread's windows.
"$DEMO" -r 300 -t 2 -W >"$tmp/tdemo.out" &
demo=$!
wait_for "$tmp/tdemo.out" "waiting" $demo
tid=$(ls /proc/$demo/task | grep -vx $demo | head -1)
[ -n "$tid" ] || fail "demo has no extra thread"
record_bg "$tmp/t.err" -w syscall:openat -o "$tmp/t.data" -t "$tid"
kill -USR1 $demo
wait $demo
wait $aux || fail "record -t: $(cat "$tmp/t.err")"
assert_perf_reads_cleanly "$tmp/t.data"
pscript "$tmp/t.data" >"$tmp/t.txt"
[ "$(grep -c sys_enter_openat: "$tmp/t.txt")" -gt 0 ] || fail "no windows for -t $tid"
assert_eq "$(awk '{ print $2 }' "$tmp/t.txt" | sort -u)" "$tid" "threads recorded with -t"

# -a with a command: every process, for as long as the command runs.
# The command ends when the demo has run (a FIFO it reads), however slow the machine.
mkfifo "$tmp/a.end"
exec 9<>"$tmp/a.end"
record_bg "$tmp/a.err" -a -w syscall:openat -o "$tmp/a.data" -- sh -c 'read -r _ <"$1"' sh "$tmp/a.end"
"$DEMO" -r 10 >"$tmp/demo.out"
echo >&9
other=$(sed -n 's/^openat_demo: pid \([0-9]*\).*/\1/p' "$tmp/demo.out")
wait $aux || fail "record -a: $(cat "$tmp/a.err")"
assert_perf_reads_cleanly "$tmp/a.data"
n=$(perf script -F comm,pid,event -i "$tmp/a.data" 2>/dev/null | awk -v p="$other" '$1 == "openat_demo" && $2 == p' | grep -c sys_enter_openat)
assert_eq "$n" 20 "windows of a process auxtrig did not start, with -a"

# -C: events only from the chosen CPU, whichever CPUs this machine has. The workload
# is pinned to it and, where there is another CPU, away from it.
read -r -a cpus <<<"$(my_cpus)"
a=${cpus[0]}
taskset -c "$a" "$AUXTRIG" record -q -C "$a" -e syscalls:sys_enter_getpid -o "$tmp/c.data" -- "$DEMO" -r 50 -t 3 \
	>/dev/null || fail "record -C $a failed"
assert_perf_reads_cleanly "$tmp/c.data"
pscript "$tmp/c.data" >"$tmp/c.txt"
assert_eq "$(grep -c sys_enter_getpid: "$tmp/c.txt")" 200 "events on CPU $a with -C $a"
assert_eq "$(awk '{ print $3 }' "$tmp/c.txt" | sort -u)" "$(printf '[%03d]' "$a")" "CPUs recorded with -C $a"
if [ ${#cpus[@]} -gt 1 ]; then
	b=${cpus[1]}
	taskset -c "$b" "$AUXTRIG" record -q -C "$a" -e syscalls:sys_enter_getpid -o "$tmp/d.data" -- "$DEMO" -r 50 -t 3 \
		>/dev/null || fail "record -C $a failed"
	assert_eq "$(pscript "$tmp/d.data" | grep -c sys_enter_getpid:)" 0 "events on CPU $b with -C $a"
else
	echo "one CPU ($a) to run on: the workload cannot run away from the recorded CPU" >&2
fi
# A CPU this machine does not have is refused before anything starts.
nposs=$(wc -w <<<"$(cpulist "$(cat /sys/devices/system/cpu/possible)")")
"$AUXTRIG" record -q -C "$nposs" -e syscalls:sys_enter_getpid -o "$tmp/e.data" -- "$DEMO" -r 1 >/dev/null 2>"$tmp/e.err"
assert_eq $? 2 "exit code of -C $nposs"
grep -q "^auxtrig: -C $nposs: expected a list of CPUs 0-$((nposs - 1)) " "$tmp/e.err" || fail "-C $nposs: $(cat "$tmp/e.err")"
[ ! -e "$tmp/e.data" ] || fail "-C $nposs left a file"
echo ok
