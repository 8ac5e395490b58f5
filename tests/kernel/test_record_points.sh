#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Trigger points: syscall:* windows and points, windows between any two
# points, uprobe/uretprobe/usdt --on points with conditions on their
# arguments and return values, usdt windows, and kprobe/kretprobe/mem points,
# which run where the machine has them and are refused with the alternative
# where it does not. Every count is what the example programs are known to do.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
UPD=$build/examples/uprobe_demo
USDT=$build/examples/usdt_demo
SEQ=$build/examples/seq_demo
NR_getpid=$(syscall_nr getpid)
NR_openat=$(syscall_nr openat)
count() { grep -c -- "$1" "$2"; }
rec() { local name=$1; shift
	"$AUXTRIG" record -o "$tmp/$name.data" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		fail "record $*: $(cat "$tmp/$name.err")"
	assert_perf_reads_cleanly "$tmp/$name.data"
	pscript "$tmp/$name.data" >"$tmp/$name.txt"; }
windows() { sed -n 's/.*auxtrig record: \([0-9]*\) window.*/\1/p' "$tmp/$1.err"; }

# 1. syscall:*: inside any syscall. --where on the syscall number keeps the
# getpid() calls, 5 of them; their own enter and exit are inside the window,
# the read() calls are not.
rec any -w 'syscall:*' --where "nr == $NR_getpid" \
	-e syscalls:sys_enter_getpid,syscalls:sys_exit_getpid,syscalls:sys_enter_read -- "$DEMO" -r 5
assert_eq "$(windows any)" 5 "syscall:* windows where nr is getpid"
assert_eq "$(count "raw_syscalls:sys_enter: NR $NR_getpid " "$tmp/any.txt")" 5 "window starts"
assert_eq "$(count 'raw_syscalls:sys_exit:' "$tmp/any.txt")" 5 "window ends"
assert_eq "$(count 'sys_enter_getpid:' "$tmp/any.txt")" 5 "getpid entries inside"
assert_eq "$(count 'sys_exit_getpid:' "$tmp/any.txt")" 5 "getpid exits inside"
assert_eq "$(count 'sys_enter_read:' "$tmp/any.txt")" 0 "read() outside every window"
# Without --where every read() is inside a syscall.
rec any2 -w 'syscall:*' -e syscalls:sys_enter_read,syscalls:sys_exit_read -- "$DEMO" -r 5
assert_eq "$(count 'sys_enter_read:' "$tmp/any2.txt")" 5 "read() entries inside syscall:*"
assert_eq "$(count 'sys_exit_read:' "$tmp/any2.txt")" 5 "read() exits inside syscall:*"

# 2. syscall:*:exit as a point: a mark at every syscall that returns -ENOENT,
# i.e. the 5 failing openat() calls, with the syscall's number.
rec anyexit --on 'syscall:*:exit if ret == -ENOENT:mark' -- "$DEMO" -r 5
assert_eq "$(count 'auxtrig:mark:' "$tmp/anyexit.txt")" 5 "marks at -ENOENT returns"
assert_eq "$(count "auxtrig:mark: trigger=1 nr=$NR_openat ret=-2 " "$tmp/anyexit.txt")" 5 "marks carry nr and ret"

# tp: points compare fields as the format declares them: openat's dfd is an int in an 8-byte
# slot (AT_FDCWD arrives as 0xffffff9c), so dfd == -100 holds at every openat() of the demo,
# at tp:syscalls:sys_enter_openat as at syscall:openat:enter.
rec tpint --on 'tp:syscalls:sys_enter_openat if dfd == -100:mark' --on 'syscall:openat:enter if dfd == -100 && dfd < 0:mark' \
	-- "$DEMO" -r 5
assert_eq "$(count 'auxtrig:mark: trigger=1 ' "$tmp/tpint.txt")" 10 "tp: marks where the int field dfd == -100"
assert_eq "$(count 'auxtrig:mark: trigger=2 ' "$tmp/tpint.txt")" 10 "syscall: marks where dfd == -100"

