# SPDX-License-Identifier: BSD-2-Clause
# Shared by tests/kernel/test_*.sh. Sourced, not run.
set -u
top=${AUXTRIG_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
build=${AUXTRIG_BUILD:-$top/build}
AUXTRIG=$build/auxtrig
DEMO=$build/examples/openat_demo
tmp=$(mktemp -d /tmp/auxtrig-ktest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

skip() { echo "skip: $*" >&2; echo "$*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root (BPF and perf events)"; }
need_perf() { command -v perf >/dev/null || skip "needs perf (make deps installs linux-perf)"; }
# The BPF objects a process holds, one "prog|map|link ID" a line, from its fds' fdinfo. One
# process reads them all: one per fd took 20 s in an emulated guest, while the recording ran on
# and its file grew to 100 MB, which perf then took minutes to read.
bpf_objects() {
	sed -n 's/^\(prog\|map\|link\)_id:[[:space:]]*\([0-9]*\)$/\1 \2/p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u
}

# perf script in columns we parse: comm tid cpu time event fields...
pscript() { perf script -F comm,tid,cpu,time,event,trace -i "$1" 2>"$tmp/pscript.err"; }

# Why perf found FILE out of order: the record's time and what it had flushed (for the log).
perf_order_detail() {
	perf --debug ordered-events=1 report -D -i "$1" 2>&1 | grep -A1 'out of order event' | head -6 >&2
}

# perf 6.1 must read the file without a single warning.
assert_perf_reads_cleanly() {
	local f=$1
	perf report -D -i "$f" >"$tmp/dump.out" 2>"$tmp/dump.err" || fail "perf report -D failed on $f: $(tail -3 "$tmp/dump.err")"
	if grep -A2 -iE 'warning|error|incompatible|reserved bits|unsupported|failed|out of order' "$tmp/dump.err"; then
		! grep -q 'out of order' "$tmp/dump.err" || perf_order_detail "$f"
		fail "perf report -D warns about $f"
	fi
	perf script -i "$f" >/dev/null 2>"$tmp/script.err" || fail "perf script failed on $f"
	if grep -iE 'warning|error|incompatible|reserved bits|failed' "$tmp/script.err"; then
		fail "perf script warns about $f"
	fi
}

# The sequence numbers (fd - 1000000) of the sys_enter_close records in FILE,
# in time order: seq_demo and read_pattern number their close() calls.
seqs() {
	perf script -F event,trace -i "$1" 2>/dev/null | sed -n 's/.*sys_enter_close: fd: \(0x[0-9a-f]*\).*/\1/p' |
		while read -r h; do echo $((h - 1000000)); done
}

# The CPUs of a kernel CPU list ("0-3,6", as in /sys/devices/system/cpu/online), one per word.
cpulist() {
	local part
	for part in ${1//,/ }; do
		case $part in
		*-*) seq "${part%-*}" "${part#*-}" ;;
		*) echo "$part" ;;
		esac
	done | tr '\n' ' '
}
# The CPUs this test may run on: online and in its affinity (a cpuset may leave CPU 0 out).
my_cpus() { cpulist "$(taskset -pc $$ | sed 's/.*: //')"; }
# One of them, to pin a workload to.
one_cpu() { local c; c=$(my_cpus); echo "${c%% *}"; }

assert_eq() { [ "$1" = "$2" ] || fail "$3: expected $2, got $1"; }

# "${with_id[@]}" FILE CMD ARGS...: as auxtrig's command, runs CMD ARGS in place (exec: the same
# process) after writing that process's identity to FILE: its /proc stat line, with its pid and
# its start time. A test then asks about its own workload (workload_running FILE), not about
# any process with the same command line: the same test may run in another tree on the machine.
# It opens only /proc/self/stat and FILE (both succeed): no failing openat for a trigger to see.
with_id=(sh -c 'read -r st </proc/self/stat && printf "%s\n" "$st" >"$0" && exec "$@"')

# workload_running FILE: true while the process FILE identifies (see with_id) runs: its pid is
# there, started at the same time (not a later process given the same pid), and not a zombie.
workload_running() {
	local pid start now rest
	read -r pid rest <"$1" || fail "no workload identity in $1"
	start=$(awk '{ sub(/.*\) /, ""); print $20 }' <<<"$rest")
	now=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null) || return 1
	[ "$(awk '{ print $20 }' <<<"$now")" = "$start" ] && [ "${now%% *}" != Z ] && [ "${now%% *}" != X ]
}

