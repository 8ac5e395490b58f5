#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --trigger-prog: user-written BPF triggers against auxtrig/trigger.bpf.h, the
# examples in examples/triggers, as objects built by make and as sources
# compiled at run time.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
TRIG=$build/examples/triggers


# 1. State of its own: the third failing read in a row (the read before close #700) freezes the recorder.
taskset -c "$(one_cpu)" "$AUXTRIG" record -S64K -e syscalls:sys_enter_close --trigger-prog "$TRIG/read_fails.bpf.o" \
	-o "$tmp/r.data" -- "$build/examples/read_pattern" 2000 FSFFSFFF >/dev/null 2>"$tmp/r.err" ||
	fail "record failed: $(cat "$tmp/r.err")"
assert_perf_reads_cleanly "$tmp/r.data"
seqs "$tmp/r.data" >"$tmp/r.seq"
assert_eq "$(tail -1 "$tmp/r.seq")" 699 "the last record before the third failing read in a row"
assert_eq "$(awk '$1 >= 700' "$tmp/r.seq" | wc -l)" 0 "records after it"
perf script -i "$tmp/r.data" 2>/dev/null | grep -q 'auxtrig:snapshot: nr=1 reason=prog:3 .* value=-9$' ||
	fail "no snapshot marker from the program"
# Two failures in a row only: no snapshot at all.
"$AUXTRIG" record -S64K -e syscalls:sys_enter_close --trigger-prog "$TRIG/read_fails.bpf.o" \
	-o "$tmp/n.data" -- "$build/examples/read_pattern" 2000 FFSFFS >/dev/null 2>"$tmp/n.err" || fail "record failed"
grep -q "0 snapshots" "$tmp/n.err" || fail "a snapshot without three failures in a row: $(cat "$tmp/n.err")"

# 2. A uprobe window and a syscall together, from source compiled at run time:
#    only the openat failures inside handle() are marked, not those outside.
"$AUXTRIG" record -w "uprobe:$build/examples/uprobe_demo:handle" --trigger-prog "$top/examples/triggers/openat_in_call.bpf.c" \
	-o "$tmp/o.data" -- "$build/examples/uprobe_demo" 4 2 >/dev/null 2>"$tmp/o.err" ||
	fail "record failed: $(cat "$tmp/o.err")"
assert_perf_reads_cleanly "$tmp/o.data"
assert_eq "$(pscript "$tmp/o.data" | grep -c 'auxtrig:mark: trigger=1007 .* ret=-2 ')" 4 "marks inside handle()"

# 3. Refused before anything runs: not an object, source that does not compile, a missing file.
echo "not elf" >"$tmp/bad.bpf.o"
"$AUXTRIG" record -e syscalls:sys_enter_close --trigger-prog "$tmp/bad.bpf.o" -o "$tmp/x.data" -- true 2>"$tmp/x.err"
assert_eq $? 2 "exit code for a file that is not a BPF object"
grep -q "not a BPF object" "$tmp/x.err" || fail "$(cat "$tmp/x.err")"
echo "this is not C" >"$tmp/bad.bpf.c"
"$AUXTRIG" record -e syscalls:sys_enter_close --trigger-prog "$tmp/bad.bpf.c" -o "$tmp/x.data" -- true 2>"$tmp/x.err"
assert_eq $? 2 "exit code for source that does not compile"
grep -q "clang could not compile it" "$tmp/x.err" || fail "$(cat "$tmp/x.err")"
"$AUXTRIG" record -e syscalls:sys_enter_close --trigger-prog /no/such.bpf.o -o "$tmp/x.data" -- true 2>/dev/null
assert_eq $? 2 "exit code for a missing file"
[ ! -e "$tmp/x.data" ] || fail "a refused run left a file"
echo ok
