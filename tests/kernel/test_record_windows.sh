#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Syscall windows: a workload with a known number of openat calls among other
# syscalls; the file must hold exactly the windows (every enter and exit) and
# exactly the events inside them, none outside.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

rounds=5 threads=1
workers=$((threads + 1))

# 1. openat windows; read/getpid happen only outside them, sched_switch may happen inside.
"$AUXTRIG" record -q -w syscall:openat -e syscalls:sys_enter_read,syscalls:sys_enter_getpid,sched:sched_switch \
	-o "$tmp/a.data" -- "$DEMO" -r $rounds -t $threads >"$tmp/a.out" || fail "record failed"
assert_perf_reads_cleanly "$tmp/a.data"
pscript "$tmp/a.data" >"$tmp/a.txt"
enter=$(grep -c 'syscalls:sys_enter_openat:' "$tmp/a.txt")
exit_=$(grep -c 'syscalls:sys_exit_openat:' "$tmp/a.txt")
enoent=$(grep 'syscalls:sys_exit_openat:' "$tmp/a.txt" | grep -c '0xfffffffffffffffe$')
assert_eq "$enter" $((2 * rounds * workers)) "openat enters"
assert_eq "$exit_" $((2 * rounds * workers)) "openat exits"
assert_eq "$enoent" $((rounds * workers)) "openat exits with -ENOENT"
assert_eq "$(grep -c 'sys_enter_read:' "$tmp/a.txt")" 0 "read events outside windows"
assert_eq "$(grep -c 'sys_enter_getpid:' "$tmp/a.txt")" 0 "getpid events outside windows"
grep -v '^ *openat_demo ' "$tmp/a.txt" | grep . && fail "events from other processes"
# Per thread, enters and exits alternate, and anything else sits between an enter and its exit.
awk '{ tid = $2 }
     /sys_enter_openat:/ { if (open[tid]) { print "nested enter on " tid; bad = 1 } open[tid] = 1; next }
     /sys_exit_openat:/  { if (!open[tid]) { print "exit without enter on " tid; bad = 1 } open[tid] = 0; next }
     { if (!open[tid]) { print "outside a window: " $0; bad = 1 } }
     END { for (t in open) if (open[t]) { print "unclosed window on " t; bad = 1 } exit bad }' "$tmp/a.txt" ||
	fail "window structure broken"

# 2. Sleeping inside the window: every clock_nanosleep window holds the thread's switch-out.
"$AUXTRIG" record -q -w syscall:clock_nanosleep -e sched:sched_switch,syscalls:sys_enter_getpid \
	-o "$tmp/b.data" -- "$DEMO" -r $rounds -t $threads >/dev/null || fail "record failed"
assert_perf_reads_cleanly "$tmp/b.data"
pscript "$tmp/b.data" >"$tmp/b.txt"
assert_eq "$(grep -c 'sys_enter_clock_nanosleep:' "$tmp/b.txt")" $((rounds * workers)) "nanosleep windows"
assert_eq "$(grep -c 'sys_enter_getpid:' "$tmp/b.txt")" 0 "getpid outside windows"
awk '{ tid = $2 }
     /sys_enter_clock_nanosleep:/ { open[tid] = 1; sw[tid] = 0; next }
     /sys_exit_clock_nanosleep:/  { if (!sw[tid]) { print "window without its switch-out on " tid; bad = 1 } open[tid] = 0; next }
     /sched_switch:/ { if (!open[tid]) { print "switch outside a window: " $0; bad = 1 }
                       if ($0 ~ "prev_pid=" tid " ") sw[tid] = 1 }
     END { exit bad }' "$tmp/b.txt" || fail "sleep windows do not hold their context switches"

# 3. Without --window every hit of the target (and only the target) is recorded.
"$AUXTRIG" record -q -e syscalls:sys_enter_getpid -o "$tmp/c.data" -- "$DEMO" -r $rounds -t $threads >/dev/null ||
	fail "record failed"
assert_perf_reads_cleanly "$tmp/c.data"
pscript "$tmp/c.data" >"$tmp/c.txt"
assert_eq "$(grep -c 'sys_enter_getpid:' "$tmp/c.txt")" $((rounds * workers)) "getpid events of the target"

