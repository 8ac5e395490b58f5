#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Marks with values: --on '...:mark(str(argN), ret)' writes an auxtrig:mark
# record that carries the user string argN points to. At a syscall's exit
# argN is the argument the same thread entered the syscall with, so a failing
# openat's mark names the path that failed. perf 6.1 and auxtrig script print
# the string; the timeline has it in the mark's arguments.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

mark_line() { # TRIGGER RET STRING: the end of an auxtrig:mark line as perf script prints it
	printf 'auxtrig:mark: trigger=%s nr=[0-9]* ret=%s arg0=0xffffff9c arg1=0x[0-9a-f]* arg2=0x[0-9a-f]* str="%s"$' "$1" "$2" "$3"
}

# openat_demo: per round and thread openat("/dev/null") then openat("/nonexistent/auxtrig-demo");
# -t 3: 4 threads (main and 3 more) x 3 rounds: 12 of each, at once. Each exit's mark has its own thread's entry.
"$AUXTRIG" record -q -o "$tmp/1.data" \
	--on 'syscall:openat:exit if ret < 0:mark(str(arg1), ret)' \
	--on 'syscall:openat:exit if ret >= 0:mark(str(arg1))' \
	-- "$DEMO" -t 3 -r 3 >"$tmp/1.out" 2>&1 || fail "record 1 failed: $(cat "$tmp/1.out")"
assert_perf_reads_cleanly "$tmp/1.data"
perf script -i "$tmp/1.data" 2>/dev/null >"$tmp/1.txt"
assert_eq "$(grep -c 'auxtrig:mark:' "$tmp/1.txt")" 24 "marks"
assert_eq "$(grep -c "$(mark_line 1 -2 /nonexistent/auxtrig-demo)" "$tmp/1.txt")" 12 "failing openat marks with their path"
assert_eq "$(grep -c "$(mark_line 2 '[0-9]*' /dev/null)" "$tmp/1.txt")" 12 "successful openat marks with their path"
"$AUXTRIG" script -i "$tmp/1.data" | diff - "$tmp/1.txt" >/dev/null || fail "auxtrig script differs from perf script"
"$AUXTRIG" script --format=chrome -i "$tmp/1.data" |
	jq -e '[.traceEvents[] | select(.ph == "i" and .args.str == "/nonexistent/auxtrig-demo" and .args.ret == -2)] |
		length == 12' >/dev/null || fail "the timeline's marks lack the path"

# a path of 300 characters at the exit: the first 252 and "..."; a plain mark in the same run: empty
long=/nonexistent/$(printf 'a%.0s' $(seq 287))
"$AUXTRIG" record -q -o "$tmp/2.data" --on 'syscall:openat:exit if ret < 0:mark(str(arg1), ret)' \
	--on 'syscall:close:exit:mark' -- cat "$long" >/dev/null 2>&1
perf script -i "$tmp/2.data" 2>/dev/null >"$tmp/2.txt"
# (cat's other failing openat calls, if any, are the machine's: only the one of the path is counted)
assert_eq "$(grep -F "ret=-2 arg0=0xffffff9c" "$tmp/2.txt" | grep -cF 'str="/nonexistent/')" 1 "marks of the failing openat"
grep -F "ret=-2 arg0=0xffffff9c" "$tmp/2.txt" | grep -qF "str=\"${long:0:252}...\"" ||
	fail "long path not cut at 252 + ...: $(grep -F /nonexistent/ "$tmp/2.txt")"
grep -q 'auxtrig:mark: trigger=2 .* str=""$' "$tmp/2.txt" || fail "close's plain mark: $(grep -F trigger=2 "$tmp/2.txt")"

# an argument beyond the first at the exit: renameat2's newname (arg3); path_demo -d renames a to b
mkdir "$tmp/p"
"$AUXTRIG" record -q -o "$tmp/3.data" --on 'syscall:renameat2:exit:mark(str(arg3), ret)' \
	-- "$build/examples/path_demo" -r 1 -d "$tmp/p" >"$tmp/3.out" 2>&1 || fail "record 3 failed: $(cat "$tmp/3.out")"
