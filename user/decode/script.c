// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig script`: decode the hardware trace in a perf.data file: Intel PT
 * with libipt (ipt_decoder), CoreSight ETM with OpenCSD (csd_decoder), Arm
 * SPE records with spe_decoder.
 * Output mimics `perf script --itrace=b -F ip,addr,cpu` (Intel PT) and
 * `-F ip,addr,sym,symoff,dso` (CoreSight) so the two can be diffed.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <intel-pt.h>
#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/decode/csd_decoder.h"
#include "auxtrig/decode/ipt_decoder.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/decode/spe_decoder.h"
#include "auxtrig/decode/chrome_trace.h"
#include "auxtrig/decode/summary.h"
#include "auxtrig/decode/timeline.h"
#include "auxtrig/decode/tp_script.h"

/* Intel PT AUXTRACE_INFO priv[] indices (perf-aux.md §2.1). */
#define IPT_PRIV_TIME_SHIFT	1
#define IPT_PRIV_TIME_MULT	2
#define IPT_PRIV_TIME_ZERO	3
#define IPT_PRIV_MIN		10
#define IPT_PRIV_MTC_FREQ_BITS	11
#define IPT_PRIV_TSC_CTC_N	12
#define IPT_PRIV_TSC_CTC_D	13

struct script_opts {
	const char *input;
	const char *symfs;
	char itrace;		/* 'b' branches, 'i' instruction ranges */
	int packets;
	int windows;		/* per window: instructions (Intel PT), ranges (CoreSight) */
	int call_trace;		/* with windows: calls and returns only */
	int chrome;		/* --format=chrome: the timeline as Trace Event JSON */
	int summary;		/* --summary: windows per thread and kind, triggers, losses */
	struct chrome_trace *ct;	/* with chrome: where the windows go */
};