# Arguments a syscall does not have read as 0: close() has one, read() three,
# and what lies after their records is not theirs. Every close() and read()
# of the demo (5 each) is marked; before, args past the record read garbage.
rec noargs --on 'syscall:close:enter if arg1 == 0 && arg2 == 0 && arg3 == 0 && arg4 == 0 && arg5 == 0:mark' \
	--on 'syscall:read:enter if arg3 == 0 && arg4 == 0 && arg5 == 0:mark' -- "$DEMO" -r 5
assert_eq "$(count 'auxtrig:mark: trigger=1 ' "$tmp/noargs.txt")" 5 "close() marks: its missing args read 0"
assert_eq "$(count 'auxtrig:mark: trigger=2 ' "$tmp/noargs.txt")" 5 "read() marks: its missing args read 0"

# $elapsed at syscall:*:exit counts from the same call's raw entry: only the
# sleep_pattern FLFLF: two 250 ms clock_nanosleep() calls among calls of microseconds (0.1 ms for
# the F sleeps): only those two last longer than 100 ms, with a margin that holds on a loaded
# machine and in the lab's emulated guests.
rec anyel --on 'syscall:*:exit if $elapsed > 100ms:mark' -- "$build/examples/sleep_pattern" FLFLF
assert_eq "$(count 'auxtrig:mark:' "$tmp/anyel.txt")" 2 "marks at syscalls longer than 100 ms"
assert_eq "$(count "auxtrig:mark: trigger=1 nr=$(syscall_nr clock_nanosleep) " "$tmp/anyel.txt")" 2 "the long ones are the sleeps"

# 3. Windows between two points of different kinds.
# From openat()'s exit to close()'s entry: per round the first openat's exit
# opens it (a file descriptor: 3 unless the test inherited more, as under
# flock), the second openat (entry inside), read and getpid are in it,
# close's entry ends it.
rec mixed -w syscall:openat:exit..syscall:close:enter \
	-e syscalls:sys_enter_openat,syscalls:sys_enter_read,syscalls:sys_enter_getpid -- "$DEMO" -r 5
assert_eq "$(windows mixed)" 5 "openat-exit..close-enter windows"
assert_eq "$(count 'sys_exit_openat: 0x[0-9a-f]\{1,8\}$' "$tmp/mixed.txt")" 5 "window starts (the successful openat)"
assert_eq "$(count 'sys_exit_openat:' "$tmp/mixed.txt")" 5 "no failing openat exit starts or is recorded"
assert_eq "$(count 'sys_enter_openat:' "$tmp/mixed.txt")" 5 "the second openat's entry, inside"
assert_eq "$(count 'sys_enter_read:' "$tmp/mixed.txt")" 5 "read inside"
assert_eq "$(count 'sys_enter_getpid:' "$tmp/mixed.txt")" 5 "getpid inside"
assert_eq "$(count 'sys_enter_close:' "$tmp/mixed.txt")" 5 "window ends"
# A window that opens at an exit point: --where sees the return value. Only
# the failing openat() opens it; read() then is outside, getpid() ends it.
rec mixedret -w syscall:openat:exit..syscall:getpid:enter --where 'ret < 0' \
	-e syscalls:sys_enter_read -- "$DEMO" -r 5
assert_eq "$(windows mixedret)" 5 "windows opened where ret < 0"
assert_eq "$(count 'sys_exit_openat: 0xfffffffffffffffe$' "$tmp/mixedret.txt")" 5 "window starts (the failing openat)"
assert_eq "$(count 'sys_exit_openat:' "$tmp/mixedret.txt")" 5 "no successful openat starts one"
assert_eq "$(count 'sys_enter_read:' "$tmp/mixedret.txt")" 5 "read() inside"
assert_eq "$(count 'sys_enter_getpid:' "$tmp/mixedret.txt")" 5 "window ends"
# From handle()'s entry (a uprobe) to the failing openat()'s exit inside it:
# the 3 getppid() of each handle(2) are inside, the one before it is not.
rec upmixed -w "uprobe:$UPD:handle..syscall:openat:exit" -e syscalls:sys_enter_getppid -- "$UPD" 4 2
assert_eq "$(windows upmixed)" 4 "uprobe..syscall windows"
assert_eq "$(count 'sys_enter_getppid:' "$tmp/upmixed.txt")" 12 "getppid inside handle() up to its openat"
assert_eq "$(count 'sys_exit_openat: 0xfffffffffffffffe$' "$tmp/upmixed.txt")" 4 "window ends"

