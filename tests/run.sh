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
# With --asan DIR it runs the unit tests again, and the kernel tests named by
# --asan-kernel-tests, on the ASan+UBSan build in DIR (make asan-build); any
# sanitizer report fails the test, whatever its exit status. With --fuzz DIR
# it replays each fuzz target's crashers and fuzzes it --fuzz-time seconds
# (tests/fuzz/run.sh). These come after the host's kernel tests, before the
# lab; one summary line counts them all. The unit tests run twice: as they
# are, and with AUXTRIG_CAPS_OFF=all (every optional capability of the
# machine reported missing, man auxtrig-probe), named caps-off/unit/....
#
# usage: tests/run.sh [--unit-only|--kernel-only|--lab-only|--lab-guest] [--sanitized-only] [--logs DIR]
#                     [--asan DIR [--asan-kernel-tests "test_a.sh test_b ..."] [--asan-exclude "test_c ..."]]
#                     [--fuzz DIR [--fuzz-time SECONDS]] [--arm64 DIR] BUILD_DIR
#   --arm64 DIR   the arm64 build (make arm64-build) the lab's arm64 guests run (default build-arm64)
#   --sanitized-only  only the --asan and --fuzz parts
#   --lab-guest   what runs inside a lab guest: the kernel tests, then the tests/lab/test_*.sh of the
#                 guest's architecture ($AUXTRIG_LAB_ARCH: a lab test names the architectures it is
#                 for on a line "# lab-arch: x86 arm64"; without one, x86); in an arm64 guest (the
#                 cross build) the unit tests first (once: not the AUXTRIG_CAPS_OFF=all pass), unless
#                 AUXTRIG_GUEST_UNIT_TESTS=0
#   AUXTRIG_GUEST_KERNEL_TESTS="test_a test_b.sh ..."   in a guest, only these kernel tests
#   AUXTRIG_TEST_FILTER=GLOB   only tests whose name matches GLOB (extglob: 'test_record_*', '@(test_a|test_b)')
#   AUXTRIG_LAB=0              leave the lab out of a full run (a failure under CI=true)
#   AUXTRIG_KNOWN_FAILURES=1   in the lab guests, also run tests/lab/known_*.sh (known failures)
set -u
shopt -s extglob
mode=all
logs=
plain=1 asan= asan_ktests= asan_exclude= fuzz= fuzz_time=10 arm64=
while [ $# -gt 0 ]; do
	case "$1" in
	--unit-only) mode=unit; shift ;;
	--kernel-only) mode=kernel; shift ;;
	--lab-only) mode=lab; shift ;;
	--lab-guest) mode=guest; shift ;;
	--logs) logs=$2; shift 2 ;;
	--sanitized-only) plain=; shift ;;
	--asan) asan=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--asan-kernel-tests) asan_ktests=$2; shift 2 ;;
	--asan-exclude) asan_exclude=$2; shift 2 ;;
	--fuzz) fuzz=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--fuzz-time) fuzz_time=$2; shift 2 ;;
	--arm64) arm64=$(cd "$2" 2>/dev/null && pwd) || arm64=$2; shift 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
logs=${logs:-$build/tests/logs}
export AUXTRIG_BUILD="$build" AUXTRIG_TOP="$top"

passed=0 failed=0 skipped=0
failures=() flaky=()

