#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Per-thread hardware trace on the emulated Intel PT unit, for a command, a -p and a -t target:
# examples/migrate_demo's threads run on different CPUs, and every window
# (syscall:getppid:exit..syscall:getuid:enter) moves its thread to another CPU in the middle
# (sched_setaffinity). Each thread's trace is in an AUX buffer of its own, with its own PTWRITEs.
#
# In the kernel (6.12), exactly inside its windows: each window's trace starts with TIP.PGE at the
# exit of getppid and ends with TIP.PGD at the entry of getuid; it goes on after the move (a TIP.PGD
# and a TIP.PGE at sched_setaffinity's: stopped on one CPU, started on the other, the pause state
# following the thread); between windows nothing is traced. perf 6.1 decodes the per-thread file
# with its context switch records: a window's first PTWRITE on the CPU the demo says it left, its
# last on the CPU it moved to. auxtrig script lists the same PTWRITEs per thread and names each
# window's thread. Threads the command (or the -p process) creates after the start are followed:
# the gate reports each (sched_process_fork) and auxtrig opens its group while it runs on, so the
# demo (-G) starts its rounds once auxtrig says every new thread's trace is open (-v), and the
# summary counts the threads followed; -t traces the named threads only.
# Gated from userspace (6.1): each thread's AUX event is switched on and off by its own windows'
# edges; a move inside a window the trace had reached is followed to the other CPU.
. "$(dirname "$0")/lib.sh"
need_trace_unit
MIG=$build/examples/migrate_demo
[ "$(nproc)" -ge 2 ] || fail "needs two CPUs to move threads between (this guest has $(nproc); AUXTRIG_LAB_SMP)"
rounds=2
in_kernel=0
kernel_aux_action && in_kernel=1
# Gated, a window must outlast the round trip to auxtrig before its thread moves (test_lab_syscall_window
# measures it: 0.4 ms quiet, 16 ms with the host loaded); in the kernel, nothing needs to wait.
spin=$((in_kernel ? 0 : 300))
win='syscall:getppid:exit..syscall:getuid:enter'
ev='intel_pt/ptw,branch=0/u' # branch=0: every TIP.PGD carries its IP

