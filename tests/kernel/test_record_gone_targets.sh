#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# -p/-t targets that have exited but are still in /proc (zombies: their parent
# has not reaped them) are gone: given as targets they are refused at once;
# becoming one during the run, they end it as an exited target does. Both
# hung before: only /proc/PID's existence was asked.
. "$(dirname "$0")/lib.sh"
need_root

# A child that exits when $tmp/go appears (or after $1 seconds) and is never reaped; its pid in $zpid.
zombie_maker() {
	python3 -c '
import os, sys, time
pid = os.fork()
if pid == 0:
    end = time.time() + float(sys.argv[1])
    while time.time() < end and not os.path.exists(sys.argv[2] + "/go"):
        time.sleep(0.05)
    os._exit(0)
open(sys.argv[2] + "/zpid.tmp", "w").write(str(pid))
os.rename(sys.argv[2] + "/zpid.tmp", sys.argv[2] + "/zpid")
time.sleep(600)' "$1" "$tmp" &
	maker=$!
	for _ in $(seq 200); do [ -s "$tmp/zpid" ] && break; sleep 0.05; done
	zpid=$(cat "$tmp/zpid")
	rm -f "$tmp/zpid"
}

# Becomes a zombie while recorded (told to exit once the run is armed, not on a timer: the lab's
# emulated guests take seconds to attach): the run ends (the guard: 60 s), exit 0, a file perf reads.
zombie_maker 300
"$AUXTRIG" record -w syscall:openat -p "$zpid" -o "$tmp/z.data" 2>"$tmp/stderr" &
rec=$!
wait_for "$tmp/stderr" "Ctrl-C to stop" $rec
touch "$tmp/go"
for _ in $(seq 1200); do kill -0 $rec 2>/dev/null || break; sleep 0.05; done
kill -0 $rec 2>/dev/null && { kill -KILL $rec; fail "record -p of a process that became a zombie did not end (60 s)"; }
wait $rec
rc=$?
assert_eq $rc 0 "exit status of record -p of a process that exited (stderr: $(cat "$tmp/stderr"))"
[ "$(cut -d' ' -f3 "/proc/$zpid/stat" 2>/dev/null)" = Z ] || fail "the target was not a zombie when the run ended"
need_perf
assert_perf_reads_cleanly "$tmp/z.data"

# Already a zombie: refused at once, in one line, exit 1, no file.
for opt in -p -t; do
	rm -f "$tmp/z2.data"
	timeout 30 "$AUXTRIG" record -w syscall:openat "$opt" "$zpid" -o "$tmp/z2.data" 2>"$tmp/stderr"
	rc=$?
	[ $rc = 124 ] && fail "record $opt of a zombie hangs"
	assert_eq $rc 1 "exit status of record $opt ZOMBIE"
	grep -q -- "$opt $zpid: the \(process\|thread\) has exited" "$tmp/stderr" ||
		fail "record $opt ZOMBIE said: $(cat "$tmp/stderr")"
	[ ! -e "$tmp/z2.data" ] || fail "record $opt ZOMBIE left a file"
done
kill "$maker" 2>/dev/null
wait "$maker" 2>/dev/null
echo ok
