#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Runs every test: the cmocka unit binaries (no privileges), the kernel
# tests in tests/kernel/ (root, real kernel) and, as root, the lab: the
# kernel tests and tests/lab/ in guests booted from Debian's 6.12 and 6.1
# kernels with an emulated trace unit (tests/lab/run.sh). A kernel test exits
# 0 (pass), 77 (skip: names why on stderr) or anything else (fail). Under
# CI=true a skip counts as a failure: CI is root on a machine that can run
# them all.
#
# usage: tests/run.sh [--unit-only|--kernel-only|--lab-only|--lab-guest] [--logs DIR] BUILD_DIR
#   --lab-guest   what runs inside a lab guest: the kernel tests, then tests/lab/test_*.sh
#   AUXTRIG_TEST_FILTER=GLOB   only tests whose name matches GLOB (extglob: 'test_record_*', '@(test_a|test_b)')
#   AUXTRIG_LAB=0              leave the lab out of a full run (a failure under CI=true)
#   AUXTRIG_KNOWN_FAILURES=1   in the lab guests, also run tests/lab/known_*.sh (known failures)
set -u
shopt -s extglob
mode=all
logs=
while [ $# -gt 0 ]; do
	case "$1" in
	--unit-only) mode=unit; shift ;;
	--kernel-only) mode=kernel; shift ;;
	--lab-only) mode=lab; shift ;;
	--lab-guest) mode=guest; shift ;;
	--logs) logs=$2; shift 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
logs=${logs:-$build/tests/logs}
export AUXTRIG_BUILD="$build" AUXTRIG_TOP="$top"

passed=0 failed=0 skipped=0
failures=()

run_one() {
	local name=$1; shift
	local log="$logs/$name.log"
	# shellcheck disable=SC2053
	[ -z "${AUXTRIG_TEST_FILTER:-}" ] || [[ ${name##*/} == $AUXTRIG_TEST_FILTER ]] || return 0
	mkdir -p "$(dirname "$log")"
	# Every test under a timeout: a hang fails it (exit 124) instead of stopping the run. A guard,
	# not a speed bound: the lab's emulated guests are slow.
	timeout -k 10 "${AUXTRIG_TEST_TIMEOUT:-1800}" "$@" >"$log" 2>&1 </dev/null
	local rc=$?
	[ $rc -eq 124 ] && echo "(killed after AUXTRIG_TEST_TIMEOUT=${AUXTRIG_TEST_TIMEOUT:-1800}s)" >>"$log"
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1)); printf '  PASS  %s\n' "$name"
	elif [ $rc -eq 77 ] && [ "${CI:-}" != true ]; then
		skipped=$((skipped + 1)); printf '  SKIP  %s: %s\n' "$name" "$(tail -n 1 "$log")"
	else
		failed=$((failed + 1)); failures+=("$name")
		[ $rc -eq 77 ] && echo "(skipped under CI=true, which counts as a failure)" >>"$log"
		printf '  FAIL  %s (exit %d), log %s:\n' "$name" $rc "$log"
		tail -n 30 "$log" | sed 's/^/        /'
	fi
}

if [ $mode = all ] || [ $mode = unit ]; then
	echo "unit tests:"
	for t in "$build"/tests/test_*; do
		[ -x "$t" ] && [ "${t%.d}" = "$t" ] || continue
		run_one "unit/$(basename "$t")" "$t"
	done
	for t in "$top"/tests/unit/test_*.sh; do
		[ -f "$t" ] || continue
		run_one "unit/$(basename "$t" .sh)" bash "$t"
	done
fi
if [ $mode = all ] || [ $mode = kernel ] || [ $mode = guest ]; then
	echo "kernel tests:"
	for t in "$build"/tests/kernel/test_*; do
		[ -x "$t" ] && [ "${t%.d}" = "$t" ] || continue
		run_one "kernel/$(basename "$t")" "$t"
	done
	for t in "$top"/tests/kernel/test_*.sh; do
		[ -f "$t" ] || continue
		run_one "kernel/$(basename "$t" .sh)" bash "$t"
	done
fi
if [ $mode = guest ]; then
	echo "lab tests:"
	for t in "$top"/tests/lab/test_*.sh; do
		[ -f "$t" ] || continue
		run_one "lab/$(basename "$t" .sh)" bash "$t"
	done
	# Tests of what the lab shows broken, until it is fixed (tests/lab/known_*.sh).
	if [ "${AUXTRIG_KNOWN_FAILURES:-0}" = 1 ]; then
		for t in "$top"/tests/lab/known_*.sh; do
			[ -f "$t" ] || continue
			run_one "lab/$(basename "$t" .sh)" bash "$t"
		done
	fi
fi
if [ $mode = lab ] || { [ $mode = all ] && [ "$(id -u)" = 0 ]; }; then
	echo
	if [ "${AUXTRIG_LAB:-1}" = 0 ]; then
		echo "lab: not run (AUXTRIG_LAB=0)"
		if [ "${CI:-}" = true ]; then
			failed=$((failed + 1)); failures+=(lab)
		else
			skipped=$((skipped + 1))
		fi
	else
		echo "lab (tests/lab/run.sh: the kernel tests and the lab tests in Debian's 6.12 and 6.1 kernels):"
		"$top/tests/lab/run.sh" "$build"
		if read -r lp lf <"$build/lab/totals" 2>/dev/null; then
			passed=$((passed + lp)); failed=$((failed + lf))
			[ "$lf" -eq 0 ] || failures+=(lab)
		else
			failed=$((failed + 1)); failures+=(lab)
		fi
	fi
fi

echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
