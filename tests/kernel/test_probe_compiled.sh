#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Conditions compiled at probe points (issue #14): the triggers' conditions at
# uprobe and uretprobe points and the --where of windows that start at them
# run as BPF instructions in a program of the point's own. A point that only
# runs triggers does all of it there (gate_front__build(): counters, policies;
# the actions in gate_fire_entry/return); one that also opens or closes
# windows, and a uprobe window's entry, decide their conditions there and
# tail-call the shared program with the verdicts (gate_front__build_probe()). The same run with every condition made too
# long for the compiler (its glob budget) runs them in the shared program's
# interpreter: both must count the same evaluations, matches and windows,
# stateful conditions ($count) included, and the known counts of
# uprobe_demo. A point whose conditions are partly over the budget keeps the
# others compiled. -v says which path each took.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
UPD=$build/examples/uprobe_demo
# Always false, and over EXPR_BPF_GLOB_BUDGET four times: the condition it is in stays interpreted.
g='*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'
long="(comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || pid != 0)"

# uprobe_demo 4 2: handle(2) -> handle(1) -> handle(0) -> try_open() per round, try_open returns -ENOENT,
# handle() returns 3, 2, 1.
conds=(
	"uprobe:$UPD:handle if arg0 == 1"
	"uprobe:$UPD:handle if arg0 * 2 - 1 > 1 && \$count >= 2"
	"uprobe:$UPD:try_open if str(arg0) == \"/nonexistent/in-handle\" && arg1 == arg1"
	"uretprobe:$UPD:try_open if ret == -ENOENT"
	"uretprobe:$UPD:handle if ret >= 2 && tid == pid && comm == \"uprobe_demo\""
)
# at handle(2) (arg0 2) and at try_open("/nonexistent/in-handle"), $count over both (one slot, one thread):
# round 1's handle() evaluates it first (1), its try_open() second: 3 handle() and 4 try_open() windows
where='(arg0 == 2 || str(arg0) ~ "/nonexistent/*") && $count >= 2'

run() { local name=$1 wrap=$2 args=() c
	for c in "${conds[@]}"; do
		if [ "$wrap" = long ]; then args+=(--on "${c} && $long:mark"); else args+=(--on "$c:mark"); fi
	done
	local w=$where
	[ "$wrap" = long ] && w="$where && $long"
	"$AUXTRIG" record -v -o "$tmp/$name.data" "${args[@]}" -w "uprobe:$UPD:handle" \
		-w "uprobe:$UPD:try_open..uretprobe:$UPD:try_open" --where "$w" \
		-- "$UPD" 4 2 >"$tmp/$name.out" 2>"$tmp/$name.err" || fail "record $name: $(cat "$tmp/$name.err")"
	assert_perf_reads_cleanly "$tmp/$name.data"
}
stats() { sed -n 's/^auxtrig: --on \(.*\):mark: \(evaluated .*\)/\2/p' "$tmp/$1.err"; }
windows() { sed -n 's/.*auxtrig record: \([0-9]*\) window.*/\1/p' "$tmp/$1.err"; }

run compiled short
run interpreted long
# which path each took
assert_eq "$(grep -c '^auxtrig: u\(ret\)\?probe: its own gate program, [0-9]* instructions, triggers compiled$' "$tmp/compiled.err")" 2 \
	"compiled: handle()'s 2 trigger-only points"
assert_eq "$(grep -c '^auxtrig: u\(ret\)\?probe: conditions compiled, [0-9]* instructions, in a program of its own before the shared one$' "$tmp/compiled.err")" 2 \
	"compiled: try_open()'s 2 points, which also open and close windows"
grep -q '^auxtrig: uprobe window: conditions compiled' "$tmp/compiled.err" || fail "compiled: the window's --where: $(cat "$tmp/compiled.err")"
grep -q 'interpreted' "$tmp/compiled.err" && fail "compiled: something interpreted: $(grep interpreted "$tmp/compiled.err")"
assert_eq "$(grep -c "^auxtrig: u\(ret\)\?probe:$UPD:[a-z_]*: conditions interpreted by the shared gate program: the globs' unrolled matchers would take" "$tmp/interpreted.err")" 4 \
	"interpreted: the 4 points"
grep -q "^auxtrig: uprobe:$UPD:handle: --where interpreted by the shared gate program: the globs' unrolled" "$tmp/interpreted.err" ||
	fail "interpreted: the window's --where: $(cat "$tmp/interpreted.err")"
