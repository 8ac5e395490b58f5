// SPDX-License-Identifier: BSD-2-Clause
/* `auxtrig script` on Arm SPE records: the samples perf 6.1 synthesises. */
#include <inttypes.h>
#include <string.h>

#include "auxtrig/decode/binaries.h"
#include "auxtrig/decode/internal/script.h"
#include "auxtrig/decode/spe_decoder.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"

/*
 * The samples perf 6.1 synthesises from a record (arm_spe_sample()), in its
 * order: l1d-miss, l1d-access (first-level cache), llc-miss, llc-access,
 * tlb-miss, tlb-access, branch-miss, remote-access, and memory for a load
 * or store. Printed as perf script -F tid,event,addr,ip,sym prints them.
 */
static void script_spe__samples(struct script_session *s, const struct spe_record *rec, __u32 tid)
{
	static const struct { __u64 bit; const char *name; } kinds[] = {
		{ SPE_EV_L1D_REFILL, "l1d-miss" }, { SPE_EV_L1D_ACCESS, "l1d-access" },
		{ SPE_EV_LLC_MISS, "llc-miss" }, { SPE_EV_LLC_ACCESS, "llc-access" },
		{ SPE_EV_TLB_WALK, "tlb-miss" }, { SPE_EV_TLB_ACCESS, "tlb-access" },
	};
	FILE *f = s->out;
	char sym[256];

	binaries__symoff(s->bins, rec->from_ip, false, sym, sizeof(sym));	/* perf -F sym: no offset */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (rec->events & kinds[i].bit)
			fprintf(f, "%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, kinds[i].name, (uint64_t)rec->va,
				(uint64_t)rec->from_ip, sym);
	if (rec->events & SPE_EV_MISPRED)
		fprintf(f, "%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, "branch-miss", (uint64_t)rec->to_ip,
			(uint64_t)rec->from_ip, sym);
	if (rec->events & SPE_EV_REMOTE_ACCESS)
		fprintf(f, "%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, "remote-access", (uint64_t)rec->va,
			(uint64_t)rec->from_ip, sym);
	if (rec->op)
		fprintf(f, "%7u %14s: %16" PRIx64 " %16" PRIx64 " %s\n", tid, "memory", (uint64_t)rec->va,
			(uint64_t)rec->from_ip, sym);
}

/*
 * The --packets listing, formatted by hand into a buffer written out when
 * nearly full: most lines are one-byte PADs, and a printf per byte spent
 * nearly all of the listing's time in vfprintf (issue #22: five times
 * slower than perf report -D on the same file).
 */
struct spe_listing {
	FILE *f;
	size_t len;
	char buf[16384];
};

static void spe_listing__flush(struct spe_listing *l)
{
	if (l->len)
		fwrite(l->buf, 1, l->len, l->f);
	l->len = 0;
}

/* One line: the offset as "%08zx ", " %02x" for each byte, blanks to the width of 12 bytes, a space and @desc. */
static void spe_listing__packet(struct spe_listing *l, size_t off, const unsigned char *bytes, size_t n,
				const char *desc)
{
	static const char hex[] = "0123456789abcdef";
	/* the widest line: 16 digits of offset, 2 blanks, 12 bytes' width, a blank, @desc and a newline */
	size_t digits = 8, dlen = strnlen(desc, 256), room = 2 * sizeof(off) + 2 + 3 * 12 + 1 + dlen + 1;
	char *line;

	if (n > 12)
		n = 12;		/* never: a header of 2 bytes and a payload of 8 at most */
	if (sizeof(l->buf) - l->len < room)
		spe_listing__flush(l);
	line = l->buf + l->len;
	while (digits < 2 * sizeof(off) && off >> (4 * digits))
		digits++;
	for (size_t i = digits; i-- > 0;)
		*line++ = hex[(off >> (4 * i)) & 0xf];
	*line++ = ' ';
	for (size_t i = 0; i < n; i++) {
		*line++ = ' ';
		*line++ = hex[bytes[i] >> 4];
		*line++ = hex[bytes[i] & 0xf];
	}
	memset(line, ' ', 3 * (12 - n) + 1);
	line += 3 * (12 - n) + 1;
	memcpy(line, desc, dlen);
	line += dlen;
	*line++ = '\n';
	l->len = line - l->buf;
}

int script_spe__run(struct script_session *s)
{
	const struct sideband *sd = &s->sd;
	const struct script_opts *o = s->o;
	struct spe_listing l = { .f = s->out };

	if (o->itrace == 'i' || o->windows) {
		pr_err("%s: Arm SPE has samples, not instructions: use --itrace=b (the default) or --packets\n",
		       o->input);
		return EXIT_USAGE;
	}
	if (s->npriv < 2) {
		pr_err("%s: Arm SPE AUXTRACE_INFO is too short\n", o->input);
		return EXIT_RUNTIME;
	}
	for (size_t k = 0; k < sd->nr_bufs; k++) {
		const struct sideband_buf *b = &sd->bufs[k];
		const unsigned char *p = b->data;
		struct spe_record rec;
		__u32 tid = (__u32)-1;
		size_t off = 0, records = 0, bad = 0;

		spe_record__init(&rec);
		for (size_t j = 0; j < sd->nr_itrace; j++)
			if (sd->itrace[j].cpu == b->cpu || sd->itrace[j].cpu < 0 || b->cpu < 0)
				tid = sd->itrace[j].tid;
		if (tid == (__u32)-1 && b->tid != (__u32)-1)
			tid = b->tid;
		if (o->packets)
			fprintf(s->out, "# AUXTRACE idx %u cpu %d offset %#llx size %llu\n", b->idx, b->cpu,
				(unsigned long long)b->offset, (unsigned long long)b->size);
		while (off < b->size) {
			struct spe_packet pkt;
			size_t n = spe_decoder__packet(p + off, b->size - off, &pkt);
			char desc[256];

			if (!n)
				break;	/* a truncated packet at the end */
			if (o->packets)
				spe_listing__packet(&l, off, p + off, n, spe_packet__desc(&pkt, desc, sizeof(desc)));
			off += n;
			bad += pkt.type == SPE_PKT_BAD;
			if (spe_record__add(&rec, &pkt)) {
				if (!o->packets)
					script_spe__samples(s, &rec, tid != (__u32)-1 ? tid : (__u32)rec.context);
				records++;
				spe_record__init(&rec);
			}
		}
		if (o->packets) {
			spe_listing__flush(&l);
			fprintf(s->out, "# %zu records, %zu bad bytes\n", records, bad);
		}
	}
	return EXIT_OK;
}
