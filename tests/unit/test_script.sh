#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `auxtrig script` on the real captures in ../shared/data, against perf 6.1's
# reference listings; its exit codes; its --help against its man page.
# Exit 0 pass, 77 skip (no shared data, not under CI=true), else fail.
set -u
top=${AUXTRIG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AUXTRIG_BUILD:-$top/build}
data=$top/../shared/data
auxtrig=$build/auxtrig
bad=0
fail() { echo "FAIL: $*"; bad=1; }

[ -x "$auxtrig" ] || { echo "no $auxtrig: run make first"; exit 1; }
if [ ! -f "$data/README.md" ]; then
	echo "shared test data not found at $data"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# perf 6.1 takes kernel symbols from $HOME/.debug whatever PERF_BUILDID_DIR says: with an empty
# home, what earlier perf runs cached on this machine does not decide its lines.
if command -v perf >/dev/null; then
	mkdir "$tmp/home"
	perf() { HOME="$tmp/home" command perf "$@"; }
fi

# An auxtrig built without libipt (LIBIPT=0: Debian has no libipt for arm64) says so in
# --version and refuses Intel PT files in one line with exit 3; the Intel PT checks below then
# become that refusal, and the rest uses the CoreSight capture.
pt=$data/perf/intel_pt-skylake/perf.data.intel_pt-4.14
ipt=1
"$auxtrig" --version | grep -q 'built without libipt' && ipt=0
if [ $ipt = 0 ]; then
	"$auxtrig" script -i "$pt" >"$tmp/pt.txt" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 3 ] || fail "Intel PT without libipt: exit $rc, want 3"
	[ ! -s "$tmp/pt.txt" ] || fail "Intel PT without libipt: printed samples"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "built without libipt" "$tmp/err" ||
		fail "Intel PT without libipt: not a one-line refusal: $(cat "$tmp/err")"
else
	# --- Intel PT: byte-identical to perf's 634 samples: 619 branches, 15 cycles
	# samples placed among them by the MTC-refined TSC time.
	ref=$data/reference/intel_pt-skylake-itrace-b.txt
	"$auxtrig" script -i "$pt" -F ip,addr,cpu >"$tmp/pt.txt" || fail "script on the Intel PT capture exited $?"
	[ "$(wc -l <"$tmp/pt.txt")" -eq 634 ] || fail "Intel PT: $(wc -l <"$tmp/pt.txt") lines, perf has 634"
	[ "$(grep -c '=>' "$tmp/pt.txt")" -eq 619 ] || fail "Intel PT: not 619 branch samples"
	cmp -s "$tmp/pt.txt" "$ref" || { fail "Intel PT samples differ from perf's:"; diff "$tmp/pt.txt" "$ref" | head; }

	"$auxtrig" script -i "$pt" --packets >"$tmp/pt.pkt" || fail "script --packets on Intel PT exited $?"
	grep -qx '# 9980 packets, 874 PAD, 0 errors' "$tmp/pt.pkt" || fail "Intel PT buffer 0: not 9980 packets"
	grep -qx '# 95129 packets, 19142 PAD, 0 errors' "$tmp/pt.pkt" || fail "Intel PT buffer 3: not 95129 packets"
	n=$(grep -vc -e '^#' -e ' PAD$' "$tmp/pt.pkt")
	[ "$n" -eq 85093 ] || fail "Intel PT: $n non-PAD packets listed, perf's dump has 85093"
fi

# --- CoreSight (simpleperf perf.data): byte-identical to perf's 208 samples.
etm=$data/perf/cs_etm-arm64
ref=$data/reference/cs_etm-arm64-perf_etm-itrace-b.txt
"$auxtrig" script -i "$etm/perf_etm.data" --symfs "$etm/symfs" -F ip,addr,sym,symoff,dso >"$tmp/cs.txt" ||
	fail "script on the ETM capture exited $?"
cmp -s "$tmp/cs.txt" "$ref" || { fail "CoreSight branch samples differ from perf's:"; diff "$tmp/cs.txt" "$ref" | head; }
[ "$(wc -l <"$tmp/cs.txt")" -eq 208 ] || fail "CoreSight: not 208 samples"
"$auxtrig" script -i "$etm/perf_etm.data" --symfs "$etm/symfs" --packets >"$tmp/cs.pkt" || fail "script --packets on ETM exited $?"
grep -qx '# trace ID 0x1e: 27 packets, 214 elements, 208 instruction ranges' "$tmp/cs.pkt" ||
	fail "CoreSight: not 27 packets / 214 elements / 208 ranges: $(grep '^# trace' "$tmp/cs.pkt")"
