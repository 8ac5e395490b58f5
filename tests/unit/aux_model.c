// SPDX-License-Identifier: BSD-2-Clause
/*
 * A model of the kernel side of one AUX ring; the rules it plays and the
 * ones it simplifies are listed in aux_model.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aux_model.h"

/* Not every libc/uapi pair has these (6.1 uapi has all but the format mask). */
#ifndef PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK
#define PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK 0xff00
#endif

static bool aux_model__pmi(const struct aux_model *m)
{
	/* Intel PT (ToPA INT/STOP) and SPE (buffer limit) interrupt; the ETR copies at stop. */
	return m->cfg.pmu != AUX_MODEL_CS_ETM;
}

static void aux_model__trailer(struct aux_model *m, unsigned char *p)
{
	__u32 w[2];
	__u64 t = ++m->time;

	w[0] = m->cfg.pid;
	w[1] = m->cfg.tid;
	memcpy(p, w, 8);
	memcpy(p + 8, &t, 8);
	w[0] = m->cfg.cpu;
	w[1] = 0;
	memcpy(p + 16, w, 8);
	memcpy(p + 24, &m->cfg.id, 8);
}

/* perf_output_begin()/end() on the data ring, forward mode. */
static void aux_model__emit(struct aux_model *m, const void *rec, size_t len)
{
	struct perf_event_mmap_page *pc = m->pc;
	uint64_t head = pc->data_head, tail = __atomic_load_n(&pc->data_tail, __ATOMIC_ACQUIRE);

	if (m->data_size - (head - tail) < len) {
		m->stats.data_lost++;
		return;
	}
	for (size_t i = 0; i < len; i++)
		m->data[(head + i) & (m->data_size - 1)] = ((const unsigned char *)rec)[i];
	/* The records are written before the head that publishes them. */
	__atomic_store_n(&pc->data_head, head + len, __ATOMIC_RELEASE);
}

/* perf_event_aux_event(): PERF_RECORD_AUX. */
static void aux_model__emit_aux(struct aux_model *m, __u64 offset, __u64 size, __u64 flags)
{
	unsigned char rec[8 + 24 + AUX_MODEL_SAMPLE_ID_SIZE];
	struct perf_event_header h = { .type = PERF_RECORD_AUX, .misc = 0, .size = sizeof(rec) };

	memcpy(rec, &h, 8);
	memcpy(rec + 8, &offset, 8);
	memcpy(rec + 16, &size, 8);
	memcpy(rec + 24, &flags, 8);
	aux_model__trailer(m, rec + 32);
	aux_model__emit(m, rec, sizeof(rec));
	m->stats.aux_records++;
}

/* perf_log_itrace_start(). */
static void aux_model__emit_itrace_start(struct aux_model *m)
{
	unsigned char rec[8 + 8 + AUX_MODEL_SAMPLE_ID_SIZE];
	struct perf_event_header h = { .type = PERF_RECORD_ITRACE_START, .misc = 0, .size = sizeof(rec) };
	__u32 w[2] = { m->cfg.pid, m->cfg.tid };

	memcpy(rec, &h, 8);
	memcpy(rec + 8, w, 8);
	aux_model__trailer(m, rec + 16);
	aux_model__emit(m, rec, sizeof(rec));
	m->stats.itrace_starts++;
}

void aux_model__emit_switch(struct aux_model *m, __u64 id, bool out, bool cpu_wide, __u32 next_prev_pid,
			    __u32 next_prev_tid)
{
	unsigned char rec[8 + 8 + AUX_MODEL_SAMPLE_ID_SIZE];
	struct perf_event_header h = {
		.type = cpu_wide ? PERF_RECORD_SWITCH_CPU_WIDE : PERF_RECORD_SWITCH,
		.misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0,
		.size = cpu_wide ? sizeof(rec) : sizeof(rec) - 8,
	};
	__u32 w[2] = { next_prev_pid, next_prev_tid };
	size_t off = 8;
	__u64 own = m->cfg.id;

	memcpy(rec, &h, 8);
	if (cpu_wide) {
		memcpy(rec + 8, w, 8);
		off += 8;
	}
	m->cfg.id = id;
	aux_model__trailer(m, rec + off);
	m->cfg.id = own;
	aux_model__emit(m, rec, h.size);
}

