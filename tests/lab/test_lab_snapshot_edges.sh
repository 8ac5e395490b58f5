#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Window edges during snapshots, on the emulated Intel PT unit. window_clock (pinned to one CPU)
# sleeps 1 ms in clock_nanosleep (a window) and spins 1 ms outside it, 1000 times, while SIGUSR2
# asks auxtrig for a snapshot every few milliseconds, so many window edges fall while a snapshot is
# read. With in-kernel aux_pause/aux_resume (6.12) the snapshots together must hold every window
# exactly once, from its resume to its pause, and no trace outside one: every switch of the unit
# at the clock_nanosleep call's IP. (Stopping the trace to read it, as perf does, loses the edges
# of that time: the group's members are scheduled out with their leader, and ENABLE brings back
# the paused state the leader was left in.) Without aux_action (6.1) the windows are gated from
# userspace: the snapshots keep the trace switched as the gate last left it.
. "$(dirname "$0")/lib.sh"
need_trace_unit
in_kernel=0
kernel_aux_action && in_kernel=1
cpu=$(one_cpu)
rounds=1000

taskset -c "$cpu" "$AUXTRIG" record -Se -e intel_pt/ptw/u -w syscall:clock_nanosleep -m 64,64 -o "$tmp/e.data" \
	-- "$build/examples/window_clock" $rounds 1 1 spin >/dev/null 2>"$tmp/e.err" &
aux=$!
wait_for "$tmp/e.err" '^auxtrig: recording .*Ctrl-C to stop' $aux
while kill -USR2 $aux 2>/dev/null; do sleep 0.005; done
wait $aux || fail "record failed: $(cat "$tmp/e.err")"
grep -v '^auxtrig: snapshot [0-9]* (SIGUSR2)' "$tmp/e.err" >&2
snapshots=$(grep -c '^auxtrig: snapshot [0-9]* ' "$tmp/e.err")
echo "$snapshots snapshots" >&2
[ "$snapshots" -ge 10 ] || fail "only $snapshots snapshots in $rounds rounds"
pt_packets "$tmp/e.data" >"$tmp/e.pkts"
pt_spans "$tmp/e.pkts" >"$tmp/e.spans" || fail "$(grep BAD "$tmp/e.spans")"
if [ $in_kernel = 0 ]; then
	awk '$4 != "start" || $6 != "stop" { print "span " $3 ": " $4 ".." $6 }' "$tmp/e.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "spans not switched by the gate or the scheduler: $(head -3 "$tmp/bad")"
	echo ok
	exit 0
fi
# The window's IP: where the unit saw the thread at the windows' resumes.
ip=$(awk '$4 == "resume" { print $7 }' "$tmp/e.spans" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
[ -n "$ip" ] || fail "no window resumed the trace"
awk -v ip="$ip" '$7 != ip || $8 != ip { print "span " $3 " (" $4 ".." $6 ") at " $7 ".." $8 }' "$tmp/e.spans" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "trace outside the windows ($ip): $(wc -l <"$tmp/bad") spans, e.g. $(head -3 "$tmp/bad")"
# Each window once: a resume, then stops and starts (sleeps, snapshots), then its pause.
awk '
	$4 == "resume" { if (inside) bad = bad " resume in a window at " $3; inside = 1; n++ }
	$4 == "start" && !inside { bad = bad " start outside a window at " $3 }
	$6 == "pause" { if (!inside) bad = bad " pause outside a window at " $5; inside = 0 }
	END { print n; if (bad != "") print "BAD" bad }' "$tmp/e.spans" >"$tmp/win"
grep -q BAD "$tmp/win" && fail "$(grep BAD "$tmp/win" | cut -c1-300)"
assert_eq "$(head -1 "$tmp/win")" $rounds "windows in the snapshots"
echo ok
