#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Flight recorder (-S): a snapshot taken at a known point holds the newest
# records before it (the very last one included), each once, none torn; later
# snapshots never repeat a record; what no snapshot covered is not in the file.
# Snapshots come from the control FIFO, SIGUSR2 and the exit.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
SEQ=$build/examples/seq_demo
N=2000

mkfifo "$tmp/ctl" "$tmp/ack" "$tmp/in"
exec 7<>"$tmp/in" 8<>"$tmp/ack"

ctl() { # ctl COMMAND: send it and wait for its ack
	echo "$1" >"$tmp/ctl"
	read -r -t "$WAIT" reply <&8 || fail "no ack for '$1'"
	assert_eq "$reply" ack "reply to '$1'"
}
contiguous() { # contiguous FILE FIRST_LINE LAST_LINE LAST_VALUE
	sed -n "$2,$3p" "$1" | awk -v last="$4" 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad || prev != last }'
}

# The workload runs on one CPU so that CPU's ring holds the newest records of all.
taskset -c "$(one_cpu)" "$AUXTRIG" record -S64K -e syscalls:sys_enter_close --control "fifo:$tmp/ctl,$tmp/ack" \
	-o "$tmp/s.data" -- "$SEQ" $N 3 <"$tmp/in" >"$tmp/demo.out" 2>"$tmp/err" &
aux=$!
ctl ping
wait_for "$tmp/demo.out" "phase 0 done"
ctl snapshot                      # 1: from the control FIFO, at the end of phase 0
echo >&7
wait_for "$tmp/demo.out" "phase 1 done"
kill -USR2 $aux                   # 2: from a signal, at the end of phase 1
wait_for "$tmp/err" 'snapshot 2 \(SIGUSR2\)' $aux
ctl ping
echo >&7                          # phase 2 runs and nothing snapshots it
wait $aux || fail "record failed: $(cat "$tmp/err")"
assert_perf_reads_cleanly "$tmp/s.data"

seqs "$tmp/s.data" >"$tmp/seq.txt"
total=$(wc -l <"$tmp/seq.txt")
[ "$total" -gt 100 ] || fail "snapshots hold only $total records"
assert_eq "$(sort -n "$tmp/seq.txt" | uniq -d | wc -l)" 0 "records repeated across snapshots"
# Snapshot 1 ends with the last record of phase 0, snapshot 2 with the last of phase 1.
first=$(awk '$1 < 2000' "$tmp/seq.txt" | wc -l)
second=$(awk '$1 >= 2000 && $1 < 4000' "$tmp/seq.txt" | wc -l)
assert_eq "$(awk '$1 >= 4000' "$tmp/seq.txt" | wc -l)" 0 "records of phase 2, which no snapshot took"
[ "$first" -gt 0 ] && [ "$first" -lt $N ] || fail "snapshot 1 holds $first records: expected the newest part of phase 0"
contiguous "$tmp/seq.txt" 1 "$first" 1999 || fail "snapshot 1 is not the newest, gap-free run ending at 1999"
contiguous "$tmp/seq.txt" $((first + 1)) "$total" 3999 || fail "snapshot 2 is not the newest, gap-free run ending at 3999"
assert_eq "$second" "$first" "snapshot sizes (same ring, same records)"
# Each snapshot is marked with its reason and size.
perf script -i "$tmp/s.data" 2>/dev/null | grep 'auxtrig:snapshot:' >"$tmp/marks.txt"
grep -q "nr=1 reason=control records=$first" "$tmp/marks.txt" || fail "no marker for snapshot 1: $(cat "$tmp/marks.txt")"
grep -q "nr=2 reason=SIGUSR2 records=$second" "$tmp/marks.txt" || fail "no marker for snapshot 2: $(cat "$tmp/marks.txt")"

# -Se: one more snapshot at exit, holding the newest records of the run.
echo | taskset -c "$(one_cpu)" "$AUXTRIG" record -q -Se64K -e syscalls:sys_enter_close -o "$tmp/e.data" -- "$SEQ" $N 2 \
	>/dev/null 2>"$tmp/err" || fail "record -Se failed: $(cat "$tmp/err")"
