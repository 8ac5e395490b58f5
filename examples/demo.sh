#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The demo of `make run` (docs/usage.md): record only what happens inside openat() calls of
# examples/openat_demo, then show it with perf script.
set -eu
build=${1:-build}
out=$build/demo.data
echo "+ auxtrig record -w syscall:openat -e sched:sched_switch,syscalls:sys_enter_read -o $out -f -- $build/examples/openat_demo -r 3"
"$build/auxtrig" record -w syscall:openat -e sched:sched_switch,syscalls:sys_enter_read \
	-o "$out" -f -- "$build/examples/openat_demo" -r 3
echo
echo "+ auxtrig script --format=chrome -i $out > $build/demo.json"
"$build/auxtrig" script --format=chrome -i "$out" >"$build/demo.json"
echo "(the timeline: open $build/demo.json in ui.perfetto.dev, chrome://tracing or speedscope)"
echo
echo "+ perf script -i $out"
if command -v perf >/dev/null; then
	perf script -i "$out"
else
	echo "(perf is not installed: 'make deps' installs linux-perf)"
fi
