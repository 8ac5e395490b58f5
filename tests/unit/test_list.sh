#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `auxtrig list` on fixture trees (no privileges): the names and kinds it
# prints, globs over both name forms, PMUs with the AUX ones marked, the USDT
# probes and functions of a built example, and the exit status and nearest
# names when nothing matches.
set -u
top=${AUXTRIG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AUXTRIG_BUILD:-$top/build}
auxtrig=$build/auxtrig
fx=$top/tests/fixtures
bad=0
fail() { echo "FAIL: $*"; bad=1; }
list() { "$auxtrig" list --tracefs "$fx/tracefs-names" --sysfs-root "$fx/sysfs-intel_pt" "$@"; }

out=$(list --names 'syscall:*') || fail "list 'syscall:*' exited $?"
[ "$out" = "$(printf 'syscall:openat\nsyscall:openat2\nsyscall:read\nsyscall:sendfile64')" ] ||
	fail "syscalls: got '$out'"

# perf list's layout: the name, then its kind in brackets
out=$(list 'tp:sched:sched_w*')
[ "$out" = "$(printf '%-44s [tracepoint]\n%-44s [tracepoint]' tp:sched:sched_wakeup tp:sched:sched_wakeup_new)" ] ||
	fail "tp:sched:sched_w*: got '$out'"
# the -e form of a tracepoint matches too
[ "$(list --names 'raw_syscalls:*')" = "$(printf 'tp:raw_syscalls:sys_enter\ntp:raw_syscalls:sys_exit')" ] ||
	fail "raw_syscalls:* by its -e name"

# PMUs: intel_pt is the AUX one, with how to record it; the others are listed plain
out=$(list 'intel_pt*')
grep -qx 'intel_pt// *\[hardware trace PMU: -e intel_pt//; pauses in the kernel: unknown (auxtrig probe)\]' <<<"$out" ||
	fail "intel_pt: got '$out'"
[ "$(list --names '*//')" = "$(ls "$fx/sysfs-intel_pt/bus/event_source/devices" | sed 's|$|//|')" ] ||
	fail "PMUs: not every fixture PMU, sorted"

# everything: every syscall and tracepoint of the fixture, every PMU, and the
# kinds that need a file (usdt:, uprobe:) as hints
out=$(list)
[ "$(grep -c '\[syscall\]$' <<<"$out")" = 4 ] || fail "list: not 4 syscalls"
[ "$(grep -c '\[tracepoint\]$' <<<"$out")" = 13 ] || fail "list: not 13 tracepoints"
grep -q '^usdt:PATH:PROVIDER:NAME .*auxtrig list usdt:PATH\]$' <<<"$out" || fail "list: no usdt: hint"
grep -q '^uprobe:PATH:SYMBOL\[+OFF\] .*auxtrig list uprobe:PATH\]$' <<<"$out" || fail "list: no uprobe: hint"

# a binary's USDT probes and functions
usdt=$build/examples/usdt_demo
[ "$(list "usdt:$usdt")" = "$(printf '%-44s [usdt]\n%-44s [usdt]' "usdt:$usdt:demo:request_done" "usdt:$usdt:demo:request_start")" ] ||
	fail "usdt:$usdt: got '$(list "usdt:$usdt")'"
[ "$(list --names "uprobe:$build/examples/uprobe_demo:handle")" = "uprobe:$build/examples/uprobe_demo:handle" ] ||
	fail "uprobe: no handle() in uprobe_demo"

# nothing matches: exit 1, one line with the nearest names
err=$(list 'syscall:sendfile' 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || fail "no match: exit $rc, expected 1"
[ "$err" = "auxtrig: list: nothing matches 'syscall:sendfile' (did you mean syscall:sendfile64?)" ] || fail "no match: '$err'"
err=$(list 'sched:sched_swich' 2>&1 >/dev/null)
[ "$err" = "auxtrig: list: nothing matches 'sched:sched_swich' (did you mean sched:sched_switch?)" ] || fail "no match: '$err'"
err=$(list usdt:/nonexistent 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && [ "$err" = "auxtrig: list usdt:/nonexistent: cannot read /nonexistent: no such file" ] ||
	fail "usdt of a missing file: exit $rc, '$err'"
# a device is not an ELF file (it said "No such device")
err=$(list uprobe:/dev/zero 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && [ "$err" = "auxtrig: list uprobe:/dev/zero: cannot read /dev/zero: not an ELF file (not even a regular file)" ] ||
	fail "uprobe of a device: exit $rc, '$err'"
list a b >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "two globs: exit $rc, expected 2"

[ $bad = 0 ] && echo ok
exit $bad
