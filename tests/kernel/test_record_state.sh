#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Stateful conditions in the kernel: $count per thread, once/after N/every N
# inside expressions (one counter per term and per condition), $elapsed at a
# syscall's exit (from its entry) and inside a window (from the window's
# start), on example programs whose calls are known exactly.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
SEQ=$build/examples/seq_demo
READS=$build/examples/read_pattern

# "TRIGGER SEQ" per mark in FILE: the trigger's number and the sequence number
# (fd - 1000000) of the close() whose entry fired it.
marks_by_seq() {
	pscript "$1" | sed -n 's/.*auxtrig:mark: trigger=\([0-9]*\) .*arg0=\(0x[0-9a-f]*\).*/\1 \2/p' |
		while read -r t a; do echo "$t $((a - 1000000))"; done
}
# The sequence numbers trigger $2 marked in FILE $1, on one line.
marked() { marks_by_seq "$1" | awk -v t="$2" '$1 == t { printf "%s%s", sep, $2; sep = " " }'; }

# 1. $count: per thread. openat_demo makes, per thread and round, an openat
#    that succeeds then one that fails, so a thread's failures are its hits
#    2, 4, 6, 8, 10: "ret < 0 && $count >= 3" marks 4 per thread. Counted
#    across both threads it would mark 9 of the 10 failures.
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'syscall:openat:exit if ret < 0 && $count >= 3:mark' \
	-o "$tmp/c.data" -- "$DEMO" -r 5 -t 1 >/dev/null 2>"$tmp/c.err" || fail "record failed: $(cat "$tmp/c.err")"
assert_perf_reads_cleanly "$tmp/c.data"
grep -q 'evaluated 20, matched 8, fired 8' "$tmp/c.err" || fail "\$count counters: $(cat "$tmp/c.err")"
pscript "$tmp/c.data" | awk "/auxtrig:mark: trigger=1 nr=$(syscall_nr openat) ret=-2 /"' { n[$2]++ }
	END { for (t in n) print n[t] }' >"$tmp/c.per"
assert_eq "$(sort "$tmp/c.per" | tr '\n' ' ')" "4 4 " "marks per thread"
assert_eq "$(pscript "$tmp/c.data" | grep -c 'sys_enter_getpid:')" 10 "events recorded alongside"

# 2. once, after N, every N and $count at known calls: seq_demo 30 1 makes
#    close(1000000 + i), i = 0..29, one thread. Six conditions in one run,
#    each with its own counters (1 and 6 both say "every 3").
"$AUXTRIG" record -e syscalls:sys_enter_getpid \
	--on 'syscall:close:enter if arg0 >= 1000010 && every 3:mark' \
	--on 'syscall:close:enter if after 28:mark' \
	--on 'syscall:close:enter if (arg0 & 1) == 1 && once:mark' \
	--on 'syscall:close:enter if once || arg0 == 1000020:mark' \
	--on 'syscall:close:enter if $count == 7 || $count == 30:mark' \
	--on 'syscall:close:enter if every 3:mark' \
	-o "$tmp/s.data" -- "$SEQ" 30 1 >/dev/null 2>"$tmp/s.err" || fail "record failed: $(cat "$tmp/s.err")"
assert_perf_reads_cleanly "$tmp/s.data"
assert_eq "$(marked "$tmp/s.data" 1)" "12 15 18 21 24 27" "every 3 behind &&: every third of the calls from #10"
assert_eq "$(marked "$tmp/s.data" 2)" "27 28 29" "after 28: the 28th call and later"
assert_eq "$(marked "$tmp/s.data" 3)" "1" "once behind &&: the first odd call"
assert_eq "$(marked "$tmp/s.data" 4)" "0 20" "once || ...: the first call, then the condition alone"
assert_eq "$(marked "$tmp/s.data" 5)" "6 29" "\$count == 7 || \$count == 30"
assert_eq "$(marked "$tmp/s.data" 6)" "2 5 8 11 14 17 20 23 26 29" "every 3: every third call"
grep -q 'if every 3:mark: evaluated 30, matched 10, fired 10' "$tmp/s.err" || fail "every 3 counters: $(cat "$tmp/s.err")"

