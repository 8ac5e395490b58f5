// SPDX-License-Identifier: BSD-2-Clause
/*
 * csd_decoder: CoreSight ETMv4 decode with OpenCSD's C API.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "auxtrig/decode/csd_decoder.h"
#include "auxtrig/decode/script_line.h"
#include "auxtrig/decode/csd_heap.h"
#include "auxtrig/decode/etm4_decoder.h"
#include "auxtrig/sys/log.h"

struct csd_decoder;

/* Packet monitor context: OpenCSD's callback does not say which trace ID it serves. */
struct csd_mon_ctx {
	struct csd_decoder *d;
	__u8 trace_id;
};

/* A file region csd_decoder__map_file() mapped. */
struct csd_region {
	__u64 addr, len;
	void *map;
	size_t map_len;
	const unsigned char *bytes;	/* the region's first byte */
};

/* Code OpenCSD reads itself (csd_decoder__add_mem_buffer()). */
struct csd_buffer {
	__u64 addr, len;
	const unsigned char *bytes;
};

/* Which decoder decodes the buffer csd_decoder__feed() is in. */
enum { CSD_BUF_UNDECIDED, CSD_BUF_OWN, CSD_BUF_OPENCSD };

struct csd_decoder {
	dcd_tree_handle_t tree;
	struct etm4_decoder *own;	/* NULL: OpenCSD decodes everything */
	int buf_mode;			/* CSD_BUF_*, of the buffer being fed */
	__u64 nr_own;			/* buffers the own decoder decoded */
	struct csd_buffer *buffers;
	size_t nr_buf_acc;
	struct csd_region *regions;
	size_t nr_regions;
	csd_mem_fn mem_fn;
	csd_mem_id_fn mem_id_fn;
	void *mem_ctx;
	struct csd_mon_ctx mon[128];
	csd_packet_fn packet_fn;
	void *packet_ctx;
	csd_elem_fn elem_fn;
	void *elem_ctx;
	csd_elem_resp_fn resp_fn;
	void *resp_ctx;
	ocsd_datapath_resp_t prev_return;	/* of the last csd_decoder__feed() */
	char last_error[256];
	__u8 ids[128];		/* trace IDs with a decoder */
	int nr_ids;
	int nr_maps;		/* 1 once the memory accessor is attached */
	int nr_buffers;		/* buffer accessors (csd_decoder__add_mem_buffer()) */
	int elem_sink_set;
};

/* OpenCSD's memory callback: the regions, then the client's function. */
static uint32_t csd_decoder__read(const void *ctx, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space,
				  const uint32_t bytes, uint8_t *buf)
{
	const struct csd_decoder *d = ctx;

	for (size_t i = 0; i < d->nr_regions; i++) {
		const struct csd_region *r = &d->regions[i];

		if (address >= r->addr && address - r->addr < r->len) {
			__u64 n = r->len - (address - r->addr);

			if (n > bytes)
				n = bytes;
			memcpy(buf, r->bytes + (address - r->addr), n);
			return n;
		}
	}
	return d->mem_fn ? d->mem_fn(d->mem_ctx, address, buf, bytes) : 0;
}

static uint32_t csd_decoder__read_id(const void *ctx, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space,
				     const uint8_t trace_id, const uint32_t bytes, uint8_t *buf)
{
	const struct csd_decoder *d = ctx;

	(void)mem_space;
	return d->mem_id_fn(d->mem_ctx, trace_id, address, buf, bytes);
}

static int csd_decoder__attach_mem(struct csd_decoder *d)
{
	ocsd_err_t err;

	if (d->nr_maps)
		return 0;
	if (d->mem_id_fn)
		err = ocsd_dt_add_callback_trcid_mem_acc(d->tree, 0, ~0ULL, OCSD_MEM_SPACE_ANY, csd_decoder__read_id, d);
	else
		err = ocsd_dt_add_callback_mem_acc(d->tree, 0, ~0ULL, OCSD_MEM_SPACE_ANY, csd_decoder__read, d);
	if (err != OCSD_OK) {
		pr_err("OpenCSD: cannot add the memory accessor\n");
		return -EINVAL;
	}
	d->nr_maps++;
	return 0;
}

