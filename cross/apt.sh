# SPDX-License-Identifier: BSD-2-Clause
# Debian's archive for another architecture (arm64) or release (trixie), without touching this
# machine's apt: a private configuration and package lists in a directory of the build, so that
# `apt-get download` can fetch arm64 packages (and trixie's amd64 ones) that are then unpacked,
# never installed. The archive's address is the one this machine's apt already uses for Debian
# (bookworm, bookworm-security): nothing here names a host. Sourced by cross/sysroot.sh and
# tests/lab/vm, not run.
#
#   dapt_init DIR RELEASE    DIR holds the configuration and lists for RELEASE (bookworm: with
#                            -updates and -security; trixie: with -backports), arm64 and amd64;
#                            sets the array DAPT to the options apt-get and apt-cache need.
#                            Lists are fetched when missing or older than a day.
#   dapt_fetch DEBDIR PKG... fetch each PKG (PKG:amd64 for the amd64 one) into DEBDIR, checked
#                            against the SHA256 of the archive's package list; prints the files'
#                            paths, one a line, in order.
#   dapt_closure PKG...      PKG and everything it depends on (no recommends), as apt's resolver
#                            finds them for an empty system, one name:arch a line.
#   dapt_unpack ROOT DEB...  unpack the packages' files into ROOT (usr-merged, as Debian 12 is),
#                            without running any of their scripts.

dapt_die() { echo "${DAPT_WHO:-cross/apt.sh}: $*" >&2; exit "${DAPT_EXIT:-125}"; }

# The URI this machine's apt fetches RELEASE from (bookworm or bookworm-security).
dapt_host_uri() {
	apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null | awk -v r="$1" '$1 == r { print $2; exit }'
}

dapt_init() {
	local dir=$1 release=$2 main sec src
	main=$(dapt_host_uri bookworm)
	sec=$(dapt_host_uri bookworm-security)
	[ -n "$main" ] || dapt_die "this machine's apt has no Debian bookworm source to take the archive's address from"
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/etc/parts"
	src="$dir/etc/sources.list"
	case $release in
	bookworm)
		{
			echo "deb [arch=arm64,amd64] $main bookworm main"
			echo "deb [arch=arm64,amd64] $main bookworm-updates main"
			[ -z "$sec" ] || echo "deb [arch=arm64,amd64] $sec bookworm-security main"
		} >"$src.new" ;;
	trixie)
		{
			echo "deb [arch=arm64,amd64] $main trixie main"
			echo "deb [arch=arm64,amd64] $main trixie-backports main"
		} >"$src.new" ;;
	*) dapt_die "dapt_init: unknown release $release" ;;
	esac
	[ -f "$dir/status" ] || : >"$dir/status"
	DAPT=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o APT::Architectures::=amd64
		-o Dir::State::Lists="$dir/lists" -o Dir::State::status="$dir/status" -o Dir::Cache="$dir/cache"
		-o Dir::Etc::SourceList="$src" -o Dir::Etc::SourceParts="$dir/etc/parts"
		-o Dir::Etc::Preferences="$dir/etc/preferences" -o Dir::Etc::PreferencesParts="$dir/etc/parts"
		-o Debug::NoLocking=1 -o APT::Get::List-Cleanup=1)
	# One update at a time (the lab starts its guests side by side).
	(
		flock 9
		if ! cmp -s "$src.new" "$src" || [ -z "$(find "$dir/lists" -maxdepth 1 -name '*_InRelease' -mmin -1440)" ]; then
			mv "$src.new" "$src"
			apt-get "${DAPT[@]}" -q update >"$dir/update.log" 2>&1 ||
				dapt_die "apt-get update of the private $release lists failed: $(grep -m1 -E '^(E|W):' "$dir/update.log")"
		fi
		rm -f "$src.new"
	) 9>"$dir/lock"
}

dapt_fetch() {
	local debdir=$1 pkg ver arch sum file want=() files=() sums=() missing=()
	shift
	mkdir -p "$debdir"
	# One apt-cache and one apt-get for all: each start reads the whole lists (a second or more).
	while IFS='|' read -r pkg ver arch sum; do
		[ -n "$ver" ] && [ -n "$sum" ] || continue
		file="$debdir/${pkg}_${ver//:/%3a}_$arch.deb"
		want+=("$pkg:$arch=$ver") files+=("$file") sums+=("$sum")
		[ -f "$file" ] || missing+=("$pkg:$arch=$ver")
	done < <(apt-cache "${DAPT[@]}" show --no-all-versions "$@" 2>/dev/null |
		awk -F': ' '/^Package: /{p=$2} /^Version: /{v=$2} /^Architecture: /{a=$2} /^SHA256: /{s=$2}
			/^$/ { if (p != "") print p "|" v "|" a "|" s; p = v = a = s = "" }
			END { if (p != "") print p "|" v "|" a "|" s }')
	[ ${#want[@]} -eq $# ] || dapt_die "the private package lists lack some of: $*"
	if [ ${#missing[@]} -gt 0 ]; then
		(cd "$debdir" && apt-get "${DAPT[@]}" download -q "${missing[@]}" >/dev/null 2>"$debdir/download.err") ||
			dapt_die "apt-get download failed: $(tail -1 "$debdir/download.err")"
		rm -f "$debdir/download.err"
	fi
	local i
	for i in "${!files[@]}"; do
		[ -f "${files[$i]}" ] || dapt_die "apt-get download ${want[$i]} left no ${files[$i]}"
		if [ "$(sha256sum "${files[$i]}" | cut -d' ' -f1)" != "${sums[$i]}" ]; then
			rm -f "${files[$i]}"
			dapt_die "${files[$i]}: SHA256 differs from the archive's; removed it, run again to fetch it anew"
		fi
		echo "${files[$i]}"
	done
}

dapt_closure() {
	apt-get "${DAPT[@]}" install -s --no-install-recommends "$@" 2>&1 |
		sed -n 's/^Inst \([^ ]*\) .*\[\([a-z0-9][a-z0-9]*\)\].*/\1:\2/p' | sed 's/:all$//'
	[ "${PIPESTATUS[0]}" = 0 ] || dapt_die "apt cannot resolve $*"
}

dapt_unpack() {
	local root=$1 d l t
	shift
	mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/usr/lib64"
	for d in bin sbin lib lib64; do [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"; done
	for d in "$@"; do
		dpkg-deb --fsys-tarfile "$d" | tar -x -C "$root" --keep-directory-symlink --no-same-owner ||
			dapt_die "cannot unpack $d"
	done
	# Absolute symlinks point into this machine's root: make them relative to ROOT.
	find "$root" -type l -lname '/*' -print0 | while IFS= read -r -d '' l; do
		t=$(readlink "$l")
		ln -sfn "$(realpath -m -s --relative-to="$(dirname "$l")" "$root$t")" "$l"
	done
}
