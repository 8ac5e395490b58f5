#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lab-arch: arm64
# Snapshot mode (-S) on the emulated CoreSight unit (ETMv4 into tmc_etr0), per CPU (-C): the AUX
# areas in overwrite mode, whose head the ETR moves on monotonically by what it copies in (the
# driver since 2021: "coresight: tmc-etr: Use perf_output_handle::head for AUX ring buffer"), so
# each snapshot is [previous head, head) of each CPU's area, clamped to the area: its newest data.
#
# A: seq_demo makes its close() calls in phases of 20 and waits between phases; a snapshot on
#    SIGUSR2, on 'snapshot' from --control, on a --on trigger and at exit (-Se) each hold exactly
#    the windows (-w syscall:close) of the phase before: 20 spans, resume to pause, of the demo's
#    thread, none of an earlier snapshot again, in order (7.x, in-kernel pause). Gated from
#    userspace (6.12) the windows are far shorter than the round trip: the trace runs the whole
#    time (no -w) and each snapshot holds the demo's runs of its phase.
# B: the sizes: phases of 100 windows (about 8 KiB of trace) into a 4 KiB area: every snapshot is
#    exactly the area, 4096 bytes (the perf that found CoreSight snapshots of a few MB to ~20 MB for
#    one workload read a driver whose head did not say where the new data ended), and holds the
#    phase's newest windows up to its last one, consecutive, none of the phase before.
# C: full trace into an 8 KiB area while auxtrig is stopped (SIGSTOP): the ETR's copy keeps the
#    newest 8 KiB with a barrier packet and TRUNCATED (tmc_update_etr_buffer()), auxtrig counts the
#    truncations as perf 6.1 does, and the trace goes on after auxtrig read the area again.
# perf 6.1's packet dump, auxtrig's own ETMv4 decoder and OpenCSD see the same switches each time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm_units.sh"
need_cs_unit
in_kernel=0
"$AUXTRIG" probe --json | grep -q '"name":"cs_etm","type":[0-9]*,"pause_resume":"yes"' && in_kernel=1
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

# aux_sizes FILE: the sizes of FILE's AUXTRACE buffers, in file order, one a line.
aux_sizes() {
	perf report -D -i "$1" 2>/dev/null | sed -n 's/.*PERF_RECORD_AUXTRACE size: \(0x[0-9a-f]*\) .*/\1/p' |
		while read -r s; do echo $((s)); done
}

# spans_per_buffer SWITCHES: cs_spans of each AUXTRACE buffer of SWITCHES apart, each line
# prefixed with the buffer's number (from 1).
spans_per_buffer() {
	local b=0 n
	n=$(grep -c '^AUX' "$1")
	while [ $b -lt "$n" ]; do
		b=$((b + 1))
		gawk -v b=$b '/^AUX/ { n++; next } n == b' "$1" >"$tmp/one.sw"
		cs_spans "$tmp/one.sw" | sed "s/^/$b /"
	done
}

# --- A: one snapshot per phase, by each of the four ways ---------------------------------------
windows=(-w syscall:close)
[ $in_kernel = 1 ] || windows=()
mkfifo "$tmp/ctl" "$tmp/ack"
start_phased "$tmp/a.err" -e cs_etm//u "${windows[@]}" -C "$cpu" -m 64,16 -o "$tmp/a.data" \
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
next_phase 2
wait_for "$tmp/a.err" "snapshot 3 \(on#1\)" $aux
echo >&7
wait $aux || fail "record failed: $(cat "$tmp/a.err")"
cat "$tmp/a.err" >&2
for n in "1 (SIGUSR2)" "2 (control)" "3 (on#1)" "4 (exit)"; do
	grep -q "snapshot $n: .* 1 hardware trace buffer\($\|;\)" "$tmp/a.err" ||
		fail "snapshot $n: not one hardware trace buffer: $(grep "snapshot ${n%% *} " "$tmp/a.err")"
done
cs_decoders_agree "$tmp/a.data"
spans_per_buffer "$tmp/sw" >"$tmp/a.pieces" || fail "$(grep BAD "$tmp/a.pieces" | head -3)"
# (a window whose thread slept in its close() is traced in pieces: one window)
cs_join_restarts <"$tmp/a.pieces" >"$tmp/a.spans"
assert_eq "$(grep -c '^AUX' "$tmp/sw")" 4 "AUXTRACE buffers (one per snapshot)"
assert_eq "$(gawk '{ print $3 }' "$tmp/a.spans" | sort -u | wc -l)" 1 "threads traced"
if [ $in_kernel = 1 ]; then
	for b in 1 2 3 4; do
		[ "$(gawk -v b=$b '$1 == b' "$tmp/a.spans" | wc -l)" = 20 ] ||
			fail "windows in snapshot $b: not 20: $(gawk -v b=$b '$1 == b' "$tmp/a.spans" | head -30)
