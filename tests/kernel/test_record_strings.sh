#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Syscall entries with a user string argument carry the string: perf script
# (and auxtrig script, line for line the same) show the path each call got,
# a string longer than the bound is cut and ends in "...", and perf reads the
# files without a warning. Calls with several strings (renameat2, linkat,
# symlinkat) carry each of them. So do the raw_syscalls:sys_enter records of
# syscall:* windows, within the same bounds, each string in the field of its
# argument (argN_str), read back by the syscall view.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
# norm: perf script's lines as a kernel before 6.19 prints them on x86. Since 6.19 the kernel's own
# print fmt shows a string argument's pointer before its string ('filename: 0x00458c38 "/dev/null"',
# its __NAME_val field, which auxtrig points at the string it recorded), and arm64 passes AT_FDCWD
# sign-extended to 64 bits.
norm() {
	sed -E 's/(dfd|olddfd|newdfd): 0xffffffffffffff9c/\1: 0xffffff9c/g; s/(filename|pathname|oldname|newname): 0x[0-9a-f]+ "/\1: "/g' "$@"
}

# openat_demo: per round openat("/dev/null") and openat("/nonexistent/auxtrig-demo")
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/1.data" -- "$DEMO" -r 2 >/dev/null || fail "record 1 failed"
assert_perf_reads_cleanly "$tmp/1.data"
perf script -i "$tmp/1.data" >"$tmp/1.txt" 2>/dev/null
assert_eq "$(norm "$tmp/1.txt" | grep -c 'sys_enter_openat: dfd: 0xffffff9c, filename: "/dev/null", ')" 2 "openat of /dev/null"
assert_eq "$(norm "$tmp/1.txt" | grep -c 'sys_enter_openat: dfd: 0xffffff9c, filename: "/nonexistent/auxtrig-demo", ')" 2 \
	"openat of the missing file"
"$AUXTRIG" script -i "$tmp/1.data" | diff - "$tmp/1.txt" >/dev/null || fail "auxtrig script differs from perf script"
# the timeline has it in the window's arguments
"$AUXTRIG" script --format=chrome -i "$tmp/1.data" |
	jq -e '[.traceEvents[] | select(.ph == "X" and (.args.enter | test("filename: (0x[0-9a-f]+ )?\"/dev/null\"")))] | length == 2' \
	>/dev/null || fail "the timeline's openat windows lack the path"

