#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bash completion (completion/auxtrig.bash) driven as bash drives it: COMP_LINE,
# COMP_POINT, COMP_WORDS, then _auxtrig; the words a user would end up with are
# checked: subcommands, options from --help, point kinds, syscall and
# tracepoint names (a fixture tracefs: `auxtrig list --tracefs`), -e lists,
# the USDT probes and functions of the built examples. The real tracefs:
# tests/kernel/test_completion.sh.
set -u
top=${AUXTRIG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AUXTRIG_BUILD:-$top/build}
bad=0
fail() { echo "FAIL: $*"; bad=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the built auxtrig, its list reading the fixture tracefs
bin=$tmp/auxtrig
cat >"$bin" <<-WRAP
#!/bin/sh
if [ "\$1" = list ]; then shift; exec "$build/auxtrig" list --tracefs "$top/tests/fixtures/tracefs-names" "\$@"; fi
exec "$build/auxtrig" "\$@"
WRAP
chmod +x "$bin"

. "$top/completion/auxtrig.bash" || { echo "cannot source completion/auxtrig.bash"; exit 1; }
complete -p auxtrig | grep -q -- '-F _auxtrig' || fail "no 'complete -F _auxtrig auxtrig'"

# comp LINE: the words completing the end of LINE would give, sorted, one a
# line, each the whole word as it would stand on the command line.
comp() {
	local line=$1 word prefix= i
	COMP_LINE="auxtrig $line"
	COMP_POINT=${#COMP_LINE}
	read -r -a COMP_WORDS <<<"$COMP_LINE"
	[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=("")
	COMP_WORDS[0]=$bin
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	word=${COMP_WORDS[COMP_CWORD]}
	for ((i = ${#word} - 1; i >= 0; i--)); do
		if [[ $COMP_WORDBREAKS == *"${word:i:1}"* ]]; then prefix=${word:0:i+1}; break; fi
	done
	COMPREPLY=()
	_auxtrig auxtrig "$word" "${COMP_WORDS[COMP_CWORD-1]}"
	for w in "${COMPREPLY[@]}"; do echo "$prefix$w"; done | sort
}
expect() { # expect LINE WORDS...
	local line=$1; shift
	local got want
	got=$(comp "$line")
	want=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$want" ] || fail "'auxtrig $line<TAB>': got [$(echo $got)], expected [$(echo $want)]"
}
has() { # has LINE WORD: WORD is among the completions
	comp "$1" | grep -qxF -- "$2" || fail "'auxtrig $1<TAB>' does not offer '$2': [$(comp "$1" | head -20 | tr '\n' ' ')]"
}

# subcommands, from auxtrig --help
expect "" list probe record repair report script
expect "re" record repair report
expect "--v" --version
# options, from each command's --help
has "record --wi" --window
expect "record --min" --min-duration
has "record -" -w
expect "list --na" --names
has "script --" --itrace
# -w: kinds first, then names; START..STOP completes its second point
expect "record -w sys" "syscall:"
expect "record -w syscall:open" syscall:openat syscall:openat2
expect "record -w syscall:se" syscall:sendfile64
expect "record --window=syscall:re" --window=syscall:read
expect "record -w syscall:read:e" syscall:read:enter syscall:read:exit
expect "record -w syscall:openat:exit..tp:sched:sched_sw" syscall:openat:exit..tp:sched:sched_switch
expect "record -w p" prog
# --on, quoted or not
expect "record --on tp:sched:sched_wa" tp:sched:sched_wakeup tp:sched:sched_wakeup_new
expect "record --on 'syscall:openat2:ex" "'syscall:openat2:exit"
expect "record --on k" kprobe: kretprobe:
# -e: tracepoints by their -e name, after a comma too
expect "record -e raw_syscalls:sys_e" raw_syscalls:sys_enter raw_syscalls:sys_exit
# script's views
expect "script --format=" --format=chrome --format=syscalls --format=text
expect "script --format s" syscalls
expect "record -e sched:sched_switch,sched:sched_wakeup_" sched:sched_switch,sched:sched_wakeup_new
has "record -e syscalls:sys_enter_o" syscalls:sys_enter_openat
# a binary's USDT probes and functions
u=$build/examples/usdt_demo
expect "record --on usdt:$u:demo:request_s" "usdt:$u:demo:request_start"
expect "list usdt:$u:" "usdt:$u:demo:request_done" "usdt:$u:demo:request_start"
# (a function static glibc has on every architecture)
expect "record -w uprobe:$build/examples/uprobe_demo:__run_exit_h" "uprobe:$build/examples/uprobe_demo:__run_exit_handlers"
# the file part of a probe completes as a path
has "record -w usdt:$build/examples/usdt_d" "usdt:$build/examples/usdt_demo"
# files where files go
touch "$tmp/some.data"
expect "script -i $tmp/some.d" "$tmp/some.data"
expect "record -o $tmp/so" "$tmp/some.data"
# list: points as the argument
expect "list syscall:openat" syscall:openat syscall:openat2
expect "list tp:raw_syscalls:" tp:raw_syscalls:sys_enter tp:raw_syscalls:sys_exit

# make install puts it where bash-completion looks
make -s -C "$top" install DESTDIR="$tmp/inst" prefix=/usr OUTPUT="$build" >/dev/null 2>&1 || fail "make install failed"
cmp -s "$tmp/inst/usr/share/bash-completion/completions/auxtrig" "$top/completion/auxtrig.bash" ||
	fail "make install did not install the completion as share/bash-completion/completions/auxtrig"

[ $bad = 0 ] && echo ok
exit $bad
