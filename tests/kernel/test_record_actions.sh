#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --on resume/pause windows, the limit:N/s rate policy, delayed actions
# (snapshot+T, stop+T) and windows kept by duration (--min/--max-duration),
# each against a workload of known behaviour; perf 6.1 reads every file
# without a warning (no out-of-order records from held windows).
. "$(dirname "$0")/lib.sh"
need_root
need_perf
SEQ=$build/examples/seq_demo
PAT=$build/examples/sleep_pattern
SLEEP_WIN=tp:syscalls:sys_enter_getpid..tp:syscalls:sys_enter_getppid

# 1. resume at close #100, pause at close #200: exactly closes 100..200, edges marked.
"$AUXTRIG" record -e syscalls:sys_enter_close --on 'tp:syscalls:sys_enter_close if fd == 1000100:resume' \
	--on 'tp:syscalls:sys_enter_close if fd == 1000200:pause' -o "$tmp/r.data" -- "$SEQ" 1000 1 \
	>/dev/null 2>"$tmp/r.err" || fail "record failed: $(cat "$tmp/r.err")"
assert_perf_reads_cleanly "$tmp/r.data"
assert_eq "$(seqs "$tmp/r.data" | tr '\n' ' ')" "$(seq 100 200 | tr '\n' ' ')" "closes recorded between resume and pause"
pscript "$tmp/r.data" | grep -v trigger_stats >"$tmp/r.txt"
assert_eq "$(grep -c 'auxtrig:resume: trigger=1 ' "$tmp/r.txt")" 1 "auxtrig:resume records"
assert_eq "$(grep -c 'auxtrig:pause: trigger=2 ' "$tmp/r.txt")" 1 "auxtrig:pause records"
head -1 "$tmp/r.txt" | grep -q 'auxtrig:resume:' || fail "the window does not start with its resume: $(head -1 "$tmp/r.txt")"
tail -1 "$tmp/r.txt" | grep -q 'auxtrig:pause:' || fail "the window does not end with its pause: $(tail -1 "$tmp/r.txt")"

# 1b. Resumed and paused three times.
"$AUXTRIG" record -e syscalls:sys_enter_close --on 'tp:syscalls:sys_enter_close if fd % 100 == 10:resume' \
	--on 'tp:syscalls:sys_enter_close if fd % 100 == 14:pause' -o "$tmp/r2.data" -- "$SEQ" 300 1 \
	>/dev/null 2>"$tmp/r2.err" || fail "record failed: $(cat "$tmp/r2.err")"
assert_eq "$(seqs "$tmp/r2.data" | tr '\n' ' ')" "10 11 12 13 14 110 111 112 113 114 210 211 212 213 214 " \
	"closes of three resume/pause windows"

# 2. limit:3/s: a burst of 1000 matches (a few ms) fires exactly 3; the rest is suppressed.
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'tp:syscalls:sys_enter_close:mark,limit:3/s' \
	-o "$tmp/l.data" -- "$SEQ" 1000 1 >/dev/null 2>"$tmp/l.err" || fail "record failed: $(cat "$tmp/l.err")"
assert_perf_reads_cleanly "$tmp/l.data"
grep -q 'evaluated 1000, matched 1000, fired 3, suppressed 997, dropped 0' "$tmp/l.err" ||
	fail "limit:3/s counters: $(cat "$tmp/l.err")"
assert_eq "$(pscript "$tmp/l.data" | grep -c 'auxtrig:mark: trigger=1 ')" 3 "marks of limit:3/s"
# Two bursts 1.5 s apart: the bucket refills, 3 more; with every:2 the policies combine.
mkfifo "$tmp/in"
exec 7<>"$tmp/in"
"$AUXTRIG" record -e syscalls:sys_enter_getpid --on 'tp:syscalls:sys_enter_close if fd % 2 == 0:mark,every:2,limit:3/s' \
	-o "$tmp/l2.data" -- "$SEQ" 500 2 <"$tmp/in" >"$tmp/l2.out" 2>"$tmp/l2.err" &
aux=$!
wait_for "$tmp/l2.out" "phase 0 done" $aux
sleep 1.5
echo >&7
wait $aux || fail "record failed: $(cat "$tmp/l2.err")"
grep -q 'evaluated 1000, matched 500, fired 6, suppressed 494, dropped 0' "$tmp/l2.err" ||
	fail "every:2,limit:3/s counters over two bursts: $(cat "$tmp/l2.err")"
pscript "$tmp/l2.data" | sed -n 's/.*auxtrig:mark: .* arg0=\(0x[0-9a-f]*\) .*/\1/p' |
	while read -r h; do echo $((h - 1000000)); done | tr '\n' ' ' >"$tmp/l2.seq"
assert_eq "$(cat "$tmp/l2.seq")" "2 6 10 502 506 510 " "the closes that fired (every second even one, 3 per burst)"

