#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --on: triggers decided in the kernel. The error-path freeze ends the trace
# exactly at the failure; conditions on ret and on a tracepoint's own fields;
# rate policies; the stop action; refused specs.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
SEQ=$build/examples/seq_demo


# 1. Flight recorder frozen by a failing openat at a known point (call #1500).
taskset -c "$(one_cpu)" "$AUXTRIG" record -S64K -e syscalls:sys_enter_close,syscalls:sys_exit_openat \
	--on 'syscall:openat:exit if ret == -ENOENT:snapshot,once' -o "$tmp/f.data" -- "$SEQ" 3000 1 1500 \
	>/dev/null 2>"$tmp/f.err" || fail "record failed: $(cat "$tmp/f.err")"
assert_perf_reads_cleanly "$tmp/f.data"
seqs "$tmp/f.data" >"$tmp/f.seq"
assert_eq "$(tail -1 "$tmp/f.seq")" 1499 "the last record before the failure"
assert_eq "$(awk '$1 >= 1500' "$tmp/f.seq" | wc -l)" 0 "records after the failure"
n=$(wc -l <"$tmp/f.seq")
[ "$n" -gt 100 ] || fail "the snapshot holds only $n records"
awk 'NR > 1 && $1 != prev + 1 { exit 1 } { prev = $1 }' "$tmp/f.seq" || fail "the snapshot has gaps"
perf script -F event,trace -i "$tmp/f.data" 2>/dev/null | grep -v trigger_stats | tail -2 >"$tmp/f.tail"
grep -q 'sys_exit_openat: 0xfffffffffffffffe' "$tmp/f.tail" || fail "the failing openat is not the end: $(cat "$tmp/f.tail")"
grep -q "auxtrig:snapshot: nr=1 reason=on#1 records=$((n + 1)) tid=[0-9]* value=-2" "$tmp/f.tail" ||
	fail "no marker with the trigger's values: $(cat "$tmp/f.tail")"
grep -q 'evaluated 1, matched 1, fired 1, suppressed 0, dropped 0' "$tmp/f.err" || fail "counters: $(cat "$tmp/f.err")"

# 2. A condition on the tracepoint's own field, by name.
taskset -c "$(one_cpu)" "$AUXTRIG" record -S64K -e syscalls:sys_enter_close \
	--on 'tp:syscalls:sys_enter_close if fd == 1000700:snapshot' -o "$tmp/t.data" -- "$SEQ" 2000 1 \
	>/dev/null 2>"$tmp/t.err" || fail "record failed: $(cat "$tmp/t.err")"
assert_eq "$(seqs "$tmp/t.data" | tail -1)" 700 "the record that fired the field condition"

# 3. Rate policies: of 10 failing openat calls, every:3 lets 3, 6, 9 through, after:8 8, 9, 10.
# Each of those takes a snapshot, unless the previous one is still being taken (the rounds are
# 1 ms apart: on a busy machine it may be): then it takes none and counts as suppressed too.
# counters FILE: "fired suppressed" of trigger 1 from the summary
counters() { sed -n 's/.*evaluated 20, matched 10, fired \([0-9]*\), suppressed \([0-9]*\), dropped 0$/\1 \2/p' "$1"; }
"$AUXTRIG" record -S -e syscalls:sys_enter_close --on 'syscall:openat:exit if ret < 0:snapshot,every:3' \
	-o "$tmp/p.data" -- "$DEMO" -r 10 >/dev/null 2>"$tmp/p.err" || fail "record failed: $(cat "$tmp/p.err")"
read -r fired supp <<<"$(counters "$tmp/p.err")"
[ -n "$fired" ] && [ "$fired" -ge 1 ] && [ "$fired" -le 3 ] && [ $((fired + supp)) -eq 10 ] ||
	fail "every:3 counters: $(cat "$tmp/p.err")"
assert_eq "$(perf script -i "$tmp/p.data" 2>/dev/null | grep -c 'auxtrig:snapshot:')" "$fired" "snapshots from every:3"
# The counters are in the file too.
perf script -i "$tmp/p.data" 2>/dev/null |
	grep -q "auxtrig:trigger_stats: trigger=1 evaluated=20 matched=10 fired=$fired suppressed=$supp dropped=0" ||
	fail "no trigger_stats record with the counters"
"$AUXTRIG" record -S -e syscalls:sys_enter_close --on 'syscall:openat:exit if ret == -ENOENT:snapshot,after:8' \
	-o "$tmp/a.data" -- "$DEMO" -r 10 >/dev/null 2>"$tmp/a.err" || fail "record failed"
read -r fired supp <<<"$(counters "$tmp/a.err")"
[ -n "$fired" ] && [ "$fired" -ge 1 ] && [ "$fired" -le 3 ] && [ $((fired + supp)) -eq 10 ] ||
	fail "after:8 counters: $(cat "$tmp/a.err")"

# 3b. mark: an annotation in the file with the values that fired it, every second failure.
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'syscall:openat:exit if ret == -ENOENT:mark,every:2' \
	-o "$tmp/m.data" -- "$DEMO" -r 10 >/dev/null 2>"$tmp/m.err" || fail "record failed: $(cat "$tmp/m.err")"
