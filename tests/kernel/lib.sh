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

# perf script in columns we parse: comm tid cpu time event fields...
pscript() { perf script -F comm,tid,cpu,time,event,trace -i "$1" 2>"$tmp/pscript.err"; }

# perf 6.1 must read the file without a single warning.
assert_perf_reads_cleanly() {
	local f=$1
	perf report -D -i "$f" >"$tmp/dump.out" 2>"$tmp/dump.err" || fail "perf report -D failed on $f: $(tail -3 "$tmp/dump.err")"
	if grep -A2 -iE 'warning|error|incompatible|reserved bits|unsupported|failed|out of order' "$tmp/dump.err"; then
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
