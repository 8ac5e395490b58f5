#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# auxtrig script under valgrind's leak checker, in every process (the parent
# and its decode workers), on the real captures: nothing of ours is lost
# (definitely, indirectly or possibly); the one known library leak (OpenCSD
# 1.3.3, 32 bytes per decode tree) is suppressed by tests/sanitizer/valgrind.supp,
# which says why, and shows as suppressed.
# Exit 0 pass, 77 skip (no valgrind or no shared data, not under CI=true), else fail.
set -u
top=${AUXTRIG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AUXTRIG_BUILD:-$top/build}
data=$top/../shared/data
auxtrig=$build/auxtrig
supp=$top/tests/sanitizer/valgrind.supp
bad=0
fail() { echo "FAIL: $*"; bad=1; }

[ -x "$auxtrig" ] || { echo "no $auxtrig: run make first"; exit 1; }
for need in valgrind; do
	if ! command -v $need >/dev/null; then
		echo "$need not installed (make deps installs it)"
		[ "${CI:-}" = true ] && exit 1
		exit 77
	fi
done
if [ ! -f "$data/README.md" ]; then
	echo "shared test data not found at $data"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $1: a name; the rest: auxtrig script's arguments.
check() {
	local name=$1; shift
	local log=$tmp/$name.vg
	valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=42 \
		--suppressions="$supp" --log-file="$log.%p" "$auxtrig" script "$@" >/dev/null 2>"$tmp/$name.err"
	local rc=$?
	[ $rc -ne 42 ] || fail "$name: valgrind found errors or leaks: $(cat "$log".* | head -30)"
	[ $rc -le 1 ] || fail "$name: exit $rc"
	# every process (parent and workers) wrote its report: none may show a loss
	local reports
	reports=$(ls "$log".* | wc -l)
	[ "$reports" -ge 1 ] || fail "$name: no valgrind report"
	if grep -l "definitely lost\|indirectly lost\|possibly lost\|Invalid\|uninitialised" "$log".* >/dev/null 2>&1; then
		fail "$name: $(cat "$log".* | head -40)"
	fi
	echo "$name: $reports processes, clean"
}

etm=$data/perf/cs_etm-arm64
check etm-branches -i "$etm/perf_etm.data" --symfs "$etm/symfs"
check etm-windows -i "$etm/perf_etm.data" --symfs "$etm/symfs" --windows
check etm-packets -i "$etm/perf_etm.data" --symfs "$etm/symfs" --packets -j 2
# the timed decode (the cs_etm timestamp option), on a file made from the Juno capture
AUXTRIG_TOP=$top "$build/tests/bench/gen_decode" cstimed "$tmp/timed.data" 2 || fail "cannot make the timed CoreSight file"
check etm-timed -i "$tmp/timed.data"
# Intel PT, in builds with libipt (test_script checks the refusal of the others)
if ! "$auxtrig" --version | grep -q 'built without libipt'; then
	check pt-branches -i "$data/perf/intel_pt-skylake/perf.data.intel_pt-4.14"
	check pt-packets -i "$data/perf/intel_pt-skylake/perf.data.intel_pt-4.14" --packets
fi

# the suppression is used: the OpenCSD leak is real (a worker shows it suppressed)
valgrind --leak-check=full --suppressions="$supp" --log-file="$tmp/supp.%p" "$auxtrig" script \
	-i "$etm/perf_etm.data" --symfs "$etm/symfs" >/dev/null 2>&1
# (32 bytes a decode tree, one tree a piece of trace)
line=$(grep -ho "suppressed: [0-9,]* bytes in [0-9]* blocks" "$tmp"/supp.* | head -1)
n=$(sed 's/.* in \([0-9]*\) blocks/\1/' <<<"$line")
b=$(sed 's/suppressed: \([0-9,]*\) bytes.*/\1/' <<<"$line" | tr -d ,)
[ -n "$line" ] && [ "$n" -ge 1 ] && [ "$b" -eq $((32 * n)) ] ||
	fail "the OpenCSD leak did not show as suppressed (32 bytes a tree): $(grep -h suppressed: "$tmp"/supp.*)"

[ $bad = 0 ] && echo ok
exit $bad
