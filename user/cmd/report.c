// SPDX-License-Identifier: BSD-2-Clause
/* `auxtrig report`: the summary of a recording (what `auxtrig script --summary` prints). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/decode/summary.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"

static void report__usage(FILE *f)
{
	fprintf(f,
		"USAGE: auxtrig report [-i FILE] [-v] [-h]\n"
		"\n"
		"Sum a recording up, like perf trace -s: per thread and window kind the count,\n"
		"how many returned an error, the total, min, avg and max duration; per window\n"
		"kind a latency histogram; per --on trigger its counters and the marks and\n"
		"snapshots it left; what was lost. The same as auxtrig script --summary.\n"
		"Each system call on a line of its own: auxtrig script --format=syscalls.\n"
		"\n"
		"  -i, --input FILE   the file to read (default: auxtrig.data, what record writes)\n"
		"  -v, --verbose      more messages (repeatable)\n"
		"  -h, --help         this help\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "auxtrig.data";
	struct pdata_reader *r;
	int c, verbose = 0, err;

	optind = 0;
	while ((c = getopt_long(argc, argv, "i:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			report__usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "USAGE: auxtrig report [-i FILE] (try: auxtrig report --help)\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("report: unexpected argument '%s' (the input file goes after -i)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (verbose)
		log__set_level(LOG_INFO + verbose);
	r = pdata_reader__open(input);
	if (!r)
		return EXIT_RUNTIME;
	err = summary__print(r, input, stdout);
	pdata_reader__delete(r);
	return err || fflush(stdout) ? EXIT_RUNTIME : EXIT_OK;
}
