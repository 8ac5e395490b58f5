#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lab-arch: arm64
# uprobe windows with --where on the emulated CoreSight unit (ETMv4 into tmc_etr0; a real arm64
# kernel, not real hardware), as test_lab_uprobe_where.sh on the Intel PT unit: uprobe_demo's
# handle(2) calls itself twice per round.
# Where the PMU can pause (7.x, as the real driver since 6.16), the windows are the uprobe PMU's
# members of the AUX group, the gate's veto programs on them: the trace resumes once per outermost
# call where --where holds, at handle's entry (the unit's resume exception gives the thread's user
# PC: the probed instruction), and pauses once at that call's return, whatever the nested calls
# do, and never runs outside one; without --where the kernel resumes at the outer entry and
# pauses at the innermost return (a second resume or pause of the same state does nothing). The
# veto programs' counts hold while the thread is moved between the CPUs all the time.
# Where it cannot (6.12): auxtrig says so and the gate sends the edges of the windows --where
# opens: 'arg0 == 2' opens 5, 'arg0 == 1' (nested calls only) none, 'every 2' 3 of 6; auxtrig
# switches the trace on and off for each.
# Either way perf 6.1's packet dump, auxtrig's own ETMv4 decoder and OpenCSD see the same switches.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm_units.sh"
need_cs_unit
in_kernel=0
"$AUXTRIG" probe --json | grep -q '"name":"cs_etm","type":[0-9]*,"pause_resume":"yes"' && in_kernel=1
ud=$build/examples/uprobe_demo
handle=$(nm "$ud" | gawk '$3 == "handle" { printf "0x%x\n", strtonum("0x" $1) }')
[ -n "$handle" ] || fail "no symbol handle in $ud"

# run NAME ROUNDS [ARGS...]: record uprobe_demo ROUNDS 2 with a window on handle(); the spans of
# trace (cs_spans) in $tmp/NAME.spans, ordered by their start.
run() {
	local name=$1 rounds=$2
	shift 2
	"$AUXTRIG" record -e cs_etm//u -w "uprobe:$ud:handle" "$@" -o "$tmp/$name.data" -- "$ud" "$rounds" 2 \
		>"$tmp/$name.out" 2>"$tmp/$name.err" || fail "record ($name) failed: $(cat "$tmp/$name.err")"
	if [ -s "$tmp/$name.data" ] && [ "$(cs_switches_perf "$tmp/$name.data" | grep -vc '^AUX')" -gt 0 ]; then
		cs_decoders_agree "$tmp/$name.data"
	else
		cs_switches "$tmp/$name.data" >"$tmp/sw"
	fi
	cs_spans "$tmp/sw" | sort -k3,3n >"$tmp/$name.spans" || fail "$name: $(grep BAD "$tmp/$name.spans")"
	perf report -D -i "$tmp/$name.data" >"$tmp/dump.out" 2>"$tmp/dump.err" || fail "$name: perf report -D failed: $(tail -3 "$tmp/dump.err")"
	# (perf 6.1 says that CoreSight decode "requires random file access" of a file without trace)
	grep -q 'PERF_RECORD_AUXTRACE ' "$tmp/dump.out" || sed -i '/requires random file access/d' "$tmp/dump.err"
	! grep -iE 'warning|error|failed' "$tmp/dump.err" || fail "$name: perf report -D warns"
}

