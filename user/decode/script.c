// SPDX-License-Identifier: BSD-2-Clause
/*
 * script__run(): open a perf.data file, read what surrounds its trace once,
 * and hand it to the decoder of its format (script_pt.c, script_cs.c,
 * script_spe.c). See script.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/chrome_trace.h"
#include "auxtrig/decode/script.h"
#include "auxtrig/decode/internal/script.h"
#include "auxtrig/decode/summary.h"
#include "auxtrig/decode/timeline.h"
#include "auxtrig/decode/tp_script.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"

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

/* The attr type of the AUX PMU (its own samples are not window edges). */
static __u64 script__aux_type(const struct pdata_record_auxtrace_info *info, size_t npriv)
{
	if (info->type == PDATA_AUXTRACE_CS_ETM)
		return npriv > 1 ? info->priv[1] >> 32 : 0;
	return npriv ? info->priv[0] : 0;
}

int script__run(const struct script_opts *o)
{
	struct script_session s = { .o = o, .out = stdout };
	struct script_opts chrome_opts;
	static char outbuf[1 << 16];
	static bool buffered;
	const char *arch;
	int rc = EXIT_RUNTIME, err;

	if (!buffered)	/* once, before anything is printed */
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	buffered = true;
	s.r = pdata_reader__open(o->input);
	if (!s.r)
		return EXIT_RUNTIME;
	s.info = script__find_info(s.r);
	if (o->summary) {
		rc = summary__print(s.r, o->input, stdout) ? EXIT_RUNTIME : EXIT_OK;
		goto out;
	}
	if (o->chrome) {
		/* the events first; the trace windows, if any, join them below */
		s.ct = chrome_trace__new(stdout);
		if (!s.ct || timeline__events(s.r, s.ct, o->input))
			goto out;
		rc = EXIT_OK;
		if (!s.info || (s.info->type != PDATA_AUXTRACE_INTEL_PT && s.info->type != PDATA_AUXTRACE_CS_ETM))
			goto out;
		chrome_opts = *o;
		chrome_opts.windows = chrome_opts.call_trace = true;
		chrome_opts.packets = false;
		s.o = o = &chrome_opts;
	} else if (!s.info) {
		/* no hardware trace: the events, as perf script prints them */
		rc = tp_script__print(s.r, o, stdout) ? EXIT_RUNTIME : EXIT_OK;
		goto out;
	}
	s.npriv = (s.info->header.size - sizeof(*s.info)) / sizeof(__u64);
	s.bins = binaries__new(o->symfs, o->buildid_dir);
	if (!s.bins)
		goto out;
	err = sideband__collect(&s.sd, s.r, script__aux_type(s.info, s.npriv), s.bins);
	if (err == -EPROTO) {
		pr_err("%s: stopped at a corrupt record\n", o->input);
		goto out;
	}
	if (err) {
		pr_err("%s: cannot read the sideband records: %s\n", o->input, strerror(-err));
		goto out;
	}
	/* perf's machine__kernel_start(): the kernel map's start, but 1 << 63 on x86_64 */
	arch = pdata_reader__feature_string(s.r, PDATA_HEADER_ARCH);
	if (binaries__kernel_map_start(s.bins) && !(arch && !strcmp(arch, "x86_64")))
		binaries__set_kernel_start(s.bins, binaries__kernel_map_start(s.bins));
	if (o->fields && s.info->type != PDATA_AUXTRACE_CS_ETM) {
		pr_err("%s: -F chooses the fields of CoreSight branch samples; this file holds %s trace\n", o->input,
		       s.info->type == PDATA_AUXTRACE_INTEL_PT ? "Intel PT" :
		       s.info->type == PDATA_AUXTRACE_ARM_SPE ? "Arm SPE" : "other");
		rc = EXIT_USAGE;
		goto out;
	}
	switch (s.info->type) {
	case PDATA_AUXTRACE_INTEL_PT:
		rc = script_pt__run(&s);
		break;
	case PDATA_AUXTRACE_CS_ETM:
		rc = script_cs__run(&s);
		break;
	case PDATA_AUXTRACE_ARM_SPE:
		rc = script_spe__run(&s);
		break;
	default:
		pr_err("%s: AUX trace type %u is not supported (Intel PT, CoreSight ETM and Arm SPE are)\n", o->input,
		       s.info->type);
		rc = EXIT_UNSUPPORTED;
		break;
	}
out:
	if (s.ct && chrome_trace__finish(s.ct) && rc == EXIT_OK) {
		pr_err("cannot write the timeline: %s\n", strerror(EIO));
		rc = EXIT_RUNTIME;
	}
	if (fflush(stdout) && rc == EXIT_OK) {
		pr_err("cannot write the output: %s\n", strerror(errno));
		rc = EXIT_RUNTIME;
	}
	sideband__free(&s.sd);
	binaries__delete(s.bins);
	pdata_reader__delete(s.r);
	return rc;
}
