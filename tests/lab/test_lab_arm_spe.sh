#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lab-arch: arm64
# Arm SPE on the emulated unit (arm_spe_0; a real arm64 kernel, not real hardware), which samples
# the thread it runs for about every millisecond (sample_period operations of ns_per_op), each
# record the interrupted user PC, the context ID, the operation, a decoded load's address, events,
# latencies and a timestamp (tests/lab/module/auxtrig_spe.c).
#
# A: windows (syscall:getppid:exit..syscall:getuid:enter, migrate_demo spinning 20 ms on each side
#    of a move to another CPU inside each): the SPE driver cannot pause in the kernel (no
#    PERF_PMU_CAP_AUX_PAUSE, 6.12 and 7.x alike), so auxtrig says so and gates the trace from
#    userspace; every record is of the demo's thread, and records were taken in its windows;
#    auxtrig script prints the samples perf 6.1 synthesises from them, line for line.
# B: -Se snapshots by SIGUSR2 (four, half a second apart) and at exit of a spinning workload into an
#    8 KiB area (SPE's head is an offset in the area: perf's arm_spe_find_snapshot() rule): none
#    larger than the area, the whole area each time it wrapped, every record whole (perf 6.1 and
#    auxtrig read every byte as packets).
# C: full trace into 8 KiB while auxtrig is stopped: the profiling buffer fills, TRUNCATED, and
#    auxtrig counts the truncations as perf 6.1 does; sampling goes on after auxtrig read the area.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm_units.sh"
need_spe_unit
MIG=$build/examples/migrate_demo
clock=$build/examples/window_clock

# dump FILE: perf 6.1's dump of FILE (perf_dump: FILE.dump, FILE.dump.err) and auxtrig script
# --packets' (FILE.pk), each made once (perf is slow to start under TCG): the checks below read them.
dump() {
	perf_dump "$1"
	"$AUXTRIG" script --packets -i "$1" >"$1.pk" 2>"$1.pk.err" ||
		fail "auxtrig script --packets failed: $(tail -3 "$1.pk.err")"
}

# spe_records FILE: the records of FILE as perf 6.1 dumps them (dump FILE first), one a line:
# "PC CONTEXT" (hex).
spe_records() {
	gawk '
		/ PC 0x[0-9a-f]+/ { pc = $0; sub(/.* PC /, "", pc); sub(/ .*/, "", pc) }
		/ CONTEXT 0x[0-9a-f]+/ { c = $0; sub(/.* CONTEXT /, "", c); sub(/ .*/, "", c) }
		/ (TS|END)( |$)/ && pc != "" { print pc, c; pc = c = "" }' "$1.dump"
}

# spe_decoded FILE [ours]: every record of FILE as perf 6.1's packet dump decodes it (or auxtrig
# script --packets with "ours"; dump FILE first), one line each: its packets' meanings but padding,
# up to its Timestamp or End packet (PC, context, operation, data address, events, data source,
# latencies, timestamp). The two name a few things otherwise: perf's "OTHER INSN-OTHER" is
# auxtrig's "OTHER", its "DATA-SOURCE" auxtrig's "SRC".
spe_decoded() {
	if [ "${2:-}" = ours ]; then
		gawk '/^[0-9a-f]+  [0-9a-f][0-9a-f] / { sub(/^[0-9a-f]+  ([0-9a-f][0-9a-f] )+ */, ""); print }' "$1.pk"
	else
		gawk '/ ARM SPE data: / { spe = 1; next } !/^\.  [0-9a-f]+:  [0-9a-f][0-9a-f] / { spe = 0 }
			spe { sub(/^\.  [0-9a-f]+:  ([0-9a-f][0-9a-f] )+ */, ""); print }' "$1.dump"
	fi | gawk '$1 == "PAD" { next }
		{ sub(/^DATA-SOURCE /, "SRC "); if ($1 == "OTHER") $0 = "OTHER"; rec = rec (rec == "" ? "" : "; ") $0 }
		$1 == "TS" || $1 == "END" { print rec; rec = "" }'
}

