#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# make bench: auxtrig script against perf script, side by side, in one run.
#
# Inputs, made by build/tests/bench/gen_decode from the real captures in
# ../shared/data:
#   CoreSight  the Juno ETB (six ETMv4, 64 KiB) as BENCH_CS_REPEAT buffers;
#   CoreSight timed  its six streams with timestamp packets, formatted again, as
#              BENCH_CS_REPEAT buffers, the cs_etm timestamp option on (perf's timed order);
#   Intel PT   the Skylake capture with its buffers repeated BENCH_PT_REPEAT times.
# Modes, each checked before it is timed:
#   branches   CoreSight: perf script --itrace=b -F cpu,ip,addr,sym,symoff,dso against
#              auxtrig script -F cpu,ip,addr,sym,symoff,dso: the same bytes;
#              Intel PT: --itrace=b -F ip,addr,cpu against auxtrig script: the same
#              samples (compared sorted: the repeated buffers repeat timestamps, and ties
#              are ordered differently)
#   timed      CoreSight with timestamps: perf script --itrace=b -F cpu,ip,addr,sym,symoff,dso
#              against auxtrig script -F the same: the same bytes (one worker: the order
#              interleaves all buffers)
#   insns      CoreSight: every instruction: perf script --itrace=i1i -F cpu,ip against
#              auxtrig script --windows (the same instructions, headed by windows)
# Reported per tool: cpu = user+system seconds of the tool and its decode workers
# (the fastest of BENCH_RUNS runs, default 5), rss = peak resident set of its largest
# process (MiB), and for auxtrig -j N (N = CPUs) the wall time against -j 1.
set -u
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
data=$top/../shared/data
runs=${BENCH_RUNS:-5}
cs_repeat=${BENCH_CS_REPEAT:-100}
pt_repeat=${BENCH_PT_REPEAT:-200}
jobs=$(nproc)
auxtrig=$build/auxtrig
gen=$build/tests/bench/gen_decode
tmp=$(mktemp -d /tmp/auxtrig-bench-decode.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || { echo "decode bench: needs perf (make deps)"; exit 1; }
[ -f "$data/README.md" ] || { echo "decode bench: needs the shared test data at $data"; exit 1; }
export AUXTRIG_TOP=$top PAGER=cat PERF_PAGER=cat PERF_CONFIG=/dev/null

# measure OUT CMD...: the fastest run's "cpu rss_mib wall" (stdout of CMD to OUT)
measure() {
	local out=$1 best=
	shift
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%U %S %M %e' -o "$tmp/time" "$@" >"$out" 2>"$tmp/err" || {
			echo "decode bench: $* failed: $(tail -3 "$tmp/err")" >&2; return 1; }
		local t
		t=$(awk '{ printf "%.3f %.1f %.3f", $1 + $2, $3 / 1024, $4 }' "$tmp/time")
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { split(a, x); split(b, y); exit !(x[1] < y[1]) }'; then
			best=$t
		fi
	done
	echo "$best"
}

row() {	# format mode tool cpu rss wall base_cpu
	awk -v f="$1" -v m="$2" -v t="$3" -v c="$4" -v r="$5" -v w="$6" -v b="$7" \
		'BEGIN { printf "| %-9s | %-8s | %-22s | %7.3f | %8.1f | %7.3f | %7s |\n", f, m, t, c, r, w,
			 (t ~ /^perf/) ? "1.00x" : sprintf("%.2fx", b / c) }'
}

"$gen" cs "$tmp/cs.data" "$cs_repeat" || exit 1
"$gen" cstimed "$tmp/cst.data" "$cs_repeat" || exit 1
"$gen" pt "$data/perf/intel_pt-skylake/perf.data.intel_pt-4.14" "$tmp/pt.data" "$pt_repeat" || exit 1
echo "auxtrig decode bench: CoreSight $(du -h "$tmp/cs.data" | cut -f1) ($cs_repeat x 64 KiB, 6 trace IDs;" \
	"timed $(du -h "$tmp/cst.data" | cut -f1))," \
	"Intel PT $(du -h "$tmp/pt.data" | cut -f1) ($pt_repeat x 150 KiB); fastest of $runs runs"
