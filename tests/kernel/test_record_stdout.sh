#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# record -o -: a pipe-mode stream on standard output, as perf record -o - writes it (it wrote a
# file named '-' before). auxtrig script -i - and perf script -i - read it as it comes; the
# command's own output goes to stderr, never into the stream; a terminal is refused in one line;
# a killed writer leaves a stream both read; a reader that goes away ends the run, said.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
cd "$tmp" || fail "no $tmp"

# Piped into auxtrig script and into perf script: the openat events with their fields.
"$AUXTRIG" record -o - -e syscalls:sys_enter_openat -- cat /etc/hostname 2>"$tmp/rec.err" |
	"$AUXTRIG" script -i - >"$tmp/script.out" 2>"$tmp/script.err"
rc=("${PIPESTATUS[@]}")
assert_eq "${rc[*]}" "0 0" "exit status of record -o - | script -i - (stderr: $(cat "$tmp/rec.err" "$tmp/script.err"))"
grep -q 'cat .*syscalls:sys_enter_openat: .*filename: "/etc/hostname"' "$tmp/script.out" ||
	fail "auxtrig script -i - did not print the openat of /etc/hostname: $(head -3 "$tmp/script.out")"
grep -qx "$(cat /etc/hostname)" "$tmp/rec.err" || fail "the command's output did not go to stderr: $(cat "$tmp/rec.err")"
grep -q 'to standard output' "$tmp/rec.err" || fail "the summary does not name standard output: $(cat "$tmp/rec.err")"
[ ! -e "$tmp/-" ] || fail "record -o - created a file named '-'"

"$AUXTRIG" record -o - -e syscalls:sys_enter_openat -- cat /etc/hostname 2>/dev/null >"$tmp/stream"
head -c 16 "$tmp/stream" | od -An -tx8 | grep -q '32454c4946524550 *0*10$' ||
	fail "the stream does not start with perf's pipe header: $(head -c 16 "$tmp/stream" | od -An -tx1)"
perf script -i - <"$tmp/stream" >"$tmp/perf.out" 2>"$tmp/perf.err" || fail "perf script -i - failed: $(tail -3 "$tmp/perf.err")"
grep -iE 'warning|error|incompatible|reserved bits|failed' "$tmp/perf.err" && fail "perf script -i - warns about the stream"
grep -q 'syscalls:sys_enter_openat: .*filename: "/etc/hostname"' "$tmp/perf.out" ||
	fail "perf script -i - did not print the openat of /etc/hostname: $(head -3 "$tmp/perf.out")"
cmp -s <("$AUXTRIG" script -i - <"$tmp/stream" 2>/dev/null) "$tmp/perf.out" ||
	fail "auxtrig script and perf script print the stream differently"

# A terminal as standard output: refused at once, one line, exit 2.
command -v script >/dev/null || fail "needs script(1) from bsdutils for a terminal"
script -qec "\"$AUXTRIG\" record -o - -e syscalls:sys_enter_openat -- true 2>$tmp/tty.err" /dev/null >/dev/null
assert_eq $? 2 "exit status of record -o - on a terminal (stderr: $(cat "$tmp/tty.err"))"
assert_eq "$(wc -l <"$tmp/tty.err")" 1 "lines of the refusal of a terminal ($(cat "$tmp/tty.err"))"
grep -q -- '-o -: standard output is a terminal' "$tmp/tty.err" || fail "the refusal of a terminal said: $(cat "$tmp/tty.err")"

# SIGKILLed while it streams: both readers read what it sent.
"$AUXTRIG" record -o - -e syscalls:sys_enter_openat -- sh -c 'while :; do cat /etc/hostname; sleep 0.05; done' \
	2>"$tmp/kill.err" >"$tmp/killed" &
aux=$!
wait_for "$tmp/kill.err" 'Ctrl-C to stop' $aux
wait_size "$tmp/killed" 20000 $aux
kill -KILL $aux
wait $aux 2>/dev/null
"$AUXTRIG" script -i - <"$tmp/killed" >"$tmp/killed.out" 2>"$tmp/killed.err" ||
	fail "auxtrig script -i - of a killed stream failed: $(tail -3 "$tmp/killed.err")"
grep -q 'filename: "/etc/hostname"' "$tmp/killed.out" || fail "auxtrig script -i - read nothing of a killed stream"
perf script -i - <"$tmp/killed" 2>"$tmp/killed.perr" | grep -q 'filename: "/etc/hostname"' ||
	fail "perf script -i - read nothing of a killed stream: $(tail -3 "$tmp/killed.perr")"

# The reader goes away: the run ends at once (the command stopped), exit 1, said.
timeout 60 "$AUXTRIG" record -o - -e syscalls:sys_enter_openat -- sh -c 'while :; do cat /etc/hostname; done' \
	2>"$tmp/epipe.err" | head -c 20000 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && fail "record -o - ran on after its reader went away"
assert_eq "$rc" 1 "exit status of record -o - whose reader went away (stderr: $(cat "$tmp/epipe.err"))"
grep -q 'the reader of standard output went away' "$tmp/epipe.err" || fail "record -o - with its reader gone said: $(cat "$tmp/epipe.err")"
echo ok