# 3. In an expression, the counter counts the matches of the left side: of
#    10 failing openat calls every third fires; the trigger itself matched 3.
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'syscall:openat:exit if ret < 0 && every 3:mark' \
	-o "$tmp/e.data" -- "$DEMO" -r 10 >/dev/null 2>"$tmp/e.err" || fail "record failed: $(cat "$tmp/e.err")"
grep -q 'evaluated 20, matched 3, fired 3, suppressed 0' "$tmp/e.err" || fail "every 3 counters: $(cat "$tmp/e.err")"
assert_eq "$(pscript "$tmp/e.data" | grep -c "auxtrig:mark: trigger=1 nr=$(syscall_nr openat) ret=-2 ")" 3 "marks of ret < 0 && every 3"
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'syscall:openat:exit if ret < 0 && after 2:mark' \
	-o "$tmp/a.data" -- "$DEMO" -r 10 >/dev/null 2>"$tmp/a.err" || fail "record failed: $(cat "$tmp/a.err")"
grep -q 'evaluated 20, matched 9, fired 9' "$tmp/a.err" || fail "after 2 counters: $(cat "$tmp/a.err")"

# 4. --where keeps state too: of 6 openat window starts, "$count > 2" opens
#    the last 4 and "every 2" every second one.
"$AUXTRIG" record -w syscall:openat --where '$count > 2' -o "$tmp/w.data" -- "$DEMO" -r 3 >/dev/null \
	2>"$tmp/w.err" || fail "record failed: $(cat "$tmp/w.err")"
grep -q 'record: 4 windows, 8 events written' "$tmp/w.err" || fail "--where \$count: $(cat "$tmp/w.err")"
"$AUXTRIG" record -w syscall:openat --where 'every 2' -o "$tmp/w2.data" -- "$DEMO" -r 3 >/dev/null \
	2>"$tmp/w2.err" || fail "record failed: $(cat "$tmp/w2.err")"
grep -q 'record: 3 windows, 6 events written' "$tmp/w2.err" || fail "--where every 2: $(cat "$tmp/w2.err")"
assert_eq "$(pscript "$tmp/w2.data" | grep -c 'sys_exit_openat: 0xfffffffffffffffe')" 3 "every second openat: the failing ones"

# 5. $elapsed at a syscall's exit, with no window: since the thread entered
#    that call. read_pattern's reads before closes #100, #400 and #700 wait
#    50 ms (and fail with EAGAIN); the others take microseconds. The 20 ms
#    threshold leaves room on a loaded machine.
"$AUXTRIG" record -e syscalls:sys_enter_close --on 'syscall:read:exit if $elapsed > 20ms:mark' \
	--on 'syscall:read:exit if $elapsed < 20ms:mark' \
	-o "$tmp/t.data" -- "$READS" 800 SWSFWSSW >/dev/null 2>"$tmp/t.err" || fail "record failed: $(cat "$tmp/t.err")"