static const struct option script_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "itrace", required_argument, NULL, 'I' },
	{ "symfs", required_argument, NULL, 'S' },
	{ "packets", no_argument, NULL, 'P' },
	{ "windows", no_argument, NULL, 'W' },
	{ "call-trace", no_argument, NULL, 'C' },
	{ "format", required_argument, NULL, 'F' },
	{ "summary", no_argument, NULL, 'M' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static void script__usage(FILE *f)
{
	fprintf(f,
		"USAGE: auxtrig script [-i FILE] [--itrace=b|i] [--symfs DIR] [--packets]\n"
		"                      [--windows | --call-trace] [--format=chrome] [--summary] [-v] [-h]\n"
		"\n"
		"Decode the Intel PT, CoreSight ETM or Arm SPE trace in a perf.data file;\n"
		"without hardware trace, print its events as perf script does.\n"
		"\n"
		"  -i, --input FILE   perf.data file to read (default: auxtrig.data, what record writes)\n"
		"      --itrace=b|i   b: branch samples, SPE samples (default); i: instruction ranges\n"
		"                     (CoreSight)\n"
		"      --symfs DIR    look for the traced binaries under DIR\n"
		"      --packets      list the trace packets instead of samples\n"
		"      --windows      every instruction with its symbol, per window (from trace\n"
		"                     enable to disable), under a header naming the thread, what\n"
		"                     opened and closed it, its time and its AUX record\n"
		"      --call-trace   as --windows, but only calls and returns, indented by depth\n"
		"      --summary      per thread and window kind: count, errors, total, min, avg,\n"
		"                     max duration; latency histograms; triggers; losses\n"
		"                     (the same as auxtrig report)\n"
		"      --format=chrome  the timeline as Trace Event JSON for Perfetto UI,\n"
		"                     chrome://tracing and speedscope: windows as slices per\n"
		"                     thread, marks and snapshots as instants with their values,\n"
		"                     the decoded calls of hardware trace nested in its windows\n"
		"  -v, --verbose      more messages (repeatable)\n"
		"  -h, --help         this help\n");
}

/* Intel PT samples and the file's other samples, merged by time in TSC units. */
struct script_pt_sample {
	__u64 tsc;
	__u64 from, to;
	__s32 cpu;
	int branch;	/* 0: a non-AUX sample (ip only) */
	__u64 seq;
};

struct script_pt_samples {
	struct script_pt_sample *v;
	size_t nr, cap;
	__u64 time_shift, time_mult, time_zero;
	int cpu;
	int have_time;
	struct ipt_timing timing;
};

static int script_pt_samples__add(struct script_pt_samples *s, const struct script_pt_sample *one)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct script_pt_sample *v = realloc(s->v, cap * sizeof(*v));

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

/*
 * perf time to TSC, the inverse of the mmap page's conversion: perf's
 * decoder compares a sample's time with its own TSC-based timestamps this way.
 */
static __u64 script_pt_samples__time_to_tsc(const struct script_pt_samples *s, __u64 ns)
{
	__u64 t, quot, rem;

	if (!s->have_time)
		return 0;
	t = ns - s->time_zero;
	quot = t / s->time_mult;
	rem = t % s->time_mult;
	return (quot << s->time_shift) + (rem << s->time_shift) / s->time_mult;
}

static int script__ipt_branch(const struct ipt_branch *br, void *ctx)
{
	struct script_pt_samples *s = ctx;
	struct script_pt_sample one = {
		.tsc = br->tsc, .from = br->from, .to = br->to, .cpu = s->cpu, .branch = 1,
	};

	return script_pt_samples__add(s, &one);
}

static int script__ipt_packet(const struct pt_packet *pkt, __u64 offset, void *ctx)
{
	char line[128];

	printf("%#010" PRIx64 "  %s\n", (uint64_t)offset, ipt_decoder__packet_str(pkt, line, sizeof(line)));
	return 0;
}

/*
 * perf decodes a queue up to the time of the next other event: a branch
 * whose timestamp is not below that event's comes after it.
 */
static int script_pt_sample__cmp(const void *a, const void *b)
{
	const struct script_pt_sample *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	if (x->branch != y->branch)
		return x->branch - y->branch;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One AUXTRACE buffer: perf queues them by mmap index. */
struct script_pt_buf {
	__u32 idx;
	int cpu;
	__u64 offset, size, reference;
	const void *data;
	size_t seq;
};

struct script_pt_bufs {
	struct script_pt_buf *v;
	size_t nr;
};

static int script_pt_bufs__add(struct script_pt_bufs *b, const struct script_pt_buf *one)
{
	struct script_pt_buf *v = realloc(b->v, (b->nr + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	b->v = v;
	b->v[b->nr] = *one;
	b->v[b->nr].seq = b->nr;
	b->nr++;
	return 0;
}

static int script_pt_buf__cmp(const void *a, const void *b)
{
	const struct script_pt_buf *x = a, *y = b;

	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Decode queue by queue (mmap index), in file order within a queue. Buffers
 * that continue each other in aux_head space (offset == previous end) are one
 * trace stream, decoded as one: a packet may straddle them. A gap (data lost)
 * starts a new stream, which the decoder syncs on its first PSB.
 */
static int script__intel_pt_queues(struct script_pt_bufs *bufs, struct script_pt_samples *s,
				   const struct script_opts *o)
{
	int err = 0;

	if (bufs->nr)
		qsort(bufs->v, bufs->nr, sizeof(*bufs->v), script_pt_buf__cmp);
	for (size_t i = 0; i < bufs->nr && !err;) {
		const struct script_pt_buf *first = &bufs->v[i];
		size_t n = 1, total = first->size;
		unsigned char *joined = NULL;
		const void *data = first->data;

		while (i + n < bufs->nr && bufs->v[i + n].idx == first->idx &&
		       bufs->v[i + n].offset == bufs->v[i + n - 1].offset + bufs->v[i + n - 1].size) {
			total += bufs->v[i + n].size;
			n++;
		}
		if (n > 1) {
			size_t at = 0;

			joined = malloc(total ? total : 1);
			if (!joined)
				return -ENOMEM;
			for (size_t k = 0; k < n; k++) {
				memcpy(joined + at, bufs->v[i + k].data, bufs->v[i + k].size);
				at += bufs->v[i + k].size;
			}
			data = joined;
		}
		if (o->packets) {
			struct ipt_packet_stats st;

			printf("# AUXTRACE idx %u cpu %d offset %#llx size %zu (%zu buffer%s)\n", first->idx,
			       first->cpu, (unsigned long long)first->offset, total, n, n > 1 ? "s" : "");
			err = ipt_decoder__packets(data, total, script__ipt_packet, NULL, &st);
			if (!err)
				printf("# %llu packets, %llu PAD, %llu errors\n", (unsigned long long)st.packets,
				       (unsigned long long)st.pads, (unsigned long long)st.errors);
		} else {
			s->cpu = first->cpu;
			s->timing.ref_tsc = first->reference;
			err = ipt_decoder__branches(data, total, &s->timing, script__ipt_branch, s);
		}
		free(joined);
		i += n;
	}
	return err;
}

static int script__pt_windows(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			      const struct script_opts *o);
static int script__cs_windows(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			      const struct script_opts *o);

static int script__intel_pt(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			    const struct script_opts *o)
{
	struct script_pt_samples s = { 0 };
	struct script_pt_bufs bufs = { 0 };
	struct pdata_event ev;
	__u64 pos = 0;
	size_t npriv = (info->header.size - sizeof(*info)) / sizeof(__u64);
	int err = 0, ret;

	if (o->windows) {
		if (npriv < IPT_PRIV_MIN) {
			pr_err("%s: Intel PT AUXTRACE_INFO has %zu fields, at least %d expected\n", o->input, npriv,
			       IPT_PRIV_MIN);
			return EXIT_RUNTIME;
		}
		return script__pt_windows(r, info, o);
	}
	if (o->itrace == 'i' && !o->packets) {
		pr_err("%s: --itrace=i needs the traced code, which Intel PT decoding here does not read "
		       "(use --itrace=b or --packets)\n", o->input);
		return EXIT_USAGE;
	}
	if (npriv < IPT_PRIV_MIN) {
		pr_err("%s: Intel PT AUXTRACE_INFO has %zu fields, at least %d expected\n", o->input, npriv,
		       IPT_PRIV_MIN);
		return EXIT_RUNTIME;
	}
	s.time_shift = info->priv[IPT_PRIV_TIME_SHIFT];
	s.time_mult = info->priv[IPT_PRIV_TIME_MULT];
	s.time_zero = info->priv[IPT_PRIV_TIME_ZERO];
	s.have_time = s.time_shift < 64 && s.time_mult;
	if (npriv > IPT_PRIV_TSC_CTC_D) {
		__u64 mask = info->priv[IPT_PRIV_MTC_FREQ_BITS];

		for (size_t i = 0; mask && i < pdata_reader__nr_attrs(r); i++) {
			const struct pdata_reader_attr *a = pdata_reader__attr(r, i);

			if (a->attr.type == info->priv[0])	/* the intel_pt attr */
				s.timing.mtc_period = (a->attr.config & mask) >> __builtin_ctzll(mask);
		}
		s.timing.tsc_ctc_n = info->priv[IPT_PRIV_TSC_CTC_N];
		s.timing.tsc_ctc_d = info->priv[IPT_PRIV_TSC_CTC_D];
	}

	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const struct pdata_record_auxtrace *at = (const void *)ev.header;
		struct pdata_sample smp;

		if (ev.header->type == PDATA_RECORD_AUXTRACE) {
			struct script_pt_buf b = {
				.idx = at->idx, .cpu = (int)at->cpu, .offset = at->offset, .size = ev.aux_size,
				.reference = at->reference, .data = ev.aux,
			};

			err = script_pt_bufs__add(&bufs, &b);
			if (err)
				break;
			continue;
		}
		if (o->packets || ev.header->type != PERF_RECORD_SAMPLE)
			continue;
		if (pdata_reader__parse_sample(r, &ev, &smp) || !smp.attr)
			continue;
		/*
		 * The other events' samples are listed among the branches, as perf
		 * script does; not those of the intel_pt event itself (its PMU type
		 * is priv[0]) nor of the sideband dummy.
		 */
		if (smp.attr->attr.type == info->priv[0] ||
		    (smp.attr->attr.type == PERF_TYPE_SOFTWARE && smp.attr->attr.config == PERF_COUNT_SW_DUMMY))
			continue;
		{
			struct script_pt_sample one = {
				.tsc = script_pt_samples__time_to_tsc(&s, smp.time), .from = smp.ip, .to = smp.addr,
				.cpu = (smp.present & PERF_SAMPLE_CPU) ? (__s32)smp.cpu : -1,
			};

			err = script_pt_samples__add(&s, &one);
			if (err)
				break;
		}
	}
	if (!err && ret >= 0)
		err = script__intel_pt_queues(&bufs, &s, o);
	free(bufs.v);
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
	if (s.nr)
		qsort(s.v, s.nr, sizeof(*s.v), script_pt_sample__cmp);
	for (size_t i = 0; i < s.nr; i++) {
		const struct script_pt_sample *x = &s.v[i];

		printf("[%03d] ", x->cpu);	/* perf: [-01] for samples without a CPU */
		if (x->branch)
			printf(" %16" PRIx64 " => %16" PRIx64 "\n", (uint64_t)x->from, (uint64_t)x->to);
		else
			printf("%16" PRIx64 " %16" PRIx64 "\n", (uint64_t)x->to, (uint64_t)x->from);
	}
	free(s.v);
	return EXIT_OK;
}

/* CoreSight AUXTRACE_INFO priv[] (perf-aux.md §2.1, perf 6.1 util/cs-etm.h). */
#define CS_PRIV_VERSION		0
#define CS_PRIV_PMU_TYPE_CPUS	1
#define CS_PRIV_HDR		3
#define CS_ETMV3_MAGIC		0x3030303030303030ULL
#define CS_ETMV4_MAGIC		0x4040404040404040ULL
#define CS_ETE_MAGIC		0x5050505050505050ULL
#define CS_ETMV4_V0_PARAMS	7	/* version 0 blocks: magic, cpu, then 7 registers */

/* A function symbol of a traced image, where the mapping put it. */
struct script_sym {
	__u64 start, end;	/* runtime addresses, end exclusive */
	char *name;
};

/* One executable mapping of the traced process and the image behind it. */
struct script_map {
	__u64 start, len, pgoff;
	char *filename;
	struct script_sym *syms;	/* sorted by start */
	size_t nr_syms;
};

struct script_cs {
	const struct script_opts *o;
	struct script_map *maps;
	size_t nr_maps;
	struct csd_branches br[128];
	int cpu_of_id[128];
	/* per trace ID: a decoder exists for every CPU, most see no data */
	__u64 packets[128], elems[128], ranges[128];
	/* --windows: the windows so far, each trace ID's open one (index + 1, 0 none) */
	struct script_wins *ws;
	size_t win_of_id[128];
	const char *why_of_id[128];	/* what will open the next window of an ID */
	__u64 aux_offset;		/* the buffer being decoded */
	__u32 idx;
	int buf_cpu;
};

struct script_win;
static struct script_win *script_wins__open(struct script_wins *ws, int cpu, __u32 idx, __u64 aux_offset,
					    __u64 tsc, __u64 ip, const char *why);
static int script_win__add(struct script_win *w, __u64 ip, __u8 iclass);
static struct script_win *script_wins__at(struct script_wins *ws, size_t i);
static void script_win__close(struct script_win *w, const char *why);
static void script_cs__window_elem(struct script_cs *cs, const struct csd_elem *elem);

static void script_cs__free(struct script_cs *cs)
{
	for (size_t i = 0; i < cs->nr_maps; i++) {
		for (size_t j = 0; j < cs->maps[i].nr_syms; j++)
			free(cs->maps[i].syms[j].name);
		free(cs->maps[i].syms);
		free(cs->maps[i].filename);
	}
	free(cs->maps);
}

static const struct script_map *script_cs__find_map(const struct script_cs *cs, __u64 addr)
{
	for (size_t i = 0; i < cs->nr_maps; i++)
		if (addr >= cs->maps[i].start && addr - cs->maps[i].start < cs->maps[i].len)
			return &cs->maps[i];
	return NULL;
}

/* Collect the executable MMAP/MMAP2 records (later ones of the same range win). */
static int script_cs__collect_maps(struct script_cs *cs, struct pdata_reader *r)
{
	struct pdata_event ev;
	__u64 pos = 0;
	int ret;

	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const char *name;
		size_t head, max;
		__u64 start, len, pgoff;
		struct script_map *m;

		if (ev.header->type == PERF_RECORD_MMAP2) {
			const struct pdata_record_mmap2 *mm = (const void *)ev.header;

			head = sizeof(*mm);
			if (ev.header->size <= head || !(mm->prot & PROT_EXEC))
				continue;
			start = mm->start, len = mm->len, pgoff = mm->pgoff;
		} else if (ev.header->type == PERF_RECORD_MMAP) {
			const struct pdata_record_mmap *mm = (const void *)ev.header;

			head = sizeof(*mm);
			if (ev.header->size <= head)
				continue;
			start = mm->start, len = mm->len, pgoff = mm->pgoff;
		} else {
			continue;
		}
		name = (const char *)ev.header + head;
		max = ev.header->size - head;
		if (!memchr(name, 0, max) || !len)
			continue;
		/* A later mapping of the same addresses replaces the earlier one. */
		for (size_t i = 0; i < cs->nr_maps;) {
			struct script_map *o = &cs->maps[i];

			if (o->start < start + len && start < o->start + o->len) {
				free(o->filename);
				*o = cs->maps[--cs->nr_maps];
				continue;
			}
			i++;
		}
		m = realloc(cs->maps, (cs->nr_maps + 1) * sizeof(*m));
		if (!m)
			return -ENOMEM;
		cs->maps = m;
		m = &cs->maps[cs->nr_maps];
		memset(m, 0, sizeof(*m));
		m->filename = strdup(name);
		if (!m->filename)
			return -ENOMEM;
		m->start = start, m->len = len, m->pgoff = pgoff;
		cs->nr_maps++;
	}
	return ret < 0 ? ret : 0;
}

static int script_sym__cmp(const void *a, const void *b)
{
	const struct script_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The function symbols of an ELF64 image (.symtab, else .dynsym), moved to
 * where mapping @m put them: a symbol's file offset comes from the PT_LOAD
 * segment that holds it. Symbols of size 0 reach to the next symbol. Errors
 * leave the map without symbols: names are a nicety.
 */
static void script_map__load_syms(struct script_map *m, const char *path)
{
	Elf64_Shdr *sh = NULL;
	Elf64_Phdr *ph = NULL;
	Elf64_Sym *sym = NULL;
	char *str = NULL;
	Elf64_Ehdr eh;
	size_t nsym = 0;
	int fd, tab = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_shnum || eh.e_shnum > 4096 || eh.e_phnum > 256)
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	ph = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof(*ph));
	if (!sh || !ph ||
	    pread(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff) != (ssize_t)(eh.e_shnum * sizeof(*sh)) ||
	    pread(fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff) != (ssize_t)(eh.e_phnum * sizeof(*ph)))
		goto out;
	for (int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && tab < 0))
			tab = i;
	if (tab < 0 || sh[tab].sh_link >= eh.e_shnum || sh[tab].sh_entsize != sizeof(Elf64_Sym) ||
	    sh[tab].sh_size > (64 << 20) || sh[sh[tab].sh_link].sh_size > (64 << 20))
		goto out;
	nsym = sh[tab].sh_size / sizeof(Elf64_Sym);
	sym = malloc(nsym * sizeof(*sym) + 1);
	str = calloc(1, sh[sh[tab].sh_link].sh_size + 1);	/* NUL-terminated whatever the file says */
	if (!sym || !str ||
	    pread(fd, sym, nsym * sizeof(*sym), sh[tab].sh_offset) != (ssize_t)(nsym * sizeof(*sym)) ||
	    pread(fd, str, sh[sh[tab].sh_link].sh_size, sh[sh[tab].sh_link].sh_offset) !=
		    (ssize_t)sh[sh[tab].sh_link].sh_size)
		goto out;
	m->syms = calloc(nsym ? nsym : 1, sizeof(*m->syms));
	if (!m->syms)
		goto out;
	for (size_t i = 0; i < nsym; i++) {
		const Elf64_Sym *y = &sym[i];

		if (ELF64_ST_TYPE(y->st_info) != STT_FUNC || y->st_shndx == SHN_UNDEF || !y->st_value ||
		    y->st_name >= sh[sh[tab].sh_link].sh_size)
			continue;
		for (int p = 0; p < eh.e_phnum; p++) {
			__u64 off;

			if (ph[p].p_type != PT_LOAD || y->st_value < ph[p].p_vaddr ||
			    y->st_value - ph[p].p_vaddr >= ph[p].p_filesz)
				continue;
			off = y->st_value - ph[p].p_vaddr + ph[p].p_offset;
			if (off < m->pgoff || off - m->pgoff >= m->len)
				break;
			m->syms[m->nr_syms].start = m->start + (off - m->pgoff);
			m->syms[m->nr_syms].end = m->syms[m->nr_syms].start + y->st_size;
			m->syms[m->nr_syms].name = strdup(str + y->st_name);
			if (m->syms[m->nr_syms].name)
				m->nr_syms++;
			break;
		}
	}
	qsort(m->syms, m->nr_syms, sizeof(*m->syms), script_sym__cmp);
	for (size_t i = 0; i < m->nr_syms; i++)
		if (m->syms[i].end == m->syms[i].start)
			m->syms[i].end = i + 1 < m->nr_syms ? m->syms[i + 1].start : m->start + m->len;
out:
	free(sym);
	free(str);
	free(sh);
	free(ph);
	close(fd);
}

/* The files the MMAP records name, with their symbols (under --symfs). */
static int script_cs__load_maps(struct script_cs *cs, struct pdata_reader *r)
{
	int err = script_cs__collect_maps(cs, r);

	for (size_t i = 0; !err && i < cs->nr_maps; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s%s", cs->o->symfs ? cs->o->symfs : "", cs->maps[i].filename);
		script_map__load_syms(&cs->maps[i], path);
	}
	return err;
}

static const struct script_sym *script_map__find_sym(const struct script_map *m, __u64 addr)
{
	size_t lo = 0, hi = m->nr_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->syms[mid].start)
			hi = mid;
		else if (addr >= m->syms[mid].end)
			lo = mid + 1;
		else
			return &m->syms[mid];
	}
	return NULL;
}

