// SPDX-License-Identifier: BSD-2-Clause
/* CoreSight perf.data files from the real Juno capture: see cs_fixture.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/decode/csd_decoder.h"
#include "auxtrig/format/auxtrace_info.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "cs_fixture.h"
#include "uapi/linux/perf_event_aux.h"

#define JUNO_DIR "coresight/juno_r1_1"

const char *cs_fixture__data_dir(void)
{
	static char dir[4096];
	const char *top = getenv("AUXTRIG_TOP");
	char probe[4200];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/../shared/data", top && *top ? top : ".");
	snprintf(probe, sizeof(probe), "%s/README.md", dir);
	return stat(probe, &st) ? NULL : dir;
}

const char *cs_fixture__path(const char *rel)
{
	static char path[2][4300];
	static int which;
	const char *dir = cs_fixture__data_dir();

	which ^= 1;
	snprintf(path[which], sizeof(path[which]), "%s/%s", dir ? dir : "../shared/data", rel);
	return path[which];
}

void *cs_fixture__slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n ? n : 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = n;
out:
	fclose(f);
	return buf;
}

/* Register NAME of a device_N.ini ("TRCIDR0(0x078)=0x28000EA1"), or -1. */
long long cs_fixture__ini_reg(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char line[256];
	long long v = -1;
	size_t n = strlen(name);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');

		if (!strncmp(line, name, n) && (line[n] == '(' || line[n] == '=') && eq) {
			v = strtoll(eq + 1, NULL, 0);
			break;
		}
	}
	fclose(f);
	return v;
}

/* True if device_N.ini at @path is named @want ("name=ETM_3"). */
static int cs_fixture__ini_named(const char *path, const char *want)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int hit = 0;

	if (!f)
		return 0;
	while (!hit && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		hit = !strncmp(line, "name=", 5) && !strcmp(line + 5, want);
	}
	fclose(f);
	return hit;
}

int cs_fixture__juno_regs(unsigned int id, struct csd_etmv4_regs *regs)
{
	for (int dev = 0; dev < 16; dev++) {
		char rel[64];
		const char *path;

		snprintf(rel, sizeof(rel), JUNO_DIR "/device_%d.ini", dev);
		path = cs_fixture__path(rel);
		if (!path || cs_fixture__ini_reg(path, "TRCTRACEIDR") != (long long)id)
			continue;
		memset(regs, 0, sizeof(*regs));
		regs->configr = cs_fixture__ini_reg(path, "TRCCONFIGR");
		regs->traceidr = id;
		regs->idr0 = cs_fixture__ini_reg(path, "TRCIDR0");
		regs->idr1 = cs_fixture__ini_reg(path, "TRCIDR1");
		regs->idr2 = cs_fixture__ini_reg(path, "TRCIDR2");
		regs->idr8 = cs_fixture__ini_reg(path, "TRCIDR8");
		regs->idr9 = cs_fixture__ini_reg(path, "TRCIDR9");
		regs->idr10 = cs_fixture__ini_reg(path, "TRCIDR10");
		regs->idr11 = cs_fixture__ini_reg(path, "TRCIDR11");
		regs->idr12 = cs_fixture__ini_reg(path, "TRCIDR12");
		regs->idr13 = cs_fixture__ini_reg(path, "TRCIDR13");
		return 0;
	}
	return -ENOENT;
}

