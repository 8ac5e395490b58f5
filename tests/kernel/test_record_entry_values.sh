#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Entry values at exits (issue #16): an --on condition at a uretprobe: point
# or a syscall's exit reads the arguments its call entered with (entry.argN)
# and the time since that entry ($duration), per thread, each return of a
# recursion its own call's. nap_demo 3 2 20 2: two threads at once, each 3
# rounds of nap(2, MS) -> nap(1, MS) -> nap(0, MS), each call sleeping MS ms
# (the main thread 20, the other 30: their calls interleave), so nap(d, MS)
# lasts at least (d + 1) * MS ms and returns after the calls it made; 18
# calls and 18 clock_nanosleep(CLOCK_MONOTONIC = 1, 0, &ts, NULL) calls of at
# least 20 ms. The
# same conditions run compiled (the uretprobe's and the syscall exit's own
# programs, entry.argN at the exit included)
# and interpreted (made too long to compile): both count the same, and the
# known counts. Only lower bounds of durations are asserted (the known sleeps).
. "$(dirname "$0")/lib.sh"
need_root
need_perf
NAP=$build/examples/nap_demo
# Always false, and over EXPR_BPF_GLOB_BUDGET: the condition it is in stays interpreted.
g='*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'
long="(comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || pid != 0)"

conds=(
	"uretprobe:$NAP:nap if entry.arg0 == 2 && \$duration >= 3 * entry.arg1 * 1ms"
	"uretprobe:$NAP:nap if entry.arg0 == 1 && \$duration >= 2 * entry.arg1 * 1ms && ret == 2"
	"uretprobe:$NAP:nap if entry.arg0 == 0 && (int)entry.arg1 == 30"
	"uretprobe:$NAP:nap if \$duration < (entry.arg0 + 1) * entry.arg1 * 1ms"
	"uretprobe:$NAP:nap if \$duration >= (entry.arg0 + 1) * entry.arg1 * 1ms"
	"syscall:clock_nanosleep:exit if \$duration >= 20ms && ret == 0 && entry.arg0 == 1 && entry.arg1 == 0"
	"syscall:clock_nanosleep:exit if \$duration < 20ms"
	"syscall:clock_nanosleep:exit if (int)entry.arg0 != 1 || entry.arg3 != 0"
)
expect="evaluated 18, matched 6, fired 6, suppressed 0, dropped 0
evaluated 18, matched 6, fired 6, suppressed 0, dropped 0
evaluated 18, matched 3, fired 3, suppressed 0, dropped 0
evaluated 18, matched 0, fired 0, suppressed 0, dropped 0
evaluated 18, matched 18, fired 18, suppressed 0, dropped 0
evaluated 18, matched 18, fired 18, suppressed 0, dropped 0
evaluated 18, matched 0, fired 0, suppressed 0, dropped 0
evaluated 18, matched 0, fired 0, suppressed 0, dropped 0"
stats() { sed -n 's/^auxtrig: --on \(.*\):mark: \(evaluated .*\)/\2/p' "$tmp/$1.err"; }
run() { local name=$1 wrap=$2 args=() c
	for c in "${conds[@]}"; do
		if [ "$wrap" = long ]; then args+=(--on "${c} && $long:mark"); else args+=(--on "$c:mark"); fi
	done
	"$AUXTRIG" record -v -o "$tmp/$name.data" "${args[@]}" -- "$NAP" 3 2 20 2 >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		fail "record $name: $(cat "$tmp/$name.err")"
	assert_perf_reads_cleanly "$tmp/$name.data"
}
run compiled short
run interpreted long
grep -q '^auxtrig: uretprobe: conditions compiled, [0-9]* instructions, in a program of its own before the shared one$' \
	"$tmp/compiled.err" || fail "compiled: the uretprobe: $(cat "$tmp/compiled.err")"
grep -q '^auxtrig: syscalls:sys_exit_clock_nanosleep: its own gate program, [0-9]* instructions, triggers compiled$' \
	"$tmp/compiled.err" || fail "compiled: the syscall exit: $(cat "$tmp/compiled.err")"
grep -q 'interpreted' "$tmp/compiled.err" && fail "compiled: something interpreted: $(grep interpreted "$tmp/compiled.err")"
grep -q "^auxtrig: uretprobe:$NAP:nap: conditions interpreted by the shared gate program: the globs' unrolled" \
	"$tmp/interpreted.err" || fail "interpreted: the uretprobe: $(cat "$tmp/interpreted.err")"