/* The own decoder's code: what OpenCSD would read through the accessors above. */
static size_t csd_decoder__own_read(void *ctx, __u8 trace_id, __u64 addr, void *buf, size_t len)
{
	const struct csd_decoder *d = ctx;

	if (d->mem_id_fn)
		return d->mem_id_fn(d->mem_ctx, trace_id, addr, buf, len);
	for (size_t i = 0; i < d->nr_buf_acc; i++) {
		const struct csd_buffer *b = &d->buffers[i];

		if (addr >= b->addr && addr - b->addr < b->len) {
			__u64 n = b->len - (addr - b->addr);

			if (n > len)
				n = len;
			memcpy(buf, b->bytes + (addr - b->addr), n);
			return n;
		}
	}
	if (d->nr_buf_acc)
		return 0;
	return csd_decoder__read(ctx, addr, OCSD_MEM_SPACE_ANY, len > UINT32_MAX ? UINT32_MAX : (uint32_t)len, buf);
}

static void csd_decoder__no_own(struct csd_decoder *d, const char *why)
{
	if (!d->own)
		return;
	pr_debug("CoreSight: OpenCSD decodes everything: %s\n", why);
	etm4_decoder__delete(d->own);
	d->own = NULL;
}

void csd_el__from(struct csd_el *el, const struct csd_elem *elem)
{
	const ocsd_generic_trace_elem *e = elem->elem;

	memset(el, 0, sizeof(*el));
	el->index = elem->index;
	el->trace_id = elem->trace_id;
	el->type = e->elem_type;
	el->isa = e->isa;
	el->st_addr = e->st_addr;
	el->en_addr = e->en_addr;
	el->timestamp = e->timestamp;
	el->last_i_type = e->last_i_type;
	el->last_i_subtype = e->last_i_subtype;
	el->last_instr_sz = e->last_instr_sz;
	el->last_instr_exec = e->last_instr_exec;
	el->last_instr_cond = e->last_instr_cond;
	if (e->elem_type == OCSD_GEN_TRC_ELEM_EXCEPTION)
		el->exc_num = (__u16)e->exception_number;
	if (e->elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT) {
		el->ctxt_id_valid = e->context.ctxt_id_valid;
		el->vmid_valid = e->context.vmid_valid;
		el->context_id = e->context.context_id;
		el->vmid = e->context.vmid;
	}
}

static enum csd_resp csd_decoder__own_elem(const struct csd_elem *e, void *ctx)
{
	const struct csd_decoder *d = ctx;

	if (d->resp_fn)
		return d->resp_fn(e, d->resp_ctx);
	if (d->elem_fn)
		d->elem_fn(e, d->elem_ctx);
	return CSD_CONT;
}

static ocsd_datapath_resp_t csd_decoder__on_elem(const void *ctx, const ocsd_trc_index_t index,
						  const uint8_t trace_id, const ocsd_generic_trace_elem *elem)
{
	const struct csd_decoder *d = ctx;
	struct csd_elem e = { .index = index, .trace_id = trace_id, .elem = elem };

	if (d->resp_fn) {
		switch (d->resp_fn(&e, d->resp_ctx)) {
		case CSD_CONT:
			return OCSD_RESP_CONT;
		case CSD_WAIT:
			return OCSD_RESP_WAIT;
		default:
			return OCSD_RESP_FATAL_SYS_ERR;
		}
	}
	if (d->elem_fn)
		d->elem_fn(&e, d->elem_ctx);
	return OCSD_RESP_CONT;
}

static void csd_decoder__on_packet(const void *ctx, const ocsd_datapath_op_t op, const ocsd_trc_index_t index,
				   const void *pkt, const uint32_t size, const uint8_t *data)
{
	const struct csd_mon_ctx *m = ctx;
	struct csd_packet p = {
		.index = index, .trace_id = m->trace_id, .pkt = pkt, .raw = data, .size = size,
		.eot = op == OCSD_OP_EOT,
	};

	if (op != OCSD_OP_DATA && op != OCSD_OP_EOT)
		return;
	if (m->d->packet_fn)
		m->d->packet_fn(&p, m->d->packet_ctx);
}

struct csd_decoder *csd_decoder__new(unsigned int flags)
{
	struct csd_decoder *d = calloc(1, sizeof(*d));
	const char *env;

