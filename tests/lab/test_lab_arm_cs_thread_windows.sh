#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lab-arch: arm64
# Per-thread CoreSight trace on the emulated unit (ETMv4 into tmc_etr0; a real arm64 kernel, not
# real hardware), as test_lab_thread_windows.sh on the Intel PT unit: examples/migrate_demo's
# threads run on different CPUs, and every window (syscall:getppid:exit..syscall:getuid:enter)
# moves its thread to another CPU in the middle (sched_setaffinity). With ETE and its per-CPU TRBE
# sinks (ete=1), each thread's trace is in an AUX buffer of its own (the TRBE of the CPU it runs on
# writes into its event's area), every switch in it of that thread (its context ID, the thread id,
# as with CONFIG_PID_IN_CONTEXTIDR); perf 6.1 finds each buffer's thread and no CPU. (Raw TRBE
# trace has no trace IDs: a per-thread file decodes with the first ETM's parameters, so the CPU of
# a switch is not in the trace.)
#
# In the kernel (7.x, as the real driver since 6.16): each window resumes at the exit of getppid
# and pauses at the entry of getuid (the unit's exceptions give the thread's user PC: the
# instruction after each svc); inside, the trace stops at sched_setaffinity's svc on the CPU the
# demo says it left (that CPU's trace ID) and starts at the same place on the CPU it moved to (the
# pause state follows the thread); between windows nothing is traced. Gated from userspace (6.12):
# each thread's event is switched on and off by its own windows' edges; a move inside a window the
# trace had reached is followed to the other CPU. Threads the command creates after the start are
# followed (-G: the demo starts its rounds once auxtrig says every new thread's trace is open).
# perf 6.1's packet dump, auxtrig's own ETMv4 decoder and OpenCSD see the same switches in the
# same threads' buffers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm_units.sh"
need_cs_unit ete=1
MIG=$build/examples/migrate_demo
[ "$(nproc)" -ge 2 ] || fail "needs two CPUs to move threads between (this guest has $(nproc); AUXTRIG_LAB_SMP)"
rounds=2
in_kernel=0
"$AUXTRIG" probe --json | grep -q '"name":"cs_etm","type":[0-9]*,"pause_resume":"yes"' && in_kernel=1
# Gated, a window must outlast the round trip to auxtrig before its thread moves; in the kernel,
# nothing needs to wait.
spin=$((in_kernel ? 0 : 300))
win='syscall:getppid:exit..syscall:getuid:enter'

# by_buffer SWITCHES: each switch line of SWITCHES (cs_switches or cs_switches_perf) prefixed with
# the number of the AUXTRACE buffer it is in (from 1), first four fields only.
by_buffer() {
	gawk '$1 == "AUX" { b++; next } { print b, $1, $2, $3, $4 }' "$1"
}

# check NAME TIDS: the recording $tmp/NAME.data of migrate_demo (its output in $tmp/NAME.out),
# whose threads TIDS must each have been traced in all their windows.
check() {
	local name=$1 want=$2 g s u t
	read -r g s u < <(sed -n 's/^migrate_demo: sites getppid \(0x[0-9a-f]*\) setaffinity \(0x[0-9a-f]*\) getuid \(0x[0-9a-f]*\).*/\1 \2 \3/p' \
		"$tmp/$name.out")
	[ -n "$u" ] || fail "$name: no sites in $(cat "$tmp/$name.out")"
	g=$(printf '0x%x' "$g") s=$(printf '0x%x' "$s") u=$(printf '0x%x' "$u")
	cs_decoders_agree "$tmp/$name.data"
	cs_switches_perf "$tmp/$name.data" >"$tmp/$name.sw.perf"
	assert_eq "$(by_buffer "$tmp/sw" | sort)" "$(by_buffer "$tmp/$name.sw.perf" | sort)" \
		"$name: the switches in each AUXTRACE buffer, auxtrig script against perf 6.1"
	gawk '$1 == "AUX" { t = $2; if ($3 != "-1") print "a CPU buffer (cpu " $3 "), not a thread'"'"'s"; next }
		$4 != t { print "a switch of context ID " $4 " in the buffer of thread " t ": " $0 }' "$tmp/$name.sw.perf" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$name: $(head -3 "$tmp/bad")"
	cp "$tmp/sw" "$tmp/$name.sw"
	perf report -D -i "$tmp/$name.data" >/dev/null 2>"$tmp/dump.err" || fail "$name: perf report -D failed"
	! grep -iE 'warning|error|failed' "$tmp/dump.err" || fail "$name: perf report -D warns"

	# Per thread, in the order of the timestamps: its windows and the moves in them: "WIN TID N
	# MOVED" (MOVED: the trace stopped at s and started at s again inside the window: the thread
	# went on on the other CPU), and "MOVE TID" for each such move.
	grep -v '^AUX' "$tmp/$name.sw" | sort -k2,2n | gawk -v g="$g" -v s="$s" -v u="$u" -v exact=$in_kernel '
		function bad(m) { print "BAD thread " t ": " m; err = 1 }
		{ addr = $3; t = $4; why = $5; seen[t] = 1 }
		why == "resume" || why == "start" {
			if (on[t]) bad(why " while tracing")
			on[t] = 1
			if (addr == s && lastaddr[t] == s && lastwhy[t] == "stop") {
				print "MOVE", t; if (inwin[t]) wmoved[t] = 1
			}
			if (exact && why == "resume") {
				if (addr != g) bad("resumed at " addr ", not at getppid (" g ")")
				if (inwin[t]) bad("a window opened inside a window")
				inwin[t] = 1; nwin[t]++; wmoved[t] = 0
			} else if (exact && !inwin[t]) bad("traced outside a window, from " addr)
		}
		why == "pause" || why == "stop" {
			if (!on[t]) bad(why " while not tracing")
			on[t] = 0
			if (exact && why == "pause") {
				if (addr != u) bad("paused at " addr ", not at getuid (" u ")")
				if (!inwin[t]) bad("a window closed outside a window")
				inwin[t] = 0; print "WIN", t, nwin[t], wmoved[t]
			} else if (exact && !inwin[t]) bad("traced outside a window, to " addr)
		}
		{ lastaddr[t] = addr; lastwhy[t] = why }
		END { for (t in seen) { print "THREAD", t; if (inwin[t]) bad("a window never paused") }; exit err }' \
		>"$tmp/$name.win" || fail "$name: $(grep BAD "$tmp/$name.win" | head -3)"
	assert_eq "$(gawk '$1 == "THREAD" { print $2 }' "$tmp/$name.win" | sort -n | tr '\n' ' ')" \
		"$(printf '%s\n' $want | sort -n | tr '\n' ' ')" "$name: threads with trace (their context IDs)"
	for t in $want; do
		if [ $in_kernel = 1 ]; then
			# every window traced, and its trace went on after the move
			assert_eq "$(gawk -v t=$t '$1 == "WIN" && $2 == t { print $4 }' "$tmp/$name.win" | tr '\n' ' ')" \
				"$(for r in $(seq $rounds); do printf '1 '; done)" "$name: thread $t's windows, and the trace went on after each move"
		else
			[ "$(gawk -v t=$t '$1 == "MOVE" && $2 == t' "$tmp/$name.win" | wc -l)" -ge 1 ] ||
				fail "$name: thread $t: no window's trace went on after its move ($(cat "$tmp/$name.win"))"
		fi
	done
}

