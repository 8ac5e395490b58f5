#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Snapshot mode (-S) on the emulated Intel PT unit: the AUX area in overwrite mode, a snapshot on
# SIGUSR2, on 'snapshot' from --control, on a --on trigger and at exit (-Se). seq_demo makes its
# close() calls in phases of 20 and waits between phases, so each snapshot must hold exactly the
# windows (-w syscall:close) of the phase before it: 20 whole TIP.PGE..TIP.PGD spans of the demo's
# thread, none of an earlier snapshot again. With a 4 KiB AUX area that wraps, the snapshot holds
# the newest windows up to the end, as many whole ones as fit. In full-trace mode, a buffer that
# fills while auxtrig cannot read it is truncated: the truncations are counted and reported as
# perf 6.1 counts them, and the trace goes on after auxtrig has read the buffer; so are the
# collisions the unit is told to flag. perf 6.1 (report -D) and auxtrig script read the same.
# Without aux_action (6.1) the windows are gated from userspace: the same snapshots, each window
# traced or counted late.
. "$(dirname "$0")/lib.sh"
need_trace_unit
in_kernel=0
kernel_aux_action && in_kernel=1
cpu=$(one_cpu)
seq_demo=$build/examples/seq_demo

# start_phased ERR ARGS...: auxtrig record ARGS -- seq_demo (pinned to $cpu, its phases released by
# lines on $tmp/in), in the background ($aux), until the demo says "phase 0 done".
start_phased() {
	local err=$1
	shift
	rm -f "$tmp/in" "$tmp/demo.out"
	mkfifo "$tmp/in"
	exec 7<>"$tmp/in"
	taskset -c "$cpu" "$AUXTRIG" record "$@" <&7 >"$tmp/demo.out" 2>"$err" &
	aux=$!
	wait_for "$tmp/demo.out" "phase 0 done" $aux
}
next_phase() { echo >&7; wait_for "$tmp/demo.out" "phase $1 done" $aux; }

# --- A: one snapshot per phase, by each of the four ways ---------------------------------------
# 6.12: the windows pause and resume the trace in the kernel, so each snapshot's windows are exact.
# 6.1 has no aux_action, and a close() window is far shorter than the userspace gate's round trip:
# the trace runs the whole time (no -w), each snapshot holds the demo's runs of one phase.
windows=(-w syscall:close)
[ $in_kernel = 1 ] || windows=()
mkfifo "$tmp/ctl" "$tmp/ack"
start_phased "$tmp/a.err" -e intel_pt/ptw/u "${windows[@]}" -m 64,16 -o "$tmp/a.data" \
	--control "fifo:$tmp/ctl,$tmp/ack" --on 'syscall:close:exit if $count == 60:snapshot' \
	-Se -- "$seq_demo" 20 4
kill -USR2 $aux
wait_for "$tmp/a.err" "snapshot 1 \(SIGUSR2\)" $aux
next_phase 1
exec 8<>"$tmp/ctl" 9<>"$tmp/ack"
echo snapshot >&8
read -r -t "$WAIT" reply <&9 || fail "no answer to 'snapshot' on the control FIFO"
assert_eq "$reply" ack "the answer to 'snapshot'"
wait_for "$tmp/a.err" "snapshot 2 \(control\)" $aux
# phase 2 ends with the 60th close(): the trigger's snapshot comes while the demo waits
next_phase 2
wait_for "$tmp/a.err" "snapshot 3 \(on#1\)" $aux
echo >&7
wait $aux || fail "record failed: $(cat "$tmp/a.err")"
cat "$tmp/a.err" >&2
for n in "1 (SIGUSR2)" "2 (control)" "3 (on#1)" "4 (exit)"; do
	grep -q "snapshot $n: .* 1 hardware trace buffer\($\|;\)" "$tmp/a.err" ||
		fail "snapshot $n: not one hardware trace buffer: $(grep "snapshot ${n%% *} " "$tmp/a.err")"
done
pt_packets "$tmp/a.data" >"$tmp/a.pkts"
pt_spans "$tmp/a.pkts" >"$tmp/a.spans" || fail "$(grep BAD "$tmp/a.spans")"
assert_eq "$(grep -c '^AUX' "$tmp/a.pkts")" 4 "AUXTRACE buffers (one per snapshot)"
assert_eq "$(awk '{ print $2 }' "$tmp/a.spans" | sort -u | wc -l)" 1 "threads traced"
if [ $in_kernel = 1 ]; then
	for b in 1 2 3 4; do
		assert_eq "$(awk -v b=$b '$1 == b' "$tmp/a.spans" | wc -l)" 20 "windows in snapshot $b"
	done
	# Each span is one close() call: on at its entry, off at its exit, at one IP.
	awk '$7 != $8 { print "span " $3 " on at " $7 ", off at " $8 }
		$4 != "resume" || $6 != "pause" { print "span " $3 ": " $4 ".." $6 }' "$tmp/a.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "spans that are not one window, resume to pause: $(head -3 "$tmp/bad")"