/*
 * Map the executable PT_LOAD segment of an ELF file that the mapping
 * covers: only bytes the file really holds (p_filesz) become readable, as
 * perf reads them from the DSO. A non-ELF file is mapped as is.
 */
static int script_cs__map_image(struct csd_decoder *d, const struct script_map *m, const char *path)
{
	Elf64_Ehdr eh;
	int fd, err = 0;
	int mapped = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		close(fd);
		return csd_decoder__map_file(d, m->start, path, m->pgoff, m->len);
	}
	for (unsigned int i = 0; i < eh.e_phnum && !err; i++) {
		Elf64_Phdr ph;
		__u64 lo, hi;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (__u64)i * sizeof(ph)) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		lo = ph.p_offset > m->pgoff ? ph.p_offset : m->pgoff;
		hi = ph.p_offset + ph.p_filesz;
		if (hi > m->pgoff + m->len)
			hi = m->pgoff + m->len;
		if (lo >= hi)
			continue;
		err = csd_decoder__map_file(d, m->start + (lo - m->pgoff), path, lo, hi - lo);
		mapped = !err;
	}
	close(fd);
	if (!err && !mapped)
		pr_debug("%s: no executable segment in the mapped range\n", path);
	return err;
}

static void script_cs__on_packet(const struct csd_packet *pkt, void *ctx)
{
	struct script_cs *cs = ctx;
	char line[1024];

	if (!pkt->eot)
		cs->packets[pkt->trace_id & 0x7f]++;
	if (cs->o->packets && cs->packets[pkt->trace_id & 0x7f])
		printf("%s\n", csd_decoder__packet_line(pkt, line, sizeof(line)));
}

/* As perf script -F ip,sym,symoff,dso prints an address. */
static void script_cs__print_addr(const struct script_cs *cs, __u64 addr)
{
	const struct script_map *m = addr ? script_cs__find_map(cs, addr) : NULL;
	const struct script_sym *y = m ? script_map__find_sym(m, addr) : NULL;

	printf(" %16" PRIx64 " ", (uint64_t)addr);
	if (y)
		printf("%s+0x%" PRIx64, y->name, (uint64_t)(addr - y->start));
	else
		printf("[unknown]");
	printf(" (%s)", m ? m->filename : "[unknown]");
}

static void script_cs__on_branch(const struct csd_branch *br, void *ctx)
{
	const struct script_cs *cs = ctx;

	script_cs__print_addr(cs, br->from);
	printf(" =>");
	script_cs__print_addr(cs, br->to);
	printf("\n");
}

static void script_cs__on_elem(const struct csd_elem *elem, void *ctx)
{
	struct script_cs *cs = ctx;
	const ocsd_generic_trace_elem *e = elem->elem;
	char line[1024];

	/* An idle decoder only reports end-of-trace: not part of the listing. */
	if (e->elem_type == OCSD_GEN_TRC_ELEM_EO_TRACE && !cs->packets[elem->trace_id & 0x7f])
		return;
	cs->elems[elem->trace_id & 0x7f]++;
	if (e->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE)
		cs->ranges[elem->trace_id & 0x7f]++;
	if (cs->o->packets) {
		printf("%s\n", csd_decoder__elem_line(elem, line, sizeof(line)));
		return;
	}
	if (cs->o->windows) {
		script_cs__window_elem(cs, elem);
		return;
	}
	if (cs->o->itrace == 'i') {
		if (e->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE)
			printf("[%03d] %16" PRIx64 " - %16" PRIx64 "\n", cs->cpu_of_id[elem->trace_id & 0x7f],
			       (uint64_t)e->st_addr, (uint64_t)e->en_addr);
		return;
	}
	csd_branches__elem(&cs->br[elem->trace_id & 0x7f], elem);
}