/* The AUXTRACE_INFO perf record writes for the ETMs of CPUs first..first+nr-1. */
static size_t cs_fixture__info(__u64 *buf, size_t max_u64, __u64 trace_id[CS_FIXTURE_NR_ETMS], int first,
			       int nr, const struct cs_fixture_opts *o)
{
	struct pdata_record_auxtrace_info *h = (void *)buf;
	__u64 *priv = h->priv;
	size_t n = 3;

	memset(buf, 0, max_u64 * 8);
	priv[0] = AUXTRACE_CS_HEADER_VERSION;
	priv[1] = ((__u64)CS_FIXTURE_PMU_TYPE << 32) | nr;
	priv[2] = 0;
	for (int cpu = first; cpu < first + nr; cpu++) {
		char want[32], path[4400];
		int dev;

		snprintf(want, sizeof(want), "ETM_%d", cpu);
		for (dev = 0; dev < 32; dev++) {
			snprintf(path, sizeof(path), "%s/device_%d.ini", cs_fixture__path(JUNO_DIR), dev);
			if (cs_fixture__ini_named(path, want))
				break;
		}
		if (dev == 32 || sizeof(*h) / 8 + n + 10 > max_u64)
			return 0;
		if (o->etmv3) {
			/* ETMCR, ETMTRACEIDR, ETMCCER, ETMIDR (a PTM: ETMIDR[11:8] = 3) */
			priv[n++] = 0x3030303030303030ULL;
			priv[n++] = cpu;
			priv[n++] = 4;
			priv[n++] = 0x1000;
			priv[n++] = 0x10 + 2 * cpu;
			priv[n++] = 0x341c37e6;
			priv[n++] = 0x411cf300;
			if (trace_id)
				trace_id[cpu] = 0x10 + 2 * cpu;
			continue;
		}
		priv[n++] = AUXTRACE_CS_ETMV4_MAGIC;
		priv[n++] = cpu;
		priv[n++] = AUXTRACE_CS_ETMV4_NR_PARAMS;
		priv[n++] = cs_fixture__ini_reg(path, "TRCCONFIGR") | o->configr_or;
		priv[n++] = cs_fixture__ini_reg(path, "TRCTRACEIDR");
		if (trace_id)
			trace_id[cpu] = priv[n - 1];
		if (o->first_traceidr && cpu == first)
			priv[n - 1] = o->first_traceidr;
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR0");
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR1");
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR2");
		priv[n++] = cs_fixture__ini_reg(path, "TRCIDR8");
		priv[n++] = cs_fixture__ini_reg(path, "TRCAUTHSTATUS");
		for (size_t i = n - 7; i < n; i++)
			if (priv[i] == (__u64)-1)
				return 0;
		(void)o;
	}
	h->header.type = PDATA_RECORD_AUXTRACE_INFO;
	h->header.size = sizeof(*h) + n * 8;
	h->type = PDATA_AUXTRACE_CS_ETM;
	return h->header.size;
}

/* A kernel MMAP2 record carrying the image's build ID, as perf writes it with build IDs in mmaps. */
static int cs_fixture__mmap2(struct pdata_writer *w, const char *img, __u64 start, __u64 len, __u64 pgoff,
			     const __u8 bid[20])
{
	char buf[4400];
	struct pdata_record_mmap2 *mm = (void *)buf;
	size_t n = (sizeof(*mm) + strlen(img) + 1 + 7) & ~7UL;
	struct pdata_sample_id *sid;
	__u8 *f = (__u8 *)&mm->maj;

	if (n + sizeof(*sid) > sizeof(buf))
		return -ENAMETOOLONG;
	memset(buf, 0, sizeof(buf));
	mm->header.type = PERF_RECORD_MMAP2;
	mm->header.misc = PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_MMAP_BUILD_ID;
	mm->header.size = n + sizeof(*sid);
	mm->pid = (__u32)-1;
	mm->tid = 0;
	mm->start = start;
	mm->len = len;
	mm->pgoff = pgoff;
	f[0] = 20;
	memcpy(f + 4, bid, 20);
	mm->prot = 4;	/* PROT_EXEC */
	strcpy(buf + sizeof(*mm), img);
	sid = (void *)(buf + n);
	sid->pid = sid->tid = (__u32)-1;
	sid->time = 1000;
	sid->cpu = 0;
	sid->id = CS_FIXTURE_EVENT_ID;
	return pdata_writer__write(w, buf, mm->header.size);
}

