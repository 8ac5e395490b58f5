#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The end of a run over hundreds of tracepoints: the kernel waits tens of milliseconds per
# tracepoint detach under a lock of its own (perf record takes as long for the same events).
# Not on a terminal it is said in one line; a SIGINT meanwhile leaves the rest to a background
# process ("auxtrig-detach"), auxtrig ends at once with exit 0 and a complete file, and the
# background process ends when the kernel is done. Before, it was 18-38 s of silence that
# SIGINT did not shorten.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

# Under the usual soft limit of 1024 open files (the lab's guests have it): 700-odd tracepoints
# hold more descriptors than that, so auxtrig raises its own limit, as perf does; the command
# keeps the limit it was given.
(ulimit -S -n 1024 && exec "$AUXTRIG" record -o "$tmp/d.data" -e 'syscalls:*' -- \
	sh -c 'ulimit -S -n >"$0"' "$tmp/cmd_nofile") 2>"$tmp/stderr" &
aux=$!
WAIT=300 wait_for "$tmp/stderr" '^auxtrig: detaching from [0-9]+ tracepoints: .*Ctrl-C leaves it to the background' $aux
kill -INT $aux
for _ in $(seq 400); do kill -0 $aux 2>/dev/null || break; sleep 0.05; done
kill -0 $aux 2>/dev/null && { kill -KILL $aux; fail "SIGINT during the detach: auxtrig still ran 20 s later"; }
wait $aux
assert_eq $? 0 "exit status after SIGINT during the detach (stderr: $(grep -v 'own gate program' "$tmp/stderr"))"
bg=$(sed -n 's/.*in the background (process \([0-9]*\), "auxtrig-detach").*/\1/p' "$tmp/stderr")
[ -n "$bg" ] || fail "SIGINT during the detach did not say where it went on: $(tail -3 "$tmp/stderr")"
assert_eq "$(cat "$tmp/cmd_nofile")" 1024 "the command's soft limit of open files"
assert_perf_reads_cleanly "$tmp/d.data"
"$AUXTRIG" script -i "$tmp/d.data" >/dev/null 2>"$tmp/script.err" || fail "auxtrig script failed: $(cat "$tmp/script.err")"
# The background process holds nothing but the gate: not this shell's stderr nor any pipe.
if [ -d "/proc/$bg" ]; then
	[ "$(cat "/proc/$bg/comm" 2>/dev/null)" = auxtrig-detach ] || fail "process $bg is not auxtrig-detach"
	ls -l "/proc/$bg/fd" 2>/dev/null | grep -qE 'pipe:|socket:|/dev/pts|stderr' &&
		fail "auxtrig-detach holds more than the gate: $(ls -l "/proc/$bg/fd")"
fi
for _ in $(seq 3000); do [ -d "/proc/$bg" ] && [ "$(cut -d' ' -f3 "/proc/$bg/stat" 2>/dev/null)" != Z ] || break; sleep 0.1; done
[ -d "/proc/$bg" ] && [ "$(cut -d' ' -f3 "/proc/$bg/stat" 2>/dev/null)" != Z ] && fail "auxtrig-detach still ran 300 s later"
echo ok