/* Read the per-CPU ETMv4 blocks of a CoreSight AUXTRACE_INFO into decoders. */
static int script_cs__add_decoders(struct script_cs *cs, struct csd_decoder *d,
				   const struct pdata_record_auxtrace_info *info)
{
	size_t npriv = (info->header.size - sizeof(*info)) / sizeof(__u64);
	const __u64 *p = info->priv;
	size_t i = CS_PRIV_HDR;
	__u64 version, nr_cpu;
	int added = 0;

	if (npriv < CS_PRIV_HDR) {
		pr_err("%s: CoreSight AUXTRACE_INFO is %zu fields, too short\n", cs->o->input, npriv);
		return -EINVAL;
	}
	version = p[CS_PRIV_VERSION];
	nr_cpu = p[CS_PRIV_PMU_TYPE_CPUS] & 0xffffffff;
	if (version > 1) {
		pr_err("%s: CoreSight AUXTRACE_INFO version %llu: only 0 and 1 are known\n", cs->o->input,
		       (unsigned long long)version);
		return -EPROTONOSUPPORT;
	}
	for (__u64 c = 0; c < nr_cpu; c++) {
		struct csd_etmv4_regs regs = { 0 };
		__u64 magic, cpu, nparams;
		const __u64 *reg;

		if (i + 2 > npriv)
			goto short_info;
		magic = p[i];
		cpu = p[i + 1];
		if (version == 1) {
			if (i + 3 > npriv)
				goto short_info;
			nparams = p[i + 2];
			reg = &p[i + 3];
			i += 3;
		} else {
			nparams = magic == CS_ETMV3_MAGIC ? 4 : CS_ETMV4_V0_PARAMS;
			reg = &p[i + 2];
			i += 2;
		}
		if (nparams > npriv - i)
			goto short_info;
		i += nparams;
		if (magic != CS_ETMV4_MAGIC && magic != CS_ETE_MAGIC) {
			pr_warn("%s: CPU %llu traces with ETMv3/PTM, not decoded\n", cs->o->input,
				(unsigned long long)cpu);
			continue;
		}
		if (nparams < 7)
			goto short_info;
		regs.configr = reg[0];
		regs.traceidr = reg[1];
		regs.idr0 = reg[2];
		regs.idr1 = reg[3];
		regs.idr2 = reg[4];
		regs.idr8 = reg[5];
		cs->cpu_of_id[regs.traceidr & 0x7f] = (int)cpu;
		if (csd_decoder__add_etmv4(d, &regs, 1))
			return -EINVAL;
		added++;
	}
	return added ? 0 : -ENOENT;
short_info:
	pr_err("%s: CoreSight AUXTRACE_INFO is truncated\n", cs->o->input);
	return -EINVAL;
}

static int script__cs_print_windows(struct script_cs *cs, struct pdata_reader *r,
				    const struct pdata_record_auxtrace_info *info);

static int script__cs_etm(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			  const struct script_opts *o, struct script_wins *ws)
{
	struct script_cs cs = { .o = o, .ws = ws };
	struct pdata_event ev;
	__u64 pos = 0;
	int err, ret, rc = EXIT_RUNTIME, warned = 0;

	for (int i = 0; i < 128; i++) {
		cs.br[i].fn = script_cs__on_branch;
		cs.br[i].ctx = &cs;
		cs.cpu_of_id[i] = -1;
	}
	err = script_cs__load_maps(&cs, r);
	if (err) {
		pr_err("%s: cannot read the mmap records: %s\n", o->input, strerror(-err));
		goto out;
	}
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const struct pdata_record_auxtrace *at = (const void *)ev.header;
		struct csd_decoder *d;

		if (ev.header->type != PDATA_RECORD_AUXTRACE)
			continue;
		/* One decode tree per buffer: buffers are not contiguous in time. */
		d = csd_decoder__new(CSD_FORMATTED);
		if (!d)
			goto out;
		err = script_cs__add_decoders(&cs, d, info);
		for (size_t i = 0, mapped = 0; !err && i < cs.nr_maps; i++) {
			char path[4096];
			int e;

			snprintf(path, sizeof(path), "%s%s", o->symfs ? o->symfs : "", cs.maps[i].filename);
			e = script_cs__map_image(d, &cs.maps[i], path);
			if (e)
				pr_debug("%s: not mapped for decoding: %s\n", path, strerror(-e));
			mapped += !e;
			if (i + 1 == cs.nr_maps && !mapped && !warned++)
				pr_warn("%s: none of the %zu traced binaries was found%s: no instruction ranges "
					"(try --symfs DIR)\n", o->input, cs.nr_maps, o->symfs ? " under --symfs" : "");
		}
		if (!err && o->packets) {
			printf("# AUXTRACE idx %u cpu %d offset %#llx size %llu\n", at->idx, (int)at->cpu,
			       (unsigned long long)at->offset, (unsigned long long)at->size);
			err = csd_decoder__set_packet_fn(d, script_cs__on_packet, &cs);
		}
		csd_decoder__set_elem_fn(d, script_cs__on_elem, &cs);
		cs.aux_offset = at->offset;
		cs.idx = at->idx;
		cs.buf_cpu = (int)at->cpu;
		if (!err)
			err = csd_decoder__decode(d, ev.aux, ev.aux_size);
		csd_decoder__delete(d);
		/* windows do not span buffers: a new decode tree starts unsynced */
		memset(cs.win_of_id, 0, sizeof(cs.win_of_id));
		memset(cs.why_of_id, 0, sizeof(cs.why_of_id));
		if (err)
			goto out;
	}
	if (ret < 0) {
		pr_err("%s: stopped at a corrupt record\n", o->input);
		goto out;
	}
	for (int id = 0; o->packets && id < 128; id++)
		if (cs.packets[id] || cs.elems[id])
			printf("# trace ID %#x: %llu packets, %llu elements, %llu instruction ranges\n", id,
			       (unsigned long long)cs.packets[id], (unsigned long long)cs.elems[id],
			       (unsigned long long)cs.ranges[id]);
	rc = EXIT_OK;
	if (o->windows && script__cs_print_windows(&cs, r, info))
		rc = EXIT_RUNTIME;
out:
	script_cs__free(&cs);
	return rc;
}

/* ---- per-window output (--windows) --------------------------------------- */

/*
 * A window is one stretch of trace between the hardware starting to trace
 * and stopping: with aux_resume/aux_pause (or the userspace gate) every
 * window of a thread shows in the trace itself as a trace enable (Intel PT
 * TIP.PGE, CoreSight TRACE_ON) and a disable (TIP.PGD, a discontinuity or
 * the end of the buffer). The file's other records say whose window it was
 * and why: ITRACE_START (the thread that owns the CPU's trace), COMM, the
 * window-edge event samples (e.g. syscalls:sys_enter_openat, if recorded)
 * and the PERF_RECORD_AUX that published the data, with its flags.
 */

struct script_win_insn {
	__u64 ip;
	__u8 iclass;	/* SCRIPT_INSN_* */
};

enum { SCRIPT_INSN_OTHER, SCRIPT_INSN_CALL, SCRIPT_INSN_RETURN };

struct script_win {
	int cpu;		/* whose trace (CoreSight: the CPU of the trace ID) */
	int buf_cpu;		/* the AUX buffer's CPU (its PERF_RECORD_AUX's) */
	__u32 idx;
	__u64 aux_offset;		/* aux_head-space offset of the packet that opened it */
	__u64 start_tsc, end_tsc;	/* 0: unknown */
	__u64 open_ip, close_ip;
	char opened[64], closed[96];
	struct script_win_insn *v;
	size_t nr, cap;
	size_t seq;
};

struct script_side_ev {
	int cpu;
	__u32 pid, tid;
	__u64 time;
	__u64 a, b, c;			/* AUX: offset, size, flags */
	const char *name;		/* event samples: the event's name */
	char comm[16];			/* COMM */
};

struct script_side {
	struct script_side_ev *itrace, *comm, *aux, *edge;
	size_t nr_itrace, nr_comm, nr_aux, nr_edge;
	char **names;			/* EVENT_DESC names, by attr index */
	__u64 *name_ids;
	size_t nr_names;
};

struct script_wins {
	struct script_win *v;
	size_t nr;
	__u64 time_shift, time_mult, time_zero;
	int have_time;
};