[ "$(grep -c 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' "$tmp/cs.pkt")" -eq 208 ] || fail "CoreSight: listing lacks 208 ranges"
"$auxtrig" script -i "$etm/perf_etm.data" --symfs "$etm/symfs" --itrace=i >"$tmp/cs.i" || fail "--itrace=i exited $?"
[ "$(wc -l <"$tmp/cs.i")" -eq 208 ] || fail "--itrace=i: not 208 ranges"
head -n1 "$tmp/cs.i" | grep -q '582b2b1000 -       582b2b1008' || fail "--itrace=i: first range is $(head -n1 "$tmp/cs.i")"
# Without --symfs the image is not found: no ranges, hence no samples, but no failure either.
"$auxtrig" script -i "$etm/perf_etm.data" >"$tmp/cs.nosymfs" 2>/dev/null || fail "script without --symfs exited $?"

# Symbols: the shipped binary has none; give a copy two function symbols
# (objcopy, generic ELF) and the samples must name them as perf does.
mkdir -p "$tmp/symfs/data/local/tmp"
if objcopy -I elf64-little -O elf64-little --add-symbol start_loop=.text:0x0,function,global \
	--add-symbol body=.text:0x54,function,global "$etm/symfs/data/local/tmp/etm_test_loop" \
	"$tmp/symfs/data/local/tmp/etm_test_loop"; then
	"$auxtrig" script -i "$etm/perf_etm.data" --symfs "$tmp/symfs" -F ip,addr,sym,symoff,dso >"$tmp/cs.sym" ||
		fail "script with symbols exited $?"
	sed -n 3p "$tmp/cs.sym" | grep -qx '       582b2b1050 start_loop+0x50 (/data/local/tmp/etm_test_loop) =>       582b2b10e0 body+0x8c (/data/local/tmp/etm_test_loop)' ||
		fail "symbols: line 3 is '$(sed -n 3p "$tmp/cs.sym")'"
	[ "$(grep -c 'body+0x' "$tmp/cs.sym")" -ge 200 ] || fail "symbols: body+ offsets missing"
	# perf itself, when installed, must agree.
	if command -v perf >/dev/null; then
		perf script -i "$etm/perf_etm.data" --symfs "$tmp/symfs" --itrace=b -F ip,addr,sym,symoff,dso \
			>"$tmp/perf.sym" 2>/dev/null
		cmp -s "$tmp/cs.sym" "$tmp/perf.sym" || { fail "symbols: differ from perf script's"; diff "$tmp/cs.sym" "$tmp/perf.sym" | head -4; }
	fi
else
	fail "objcopy could not add symbols (binutils missing?)"
fi

# --- The lines perf script prints by default (comm, tid, cpu, time, period, event, ip sym+off
# (dso) => addr sym+off (dso)), and with perf's -F field names, byte for byte: perf 6.1 is the
# oracle (--itrace=b: auxtrig's default selection).
if command -v perf >/dev/null; then
	same_as_perf() {	# FILE SYMFS FIELDS
		local f=$1 symfs=$2 fields=$3 args=() pargs=()
		[ -n "$symfs" ] && args+=(--symfs "$symfs")
		[ -n "$fields" ] && pargs+=(-F "$fields")
		perf script -i "$f" "${args[@]}" --itrace=b "${pargs[@]}" >"$tmp/perf.lines" 2>/dev/null
		"$auxtrig" script -i "$f" "${args[@]}" "${pargs[@]}" >"$tmp/ours.lines" 2>/dev/null ||
			fail "script -F '$fields' on $(basename "$f") exited $?"
		[ -s "$tmp/perf.lines" ] || fail "perf printed nothing for -F '$fields' on $(basename "$f")"
		cmp -s "$tmp/perf.lines" "$tmp/ours.lines" ||
			{ fail "-F '$fields' on $(basename "$f") differs from perf's:"; diff "$tmp/perf.lines" "$tmp/ours.lines" | head -4; }
	}
	for fields in "" +flags +callindent +flags,+callindent,+insnlen "-time" +cpu,+pid comm,tid,pid,time,cpu,event,period,ip,addr,sym,symoff,dso \
		tid,ip,addr,flags "+callindent,-ip" addr; do
		[ $ipt = 1 ] && same_as_perf "$pt" "" "$fields"
	done
	[ $ipt = 0 ] || grep -q '^            echo  3174   641.256912:          1   branches:      7fb36d08bd60 \[unknown\] (/lib64/ld-2.23.so) => ffffffffba001340 \[unknown\] (\[kernel.kallsyms\])$' \
		<("$auxtrig" script -i "$pt") || fail "Intel PT: the default line of the first system call is not perf's"
	for fields in "" +insn,+insnlen +pid -cpu tid,ip comm,tid,pid,cpu,event,period,ip,addr,sym,symoff,dso; do
		same_as_perf "$etm/perf_etm.data" "$etm/symfs" "$fields"
	done
elif [ "${CI:-}" = true ]; then
	fail "perf is not installed: the sample lines cannot be checked against perf script"