assert_perf_reads_cleanly "$tmp/m.data"
assert_eq "$(pscript "$tmp/m.data" | grep -c "auxtrig:mark: trigger=1 nr=$(syscall_nr openat) ret=-2 ")" 5 "marks (every:2 of 10 failures)"
assert_eq "$(pscript "$tmp/m.data" | grep -c 'sys_enter_getpid:')" 10 "events recorded alongside the marks"

# 4. stop: the run ends at the first failure, long before the workload would.
start=$(date +%s)
"$AUXTRIG" record -w syscall:openat --on 'syscall:openat:exit if ret == -ENOENT:stop,once' \
	-o "$tmp/s.data" -- "${with_id[@]}" "$tmp/s.id" "$DEMO" -r 100000 >/dev/null 2>"$tmp/s.err" ||
	fail "record failed: $(cat "$tmp/s.err")"
[ $(($(date +%s) - start)) -lt 10 ] || fail "stop did not end the run"
grep -q 'fired 1' "$tmp/s.err" || fail "stop counters: $(cat "$tmp/s.err")"
assert_perf_reads_cleanly "$tmp/s.data"
# auxtrig reaps its command before it exits: this run's workload is gone, not merely dying
! workload_running "$tmp/s.id" || fail "the workload outlived a stop: $(cat "/proc/$(cut -d' ' -f1 "$tmp/s.id")/stat")"
# ... and nothing later than the stopping event is in the file: the gate emits nothing from
# then on, on any CPU, and the file ends at an auxtrig:stop record with the stopping values.
# Two threads keep making calls after the third failing openat (the stopping event).
"$AUXTRIG" record -e syscalls:sys_enter_getpid,syscalls:sys_enter_close,syscalls:sys_exit_openat \
	--on 'syscall:openat:exit if ret == -ENOENT:stop,after:3' -o "$tmp/s2.data" -- "$DEMO" -r 100000 -t 1 \
	>/dev/null 2>"$tmp/s2.err" || fail "record failed: $(cat "$tmp/s2.err")"
assert_perf_reads_cleanly "$tmp/s2.data"
perf script --ns -F pid,time,event,trace -i "$tmp/s2.data" 2>/dev/null | grep -v 'auxtrig:trigger_stats:' >"$tmp/s2.txt"
assert_eq "$(grep -c 'auxtrig:stop: trigger=1 nr=[0-9]* ret=-2 ' "$tmp/s2.txt")" 1 "auxtrig:stop records"
assert_eq "$(tail -1 "$tmp/s2.txt" | grep -c 'auxtrig:stop:')" 1 "the stop is the file's last record (last: $(tail -1 "$tmp/s2.txt"))"
[ "$(grep -c 'sys_exit_openat: 0xfffffffffffffffe$' "$tmp/s2.txt")" -ge 3 ] || fail "the stopping openat is missing: $(tail -5 "$tmp/s2.txt")"
[ "$(grep -c 'sys_enter_close:' "$tmp/s2.txt")" -ge 1 ] || fail "nothing recorded before the stop"
grep -q "^auxtrig: stopped by --on syscall:openat:exit if ret == -ENOENT:stop,after:3 (tid [0-9]*): the file ends at its auxtrig:stop record; [0-9]* later records\? not written$" \
	"$tmp/s2.err" || fail "no word of where it stopped: $(cat "$tmp/s2.err")"

# 5. Refused before anything is attached.
bad() { "$AUXTRIG" record -S -e syscalls:sys_enter_close --on "$1" -o "$tmp/x.data" -- true 2>"$tmp/x.err"
	assert_eq $? 2 "exit code of --on '$1'"; grep -q -- "$2" "$tmp/x.err" || fail "--on '$1': $(cat "$tmp/x.err")"
	[ ! -e "$tmp/x.data" ] || fail "--on '$1' left a file"; }
bad 'syscall:openat:exit:explode' 'expected POINT'
bad 'syscall:openat:exit if ret ==:snapshot' 'column'
bad 'syscall:openat:enter if ret < 0:snapshot' "known only at a syscall's exit"
bad 'syscall:no_such_call:exit:snapshot' 'unknown syscall'
bad 'syscall:openat:exit:snapshot,every:0' 'count of 1 or more'
"$AUXTRIG" record -e syscalls:sys_enter_close --on 'syscall:openat:exit:snapshot' -o "$tmp/x.data" -- true 2>"$tmp/x.err"
assert_eq $? 2 "snapshot action without -S"
grep -q 'add -S' "$tmp/x.err" || fail "no hint to add -S: $(cat "$tmp/x.err")"
# Every builtin the thread has: the gate fetches only those a condition reads, and each must be right.
"$AUXTRIG" record -q -o "$tmp/b.data" --on 'syscall:openat:exit if uid == 0 && gid == 0 && ppid > 1 && cgroup > 0 && comm == "openat_demo":mark' \
	-- "$DEMO" -r 3 >/dev/null || fail "record with builtin conditions failed"
assert_eq "$(pscript "$tmp/b.data" | grep -c 'auxtrig:mark')" 6 "marks where every builtin holds"
"$AUXTRIG" record -q -o "$tmp/c.data" --on 'syscall:openat:exit if uid != 0 || comm != "openat_demo":mark' \
	-- "$DEMO" -r 3 >/dev/null || fail "record with negated builtin conditions failed"
assert_eq "$(pscript "$tmp/c.data" | grep -c 'auxtrig:mark')" 0 "marks where a builtin does not hold"
echo ok