assert_perf_reads_cleanly "$tmp/e.data"
seqs "$tmp/e.data" >"$tmp/e.txt"
n=$(wc -l <"$tmp/e.txt")
contiguous "$tmp/e.txt" 1 "$n" 3999 || fail "exit snapshot is not the newest run ending at 3999"
perf script -i "$tmp/e.data" 2>/dev/null | grep -q "reason=exit records=$n" || fail "no exit marker"

# A ring holds as many getppid() entries (make bench's event) as perf's of the same size: a
# 4 KiB flight recorder keeps the newest 4096 / S but the one the wrap tore, S being perf
# record's own sample of it (the gate's samples cross the ring without the IP and period the
# recorder puts back; an event with more fields may take 8 bytes more than perf's: the gate's
# header).
STORM=$build/examples/syscall_storm
echo | perf record -q -e syscalls:sys_enter_getppid -o "$tmp/p4.data" -- "$STORM" 1 10 >/dev/null 2>&1 ||
	fail "perf record of sys_enter_getppid failed"
psize=$(perf report -D -i "$tmp/p4.data" 2>/dev/null | grep -m1 'PERF_RECORD_SAMPLE' |
	sed -n 's/.*\[\(0x[0-9a-f]*\)\]: PERF_RECORD_SAMPLE.*/\1/p')
[ -n "$psize" ] || fail "no sample size in perf report -D of perf's own recording"
echo | taskset -c "$(one_cpu)" "$AUXTRIG" record -q -Se4K -e syscalls:sys_enter_getppid -o "$tmp/s4.data" \
	-- "$STORM" 1 2000 >/dev/null 2>"$tmp/err" || fail "record -Se4K failed: $(cat "$tmp/err")"
kept=$(perf script -F event -i "$tmp/s4.data" 2>/dev/null | grep -c 'sys_enter_getppid')
[ "$kept" -ge $((4096 / psize - 1)) ] ||
	fail "a 4 KiB ring kept $kept getppid() entries; of perf's samples ($((psize)) bytes) $((4096 / psize)) fit"

# --control fd:CTL,ACK with descriptors auxtrig inherits: ping, snapshot, stop.
mkfifo "$tmp/c2" "$tmp/a2"
exec 5<>"$tmp/c2" 6<>"$tmp/a2"
taskset -c "$(one_cpu)" "$AUXTRIG" record -q -S64K -e syscalls:sys_enter_close --control fd:5,6 -o "$tmp/fd.data" \
	-- "$SEQ" $N 2 <"$tmp/in" >"$tmp/demo2.out" 2>"$tmp/err" &
aux=$!
echo ping >&5; read -r -t "$WAIT" reply <&6 || fail "no ack on fd 6"
assert_eq "$reply" ack "reply on fd 6"
wait_for "$tmp/demo2.out" "phase 0 done"
echo snapshot >&5; read -r -t "$WAIT" reply <&6 || fail "no ack for snapshot on fd 6"
echo stop >&5; read -r -t "$WAIT" reply <&6 || fail "no ack for stop on fd 6"
wait $aux || fail "record with --control fd: failed: $(cat "$tmp/err")"
exec 5>&- 6>&-
assert_perf_reads_cleanly "$tmp/fd.data"
assert_eq "$(seqs "$tmp/fd.data" | tail -1)" 1999 "the fd: snapshot's newest record"

