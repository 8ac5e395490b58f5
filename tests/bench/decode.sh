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
#   Intel PT   the Skylake capture with its buffers repeated BENCH_PT_REPEAT times;
#   Arm SPE    BENCH_SPE_REPEAT buffers of 64 KiB of load records padded to 64 bytes, made by
#              gen_decode (there is no SPE capture in the shared data).
# Modes, each checked before it is timed:
#   branches   CoreSight: perf script --itrace=b -F cpu,ip,addr,sym,symoff,dso against
#              auxtrig script -F cpu,ip,addr,sym,symoff,dso: the same bytes;
#              Intel PT: --itrace=b -F ip,addr,cpu against auxtrig script -F the same: the same
#              samples (compared sorted: the repeated buffers repeat timestamps, and ties
#              are ordered differently)
#   timed      CoreSight with timestamps: perf script --itrace=b -F cpu,ip,addr,sym,symoff,dso
#              against auxtrig script -F the same: the same bytes (one worker: the order
#              interleaves all buffers)
#   insns      CoreSight: every instruction: perf script --itrace=i1i -F cpu,ip against
#              auxtrig script --windows (the same instructions, headed by windows)
#   packets    Arm SPE: perf report -D against auxtrig script --packets: the same packets
#              (offset, bytes, description; perf's dump joins PADs, so those are left out)
#   samples    Arm SPE: perf script -F tid,event,addr,ip,sym against auxtrig script: the
#              same samples (blanks between the fields aside)
# Reported per tool: cpu = user+system seconds of the tool and its decode workers,
# rss = peak resident set of its largest process (MiB), wall = elapsed seconds; each the
# lowest of BENCH_RUNS runs (default 5). The runs are interleaved: every round runs each
# configuration of a table row group once (perf, auxtrig -j 1, auxtrig -j N with N = CPUs),
# so the load other jobs put on a shared machine falls on all of them alike; the load
# average is sampled before every run and reported. -j applies to CoreSight's untimed
# decode only (the timed order interleaves all buffers in one worker; Intel PT is decoded
# in one process).
set -u
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
data=$top/../shared/data
runs=${BENCH_RUNS:-5}
cs_repeat=${BENCH_CS_REPEAT:-100}
pt_repeat=${BENCH_PT_REPEAT:-200}
spe_repeat=${BENCH_SPE_REPEAT:-160}
jobs=$(nproc)
auxtrig=$build/auxtrig
gen=$build/tests/bench/gen_decode
tmp=$(mktemp -d /tmp/auxtrig-bench-decode.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || { echo "decode bench: needs perf (make deps)"; exit 1; }
[ -f "$data/README.md" ] || { echo "decode bench: needs the shared test data at $data"; exit 1; }
export AUXTRIG_TOP=$top PAGER=cat PERF_PAGER=cat PERF_CONFIG=/dev/null

loads=()

# rounds TAG...: BENCH_RUNS rounds, each running the command in array cmd_TAG (stdout to $tmp/TAG.txt) for every TAG
# in turn; then res[TAG] = "cpu rss wall", each the lowest over the rounds
declare -A res
rounds() {
	local tag r u s m e c
	declare -A bc bm be
	for r in $(seq "$runs"); do
		for tag; do
			loads+=("$(cut -d' ' -f1 /proc/loadavg)")
			local -n cmd=cmd_$tag
			/usr/bin/time -f '%U %S %M %e' -o "$tmp/time" "${cmd[@]}" >"$tmp/$tag.txt" 2>"$tmp/err" || {
				echo "decode bench: $tag failed: $(tail -3 "$tmp/err")" >&2; return 1; }
			read -r u s m e <"$tmp/time"
			c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
			if [ -z "${bc[$tag]:-}" ] || awk -v a="$c" -v b="${bc[$tag]}" 'BEGIN { exit !(a < b) }'; then
				bc[$tag]=$c
			fi
			if [ -z "${bm[$tag]:-}" ] || [ "$m" -lt "${bm[$tag]}" ]; then
				bm[$tag]=$m
			fi
			if [ -z "${be[$tag]:-}" ] || awk -v a="$e" -v b="${be[$tag]}" 'BEGIN { exit !(a < b) }'; then
				be[$tag]=$e
			fi
		done
	done
	for tag; do
		res[$tag]=$(awk -v c="${bc[$tag]}" -v m="${bm[$tag]}" -v e="${be[$tag]}" \
			'BEGIN { printf "%.3f %.1f %.3f", c, m / 1024, e }')
	done
}

row() {	# format mode tool TAG base_TAG [wall_base_TAG]
	local base=${res[$5]%% *} jw=-
	read -r c r w <<<"${res[$4]}"
	if [ -n "${6:-}" ]; then
		jw=$(awk -v a="$(echo "${res[$6]}" | cut -d' ' -f3)" -v b="$w" 'BEGIN { printf "%.2fx", a / b }')
	fi
	awk -v f="$1" -v m="$2" -v t="$3" -v c="$c" -v r="$r" -v w="$w" -v b="$base" -v jw="$jw" \
		'BEGIN { printf "| %-9s | %-8s | %-24s | %7.3f | %8.1f | %7.3f | %8s | %9s |\n", f, m, t, c, r, w,
			 (t ~ /^perf/) ? "1.00x" : (c > 0 ? sprintf("%.2fx", b / c) : "-"), jw }'
}

