#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Call stacks (-g): marks, window edges, -e events and a snapshot trigger's
# auxtrig:snapshot carry their thread's stack, which perf 6.1 prints under
# each record (perf script) and draws as call graphs (perf report -g).
# examples/stack_demo makes its failing openat from a known path:
# main -> stack_demo_outer -> stack_demo_inner -> openat, 1 ms sleeps between.
# Without -g no record has a stack. auxtrig script prints the stacks as
# perf script does, line for line.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

STACK_DEMO=$build/examples/stack_demo
[ -x "$STACK_DEMO" ] || fail "$STACK_DEMO not built (make)"

# stacks FILE EVENT [TOOL]: one line per EVENT record: its frames' symbols,
# innermost first, each tagged k (kernel) or u (stack_demo's own code), others
# as ?; as TOOL's script prints them (perf, else auxtrig).
stacks() {
	if [ "${3:-perf}" = perf ]; then perf script -i "$1" 2>/dev/null; else "$AUXTRIG" script -i "$1"; fi |
	awk -v ev="$2:" '
		/^[^ \t]/ || /^ +[^ \t].*: [a-z_]+:[a-z_]+:/ { if (on) print line; on = 0 }
		/^$/ { if (on) print line; on = 0; next }
		!/^\t/ { on = index($0, " " ev " ") > 0; line = ""; next }
		on {
			sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym)
			tag = /\(\[kernel\.kallsyms\]\)$/ ? "k" : /\/stack_demo\)$/ ? "u" : "?"
			line = line (line == "" ? "" : " ") tag ":" sym
		}
		END { if (on) print line }'
}
# the user part of a stack: its u: frames, in order
user_part() { grep -oE 'u:[A-Za-z_0-9]+' | sed 's/^u://' | tr '\n' ' ' | sed 's/ $//'; }
# auxtrig script prints FILE as perf script does, stacks included
same_as_perf() {
	"$AUXTRIG" script -i "$1" >"$1.auxtrig" 2>"$1.auxtrig.err" || fail "auxtrig script $1: $(cat "$1.auxtrig.err")"
	perf script -i "$1" >"$1.perf" 2>/dev/null
	diff -u "$1.perf" "$1.auxtrig" >"$1.diff" || fail "auxtrig script differs from perf script: $(head -30 "$1.diff")"
}

# 1. -g: each failing openat's mark and each window's opening record
#    (sys_enter_openat) carries main -> outer -> inner, innermost first.
"$AUXTRIG" record -q -g -o "$tmp/1.data" -w syscall:openat --on 'syscall:openat:exit if ret < 0:mark' \
	-- "$STACK_DEMO" -r 3 >"$tmp/1.out" 2>&1 || fail "record -g failed: $(cat "$tmp/1.out")"
assert_perf_reads_cleanly "$tmp/1.data"
for tool in perf auxtrig; do
	for ev in auxtrig:mark syscalls:sys_enter_openat syscalls:sys_exit_openat; do
		stacks "$tmp/1.data" "$ev" $tool >"$tmp/1.$ev"
		assert_eq "$(wc -l <"$tmp/1.$ev")" 3 "$ev records with a stack ($tool script)"
		while read -r s; do
			assert_eq "$(user_part <<<"$s" | cut -d' ' -f1-3)" "stack_demo_inner stack_demo_outer main" \
				"$ev's user stack, $tool script (all frames: $s)"
			# kernel frames, if any, are the innermost: before every user frame
			[[ "$s" =~ u:.*\ k: ]] && fail "$ev: a kernel frame after a user frame ($tool script): $s"
		done <"$tmp/1.$ev"
	done
done
same_as_perf "$tmp/1.data"

# 2. perf report -g draws the call graph from them
perf report -g -i "$tmp/1.data" --stdio >"$tmp/2.txt" 2>"$tmp/2.err" || fail "perf report -g failed: $(cat "$tmp/2.err")"
grep -q -- '---' "$tmp/2.txt" || fail "perf report -g shows no call graph: $(head -40 "$tmp/2.txt")"
for f in stack_demo_inner stack_demo_outer main; do
	grep -qE "^ +[|-]*-*${f}\$|^ +\|? +${f}\$|---${f}\$" "$tmp/2.txt" || fail "perf report -g has no $f frame: $(head -60 "$tmp/2.txt")"
