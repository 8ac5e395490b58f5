// SPDX-License-Identifier: BSD-2-Clause
/* `auxtrig record`: the command line, into struct record_opts. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/record/record.h"
#include "auxtrig/lang/duration.h"
#include "auxtrig/sys/pmu.h"

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
"                           the kernel or PMU cannot (or --where needs it),\n"
"                           auxtrig enables and disables it at window edges\n"
"      --where=EXPR         open windows only where EXPR holds, e.g.\n"
"                           'comm == \"demo\" && tid != 1234' (see auxtrig-expr(7))\n"
"      --on='POINT [if EXPR]:ACTION[+T][,POLICY...]'\n"
"                           a trigger, decided in the kernel; repeatable. EXPR may\n"
"                           use ret (at exits), arg0..5 (at entries), the\n"
"                           tracepoint's fields and state: $count, $elapsed,\n"
"                           once, after N, every N (auxtrig-expr(7)); ACTION:\n"
"                           snapshot (needs -S: the\n"
"                           recorder freezes at the trigger, the snapshot ends\n"
"                           there), stop, mark (an auxtrig:mark record with\n"
"                           the values that fired it), resume / pause (open /\n"
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
"                           mem:ADDR[/LEN][:r|w|rw|x], mem:PATH:SYMBOL[/LEN][:...];\n"
"                           kprobe and mem points are refused where this machine\n"
"                           cannot fire them (see auxtrig probe)\n"
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
"  -o, --output=FILE        output file (default auxtrig.data), created with mode 0600\n"
"  -f, --force              overwrite FILE if it exists (never through a symlink)\n"
"  -m, --mmap-pages=N[,A]   per-CPU ring size in pages, a power of 2 (default 128);\n"
"                           A: AUX area pages for hardware trace (default 1024)\n"
"  -S, --snapshot[=[e][SIZE]]\n"
"                           flight recorder: per-CPU rings keep the newest SIZE\n"
"                           bytes (K/M suffixes; default: -m); nothing is written\n"
"                           until a snapshot: SIGUSR2, 'snapshot' on --control,\n"
"                           or with 'e' at exit. Snapshots never repeat a record.\n"
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
"  perf script -i auxtrig.data\n";

enum { OPT_WHERE = 1000, OPT_CONTROL, OPT_ON, OPT_DRY_RUN, OPT_SYSFS_ROOT, OPT_TRIGGER_PROG, OPT_MIN_DURATION, OPT_HOLD_SIZE,
       OPT_MAX_DURATION };

static const struct option record_options[] = {
	{ "window", required_argument, NULL, 'w' },
	{ "event", required_argument, NULL, 'e' },
	{ "where", required_argument, NULL, OPT_WHERE },
	{ "on", required_argument, NULL, OPT_ON },
	{ "min-duration", required_argument, NULL, OPT_MIN_DURATION },
	{ "hold-size", required_argument, NULL, OPT_HOLD_SIZE },
	{ "max-duration", required_argument, NULL, OPT_MAX_DURATION },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "trigger-prog", required_argument, NULL, OPT_TRIGGER_PROG },
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "snapshot", optional_argument, NULL, 'S' },
	{ "control", required_argument, NULL, OPT_CONTROL },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{}
};

static int add_events(struct record_opts *o, const char *arg)
{
	char *copy, *tok, *save = NULL, **tmp;

	/* intel_pt/tsc,mtc=1/u: a PMU event, whose terms have commas of their own. */
	if (strchr(arg, '/')) {
		if (o->aux_event) {
			pr_err("-e %s: only one hardware trace event per run (already: %s)\n", arg, o->aux_event);
			return -EINVAL;
		}
		o->aux_event = arg;
		return 0;
	}
	copy = strdup(arg);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		tmp = realloc(o->events, (o->nr_events + 1) * sizeof(char *));
		if (!tmp)
			return -ENOMEM;
		o->events = tmp;
		o->events[o->nr_events] = strdup(tok);
		if (!o->events[o->nr_events])
			return -ENOMEM;
		o->nr_events++;
	}
	free(copy);
	return 0;
}

