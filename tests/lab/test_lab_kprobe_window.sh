#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# kprobe windows on the emulated Intel PT unit (a real kernel, not real hardware): a window from a
# kernel function's entry (kprobe) to its return (kretprobe). With aux_action (6.12) the group's
# members come from the kernel's "kprobe" PMU, the entry with aux_resume and the return with
# aux_pause: one TIP.PGE/TIP.PGD pair per call of the function by the target (getpid's syscall
# function, which only openat_demo's getpid() reaches), the PTWRITEs inside naming the demo's
# thread, nothing outside a window; perf 6.1 and auxtrig script read the same. Without it (6.1)
# the gate's kprobe programs send the edges and auxtrig gates the trace from userspace.
. "$(dirname "$0")/lib.sh"
need_trace_unit
"$AUXTRIG" probe | grep -q '^ *bpf kprobe *ok' || fail "the lab guests have kprobes: auxtrig probe says $("$AUXTRIG" probe | grep kprobe)"
fn=__x64_sys_getpid
grep -q " $fn\$" /proc/kallsyms || fail "no $fn in /proc/kallsyms (an x86-64 kernel's getpid syscall function)"

rounds=4
"$AUXTRIG" record -e intel_pt/ptw/u -w "kprobe:$fn..kretprobe:$fn" -o "$tmp/pt.data" -- "$DEMO" -r $rounds \
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
ours_pge=$("$AUXTRIG" script -i "$tmp/pt.data" --packets 2>/dev/null | grep -c 'TIP.PGE')
assert_eq "$ours_pge" "$perf_pge" "TIP.PGE packets auxtrig script reads (perf 6.1 reads $perf_pge)"

if [ $in_kernel = 1 ]; then
	grep -q "hardware trace intel_pt/ptw/u: windows by in-kernel aux_pause/aux_resume" "$tmp/err" ||
		fail "not the in-kernel path: $(cat "$tmp/err")"
	# The members: the kprobe PMU's, resume at the entry, pause at the return.
	"$AUXTRIG" record --dry-run -vv -e intel_pt/ptw/u -w "kprobe:$fn..kretprobe:$fn" -- "$DEMO" >"$tmp/dry" 2>&1 ||
		fail "--dry-run failed: $(cat "$tmp/dry")"
	grep -q "kprobe:$fn" "$tmp/dry" && grep -q "kretprobe:$fn" "$tmp/dry" || fail "no kprobe members in --dry-run: $(cat "$tmp/dry")"
	assert_eq "$(wc -l <"$tmp/win")" $rounds "windows traced (one per getpid call)"
	assert_eq "$(awk '{ print $2; print $3 }' "$tmp/win" | sort -u | wc -l)" $((2 * rounds)) "distinct PTWRITE sequence numbers"
else
	grep -q "windows gated from userspace" "$tmp/err" || fail "not the gated path: $(cat "$tmp/err")"
	missed=$(sed -n 's/.* \([0-9]*\) windows closed before auxtrig could enable the trace.*/\1/p' "$tmp/err")
	echo "traced groups: $(wc -l <"$tmp/win"), missed windows: ${missed:-0}" >&2
	assert_eq $(($(wc -l <"$tmp/win") + ${missed:-0} >= rounds)) 1 "windows traced ($(wc -l <"$tmp/win")) + missed (${missed:-0})"
fi
perf report -D -i "$tmp/pt.data" >/dev/null 2>"$tmp/dump.err" || fail "perf report -D failed: $(tail -3 "$tmp/dump.err")"
grep -iE 'warning|error|failed' "$tmp/dump.err" && fail "perf report -D warns"
echo ok