# syscall_nr NAME: the number of system call NAME on this machine's architecture, from its C
# library's <sys/syscall.h> (x86-64 numbers its own table: openat 257, read 0; arm64 uses the
# generic one: openat 56, read 63). What marks print as nr=.
syscall_nr() { printf '#include <sys/syscall.h>\nSYS_%s\n' "$1" | ${CC:-cc} -E -P - | tail -1; }

# How long a test waits for something that must happen (auxtrig armed, a workload's line, an ack):
# a guard against hanging for ever, never a bound on speed. Generous, because the lab's guests
# (tests/lab/vm) run 20-50 times slower than the machine under emulation (TCG).
WAIT=${AUXTRIG_TEST_WAIT:-300}

# wait_for FILE TEXT [PID]: until FILE has a line matching TEXT (grep -E). Fails when PID (the
# process that should write it) ends first, or after $WAIT seconds.
wait_for() {
	local file=$1 text=$2 pid=${3:-} i
	for ((i = 0; i < WAIT * 20; i++)); do
		grep -qE -- "$text" "$file" 2>/dev/null && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			grep -qE -- "$text" "$file" 2>/dev/null && return 0
			fail "'$text' never came in $file: the process that writes it ended: $(tail -n 3 "$file" 2>/dev/null)"
		fi
		sleep 0.05
	done
	fail "timed out after ${WAIT}s waiting for '$text' in $file"
}

# wait_size FILE BYTES PID: until FILE is larger than BYTES; fails when PID ends first, or after
# $WAIT seconds.
wait_size() {
	local i
	for ((i = 0; i < WAIT * 20; i++)); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt "$2" ] && return 0
		kill -0 "$3" 2>/dev/null || fail "$1 never grew past $2 bytes: the process that writes it ended"
		sleep 0.05
	done
	fail "timed out after ${WAIT}s waiting for $1 to grow past $2 bytes"
}

# record_bg ERR ARGS...: `auxtrig record ARGS` in the background (its PID in $aux, its stderr in
# ERR), returning once auxtrig says it is armed: every program attached and the target running.
# -q is dropped from ARGS: it would silence that line.
record_bg() {
	local err=$1 a args=()
	shift
	for a in "$@"; do [ "$a" = -q ] || args+=("$a"); done
	"$AUXTRIG" record "${args[@]}" 2>"$err" &
	aux=$!
	wait_for "$err" '^auxtrig: recording .*Ctrl-C to stop' $aux
}

# command_pid AUX: the pid of the command auxtrig (pid AUX) runs: its child that is not its reaper.
# auxtrig forks the reaper (auxtrig-reaper, which ignores SIGTERM and SIGINT: it waits for auxtrig to
# end) before the command, so /proc/AUX/task/AUX/children lists the reaper first: a test that took
# the first child for the command signalled the reaper, and the command ran on. Empty when there
# is none.
command_pid() {
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = auxtrig-reaper ] || { echo "$c"; return 0; }
	done
}

# perf_record_bg ERR ARGS...: `perf record ARGS` in the background (PID in $perf_pid) with a
# workload that waits for perf_record_end, returning once perf answers a ping on its control
# FIFO, which it reads only when recording.
perf_record_bg() {
	local err=$1 reply
	shift
	mkfifo "$tmp/perf.ctl" "$tmp/perf.ack" "$tmp/perf.end"
	exec 4<>"$tmp/perf.end" 5<>"$tmp/perf.ctl" 6<>"$tmp/perf.ack"
	perf record --control "fifo:$tmp/perf.ctl,$tmp/perf.ack" "$@" -- sh -c 'read -r _ <"$1"' sh "$tmp/perf.end" \
		2>"$err" &
	perf_pid=$!
	echo ping >&5
	read -r -t "$WAIT" reply <&6 || fail "perf record did not answer a ping: $(tail -n 3 "$err")"
	[ "$reply" = ack ] || fail "perf record answered '$reply' to a ping"
}

# perf_record_end: perf_record_bg's workload ends, and so does perf.
perf_record_end() {
	echo >&4
	wait "$perf_pid" || fail "perf record failed: $(tail -n 3 "$1")"
}
