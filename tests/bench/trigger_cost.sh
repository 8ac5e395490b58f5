#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# make bench, part 2: what an armed trigger costs per hit, in the kernel, for
# auxtrig --on, bpftrace and perf's tracepoint --filter, side by side in one run.
#
# Workload: examples/openat_loop, one thread pinned to one CPU, making COUNT
# openat() calls of a path that does not exist (each fails with ENOENT), timed
# in chunks of 100 calls; the median chunk gives ns per call, so preemption by
# other work on a busy machine does not count. Every call is a hit of the
# condition under test, so the whole condition is evaluated every time.
#
# Conditions (the same one written for each tool):
#   none      at sys_exit_openat: no condition, the armed trigger itself against
#             bpftrace's /pid == PID/ { @n = count(); } (and, as bpf-empty, a
#             bpftrace program with an empty body: what any program costs here,
#             the clock reads of the stats included)
#   ret+comm  at sys_exit_openat:  ret == -ENOENT && comm == "openat_loop"
#   path      at sys_enter_openat: the path argument starts with /nonexistent/
#             (auxtrig str(arg1) ~ glob, bpftrace strncmp(str(..)), perf
#             filename.ustring ~ glob)
#   ret+uid   at sys_exit_openat:  ret == -ENOENT && uid == 0; tracepoint
#             filters have no uid field, so perf refuses it (reported n/a)
#   uprobe    at a uprobe on the loop's own openat() (__libc_openat64, the
#             binary is static): the path argument starts with /nonexistent/
#             (auxtrig str(arg1) ~ glob, bpftrace strncmp(str(arg1))); auxtrig
#             and bpftrace only (perf has no filter on a uprobe it did not
#             define, the C prototype is for tracepoints). Every hit also pays
#             the uprobe's trap, in +ns/call, not in bpf ns/hit.
#
# Tools (attached before the loop is released; the loop's own counters are read
# while they are still attached):
#   auxtrig        record --on 'POINT if COND:mark,every:1000000000' -p PID:
#                  the condition is evaluated and matches on every hit, the
#                  policy suppresses the action, so nothing is written per hit:
#                  the cost of the armed trigger itself
#   auxtrig+mark   the same with ':mark': an auxtrig:mark record in the file per hit
#   bpftrace       PROBE /pid == PID && COND/ { @n = count(); }: a per-CPU map update
#                  per hit (the pid term is the target, as -p is for the others)
#   perf-stat      perf stat --filter COND -p PID: the filter, counted, nothing written
#   perf-record    perf record --filter COND -p PID: a sample in the ring per hit
#
# Reported per tool and condition:
#   ns/call        the loop's ns per openat() (median chunk), median of RUNS runs
#   +ns/call       what the tool adds: each run minus a baseline run (nothing
#                  attached) made just before it, median of the RUNS differences;
#                  everything the tool puts on a call: the tracepoint's dispatch,
#                  the program or filter, writes
#   bpf ns/hit     BPF tools only: the run time the kernel measured inside the
#                  tool's program (kernel.bpf_stats_enabled=1, bpftool prog show
#                  --json run_time_ns), over the loop, divided by the loop's calls;
#                  median of RUNS separate runs (stats on adds its own clock reads,
#                  so those runs are not used for ns/call). This is the in-kernel
#                  cost of the program per hit, without the tracepoint's dispatch.
#                  For auxtrig, every program of its that ran during the loop
#                  counts: the point's own, the shared one, and the context-switch
#                  hook (gate_sched_switch) a syscall point's program relies on.
#   net            bpf ns/hit minus bpf-empty's: the program's own work
#   sw ns          of bpf ns/hit, auxtrig's context-switch hook, per loop call
#   start ms       from starting the tool to its armed line (auxtrig's
#                  "recording", bpftrace's BEGIN), median of the loop runs
#   runs/call      program runs over the loop per call (other processes' openat
#                  calls on this machine are counted too, as they are by the tool)
#   matched        the tool's own count of hits that matched: COUNT, but perf
#                  record's file can hold a few duplicated samples
#
# Environment: TC_COUNT (200000), TC_RUNS (5), TC_CPU (the last CPU),
# TC_CONDS (the conditions to measure: "none retcomm path retuid uprobe").
# Nothing here is asserted on time; the numbers are printed.
set -u
build=$(cd "${1:-build}" && pwd)
count=${TC_COUNT:-200000}
runs=${TC_RUNS:-5}
cpu=${TC_CPU:-$(($(nproc) - 1))}
loop=$build/examples/openat_loop
path=/nonexistent/auxtrig-trigger-cost
comm=openat_loop
tmp=$(mktemp -d /tmp/auxtrig-tcost.XXXXXX)
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
lp='' tp='' # the loop and the tool of the run under way, for cleanup
cleanup() {
	[ -n "$tp" ] && kill -TERM "$tp" 2>/dev/null
	[ -n "$lp" ] && kill -TERM "$lp" 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$stats_was" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" = 0 ] || { echo "trigger_cost: needs root"; exit 1; }
