#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `auxtrig probe` as a user runs it: exit codes, the lines a user reads and
# the documented --json keys (checked with jq), on whatever machine this is.
# What the lines must say comes from evidence gathered apart from auxtrig:
# kprobes from sysfs/tracefs, hardware breakpoints from perf's own counting
# of a known program's writes, AUX PMUs from sysfs. The other branches of
# each line are covered by fixtures in tests/unit/test_probe.c. Root only.
set -u
build=${AUXTRIG_BUILD:-build}
top=${AUXTRIG_TOP:-.}
bin=$build/auxtrig
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }

[ "$(id -u)" -eq 0 ] || { echo "needs root: it loads BPF programs" >&2; exit 77; }
command -v perf >/dev/null || { echo "needs perf (make deps installs linux-perf)" >&2; exit 77; }
# jq is among the packages `make deps` installs; without it the JSON is still
# checked by kernel/test_probe (exact fragments).
have_jq=false
command -v jq >/dev/null && have_jq=true

# Under the test aid AUXTRIG_CAPS_OFF=all the machine is not asked: every optional capability
# is reported missing by the switch, in the text and in --json; the rest is still this machine's.
if [ "${AUXTRIG_CAPS_OFF:-}" = all ]; then
	out=$("$bin" probe) || no "probe exited $?"
	for w in "btf" "bpf kprobe" "bpf fentry" "cgroup v2" "hw breakpoints" "hardware trace"; do
		grep -qE "^  $w +missing +reported missing by AUXTRIG_CAPS_OFF \(a test aid; unset it to try this machine\)$" \
			<<<"$out" || no "'$w' is not reported missing by the switch: $(grep "^  $w " <<<"$out")"
	done
	grep -qE '^  bpf tracepoint +ok ' <<<"$out" || no "the switch took away what it does not name: $out"
	if $have_jq; then
		json=$("$bin" probe --json) || no "probe --json exited $?"
		for k in .btf .cgroup2 .bpf.kprobe .bpf.fentry .hw_breakpoint .hardware_trace; do
			[ "$(jq -r "$k.status + \" \" + $k.reported_missing_by" <<<"$json")" = "missing AUXTRIG_CAPS_OFF" ] ||
				no "--json $k: $(jq -c "$k" <<<"$json")"
		done
	fi
	exit $fail
fi

# The evidence. kprobes: the kernel registers them.
kprobes=false
[ -e /sys/bus/event_source/devices/kprobe ] || [ -e /sys/kernel/tracing/kprobe_events ] && kprobes=true
# Breakpoints: perf counts the user-space writes of usdt_demo's `failures`, one per failed
# request (3 of 9): "fire" if it counts them all, "silent" if it opens and counts 0, "none"
# if perf cannot open one.
USDT=$build/examples/usdt_demo
addr=$(nm "$USDT" | awk '$3 == "failures" { print $1 }')
[ -n "$addr" ] || no "no symbol failures in $USDT"
count=$(perf stat -x, -e "mem:0x$addr/8:w:u" -- "$USDT" 9 2>&1 >/dev/null | awk -F, '/mem:/ { print $1 }')
case $count in
3) bp=fire ;;
0) bp=silent ;;
'<not supported>' | '<not counted>' | '') bp=none ;;
*) no "perf counted $count writes of failures, expected 3 or 0"; bp=unknown ;;
esac
aux=0
for d in /sys/bus/event_source/devices/*; do
	case ${d##*/} in intel_pt | intel_bts | cs_etm | arm_spe* | hisi_ptt*) aux=$((aux + 1)) ;; esac
done
echo "evidence: kprobes $kprobes; breakpoints: $bp (perf counted '$count' of 3 writes); $aux AUX PMU(s)" >&2

out=$("$bin" probe) || no "probe exited $?"
printf '%s\n' "$out" >&2
expect() { grep -Eq -- "$1" <<<"$out" || no "no line matching: $1"; }
expect '^  bpf tracepoint +ok +loads, attaches, fired 3/3'
expect '^  bpf uprobe +ok +loads, attaches, fired 3/3'
if $kprobes; then
	expect '^  bpf kprobe +ok +loads, attaches, fired 3/3 on our open\(\) calls'
else
	expect '^  bpf kprobe +missing '