echo "machine: $(nproc) CPUs, $(uname -r), $(perf version 2>/dev/null)"
echo
printf '| %-9s | %-8s | %-22s | %7s | %8s | %7s | %7s |\n' format mode tool "cpu(s)" "rss(MiB)" "wall(s)" speedup
echo "|-----------|----------|------------------------|---------|----------|---------|---------|"

F=cpu,ip,addr,sym,symoff,dso
# CoreSight branch samples
read -r pc pr pw < <(measure "$tmp/p.txt" perf script -i "$tmp/cs.data" --itrace=b -F $F) || exit 1
read -r ac ar aw < <(measure "$tmp/a.txt" "$auxtrig" script -i "$tmp/cs.data" -F $F) || exit 1
cmp -s "$tmp/p.txt" "$tmp/a.txt" || { echo "decode bench: CoreSight branches differ from perf's"; exit 1; }
read -r jc jr jw < <(measure "$tmp/j.txt" "$auxtrig" script -i "$tmp/cs.data" -F $F -j "$jobs") || exit 1
cmp -s "$tmp/a.txt" "$tmp/j.txt" || { echo "decode bench: -j $jobs differs from -j 1"; exit 1; }
row CoreSight branches "perf script" "$pc" "$pr" "$pw" "$pc"
row CoreSight branches "auxtrig script" "$ac" "$ar" "$aw" "$pc"
row CoreSight branches "auxtrig script -j $jobs" "$jc" "$jr" "$jw" "$pc"
n=$(wc -l <"$tmp/a.txt")

# CoreSight branch samples in timestamp order
read -r pc pr pw < <(measure "$tmp/p.txt" perf script -i "$tmp/cst.data" --itrace=b -F $F) || exit 1
read -r ac ar aw < <(measure "$tmp/a.txt" "$auxtrig" script -i "$tmp/cst.data" -F $F) || exit 1
cmp -s "$tmp/p.txt" "$tmp/a.txt" || { echo "decode bench: timed CoreSight branches differ from perf's"; exit 1; }
row CoreSight timed "perf script" "$pc" "$pr" "$pw" "$pc"
row CoreSight timed "auxtrig script" "$ac" "$ar" "$aw" "$pc"
nt=$(wc -l <"$tmp/a.txt")

# CoreSight instructions
read -r pc pr pw < <(measure "$tmp/p.txt" perf script -i "$tmp/cs.data" --itrace=i1i -F cpu,ip) || exit 1
read -r ac ar aw < <(measure "$tmp/a.txt" "$auxtrig" script -i "$tmp/cs.data" --windows) || exit 1
[ "$(grep -vc '^#' "$tmp/a.txt")" -eq "$(wc -l <"$tmp/p.txt")" ] ||
	{ echo "decode bench: --windows lists $(grep -vc '^#' "$tmp/a.txt") instructions, perf $(wc -l <"$tmp/p.txt")"; exit 1; }
read -r jc jr jw < <(measure "$tmp/j.txt" "$auxtrig" script -i "$tmp/cs.data" --windows -j "$jobs") || exit 1
cmp -s "$tmp/a.txt" "$tmp/j.txt" || { echo "decode bench: --windows -j $jobs differs from -j 1"; exit 1; }
row CoreSight insns "perf script" "$pc" "$pr" "$pw" "$pc"
row CoreSight insns "auxtrig script" "$ac" "$ar" "$aw" "$pc"
row CoreSight insns "auxtrig script -j $jobs" "$jc" "$jr" "$jw" "$pc"
ni=$(wc -l <"$tmp/p.txt")

# Intel PT branch samples
read -r pc pr pw < <(measure "$tmp/p.txt" perf script -i "$tmp/pt.data" --itrace=b -F ip,addr,cpu) || exit 1
read -r ac ar aw < <(measure "$tmp/a.txt" "$auxtrig" script -i "$tmp/pt.data") || exit 1
cmp -s <(sort "$tmp/p.txt") <(sort "$tmp/a.txt") || { echo "decode bench: Intel PT samples differ from perf's"; exit 1; }
row "Intel PT" branches "perf script" "$pc" "$pr" "$pw" "$pc"
row "Intel PT" branches "auxtrig script" "$ac" "$ar" "$aw" "$pc"
np=$(wc -l <"$tmp/a.txt")
echo
echo "($n CoreSight branch samples, $nt timed, $ni instructions, $np Intel PT samples per run; outputs checked against perf's)"
