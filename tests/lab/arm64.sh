# SPDX-License-Identifier: BSD-2-Clause
# The arm64 half of the lab runner (tests/lab/vm --arch arm64), sourced by it: Debian's arm64
# kernels (bookworm's 6.12, trixie-backports' 7.x), an arm64 root filesystem made from Debian's
# arm64 packages, and the host (amd64) kbuild of the same kernel version that cross-builds modules
# for the guest. Everything comes from the archive through private package lists (cross/apt.sh),
# unpacked under BUILD/lab, never installed on this machine.
#
# Kbuild: the arm64 headers' scripts are arm64 programs, so modules are built with the amd64
# linux-kbuild package of the same version and aarch64-linux-gnu-gcc (gcc-aarch64-linux-gnu).
# trixie's kbuild programs (modpost, resolve_btfids, ...) are linked against glibc 2.38 or later,
# which Debian 12 does not have (2.36): each of them is run by trixie's own dynamic loader with
# trixie's C library, both unpacked from trixie's amd64 libc6 package next to the kbuild.

# What the guest's root holds: a shell and the tools the kernel, lab and unit tests call, the
# libraries auxtrig links, perf 6.1 (the tests' oracle), and the compilers some unit tests build
# arm64 binaries with (clang, lld, gcc).
ARM64_ROOT_PKGS="base-files base-passwd bash dash coreutils util-linux procps iproute2 findutils grep sed
	mawk gawk diffutils tar gzip xz-utils bzip2 file time kmod busybox-static jq strace binutils
	mount bsdutils libc-bin libbpf1 libelf1 zlib1g libdw1 libopencsd1 libcmocka0 libzstd1 make
	linux-perf bpftool valgrind clang lld gcc libc6-dev libbpf-dev"

# arm64_kernel_dapt: the private package lists of SERIES' release.
arm64_kernel_dapt() {
	case $series in
	6.12) dapt_init "$lab/apt/bookworm" bookworm ;;
	7.x) dapt_init "$lab/apt/trixie" trixie ;;
	esac
}

# arm64_resolve_kernel: the newest kernel of the series whose headers are in the archive too.
arm64_resolve_kernel() {
	local pat name kver
	case $series in
	6.12) pat='^linux-image-6\.12\.[0-9]+\+deb12-arm64-unsigned$' ;;
	7.x) pat='^linux-image-7\.[0-9]+\.[0-9]+\+deb13-arm64$' ;;
	esac
	for name in $(apt-cache "${DAPT[@]}" search --names-only "$pat" 2>/dev/null | cut -d' ' -f1 | sort -rV); do
		kver=${name#linux-image-}
		kver=${kver%-unsigned}
		if apt-cache "${DAPT[@]}" show "linux-headers-$kver:arm64" >/dev/null 2>&1; then
			echo "$kver"
			return 0
		fi
	done
	return 1
}