fi
# What the file cannot give is refused in one line: no time without the ETM's timestamps.
"$auxtrig" script -i "$etm/perf_etm.data" --symfs "$etm/symfs" -F time,ip >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "-F time on a timeless CoreSight file: not a usage error"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "time: the samples of 'branches:u' in this file do not record it" "$tmp/err" ||
	fail "-F time refusal: $(cat "$tmp/err")"

# --- Exit codes: 2 usage, 1 unreadable.
expect() {
	local want=$1; shift
	"$auxtrig" script "$@" >/dev/null 2>"$tmp/err"
	local rc=$?
	[ $rc -eq "$want" ] || fail "auxtrig script $*: exit $rc, want $want"
	[ "$want" -eq 0 ] || [ -s "$tmp/err" ] || fail "auxtrig script $*: no message on stderr"
}
expect 2 --bogus
# (usage errors on a file this build decodes)
any=$pt; [ $ipt = 1 ] || any=$etm/perf_etm.data
expect 2 --itrace=x -i "$any"
[ $ipt = 0 ] || expect 2 --itrace=i -i "$pt"	# Intel PT has no instruction samples
expect 2 -i "$any" extra-argument
expect 2 -i "$any" --windows --call-trace		# documented as exclusive
expect 2 -i "$any" -F cpu,nosuchfield
expect 2 -i "$any" -F +ip,time			# +/- and a list do not mix
expect 2 -i "$any" -F ip,symoff			# symoff needs sym
expect 2 -i "$any" -j 0
expect 1 -i "$tmp/does-not-exist"
expect 1 -i "$data/README.md"
head -c 5000 "$any" >"$tmp/truncated.data"
expect 1 -i "$tmp/truncated.data"
expect 0 --help

# --- A binary under --symfs that is a FIFO: skipped, never opened for reading (it would block).
mkdir -p "$tmp/fifo/data/local/tmp"
mkfifo "$tmp/fifo/data/local/tmp/etm_test_loop"
timeout 20 "$auxtrig" script -i "$etm/perf_etm.data" --symfs "$tmp/fifo" >"$tmp/fifo.out" 2>"$tmp/fifo.err"
rc=$?
[ $rc -ne 124 ] || fail "script hangs on a FIFO under --symfs"
[ $rc -eq 0 ] || fail "script with a FIFO under --symfs exited $rc: $(cat "$tmp/fifo.err")"
grep -q "none of the 9 traced binaries was found" "$tmp/fifo.err" || fail "FIFO: $(cat "$tmp/fifo.err")"

# --- Corrupted copies: an error (1) or a decode of what survives (0), never a crash.
RANDOM=20261122
for i in $(seq 1 40); do
	if [ $((i % 2)) = 0 ] && [ $ipt = 1 ]; then src=$pt; lo=$((0x29c0 + 48)); args=(); else
		src=$etm/perf_etm.data; lo=$((0x26a8 + 48)); args=(--symfs "$etm/symfs"); fi
	size=$(stat -c %s "$src")
	cp "$src" "$tmp/fuzz.data"
	chmod u+w "$tmp/fuzz.data"
	for j in $(seq 1 $((1 + RANDOM % 12))); do
		# Mostly into the trace payloads (the decoders), sometimes anywhere.
		if [ $((RANDOM % 5)) = 0 ]; then off=$(((RANDOM * 32768 + RANDOM) % size)); else
			off=$((lo + (RANDOM * 32768 + RANDOM) % (size - lo))); fi
		printf "\\x$(printf %02x $((RANDOM % 256)))" |
			dd of="$tmp/fuzz.data" bs=1 seek=$off conv=notrunc status=none
	done
	for mode in "" --packets --windows; do
		"$auxtrig" script -i "$tmp/fuzz.data" "${args[@]}" $mode >/dev/null 2>&1
		rc=$?
		[ $rc -le 1 ] || { fail "corrupted copy $i ($src) $mode: exit $rc"; cp "$tmp/fuzz.data" "$build/fuzz-fail-$i.data"; }
	done
done

# --- --help and the man page name the same long options.
page=$top/man/auxtrig-script.1
help=$("$auxtrig" script --help) || fail "script --help failed"
for o in $(grep -oE -- '--[a-z][a-z0-9-]+' <<<"$help" | sort -u); do
	sed 's/\\-/-/g' "$page" | grep -qF -- "$o" || fail "$o is in --help but not in $page"
done
for o in $(sed 's/\\-/-/g' "$page" | awk '/^\.SH OPTIONS/ { on = 1; next } /^\.SH/ { on = 0 } on' |
	   grep -E '^\.(TP|B|BR|BI)' | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
	grep -qF -- "$o" <<<"$help" || fail "$o is in $page but not in --help"
done
grep -q '^\.B script$' "$top/man/auxtrig.1" || fail "auxtrig(1) does not list script"

[ $bad = 0 ] && echo ok
exit $bad
