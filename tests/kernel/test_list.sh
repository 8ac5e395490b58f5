#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `auxtrig list` on this machine: every syscall and tracepoint tracefs has,
# every PMU sysfs has, kprobe: and mem: marked as auxtrig probe finds them,
# the USDT probes of usdt_demo; and the nearest names an unknown point or
# event gets in record's errors (--window, --on, -e, usdt:, uprobe:).
. "$(dirname "$0")/lib.sh"
need_root
T=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
[ -n "$T" ] || fail "tracefs is not mounted (make deps mounts it)"

"$AUXTRIG" list >"$tmp/all" 2>"$tmp/err" || fail "list exited $?: $(cat "$tmp/err")"
# as many syscalls as tracefs has sys_enter_* events, and every tracepoint
n=$(ls -d "$T"/events/syscalls/sys_enter_* | wc -l)
assert_eq "$(grep -c ' \[syscall\]$' "$tmp/all")" "$n" "syscalls listed"
n=$(find "$T/events" -mindepth 2 -maxdepth 2 -type d | wc -l)
assert_eq "$(grep -c ' \[tracepoint\]$' "$tmp/all")" "$n" "tracepoints listed"
grep -qx 'tp:sched:sched_switch *\[tracepoint\]' "$tmp/all" || fail "no tp:sched:sched_switch"
grep -qx 'syscall:openat *\[syscall\]' "$tmp/all" || fail "no syscall:openat"
# every PMU
for d in /sys/bus/event_source/devices/*; do
	grep -q "^$(basename "$d")// " "$tmp/all" || fail "PMU $(basename "$d") not listed"
done

# kprobes and breakpoints: as auxtrig probe finds them
probe=$("$AUXTRIG" probe --json) || fail "auxtrig probe failed"
if [ "$(jq -r .bpf.kprobe.status <<<"$probe")" = ok ]; then
	grep -q '^kprobe:SYMBOL\[+OFF\] .*; fires here' "$tmp/all" || fail "kprobes fire here, list says otherwise"
	"$AUXTRIG" list 'kprobe:do_sys_openat2' | grep -q '^kprobe:do_sys_openat2 ' || fail "kprobe:do_sys_openat2 not listed"
else
	grep -q '^kprobe:SYMBOL\[+OFF\] .*not on this machine: this kernel has no kprobes\( (reported so by AUXTRIG_CAPS_OFF)\)\?\]$' "$tmp/all" ||
		fail "no kprobes here, list does not say so: $(grep ^kprobe "$tmp/all")"
fi
if [ "$(jq -r .hw_breakpoint.status <<<"$probe")" = ok ]; then
	grep -q '^mem:ADDR.*; fires here\]$' "$tmp/all" || fail "breakpoints fire here, list says otherwise"
else
	grep -q '^mem:ADDR.*not on this machine' "$tmp/all" || fail "breakpoints do not fire here, list does not say so"
fi

# the probes of a binary
assert_eq "$("$AUXTRIG" list --names "usdt:$build/examples/usdt_demo")" \
	"$(printf 'usdt:%s:demo:request_done\nusdt:%s:demo:request_start' "$build/examples/usdt_demo" "$build/examples/usdt_demo")" \
	"usdt_demo's probes"

# record: the nearest names in one line, exit 2, nothing attached
near() { # near EXPECTED-STDERR -- record args...
	local want=$1; shift 2
	"$AUXTRIG" record -o "$tmp/x.data" "$@" -- "$DEMO" -r 1 >/dev/null 2>"$tmp/stderr"
	local rc=$?
	assert_eq $rc 2 "exit of 'record $*'"
	assert_eq "$(cat "$tmp/stderr")" "$want" "stderr of 'record $*'"
	[ ! -e "$tmp/x.data" ] || fail "'record $*' left a file"
}
near "auxtrig: --window syscall:opneat: unknown syscall: there is no tracepoint syscalls:sys_enter_opneat in $T/events (did you mean syscall:openat?)" \
	-- -w syscall:opneat
if [ -d "$T/events/syscalls/sys_enter_sendfile64" ] && [ ! -d "$T/events/syscalls/sys_enter_sendfile" ]; then
	near "auxtrig: --on 'syscall:sendfile:exit if ret < 0:mark': unknown syscall: there is no tracepoint syscalls:sys_exit_sendfile (did you mean syscall:sendfile64:exit?)" \
		-- --on 'syscall:sendfile:exit if ret < 0:mark'
fi
near "auxtrig: --on 'tp:sched:sched_swich:mark': unknown tracepoint: there is no tracepoint sched:sched_swich (did you mean tp:sched:sched_switch?)" \
	-- --on 'tp:sched:sched_swich:mark'
near "auxtrig: -e sched:sched_swich: unknown tracepoint: nothing matches in $T/events (did you mean sched:sched_switch?)" \
	-- -w syscall:openat -e sched:sched_swich
near "auxtrig: --window tp:sched:sched_swich..syscall:close:exit: unknown tracepoint: there is no tracepoint sched:sched_swich in $T/events (did you mean tp:sched:sched_switch..syscall:close:exit?)" \
	-- -w tp:sched:sched_swich..syscall:close:exit
u=$build/examples/usdt_demo
near "auxtrig: cannot attach to usdt:$u:demo:request_stat: no such USDT probe in that file (did you mean usdt:$u:demo:request_start?)" \
	-- --on "usdt:$u:demo:request_stat:mark"
u=$build/examples/uprobe_demo
near "auxtrig: cannot attach to uprobe:$u:handel: no such symbol in that file (did you mean uprobe:$u:handle?)" \
	-- -w "uprobe:$u:handel"
# nothing near: the plain message, no guess
near "auxtrig: -e sched:zzzzzz: unknown tracepoint: nothing matches in $T/events (list them with 'auxtrig list')" \
	-- -w syscall:openat -e sched:zzzzzz
echo ok