static int cs_fixture__mmap(struct pdata_writer *w, const char *img, __u64 start, __u64 len, __u64 pgoff)
{
	char buf[4400];
	struct pdata_record_mmap *mm = (void *)buf;
	size_t n = (sizeof(*mm) + strlen(img) + 1 + 7) & ~7UL;
	struct pdata_sample_id *sid;

	if (n + sizeof(*sid) > sizeof(buf))
		return -ENAMETOOLONG;
	memset(buf, 0, sizeof(buf));
	mm->header.type = PERF_RECORD_MMAP;
	mm->header.misc = PERF_RECORD_MISC_KERNEL;
	mm->header.size = n + sizeof(*sid);
	mm->pid = (__u32)-1;
	mm->tid = 0;
	mm->start = start;
	mm->len = len;
	mm->pgoff = pgoff;
	strcpy(buf + sizeof(*mm), img);
	sid = (void *)(buf + n);
	sid->pid = sid->tid = (__u32)-1;
	sid->time = 1000;
	sid->cpu = 0;
	sid->id = CS_FIXTURE_EVENT_ID;
	return pdata_writer__write(w, buf, mm->header.size);
}

int cs_fixture__write(const char *path, const struct cs_fixture_opts *o, __u64 trace_id[CS_FIXTURE_NR_ETMS])
{
	struct perf_event_attr attr = { 0 };
	struct pdata_writer *w;
	__u64 ids[] = { CS_FIXTURE_EVENT_ID }, info[160], aux_off;
	int nr_cpus = o->nr_cpus ? o->nr_cpus : CS_FIXTURE_NR_ETMS - o->first_cpu;
	int nr_bufs = o->nr_bufs > 0 ? o->nr_bufs : 1, repeat = o->repeat > 0 ? o->repeat : 1;
	const unsigned char *trace = o->trace;
	void *owned = NULL;
	size_t len = o->trace_len, info_len, frames;
	int err;

	if (!trace && !o->nr_given) {
		trace = owned = cs_fixture__slurp(cs_fixture__path(JUNO_DIR "/cstrace.bin"), &len);
		if (!owned)
			return -ENOENT;
	}
	attr.type = CS_FIXTURE_PMU_TYPE;
	attr.config = o->config;
	attr.size = sizeof(attr);
	attr.sample_period = 1;
	attr.sample_type = PDATA_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	w = pdata_writer__open(path, true);
	if (!w) {
		err = -errno;
		goto out_free;
	}
	err = pdata_writer__add_attr(w, &attr, "cs_etm//k", ids, 1);
	if (!err)
		err = pdata_writer__begin_data(w);
	info_len = cs_fixture__info(info, sizeof(info) / 8, trace_id, o->first_cpu, nr_cpus, o);
	if (!err && !info_len)
		err = -EINVAL;
	if (!err)
		err = pdata_writer__write(w, info, info_len);
	if (!err && o->image_bid)
		err = cs_fixture__mmap2(w, o->image ? o->image : cs_fixture__path(JUNO_DIR "/kernel_dump.bin"),
					o->image_start ? o->image_start : CS_FIXTURE_DUMP_ADDR,
					o->image_len ? o->image_len : CS_FIXTURE_DUMP_LEN, o->image_pgoff, o->image_bid);
	else if (!err)
		err = cs_fixture__mmap(w, o->image ? o->image : cs_fixture__path(JUNO_DIR "/kernel_dump.bin"),
				       o->image_start ? o->image_start : CS_FIXTURE_DUMP_ADDR,
				       o->image_len ? o->image_len : CS_FIXTURE_DUMP_LEN, o->image_pgoff);
	if (!err && o->hw_id) {
		struct {
			struct perf_event_header h;
			__u64 hw_id;
			struct pdata_sample_id sid;
		} hw = { 0 };

		hw.h.type = 21;	/* PERF_RECORD_AUX_OUTPUT_HW_ID */
		hw.h.size = sizeof(hw);
		hw.hw_id = o->hw_id;
		hw.sid.pid = hw.sid.tid = (__u32)-1;
		hw.sid.time = 2000;
		hw.sid.cpu = o->hw_id_cpu;
		hw.sid.id = CS_FIXTURE_EVENT_ID;
		err = pdata_writer__write(w, &hw, sizeof(hw));
	}
	aux_off = o->aux_base;
	for (int b = 0; !err && b < o->nr_given; b++) {
		__u64 off = o->aux_base;
		const struct cs_fixture_buf *g = &o->bufs[b];
		struct pdata_record_auxtrace at = { 0 };
		struct {
			struct perf_event_header h;
			__u64 aux_offset, aux_size, flags;
			struct pdata_sample_id sid;
		} aux = { 0 };

		aux.h.type = PERF_RECORD_AUX;
		aux.h.size = sizeof(aux);
		/* each CPU's AUX area: this buffer follows the CPU's last one */
		for (int p = 0; p < b; p++)
			if (o->bufs[p].cpu == g->cpu)
				off += (o->bufs[p].len + 4095) & ~4095UL;
		aux.aux_offset = off;
		aux.aux_size = g->len;
		aux.flags = g->aux_flags;
		aux.sid.pid = aux.sid.tid = (__u32)-1;
		aux.sid.time = 1000000 + 1000 * b;
		aux.sid.cpu = g->cpu;
		aux.sid.id = CS_FIXTURE_EVENT_ID;
		err = pdata_writer__write(w, &aux, sizeof(aux));
		at.offset = off;
		at.reference = 0x1234;
		at.idx = g->cpu;
		at.tid = (__u32)-1;
		at.cpu = g->cpu;
		if (!err)
			err = pdata_writer__write_auxtrace(w, &at, g->data, g->len, NULL, 0);
		if (!err)
			err = pdata_writer__finish_round(w);
	}
	if (o->nr_given)
		repeat = 0;
	/* buffers cut at 16-byte frame boundaries */
	frames = len / 16;
	for (int r = 0; !err && r < repeat; r++) {
		for (int b = 0; !err && b < nr_bufs; b++) {
			size_t from = (frames * b / nr_bufs) * 16;
			size_t to = b + 1 == nr_bufs ? len : (frames * (b + 1) / nr_bufs) * 16;
			int cpu = o->cpu_of_buf ? o->cpu_of_buf[b] : 0;
			int nr_aux = o->nr_aux > 0 ? o->nr_aux : 1;
			size_t bframes = (to - from) / 16;
			struct pdata_record_auxtrace at = { 0 };
			struct {
				struct perf_event_header h;
				__u64 aux_offset, aux_size, flags;
				struct pdata_sample_id sid;
			} aux = { 0 };

			for (int a = 0; !err && a < nr_aux; a++) {
				size_t afrom = (bframes * a / nr_aux) * 16;
				size_t ato = a + 1 == nr_aux ? to - from : (bframes * (a + 1) / nr_aux) * 16;

				aux.h.type = PERF_RECORD_AUX;
				aux.h.size = sizeof(aux);
				aux.aux_offset = aux_off + afrom;
				aux.aux_size = ato - afrom;
				aux.flags = o->aux_flags;
				aux.sid.pid = aux.sid.tid = (__u32)-1;
				aux.sid.time = 1000000 + 1000 * (r * nr_bufs + b) + a;
				aux.sid.cpu = cpu;
				aux.sid.id = CS_FIXTURE_EVENT_ID;
				err = pdata_writer__write(w, &aux, sizeof(aux));
			}
			at.offset = aux_off;
			at.reference = 0x1234;
			at.idx = cpu;
			at.tid = (__u32)-1;
			at.cpu = cpu;
			if (!err)
				err = pdata_writer__write_auxtrace(w, &at, trace + from, to - from, NULL, 0);
			if (!err)
				err = pdata_writer__finish_round(w);
			aux_off += to - from;
		}
	}
	if (!err)
		err = pdata_writer__close(w);
	pdata_writer__delete(w);
out_free:
	free(owned);
	return err;
}

