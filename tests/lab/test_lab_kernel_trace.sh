#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Kernel trace on the emulated Intel PT unit (a real kernel, not real hardware), //k: the unit
# reports the kernel IP each switch interrupted. A syscall window and a kprobe window recorded with
# -e intel_pt/ptw/k keep the kernel's code as perf record --kcore does: the recording is a
# directory (data, kcore_dir/{kcore,kallsyms,modules}), the run says how much it kept; perf 6.1
# reads that directory, and auxtrig script prints perf's lines for it byte for byte, every window
# starting and stopping at a kernel address named by the kept kallsyms (kprobe windows: in the
# probed function). The kprobe windows' lines are compared with perf's in
# known_kernel_trace_kprobe.sh (a known gap).
. "$(dirname "$0")/lib.sh"
need_trace_unit
# AUXTRIG_LAB_KEEP=DIR: the recordings and listings are copied there (debugging)
[ -n "${AUXTRIG_LAB_KEEP:-}" ] && trap 'mkdir -p "$AUXTRIG_LAB_KEEP" && cp -r "$tmp"/. "$AUXTRIG_LAB_KEEP"; rm -rf "$tmp"' EXIT

# With aux_action the windows are getpid() calls, switched in the kernel at their edges. Without it
# (6.1) the trace is switched from userspace, a millisecond or more after each edge: a getpid()
# window is over by then (the recording counts it as missed), so the windows are 20 ms sleeps,
# which the trace joins while the thread is still in the kernel.
if kernel_aux_action; then
	syscall=getpid work=("$DEMO" -r 4)
else
	syscall=clock_nanosleep work=("$build/examples/nap_demo" 2 1 20)
fi
fn=__x64_sys_$syscall
grep -q " $fn\$" /proc/kallsyms || fail "no $fn in /proc/kallsyms (an x86-64 kernel's $syscall syscall function)"

check_kernel_recording() { # NAME WINDOW [nocmp]
	local name=$1 window=$2 d=$tmp/$1.data
	"$AUXTRIG" record -e intel_pt/ptw/k -w "$window" -o "$d" -- "${work[@]}" >/dev/null 2>"$tmp/$name.err" ||
		fail "$name: record failed: $(cat "$tmp/$name.err")"
	cat "$tmp/$name.err" >&2
	grep -qE "kept the kernel's code for decoding: [0-9.]+ MiB \(kernel text [0-9.]+ MiB, [0-9]+ modules [0-9.]+ MiB\)" \
		"$tmp/$name.err" || fail "$name: no word of what was kept: $(cat "$tmp/$name.err")"
	for f in data kcore_dir/kcore kcore_dir/kallsyms kcore_dir/modules; do
		[ -s "$d/$f" ] || fail "$name: $d/$f missing or empty"
	done
	# (BPF programs come and go: the kernel's own symbols and the modules' are the same)
	cmp -s <(grep -v '\[bpf\]' "$d/kcore_dir/kallsyms") <(grep -v '\[bpf\]' /proc/kallsyms) ||
		fail "$name: the kept kallsyms is not this kernel's"
	[ "$(stat -c %s "$d/kcore_dir/kcore")" -lt $((256 << 20)) ] || fail "$name: the kept kcore is larger than 256 MiB"

	# perf 6.1 reads the directory with its kcore_dir, and auxtrig prints its lines
	perf script -i "$d" --itrace=b >"$tmp/$name.perf" 2>"$tmp/$name.perf.err" ||
		fail "$name: perf script -i DIR failed: $(tail -3 "$tmp/$name.perf.err")"
	! grep -iE 'error|failed|no kallsyms' "$tmp/$name.perf.err" || fail "$name: perf script warns"
	"$AUXTRIG" script -i "$d" >"$tmp/$name.ours" 2>"$tmp/$name.ours.err" ||
		fail "$name: auxtrig script -i DIR failed: $(cat "$tmp/$name.ours.err")"
	[ -s "$tmp/$name.perf" ] || fail "$name: perf printed no sample"
	[ "${3:-}" = nocmp ] || cmp -s "$tmp/$name.perf" "$tmp/$name.ours" ||
		{ diff "$tmp/$name.perf" "$tmp/$name.ours" | head -6; fail "$name: auxtrig's lines differ from perf's"; }
	# every trace start is at a kernel address named from the kept kallsyms, in [kernel.kallsyms]
	grep 'branches' "$tmp/$name.ours" | grep -v ' => ffffffff[0-9a-f]* [a-zA-Z_][a-zA-Z0-9_.]*+0x[0-9a-f]* (\[kernel.kallsyms\])' |
		grep '                0 \[unknown\] (\[unknown\]) =>' >"$tmp/$name.unnamed"
	[ ! -s "$tmp/$name.unnamed" ] || fail "$name: trace starts not named by kallsyms: $(head -3 "$tmp/$name.unnamed")"
	grep -c ' => ffffffff' "$tmp/$name.ours" >"$tmp/$name.starts"
	[ "$(cat "$tmp/$name.starts")" -ge 1 ] || fail "$name: no trace start in the kernel"
}

check_kernel_recording syscall syscall:$syscall
# (the kprobe windows' lines against perf's: tests/lab/known_kernel_trace_kprobe.sh)
check_kernel_recording kprobe "kprobe:$fn..kretprobe:$fn" nocmp
# with aux_action (the in-kernel path), kprobe windows start in the probed function: the int3
# interrupted it; without it (6.1) the trace is switched on from userspace, later, wherever the
# kernel then is, and the recording says so
starts=$(grep ' => ffffffff' "$tmp/kprobe.ours" | sed 's/.* => ffffffff[0-9a-f]* \([^+]*\)+.*/\1/' | sort | uniq -c)
echo "kprobe windows start in: $starts" >&2
if kernel_aux_action; then
	grep -q " => ffffffff[0-9a-f]* $fn+0x" "$tmp/kprobe.ours" || fail "no kprobe window starts in $fn: $starts"
else
	grep -q "gating the trace from userspace" "$tmp/kprobe.err" ||
		fail "no aux_action, and the recording does not say the trace is gated from userspace: $(cat "$tmp/kprobe.err")"
fi
echo "syscall windows start in: $(grep ' => ffffffff' "$tmp/syscall.ours" | sed 's/.* => ffffffff[0-9a-f]* \([^+]*\)+.*/\1/' | sort | uniq -c)" >&2
echo ok