# 4. uprobe and uretprobe --on points: conditions on arguments and return values.
# handle(2) recurses: handle(2), handle(1), handle(0) per round, returning 3 from the outermost.
rec up --on "uprobe:$UPD:handle if arg0 == 1:mark" --on "uretprobe:$UPD:handle if ret == 3:mark" \
	--on "uprobe:$UPD:handle if comm == \"nobody\":mark" -- "$UPD" 4 2
assert_eq "$(count 'auxtrig:mark: trigger=1 nr=-1 ret=0 arg0=0x1 ' "$tmp/up.txt")" 4 "uprobe marks where arg0 == 1"
assert_eq "$(count 'auxtrig:mark: trigger=1 ' "$tmp/up.txt")" 4 "uprobe marks"
assert_eq "$(count 'auxtrig:mark: trigger=2 nr=-1 ret=3 ' "$tmp/up.txt")" 4 "uretprobe marks where ret == 3"
assert_eq "$(count 'auxtrig:mark: trigger=2 ' "$tmp/up.txt")" 4 "uretprobe marks"
assert_eq "$(count 'auxtrig:mark: trigger=3 ' "$tmp/up.txt")" 0 "marks of a condition that never holds"
grep -q 'uprobe:.*evaluated 12, matched 4, fired 4' "$tmp/up.err" || fail "uprobe counters: $(cat "$tmp/up.err")"
grep -q 'uretprobe:.*evaluated 12, matched 4, fired 4' "$tmp/up.err" || fail "uretprobe counters: $(cat "$tmp/up.err")"
# The uprobe's marks are at handle(): perf names the function.
assert_eq "$(perf script -F event,ip,sym -i "$tmp/up.data" 2>/dev/null | grep -c 'auxtrig:mark: .* handle$')" 4 \
	"uprobe marks at handle()"

# uretprobe: ret as the function returns it. try_open() returns an int, -ENOENT from the
# innermost handle() of each round: the binary's DWARF types ret, so -2 compares and prints
# as -2 (the register holds 4294967294), and so does the uprobe window's exit record.
rec uret --on "uretprobe:$UPD:try_open if ret == -ENOENT:mark" -w "uprobe:$UPD:try_open" -- "$UPD" 4 2
assert_eq "$(count 'auxtrig:mark: trigger=1 nr=-1 ret=-2 ' "$tmp/uret.txt")" 4 "uretprobe marks where an int function returned -2"
assert_eq "$(count 'auxtrig:uprobe_exit: window=0 depth=1 ret=-2$' "$tmp/uret.txt")" 4 "uprobe window exits with ret -2"
# Without debug information ret is the whole register: the cast types it, and auxtrig says why.
objcopy --strip-debug "$UPD" "$tmp/upd_nodebug"
rec uretraw --on "uretprobe:$tmp/upd_nodebug:try_open if (int)ret == -ENOENT:mark" \
	--on "uretprobe:$tmp/upd_nodebug:try_open if ret == -2:mark" -- "$tmp/upd_nodebug" 4 2
assert_eq "$(count 'auxtrig:mark: trigger=1 nr=-1 ret=4294967294 ' "$tmp/uretraw.txt")" 4 "(int)ret marks without debug information"
assert_eq "$(count 'auxtrig:mark: trigger=2 ' "$tmp/uretraw.txt")" 0 "ret == -2 without debug information"
assert_eq "$(grep -c "^auxtrig: uretprobe:$tmp/upd_nodebug:try_open: the file has no BTF or DWARF, so ret is the whole return register: .* (in a condition, write (int)ret)$" "$tmp/uretraw.err")" 1 \
	"the note on untyped ret, once"

