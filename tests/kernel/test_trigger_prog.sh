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
perf script -i "$tmp/r.data" 2>/dev/null | grep -q 'auxtrig:snapshot: nr=1 reason=prog:3 .* value=-9 lost=[0-9]*$' ||
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

# 2b. auxtrig_stop() from a program: the run ends at the program's stop, the file at its
#     auxtrig:stop record (trigger 1000 + reason), nothing later from either thread.
cat >"$tmp/stop.bpf.c" <<'PROG'
// SPDX-License-Identifier: BSD-2-Clause
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "auxtrig/trigger.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
__u64 failures;

SEC("tp/syscalls/sys_exit_openat")
int stop_at_third_failure(struct trace_event_raw_sys_exit *ctx)
{
	if (!auxtrig_armed() || !auxtrig_is_target() || ctx->ret >= 0)
		return AUXTRIG_PASS;
	if (__sync_add_and_fetch(&failures, 1) == 3)
		auxtrig_stop(ctx, 5);
	return AUXTRIG_PASS;
}
PROG
"$AUXTRIG" record -e syscalls:sys_enter_close,syscalls:sys_exit_openat --trigger-prog "$tmp/stop.bpf.c" \
	-o "$tmp/st.data" -- "$DEMO" -r 100000 -t 1 >/dev/null 2>"$tmp/st.err" || fail "record failed: $(cat "$tmp/st.err")"
assert_perf_reads_cleanly "$tmp/st.data"
perf script -F event,trace -i "$tmp/st.data" 2>/dev/null >"$tmp/st.txt"
assert_eq "$(grep -c 'auxtrig:stop: trigger=1005 ' "$tmp/st.txt")" 1 "the program's auxtrig:stop record"
assert_eq "$(tail -1 "$tmp/st.txt" | grep -c 'auxtrig:stop:')" 1 "the stop is the file's last record (last: $(tail -1 "$tmp/st.txt"))"
grep -q 'trigger program: stop (reason 5' "$tmp/st.err" || fail "no word of the program's stop: $(cat "$tmp/st.err")"

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