unsigned char *cs_fixture__deformat(const void *buf, size_t len, unsigned int id, size_t *out_len)
{
	const unsigned char *p = buf;
	unsigned char *out = malloc(len ? len : 1);
	unsigned int cur = 0;
	size_t n = 0;

	if (!out)
		return NULL;
	for (size_t f = 0; f + 16 <= len; f += 16) {
		const unsigned char *fr = p + f;
		unsigned char flags = fr[15];

		/* a full-frame sync (0x7fffffff 0xffffffff...) carries nothing */
		if (fr[0] == 0xff && fr[1] == 0xff && fr[2] == 0xff && fr[3] == 0x7f)
			continue;
		for (int i = 0; i < 8; i++) {
			unsigned char b = fr[2 * i];
			int has_next = i < 7;

			if (b & 1) {
				/* an ID; flag 1: the next data byte still belongs to the old ID */
				unsigned int nid = b >> 1;

				if ((flags >> i) & 1) {
					if (has_next && cur == id)
						out[n++] = fr[2 * i + 1];
					cur = nid;
				} else {
					cur = nid;
					if (has_next && cur == id)
						out[n++] = fr[2 * i + 1];
				}
			} else {
				if (cur == id)
					out[n++] = b | ((flags >> i) & 1);
				if (has_next && cur == id)
					out[n++] = fr[2 * i + 1];
			}
		}
	}
	*out_len = n;
	return out;
}

