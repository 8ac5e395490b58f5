#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The documentation says what exists. --help and the man pages say the same:
# every long option of a command's --help is in its man page, and every option
# the man page documents is in --help. README.md and docs/*.md: README fits in
# under 300 lines, no table cell passes 300 characters (a link's target not
# counted), every relative link names a file of the tree (and a heading of it,
# after a #), and every file path and test they name in backquotes exists
# (tests/unit/test_docs.py). Needs no privileges.
set -u
top=${AUXTRIG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AUXTRIG_BUILD:-$top/build}
bad=0
for cmd in record list probe repair report script; do
	page=$top/man/auxtrig-$cmd.1
	[ -f "$page" ] || { echo "missing man page $page"; bad=1; continue; }
	help=$("$build/auxtrig" $cmd --help) || { echo "auxtrig $cmd --help failed"; bad=1; continue; }
	# Long options as --name, from both sides (roff writes \-\-name).
	from_help=$(grep -oE -- '--[a-z][a-z0-9-]+' <<<"$help" | sort -u)
	from_man=$(sed 's/\\-/-/g' "$page" | grep -E '^\.(TP|B|BR|BI)|^\.?B?R? *-' | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u)
	for o in $from_help; do
		grep -qF -- "$o" <(sed 's/\\-/-/g' "$page") || { echo "$cmd: $o is in --help but not in $page"; bad=1; }
	done
	for o in $from_man; do
		grep -qF -- "$o" <<<"$help" || { echo "$cmd: $o is in $page but not in --help"; bad=1; }
	done
done
# Every command auxtrig --help lists has a man page, and auxtrig(1) names it.
for cmd in $("$build/auxtrig" --help | awk '/^COMMANDS:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
	[ -f "$top/man/auxtrig-$cmd.1" ] || { echo "no man page for '$cmd'"; bad=1; }
	grep -q "^\.B $cmd\$" "$top/man/auxtrig.1" || { echo "auxtrig(1) does not list '$cmd'"; bad=1; }
done
python3 "$top/tests/unit/test_docs.py" "$top" || bad=1
[ $bad = 0 ] && echo ok
exit $bad
