#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The sysroot of the arm64 cross build (make ARCH=arm64 on a machine of another architecture):
# Debian 12's arm64 development packages of the libraries auxtrig links and its tests use, fetched
# through private package lists (cross/apt.sh) and unpacked, never installed. The package lists and
# the .deb files are the ones the arm64 lab of the same build directory uses (BUILD/lab).
#
#   cross/sysroot.sh BUILD    makes BUILD/sysroot (again when this list or cross/apt.sh changes)
set -eu -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: cross/sysroot.sh BUILD}
mkdir -p "$build"
build=$(cd "$build" && pwd)
sysroot=$build/sysroot
lab=$build/lab

# libipt-dev is not among them: Debian builds it for x86 only (auxtrig's Makefile: LIBIPT).
PKGS="libc6-dev linux-libc-dev libbpf-dev libelf-dev zlib1g-dev libdw-dev libopencsd-dev libcmocka-dev
	systemtap-sdt-dev"

DAPT_WHO=cross/sysroot.sh DAPT_EXIT=1
. "$top/cross/apt.sh"
want=$(printf '%s\n' "$PKGS" | cat - "$0" "$top/cross/apt.sh" | sha256sum | cut -c1-16)
[ "$(cat "$sysroot/.stamp" 2>/dev/null)" = "$want" ] && exit 0

mkdir -p "$lab"
dapt_init "$lab/apt/bookworm" bookworm
# shellcheck disable=SC2086
pkgs=$(dapt_closure $PKGS)
# shellcheck disable=SC2086
mapfile -t debs < <(dapt_fetch "$lab/debs" $pkgs)
# shellcheck disable=SC2086
[ ${#debs[@]} -eq "$(echo $pkgs | wc -w)" ] || exit 1
rm -rf "$sysroot"
mkdir -p "$sysroot"
dapt_unpack "$sysroot" "${debs[@]}"
echo "$want" >"$sysroot/.stamp"
echo "  SYSROOT  $sysroot (${#debs[@]} Debian arm64 packages)"
