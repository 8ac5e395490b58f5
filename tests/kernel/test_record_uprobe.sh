#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Uprobe windows: from a user function's entry to its return, per thread,
# recursion counted; events inside recorded, none outside.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
UPD=$build/examples/uprobe_demo
rounds=4 depth=2
calls=$((depth + 1))

"$AUXTRIG" record -q -w "uprobe:$UPD:handle" -e syscalls:sys_enter_getppid -o "$tmp/u.data" -- "$UPD" $rounds $depth \
	>/dev/null 2>"$tmp/u.err" || fail "record failed: $(cat "$tmp/u.err")"
assert_perf_reads_cleanly "$tmp/u.data"
pscript "$tmp/u.data" >"$tmp/u.txt"
assert_eq "$(grep -c 'auxtrig:uprobe_enter: window=0 depth=1 arg0=0x2 ' "$tmp/u.txt")" $rounds "outermost calls (windows)"
assert_eq "$(grep -c 'auxtrig:uprobe_enter:' "$tmp/u.txt")" $((rounds * calls)) "entries, recursion included"
assert_eq "$(grep -c 'auxtrig:uprobe_exit:' "$tmp/u.txt")" $((rounds * calls)) "returns"
assert_eq "$(grep -c "uprobe_exit: window=0 depth=1 ret=$calls\$" "$tmp/u.txt")" $rounds "outermost return values"
# Of the rounds * (calls + 1) getppid() calls, only those inside handle() are recorded.
assert_eq "$(grep -c 'sys_enter_getppid:' "$tmp/u.txt")" $((rounds * calls)) "getppid inside the windows"
awk '/uprobe_enter:/ { d = $0; sub(/.*depth=/, "", d); sub(/ .*/, "", d); depth = d + 0; next }
     /uprobe_exit:/  { d = $0; sub(/.*depth=/, "", d); sub(/ .*/, "", d); depth = d - 1; next }
     /sys_enter_getppid:/ { if (depth < 1) { print "outside: " $0; bad = 1 } }
     END { exit bad }' "$tmp/u.txt" || fail "an event outside the window"
# The entries' IP is the function: perf resolves it.
n=$(perf script -F event,ip,sym -i "$tmp/u.data" 2>/dev/null | grep -c 'uprobe_enter: .* handle$')
[ "$n" = $((rounds * calls)) ] ||
	fail "uprobe_enter not at handle()"

# --where on the function's arguments: handle(2) only at the outermost call; none is 5.
"$AUXTRIG" record -q -w "uprobe:$UPD:handle" --where 'arg0 == 5' -e syscalls:sys_enter_getppid -o "$tmp/w.data" \
	-- "$UPD" $rounds $depth >/dev/null || fail "record --where failed"
assert_eq "$(pscript "$tmp/w.data" | grep -c .)" 0 "events when --where never holds"

# --where decides at the outermost call only: the calls nested in a vetoed one and its return
# neither open nor close the window (as the in-kernel veto programs on hardware trace do,
# tests/lab/test_lab_uprobe_where.sh). 'arg0 == 1' holds only for the first nested call: no window.
"$AUXTRIG" record -w "uprobe:$UPD:handle" --where 'arg0 == 1' -e syscalls:sys_enter_getppid -o "$tmp/n.data" \
	-- "$UPD" $rounds $depth >/dev/null 2>"$tmp/n.err" || fail "record --where 'arg0 == 1' failed: $(cat "$tmp/n.err")"
grep -q 'auxtrig record: 0 windows' "$tmp/n.err" || fail "--where 'arg0 == 1' opened windows: $(cat "$tmp/n.err")"
assert_eq "$(pscript "$tmp/n.data" | grep -c .)" 0 "events when --where holds only for nested calls"
# 'every 2' counts outermost calls only: the 2nd, 4th and 6th open, each a whole call. With 3 and
# 4 entries per call (compiled, a --where counted at nested calls of a vetoed one opened 3 windows
# with 3 entries by chance, none with 4).
for d in $depth 3; do
	"$AUXTRIG" record -q -f -w "uprobe:$UPD:handle" --where 'every 2' -e syscalls:sys_enter_getppid -o "$tmp/e.data" \
		-- "$UPD" 6 $d >/dev/null 2>"$tmp/e.err" || fail "record --where 'every 2' failed: $(cat "$tmp/e.err")"
	pscript "$tmp/e.data" >"$tmp/e.txt"
	assert_eq "$(grep -c "auxtrig:uprobe_enter: window=0 depth=1 arg0=0x$d " "$tmp/e.txt")" 3 "'every 2', depth $d: windows of outermost calls"
	assert_eq "$(grep -c 'auxtrig:uprobe_enter:' "$tmp/e.txt")" $((3 * (d + 1))) "'every 2', depth $d: entries"
	assert_eq "$(grep -c 'auxtrig:uprobe_exit:' "$tmp/e.txt")" $((3 * (d + 1))) "'every 2', depth $d: returns"
	assert_eq "$(grep -c 'sys_enter_getppid:' "$tmp/e.txt")" $((3 * (d + 1))) "'every 2', depth $d: getppid inside the windows"
done
# Bad input: no such file, no such symbol: exit 2 and no file.
"$AUXTRIG" record -w uprobe:/no/such/file:handle -o "$tmp/x.data" -- "$UPD" 2>"$tmp/x.err"
assert_eq $? 2 "exit code for a missing binary"
grep -q "no such file" "$tmp/x.err" || fail "$(cat "$tmp/x.err")"
"$AUXTRIG" record -w "uprobe:$UPD:no_such_function" -o "$tmp/x.data" -- "$UPD" 2>"$tmp/x.err"
assert_eq $? 2 "exit code for a missing symbol"
grep -q "no such symbol" "$tmp/x.err" || fail "$(cat "$tmp/x.err")"
[ ! -e "$tmp/x.data" ] || fail "a failed start left a file"
echo ok