# check NAME TIDS: the recording in $tmp/NAME.data of migrate_demo's output in $tmp/NAME.out, whose
# threads TIDS (space-separated) must each have been traced in all their windows.
check() {
	local name=$1 want=$2 sites g s u t
	sites=$(sed -n 's/^migrate_demo: sites getppid \(0x[0-9a-f]*\) setaffinity \(0x[0-9a-f]*\) getuid \(0x[0-9a-f]*\).*/\1 \2 \3/p' \
		"$tmp/$name.out")
	read -r g s u <<<"$sites"
	[ -n "$u" ] || fail "$name: no sites in $(cat "$tmp/$name.out")"
	pt_packets "$tmp/$name.data" >"$tmp/$name.pkts"
	# Per buffer (thread): trace starts, windows, resumes after the move, and each window's first
	# and last PTWRITE. In the kernel a window is exact: its trace starts at g (getppid's exit)
	# and stops at u (getuid's entry), stops and starts again only inside.
	awk -v g="$g" -v s="$s" -v u="$u" -v exact=$in_kernel '
		function bad(m) { print "BAD thread " cur ": " m; err = 1 }
		$1 == "AUX" { cur = $2; if ($3 != "-1") bad("a CPU buffer (cpu " $3 "), not a thread'"'"'s"); next }
		$1 == "PGE" {
			if (on[cur]) bad("TIP.PGE while tracing")
			on[cur] = 1; starts[cur]++
			if ($2 == s && last[cur] == s) { moves[cur]++; if (exact) moved[cur, nwin[cur]] = 1 }
			# (a start where the trace last stopped, in a window, is the thread switched back in)
			if (exact && $2 == g && !(inwin[cur] && last[cur] == g)) {
				if (inwin[cur]) bad("a window opened inside a window")
				inwin[cur] = 1; nwin[cur]++
			} else if (exact && !inwin[cur]) bad("traced outside a window, from " $2)
			next }
		$1 == "PTW" {
			if (!on[cur]) bad("PTWRITE with the trace off")
			if ($3 != cur) bad("thread " $3 " has a PTWRITE in its buffer")
			if (!((cur, nwin[cur]) in wfirst)) wfirst[cur, nwin[cur]] = $2
			wlast[cur, nwin[cur]] = $2; next }
		$1 == "PGD" {
			if (!on[cur]) bad("TIP.PGD while not tracing")
			on[cur] = 0; last[cur] = $2
			if (exact && $2 == u) { if (!inwin[cur]) bad("a window closed outside a window"); inwin[cur] = 0 }
			else if (exact && !inwin[cur]) bad("traced outside a window, to " $2)
			next }
		END {
			for (t in starts) {
				if (on[t] || inwin[t]) { cur = t; bad("trace left on") }
				n = 0; for (w = 1; w <= nwin[t]; w++) n += moved[t, w]
				print "THREAD", t, exact ? nwin[t] : starts[t], exact ? n : moves[t]
				for (w = 1; w <= nwin[t]; w++) print "WIN", t, w, wfirst[t, w], wlast[t, w]
			}
			exit err
		}' "$tmp/$name.pkts" >"$tmp/$name.win" || fail "$name: $(grep BAD "$tmp/$name.win" | head -3)"
	assert_eq "$(awk '$1 == "THREAD" { print $2 }' "$tmp/$name.win" | sort -n | tr '\n' ' ')" \
		"$(printf '%s\n' $want | sort -n | tr '\n' ' ')" "$name: threads with trace"
	for t in $want; do
		read -r _ _ nw nm < <(awk -v t=$t '$1 == "THREAD" && $2 == t' "$tmp/$name.win")
		if [ $in_kernel = 1 ]; then
			assert_eq "$nw" $rounds "$name: thread $t's windows traced"
			assert_eq "$nm" $rounds "$name: thread $t's windows whose trace went on after the move"
		else
			[ "$nm" -ge 1 ] || fail "$name: thread $t: no window's trace went on after its move ($(cat "$tmp/$name.win"))"
		fi
	done

	# perf 6.1 decodes the per-thread file: its PTWRITEs, with their threads and, from the switch
	# records, their CPUs.
	perf script --itrace=w -F tid,cpu,synth -i "$tmp/$name.data" >"$tmp/$name.w" 2>"$tmp/$name.werr" ||
		fail "$name: perf script --itrace=w failed: $(tail -3 "$tmp/$name.werr")"
	grep -iE 'error|expecting|warning' "$tmp/$name.werr" && fail "$name: perf script complains"
	sed -n 's/^ *\([0-9]*\) *\[\([0-9]*\)\] .*payload: \(0x[0-9a-f]*\).*/\1 \2 \3/p' "$tmp/$name.w" |
		while read -r tid cpu p; do echo "$tid $((10#$cpu)) $((p >> 32))"; done | sort -k3n >"$tmp/$name.ptw"
	assert_eq "$(wc -l <"$tmp/$name.ptw")" "$(grep -c '^PTW' "$tmp/$name.pkts")" "$name: PTWRITEs perf script decodes"
	grep '^PTW' "$tmp/$name.pkts" | awk '{ print $3, $2 }' | sort -k2n >"$tmp/$name.ptw.dump"
	assert_eq "$(awk '{ print $1, $3 }' "$tmp/$name.ptw")" "$(cat "$tmp/$name.ptw.dump")" \
		"$name: perf script's PTWRITEs and threads against its dump"
	if [ $in_kernel = 1 ]; then
		# each window's first PTWRITE on the CPU it left, its last on the one it moved to
		for t in $want; do
			grep "^migrate_demo: thread $t round" "$tmp/$name.out" | awk '{ print $7, $9 }' >"$tmp/$name.moves.$t"
			awk -v t=$t '$1 == "WIN" && $2 == t { print $4, $5 }' "$tmp/$name.win" >"$tmp/$name.seqs.$t"
			while read -r from to s1 s2; do
				c1=$(awk -v q=$s1 '$3 == q { print $2 }' "$tmp/$name.ptw")
				c2=$(awk -v q=$s2 '$3 == q { print $2 }' "$tmp/$name.ptw")
				assert_eq "$c1 $c2" "$from $to" "$name: thread $t's window (PTWRITE $s1..$s2): CPUs perf gives"
			done < <(paste -d' ' "$tmp/$name.moves.$t" "$tmp/$name.seqs.$t")
		done
	fi

	# auxtrig script: the same PTWRITEs per thread, and each window named after its thread
	"$AUXTRIG" script --packets -i "$tmp/$name.data" >"$tmp/$name.ours" 2>&1 ||
		fail "$name: auxtrig script --packets failed: $(tail -3 "$tmp/$name.ours")"
	awk '/^# AUXTRACE / { for (i = 1; i < NF; i++) if ($i == "tid") t = $(i + 1); next }
	     /PTW/ { for (i = 1; i <= NF; i++) if ($i ~ /^0x[0-9a-f]+$/) p = $i; print t, p }' "$tmp/$name.ours" |
		while read -r t p; do echo "$t $((p >> 32))"; done | sort -k2n >"$tmp/$name.ptw.ours"
	assert_eq "$(cat "$tmp/$name.ptw.ours")" "$(cat "$tmp/$name.ptw.dump")" "$name: auxtrig script's PTWRITEs and threads"
	"$AUXTRIG" script --windows -i "$tmp/$name.data" >"$tmp/$name.wins" 2>&1 ||
		fail "$name: auxtrig script --windows failed: $(tail -3 "$tmp/$name.wins")"
	for t in $want; do
		assert_eq "$(grep -c "^# window [0-9]*: cpu -1, migrate_demo [0-9]*/$t$" "$tmp/$name.wins")" \
			"$(awk -v t=$t '$1 == "AUX" { cur = $2 } $1 == "PGE" && cur == t { n++ } END { print n + 0 }' \
				"$tmp/$name.pkts")" "$name: auxtrig script's windows of thread $t (one per trace start)"
	done
}

# opened NAME DEMO_PID AUX_PID TIDS: wait until auxtrig says the trace of each of TIDS is open.
opened() {
	local t
	for t in $4; do
		wait_for "$tmp/$1.err" "thread $t: hardware trace open" $3
	done
}

# new_threads NAME DEMO_PID OLD: the demo's threads now, but OLD (space-separated).
new_threads() {
	local t
	for t in $(ls /proc/$2/task); do
		[[ " $3 " == *" $t "* ]] || echo "$t"
	done | tr '\n' ' '
}

# 1. A command, whose second thread is made at the start and a third later: both followed.
"$AUXTRIG" record -v -e "$ev" -w "$win" -o "$tmp/cmd.data" -- "$MIG" -G -r $rounds -t 1 -L 1 -s $spin \
	>"$tmp/cmd.out" 2>"$tmp/cmd.err" &
aux=$!
wait_for "$tmp/cmd.out" "threads made" $aux
demo=$(sed -n 's/^migrate_demo: pid \([0-9]*\) threads made$/\1/p' "$tmp/cmd.out")
made=$(new_threads cmd $demo $demo)
assert_eq "$(wc -w <<<"$made")" 2 "threads the command made"
opened cmd $demo $aux "$made"
kill -USR2 $demo
wait $aux || fail "record failed: $(tail -5 "$tmp/cmd.err")"
grep -q "hardware trace per thread: 2 threads and processes the target created were traced from when their group was open" \
	"$tmp/cmd.err" || fail "cmd: the summary does not count the 2 threads followed: $(grep 'per thread' "$tmp/cmd.err")"
check cmd "$(sed -n 's/^migrate_demo: thread \([0-9]*\) round 0 .*/\1/p' "$tmp/cmd.out" | tr '\n' ' ')"

# 2. -p: a process that runs already (two threads), and a thread it makes after auxtrig attached.
"$MIG" -W -G -r $rounds -t 1 -L 1 -s $spin >"$tmp/p.out" &
demo=$!
wait_for "$tmp/p.out" "waiting" $demo
before=$(ls /proc/$demo/task | tr '\n' ' ')
record_bg "$tmp/p.err" -v -e "$ev" -w "$win" -o "$tmp/p.data" -p $demo
kill -USR1 $demo
wait_for "$tmp/p.out" "threads made" $demo
made=$(new_threads p $demo "$before")
assert_eq "$(wc -w <<<"$made")" 1 "threads the -p process made after auxtrig attached"
opened p $demo $aux "$made"
kill -USR2 $demo
wait $demo
wait $aux || fail "record -p failed: $(tail -5 "$tmp/p.err")"
grep -q "hardware trace per thread: 1 threads and processes the target created were traced from when their group was open" \
	"$tmp/p.err" || fail "-p: the summary does not count the thread followed: $(grep 'per thread' "$tmp/p.err")"
check p "$(sed -n 's/^migrate_demo: thread \([0-9]*\) round 0 .*/\1/p' "$tmp/p.out" | tr '\n' ' ')"

# 3. -t: two named threads of a running process; the thread it makes later is not traced.
"$MIG" -W -G -r $rounds -t 1 -L 1 -s $spin >"$tmp/t.out" &
demo=$!
wait_for "$tmp/t.out" "waiting" $demo
named=$(ls /proc/$demo/task | sort -n | tr '\n' ' ')
assert_eq "$(wc -w <<<"$named")" 2 "threads of the waiting demo"
record_bg "$tmp/t.err" -e "$ev" -w "$win" -o "$tmp/t.data" -t "$(tr ' ' ',' <<<"${named% }")"
kill -USR1 $demo
wait_for "$tmp/t.out" "threads made" $demo
kill -USR2 $demo
wait $demo
wait $aux || fail "record -t failed: $(cat "$tmp/t.err")"
grep -q "threads and processes the target created" "$tmp/t.err" && fail "-t followed a thread it was not given"
check t "$named"
echo ok
