#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# make bench: how long recording every syscall tracepoint takes to start and to
# end, auxtrig record against perf record, on the same set ('syscalls:*').
# The workload is `date +%s.%N`, which prints when it started, so
#   start  from running the recorder to the workload running (attaching)
#   end    from the workload to the recorder's exit (detaching, writing)
# Most of "end" is the kernel: removing a tracepoint's last perf user waits for
# RCU grace periods (tracepoint_synchronize_unregister), once per tracepoint,
# and detaching a BPF program from one waits for another; auxtrig detaches
# from several threads so the waits of different tracepoints overlap.
# Nothing is asserted; the numbers are printed. BENCH_EVENTS overrides the set.
set -u
build=$(cd "${1:-build}" && pwd)
events=${BENCH_EVENTS:-syscalls:*}
tmp=$(mktemp -d /tmp/auxtrig-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench: needs root"; exit 1; }
command -v perf >/dev/null || { echo "bench: needs perf (make deps)"; exit 1; }

now() { date +%s.%N; }
measure() { # measure NAME COMMAND...: "NAME start end" in seconds
	local name=$1 t0 t1 t2; shift
	t0=$(now)
	"$@" >"$tmp/out" 2>"$tmp/err" || { echo "$name: failed: $(tail -2 "$tmp/err")"; return; }
	t2=$(now)
	t1=$(grep -E '^[0-9]+\.[0-9]+$' "$tmp/out" | head -1)
	awk -v n="$name" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "  %-14s %8.2f %8.2f %8.2f\n", n, b - a, c - b, c - a }'
}

n=$(ls -d /sys/kernel/tracing/events/${events%%:*}/${events#*:} 2>/dev/null | wc -l)
echo "recording '$events' ($n tracepoints) around 'date': seconds"
echo "  tool              start      end    total"
measure auxtrig "$build/auxtrig" record -q -e "$events" -o "$tmp/a.data" -- date +%s.%N
measure perf-record perf record -q -e "$events" -o "$tmp/p.data" -- date +%s.%N