/* ---- trace with timestamps ------------------------------------------------ */

struct cs_fixture_pkts {
	__u64 *start;		/* first byte of each packet */
	int *type;
	size_t n, cap;
};

static void cs_fixture__on_packet(const struct csd_packet *pkt, void *ctx)
{
	struct cs_fixture_pkts *p = ctx;
	const ocsd_etmv4_i_pkt *e = pkt->pkt;

	if (pkt->eot || !pkt->size)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 1024;
		__u64 *s = realloc(p->start, cap * sizeof(*s));
		int *t = s ? realloc(p->type, cap * sizeof(*t)) : NULL;

		if (s)
			p->start = s;
		if (!t)
			return;
		p->type = t;
		p->cap = cap;
	}
	p->start[p->n] = pkt->index;
	p->type[p->n++] = e->type;
}

unsigned char *cs_fixture__stamp(const void *buf, size_t len, unsigned int every, __u64 ts0, __u64 step,
				 size_t *out_len, size_t *nr_ts)
{
	/* ETM_0's ID registers (all six ETMs of the capture parse the same packets) */
	struct csd_etmv4_regs regs = {
		.configr = 0xc1 | CS_FIXTURE_TRCCONFIGR_TS, .traceidr = 0x10,
		.idr0 = 0x28000ea1, .idr1 = 0x4100f403, .idr2 = 0x488,
	};
	struct cs_fixture_pkts p = { 0 };
	struct csd_decoder *d = csd_decoder__new(0);
	const unsigned char *in = buf;
	unsigned char *out = NULL;
	size_t n = 0, k = 0, stamps = 0;
	__u64 ts = ts0;
	int synced = 0;
	unsigned int since = 0;

	if (!d || csd_decoder__add_etmv4(d, &regs, 0) || csd_decoder__set_packet_fn(d, cs_fixture__on_packet, &p) ||
	    csd_decoder__decode(d, buf, len))
		goto out;
	out = malloc(len + 8 * (p.n + 2));
	if (!out)
		goto out;
	for (size_t i = 0; i < len; i++) {
		bool stamp = false;

		while (k < p.n && p.start[k] < i)
			k++;
		if (k < p.n && p.start[k] == i) {
			/* not between an exception and its address */
			if (synced && ++since >= every && p.type[k - 1] != ETM4_PKT_I_EXCEPT) {
				stamp = true;
				since = 0;
			}
			if (!synced && p.type[k] == ETM4_PKT_I_TRACE_INFO) {
				synced = 1;
				since = every - 1;	/* the first stamp right after TRACE_INFO */
			}
		}
		if (stamp) {
			out[n++] = 0x02;	/* TIMESTAMP, no cycle count */
			for (int b = 0; b < 7; b++)
				out[n++] = ((ts >> (7 * b)) & 0x7f) | (b < 6 ? 0x80 : 0);
			ts += step;
			stamps++;
		}
		out[n++] = in[i];
	}
	*out_len = n;
	if (nr_ts)
		*nr_ts = stamps;
out:
	csd_decoder__delete(d);
	free(p.start);
	free(p.type);
	return out;
}

