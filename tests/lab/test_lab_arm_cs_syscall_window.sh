#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lab-arch: arm64
# Syscall windows on the emulated CoreSight unit (ETMv4 into tmc_etr0; a real arm64 kernel, not
# real hardware). Where the PMU can pause (7.x, as the real driver since 6.16): sys_enter_getpid
# resumes and sys_exit_getpid pauses the trace in the kernel, one span per call, from a resume to
# a pause at the same address (no user instruction runs inside a system call), each of the demo's
# thread (its context ID), nothing outside a window; each pause publishes the window (the ETR's
# memory copied into the AUX area, as tmc_update_etr_buffer() does on AUX pause). Where it cannot
# (6.12): auxtrig says so, gates the trace from userspace and says that; each window is traced
# (a span the gate started and stopped) or counted as missed. Either way perf 6.1's packet dump,
# auxtrig script's own ETMv4 decoder and OpenCSD see the same switches, and perf reads the file
# without a warning. With ete=1 the same for ETE into its per-CPU TRBE (raw, unformatted).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm_units.sh"

# run UNIT_PARAMS...: the windows of 4 getpid() calls on the unit loaded with UNIT_PARAMS.
run() {
	local pid in_kernel=0 missed spans
	need_cs_unit "$@"
	rm -f "$tmp/cs.data"
	"$AUXTRIG" probe --json | grep -q '"name":"cs_etm","type":[0-9]*,"pause_resume":"yes"' && in_kernel=1
	"$AUXTRIG" record -e cs_etm//u -w syscall:getpid -o "$tmp/cs.data" -- "$DEMO" -r 4 \
		>"$tmp/demo.out" 2>"$tmp/err" || fail "record ($*) failed: $(cat "$tmp/err")"
	cat "$tmp/err" >&2
	pid=$(sed -n 's/^openat_demo: pid \([0-9]*\).*/\1/p' "$tmp/demo.out")
	cs_decoders_agree "$tmp/cs.data"
	cs_spans "$tmp/sw" >"$tmp/spans" || fail "switches out of place: $(grep BAD "$tmp/spans" | head -3)"
	gawk -v p="$pid" '$2 != p { print "a span of context ID " $2 ", not the demo'"'"'s " p }' "$tmp/spans" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$(head -3 "$tmp/bad")"
	spans=$(wc -l <"$tmp/spans")
	if [ $in_kernel = 1 ]; then
		grep -q "hardware trace cs_etm//u: windows by in-kernel aux_pause/aux_resume" "$tmp/err" ||
			fail "not the in-kernel path: $(cat "$tmp/err")"
		assert_eq "$spans" 4 "spans traced ($*; one per getpid() call)"
		gawk '$4 != "resume" || $6 != "pause" || $7 != $8 { print "span at " $3 ": " $4 ".." $6 " at " $7 ".." $8 }' \
			"$tmp/spans" >"$tmp/bad"
		[ ! -s "$tmp/bad" ] || fail "spans that are not one window, resume to pause: $(head -3 "$tmp/bad")"
	else
		grep -q "cs_etm//u: this PMU cannot pause/resume in the kernel" "$tmp/err" ||
			fail "no word of the PMU that cannot pause: $(cat "$tmp/err")"
		grep -q "windows gated from userspace" "$tmp/err" || fail "not the gated path: $(cat "$tmp/err")"
		missed=$(sed -n 's/.* \([0-9]*\) windows closed before auxtrig could enable the trace.*/\1/p' "$tmp/err")
		echo "spans: $spans, missed windows: ${missed:-0}" >&2
		gawk '$4 != "start" || $6 != "stop" { print "span at " $3 ": " $4 ".." $6 }' "$tmp/spans" >"$tmp/bad"
		[ ! -s "$tmp/bad" ] || fail "spans not switched by the gate or the scheduler: $(head -3 "$tmp/bad")"
		assert_eq $((spans + ${missed:-0} >= 4)) 1 "windows traced ($spans) + missed (${missed:-0})"
	fi
	perf report -D -i "$tmp/cs.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed: $(tail -3 "$tmp/dump.err")"
	! grep -iE 'warning|error|failed' "$tmp/dump.err" || fail "perf report -D warns"
}

run
run ete=1
echo ok
