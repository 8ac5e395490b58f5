#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Runs the fuzz targets of a fuzz build (make fuzz-build): for each target,
# first every crasher in tests/fuzz/crashers/<name>/ once (a crash there is a
# regression), then libFuzzer for SECONDS on the working corpus
# BUILD/corpus/<name>/, seeded from tests/fuzz/corpus/<name>/ and the files
# tests/fuzz/corpus/<name>.seeds lists. A crash, leak, sanitizer report or
# timeout fails the target; the input is left in BUILD/crashes/<name>/.
#
# usage: tests/fuzz/run.sh BUILD SECONDS [NAME...]
#        tests/fuzz/run.sh --one BUILD SECONDS NAME   (one target, for tests/run.sh)
set -u
one=
[ "${1:-}" = --one ] && { one=1; shift; }
[ $# -ge 2 ] || { echo "usage: $0 BUILD SECONDS [NAME...]" >&2; exit 2; }
build=$(cd "$1" && pwd) secs=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

# Leaks inside third-party libraries, and nothing else, are not reported.
export LSAN_OPTIONS="suppressions=$top/tests/sanitizer/lsan.supp:print_suppressions=0"

# Targets that write files (repair) do it on tmpfs when there is one: fsync() is free there.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		n=${f#tests/fuzz/fuzz_}
		names+=("${n%.c}")
	done
fi

# Prints what happened; returns 0 when the target held.
fuzz_one() {
	local name=$1 bin=$build/fuzz/fuzz_$1 dir=tests/fuzz/corpus/$1
	local work=$build/corpus/$1 seeds=$build/seeds/$1 crashes=$build/crashes/$1 log=$build/logs/fuzz_$1.log
	local -a flags=(-error_exitcode=1 -timeout_exitcode=1 -timeout=20 -rss_limit_mb=2048 -close_fd_mask=3
		-print_final_stats=1)
	local -a replay=()

	[ -x "$bin" ] || { echo "fuzz $name: $bin is not built (make fuzz-build)"; return 1; }
	mkdir -p "$work" "$crashes" "$(dirname "$log")"
	rm -rf "$seeds" && mkdir -p "$seeds"
	if [ -f "$dir.seeds" ]; then
		# One path or glob a line, relative to the project root; # starts a comment.
		while read -r pat; do
			pat=${pat%%#*}
			[ -n "${pat// /}" ] || continue
			for f in $pat; do
				[ -f "$f" ] && cp "$f" "$seeds/$(echo "$f" | sed 's|^\(\.\./\)*||; s|/|_|g')"
			done
		done <"$dir.seeds"
	fi
	# FUZZ_SEED: the same inputs in the same order on every machine (make test sets it, so that a
	# test run fails on a bug it found, not on luck); unset, libFuzzer picks a seed (make fuzz).
	[ -n "${FUZZ_SEED:-}" ] && flags+=("-seed=$FUZZ_SEED")
	[ -f "$dir.dict" ] && flags+=("-dict=$dir.dict")
	[ -f "$dir.options" ] && read -r -a extra <"$dir.options" && flags+=("${extra[@]}")

	for f in tests/fuzz/crashers/"$name"/*; do
		[ -f "$f" ] && replay+=("$f")
	done
	if [ ${#replay[@]} -gt 0 ]; then
		if ! "$bin" "${flags[@]}" "${replay[@]}" >"$log" 2>&1; then
			echo "fuzz $name: a crasher of tests/fuzz/crashers/$name/ fails again:"
			grep -E 'Running:|ERROR|SUMMARY|runtime error' "$log" | tail -n 8 | sed 's/^/    /'
			echo "    (log: $log)"
			return 1
		fi
	fi
	[ "$secs" -gt 0 ] || { echo "fuzz $name: ${#replay[@]} crashers replayed"; return 0; }

	local -a corpora=("$work")
	[ -d "$dir" ] && corpora+=("$dir")
	corpora+=("$seeds")
	if "$bin" "${flags[@]}" -max_total_time="$secs" -artifact_prefix="$crashes/" "${corpora[@]}" >>"$log" 2>&1; then
		printf 'fuzz %s: %s runs in %ss, %s coverage edges, corpus %s files; %d crashers replayed\n' "$name" \
			"$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)" "$secs" \
			"$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)" \
			"$(find "$work" -type f | wc -l)" ${#replay[@]}
		return 0
	fi
	echo "fuzz $name: found a failing input:"
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written|Timeout|out-of-memory' "$log" | head -n 8 | sed 's/^/    /'
	echo "    reproduce: $bin FILE (the input in $crashes/); once fixed, keep it in tests/fuzz/crashers/$name/"
	echo "    (log: $log)"
	return 1
}

if [ -n "$one" ]; then
	fuzz_one "${names[0]}"
	exit
fi
failed=()
for n in "${names[@]}"; do
	fuzz_one "$n" || failed+=("$n")
done
echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of ${#names[@]} targets failed: ${failed[*]}"
	exit 1
fi
echo "fuzz: ${#names[@]} targets held for ${secs}s each"