"$gen" cs "$tmp/cs.data" "$cs_repeat" || exit 1
"$gen" cstimed "$tmp/cst.data" "$cs_repeat" || exit 1
"$gen" pt "$data/perf/intel_pt-skylake/perf.data.intel_pt-4.14" "$tmp/pt.data" "$pt_repeat" || exit 1
"$gen" spe "$tmp/spe.data" "$spe_repeat" || exit 1
echo "auxtrig decode bench: CoreSight $(du -h "$tmp/cs.data" | cut -f1) ($cs_repeat x 64 KiB, 6 trace IDs;" \
	"timed $(du -h "$tmp/cst.data" | cut -f1))," \
	"Intel PT $(du -h "$tmp/pt.data" | cut -f1) ($pt_repeat x 150 KiB)," \
	"Arm SPE $(du -h "$tmp/spe.data" | cut -f1) ($spe_repeat x 64 KiB); lowest of $runs interleaved runs"
echo "machine: $(nproc) CPUs, $(uname -r), $(perf version 2>/dev/null); load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
echo
printf '| %-9s | %-8s | %-24s | %7s | %8s | %7s | %8s | %9s |\n' format mode tool "cpu(s)" "rss(MiB)" "wall(s)" \
	"cpu gain" "wall gain"
echo "|-----------|----------|--------------------------|---------|----------|---------|----------|-----------|"

F=cpu,ip,addr,sym,symoff,dso
# CoreSight branch samples
cmd_p=(perf script -i "$tmp/cs.data" --itrace=b -F $F)
cmd_a=("$auxtrig" script -i "$tmp/cs.data" -F $F -j 1)
cmd_j=("$auxtrig" script -i "$tmp/cs.data" -F $F -j "$jobs")
rounds p a j || exit 1
cmp -s "$tmp/p.txt" "$tmp/a.txt" || { echo "decode bench: CoreSight branches differ from perf's"; exit 1; }
cmp -s "$tmp/a.txt" "$tmp/j.txt" || { echo "decode bench: -j $jobs differs from -j 1"; exit 1; }
row CoreSight branches "perf script" p p
row CoreSight branches "auxtrig script -j 1" a p
row CoreSight branches "auxtrig script -j $jobs" j p a
n=$(wc -l <"$tmp/a.txt")

# CoreSight branch samples in timestamp order (one worker whatever -j says)
cmd_p=(perf script -i "$tmp/cst.data" --itrace=b -F $F)
cmd_a=("$auxtrig" script -i "$tmp/cst.data" -F $F)
rounds p a || exit 1
cmp -s "$tmp/p.txt" "$tmp/a.txt" || { echo "decode bench: timed CoreSight branches differ from perf's"; exit 1; }
row CoreSight timed "perf script" p p
row CoreSight timed "auxtrig script" a p
nt=$(wc -l <"$tmp/a.txt")

