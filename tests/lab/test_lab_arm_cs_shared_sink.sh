#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lab-arch: arm64
# Per-thread CoreSight trace through tmc_etr0, a sink every CPU shares, on the emulated unit (a
# real arm64 kernel, not real hardware). The ETR driver keeps one trace memory per session: a
# thread's event that runs while another thread's holds the sink writes into the other's memory,
# and when the last one stops it copies that memory out only if it is its own; otherwise the
# driver WARNs and flags the AUX record truncated, with nothing in it (coresight-tmc-etr.c,
# tmc_update_etr_buffer(); the unit logs "writes another event's memory" as that WARN). So threads
# that run at once lose their trace. auxtrig says so before it starts, and its summary counts
# those records as what they are, not as a full AUX area. With -a (one group per CPU: the CPUs of
# one session share the memory, the driver's normal case) nothing is lost that way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm_units.sh"
need_cs_unit
MIG=$build/examples/migrate_demo
[ "$(nproc)" -ge 2 ] || fail "needs two CPUs to run threads at once (this guest has $(nproc); AUXTRIG_LAB_SMP)"
win='syscall:getppid:exit..syscall:getuid:enter'
note='per thread through tmc_etr0, a sink the CPUs share: the driver keeps one memory for the session'

# 1. Three threads, each spinning 20 ms inside each of its windows, on two CPUs.
before=$(dmesg | grep -c "tmc_etr0 writes another event's memory")
"$AUXTRIG" record -e cs_etm/@tmc_etr0/u -w "$win" -o "$tmp/t.data" -- "$MIG" -r 4 -t 2 -s 20 \
	>"$tmp/out" 2>"$tmp/err" || fail "record failed: $(tail -5 "$tmp/err")"
after=$(dmesg | grep -c "tmc_etr0 writes another event's memory")
grep -q "^auxtrig: warning: hardware trace cs_etm/@tmc_etr0/u: $note" "$tmp/err" ||
	fail "no warning before the start: $(cat "$tmp/err")"
# Whether two threads' events held the sink at once is the scheduler's answer (in the kernel on
# 7.x nearly always; gated from userspace on 6.12 only when windows overlap): the summary must
# count such records exactly when the unit lost some.
lost=$(sed -n 's/.*hardware trace cs_etm\/@tmc_etr0\/u: \([0-9]*\) AUX records truncated with no trace: per thread through tmc_etr0.*/\1/p' "$tmp/err")
if [ "$after" -gt "$before" ]; then
	[ -n "$lost" ] && [ "$lost" -ge 1 ] || fail "the unit lost $((after - before)) records' trace, the summary counts none: $(cat "$tmp/err")"
else
	[ -z "$lost" ] || fail "the summary counts $lost lost records, the unit lost none: $(cat "$tmp/err")"
fi
! grep -q "AUX area was full" "$tmp/err" || fail "a shared sink's loss blamed on a full area: $(cat "$tmp/err")"
perf report -D -i "$tmp/t.data" >/dev/null 2>&1 || fail "perf report -D cannot read the file"

# 2. -a: one group per CPU, no such loss, no such warning.
before=$(dmesg | grep -c "tmc_etr0 writes another event's memory")
"$AUXTRIG" record -a -e cs_etm/@tmc_etr0/u -w "$win" -o "$tmp/a.data" -- "$MIG" -r 4 -t 2 -s 20 \
	>"$tmp/out" 2>"$tmp/err" || fail "record -a failed: $(tail -5 "$tmp/err")"
after=$(dmesg | grep -c "tmc_etr0 writes another event's memory")
! grep -q "a sink the CPUs share" "$tmp/err" || fail "-a: warned of per-thread loss: $(cat "$tmp/err")"
assert_eq "$after" "$before" "-a: records of another event's memory"
! grep -q "truncated" "$tmp/err" || fail "-a: truncated records: $(cat "$tmp/err")"
echo ok
