#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lab-arch: arm64
# Snapshot sizes on the emulated CoreSight unit (a real arm64 kernel, not real hardware), on both
# lab kernels and both kinds of sink: the ETR (tmc_etr0, formatted frames, its memory copied into
# the AUX area at handle->head, which advances monotonically by what it copies: the 2021 fix
# "coresight: tmc-etr: Use perf_output_handle::head for AUX ring buffer") and ETE's per-CPU TRBE
# (raw, writing into the AUX area itself, its head monotonic as it wraps). perf once read CoreSight
# snapshots of a few MB to ~20 MB for one workload, from a driver whose head did not say where the
# new data ended; auxtrig's must be stable and bounded by the area.
#
# window_clock sleeps twice a round (its thread is scheduled out and in: the unit switches the trace
# off and on each time, about a hundred bytes), pinned to one CPU traced alone (-C) into a 4 KiB
# area in snapshot mode (-S) with no window: far more trace than the area between two snapshots.
# Six snapshots by SIGUSR2: each exactly the area, 4096 bytes; each the area's newest data, none of
# a snapshot before (the unit's timestamps increase); perf 6.1's packet dump, auxtrig's own ETMv4
# decoder and OpenCSD see the same switches; perf reads the file without a warning.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm_units.sh"
cpu=$(one_cpu)
clock=$build/examples/window_clock

# aux_sizes FILE: the sizes of FILE's AUXTRACE buffers, in file order, one a line.
aux_sizes() {
	perf_dump "$1"
	sed -n 's/.*PERF_RECORD_AUXTRACE size: \(0x[0-9a-f]*\) .*/\1/p' "$1.dump" | while read -r s; do echo $((s)); done
}

# run NAME UNIT_PARAMS...: six snapshots of the unit loaded with UNIT_PARAMS.
run() {
	local name=$1 n=0
	shift
	need_cs_unit "$@"
	record_bg "$tmp/$name.err" -e cs_etm//u -C "$cpu" -m 64,1 -S -o "$tmp/$name.data" \
		-- taskset -c "$cpu" "$clock" 100000 1 2 sleep
	demo=$(command_pid $aux)
	[ -n "$demo" ] || fail "auxtrig ($aux) has no child"
	while [ $n -lt 6 ]; do
		sleep 0.5
		n=$((n + 1))
		kill -USR2 $aux
		wait_for "$tmp/$name.err" "snapshot $n \(SIGUSR2\)" $aux
	done
	kill $demo
	wait $aux || fail "$name: record failed: $(cat "$tmp/$name.err")"
	cat "$tmp/$name.err" >&2
	assert_eq "$(aux_sizes "$tmp/$name.data" | tr '\n' ' ')" "4096 4096 4096 4096 4096 4096 " \
		"$name: snapshot sizes (a 4 KiB area each time)"
	cs_decoders_agree "$tmp/$name.data"
	# In each snapshot the spans of trace (cs_spans' rule, snapshot by snapshot, in one sort and one
	# awk: a dozen processes a snapshot took seconds under TCG), ordered by time, one a line: "BUF ID
	# TID ON_TS ON_WHY OFF_TS OFF_WHY ON_ADDR OFF_ADDR"; every span of a snapshot after every span
	# of the snapshot before.
	gawk '/^AUX/ { b++; next } { print b, $0 }' "$tmp/sw" | sort -k1,1n -k3,3n | gawk '
		function bad(m) { print "BAD snapshot " b ": " m; err = 1 }
		$1 != b { b = $1; delete on }
		$6 == "start" || $6 == "resume" { if ($2 in on) bad("trace ID " $2 ": " $6 " at " $3 " inside a span from " on[$2])
			on[$2] = $3; onw[$2] = $6; ona[$2] = $4; tid[$2] = $5; next }
		$6 == "pause" || $6 == "stop" { if (!($2 in on)) { bad("trace ID " $2 ": " $6 " at " $3 " outside a span"); next }
			print b, $2, tid[$2], on[$2], onw[$2], $3, $6, ona[$2], $4; delete on[$2]; next }
		{ bad("unknown switch: " $0) }
		END { exit err }' >"$tmp/$name.spans" || fail "$name: switches out of place: $(grep BAD "$tmp/$name.spans" | head -3)"
	gawk '{ n[$1]++ } END { for (b = 1; b <= 6; b++) if (n[b] < 5) print "snapshot " b ": " n[b] + 0 " whole spans" }' \
		"$tmp/$name.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$name: fewer than 5 whole spans in 4 KiB: $(cat "$tmp/bad")"
	gawk '$5 != "start" || $7 != "stop" { print "span at " $4 ": " $5 ".." $7 }' "$tmp/$name.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$name: spans not switched by the scheduler: $(head -3 "$tmp/bad")"
	gawk 'NR > 1 && $4 <= last { print "buffer " $1 ": span at " $4 " after " last } { last = $6 }' \
		"$tmp/$name.spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$name: snapshots overlap or are out of order: $(head -3 "$tmp/bad")"
	! grep -iE 'warning|error|failed' "$tmp/$name.data.dump.err" || fail "$name: perf report -D warns"
	echo "$name: $(wc -l <"$tmp/$name.spans") spans in 6 snapshots of 4096 bytes (${SECONDS}s into the test)" >&2
}

run etr
run trbe ete=1
echo ok
