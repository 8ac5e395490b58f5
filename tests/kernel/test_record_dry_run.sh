#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --dry-run -vv prints the perf_event_attr groups auxtrig would open for
# hardware trace, against sysfs fixtures of real Intel PT, CoreSight and SPE
# machines: they must equal the golden groups in tests/fixtures/golden, which
# were written from the kernel and perf documentation. Nothing is opened: on
# this machine, without any AUX PMU, the same command without --dry-run is
# refused with a clear message. On a kernel without aux_action (Debian 12's
# 6.1, in the lab) every run takes the userspace-gated path: the goldens of
# the in-kernel path are checked in their gated form (gated() below), the
# form SPE's goldens have everywhere.
. "$(dirname "$0")/lib.sh"
need_root # tracepoint ids come from tracefs
fix=$top/tests/fixtures
golden=$fix/golden

# The goldens name sys_enter_openat/sys_exit_openat by this kernel family's ids
# (782/781 = 0x30e/0x30d); put this kernel's in.
enter=$(printf '0x%x' "$(cat /sys/kernel/tracing/events/syscalls/sys_enter_openat/id)")
exit_=$(printf '0x%x' "$(cat /sys/kernel/tracing/events/syscalls/sys_exit_openat/id)")

# The uprobe goldens name /usr/bin/openat_demo+0x1139; put in uprobe_demo's handle(): its file
# offset from the symbol's address and its section (what the uprobe PMU takes in config2).
UPD=$build/examples/uprobe_demo
addr=$((16#$(nm "$UPD" | awk '$3 == "handle" { print $1 }')))
off=
while read -r name type sa so sz; do
	[ "$type" = PROGBITS ] || continue
	if [ $addr -ge $((16#$sa)) ] && [ $addr -lt $((16#$sa + 16#$sz)) ]; then
		off=$(printf '0x%x' $((addr - 16#$sa + 16#$so)))
	fi
done < <(readelf -SW "$UPD" | sed -n 's/^ *\[ *[0-9]*\] //p' | awk '{ print $1, $2, $3, $4, $5 }')
[ -n "$off" ] || fail "cannot find handle() in $UPD"

# Does this kernel know aux_action? (kernel/test_probe checks the probe against the kernel.)
aux_action=$("$AUXTRIG" probe --json | sed -n 's/.*"aux_action":{"status":"[a-z]*","kernel":\(true\|false\).*/\1/p')
[ -n "$aux_action" ] || fail "auxtrig probe --json does not say whether the kernel knows aux_action"
# gated GOLDEN: the same groups on the userspace-gated path: no aux_action bits, the triggers in
# their own groups after the gate's line, no veto programs (--where runs in the gate).
gated() {
	awk '/^  aux_(start_paused|pause|resume) / { next }
	     /^condition on / { next }
	     /^group member: .* \[aux_(resume|pause)\]$/ {
		if (!gate++) print "gate: PERF_EVENT_IOC_ENABLE/DISABLE of the leader from userspace (no aux_action)"
		sub(/^group member: /, "trigger event: "); sub(/ \[aux_(resume|pause)\]$/, " (own group)")
	     }
	     { print }' "$1"
}
# in_kernel_path FILE: the startup line names the in-kernel path where the kernel has aux_action,
# the userspace gate where it has not.
in_kernel_path() {
	if [ "$aux_action" = true ]; then
		grep -q "^hardware trace: windows by in-kernel aux_pause/aux_resume" "$1"
	else
		grep -q "^hardware trace: windows gated from userspace" "$1"
	fi
}

check() { # check GOLDEN FIXTURE ARGS...: the printed cpu 0 group equals the golden
	local g=$golden/$1 f=$fix/$2; shift 2
	"$AUXTRIG" record --dry-run -vv --sysfs-root "$f" "$@" >"$tmp/out" 2>"$tmp/err" ||
		fail "dry run $* failed: $(cat "$tmp/err")"
	# The cpu 0 block: up to the next group leader.
	awk 'NR > 1 && /^group leader:/ { exit } /^per CPU/ { exit } { print }' "$tmp/out" >"$tmp/cpu0"
	sed -e "s/config                           0x30e$/config                           $enter/" \
	    -e "s/config                           0x30d$/config                           $exit_/" \
	    -e "s|/usr/bin/openat_demo|$UPD|g" -e "s/0x1139$/$off/" -e "s/+0x1139 /+$off /" -e "s/+0x1139:/+$off:/" \
	    <(if [ "$aux_action" = true ]; then cat "$g"; else gated "$g"; fi) >"$tmp/want"
	diff -u "$tmp/want" "$tmp/cpu0" || fail "$* differs from $(basename "$g")"
	# One group per CPU auxtrig records on: every possible CPU of this machine, whatever their number.
	local cpu
	for cpu in $possible; do
		[ "$(grep -c "^group leader:.*cpu $cpu)" "$tmp/out")" -eq 1 ] || fail "$*: no group for cpu $cpu"
	done
	assert_eq "$(grep -c '^group leader:' "$tmp/out")" "$(wc -w <<<"$possible")" "$*: groups, one per possible CPU"
}
possible=$(cpulist "$(cat /sys/devices/system/cpu/possible)")
check syscall-window-intel_pt.txt sysfs-intel_pt -e intel_pt//k -w syscall:openat
check syscall-window-cs_etm.txt sysfs-cs_etm -e cs_etm/@tmc_etr0/k -w syscall:openat
check snapshot-intel_pt.txt sysfs-intel_pt -e intel_pt// -S
check snapshot-cs_etm.txt sysfs-cs_etm -e cs_etm/@tmc_etr0/ -S
check snapshot-arm_spe.txt sysfs-arm_spe -e arm_spe_0// -S
# Uprobe windows: the function's entry resumes, its return pauses (uprobe PMU, type 7 in
# the fixtures); SPE's are the userspace-gated fallback (no aux_action, triggers ungrouped).
check uprobe-window-intel_pt.txt sysfs-intel_pt -e intel_pt//u -w "uprobe:$UPD:handle"
check uprobe-window-cs_etm.txt sysfs-cs_etm -e cs_etm/@tmc_etr0/u -w "uprobe:$UPD:handle"
check uprobe-window-arm_spe.txt sysfs-arm_spe -e arm_spe_0//u -w "uprobe:$UPD:handle"
check syscall-window-arm_spe.txt sysfs-arm_spe -e arm_spe_0//k -w syscall:openat
# --where on a uprobe window: the same attrs, and the condition on each member as a BPF program.
check uprobe-window-where-intel_pt.txt sysfs-intel_pt -e intel_pt//u -w "uprobe:$UPD:handle" --where 'arg0 == 2'
in_kernel_path "$tmp/out" || fail "$(cat "$tmp/out")"
if [ "$aux_action" = true ]; then
	grep -q "^hardware trace: --where: checked in the kernel by BPF programs on each uprobe window's own" "$tmp/out" ||
		fail "conditional uprobe path not named: $(cat "$tmp/out")"
fi
# ... but a tracepoint's BPF programs are every perf user's: conditional syscall windows are gated
# from userspace (the unconditional ones stay in the kernel, above), and the dry run says why.
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u -w syscall:openat --where 'comm == "x"' \
	>"$tmp/out" 2>"$tmp/err" || fail "conditional syscall windows refused: $(cat "$tmp/err")"
grep -q "^hardware trace: windows gated from userspace" "$tmp/out" || fail "$(cat "$tmp/out")"
if [ "$aux_action" = true ]; then
	grep -q "^hardware trace: --where: windows gated from userspace, because -w syscall:openat has a tracepoint end" "$tmp/out" ||
		fail "no reason for the gated path: $(cat "$tmp/out")"
fi
grep -Eq "^  aux_(resume|pause|start_paused) |^condition on" "$tmp/out" && fail "aux_action members or vetoes on the gated path: $(cat "$tmp/out")"
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u -w "uprobe:$UPD:handle" -w syscall:openat \
	--where 'arg0 == 2' >"$tmp/out" 2>"$tmp/err" || fail "mixed conditional windows refused: $(cat "$tmp/err")"
if [ "$aux_action" = true ]; then
	grep -q "^hardware trace: --where: windows gated from userspace, because .*(the run's uprobe windows are gated from userspace too)" \
		"$tmp/out" || fail "mixed windows: $(cat "$tmp/out")"
fi
# A window with a mem: end is gated from userspace: the gate's breakpoint is the only one on the
# address (where breakpoints fire; elsewhere the plan refuses mem: points, test_record_points).
if "$AUXTRIG" probe | grep -q '^ *hw breakpoints *ok'; then
	"$AUXTRIG" record --dry-run -vv --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u \
		-w "mem:$build/examples/window_clock:gap/8:w..tp:raw_syscalls:sys_enter" -- "$build/examples/window_clock" \
		>"$tmp/out" 2>"$tmp/err" || fail "mem: window on hardware trace refused: $(cat "$tmp/err")"
	grep -q "^hardware trace: windows gated from userspace" "$tmp/out" || fail "mem: window: $(cat "$tmp/out")"
	if [ "$aux_action" = true ]; then
		grep -q "^hardware trace: windows gated from userspace, because -w mem:.* has a mem: end: the gate's hardware breakpoint is the only one" \
			"$tmp/out" || fail "mem: window: reason not named: $(cat "$tmp/out")"
	fi
	grep -Eq "^  aux_(resume|pause|start_paused) |bp_addr" "$tmp/out" && fail "mem: window: aux actions or a second breakpoint on the gated path"
	# --on resume at a probe point: only a tracepoint can be an aux_resume member (it was one with no tracepoint)
	"$AUXTRIG" record --dry-run -vv --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u \
		--on "mem:$build/examples/window_clock:gap/8:w:resume" --on syscall:clock_nanosleep:enter:pause \
		-- "$build/examples/window_clock" >"$tmp/out" 2>"$tmp/err" || fail "--on mem: resume refused: $(cat "$tmp/err")"
	grep -q "^hardware trace: windows gated from userspace" "$tmp/out" || fail "--on mem: resume: $(cat "$tmp/out")"
	grep -Eq "^  aux_(resume|pause|start_paused) |^group member: :" "$tmp/out" && fail "--on mem: resume: aux members: $(cat "$tmp/out")"
fi
# A resume trigger in such a run is gated from userspace too: its edges are the gate's window edges.
"$AUXTRIG" record --dry-run -vv --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u -w syscall:getppid --where 'arg0 == 2' \
	--on syscall:openat:enter:resume >"$tmp/out" 2>"$tmp/err" || fail "resume trigger with gated windows: $(cat "$tmp/err")"
grep -q "^  aux_resume \|^  aux_pause \|^  aux_start_paused " "$tmp/out" && fail "resume trigger with gated windows: aux actions on the gated path"
# --on resume/pause triggers build the same group as the window they spell.
check syscall-window-intel_pt.txt sysfs-intel_pt -e intel_pt//k --on syscall:openat:enter:resume --on syscall:openat:exit:pause
check syscall-window-cs_etm.txt sysfs-cs_etm -e cs_etm/@tmc_etr0/k --on syscall:openat:enter:resume --on syscall:openat:exit:pause
# ... but the kernel acts at every hit: a condition or policy moves the run to the userspace gate,
# and so does a PMU that cannot pause (SPE).
"$AUXTRIG" record --dry-run -vv --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//k --on 'syscall:openat:exit if ret < 0:resume' \
	>"$tmp/out" 2>"$tmp/err" || fail "conditional resume on hardware trace: $(cat "$tmp/err")"
grep -q "^hardware trace: windows gated from userspace" "$tmp/out" || fail "conditional resume: path not named: $(cat "$tmp/out")"
if [ "$aux_action" = true ]; then
	grep -q "^hardware trace: windows gated from userspace, because --on 'syscall:openat:exit if ret < 0:resume' (a condition or policy) decide in BPF" \
		"$tmp/out" || fail "conditional resume: reason not named: $(cat "$tmp/out")"
fi
grep -q "^  aux_resume \|^  aux_pause \|^  aux_start_paused " "$tmp/out" && fail "conditional resume: aux actions on the gated path"
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-arm_spe" -e arm_spe_0//k --on syscall:openat:enter:resume >"$tmp/out" 2>"$tmp/err" ||
	fail "resume trigger on SPE: $(cat "$tmp/err")"
grep -q "^hardware trace: windows gated from userspace" "$tmp/out" || fail "resume trigger on SPE: $(cat "$tmp/out")"
# Each says which path its windows take.
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-arm_spe" -e arm_spe_0//k -w syscall:openat >"$tmp/out" 2>"$tmp/err" ||
	fail "SPE windows were refused: $(cat "$tmp/err")"
grep -q "^hardware trace: windows gated from userspace" "$tmp/out" || fail "SPE path not named: $(cat "$tmp/out")"
if [ "$aux_action" = true ]; then
	grep -q "this PMU cannot pause/resume in the kernel; gating the trace from userspace" "$tmp/err" || fail "$(cat "$tmp/err")"
else
	grep -q "this kernel has no aux_action (needs 6.13 or 6.12.24+); gating the trace from userspace" "$tmp/err" ||
		fail "$(cat "$tmp/err")"
fi
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u -w syscall:openat >"$tmp/out" 2>&1 ||
	fail "intel_pt windows were refused"
in_kernel_path "$tmp/out" || fail "PT path not named: $(cat "$tmp/out")"
if [ "$aux_action" = false ]; then
	grep -q "this kernel has no aux_action (needs 6.13 or 6.12.24+); gating the trace from userspace" "$tmp/out" ||
		fail "no reason for the gated path on a kernel without aux_action: $(cat "$tmp/out")"
fi
# A uprobe window on a function the binary lacks: one line, exit 2.
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u -w "uprobe:$UPD:no_such_fn" >/dev/null 2>"$tmp/err"
assert_eq $? 2 "exit code for an unknown uprobe function"
grep -q "no function no_such_fn in" "$tmp/err" || fail "$(cat "$tmp/err")"
# Bad terms: the valid ones are listed.
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt/mtc_period=5/ -S >/dev/null 2>"$tmp/err"
assert_eq $? 2 "exit code of a bad intel_pt term"
grep -q "supports 0, 3, 6, 9" "$tmp/err" || fail "no valid values listed: $(cat "$tmp/err")"
# Without --dry-run, on this machine (no AUX PMU): one clear line, exit 2, no file.
if [ ! -e /sys/bus/event_source/devices/intel_pt ]; then
	"$AUXTRIG" record -e intel_pt//u -w syscall:openat -o "$tmp/x.data" -- true 2>"$tmp/err"
	assert_eq $? 2 "exit code without an intel_pt PMU"
	grep -q "no such PMU on this machine (try: auxtrig probe)" "$tmp/err" || fail "$(cat "$tmp/err")"
	[ ! -e "$tmp/x.data" ] || fail "a refused run left a file"
fi
# Windows of trigger programs are decided in BPF: the userspace gate, which says why (on a kernel
# without aux_action too, where it used to end in "the AUX session and the gate disagree").
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-intel_pt" -e intel_pt//u -w prog \
	--trigger-prog "$top/examples/triggers/read_fails.bpf.c" >"$tmp/out" 2>"$tmp/err" || fail "-w prog with hardware trace: $(cat "$tmp/err")"
grep -q "^hardware trace: windows gated from userspace, because the windows of -w prog (trigger programs) decide in BPF" "$tmp/out" ||
	fail "-w prog: path not named: $(cat "$tmp/out")"
# Each trigger says how it runs: a program of its own with its condition compiled, or the shared
# program interpreting it, and why. Globs with an inner '*', $elapsed and __data_loc strings compile.
"$AUXTRIG" record --dry-run --on 'syscall:openat:exit if ret == -ENOENT && comm == "x":mark' \
	--on 'syscall:openat:enter if str(arg1) ~ "/a/*b*c":stop' --on 'syscall:read:exit if $elapsed > 1ms:mark' \
	-w syscall:close --on 'syscall:close:enter:mark' --on 'tp:sched:sched_process_exec if filename ~ "*/x*y":mark' \
	-- true >"$tmp/out" 2>"$tmp/err" || fail "triggers: $(cat "$tmp/err")"
for i in 1 2 3 5; do
	grep -q "^trigger $i: a program of its own, condition compiled to BPF$" "$tmp/out" ||
		fail "trigger $i not compiled: $(cat "$tmp/out")"
done
grep -q "^trigger 4: the shared gate program: its tracepoint also opens, closes or records windows$" "$tmp/out" ||
	fail "trigger 4: no reason: $(cat "$tmp/out")"
# --where: compiled at tracepoint window starts and at uprobe windows' entries.
"$AUXTRIG" record --dry-run -w syscall:openat -w "uprobe:$build/examples/uprobe_demo:handle" \
	--where 'str(arg1) ~ "/a*b*c" && every 2' -- true >"$tmp/out" 2>"$tmp/err" || fail "--where: $(cat "$tmp/err")"
grep -q "^--where at syscalls:sys_enter_openat: compiled to BPF, decided before the shared gate program$" "$tmp/out" ||
	fail "--where at a tracepoint: $(cat "$tmp/out")"
grep -q "^--where at uprobe window uprobe:$build/examples/uprobe_demo:handle: compiled to BPF, decided in a program of its own before the shared one$" "$tmp/out" ||
	fail "--where at a uprobe window: $(cat "$tmp/out")"
# A condition whose unrolled glob matchers would be too long for the verifier stays interpreted, and says so.
g='*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'
"$AUXTRIG" record --dry-run --on "syscall:openat:enter if str(arg1) ~ \"$g\" || str(arg1) ~ \"$g\" || str(arg1) ~ \"$g\" || str(arg1) ~ \"$g\":mark" \
	-- true >"$tmp/out" 2>"$tmp/err" || fail "long globs: $(cat "$tmp/err")"
grep -q "^trigger 1: the shared gate program, condition interpreted: the globs' unrolled matchers would take [0-9]* instructions (at most [0-9]* are compiled)$" \
	"$tmp/out" || fail "long globs: no reason: $(cat "$tmp/out")"
# CoreSight per thread through a sink the CPUs share (ETR, ETF): the driver keeps one memory per
# session, so threads that run at once lose their trace; auxtrig says so before it starts. Not with
# -a (one group per CPU), nor with a per-CPU sink (TRBE), which the kernel also takes by default.
shared_note="^hardware trace: per thread through %s, a sink the CPUs share: the driver keeps one memory for the session"
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-cs_etm" -e cs_etm/@tmc_etr0/u -w syscall:getppid -- true \
	>"$tmp/out" 2>"$tmp/err" || fail "cs_etm per thread: $(cat "$tmp/err")"
grep -q "$(printf "$shared_note" tmc_etr0)" "$tmp/out" || fail "per thread through tmc_etr0: no note: $(cat "$tmp/out")"
"$AUXTRIG" record --dry-run --sysfs-root "$fix/sysfs-cs_etm" -e cs_etm//u -w syscall:getppid -- true \
	>"$tmp/out" 2>"$tmp/err" || fail "cs_etm per thread: $(cat "$tmp/err")"
grep -q "$(printf "$shared_note" "the default sink (there is no TRBE)")" "$tmp/out" ||
	fail "per thread, default sink without a TRBE: no note: $(cat "$tmp/out")"
"$AUXTRIG" record --dry-run -a --sysfs-root "$fix/sysfs-cs_etm" -e cs_etm/@tmc_etr0/u -w syscall:getppid \
	>"$tmp/out" 2>"$tmp/err" || fail "cs_etm -a: $(cat "$tmp/err")"
! grep -q "a sink the CPUs share" "$tmp/out" || fail "-a: a per-thread note: $(cat "$tmp/out")"
cp -r "$fix/sysfs-cs_etm" "$tmp/sysfs-trbe"
for c in 0 1; do echo 0x$((c + 1))0000 >"$tmp/sysfs-trbe/bus/event_source/devices/cs_etm/sinks/trbe$c"; done
for e in cs_etm//u cs_etm/@trbe0/u; do
	"$AUXTRIG" record --dry-run --sysfs-root "$tmp/sysfs-trbe" -e $e -w syscall:getppid -- true \
		>"$tmp/out" 2>"$tmp/err" || fail "$e with TRBEs: $(cat "$tmp/err")"
	! grep -q "a sink the CPUs share" "$tmp/out" || fail "$e with TRBEs: a shared-sink note: $(cat "$tmp/out")"
done
echo ok