static int script_side__push(struct script_side_ev **v, size_t *nr, const struct script_side_ev *e)
{
	struct script_side_ev *n = realloc(*v, (*nr + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	*v = n;
	n[(*nr)++] = *e;
	return 0;
}

/* EVENT_DESC: u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, u32 len + name, u64 ids[]. */
static void script_side__names(struct script_side *sd, struct pdata_reader *r)
{
	const unsigned char *p, *end;
	const void *body;
	size_t size;
	__u32 nr, attr_size;

	if (pdata_reader__feature(r, PDATA_HEADER_EVENT_DESC, &body, &size) || size < 8)
		return;
	p = body;
	end = p + size;
	memcpy(&nr, p, 4);
	memcpy(&attr_size, p + 4, 4);
	p += 8;
	for (__u32 i = 0; i < nr && i < 4096; i++) {
		__u32 nr_ids, len;

		if ((size_t)(end - p) < (size_t)attr_size + 8)
			return;
		p += attr_size;
		memcpy(&nr_ids, p, 4);
		memcpy(&len, p + 4, 4);
		p += 8;
		if ((size_t)(end - p) < len || (size_t)(end - p - len) / 8 < nr_ids || !memchr(p, 0, len))
			return;
		for (__u32 j = 0; j < nr_ids; j++) {
			char **names = realloc(sd->names, (sd->nr_names + 1) * sizeof(*names));
			__u64 *ids = realloc(sd->name_ids, (sd->nr_names + 1) * sizeof(*ids));

			if (names)
				sd->names = names;
			if (ids)
				sd->name_ids = ids;
			if (!names || !ids)
				return;
			memcpy(&ids[sd->nr_names], p + len + 8 * j, 8);
			names[sd->nr_names] = strdup((const char *)p);
			if (!names[sd->nr_names])
				return;
			sd->nr_names++;
		}
		p += len + 8 * (size_t)nr_ids;
	}
}

static const char *script_side__name(const struct script_side *sd, __u64 id)
{
	for (size_t i = 0; i < sd->nr_names; i++)
		if (sd->name_ids[i] == id)
			return sd->names[i];
	return NULL;
}

static void script_side__free(struct script_side *sd)
{
	free(sd->itrace);
	free(sd->comm);
	free(sd->aux);
	free(sd->edge);
	for (size_t i = 0; i < sd->nr_names; i++)
		free(sd->names[i]);
	free(sd->names);
	free(sd->name_ids);
}

/* The records that say whose and why: one pass over the file. */
static int script_side__collect(struct script_side *sd, struct pdata_reader *r, __u64 aux_type)
{
	struct pdata_event ev;
	__u64 pos = 0;
	int ret, err = 0;

	script_side__names(sd, r);
	while (!err && (ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const struct perf_event_header *h = ev.header;
		struct script_side_ev e = { .cpu = -1 };
		struct pdata_sample s;

		if (h->type != PERF_RECORD_ITRACE_START && h->type != PERF_RECORD_COMM &&
		    h->type != PERF_RECORD_AUX && h->type != PERF_RECORD_SAMPLE)
			continue;
		if (pdata_reader__parse_sample(r, &ev, &s))
			memset(&s, 0, sizeof(s));
		e.cpu = (s.present & PERF_SAMPLE_CPU) ? (int)s.cpu : -1;
		e.time = s.time;
		e.pid = s.pid;
		e.tid = s.tid;
		if (h->type == PERF_RECORD_ITRACE_START && h->size >= 16) {
			memcpy(&e.pid, (const char *)h + 8, 4);
			memcpy(&e.tid, (const char *)h + 12, 4);
			err = script_side__push(&sd->itrace, &sd->nr_itrace, &e);
		} else if (h->type == PERF_RECORD_COMM && h->size > sizeof(struct pdata_record_comm)) {
			const struct pdata_record_comm *c = (const void *)h;
			size_t max = h->size - sizeof(*c);

			e.pid = c->pid;
			e.tid = c->tid;
			snprintf(e.comm, sizeof(e.comm), "%.*s", (int)strnlen((const char *)(c + 1), max),
				 (const char *)(c + 1));
			err = script_side__push(&sd->comm, &sd->nr_comm, &e);
		} else if (h->type == PERF_RECORD_AUX && h->size >= 32) {
			memcpy(&e.a, (const char *)h + 8, 8);
			memcpy(&e.b, (const char *)h + 16, 8);
			memcpy(&e.c, (const char *)h + 24, 8);
			err = script_side__push(&sd->aux, &sd->nr_aux, &e);
		} else if (h->type == PERF_RECORD_SAMPLE && s.attr && s.attr->attr.type != aux_type &&
			   !(s.attr->attr.type == PERF_TYPE_SOFTWARE &&
			     s.attr->attr.config == PERF_COUNT_SW_DUMMY)) {
			e.name = script_side__name(sd, s.id);
			err = script_side__push(&sd->edge, &sd->nr_edge, &e);
		}
	}
	return err ? err : (ret < 0 ? ret : 0);
}

static const char *script_side__comm(const struct script_side *sd, __u32 tid)
{
	const char *c = NULL;

	for (size_t i = 0; i < sd->nr_comm; i++)
		if (sd->comm[i].tid == tid)
			c = sd->comm[i].comm;
	return c;
}

static __u64 script_wins__tsc_to_ns(const struct script_wins *w, __u64 tsc)
{
	__u64 quot, rem;

	if (!w->have_time || !tsc)
		return 0;
	quot = tsc >> w->time_shift;
	rem = tsc & ((1ULL << w->time_shift) - 1);
	return w->time_zero + quot * w->time_mult + ((rem * w->time_mult) >> w->time_shift);
}

static struct script_win *script_wins__open(struct script_wins *ws, int cpu, __u32 idx, __u64 aux_offset,
					    __u64 tsc, __u64 ip, const char *why)
{
	struct script_win *v = realloc(ws->v, (ws->nr + 1) * sizeof(*v));
	struct script_win *w;

	if (!v)
		return NULL;
	ws->v = v;
	w = &v[ws->nr];
	memset(w, 0, sizeof(*w));
	w->cpu = cpu;
	w->buf_cpu = cpu;
	w->idx = idx;
	w->aux_offset = aux_offset;
	w->start_tsc = tsc;
	w->open_ip = ip;
	w->seq = ws->nr++;
	snprintf(w->opened, sizeof(w->opened), "%s", why);
	snprintf(w->closed, sizeof(w->closed), "end of trace");
	return w;
}

static int script_win__add(struct script_win *w, __u64 ip, __u8 iclass)
{
	if (w->nr == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct script_win_insn *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->nr].ip = ip;
	w->v[w->nr].iclass = iclass;
	w->nr++;
	return 0;
}

static struct script_win *script_wins__at(struct script_wins *ws, size_t i)
{
	return &ws->v[i];
}

static void script_win__close(struct script_win *w, const char *why)
{
	snprintf(w->closed, sizeof(w->closed), "%s", why);
}

/*
 * CoreSight windows, per trace ID: a window opens at the first instruction
 * range after trace starts (TRACE_ON, or the first sync: NO_SYNC) and closes
 * at the next discontinuity or the end of the buffer. A64 ranges are listed
 * instruction by instruction (4 bytes each, as perf's --itrace=i1i does);
 * the last instruction of a range is a call for a branch with link, a
 * return for RET.
 */
static void script_cs__window_elem(struct script_cs *cs, const struct csd_elem *elem)
{
	const ocsd_generic_trace_elem *e = elem->elem;
	unsigned int id = elem->trace_id & 0x7f;
	struct script_win *w = cs->win_of_id[id] ? script_wins__at(cs->ws, cs->win_of_id[id] - 1) : NULL;

	switch (e->elem_type) {
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		if (w)
			script_win__close(w, "trace discontinuity (TRACE_ON)");
		cs->win_of_id[id] = 0;
		cs->why_of_id[id] = e->elem_type == OCSD_GEN_TRC_ELEM_TRACE_ON ? "trace on (TRACE_ON)" : "first sync";
		break;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		if (w)
			script_win__close(w, "end of the buffer");
		cs->win_of_id[id] = 0;
		break;
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		if (!w) {
			w = script_wins__open(cs->ws, cs->cpu_of_id[id], cs->idx, cs->aux_offset, 0, e->st_addr,
					      cs->why_of_id[id] ? cs->why_of_id[id] : "trace on (TRACE_ON)");
			if (!w)
				return;
			w->buf_cpu = cs->buf_cpu;
			cs->win_of_id[id] = cs->ws->nr;
		}
		if (e->isa == ocsd_isa_aarch64) {
			for (__u64 a = e->st_addr; a < e->en_addr; a += 4) {
				__u8 iclass = SCRIPT_INSN_OTHER;

				if (a + 4 >= e->en_addr && e->last_instr_exec) {
					if (e->last_i_subtype == OCSD_S_INSTR_BR_LINK)
						iclass = SCRIPT_INSN_CALL;
					else if (e->last_i_subtype == OCSD_S_INSTR_V8_RET)
						iclass = SCRIPT_INSN_RETURN;
				}
				if (script_win__add(w, a, iclass))
					return;
			}
		} else {
			script_win__add(w, e->st_addr, SCRIPT_INSN_OTHER);	/* T32/A32: the range's start only */
		}
		break;
	default:
		break;
	}
}

/*
 * One Intel PT stream (a queue's contiguous buffers) through libipt's
 * instruction flow decoder, with the traced files of the MMAP records as its
 * image: every instruction executed, in windows cut at the trace's own
 * enable and disable events.
 */
static int script_pt__decode_windows(struct script_wins *ws, const struct script_cs *maps, const void *data,
				     size_t len, int cpu, __u32 idx, __u64 base, const struct script_opts *o)
{
	struct pt_insn_decoder *dec;
	struct pt_image *img;
	struct script_win *cur = NULL;
	struct pt_config cfg;
	size_t cur_i = 0;
	int status, err = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + len;
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec)
		return -ENOMEM;
	img = pt_insn_get_image(dec);
	for (size_t i = 0; i < maps->nr_maps; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s%s", o->symfs ? o->symfs : "", maps->maps[i].filename);
		if (pt_image_add_file(img, path, maps->maps[i].pgoff, maps->maps[i].len, NULL,
				      maps->maps[i].start) < 0)
			pr_debug("%s: not readable for decoding\n", path);
	}
#define CUR (cur ? &ws->v[cur_i] : NULL)
	for (;;) {
		status = pt_insn_sync_forward(dec);
		if (status < 0)
			break;
		for (;;) {
			struct pt_insn insn;
			uint64_t off = 0;

			while (status & pts_event_pending) {
				struct pt_event evt;

				status = pt_insn_event(dec, &evt, sizeof(evt));
				if (status < 0)
					break;
				pt_insn_get_offset(dec, &off);
				if (evt.type == ptev_enabled) {
					cur = script_wins__open(ws, cpu, idx, base + off, evt.has_tsc ? evt.tsc : 0,
								evt.variant.enabled.ip,
								evt.variant.enabled.resumed ? "trace resume (TIP.PGE)"
											    : "trace enable (TIP.PGE)");
					if (!cur)
						goto nomem;
					cur_i = ws->nr - 1;
				} else if ((evt.type == ptev_disabled || evt.type == ptev_async_disabled ||
					    evt.type == ptev_overflow) && cur) {
					struct script_win *w = CUR;

					w->end_tsc = evt.has_tsc ? evt.tsc : 0;
					w->close_ip = evt.type == ptev_disabled ? evt.variant.disabled.ip :
						      evt.type == ptev_async_disabled ? evt.variant.async_disabled.ip : 0;
					snprintf(w->closed, sizeof(w->closed), "%s",
						 evt.type == ptev_overflow ? "overflow (trace data lost)" :
						 evt.type == ptev_disabled ? "trace disable (TIP.PGD)" :
									     "trace disable (FUP, TIP.PGD)");
					cur = NULL;
				}
			}
			if (status < 0 || (status & pts_eos))
				break;
			status = pt_insn_next(dec, &insn, sizeof(insn));
			if (status < 0)
				break;
			if (!cur) {
				/* tracing was on when the decoder synced (a PSB+ FUP) */
				uint64_t tsc = 0;

				pt_insn_get_offset(dec, &off);
				pt_insn_time(dec, &tsc, NULL, NULL);
				cur = script_wins__open(ws, cpu, idx, base + off, tsc, insn.ip, "trace already on (PSB+)");
				if (!cur)
					goto nomem;
				cur_i = ws->nr - 1;
			}
			err = script_win__add(CUR, insn.ip,
					      insn.iclass == ptic_call || insn.iclass == ptic_far_call ? SCRIPT_INSN_CALL :
					      insn.iclass == ptic_return || insn.iclass == ptic_far_return ?
						      SCRIPT_INSN_RETURN : SCRIPT_INSN_OTHER);
			if (err)
				goto out;
		}
		if (status < 0 && status != -pte_eos && cur) {
			snprintf(CUR->closed, sizeof(CUR->closed), "decode error: %s", pt_errstr(pt_errcode(status)));
			cur = NULL;
		}
		if (status == -pte_eos || (status >= 0 && (status & pts_eos)))
			break;
	}
	goto out;
nomem:
	err = -ENOMEM;
out:
#undef CUR
	pt_insn_free_decoder(dec);
	return err;
}

static int script_win__cmp(const void *a, const void *b)
{
	const struct script_win *x = a, *y = b;

	if (x->start_tsc != y->start_tsc && x->start_tsc && y->start_tsc)
		return x->start_tsc < y->start_tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "sym+0xoff" of @addr, or "[unknown]". */
static const char *script__symoff(const struct script_cs *maps, __u64 addr, char *buf, size_t size)
{
	const struct script_map *m = addr ? script_cs__find_map(maps, addr) : NULL;
	const struct script_sym *y = m ? script_map__find_sym(m, addr) : NULL;

	if (y)
		snprintf(buf, size, "%s+0x%" PRIx64, y->name, (uint64_t)(addr - y->start));
	else
		snprintf(buf, size, "[unknown]");
	return buf;
}

static void script__print_time(__u64 ns)
{
	if (ns)
		printf("%" PRIu64 ".%09" PRIu64, (uint64_t)(ns / 1000000000), (uint64_t)(ns % 1000000000));
	else
		printf("?");
}

static void script_wins__print(const struct script_wins *ws, const struct script_side *sd,
			       const struct script_cs *maps, const struct script_opts *o)
{
	for (size_t i = 0; i < ws->nr; i++) {
		const struct script_win *w = &ws->v[i];
		const struct script_side_ev *it = NULL, *aux = NULL, *edge = NULL;
		__u64 start = script_wins__tsc_to_ns(ws, w->start_tsc), end = script_wins__tsc_to_ns(ws, w->end_tsc);
		const char *comm;
		char sym[256];
		int depth = 0;

		/* whose: the CPU's ITRACE_START at or before the window (the first one if untimed) */
		for (size_t j = 0; j < sd->nr_itrace; j++)
			if (sd->itrace[j].cpu == w->cpu || sd->itrace[j].cpu < 0)
				if (!it || (start && sd->itrace[j].time <= start))
					it = &sd->itrace[j];
		/* which PERF_RECORD_AUX published its first bytes */
		for (size_t j = 0; j < sd->nr_aux; j++)
			if ((sd->aux[j].cpu == w->buf_cpu || sd->aux[j].cpu < 0) && w->aux_offset >= sd->aux[j].a &&
			    w->aux_offset - sd->aux[j].a < sd->aux[j].b)
				aux = &sd->aux[j];
		/* why: the last event sample of that thread/CPU before it opened */
		for (size_t j = 0; start && j < sd->nr_edge; j++)
			if (sd->edge[j].time <= start && (sd->edge[j].cpu == w->cpu || (it && sd->edge[j].tid == it->tid)))
				edge = &sd->edge[j];
		comm = it ? script_side__comm(sd, it->tid) : NULL;
		printf("# window %zu: cpu %d", i + 1, w->cpu);
		if (it)
			printf(", %s %u/%u", comm ? comm : "?", it->pid, it->tid);
		printf("\n#   opened by %s at %s", w->opened, script__symoff(maps, w->open_ip, sym, sizeof(sym)));
		if (edge) {
			printf(", after %s at ", edge->name ? edge->name : "an event");
			script__print_time(edge->time);
		}
		printf("\n#   closed by %s", w->closed);
		if (w->close_ip)
			printf(" at %s", script__symoff(maps, w->close_ip, sym, sizeof(sym)));
		printf("\n#   time ");
		script__print_time(start);
		printf(" .. ");
		script__print_time(end);
		printf(", %zu instructions, trace at AUX offset %#" PRIx64, w->nr, (uint64_t)w->aux_offset);
		if (aux)
			printf(" (PERF_RECORD_AUX offset %#" PRIx64 " size %#" PRIx64 " flags%s%s%s%s)",
			       (uint64_t)aux->a, (uint64_t)aux->b, aux->c & PERF_AUX_FLAG_TRUNCATED ? " TRUNCATED" : "",
			       aux->c & PERF_AUX_FLAG_PARTIAL ? " PARTIAL" : "",
			       aux->c & PERF_AUX_FLAG_COLLISION ? " COLLISION" : "",
			       aux->c & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION) ?
				       "" : " none");
		printf("\n");
		if (o->call_trace && !strncmp(w->opened, "trace ", 6) && w->open_ip)
			printf("tr strt %16d [unknown] => %16" PRIx64 " %s\n", 0, (uint64_t)w->open_ip,
			       script__symoff(maps, w->open_ip, sym, sizeof(sym)));
		for (size_t k = 0; k < w->nr; k++) {
			const struct script_win_insn *in = &w->v[k];
			/* the last instruction before a trace disable is perf's "tr end" branch */
			int tr_end = k + 1 == w->nr && w->close_ip && !strncmp(w->closed, "trace disable", 13);
			__u64 to_ip = k + 1 < w->nr ? w->v[k + 1].ip : w->close_ip;
			char to[256];

			if (!o->call_trace) {
				printf("%16" PRIx64 " %s\n", (uint64_t)in->ip, script__symoff(maps, in->ip, sym, sizeof(sym)));
				continue;
			}
			if (in->iclass == SCRIPT_INSN_OTHER && !tr_end)
				continue;
			printf("%*s%s%s %16" PRIx64 " %s => %16" PRIx64 " %s\n", 2 * depth, "", tr_end ? "tr end " : "",
			       in->iclass == SCRIPT_INSN_CALL ? "call" : in->iclass == SCRIPT_INSN_RETURN ? "return" : "",
			       (uint64_t)in->ip, script__symoff(maps, in->ip, sym, sizeof(sym)), (uint64_t)to_ip,
			       to_ip ? script__symoff(maps, to_ip, to, sizeof(to)) : "[unknown]");
			/* a callee's lines, its return included, are one level in */
			if (in->iclass == SCRIPT_INSN_CALL)
				depth++;
			else if (in->iclass == SCRIPT_INSN_RETURN && depth > 0)
				depth--;
		}
	}
}

/*
 * The windows on the timeline: a slice per window on its thread, the calls
 * decoded in it nested inside. Instructions have no time of their own, so
 * each is placed by its index between the window's start and end.
 */
static void script_wins__chrome(const struct script_wins *ws, const struct script_side *sd,
				const struct script_cs *maps, struct chrome_trace *ct)
{
	for (size_t i = 0; i < ws->nr; i++) {
		const struct script_win *w = &ws->v[i];
		const struct script_side_ev *it = NULL;
		__u64 start = script_wins__tsc_to_ns(ws, w->start_tsc), end = script_wins__tsc_to_ns(ws, w->end_tsc);
		struct { char name[256]; __u64 ts; } stack[64];
		int depth = 0;
		__u32 pid, tid;

		if (!start || end < start)
			continue;	/* untimed: nowhere to put it */
		for (size_t j = 0; j < sd->nr_itrace; j++)
			if (sd->itrace[j].cpu == w->cpu || sd->itrace[j].cpu < 0)
				if (!it || sd->itrace[j].time <= start)
					it = &sd->itrace[j];
		pid = it ? it->pid : 0;
		tid = it ? it->tid : 0;
		{
			struct chrome_arg a[] = {
				{ .key = "opened", .str = w->opened }, { .key = "closed", .str = w->closed },
				{ .key = "instructions", .num = (long long)w->nr }, { .key = "cpu", .num = w->cpu },
			};

			chrome_trace__slice(ct, pid, tid, start, end - start, "hardware trace window", "window", a, 4);
		}
		for (size_t k = 0; k < w->nr; k++) {
			__u64 ts = start + (w->nr > 1 ? (end - start) * k / (w->nr - 1) : 0);
			const struct script_win_insn *in = &w->v[k];

			if (in->iclass == SCRIPT_INSN_CALL && depth < 64) {
				char *plus;

				script__symoff(maps, k + 1 < w->nr ? w->v[k + 1].ip : 0, stack[depth].name,
					       sizeof(stack[depth].name));
				plus = strstr(stack[depth].name, "+0x");
				if (plus)
					*plus = '\0';
				stack[depth++].ts = ts;
			} else if (in->iclass == SCRIPT_INSN_RETURN && depth > 0) {
				depth--;
				chrome_trace__slice(ct, pid, tid, stack[depth].ts, ts - stack[depth].ts, stack[depth].name,
						    "call", NULL, 0);
			}
		}
		while (depth-- > 0)
			chrome_trace__slice(ct, pid, tid, stack[depth].ts, end - stack[depth].ts, stack[depth].name,
					    "call", NULL, 0);
	}
}

static int script__pt_windows(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			      const struct script_opts *o)
{
	struct script_cs maps = { .o = o };
	struct script_side sd = { 0 };
	struct script_wins ws = { 0 };
	struct script_pt_bufs bufs = { 0 };
	struct pdata_event ev;
	__u64 pos = 0;
	int err, ret, rc = EXIT_RUNTIME;

	ws.time_shift = info->priv[IPT_PRIV_TIME_SHIFT];
	ws.time_mult = info->priv[IPT_PRIV_TIME_MULT];
	ws.time_zero = info->priv[IPT_PRIV_TIME_ZERO];
	ws.have_time = ws.time_shift < 64 && ws.time_mult;
	err = script_cs__load_maps(&maps, r);
	if (!err)
		err = script_side__collect(&sd, r, info->priv[0]);
	if (err) {
		pr_err("%s: cannot read the sideband records: %s\n", o->input, strerror(-err));
		goto out;
	}
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const struct pdata_record_auxtrace *at = (const void *)ev.header;
		struct script_pt_buf b;

		if (ev.header->type != PDATA_RECORD_AUXTRACE)
			continue;
		b = (struct script_pt_buf){ .idx = at->idx, .cpu = (int)at->cpu, .offset = at->offset,
					    .size = ev.aux_size, .reference = at->reference, .data = ev.aux };
		if (script_pt_bufs__add(&bufs, &b))
			goto out;
	}
	if (ret < 0) {
		pr_err("%s: stopped at a corrupt record\n", o->input);
		goto out;
	}
	if (bufs.nr)
		qsort(bufs.v, bufs.nr, sizeof(*bufs.v), script_pt_buf__cmp);
	for (size_t i = 0; i < bufs.nr;) {
		const struct script_pt_buf *first = &bufs.v[i];
		size_t n = 1, total = first->size, at = 0;
		unsigned char *joined;

		while (i + n < bufs.nr && bufs.v[i + n].idx == first->idx &&
		       bufs.v[i + n].offset == bufs.v[i + n - 1].offset + bufs.v[i + n - 1].size)
			total += bufs.v[i + n++].size;
		joined = malloc(total ? total : 1);
		if (!joined)
			goto out;
		for (size_t k = 0; k < n; k++) {
			memcpy(joined + at, bufs.v[i + k].data, bufs.v[i + k].size);
			at += bufs.v[i + k].size;
		}
		err = script_pt__decode_windows(&ws, &maps, joined, total, first->cpu, first->idx, first->offset, o);
		free(joined);
		if (err) {
			pr_err("%s: decoding failed: %s\n", o->input, strerror(-err));
			goto out;
		}
		i += n;
	}
	if (ws.nr)
		qsort(ws.v, ws.nr, sizeof(*ws.v), script_win__cmp);
	if (!maps.nr_maps)
		pr_warn("%s: no executable mmap records: instructions cannot be followed\n", o->input);
	if (o->ct) {
		script_wins__chrome(&ws, &sd, &maps, o->ct);
	} else {
		script_wins__print(&ws, &sd, &maps, o);
		printf("# %zu window%s\n", ws.nr, ws.nr == 1 ? "" : "s");
	}
	rc = EXIT_OK;
out:
	for (size_t i = 0; i < ws.nr; i++)
		free(ws.v[i].v);
	free(ws.v);
	free(bufs.v);
	script_side__free(&sd);
	script_cs__free(&maps);
	return rc;
}

/* The CoreSight windows collected by script__cs_etm(), headed like Intel PT's. */
static int script__cs_print_windows(struct script_cs *cs, struct pdata_reader *r,
				    const struct pdata_record_auxtrace_info *info)
{
	struct script_side sd = { 0 };
	int err = script_side__collect(&sd, r, (info->priv[1] >> 32));

	if (!err && cs->o->ct) {
		script_wins__chrome(cs->ws, &sd, cs, cs->o->ct);
	} else if (!err) {
		script_wins__print(cs->ws, &sd, cs, cs->o);
		printf("# %zu window%s\n", cs->ws->nr, cs->ws->nr == 1 ? "" : "s");
	} else {
		pr_err("%s: cannot read the sideband records: %s\n", cs->o->input, strerror(-err));
	}
	script_side__free(&sd);
	return err;
}

static int script__cs_windows(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			      const struct script_opts *o)
{
	struct script_wins ws = { 0 };
	int rc = script__cs_etm(r, info, o, o->windows ? &ws : NULL);

	for (size_t i = 0; i < ws.nr; i++)
		free(ws.v[i].v);
	free(ws.v);
	return rc;
}

/* ---- Arm SPE ----------------------------------------------------------- */

/*
 * The samples perf 6.1 synthesises from a record (arm_spe_sample()), in its
 * order: l1d-miss, l1d-access (first-level cache), llc-miss, llc-access,
 * tlb-miss, tlb-access, branch-miss, remote-access, and memory for a load
 * or store. Printed as perf script -F tid,event,addr,ip,sym prints them.
 */
static void script_spe__samples(const struct spe_record *rec, __u32 tid, const struct script_cs *maps)
{
	static const struct { __u64 bit; const char *name; } kinds[] = {
		{ SPE_EV_L1D_REFILL, "l1d-miss" }, { SPE_EV_L1D_ACCESS, "l1d-access" },
		{ SPE_EV_LLC_MISS, "llc-miss" }, { SPE_EV_LLC_ACCESS, "llc-access" },
		{ SPE_EV_TLB_WALK, "tlb-miss" }, { SPE_EV_TLB_ACCESS, "tlb-access" },
	};
	char sym[256], *plus;

	script__symoff(maps, rec->from_ip, sym, sizeof(sym));
	plus = strrchr(sym, '+');
	if (plus)
		*plus = 0;	/* perf -F sym: the name without offset */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (rec->events & kinds[i].bit)
			printf("%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, kinds[i].name, (uint64_t)rec->va,
			       (uint64_t)rec->from_ip, sym);
	if (rec->events & SPE_EV_MISPRED)
		printf("%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, "branch-miss", (uint64_t)rec->to_ip,
		       (uint64_t)rec->from_ip, sym);
	if (rec->events & SPE_EV_REMOTE_ACCESS)
		printf("%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, "remote-access", (uint64_t)rec->va,
		       (uint64_t)rec->from_ip, sym);
	if (rec->op)
		printf("%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, "memory", (uint64_t)rec->va,
		       (uint64_t)rec->from_ip, sym);
}

static int script__arm_spe(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			   const struct script_opts *o)
{
	struct script_cs maps = { .o = o };
	struct script_side sd = { 0 };
	struct pdata_event ev;
	__u64 pos = 0;
	int ret, err, rc = EXIT_RUNTIME;

	if (o->itrace == 'i' || o->windows) {
		pr_err("%s: Arm SPE has samples, not instructions: use --itrace=b (the default) or --packets\n",
		       o->input);
		return EXIT_USAGE;
	}
	if (info->header.size < sizeof(*info) + 2 * sizeof(__u64)) {
		pr_err("%s: Arm SPE AUXTRACE_INFO is too short\n", o->input);
		return EXIT_RUNTIME;
	}
	err = script_cs__load_maps(&maps, r);
	if (!err)
		err = script_side__collect(&sd, r, info->priv[0]);
	if (err) {
		pr_err("%s: cannot read the sideband records: %s\n", o->input, strerror(-err));
		goto out;
	}
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0) {
		const struct pdata_record_auxtrace *at = (const void *)ev.header;
		const unsigned char *p = ev.aux;
		struct spe_record rec;
		__u32 tid = (__u32)-1;
		size_t off = 0, records = 0, bad = 0;

		if (ev.header->type != PDATA_RECORD_AUXTRACE)
			continue;
		spe_record__init(&rec);
		for (size_t j = 0; j < sd.nr_itrace; j++)
			if (sd.itrace[j].cpu == (int)at->cpu || sd.itrace[j].cpu < 0 || (int)at->cpu < 0)
				tid = sd.itrace[j].tid;
		if (tid == (__u32)-1 && at->tid != (__u32)-1)
			tid = at->tid;
		if (o->packets)
			printf("# AUXTRACE idx %u cpu %d offset %#llx size %llu\n", at->idx, (int)at->cpu,
			       (unsigned long long)at->offset, (unsigned long long)ev.aux_size);
		while (off < ev.aux_size) {
			struct spe_packet pkt;
			size_t n = spe_decoder__packet(p + off, ev.aux_size - off, &pkt);
			char desc[256];

			if (!n)
				break;	/* a truncated packet at the end */
			if (o->packets) {
				printf("%08zx ", off);
				for (size_t b = 0; b < n; b++)
					printf(" %02x", p[off + b]);
				printf("%*s %s\n", (int)(3 * (12 - (n < 12 ? n : 12))), "",
				       spe_packet__desc(&pkt, desc, sizeof(desc)));
			}
			off += n;
			bad += pkt.type == SPE_PKT_BAD;
			if (spe_record__add(&rec, &pkt)) {
				if (!o->packets)
					script_spe__samples(&rec, tid != (__u32)-1 ? tid : (__u32)rec.context, &maps);
				records++;
				spe_record__init(&rec);
			}
		}
		if (o->packets)
			printf("# %zu records, %zu bad bytes\n", records, bad);
	}
	if (ret < 0) {
		pr_err("%s: stopped at a corrupt record\n", o->input);
		goto out;
	}
	rc = EXIT_OK;
out:
	script_side__free(&sd);
	script_cs__free(&maps);
	return rc;
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

/* --format=chrome: the file's events, and its hardware trace windows with their calls. */
static int script__chrome(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			  const struct script_opts *opts)
{
	struct script_opts o = *opts;
	int rc = EXIT_OK;

	o.ct = chrome_trace__new(stdout);
	if (!o.ct)
		return EXIT_RUNTIME;
	if (timeline__events(r, o.ct, o.input))
		rc = EXIT_RUNTIME;
	if (rc == EXIT_OK && info && (info->type == PDATA_AUXTRACE_INTEL_PT || info->type == PDATA_AUXTRACE_CS_ETM)) {
		o.windows = o.call_trace = 1;
		if (info->type == PDATA_AUXTRACE_INTEL_PT)
			rc = script__intel_pt(r, info, &o);
		else
			rc = script__cs_windows(r, info, &o);
	}
	if (chrome_trace__finish(o.ct)) {
		pr_err("%s: cannot write the timeline: %s\n", o.input, strerror(EIO));
		rc = EXIT_RUNTIME;
	}
	return rc;
}

int cmd_script(int argc, char **argv)
{
	struct script_opts o = { .input = "auxtrig.data", .itrace = 'b' };
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
		case 'W':
			o.windows = 1;
			break;
		case 'C':
			o.call_trace = 1;
			o.windows = 1;
			break;
		case 'M':
			o.summary = 1;
			break;
		case 'F':
			if (strcmp(optarg, "chrome") && strcmp(optarg, "text")) {
				pr_err("script: --format=%s: expected chrome (Trace Event JSON) or text\n", optarg);
				return EXIT_USAGE;
			}
			o.chrome = !strcmp(optarg, "chrome");
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
	if (o.windows && o.packets) {
		pr_err("script: --windows/--call-trace list instructions, --packets packets: choose one\n");
		return EXIT_USAGE;
	}
	if (verbose)
		log__set_level(LOG_INFO + verbose);
	r = pdata_reader__open(o.input);
	if (!r)
		return EXIT_RUNTIME;
	info = script__find_info(r);
	if (o.summary) {
		if (o.windows || o.packets || o.chrome) {
			pr_err("script: --summary sums the windows up; --windows, --call-trace, --packets and --format=chrome list them\n");
			rc = EXIT_USAGE;
		} else {
			rc = summary__print(r, o.input, stdout) ? EXIT_RUNTIME : EXIT_OK;
		}
	} else if (o.chrome) {
		if (o.windows || o.packets) {
			pr_err("script: --format=chrome writes the timeline; --windows, --call-trace and --packets print text\n");
			rc = EXIT_USAGE;
		} else {
			rc = script__chrome(r, info, &o);
		}
	} else if (!info) {
		/* no hardware trace: the events, as perf script prints them */
		rc = tp_script__print(r, o.input, stdout) ? EXIT_RUNTIME : EXIT_OK;
	} else if (info->type == PDATA_AUXTRACE_INTEL_PT) {
		rc = script__intel_pt(r, info, &o);
	} else if (info->type == PDATA_AUXTRACE_CS_ETM) {
		rc = script__cs_windows(r, info, &o);
	} else if (info->type == PDATA_AUXTRACE_ARM_SPE) {
		rc = script__arm_spe(r, info, &o);
	} else {
		pr_err("%s: AUX trace type %u is not supported (Intel PT, CoreSight ETM and Arm SPE are)\n", o.input,
		       info->type);
		rc = EXIT_RUNTIME;
	}
	pdata_reader__delete(r);
	return rc;
}