for t in perf bpftrace bpftool jq taskset; do
	command -v $t >/dev/null || { echo "trigger_cost: needs $t (make deps)"; exit 1; }
done
[ -x "$loop" ] || { echo "trigger_cost: $loop not built (make)"; exit 1; }

conds=${TC_CONDS:-"none retcomm path retuid uprobe"}
# cond_* NAME: the condition for each tool
cond_title() {
	case $1 in
	none) echo "sys_exit_openat: no condition" ;;
	retcomm) echo "sys_exit_openat: ret == -ENOENT && comm == \"$comm\"" ;;
	path) echo "sys_enter_openat: path argument starts with /nonexistent/" ;;
	retuid) echo "sys_exit_openat: ret == -ENOENT && uid == 0" ;;
	uprobe) echo "uprobe at the loop's openat() (__libc_openat64): path argument starts with /nonexistent/" ;;
	esac
}
cond_auxtrig() {
	case $1 in
	none) echo "syscall:openat:exit" ;;
	retcomm) echo "syscall:openat:exit if ret == -ENOENT && comm == \"$comm\"" ;;
	path) echo 'syscall:openat:enter if str(arg1) ~ "/nonexistent/*"' ;;
	retuid) echo 'syscall:openat:exit if ret == -ENOENT && uid == 0' ;;
	uprobe) echo "uprobe:$loop:__libc_openat64 if str(arg1) ~ \"/nonexistent/*\"" ;;
	esac
}
cond_bpftrace() { # COND PID: bpftrace has no -p for tracepoints, so the target is a first term
	case $1 in
	none) echo "tracepoint:syscalls:sys_exit_openat /pid == $2/" ;;
	retcomm) echo "tracepoint:syscalls:sys_exit_openat /pid == $2 && args->ret == -2 && comm == \"$comm\"/" ;;
	path) echo "tracepoint:syscalls:sys_enter_openat /pid == $2 && strncmp(str(args->filename), \"/nonexistent/\", 13) == 0/" ;;
	retuid) echo "tracepoint:syscalls:sys_exit_openat /pid == $2 && args->ret == -2 && uid == 0/" ;;
	uprobe) echo "uprobe:$loop:__libc_openat64 /pid == $2 && strncmp(str(arg1), \"/nonexistent/\", 13) == 0/" ;;
	esac
}
cond_perf() { # prints "EVENT FILTER"
	case $1 in
	none) echo "syscalls:sys_exit_openat" ;;
	retcomm) echo "syscalls:sys_exit_openat ret == -2 && comm == \"$comm\"" ;;
	path) echo 'syscalls:sys_enter_openat filename.ustring ~ "/nonexistent/*"' ;;
	retuid) echo 'syscalls:sys_exit_openat ret == -2 && uid == 0' ;;
	esac
}

