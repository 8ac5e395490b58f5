#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SIGINT / SIGTERM mid-run: auxtrig stops, drains, finishes the file, and perf reads it; the
# command's whole tree stops with it.
. "$(dirname "$0")/lib.sh"
need_root
need_perf

for sig in INT TERM; do
	record_bg "$tmp/$sig.err" -w syscall:openat -o "$tmp/$sig.data" -- "${with_id[@]}" "$tmp/$sig.id" "$DEMO" -r 100000 \
		>/dev/null
	pid=$aux
	# Wait until windows are being written, then interrupt. Armed, the file already holds the
	# header and the sideband (some 12 KiB): 64 KiB is windows.
	wait_size "$tmp/$sig.data" 65536 $pid
	kill -s $sig $pid
	wait $pid
	rc=$?
	assert_eq $rc 0 "exit code after SIG$sig"
	grep -q 'auxtrig record:.*windows' "$tmp/$sig.err" || fail "no summary after SIG$sig: $(cat "$tmp/$sig.err")"
	assert_perf_reads_cleanly "$tmp/$sig.data"
	n=$(pscript "$tmp/$sig.data" | grep -c 'sys_enter_openat:')
	[ "$n" -gt 0 ] || fail "nothing recorded before SIG$sig"
	# auxtrig reaps its command before it exits: this run's workload is gone, not merely dying
	! workload_running "$tmp/$sig.id" || fail "the workload outlived auxtrig after SIG$sig"
done

# SIGTERM stops everything the command started, not only the command (perf 6.1 leaves the rest
# running): a background child, one in its own session, an orphan whose parent has exited, and
# one that ignores SIGTERM (SIGKILL after the grace period).
cat >"$tmp/tree.sh" <<'EOF'
sleep 1000 &
echo $! >"$1/child"
setsid sleep 1000 &
echo $! >"$1/session"
sh -c 'sleep 1000 & echo $! >"$1/orphan"' sh "$1"
(trap '' TERM; exec sleep 1000) &
echo $! >"$1/stubborn"
echo started >"$1/started"
wait
EOF
alive() { [ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
record_bg "$tmp/tree.err" -w syscall:openat -o "$tmp/tree.data" -- sh "$tmp/tree.sh" "$tmp"
wait_for "$tmp/started" started $aux
kill -TERM $aux
wait $aux
rc=$?
left=
for what in child session orphan stubborn; do
	p=$(cat "$tmp/$what")
	if alive "$p"; then
		left="$left $what($p)"
		kill -KILL "$p"
	fi
done
[ -z "$left" ] || fail "after SIGTERM to auxtrig these processes the command started still run:$left"
assert_eq $rc 0 "exit code after SIGTERM with a process tree"
assert_perf_reads_cleanly "$tmp/tree.data"
echo ok
