#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Soak: a long flight-recorder recording at a high event rate, with periodic
# snapshots (--control 'snapshot' and SIGUSR2) and control commands (disable,
# enable, ping). Every SOAK_INTERVAL seconds the recorder's RSS, open fds and
# BPF objects (programs, maps, links it holds, from its fds' fdinfo) are
# sampled and printed as a table. Fails when one of them grows: the mean of
# the last quarter of the samples against the first quarter's (RSS: 10% + 4
# MiB tolerance; fds and BPF objects: none), when a command goes unanswered,
# when auxtrig does not end cleanly on 'stop' or leaves its command or a BPF
# object behind, or when perf cannot read the file. Root; not in make test.
#
# usage: tests/soak/soak.sh [BUILD]      (make soak; run it under nice -n 19 on a shared machine)
#   SOAK_SECONDS   duration (default 600)
#   SOAK_INTERVAL  seconds between samples (default 5)
#   SOAK_THREADS   workload threads, each calling getppid() as fast as it can (default 1)
#   SOAK_SNAPSHOT  flight recorder size per CPU (default 512K)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 2
secs=${SOAK_SECONDS:-600} interval=${SOAK_INTERVAL:-5} threads=${SOAK_THREADS:-1} size=${SOAK_SNAPSHOT:-512K}
AUXTRIG=$build/auxtrig STORM=$build/examples/syscall_storm
[ "$(id -u)" = 0 ] || { echo "soak: needs root (BPF and perf events)" >&2; exit 2; }
[ -x "$AUXTRIG" ] && [ -x "$STORM" ] || { echo "soak: $AUXTRIG or $STORM is not built (make)" >&2; exit 2; }
[ "$secs" -ge $((interval * 9)) ] || { echo "soak: SOAK_SECONDS must be at least 8 samples long" >&2; exit 2; }
# lib.sh: bpf_objects, and $tmp (removed by cleanup below)
AUXTRIG_BUILD=$build . "$top/tests/kernel/lib.sh"
aux=
cleanup() {
	[ -n "$aux" ] && kill -KILL "$aux" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
die() { echo "soak: FAIL: $*" >&2; exit 1; }

mkfifo -m 600 "$tmp/ctl" "$tmp/ack"
exec 5<>"$tmp/ctl" 6<>"$tmp/ack"
"$AUXTRIG" record -S"$size" -w syscall:getppid --control "fifo:$tmp/ctl,$tmp/ack" -o "$tmp/soak.data" \
	-- "$STORM" "$threads" 1000000000000000 < <(echo go) >/dev/null 2>"$tmp/err" &
aux=$!
# Armed when it answers a ping (it reads the control FIFO only while recording).
echo ping >&5
read -r -t 300 reply <&6 && [ "$reply" = ack ] || die "auxtrig never answered a ping: $(tail -n 3 "$tmp/err")"
storm=$(pgrep -P "$aux" -x syscall_storm) || die "no syscall_storm under auxtrig"

# cmd WORD: a control command, answered 'ack' within 60 s.
acks=0
cmd() {
	echo "$1" >&5
	read -r -t 60 reply <&6 && [ "$reply" = ack ] || die "'$1' was not answered (got '${reply:-nothing}')"
	acks=$((acks + 1))
}
cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$1"/stat 2>/dev/null || echo 0; }

echo "soak: $secs s, ${threads}-thread getppid() storm, -S$size, a sample every ${interval}s; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %9s %4s %4s %10s %9s %6s %8s\n' t_s rss_kib fds bpf file_kib snapshots usr2 storm_ms
declare -a rss fds bpf
snaps=0 usr2=0 toggles=0 enabled=1 n_snap=0 n_usr2=3 n_toggle=5 n_ping=1 start=$SECONDS next=0 hz=$(getconf CLK_TCK) t0_storm=$(cpu_ticks "$storm")
while :; do
	t=$((SECONDS - start))
	[ "$t" -ge "$secs" ] && break
	kill -0 "$aux" 2>/dev/null || die "auxtrig ended at ${t}s: $(tail -n 3 "$tmp/err")"
	# The actions, each when its time has come: a snapshot every 2 s, SIGUSR2 every 7 s,
	# a disable/enable pair every 11 s (disabled for a second or more), a ping every 3 s.
	[ "$t" -ge "$n_snap" ] && { cmd snapshot; snaps=$((snaps + 1)) n_snap=$((t + 2)); }
	[ "$t" -ge "$n_usr2" ] && { kill -USR2 "$aux"; usr2=$((usr2 + 1)) n_usr2=$((t + 7)); }
	if [ "$t" -ge "$n_toggle" ]; then
		if [ "$enabled" = 1 ]; then
			cmd disable
			enabled=0 n_toggle=$((t + 1))
		else
			cmd enable
			enabled=1 n_toggle=$((t + 10)) toggles=$((toggles + 1))
		fi
	fi
	[ "$t" -ge "$n_ping" ] && { cmd ping; n_ping=$((t + 3)); }
	if [ "$t" -ge "$next" ]; then
		r=$(awk '/^VmRSS:/ { print $2 }' /proc/"$aux"/status)
		f=$(find /proc/"$aux"/fd -mindepth 1 -maxdepth 1 | wc -l)
		b=$(bpf_objects "$aux" | wc -l)
		rss+=("$r") fds+=("$f") bpf+=("$b")
		printf '%6d %9d %4d %4d %10d %9d %6d %8d\n' "$t" "$r" "$f" "$b" $(($(stat -c %s "$tmp/soak.data") / 1024)) \
			"$snaps" "$usr2" $((($(cpu_ticks "$storm") - t0_storm) * 1000 / hz))
		next=$((next + interval))
	fi
	sleep 1
done
objs=$(bpf_objects "$aux")
echo stop >&5
read -r -t 120 reply <&6
wait "$aux"
rc=$? aux=
[ "$rc" = 0 ] || die "auxtrig exited $rc after 'stop': $(tail -n 3 "$tmp/err")"
summary=$(grep '^\[ auxtrig record:' "$tmp/err") || die "no summary line: $(tail -n 3 "$tmp/err")"
echo "soak: $summary"
echo "soak: $snaps control snapshots, $usr2 SIGUSR2 snapshots, $toggles disable/enable pairs, $acks commands answered"
for ((i = 0; i < 100; i++)); do kill -0 "$storm" 2>/dev/null || break; sleep 0.1; done
kill -0 "$storm" 2>/dev/null && { kill -KILL "$storm"; die "the workload outlived auxtrig"; }
left=
for ((i = 0; i < 100; i++)); do
	left=$(while read -r kind id; do
		[ -n "$id" ] && bpftool "$kind" show id "$id" >/dev/null 2>&1 && echo "$kind $id"
	done <<<"$objs")
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || die "BPF objects still in the kernel after auxtrig ended: $(echo $left)"
perf report -D -i "$tmp/soak.data" >/dev/null 2>"$tmp/dump.err" || die "perf report -D failed: $(tail -n 3 "$tmp/dump.err")"
grep -viE '^Warning:$|^Processed [0-9]* (events|samples) and lost |^Check IO/CPU overload!$|^$' "$tmp/dump.err" &&
	die "perf report -D warns about the soak's file"
echo "soak: the file ($(($(stat -c %s "$tmp/soak.data") / 1024)) KiB) reads in perf report -D$(grep -q ' lost ' "$tmp/dump.err" && echo ', losses counted in it')"

# Growth: the last quarter's mean against the first quarter's. The first sample (taken before the
# first snapshot filled anything) is left out.
rss=("${rss[@]:1}") fds=("${fds[@]:1}") bpf=("${bpf[@]:1}")
q=$((${#rss[@]} / 4))
mean() { local from=$1 n=$2 s=0 i; shift 2; local -a v=("$@"); for ((i = from; i < from + n; i++)); do s=$((s + v[i])); done; echo $((s / n)); }
bad=0
check() {
	local name=$1 tol_pct=$2 tol_abs=$3 first last
	shift 3
	first=$(mean 0 "$q" "$@") last=$(mean $(($# - q)) "$q" "$@")
	if [ "$last" -gt $((first + first * tol_pct / 100 + tol_abs)) ]; then
		echo "soak: FAIL: $name grew: first quarter mean $first, last quarter mean $last"
		bad=1
	else
		echo "soak: $name: first quarter mean $first, last quarter mean $last (max $(printf '%s\n' "$@" | sort -n | tail -n 1)): flat"
	fi
}
check "RSS (KiB)" 10 4096 "${rss[@]}"
check "open fds" 0 0 "${fds[@]}"
check "BPF objects" 0 0 "${bpf[@]}"
[ "$bad" = 0 ] || exit 1
echo "soak: passed"
