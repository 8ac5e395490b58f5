#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Runs every test: the cmocka unit binaries (no privileges) and the kernel
# tests in tests/kernel/ (root, real kernel). A kernel test exits 0 (pass),
# 77 (skip: names why on stderr) or anything else (fail). Under CI=true a
# skip counts as a failure: CI is root on a machine that can run them all.
#
# With --asan DIR it runs the unit tests again, and the kernel tests named by
# --asan-kernel-tests, on the ASan+UBSan build in DIR (make asan-build); any
# sanitizer report fails the test, whatever its exit status. With --fuzz DIR
# it replays each fuzz target's crashers and fuzzes it --fuzz-time seconds
# (tests/fuzz/run.sh). One summary line counts them all.
#
# usage: tests/run.sh [--unit-only|--kernel-only] [--sanitized-only]
#                     [--asan DIR [--asan-kernel-tests "test_a.sh test_b ..."]]
#                     [--fuzz DIR [--fuzz-time SECONDS]] BUILD_DIR
set -u
mode=all asan= asan_ktests= fuzz= fuzz_time=15 plain=1
while [ $# -gt 1 ]; do
	case "$1" in
	--unit-only) mode=unit; shift ;;
	--kernel-only) mode=kernel; shift ;;
	--sanitized-only) plain=; shift ;;
	--asan) asan=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--asan-kernel-tests) asan_ktests=$2; shift 2 ;;
	--fuzz) fuzz=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--fuzz-time) fuzz_time=$2; shift 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
export AUXTRIG_BUILD="$build" AUXTRIG_TOP="$top"

passed=0 failed=0 skipped=0
failures=()

run_one() {
	local name=$1; shift
	local log="$build/tests/logs/$name.log" san="$build/tests/logs/$name.san"
	mkdir -p "$(dirname "$log")"
	rm -rf "$san" && mkdir -p "$san"
	# Sanitizer reports go to files, so that a test that expects a failing
	# exit (or swallows stderr) cannot hide one.
	ASAN_OPTIONS="log_path=$san/asan:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1" \
	UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1:halt_on_error=1" \
	LSAN_OPTIONS="suppressions=$top/tests/sanitizer/lsan.supp:print_suppressions=0" \
		"$@" >"$log" 2>&1
	local rc=$?
	if [ -n "$(ls -A "$san")" ]; then
		{ echo "sanitizer reports:"; cat "$san"/*; } >>"$log"
		[ $rc -eq 0 ] || [ $rc -eq 77 ] && echo "(the test passed, but a sanitizer reported)" >>"$log"
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

# The unit tests of build $1, named with prefix $2.
unit_tests() {
	local b=$1 prefix=$2 t
	for t in "$b"/tests/test_*; do
		[ -x "$t" ] && [ "${t%.d}" = "$t" ] || continue
		AUXTRIG_BUILD=$b run_one "${prefix}unit/$(basename "$t")" "$t"
	done
	for t in "$top"/tests/unit/test_*.sh; do
		[ -f "$t" ] || continue
		AUXTRIG_BUILD=$b run_one "${prefix}unit/$(basename "$t" .sh)" bash "$t"
	done
}

# The kernel tests of build $1, named with prefix $2; $3: only these (names, .sh for scripts).
kernel_tests() {
	local b=$1 prefix=$2 only=${3:-} t n
	for t in "$b"/tests/kernel/test_* "$top"/tests/kernel/test_*.sh; do
		case $t in
		*.sh) [ -f "$t" ] || continue; n=$(basename "$t") ;;
		*) [ -x "$t" ] && [ "${t%.d}" = "$t" ] || continue; n=$(basename "$t") ;;
		esac
		[ -z "$only" ] || [[ " $only " == *" $n "* ]] || continue
		case $t in
		*.sh) AUXTRIG_BUILD=$b run_one "${prefix}kernel/${n%.sh}" bash "$t" ;;
		*) AUXTRIG_BUILD=$b run_one "${prefix}kernel/$n" "$t" ;;
		esac
	done
}

if [ -n "$plain" ]; then
	if [ $mode != kernel ]; then
		echo "unit tests:"
		unit_tests "$build" ""
	fi
	if [ $mode != unit ]; then
		echo "kernel tests:"
		kernel_tests "$build" ""
	fi
fi
if [ -n "$asan" ]; then
	if [ $mode != kernel ]; then
		echo "unit tests on the ASan+UBSan build ($asan):"
		unit_tests "$asan" "asan/"
	fi
	if [ $mode != unit ] && [ -n "$asan_ktests" ]; then
		echo "kernel tests on the ASan+UBSan build:"
		kernel_tests "$asan" "asan/" "$asan_ktests"
	fi
fi
if [ -n "$fuzz" ] && [ $mode != kernel ]; then
	echo "fuzz targets (crashers replayed, then ${fuzz_time}s each; make fuzz runs longer):"
	for f in "$top"/tests/fuzz/fuzz_*.c; do
		[ -f "$f" ] || continue
		n=$(basename "$f" .c)
		run_one "fuzz/${n#fuzz_}" "$top/tests/fuzz/run.sh" --one "$fuzz" "$fuzz_time" "${n#fuzz_}"
		tail -n 1 "$build/tests/logs/fuzz/${n#fuzz_}.log" | sed 's/^/        /'
	done
fi

echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
