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
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/chrome_trace.h"
#include "auxtrig/decode/same_kernel.h"
#include "auxtrig/decode/script.h"
#include "auxtrig/decode/internal/script.h"
#include "auxtrig/decode/summary.h"
#include "auxtrig/decode/syscall_view.h"
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

/*
 * -i DIR: a recording of kernel trace in perf record --kcore's layout
 * (kcore_copy.h): the perf.data file is DIR/data, the kernel's code in
 * DIR/kcore_dir (when it holds kallsyms). Return: the file to read.
 */
static const char *script__input(const char *in, char *data, size_t size, char *kdir, size_t ksize)
{
	struct stat st;

	kdir[0] = '\0';
	if (strcmp(in, "-") && !stat(in, &st) && S_ISDIR(st.st_mode)) {
		snprintf(data, size, "%s/data", in);
		snprintf(kdir, ksize, "%s/kcore_dir/kallsyms", in);
		if (access(kdir, R_OK))
			kdir[0] = '\0';
		else
			snprintf(kdir, ksize, "%s/kcore_dir", in);
		return data;
	}
	return in;
}

/*
 * [vdso]'s code and symbols: when the file was recorded on the running
 * kernel, this process's vDSO is the image every process of its ABI mapped
 * (perf 6.1 takes its own vDSO too; the build-ID cache comes first).
 */
static void script__vdso(struct script_session *s)
{
	int err;

	if (!same_kernel__running(s->r))
		return;
	err = binaries__add_own_vdso(s->bins);
	if (err)
		pr_debug("%s: no image for [vdso]: %s\n", s->o->input, strerror(-err));
}

/*
 * The kernel's code and symbols, for trace that enters the kernel: the
 * copy kept with the recording; else, when the file was recorded on the
 * running kernel, /proc/kcore and /proc/kallsyms (perf does the same), or
 * the symbols alone when /proc/kcore cannot be read; else the symbols of
 * --kallsyms. The modules' symbols among them place the modules' .text
 * (binaries.h).
 */
static void script__kernel(struct script_session *s, const char *kdir)
{
	char kcore[4200], kallsyms[4200];
	int err;

	if (s->o->kallsyms && !kdir[0] && !(binaries__kernel_map_start(s->bins) && same_kernel__running(s->r))) {
		err = binaries__add_kallsyms(s->bins, s->o->kallsyms);
		if (err)
			pr_warn("%s: no kernel symbols from %s: %s\n", s->o->input, s->o->kallsyms,
				err == -ENODATA ? "it shows no addresses" : strerror(-err));
		return;
	}
	if (!binaries__kernel_map_start(s->bins))
		return;
	if (kdir[0]) {
		snprintf(kcore, sizeof(kcore), "%s/kcore", kdir);
		snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", kdir);
		err = binaries__add_kernel_code(s->bins, kcore, kallsyms);
		if (err)
			pr_warn("%s: cannot read the kernel's code kept in %s: %s\n", s->o->input, kdir, strerror(-err));
		return;
	}
	if (!same_kernel__running(s->r))
		return;
	/* without /proc/kcore, the symbols it read first stay */
	err = binaries__add_kernel_code(s->bins, "/proc/kcore", s->o->kallsyms ?: "/proc/kallsyms");
	if (err)
		pr_debug("%s: the running kernel's code: %s\n", s->o->input, strerror(-err));
}

int script__run(const struct script_opts *o)
{
	struct script_session s = { .o = o, .out = stdout };
	struct script_opts chrome_opts;
	static char outbuf[1 << 16];
	static bool buffered;
	char data[4200], kdir[4200];
	const char *arch;
	int rc = EXIT_RUNTIME, err;

	if (!buffered)	/* once, before anything is printed */
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	buffered = true;
	s.r = pdata_reader__open(script__input(o->input, data, sizeof(data), kdir, sizeof(kdir)));
	if (!s.r)
		return EXIT_RUNTIME;
	s.info = script__find_info(s.r);
	if (o->summary) {
		rc = summary__print(s.r, o->input, stdout) ? EXIT_RUNTIME : EXIT_OK;
		goto out;
	}
	if (o->syscalls) {
		rc = syscall_view__print(s.r, o->input, stdout) ? EXIT_RUNTIME : EXIT_OK;
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
		if (o->fields.given || o->fields.flags) {
			pr_err("%s: -F chooses the fields of hardware-trace samples; this file has no hardware trace\n",
			       o->input);
			rc = EXIT_USAGE;
			goto out;
		}
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
	script__kernel(&s, kdir);
	script__vdso(&s);
	if (o->fields.given && s.info->type == PDATA_AUXTRACE_ARM_SPE) {
		pr_err("%s: -F chooses the fields of Intel PT and CoreSight branch samples; this file holds Arm SPE "
		       "trace\n", o->input);
		rc = EXIT_USAGE;
		goto out;
	}
	switch (s.info->type) {
	case PDATA_AUXTRACE_INTEL_PT:
#ifdef AUXTRIG_NO_LIBIPT
		/* Debian builds libipt for x86 only: the Makefile's LIBIPT=0. */
		pr_err("%s: holds Intel PT trace, and this auxtrig was built without libipt (LIBIPT=0), which decodes it\n",
		       o->input);
		rc = EXIT_UNSUPPORTED;
#else
		rc = script_pt__run(&s);
#endif
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
	tp_formats__exit(&s.tp_formats);
	binaries__delete(s.bins);
	pdata_reader__delete(s.r);
	return rc;
}
