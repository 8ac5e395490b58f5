#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SIGKILL of a recording leaves nothing behind: the command it started is
# gone (a process attached with -p is left alone), none of its BPF programs,
# maps or links stays in the kernel, no probe stays in tracefs, and the file
# holds what was recorded so far (after `auxtrig repair`, which closes the
# moment between a round's data and its header).
. "$(dirname "$0")/lib.sh"
need_root
need_perf
command -v bpftool >/dev/null || skip "needs bpftool (make deps installs it)"
UPD=$build/examples/uprobe_demo
tracefs=/sys/kernel/tracing
[ -f $tracefs/uprobe_events ] || tracefs=/sys/kernel/debug/tracing

# The BPF objects a process holds, one "prog|map|link ID" a line, from its fds' fdinfo.
bpf_objects() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		sed -n 's/^\(prog\|map\|link\)_id:[[:space:]]*\([0-9]*\)$/\1 \2/p' "$f" 2>/dev/null
	done | sort -u
}
# The perf events a process holds.
perf_fds() { find /proc/"$1"/fd -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l; }
# Until a process is gone (reaped: a zombie still answers kill -0) or 10 s.
gone() {
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}
# The objects of "$@" (prog|map|link ID lines on stdin) still in the kernel after 10 s:
# the kernel frees them once the last fd closes, after an RCU grace period.
left_in_kernel() {
	local objs left i
	objs=$(cat)
	for ((i = 0; i < 100; i++)); do
		left=$(while read -r kind id; do
			[ -n "$id" ] && bpftool "$kind" show id "$id" >/dev/null 2>&1 && echo "$kind $id"
		done <<<"$objs")
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	echo "$left"
}
# perf reads FILE; its one allowed warning is the loss the file records (a workload this fast
# can fill a ring on a loaded machine: losses are counted in the file, not a fault of the kill).
assert_perf_reads() {
	perf report -D -i "$1" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed on $1: $(tail -3 "$tmp/dump.err")"
	grep -viE '^Warning:$|^Processed [0-9]* (events|samples) and lost [0-9.]*%? ?(chunks|samples)?!$|^Check IO/CPU overload!$|^$' \
		"$tmp/dump.err" && fail "perf report -D warns about $1: $(head -5 "$tmp/dump.err")"
	perf script -i "$1" >/dev/null 2>"$tmp/script.err" || fail "perf script failed on $1"
	grep -viE '^Warning:$|^Processed [0-9]* (events|samples) and lost |^Check IO/CPU overload!$|^$' \
		"$tmp/script.err" | grep -iE 'warning|error|incompatible|reserved bits|failed' &&
		fail "perf script warns about $1: $(head -5 "$tmp/script.err")"
	return 0
}
probes_before=$(cat $tracefs/uprobe_events $tracefs/kprobe_events 2>/dev/null | sort)

# 1. A command (uprobe windows on a function, a syscall tracepoint inside them): SIGKILL mid-run.
record_bg "$tmp/k.err" -w "uprobe:$UPD:handle" -e syscalls:sys_enter_getppid -o "$tmp/k.data" -- "$UPD" 1000000000 2
cmd=$(pgrep -P $aux -x uprobe_demo) || fail "no uprobe_demo child of auxtrig"
wait_size "$tmp/k.data" 65536 $aux
objs=$(bpf_objects $aux)
grep -q '^prog ' <<<"$objs" || fail "auxtrig holds no BPF program while recording: the check below would prove nothing"
[ "$(perf_fds $aux)" -gt 0 ] || fail "auxtrig holds no perf event while recording"
kill -KILL $aux || fail "auxtrig ended before it was killed: $(cat "$tmp/k.err")"
wait $aux 2>/dev/null
if ! gone "$cmd"; then
	kill -KILL "$cmd"
	fail "the command auxtrig started (pid $cmd) still runs 10 s after auxtrig was SIGKILLed"
fi
left=$(left_in_kernel <<<"$objs")
[ -z "$left" ] || fail "BPF objects of the killed auxtrig still in the kernel: $(echo $left)"
assert_eq "$(cat $tracefs/uprobe_events $tracefs/kprobe_events 2>/dev/null | sort)" "$probes_before" \
	"tracefs probes after the kill"
# What was recorded is readable: perf reads the repaired file cleanly, windows and all.
"$AUXTRIG" repair "$tmp/k.data" >"$tmp/repair.out" || fail "repair failed: $(cat "$tmp/repair.out")"
assert_perf_reads "$tmp/k.data"
n=$(pscript "$tmp/k.data" | grep -c 'auxtrig:uprobe_enter: window=0 depth=1 ')
[ "$n" -gt 10 ] || fail "only $n windows in the file of the killed recording"

# 2. A process attached with -p is not auxtrig's: it runs on after the kill.
"$DEMO" -r 1000000000 >/dev/null &
victim=$!
record_bg "$tmp/p.err" -w syscall:openat -o "$tmp/p.data" -p $victim
wait_size "$tmp/p.data" 65536 $aux
objs=$(bpf_objects $aux)
kill -KILL $aux
wait $aux 2>/dev/null
sleep 0.5
if ! kill -0 $victim 2>/dev/null; then
	fail "the process attached with -p died with auxtrig"
fi
{ kill -KILL $victim && wait $victim; } 2>/dev/null
left=$(left_in_kernel <<<"$objs")
[ -z "$left" ] || fail "BPF objects of the killed auxtrig (-p) still in the kernel: $(echo $left)"
"$AUXTRIG" repair "$tmp/p.data" >/dev/null || fail "repair failed on the -p file"
assert_perf_reads "$tmp/p.data"
[ "$(pscript "$tmp/p.data" | grep -c 'sys_enter_openat:')" -gt 10 ] || fail "no windows in the -p file"

# 3. Killed before the command ever ran (while still arming): the held child leaves too.
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/e.data" -- "$DEMO" -r 1000000000 >/dev/null 2>&1 &
aux=$!
for ((i = 0; i < WAIT * 20; i++)); do
	early=$(pgrep -P $aux) && break
	sleep 0.01
done
[ -n "${early:-}" ] || fail "auxtrig never forked its command"
kill -KILL $aux
wait $aux 2>/dev/null
gone "$early" || { kill -KILL "$early"; fail "the command forked by a killed auxtrig (pid $early) still runs"; }
echo ok