else
	for b in 1 2 3 4; do
		[ "$(awk -v b=$b '$1 == b' "$tmp/a.spans" | wc -l)" -ge 1 ] || fail "snapshot $b holds no run of the demo"
	done
	awk '$4 != "start" || $6 != "stop" { print "span " $3 ": " $4 ".." $6 }' "$tmp/a.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "spans that are not the thread's runs, scheduled in to out: $(head -3 "$tmp/bad")"
fi
# No snapshot repeats a window, and they come in order.
awk 'NR > 1 && $3 <= last { print "span " $3 " after " last } { last = $5 }' "$tmp/a.spans" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "snapshots overlap: $(head -3 "$tmp/bad")"
# auxtrig script reads the same packets.
"$AUXTRIG" script -i "$tmp/a.data" --packets >"$tmp/a.ours" 2>&1 || fail "auxtrig script --packets: $(tail -3 "$tmp/a.ours")"
assert_eq "$(sed -n 's/^# AUXTRACE .* (\([0-9]*\) buffers*)$/\1/p' "$tmp/a.ours" | awk '{ n += $1 } END { print n }')" 4 \
	"AUXTRACE buffers auxtrig script reads"
assert_eq "$(grep -c 'TIP.PGE' "$tmp/a.ours")" "$(grep -c '^PGE' "$tmp/a.pkts")" "TIP.PGE packets auxtrig script reads"
assert_eq "$(grep -o 'PTW 0x[0-9a-f]*' "$tmp/a.ours" | sort -u | wc -l)" "$(grep -c '^PTW' "$tmp/a.pkts")" \
	"distinct PTWRITE payloads auxtrig script reads"
perf report -D -i "$tmp/a.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed: $(tail -3 "$tmp/dump.err")"
grep -iE 'warning|error|failed' "$tmp/dump.err" && fail "perf report -D warns"

# --- D: between snapshots the trace's sideband is read as it comes -------------------------------
# The AUX event's own ring (its PERF_RECORD_AUX, ITRACE_START, and the tracking event's context
# switches, COMM, MMAP) is sideband, not flight recorder: with a one-page ring, 100 rounds of
# openat_demo (a sleep each) fill it many times over before the snapshot at exit.
taskset -c "$cpu" "$AUXTRIG" record -Se -e intel_pt/ptw/u "${windows[@]}" -m 1,16 -o "$tmp/d.data" \
	-- "$DEMO" -r 100 >/dev/null 2>"$tmp/d.err" || fail "record failed: $(cat "$tmp/d.err")"
cat "$tmp/d.err" >&2
grep -q 'lost 0 records' "$tmp/d.err" || fail "records lost: $(grep -i lost "$tmp/d.err")"
grep -qi 'sideband.*lost\|lost.*sideband' "$tmp/d.err" && fail "sideband lost: $(grep -i lost "$tmp/d.err")"
perf report -D -i "$tmp/d.data" >"$tmp/d.dump" 2>&1
grep -q 'PERF_RECORD_LOST' "$tmp/d.dump" && fail "the file has PERF_RECORD_LOST: $(grep -m3 PERF_RECORD_LOST "$tmp/d.dump")"
switches=$(grep -c 'PERF_RECORD_SWITCH' "$tmp/d.dump")
[ "$switches" -ge 200 ] || fail "$switches context switch records for 100 sleeps"

if [ $in_kernel = 0 ]; then
	echo "6.1 (no aux_action): the wrapping and truncating windows below need in-kernel windows" >&2
	echo ok
	exit 0
fi

# --- B: a 4 KiB AUX area that wraps: the newest windows, up to the end ---------------------------
taskset -c "$cpu" "$AUXTRIG" record -Se -e intel_pt/ptw/u -w syscall:close -m 64,1 -o "$tmp/b.data" \
	-- "$seq_demo" 300 1 >/dev/null 2>"$tmp/b.err" || fail "record failed: $(cat "$tmp/b.err")"
cat "$tmp/b.err" >&2
pt_packets "$tmp/b.data" >"$tmp/b.pkts"
pt_spans "$tmp/b.pkts" >"$tmp/b.spans" || fail "$(grep BAD "$tmp/b.spans")"
assert_eq "$(grep -c '^AUX' "$tmp/b.pkts")" 1 "AUXTRACE buffers"
grep -q 'PERF_RECORD_AUXTRACE size: 0x1000 ' <(perf report -D -i "$tmp/b.data" 2>/dev/null) ||
	fail "the snapshot is not the whole 4 KiB area: $(perf report -D -i "$tmp/b.data" 2>/dev/null | grep -m1 'PERF_RECORD_AUXTRACE ')"
