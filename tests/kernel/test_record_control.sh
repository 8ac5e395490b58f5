#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --control fifo:CTL,ACK cannot be driven or abused by another user (issue #13, 2):
# whoever writes CTL stops or snapshots root's recording, and root writes "ack"
# into whatever ACK is. Refused, before anything starts and with the reason: a
# symbolic link (never followed), anything but a FIFO, a FIFO of another user,
# one writable by group or others. A path that is not there is made, mode 0600,
# and removed at the end; another user cannot write into it.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || fail "needs setpriv (util-linux) to act as another user"
user=nobody
uid=$(id -u "$user" 2>/dev/null) || {
	useradd --system --no-create-home --shell /usr/sbin/nologin auxtrig-test || fail "cannot create a test user"
	user=auxtrig-test uid=$(id -u auxtrig-test)
}
as_user() { setpriv --reuid="$uid" --regid="$(id -g "$user")" --clear-groups --inh-caps=-all "$@"; }

# A directory the other user can write into, as /tmp is.
chmod 711 "$tmp"
mkdir -m 1777 "$tmp/shared"
s=$tmp/shared

refused() { # refused WHY_PATTERN CONTROL_SPEC: exit 2, one line naming it, nothing recorded
	rm -f "$tmp/x.data"
	"$AUXTRIG" record -S -e syscalls:sys_enter_close --control "$2" -o "$tmp/x.data" -- true \
		>/dev/null 2>"$tmp/err"
	assert_eq $? 2 "exit code for --control $2"
	grep -qE -- "$1" "$tmp/err" || fail "--control $2: expected '$1', got: $(cat "$tmp/err")"
	assert_eq "$(grep -c . "$tmp/err")" 1 "lines of error for --control $2"
	[ ! -e "$tmp/x.data" ] || fail "--control $2 was refused but left a file"
}

# 1. Symbolic links, planted by another user in a shared directory: never followed.
echo "precious" >"$tmp/victim"
as_user ln -s "$tmp/victim" "$s/ack-link"
as_user mkfifo -m 600 "$s/their-ctl" 2>/dev/null
mkfifo -m 600 "$tmp/ctl"
refused "$s/ack-link is a symbolic link, which is never followed" "fifo:$tmp/ctl,$s/ack-link"
ln -s "$tmp/ctl" "$tmp/ctl-link"
refused "ctl-link is a symbolic link" "fifo:$tmp/ctl-link"
assert_eq "$(cat "$tmp/victim")" precious "the file behind the link"

# 2. A regular file as ACK (it would be written into) or CTL: not a FIFO, named.
echo "keep me" >"$tmp/regular"
refused "$tmp/regular is not a FIFO" "fifo:$tmp/ctl,$tmp/regular"
refused "$tmp/regular is not a FIFO" "fifo:$tmp/regular"
assert_eq "$(cat "$tmp/regular")" "keep me" "a regular file given as ACK"

# 3. Another user's FIFO, however open its mode: they could drive root's recording.
as_user mkfifo -m 666 "$s/open-ctl"
refused "open-ctl is owned by another user, who could drive this recording" "fifo:$s/open-ctl"
refused "their-ctl is owned by another user" "fifo:$s/their-ctl"

# 4. Our own FIFO, but writable by others.
mkfifo -m 622 "$tmp/ctl-622" && chmod 622 "$tmp/ctl-622"
refused "ctl-622 is writable by other users, who could drive this recording \(chmod go-w it\)" "fifo:$tmp/ctl-622"
mkfifo -m 620 "$tmp/ack-620" && chmod 620 "$tmp/ack-620"
refused "ack-620 is writable by other users" "fifo:$tmp/ctl,$tmp/ack-620"

# 5. A directory that is not there.
refused "$tmp/none: no such directory to make the FIFO in" "fifo:$tmp/none/ctl"

# 6. Paths that are not there: made as FIFOs of mode 0600, used, removed at the end; the other
#    user cannot write a command into them.
record_bg "$tmp/rec.err" -S -e syscalls:sys_enter_close --control "fifo:$s/new-ctl,$s/new-ack" \
	-o "$tmp/new.data" -- sleep 30
for f in new-ctl new-ack; do
	assert_eq "$(stat -c '%F %a %u' "$s/$f")" "fifo 600 0" "what auxtrig made at $f"
done
exec 8<>"$s/new-ack"
as_user sh -c "echo stop >'$s/new-ctl'" 2>/dev/null && fail "another user wrote into the control FIFO"
kill -0 $aux 2>/dev/null || fail "the recording stopped"
echo ping >"$s/new-ctl"
read -r -t "$WAIT" reply <&8 || fail "no ack for ping"
assert_eq "$reply" ack "reply to ping"
echo stop >"$s/new-ctl"
read -r -t "$WAIT" reply <&8 || fail "no ack for stop"
wait $aux || fail "record failed: $(cat "$tmp/rec.err")"
exec 8<&-
[ ! -e "$s/new-ctl" ] && [ ! -e "$s/new-ack" ] || fail "the FIFOs auxtrig made were left behind"

# 7. A FIFO of our own, 0600, is used and left in place.
mkfifo -m 600 "$tmp/ack"
exec 8<>"$tmp/ack"
record_bg "$tmp/rec.err" -S -e syscalls:sys_enter_close --control "fifo:$tmp/ctl,$tmp/ack" -o "$tmp/own.data" \
	-- sleep 30
echo stop >"$tmp/ctl"
read -r -t "$WAIT" reply <&8 || fail "no ack for stop"
wait $aux || fail "record failed: $(cat "$tmp/rec.err")"
[ -p "$tmp/ctl" ] && [ -p "$tmp/ack" ] || fail "auxtrig removed FIFOs it did not make"
echo ok