assert_eq "$(stats compiled)" "$expect" "compiled: the known counts"
assert_eq "$(stats interpreted)" "$expect" "interpreted: the known counts"
# a mark at the return carries its own call's entry arguments (arg1: 20 or 30 ms, by thread), per depth
for n in compiled interpreted; do
	pscript "$tmp/$n.data" >"$tmp/$n.txt"
	for ms in 14 1e; do
		assert_eq "$(grep -c "auxtrig:mark: trigger=1 nr=-1 ret=3 arg0=0x2 arg1=0x$ms " "$tmp/$n.txt")" 3 "$n: nap(2, 0x$ms)'s marks"
		assert_eq "$(grep -c "auxtrig:mark: trigger=2 nr=-1 ret=2 arg0=0x1 arg1=0x$ms " "$tmp/$n.txt")" 3 "$n: nap(1, 0x$ms)'s marks"
	done
	assert_eq "$(grep -c 'auxtrig:mark: trigger=3 nr=-1 ret=1 arg0=0x0 arg1=0x1e ' "$tmp/$n.txt")" 3 "$n: nap(0, 30)'s marks"
	assert_eq "$(grep -c 'auxtrig:mark: trigger=5 ' "$tmp/$n.txt")" 18 "$n: marks of every call"
	# each thread's marks: its own 3 rounds of 3 calls
	assert_eq "$(grep 'auxtrig:mark: trigger=5 ' "$tmp/$n.txt" | awk '{print $2}' | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')" \
		"9 9 " "$n: marks per thread"
done

# entry.argN at the exit too (clock_nanosleep(CLOCK_MONOTONIC = 1, 0, &ts, NULL)), with $duration
"$AUXTRIG" record -o "$tmp/sys.data" -v \
	--on 'syscall:clock_nanosleep:exit if entry.arg0 == 1 && entry.arg1 == 0 && $duration >= 20ms:mark' \
	-- "$NAP" 3 2 20 >"$tmp/sys.out" 2>"$tmp/sys.err" || fail "record sys: $(cat "$tmp/sys.err")"
assert_eq "$(stats sys)" "evaluated 9, matched 9, fired 9, suppressed 0, dropped 0" "entry.arg0 and \$duration at the exit"

# deeper than GATE_CALL_DEPTH (16): nap(17) -> ... -> nap(0), 18 calls; the 16 outermost have their
# entry, the 2 innermost none (their conditions are false), and the outer returns still find theirs
"$AUXTRIG" record -o "$tmp/deep.data" -v --on "uretprobe:$NAP:nap if \$duration >= 0:mark" \
	--on "uretprobe:$NAP:nap if entry.arg0 == 17 && \$duration >= 18ms:mark" \
	-- "$NAP" 1 17 1 >"$tmp/deep.out" 2>"$tmp/deep.err" || fail "record deep: $(cat "$tmp/deep.err")"
assert_eq "$(stats deep)" "evaluated 18, matched 16, fired 16, suppressed 0, dropped 0
evaluated 18, matched 1, fired 1, suppressed 0, dropped 0" "18 nested calls"

# where there is no call's entry: one line, exit 2
for on in 'syscall:openat:enter if $duration > 1ms' "uprobe:$NAP:nap if entry.arg0 == 1" \
	'tp:sched:sched_switch if $duration > 1ms'; do
	"$AUXTRIG" record -q -o "$tmp/e.data" --on "$on:mark" -- true 2>"$tmp/e.err"
	assert_eq "$?" 2 "exit status of --on '$on'"
	assert_eq "$(wc -l <"$tmp/e.err")" 1 "lines of the refusal of '$on'"
	grep -q "is known only at a syscall's exit point (syscall:NAME:exit) or a return point (uretprobe:, kretprobe:)" "$tmp/e.err" ||
		fail "refusal of '$on': $(cat "$tmp/e.err")"
done
"$AUXTRIG" record -q -o "$tmp/w.data" -w syscall:openat --where '$duration > 1ms' -- true 2>"$tmp/w.err"
assert_eq "$?" 2 "exit status of \$duration in --where"
grep -qF "'\$duration' is known only in --on conditions at exits" "$tmp/w.err" || fail "--where refusal: $(cat "$tmp/w.err")"
echo ok