# windows NAME: the windows in NAME's spans, resume to pause (a window may stop and start in
# between: its thread was scheduled out or moved), one line each: "RESUME_ADDR"; a BAD line for
# trace outside a window.
windows() {
	gawk '
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

# one_thread NAME: every span is of one thread (the demo's: auxtrig traces only its command).
one_thread() {
	[ "$(gawk '{ print $2 }' "$tmp/$1.spans" | sort -u | wc -l)" -le 1 ] ||
		fail "$1: spans of several threads: $(gawk '{ print $2 }' "$tmp/$1.spans" | sort -u | tr '\n' ' ')"
}

if [ $in_kernel = 0 ]; then
	gated() { # NAME: the summary says the gate drove the trace; spans the gate's or the scheduler's
		cat "$tmp/$1.err" >&2
		grep -q "cs_etm//u: this PMU cannot pause/resume in the kernel" "$tmp/$1.err" ||
			fail "$1: no word of the PMU that cannot pause: $(cat "$tmp/$1.err")"
		gawk '$4 != "start" || $6 != "stop" { print "span " $3 ": " $4 ".." $6 }' "$tmp/$1.spans" >"$tmp/bad"
		[ ! -s "$tmp/bad" ] || fail "$1: spans not switched by the gate or the scheduler: $(head -3 "$tmp/bad")"
	}
	run where2 5 --where 'arg0 == 2'
	gated where2
	grep -q 'hardware trace gated from userspace: 10 edges sent (5 opens, 5 closes acted on)' "$tmp/where2.err" ||
		fail "not the 5 windows --where opens, gated: $(grep 'hardware trace' "$tmp/where2.err")"
	[ -s "$tmp/where2.spans" ] || fail "--where 'arg0 == 2': no trace"
	one_thread where2
	# --where 'arg0 == 1': only nested calls hold it: no window, no edge, no trace.
	run where1 5 --where 'arg0 == 1'
	gated where1
	grep -q 'hardware trace gated from userspace: 0 edges sent' "$tmp/where1.err" ||
		fail "--where 'arg0 == 1' sent edges: $(grep 'hardware trace' "$tmp/where1.err")"
	assert_eq "$(wc -l <"$tmp/where1.spans")" 0 "spans traced with --where 'arg0 == 1'"
	# --where 'every 2' over 6 rounds: the 2nd, 4th and 6th outermost calls.
	run every2 6 --where 'every 2'
	gated every2
	grep -q 'hardware trace gated from userspace: 6 edges sent (3 opens, 3 closes acted on)' "$tmp/every2.err" ||
		fail "--where 'every 2': not the 3 windows' edges: $(grep 'hardware trace' "$tmp/every2.err")"
	[ -s "$tmp/every2.spans" ] || fail "--where 'every 2': no trace"
	echo ok
	exit 0
fi

# Without --where: each round resumes at the outer entry and pauses at the innermost return.
run plain 5
grep -q "hardware trace cs_etm//u: windows by in-kernel aux_pause/aux_resume" "$tmp/plain.err" ||
	fail "not the in-kernel path: $(cat "$tmp/plain.err")"
windows plain >"$tmp/plain.win"
grep BAD "$tmp/plain.win" && fail "plain: trace outside its windows"
assert_eq "$(wc -l <"$tmp/plain.win")" 5 "windows without --where (one per round, to the innermost return)"
assert_eq "$(sort -u "$tmp/plain.win")" "$handle" "where the windows resumed (handle's entry)"
one_thread plain

# --where 'arg0 == 2': the outermost call of each round, to its own return.
run where2 5 --where 'arg0 == 2'
cat "$tmp/where2.err" >&2
windows where2 >"$tmp/where2.win"
grep BAD "$tmp/where2.win" && fail "--where 'arg0 == 2': trace outside its windows"
assert_eq "$(wc -l <"$tmp/where2.win")" 5 "windows of --where 'arg0 == 2'"
assert_eq "$(sort -u "$tmp/where2.win")" "$handle" "where the windows resumed (handle's entry)"
assert_eq "$(veto_counts where2)" "5 0 5" "outermost calls resumed, vetoed; returns paused"
one_thread where2

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

# Migrations: the demo's thread is moved from CPU to CPU as fast as sched_setaffinity goes, all its
# run long (by perl; sched_setaffinity(2) is 122 on arm64, it fails with ESRCH once the demo ended).
# The demo waits on a FIFO until the mover runs.
cpus=($(my_cpus))
[ ${#cpus[@]} -ge 2 ] || fail "needs two CPUs to migrate between (the lab guests have 2)"
[ "$(uname -m)" = aarch64 ] || fail "the mover calls sched_setaffinity by its arm64 number"
rounds=100
mkfifo "$tmp/go"
"$AUXTRIG" record -e cs_etm//u -w "uprobe:$ud:handle" --where 'arg0 == 2' -o "$tmp/mig.data" \
	-- sh -c 'read -r _ <"$0"; exec "$1" "$2" 2' "$tmp/go" "$ud" $rounds >/dev/null 2>"$tmp/mig.err" &
aux=$!
wait_for "$tmp/mig.err" '^auxtrig: recording .*Ctrl-C to stop' $aux
demo=$(command_pid $aux)
[ -n "$demo" ] || fail "auxtrig ($aux) has no child"
perl -e 'my ($pid, @m) = (0 + $ARGV[0], pack("Q", 1 << $ARGV[1]), pack("Q", 1 << $ARGV[2]));
	my $n = 0; $n++ while syscall(122, $pid, 8, $m[$n % 2]) == 0; print "$n\n"' \
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
cs_decoders_agree "$tmp/mig.data"
cs_spans "$tmp/sw" | sort -k3,3n >"$tmp/mig.spans" || fail "mig: $(grep BAD "$tmp/mig.spans" | head -3)"
windows mig >"$tmp/mig.win"
grep BAD "$tmp/mig.win" | head -3 | grep . && fail "with migrations: trace outside its windows"
assert_eq "$(wc -l <"$tmp/mig.win")" $rounds "windows with migrations"
echo ok
