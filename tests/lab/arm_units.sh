# SPDX-License-Identifier: BSD-2-Clause
# Shared by tests/lab/test_lab_arm_*.sh, which run inside an arm64 lab guest (tests/lab/vm --arch
# arm64 --arm-units) with the emulated Arm trace units of tests/lab/module (NOT real hardware):
# auxtrig_cs_etm (cs_etm: ETMv4 or ETE, tmc_etr0 and TRBE sinks) and auxtrig_spe (arm_spe_0).
# Sourced after lib.sh.

# need_cs_unit [PARAMS...]: the emulated CoreSight unit loaded with PARAMS (ete=1: ETE with a TRBE
# per CPU; etr_size=BYTES), reloaded if it was loaded otherwise. Outside an arm64 lab guest there
# is none to load: a skip (a failure under CI).
need_cs_unit() {
	need_root
	need_perf
	[ -n "${AUXTRIG_LAB_ARM_UNITS:-}" ] ||
		skip "needs the lab's emulated Arm units: run it in an arm64 guest (tests/lab/vm --arch arm64 --arm-units -- ...)"
	arm_unit_load auxtrig_cs_etm cs_etm "$@"
}

# need_spe_unit: the emulated SPE unit loaded (arm_spe_0).
need_spe_unit() {
	need_root
	need_perf
	[ -n "${AUXTRIG_LAB_ARM_UNITS:-}" ] ||
		skip "needs the lab's emulated Arm units: run it in an arm64 guest (tests/lab/vm --arch arm64 --arm-units -- ...)"
	arm_unit_load auxtrig_spe arm_spe_0 "$@"
}

# arm_unit_load MODULE PMU [PARAMS...]: MODULE (a file of $AUXTRIG_LAB_ARM_UNITS) loaded with
# PARAMS, unloaded first if it was loaded with others.
arm_unit_load() {
	local mod=$1 pmu=$2 ko state
	shift 2
	state=/tmp/.auxtrig-lab-$mod.params
	for ko in $AUXTRIG_LAB_ARM_UNITS; do [ "$(basename "$ko" .ko)" = "$mod" ] && break; ko=; done
	[ -n "$ko" ] || fail "\$AUXTRIG_LAB_ARM_UNITS has no $mod.ko: $AUXTRIG_LAB_ARM_UNITS"
	if [ -d "/sys/module/$mod" ]; then
		[ "$(cat "$state" 2>/dev/null)" = "$*" ] && return 0
		rmmod "$mod" || fail "cannot unload $mod to load it with '$*'"
	fi
	insmod "$ko" "$@" || fail "cannot load $ko $*"
	echo "$*" >"$state"
	[ -e "/sys/bus/event_source/devices/$pmu" ] || fail "$mod loaded, but there is no $pmu PMU"
}

# perf_dump FILE: perf 6.1's dump of FILE (perf report -D) in FILE.dump, its stderr in FILE.dump.err;
# made once for a FILE that did not change since: perf starts slowly under TCG, and a test reads the
# dump several times (switches, buffer sizes, flags, warnings).
perf_dump() {
	[ "$1.dump" -nt "$1" ] && [ -e "$1.dump.err" ] && return 0
	perf report -D -i "$1" >"$1.dump" 2>"$1.dump.err" || fail "perf report -D failed: $(tail -3 "$1.dump.err")"
}

# cs_switches_perf FILE: the unit's switches in FILE as perf 6.1 dumps its packets (perf report
# -D), one line each, in the order of the dump: "ID TS ADDR CID", ID the trace ID, TS the
# timestamp before the switch's exception, ADDR the exception's address, CID the context ID the
# stream last named ("-" before any). perf prints no exception type (IMPLEMENTATION DEFINED is
# "Reserved" to it): cs_switches gives the why. A line "AUX TID CPU" at each AUXTRACE buffer.
cs_switches_perf() {
	perf_dump "$1"
	gawk '
		function num(s) { sub(/;.*/, "", s); return s }
		/PERF_RECORD_AUXTRACE / { t = c = ""
			for (i = 1; i < NF; i++) { if ($i == "tid:") t = $(i + 1); if ($i == "cpu:") c = $(i + 1) }
			print "AUX", t, c; delete ts; delete cid; delete exc; next }
		!/ ID:[0-9a-f]+;/ { next }
		{ match($0, / ID:[0-9a-f]+;/); id = substr($0, RSTART + 4, RLENGTH - 5) }
		/I_TIMESTAMP/ { v = $0; sub(/.*Updated val = /, "", v); ts[id] = strtonum(v); next }
		/I_ADDR_CTXT_L_64IS0/ { v = $0; sub(/.*CID=/, "", v); cid[id] = strtonum(num(v)); next }
		/I_EXCEPT / { exc[id] = 1; next }
		/I_ADDR_L_64IS0/ && exc[id] { v = $0; sub(/.*Addr=/, "", v)
			printf "%s %d 0x%x %s\n", id, ts[id], strtonum(num(v)), (id in cid) ? cid[id] : "-"; exc[id] = 0 }' "$1.dump"
}

