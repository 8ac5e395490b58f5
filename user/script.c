// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig script`: decode the hardware trace in a perf.data file: Intel PT
 * with libipt (ipt_decoder), CoreSight ETM with OpenCSD (csd_decoder).
 * Output mimics `perf script --itrace=b -F ip,addr,cpu` (Intel PT) and
 * `-F ip,addr,sym,symoff,dso` (CoreSight) so the two can be diffed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "auxtrig/cmd.h"
#include "auxtrig/csd_decoder.h"
#include "auxtrig/ipt_decoder.h"
#include "auxtrig/log.h"
#include "auxtrig/pdata_reader.h"

/* Intel PT AUXTRACE_INFO priv[] indices (perf-aux.md §2.1). */
#define IPT_PRIV_TIME_SHIFT	1
#define IPT_PRIV_TIME_MULT	2
#define IPT_PRIV_TIME_ZERO	3
#define IPT_PRIV_MIN		10

struct script_opts {
	const char *input;
	const char *symfs;
	char itrace;		/* 'b' branches, 'i' instruction ranges */
	int packets;
};

static const struct option script_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "itrace", required_argument, NULL, 'I' },
	{ "symfs", required_argument, NULL, 'S' },
	{ "packets", no_argument, NULL, 'P' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static void script__usage(FILE *f)
{
	fprintf(f,
		"USAGE: auxtrig script [-i FILE] [--itrace=b|i] [--symfs DIR] [--packets] [-v] [-h]\n"
		"\n"
		"Decode the Intel PT or CoreSight ETM trace in a perf.data file.\n"
		"\n"
		"  -i, --input FILE   perf.data file to read (default: perf.data)\n"
		"      --itrace=b|i   b: branch samples (default); i: instruction ranges (CoreSight)\n"
		"      --symfs DIR    look for the traced binaries under DIR (CoreSight)\n"
		"      --packets      list the trace packets instead of samples\n"
		"  -v, --verbose      more messages (repeatable)\n"
		"  -h, --help         this help\n");
}

/* One buffer's worth of Intel PT samples, to be merged by time with sideband samples. */
struct ipt_sample {
	__u64 time;
	__u64 from, to;
	__s32 cpu;
	int branch;	/* 0: a non-AUX sample (ip only) */
	__u64 seq;
};

struct ipt_samples {
	struct ipt_sample *v;
	size_t nr, cap;
	__u64 time_shift, time_mult, time_zero;
	int cpu;
	int have_time;
};

static int ipt_samples__add(struct ipt_samples *s, const struct ipt_sample *one)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct ipt_sample *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->nr] = *one;
	s->v[s->nr].seq = s->nr;
	s->nr++;
	return 0;
}

/* TSC to perf time, as perf's tsc_to_perf_time() does with the mmap page values. */
static __u64 ipt_samples__tsc_to_time(const struct ipt_samples *s, __u64 tsc)
{
	__u64 quot, rem;

	if (!s->have_time)
		return 0;
	quot = tsc >> s->time_shift;
	rem = tsc & ((1ULL << s->time_shift) - 1);
	return s->time_zero + quot * s->time_mult + ((rem * s->time_mult) >> s->time_shift);
}

static int script__ipt_branch(const struct ipt_branch *br, void *ctx)
{
	struct ipt_samples *s = ctx;
	struct ipt_sample one = {
		.time = ipt_samples__tsc_to_time(s, br->tsc),
		.from = br->from, .to = br->to, .cpu = s->cpu, .branch = 1,
	};

	return ipt_samples__add(s, &one);
}

static int script__ipt_packet(const struct pt_packet *pkt, __u64 offset, void *ctx)
{
	char line[128];

	printf("%#010" PRIx64 "  %s\n", (uint64_t)offset, ipt_decoder__packet_str(pkt, line, sizeof(line)));
	return 0;
}

