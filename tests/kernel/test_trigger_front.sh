#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A syscall point's own gate program remembers, per CPU, whether the running
# thread is a target, and its ids, until the CPU switches threads or the
# thread execs (include/auxtrig/record/gate_front.h). Threads and processes
# that take turns on one CPU must each still be seen as themselves: exact
# counts where targets and others alternate.
. "$(dirname "$0")/lib.sh"
need_root
# One CPU of ours, whichever this machine numbers first (not CPU 0, which our affinity may lack).
cpu=$(one_cpu)
LOOP=$build/examples/openat_loop

# wait_until FILE PATTERN: up to 20 s for a line of FILE to match
wait_until() {
	for _ in $(seq 2000); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	fail "timed out waiting for '$2' in $1: $(cat "$1")"
}

# 1. Two processes on one CPU, taking turns, one of them the target (-p):
# only the target's calls are evaluated, every one of them.
mkfifo "$tmp/go.a" "$tmp/go.b"
taskset -c "$cpu" "$LOOP" 100000 /nonexistent/auxtrig-a <"$tmp/go.a" >"$tmp/a.out" &
a=$!
taskset -c "$cpu" "$LOOP" 100000 /nonexistent/auxtrig-b <"$tmp/go.b" >"$tmp/b.out" &
b=$!
exec 8>"$tmp/go.a" 9>"$tmp/go.b"
"$AUXTRIG" record -o "$tmp/p.data" --on 'syscall:openat:exit:mark,every:1000000000' -p $a \
	2>"$tmp/p.err" 8>&- 9>&- &
aux=$!
wait_until "$tmp/p.err" recording
grep -q 'sys_exit_openat: its own gate program' "$tmp/p.err" || fail "not a program of its own: $(cat "$tmp/p.err")"
echo go >&8
echo go >&9
wait_until "$tmp/a.out" '^calls'
wait_until "$tmp/b.out" '^calls'
exec 8>&- 9>&-
wait $a $b
wait $aux || fail "record -p failed: $(cat "$tmp/p.err")"
grep -q 'evaluated 100000, matched 100000, fired 0, suppressed 100000' "$tmp/p.err" ||
	fail "the target's calls, with another process on its CPU: $(grep evaluated "$tmp/p.err")"

# 2. Four threads of one command on one CPU (each round sleeps, so they take
# turns), a condition on the thread's ids: only the main thread's getpid calls
# match. The command becomes a target at its exec, through the targets map.
taskset -c "$cpu" "$AUXTRIG" record -o "$tmp/t.data" --on 'syscall:getpid:exit if tid == pid:mark,every:1000000000' \
	-- "$DEMO" -r 200 -t 3 >/dev/null 2>"$tmp/t.err" || fail "record failed: $(cat "$tmp/t.err")"
grep -q 'sys_exit_getpid: its own gate program' "$tmp/t.err" || fail "not a program of its own: $(cat "$tmp/t.err")"
grep -q 'evaluated 800, matched 200, fired 0, suppressed 200' "$tmp/t.err" ||
	fail "tid == pid of 4 threads x 200 rounds: $(grep evaluated "$tmp/t.err")"

# 3. Exec: the command's process reads its start signal from auxtrig before it
# execs (not yet a target), then the demo's one read per round: exactly those.
taskset -c "$cpu" "$AUXTRIG" record -o "$tmp/e.data" --on 'syscall:read:exit:mark,every:1000000000' \
	-- "$DEMO" -r 50 >/dev/null 2>"$tmp/e.err" || fail "record failed: $(cat "$tmp/e.err")"
grep -q 'evaluated 50, matched 50' "$tmp/e.err" || fail "reads after the exec: $(grep evaluated "$tmp/e.err")"

# 4. -t: one thread of four on one CPU is the target.
taskset -c "$cpu" "$DEMO" -r 1500 -t 3 >/dev/null &
demo=$!
# its threads, waited for (a fixed 0.2 s was too short on a loaded machine)
for _ in $(seq 200); do [ "$(ls /proc/$demo/task 2>/dev/null | wc -l)" -ge 4 ] && break; sleep 0.05; done
tid=$(ls /proc/$demo/task | grep -vx $demo | head -1)
[ -n "$tid" ] || fail "demo has no extra thread"
"$AUXTRIG" record -o "$tmp/d.data" --on "syscall:getpid:exit if tid == $tid:mark,every:1000000000" -t "$tid" \
	2>"$tmp/d.err" || fail "record -t: $(cat "$tmp/d.err")"