static void aux_model__wakeup(struct aux_model *m)
{
	m->pollin = true;
	m->stats.wakeups++;
}

static void aux_model__kernel_disable(struct aux_model *m)
{
	if (m->enabled)
		m->stats.disables++;
	m->enabled = false;
}

/* perf_aux_output_begin(). Return: whether the driver may write. */
static bool aux_model__begin(struct aux_model *m)
{
	uint64_t tail, size = 0;

	if (!m->enabled)
		return false;
	m->handle_head = m->aux_head;
	m->handle_written = 0;
	m->handle_flags = 0;
	if (!m->cfg.overwrite) {
		tail = __atomic_load_n(&m->pc->aux_tail, __ATOMIC_ACQUIRE);
		m->handle_wakeup = m->aux_wakeup + m->watermark;
		/* CIRC_SPACE: one byte always stays free, head never catches the tail. */
		if (m->aux_head - tail < m->aux_size)
			size = (tail - (m->aux_head + 1)) & (m->aux_size - 1);
		if (!size) {
			aux_model__kernel_disable(m);
			aux_model__wakeup(m);
			return false;
		}
		m->handle_size = size;
	}
	m->in_handle = true;
	return true;
}

/* perf_aux_output_end() with the driver's size and head rules. */
static void aux_model__end(struct aux_model *m, __u64 flags)
{
	uint64_t offset, size;
	bool wakeup;

	if (!m->in_handle)
		return;
	flags |= m->handle_flags;
	if (m->cfg.overwrite) {
		flags |= PERF_AUX_FLAG_OVERWRITE;
		switch (m->cfg.pmu) {
		case AUX_MODEL_INTEL_PT:
			/* pt_event_stop(): head = in-buffer offset, size = whole buffer. */
			m->aux_head = m->hw_pos;
			size = m->aux_size;
			break;
		case AUX_MODEL_ARM_SPE:
			m->aux_head = m->hw_pos;
			size = m->handle_written < m->aux_size ? m->handle_written : m->aux_size;
			break;
		default:
			/* ETR/ETF/TRBE: handle->head += size, monotonic. */
			m->aux_head = m->hw_pos;
			size = m->handle_written < m->aux_size ? m->handle_written : m->aux_size;
			break;
		}
		offset = m->aux_head;
	} else {
		flags &= ~(__u64)PERF_AUX_FLAG_OVERWRITE;
		size = m->handle_written;
		offset = m->aux_head;
		m->aux_head += size;
	}
	if (size || (flags & ~(__u64)(PERF_AUX_FLAG_OVERWRITE | PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK)))
		aux_model__emit_aux(m, offset, size, flags);
	/* The driver's barrier (B): trace bytes are stored before aux_head. */
	__atomic_store_n(&m->pc->aux_head, m->aux_head, __ATOMIC_RELEASE);
	wakeup = flags & PERF_AUX_FLAG_TRUNCATED;
	/* rb_need_aux_wakeup() */
	if (!m->cfg.overwrite && m->aux_head - m->aux_wakeup >= m->watermark) {
		m->aux_wakeup = m->aux_head - m->aux_head % m->watermark;
		wakeup = true;
	}
	if (wakeup) {
		if (flags & PERF_AUX_FLAG_TRUNCATED)
			aux_model__kernel_disable(m);
		aux_model__wakeup(m);
	}
	m->in_handle = false;
}

int aux_model__init(struct aux_model *m, const struct aux_model_config *cfg)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int err;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	if (!cfg->data_pages || (cfg->data_pages & (cfg->data_pages - 1)) || !cfg->aux_pages ||
	    (cfg->aux_pages & (cfg->aux_pages - 1)))
		return -EINVAL;
	m->cfg = *cfg;
	m->page = page;
	m->data_size = cfg->data_pages * page;
	m->aux_size = cfg->aux_pages * page;
	m->mem_len = page + m->data_size + m->aux_size;
	m->fd = memfd_create("aux_model", MFD_CLOEXEC);
	if (m->fd < 0)
		return -errno;
	/* Fresh pages read as zero, as the kernel's (__GFP_ZERO). */
	if (ftruncate(m->fd, m->mem_len)) {
		err = -errno;
		goto err_close;
	}
	m->mem = mmap(NULL, m->mem_len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->mem == MAP_FAILED) {
		err = -errno;
		m->mem = NULL;
		goto err_close;
	}
	m->pc = m->mem;
	m->data = (unsigned char *)m->mem + page;
	m->aux = m->data + m->data_size;
	/* Filled in by the kernel at the first mmap (since 4.1). */
	m->pc->data_offset = page;
	m->pc->data_size = m->data_size;
	if (!cfg->overwrite)
		m->watermark = cfg->aux_watermark ?: m->aux_size / 2;
	return 0;

