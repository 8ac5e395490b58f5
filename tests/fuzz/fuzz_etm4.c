// SPDX-License-Identifier: BSD-2-Clause
/*
 * auxtrig's own ETMv4 decoder (etm4_decoder.c) through csd_decoder: the
 * input is the trace (seed: the Juno ETB capture of ../shared/data),
 * decoded with the Juno's six ETMv4 descriptions and its kernel image (a
 * small made-up A64 image without the data): frame-formatted in one go
 * (with end of trace), as one ETM's raw stream, fed in pieces with
 * CSD_WAITs as csd_timed.c feeds, or with the timestamp bit set; chosen by
 * the input's size.
 *
 * Its promises: no crash, no hang, memory bounded by the input, on any
 * input (the decoder alone, made to decode what it would refuse too); and
 * a buffer it takes (etm4_decoder__check() said yes) gives through
 * csd_decoder the elements OpenCSD gives for it, compared field by field:
 * a difference aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/decode/csd_decoder.h"
#include "auxtrig/decode/etm4_decoder.h"
#include "auxtrig/sys/log.h"
#include "cs_fixture.h"
#include "cs_fixture.c"

#define CODE_ADDR	0xffffffc000081000ULL

/*
 * OpenCSD's known leak (tests/sanitizer/lsan.supp) is only recognised with
 * the whole stack: libstdc++'s operator new has no frame pointers.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

struct fz_rec {
	__u64 index, st, en, ts;
	__u32 type, isa, itype, isub, sz, exec, num, exc, ctx, vmid;
	__u8 id;
};

struct fz_out {
	struct fz_rec *r;
	size_t nr, cap;
	unsigned int wait_every;
	int too_many;
};

/* at most this many elements are compared: bounded memory */
#define FZ_MAX_RECS	(1u << 20)

static enum csd_resp fz_elem(const struct csd_elem *elem, void *ctx)
{
	struct fz_out *o = ctx;
	const ocsd_generic_trace_elem *e = elem->elem;
	struct fz_rec *r;

	if (o->nr == FZ_MAX_RECS) {
		o->too_many = 1;
		return CSD_CONT;
	}
	if (o->nr == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 256;
		o->r = realloc(o->r, o->cap * sizeof(*o->r));
		if (!o->r)
			abort();
	}
	r = &o->r[o->nr++];
	memset(r, 0, sizeof(*r));
	r->index = elem->index;
	r->id = elem->trace_id;
	r->type = e->elem_type;
	if (e->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE) {
		r->isa = e->isa;
		r->st = e->st_addr;
		r->en = e->en_addr;
		r->itype = e->last_i_type;
		r->isub = e->last_i_subtype;
		r->sz = e->last_instr_sz;
		r->exec = e->last_instr_exec;
		r->num = e->num_instr_range;
	} else if (e->elem_type == OCSD_GEN_TRC_ELEM_EXCEPTION) {
		r->en = e->en_addr;
		r->exc = e->exception_number;
	} else if (e->elem_type == OCSD_GEN_TRC_ELEM_TIMESTAMP) {
		r->ts = e->timestamp;
	} else if (e->elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT) {
		r->ctx = e->context.ctxt_id_valid ? e->context.context_id : ~0u;
		r->vmid = e->context.vmid_valid ? e->context.vmid : ~0u;
	} else if (e->elem_type == OCSD_GEN_TRC_ELEM_ADDR_NACC) {
		r->st = e->st_addr;
	}
	if (o->wait_every && o->nr % o->wait_every == 0)
		return CSD_WAIT;
	return CSD_CONT;
}

static const __u8 *fz_code;
static size_t fz_code_len;

static size_t fz_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < CODE_ADDR || addr - CODE_ADDR >= fz_code_len)
		return 0;
	if (len > fz_code_len - (addr - CODE_ADDR))
		len = fz_code_len - (addr - CODE_ADDR);
	memcpy(buf, fz_code + (addr - CODE_ADDR), len);
	return len;
}

