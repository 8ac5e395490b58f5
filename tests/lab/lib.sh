# SPDX-License-Identifier: BSD-2-Clause
# Shared by tests/lab/test_*.sh, which run inside a lab guest (tests/lab/vm --trace-unit, as
# tests/lab/run.sh starts them) with the emulated trace unit. Sourced, not run.
. "$(dirname "${BASH_SOURCE[0]}")/../kernel/lib.sh"

# need_trace_unit: the emulated Intel PT unit is loaded (tests/lab/module): it is what these tests
# record from. Outside a lab guest there is none to load: such a run is a skip (a failure under CI).
need_trace_unit() {
	need_root
	need_perf
	[ -e /sys/bus/event_source/devices/intel_pt ] && return 0
	[ -n "${AUXTRIG_LAB_TRACE_UNIT:-}" ] ||
		skip "needs the lab's emulated trace unit: run it in a guest (tests/lab/vm --trace-unit -- ...)"
	busybox insmod "$AUXTRIG_LAB_TRACE_UNIT" || fail "cannot load $AUXTRIG_LAB_TRACE_UNIT"
	[ -e /sys/bus/event_source/devices/intel_pt ] || fail "the trace unit loaded, but there is no intel_pt PMU"
}

# Does the kernel know aux_action? (kernel/test_probe checks the probe against the kernel.)
kernel_aux_action() {
	"$AUXTRIG" probe --json | grep -q '"aux_action":{"status":"ok","kernel":true'
}

# pt_packets FILE: the trace unit's packets in FILE as perf 6.1 dumps them, one per line:
# "PGE IP", "PGD IP" (or "PGD -" when suppressed), "PTW SEQ TID WHY" (WHY: start, resume, pause,
# stop: tests/lab/module), "AUX" at each AUXTRACE buffer. A buffer that wrapped (snapshot mode)
# begins mid-packet: its packets count from its first PSB on, as a decoder syncs.
pt_packets() {
	local kind x
	perf report -D -i "$1" 2>/dev/null | awk '
		/PERF_RECORD_AUXTRACE / { print "AUX"; sync = 0; next }
		/^\. +[0-9a-f]+: / && / PSB$/ { sync = 1 }
		!sync { next }
		/ TIP\.PGE / { print "PGE", $NF }
		/ TIP\.PGD / { ip = $NF; if (ip !~ /^0x/) ip = "-"; print "PGD", ip }
		/ PTWRITE / { print "PTW", $(NF - 1) }' |
		while read -r kind x; do
			if [ "$kind" = PTW ]; then
				echo "PTW $((x >> 32)) $((x & 0xffffff)) $(why_name $(((x >> 24) & 0xff)))"
			else
				echo "$kind${x:+ $x}"
			fi
		done
}

why_name() {
	case $1 in
	1) echo start ;; 2) echo resume ;; 3) echo pause ;; 4) echo stop ;; *) echo "why$1" ;;
	esac
}

# aux_flags FILE: the flags of FILE's PERF_RECORD_AUX records as perf 6.1 dumps them, one number
# per line (1 TRUNCATED, 2 OVERWRITE, 4 PARTIAL, 8 COLLISION).
aux_flags() {
	local f
	perf report -D -i "$1" 2>/dev/null | sed -n 's/.*PERF_RECORD_AUX offset: .* flags: \([0-9a-fx]*\) .*/\1/p' |
		while read -r f; do echo $((f)); done
}

# windows_check PACKETS [ANY_IP]: every PGE is followed by a PTW, a PTW and a PGD of the same
# thread, at the same IP (no user instruction runs inside a system call); nothing outside such a
# group. With ANY_IP=1 the PGD may be elsewhere, its IP suppressed by the unit (user code ran while
# the trace was on: the userspace-gated path switches late). Prints one line per window:
# "TID SEQ_ON SEQ_OFF".
windows_check() {
	awk -v any_ip="${2:-0}" '
		$1 == "AUX" { next }
		state == 0 && $1 == "PGE" { ip = $2; state = 1; next }
		state == 1 && $1 == "PTW" { tid = $3; on = $2; state = 2; next }
		state == 2 && $1 == "PTW" { if ($3 != tid || $2 <= on) bad("PTW pair " tid "/" $3); off = $2; state = 3; next }
		state == 3 && $1 == "PGD" {
			if ($2 != ip && !(any_ip && $2 == "-")) bad("PGD at " $2 ", PGE at " ip)
			print tid, on, off; state = 0; next
		}
		{ bad("unexpected " $0 " in state " state) }
		function bad(m) { print "BAD " m; err = 1 }
		END { if (state) print "BAD trace left on"; exit err || state }' "$1"
}