# cs_switches FILE [DECODER]: the unit's switches as auxtrig script decodes FILE (its own ETMv4
# decoder, or OpenCSD with DECODER=opencsd), one line each: "ID TS ADDR CID WHY" (as
# cs_switches_perf, with the why of the exception's type), a line "AUX TID CPU" at each buffer.
cs_switches() {
	AUXTRIG_CSD_DECODER=${2:-} "$AUXTRIG" script --packets -i "$1" 2>/dev/null | gawk '
		/^# AUXTRACE / { t = c = "-"
			for (i = 1; i < NF; i++) { if ($i == "tid") t = $(i + 1); if ($i == "cpu") c = $(i + 1) }
			print "AUX", t, c; delete ts; delete cid; next }
		!/ OCSD_GEN_TRC_ELEM_/ { next }
		{ match($0, / ID:[0-9a-f]+;/); id = substr($0, RSTART + 4, RLENGTH - 5) }
		/OCSD_GEN_TRC_ELEM_TIMESTAMP/ { v = $0; sub(/.*TS=/, "", v); sub(/\].*/, "", v); ts[id] = strtonum(v); next }
		/OCSD_GEN_TRC_ELEM_PE_CONTEXT/ { v = $0; sub(/.*CTXTID=/, "", v); sub(/;.*/, "", v); cid[id] = strtonum(v); next }
		/OCSD_GEN_TRC_ELEM_EXCEPTION\(/ { a = $0; sub(/.*pref ret addr:/, "", a); sub(/[ \]].*/, "", a)
			n = $0; sub(/.*excep num \(/, "", n); sub(/\).*/, "", n)
			printf "%s %d 0x%x %s %s\n", id, ts[id], strtonum(a), (id in cid) ? cid[id] : "-", why(n) }
		# Why the emulated unit switched its trace (the IMPLEMENTATION DEFINED exception it writes,
		# tests/lab/module/auxtrig_cs_etm.c); in awk, as a subshell per switch took seconds under TCG.
		function why(n, v) { v = strtonum(n)
			return v == 16 ? "start" : v == 17 ? "resume" : v == 18 ? "pause" : v == 19 ? "stop" : "exc" n }'
}

# cs_spans SWITCHES: the spans of trace in SWITCHES (cs_switches' output) ordered by their
# timestamps (the unit's are unique and increasing over all CPUs), from each switch-on to the
# switch-off of the same trace ID, one line each: "ID TID ON_TS ON_WHY OFF_TS OFF_WHY ON_ADDR
# OFF_ADDR"; a span whose off the buffer lost is left out. A switch out of place (an on inside a
# span, an off outside one) gives a line "BAD ..." and the exit status 1.
cs_spans() {
	grep -v '^AUX' "$1" | sort -k2,2n | gawk '
		function bad(m) { print "BAD " m; err = 1 }
		$5 == "start" || $5 == "resume" { if ($1 in on) bad("trace ID " $1 ": " $5 " at " $2 " inside a span from " on[$1])
			on[$1] = $2; onw[$1] = $5; ona[$1] = $3; tid[$1] = $4; next }
		$5 == "pause" || $5 == "stop" { if (!($1 in on)) { bad("trace ID " $1 ": " $5 " at " $2 " outside a span"); next }
			print $1, tid[$1], on[$1], onw[$1], $2, $5, ona[$1], $3; delete on[$1]; next }
		{ bad("unknown switch: " $0) }
		END { exit err }'
}

# cs_join_restarts: cs_spans lines prefixed with a buffer number ("B ID TID ON ONWHY OFF OFFWHY
# ONA OFFA", spans_per_buffer's) on stdin, with each window whose thread the scheduler switched out
# and back in as one line: the kernel stops a resumed window's trace when its thread sleeps and
# starts it again, unpaused, when it runs (resume..stop, start..stop, ..., start..pause of one
# thread in one buffer: one window, resume..pause). A window never paused stays as its first piece.
cs_join_restarts() {
	gawk '
		{ k = $1 " " $3 }
		$5 == "resume" && $7 == "stop" && !(k in open) { open[k] = $0; next }
		$5 == "start" && (k in open) {
			if ($7 == "stop") next
			split(open[k], f, " ")
			print f[1], f[2], f[3], f[4], f[5], $6, $7, f[8], $9
			delete open[k]; next
		}
		{ print }
		END { for (k in open) print open[k] }'
}

# cs_decoders_agree FILE: perf 6.1's packet dump, auxtrig's own ETMv4 decoder and OpenCSD (through
# auxtrig script) see the same switches in FILE (same trace IDs, timestamps, addresses, context
# IDs); leaves auxtrig's (with the whys) in $tmp/sw, and says how many on stderr.
cs_decoders_agree() {
	cs_switches_perf "$1" | grep -v '^AUX' | sort >"$tmp/sw.perf"
	cs_switches "$1" >"$tmp/sw"
	cs_switches "$1" opencsd >"$tmp/sw.ocsd"
	[ -s "$tmp/sw.perf" ] || fail "perf 6.1's dump of $1 has no switch of the unit"
	assert_eq "$(grep -v '^AUX' "$tmp/sw" | cut -d' ' -f1-4 | sort)" "$(cat "$tmp/sw.perf")" \
		"switches auxtrig script decodes (own ETMv4 decoder) against perf 6.1's packet dump"
	assert_eq "$(grep -v '^AUX' "$tmp/sw.ocsd")" "$(grep -v '^AUX' "$tmp/sw")" \
		"switches auxtrig script decodes with OpenCSD against its own decoder"
	echo "$(wc -l <"$tmp/sw.perf") switches, the same in perf 6.1, auxtrig and OpenCSD" >&2
}