	if (!d)
		return NULL;
	pr_debug("OpenCSD's C++ heap: %s\n", csd_heap__active() ? "auxtrig's free lists" : "malloc's or the sanitizer's");
	if (flags & CSD_FORMATTED)
		d->tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
	else
		d->tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
	if (!d->tree) {
		pr_err("OpenCSD could not create a decode tree\n");
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	/* AUXTRIG_CSD_DECODER=opencsd: OpenCSD decodes everything (for comparisons) */
	env = getenv("AUXTRIG_CSD_DECODER");
	if (!env || strcmp(env, "opencsd")) {
		d->own = etm4_decoder__new(!!(flags & CSD_FORMATTED));
		if (d->own) {
			etm4_decoder__set_read_fn(d->own, csd_decoder__own_read, d);
			etm4_decoder__set_elem_fn(d->own, csd_decoder__own_elem, d);
		}
	}
	return d;
}

void csd_decoder__delete(struct csd_decoder *d)
{
	if (!d)
		return;
	if (d->tree)
		ocsd_destroy_dcd_tree(d->tree);
	etm4_decoder__delete(d->own);
	free(d->buffers);
	for (size_t i = 0; i < d->nr_regions; i++)
		if (d->regions[i].map)
			munmap(d->regions[i].map, d->regions[i].map_len);
	free(d->regions);
	free(d);
}

int csd_decoder__add_etmv4(struct csd_decoder *d, const struct csd_etmv4_regs *regs, int full)
{
	ocsd_etmv4_cfg cfg = {
		.reg_idr0 = regs->idr0, .reg_idr1 = regs->idr1, .reg_idr2 = regs->idr2,
		.reg_idr8 = regs->idr8, .reg_idr9 = regs->idr9, .reg_idr10 = regs->idr10,
		.reg_idr11 = regs->idr11, .reg_idr12 = regs->idr12, .reg_idr13 = regs->idr13,
		.reg_configr = regs->configr, .reg_traceidr = regs->traceidr,
		.arch_ver = ARCH_V8, .core_prof = profile_CortexA,
	};
	unsigned char id = 0;
	ocsd_err_t err;
	char msg[128];

	err = ocsd_dt_create_decoder(d->tree, OCSD_BUILTIN_DCD_ETMV4I,
				     full ? OCSD_CREATE_FLG_FULL_DECODER : OCSD_CREATE_FLG_PACKET_PROC, &cfg, &id);
	if (err != OCSD_OK) {
		ocsd_err_str(err, msg, sizeof(msg));
		pr_err("OpenCSD refused the ETMv4 decoder for trace ID %#x: %s\n", regs->traceidr & 0x7f, msg);
		return -EINVAL;
	}
	if (d->nr_ids < (int)sizeof(d->ids))
		d->ids[d->nr_ids++] = id;
	if (!full)
		csd_decoder__no_own(d, "packets only");
	else if (d->own && etm4_decoder__add_source(d->own, regs))
		csd_decoder__no_own(d, "an ETMv4 configuration the own decoder does not decode");
	return 0;
}

int csd_decoder__add_ete(struct csd_decoder *d, const struct csd_etmv4_regs *regs, __u32 devarch, int full)
{
	ocsd_ete_cfg cfg = {
		.reg_idr0 = regs->idr0, .reg_idr1 = regs->idr1, .reg_idr2 = regs->idr2, .reg_idr8 = regs->idr8,
		.reg_devarch = devarch, .reg_configr = regs->configr, .reg_traceidr = regs->traceidr,
		.arch_ver = ARCH_AA64, .core_prof = profile_CortexA,
	};
	unsigned char id = 0;
	ocsd_err_t err;
	char msg[128];

	err = ocsd_dt_create_decoder(d->tree, OCSD_BUILTIN_DCD_ETE,
				     full ? OCSD_CREATE_FLG_FULL_DECODER : OCSD_CREATE_FLG_PACKET_PROC, &cfg, &id);
	if (err != OCSD_OK) {
		ocsd_err_str(err, msg, sizeof(msg));
		pr_err("OpenCSD refused the ETE decoder for trace ID %#x: %s\n", regs->traceidr & 0x7f, msg);
		return -EINVAL;
	}
	csd_decoder__no_own(d, "ETE trace");
	if (d->nr_ids < (int)sizeof(d->ids))
		d->ids[d->nr_ids++] = id;
	return 0;
}

int csd_decoder__set_mem_fn(struct csd_decoder *d, csd_mem_fn fn, void *ctx)
{
	d->mem_fn = fn;
	d->mem_ctx = ctx;
	return csd_decoder__attach_mem(d);
}

int csd_decoder__add_mem_buffer(struct csd_decoder *d, __u64 addr, const void *bytes, __u64 len)
{
	struct csd_buffer *v;

	if (!len || len > UINT32_MAX || (d->nr_maps && !d->nr_buffers))
		return -EINVAL;
	if (ocsd_dt_add_buffer_mem_acc(d->tree, addr, OCSD_MEM_SPACE_ANY, bytes, len) != OCSD_OK)
		return -EINVAL;
	v = realloc(d->buffers, (d->nr_buf_acc + 1) * sizeof(*v));
	if (!v)
		csd_decoder__no_own(d, "no memory");
	else {
		d->buffers = v;
		v[d->nr_buf_acc++] = (struct csd_buffer){ .addr = addr, .len = len, .bytes = bytes };
	}
	d->nr_buffers++;
	d->nr_maps = 1;
	return 0;
}

int csd_decoder__set_mem_id_fn(struct csd_decoder *d, csd_mem_id_fn fn, void *ctx)
{
	if (d->nr_maps)
		return -EINVAL;
	d->mem_id_fn = fn;
	d->mem_ctx = ctx;
	if (d->own)
		etm4_decoder__set_volatile_code(d->own, 1);
	return csd_decoder__attach_mem(d);
}

int csd_decoder__map_file(struct csd_decoder *d, __u64 addr, const char *path, __u64 offset, __u64 len)
{
	struct csd_region *v, *r;
	struct stat st;
	long page = sysconf(_SC_PAGESIZE);
	__u64 at;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = fd < 0 ? -errno : -ENODEV;
		pr_err("cannot open %s: %s\n", path, err == -ENODEV ? "not a regular file" : strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if ((__u64)st.st_size <= offset) {
		close(fd);
		pr_err("%s: offset %#llx is past its end\n", path, (unsigned long long)offset);
		return -EINVAL;
	}
	if (!len || len > (__u64)st.st_size - offset)
		len = st.st_size - offset;
	v = realloc(d->regions, (d->nr_regions + 1) * sizeof(*v));
	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	d->regions = v;
	r = &v[d->nr_regions];
	at = offset & ~((__u64)page - 1);
	r->map_len = len + (offset - at);
	r->map = mmap(NULL, r->map_len, PROT_READ, MAP_PRIVATE, fd, at);
	err = r->map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err) {
		pr_err("cannot map %s: %s\n", path, strerror(-err));
		return err;
	}
	r->addr = addr;
	r->len = len;
	r->bytes = (const unsigned char *)r->map + (offset - at);
	d->nr_regions++;
	return csd_decoder__attach_mem(d);
}

int csd_decoder__set_packet_fn(struct csd_decoder *d, csd_packet_fn fn, void *ctx)
{
	d->packet_fn = fn;
	d->packet_ctx = ctx;
	csd_decoder__no_own(d, "packets are listed");
	for (int i = 0; i < d->nr_ids; i++) {
		__u8 id = d->ids[i] & 0x7f;

		d->mon[id].d = d;
		d->mon[id].trace_id = id;
		if (ocsd_dt_attach_packet_callback(d->tree, id, OCSD_C_API_CB_PKT_MON,
						   (void *)csd_decoder__on_packet, &d->mon[id]) != OCSD_OK) {
			pr_err("OpenCSD: cannot attach a packet monitor to trace ID %#x\n", id);
			return -EINVAL;
		}
	}
	return 0;
}

void csd_decoder__set_elem_fn(struct csd_decoder *d, csd_elem_fn fn, void *ctx)
{
	d->elem_fn = fn;
	d->elem_ctx = ctx;
}

void csd_decoder__set_elem_resp_fn(struct csd_decoder *d, csd_elem_resp_fn fn, void *ctx)
{
	d->resp_fn = fn;
	d->resp_ctx = ctx;
}

/* The element sink and the memory accessor, once, before the first bytes. */
static int csd_decoder__prepare(struct csd_decoder *d)
{
	/*
	 * The element sink reaches only the decoders that exist when it is set,
	 * and each call allocates a new one: set it once, now.
	 */
	if (!d->elem_sink_set) {
		if (ocsd_dt_set_gen_elem_outfn(d->tree, csd_decoder__on_elem, d) != OCSD_OK) {
			pr_err("OpenCSD: cannot attach the element output\n");
			return -EINVAL;
		}
		d->elem_sink_set = 1;
	}
	/* A full decoder refuses to run without memory: give it the accessor (empty if nothing is mapped). */
	return csd_decoder__attach_mem(d) ? -EINVAL : 0;
}

static int csd_decoder__fatal(struct csd_decoder *d)
{
	ocsd_trc_index_t at = 0;
	uint8_t id = 0;

	d->last_error[0] = 0;
	ocsd_get_last_err(&at, &id, d->last_error, sizeof(d->last_error));
	d->last_error[strcspn(d->last_error, "\n")] = 0;
	if (!d->last_error[0])
		snprintf(d->last_error, sizeof(d->last_error), "fatal decoder response %d", d->prev_return);
	return -EIO;
}

int csd_decoder__feed(struct csd_decoder *d, __u64 index, const void *buf, size_t len, size_t *used)
{
	const uint8_t *p = buf;
	size_t done = 0;

	*used = 0;
	if (csd_decoder__prepare(d))
		return -EINVAL;
	if (d->buf_mode == CSD_BUF_UNDECIDED) {
		/* this buffer's decoder, decided before anything of it is decoded */
		d->buf_mode = d->own && etm4_decoder__check(d->own, buf, len, 0) == 1 ? CSD_BUF_OWN : CSD_BUF_OPENCSD;
		d->nr_own += d->buf_mode == CSD_BUF_OWN;
	}
	if (d->buf_mode == CSD_BUF_OWN) {
		int err = etm4_decoder__feed(d->own, index, buf, len, used);

		if (err < 0)
			snprintf(d->last_error, sizeof(d->last_error), "decoding stopped by a fatal element response");
		return err;
	}
	while (done < len) {
		ocsd_datapath_resp_t cur;
		uint32_t n = 0;

		if (OCSD_DATA_RESP_IS_WAIT(d->prev_return)) {
			cur = ocsd_dt_process_data(d->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
		} else if (OCSD_DATA_RESP_IS_CONT(d->prev_return)) {
			uint32_t chunk = len - done > UINT32_MAX ? UINT32_MAX : (uint32_t)(len - done);

			cur = ocsd_dt_process_data(d->tree, OCSD_OP_DATA, index + done, chunk, p + done, &n);
			done += n;
		} else {
			*used = done;
			return csd_decoder__fatal(d);
		}
		d->prev_return = cur;
		if (OCSD_DATA_RESP_IS_FATAL(cur)) {
			*used = done;
			return csd_decoder__fatal(d);
		}
		if (OCSD_DATA_RESP_IS_WAIT(cur))
			break;
	}
	*used = done;
	return OCSD_DATA_RESP_IS_WAIT(d->prev_return) ? 1 : 0;
}

int csd_decoder__reset(struct csd_decoder *d)
{
	d->prev_return = OCSD_RESP_CONT;
	d->buf_mode = CSD_BUF_UNDECIDED;
	if (d->own)
		etm4_decoder__reset(d->own);
	if (csd_decoder__prepare(d))
		return -EINVAL;
	if (OCSD_DATA_RESP_IS_FATAL(ocsd_dt_process_data(d->tree, OCSD_OP_RESET, 0, 0, NULL, NULL)))
		return csd_decoder__fatal(d);
	return 0;
}

__u64 csd_decoder__nr_own(const struct csd_decoder *d)
{
	return d->nr_own;
}

const char *csd_decoder__last_error(struct csd_decoder *d)
{
	return d->last_error;
}

int csd_decoder__decode(struct csd_decoder *d, const void *buf, size_t len)
{
	return csd_decoder__decode_at(d, buf, len, 0, NULL, 0);
}

int csd_decoder__decode_at(struct csd_decoder *d, const void *buf, size_t len, __u64 base, char *err_msg,
			   size_t err_size)
{
	const uint8_t *p = buf;
	size_t done = 0;
	ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
	char msg[256] = "";
	int err;

	if (csd_decoder__prepare(d))
		return -EINVAL;
	if (d->own && etm4_decoder__check(d->own, buf, len, 1) == 1) {
		/* a CSD_WAIT only pauses: as OpenCSD's flush below, go on */
		d->nr_own++;
		etm4_decoder__reset(d->own);
		do {
			size_t used = 0;

			err = etm4_decoder__feed(d->own, base + done, p + done, len - done, &used);
			done += used;
		} while (err == 1);
		while (!err && (err = etm4_decoder__eot(d->own)) == 1)
			;
		if (err < 0) {
			if (err_msg)
				snprintf(err_msg, err_size, "decoding stopped by a fatal element response");
			return -EIO;
		}
		return 0;
	}
	while (done < len) {
		uint32_t used = 0;
		uint32_t chunk = len - done > UINT32_MAX ? UINT32_MAX : (uint32_t)(len - done);

		if (OCSD_DATA_RESP_IS_CONT(resp))
			resp = ocsd_dt_process_data(d->tree, OCSD_OP_DATA, base + done, chunk, p + done, &used);
		else
			resp = ocsd_dt_process_data(d->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
		if (OCSD_DATA_RESP_IS_FATAL(resp)) {
			ocsd_trc_index_t at = 0;
			uint8_t id = 0;

			ocsd_get_last_err(&at, &id, msg, sizeof(msg));
			msg[strcspn(msg, "\n")] = 0;
			if (err_msg)
				snprintf(err_msg, err_size, "%s", msg);
			else
				pr_err("OpenCSD: fatal decode error at byte %zu: %s\n", done, msg);
			return -EIO;
		}
		done += used;
	}
	resp = ocsd_dt_process_data(d->tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
	if (OCSD_DATA_RESP_IS_FATAL(resp)) {
		if (err_msg)
			snprintf(err_msg, err_size, "fatal error at end of trace (response %d)", resp);
		else
			pr_err("OpenCSD: fatal error at end of trace (response %d)\n", resp);
		return -EIO;
	}
	return 0;
}

char *csd_decoder__packet_line(const struct csd_packet *pkt, char *out, size_t size)
{
	char text[512];
	size_t n;

	if (pkt->eot) {
		snprintf(out, size, "ID:%x\tEND OF TRACE DATA", pkt->trace_id);
		return out;
	}
	n = snprintf(out, size, "Idx:%" PRIu64 "; ID:%x; [", (uint64_t)pkt->index, pkt->trace_id);
	for (__u32 i = 0; i < pkt->size && n < size; i++)
		n += snprintf(out + n, size - n, "0x%02x ", pkt->raw[i]);
	if (ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, pkt->pkt, text, sizeof(text)) != OCSD_OK)
		snprintf(text, sizeof(text), "(unprintable packet)");
	if (n < size)
		snprintf(out + n, size - n, "];\t%s", text);
	return out;
}

char *csd_decoder__elem_line(const struct csd_elem *elem, char *out, size_t size)
{
	char text[512];

	if (ocsd_gen_elem_str(elem->elem, text, sizeof(text)) != OCSD_OK)
		snprintf(text, sizeof(text), "(unprintable element)");
	snprintf(out, size, "Idx:%" PRIu64 "; ID:%x; %s", (uint64_t)elem->index, elem->trace_id, text);
	return out;
}

enum { CSD_PREV_NONE, CSD_PREV_RANGE, CSD_PREV_DISCONT };

__u32 csd_flags__range(__u8 type, __u8 subtype, __u8 cond)
{
	if (type == OCSD_INSTR_BR && subtype == OCSD_S_INSTR_NONE)
		return SCRIPT_IP_FLAG_BRANCH | (cond ? SCRIPT_IP_FLAG_CONDITIONAL : 0);
	if ((type == OCSD_INSTR_BR || type == OCSD_INSTR_BR_INDIRECT) && subtype == OCSD_S_INSTR_BR_LINK)
		return SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL;
	if (type == OCSD_INSTR_BR_INDIRECT && (subtype == OCSD_S_INSTR_V7_IMPLIED_RET ||
					       subtype == OCSD_S_INSTR_NONE || subtype == OCSD_S_INSTR_V8_RET))
		return SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN;
	return 0;
}

/* ETMv4 exception numbers (perf's CS_ETMV4_EXC_*) */
enum { CSD_EXC_RESET, CSD_EXC_DEBUG_HALT, CSD_EXC_CALL, CSD_EXC_TRAP, CSD_EXC_SYSTEM_ERROR,
       CSD_EXC_INST_DEBUG = 6, CSD_EXC_DATA_DEBUG, CSD_EXC_ALIGNMENT = 10, CSD_EXC_INST_FAULT,
       CSD_EXC_DATA_FAULT, CSD_EXC_IRQ = 14, CSD_EXC_FIQ, CSD_EXC_END = 31 };

__u32 csd_flags__exception(unsigned int n, bool svc)
{
	if (n == CSD_EXC_CALL && svc)
		return SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_SYSCALLRET;
	if (n == CSD_EXC_RESET || n == CSD_EXC_DEBUG_HALT || n == CSD_EXC_SYSTEM_ERROR || n == CSD_EXC_INST_DEBUG ||
	    n == CSD_EXC_DATA_DEBUG || n == CSD_EXC_IRQ || n == CSD_EXC_FIQ)
		return SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_ASYNC | SCRIPT_IP_FLAG_INTERRUPT;
	if (n == CSD_EXC_TRAP || n == CSD_EXC_ALIGNMENT || n == CSD_EXC_INST_FAULT || n == CSD_EXC_DATA_FAULT ||
	    n == CSD_EXC_CALL || (n > CSD_EXC_FIQ && n <= CSD_EXC_END))
		return SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_CALL | SCRIPT_IP_FLAG_INTERRUPT;
	return 0;
}

bool csd_flags__is_svc(size_t (*read)(void *ctx, __u64 addr, void *buf, size_t len), void *ctx, __u8 isa,
		       __u64 end)
{
	__u16 i16 = 0;
	__u32 i32 = 0;

	if (!read)
		return false;
	switch (isa) {
	case ocsd_isa_thumb2:
		read(ctx, end - 2, &i16, 2);
		return (i16 & 0xff00) == 0xdf00;
	case ocsd_isa_arm:
		read(ctx, end - 4, &i32, 4);
		return (i32 & 0x0f000000) == 0x0f000000 && (i32 & 0xf0000000) != 0xf0000000;
	case ocsd_isa_aarch64:
		read(ctx, end - 4, &i32, 4);
		return (i32 & 0xffe0001f) == 0xd4000001;
	default:
		return false;
	}
}

static void csd_branches__emit(struct csd_branches *b, __u64 from, __u64 to)
{
	struct csd_branch br = {
		.from = from, .to = to, .from_size = from ? b->prev_last_size : 0, .flags = b->prev_flags,
	};

	b->nr_branches++;
	if (b->fn)
		b->fn(&br, b->ctx);
}

void csd_branches__elem(struct csd_branches *b, const struct csd_el *e)
{
	switch (e->type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		b->nr_ranges++;
		/* perf's cs_etm__set_sample_flags(): the sample's flags are the previous packet's */
		if (b->prev_type == CSD_PREV_DISCONT)
			b->prev_flags |= SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TRACE_BEGIN;
		if (b->prev_flags == (SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_INTERRUPT) &&
		    csd_flags__is_svc(b->read, b->read_ctx, e->isa, e->st_addr))
			b->prev_flags = SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_SYSCALLRET;
		if (b->prev_type == CSD_PREV_DISCONT || (b->prev_type == CSD_PREV_RANGE && b->prev_taken))
			csd_branches__emit(b, b->prev_type == CSD_PREV_RANGE ? b->prev_last_instr : 0, e->st_addr);
		b->prev_type = CSD_PREV_RANGE;
		b->prev_last_instr = e->en_addr - e->last_instr_sz;
		b->prev_last_size = e->last_instr_sz;
		b->prev_isa = e->isa;
		b->prev_flags = csd_flags__range(e->last_i_type, e->last_i_subtype, e->last_instr_cond);
		b->prev_taken = (e->last_i_type == OCSD_INSTR_BR || e->last_i_type == OCSD_INSTR_BR_INDIRECT) &&
				e->last_instr_exec;
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		if (b->prev_type == CSD_PREV_RANGE) {
			b->prev_flags |= SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_TRACE_END;
			csd_branches__emit(b, b->prev_last_instr, 0);
		}
		b->prev_type = CSD_PREV_DISCONT;
		b->prev_flags = 0;
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET:
		/*
		 * perf's cs_etm__exception(): the range before an exception (or its
		 * return) ends in a taken branch whatever its last instruction was,
		 * and stays the previous packet: the next range gives {its last
		 * instruction, the new start}, with the exception's flags.
		 */
		if (b->prev_type == CSD_PREV_RANGE) {
			b->prev_taken = 1;
			if (e->type == OCSD_GEN_TRC_ELEM_EXCEPTION_RET)
				b->prev_flags = SCRIPT_IP_FLAG_BRANCH | SCRIPT_IP_FLAG_RETURN | SCRIPT_IP_FLAG_INTERRUPT;
			else
				b->prev_flags = csd_flags__exception(e->exc_num,
					csd_flags__is_svc(b->read, b->read_ctx, b->prev_isa,
							  b->prev_last_instr + b->prev_last_size));
		}
		break;
	default:
		break;
	}
}