# records_agree FILE: perf 6.1 and auxtrig script decode every record of FILE the same (dump FILE
# first); their number on stderr.
records_agree() {
	spe_decoded "$1" >"$tmp/rec.perf"
	spe_decoded "$1" ours >"$tmp/rec.ours"
	[ -s "$tmp/rec.perf" ] || fail "perf 6.1 decodes no SPE record in $1"
	diff -u "$tmp/rec.perf" "$tmp/rec.ours" >"$tmp/diff" ||
		fail "auxtrig script decodes the SPE records otherwise than perf 6.1: $(head -20 "$tmp/diff")"
	grep -q '^PC 0x[0-9a-f]* el0 ns=1; CONTEXT 0x[0-9a-f]* el1; .*; EV RETIRED.*; LAT 1 ISSUE; LAT 2 TOT; TS [0-9]*$' \
		"$tmp/rec.perf" || fail "no record with a PC, context, events, latencies and a timestamp: $(head -3 "$tmp/rec.perf")"
	cat "$tmp/rec.perf" >>"$tmp/rec.all"
	echo "$(wc -l <"$tmp/rec.perf") records, decoded the same by perf 6.1 and auxtrig" >&2
}

# reads_cleanly FILE: perf 6.1 dumped FILE without a warning (dump FILE first).
reads_cleanly() {
	! grep -iE 'warning|error|failed' "$1.dump.err" || fail "perf report -D warns: $(head -3 "$1.dump.err")"
}

# samples_agree FILE: auxtrig script prints the samples perf 6.1 synthesises from the SPE records
# (perf script -F tid,event,addr,ip,sym, but the tracepoints' events; columns aligned otherwise),
# line for line; their number on stderr. Samples in the vDSO (window_clock spins on
# clock_gettime()) are named too: perf 6.1 reads its own process's vDSO, auxtrig its own for a file
# of the running kernel, the same image.
samples_agree() {
	perf script -F tid,event,addr,ip,sym,dso -i "$1" >"$tmp/p.all" 2>"$tmp/p.err" ||
		fail "perf script failed: $(tail -3 "$tmp/p.err")"
	gawk '$2 ~ /:.*:$/ { next } { NF--; print }' "$tmp/p.all" >"$tmp/p.txt"
	"$AUXTRIG" script -i "$1" >"$tmp/a.all" 2>"$tmp/a.err" || fail "auxtrig script failed: $(tail -3 "$tmp/a.err")"
	gawk '{ $1 = $1; print }' "$tmp/a.all" >"$tmp/a.txt"
	diff -u "$tmp/p.txt" "$tmp/a.txt" >"$tmp/diff" || fail "auxtrig script's samples differ from perf 6.1's: $(head -20 "$tmp/diff")"
	echo "$(wc -l <"$tmp/p.txt") samples, the same in perf 6.1 and auxtrig ($(grep -c '(\[vdso\])$' "$tmp/p.all") in the vDSO)" >&2
}

# --- A: windows, gated from userspace -------------------------------------------------------------
[ "$(nproc)" -ge 2 ] || fail "needs two CPUs to move the demo between (this guest has $(nproc); AUXTRIG_LAB_SMP)"
"$AUXTRIG" record -e arm_spe//u -w 'syscall:getppid:exit..syscall:getuid:enter' -o "$tmp/a.data" \
	-- "$MIG" -t 0 -r 3 -s 20 >"$tmp/a.out" 2>"$tmp/a.err" || fail "record failed: $(cat "$tmp/a.err")"
cat "$tmp/a.err" >&2
grep -q "arm_spe//u: this PMU cannot pause/resume in the kernel" "$tmp/a.err" ||
	fail "no word of the PMU that cannot pause: $(cat "$tmp/a.err")"
grep -q "hardware trace arm_spe//u: windows gated from userspace" "$tmp/a.err" || fail "not the gated path: $(cat "$tmp/a.err")"
pid=$(sed -n 's/^migrate_demo: pid \([0-9]*\),.*/\1/p' "$tmp/a.out")
[ -n "$pid" ] || fail "no pid in $(cat "$tmp/a.out")"
dump "$tmp/a.data"
spe_records "$tmp/a.data" >"$tmp/a.rec"
records=$(wc -l <"$tmp/a.rec")
echo "$records records" >&2
# 3 windows of 40 ms of spinning each: about 40 records each, less the gate's late enable.
[ "$records" -ge 3 ] || fail "$records SPE records in 3 windows of 40 ms of spinning"
gawk -v p="$pid" '{ c = strtonum($2) } c != p { print "a record of context ID " c " (PC " $1 "), not the demo'"'"'s " p }' \
	"$tmp/a.rec" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "$(head -3 "$tmp/bad")"
records_agree "$tmp/a.data"
samples_agree "$tmp/a.data"
reads_cleanly "$tmp/a.data"
echo "A: ${SECONDS}s" >&2


# spin_bg NAME ARGS...: auxtrig recording SPE (an 8 KiB area, ARGS added) of the endless spinning
# workload into $tmp/NAME.data, in the background; the workload's pid in $demo.
spin_bg() {
	local name=$1; shift
	record_bg "$tmp/$name.err" -e arm_spe//u -m 64,2 "$@" -o "$tmp/$name.data" -- "$clock" 100000 1 10 spin
	demo=$(command_pid $aux)
	[ -n "$demo" ] || fail "auxtrig ($aux) has no child"
}

