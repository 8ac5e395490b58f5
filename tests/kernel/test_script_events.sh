#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# auxtrig script on files without hardware trace prints what perf script
# prints, line for line: syscall windows with sched and read events and
# marks, uprobe windows, a flight-recorder file with snapshot, resume and
# pause records, syscall:* windows with raw_syscalls; and it reads the file
# record wrote by default (auxtrig.data).
. "$(dirname "$0")/lib.sh"
need_root
need_perf

same_as_perf() { # same_as_perf FILE WHAT
	"$AUXTRIG" script -i "$1" >"$tmp/a.txt" 2>"$tmp/a.err" || fail "$2: auxtrig script exited $?: $(cat "$tmp/a.err")"
	perf script -i "$1" >"$tmp/p.txt" 2>/dev/null || fail "$2: perf script failed"
	[ -s "$tmp/p.txt" ] || fail "$2: perf script printed nothing"
	diff "$tmp/a.txt" "$tmp/p.txt" >"$tmp/d.txt" || fail "$2: differs from perf script: $(head -6 "$tmp/d.txt")"
}

"$AUXTRIG" record -q -w syscall:openat -e 'sched:*' -e syscalls:sys_enter_read \
	--on 'syscall:openat:exit if ret < 0:mark' -o "$tmp/1.data" -- "$DEMO" -r 3 -t 2 >/dev/null ||
	fail "record 1 failed"
same_as_perf "$tmp/1.data" "syscall windows, sched events, marks"
# openat_demo: per thread and round two openat calls, the second fails: 3 threads x 3 rounds
assert_eq "$(grep -c ' syscalls:sys_exit_openat: 0xfffffffffffffffe$' "$tmp/a.txt")" 9 "failed openat exits"
assert_eq "$(grep -c " auxtrig:mark: trigger=1 nr=$(syscall_nr openat) ret=-2 " "$tmp/a.txt")" 9 "marks with their values"

"$AUXTRIG" record -q -w "uprobe:$build/examples/uprobe_demo:handle" -o "$tmp/2.data" -- \
	"$build/examples/uprobe_demo" >/dev/null || fail "record 2 failed"
same_as_perf "$tmp/2.data" "uprobe windows"

"$AUXTRIG" record -q -S -e syscalls:sys_enter_openat --on 'syscall:openat:exit if ret < 0:snapshot,once' \
	--on 'syscall:openat:enter:resume' --on 'syscall:close:exit:pause' -o "$tmp/3.data" -- "$DEMO" -r 3 >/dev/null ||
	fail "record 3 failed"
same_as_perf "$tmp/3.data" "snapshot, resume and pause records"
grep -q ' auxtrig:snapshot: nr=1 reason=on#1 records=3 tid=[0-9]* value=-2 lost=[0-9]*$' "$tmp/a.txt" || fail "no snapshot record: $(cat "$tmp/a.txt")"

"$AUXTRIG" record -q -w 'syscall:*' -e 'syscalls:sys_*_openat' -o "$tmp/4.data" -- "$DEMO" -r 2 >/dev/null ||
	fail "record 4 failed"
same_as_perf "$tmp/4.data" "syscall:* windows, raw_syscalls"

# the default file: what record writes
(cd "$tmp" && "$AUXTRIG" record -q -w syscall:openat -- "$DEMO" -r 1 >/dev/null && "$AUXTRIG" script >default.txt) ||
	fail "record/script with the default file name failed"
assert_eq "$(grep -c 'syscalls:sys_enter_openat: ' "$tmp/default.txt")" 2 "openat entries in the default file"
echo ok
