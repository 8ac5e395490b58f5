#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# On a terminal, record shows a live status line (windows, records, bytes,
# losses) at most four times a second, and progress while attaching and
# detaching tracepoints; the line is erased before the summary. Not on a
# terminal, or with -q: none of it.
. "$(dirname "$0")/lib.sh"
need_root
command -v script >/dev/null || fail "script (util-linux) is missing"

# a pseudo-terminal: util-linux script runs the command on one and logs what it printed
on_tty() { script -qfec "$1" "$2" >/dev/null; }

# sleep_pattern LLLL: four 250 ms sleeps, one window each
t0=$(date +%s%N)
on_tty "'$AUXTRIG' record -w syscall:clock_nanosleep -o '$tmp/1.data' -- '$build/examples/sleep_pattern' LLLL" "$tmp/tty.txt" ||
	fail "record on a terminal failed: $(cat "$tmp/tty.txt")"
ms=$((($(date +%s%N) - t0) / 1000000))
tr '\r' '\n' <"$tmp/tty.txt" | grep -a '^auxtrig: recording: ' | sed 's/\x1b\[K.*//' >"$tmp/status"
[ -s "$tmp/status" ] || fail "no status line on the terminal: $(cat -v "$tmp/tty.txt")"
grep -avqE '^auxtrig: recording: [0-9]+ windows?, [0-9]+ records?, [0-9]+\.[0-9] KiB, lost 0$' "$tmp/status" &&
	fail "malformed status line: $(cat "$tmp/status")"
# about 1 s of recording (longer in a slow guest: the whole run, start-up included, as measured),
# refreshed at most every 250 ms
n=$(wc -l <"$tmp/status")
[ "$n" -le $((ms / 250 + 2)) ] || fail "$n status refreshes in a run of $ms ms: more than four a second"
# the counts only grow, up to the run's 4 windows and 8 records
awk '{ w = $3; r = $5; if (w < pw || r < pr || w > 4 || r > 8) bad = 1; pw = w; pr = r } END { exit bad }' "$tmp/status" ||
	fail "status counts: $(cat "$tmp/status")"
# erased before the summary, which is whole on its own line
grep -aq $'\r\x1b\\[K\\[ auxtrig record: 4 windows, 8 events written' "$tmp/tty.txt" ||
	fail "the summary does not follow an erased line: $(cat -v "$tmp/tty.txt" | tail -3)"

# attaching and detaching many tracepoints: progress
on_tty "'$AUXTRIG' record -e 'syscalls:sys_enter_[a-g]*' -o '$tmp/2.data' -- '$build/examples/sleep_pattern' S" "$tmp/tty2.txt" ||
	fail "record -e 'syscalls:sys_enter_[a-g]*' on a terminal failed"
tr '\r' '\n' <"$tmp/tty2.txt" >"$tmp/lines2"
grep -aqE '^auxtrig: attaching tracepoints: [0-9]+ of [0-9]+' "$tmp/lines2" || fail "no attach progress: $(cat -v "$tmp/tty2.txt" | head -5)"
grep -aqE '^auxtrig: detaching: [0-9]+ of [0-9]+ \(the kernel waits for each[;)]' "$tmp/lines2" ||
	fail "no detach progress: $(cat -v "$tmp/tty2.txt" | tail -5)"

# not a terminal, or -q: nothing of it
"$AUXTRIG" record -w syscall:clock_nanosleep -o "$tmp/3.data" -- "$build/examples/sleep_pattern" LL >/dev/null 2>"$tmp/err3" ||
	fail "record failed"
grep -aq $'\r' "$tmp/err3" && fail "status written to a file: $(cat -v "$tmp/err3")"
grep -aq 'recording: ' "$tmp/err3" && fail "status written to a file"
on_tty "'$AUXTRIG' record -q -w syscall:clock_nanosleep -o '$tmp/4.data' -- '$build/examples/sleep_pattern' LL" "$tmp/tty4.txt" ||
	fail "record -q on a terminal failed"
grep -aq 'auxtrig: ' "$tmp/tty4.txt" && fail "-q on a terminal printed: $(cat -v "$tmp/tty4.txt")"
echo ok
