#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# uprobe windows on the emulated Intel PT unit, with --where vetoes and recursion: uprobe_demo's
# handle(2) calls itself twice per round. With aux_action (6.12) the windows are the uprobe PMU's
# members of the AUX group, the gate's veto programs on them: the trace resumes once per outermost
# call where --where holds (at handle's entry) and pauses once at that call's return, whatever the
# nested calls do, and never runs outside one; without --where the kernel resumes at every entry
# and pauses at the innermost return. The veto programs' counts must hold while the thread is made
# to migrate between the CPUs all the time, inside its windows too (a hit runs every CPU's member's
# program, one after the other: a migration between two of them once counted a call twice, or not
# at all). Without aux_action (6.1) the gate sends the edges of the windows --where opens, and
# auxtrig switches the trace on and off for each.
. "$(dirname "$0")/lib.sh"
need_trace_unit
in_kernel=0
kernel_aux_action && in_kernel=1
ud=$build/examples/uprobe_demo
handle=$(nm "$ud" | awk '$3 == "handle" { print "0x" $1 }' | sed 's/0x0*/0x/')

# run NAME ROUNDS [--where EXPR]: record uprobe_demo ROUNDS 2 with a window on handle().
run() {
	local name=$1 rounds=$2
	shift 2
	"$AUXTRIG" record -e intel_pt/ptw/u -w "uprobe:$ud:handle" "$@" -o "$tmp/$name.data" -- "$ud" "$rounds" 2 \
		>"$tmp/$name.out" 2>"$tmp/$name.err" || fail "record ($name) failed: $(cat "$tmp/$name.err")"
	pt_packets "$tmp/$name.data" >"$tmp/$name.pkts"
	pt_spans "$tmp/$name.pkts" >"$tmp/$name.spans" || fail "$name: $(grep BAD "$tmp/$name.spans")"
}

# windows NAME: the windows in NAME's spans, resume to pause (a span may stop and start in between:
# the thread was scheduled out), one line each: "RESUME_IP"; a BAD line for trace outside a window.
windows() {
	awk '
		$4 == "resume" { if (inside) print "BAD resume inside a window at " $3; inside = 1; print $7 }
		$4 == "start" && !inside { print "BAD trace on outside a window at " $3 " (" $7 ")" }
		$6 == "pause" { if (!inside) print "BAD pause outside a window at " $5; inside = 0 }
		$6 == "stop" && !inside { print "BAD trace on outside a window until " $5 }
		END { if (inside) print "BAD a window never paused" }' "$tmp/$1.spans"
}

# veto_counts NAME: "RESUMED VETOED PAUSED" from the summary.
veto_counts() {
	sed -n 's/.*hardware trace --where: \([0-9]*\) outermost calls resumed the trace, \([0-9]*\) were vetoed; \([0-9]*\) returns paused it.*/\1 \2 \3/p' \
		"$tmp/$1.err"
}

if [ $in_kernel = 0 ]; then
	run where2 5 --where 'arg0 == 2'
	cat "$tmp/where2.err" >&2
	grep -q 'hardware trace gated from userspace: 10 edges sent (5 opens, 5 closes acted on)' "$tmp/where2.err" ||
		fail "not the 5 windows --where opens, gated: $(grep 'hardware trace' "$tmp/where2.err")"
	awk '$4 != "start" || $6 != "stop" { print "span " $3 ": " $4 ".." $6 }' "$tmp/where2.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "spans not switched by the gate or the scheduler: $(head -3 "$tmp/bad")"
	# (--where 'arg0 == 1' and 'every 2' on this path, where the gate keeps the depth of a vetoed
	# call: test_lab_uprobe_where_gated.sh)
	echo ok
	exit 0
fi

# Without --where: each round resumes at the outer entry and pauses at the innermost return.
run plain 5
windows plain >"$tmp/plain.win"
grep BAD "$tmp/plain.win" && fail "plain: trace outside its windows"
assert_eq "$(wc -l <"$tmp/plain.win")" 5 "windows without --where (one per round, to the innermost return)"

