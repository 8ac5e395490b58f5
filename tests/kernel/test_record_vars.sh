#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Variables of your own (auxtrig-expr(7)), on examples/fail_burst, whose
# openat failures have known timing: thread "burst" fails once, then three
# times back to back; thread "slow" four times 30 ms apart.
# 1. The man page's example: snapshot when the same thread fails openat three
#    times within 10 ms. It fires once, at burst's third failure of the burst
#    (/nonexistent/auxtrig-burst/b3), which ends the snapshot; never on slow.
# 2. Both evaluators: at openat's exit (set actions there: the triggers run in
#    order in the gate's interpreter) a mark at b3; at getppid's entry (only
#    read there: its own compiled program) a mark right after b3. -v says
#    which program runs each.
# 3. Refusals, before anything is attached (exit 2): an undefined variable,
#    per thread and global mixed, a string in a number's place.
# 4. The table is bounded: 366 threads or more setting 16 variables each
#    (over 5,800 values, 4,096 fit): the sets that did not fit are counted, the trigger's
#    dropped counter and the summary say so, the run ends with exit 0.
. "$(dirname "$0")/lib.sh"
need_root
FB=$build/examples/fail_burst
RESET='syscall:openat:exit if ret == -ENOENT && $now - $first[tid] > 10ms:{ $first[tid] = $now; $fails[tid] = 0 }'
COUNT='syscall:openat:exit if ret == -ENOENT:{ $fails[tid] += 1 }'
THIRD='$fails[tid] >= 3 && $now - $first[tid] < 10ms'

# 1. the example
"$AUXTRIG" record -S --on "$RESET" --on "$COUNT" --on "syscall:openat:exit if ret == -ENOENT && $THIRD:snapshot,once" \
	-w syscall:openat -o "$tmp/1.data" -- "$FB" >"$tmp/1.out" 2>"$tmp/1.err" || fail "record 1 failed: $(cat "$tmp/1.err")"
grep -q 'snapshot,once: evaluated 8, matched 1, fired 1, suppressed 0, dropped 0$' "$tmp/1.err" ||
	fail "the snapshot trigger did not match exactly once: $(grep snapshot,once "$tmp/1.err")"
"$AUXTRIG" script --format=syscalls -i "$tmp/1.data" >"$tmp/1.sys" || fail "the syscall view failed on 1"
last=$(grep ' openat(' "$tmp/1.sys" | tail -1)
case $last in
*'burst/'*'openat(dfd: AT_FDCWD, filename: "/nonexistent/auxtrig-burst/b3", flags: O_RDONLY) = -1 ENOENT'*) ;;
*) fail "the snapshot does not end at burst's third failure: $last" ;;
esac
assert_eq "$(grep -c 'auxtrig:snapshot: nr=1 reason=on#3 ' "$tmp/1.sys")" 1 "snapshots taken"
assert_perf_reads_cleanly "$tmp/1.data"

# 2. interpreted at openat's exit, compiled at getppid's entry
"$AUXTRIG" record -v --on "$RESET" --on "$COUNT" --on "syscall:openat:exit if ret == -ENOENT && $THIRD:mark(str(arg1))" \
	--on "syscall:getppid:enter if $THIRD:mark" -o "$tmp/2.data" -- "$FB" >"$tmp/2.out" 2>"$tmp/2.err" ||
	fail "record 2 failed: $(cat "$tmp/2.err")"
grep -q '^auxtrig: syscalls:sys_exit_openat: triggers run by the shared gate program, conditions interpreted: a set action' \
	"$tmp/2.err" || fail "openat's exit is not interpreted: $(grep sys_exit_openat "$tmp/2.err")"
grep -q '^auxtrig: syscalls:sys_enter_getppid: its own gate program, [0-9]* instructions, triggers compiled' "$tmp/2.err" ||
	fail "getppid's entry is not compiled: $(grep getppid "$tmp/2.err")"
perf_or_ours() { "$AUXTRIG" script -i "$1"; }
perf_or_ours "$tmp/2.data" >"$tmp/2.txt"
burst=$(awk '$1 == "burst" { print $2; exit }' "$tmp/2.txt")
[ -n "$burst" ] || fail "no mark of thread burst: $(cat "$tmp/2.txt")"
assert_eq "$(grep -c 'auxtrig:mark: trigger=3 .*str="/nonexistent/auxtrig-burst/b3"$' "$tmp/2.txt")" 1 \
	"interpreted: marks at b3"
assert_eq "$(grep -c 'auxtrig:mark: trigger=3 ' "$tmp/2.txt")" 1 "interpreted: marks in all"
assert_eq "$(grep -c "^ *burst *$burst .*auxtrig:mark: trigger=4 nr=110 " "$tmp/2.txt")" 1 "compiled: marks at getppid after b3"
assert_eq "$(grep -c 'auxtrig:mark: trigger=4 ' "$tmp/2.txt")" 1 "compiled: marks in all"
assert_eq "$(grep -c '^ *slow ' "$tmp/2.txt")" 0 "marks of thread slow"

# 3. refusals
refused() { # WANT ON...
	local want=$1 args=()
	shift
	for on; do args+=(--on "$on"); done
	"$AUXTRIG" record "${args[@]}" -o "$tmp/r.data" -- true >/dev/null 2>"$tmp/r.err"
	assert_eq $? 2 "exit status of ${*}"
	grep -qF -- "$want" "$tmp/r.err" || fail "'$*': expected '$want', got: $(cat "$tmp/r.err")"
	[ ! -e "$tmp/r.data" ] || fail "a refused run left $tmp/r.data"
}
refused 'undefined variable $fails[tid]: no --on action sets it' 'syscall:openat:exit if $fails[tid] > 2:mark'
refused '$fails is one value per thread: write $fails[tid]' "$COUNT" 'syscall:openat:exit if $fails > 2:mark'
refused "a string in a number's place: \$who holds a number, 'comm' is a string" 'syscall:openat:exit:{ $who = comm }'

# 4. a bounded table: 367 threads x 16 variables
acts=$(for i in $(seq 0 15); do printf '$a%d[tid] = %d; ' "$i" "$i"; done)
"$AUXTRIG" record --on "syscall:getpid:enter:{ $acts}" -o "$tmp/4.data" -- \
	sh -c "for i in 1 2 3 4 5 6; do $DEMO -r 1 -t 60 >/dev/null || exit 1; done" >/dev/null 2>"$tmp/4.err" ||
	fail "record 4 failed: $(cat "$tmp/4.err")"
# 256 threads' 16 values fit in 4096; each later thread's first set fails (its action stops there)
read -r ev dr < <(sed -n 's/.*{ .*}: evaluated \([0-9]*\), matched [0-9]*, fired [0-9]*, suppressed 0, dropped \([0-9]*\)$/\1 \2/p' "$tmp/4.err")
[ -n "$ev" ] && [ "$ev" -ge 366 ] || fail "the set action's counters: $(grep -o 'evaluated.*' "$tmp/4.err")"
assert_eq "$dr" $((ev - 256)) "sets that did not fit (of $ev threads, 256 fit)"
grep -q "^auxtrig: warning: $dr conditions and set actions were false: a variable of your own did not fit in the table of 4096 values\$" \
	"$tmp/4.err" || fail "no word of the full table: $(cat "$tmp/4.err")"
echo ok
