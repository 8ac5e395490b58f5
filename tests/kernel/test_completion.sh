#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bash completion with this machine's tracefs: syscall and tracepoint names
# complete to exactly what tracefs has (tests/unit/test_completion.sh covers
# the rest on fixtures).
. "$(dirname "$0")/lib.sh"
need_root
T=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
[ -n "$T" ] || fail "tracefs is not mounted (make deps mounts it)"
. "$top/completion/auxtrig.bash"

comp() {
	local word prefix= i
	COMP_LINE="auxtrig $1"
	COMP_POINT=${#COMP_LINE}
	read -r -a COMP_WORDS <<<"$COMP_LINE"
	COMP_WORDS[0]=$AUXTRIG
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	word=${COMP_WORDS[COMP_CWORD]}
	for ((i = ${#word} - 1; i >= 0; i--)); do
		if [[ $COMP_WORDBREAKS == *"${word:i:1}"* ]]; then prefix=${word:0:i+1}; break; fi
	done
	COMPREPLY=()
	_auxtrig auxtrig "$word" "${COMP_WORDS[COMP_CWORD-1]}"
	for w in "${COMPREPLY[@]}"; do echo "$prefix$w"; done | sort
}

want=$(cd "$T/events/syscalls" && ls -d sys_enter_open* | sed 's/^sys_enter_/syscall:/' | sort)
[ -n "$want" ] || fail "no sys_enter_open* in $T"
assert_eq "$(comp 'record -w syscall:open')" "$want" "-w syscall:open<TAB>"
want=$(cd "$T/events/sched" && ls -d sched_sw* | sed 's/^/sched:/' | sort)
assert_eq "$(comp 'record -w syscall:openat -e sched:sched_sw')" "$want" "-e sched:sched_sw<TAB>"
want=$(cd "$T/events/sched" && ls -d sched_wak* | sed 's/^/tp:sched:/' | sort)
assert_eq "$(comp "record --on tp:sched:sched_wak")" "$want" "--on tp:sched:sched_wak<TAB>"
echo ok
