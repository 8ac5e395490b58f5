#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad input: one clear line, exit 2 (usage) or 1 (runtime), and no file left behind.
. "$(dirname "$0")/lib.sh"
need_root

expect() { # expect CODE PATTERN -- auxtrig args...
	local code=$1 pattern=$2; shift 3
	rm -f "$tmp/out.data"
	"$AUXTRIG" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	local rc=$?
	[ $rc = "$code" ] || fail "'auxtrig $*' exited $rc, expected $code; stderr: $(cat "$tmp/stderr")"
	grep -q -- "$pattern" "$tmp/stderr" || fail "'auxtrig $*': stderr lacks '$pattern': $(cat "$tmp/stderr")"
	[ "$(grep -c . "$tmp/stderr")" -le 2 ] || fail "'auxtrig $*': more than a line or two of error: $(cat "$tmp/stderr")"
	[ ! -e "$tmp/out.data" ] || fail "'auxtrig $*' left $tmp/out.data behind"
}

o=(-o "$tmp/out.data")
expect 2 "unknown syscall" -- record -w syscall:no_such_call "${o[@]}" -- "$DEMO"
expect 2 "expected syscall:NAME" -- record -w openat "${o[@]}" -- "$DEMO"
expect 2 "expected tp:SYSTEM:EVENT..tp:SYSTEM:EVENT" -- record -w tp:sched:sched_switch "${o[@]}" -- "$DEMO"
expect 2 "unknown tracepoint" -- record -w tp:sched:sched_switch..tp:sched:nope "${o[@]}" -- "$DEMO"
expect 2 "unknown tracepoint" -- record -w syscall:openat -e sched:no_such_event "${o[@]}" -- "$DEMO"
expect 2 "expected a tracepoint" -- record -e sched_switch "${o[@]}" -- "$DEMO"
expect 2 "column" -- record -w syscall:openat --where 'comm ==' "${o[@]}" -- "$DEMO"
# A long expression is not echoed whole: a bounded excerpt at the column.
long=$(for i in $(seq 3000); do printf 'pid == %d && ' "$i"; done)
expect 2 "pid == 3000 && pid ==' (characters .* of .*): column .*: expected a value after '=='" -- \
	record -w syscall:openat --where "${long}pid ==" "${o[@]}" -- "$DEMO"
[ "$(wc -c <"$tmp/stderr")" -lt 300 ] || fail "a long --where echoed whole: $(wc -c <"$tmp/stderr") bytes"
expect 2 "condition '.*(characters .*): column" -- \
	record -e syscalls:sys_enter_close --on "syscall:openat:exit if ${long}pid ==:mark" "${o[@]}" -- "$DEMO"
[ "$(wc -c <"$tmp/stderr")" -lt 400 ] || fail "a long --on condition echoed whole: $(wc -c <"$tmp/stderr") bytes"
expect 2 "nothing to record" -- record -w syscall:openat "${o[@]}"
expect 2 "command not found" -- record -w syscall:openat "${o[@]}" -- /no/such/program
expect 2 "unrecognized option\|invalid option" -- record --no-such-option "${o[@]}" -- "$DEMO"
expect 2 "power of 2" -- record -w syscall:openat -m 3 "${o[@]}" -- "$DEMO"
expect 1 "does not exist" -- record -w syscall:openat -o "$tmp/no/such/dir/x.data" -- "$DEMO"
expect 1 "no such process" -- record -w syscall:openat -p 999999999 "${o[@]}"
expect 2 "unknown command" -- frobnicate
# A file that is not ELF, as a uprobe/usdt binary or a trigger program: named, not "Unknown error 4001".
printf '#!/bin/sh\necho hi\n' >"$tmp/script.sh"
cp "$tmp/script.sh" "$tmp/fake.bpf.o"
expect 2 "script.sh is not an ELF file: a uprobe point needs an executable" -- \
	record -w "uprobe:$tmp/script.sh:main" "${o[@]}" -- "$DEMO"
expect 2 "script.sh is not an ELF file: a usdt point needs an executable" -- \
	record -e syscalls:sys_enter_close --on "usdt:$tmp/script.sh:demo:start:mark" "${o[@]}" -- "$DEMO"
expect 2 "fake.bpf.o: not a BPF object: BPF object format invalid" -- \
	record -e syscalls:sys_enter_close --trigger-prog "$tmp/fake.bpf.o" "${o[@]}" -- "$DEMO"
grep -q "Unknown error" "$tmp/stderr" && fail "libbpf's errno shown raw: $(cat "$tmp/stderr")"

# A read-only file system: said once (the writer and the recorder both said it).
mkdir "$tmp/ro"
if mount -t tmpfs -o ro,size=64k auxtrig-test-ro "$tmp/ro"; then
	"$AUXTRIG" record -w syscall:openat -o "$tmp/ro/x.data" -- "$DEMO" -r 1 >/dev/null 2>"$tmp/stderr"
	rc=$?
	umount "$tmp/ro"
	assert_eq $rc 1 "exit code on a read-only file system"
	assert_eq "$(cat "$tmp/stderr")" "auxtrig: cannot create $tmp/ro/x.data: Read-only file system" "the error"
else
	fail "cannot mount a read-only tmpfs for the test"
fi

# An existing file is kept unless -f; a symlink is never followed, even with -f.
echo keep >"$tmp/exists.data"
"$AUXTRIG" record -q -w syscall:openat -o "$tmp/exists.data" -- "$DEMO" -r 1 >/dev/null 2>"$tmp/stderr" &&
	fail "overwrote an existing file without -f"
grep -q "use -f" "$tmp/stderr" || fail "no hint to use -f: $(cat "$tmp/stderr")"
assert_eq "$(cat "$tmp/exists.data")" keep "existing file"
ln -s "$tmp/exists.data" "$tmp/link.data"
"$AUXTRIG" record -q -f -w syscall:openat -o "$tmp/link.data" -- "$DEMO" -r 1 >/dev/null 2>&1 &&
	fail "wrote through a symlink"
assert_eq "$(cat "$tmp/exists.data")" keep "symlink target"
"$AUXTRIG" record -q -f -w syscall:openat -o "$tmp/exists.data" -- "$DEMO" -r 1 >/dev/null || fail "-f did not overwrite"

# Not root: refused with a hint, nothing created.
if command -v setpriv >/dev/null; then
	chmod 777 "$tmp"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$AUXTRIG" record -w syscall:openat -o "$tmp/out.data" -- "$DEMO" >/dev/null 2>"$tmp/stderr"
	rc=$?
	assert_eq $rc 1 "exit code when not root"
	grep -q "needs root" "$tmp/stderr" || fail "no privilege hint: $(cat "$tmp/stderr")"
	[ ! -e "$tmp/out.data" ] || fail "unprivileged run left a file"
fi
echo ok