# a path of 300 characters: the first 252 and "..."
long=/nonexistent/$(printf 'a%.0s' $(seq 287))
[ ${#long} = 300 ] || fail "test path is ${#long} characters"
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/2.data" -- cat "$long" >/dev/null 2>&1
perf script -i "$tmp/2.data" 2>/dev/null >"$tmp/2.txt"
norm "$tmp/2.txt" | grep -qF "filename: \"${long:0:252}...\"," || fail "long path not cut at 252 + ...: $(grep -F /nonexistent "$tmp/2.txt")"

# another syscall's string: unlinkat's pathname
touch "$tmp/victim"
"$AUXTRIG" record -q -e syscalls:sys_enter_unlinkat -o "$tmp/3.data" -- rm "$tmp/victim" >/dev/null || fail "record 3 failed"
perf script -i "$tmp/3.data" 2>/dev/null | norm | grep -qF "pathname: \"$tmp/victim\"" ||
	fail "unlinkat's pathname: $(perf script -i "$tmp/3.data" 2>&1 | head -3)"
# calls with two strings (path_demo -d: renameat2, linkat, symlinkat in an empty directory): each
# string in its own field, in the record's order
mkdir "$tmp/p"
"$AUXTRIG" record -q -e syscalls:sys_enter_renameat2,syscalls:sys_enter_linkat,syscalls:sys_enter_symlinkat \
	-o "$tmp/4.data" -- "$build/examples/path_demo" -r 1 -d "$tmp/p" >"$tmp/4.out" 2>&1 ||
	fail "record 4 failed: $(cat "$tmp/4.out")"
assert_perf_reads_cleanly "$tmp/4.data"
perf script -i "$tmp/4.data" 2>/dev/null >"$tmp/4.txt"
p=$tmp/p
for want in "sys_enter_renameat2: olddfd: 0xffffff9c, oldname: \"$p/a\", newdfd: 0xffffff9c, newname: \"$p/b\", flags: 0x00000001" \
	"sys_enter_linkat: olddfd: 0xffffff9c, oldname: \"$p/b\", newdfd: 0xffffff9c, newname: \"$p/c\", flags: 0x00000000" \
	"sys_enter_symlinkat: oldname: \"b\", newdfd: 0xffffff9c, newname: \"$p/d\""; do
	assert_eq "$(norm "$tmp/4.txt" | grep -cF "$want")" 1 "records with $want"
done
"$AUXTRIG" script -i "$tmp/4.data" | diff - "$tmp/4.txt" >/dev/null || fail "auxtrig script differs from perf script (4)"

# syscall:* windows: the raw_syscalls:sys_enter records carry the same strings, by argument
"$AUXTRIG" record -q -w 'syscall:*' -o "$tmp/5.data" -- "$DEMO" -r 2 >/dev/null || fail "record 5 failed"
assert_perf_reads_cleanly "$tmp/5.data"
perf script -i "$tmp/5.data" 2>/dev/null >"$tmp/5.txt"
"$AUXTRIG" script -i "$tmp/5.data" | diff - "$tmp/5.txt" >/dev/null || fail "auxtrig script differs from perf script (5)"
"$AUXTRIG" script --format=syscalls -i "$tmp/5.data" >"$tmp/5.sys" || fail "the syscall view failed on 5"
assert_eq "$(grep -c ' openat(dfd: AT_FDCWD, filename: "/dev/null", flags: O_RDONLY) = [0-9]' "$tmp/5.sys")" 2 \
	"syscall:* openat calls of /dev/null with their path"
assert_eq "$(grep -c ' openat(dfd: AT_FDCWD, filename: "/nonexistent/auxtrig-demo", flags: O_RDONLY) = -1 ENOENT (No such file or directory)$' "$tmp/5.sys")" 2 \
	"syscall:* openat calls of the missing file with their path and ENOENT"
# the long path, cut as a single syscall's is; two strings of one call, each in its argument's field
"$AUXTRIG" record -q -w 'syscall:*' -o "$tmp/6.data" -- cat "$long" >/dev/null 2>&1
"$AUXTRIG" script --format=syscalls -i "$tmp/6.data" | grep -qF "filename: \"${long:0:252}...\", flags: O_RDONLY) = -1 ENOENT" ||
	fail "syscall:* long path not cut at 252 + ...: $("$AUXTRIG" script --format=syscalls -i "$tmp/6.data" | grep -F /nonexistent)"
rm -rf "$tmp/p" && mkdir "$tmp/p"
"$AUXTRIG" record -q -w 'syscall:*' -o "$tmp/7.data" -- "$build/examples/path_demo" -r 1 -d "$tmp/p" >"$tmp/7.out" 2>&1 ||
	fail "record 7 failed: $(cat "$tmp/7.out")"
assert_perf_reads_cleanly "$tmp/7.data"
"$AUXTRIG" script --format=syscalls -i "$tmp/7.data" >"$tmp/7.sys"
for want in "renameat2(olddfd: AT_FDCWD, oldname: \"$p/a\", newdfd: AT_FDCWD, newname: \"$p/b\", flags: RENAME_NOREPLACE) = 0" \
	"linkat(olddfd: AT_FDCWD, oldname: \"$p/b\", newdfd: AT_FDCWD, newname: \"$p/c\", flags: 0) = 0" \
	"symlinkat(oldname: \"b\", newdfd: AT_FDCWD, newname: \"$p/d\") = 0"; do
	assert_eq "$(grep -cF "$want" "$tmp/7.sys")" 1 "syscall:* records with $want"
done
echo ok