# 3. snapshot+20ms: the snapshot holds the closes of the 20 ms after the trigger (close #10), none later.
# sleep_pattern prints when each close was made, before and after (CLOCK_MONOTONIC, the gate's
# clock): a close certainly before the deadline must be there, one certainly after must not.
pat=FFFFFFFFFF$(printf 'M%.0s' $(seq 30))
"$AUXTRIG" record -S64K -e syscalls:sys_enter_close --on 'tp:syscalls:sys_enter_close if fd == 1000010:snapshot+20ms' \
	-o "$tmp/d.data" -- "$PAT" "$pat" >"$tmp/d.times" 2>"$tmp/d.err" || fail "record failed: $(cat "$tmp/d.err")"
assert_perf_reads_cleanly "$tmp/d.data"
seqs "$tmp/d.data" >"$tmp/d.seq"
awk -v list="$tmp/d.seq" 'BEGIN { while ((getline k < list) > 0) got[k] = 1 }
	{ b[$1] = $2; a[$1] = $3 } END {
		lo = b[10] + 20e6; hi = a[10] + 20e6; bad = ""; after = 0
		for (k = 0; k < 40; k++) {
			if (k <= 10 && !got[k]) bad = bad " missing:" k
			if (k > 10 && a[k] < lo && !got[k]) bad = bad " missing:" k
			if (b[k] > hi && got[k]) bad = bad " late:" k
			if (k > 10 && got[k]) after++
		}
		if (!after) bad = bad " no close after the trigger"
		if (bad != "") { print bad; exit 1 }
	}' "$tmp/d.times" >"$tmp/d.bad" || fail "snapshot+20ms: $(cat "$tmp/d.bad") (got: $(tr '\n' ' ' <"$tmp/d.seq"))"
grep -q 'snapshot 1 (on#1)' "$tmp/d.err" || fail "no snapshot taken: $(cat "$tmp/d.err")"

# 3b. stop+300ms: the run goes on for 300 ms after the trigger (close #10, then 3 ms steps), then ends.
# The last close recorded is the last made before the deadline, so it comes 300 ms after the
# trigger, less one step, plus however late auxtrig saw the deadline (generous: the VM is shared).
pat=FFFFFFFFFF$(printf 'M%.0s' $(seq 1000))
"$AUXTRIG" record -e syscalls:sys_enter_close --on 'tp:syscalls:sys_enter_close if fd == 1000010:stop+300ms' \
	-o "$tmp/s.data" -- "$PAT" "$pat" >/dev/null 2>"$tmp/s.err" || fail "record failed: $(cat "$tmp/s.err")"
assert_perf_reads_cleanly "$tmp/s.data"
perf script --ns -F time,trace -i "$tmp/s.data" 2>/dev/null |
	awk '{ t = $1 + 0 } /fd: 0x000f424a/ { t0 = t } /fd:/ { last = t; n++ } END { printf "%d %d\n", (last - t0) * 1000, n }' >"$tmp/s.span"
read -r span n <"$tmp/s.span"
[ "$span" -ge 250 ] && [ "$span" -le 600 ] || fail "stop+300ms: the last close came ${span} ms after the trigger"
[ "$n" -lt 1000 ] || fail "stop+300ms: the workload was not stopped ($n closes)"
grep -q 'stopping in 300.000 ms' "$tmp/s.err" || fail "no word of the delayed stop: $(cat "$tmp/s.err")"
# The file says where it stopped: its last record is auxtrig:stop, with the trigger's values.
perf script -F event,trace -i "$tmp/s.data" 2>/dev/null | grep -v 'auxtrig:trigger_stats:' | tail -1 >"$tmp/s.last"
grep -q 'auxtrig:stop: trigger=1 ' "$tmp/s.last" || fail "stop+300ms: the file does not end at auxtrig:stop: $(cat "$tmp/s.last")"

# 4. --min-duration 100ms: exactly the windows with a 250 ms sleep (steps 1, 4, 8), each whole. The
# fast ones sleep 0.1 ms: the margin holds on a loaded machine and in the lab's emulated guests.
"$AUXTRIG" record -w "$SLEEP_WIN" -e syscalls:sys_enter_close --min-duration 100ms -o "$tmp/m.data" \
	-- "$PAT" FLFFLFFFL >/dev/null 2>"$tmp/m.err" || fail "record failed: $(cat "$tmp/m.err")"
assert_perf_reads_cleanly "$tmp/m.data"
assert_eq "$(seqs "$tmp/m.data" | tr '\n' ' ')" "1 4 8 " "windows of at least 100 ms"
assert_eq "$(pscript "$tmp/m.data" | grep -c 'sys_enter_getpid:')" 3 "window starts written"
assert_eq "$(pscript "$tmp/m.data" | grep -c 'sys_enter_getppid:')" 3 "window ends written"
grep -q 'windows by duration: 3 written, 6 dropped (shorter than 100ms; 18 records not written)' "$tmp/m.err" ||
	fail "the summary does not count the dropped windows: $(cat "$tmp/m.err")"