/* a made-up image: straight code with a branch of each kind now and then */
static void fz_image(void)
{
	static __u32 words[4096];

	for (size_t i = 0; i < 4096; i++) {
		__u32 w = 0xd503201f;	/* NOP */

		switch (i % 29) {
		case 5: w = 0x14000000 | (__u32)((i * 7) % 64); break;			/* B */
		case 11: w = 0x94000000 | (__u32)((i * 13) % 128); break;		/* BL */
		case 17: w = 0x54000000 | (__u32)(((i * 3) % 200) << 5); break;	/* B.EQ */
		case 23: w = 0xd65f03c0; break;						/* RET */
		case 27: w = 0xd63f0020; break;						/* BLR x1 */
		case 28: w = 0xd5033fdf; break;						/* ISB */
		}
		words[i] = w;
	}
	fz_code = (const __u8 *)words;
	fz_code_len = sizeof(words);
}

struct fz_case {
	int formatted, feed, ts;
	unsigned int wait_every;
	const void *buf;
	size_t len;
	const char *image;
};

static __u64 fz_decode(const struct fz_case *c, int own, struct fz_out *out)
{
	static const __u32 idr[] = { 0x28000EA1, 0x4100F403, 0x00000488 };
	struct csd_decoder *d;
	__u64 nr_own;
	int nr = c->formatted ? 6 : 1;

	if (!own)
		setenv("AUXTRIG_CSD_DECODER", "opencsd", 1);
	d = csd_decoder__new(c->formatted ? CSD_FORMATTED : 0);
	unsetenv("AUXTRIG_CSD_DECODER");
	if (!d)
		abort();
	for (int i = 0; i < nr; i++) {
		struct csd_etmv4_regs regs = {
			.configr = 0xc1 | (c->ts ? 1u << 11 : 0), .traceidr = 0x10 + i,
			.idr0 = idr[0], .idr1 = idr[1], .idr2 = idr[2],
		};

		if (csd_decoder__add_etmv4(d, &regs, 1))
			abort();
	}
	if (c->image) {
		if (csd_decoder__map_file(d, CODE_ADDR, c->image, 0, 0))
			abort();
	} else if (csd_decoder__set_mem_fn(d, fz_read, NULL)) {
		abort();
	}
	out->wait_every = c->wait_every;
	if (!c->feed) {
		csd_decoder__set_elem_resp_fn(d, fz_elem, out);
		/* OpenCSD's fatal errors are fine: the elements up to them are compared */
		csd_decoder__decode_at(d, c->buf, c->len, 0, NULL, 0);
	} else {
		size_t done = 0;
		int rounds = 0;

		csd_decoder__set_elem_resp_fn(d, fz_elem, out);
		if (csd_decoder__reset(d))
			abort();
		while (done < c->len) {
			size_t used = 0;
			int err = csd_decoder__feed(d, done, (const __u8 *)c->buf + done, c->len - done, &used);

			if (err < 0) {
				if (getenv("FZ_DEBUG"))
					fprintf(stderr, "own %d: feed at %zu: %s\n", own, done, csd_decoder__last_error(d));
				break;
			}
			done += used;
			/* every feed takes bytes or delivers an element: never more rounds than both */
			if (++rounds > (int)(c->len + FZ_MAX_RECS + 2))
				abort();
		}
	}
	nr_own = csd_decoder__nr_own(d);
	csd_decoder__delete(d);
	return nr_own;
}

static size_t fz_read_id(void *ctx, __u8 id, __u64 addr, void *buf, size_t len)
{
	(void)id;
	return fz_read(ctx, addr, buf, len);
}

/*
 * The own decoder alone, on anything (what it would refuse too): no crash,
 * no hang. Return etm4_decoder__check()'s answer.
 */