# gen_c COND PID: the mechanism not chosen, as a prototype: the same armed
# trigger (the running thread remembered per CPU until a context switch,
# per-CPU counters, the condition, every:1000000000 atomic) written as C for
# clang, which auxtrig compiles at start (--trigger-prog FILE.bpf.c).
gen_c() {
	local ev=sys_exit_openat ctxt=trace_event_raw_sys_exit cond=1
	case $1 in
	retcomm) cond="ctx->ret == -2 && comm_is(\"$comm\", ${#comm})" ;;
	path) ev=sys_enter_openat ctxt=trace_event_raw_sys_enter cond="arg_starts((const void *)ctx->args[1], \"/nonexistent/\", 13)" ;;
	retuid) cond="ctx->ret == -2 && (__u32)bpf_get_current_uid_gid() == 0" ;;
	esac
	cat <<-EOF
	#include "vmlinux.h"
	#include <bpf/bpf_helpers.h>
	#include <bpf/bpf_tracing.h>
	#include <bpf/bpf_core_read.h>
	#include "auxtrig/trigger.bpf.h"
	char LICENSE[] SEC("license") = "Dual BSD/GPL";
	struct gen_cpu { __u64 evaluated, matched, suppressed, pid_tgid; __u32 state; };
	struct {
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, struct gen_cpu);
	} gen_cpus SEC(".maps");
	__u64 gen_every;
	static __always_inline int comm_is(const char *s, int n)
	{
		char c[16] = {};
		bpf_get_current_comm(c, sizeof(c));
	#pragma unroll
		for (int i = 0; i <= n && i < 16; i++)
			if (c[i] != s[i])
				return 0;
		return 1;
	}
	static __always_inline int arg_starts(const void *p, const char *s, int n)
	{
		char b[64];
		if (bpf_probe_read_user_str(b, sizeof(b), p) < 0)
			return 0;
	#pragma unroll
		for (int i = 0; i < n && i < 64; i++)
			if (b[i] != s[i])
				return 0;
		return 1;
	}
	SEC("raw_tp/sched_switch")
	int gen_switch(void *ctx)
	{
		__u32 z = 0;
		struct gen_cpu *c = bpf_map_lookup_elem(&gen_cpus, &z);
		if (c)
			c->state = 0;
		return 0;
	}
	SEC("tp/syscalls/$ev")
	int gen_cond(struct $ctxt *ctx)
	{
		__u32 z = 0;
		struct gen_cpu *c;
		if (!auxtrig_armed())
			return AUXTRIG_PASS;
		c = bpf_map_lookup_elem(&gen_cpus, &z);
		if (!c)
			return AUXTRIG_PASS;
		if (c->state != 2) {
			if (c->state == 1)
				return AUXTRIG_PASS;
			c->pid_tgid = bpf_get_current_pid_tgid();
			if ((c->pid_tgid >> 32) != $2 && !auxtrig_is_target()) {
				c->state = 1;
				return AUXTRIG_PASS;
			}
			c->state = 2;
		}
		c->evaluated++;
		if (!($cond))
			return AUXTRIG_PASS;
		c->matched++;
		if ((__sync_fetch_and_add(&gen_every, 1) + 1) % 1000000000) {
			c->suppressed++;
			return AUXTRIG_PASS;
		}
		auxtrig_mark(ctx, 1, 0);
		return AUXTRIG_PASS;
	}
	EOF
}

# prog_stats: "id name run_time_ns run_cnt" of every loaded BPF program
prog_stats() {
	bpftool prog show --json 2>/dev/null |
		jq -r '.[] | "\(.id) \(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'
}