grep -q 'conditions compiled\|triggers compiled' "$tmp/interpreted.err" && fail "interpreted: something compiled: $(grep 'conditions compiled\|triggers compiled' "$tmp/interpreted.err")"
# the same counts both ways, and the known ones
assert_eq "$(stats compiled)" "$(stats interpreted)" "compiled and interpreted trigger counters"
assert_eq "$(stats compiled | wc -l)" 5 "5 triggers' counters"
expect="evaluated 12, matched 4, fired 4, suppressed 0, dropped 0
evaluated 12, matched 3, fired 3, suppressed 0, dropped 0
evaluated 4, matched 4, fired 4, suppressed 0, dropped 0
evaluated 4, matched 4, fired 4, suppressed 0, dropped 0
evaluated 12, matched 8, fired 8, suppressed 0, dropped 0"
assert_eq "$(stats compiled)" "$expect" "the known counts"
assert_eq "$(windows compiled)" "$(windows interpreted)" "windows compiled and interpreted"
assert_eq "$(windows compiled)" 7 "windows: 3 handle() and 4 try_open()"
for n in compiled interpreted; do
	assert_eq "$(pscript "$tmp/$n.data" | grep -c 'auxtrig:mark: ')" 23 "$n: marks"
done

# usdt points: the shared gate_point_usdt decodes the arguments (bpf_usdt_arg()), then tail-calls the
# point's own program, which decides the conditions (the triggers', a window start's --where). Both
# ways count the same, and the known counts of usdt_demo 9 (ids 0..8; ids 2, 5, 8 fail with -ENOENT).
USDT=$build/examples/usdt_demo
urun() { local name=$1 extra=$2
	"$AUXTRIG" record -v -o "$tmp/$name.data" \
		--on "usdt:$USDT:demo:request_done if arg1 == -2 && arg0 > 2$extra:mark" \
		--on "usdt:$USDT:demo:request_start if \$count >= 3 && arg0 * 2 >= 6$extra:mark" \
		-w "usdt:$USDT:demo:request_start..usdt:$USDT:demo:request_done" --where "arg0 != 1 && arg0 < 7$extra" \
		-e syscalls:sys_enter_getppid -- "$USDT" 9 >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		fail "record $name: $(cat "$tmp/$name.err")"
	assert_perf_reads_cleanly "$tmp/$name.data"
}
urun ucompiled ""
urun uinterpreted " && $long"
assert_eq "$(grep -c '^auxtrig: usdt: conditions compiled, [0-9]* instructions, in a program of its own after the shared one.s arguments$' "$tmp/ucompiled.err")" 2 \
	"usdt compiled: both points"
grep -q 'interpreted' "$tmp/ucompiled.err" && fail "usdt compiled: something interpreted: $(grep interpreted "$tmp/ucompiled.err")"
assert_eq "$(grep -c "^auxtrig: usdt:$USDT:demo:request_[a-z]*: conditions interpreted by the shared gate program: the globs' unrolled matchers" "$tmp/uinterpreted.err")" 2 \
	"usdt interpreted: both points"
grep -q 'conditions compiled' "$tmp/uinterpreted.err" && fail "usdt interpreted: something compiled"
assert_eq "$(stats ucompiled)" "$(stats uinterpreted)" "usdt: compiled and interpreted trigger counters"
assert_eq "$(stats ucompiled)" "evaluated 9, matched 2, fired 2, suppressed 0, dropped 0
evaluated 9, matched 6, fired 6, suppressed 0, dropped 0" "usdt: the known counts"
assert_eq "$(windows ucompiled)" "$(windows uinterpreted)" "usdt windows compiled and interpreted"
assert_eq "$(windows ucompiled)" 6 "usdt windows: requests 0, 2..6"
for n in ucompiled uinterpreted; do
	assert_eq "$(pscript "$tmp/$n.data" | grep -c 'auxtrig:mark: ')" 8 "$n: marks"
	assert_eq "$(pscript "$tmp/$n.data" | grep -c 'sys_enter_getppid:')" 6 "$n: getppid() inside the windows"
done