static int fz_own_alone(const struct fz_case *c)
{
	static const __u32 idr[] = { 0x28000EA1, 0x4100F403, 0x00000488 };
	struct etm4_decoder *e = etm4_decoder__new(c->formatted);
	struct fz_out out = { .wait_every = c->wait_every };
	size_t done = 0;
	long rounds = 0;
	int ok, err = 0;

	if (!e)
		abort();
	for (int i = 0; i < (c->formatted ? 6 : 1); i++) {
		struct csd_etmv4_regs regs = {
			.configr = 0xc1 | (c->ts ? 1u << 11 : 0), .traceidr = 0x10 + i,
			.idr0 = idr[0], .idr1 = idr[1], .idr2 = idr[2],
		};

		if (etm4_decoder__add_source(e, &regs))
			abort();
	}
	etm4_decoder__set_read_fn(e, fz_read_id, NULL);
	etm4_decoder__set_elem_fn(e, fz_elem, &out);
	ok = etm4_decoder__check(e, c->buf, c->len, !c->feed);
	if (ok < 0)
		abort();
	while (done < c->len && err >= 0) {
		size_t used = 0;

		err = etm4_decoder__feed(e, done, (const __u8 *)c->buf + done, c->len - done, &used);
		done += used;
		/* every call takes bytes or delivers an element */
		if (++rounds > (long)c->len + FZ_MAX_RECS + 2)
			abort();
	}
	while (!c->feed && err >= 0) {
		err = etm4_decoder__eot(e);
		if (err != 1)
			break;
		if (++rounds > (long)c->len + FZ_MAX_RECS + 130)
			abort();
	}
	etm4_decoder__delete(e);
	free(out.r);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_case c = { .formatted = 1, .buf = data, .len = size };
	struct fz_out a = { 0 }, b = { 0 };
	unsigned char *raw = NULL;
	char image[4200] = "";

	if (size < 16)
		return 0;
	log__set_level(LOG_ERR);
	if (!fz_code)
		fz_image();
	if (cs_fixture__data_dir())
		snprintf(image, sizeof(image), "%s", cs_fixture__path("coresight/juno_r1_1/kernel_dump.bin"));
	switch (size % 4) {
	case 1:
		raw = cs_fixture__deformat(data, size, 0x10, &c.len);
		if (!raw)
			abort();
		c.buf = raw;
		c.formatted = 0;
		break;
	case 2:
		c.feed = 1;
		c.ts = 1;
		c.wait_every = 1 + size % 7;
		break;
	case 3:
		c.ts = 1;
		break;
	}
	/*
	 * What the own decoder refuses is OpenCSD's, which crashes on some
	 * corrupt buffers (auxtrig runs it in worker processes): only what it
	 * takes is decoded both ways here, in this process.
	 */
	if (fz_own_alone(&c) == 1) {
		c.image = image[0] ? image : NULL;
		if (fz_decode(&c, 1, &a) != 1)
			abort();
		fz_decode(&c, 0, &b);
		if (!a.too_many && !b.too_many) {
			for (size_t i = 0; i < a.nr && i < b.nr; i++) {
				const struct fz_rec *x = &a.r[i], *y = &b.r[i];

				if (!memcmp(x, y, sizeof(*x)))
					continue;
				fprintf(stderr, "element %zu of %zu/%zu differs (own/OpenCSD): mode %zu id %#x/%#x "
					"idx %llu/%llu type %u/%u st %#llx/%#llx en %#llx/%#llx exec %u/%u num %u/%u "
					"ts %#llx/%#llx\n", i, a.nr, b.nr, size % 4, x->id, y->id,
					(unsigned long long)x->index, (unsigned long long)y->index, x->type, y->type,
					(unsigned long long)x->st, (unsigned long long)y->st, (unsigned long long)x->en,
					(unsigned long long)y->en, x->exec, y->exec, x->num, y->num,
					(unsigned long long)x->ts, (unsigned long long)y->ts);
				abort();
			}
			if (a.nr != b.nr) {
				fprintf(stderr, "%zu elements from the own decoder, %zu from OpenCSD\n", a.nr, b.nr);
				abort();
			}
		}
	}
	free(a.r);
	free(b.r);
	free(raw);
	return 0;
}