# wait_for FILE PATTERN SECONDS: poll until FILE has a line matching PATTERN
wait_for() {
	local i
	for i in $(seq $(($3 * 100))); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# stop_bpftrace PID: SIGINT makes it print its maps and exit; a signal that
# arrives before its handler is in place is lost (background jobs of a script
# start with SIGINT ignored), so repeat it, and give up with SIGTERM after 20 s.
stop_bpftrace() {
	local i j
	for i in $(seq 10); do
		kill -INT "$1" 2>/dev/null || break
		for j in $(seq 20); do
			kill -0 "$1" 2>/dev/null || break 2
			sleep 0.1
		done
	done
	kill -TERM "$1" 2>/dev/null
	wait "$1"
}

# run TOOL COND STATS: one measured run; prints "ns_per_call matched bpf_ns_per_call runs_per_call",
# or "fail REASON" when the tool refused or a count is off
run() {
	local tool=$1 cond=$2 stats=$3 ns matched=0 ev filt names='' spec t0 start=-
	rm -f "$tmp/go" "$tmp/loop.out" "$tmp/tool.out" "$tmp/tool.err" "$tmp/out.data"
	mkfifo "$tmp/go"
	taskset -c "$cpu" "$loop" "$count" "$path" <"$tmp/go" >"$tmp/loop.out" &
	lp=$!
	exec 9>"$tmp/go"
	[ "$stats" = 1 ] && prog_stats >"$tmp/before"
	# Every tool starts with 9>&-: only this shell holds the loop's input open.
	t0=$(date +%s%N)
	case $tool in
	none) tp= ;;
	auxtrig | auxtrig+mark)
		spec="$(cond_auxtrig "$cond"):mark"
		[ "$tool" = auxtrig ] && spec="$spec,every:1000000000"
		"$build/auxtrig" record -f -o "$tmp/out.data" --on "$spec" -p $lp \
			>"$tmp/tool.out" 2>"$tmp/tool.err" 9>&- &
		tp=$!
		# the shared program or the point's own, and what else of auxtrig's can
		# run during the loop: the context-switch hook, fork/exec/exit
		names="gate_tracepoint gate_point gate_probe gate_point_upro gate_sched_switch gate_follow_fork gate_follow_exec gate_thread_exit"
		wait_for "$tmp/tool.err" 'recording' 10
		start=$((($(date +%s%N) - t0) / 1000000)) ;;
	auxtrig-c)
		gen_c "$cond" $lp >"$tmp/gen.bpf.c"
		"$build/auxtrig" record -f -o "$tmp/out.data" --trigger-prog "$tmp/gen.bpf.c" -p $lp \
			>"$tmp/tool.out" 2>"$tmp/tool.err" 9>&- &
		tp=$!
		names="gen_cond gen_switch gate_tracepoint gate_follow_fork gate_follow_exec gate_thread_exit"
		wait_for "$tmp/tool.err" 'recording' 30
		start=$((($(date +%s%N) - t0) / 1000000)) ;;
	bpftrace | bpf-empty)
		# BEGIN runs once every probe is attached and bpftrace handles SIGINT.
		if [ $tool = bpftrace ]; then
			spec="$(cond_bpftrace "$cond" $lp) { @n = count(); }"
		else
			spec="tracepoint:syscalls:sys_exit_openat { }"
		fi
		bpftrace -B line -e "BEGIN { printf(\"armed\\n\"); } $spec" \
			>"$tmp/tool.out" 2>"$tmp/tool.err" 9>&- &
		tp=$!
		names="sys_exit_openat sys_enter_opena sys_enter_openat __libc_openat64"
		wait_for "$tmp/tool.out" '^armed' 60
		start=$((($(date +%s%N) - t0) / 1000000)) ;;
	perf-stat | perf-record)
		read -r ev filt <<<"$(cond_perf "$cond")"
		set -- ${filt:+--filter "$filt"}
		if [ $tool = perf-stat ]; then
			perf stat -x, -o "$tmp/tool.out" -e "$ev" "$@" -p $lp 2>"$tmp/tool.err" 9>&- &
		else
			perf record -o "$tmp/out.data" -e "$ev" "$@" -p $lp 2>"$tmp/tool.err" 9>&- &
		fi
		tp=$!
		sleep 1.5 ;;
	esac
	if [ -n "$tp" ] && ! kill -0 $tp 2>/dev/null; then
		exec 9>&-
		wait $lp
		lp='' tp=''
		echo "fail $(head -c 300 "$tmp/tool.err" | tr '\n' ' ')"
		return
	fi
	[ "$stats" = 1 ] && prog_stats >"$tmp/armed"
	echo go >&9
	wait_for "$tmp/loop.out" '^calls' 120
	[ "$stats" = 1 ] && prog_stats >"$tmp/after"
	exec 9>&-
	wait $lp
	ns=$(awk '{ print $8 }' "$tmp/loop.out")
	case $tool in
	none) matched=$count ;;
	auxtrig-c) kill -INT $tp; wait $tp
		matched=- ;;
	auxtrig | auxtrig+mark) wait $tp
		matched=$(sed -n 's/.*: evaluated [0-9]*, matched \([0-9]*\),.*/\1/p' "$tmp/tool.err") ;;
	bpftrace) stop_bpftrace $tp
		matched=$(awk '$1 == "@n:" { print $2 }' "$tmp/tool.out") ;;
	bpf-empty) stop_bpftrace $tp
		matched=- ;;
	perf-stat) wait $tp
		matched=$(awk -F, -v e="$ev" '$3 == e { print $1 }' "$tmp/tool.out") ;;
	perf-record) wait $tp
		matched=$(perf script -F pid -i "$tmp/out.data" 2>/dev/null | awk -v p=$lp '$1 == p { n++ } END { print n + 0 }') ;;
	esac
	if [ "$stats" = 1 ]; then
		# The tool's programs: new since before it started and named as the
		# tool names them (another test may load some meanwhile). bpf ns/hit
		# is the run time of all of them over the loop, per call; runs/call
		# that of the one that ran most; sw ns/call the context-switch hook's
		# share (auxtrig's gate_sched_switch).
		awk -v names="$names" -v calls="$count" '
			BEGIN { n = split(names, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
			FILENAME == ARGV[1] { old[$1] = 1; next }
			FILENAME == ARGV[2] { if (!($1 in old) && ($2 in want)) { rt[$1] = $3; rc[$1] = $4 }; next }
			!($1 in rt) { next }
			{ all += $3 - rt[$1] }
			$2 == "gate_sched_switch" || $2 == "gen_switch" { sw += $3 - rt[$1]; has_sw = 1 }
			$4 - rc[$1] > drc { drc = $4 - rc[$1] }
			END { printf "%.1f %.3f %s\n", all / calls, drc / calls, has_sw ? sprintf("%.1f", sw / calls) : "-" }' \
			"$tmp/before" "$tmp/armed" "$tmp/after" >"$tmp/bpf"
	else
		echo "- - -" >"$tmp/bpf"
	fi
	lp='' tp=''
	echo "$ns ${matched:-0} $(cat "$tmp/bpf") $start"
}

# pick COL FILE: the median line of FILE by column COL (numeric), or its first "fail" line
pick() {
	if grep -q '^fail' "$2"; then
		grep -m1 '^fail' "$2"
	else
		sort -g -k"$1,$1" "$2" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'
	fi
}

tools="auxtrig auxtrig+mark auxtrig-c bpftrace perf-stat perf-record"
bpf_tools="auxtrig auxtrig+mark auxtrig-c bpftrace"
# tools_of COND [bpf]: the tools measured for COND; the empty program once, with "none"
tools_of() {
	local t=$tools
	[ "${2:-}" = bpf ] && t=$bpf_tools
	[ "$1" = uprobe ] && t="auxtrig auxtrig+mark bpftrace"
	[ "$1" = none ] && t="$t bpf-empty"
	echo $t
}
echo "auxtrig trigger cost: $count openat() calls of a missing path per run, loop on CPU $cpu, $runs runs per tool and condition"
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(perf version 2>/dev/null), $(bpftrace --version 2>/dev/null)"
for n in $(seq "$runs"); do
	for cond in $conds; do
		# Each tool's run is paired with a baseline run just before it, so load
		# that drifts over minutes cancels out of the difference.
		for tool in $(tools_of $cond); do
			run none $cond 0 >"$tmp/base.1"
			cat "$tmp/base.1" >>"$tmp/$cond.none.loop"
			run $tool $cond 0 >"$tmp/tool.1"
			awk 'NR == FNR { b = $1; next }
			     $1 == "fail" { print; next }
			     { print $0, $1 - b }' "$tmp/base.1" "$tmp/tool.1" >>"$tmp/$cond.$tool.loop"
		done
	done
done
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null
for n in $(seq "$runs"); do
	for cond in $conds; do
		for tool in $(tools_of $cond bpf); do
			run $tool $cond 1 >>"$tmp/$cond.$tool.bpf"
		done
	done
done
sysctl -q -w kernel.bpf_stats_enabled="$stats_was" >/dev/null
cat "$tmp"/*.none.loop >"$tmp/none.all"
base=$(pick 1 "$tmp/none.all" | awk '{ print $1 }')
empty=$(pick 3 "$tmp/none.bpf-empty.bpf" | awk '{ print $3 }')
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf 'baseline (nothing attached): %.1f ns per openat() call; an empty BPF program (bpf-empty): %s ns per hit\n' \
	"$base" "$empty"
for cond in $conds; do
	echo
	echo "$(cond_title $cond)"
	printf '  %-13s %9s %10s %11s %7s %8s %9s %10s %9s\n' tool ns/call "+ns/call" "bpf ns/hit" net "sw ns" "start ms" \
		runs/call matched
	for tool in $(tools_of $cond); do
		loopr=$(pick 1 "$tmp/$cond.$tool.loop")
		case $loopr in fail*)
			printf '  %-13s n/a: %s\n' "$tool" "$(echo "${loopr#fail }" | cut -c1-90)"
			continue ;;
		esac
		bpfr='- - - - -'
		[ -f "$tmp/$cond.$tool.bpf" ] && bpfr=$(pick 3 "$tmp/$cond.$tool.bpf")
		ns=$(pick 1 "$tmp/$cond.$tool.loop" | awk '{ print $1 }')
		start=$(pick 6 "$tmp/$cond.$tool.loop" | awk '{ print $6 }')
		set -- $(pick 7 "$tmp/$cond.$tool.loop")
		delta=$7 matched=$2
		set -- $bpfr
		echo "$cond $tool $3 $start" >>"$tmp/summary"
		awk -v t="$tool" -v ns="$ns" -v d="$delta" -v m="$matched" -v bn="$3" -v rc="$4" -v sw="$5" -v e="$empty" \
			-v st="$start" 'BEGIN { net = bn == "-" || e == "" ? "-" : sprintf("%.1f", bn - e)
			printf "  %-13s %9.1f %10.1f %11s %7s %8s %9s %10s %9s\n", t, ns, d, bn, net, sw, st, rc, m }'
	done
done
# The issue's criteria, from the numbers above: auxtrig's armed trigger in the
# kernel at or below bpftrace for every condition, at or below half of
# bpftrace's count() without one; start-up to armed of both.
echo
echo "auxtrig against bpftrace, bpf ns/hit (all of auxtrig's programs) and start-up ms to armed (medians):"
awk '$2 == "auxtrig" { a[$1] = $3; as[$1] = $4 } $2 == "bpftrace" { b[$1] = $3; bs[$1] = $4 }
	END {
		n = split("none retcomm path retuid uprobe", c, " ")
		for (i = 1; i <= n; i++) {
			k = c[i]
			if (!(k in a) || !(k in b) || a[k] == "-" || b[k] == "-") { printf "  %-8s n/a\n", k; continue }
			lim = k == "none" ? b[k] / 2 : b[k]
			printf "  %-8s auxtrig %6.1f  bpftrace %6.1f  %s %6.1f: %-4s   start ms: auxtrig %s, bpftrace %s\n", k, a[k], b[k],
				k == "none" ? "half " : "limit", lim, a[k] <= lim ? "met" : "NOT met", as[k], bs[k]
		}
	}' "$tmp/summary"
