# SPDX-License-Identifier: BSD-2-Clause
# bash completion for auxtrig: subcommands, options, point kinds, and the
# names this machine offers (syscalls, tracepoints, PMUs, a binary's USDT
# probes and functions), which it asks `auxtrig list --names` for.
# Installed by `make install` under share/bash-completion/completions/.

# The word being completed and the one before it, from the line itself:
# COMP_WORDS splits at ':' and '=' (COMP_WORDBREAKS), points are full of ':'.
_auxtrig_words()
{
	local line=${COMP_LINE:0:COMP_POINT}
	local -a w
	read -r -a w <<<"$line"
	if [[ $line == *[[:space:]] || ${#w[@]} -eq 0 ]]; then
		_auxtrig_cur=
		_auxtrig_prev=${w[${#w[@]}-1]:-}
	else
		_auxtrig_cur=${w[${#w[@]}-1]}
		_auxtrig_prev=${w[${#w[@]}-2]:-}
	fi
	_auxtrig_cmd=
	local i
	for ((i = 1; i < ${#w[@]}; i++)); do
		[[ ${w[i]} == -* ]] && continue
		_auxtrig_cmd=${w[i]}
		break
	done
}

# Offer CANDIDATES for the typed WORD; bash replaces only what follows the
# word's last break character (':' or '='), so strip that much.
_auxtrig_reply()
{
	local word=$1; shift
	local prefix= c
	local breaks=${COMP_WORDBREAKS-:=}
	local i ch
	for ((i = ${#word} - 1; i >= 0; i--)); do
		ch=${word:i:1}
		if [[ $breaks == *"$ch"* ]]; then
			prefix=${word:0:i+1}
			break
		fi
	done
	COMPREPLY=()
	for c in "$@"; do
		[[ $c == "$word"* ]] || continue
		COMPREPLY+=("${c#"$prefix"}")
	done
}

_auxtrig_list()
{
	"$_auxtrig_bin" list --names "$@" 2>/dev/null
}

_auxtrig_kinds="syscall: tp: uprobe: uretprobe: usdt: kprobe: kretprobe: mem:"

# One point (a --on, either end of a -w START..STOP): its kind, then names.
_auxtrig_point()
{
	local word=$1 typed=$2 lead= p
	local -a cands=()
	case $typed in
	syscall:*:*)
		p=${typed%:*}
		cands=("$p:enter" "$p:exit")
		;;
	syscall:*)
		mapfile -t cands < <(_auxtrig_list "$typed*")
		cands+=("syscall:*")
		;;
	tp:*)
		mapfile -t cands < <(_auxtrig_list "$typed*")
		;;
	usdt:*:* | uprobe:*:* | uretprobe:*:*)
		p=${typed#*:}
		p=${p%%:*}
		mapfile -t cands < <(_auxtrig_list "${typed%%:*}:$p")
		;;
	usdt:* | uprobe:* | uretprobe:* | mem:*)
		# a file: PATH completes as a path
		lead=${typed%%:*}:
		mapfile -t cands < <(compgen -f -- "${typed#*:}")
		cands=("${cands[@]/#/$lead}")
		;;
	*)
		read -r -a cands <<<"$_auxtrig_kinds"
		;;
	esac
	lead=${word%"$typed"}
	_auxtrig_reply "$word" "${cands[@]/#/$lead}"
	[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] && compopt -o nospace 2>/dev/null
	[[ $typed == @(usdt|uprobe|uretprobe|mem):* && $typed != *:*:* ]] && compopt -o nospace -o filenames 2>/dev/null
	return 0
}

# -e SYS:NAME[,SYS:NAME...] (typed as WORD): tracepoints by their -e name, and
# the PMUs for the first one.
_auxtrig_event()
{
	local word=$1 value=$2 last=${2##*,} n
	local lead=${word%"$last"}
	local -a cands=() names
	mapfile -t names < <(_auxtrig_list "${last}*")
	for n in "${names[@]}"; do
		case $n in
		tp:*) cands+=("$lead${n#tp:}") ;;
		*//) [[ $value != *,* ]] && cands+=("$lead$n") ;;
		esac
	done
	_auxtrig_reply "$word" "${cands[@]}"
}

_auxtrig_options()
{
	"$_auxtrig_bin" "$1" --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' |
		sed 's/^[ ,]*//' | sort -u
}

_auxtrig()
{
	local _auxtrig_cur _auxtrig_prev _auxtrig_cmd
	local _auxtrig_bin=${COMP_WORDS[0]:-auxtrig}
	local cur
	local -a cands
	_auxtrig_words
	cur=$_auxtrig_cur

	if [[ -z $_auxtrig_cmd || ($_auxtrig_cmd == "$cur" && $_auxtrig_prev != -*) ]]; then
		if [[ $cur == -* ]]; then
			_auxtrig_reply "$cur" --help --version
		else
			mapfile -t cands < <("$_auxtrig_bin" --help 2>/dev/null |
				awk '/^COMMANDS:/ { on = 1; next } on && !NF { exit } on { print $1 }')
			_auxtrig_reply "$cur" "${cands[@]}"
		fi
		return 0
	fi
	# --opt=VALUE completes VALUE, or OPT VALUE
	if [[ $cur == --*=* ]]; then
		_auxtrig_value "${cur%%=*}" "$cur" "${cur#*=}" && return 0
	elif _auxtrig_value "$_auxtrig_prev" "$cur" "$cur"; then
		return 0
	fi
	if [[ $cur == -* ]]; then
		mapfile -t cands < <(_auxtrig_options "$_auxtrig_cmd")
		_auxtrig_reply "$cur" "${cands[@]}"
	elif [[ $_auxtrig_cmd == list ]]; then
		_auxtrig_point "$cur" "$cur"
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		compopt -o filenames 2>/dev/null
	fi
	return 0
}

# The VALUE (typed as WORD) of option OPT: 0 when auxtrig completes it.
_auxtrig_value()
{
	local opt=$1 word=$2 value=$3
	local -a k
	case $opt in
	-w | --window)
		if [[ $value == *..* ]]; then
			_auxtrig_point "$word" "${value##*..}"
		elif [[ $value == @(syscall|tp|uprobe|uretprobe|usdt|kprobe|kretprobe|mem):* ]]; then
			_auxtrig_point "$word" "$value"
		else
			read -r -a k <<<"prog $_auxtrig_kinds"
			_auxtrig_reply "$word" "${k[@]/#/${word%"$value"}}"
			[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] && compopt -o nospace 2>/dev/null
		fi
		;;
	--on)
		_auxtrig_point "$word" "${value#[\'\"]}"
		;;
	-e | --event)
		_auxtrig_event "$word" "$value"
		;;
	--format)
		# script's views: the timeline, one line per system call, perf script's listing
		_auxtrig_reply "$word" "${word%"$value"}chrome" "${word%"$value"}syscalls" "${word%"$value"}text"
		;;
	-i | --input | -o | --output | --trigger-prog | --symfs | --kallsyms | --sysfs-root | --tracefs)
		mapfile -t COMPREPLY < <(compgen -f -- "$value")
		compopt -o filenames 2>/dev/null
		;;
	*)
		return 1
		;;
	esac
	return 0
}

complete -F _auxtrig auxtrig
