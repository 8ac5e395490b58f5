#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Entry values at a kernel function's return (issue #16): an --on condition at
# a kretprobe: point reads the arguments its call entered with (entry.argN) and
# the time since that entry ($duration), as at a uretprobe: point. The function
# is /dev/null's write (write_null(file, buf, count, ppos), reached through
# the file's operations, so never inlined: every call is seen): dd
# if=/dev/zero of=/dev/null bs=4096 count=5 writes 5 times 4096 zero bytes
# there, so each of the 5 returns has entry.arg2 == 4096, ret == 4096 and a
# zero first byte at entry.arg1 (str(entry.argN) at a return point is read by
# the shared program's interpreter). The other conditions run compiled (the
# kretprobe's own program) and interpreted (made too long to compile): the
# same known counts. Where the kernel has no kprobes (this project's
# development host) the point is refused: one line, exit 2.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
fn=write_null

if [ "$("$AUXTRIG" probe --json | jq -r .bpf.kprobe.status)" != ok ]; then
	"$AUXTRIG" record -q -o "$tmp/r.data" --on "kretprobe:$fn if entry.arg2 == 4096 && \$duration >= 0:mark" \
		-- true 2>"$tmp/r.err"
	assert_eq "$?" 2 "exit status of a kretprobe: point without kprobes"
	assert_eq "$(wc -l <"$tmp/r.err")" 1 "lines of the refusal"
	grep -q 'this kernel has no kprobes' "$tmp/r.err" || fail "refusal: $(cat "$tmp/r.err")"
	echo ok
	exit 0
fi
grep -q " $fn\$" /proc/kallsyms || fail "no $fn in /proc/kallsyms (/dev/null's write in drivers/char/mem.c)"

# Always false, and over EXPR_BPF_GLOB_BUDGET: the condition it is in stays interpreted.
g='*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'
long="(comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || comm ~ \"$g\" || pid != 0)"
conds=(
	"kretprobe:$fn if entry.arg2 == 4096 && ret == 4096 && \$duration >= 0"
	"kretprobe:$fn if entry.arg2 != 4096 || ret != 4096 || entry.arg1 == 0"
	"kretprobe:$fn if \$duration > 10s"
)
expect="evaluated 5, matched 5, fired 5, suppressed 0, dropped 0
evaluated 5, matched 0, fired 0, suppressed 0, dropped 0
evaluated 5, matched 0, fired 0, suppressed 0, dropped 0"
stats() { sed -n 's/^auxtrig: --on \(.*\):mark[^:]*: \(evaluated .*\)/\2/p' "$tmp/$1.err"; }
for how in compiled interpreted; do
	args=()
	for c in "${conds[@]}"; do
		[ $how = interpreted ] && c="$c && $long"
		# a mark at the return carries its call's entry arguments
		args+=(--on "$c:mark")
	done
	"$AUXTRIG" record -v -o "$tmp/$how.data" "${args[@]}" \
		-- dd if=/dev/zero of=/dev/null bs=4096 count=5 >"$tmp/$how.out" 2>"$tmp/$how.err" ||
		fail "record $how: $(cat "$tmp/$how.err")"
	assert_perf_reads_cleanly "$tmp/$how.data"
	assert_eq "$(stats $how)" "$expect" "$how: the known counts"
	perf script -i "$tmp/$how.data" 2>/dev/null >"$tmp/$how.txt"
	assert_eq "$(grep -c 'auxtrig:mark: trigger=1 nr=-1 ret=4096 arg0=0x[0-9a-f]* arg1=0x[0-9a-f]* arg2=0x1000$' "$tmp/$how.txt")" 5 \
		"$how: marks with the entry's count and the return value ($(grep -m2 'auxtrig:mark:' "$tmp/$how.txt"))"
done
grep -q '^auxtrig: kretprobe: conditions compiled, [0-9]* instructions, in a program of its own' "$tmp/compiled.err" ||
	fail "compiled: the kretprobe: $(cat "$tmp/compiled.err")"
grep -q 'interpreted' "$tmp/compiled.err" && fail "compiled: something interpreted: $(grep interpreted "$tmp/compiled.err")"
grep -q "^auxtrig: kretprobe:$fn: conditions interpreted by the shared gate program: the globs' unrolled" \
	"$tmp/interpreted.err" || fail "interpreted: the kretprobe: $(cat "$tmp/interpreted.err")"

# str(entry.argN) at a return point (the shared program's interpreter reads it): the zeros dd wrote
"$AUXTRIG" record -v -o "$tmp/str.data" --on "kretprobe:$fn if str(entry.arg1) == \"\" && entry.arg2 == 4096:mark" \
	-- dd if=/dev/zero of=/dev/null bs=4096 count=5 >"$tmp/str.out" 2>"$tmp/str.err" || fail "record str: $(cat "$tmp/str.err")"
assert_eq "$(stats str)" "evaluated 5, matched 5, fired 5, suppressed 0, dropped 0" "str(entry.arg1) at the return"
echo ok
