#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The reading commands never block on a named pipe (user/sys/input_file.c):
# script (every mode, -j 2 too), report and repair on a FIFO nobody writes
# answer at once, in one line; a FIFO somebody writes is read as a pipe, as
# `-i -` is, with the same output as the file; --symfs with a FIFO where a
# binary should be does not hang. A hang is a failure (exit 124 of timeout).
# Needs no privileges.
set -u
top=${AUXTRIG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AUXTRIG_BUILD:-$top/build}
auxtrig=$build/auxtrig
file=$top/tests/fuzz/corpus/repair/uprobe
bad=0
fail() { echo "FAIL: $*"; bad=1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/auxtrig-input-file.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fifo=$dir/fifo
mkfifo "$fifo"

# Nobody writes: an answer within seconds (a blocking open would wait forever), one line, exit 1.
for args in "script" "script -j 2" "script --summary" "script --format=chrome" "script --windows" "report"; do
	# shellcheck disable=SC2086
	err=$(timeout 10 "$auxtrig" $args -i "$fifo" 2>&1 >/dev/null)
	rc=$?
	[ $rc = 124 ] && { fail "$args -i FIFO (nobody writing) hangs"; continue; }
	[ $rc = 1 ] || fail "$args -i FIFO (nobody writing): exit $rc, expected 1"
	[ "$err" = "auxtrig: $fifo: a FIFO that gave nothing: nobody was writing to it (start its writer first)" ] ||
		fail "$args -i FIFO (nobody writing) said: $err"
done
for args in "repair" "repair -n"; do
	# shellcheck disable=SC2086
	err=$(timeout 10 "$auxtrig" $args "$fifo" 2>&1 >/dev/null)
	rc=$?
	[ $rc = 124 ] && { fail "$args FIFO hangs"; continue; }
	[ $rc = 1 ] || fail "$args FIFO: exit $rc, expected 1"
	[ "$(wc -l <<<"$err")" = 1 ] && grep -q "is a FIFO, not a regular file (repair changes a file in place" <<<"$err" ||
		fail "$args FIFO said: $err"
done

# Somebody writes: read as a pipe, the same output as from the file and from -i -.
for args in "script" "script -j 2" "script --summary" "report"; do
	# shellcheck disable=SC2086
	want=$("$auxtrig" $args -i "$file" 2>&1 | sed "s|$file|INPUT|g") || fail "$args -i FILE failed"
	cat "$file" >"$fifo" &
	# shellcheck disable=SC2086
	got=$(timeout 20 "$auxtrig" $args -i "$fifo" 2>&1 | sed "s|$fifo|INPUT|g")
	wait
	[ "$got" = "$want" ] || fail "$args -i FIFO (written) differs from the file: $(diff <(echo "$want") <(echo "$got") | head -5)"
	# shellcheck disable=SC2086
	got=$(timeout 20 "$auxtrig" $args -i - <"$file" 2>&1 | sed -e "s|standard input|INPUT|g" -e "s|Summary of -:|Summary of INPUT:|")
	[ "$got" = "$want" ] || fail "$args -i - differs from the file: $(diff <(echo "$want") <(echo "$got") | head -5)"
done

# --symfs: FIFOs where the binaries of a call-stack recording should be are passed over, never
# opened blocking (elf_image.c); the call stacks then name no symbols, as for a missing binary.
cs=$(ls "$top"/tests/fuzz/corpus/script/* | head -n 1)
n=0
for bin in $(strings "$cs" | grep '^/[^ ]*$' | sort -u); do
	mkdir -p "$dir/symfs$(dirname "$bin")" && mkfifo "$dir/symfs$bin" 2>/dev/null && n=$((n + 1))
done
[ $n -gt 0 ] || fail "no binary paths in $cs"
timeout 20 "$auxtrig" script -i "$cs" --symfs "$dir/symfs" >/dev/null 2>&1
[ $? = 124 ] && fail "script --symfs with FIFOs for the binaries hangs"
[ $bad = 0 ] && echo ok
exit $bad