# 4. Children are followed: the demo's child process opens windows too.
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/d.data" -- "$DEMO" -r $rounds -c demo_kid >/dev/null ||
	fail "record failed"
pscript "$tmp/d.data" >"$tmp/d.txt"
assert_eq "$(grep '^ *demo_kid ' "$tmp/d.txt" | grep -c 'sys_enter_openat:')" $((2 * rounds)) "child's windows"
assert_eq "$(grep -c 'sys_enter_openat:' "$tmp/d.txt")" $((4 * rounds)) "all windows"

# 5. --where picks windows in the kernel: by comm, by thread, by argument.
"$AUXTRIG" record -q -w syscall:openat --where 'comm == "demo_kid"' -o "$tmp/e.data" -- "$DEMO" -r $rounds -c demo_kid \
	>/dev/null || fail "record --where comm failed"
pscript "$tmp/e.data" >"$tmp/e.txt"
assert_eq "$(grep -c 'sys_enter_openat:' "$tmp/e.txt")" $((2 * rounds)) "windows where comm == demo_kid"
assert_eq "$(grep -v '^ *demo_kid ' "$tmp/e.txt" | grep -c .)" 0 "windows of other comms"
"$AUXTRIG" record -q -w syscall:openat --where 'tid != pid && comm ~ "openat_*"' -o "$tmp/f.data" -- "$DEMO" -r $rounds -t 2 \
	>/dev/null || fail "record --where tid failed"
pscript "$tmp/f.data" >"$tmp/f.txt"
assert_eq "$(grep -c 'sys_enter_openat:' "$tmp/f.txt")" $((2 * rounds * 2)) "windows of the two extra threads"
# flags == 0 for both demo openat calls; the third argument of every call is O_RDONLY.
"$AUXTRIG" record -q -w syscall:openat --where 'arg2 == 0 && arg1 != 0' -o "$tmp/g.data" -- "$DEMO" -r $rounds \
	>/dev/null || fail "record --where args failed"
assert_eq "$(pscript "$tmp/g.data" | grep -c 'sys_enter_openat:')" $((2 * rounds)) "windows where flags == O_RDONLY"
"$AUXTRIG" record -q -w syscall:openat --where 'arg2 != 0' -o "$tmp/h.data" -- "$DEMO" -r $rounds \
	>/dev/null 2>"$tmp/h.err" || fail "record --where args failed"
assert_eq "$(pscript "$tmp/h.data" | grep -c 'sys_enter_openat:')" 0 "windows where flags != 0"

# A user-memory string: only the openat calls on the missing path open windows.
"$AUXTRIG" record -q -w syscall:openat --where 'str(arg1) ~ "/nonexistent/*"' -o "$tmp/s.data" -- "$DEMO" -r $rounds \
	>/dev/null || fail "record --where str() failed"
pscript "$tmp/s.data" >"$tmp/s.txt"
assert_eq "$(grep -c 'sys_exit_openat: 0xfffffffffffffffe$' "$tmp/s.txt")" $rounds "windows on the missing path"
assert_eq "$(grep -c 'sys_exit_openat:' "$tmp/s.txt")" $rounds "windows in all"

# A window between two tracepoints: from read's entry to close's exit holds the getpid between them.
"$AUXTRIG" record -q -w tp:syscalls:sys_enter_read..tp:syscalls:sys_exit_close -e syscalls:sys_enter_getpid,syscalls:sys_enter_openat \
	-o "$tmp/p.data" -- "$DEMO" -r $rounds >/dev/null || fail "record tp..tp failed"
pscript "$tmp/p.data" | awk '{ print $5 }' >"$tmp/p.txt"
assert_eq "$(grep -c . "$tmp/p.txt")" $((3 * rounds)) "records in read..close windows"
assert_eq "$(uniq "$tmp/p.txt" | head -3 | tr '\n' ' ')" "syscalls:sys_enter_read: syscalls:sys_enter_getpid: syscalls:sys_exit_close: " \
	"order inside a read..close window"

# 6. The file is private and the summary counts what was written.
assert_eq "$(stat -c %a "$tmp/a.data")" 600 "output mode"
echo ok
