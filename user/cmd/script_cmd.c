// SPDX-License-Identifier: BSD-2-Clause
/* `auxtrig script`: the command line; the decoding is user/decode/script.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/decode/script.h"
#include "auxtrig/sys/log.h"

#define SCRIPT_MAX_JOBS	256

enum { OPT_ITRACE = 256, OPT_SYMFS, OPT_BUILDID_DIR, OPT_KALLSYMS, OPT_PACKETS, OPT_WINDOWS, OPT_CALL_TRACE, OPT_FORMAT, OPT_SUMMARY };

static const struct option script_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "itrace", required_argument, NULL, OPT_ITRACE },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "fields", required_argument, NULL, 'F' },
	{ "packets", no_argument, NULL, OPT_PACKETS },
	{ "windows", no_argument, NULL, OPT_WINDOWS },
	{ "call-trace", no_argument, NULL, OPT_CALL_TRACE },
	{ "jobs", required_argument, NULL, 'j' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "summary", no_argument, NULL, OPT_SUMMARY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static void script_cmd__usage(FILE *f)
{
	fprintf(f,
		"USAGE: auxtrig script [-i FILE] [--itrace=b|i] [--symfs DIR] [--buildid-dir DIR]\n"
		"                      [--kallsyms FILE] [-F FIELDS] [--packets | --windows | --call-trace]\n"
		"                      [-j N] [--format=chrome|syscalls] [--summary] [-v] [-h]\n"
		"\n"
		"Decode the Intel PT, CoreSight ETM/ETE or Arm SPE trace in a perf.data file;\n"
		"without hardware trace, print its events (and their call stacks, record -g)\n"
		"as perf script does.\n"
		"\n"
		"  -i, --input FILE   perf.data file to read, file or pipe mode; - reads standard\n"
		"                     input (default: auxtrig.data, what record writes)\n"
		"      --itrace=b|i   b: branch samples, SPE samples (default); i: instruction ranges\n"
		"                     (CoreSight)\n"
		"      --symfs DIR    look for the traced binaries under DIR\n"
		"      --buildid-dir DIR  the build-ID cache to look in first (default:\n"
		"                     $PERF_BUILDID_DIR, else ~/.debug)\n"
		"      --kallsyms FILE  the kernel's symbols (a copy of the recording machine's\n"
		"                     /proc/kallsyms) for a file recorded elsewhere: names\n"
		"                     kernel addresses, places kernel modules' code\n"
		"  -F, --fields LIST  the fields of the sample lines, perf script's names: comm,\n"
		"                     tid, pid, time, cpu, event, period, ip, sym, symoff, dso,\n"
		"                     addr, flags, callindent, insn, insnlen; +FIELD,-FIELD\n"
		"                     change the default, which is perf script's for the file\n"
		"      --packets      list the trace packets instead of samples\n"
		"      --windows      every instruction with its symbol, per window (from trace\n"
		"                     enable to disable), under a header naming the thread, what\n"
		"                     opened and closed it, its time and its AUX record\n"
		"      --call-trace   as --windows, but only calls and returns, indented by depth\n"
		"  -j, --jobs N       decode CoreSight buffers in N worker processes (default 1);\n"
		"                     the output is the same for any N\n"
		"      --format=chrome  the timeline as Trace Event JSON for Perfetto UI,\n"
		"                     chrome://tracing and speedscope: windows as slices per\n"
		"                     thread, marks and snapshots as instants with their values,\n"
		"                     the decoded calls of hardware trace nested in its windows\n"
		"      --format=syscalls  one line per system call, as strace and perf trace\n"
		"                     print them: thread, time, duration, arguments by name\n"
		"                     (paths quoted, flags and AT_FDCWD named), the return\n"
		"                     value with its errno name; unfinished calls marked\n"
		"      --summary      per thread and window kind: count, errors, total, min, avg,\n"
		"                     max duration; latency histograms; triggers; losses\n"
		"                     (the same as auxtrig report)\n"
		"  -v, --verbose      more messages (repeatable)\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 ok, 1 the file could not be read or decoded, 2 usage error,\n"
		"3 trace auxtrig cannot decode (ETMv3/PTM, an unknown AUX type).\n"
		"\n"
		"Environment: AUXTRIG_CSD_DECODER=opencsd decodes all CoreSight ETMv4 trace\n"
		"with OpenCSD instead of auxtrig's own decoder (the same output, slower).\n");
}

int cmd_script(int argc, char **argv)
{
	struct script_opts o = { .input = "auxtrig.data", .itrace = 'b', .jobs = 1 };
	int c, verbose = 0;
	bool windows = false, call_trace = false, fields = false;
	char *end;
	long n;

	optind = 0;
	while ((c = getopt_long(argc, argv, "i:F:j:vh", script_options, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.input = optarg;
			break;
		case OPT_ITRACE:
			if (strcmp(optarg, "b") && strcmp(optarg, "i")) {
				pr_err("script: --itrace=%s: only b (branches) or i (instruction ranges)\n", optarg);
				return EXIT_USAGE;
			}
			o.itrace = optarg[0];
			break;
		case OPT_SYMFS:
			o.symfs = optarg;
			break;
		case OPT_BUILDID_DIR:
			o.buildid_dir = optarg;
			break;
		case OPT_KALLSYMS:
			o.kallsyms = optarg;
			break;
		case 'F':
			if (script_fields__parse(&o.fields, optarg))
				return EXIT_USAGE;
			fields = true;
			break;
		case OPT_PACKETS:
			o.packets = true;
			break;
		case OPT_WINDOWS:
			windows = true;
			break;
		case OPT_CALL_TRACE:
			call_trace = true;
			break;
		case 'j':
			n = strtol(optarg, &end, 10);
			if (*end || end == optarg || n < 1 || n > SCRIPT_MAX_JOBS) {
				pr_err("script: -j %s: a number of workers from 1 to %d\n", optarg, SCRIPT_MAX_JOBS);
				return EXIT_USAGE;
			}
			o.jobs = n;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "chrome") && strcmp(optarg, "syscalls") && strcmp(optarg, "text")) {
				pr_err("script: --format=%s: expected chrome (Trace Event JSON), syscalls (one line per call) or text\n",
				       optarg);
				return EXIT_USAGE;
			}
			o.chrome = !strcmp(optarg, "chrome");
			o.syscalls = !strcmp(optarg, "syscalls");
			break;
		case OPT_SUMMARY:
			o.summary = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			script_cmd__usage(stdout);
			return EXIT_OK;
		default:
			script_cmd__usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("script: unexpected argument '%s' (the input file goes after -i)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (windows && call_trace) {
		pr_err("script: --windows lists every instruction, --call-trace only calls and returns: choose one\n");
		return EXIT_USAGE;
	}
	o.windows = windows || call_trace;
	o.call_trace = call_trace;
	if (o.windows && o.packets) {
		pr_err("script: --windows/--call-trace list instructions, --packets packets: choose one\n");
		return EXIT_USAGE;
	}
	if (fields && (o.windows || o.packets || o.itrace != 'b')) {
		pr_err("script: -F chooses the fields of branch samples: not with --itrace=i, --packets or --windows\n");
		return EXIT_USAGE;
	}
	if ((o.chrome || o.syscalls || o.summary) && (o.windows || o.packets || fields)) {
		pr_err("script: %s shows the whole recording; not with --windows, --call-trace, --packets or -F\n",
		       o.chrome ? "--format=chrome" : o.syscalls ? "--format=syscalls" : "--summary");
		return EXIT_USAGE;
	}
	if (o.syscalls && o.itrace != 'b') {
		pr_err("script: --format=syscalls lists system calls; --itrace=i decodes hardware trace: choose one\n");
		return EXIT_USAGE;
	}
	if ((o.chrome || o.syscalls) && o.summary) {
		pr_err("script: --format=%s lists the recording, --summary sums it up: choose one\n",
		       o.chrome ? "chrome" : "syscalls");
		return EXIT_USAGE;
	}
	if (verbose)
		log__set_level(LOG_INFO + verbose);
	return script__run(&o);
}