# 5. --max-duration 100ms: exactly the fast ones.
"$AUXTRIG" record -w "$SLEEP_WIN" -e syscalls:sys_enter_close --max-duration 100ms -o "$tmp/x.data" \
	-- "$PAT" FLFFLFFFL >/dev/null 2>"$tmp/x.err" || fail "record failed: $(cat "$tmp/x.err")"
assert_perf_reads_cleanly "$tmp/x.data"
assert_eq "$(seqs "$tmp/x.data" | tr '\n' ' ')" "0 2 3 5 6 7 " "windows of at most 100 ms"

# 5b. A syscall window, docs/usage.md's example (--min-duration): only the slow clock_nanosleep calls.
"$AUXTRIG" record -w syscall:clock_nanosleep --min-duration 100ms -o "$tmp/n.data" \
	-- "$PAT" LFFLFFMML >/dev/null 2>"$tmp/n.err" || fail "record failed: $(cat "$tmp/n.err")"
assert_perf_reads_cleanly "$tmp/n.data"
assert_eq "$(pscript "$tmp/n.data" | grep -c 'sys_exit_clock_nanosleep:')" 3 "slow clock_nanosleep windows"

# 5c. Windows of 250 ms, held across rounds, while another process's marks (outside windows)
# are written meanwhile: without holding FINISHED_ROUND back, perf reports out-of-order events.
pa=$(printf 'LF%.0s' $(seq 4)); pb=$(printf 'M%.0s' $(seq 300))
"$AUXTRIG" record -w "$SLEEP_WIN" -e syscalls:sys_enter_close,sched:sched_switch --min-duration 100ms \
	--on 'syscall:getppid:exit:mark' -o "$tmp/h.data" -- sh -c "$PAT $pa & $PAT $pb 2000000; wait" \
	>/dev/null 2>"$tmp/h.err" || fail "record failed: $(cat "$tmp/h.err")"
assert_perf_reads_cleanly "$tmp/h.data"
assert_eq "$(seqs "$tmp/h.data" | awk '$1 < 1000000' | tr '\n' ' ')" "0 2 4 6 " "the 250 ms windows among many fast ones"
assert_eq "$(pscript "$tmp/h.data" | grep -c '^ *sleep_pattern .*auxtrig:mark:')" 308 "marks outside the windows"

# 5d. With the flight recorder: a snapshot trigger inside a 250 ms window takes its start; the
# window's end and verdict come with the exit snapshot, and the window is written whole.
"$AUXTRIG" record -Se64K -w "$SLEEP_WIN" -e syscalls:sys_enter_close --min-duration 100ms \
	--on 'tp:syscalls:sys_enter_close if fd == 1000001:snapshot' -o "$tmp/ms.data" -- "$PAT" FLFL \
	>/dev/null 2>"$tmp/ms.err" || fail "record failed: $(cat "$tmp/ms.err")"
assert_perf_reads_cleanly "$tmp/ms.data"
assert_eq "$(seqs "$tmp/ms.data" | tr '\n' ' ')" "1 3 " "windows of at least 100 ms across two snapshots"
assert_eq "$(pscript "$tmp/ms.data" | grep -c 'sys_enter_getppid:')" 2 "window ends written"
grep -q 'windows by duration: 2 written, 2 dropped' "$tmp/ms.err" || fail "-S summary: $(cat "$tmp/ms.err")"
grep -q 'still open' "$tmp/ms.err" && fail "a window was left without its verdict: $(cat "$tmp/ms.err")"

# 6. Refused before anything is attached, with a reason.
bad() { "$AUXTRIG" record "${@:3}" -o "$tmp/bad.data" -- true 2>"$tmp/bad.err"
	assert_eq $? 2 "exit code of $*"; grep -q -- "$2" "$tmp/bad.err" || fail "$1: $(cat "$tmp/bad.err")"
	[ ! -e "$tmp/bad.data" ] || fail "$1 left a file"; }
bad limit0 'expected limit:N/s' -e syscalls:sys_enter_close --on 'syscall:openat:exit:mark,limit:0/s'
bad limitunit 'expected limit:N/s' -e syscalls:sys_enter_close --on 'syscall:openat:exit:mark,limit:5'
bad twopolicies 'only one of' -e syscalls:sys_enter_close --on 'syscall:openat:exit:mark,once,every:2'
bad delayunit 'expected a delay' -S -e syscalls:sys_enter_close --on 'syscall:openat:exit:snapshot+5'
bad delaymark 'only snapshot and stop take a delay' -e syscalls:sys_enter_close --on 'syscall:openat:exit:mark+1ms'
bad mindur 'expected a duration' -w syscall:openat --min-duration 30
bad nowindow 'give a --window' -e syscalls:sys_enter_close --min-duration 1ms
bad minmax 'longer than --max-duration' -w syscall:openat --min-duration 2ms --max-duration 1ms
echo ok
