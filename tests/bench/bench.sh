#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# make bench: auxtrig record against perf record, side by side, in one run.
#
# Workload: examples/syscall_storm, THREADS threads making COUNT getppid()
# calls each, as fast as they can (the known count is what "lost" is measured
# against). Each recorder records syscalls:sys_enter_getppid of the workload
# with the same per-CPU ring size (-m PAGES), attached with -p before the
# workload is released, so its CPU time is its own. Reported per tool:
#   recorded  sys_enter_getppid samples of the workload's pid in the file
#             (perf script; --stats would count other samples too)
#   lost      expected - recorded, and as a percentage
#   cpu       user+system seconds of the recorder process
#   wall      the workload's own elapsed time; slowdown against no recorder
#   ns/event  what recording costs the workload per event: its elapsed time
#             minus that without a recorder, over the events it made (both
#             tools write the same events: every sys_enter_getppid of its pid)
# Environment: BENCH_THREADS (default: CPUs), BENCH_COUNT (500000),
# BENCH_PAGES (128), BENCH_RUNS (3; the tools' runs interleaved, the median run per tool
# reported).
set -u
build=$(cd "${1:-build}" && pwd)
threads=${BENCH_THREADS:-$(nproc)}
count=${BENCH_COUNT:-500000}
pages=${BENCH_PAGES:-128}
runs=${BENCH_RUNS:-3}
expected=$((threads * count))
storm=$build/examples/syscall_storm
tmp=$(mktemp -d /tmp/auxtrig-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench: needs root"; exit 1; }
command -v perf >/dev/null || { echo "bench: needs perf (make deps)"; exit 1; }

# run TOOL N: one measured run; prints "recorded cpu wall"
run() {
	local tool=$1 n=$2 out=$tmp/$1.$2.data rec=0 cpu=0 wall pid rpid
	rm -f "$tmp/go"; mkfifo "$tmp/go"
	"$storm" "$threads" "$count" <"$tmp/go" >"$tmp/storm.out" &
	pid=$!
	exec 9>"$tmp/go"
	case $tool in
	auxtrig) { TIMEFORMAT='%U %S'; time "$build/auxtrig" record -q -m "$pages" -e syscalls:sys_enter_getppid \
			-o "$out" -p $pid 2>"$tmp/rec.err"; } 2>"$tmp/time" & ;;
	perf) { TIMEFORMAT='%U %S'; time perf record -q -m "$pages" -e syscalls:sys_enter_getppid \
			-o "$out" -p $pid 2>"$tmp/rec.err"; } 2>"$tmp/time" & ;;
	none) : ;;
	esac
	rpid=$!
	sleep 1.5 # attached and armed
	echo go >&9
	exec 9>&-
	wait $pid
	wall=$(awk '{ print $4 }' "$tmp/storm.out")
	if [ "$tool" != none ]; then
		wait $rpid
		cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$tmp/time")
		rec=$(perf script -F pid,event -i "$out" 2>/dev/null |
			awk -v p=$pid '$1 == p && $2 == "syscalls:sys_enter_getppid:" { n++ } END { print n + 0 }')
		rm -f "$out"
	fi
	echo "${rec:-0} $cpu $wall"
}

median() { sort -n -k3 | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'; }

echo "auxtrig bench: $threads threads x $count getppid() = $expected events, -m $pages pages per CPU, $runs runs per tool"
echo "machine: $(nproc) CPUs, $(uname -r), $(perf version 2>/dev/null), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
# Interleaved: run n of every tool before run n+1 of any, so a burst of load
# from the shared machine falls on all of them alike, not on one tool's runs.
for n in $(seq "$runs"); do
	for tool in none auxtrig perf; do run $tool "$n" >>"$tmp/$tool.runs"; done
done
for tool in none auxtrig perf; do median <"$tmp/$tool.runs" >"$tmp/$tool.result"; done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
base=$(awk '{ print $3 }' "$tmp/none.result")
printf '%-8s %12s %12s %8s %10s %10s %9s %9s\n' tool recorded lost lost% "cpu(s)" "wall(s)" slowdown ns/event
for tool in none auxtrig perf; do
	read -r rec cpu wall <"$tmp/$tool.result"
	if [ $tool = none ]; then
		printf '%-8s %12s %12s %8s %10s %10.3f %9s %9s\n' "(none)" - - - - "$wall" 1.00x -
		continue
	fi
	lost=$((expected - rec))
	awk -v t=$tool -v r="$rec" -v l="$lost" -v e="$expected" -v c="$cpu" -v w="$wall" -v b="$base" \
		-v th="$threads" 'BEGIN { printf "%-8s %12d %12d %7.2f%% %10.3f %10.3f %8.2fx %9.1f\n", t, r, l, 100 * l / e, c, w,
			w / b, (w - b) * 1e9 * th / e }'
done