/*
 * The frame writer: slots 0..14 of each 16-byte frame hold data or an ID
 * (even slots only), slot 15 the flags: bit i is the low bit of a data
 * byte in slot 2i, or for an ID in slot 2i, 1 if slot 2i+1 still belongs to
 * the previous ID.
 */
struct cs_fixture_fw {
	unsigned char *out;
	size_t n;		/* frames written */
	int slot;
	int cur;		/* current ID, -1 before the first */
};

static void cs_fixture__fw_put(struct cs_fixture_fw *w, int is_id, unsigned int v, int flag)
{
	unsigned char *fr = w->out + 16 * w->n;

	if (w->slot == 0)
		memset(fr, 0, 16);
	if (is_id) {
		fr[w->slot] = (v << 1) | 1;
		fr[15] |= flag << (w->slot / 2);
	} else if (!(w->slot & 1)) {
		fr[w->slot] = v & 0xfe;
		fr[15] |= (v & 1) << (w->slot / 2);
	} else {
		fr[w->slot] = v;
	}
	if (++w->slot == 15) {
		w->slot = 0;
		w->n++;
	}
}

unsigned char *cs_fixture__format(const unsigned char *const *streams, const size_t *lens, const unsigned int *ids,
				  int n, size_t chunk, size_t *out_len)
{
	size_t total = 0, *pos, nitems = 0, it = 0;
	unsigned char *items_b;
	unsigned int *items_id;
	struct cs_fixture_fw w = { .cur = -1 };

	for (int s = 0; s < n; s++)
		total += lens[s];
	pos = calloc(n ? n : 1, sizeof(*pos));
	items_b = malloc(total + 1);
	items_id = malloc((total + 1) * sizeof(*items_id));
	w.out = malloc(16 * (2 * total / 7 + 4));
	if (!pos || !items_b || !items_id || !w.out)
		goto fail;
	/* the byte sequence, @chunk bytes of each stream in turn */
	for (bool more = true; more;) {
		more = false;
		for (int s = 0; s < n; s++) {
			for (size_t c = 0; c < chunk && pos[s] < lens[s]; c++) {
				items_b[nitems] = streams[s][pos[s]++];
				items_id[nitems++] = ids[s];
			}
			more |= pos[s] < lens[s];
		}
	}
	while (it < nitems || w.slot) {
		/* each frame names its ID first, so a buffer cut at any frame decodes */
		if (!w.slot)
			w.cur = -1;
		/* past the end: the null ID 0 pads the frame */
		unsigned int a_id = it < nitems ? items_id[it] : 0;
		unsigned int b_id = it + 1 < nitems ? items_id[it + 1] : 0;

		if (w.slot == 14) {
			if ((int)a_id != w.cur) {
				cs_fixture__fw_put(&w, 1, a_id, 0);
				w.cur = a_id;
			} else {
				cs_fixture__fw_put(&w, 0, it < nitems ? items_b[it] : 0, 0);
				it++;
			}
			continue;
		}
		if ((int)a_id != w.cur) {
			cs_fixture__fw_put(&w, 1, a_id, 0);
			w.cur = a_id;
			cs_fixture__fw_put(&w, 0, it < nitems ? items_b[it] : 0, 0);
			it++;
		} else if ((int)b_id != w.cur) {
			cs_fixture__fw_put(&w, 1, b_id, 1);
			cs_fixture__fw_put(&w, 0, it < nitems ? items_b[it] : 0, 0);
			it++;
			w.cur = b_id;
		} else {
			for (int k = 0; k < 2; k++, it++)
				cs_fixture__fw_put(&w, 0, it < nitems ? items_b[it] : 0, 0);
		}
	}
	free(pos);
	free(items_b);
	free(items_id);
	*out_len = 16 * w.n;
	return w.out;
fail:
	free(pos);
	free(items_b);
	free(items_id);
	free(w.out);
	return NULL;
}

