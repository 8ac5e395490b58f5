// SPDX-License-Identifier: BSD-2-Clause
/* `auxtrig record`: its usage, and the steps from the command line to a recording. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/cmd/record_plan.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/record/recorder.h"
#include "auxtrig/sys/probe.h"

static const char record_usage[] =
"USAGE: auxtrig record [OPTIONS] -- COMMAND [ARGS]\n"
"       auxtrig record [OPTIONS] -p PID[,PID...] | -t TID[,TID...] | -a\n"
"\n"
"Record kernel events, but only while a thread is inside a trigger window.\n"
"Windows and conditions are decided in the kernel by BPF: events outside\n"
"windows never reach userspace. The output is a perf.data file that\n"
"'perf script' and 'perf report' read.\n"
"\n"
"WINDOWS AND EVENTS:\n"
"  -w, --window=SPEC        open a per-thread window; repeatable, windows OR together.\n"
"                           syscall:NAME  from sys_enter_NAME to sys_exit_NAME\n"
"                           syscall:*  inside any syscall (raw_syscalls)\n"
"                           prog  opened and closed by --trigger-prog programs\n"
"                           START..STOP  from a hit of POINT START to one of\n"
"                             POINT STOP on the same thread, e.g.\n"
"                             syscall:openat:exit..syscall:close:enter,\n"
"                             usdt:PATH:PROV:start..usdt:PATH:PROV:done\n"
"                           uprobe:PATH:SYMBOL[+OFF]  from a function's entry to\n"
"                             its return (recursion counted; the calls are\n"
"                             recorded as auxtrig:uprobe_enter/uprobe_exit)\n"
"                           Tracepoint starts and ends are recorded too.\n"
"      --min-duration=T     write only windows that lasted at least T (ns, us, ms,\n"
"                           s: 1ms), e.g. -w syscall:openat --min-duration 1ms for\n"
"                           the slow calls; a thread's window lasts from its first\n"
"                           window opening to its last closing. The duration is\n"
"                           known only at the end, so every window's records\n"
"                           reach auxtrig and wait there for the verdict\n"
"      --max-duration=T     write only windows that lasted at most T\n"
"      --hold-size=SIZE     hold at most SIZE bytes of records waiting for their\n"
"                           window's duration (default 64M); past it the window\n"
"                           held longest is written (--min-duration alone) or\n"
"                           dropped (with --max-duration) before its verdict,\n"
"                           and the summary counts it\n"
"  -e, --event=TP[,TP...]   tracepoints to record inside windows (SYSTEM:NAME, globs\n"
"                           like syscalls:sys_enter_* allowed); repeatable. Without\n"
"                           --window every hit of the target is recorded.\n"
"  -e PMU/TERMS/MODS        hardware trace through the AUX area, as perf writes it:\n"
"                           intel_pt//u, cs_etm/@tmc_etr0/k, arm_spe/ts_enable=1/;\n"
"                           windows resume and pause it in the kernel, or, where\n"
"                           the kernel or PMU cannot (or --where, -w prog or a\n"
"                           mem: end needs it), auxtrig enables and disables it\n"
"                           at window edges\n"
"      --where=EXPR         open windows only where EXPR holds, e.g.\n"
"                           'comm == \"demo\" && tid != 1234' (see auxtrig-expr(7))\n"
"      --on='POINT [if EXPR]:ACTION[+T][,POLICY...]'\n"
"                           a trigger, decided in the kernel; repeatable. EXPR may\n"
"                           use ret (at exits; at uretprobe:/kretprobe: typed\n"
"                           from the function's BTF or DWARF, else write (int)ret\n"
"                           for an int function), arg0..5 (at entries),\n"
"                           entry.arg0..5 and $duration (at syscall exits and\n"
"                           uretprobe: its call's entry args, time since it), the\n"
"                           tracepoint's fields and state: $count, $elapsed,\n"
"                           once, after N, every N (auxtrig-expr(7)); ACTION:\n"
"                           snapshot (needs -S: the\n"
"                           recorder freezes at the trigger, the snapshot ends\n"
"                           there), stop (nothing later is recorded; the file\n"
"                           ends at an auxtrig:stop record), mark (an\n"
"                           auxtrig:mark record with\n"
"                           the values that fired it; at syscall points\n"
"                           mark(str(argN), ret) also carries the string argN\n"
"                           points to, at an exit the entry's), resume / pause (open /\n"
"                           close the thread's recording window: -e events are\n"
"                           then recorded only while it is open; its edges are\n"
"                           auxtrig:resume / auxtrig:pause records); snapshot+T,\n"
"                           stop+T (T in ns, us, ms, s): take effect T after the\n"
"                           trigger, e.g. snapshot+2ms; POLICY: once, every:N,\n"
"                           after:N, limit:N/s (at most N fires per second: a\n"
"                           burst fires N, then one every 1/N s), combinable as\n"
"                           every:2,limit:10/s\n"
"  POINT                    syscall:NAME:enter, syscall:NAME:exit (NAME may be *),\n"
"                           tp:SYSTEM:EVENT, uprobe:PATH:SYMBOL[+OFF],\n"
"                           uretprobe:PATH:SYMBOL, usdt:PATH:PROVIDER:NAME,\n"
"                           kprobe:SYMBOL[+OFF], kretprobe:SYMBOL,\n"
"                           mem:ADDR[/LEN][:r|w|rw|x], mem:PATH:SYMBOL[/LEN][:...]\n"
"                           (x86: no r, only w and rw); kprobe and mem points are\n"
"                           refused where this machine cannot fire them (see\n"
"                           auxtrig probe)\n"
"      --trigger-prog=FILE  your own BPF trigger programs (FILE.bpf.o, or FILE.bpf.c\n"
"                           compiled with clang) written against\n"
"                           auxtrig/trigger.bpf.h: snapshot, mark, stop, resume,\n"
"                           pause from any probe, with state of your own;\n"
"                           repeatable. -w prog: a window your program opens and\n"
"                           closes (auxtrig_resume/auxtrig_pause)\n"
"\n"
"TARGET:\n"
"  -- COMMAND [ARGS]        run COMMAND and record it and its children\n"
"  -p, --pid=PID[,PID...]   record running processes (all their threads)\n"
"  -t, --tid=TID[,TID...]   record running threads (not their children)\n"
"  -a, --all-cpus           record every process (system-wide); with a COMMAND,\n"
"                           for as long as it runs, else until Ctrl-C\n"
"  -C, --cpu=CPUS           record only events on these CPUs (e.g. 0-3,6)\n"
"\n"
"OUTPUT:\n"
"  -o, --output=FILE        output file (default auxtrig.data), created with mode 0600;\n"
"                           -o - streams to standard output in pipe mode (| auxtrig script -i -)\n"
"  -f, --force              overwrite FILE if it exists (never through a symlink)\n"
"  -m, --mmap-pages=N[,A]   per-CPU ring size in pages, a power of 2 (default 128);\n"
"                           A: AUX area pages for hardware trace (default 1024)\n"
"  -S, --snapshot[=[e][SIZE]]\n"
"                           flight recorder: per-CPU rings keep the newest SIZE\n"
"                           bytes (K/M suffixes; default: -m); nothing is written\n"
"                           until a snapshot: SIGUSR2, 'snapshot' on --control,\n"
"                           or with 'e' at exit. Snapshots never repeat a record.\n"
"  -g, --callchain          call stacks: every record the gate writes (window\n"
"                           edges, -e events, marks, stop, a snapshot trigger's\n"
"                           auxtrig:snapshot) carries its thread's kernel and user\n"
"                           stack as perf record -g takes it (frame pointers; at\n"
"                           most kernel.perf_event_max_stack frames), for perf\n"
"                           script and perf report -g\n"
"      --control=fifo:CTL[,ACK] | fd:CTL[,ACK]\n"
"                           commands, one per line: enable, disable, snapshot,\n"
"                           stop, ping (each answered 'ack' on ACK)\n"
"\n"
"GENERAL:\n"
"      --dry-run            print every perf_event_attr that would be opened (with\n"
"                           -vv field by field, like perf record -vv) and the\n"
"                           groups; open and load nothing\n"
"      --sysfs-root=DIR     find PMUs under DIR/bus/event_source instead of /sys\n"
"                           (testing, with the fixtures in tests/fixtures)\n"
"  -v, --verbose            more messages; -vv adds libbpf and verifier output\n"
"  -q, --quiet              only errors, warnings and losses\n"
"  -h, --help               this text\n"
"\n"
"EXIT STATUS: 0 recorded, 1 runtime failure, 2 usage error.\n"
"\n"
"EXAMPLES:\n"
"  auxtrig record -w syscall:openat -e sched:sched_switch -- ./build/examples/openat_demo\n"
"  auxtrig record -w syscall:openat -w syscall:read --where 'comm == \"nginx\"' -p 4242\n"
"  auxtrig record -S -e 'sched:*' --on 'syscall:openat:exit if ret == -EACCES:snapshot,once' -- ./app\n"
"  auxtrig record -S -e 'sched:*' --on 'syscall:openat:exit if ret < 0:snapshot+2ms,limit:1/s' -- ./app\n"
"  auxtrig record -w syscall:openat --min-duration 1ms -p 4242\n"
"  auxtrig record -g --on 'syscall:openat:exit if ret < 0:mark' -- ./app; perf report -g\n"
"  perf script -i auxtrig.data\n";

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	struct record_plan p = {};
	int err, ret = EXIT_USAGE;

	err = record_args__parse(&a, argc, argv);
	if (err)
		goto out;
	if (a.help) {
		fputs(record_usage, stdout);
		ret = EXIT_OK;
		goto out;
	}
	log__set_level(a.quiet ? LOG_WARN : LOG_INFO + a.verbose);
	log__route_libbpf();
	/* tracefs, BPF and system-wide perf events all need it: say so first. */
	if (!probe__may_record()) {
		pr_err("record needs root, or CAP_BPF and CAP_PERFMON: run it with sudo\n");
		ret = EXIT_RUNTIME;
		goto out;
	}
	/* Everything that can be wrong with the input is found before anything is created. */
	err = record_plan__build(&p, &a);
	if (err) {
		ret = err == -EINVAL || err == -ENOENT || err == -ERANGE ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	ret = recorder__run(&p);
out:
	record_plan__exit(&p);
	record_args__exit(&a);
	return ret;
}