wait $demo
n=$(sed -n 's/.*: evaluated \([0-9]*\), matched \([0-9]*\),.*/\1 \2/p' "$tmp/d.err")
read -r ev ma <<<"$n"
[ "${ev:-0}" -gt 0 ] || fail "no getpid of thread $tid evaluated: $(cat "$tmp/d.err")"
assert_eq "$ma" "$ev" "hits of -t $tid whose tid is $tid"
# 5. comm (bpf_get_current_comm()) and ppid (the task's real_parent, read
# through the kernel's BTF) in a point's own program: the demo is this
# shell's child; every hit matches, and none with a comm one letter short.
for c in 'openat_demo:all' 'openat_dem:none'; do
	taskset -c "$cpu" "$DEMO" -r 1000 -t 1 >/dev/null &
	demo=$!
	"$AUXTRIG" record -f -o "$tmp/c.data" -p $demo \
		--on "syscall:getpid:exit if ppid == $$ && comm == \"${c%:*}\":mark,every:1000000000" 2>"$tmp/c.err" ||
		fail "record -p: $(cat "$tmp/c.err")"
	wait $demo
	grep -q 'sys_exit_getpid: its own gate program' "$tmp/c.err" || fail "not a program of its own: $(cat "$tmp/c.err")"
	read -r ev ma <<<"$(sed -n 's/.*: evaluated \([0-9]*\), matched \([0-9]*\),.*/\1 \2/p' "$tmp/c.err")"
	[ "${ev:-0}" -gt 0 ] || fail "no getpid of $demo evaluated: $(cat "$tmp/c.err")"
	case $c in
	*:all) assert_eq "$ma" "$ev" "hits with ppid $$ and comm ${c%:*}" ;;
	*:none) assert_eq "$ma" 0 "hits with comm ${c%:*}" ;;
	esac
done
# 6. Compiled too: $elapsed at a syscall's exit (from its entry, which the shared program
# stamps), a glob with '*' between other characters, a __data_loc string field.
"$AUXTRIG" record -o "$tmp/s.data" --on 'syscall:clock_nanosleep:exit if $elapsed > 500us:mark,every:1000000000' \
	--on 'syscall:clock_nanosleep:exit if $elapsed > 2s:mark,every:1000000000' \
	--on 'syscall:openat:enter if str(arg1) ~ "/non*ent/*-d?mo":mark,every:1000000000' \
	-- "$DEMO" -r 20 >/dev/null 2>"$tmp/s.err" || fail "record failed: $(cat "$tmp/s.err")"
for tp in clock_nanosleep openat; do
	grep -q "sys_exit_$tp: its own gate program\|sys_enter_$tp: its own gate program" "$tmp/s.err" ||
		fail "$tp: not a program of its own: $(cat "$tmp/s.err")"
done
grep -q '$elapsed > 500us:mark,every:1000000000: evaluated 20, matched 20' "$tmp/s.err" ||
	fail "1 ms sleeps longer than 500us: $(grep evaluated "$tmp/s.err")"
grep -q '$elapsed > 2s:mark,every:1000000000: evaluated 20, matched 0' "$tmp/s.err" ||
	fail "1 ms sleeps longer than 2s: $(grep evaluated "$tmp/s.err")"
grep -q 'd?mo":mark,every:1000000000: evaluated 40, matched 20' "$tmp/s.err" ||
	fail "the failing openat's path by an inner-star glob: $(grep evaluated "$tmp/s.err")"
"$AUXTRIG" record -o "$tmp/x.data" --on 'tp:sched:sched_process_exec if filename ~ "/*/openat_d*o":mark' \
	-- sh -c "sleep 0.1; exec $DEMO -r 1" >/dev/null 2>"$tmp/x.err" || fail "record failed: $(cat "$tmp/x.err")"
grep -q 'sched_process_exec: its own gate program' "$tmp/x.err" || fail "not a program of its own: $(cat "$tmp/x.err")"
grep -q "evaluated 2, matched 1" "$tmp/x.err" || fail "the execs of sleep and the demo, by filename: $(grep evaluated "$tmp/x.err")"
# 7. A window start's --where, compiled, decided by a program the kernel runs before the shared
# one at that tracepoint (state included: every 2 counts the condition's own evaluations).
"$AUXTRIG" record -o "$tmp/w.data" -w syscall:openat --where 'str(arg1) ~ "/non*ent/*-d?mo" && every 2' \
	-- "$DEMO" -r 20 >/dev/null 2>"$tmp/w.err" || fail "record failed: $(cat "$tmp/w.err")"
grep -q 'sys_enter_openat: --where compiled' "$tmp/w.err" || fail "--where not compiled: $(cat "$tmp/w.err")"
grep -q 'auxtrig record: 10 windows' "$tmp/w.err" || fail "every other failing openat: $(cat "$tmp/w.err")"
grep -q '30 window starts did not match --where' "$tmp/w.err" || fail "the others refused: $(cat "$tmp/w.err")"
assert_eq "$(perf script -F event -i "$tmp/w.data" 2>/dev/null | grep -c sys_exit_openat)" 10 "windows recorded"
echo ok