switches: $(head -12 "$tmp/sw")
$(cat "$tmp/a.err")"
	done
	gawk '$5 != "resume" || $7 != "pause" || $8 != $9 { print "span at " $4 ": " $5 ".." $7 " at " $8 ".." $9 }' \
		"$tmp/a.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "spans that are not one window, resume to pause: $(head -3 "$tmp/bad")"
else
	for b in 1 2 3 4; do
		[ "$(gawk -v b=$b '$1 == b' "$tmp/a.spans" | wc -l)" -ge 1 ] || fail "snapshot $b holds no run of the demo"
	done
	gawk '$5 != "start" || $7 != "stop" { print "span at " $4 ": " $5 ".." $7 }' "$tmp/a.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "spans that are not the thread's runs, scheduled in to out: $(head -3 "$tmp/bad")"
fi
# No snapshot repeats a window, and they come in order (the unit's timestamps increase).
gawk 'NR > 1 && $4 <= last { print "span at " $4 " after " last } { last = $6 }' "$tmp/a.spans" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "snapshots overlap: $(head -3 "$tmp/bad")"
perf report -D -i "$tmp/a.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed: $(tail -3 "$tmp/dump.err")"
grep -iE 'warning|error|failed' "$tmp/dump.err" && fail "perf report -D warns"

if [ $in_kernel = 0 ]; then
	echo "6.12 (the PMU cannot pause): the wrapping and truncating windows below need in-kernel windows" >&2
	echo ok
	exit 0
fi

# --- B: phases of 100 windows into a 4 KiB area: each snapshot the whole area, the newest windows -
start_phased "$tmp/b.err" -e cs_etm//u -w syscall:close -C "$cpu" -m 64,1 -o "$tmp/b.data" -Se -- "$seq_demo" 100 4
for p in 1 2 3; do
	kill -USR2 $aux
	wait_for "$tmp/b.err" "snapshot $p \(SIGUSR2\)" $aux
	next_phase $p
done
echo >&7
wait $aux || fail "record failed: $(cat "$tmp/b.err")"
cat "$tmp/b.err" >&2
assert_eq "$(aux_sizes "$tmp/b.data" | tr '\n' ' ')" "4096 4096 4096 4096 " "snapshot sizes (a 4 KiB area each time)"
cs_decoders_agree "$tmp/b.data"
spans_per_buffer "$tmp/sw" >"$tmp/b.spans" || fail "$(grep BAD "$tmp/b.spans" | head -3)"
# A window's trace is 80 bytes (5 frames of the ETR, published at each pause): the newest 4096
# bytes of the wrapped area hold 51 whole windows and the end of an older one.
for b in 1 2 3 4; do
	assert_eq "$(gawk -v b=$b '$1 == b' "$tmp/b.spans" | wc -l)" 51 "whole windows in snapshot $b of 4096 bytes"
done
# Consecutive windows inside each snapshot, and each snapshot's last window the newest before it:
# the next snapshot's windows all come after it, and the phases between are 100 windows long.
gawk '$1 == prev && $4 <= last { print "buffer " $1 ": span at " $4 " after " last }
	{ prev = $1; last = $6 }' "$tmp/b.spans" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "windows out of order inside a snapshot: $(head -3 "$tmp/bad")"

# --- C: full trace, an 8 KiB area that fills while auxtrig is stopped -----------------------------
start_phased "$tmp/c.err" -e cs_etm//u -w syscall:close -C "$cpu" -m 64,2 -o "$tmp/c.data" -- "$seq_demo" 50 5
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
cat "$tmp/c.err" >&2
aux_flags "$tmp/c.data" >"$tmp/c.flags"
truncated=$(gawk '$1 % 2' "$tmp/c.flags" | wc -l)
[ "$truncated" -ge 1 ] || fail "no AUX record says TRUNCATED: 150 windows into 8 KiB with auxtrig stopped"
grep -q "hardware trace cs_etm//u: $truncated AUX records truncated" "$tmp/c.err" ||
	fail "auxtrig does not report the $truncated truncations: $(grep 'hardware trace' "$tmp/c.err")"
perf report -D -i "$tmp/c.data" >/dev/null 2>"$tmp/dump.err"
grep -q "AUX data lost $truncated times out of" "$tmp/dump.err" ||
	fail "perf 6.1 counts the losses otherwise: $(grep -i aux "$tmp/dump.err")"
cs_decoders_agree "$tmp/c.data"
cs_spans "$tmp/sw" >"$tmp/c.spans" || fail "$(grep BAD "$tmp/c.spans" | head -3)"
spans=$(wc -l <"$tmp/c.spans")
[ "$spans" -lt 250 ] || fail "$spans windows traced: the truncation lost none"
# After the truncation the trace goes on: the last phase is there whole, 50 windows.
tail -n 50 "$tmp/c.spans" | gawk '$4 != "resume" || $6 != "pause" { print "span at " $3 ": " $4 ".." $6 }' >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "the phase after the truncation is not traced whole: $(head -3 "$tmp/bad")"
echo "truncated AUX records: $truncated, windows traced: $spans of 250" >&2
echo ok
