#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The syscall view (auxtrig script --format=syscalls) on real recordings of
# `git status` in a fresh repository, issue #25's session:
# 1. -w syscall:openat: every openat git makes, with its path, flags and
#    result as strace shows them for the same command (the oracle), in order
#    (a path the gate could not read at the entry, its page not yet in
#    memory, is recorded empty: at most a quarter of them);
# 2. -S -w 'syscall:*' with a snapshot trigger at the first openat of a
#    .git path that fails with ENOENT: the snapshot's calls by name
#    (raw_syscalls numbers named, arguments named and typed), and its last
#    openat with the path and ENOENT;
# 3. perf script's listing stays the default, line for line perf's own.
. "$(dirname "$0")/lib.sh"
need_root
need_perf
command -v git >/dev/null || skip "needs git (make deps installs it)"
command -v strace >/dev/null || skip "needs strace (make deps installs it)"

repo=$tmp/repo
mkdir -p "$repo" "$tmp/home"
git -C "$repo" init -q . || fail "git init failed"
echo hi >"$repo/f"
run_git() { (cd "$repo" && HOME=$tmp/home GIT_CONFIG_NOSYSTEM=1 LC_ALL=C "$@"); }

# 1. openat windows against strace
run_git "$AUXTRIG" record -q -w syscall:openat -o "$tmp/1.data" -- git status >/dev/null 2>"$tmp/1.err" ||
	fail "record 1 failed: $(cat "$tmp/1.err")"
"$AUXTRIG" script --format=syscalls -i "$tmp/1.data" >"$tmp/1.sys" || fail "the syscall view failed on 1"
run_git strace -qq -e trace=openat -e signal=none -o "$tmp/1.strace" git status >/dev/null 2>&1 || fail "strace git status failed"
# "openat(AT_FDCWD, PATH, FLAGS) = RESULT" from both, the view's arguments without their names
# (strace pads before " = " and orders the flags its own way: both normalized, flags sorted)
norm() {
	sed 's/) *= /) = /; s/ = [0-9][0-9]*$/ = FD/' | awk '{
		if (!match($0, /, [A-Z_|]+(, 0[0-7]+)?\) = /)) { print; next }
		s = RSTART; l = RLENGTH; f = substr($0, s + 2, l - 6); m = ""
		if (match(f, /, 0[0-7]+$/)) { m = substr(f, RSTART); f = substr(f, 1, RSTART - 1) }
		n = split(f, a, "|")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
		f = a[1]; for (i = 2; i <= n; i++) f = f "|" a[i]
		print substr($0, 1, s - 1) ", " f m substr($0, s + l - 4) }'
}
sed -n 's/^.*): git\/[0-9]* openat(dfd: \(.*\), filename: \(.*\), flags: \([^)]*\)) = \(.*\)$/openat(\1, \2, \3) = \4/p' \
	"$tmp/1.sys" | sed 's/, mode: /, /' | norm >"$tmp/1.ours"
grep '^openat(' "$tmp/1.strace" | norm >"$tmp/1.theirs"
[ -s "$tmp/1.theirs" ] || fail "strace saw no openat"
# Line by line the same call. A path the gate could not read at the call's entry (its page not
# yet faulted in: BPF cannot fault it in) is recorded empty, and matches any path there.
assert_eq "$(wc -l <"$tmp/1.ours")" "$(wc -l <"$tmp/1.theirs")" "openat calls in the view (strace's count)"
paste -d '\n' "$tmp/1.ours" "$tmp/1.theirs" | awk '
	NR % 2 { ours = $0; next }
	{ theirs = $0; o = ours; t = theirs
	  if (o ~ /^openat\([^,]*, "",/) { sub(/^openat\([^,]*, "[^"]*",/, "", o); sub(/^openat\([^,]*, "[^"]*",/, "", t); empty++ }
	  if (o != t) { print "ours: " ours " strace: " theirs; bad++ } }
	END { if (empty * 4 > NR / 2) print "too many unread paths: " empty " of " NR / 2; exit bad }' >"$tmp/1.diff" ||
	fail "the view's openat calls are not strace's: $(head -5 "$tmp/1.diff")"
[ ! -s "$tmp/1.diff" ] || fail "$(cat "$tmp/1.diff")"
grep -qF 'openat(dfd: AT_FDCWD, filename: ".git/packed-refs", flags: O_RDONLY) = -1 ENOENT (No such file or directory)' \
	"$tmp/1.sys" || fail "no failing openat of .git/packed-refs: $(grep packed "$tmp/1.sys")"

# 2. issue #25's session: a flight recording of every syscall, frozen at the failing openat
run_git "$AUXTRIG" record -q -S -w 'syscall:*' \
	--on 'syscall:openat:exit if ret == -ENOENT && str(entry.arg1) ~ "*.git*":snapshot,once' \
	-o "$tmp/2.data" -- git status >/dev/null 2>"$tmp/2.err" || fail "record 2 failed: $(cat "$tmp/2.err")"
assert_perf_reads_cleanly "$tmp/2.data"
"$AUXTRIG" script --format=syscalls -i "$tmp/2.data" >"$tmp/2.sys" || fail "the syscall view failed on 2"
# the failing openat ends the snapshot: its path and ENOENT (its exit record, or the trigger's value)
last=$(grep ' openat(' "$tmp/2.sys" | tail -1)
case $last in
*'openat(dfd: AT_FDCWD, filename: ".git/packed-refs", flags: O_RDONLY) = -1 ENOENT (No such file or directory)'*) ;;
*) fail "the snapshot's last openat is not the failing one: $last" ;;
esac
# named calls with named arguments, no raw numbers
for call in 'newfstatat(dfd: AT_FDCWD, filename: "' 'read(fd: ' 'close(fd: ' 'openat(dfd: AT_FDCWD, filename: ".git/HEAD"'; do
	grep -qF "$call" "$tmp/2.sys" || fail "no $call...) in the view: $(head -3 "$tmp/2.sys")"
done
! grep -q 'syscall_[0-9]' "$tmp/2.sys" || fail "unnamed syscall numbers: $(grep -m3 'syscall_[0-9]' "$tmp/2.sys")"
# every line a call, the snapshot, or auxtrig's counters: nothing dropped or garbled
bad=$(grep -cvE '^ *[0-9]+\.[0-9]{6} \((  ?[0-9]+\.[0-9]{3} ms|          )\): [^ ]+/[0-9]+ [a-z_0-9]+\(.*\) (= .*|\.\.\. <unfinished: no exit recorded>)$|auxtrig:(snapshot|trigger_stats): ' "$tmp/2.sys")
assert_eq "$bad" 0 "lines of the view that are neither calls nor auxtrig's records"
assert_eq "$(grep -c 'auxtrig:snapshot: nr=1 ' "$tmp/2.sys")" 1 "the snapshot's record"

# 3. the default listing is perf's
perf script -i "$tmp/2.data" 2>/dev/null >"$tmp/2.perf"
"$AUXTRIG" script -i "$tmp/2.data" | diff - "$tmp/2.perf" >/dev/null || fail "auxtrig script differs from perf script"
"$AUXTRIG" report -i "$tmp/2.data" | grep -qF "each system call, one line: auxtrig script --format=syscalls -i $tmp/2.data" ||
	fail "auxtrig report does not name the syscall view"
echo ok
