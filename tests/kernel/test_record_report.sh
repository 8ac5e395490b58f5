#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# perf report on auxtrig's files: every sample carries the cpumode of its IP
# (user code in the program, kernel code in [kernel.kallsyms]) and period 1,
# so perf report names the functions and weighs them: the demo's openat
# samples at the program's syscall wrapper, uprobe marks at handle(),
# sched_switch at the kernel's scheduler, each with a non-zero share.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
UPD=$build/examples/uprobe_demo

# report FILE EVENT: "PERCENT DSO SYMBOL" lines of EVENT's section of perf report --stdio
report() {
	perf report --stdio --sort dso,sym -i "$1" 2>/dev/null |
		awk -v ev="'$2'" '/^# Samples:/ { on = index($0, "of event " ev) > 0; next } on && /%/ { print $1, $2, $3, $4 }'
}

# The demo as make run records it.
"$AUXTRIG" record -q -w syscall:openat -e sched:sched_switch,syscalls:sys_enter_read -o "$tmp/demo.data" \
	-- "$DEMO" -r 3 >/dev/null 2>"$tmp/demo.err" || fail "record: $(cat "$tmp/demo.err")"
report "$tmp/demo.data" syscalls:sys_enter_openat >"$tmp/openat.txt"
[ -s "$tmp/openat.txt" ] || fail "no sys_enter_openat in perf report: $(perf report --stdio -i "$tmp/demo.data" 2>&1)"
while read -r pct dso mode sym; do
	[ "$pct" != "0.00%" ] || fail "sys_enter_openat weighs 0%: $(cat "$tmp/openat.txt")"
	assert_eq "$dso $mode" "openat_demo [.]" "sys_enter_openat's samples: user code of the demo ($pct $dso $mode $sym)"
	case $sym in 0x* | 00*) fail "sys_enter_openat at an unnamed address: $(cat "$tmp/openat.txt")" ;; esac
done <"$tmp/openat.txt"

# Marks at a uprobe: at the probed function, all of them.
"$AUXTRIG" record -q --on "uprobe:$UPD:handle:mark" -o "$tmp/up.data" -- "$UPD" 3 2 >/dev/null 2>"$tmp/up.err" ||
	fail "record: $(cat "$tmp/up.err")"
assert_eq "$(report "$tmp/up.data" auxtrig:mark)" "100.00% uprobe_demo [.] handle" "marks at handle() in perf report"

# Events whose IP is in the kernel: sched_switch without windows, in the scheduler.
"$AUXTRIG" record -q -e sched:sched_switch -o "$tmp/k.data" -- "$DEMO" -r 3 >/dev/null 2>"$tmp/k.err" ||
	fail "record: $(cat "$tmp/k.err")"
report "$tmp/k.data" sched:sched_switch >"$tmp/k.txt"
[ -s "$tmp/k.txt" ] || fail "no sched_switch in perf report"
grep -q '^[1-9][0-9.]*% \[kernel.kallsyms\] \[k\] [a-z_]' "$tmp/k.txt" || fail "sched_switch not in named kernel code: $(cat "$tmp/k.txt")"

# Every sample: period 1, cpumode user for user IPs, kernel for kernel ones.
for f in demo up k; do
	perf report -D -i "$tmp/$f.data" 2>/dev/null | sed -n 's/.*PERF_RECORD_SAMPLE(IP, \(0x[0-9a-f]*\)): [0-9]*\/[0-9]*: \(0x[0-9a-f]*\) period: \([0-9]*\).*/\1 \2 \3/p' |
		while read -r misc ip period; do
			[ "$period" = 1 ] || { echo "$f: period $period at $ip"; continue; }
			if [ "$ip" = 0x0 ]; then continue; fi # auxtrig's own records (trigger_stats)
			if [ $(((ip >> 63) & 1)) = 1 ]; then want=0x1; else want=0x2; fi
			[ "$misc" = "$want" ] || echo "$f: misc $misc at $ip"
		done >"$tmp/bad.txt"
	[ ! -s "$tmp/bad.txt" ] || fail "samples of $f: $(head -5 "$tmp/bad.txt")"
done
echo ok