# 5. usdt: as a point, conditions on the probe's arguments (id, status) ...
rec usdt --on "usdt:$USDT:demo:request_done if arg1 == -2:mark" -- "$USDT" 9
assert_eq "$(sed -n 's/.*auxtrig:mark: trigger=1 nr=-1 ret=0 arg0=\(0x[0-9a-f]*\) arg1=0xfffffffffffffffe .*/\1/p' \
	"$tmp/usdt.txt" | tr '\n' ' ')" "0x2 0x5 0x8 " "usdt marks: the failing requests' ids"
grep -q 'evaluated 9, matched 3, fired 3' "$tmp/usdt.err" || fail "usdt counters: $(cat "$tmp/usdt.err")"
# ... and as a window: request_start..request_done holds one getppid() per request.
rec usdtw -w "usdt:$USDT:demo:request_start..usdt:$USDT:demo:request_done" \
	-e syscalls:sys_enter_getppid,syscalls:sys_enter_openat -- "$USDT" 9
assert_eq "$(windows usdtw)" 9 "usdt windows"
assert_eq "$(count 'sys_enter_getppid:' "$tmp/usdtw.txt")" 9 "getppid inside requests (9 of 18)"
assert_eq "$(count 'sys_enter_openat:' "$tmp/usdtw.txt")" 3 "the failing requests' openat"
# --dry-run shows the probe points and what they do.
"$AUXTRIG" record --dry-run -w "usdt:$USDT:demo:request_start..usdt:$USDT:demo:request_done" \
	--on "uretprobe:$UPD:handle:mark" -- "$USDT" >"$tmp/dry.out" 2>&1 || fail "--dry-run: $(cat "$tmp/dry.out")"
grep -qx "  usdt:$USDT:demo:request_start (probe) opens a window" "$tmp/dry.out" || fail "dry run: $(cat "$tmp/dry.out")"
grep -qx "  usdt:$USDT:demo:request_done (probe) closes a window" "$tmp/dry.out" || fail "dry run: $(cat "$tmp/dry.out")"
grep -qx "  uretprobe:$UPD:handle (probe) has trigger 1" "$tmp/dry.out" || fail "dry run: $(cat "$tmp/dry.out")"
# --where at a usdt window start sees its arguments: only requests 2, 5, 8.
rec usdtwh -w "usdt:$USDT:demo:request_start..usdt:$USDT:demo:request_done" --where 'arg0 % 3 == 2' \
	-e syscalls:sys_enter_getppid -- "$USDT" 9
assert_eq "$(windows usdtwh)" 3 "usdt windows where arg0 % 3 == 2"
assert_eq "$(count 'sys_enter_getppid:' "$tmp/usdtwh.txt")" 3 "getppid inside the selected requests"

# 6. kprobe, kretprobe, mem: where this machine has them they fire; where it
# does not, they are refused before anything is created, with the alternative.
refused() { local opt=$1 spec=$2 msg=$3
	"$AUXTRIG" record "$opt" "$spec" -o "$tmp/x.data" -- "$DEMO" -r 1 >/dev/null 2>"$tmp/x.err"
	assert_eq $? 2 "exit code of $opt '$spec'"
	assert_eq "$(wc -l <"$tmp/x.err")" 1 "lines of the refusal of $opt '$spec'"
	# under AUXTRIG_CAPS_OFF (man auxtrig-probe) the refusal names the switch as the cause
	[ -n "${AUXTRIG_CAPS_OFF:-}" ] && msg=${msg/missing)/missing, reported so by AUXTRIG_CAPS_OFF)}
	grep -qF -- "auxtrig: $opt '$spec': $msg" "$tmp/x.err" || fail "$opt '$spec': $(cat "$tmp/x.err")"
	[ ! -e "$tmp/x.data" ] || fail "$opt '$spec' left a file"; }