# A window is 78 bytes of packets (PSB+, TIP.PGE, PTWRITE; TSC, PTWRITE, TIP.PGD): 52 whole ones
# and the end of an older one fill 4096 bytes.
assert_eq "$(wc -l <"$tmp/b.spans")" 52 "whole windows in the wrapped 4 KiB snapshot"
# The newest: the buffer ends with the last window's TIP.PGD.
assert_eq "$(tail -n 1 "$tmp/b.pkts" | cut -d' ' -f1)" PGD "the last packet of the snapshot"
# Consecutive windows, none missing in between.
awk 'NR > 1 && $3 != last + 1 { print "span " $3 " after " last } { last = $5 }' "$tmp/b.spans" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "windows missing inside the snapshot: $(head -3 "$tmp/bad")"

# --- C: full trace, an 8 KiB AUX area that fills while auxtrig is stopped -------------------------
# Phases of 50 windows (3.9 KiB each): phases 1 to 3 come while auxtrig is stopped (SIGSTOP), so the
# area overflows; phase 4 comes after auxtrig has read it again (the file grew), and fits.
echo 2 >/sys/module/auxtrig_pt/parameters/collision_every
start_phased "$tmp/c.err" -e intel_pt/ptw/u -w syscall:close -m 64,2 -o "$tmp/c.data" -- "$seq_demo" 50 5
kill -STOP $aux
for p in 1 2 3; do
	echo >&7
	wait_for "$tmp/demo.out" "phase $p done"
done
size=$(stat -c %s "$tmp/c.data")
kill -CONT $aux
wait_size "$tmp/c.data" "$size" $aux
echo >&7
wait $aux || fail "record failed: $(cat "$tmp/c.err")"
echo 0 >/sys/module/auxtrig_pt/parameters/collision_every
cat "$tmp/c.err" >&2
aux_flags "$tmp/c.data" >"$tmp/c.flags"
truncated=$(awk '$1 % 2' "$tmp/c.flags" | wc -l)
collided=$(awk 'int($1 / 8) % 2' "$tmp/c.flags" | wc -l)
[ "$truncated" -ge 1 ] || fail "no AUX record says TRUNCATED: 150 windows into 8 KiB with auxtrig stopped"
[ "$collided" -ge 1 ] || fail "no AUX record says COLLISION (collision_every=2)"
grep -q "hardware trace intel_pt/ptw/u: $truncated AUX records truncated" "$tmp/c.err" ||
	fail "auxtrig does not report the $truncated truncations: $(grep 'hardware trace' "$tmp/c.err")"
grep -q ", $collided with collisions" "$tmp/c.err" ||
	fail "auxtrig does not report the $collided collisions: $(grep 'hardware trace' "$tmp/c.err")"
perf report -D -i "$tmp/c.data" >/dev/null 2>"$tmp/dump.err"
grep -q "AUX data lost $truncated times out of" "$tmp/dump.err" ||
	fail "perf 6.1 counts the losses otherwise: $(grep -i aux "$tmp/dump.err")"
pt_packets "$tmp/c.data" >"$tmp/c.pkts"
pt_spans "$tmp/c.pkts" >"$tmp/c.spans" || true
# What fitted are whole windows (the unit writes a switch's packets whole or not at all, so a lost
# switch shows as two spans run together: counted, not decoded as one).
grep -v BAD "$tmp/c.spans" | awk '$7 != $8 { print "span " $3 " on at " $7 ", off at " $8 }' >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "$(head -3 "$tmp/bad")"
spans=$(grep -vc BAD "$tmp/c.spans")
[ "$spans" -lt 250 ] || fail "$spans windows traced: the truncation lost none"
# After the truncation the trace goes on: the last phase is there whole, 50 consecutive windows.
tail -n 50 "$tmp/c.spans" | awk 'NR > 1 && $3 != last + 1 { print "span " $3 " after " last } { last = $5 }
	$4 != "resume" && in_kernel { print "span " $3 " begins with " $4 }' in_kernel=$in_kernel >"$tmp/bad"
[ ! -s "$tmp/bad" ] && ! grep -q BAD <(tail -n 50 "$tmp/c.spans") ||
	fail "the phase after the truncation is not traced whole: $(head -3 "$tmp/bad")"
echo "truncated AUX records: $truncated, collisions: $collided, windows traced: $spans of 250" >&2
echo ok