# Snapshot triggers at syscall:* points, four threads failing openat() at once: each snapshot
# holds its triggering call's exit (raw_syscalls) and nothing later than that exit, and its enter
# unless an earlier snapshot, taken while the call was in progress, holds it (seen in a TCG guest);
# no record is in two snapshots; a trigger that fires while another snapshot is being taken
# (its call's records were held back), or whose records one took meanwhile, takes none and counts
# as suppressed; what no snapshot holds is counted per snapshot (lost=), and nothing is lost to a
# full ring. Once with a syscall:* window, once with raw_syscalls recorded at every hit (no
# window: those tracepoints could have had programs of their own, which noted no held-back call).
NR_openat=$(syscall_nr openat)
any_snapshots() { # any_snapshots NAME RECORD-OPTIONS...
	local name=$1 snaps
	shift
	"$AUXTRIG" record -S16K "$@" -e syscalls:sys_enter_close --on 'syscall:*:exit if ret == -ENOENT:snapshot' \
		-o "$tmp/$name.data" -- "$DEMO" -r 50 -t 3 >/dev/null 2>"$tmp/$name.err" ||
		fail "$name: record failed: $(cat "$tmp/$name.err")"
	assert_perf_reads_cleanly "$tmp/$name.data"
	perf script --ns -F tid,time,event,trace -i "$tmp/$name.data" 2>/dev/null | grep -v 'auxtrig:trigger_stats:' >"$tmp/$name.txt"
	awk -v nr="$NR_openat" '
		/auxtrig:snapshot:/ {
			n++; match($0, /tid=[0-9]+/); t = substr($0, RSTART + 4, RLENGTH - 4)
			if (!(enter[t] > prevexit[t])) { print "snapshot " n ": no enter of thread " t "'"'"'s failing openat"; bad++ }
			if (!(exit_[t] > prev)) { print "snapshot " n ": no exit of thread " t "'"'"'s failing openat"; bad++ }
			else if (maxt > exit_t[t]) { print "snapshot " n ": records after its trigger"; bad++ }
			if ($0 !~ / lost=[0-9]+$/) { print "snapshot " n ": no loss count"; bad++ }
			maxt = 0; prev = NR; next
		}
		{ tm = $2; sub(":", "", tm); tm += 0; if (tm > maxt) maxt = tm }
		$3 == "raw_syscalls:sys_enter:" && $5 == nr { enter[$1] = NR }
		$3 == "raw_syscalls:sys_exit:" && $5 == nr { prevexit[$1] = lastexit[$1]; lastexit[$1] = NR }
		$3 == "raw_syscalls:sys_exit:" && $5 == nr && $7 == "-2" { exit_[$1] = NR; exit_t[$1] = tm }
		END { print n + 0, "snapshots"; exit bad > 0 }' "$tmp/$name.txt" >"$tmp/$name.check" ||
		fail "$name: $(head -5 "$tmp/$name.check")"
	snaps=$(tail -1 "$tmp/$name.check" | cut -d' ' -f1)
	[ "$snaps" -ge 1 ] || fail "$name: no snapshot taken: $(cat "$tmp/$name.err")"
	assert_eq "$(grep -v 'auxtrig:snapshot:' "$tmp/$name.txt" | sort | uniq -d | wc -l)" 0 "$name: records in two snapshots"
	grep -q "^auxtrig: --on syscall:\*:exit if ret == -ENOENT:snapshot: evaluated [0-9]*, matched 200, fired $snaps, suppressed $((200 - snaps)), dropped 0$" \
		"$tmp/$name.err" || fail "$name: every failure took a snapshot or counts as suppressed ($snaps snapshots): $(cat "$tmp/$name.err")"
	grep -q 'lost 0 records' "$tmp/$name.err" || fail "$name: records lost to the ring: $(cat "$tmp/$name.err")"
}
any_snapshots any -w 'syscall:*'
any_snapshots raw -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit

# Bad -S and --control values are usage errors.
"$AUXTRIG" record -S1x -e syscalls:sys_enter_close -o "$tmp/x.data" -- true 2>/dev/null
assert_eq $? 2 "exit code of -S1x"
"$AUXTRIG" record -S --control fifo:"$tmp/none/ctl" -e syscalls:sys_enter_close -o "$tmp/x.data" -- true 2>"$tmp/err"
assert_eq $? 2 "exit code of a control FIFO in a missing directory"
grep -q "no such directory" "$tmp/err" || fail "no reason for a missing directory: $(cat "$tmp/err")"
[ ! -e "$tmp/x.data" ] || fail "a failed start left a file"
echo ok