run_one() {
	local name=$1; shift
	local log="$logs/$name.log" san="$logs/$name.san"
	# shellcheck disable=SC2053
	[ -z "${AUXTRIG_TEST_FILTER:-}" ] || [[ ${name##*/} == $AUXTRIG_TEST_FILTER ]] || return 0
	mkdir -p "$(dirname "$log")"
	rm -rf "$san" && mkdir -p "$san"
	# Every test under a timeout: a hang fails it (exit 124) instead of stopping the run. A guard,
	# not a speed bound: the lab's emulated guests are slow. Sanitizer reports (of the --asan
	# builds) go to files, so that a test that expects a failing exit, or swallows stderr,
	# cannot hide one; leaks inside third-party libraries are suppressed (tests/sanitizer/).
	ASAN_OPTIONS="log_path=$san/asan:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1" \
	UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1:halt_on_error=1" \
	LSAN_OPTIONS="suppressions=$top/tests/sanitizer/lsan.supp:print_suppressions=0" \
		timeout -k 10 "${AUXTRIG_TEST_TIMEOUT:-1800}" "$@" >"$log" 2>&1 </dev/null
	local rc=$?
	# In a lab guest (TCG, 20-50 times slower, timing unlike any real machine) a test that failed
	# runs once more; passing then, it is reported FLAKY with its first log kept, never silently.
	if [ $mode = guest ] && [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -z "$(ls -A "$san")" ]; then
		mv "$log" "$log.first"
		timeout -k 10 "${AUXTRIG_TEST_TIMEOUT:-1800}" "$@" >"$log" 2>&1 </dev/null
		local rc2=$?
		if [ $rc2 -eq 0 ]; then
			flaky+=("$name")
			printf '  FLAKY  %s: failed (exit %d: %s), passed when run again; first log %s\n' "$name" $rc \
				"$(grep -m1 FAIL "$log.first" | cut -c1-160)" "$log.first"
		fi
		rc=$rc2
	fi
	[ $rc -eq 124 ] && echo "(killed after AUXTRIG_TEST_TIMEOUT=${AUXTRIG_TEST_TIMEOUT:-1800}s)" >>"$log"
	if [ -n "$(ls -A "$san")" ]; then
		{ echo "sanitizer reports:"; cat "$san"/*; } >>"$log"
		{ [ $rc -eq 0 ] || [ $rc -eq 77 ]; } && echo "(the test passed, but a sanitizer reported)" >>"$log"
		rc=99
	fi
	rm -rf "$san"
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

# The unit tests of build $1, named with prefix $2; $3: names to leave out.
unit_tests() {
	local b=$1 prefix=$2 skip=${3:-} t n
	for t in "$b"/tests/test_* "$top"/tests/unit/test_*.sh; do
		case $t in
		*.sh) [ -f "$t" ] || continue ;;
		*) [ -x "$t" ] && [ "${t%.d}" = "$t" ] || continue ;;
		esac
		n=$(basename "$t" .sh)
		[[ " $skip " == *" $n "* ]] && continue
		case $t in
		*.sh) AUXTRIG_BUILD=$b run_one "${prefix}unit/$n" bash "$t" ;;
		*) AUXTRIG_BUILD=$b run_one "${prefix}unit/$n" "$t" ;;
		esac
	done
}

# The kernel tests of build $1, named with prefix $2; $3: only these (names, .sh for scripts).
kernel_tests() {
	local b=$1 prefix=$2 only=${3:-} t n
	for t in "$b"/tests/kernel/test_* "$top"/tests/kernel/test_*.sh; do
		case $t in
		*.sh) [ -f "$t" ] || continue ;;
		*) [ -x "$t" ] && [ "${t%.d}" = "$t" ] || continue ;;
		esac
		n=$(basename "$t")
		[ -z "$only" ] || [[ " $only " == *" $n "* ]] || continue
		case $t in
		*.sh) AUXTRIG_BUILD=$b run_one "${prefix}kernel/${n%.sh}" bash "$t" ;;
		*) AUXTRIG_BUILD=$b run_one "${prefix}kernel/$n" "$t" ;;
		esac
	done
}

guest_arch=${AUXTRIG_LAB_ARCH:-x86}
if [ -n "$plain" ] && { [ $mode = all ] || [ $mode = unit ] ||
	{ [ $mode = guest ] && [ "$guest_arch" != x86 ] && [ "${AUXTRIG_GUEST_UNIT_TESTS:-1}" != 0 ]; }; }; then
	echo "unit tests:"
	unit_tests "$build" ""
	# (Not in an arm64 guest: the capability seam is the same code on every architecture, and the
	# host's run checks it; the guest's time goes to what differs, docs/lab.md.)
	[ $mode = guest ] || {
	# Once more with every optional capability (hardware breakpoints, kprobes, fentry, cgroup v2,
	# AUX PMUs, BTF) reported missing (include/auxtrig/sys/caps.h): a unit test passes on a machine
	# that offers them and on one that does not, never because of what this one offers.
	echo "unit tests with every optional capability reported missing (AUXTRIG_CAPS_OFF=all):"
	AUXTRIG_CAPS_OFF=all unit_tests "$build" "caps-off/"
	}
fi
if [ -n "$plain" ] && { [ $mode = all ] || [ $mode = kernel ] || [ $mode = guest ]; }; then
	echo "kernel tests:"
	if [ $mode = guest ] && [ -n "${AUXTRIG_GUEST_KERNEL_TESTS:-}" ]; then
		echo "  (a subset: $AUXTRIG_GUEST_KERNEL_TESTS)"
		kernel_tests "$build" "" "$AUXTRIG_GUEST_KERNEL_TESTS"
	else
		kernel_tests "$build" ""
	fi
fi
if [ -n "$asan" ]; then
	if [ $mode = all ] || [ $mode = unit ]; then
		echo "unit tests on the ASan+UBSan build ($asan):"
		unit_tests "$asan" "asan/" "$asan_exclude"
	fi
	if { [ $mode = all ] || [ $mode = kernel ]; } && [ -n "$asan_ktests" ] && [ "$(id -u)" = 0 ]; then
		echo "kernel tests on the ASan+UBSan build:"
		kernel_tests "$asan" "asan/" "$asan_ktests"
	fi
fi
if [ -n "$fuzz" ] && { [ $mode = all ] || [ $mode = unit ]; }; then
	echo "fuzz targets (crashers replayed, then ${fuzz_time}s each; make fuzz runs longer):"
	for f in "$top"/tests/fuzz/fuzz_*.c; do
		[ -f "$f" ] || continue
		n=$(basename "$f" .c)
		n=${n#fuzz_}
		FUZZ_SEED=${FUZZ_SEED:-1} run_one "fuzz/$n" "$top/tests/fuzz/run.sh" --one "$fuzz" "$fuzz_time" "$n"
		[ -f "$logs/fuzz/$n.log" ] && tail -n 1 "$logs/fuzz/$n.log" | sed 's/^/        /'
	done
fi
if [ $mode = guest ]; then
	echo "lab tests ($guest_arch):"
	for t in "$top"/tests/lab/test_*.sh; do
		[ -f "$t" ] || continue
		archs=$(sed -n 's/^# lab-arch: *//p' "$t" | head -1)
		[[ " ${archs:-x86} " == *" $guest_arch "* ]] || continue
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
if [ $mode = lab ] || { [ $mode = all ] && [ -n "$plain" ] && [ "$(id -u)" = 0 ]; }; then
	echo
	if [ "${AUXTRIG_LAB:-1}" = 0 ]; then
		echo "lab: not run (AUXTRIG_LAB=0)"
		if [ "${CI:-}" = true ]; then
			failed=$((failed + 1)); failures+=(lab)
		else
			skipped=$((skipped + 1))
		fi
	else
		echo "lab (tests/lab/run.sh: the kernel tests and the lab tests in Debian's x86 6.12 and 6.1 kernels and arm64 6.12 and 7.x ones):"
		"$top/tests/lab/run.sh" "$build" ${arm64:+"$arm64"}
		if read -r lp lf <"$build/lab/totals" 2>/dev/null; then
			passed=$((passed + lp)); failed=$((failed + lf))
			[ "$lf" -eq 0 ] || failures+=(lab)
		else
			failed=$((failed + 1)); failures+=(lab)
		fi
	fi
fi

echo
[ ${#flaky[@]} -gt 0 ] && echo "flaky (failed once, passed when run again): ${flaky[*]}"
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
