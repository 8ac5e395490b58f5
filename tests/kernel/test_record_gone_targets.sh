#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# -p/-t targets that have exited but are still in /proc (zombies: their parent
# has not reaped them) are gone: given as targets they are refused at once;
# becoming one during the run, they end it as an exited target does. Both
# hung before: only /proc/PID's existence was asked.
. "$(dirname "$0")/lib.sh"
need_root

# A child that exits after $1 seconds and is never reaped; its pid in $tmp/zpid.
zombie_maker() {
	python3 -c '
import os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(float(sys.argv[1]))
    os._exit(0)
open(sys.argv[2] + ".tmp", "w").write(str(pid))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(120)' "$1" "$tmp/zpid" &
	maker=$!
	for _ in $(seq 100); do [ -s "$tmp/zpid" ] && break; sleep 0.1; done
	zpid=$(cat "$tmp/zpid")
	rm -f "$tmp/zpid"
}

# Becomes a zombie while recorded: the run ends (the guard: 60 s), exit 0, a file perf reads.
zombie_maker 2
timeout 60 "$AUXTRIG" record -q -w syscall:openat -p "$zpid" -o "$tmp/z.data" 2>"$tmp/stderr"
rc=$?
[ $rc = 124 ] && fail "record -p of a process that became a zombie did not end (60 s)"
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
