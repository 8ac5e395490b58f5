#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Faults leave a file perf reads, holding the events up to the fault:
# SIGKILL of auxtrig (and the window auxtrig repair closes), a full disk, a
# crashing target.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

count() { pscript "$1" | grep -c 'sys_enter_openat:'; }

# 1. SIGKILL mid-run: no chance to finish the file, and perf still reads it.
# (Up to 20 s for 64 KiB: a loaded 2-CPU machine can be slow to get going.)
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/k.data" -- "$DEMO" -r 1000000 >/dev/null 2>"$tmp/k.err" &
aux=$!
wait_size "$tmp/k.data" 65536 $aux
kill -KILL $aux || fail "auxtrig ended before it was killed: $(cat "$tmp/k.err")"
wait $aux 2>/dev/null
# (The command dies with auxtrig: test_record_sigkill.sh.)
# The kill may land in the microseconds between a round's data and its header:
# repair closes that window and says whether it had to.
"$AUXTRIG" repair "$tmp/k.data" >"$tmp/repair.out" || fail "repair failed: $(cat "$tmp/repair.out")"
assert_perf_reads_cleanly "$tmp/k.data"
killed=$(count "$tmp/k.data")
[ "$killed" -gt 100 ] || fail "only $killed windows survived the kill"

# 2. That window, made on purpose: the header says no data although whole
#    records follow (as if killed before the header was patched).
printf '\0\0\0\0\0\0\0\0' | dd of="$tmp/k.data" bs=1 seek=48 conv=notrunc status=none
"$AUXTRIG" repair -n "$tmp/k.data" | grep -q "keeping" || fail "repair -n did not see the unfinished file"
"$AUXTRIG" repair "$tmp/k.data" >/dev/null || fail "repair failed on the unfinished file"
assert_perf_reads_cleanly "$tmp/k.data"
assert_eq "$(count "$tmp/k.data")" "$killed" "windows after repair"
"$AUXTRIG" repair "$tmp/k.data" | grep -q "nothing to repair" || fail "repair touched a complete file"
echo garbage >"$tmp/not.data"
"$AUXTRIG" repair "$tmp/not.data" 2>/dev/null
assert_eq $? 1 "repair of a file that is not perf.data"

# 3. Disk full: stop, keep a valid file of what fit, say so, exit 1.
mkdir "$tmp/small"
mount -t tmpfs -o size=256k tmpfs "$tmp/small" || skip "cannot mount a tmpfs"
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/small/f.data" -- "$DEMO" -r 5000 >/dev/null 2>"$tmp/enospc.err"
rc=$?
cp "$tmp/small/f.data" "$tmp/f.data"
umount "$tmp/small"
assert_eq $rc 1 "exit code on a full disk"
grep -q "No space left on device" "$tmp/enospc.err" || fail "no ENOSPC message: $(cat "$tmp/enospc.err")"
grep -q "holds what was written before it" "$tmp/enospc.err" || fail "no word on what was kept"
# perf reads it, and its only possible warning is the loss the file records (perf 6.1 warns
# only when more than 5% of the samples were lost: how many depends on where the disk filled,
# so it is not required here; the LOST_SAMPLES records are counted exactly below).
perf report -D -i "$tmp/f.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed on the salvaged file"
grep -viE '^Warning:$|Processed [0-9]* samples and lost [0-9.]*%!|^$' "$tmp/dump.err" &&
	fail "perf report -D warns about the salvaged file"
perf script -i "$tmp/f.data" >/dev/null 2>&1 || fail "perf script failed on the salvaged file"
n=$(count "$tmp/f.data")
[ "$n" -gt 100 ] && [ "$n" -lt 10000 ] || fail "$n windows kept on a full disk"
# Nothing recorded goes unaccounted (issue #13, 4: "lost 0" while 1,032 events never reached the
# file): every window's enter and exit is either in the file or counted lost, on stderr and in
# the file, as perf reads it.
summary=$(grep '^\[ auxtrig record:' "$tmp/enospc.err")
read -r windows kept lost < <(sed -n 's/.* \([0-9]*\) windows, \([0-9]*\) events recorded,.* lost \([0-9]*\) records.*/\1 \2 \3/p' <<<"$summary")
[ -n "${lost:-}" ] || fail "no summary line: $(cat "$tmp/enospc.err")"
in_file=$(perf script -F event -i "$tmp/f.data" 2>/dev/null | grep -c 'sys_e[a-z]*_openat:')
assert_eq "$in_file" "$kept" "events in the file"
[ "$lost" -gt 0 ] || fail "a full disk lost nothing: $summary"
[ $((kept + lost)) -le $((2 * windows)) ] && [ $((kept + lost)) -ge $((2 * windows - 2)) ] ||
	fail "$kept kept + $lost lost records of $windows windows (2 records each): some are unaccounted"
grep -q "^auxtrig: $lost samples recorded never reached .* (the file counts them as lost samples)" \
	"$tmp/enospc.err" || fail "the loss is not reported: $(cat "$tmp/enospc.err")"
in_file_lost=$(perf report -D -i "$tmp/f.data" 2>/dev/null | sed -n 's/.*PERF_RECORD_LOST_SAMPLES: .*lost samples :\([0-9]*\).*/\1/p' |
	awk '{ n += $1 } END { print n + 0 }')
assert_eq "$in_file_lost" "$lost" "lost samples the file records"

# 4. The target crashes: auxtrig says so and the file holds everything before it.
"$AUXTRIG" record -w syscall:openat -o "$tmp/c.data" -- "$DEMO" -r 7 -K >/dev/null 2>"$tmp/crash.err"
assert_eq $? 0 "exit code when the target crashes"
grep -q "killed by signal 11" "$tmp/crash.err" || fail "the crash is not reported: $(cat "$tmp/crash.err")"
assert_perf_reads_cleanly "$tmp/c.data"
assert_eq "$(count "$tmp/c.data")" 14 "windows before the crash"
echo ok