# CoreSight instructions
cmd_p=(perf script -i "$tmp/cs.data" --itrace=i1i -F cpu,ip)
cmd_a=("$auxtrig" script -i "$tmp/cs.data" --windows -j 1)
cmd_j=("$auxtrig" script -i "$tmp/cs.data" --windows -j "$jobs")
rounds p a j || exit 1
[ "$(grep -vc '^#' "$tmp/a.txt")" -eq "$(wc -l <"$tmp/p.txt")" ] ||
	{ echo "decode bench: --windows lists $(grep -vc '^#' "$tmp/a.txt") instructions, perf $(wc -l <"$tmp/p.txt")"; exit 1; }
cmp -s "$tmp/a.txt" "$tmp/j.txt" || { echo "decode bench: --windows -j $jobs differs from -j 1"; exit 1; }
row CoreSight insns "perf script" p p
row CoreSight insns "auxtrig script -j 1" a p
row CoreSight insns "auxtrig script -j $jobs" j p a
ni=$(wc -l <"$tmp/p.txt")

# Intel PT branch samples (one process)
cmd_p=(perf script -i "$tmp/pt.data" --itrace=b -F ip,addr,cpu)
cmd_a=("$auxtrig" script -i "$tmp/pt.data" -F ip,addr,cpu)
rounds p a || exit 1
cmp -s <(sort "$tmp/p.txt") <(sort "$tmp/a.txt") || { echo "decode bench: Intel PT samples differ from perf's"; exit 1; }
row "Intel PT" branches "perf script" p p
row "Intel PT" branches "auxtrig script" a p
np=$(wc -l <"$tmp/a.txt")

# Arm SPE packets: perf's dump lines ".  OFFSET:  BYTES  DESC" and auxtrig's "OFFSET  BYTES  DESC", PADs left out
cmd_p=(perf report -D -i "$tmp/spe.data")
cmd_a=("$auxtrig" script --packets -i "$tmp/spe.data")
rounds p a || exit 1
cmp -s <(awk '/^\.  [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]:/ && !/ PAD$/ {
		sub(/:/, "", $2); $1 = ""; print substr($0, 2) }' "$tmp/p.txt") \
	<(awk '!/^#/ && !/ PAD$/ { $1 = $1; print }' "$tmp/a.txt") ||
	{ echo "decode bench: Arm SPE packets differ from perf's dump"; exit 1; }
row "Arm SPE" packets "perf report -D" p p
row "Arm SPE" packets "auxtrig script --packets" a p
ns=$(grep -c ' TS ' "$tmp/a.txt")

# Arm SPE samples
cmd_p=(perf script -i "$tmp/spe.data" -F tid,event,addr,ip,sym)
cmd_a=("$auxtrig" script -i "$tmp/spe.data")
rounds p a || exit 1
cmp -s <(awk '{ $1 = $1; print }' "$tmp/p.txt") <(awk '{ $1 = $1; print }' "$tmp/a.txt") ||
	{ echo "decode bench: Arm SPE samples differ from perf's"; exit 1; }
row "Arm SPE" samples "perf script" p p
row "Arm SPE" samples "auxtrig script" a p
nss=$(wc -l <"$tmp/a.txt")
echo
echo "($n CoreSight branch samples, $nt timed, $ni instructions, $np Intel PT samples, $ns SPE records," \
	"$nss SPE samples per run; outputs checked against perf's;"
echo " cpu gain = perf's cpu / the tool's, wall gain = -j 1's wall / -j $jobs's)"
printf '%s\n' "${loads[@]}" | sort -n | awk '{ v[NR] = $1; s += $1 }
	END { printf "load average (1 min) before each run: min %.2f, median %.2f, max %.2f over %d runs on %s CPUs\n",
		v[1], v[int((NR + 1) / 2)], v[NR], NR, "'"$jobs"'" }'
