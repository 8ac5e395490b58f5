#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Syscall windows on the emulated Intel PT unit (a real kernel, not real hardware). With aux_action
# (6.12): sys_enter_getpid resumes and sys_exit_getpid pauses the trace in the kernel, one
# TIP.PGE/TIP.PGD pair per call, the PTWRITEs inside naming the calling thread, nothing outside a
# window; perf 6.1 and auxtrig script read the same. Without it (6.1): aux_action is refused, the
# run takes the userspace-gated path and says so; its edge-to-ioctl latency is measured and
# printed, and windows shorter than that round trip are counted as missed, never half-traced.
. "$(dirname "$0")/lib.sh"
need_trace_unit

rounds=4
"$AUXTRIG" record -e intel_pt/ptw/u -w syscall:getpid -o "$tmp/pt.data" -- "$DEMO" -r $rounds \
	>"$tmp/demo.out" 2>"$tmp/err" || fail "record failed: $(cat "$tmp/err")"
cat "$tmp/err" >&2
pid=$(sed -n 's/^openat_demo: pid \([0-9]*\).*/\1/p' "$tmp/demo.out")
pt_packets "$tmp/pt.data" >"$tmp/pkts"
in_kernel=0
kernel_aux_action && in_kernel=1
windows_check "$tmp/pkts" $((1 - in_kernel)) >"$tmp/win" || fail "packets are not whole windows: $(grep BAD "$tmp/win")"
# Every window's thread is the demo's.
awk -v p="$pid" '$1 != p { print "thread " $1 " is not the demo'"'"'s" }' "$tmp/win" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "$(cat "$tmp/bad")"
perf_pge=$(grep -c '^PGE' "$tmp/pkts")
ours_pge=$("$AUXTRIG" script -i "$tmp/pt.data" --packets 2>/dev/null | grep -c 'TIP.PGE')
ours_pgd=$("$AUXTRIG" script -i "$tmp/pt.data" --packets 2>/dev/null | grep -c 'TIP.PGD')
assert_eq "$ours_pge" "$perf_pge" "TIP.PGE packets auxtrig script reads (perf 6.1 reads $perf_pge)"
assert_eq "$ours_pgd" "$perf_pge" "TIP.PGD packets auxtrig script reads"

if [ $in_kernel = 1 ]; then
	grep -q "hardware trace intel_pt/ptw/u: windows by in-kernel aux_pause/aux_resume" "$tmp/err" ||
		fail "not the in-kernel path: $(cat "$tmp/err")"
	# One pair per getpid() call, each with its own PTWRITEs.
	assert_eq "$(wc -l <"$tmp/win")" $rounds "windows traced"
	assert_eq "$(awk '{ print $2; print $3 }' "$tmp/win" | sort -u | wc -l)" $((2 * rounds)) "distinct PTWRITE sequence numbers"
else
	grep -q "intel_pt/ptw/u: this kernel has no aux_action" "$tmp/err" || fail "no word of the missing aux_action: $(cat "$tmp/err")"
	grep -q "windows gated from userspace" "$tmp/err" || fail "not the gated path: $(cat "$tmp/err")"
	lat=$(grep -o 'edge-to-ioctl latency median [0-9.]* us, p99 [0-9.]* us' "$tmp/err") ||
		fail "no measured latency: $(cat "$tmp/err")"
	echo "measured on this guest: $lat" >&2
	missed=$(sed -n 's/.* \([0-9]*\) windows closed before auxtrig could enable the trace.*/\1/p' "$tmp/err")
	# A window shorter than the round trip is counted as missed; its late enable still turns the
	# trace on after the window closed, until the late disable: user code after the call is traced
	# (the PGD, elsewhere, has its IP suppressed). Stated, not hidden: the lab measures the gap.
	echo "traced groups: $(wc -l <"$tmp/win"), missed windows: ${missed:-0}" >&2
	# Each window is traced (a whole PGE..PGD group) or counted as missed: none is lost silently.
	assert_eq $(($(wc -l <"$tmp/win") + ${missed:-0} >= rounds)) 1 "windows traced ($(wc -l <"$tmp/win")) + missed (${missed:-0})"
fi
# perf 6.1 dumps the file without a warning. (perf script's Intel PT decoding of a per-thread
# file fails: known_switch_records.sh, a known failure.)
perf report -D -i "$tmp/pt.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed: $(tail -3 "$tmp/dump.err")"
grep -iE 'warning|error|failed' "$tmp/dump.err" && fail "perf report -D warns"
echo ok