if "$AUXTRIG" probe | grep -q '^ *bpf kprobe *ok'; then
	rec kp --on 'kprobe:do_sys_openat2:mark' --on 'kretprobe:do_sys_openat2 if ret == -2:mark' -- "$DEMO" -r 5
	[ "$(count 'auxtrig:mark: trigger=1 ' "$tmp/kp.txt")" -ge 10 ] || fail "kprobe marks: $(cat "$tmp/kp.txt")"
	assert_eq "$(count 'auxtrig:mark: trigger=2 .*ret=-2 ' "$tmp/kp.txt")" 5 "kretprobe marks at -ENOENT"
else
	nokp="this kernel has no kprobes (auxtrig probe: bpf kprobe missing); use a syscall:NAME:enter, syscall:NAME:exit or tp:SYS:EVENT point instead"
	refused --on 'kprobe:do_sys_openat2:mark' "$nokp"
	refused --on 'kretprobe:do_sys_openat2 if ret == -2:mark' "$nokp"
	refused --window 'kprobe:vfs_read..kretprobe:vfs_read' "$nokp"
fi
if "$AUXTRIG" probe | grep -q '^ *hw breakpoints *ok'; then
	rec mem --on "mem:$USDT:failures/8:w:mark" -- "$USDT" 9
	assert_eq "$(count 'auxtrig:mark: trigger=1 ' "$tmp/mem.txt")" 3 "marks at writes of failures"
else
	nomem="hardware breakpoints do not fire on this machine (auxtrig probe: hw breakpoints missing); use uprobe:PATH:SYMBOL on the code that touches the memory instead"
	refused --on "mem:$USDT:failures/8:w:mark" "$nomem"
	refused --on 'mem:0x4a72d0/8:mark' "$nomem"
fi
# x86 has no read-only breakpoints: mem:...:r is refused while parsing, whatever the
# machine's breakpoints do, saying what x86 offers.
case $(uname -m) in
x86_64 | i?86)
	nor="x86 has no read-only hardware breakpoints: it offers w (writes) and rw (reads and writes)"
	refused --on "mem:$USDT:failures/8:r:mark" "$nor"
	refused --on 'mem:0x4a72d0/8:r:mark' "$nor"
	refused --window "mem:$USDT:failures:r..syscall:close:enter" "start point 'mem:$USDT:failures:r': $nor"
	;;
esac

# 7. Bad points: one line, exit 2, no file.
bad() { "$AUXTRIG" record -e syscalls:sys_enter_close "$1" "$2" -o "$tmp/x.data" -- "$SEQ" 1 1 >/dev/null 2>"$tmp/x.err"
	assert_eq $? 2 "exit code of $1 '$2'"; grep -qF -- "$3" "$tmp/x.err" || fail "$1 '$2': $(cat "$tmp/x.err")"
	[ ! -e "$tmp/x.data" ] || fail "$1 '$2' left a file"; }
bad --on "uprobe:$UPD:handle if ret == 3:mark" "'ret' is known only at a return point"
bad --on "uretprobe:$UPD:handle if arg0 == 1:mark" "'arg0' is known only at an entry point"
bad --on "uretprobe:$UPD:handle+4:mark" "a return probe takes no +OFFSET"
bad --on "usdt:$USDT:demo:mark" "expected usdt:PATH:PROVIDER:NAME"
bad --on "usdt:$USDT:demo:no_such_probe:mark" "no such USDT probe in that file"
bad --on "uprobe:$UPD:no_such_function:mark" "no such symbol"
bad --on "usdt:/no/such/file:demo:x:mark" "no such file: /no/such/file"
bad --on 'fentry:vfs_read:mark' "unknown point"
bad --window "usdt:$USDT:demo:request_start" "one point is not a window"
bad --window 'syscall:*:enter..syscall:*:enter' "two different points"
bad --window 'syscall:openat:exit..syscall:nope:enter' "unknown syscall"
"$AUXTRIG" record -w syscall:openat --where 'ret < 0' -o "$tmp/x.data" -- "$DEMO" -r 1 >/dev/null 2>"$tmp/x.err"
assert_eq $? 2 "exit code of --where ret at an entry"
grep -q "'ret' is known only when a window ends" "$tmp/x.err" || fail "--where ret at an entry: $(cat "$tmp/x.err")"
echo ok
