#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Windows of a trigger program (-w prog with --trigger-prog) on the emulated Intel PT unit (a real
# kernel, not real hardware). tests/kernel/gap_window.bpf.c opens the window with auxtrig_resume()
# at the exit of every odd clock_nanosleep() of examples/window_clock and closes it with
# auxtrig_pause() at the next one's entry: 6 rounds (200 ms sleeps, 100 ms gaps) give 3 windows, each
# over a gap in which the demo spins on a CPU. A trigger program decides in BPF at each hit, which the kernel's
# aux_resume/aux_pause cannot wait for, so both guests (6.12 with aux_action, 6.1 without) take the
# userspace-gated path and say so: the gate sends the 3 windows' 6 edges, auxtrig switches the
# trace on after each window opened and off after it closed. Checked: every packet is in a whole
# span (PGE..PGD) of the demo's thread, switched on by auxtrig's enable and off by the demo's next
# sleep (the window's close) or a preemption; by perf 6.1's times of their PTWRITEs the spans fall
# in exactly 3 groups 500 ms apart (a window's trace may be cut by a preemption, never joined with
# another window's; a window shorter than a slow round trip is counted as missed and has none),
# none longer than its 100 ms window allows (150 ms: the guest's TSC-to-time conversion is a few %
# off; trace left on past the close would run past the next 200 ms sleep);
# perf 6.1 and auxtrig script read the same packets.
. "$(dirname "$0")/lib.sh"
need_trace_unit
wc_demo=$build/examples/window_clock
prog=$build/tests/kernel/gap_window.bpf.o

"$AUXTRIG" record -e intel_pt/ptw/u -w prog --trigger-prog "$prog" -o "$tmp/pt.data" \
	-- "$wc_demo" 6 200 100 spin >"$tmp/demo.out" 2>"$tmp/err" || fail "record failed: $(cat "$tmp/err")"
cat "$tmp/err" >&2
grep -q 'hardware trace intel_pt/ptw/u: windows gated from userspace' "$tmp/err" ||
	fail "not the userspace-gated path: $(cat "$tmp/err")"
grep -q 'because the windows of -w prog (trigger programs) decide in BPF' "$tmp/err" ||
	fail "the run does not say why it is gated: $(cat "$tmp/err")"
grep -q 'hardware trace gated from userspace: 6 edges sent (3 opens, 3 closes acted on)' "$tmp/err" ||
	fail "not the 3 windows' edges: $(grep 'hardware trace' "$tmp/err")"
# A window shorter than a (rare, slow) round trip is counted as missed and has no trace.
missed=$(sed -n 's/.* \([0-9]*\) windows closed before auxtrig could enable.*/\1/p' "$tmp/err")

pt_packets "$tmp/pt.data" >"$tmp/pkts"
pt_spans "$tmp/pkts" >"$tmp/spans" || fail "packets outside whole spans: $(grep BAD "$tmp/spans")"
cat "$tmp/spans" >&2
awk '$4 != "start" || $6 != "stop" { print "span " $3 ": " $4 ".." $6 }' "$tmp/spans" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "spans not switched on by auxtrig and off by the demo's sleep: $(head -3 "$tmp/bad")"
assert_eq "$(awk '{ print $2 }' "$tmp/spans" | sort -u | wc -l)" 1 "threads traced"
# The spans by time: 100 ms windows whose starts are 600 ms apart; a gap over 200 ms starts the next.
perf script --itrace=w -F time,event --ns -i "$tmp/pt.data" 2>/dev/null | awk '/ptwrite/ { sub(/:$/, "", $1); print $1 }' | sort -n >"$tmp/ptw_times"
assert_eq "$(wc -l <"$tmp/ptw_times")" $((2 * $(wc -l <"$tmp/spans"))) "PTWRITEs perf script times (two per span)"
awk 'NR > 1 && $1 - last > 0.200 { print first, last; first = $1 }
	NR == 1 { first = $1 } { last = $1 } END { if (NR) print first, last }' "$tmp/ptw_times" >"$tmp/groups"
cat "$tmp/groups" >&2
assert_eq "$(wc -l <"$tmp/groups")" $((3 - ${missed:-0})) "groups of spans (one per window traced, ${missed:-0} missed)"
awk '$2 - $1 > 0.150 { print "trace on for " ($2 - $1) * 1000 " ms from " $1 }' "$tmp/groups" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "trace outside a 100 ms window: $(cat "$tmp/bad")"
[ "$(wc -l <"$tmp/spans")" = 3 ] || echo "note: $(wc -l <"$tmp/spans") spans for 3 windows (a preemption cuts one, a missed one has none)" >&2

perf_pge=$(grep -c '^PGE' "$tmp/pkts")
"$AUXTRIG" script -i "$tmp/pt.data" --packets >"$tmp/ours" 2>/dev/null
assert_eq "$(grep -c 'TIP.PGE' "$tmp/ours")" "$perf_pge" "TIP.PGE packets auxtrig script reads (perf 6.1 reads $perf_pge)"
assert_eq "$(grep -c 'TIP.PGD' "$tmp/ours")" "$perf_pge" "TIP.PGD packets auxtrig script reads"
perf report -D -i "$tmp/pt.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed: $(tail -3 "$tmp/dump.err")"
! grep -iE 'warning|error|failed' "$tmp/dump.err" || fail "perf report -D warns"
echo ok