int cs_fixture__write_timed(const char *path, const struct cs_fixture_timed *t)
{
	static const unsigned int ids[CS_FIXTURE_NR_ETMS] = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15 };
	int nr_bufs = t->nr_bufs > 0 ? t->nr_bufs : 1, repeat = t->repeat > 0 ? t->repeat : 1;
	struct cs_fixture_opts o = {
		.config = t->ts_option ? CS_FIXTURE_ETM_OPT_TS : 0, .configr_or = CS_FIXTURE_TRCCONFIGR_TS,
	};
	unsigned char *st[CS_FIXTURE_NR_ETMS] = { 0 }, *juno, *f = NULL;
	size_t sl[CS_FIXTURE_NR_ETMS], len, n = 0;
	struct cs_fixture_buf *bufs = NULL;
	int err = -ENOMEM, nb = 0;

	juno = cs_fixture__slurp(cs_fixture__path(JUNO_DIR "/cstrace.bin"), &len);
	if (!juno)
		return -ENOENT;
	for (int i = 0; i < CS_FIXTURE_NR_ETMS; i++) {
		unsigned char *d = cs_fixture__deformat(juno, len, ids[i], &sl[i]);

		st[i] = d ? cs_fixture__stamp(d, sl[i], t->every, t->ts0 + t->tsk * i, t->step + i, &sl[i], NULL) : NULL;
		free(d);
		if (!st[i])
			goto out;
	}
	if (!t->raw) {
		f = cs_fixture__format((const unsigned char *const *)st, sl, ids, CS_FIXTURE_NR_ETMS, 13, &n);
		if (!f)
			goto out;
	}
	bufs = calloc((size_t)repeat * nr_bufs * CS_FIXTURE_NR_ETMS, sizeof(*bufs));
	if (!bufs)
		goto out;
	for (int r = 0; r < repeat; r++) {
		if (!t->raw) {
			for (int b = 0, at = 0; b < nr_bufs; b++) {
				int to = b + 1 == nr_bufs ? (int)n : (int)(n / 16 * (b + 1) / nr_bufs) * 16;

				bufs[nb++] = (struct cs_fixture_buf){ .data = f + at, .len = to - at, .cpu = 0 };
				at = to;
			}
			continue;
		}
		for (int i = 0; i < CS_FIXTURE_NR_ETMS; i++)
			for (int b = 0; b < nr_bufs; b++) {
				size_t from = sl[i] * b / nr_bufs, to = sl[i] * (b + 1) / nr_bufs;

				if (to > from)
					bufs[nb++] = (struct cs_fixture_buf){
						.data = st[i] + from, .len = to - from, .cpu = i,
						.aux_flags = PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW,
					};
			}
	}
	o.bufs = bufs;
	o.nr_given = nb;
	err = cs_fixture__write(path, &o, NULL);
out:
	for (int i = 0; i < CS_FIXTURE_NR_ETMS; i++)
		free(st[i]);
	free(f);
	free(bufs);
	free(juno);
	return err;
}