static int ipt_sample__cmp(const void *a, const void *b)
{
	const struct ipt_sample *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void script__print_cpu(__s32 cpu)
{
	if (cpu < 0)
		printf("[%03d] ", cpu);
	else
		printf("[%03d] ", cpu);
}

static int script__intel_pt(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			    const struct script_opts *o)
{
	struct ipt_samples s = { 0 };
	struct pdata_event ev;
	__u64 pos = 0;
	size_t npriv = (info->header.size - sizeof(*info)) / sizeof(__u64);
	int err = 0, ret;

	if (npriv < IPT_PRIV_MIN) {
		pr_err("%s: Intel PT AUXTRACE_INFO has %zu fields, at least %d expected\n", o->input, npriv,
		       IPT_PRIV_MIN);
		return EXIT_RUNTIME;
	}
	s.time_shift = info->priv[IPT_PRIV_TIME_SHIFT];
	s.time_mult = info->priv[IPT_PRIV_TIME_MULT];
	s.time_zero = info->priv[IPT_PRIV_TIME_ZERO];
	s.have_time = s.time_shift < 64 && s.time_mult;

	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const struct pdata_record_auxtrace *at = (const void *)ev.header;
		struct pdata_sample smp;

		if (ev.header->type == PDATA_RECORD_AUXTRACE) {
			if (o->packets) {
				struct ipt_packet_stats st;

				printf("# AUXTRACE idx %u cpu %d offset %#llx size %llu\n", at->idx, (int)at->cpu,
				       (unsigned long long)at->offset, (unsigned long long)at->size);
				err = ipt_decoder__packets(ev.aux, ev.aux_size, script__ipt_packet, NULL, &st);
				if (err)
					break;
				printf("# %llu packets, %llu PAD, %llu errors\n", (unsigned long long)st.packets,
				       (unsigned long long)st.pads, (unsigned long long)st.errors);
				continue;
			}
			s.cpu = (int)at->cpu;
			err = ipt_decoder__branches(ev.aux, ev.aux_size, script__ipt_branch, &s);
			if (err)
				break;
			continue;
		}
		if (o->packets || ev.header->type != PERF_RECORD_SAMPLE)
			continue;
		if (pdata_reader__parse_sample(r, &ev, &smp) || !smp.attr)
			continue;
		/* Samples of the AUX event itself carry no branch; show the others (perf does). */
		if (smp.attr->attr.aux_watermark || smp.attr->attr.type == PERF_TYPE_SOFTWARE)
			continue;
		{
			struct ipt_sample one = {
				.time = smp.time, .from = smp.ip, .to = smp.addr,
				.cpu = (smp.present & PERF_SAMPLE_CPU) ? (__s32)smp.cpu : -1,
			};

			err = ipt_samples__add(&s, &one);
			if (err)
				break;
		}
	}
	if (ret < 0) {
		pr_err("%s: stopped at a corrupt record\n", o->input);
		free(s.v);
		return EXIT_RUNTIME;
	}
	if (err) {
		pr_err("%s: decoding failed: %s\n", o->input, strerror(-err));
		free(s.v);
		return EXIT_RUNTIME;
	}
	qsort(s.v, s.nr, sizeof(*s.v), ipt_sample__cmp);
	for (size_t i = 0; i < s.nr; i++) {
		const struct ipt_sample *x = &s.v[i];

		script__print_cpu(x->cpu);
		if (x->branch)
			printf(" %16" PRIx64 " => %16" PRIx64 "\n", (uint64_t)x->from, (uint64_t)x->to);
		else
			printf("%16" PRIx64 " %16" PRIx64 "\n", (uint64_t)x->to, (uint64_t)x->from);
	}
	free(s.v);
	return EXIT_OK;
}

/* The first AUXTRACE_INFO record, or NULL. */
static const struct pdata_record_auxtrace_info *script__find_info(struct pdata_reader *r)
{
	struct pdata_event ev;
	__u64 pos = 0;

	while (pdata_reader__next(r, &pos, &ev) > 0)
		if (ev.header->type == PDATA_RECORD_AUXTRACE_INFO &&
		    ev.header->size >= sizeof(struct pdata_record_auxtrace_info))
			return (const void *)ev.header;
	return NULL;
}

int cmd_script(int argc, char **argv)
{
	struct script_opts o = { .input = "perf.data", .itrace = 'b' };
	const struct pdata_record_auxtrace_info *info;
	struct pdata_reader *r;
	int c, verbose = 0, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "i:vh", script_options, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.input = optarg;
			break;
		case 'I':
			if (strcmp(optarg, "b") && strcmp(optarg, "i")) {
				pr_err("script: --itrace=%s: only b (branches) or i (instruction ranges)\n", optarg);
				return EXIT_USAGE;
			}
			o.itrace = optarg[0];
			break;
		case 'S':
			o.symfs = optarg;
			break;
		case 'P':
			o.packets = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			script__usage(stdout);
			return EXIT_OK;
		default:
			script__usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("script: unexpected argument '%s' (the input file goes after -i)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (verbose)
		log__set_level(LOG_INFO + verbose);
	r = pdata_reader__open(o.input);
	if (!r)
		return EXIT_RUNTIME;
	info = script__find_info(r);
	if (!info) {
		pr_err("%s: no AUXTRACE_INFO record: the file holds no hardware trace\n", o.input);
		rc = EXIT_RUNTIME;
	} else if (info->type == PDATA_AUXTRACE_INTEL_PT) {
		rc = script__intel_pt(r, info, &o);
	} else if (info->type == PDATA_AUXTRACE_CS_ETM) {
		rc = csd_decoder__script(r, info, o.input, o.symfs, o.packets, o.itrace);
	} else {
		pr_err("%s: AUX trace type %u is not supported (Intel PT and CoreSight ETM are)\n", o.input,
		       info->type);
		rc = EXIT_RUNTIME;
	}
	pdata_reader__delete(r);
	return rc;
}