# opened NAME AUX_PID TIDS: wait until auxtrig says the trace of each of TIDS is open.
opened() {
	local t
	for t in $3; do
		wait_for "$tmp/$1.err" "thread $t: hardware trace open" $2
	done
}

# new_threads DEMO_PID OLD: the demo's threads now, but OLD (space-separated).
new_threads() {
	local t
	for t in $(ls /proc/$1/task); do
		[[ " $2 " == *" $t "* ]] || echo "$t"
	done | tr '\n' ' '
}

# 1. A command, whose second thread is made at the start and a third later: both followed.
"$AUXTRIG" record -v -e cs_etm//u -w "$win" -o "$tmp/cmd.data" -- "$MIG" -G -r $rounds -t 1 -L 1 -s $spin \
	>"$tmp/cmd.out" 2>"$tmp/cmd.err" &
aux=$!
wait_for "$tmp/cmd.out" "threads made" $aux
demo=$(sed -n 's/^migrate_demo: pid \([0-9]*\) threads made$/\1/p' "$tmp/cmd.out")
made=$(new_threads $demo $demo)
assert_eq "$(wc -w <<<"$made")" 2 "threads the command made"
opened cmd $aux "$made"
kill -USR2 $demo
wait $aux || fail "record failed: $(tail -5 "$tmp/cmd.err")"
grep -v ': hardware trace open' "$tmp/cmd.err" >&2
grep -q "hardware trace per thread: 2 threads and processes the target created were traced from when their group was open" \
	"$tmp/cmd.err" || fail "cmd: the summary does not count the 2 threads followed: $(grep 'per thread' "$tmp/cmd.err")"
if [ $in_kernel = 1 ]; then
	grep -q "hardware trace cs_etm//u: windows by in-kernel aux_pause/aux_resume" "$tmp/cmd.err" ||
		fail "not the in-kernel path: $(cat "$tmp/cmd.err")"
else
	grep -q "cs_etm//u: this PMU cannot pause/resume in the kernel" "$tmp/cmd.err" ||
		fail "no word of the PMU that cannot pause: $(cat "$tmp/cmd.err")"
fi
check cmd "$(sed -n 's/^migrate_demo: thread \([0-9]*\) round 0 .*/\1/p' "$tmp/cmd.out" | tr '\n' ' ')"

# 2. -t: two named threads of a running process; the thread it makes later is not traced.
"$MIG" -W -G -r $rounds -t 1 -L 1 -s $spin >"$tmp/t.out" &
demo=$!
wait_for "$tmp/t.out" "waiting" $demo
named=$(ls /proc/$demo/task | sort -n | tr '\n' ' ')
assert_eq "$(wc -w <<<"$named")" 2 "threads of the waiting demo"
record_bg "$tmp/t.err" -e cs_etm//u -w "$win" -o "$tmp/t.data" -t "$(tr ' ' ',' <<<"${named% }")"
kill -USR1 $demo
wait_for "$tmp/t.out" "threads made" $demo
kill -USR2 $demo
wait $demo
wait $aux || fail "record -t failed: $(cat "$tmp/t.err")"
cat "$tmp/t.err" >&2
grep -q "threads and processes the target created" "$tmp/t.err" && fail "-t followed a thread it was not given"
check t "$named"
echo ok