# One point, two conditions, one over the budget: it alone is interpreted, the other stays compiled.
"$AUXTRIG" record -v -o "$tmp/mixed.data" --on "uprobe:$UPD:handle if arg0 == 1:mark" \
	--on "uprobe:$UPD:handle if arg0 == 0 && $long:mark" -- "$UPD" 4 2 >"$tmp/mixed.out" 2>"$tmp/mixed.err" ||
	fail "mixed: $(cat "$tmp/mixed.err")"
grep -q "^auxtrig: trigger 2: condition interpreted by the shared gate program: the globs' unrolled" "$tmp/mixed.err" ||
	fail "mixed: trigger 2 not interpreted: $(cat "$tmp/mixed.err")"
grep -q '^auxtrig: uprobe: conditions compiled' "$tmp/mixed.err" || fail "mixed: trigger 1 not compiled"
assert_eq "$(stats mixed)" "evaluated 12, matched 4, fired 4, suppressed 0, dropped 0
evaluated 12, matched 4, fired 4, suppressed 0, dropped 0" "mixed: counters"

# The longest condition the parser takes (EXPR_MAX_INSNS), stateful, at a uprobe point: compiled, and
# the kernel's verifier takes the point's program (on the lab's 6.1 and 6.12 guests too).
longest=
for k in $(seq 2 30); do
	c="arg0 == 1"
	for i in $(seq 2 "$k"); do c="$c || arg0 * $i == $((i * 100)) + arg1"; done
	c="($c) && \$count >= 0"
	"$AUXTRIG" record --dry-run --on "uprobe:$UPD:handle if $c:mark" -- true >/dev/null 2>"$tmp/long.err" || break
	longest=$c
done
grep -q "expression too long: [0-9]* instructions, at most [0-9]*" "$tmp/long.err" || fail "longest: $(cat "$tmp/long.err")"
[ -n "$longest" ] || fail "no condition accepted"
"$AUXTRIG" record -v -o "$tmp/longest.data" --on "uprobe:$UPD:handle if $longest:mark" -- "$UPD" 4 2 \
	>"$tmp/longest.out" 2>"$tmp/longest.err" || fail "longest: $(cat "$tmp/longest.err")"
grep -q '^auxtrig: uprobe: its own gate program, [0-9]* instructions, triggers compiled$' "$tmp/longest.err" || fail "longest: not compiled: $(cat "$tmp/longest.err")"
assert_eq "$(stats longest)" "evaluated 12, matched 4, fired 4, suppressed 0, dropped 0" "longest: counters"

# --dry-run says the same without loading anything.
"$AUXTRIG" record --dry-run --on "usdt:$USDT:demo:request_done if arg1 == -2:mark" \
	--on "usdt:$USDT:demo:request_done if arg1 == -2 && $long:mark" -- true >"$tmp/udry.out" 2>"$tmp/udry.err" ||
	fail "dry run usdt: $(cat "$tmp/udry.err")"
grep -q "^trigger 1: the shared gate program, condition compiled to BPF in the point's own program, which it runs once it has the arguments$" "$tmp/udry.out" ||
	fail "dry run usdt: trigger 1: $(cat "$tmp/udry.out")"
grep -q "^trigger 2: the shared gate program, condition interpreted: the globs' unrolled matchers" "$tmp/udry.out" ||
	fail "dry run usdt: trigger 2: $(cat "$tmp/udry.out")"
"$AUXTRIG" record --dry-run --on "uprobe:$UPD:handle if arg0 == 1:mark" \
	--on "uretprobe:$UPD:handle if ret >= 2 && $long:mark" -w "uprobe:$UPD:try_open" --where "$where" -- true \
	>"$tmp/dry.out" 2>"$tmp/dry.err" || fail "dry run: $(cat "$tmp/dry.err")"
grep -q "^trigger 1: the shared gate program, condition compiled to BPF in the point's own program before it$" "$tmp/dry.out" ||
	fail "dry run: trigger 1: $(cat "$tmp/dry.out")"
grep -q "^trigger 2: the shared gate program, condition interpreted: the globs' unrolled matchers would take [0-9]* instructions (at most [0-9]* are compiled)$" \
	"$tmp/dry.out" || fail "dry run: trigger 2: $(cat "$tmp/dry.out")"
grep -q "^--where at uprobe window uprobe:$UPD:try_open: compiled to BPF, decided in a program of its own before the shared one$" \
	"$tmp/dry.out" || fail "dry run: --where: $(cat "$tmp/dry.out")"
echo ok