# arm64_unpack_kernel KVER KROOT: the image, the arm64 headers and the amd64 kbuild, unpacked into
# KROOT/root; for trixie's kbuild, its programs wrapped to run with trixie's loader and libc.
arm64_unpack_kernel() {
	local kver=$1 kroot=$2 images deps p debs=() kbuild
	# bookworm: one package; trixie-backports' 7.x: the image, the modules and their base files apart.
	case $series in
	6.12) images="linux-image-$kver-unsigned:arm64" ;;
	*) images="linux-binary-unsigned-$kver:arm64 linux-modules-$kver:arm64 linux-base-$kver:arm64" ;;
	esac
	# shellcheck disable=SC2086
	mapfile -t debs < <(dapt_fetch "$lab/debs" $images "linux-headers-$kver:arm64")
	deps=$(apt-cache "${DAPT[@]}" depends "linux-headers-$kver:arm64" |
		sed -n 's/^ *|\?Depends: \(linux-\(headers-.*-common\|kbuild-[^:]*\)\)\(:.*\)\?$/\1/p')
	for p in $deps; do
		case $p in
		linux-kbuild-*) kbuild=$p; debs+=("$(dapt_fetch "$lab/debs" "$p:amd64")") ;;
		*) debs+=("$(dapt_fetch "$lab/debs" "$p")") ;;
		esac
	done
	[ -n "${kbuild:-}" ] || die "linux-headers-$kver names no linux-kbuild package"
	rm -rf "$kroot"
	mkdir -p "$kroot/root"
	[ ${#debs[@]} -ge 2 ] || die "cannot fetch the packages of $kver"
	for p in "${debs[@]}"; do dpkg-deb -x "$p" "$kroot/root"; done
	# Usr-merged packages (trixie's): the paths the lab reads, /lib/modules and /boot/vmlinuz-KVER.
	[ -e "$kroot/root/lib" ] || ln -s usr/lib "$kroot/root/lib"
	if [ ! -e "$kroot/root/boot/vmlinuz-$kver" ] && [ -f "$kroot/root/usr/lib/modules/$kver/vmlinuz.unsigned" ]; then
		mkdir -p "$kroot/root/boot"
		ln -s "../usr/lib/modules/$kver/vmlinuz.unsigned" "$kroot/root/boot/vmlinuz-$kver"
	fi
	sed -i -e "s#^include /usr/src/#include $kroot/root/usr/src/#" -e "s#^KBUILD_OUTPUT=/usr/src/#KBUILD_OUTPUT=$kroot/root/usr/src/#" \
		"$kroot/root/usr/src/linux-headers-$kver/Makefile"
	# The headers' scripts and tools are links into /usr/lib/linux-kbuild-*: into KROOT's.
	find "$kroot/root/usr/src" -maxdepth 2 -type l -lname '/usr/lib/linux-kbuild-*' -print0 |
		while IFS= read -r -d '' p; do ln -sfn "$kroot/root$(readlink "$p")" "$p"; done
	arm64_host_loader "$kroot" "$kroot/root/usr/lib/$kbuild"
	arm64_fit_compiler "$kroot/root/usr/src/linux-headers-$kver"
	arm64_pahole "$kroot" "$kroot/root/usr/src/linux-headers-$kver"
}

# arm64_pahole KROOT HEADERS: a kernel built with a newer pahole than Debian 12's (1.24) asks it for
# BTF features 1.24 lacks (--btf_features): its release's pahole, run as its kbuild programs are
# (KROOT/pahole, which arm64_make_modules passes as PAHOLE).
arm64_pahole() {
	local kroot=$1 hdr=$2 want have d
	want=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$hdr/.config")
	have=$(pahole --version 2>/dev/null | tr -dc '0-9')
	[ -n "$want" ] && [ "${have:-0}" -lt "$want" ] || return 0
	for d in $(dapt_fetch "$lab/debs" libc6:amd64 pahole:amd64 libbpf1:amd64 libdw1t64:amd64 libelf1t64:amd64 \
		zlib1g:amd64 libbz2-1.0:amd64 liblzma5:amd64 libzstd1:amd64); do
		dpkg-deb -x "$d" "$kroot/hostlibc"
	done
	cat >"$kroot/pahole" <<-EOF
		#!/bin/sh
		# The pahole of the kernel's release, by its own C library (tests/lab/arm64.sh).
		exec "$kroot/hostlibc/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$kroot/hostlibc/usr/lib/x86_64-linux-gnu" "$kroot/hostlibc/usr/bin/pahole" "\$@"
	EOF
	chmod 755 "$kroot/pahole"
	"$kroot/pahole" --version >/dev/null || die "$kroot/pahole does not run"
}

# arm64_fit_compiler HEADERS: when this machine lacks the compiler the kernel was built with
# (trixie's: gcc-14), modules are built with Debian 12's aarch64-linux-gnu-gcc (12), as Debian's
# kbuild allows (DEBIAN_KERNEL_NO_CC_VERSION_CHECK). What the kernel's configuration says of its
# compiler that gcc 12 cannot do is taken back: -fmin-function-alignment (gcc 14; kbuild then
# aligns functions with -falign-functions, as for older compilers).
arm64_fit_compiler() {
	local hdr=$1 ver
	ver=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="aarch64-linux-gnu-gcc-\([0-9]*\) .*/\1/p' "$hdr/.config")
	command -v "aarch64-linux-gnu-gcc-${ver:-none}" >/dev/null && return 0
	sed -i '/^CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=/d' "$hdr/include/config/auto.conf"
	sed -i '/#define CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT /d' "$hdr/include/generated/autoconf.h"
}

# The highest GLIBC_x.y version FILE needs (0 for none).
glibc_needed() {
	objdump -T "$1" 2>/dev/null | sed -n 's/.*GLIBC_\([0-9.]*\).*/\1/p' | sort -V | tail -1
}

# arm64_host_loader KROOT KBUILD_DIR: every amd64 program of KBUILD_DIR that needs a newer glibc
# than this machine's runs through trixie's ld.so and libc (unpacked into KROOT/hostlibc).
arm64_host_loader() {
	local kroot=$1 dir=$2 have f need libc
	have=$(ldd --version | sed -n '1s/.* \([0-9][0-9.]*\)$/\1/p')
	while IFS= read -r -d '' f; do
		[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
		need=$(glibc_needed "$f")
		[ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -1)" != "$have" ] || continue
		if [ ! -d "$kroot/hostlibc" ]; then
			libc=$(dapt_fetch "$lab/debs" "libc6:amd64")
			dpkg-deb -x "$libc" "$kroot/hostlibc"
		fi
		mv "$f" "$f.real"
		cat >"$f" <<-EOF
			#!/bin/sh
			# $(basename "$f") needs glibc $need: run by the C library of its own release (tests/lab/arm64.sh).
			exec "$kroot/hostlibc/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$kroot/hostlibc/usr/lib/x86_64-linux-gnu" "$f.real" "\$@"
		EOF
		chmod 755 "$f"
	done < <(find "$dir" -type f -perm -u+x -print0)
}

# arm64_root: the guest's root filesystem in $lab/root (shared by both arm64 kernels), rebuilt when
# the package list or this file changes. The packages are bookworm's whatever the kernel.
arm64_root() {
	local stamp want
	root=$lab/root
	want=$(printf '%s\n' "$ARM64_ROOT_PKGS" | cat - "$top/tests/lab/arm64.sh" "$top/cross/apt.sh" | sha256sum | cut -c1-16)
	stamp=$lab/root.stamp
	(
		flock 8
		[ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -x "$root/bin/bash" ] && exit 0
		local DAPT=() pkgs p debs=()
		dapt_init "$lab/apt/bookworm" bookworm
		# shellcheck disable=SC2086
		pkgs=$(dapt_closure $ARM64_ROOT_PKGS) || exit 125
		# shellcheck disable=SC2086
		mapfile -t debs < <(dapt_fetch "$lab/debs" $pkgs)
		# shellcheck disable=SC2086
		[ ${#debs[@]} -eq "$(echo $pkgs | wc -w)" ] || exit 125
		note "unpacking ${#debs[@]} arm64 packages into $root"
		rm -rf "$root"
		mkdir -p "$root"
		dapt_unpack "$root" "${debs[@]}"
		# What the packages' scripts would have done: /bin/sh, the alternatives the tests call by
		# their generic names, users and groups, /etc/mtab.
		[ -e "$root/usr/bin/sh" ] || ln -s dash "$root/usr/bin/sh"
		local alt
		for alt in awk:mawk nawk:mawk cc:gcc which:which.debianutils lzma:xz; do
			[ -e "$root/usr/bin/${alt%%:*}" ] || ln -s "${alt#*:}" "$root/usr/bin/${alt%%:*}"
		done
		cp "$root/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
		cp "$root/usr/share/base-passwd/group.master" "$root/etc/group"
		ln -sfn ../proc/self/mounts "$root/etc/mtab"
		mkdir -p "$root/tmp" "$root/run" "$root/dev" "$root/proc" "$root/sys" "$root/root"
		chmod 1777 "$root/tmp"
		echo "$want" >"$stamp"
	) 8>"$lab/root.lock" || exit
}

# arm64_make_modules KVER KROOT DIR: the modules of DIR (its Kbuild) for the arm64 kernel KVER.
# The kernel's own compiler when this machine has it (bookworm's 6.12: aarch64-linux-gnu-gcc-12),
# else Debian 12's (trixie's kernels were built with gcc-14; the kernel only warns of the difference).
arm64_make_modules() {
	local kver=$1 kroot=$2 dir=$3 ver cc=()
	ver=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="aarch64-linux-gnu-gcc-\([0-9]*\) .*/\1/p' \
		"$kroot/root/usr/src/linux-headers-$kver/.config")
	command -v "aarch64-linux-gnu-gcc-${ver:-none}" >/dev/null || cc=(CC=aarch64-linux-gnu-gcc)
	[ -x "$kroot/pahole" ] && cc+=(PAHOLE="$kroot/pahole")
	make -C "$kroot/root/usr/src/linux-headers-$kver" M="$dir" "${cc[@]}" modules
}
