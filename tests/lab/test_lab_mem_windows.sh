#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Windows with a mem: end (a hardware breakpoint) on the emulated Intel PT unit (a real kernel, not
# real hardware): from a write of window_clock's variable "gap" (done at the start of each busy
# 100 ms gap, after a 200 ms sleep) to the thread's next system call (tp:raw_syscalls:sys_enter,
# the next round's clock_nanosleep or the final write). The gate's breakpoint is the only one on
# the address (an aux_resume member beside it would be a second one, and under QEMU TCG only one
# of two fires), so both guests take the userspace-gated path and say why: 4 rounds, 4 windows, 8
# edges; the same from --on mem:...:resume and --on tp:raw_syscalls:sys_enter:pause (a probe point
# cannot be an aux_resume member either). With --where 'every 2' (a condition, decided by the gate)
# the 2nd and 4th only. Checked as
# test_lab_prog_windows does: every packet in a whole span of the demo's thread, the spans in one
# time group per window (a window shorter than a slow round trip is counted as missed, with no
# trace), none longer than its 100 ms gap allows; perf 6.1 and auxtrig script agree.
. "$(dirname "$0")/lib.sh"
need_trace_unit
"$AUXTRIG" probe | grep -q '^ *hw breakpoints *ok' ||
	fail "the lab guests' breakpoints fire: auxtrig probe says $("$AUXTRIG" probe | grep breakpoints)"
wc_demo=$build/examples/window_clock
window="mem:$wc_demo:gap/8:w..tp:raw_syscalls:sys_enter"

# run NAME WINDOWS ARGS...: record window_clock 4 rounds with ARGS and check its WINDOWS windows.
run() {
	local name=$1 n=$2
	shift 2
	"$AUXTRIG" record -e intel_pt/ptw/u "$@" -o "$tmp/$name.data" \
		-- "$wc_demo" 4 200 100 spin >"$tmp/$name.out" 2>"$tmp/$name.err" || fail "record ($name) failed: $(cat "$tmp/$name.err")"
	cat "$tmp/$name.err" >&2
	grep -q 'hardware trace intel_pt/ptw/u: windows gated from userspace' "$tmp/$name.err" ||
		fail "$name: not the userspace-gated path: $(cat "$tmp/$name.err")"
	grep -q "auxtrig record: $n windows" "$tmp/$name.err" || fail "$name: not $n windows"
	grep -q "hardware trace gated from userspace: $((2 * n)) edges sent ($n opens, $n closes acted on)" "$tmp/$name.err" ||
		fail "$name: not the $n windows' edges: $(grep 'hardware trace' "$tmp/$name.err")"
	# A window shorter than a (rare, slow) round trip is counted as missed and has no trace.
	missed=$(sed -n 's/.* \([0-9]*\) windows closed before auxtrig could enable.*/\1/p' "$tmp/$name.err")
	pt_packets "$tmp/$name.data" >"$tmp/$name.pkts"
	pt_spans "$tmp/$name.pkts" >"$tmp/$name.spans" || fail "$name: packets outside whole spans: $(grep BAD "$tmp/$name.spans")"
	awk '$4 != "start" || $6 != "stop" { print "span " $3 ": " $4 ".." $6 }' "$tmp/$name.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$name: spans not switched by auxtrig or the scheduler: $(head -3 "$tmp/bad")"
	assert_eq "$(awk '{ print $2 }' "$tmp/$name.spans" | sort -u | wc -l)" 1 "$name: threads traced"
	# Windows 300 ms apart: a gap over 150 ms starts the next; none over 150 ms (the next sleep is 200).
	perf script --itrace=w -F time,event --ns -i "$tmp/$name.data" 2>/dev/null | awk '/ptwrite/ { sub(/:$/, "", $1); print $1 }' | sort -n >"$tmp/$name.times"
	assert_eq "$(wc -l <"$tmp/$name.times")" $((2 * $(wc -l <"$tmp/$name.spans"))) "$name: PTWRITEs perf script times"
	awk 'NR > 1 && $1 - last > 0.150 { print first, last; first = $1 }
		NR == 1 { first = $1 } { last = $1 } END { if (NR) print first, last }' "$tmp/$name.times" >"$tmp/$name.groups"
	cat "$tmp/$name.groups" >&2
	assert_eq "$(wc -l <"$tmp/$name.groups")" $((n - ${missed:-0})) "$name: groups of spans (one per window traced, ${missed:-0} missed)"
	awk '$2 - $1 > 0.150 { print "trace on for " ($2 - $1) * 1000 " ms from " $1 }' "$tmp/$name.groups" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$name: trace outside a 100 ms window: $(cat "$tmp/bad")"
	perf_pge=$(grep -c '^PGE' "$tmp/$name.pkts")
	"$AUXTRIG" script -i "$tmp/$name.data" --packets >"$tmp/$name.ours" 2>/dev/null
	assert_eq "$(grep -c 'TIP.PGE' "$tmp/$name.ours")" "$perf_pge" "$name: TIP.PGE packets auxtrig script reads (perf 6.1: $perf_pge)"
	assert_eq "$(grep -c 'TIP.PGD' "$tmp/$name.ours")" "$perf_pge" "$name: TIP.PGD packets auxtrig script reads"
	perf report -D -i "$tmp/$name.data" >/dev/null 2>"$tmp/dump.err" || fail "$name: perf report -D failed: $(tail -3 "$tmp/dump.err")"
	! grep -iE 'warning|error|failed' "$tmp/dump.err" || fail "$name: perf report -D warns"
}

run all 4 -w "$window"
grep -q "because -w $window has a mem: end" "$tmp/all.err" || fail "the run does not say why it is gated: $(cat "$tmp/all.err")"
run every2 2 -w "$window" --where 'every 2'
# The same window from --on resume at the breakpoint and pause at the next system call.
run on 4 --on "mem:$wc_demo:gap/8:w:resume" --on tp:raw_syscalls:sys_enter:pause
! kernel_aux_action || grep -q "because --on 'mem:$wc_demo:gap/8:w:resume' (a probe point" "$tmp/on.err" ||
	fail "--on: no reason for the gated path: $(cat "$tmp/on.err")"
echo ok
