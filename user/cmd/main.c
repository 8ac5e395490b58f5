// SPDX-License-Identifier: BSD-2-Clause
/*
 * auxtrig: record hardware trace or kernel events only when BPF conditions,
 * decided in the kernel, say so. This file only dispatches subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/sys/log.h"

#ifndef AUXTRIG_VERSION
#define AUXTRIG_VERSION "0.1"
#endif

static const struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subcommands[] = {
	{ "record", cmd_record, "record events inside in-kernel trigger windows into a perf.data file" },
	{ "list", cmd_list, "list the points and events this machine offers" },
	{ "probe", cmd_probe, "report what auxtrig can do on this machine, and why not" },
	{ "report", cmd_report, "sum a recording up: windows per thread, latency, triggers, losses" },
	{ "repair", cmd_repair, "complete a perf.data file whose recording was killed" },
	{ "script", cmd_script, "print the events and decode the hardware trace of a file" },
};

static void usage(FILE *f)
{
	fprintf(f, "USAGE: auxtrig [--version] [--help] COMMAND [ARGS]\n\nCOMMANDS:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f, "\n'auxtrig COMMAND --help' shows a command's options; man auxtrig(1) has the details.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("auxtrig %s\n", AUXTRIG_VERSION);
#ifdef AUXTRIG_NO_LIBIPT
		printf("built without libipt: no Intel PT decoding (auxtrig script)\n");
#endif
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(argv[1], subcommands[i].name))
			continue;
		return subcommands[i].fn(argc - 1, argv + 1);
	}
	pr_err("unknown command '%s' (try: auxtrig --help)\n", argv[1]);
	return EXIT_USAGE;
}