done

# 3. kernel stacks: a context switch inside a clock_nanosleep window was taken
#    in schedule, called (at some depth) from the kernel's nanosleep; while
#    another tracer also uses sched_switch the tracepoint's iterator
#    (__traceiter_sched_switch) is the innermost frame, above schedule
"$AUXTRIG" record -q -g -o "$tmp/3.data" -w syscall:clock_nanosleep -e sched:sched_switch \
	-- "$STACK_DEMO" -r 3 >"$tmp/3.out" 2>&1 || fail "record -g failed: $(cat "$tmp/3.out")"
assert_perf_reads_cleanly "$tmp/3.data"
for tool in perf auxtrig; do
	stacks "$tmp/3.data" sched:sched_switch $tool >"$tmp/3.sw"
	[ -s "$tmp/3.sw" ] || fail "no sched_switch with a stack inside the sleeps ($tool script): $(perf script -i "$tmp/3.data" 2>&1 | head -30)"
	grep -qE '^(k:__traceiter_sched_switch[^ ]* )?k:[^ ]*schedule\b.* k:[^ ]*nanosleep' "$tmp/3.sw" ||
		fail "no switch's kernel stack has schedule under a nanosleep ($tool script): $(head -5 "$tmp/3.sw")"
	grep -qE 'k:.* u:' "$tmp/3.sw" || fail "the switches' stacks have no user part ($tool script): $(head -5 "$tmp/3.sw")"
done
same_as_perf "$tmp/3.data"

# 4. a snapshot trigger: auxtrig:snapshot is the triggering thread's, with its stack
"$AUXTRIG" record -q -g -S -o "$tmp/4.data" -e syscalls:sys_exit_close \
	--on 'syscall:openat:exit if ret < 0:snapshot,once' \
	-- "$STACK_DEMO" -r 3 >"$tmp/4.out" 2>&1 || fail "record -g -S failed: $(cat "$tmp/4.out")"
assert_perf_reads_cleanly "$tmp/4.data"
perf script -i "$tmp/4.data" 2>/dev/null | grep -q '^ *stack_demo .*auxtrig:snapshot: nr=1 reason=on#1 ' ||
	fail "auxtrig:snapshot is not stack_demo's: $(perf script -i "$tmp/4.data" 2>&1 | head -20)"
for tool in perf auxtrig; do
	stacks "$tmp/4.data" auxtrig:snapshot $tool >"$tmp/4.snap"
	assert_eq "$(wc -l <"$tmp/4.snap")" 1 "snapshot records ($tool script)"
	assert_eq "$(user_part <"$tmp/4.snap" | cut -d' ' -f1-3)" "stack_demo_inner stack_demo_outer main" \
		"the snapshot trigger's user stack, $tool script (all frames: $(cat "$tmp/4.snap"))"
done
same_as_perf "$tmp/4.data"

# 5. without -g: the same recording, no stacks, the records as before
"$AUXTRIG" record -q -o "$tmp/5.data" -w syscall:openat --on 'syscall:openat:exit if ret < 0:mark' \
	-- "$STACK_DEMO" -r 3 >"$tmp/5.out" 2>&1 || fail "record failed: $(cat "$tmp/5.out")"
assert_perf_reads_cleanly "$tmp/5.data"
perf script -i "$tmp/5.data" >"$tmp/5.txt" 2>/dev/null
assert_eq "$(grep -c "auxtrig:mark: trigger=1 nr=$(syscall_nr openat) ret=-2 " "$tmp/5.txt")" 3 "marks without -g"
grep -q $'^\t' "$tmp/5.txt" && fail "stack lines without -g: $(grep -m3 $'^\t' "$tmp/5.txt")"
same_as_perf "$tmp/5.data"
perf report --header-only -i "$tmp/5.data" 2>/dev/null | grep -q 'CALLCHAIN' &&
	fail "an attr samples CALLCHAIN without -g"
perf report --header-only -i "$tmp/1.data" 2>/dev/null | grep 'name = auxtrig:mark' | grep -q 'CALLCHAIN' ||
	fail "auxtrig:mark's attr lacks CALLCHAIN with -g"
echo ok