err_close:
	close(m->fd);
	m->fd = -1;
	return err;
}

void aux_model__exit(struct aux_model *m)
{
	if (m->mem)
		munmap(m->mem, m->mem_len);
	if (m->fd >= 0)
		close(m->fd);
	m->mem = NULL;
	m->fd = -1;
}

int aux_model__fd(const struct aux_model *m)
{
	return m->fd;
}

struct perf_event_mmap_page *aux_model__user_page(const struct aux_model *m)
{
	return m->pc;
}

int aux_model__check_aux_mmap(const struct aux_model *m)
{
	uint64_t off = m->pc->aux_offset, size = m->pc->aux_size, pages = size / m->page;

	if (off < m->page + m->data_size || off % m->page || size % m->page)
		return -EINVAL;
	if (!pages || (pages & (pages - 1)) || size != m->aux_size || off != m->page + m->data_size)
		return -EINVAL;
	return 0;
}

void aux_model__enable(struct aux_model *m)
{
	if (m->enabled)
		return;
	m->enabled = true;
	if (!m->itrace_started) {
		m->itrace_started = true;
		aux_model__emit_itrace_start(m);
	}
	aux_model__begin(m);
}

void aux_model__disable(struct aux_model *m)
{
	aux_model__end(m, 0);
	m->enabled = false;
}

bool aux_model__enabled(const struct aux_model *m)
{
	return m->enabled;
}

void aux_model__output_end(struct aux_model *m, __u64 flags)
{
	aux_model__end(m, flags);
	if (m->enabled)
		aux_model__begin(m);
}

bool aux_model__pollin(struct aux_model *m)
{
	bool p = m->pollin;

	m->pollin = false;
	return p;
}

static void aux_model__store(struct aux_model *m, uint64_t pos, const unsigned char *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		m->aux[(pos + i) & (m->aux_size - 1)] = src[i];
	m->stats.written += n;
}

static size_t aux_model__write_overwrite(struct aux_model *m, const unsigned char *src, size_t len)
{
	aux_model__store(m, m->hw_pos, src, len);
	m->handle_written += len;
	m->hw_pos += len;
	/* Intel PT and SPE keep the write pointer as an offset inside the buffer. */
	if (m->cfg.pmu != AUX_MODEL_CS_ETM)
		m->hw_pos &= m->aux_size - 1;
	return len;
}

size_t aux_model__hw_write(struct aux_model *m, const void *bytes, size_t len)
{
	const unsigned char *src = bytes;
	size_t stored = 0, n;
	uint64_t room, pos, to_wakeup;

	while (len) {
		if (!m->in_handle)
			break;
		if (m->cfg.overwrite)
			return stored + aux_model__write_overwrite(m, src, len);
		room = m->handle_size - m->handle_written;
		if (!room) {
			/* The hardware stops at the end of the space: the rest is lost. */
			m->handle_flags |= PERF_AUX_FLAG_TRUNCATED;
			if (aux_model__pmi(m))
				aux_model__output_end(m, 0);
			break;
		}
		n = len < room ? len : room;
		pos = m->handle_head + m->handle_written;
		to_wakeup = m->handle_wakeup - pos;
		/* The PMI at handle->wakeup ends the handle there. */
		if (aux_model__pmi(m) && m->handle_wakeup > pos && to_wakeup < n)
			n = to_wakeup;
		aux_model__store(m, pos, src, n);
		m->handle_written += n;
		stored += n;
		src += n;
		len -= n;
		if (aux_model__pmi(m) && pos + n == m->handle_wakeup)
			aux_model__output_end(m, 0);
	}
	m->stats.dropped += len;
	return stored;
}
