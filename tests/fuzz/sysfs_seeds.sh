#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Writes the sysfs fixture trees (tests/fixtures/sysfs-*) as seeds of
# fuzz_sysfs (format in tests/fuzz/fuzz_sysfs.c), one per event spec the
# dry-run tests use. Run from the project root; the output is committed.
set -eu
out=tests/fuzz/corpus/sysfs
mkdir -p "$out"
seed() { # NAME FIXTURE SPEC
	local dev=tests/fixtures/$2/bus/event_source/devices
	{
		printf '%s\n' "$3"
		(cd "$dev" && find . -type f | sort | while read -r f; do
			printf '%s=' "${f#./}"
			awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }' "$f"
			[ -n "$(tail -c 1 "$f")" ] || printf '\\n'
			printf '\n'
		done)
	} >"$out/$1"
}
seed intel_pt sysfs-intel_pt 'intel_pt//u'
seed intel_pt-terms sysfs-intel_pt 'intel_pt/mtc_period=3,cyc,cyc_thresh=2,psb_period=1,branch=0/k'
seed cs_etm sysfs-cs_etm 'cs_etm/@tmc_etr0/u'
seed cs_etm-terms sysfs-cs_etm 'cs_etm/timestamp,contextid,cycacc,@tmc_etf0/k'
seed arm_spe sysfs-arm_spe 'arm_spe_0//'
seed arm_spe-terms sysfs-arm_spe 'arm_spe/ts_enable=1,load_filter=1,min_latency=20/u'