# spin_end NAME: end the workload, then auxtrig's run (it must succeed); dump its file.
spin_end() {
	kill $demo
	wait $aux || fail "record failed: $(cat "$tmp/$1.err")"
	cat "$tmp/$1.err" >&2
	dump "$tmp/$1.data"
}
# --- B: snapshots of an 8 KiB area ------------------------------------------------------------------
spin_bg b -Se
for n in 1 2 3 4; do
	sleep 0.5
	kill -USR2 $aux
	wait_for "$tmp/b.err" "snapshot $n \(SIGUSR2\)" $aux
done
spin_end b
sed -n 's/.*PERF_RECORD_AUXTRACE size: \(0x[0-9a-f]*\) .*/\1/p' "$tmp/b.data.dump" |
	while read -r s; do echo $((s)); done >"$tmp/b.sizes"
echo "snapshot sizes: $(tr '\n' ' ' <"$tmp/b.sizes")" >&2
assert_eq "$(wc -l <"$tmp/b.sizes")" 5 "snapshots with data (4 by SIGUSR2, 1 at exit)"
gawk '$1 > 8192 { print "a snapshot of " $1 " bytes, more than the 8 KiB area" }' "$tmp/b.sizes" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "$(head -3 "$tmp/bad")"
# Half a second of spinning between snapshots, a record of 64 bytes about every millisecond: the
# area wraps between two snapshots, and every snapshot but the first is the whole area.
assert_eq "$(tail -n +2 "$tmp/b.sizes" | sort -u)" 8192 "the sizes of the snapshots after the first (the area wrapped)"
grep '^# [0-9]* records, [0-9]* bad bytes' "$tmp/b.data.pk" >"$tmp/b.counts"
assert_eq "$(wc -l <"$tmp/b.counts")" 5 "snapshots auxtrig script reads records in"
gawk '$4 != 0 { print }' "$tmp/b.counts" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "bad bytes in a snapshot: $(head -3 "$tmp/bad")"
records_agree "$tmp/b.data"
samples_agree "$tmp/b.data"
reads_cleanly "$tmp/b.data"
echo "A+B: ${SECONDS}s" >&2

# --- C: full trace into 8 KiB while auxtrig is stopped ---------------------------------------------
spin_bg c
# auxtrig stopped for half a second: the 8 KiB area (128 records) fills in a fifth of one. Then the
# sampling goes on: the workload ends once auxtrig has written 24 KiB more (the full area and 16 KiB
# sampled after it), waited for rather than timed, as the loaded host gives the guest little CPU.
kill -STOP $aux
sleep 0.5
size=$(stat -c %s "$tmp/c.data")
kill -CONT $aux
wait_size "$tmp/c.data" $((size + 24576)) $aux
spin_end c
sed -n 's/.*PERF_RECORD_AUX offset: .* flags: \([0-9a-fx]*\) .*/\1/p' "$tmp/c.data.dump" |
	while read -r f; do echo $((f)); done >"$tmp/c.flags"
truncated=$(gawk '$1 % 2' "$tmp/c.flags" | wc -l)
[ "$truncated" -ge 1 ] || fail "no AUX record says TRUNCATED: half a second of sampling into 8 KiB with auxtrig stopped"
grep -q "hardware trace arm_spe//u: $truncated AUX records truncated" "$tmp/c.err" ||
	fail "auxtrig does not report the $truncated truncations: $(grep 'hardware trace' "$tmp/c.err")"
grep -q "AUX data lost $truncated times out of" "$tmp/c.data.dump.err" ||
	fail "perf 6.1 counts the losses otherwise: $(grep -i aux "$tmp/c.data.dump.err")"
# after the truncation the sampling went on: an AUX record without TRUNCATED after the last one that has it
gawk '$1 % 2 { t = NR } END { exit !(t < NR) }' "$tmp/c.flags" || fail "no data published after the last truncation"
records_agree "$tmp/c.data"
samples_agree "$tmp/c.data"
# The unit decodes the loads it samples (LDR, immediate offset): their data address and source.
grep -q '; LD GP-REG; VA 0x[0-9a-f]*; EV RETIRED L1D-ACCESS; SRC 0; ' "$tmp/rec.all" ||
	fail "no load among the $(wc -l <"$tmp/rec.all") records: no data address or data source decoded"
echo "A+B+C: ${SECONDS}s" >&2
echo ok
