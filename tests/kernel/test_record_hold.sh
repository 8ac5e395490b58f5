#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --min-duration / --max-duration hold a window's records until its verdict.
# A window that never closes used to be held whole: 26 MB -> 1.1 GB in 30 s
# (issue #13, 3). What is held is bounded (--hold-size, default 64 MiB); past
# it the window held longest is written (--min-duration alone) or dropped
# (--max-duration), and the summary counts it. Memory is measured from the
# outside: the recorder's peak RSS.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
STORM=$build/examples/syscall_storm
WIN="uprobe:$STORM:storm"	# each thread's whole storm() is one window: 2 windows of N records

# Peak RSS (KiB) of: auxtrig record ARGS -- syscall_storm 2 N, into $tmp/$1.data; stderr in $tmp/$1.err.
rss() {
	local name=$1 n=$2
	shift 2
	echo | /usr/bin/time -f %M -o "$tmp/$name.rss" "$AUXTRIG" record -w "$WIN" -e syscalls:sys_enter_getppid \
		-o "$tmp/$name.data" "$@" -- "$STORM" 2 "$n" >/dev/null 2>"$tmp/$name.err" ||
		fail "record $* failed: $(cat "$tmp/$name.err")"
	tail -n 1 "$tmp/$name.rss"
}
# perf reads it in order; the storm overflows the rings, so the losses the file records ("lost N
# chunks" from the kernel, "lost X%" from auxtrig's LOST_SAMPLES) are the only warnings allowed.
reads_in_order() {
	perf report -D -i "$tmp/$1.data" >/dev/null 2>"$tmp/$1.dump.err" || fail "perf report -D failed on $1"
	if grep -viE '^Warning:$|lost [0-9]+ chunks|Check IO/CPU overload|Processed [0-9]+ samples and lost [0-9.]+%!|^$' "$tmp/$1.dump.err"; then
		! grep -q 'out of order' "$tmp/$1.dump.err" || perf_order_detail "$tmp/$1.data"
		fail "perf report -D warns about $1 beyond the ring's losses"
	fi
}
written() { sed -n 's/.* windows, \([0-9]*\) events written.*/\1/p' "$tmp/$1.err"; }
in_file() { perf script -F event -i "$tmp/$1.data" 2>/dev/null | grep -c "${2:-}"; }

[ -x /usr/bin/time ] || skip "needs /usr/bin/time (package time) to measure the recorder's peak RSS"

# Without a duration filter nothing is held: the recorder's own footprint.
base=$(rss base 1000000)

# 1. The default bound: 2 million records (~140 MB in the file), never more than 64 MiB held.
# Unbounded, both windows were held whole until the end (~150 MB more than base).
def=$(rss def 1000000 --min-duration 1ms)
[ "$def" -lt $((base + 64 * 1024 + 24 * 1024)) ] ||
	fail "peak RSS $def KiB with --min-duration and the default bound, $base KiB without"
# Both windows outgrow the bound unless one ends first (a loaded machine's ring losses): 1 or 2.
grep -qE 'held records reached --hold-size 64 MiB: (1 window held longest was written before its|2 windows held longest were written before their) verdict' \
	"$tmp/def.err" || fail "no word of the bound: $(cat "$tmp/def.err")"
grep -q '0 of them then proved shorter than 1ms' "$tmp/def.err" || fail "verdicts: $(cat "$tmp/def.err")"
assert_eq "$(in_file def)" "$(written def)" "records in the file (the written windows)"
[ "$(written def)" -gt 1000000 ] || fail "only $(written def) records written"
reads_in_order def
rm -f "$tmp/def.data"

# 2. --hold-size 4M: the peak follows, and what is held says so.
small=$(rss small 300000 --min-duration 1ms --hold-size 4M)
[ "$small" -lt $((base + 4 * 1024 + 12 * 1024)) ] || fail "peak RSS $small KiB with --hold-size 4M, $base KiB without"
grep -qE 'held for their verdict: at most [0-3]\.[0-9] MiB|held for their verdict: at most 4\.0 MiB' "$tmp/small.err" ||
	fail "held more than 4 MiB: $(cat "$tmp/small.err")"
assert_eq "$(in_file small)" "$(written small)" "records written with --hold-size 4M"
reads_in_order small

# 3. --max-duration: the window held longest is dropped, and its verdict (too long) agrees.
rss max 300000 --max-duration 1ms --hold-size 4M >/dev/null
grep -qE 'held records reached --hold-size 4 MiB: (1 window held longest was dropped before its|2 windows held longest were dropped before their) verdict' \
	"$tmp/max.err" || fail "no word of the dropped windows: $(cat "$tmp/max.err")"
grep -q '0 of them then proved within the limits: 0 records lost' "$tmp/max.err" || fail "$(cat "$tmp/max.err")"
assert_eq "$(in_file max sys_enter_getppid)" 0 "records of windows longer than 1ms"
# Dropping too-long windows is no loss: what the summary counts lost is only what the rings lost
# (a loaded machine's storm overflows them), never the dropped windows' records.
lost=$(sed -n 's/.*; lost \([0-9]*\) records\? \]$/\1/p' "$tmp/max.err")
ring=$(sed -n 's/.*(ring full: \([0-9]*\), sideband: \([0-9]*\), larger than [0-9]* bytes: \([0-9]*\)).*/\1 + \2 + \3/p' \
	"$tmp/max.err")
ring=$((${ring:-0}))
[ -n "$lost" ] || fail "no summary: $(cat "$tmp/max.err")"
assert_eq "$lost" "$ring" "records counted lost (the rings' losses only) with --max-duration"

# 4. Refused, exit 2: a size out of range, or no duration filter to hold for.
"$AUXTRIG" record -w syscall:openat --min-duration 1ms --hold-size 10 -o "$tmp/x.data" -- true 2>"$tmp/x.err"
assert_eq $? 2 "exit code of --hold-size 10"
grep -q -- '--hold-size 10: expected a size from 64K to 1T' "$tmp/x.err" || fail "$(cat "$tmp/x.err")"
"$AUXTRIG" record -w syscall:openat --hold-size 1M -o "$tmp/x.data" -- true 2>"$tmp/x.err"
assert_eq $? 2 "exit code of --hold-size without a duration"
grep -q 'give one of them' "$tmp/x.err" || fail "$(cat "$tmp/x.err")"
[ ! -e "$tmp/x.data" ] || fail "a refused run left a file"
echo ok
