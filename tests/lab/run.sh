#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The lab: boots each lab kernel (tests/lab/vm) and runs in it, as root, the whole kernel suite
# (tests/kernel/) and the lab tests (tests/lab/test_*.sh, which load the emulated trace unit).
# The guests run side by side (one emulated CPU thread each, so two on a 2-core machine); each
# guest's results are printed as it ends, then one line with the totals. A guest that cannot run
# its suite counts as one failure.
#
# usage: tests/lab/run.sh BUILD_DIR
#   AUXTRIG_LAB_KERNELS   the kernels (default "6.12 6.1")
#   AUXTRIG_LAB_JOBS      guests at a time (default 2)
#   AUXTRIG_LAB_TESTS     a glob of test names to run in the guests (default: all), e.g. 'test_lab_*'
# Totals go to BUILD_DIR/lab/totals ("PASSED FAILED") for tests/run.sh.
set -u
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
kernels=${AUXTRIG_LAB_KERNELS:-6.12 6.1}
jobs=${AUXTRIG_LAB_JOBS:-2}
mkdir -p "$build/lab"

run_guest() { # KERNEL: the suite in that guest, output to lab/results-KERNEL.txt
	local k=$1 start rc unit=()
	start=$(date +%s)
	[ -d "$top/tests/lab/module" ] && unit=(--trace-unit)
	AUXTRIG_TEST_FILTER=${AUXTRIG_LAB_TESTS:-} CI=true "$top/tests/lab/vm" --kernel "$k" --build "$build" "${unit[@]}" -- \
		"$top/tests/run.sh" --lab-guest --logs "$build/tests/logs/lab-$k" "$build" \
		>"$build/lab/results-$k.txt" 2>&1
	rc=$?
	echo "$rc $(($(date +%s) - start))" >"$build/lab/status-$k"
}

pids=()
for k in $kernels; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	run_guest "$k" &
	pids+=($!)
done
wait

passed=0 failed=0
for k in $kernels; do
	read -r rc secs <"$build/lab/status-$k"
	echo "lab guest $k ($(cat "$build/lab/kernel-$k" 2>/dev/null), ${AUXTRIG_LAB_ACCEL:-$(cat "$build/lab/kvm-works" 2>/dev/null | sed 's/yes/kvm/;s/no/tcg/')}, ${secs}s):"
	sed "s#^\(  [A-Z]*  \)#\1lab-$k/#" "$build/lab/results-$k.txt"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$build/lab/results-$k.txt" | tail -1)
	if [ -n "$line" ]; then
		passed=$((passed + $(sed 's/ passed.*//' <<<"$line")))
		failed=$((failed + $(sed 's/.* passed, \([0-9]*\) failed.*/\1/' <<<"$line")))
	else
		failed=$((failed + 1))
		echo "  FAIL  lab-$k: the guest did not run its suite (exit $rc)"
	fi
	[ "$rc" = 0 ] || [ -n "$line" ] || true
done
echo "$passed $failed" >"$build/lab/totals"
echo
echo "lab: $passed passed, $failed failed"
[ $failed -eq 0 ]