static int add_window(struct record_opts *o, const char *arg)
{
	struct window_spec *tmp = realloc(o->windows, (o->nr_windows + 1) * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	o->windows = tmp;
	if (window_spec__parse(&o->windows[o->nr_windows], arg))
		return -EINVAL;
	o->nr_windows++;
	return 0;
}

/* -S[e][SIZE]: SIZE in bytes with K, M or G; becomes a power-of-2 page count. */
/* "4096", "64K", "1M", "4G" (B, K, M, G; either case) within [@min, @max]. */
static int parse_bytes(const char *arg, unsigned long long min, unsigned long long max,
		       unsigned long long *bytes)
{
	unsigned long long b;
	char *end;

	errno = 0;
	b = strtoull(arg, &end, 0);
	if (errno || end == arg || *arg == '-')
		return -EINVAL;
	switch (*end) {
	case 'G': case 'g': b = b > (~0ULL >> 30) ? ~0ULL : b << 10; /* fallthrough */
	case 'M': case 'm': b = b > (~0ULL >> 20) ? ~0ULL : b << 10; /* fallthrough */
	case 'K': case 'k': b = b > (~0ULL >> 10) ? ~0ULL : b << 10; end++; break;
	case 'B': case 'b': end++; break;
	}
	if (*end || b < min || b > max)
		return -EINVAL;
	*bytes = b;
	return 0;
}

static int parse_snapshot(struct record_opts *o, const char *arg)
{
	size_t page = sysconf(_SC_PAGESIZE), pages = 1;
	unsigned long long bytes;

	o->snapshot = true;
	if (!arg || !*arg)
		return 0;
	if (*arg == 'e') {
		o->snapshot_at_exit = true;
		arg++;
		if (!*arg)
			return 0;
	}
	if (parse_bytes(arg, page, 1ULL << 32, &bytes))
		return -EINVAL;
	while (pages * page < bytes)
		pages <<= 1;
	o->mmap_pages = pages;
	return 0;
}

static void opts_exit(struct record_opts *o)
{
	for (size_t i = 0; i < o->nr_events; i++)
		free(o->events[i]);
	free(o->events);
	free(o->windows);
	free(o->ons);
	free(o->trigger_progs);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {
		.output = "auxtrig.data",
		.mmap_pages = 128,
		.aux_pages = 1024,
		.full_argc = argc,
		.full_argv = argv,
	};
	int c, ret = EXIT_USAGE, verbose = 0;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+w:e:o:fp:t:aC:m:S::vqh", record_options, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (add_window(&o, optarg))
				goto out;
			break;
		case 'e':
			if (add_events(&o, optarg))
				goto out;
			break;
		case OPT_WHERE:
			o.where = optarg;
			break;
		case OPT_ON: {
			char **tmp = realloc(o.ons, (o.nr_ons + 1) * sizeof(char *));

			if (!tmp)
				goto out;
			o.ons = tmp;
			o.ons[o.nr_ons++] = optarg;
			break;
		}
		case 'o':
			if (!*optarg) {
				pr_err("-o needs a file name\n");
				goto out;
			}
			o.output = optarg;
			break;
		case 'f':
			o.force = true;
			break;
		case 'p':
			o.pids = optarg;
			break;
		case 't':
			o.tids = optarg;
			break;
		case 'a':
			o.all = true;
			break;
		case 'C':
			o.cpus = optarg;
			break;
		case 'm':
			errno = 0;
			o.mmap_pages = strtoul(optarg, &end, 0);
			if (!errno && *end == ',') {
				o.aux_pages = strtoul(end + 1, &end, 0);
				if (!o.aux_pages || (o.aux_pages & (o.aux_pages - 1)))
					errno = EINVAL;
			}
			if (errno || *end || !o.mmap_pages || (o.mmap_pages & (o.mmap_pages - 1)) ||
			    o.mmap_pages > (1u << 20) || o.aux_pages > (1u << 20)) {
				pr_err("-m %s: expected a power of 2 number of pages (e.g. 128, or 128,1024)\n", optarg);
				goto out;
			}
			break;
		case 'S':
			if (parse_snapshot(&o, optarg)) {
				pr_err("-S%s: expected [e][SIZE], SIZE from 4K to 4G (e.g. -S, -Se, -S64K, -Se1M)\n",
				       optarg);
				goto out;
			}
			break;
		case OPT_CONTROL:
			o.control = optarg;
			break;
		case OPT_DRY_RUN:
			o.dry_run = true;
			break;
		case OPT_TRIGGER_PROG: {
			char **tmp = realloc(o.trigger_progs, (o.nr_trigger_progs + 1) * sizeof(char *));

			if (!tmp)
				goto out;
			o.trigger_progs = tmp;
			o.trigger_progs[o.nr_trigger_progs++] = optarg;
			break;
		}
		case OPT_MIN_DURATION:
		case OPT_MAX_DURATION: {
			__u64 ns;

			if (duration__parse(optarg, &ns)) {
				pr_err("--%s %s: expected a duration with its unit, e.g. 500us, 1ms, 2s\n",
				       c == OPT_MIN_DURATION ? "min-duration" : "max-duration", optarg);
				goto out;
			}
			if (c == OPT_MIN_DURATION) {
				o.min_duration = optarg;
				o.min_duration_ns = ns;
			} else {
				o.max_duration = optarg;
				o.max_duration_ns = ns;
			}
			break;
		}
		case OPT_HOLD_SIZE:
			if (parse_bytes(optarg, 64 << 10, 1ULL << 40, &o.hold_size)) {
				pr_err("--hold-size %s: expected a size from 64K to 1T (e.g. 256M, 2G)\n", optarg);
				goto out;
			}
			break;
		case OPT_SYSFS_ROOT:
			o.sysfs_root = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			fputs(record_usage, stdout);
			ret = EXIT_OK;
			goto out;
		default:
			fprintf(stderr, "(try: auxtrig record --help)\n");
			goto out;
		}
	}
	o.verbose = verbose;
	log__set_level(o.quiet ? LOG_WARN : LOG_INFO + verbose);
	log__route_libbpf();

	if (optind < argc)
		o.command = argv + optind;
	if ((o.command != NULL) + (o.pids != NULL) + (o.tids != NULL) > 1 ||
	    (o.all && (o.pids || o.tids))) {
		pr_err("give one target: a command, -p PID, -t TID or -a (-a may come with a command)\n");
		goto out;
	}
	if (o.sysfs_root) {
		char why[PATH_MAX + 128];

		if (pmu__check_root(o.sysfs_root, why, sizeof(why))) {
			pr_err("--sysfs-root %s\n", why);
			goto out;
		}
	}
	if (o.hold_size && !o.min_duration && !o.max_duration) {
		pr_err("--hold-size bounds the records held for --min-duration or --max-duration; give one of them\n");
		goto out;
	}
	if (!o.command && !o.pids && !o.tids && !o.all && !o.dry_run) {
		pr_err("nothing to record: give a command after --, -p PID, -t TID or -a (see auxtrig record --help)\n");
		goto out;
	}
	ret = recorder__run(&o);
out:
	opts_exit(&o);
	return ret;
}