# pt_spans PACKETS: the spans of trace in PACKETS (pt_packets' output), from each PGE to its PGD,
# one line each: "BUF TID ON_SEQ ON_WHY OFF_SEQ OFF_WHY PGE_IP PGD_IP", BUF numbering the AUXTRACE
# buffers from 1. A span the end of its buffer cuts is left out. A packet out of place (a PGE inside
# a span, a PGD outside one, PTWRITEs of two threads in one span) gives a line "BAD ..." and the
# exit status 1.
pt_spans() {
	awk '
		function bad(m) { print "BAD buffer " buf ": " m; err = 1 }
		$1 == "AUX" { buf++; st = 0; next }
		$1 == "PGE" { if (st) bad("TIP.PGE inside a span"); ip = $2; st = 1; next }
		$1 == "PTW" && st == 1 { tid = $3; on = $2; onw = $4; st = 2; next }
		$1 == "PTW" && st == 2 { if ($3 != tid) bad("PTWRITEs of threads " tid " and " $3 " in one span"); off = $2; offw = $4; st = 3; next }
		$1 == "PGD" && st == 3 { print buf, tid, on, onw, off, offw, ip, $2; st = 0; next }
		{ bad("unexpected \"" $0 "\" in state " st); st = 0 }
		END { exit err }' "$1"
}

# record_pt_windows WINDOW ROUNDS: records openat_demo -r ROUNDS with -e intel_pt/ptw/u -w WINDOW
# into $tmp/pt.data (auxtrig's stderr in $tmp/err) and checks what every window kind shares: the
# packets are whole windows of the demo's thread only; auxtrig script reads as many TIP.PGE and
# TIP.PGD as perf 6.1; with aux_action (in_kernel=1, set here) the run says it pauses and resumes
# in the kernel and traces exactly ROUNDS windows, each with its own PTWRITEs; without it the run
# says it gates from userspace and every window is traced or counted as missed; perf report -D
# reads the file without a warning. Leaves the windows (windows_check's lines) in $tmp/win.
record_pt_windows() {
	local window=$1 rounds=$2 pid perf_pge missed
	"$AUXTRIG" record -e intel_pt/ptw/u -w "$window" -o "$tmp/pt.data" -- "$DEMO" -r "$rounds" \
		>"$tmp/demo.out" 2>"$tmp/err" || fail "record failed: $(cat "$tmp/err")"
	cat "$tmp/err" >&2
	pid=$(sed -n 's/^openat_demo: pid \([0-9]*\).*/\1/p' "$tmp/demo.out")
	pt_packets "$tmp/pt.data" >"$tmp/pkts"
	in_kernel=0
	kernel_aux_action && in_kernel=1
	windows_check "$tmp/pkts" $((1 - in_kernel)) >"$tmp/win" || fail "packets are not whole windows: $(grep BAD "$tmp/win")"
	awk -v p="$pid" '$1 != p { print "thread " $1 " is not the demo'"'"'s" }' "$tmp/win" >"$tmp/bad"
	[ ! -s "$tmp/bad" ] || fail "$(cat "$tmp/bad")"
	perf_pge=$(grep -c '^PGE' "$tmp/pkts")
	"$AUXTRIG" script -i "$tmp/pt.data" --packets >"$tmp/ours" 2>/dev/null
	assert_eq "$(grep -c 'TIP.PGE' "$tmp/ours")" "$perf_pge" "TIP.PGE packets auxtrig script reads (perf 6.1 reads $perf_pge)"
	assert_eq "$(grep -c 'TIP.PGD' "$tmp/ours")" "$perf_pge" "TIP.PGD packets auxtrig script reads"

	if [ $in_kernel = 1 ]; then
		grep -q "hardware trace intel_pt/ptw/u: windows by in-kernel aux_pause/aux_resume" "$tmp/err" ||
			fail "not the in-kernel path: $(cat "$tmp/err")"
		assert_eq "$(wc -l <"$tmp/win")" "$rounds" "windows traced (one per call)"
		assert_eq "$(awk '{ print $2; print $3 }' "$tmp/win" | sort -u | wc -l)" $((2 * rounds)) "distinct PTWRITE sequence numbers"
	else
		grep -q "windows gated from userspace" "$tmp/err" || fail "not the gated path: $(cat "$tmp/err")"
		missed=$(sed -n 's/.* \([0-9]*\) windows closed before auxtrig could enable the trace.*/\1/p' "$tmp/err")
		# A window shorter than the round trip is counted as missed; its late enable still turns
		# the trace on after the window closed, until the late disable: user code after the call
		# is traced (the PGD, elsewhere, has its IP suppressed). Stated, not hidden.
		echo "traced groups: $(wc -l <"$tmp/win"), missed windows: ${missed:-0}" >&2
		# Each window is traced (a whole PGE..PGD group) or counted as missed: none lost silently.
		assert_eq $(($(wc -l <"$tmp/win") + ${missed:-0} >= rounds)) 1 "windows traced ($(wc -l <"$tmp/win")) + missed (${missed:-0})"
	fi
	perf report -D -i "$tmp/pt.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed: $(tail -3 "$tmp/dump.err")"
	! grep -iE 'warning|error|failed' "$tmp/dump.err" || fail "perf report -D warns"
}
