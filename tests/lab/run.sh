#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The lab: boots each lab kernel (tests/lab/vm) and runs in it, as root, the whole kernel suite
# (tests/kernel/) and the lab tests (tests/lab/test_*.sh, which load the emulated trace units).
# The arm64 guests (arm64-6.12, arm64-7.x) run the arm64 build (make arm64-build): its unit tests
# (in the arm64-6.12 guest: they do not depend on the kernel), the kernel tests of
# ARM64_KERNEL_TESTS below and the lab tests marked for arm64, with the emulated Arm units
# (tests/lab/vm --arm-units) when tests/lab/module has them.
# The guests run side by side (one emulated CPU thread each, so two on a 2-core machine); each
# guest's results are printed as it ends, then one line with the totals. A guest that cannot run
# its suite counts as one failure.
#
# usage: tests/lab/run.sh BUILD_DIR [ARM64_BUILD_DIR]
#   AUXTRIG_LAB_KERNELS   the guests (default "6.12 6.1 arm64-6.12 arm64-7.x"), longest first
#   AUXTRIG_LAB_JOBS      guests at a time (default 2)
#   AUXTRIG_LAB_TESTS     a glob of test names to run in the guests (default: all), e.g. 'test_lab_*'
#   AUXTRIG_ARM64_KERNEL_TESTS   the kernel tests of both arm64 guests (default: a subset each; "all": every one)
#   AUXTRIG_ARM64_UNIT_GUEST     the arm64 guest that runs the unit tests (default arm64-6.12)
# ARM64_BUILD_DIR defaults to build-arm64 beside the tree. Totals go to BUILD_DIR/lab/totals
# ("PASSED FAILED") for tests/run.sh.
set -u
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
arm64_build=${2:-$top/build-arm64}
kernels=${AUXTRIG_LAB_KERNELS:-6.12 6.1 arm64-6.12 arm64-7.x}
jobs=${AUXTRIG_LAB_JOBS:-2}
mkdir -p "$build/lab"

# The kernel tests the arm64 guests run in make test (docs/lab.md says why these): the ones where
# the architecture shows (system call numbers and argument registers, uprobe/uretprobe and kprobe
# registers, breakpoints, frame-pointer call stacks, the verifier and JIT on the condition
# programs, trigger programs compiled for arm64, AUX groups), each in one of the two guests (the
# 6.12 one also runs the unit tests); the whole suite in both arm64 guests does not fit in CI's
# 90 minutes beside the x86 guests. AUXTRIG_ARM64_KERNEL_TESTS="..." runs those in both, "all"
# every one.
ARM64_KERNEL_TESTS_6_12="test_probe test_gate_points test_record_points.sh test_record_uprobe.sh"
ARM64_KERNEL_TESTS_7_X="test_aux_group_kernel test_trigger_prog.sh test_record_callchain.sh test_record_strings.sh"
if [ -n "${AUXTRIG_ARM64_KERNEL_TESTS:-}" ]; then
	ARM64_KERNEL_TESTS_6_12=$AUXTRIG_ARM64_KERNEL_TESTS ARM64_KERNEL_TESTS_7_X=$AUXTRIG_ARM64_KERNEL_TESTS
fi
# shellcheck disable=SC2116,SC2086
ARM64_KERNEL_TESTS_6_12=$(echo $ARM64_KERNEL_TESTS_6_12) ARM64_KERNEL_TESTS_7_X=$(echo $ARM64_KERNEL_TESTS_7_X)
[ "$ARM64_KERNEL_TESTS_6_12" = all ] && ARM64_KERNEL_TESTS_6_12= ARM64_KERNEL_TESTS_7_X=
arm64_unit_guest=${AUXTRIG_ARM64_UNIT_GUEST:-arm64-6.12}

run_guest() { # GUEST: the suite in that guest, output to lab/results-GUEST.txt
	local k=$1 start rc unit=() args=() b=$build
	start=$(date +%s)
	case $k in
	arm64-*)
		b=$arm64_build
		if [ ! -x "$b/auxtrig" ]; then
			echo "no arm64 build in $b (make arm64-build)" >"$build/lab/results-$k.txt"
			echo "125 0" >"$build/lab/status-$k"
			return
		fi
		args=(--arch arm64 --kernel "${k#arm64-}")
		ls "$top"/tests/lab/module/*.c 2>/dev/null | grep -qv '/auxtrig_pt\.c$' && unit=(--arm-units)
		;;
	*)
		args=(--kernel "$k")
		[ -d "$top/tests/lab/module" ] && unit=(--trace-unit)
		;;
	esac
	AUXTRIG_GUEST_UNIT_TESTS=$([ "$k" = "$arm64_unit_guest" ] && echo 1 || echo 0) \
	AUXTRIG_GUEST_KERNEL_TESTS=$(case $k in arm64-6.12) echo "$ARM64_KERNEL_TESTS_6_12" ;;
		arm64-7.x) echo "$ARM64_KERNEL_TESTS_7_X" ;; esac) \
	AUXTRIG_TEST_FILTER=${AUXTRIG_LAB_TESTS:-} CI=true "$top/tests/lab/vm" "${args[@]}" --build "$b" "${unit[@]}" -- \
		"$top/tests/run.sh" --lab-guest --logs "$b/tests/logs/lab-$k" "$b" \
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
	case $k in
	arm64-*) kver=$(cat "$arm64_build/lab/kernel-${k#arm64-}" 2>/dev/null) accel=tcg ;;
	*) kver=$(cat "$build/lab/kernel-$k" 2>/dev/null)
	   accel=${AUXTRIG_LAB_ACCEL:-$(cat "$build/lab/kvm-works" 2>/dev/null | sed 's/yes/kvm/;s/no/tcg/')} ;;
	esac
	echo "lab guest $k ($kver, $accel, ${secs}s):"
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
