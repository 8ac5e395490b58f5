#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `auxtrig probe` as a user runs it: exit codes, the lines a user reads on
# this machine, and the documented --json keys (checked with jq). Root only.
# What the machine has is asked of it first (kprobe PMU or kprobe_events,
# bpftrace's kfunc test, AUX PMUs in sysfs); breakpoints must read the same
# in text and JSON (kernel/test_probe checks their count against the kernel's).
set -u
build=${AUXTRIG_BUILD:-build}
top=${AUXTRIG_TOP:-.}
bin=$build/auxtrig
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }

[ "$(id -u)" -eq 0 ] || { echo "needs root: it loads BPF programs" >&2; exit 77; }
# jq is not among the packages `make deps` installs: without it the JSON is
# checked by kernel/test_probe (exact fragments) instead of being skipped here.
have_jq=false
command -v jq >/dev/null && have_jq=true

kprobes=false
{ [ -e /sys/bus/event_source/devices/kprobe ] || [ -e /sys/kernel/tracing/kprobe_events ]; } && kprobes=true
kfunc=$(bpftrace --info 2>&1 | sed -n 's/^ *kfunc: //p')
aux=false
for d in /sys/bus/event_source/devices/*; do
	case ${d##*/} in intel_pt|cs_etm|arm_spe*) aux=true ;; esac
done
echo "machine: kprobes $kprobes, bpftrace kfunc ${kfunc:-?}, AUX PMU $aux" >&2

out=$("$bin" probe) || no "probe exited $?"
printf '%s\n' "$out" >&2
expect() { grep -Eq -- "$1" <<<"$out" || no "no line matching: $1"; }
expect '^  bpf tracepoint +ok +loads, attaches, fired 3/3'
expect '^  bpf uprobe +ok +loads, attaches, fired 3/3'
if $kprobes; then expect '^  bpf kprobe +ok +loads, attaches, fired 3/3'; else expect '^  bpf kprobe +missing '; fi
case $kfunc in
yes) expect '^  bpf fentry +ok +loads, attaches, fired 3/3' ;;
no) expect '^  bpf fentry +missing +load failed' ;;
*) no "bpftrace --info gave no kfunc line (make deps installs bpftrace)" ;;
esac
expect '^  bpf ringbuf +ok '
expect '^  aux_action +(ok|missing) '
expect '^  hw breakpoints +(ok +fired 4/4|missing +open but never fire)'
if $aux; then
	expect '^  hardware trace +ok '
else
	expect '^  hardware trace +missing '
	expect 'auxtrig records kernel event streams'
fi
bp_text=missing
grep -Eq '^  hw breakpoints +ok ' <<<"$out" && bp_text=ok

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
	check '.bpf.kprobe.status == "ok" and .bpf.kprobe.fired and .bpf.kprobe.hits == 3'
else
	check '.bpf.kprobe.status == "missing" and (.bpf.kprobe.errno | type) == "string"'
fi
case $kfunc in
yes) check '.bpf.fentry.status == "ok" and .bpf.fentry.fired and .bpf.fentry.hits == 3' ;;
no) check '.bpf.fentry.status == "missing" and (.bpf.fentry.errno | type) == "string"' ;;
esac
check '.bpf.ringbuf.status == "ok"'
check '.privileges.root and .privileges.cap_bpf and .privileges.cap_perfmon and (.privileges.perf_event_paranoid | type) == "number"'
check '(.mlock.perf_event_mlock_kb | type) == "number" and (.mlock.rlimit_memlock_unlimited | type) == "boolean"'
check '.aux_action == {"status": "ok", "kernel": true, "errno": "EOPNOTSUPP"} or .aux_action == {"status": "missing", "kernel": false, "errno": "EINVAL"}'
if [ $bp_text = ok ]; then
	check '.hw_breakpoint.opened and .hw_breakpoint.fired and .hw_breakpoint.hits == 4 and .hw_breakpoint.status == "ok"'
else
	check '.hw_breakpoint.opened and (.hw_breakpoint.fired | not) and .hw_breakpoint.status == "missing"'
fi
if $aux; then
	check '.hardware_trace.status == "ok" and (.hardware_trace.aux_pmus | length) > 0'
else
	check '.hardware_trace.status == "missing" and .hardware_trace.aux_pmus == []'
fi

# A fixture root is only read, and its PMU listed with type, caps and terms.
json=$("$bin" probe --json --sysfs-root "$top/tests/fixtures/sysfs-intel_pt") || no "probe --sysfs-root exited $?"
check '.hardware_trace.aux_pmus[] | select(.name == "intel_pt") | .type == 8 and .caps.mtc_periods == "249" and .formats.mtc_period == "config:14-17"'

"$bin" probe --bogus 2>/dev/null; [ $? -eq 2 ] || no "bad option did not exit 2"
"$bin" probe --help | grep -q '^USAGE: auxtrig probe' || no "--help has no USAGE line"

[ $fail -eq 0 ] && echo "all checks passed" >&2
exit $fail
