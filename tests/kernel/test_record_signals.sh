#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SIGINT / SIGTERM mid-run: auxtrig stops, drains, finishes the file, and perf reads it.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

for sig in INT TERM; do
	"$AUXTRIG" record -w syscall:openat -o "$tmp/$sig.data" -- "$DEMO" -r 100000 >/dev/null 2>"$tmp/$sig.err" &
	pid=$!
	# Wait until windows are being written, then interrupt.
	wait_size "$tmp/$sig.data" 4096 $pid
	kill -s $sig $pid
	wait $pid
	rc=$?
	assert_eq $rc 0 "exit code after SIG$sig"
	grep -q 'auxtrig record:.*windows' "$tmp/$sig.err" || fail "no summary after SIG$sig: $(cat "$tmp/$sig.err")"
	assert_perf_reads_cleanly "$tmp/$sig.data"
	n=$(pscript "$tmp/$sig.data" | grep -c 'sys_enter_openat:')
	[ "$n" -gt 0 ] || fail "nothing recorded before SIG$sig"
	pgrep -f "openat_demo -r 100000" && fail "the workload outlived auxtrig after SIG$sig"
done
echo ok