# --where 'arg0 == 2': the outermost call of each round, to its own return.
run where2 5 --where 'arg0 == 2'
cat "$tmp/where2.err" >&2
windows where2 >"$tmp/where2.win"
grep BAD "$tmp/where2.win" && fail "--where 'arg0 == 2': trace outside its windows"
assert_eq "$(wc -l <"$tmp/where2.win")" 5 "windows of --where 'arg0 == 2'"
assert_eq "$(sort -u "$tmp/where2.win")" "$handle" "where the windows resumed (handle's entry)"
assert_eq "$(veto_counts where2)" "5 0 5" "outermost calls resumed, vetoed; returns paused"
# The outermost call runs user code to its return: more packets than the innermost's window.
[ "$(grep -c '^PTW' "$tmp/where2.pkts")" -ge 10 ] || fail "too few PTWRITEs: $(grep -c '^PTW' "$tmp/where2.pkts")"

# --where 'arg0 == 1': true only for nested calls, which never open a window.
run where1 5 --where 'arg0 == 1'
assert_eq "$(wc -l <"$tmp/where1.spans")" 0 "spans traced with --where 'arg0 == 1'"
assert_eq "$(veto_counts where1)" "0 5 0" "outermost calls resumed, vetoed; returns paused"

# --where 'every 2': the 2nd, 4th and 6th outermost calls.
run every2 6 --where 'every 2'
windows every2 >"$tmp/every2.win"
grep BAD "$tmp/every2.win" && fail "--where 'every 2': trace outside its windows"
assert_eq "$(wc -l <"$tmp/every2.win")" 3 "windows of --where 'every 2'"
assert_eq "$(veto_counts every2)" "3 3 3" "outermost calls resumed, vetoed; returns paused"

# perf 6.1 and auxtrig script read the same packets.
"$AUXTRIG" script -i "$tmp/where2.data" --packets >"$tmp/where2.ours" 2>&1 || fail "auxtrig script --packets failed"
assert_eq "$(grep -c 'TIP.PGE' "$tmp/where2.ours")" "$(grep -c '^PGE' "$tmp/where2.pkts")" "TIP.PGE packets auxtrig script reads"
assert_eq "$(grep -o 'PTW 0x[0-9a-f]*' "$tmp/where2.ours" | sort -u | wc -l)" "$(grep -c '^PTW' "$tmp/where2.pkts")" \
	"PTWRITE payloads auxtrig script reads"

# Migrations: the demo's thread is moved from CPU to CPU as fast as sched_setaffinity goes, all its
# run long (by perl, which Debian always has: taskset's fork and exec took 150 ms a move under TCG).
# The demo waits on a FIFO until the mover runs (a short run could end before the first move).
cpus=($(my_cpus))
[ ${#cpus[@]} -ge 2 ] || fail "needs two CPUs to migrate between (the lab guests have 2)"
[ "$(uname -m)" = x86_64 ] || fail "the mover calls sched_setaffinity by its x86-64 number"
rounds=2000
mkfifo "$tmp/go"
"$AUXTRIG" record -e intel_pt/ptw/u -w "uprobe:$ud:handle" --where 'arg0 == 2' -o "$tmp/mig.data" \
	-- sh -c 'read -r _ <"$0"; exec "$1" "$2" 2' "$tmp/go" "$ud" $rounds >/dev/null 2>"$tmp/mig.err" &
aux=$!
wait_for "$tmp/mig.err" '^auxtrig: recording .*Ctrl-C to stop' $aux
demo=$(command_pid $aux)
[ -n "$demo" ] || fail "auxtrig ($aux) has no child"
# sched_setaffinity(2) is 203 on x86-64; it fails (ESRCH) once the demo has ended.
perl -e 'my ($pid, @m) = (0 + $ARGV[0], pack("Q", 1 << $ARGV[1]), pack("Q", 1 << $ARGV[2]));
	my $n = 0; $n++ while syscall(203, $pid, 8, $m[$n % 2]) == 0; print "$n\n"' \
	"$demo" "${cpus[0]}" "${cpus[1]}" >"$tmp/moves" &
mover=$!
timeout 60 sh -c 'echo go >"$0"' "$tmp/go" || fail "the demo never read its FIFO: $(cat "$tmp/mig.err")"
wait $aux || fail "record (migrations) failed: $(cat "$tmp/mig.err")"
wait $mover
moves=$(cat "$tmp/moves")
cat "$tmp/mig.err" >&2
echo "the thread was moved $moves times" >&2
[ "$moves" -ge 20 ] || fail "only $moves migrations: the run was too short to test them"
assert_eq "$(veto_counts mig)" "$rounds 0 $rounds" "with migrations: outermost calls resumed, vetoed; returns paused"
echo ok