assert_perf_reads_cleanly "$tmp/t.data"
# the close that follows each slow mark
NR_read=$(syscall_nr read)
perf script -F event,trace -i "$tmp/t.data" 2>/dev/null | while read -r ev rest; do
	case $ev in
	auxtrig:mark:) case $rest in "trigger=1 nr=$NR_read ret=-11 "*) want=1 ;; "trigger=1 "*) echo "slow mark without EAGAIN" ;; esac ;;
	syscalls:sys_enter_close:) [ -n "${want:-}" ] && echo $((${rest##* } - 1000000)); want= ;;
	esac
done | tr '\n' ' ' >"$tmp/t.slow"
assert_eq "$(cat "$tmp/t.slow")" "100 400 700 " "the closes after the slow reads"
assert_eq "$(pscript "$tmp/t.data" | grep -c "auxtrig:mark: trigger=2 nr=$NR_read ret=\\(1\\|-9\\) ")" 5 "fast reads"
# With a window on read too: it has closed by the exit, the entry still times it.
"$AUXTRIG" record -w syscall:read --on 'syscall:read:exit if $elapsed > 20ms:mark' \
	-o "$tmp/t2.data" -- "$READS" 800 SWSFWSSW >/dev/null 2>"$tmp/t2.err" || fail "record failed: $(cat "$tmp/t2.err")"
grep -q 'matched 3, fired 3' "$tmp/t2.err" || fail "\$elapsed with a read window: $(cat "$tmp/t2.err")"
# The same exit named as a tracepoint.
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'tp:syscalls:sys_exit_read if $elapsed > 20ms:mark' \
	-o "$tmp/t3.data" -- "$READS" 800 SWSFWSSW >/dev/null 2>"$tmp/t3.err" || fail "record failed: $(cat "$tmp/t3.err")"
grep -q 'matched 3, fired 3' "$tmp/t3.err" || fail "\$elapsed at tp:syscalls:sys_exit_read: $(cat "$tmp/t3.err")"

# 6. $elapsed inside a window: from clock_nanosleep's entry (a 1 ms sleep) to
#    the next round's getpid, openat_demo's two openat calls of rounds 2..5
#    are in the window, at least 1 ms after it opened; round 1's are in none.
#    At an entry point without a window, $elapsed is unknown: never true.
"$AUXTRIG" record -w tp:syscalls:sys_enter_clock_nanosleep..tp:syscalls:sys_exit_getpid \
	--on 'syscall:openat:enter if $elapsed > 500us:mark' --on 'syscall:openat:enter if $elapsed > 1s:mark' \
	-o "$tmp/n.data" -- "$DEMO" -r 5 >/dev/null 2>"$tmp/n.err" || fail "record failed: $(cat "$tmp/n.err")"
grep -q '500us:mark: evaluated 10, matched 8, fired 8' "$tmp/n.err" || fail "\$elapsed in a window: $(cat "$tmp/n.err")"
grep -q '1s:mark: evaluated 10, matched 0' "$tmp/n.err" || fail "\$elapsed > 1s: $(cat "$tmp/n.err")"
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'syscall:openat:enter if $elapsed >= 0 || !($elapsed >= 0):mark' \
	-o "$tmp/n2.data" -- "$DEMO" -r 3 >/dev/null 2>"$tmp/n2.err" || fail "record failed: $(cat "$tmp/n2.err")"
grep -q 'evaluated 6, matched 0' "$tmp/n2.err" || fail "\$elapsed without a start: $(cat "$tmp/n2.err")"

# 7. Refused before anything is attached, with the column.
for spec in 'syscall:openat:exit if ret < 0 && every 0:mark|column 18: .every. needs a count of 1 or more, got 0' \
	'syscall:openat:exit if after:mark|column 6: .after. needs a count' \
	'syscall:openat:exit if $nosuch > 1:mark|column 1: undefined variable .nosuch: no --on action sets it (POINT:{ .nosuch = ... }); auxtrig.s own are .count, .elapsed, .duration, .now' \
	'syscall:openat:exit if $elapsed > 5min:mark|unknown unit .min.'; do
	on=${spec%%|*} want=${spec#*|}
	"$AUXTRIG" record -e syscalls:sys_enter_close --on "$on" -o "$tmp/x.data" -- true 2>"$tmp/x.err"
	assert_eq $? 2 "exit code of --on '$on'"
	grep -q -- "$want" "$tmp/x.err" || fail "--on '$on': $(cat "$tmp/x.err")"
	[ "$(wc -l <"$tmp/x.err")" = 1 ] || fail "--on '$on': more than one line: $(cat "$tmp/x.err")"
	[ ! -e "$tmp/x.data" ] || fail "--on '$on' left a file"
done
"$AUXTRIG" record -w syscall:openat --where 'once && every' -o "$tmp/x.data" -- true 2>"$tmp/x.err"
assert_eq $? 2 "exit code of a bad --where"
grep -q "column 14: 'every' needs a count" "$tmp/x.err" || fail "--where 'once && every': $(cat "$tmp/x.err")"
echo ok
