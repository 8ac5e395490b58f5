#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `auxtrig probe` as a user runs it: exit codes, the lines a user reads on
# this VM, and the documented --json keys (checked with jq). Root only.
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

out=$("$bin" probe) || no "probe exited $?"
printf '%s\n' "$out" >&2
expect() { grep -Eq -- "$1" <<<"$out" || no "no line matching: $1"; }
expect '^  bpf tracepoint +ok +loads, attaches, fired 3/3'
expect '^  bpf uprobe +ok +loads, attaches, fired 3/3'
expect '^  bpf kprobe +missing '
expect '^  bpf fentry +missing +load failed: .*\(EPERM\)'
expect '^  bpf ringbuf +ok '
expect '^  aux_action +ok '
expect '^  hw breakpoints +missing +open but never fire'
expect '^  hardware trace +missing '
expect 'auxtrig records kernel event streams'

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
check '.bpf.kprobe.status == "missing" and (.bpf.kprobe.errno | type) == "string"'
check '.bpf.fentry.status == "missing" and .bpf.fentry.errno == "EPERM"'
check '.bpf.ringbuf.status == "ok"'
check '.privileges.root and .privileges.cap_bpf and .privileges.cap_perfmon and (.privileges.perf_event_paranoid | type) == "number"'
check '(.mlock.perf_event_mlock_kb | type) == "number" and (.mlock.rlimit_memlock_unlimited | type) == "boolean"'
check '.aux_action == {"status": "ok", "kernel": true, "errno": "EOPNOTSUPP"}'
check '.hw_breakpoint.opened and (.hw_breakpoint.fired | not) and .hw_breakpoint.status == "missing"'
check '.hardware_trace.status == "missing" and .hardware_trace.aux_pmus == []'

# A fixture root is only read, and its PMU listed with type, caps and terms.
json=$("$bin" probe --json --sysfs-root "$top/tests/fixtures/sysfs-intel_pt") || no "probe --sysfs-root exited $?"
check '.hardware_trace.aux_pmus[] | select(.name == "intel_pt") | .type == 8 and .caps.mtc_periods == "249" and .formats.mtc_period == "config:14-17"'

"$bin" probe --bogus 2>/dev/null; [ $? -eq 2 ] || no "bad option did not exit 2"
"$bin" probe --help | grep -q '^USAGE: auxtrig probe' || no "--help has no USAGE line"

[ $fail -eq 0 ] && echo "all checks passed" >&2
exit $fail