fi
expect '^  bpf fentry +(ok +loads, attaches, fired 3/3|missing +(load|attach) failed: .*\(E[A-Z]+\))'
expect '^  bpf ringbuf +ok '
expect '^  aux_action +(ok|missing) '
case $bp in
fire) expect '^  hw breakpoints +ok +fired 4/4 on writes to our own variable' ;;
silent) expect '^  hw breakpoints +missing +open but never fire' ;;
none) expect '^  hw breakpoints +missing +cannot open: ' ;;
esac
if [ $aux -gt 0 ]; then
	expect "^  hardware trace +ok +$aux AUX trace PMUs? in /sys/bus/event_source/devices"
else
	expect '^  hardware trace +missing '
	expect 'auxtrig records kernel event streams'
fi

json=$("$bin" probe --json) || no "probe --json exited $?"
if $have_jq; then
	jq -e . >/dev/null <<<"$json" || no "--json is not JSON: $json"
	check() { jq -e "$1" >/dev/null <<<"$json" || no "--json: $1 is false"; }
else
	echo "jq not installed: --json keys are checked by kernel/test_probe" >&2
	check() { :; }
fi
check '.version == 1'
check '(.kernel.release | type) == "string"'
check '.btf.status == "ok" and .tracefs.status == "ok"'
check '.bpf.tracepoint.status == "ok" and .bpf.tracepoint.fired and .bpf.tracepoint.hits == 3'
check '.bpf.uprobe.status == "ok" and .bpf.uprobe.fired'
check '.bpf.raw_tp.status == "ok"'
if $kprobes; then
	check '.bpf.kprobe.status == "ok" and .bpf.kprobe.fired and .bpf.kprobe.hits == 3 and .bpf.kprobe.errno == null'
else
	check '.bpf.kprobe.status == "missing" and (.bpf.kprobe.fired | not) and (.bpf.kprobe.errno | type) == "string"'
fi
# fentry has no outside evidence: ok and fired, or missing with the errno that says why.
check '(.bpf.fentry.status == "ok" and .bpf.fentry.fired) or (.bpf.fentry.status == "missing" and (.bpf.fentry.errno | type) == "string")'
check '.bpf.ringbuf.status == "ok"'
check '.privileges.root and .privileges.cap_bpf and .privileges.cap_perfmon and (.privileges.perf_event_paranoid | type) == "number"'
check '(.mlock.perf_event_mlock_kb | type) == "number" and (.mlock.rlimit_memlock_unlimited | type) == "boolean"'
check '.aux_action == {"status": "ok", "kernel": true, "errno": "EOPNOTSUPP"} or .aux_action == {"status": "missing", "kernel": false, "errno": "EINVAL"}'
case $bp in
fire) check '.hw_breakpoint == {"status": "ok", "opened": true, "fired": true, "hits": 4, "writes": 4, "errno": null}' ;;
silent) check '.hw_breakpoint == {"status": "missing", "opened": true, "fired": false, "hits": 0, "writes": 4, "errno": null}' ;;
none) check '.hw_breakpoint.status == "missing" and (.hw_breakpoint.opened | not) and (.hw_breakpoint.errno | type) == "string"' ;;
esac
# The text and the JSON say the same.
for k in tracepoint raw_tp uprobe kprobe fentry ringbuf; do
	st=$(grep -E "^  bpf $k " <<<"$out" | awk '{ print $3 }')
	check ".bpf.$k.status == \"$st\""
done
check ".aux_action.status == \"$(grep -E '^  aux_action ' <<<"$out" | awk '{ print $2 }')\""
check ".hw_breakpoint.status == \"$(grep -E '^  hw breakpoints ' <<<"$out" | awk '{ print $3 }')\""
check ".hardware_trace.aux_pmus | length == $aux"

# A fixture root is only read, and its PMU listed with type, caps and terms.
json=$("$bin" probe --json --sysfs-root "$top/tests/fixtures/sysfs-intel_pt") || no "probe --sysfs-root exited $?"
check '.hardware_trace.aux_pmus[] | select(.name == "intel_pt") | .type == 8 and .caps.mtc_periods == "249" and .formats.mtc_period == "config:14-17"'

"$bin" probe --bogus 2>/dev/null; [ $? -eq 2 ] || no "bad option did not exit 2"
"$bin" probe --help | grep -q '^USAGE: auxtrig probe' || no "--help has no USAGE line"

[ $fail -eq 0 ] && echo "all checks passed" >&2
exit $fail