perf script -i "$tmp/3.data" 2>/dev/null >"$tmp/3.txt"
assert_eq "$(grep -c "auxtrig:mark: trigger=1 nr=[0-9]* ret=0 .* str=\"$tmp/p/b\"$" "$tmp/3.txt")" 1 "renameat2's mark"

# conditions on the entry's arguments at the exit (entry.argN): only the failing openat of the path
# asked for, per thread; str(entry.arg1) on a path no call had: none. Compiled (the exit's own
# program), then interpreted (each condition made too long to compile: an always-false glob over
# EXPR_BPF_GLOB_BUDGET): the same marks.
g='*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'
long=" && (comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || pid != 0)"
for how in compiled interpreted; do
	x=; [ $how = interpreted ] && x=$long
	"$AUXTRIG" record -v -f -o "$tmp/5.data" \
		--on "syscall:openat:exit if ret == -ENOENT && str(entry.arg1) ~ \"/nonexistent/*\"$x:mark(str(arg1), ret)" \
		--on "syscall:openat:exit if ret == -ENOENT && str(entry.arg1) ~ \"/dev/*\"$x:mark" \
		--on "syscall:openat:exit if ret >= 0 && (int)entry.arg0 == -100 && str(entry.arg1) == \"/dev/null\"$x:mark" \
		-- "$DEMO" -t 3 -r 3 >"$tmp/5.out" 2>"$tmp/5.err" || fail "record 5 ($how) failed: $(cat "$tmp/5.err")"
	if [ $how = compiled ]; then
		grep -q '^auxtrig: syscalls:sys_exit_openat: its own gate program, [0-9]* instructions, triggers compiled$' \
			"$tmp/5.err" || fail "entry.argN at the exit not compiled: $(grep -i 'openat\|interpreted' "$tmp/5.err")"
	else
		grep -q '^auxtrig: syscalls:sys_exit_openat: triggers run by the shared gate program, conditions interpreted: ' \
			"$tmp/5.err" || fail "the long conditions compiled: $(grep -i 'openat\|interpreted' "$tmp/5.err")"
	fi
	perf script -i "$tmp/5.data" 2>/dev/null >"$tmp/5.txt"
	assert_eq "$(grep -c "$(mark_line 1 -2 /nonexistent/auxtrig-demo)" "$tmp/5.txt")" 12 "entry.arg1 ~ /nonexistent/* marks ($how)"
	assert_eq "$(grep -c 'auxtrig:mark: trigger=2 ' "$tmp/5.txt")" 0 "entry.arg1 ~ /dev/* marks of failing calls ($how)"
	assert_eq "$(grep -c 'auxtrig:mark: trigger=3 ' "$tmp/5.txt")" 12 "(int)entry.arg0 == -100 marks of /dev/null ($how)"
done
"$AUXTRIG" record -q -o "$tmp/6.data" --on 'syscall:openat:enter if entry.arg1 == 0:mark' -- true 2>"$tmp/6.err"
assert_eq "$?" 2 "exit status of entry.arg1 at an entry"
grep -qF "'entry.arg1' is known only at a syscall's exit point" "$tmp/6.err" || fail "refusal: $(cat "$tmp/6.err")"

# values where they are not known: one line, exit 2
"$AUXTRIG" record -q -o "$tmp/4.data" --on 'syscall:openat:enter:mark(ret)' -- true 2>"$tmp/4.err"
assert_eq "$?" 2 "exit status of mark(ret) at an entry"
assert_eq "$(wc -l <"$tmp/4.err")" 1 "lines of the refusal"
grep -qF "mark(ret): 'ret' is known only at a syscall's exit point" "$tmp/4.err" || fail "refusal: $(cat "$tmp/4.err")"
echo ok
