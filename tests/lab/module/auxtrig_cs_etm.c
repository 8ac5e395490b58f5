// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * auxtrig_cs_etm: an emulated CoreSight trace unit for the arm64 lab (tests/lab/vm --arch arm64),
 * NOT real hardware.
 *
 * It registers an AUX PMU that looks to userspace like the kernel's CoreSight perf driver
 * (drivers/hwtracing/coresight/coresight-etm-perf.c): the name cs_etm, its format/ files,
 * sinks/ (hashes as etm_perf_add_symlink_sink() makes them), events/, and one cpuN link per
 * CPU to an "ETM" device whose trcidr/ and mgmt/ registers say ETMv4.0 (the values of a
 * Juno's Cortex-A57) or, with ete=1, ETE. PERF_PMU_CAP_ITRACE, and PERF_PMU_CAP_AUX_PAUSE
 * where the real driver has it (from 6.16: coresight: perf: Support AUX trace pause and
 * resume). Two kinds of sink, each with its driver's AUX protocol:
 *
 * - tmc_etr0, as coresight-tmc-etr.c: one trace memory shared by every CPU of a session (the
 *   events of one owner process), 16-byte formatted frames with each CPU's trace ID
 *   (CORESIGHT_LEGACY_CPU_TRACE_ID), a memory of its own (etr_size, 1 MiB by default, or the
 *   AUX area's size if that is larger) copied into the AUX area only when the last CPU using
 *   it stops (update_buffer with refcnt 1): at handle->head, which in snapshot (overwrite)
 *   mode advances by the size copied (monotonic: the 2021 fix "coresight: tmc-etr: Use
 *   perf_output_handle::head for AUX ring buffer"); when the memory wrapped, or held more
 *   than the handle had room for, a barrier packet (4 frame syncs) where the copy begins and,
 *   in normal mode only, TRUNCATED. On AUX pause (7.x) the memory is published and restarted
 *   when this CPU is its only user, as tmc_update_etr_buffer() does since 6.16.
 * - trbeN (with ete=1), as coresight-trbe.c: one per CPU, writing the CPU's raw trace straight
 *   into that CPU's AUX area (PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW), TRUNCATED when full in
 *   normal mode, wrapping freely in snapshot mode with the head monotonic; no buffer update
 *   on AUX pause (per-CPU sinks have their own interrupt). The default sink, as
 *   coresight_find_default_sink() ranks per-CPU sinks first.
 *
 * What the "ETM" writes is a valid ETMv4/ETE instruction trace packet stream of what the unit
 * knows happened, and nothing else: trace is "on" between a start/resume and the next
 * pause/stop. At each switch-on: A-sync, Trace Info, Timestamp (if config:timestamp), Trace
 * On, Address with Context (the thread's interrupted user PC, EL0, AArch64, its context ID =
 * its thread id, as CONTEXTIDR_EL1 holds with CONFIG_PID_IN_CONTEXTIDR), then an Exception
 * saying why; at each switch-off: a Timestamp and an Exception saying why. The exceptions are
 * IMPLEMENTATION DEFINED ones (types 0x10..0x13: start: the event was scheduled in, enabled or
 * reloaded; resume: PERF_EF_RESUME; pause: PERF_EF_PAUSE; stop: scheduled out, disabled or
 * flushed), each followed by the user PC as its return address, marked as the target of a
 * prior branch (E1:E0 = 0b10), so a decoder outputs the exception and no instruction range:
 * the unit makes no atoms, it sees no instruction, and no decoder can be led to claim any flow
 * between two addresses. Decoders hold Trace On, context and timestamps until a P0 element
 * comes; the exception is that element, so every packet of a switch is decoded when it ends.
 * Timestamps are the generic counter (CNTVCT_EL0, the system counter a real ETM's timestamps
 * come from), made strictly increasing over the whole unit, so each switch has its own and a
 * test can order and tell apart every switch, as the PT unit's PTWRITE sequence numbers allow.
 * A thread with no user PC (a kernel thread, idle) gets nothing, as an ETM filtered to EL0.
 *
 * The second kernel-module unit of the project, beside auxtrig_pt.c (x86) and auxtrig_spe.c.
 */
#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/cpumask.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stringhash.h>
#include <linux/vmalloc.h>
#include <linux/version.h>
#include <linux/workqueue.h>
#include <asm/arch_timer.h>

/* ETM_OPT_* of include/linux/coresight-pmu.h (6.12; 7.x moved them into the driver) */
#define ECS_OPT_BRANCH_BROADCAST 8
#define ECS_OPT_CYCACC		12
#define ECS_OPT_CTXTID		14
#define ECS_OPT_CTXTID2		15
#define ECS_OPT_TS		28
#define ECS_OPT_RETSTK		29
/* What the unit accepts in config: preset (0-3) only as 0, as no configuration is loaded. */
#define ECS_CONFIG_VALID	(BIT_ULL(ECS_OPT_BRANCH_BROADCAST) | BIT_ULL(ECS_OPT_CTXTID) | \
				 BIT_ULL(ECS_OPT_TS) | BIT_ULL(ECS_OPT_RETSTK))

#define ECS_TRACE_ID(cpu)	(0x10 + (cpu) * 2)	/* CORESIGHT_LEGACY_CPU_TRACE_ID */
#define ECS_FRAME		16
#define ECS_ETR_DEFAULT_SIZE	SZ_1M			/* the driver's default drvdata->size */

/* AUX pause came to the CoreSight driver in 6.16; older kernels' driver does not have it. */
#if defined(PERF_PMU_CAP_AUX_PAUSE) && LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define ECS_AUX_PAUSE 1
#else
#define ECS_AUX_PAUSE 0
#endif

static bool ete;
module_param(ete, bool, 0444);
MODULE_PARM_DESC(ete, "the trace units are ETE (TRCDEVARCH 0x47705a13) with a TRBE per CPU, not ETMv4 with an ETR");

static unsigned long etr_size = ECS_ETR_DEFAULT_SIZE;
module_param(etr_size, ulong, 0444);
MODULE_PARM_DESC(etr_size, "the ETR's own trace memory (bytes, a multiple of 4096; the driver's buffer_size, 1 MiB)");

enum ecs_why {
	ECS_WHY_START = 1,
	ECS_WHY_RESUME = 2,
	ECS_WHY_PAUSE = 3,
	ECS_WHY_STOP = 4,
};

enum ecs_sink_kind {
	ECS_SINK_ETR,
	ECS_SINK_TRBE,
};

/* ---- the ETR: one trace memory, frames, a session per owner -------------------------------- */

/* The memory an ETR writes in perf mode (struct etr_buf): shared by the CPUs of one session. */
struct ecs_etr_buf {
	struct list_head node;
	refcount_t refcount;
	pid_t pid;		/* key of cpu-wide sharing; 0 for a per-thread event's own */
	u8 *data;
	size_t size;
	size_t wp;		/* write offset */
	bool full;		/* wrapped since the last enable */
};

/* The formatter: 15 bytes of data and IDs, then a byte of flags (CoreSight frame format). */
struct ecs_fmt {
	u8 frame[ECS_FRAME];
	int pos;		/* next slot, 0..14 */
	int id;			/* current trace ID, -1 when the decoder cannot know it */
};

static struct ecs_etr {
	raw_spinlock_t lock;
	pid_t pid;			/* the session using it, -1 none */
	int refcnt;			/* CPUs of that session enabled on it */
	struct ecs_etr_buf *perf_buf;	/* the memory it writes */
	struct ecs_fmt fmt;
	unsigned long hash;		/* its name's hash: sinks/tmc_etr0, config2 */
} ecs_etr = {
	.lock = __RAW_SPIN_LOCK_UNLOCKED(ecs_etr.lock),
	.pid = -1,
};

static LIST_HEAD(ecs_etr_bufs);
static DEFINE_MUTEX(ecs_etr_bufs_lock);

/* A sink configuration per event (struct etr_perf_buffer / struct trbe_buf). */
struct ecs_snk {
	enum ecs_sink_kind kind;
	struct ecs_etr_buf *etr_buf;	/* ETR */
	pid_t pid;
	bool snapshot;
	int nr_pages;
	void **pages;
};

/* What setup_aux returns (struct etm_event_data). */
struct ecs_event_data {
	struct work_struct work;
	cpumask_t mask;			/* CPUs with a path to the sink */
	cpumask_t aux_hwid_done;
	struct ecs_snk snk;
};

/* Per CPU: the handle, the session, the trace unit's state and, for a TRBE, its write state. */
struct ecs_cpu {
	struct perf_output_handle handle;
	struct ecs_event_data *event_data;
	bool enabled;		/* the trace unit is programmed (between source enable and disable) */
	bool on;		/* trace on: between the on and off packets */
	size_t trbe_written;	/* TRBE, normal mode: bytes since perf_aux_output_begin() */
	bool trbe_lost;
};

static DEFINE_PER_CPU(struct ecs_cpu, ecs_cpus);
static unsigned long *ecs_trbe_hash;	/* per CPU: sinks/trbeN */
static struct pmu ecs_pmu;
static atomic64_t ecs_last_ts;

static void ecs_etr_write(struct ecs_etr_buf *b, const u8 *p, size_t len)
{
	while (len) {
		size_t n = min(len, b->size - b->wp);

		memcpy(b->data + b->wp, p, n);
		b->wp += n;
		if (b->wp == b->size) {
			b->wp = 0;
			b->full = true;
		}
		p += n;
		len -= n;
	}
}

/* A frame is complete (its flag byte, slot 15, kept as the slots filled): out to the trace memory. */
static void ecs_fmt_frame_done(struct ecs_etr *etr)
{
	struct ecs_fmt *f = &etr->fmt;

	if (etr->perf_buf)
		ecs_etr_write(etr->perf_buf, f->frame, ECS_FRAME);
	memset(f->frame, 0, sizeof(f->frame));
	f->pos = 0;
}

/* Even slot: bit 0 of the byte goes to the flag byte, the slot holds bits 7..1 with bit 0 clear. */
static void ecs_fmt_put_even_data(struct ecs_fmt *f, int slot, u8 b)
{
	f->frame[slot] = b & 0xfe;
	f->frame[15] = (f->frame[15] & ~BIT(slot / 2)) | ((b & 1) << (slot / 2));
}

static void ecs_fmt_put_id(struct ecs_fmt *f, int slot, int id, bool after_next)
{
	f->frame[slot] = (id << 1) | 1;
	f->frame[15] = (f->frame[15] & ~BIT(slot / 2)) | ((u8)after_next << (slot / 2));
}

static void ecs_fmt_advance(struct ecs_etr *etr)
{
	if (++etr->fmt.pos == 15)
		ecs_fmt_frame_done(etr);
}

static void ecs_fmt_put_data(struct ecs_etr *etr, u8 b)
{
	struct ecs_fmt *f = &etr->fmt;

	if (f->pos & 1)
		f->frame[f->pos] = b;
	else
		ecs_fmt_put_even_data(f, f->pos, b);
	ecs_fmt_advance(etr);
}

/*
 * One byte of trace ID id. An ID change can only sit in an even slot: at an odd one, the byte
 * before (the old ID's, in the even slot) moves to the odd slot and the even slot becomes the
 * new ID with its flag set ("the next byte is still the old ID's"), as formatters do.
 */
static void ecs_fmt_put(struct ecs_etr *etr, int id, u8 b)
{
	struct ecs_fmt *f = &etr->fmt;

	if (id != f->id) {
		if (f->pos & 1) {
			u8 old = (f->frame[f->pos - 1] & 0xfe) | ((f->frame[15] >> ((f->pos - 1) / 2)) & 1);

			ecs_fmt_put_id(f, f->pos - 1, id, true);
			f->frame[f->pos] = old;
			ecs_fmt_advance(etr);
		} else {
			ecs_fmt_put_id(f, f->pos, id, false);
			ecs_fmt_advance(etr);
		}
		f->id = id;
	}
	ecs_fmt_put_data(etr, b);
}

/* Flush: the frame in progress completed with the null ID (0), whose data decoders drop. */
static void ecs_fmt_flush(struct ecs_etr *etr)
{
	struct ecs_fmt *f = &etr->fmt;

	if (f->pos == 0)
		return;
	if (f->id != 0)
		ecs_fmt_put(etr, 0, 0);
	while (f->pos != 0)
		ecs_fmt_put_data(etr, 0);
}

static void ecs_etr_reset(struct ecs_etr *etr)
{
	memset(&etr->fmt, 0, sizeof(etr->fmt));
	etr->fmt.id = -1;
	if (etr->perf_buf) {
		etr->perf_buf->wp = 0;
		etr->perf_buf->full = false;
	}
}

static struct ecs_etr_buf *ecs_etr_buf_alloc(pid_t pid, size_t aux_size)
{
	struct ecs_etr_buf *b = kzalloc(sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	/* alloc_etr_buf(): the AUX area's size if larger than the ETR's, else the ETR's */
	b->size = max_t(size_t, aux_size, etr_size);
	b->data = vzalloc(b->size);
	if (!b->data) {
		kfree(b);
		return NULL;
	}
	b->pid = pid;
	refcount_set(&b->refcount, 1);
	INIT_LIST_HEAD(&b->node);
	return b;
}

static void ecs_etr_buf_free(struct ecs_etr_buf *b)
{
	vfree(b->data);
	kfree(b);
}

/* get_perf_etr_buf(): cpu-wide events of one owner share a memory, a per-thread event has its own. */
static struct ecs_etr_buf *ecs_etr_buf_get(struct perf_event *event, size_t aux_size)
{
	pid_t pid = task_pid_nr(event->owner);
	struct ecs_etr_buf *b;

	if (event->cpu == -1)
		return ecs_etr_buf_alloc(0, aux_size);
	mutex_lock(&ecs_etr_bufs_lock);
	list_for_each_entry(b, &ecs_etr_bufs, node) {
		if (b->pid == pid) {
			refcount_inc(&b->refcount);
			mutex_unlock(&ecs_etr_bufs_lock);
			return b;
		}
	}
	b = ecs_etr_buf_alloc(pid, aux_size);
	if (b)
		list_add(&b->node, &ecs_etr_bufs);
	mutex_unlock(&ecs_etr_bufs_lock);
	return b;
}

static void ecs_etr_buf_put(struct ecs_etr_buf *b)
{
	mutex_lock(&ecs_etr_bufs_lock);
	if (!refcount_dec_and_test(&b->refcount)) {
		mutex_unlock(&ecs_etr_bufs_lock);
		return;
	}
	list_del(&b->node);
	mutex_unlock(&ecs_etr_bufs_lock);
	ecs_etr_buf_free(b);
}

/* tmc_enable_etr_sink_perf(): one session at a time; its first CPU restarts the memory. */
static int ecs_etr_enable(struct ecs_snk *snk)
{
	struct ecs_etr *etr = &ecs_etr;
	unsigned long flags;
	int rc = 0;

	raw_spin_lock_irqsave(&etr->lock, flags);
	if (etr->pid != -1 && etr->pid != snk->pid) {
		rc = -EBUSY;
	} else if (etr->pid == snk->pid) {
		etr->refcnt++;
	} else {
		etr->pid = snk->pid;
		etr->perf_buf = snk->etr_buf;
		ecs_etr_reset(etr);
		etr->refcnt = 1;
	}
	raw_spin_unlock_irqrestore(&etr->lock, flags);
	return rc;
}

static void ecs_etr_disable(void)
{
	struct ecs_etr *etr = &ecs_etr;
	unsigned long flags;

	raw_spin_lock_irqsave(&etr->lock, flags);
	if (--etr->refcnt == 0) {
		etr->pid = -1;
		etr->perf_buf = NULL;
	}
	raw_spin_unlock_irqrestore(&etr->lock, flags);
}

/* tmc_etr_sync_perf_buffer(): from the trace memory into the AUX pages at head. */
static void ecs_etr_copy(struct ecs_snk *snk, unsigned long head, size_t src, size_t len)
{
	size_t aux_size = (size_t)snk->nr_pages << PAGE_SHIFT;
	struct ecs_etr_buf *b = snk->etr_buf;
	size_t dst = head % aux_size;

	while (len) {
		size_t n = min3(len, PAGE_SIZE - (dst & (PAGE_SIZE - 1)), b->size - src);

		memcpy((u8 *)snk->pages[dst >> PAGE_SHIFT] + (dst & (PAGE_SIZE - 1)), b->data + src, n);
		dst = (dst + n) % aux_size;
		src = (src + n) % b->size;
		len -= n;
	}
}

/*
 * tmc_update_etr_buffer(): nothing while another CPU of the session still uses the sink (its
 * last user copies everything); the whole memory since it was enabled, or in normal mode the
 * newest handle->size of it, with a barrier where the copy begins if anything was lost.
 */
static unsigned long ecs_etr_update(struct perf_output_handle *handle, struct ecs_snk *snk, bool restart)
{
	struct ecs_etr *etr = &ecs_etr;
	struct ecs_etr_buf *b = snk->etr_buf;
	static const u8 barrier[16] = { 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f,
					0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f };
	unsigned long flags, size = 0, offset;
	bool lost = false;

	raw_spin_lock_irqsave(&etr->lock, flags);
	if (etr->refcnt != 1) {
		raw_spin_unlock_irqrestore(&etr->lock, flags);
		goto out;
	}
	if (etr->perf_buf != b) {
		/* the driver WARNs here: another event of the session owns the memory */
		pr_warn_ratelimited("auxtrig_cs_etm: tmc_etr0 writes another event's memory: this event's trace is lost (as the driver: WARN in tmc_update_etr_buffer)\n");
		lost = true;
		raw_spin_unlock_irqrestore(&etr->lock, flags);
		goto out;
	}
	ecs_fmt_flush(etr);
	lost = b->full;
	offset = b->full ? b->wp : 0;
	size = b->full ? b->size : b->wp;
	if (!snk->snapshot && size > handle->size) {
		size = handle->size & ~(unsigned long)(ECS_FRAME - 1);
		offset = (offset + (b->full ? b->size : b->wp) - size) % b->size;
		lost = true;
	}
	if (lost && size >= sizeof(barrier)) {
		/* tmc_etr_buf_insert_barrier_packet(): at the start of what is copied */
		for (size_t i = 0; i < sizeof(barrier); i++)
			b->data[(offset + i) % b->size] = barrier[i];
	}
	ecs_etr_copy(snk, handle->head, offset, size);
	if (snk->snapshot)
		handle->head += size;
	smp_wmb();
	/* 6.16+: after an update on AUX pause, the sink is enabled again (a fresh memory) */
	if (restart)
		ecs_etr_reset(etr);
	raw_spin_unlock_irqrestore(&etr->lock, flags);
out:
	if (!snk->snapshot && lost)
		perf_aux_output_flag(handle, PERF_AUX_FLAG_TRUNCATED);
	return size;
}

/* ---- the TRBE: the CPU's raw trace straight into its AUX area ------------------------------ */

static void ecs_trbe_begin(struct ecs_cpu *c)
{
	c->trbe_written = 0;
	c->trbe_lost = false;
	/* arm_trbe_enable(): the AUX records of a TRBE say RAW (not frame formatted) */
	perf_aux_output_flag(&c->handle, PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW);
}

static void ecs_trbe_write(struct ecs_cpu *c, const u8 *p, size_t len)
{
	struct ecs_event_data *ed = perf_get_aux(&c->handle);
	struct ecs_snk *snk = ed ? &ed->snk : NULL;
	size_t aux_size, dst;

	if (!snk)
		return;
	aux_size = (size_t)snk->nr_pages << PAGE_SHIFT;
	if (!snk->snapshot && c->trbe_written + len > c->handle.size) {
		/* the TRBE's limit is the handle's room: a full buffer stops it (trbe_handle_overflow) */
		c->trbe_lost = true;
		return;
	}
	dst = (c->handle.head + c->trbe_written) % aux_size;
	c->trbe_written += len;
	while (len) {
		size_t n = min(len, PAGE_SIZE - (dst & (PAGE_SIZE - 1)));

		memcpy((u8 *)snk->pages[dst >> PAGE_SHIFT] + (dst & (PAGE_SIZE - 1)), p, n);
		dst = (dst + n) % aux_size;
		p += n;
		len -= n;
	}
}

/* arm_trbe_update_buffer(): what was written; in snapshot mode the head moves by it. */
static unsigned long ecs_trbe_update(struct ecs_cpu *c, struct ecs_snk *snk)
{
	unsigned long size = c->trbe_written;

	smp_wmb();
	if (snk->snapshot) {
		c->handle.head += size;
	} else if (c->trbe_lost) {
		perf_aux_output_flag(&c->handle, PERF_AUX_FLAG_TRUNCATED);
	}
	c->trbe_written = 0;
	c->trbe_lost = false;
	return size;
}

/* ---- the trace unit's packets (Arm ETMv4 / ETE architecture, instruction trace) ------------ */

struct ecs_pkts {
	u8 b[64];
	size_t n;
};

static void put_u8(struct ecs_pkts *k, u8 v)
{
	k->b[k->n++] = v;
}

static void pkt_async(struct ecs_pkts *k)
{
	for (int i = 0; i < 11; i++)
		put_u8(k, 0x00);
	put_u8(k, 0x80);
}

/* Trace Info: PLCTL says INFO follows; INFO 0: no cycle counting, no conditional/data trace. */
static void pkt_trace_info(struct ecs_pkts *k)
{
	put_u8(k, 0x01);
	put_u8(k, 0x01);
	put_u8(k, 0x00);
}

/* Timestamp: 7 bits a byte with a continuation bit, the 9th byte 8 bits. */
static void pkt_timestamp(struct ecs_pkts *k, u64 ts)
{
	put_u8(k, 0x02);
	for (int i = 0; i < 8; i++) {
		u8 b = ts & 0x7f;

		ts >>= 7;
		if (!ts) {
			put_u8(k, b);
			return;
		}
		put_u8(k, b | 0x80);
	}
	put_u8(k, ts & 0xff);
}

/* A 64-bit IS0 (A64) address: bits 8..2, 15..9 in 7-bit bytes, then 16..63 in six bytes. */
static void put_addr64_is0(struct ecs_pkts *k, u64 a)
{
	put_u8(k, (a >> 2) & 0x7f);
	put_u8(k, (a >> 9) & 0x7f);
	for (int i = 2; i < 8; i++)
		put_u8(k, a >> (8 * i));
}

/* Context info: EL, SF (AArch64), NS, and C: a 32-bit context ID follows. */
static void put_context(struct ecs_pkts *k, int el, bool cid, u32 ctxid)
{
	put_u8(k, (el & 3) | BIT(4) | BIT(5) | (cid ? BIT(7) : 0));
	if (cid)
		for (int i = 0; i < 4; i++)
			put_u8(k, ctxid >> (8 * i));
}

static u64 ecs_timestamp(void)
{
	u64 now = __arch_counter_get_cntvct(), last;

	/* strictly increasing over the unit: every switch has a timestamp of its own */
	do {
		last = atomic64_read(&ecs_last_ts);
		if (now <= last)
			now = last + 1;
	} while (atomic64_cmpxchg(&ecs_last_ts, last, now) != last);
	return now;
}

static u64 ecs_user_pc(void)
{
	if (!current->mm || (current->flags & PF_KTHREAD))
		return 0;
	return instruction_pointer(task_pt_regs(current));
}

static void ecs_emit(struct ecs_cpu *c, const struct ecs_pkts *k)
{
	struct ecs_event_data *ed = c->event_data;
	unsigned long flags;

	if (!ed)
		return;
	if (ed->snk.kind == ECS_SINK_TRBE) {
		ecs_trbe_write(c, k->b, k->n);
		return;
	}
	/* the ETM's bytes go, through the funnel, to whatever memory the ETR writes */
	raw_spin_lock_irqsave(&ecs_etr.lock, flags);
	if (ecs_etr.refcnt && ecs_etr.perf_buf)
		for (size_t i = 0; i < k->n; i++)
			ecs_fmt_put(&ecs_etr, ECS_TRACE_ID(smp_processor_id()), k->b[i]);
	raw_spin_unlock_irqrestore(&ecs_etr.lock, flags);
}

/*
 * Exception with its "prior branch target" interpretation (E1:E0 = 0b10): the address that
 * follows is where the thread is, and no instruction ran up to it that the trace shows, so a
 * decoder makes no instruction range of it. TYPE: IMPLEMENTATION DEFINED exception 0..3
 * (0x10 + why - 1), the unit's start, resume, pause, stop. It is the P0 element that commits
 * the packets before it (a decoder holds Trace On, context and timestamps until one comes).
 */
static void pkt_exception(struct ecs_pkts *k, enum ecs_why why, u64 pc)
{
	put_u8(k, 0x06);
	put_u8(k, BIT(6) | ((0x10 + why - 1) << 1));
	put_u8(k, 0x9d);				/* Long Address, 64-bit IS0 */
	put_addr64_is0(k, pc);
}

/*
 * A thread without a user PC (a kernel thread, idle) gets nothing: the unit traces EL0 only,
 * as an ETM filtered to user space emits nothing while the PE is in the kernel.
 */
static void ecs_trace_on(struct ecs_cpu *c, struct perf_event *event, enum ecs_why why)
{
	u64 cfg = event->attr.config, pc = ecs_user_pc();
	struct ecs_pkts k = { .n = 0 };

	if (!pc)
		return;
	pkt_async(&k);
	pkt_trace_info(&k);
	if (cfg & BIT_ULL(ECS_OPT_TS))
		pkt_timestamp(&k, ecs_timestamp());
	put_u8(&k, 0x04);				/* Trace On */
	put_u8(&k, 0x85);				/* Address with Context, 64-bit IS0 */
	put_addr64_is0(&k, pc);
	put_context(&k, 0, cfg & BIT_ULL(ECS_OPT_CTXTID), task_pid_nr(current));
	pkt_exception(&k, why, pc);
	ecs_emit(c, &k);
	c->on = true;
}

static void ecs_trace_off(struct ecs_cpu *c, struct perf_event *event, enum ecs_why why)
{
	u64 cfg = event->attr.config, pc = ecs_user_pc();
	struct ecs_pkts k = { .n = 0 };

	c->on = false;
	if (!pc)
		return;
	if (cfg & BIT_ULL(ECS_OPT_TS))
		pkt_timestamp(&k, ecs_timestamp());
	pkt_exception(&k, why, pc);
	ecs_emit(c, &k);
}

/* ---- sysfs: as the driver and the ETM/ETE devices expose it -------------------------------- */

#define ECS_FORMAT(name, spec)								\
	static ssize_t name##_show(struct device *dev, struct device_attribute *attr,	\
				   char *page)						\
	{										\
		return sysfs_emit(page, spec "\n");					\
	}										\
	static struct device_attribute format_attr_##name = __ATTR_RO(name)

ECS_FORMAT(cycacc, "config:12");
ECS_FORMAT(contextid, "config:14");	/* the kernel runs at EL1 in the lab: CONTEXTIDR_EL1 */
ECS_FORMAT(contextid1, "config:14");
ECS_FORMAT(contextid2, "config:15");
ECS_FORMAT(timestamp, "config:28");
ECS_FORMAT(retstack, "config:29");
ECS_FORMAT(sinkid, "config2:0-31");
ECS_FORMAT(preset, "config:0-3");
ECS_FORMAT(configid, "config2:32-63");
ECS_FORMAT(branch_broadcast, "config:8");
ECS_FORMAT(cc_threshold, "config3:0-11");

static struct attribute *ecs_format_attrs[] = {
	&format_attr_cycacc.attr, &format_attr_contextid.attr, &format_attr_contextid1.attr,
	&format_attr_contextid2.attr, &format_attr_timestamp.attr, &format_attr_retstack.attr,
	&format_attr_sinkid.attr, &format_attr_preset.attr, &format_attr_configid.attr,
	&format_attr_branch_broadcast.attr, &format_attr_cc_threshold.attr,
	NULL,
};

static const struct attribute_group ecs_format_group = {
	.name = "format",
	.attrs = ecs_format_attrs,
};

/* sinks/NAME: the hash of NAME (etm_perf_add_symlink_group()), what perf writes into config2. */
static ssize_t ecs_sink_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute, attr);

	return sysfs_emit(buf, "0x%lx\n", (unsigned long)ea->var);
}

static struct dev_ext_attribute *ecs_sink_eattrs;
static struct attribute **ecs_sink_attrs;
static struct attribute_group ecs_sinks_group = {
	.name = "sinks",
};

static struct attribute *ecs_events_attrs[] = { NULL };
static const struct attribute_group ecs_events_group = {
	.name = "events",
	.attrs = ecs_events_attrs,
};

static const struct attribute_group *ecs_attr_groups[] = {
	&ecs_format_group, &ecs_sinks_group, &ecs_events_group, NULL,
};

static unsigned long ecs_name_hash(const char *name)
{
	return hashlen_hash(hashlen_string(NULL, name));
}

static int ecs_sinks_init(void)
{
	int nr = 1 + (ete ? nr_cpu_ids : 0), i = 0;

	ecs_sink_eattrs = kcalloc(nr, sizeof(*ecs_sink_eattrs), GFP_KERNEL);
	ecs_sink_attrs = kcalloc(nr + 1, sizeof(*ecs_sink_attrs), GFP_KERNEL);
	ecs_trbe_hash = kcalloc(nr_cpu_ids, sizeof(*ecs_trbe_hash), GFP_KERNEL);
	if (!ecs_sink_eattrs || !ecs_sink_attrs || !ecs_trbe_hash)
		return -ENOMEM;
	for (int s = 0; s < nr; s++) {
		struct dev_ext_attribute *ea = &ecs_sink_eattrs[s];
		const char *name = s == 0 ? kstrdup("tmc_etr0", GFP_KERNEL) : kasprintf(GFP_KERNEL, "trbe%d", s - 1);

		if (!name)
			return -ENOMEM;
		sysfs_attr_init(&ea->attr.attr);
		ea->attr.attr.name = name;
		ea->attr.attr.mode = 0444;
		ea->attr.show = ecs_sink_show;
		ea->var = (void *)ecs_name_hash(name);
		if (s == 0)
			ecs_etr.hash = ecs_name_hash(name);
		else
			ecs_trbe_hash[s - 1] = ecs_name_hash(name);
		ecs_sink_attrs[i++] = &ea->attr.attr;
	}
	ecs_sinks_group.attrs = ecs_sink_attrs;
	return 0;
}

static void ecs_sinks_exit(void)
{
	for (int s = 0; ecs_sink_attrs && ecs_sink_attrs[s]; s++)
		kfree(ecs_sink_eattrs[s].attr.attr.name);
	kfree(ecs_sink_attrs);
	kfree(ecs_sink_eattrs);
	kfree(ecs_trbe_hash);
}

/* The trace unit's registers (a Juno's Cortex-A57 ETMv4.0; ETE: the ETE architecture's IDs). */
enum {
	ECS_TRCIDR0, ECS_TRCIDR1, ECS_TRCIDR2, ECS_TRCIDR3, ECS_TRCIDR4, ECS_TRCIDR5, ECS_TRCIDR8,
	ECS_TRCIDR9, ECS_TRCIDR10, ECS_TRCIDR11, ECS_TRCIDR12, ECS_TRCIDR13, ECS_TRCAUTHSTATUS,
	ECS_TRCDEVARCH, ECS_TRCCONFIGR, ECS_TRCTRACEIDR, ECS_TRCDEVTYPE, ECS_NR_REGS,
};

static u32 ecs_reg(struct device *dev, int reg)
{
	int cpu = (long)dev_get_drvdata(dev);

	switch (reg) {
	case ECS_TRCIDR0: return 0x28000ea1;	/* 64-bit timestamps, 4 events, return stack, BB, CCI */
	case ECS_TRCIDR1: return ete ? 0x4100fff0 : 0x4100f403; /* ETE: ARCHMAJ/MIN 0xf, see TRCDEVARCH */
	case ECS_TRCIDR2: return 0x00000488;	/* 64-bit IA, 32-bit context ID, 8-bit VMID */
	case ECS_TRCIDR3: return 0x0d7b0004;
	case ECS_TRCIDR4: return 0x11170004;
	case ECS_TRCIDR5: return 0x28c7081e;
	case ECS_TRCAUTHSTATUS: return 0xcc;
	case ECS_TRCDEVARCH: return ete ? 0x47705a13 : 0x47704a13;
	case ECS_TRCCONFIGR: return 0xc1;
	case ECS_TRCTRACEIDR: return ECS_TRACE_ID(cpu);
	case ECS_TRCDEVTYPE: return 0x13;
	default: return 0;
	}
}

struct ecs_reg_attr {
	struct device_attribute attr;
	int reg;
};

static ssize_t ecs_reg_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%x\n", ecs_reg(dev, container_of(attr, struct ecs_reg_attr, attr)->reg));
}

#define ECS_REG(name, r) \
	static struct ecs_reg_attr reg_##name = { __ATTR(name, 0444, ecs_reg_show, NULL), r }

ECS_REG(trcidr0, ECS_TRCIDR0);
ECS_REG(trcidr1, ECS_TRCIDR1);
ECS_REG(trcidr2, ECS_TRCIDR2);
ECS_REG(trcidr3, ECS_TRCIDR3);
ECS_REG(trcidr4, ECS_TRCIDR4);
ECS_REG(trcidr5, ECS_TRCIDR5);
ECS_REG(trcidr8, ECS_TRCIDR8);
ECS_REG(trcidr9, ECS_TRCIDR9);
ECS_REG(trcidr10, ECS_TRCIDR10);
ECS_REG(trcidr11, ECS_TRCIDR11);
ECS_REG(trcidr12, ECS_TRCIDR12);
ECS_REG(trcidr13, ECS_TRCIDR13);
ECS_REG(trcauthstatus, ECS_TRCAUTHSTATUS);
ECS_REG(trcdevarch, ECS_TRCDEVARCH);
ECS_REG(trcconfig, ECS_TRCCONFIGR);
ECS_REG(trctraceid, ECS_TRCTRACEIDR);
ECS_REG(trcdevtype, ECS_TRCDEVTYPE);

static struct attribute *ecs_trcidr_attrs[] = {
	&reg_trcidr0.attr.attr, &reg_trcidr1.attr.attr, &reg_trcidr2.attr.attr, &reg_trcidr3.attr.attr,
	&reg_trcidr4.attr.attr, &reg_trcidr5.attr.attr, &reg_trcidr8.attr.attr, &reg_trcidr9.attr.attr,
	&reg_trcidr10.attr.attr, &reg_trcidr11.attr.attr, &reg_trcidr12.attr.attr,
	&reg_trcidr13.attr.attr, NULL,
};

static struct attribute *ecs_mgmt_attrs[] = {
	&reg_trcauthstatus.attr.attr, &reg_trcdevarch.attr.attr, &reg_trcconfig.attr.attr,
	&reg_trctraceid.attr.attr, &reg_trcdevtype.attr.attr, NULL,
};

static const struct attribute_group ecs_trcidr_group = { .name = "trcidr", .attrs = ecs_trcidr_attrs };
static const struct attribute_group ecs_mgmt_group = { .name = "mgmt", .attrs = ecs_mgmt_attrs };
static const struct attribute_group *ecs_etm_groups[] = { &ecs_trcidr_group, &ecs_mgmt_group, NULL };

static struct device *ecs_root;
static struct device **ecs_etm_devs;

static void ecs_dev_release(struct device *dev)
{
	kfree(dev);
}

static int ecs_etm_devs_init(void)
{
	ecs_root = root_device_register("auxtrig_coresight");
	if (IS_ERR(ecs_root))
		return PTR_ERR(ecs_root);
	ecs_etm_devs = kcalloc(nr_cpu_ids, sizeof(*ecs_etm_devs), GFP_KERNEL);
	if (!ecs_etm_devs)
		return -ENOMEM;
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct device *d;
		char link[16];
		int err;

		if (!cpu_possible(cpu))
			continue;
		d = kzalloc(sizeof(*d), GFP_KERNEL);
		if (!d)
			return -ENOMEM;
		d->parent = ecs_root;
		d->groups = ecs_etm_groups;
		d->release = ecs_dev_release;
		dev_set_drvdata(d, (void *)(long)cpu);
		dev_set_name(d, ete ? "ete%d" : "etm%d", cpu);
		err = device_register(d);
		if (err) {
			put_device(d);
			return err;
		}
		ecs_etm_devs[cpu] = d;
		/* etm_perf_symlink(): cs_etm/cpuN names CPU N's trace unit */
		snprintf(link, sizeof(link), "cpu%d", cpu);
		err = sysfs_create_link(&ecs_pmu.dev->kobj, &d->kobj, link);
		if (err)
			return err;
	}
	return 0;
}

static void ecs_etm_devs_exit(void)
{
	for (int cpu = 0; ecs_etm_devs && cpu < nr_cpu_ids; cpu++) {
		char link[16];

		if (!ecs_etm_devs[cpu])
			continue;
		snprintf(link, sizeof(link), "cpu%d", cpu);
		if (ecs_pmu.dev)
			sysfs_remove_link(&ecs_pmu.dev->kobj, link);
		device_unregister(ecs_etm_devs[cpu]);
	}
	kfree(ecs_etm_devs);
	if (!IS_ERR_OR_NULL(ecs_root))
		root_device_unregister(ecs_root);
}

/* ---- the AUX buffer and struct pmu (etm_setup_aux, etm_event_start/stop) -------------------- */

static void ecs_free_event_data(struct work_struct *work)
{
	struct ecs_event_data *ed = container_of(work, struct ecs_event_data, work);

	if (ed->snk.etr_buf)
		ecs_etr_buf_put(ed->snk.etr_buf);
	kfree(ed);
}

static void ecs_free_aux(void *data)
{
	struct ecs_event_data *ed = data;

	schedule_work(&ed->work);
}

/*
 * The sink: config2's sink ID if given (tmc_etr0, or trbeN: reachable from CPU N only), else the
 * default: a TRBE where there is one (per-CPU sinks rank first), else the ETR.
 */
static void *ecs_setup_aux(struct perf_event *event, void **pages, int nr_pages, bool overwrite)
{
	u32 sink_hash = (u32)event->attr.config2;
	struct ecs_event_data *ed;
	int cpu;

	if (!nr_pages || (event->attr.config2 >> 32))
		return NULL;	/* no configuration (configid) is loaded */
	ed = kzalloc(sizeof(*ed), GFP_KERNEL);
	if (!ed)
		return NULL;
	INIT_WORK(&ed->work, ecs_free_event_data);
	if (event->cpu != -1)
		cpumask_set_cpu(event->cpu, &ed->mask);
	else
		cpumask_copy(&ed->mask, cpu_present_mask);

	if (!sink_hash) {
		ed->snk.kind = ete ? ECS_SINK_TRBE : ECS_SINK_ETR;
	} else if (sink_hash == (u32)ecs_etr.hash) {
		ed->snk.kind = ECS_SINK_ETR;
	} else {
		ed->snk.kind = ECS_SINK_TRBE;
		for_each_cpu(cpu, &ed->mask)
			if (!ete || (u32)ecs_trbe_hash[cpu] != sink_hash)
				cpumask_clear_cpu(cpu, &ed->mask);
	}
	if (cpumask_empty(&ed->mask))
		goto err;
	ed->snk.pid = task_pid_nr(event->owner);
	ed->snk.snapshot = overwrite;
	ed->snk.nr_pages = nr_pages;
	ed->snk.pages = pages;
	if (ed->snk.kind == ECS_SINK_ETR) {
		ed->snk.etr_buf = ecs_etr_buf_get(event, (size_t)nr_pages << PAGE_SHIFT);
		if (!ed->snk.etr_buf)
			goto err;
	}
	return ed;
err:
	kfree(ed);
	return NULL;
}

static bool ecs_paused(struct perf_event *event)
{
#if ECS_AUX_PAUSE
	return READ_ONCE(event->hw.aux_paused);
#else
	return false;
#endif
}

static void ecs_report_hw_id(struct perf_event *event, struct ecs_event_data *ed, int cpu)
{
	u64 hw_id;

	if (cpumask_test_and_set_cpu(cpu, &ed->aux_hwid_done))
		return;
	hw_id = FIELD_PREP(GENMASK_ULL(63, 60), 0) | FIELD_PREP(GENMASK_ULL(59, 56), 1) |
		FIELD_PREP(GENMASK_ULL(7, 0), ECS_TRACE_ID(cpu)) |
		FIELD_PREP(GENMASK_ULL(39, 8), (u32)(ed->snk.kind == ECS_SINK_ETR ? ecs_etr.hash
									    : ecs_trbe_hash[cpu]));
	perf_report_aux_output_id(event, hw_id);
}

static void ecs_start(struct perf_event *event, int flags)
{
	int cpu = smp_processor_id();
	struct ecs_cpu *c = this_cpu_ptr(&ecs_cpus);
	struct ecs_event_data *ed;

#if ECS_AUX_PAUSE
	if (flags & PERF_EF_RESUME) {
		/* etm_event_resume(): the trace unit on again, nothing else */
		if (READ_ONCE(c->event_data) && c->enabled && !c->on)
			ecs_trace_on(c, event, ECS_WHY_RESUME);
		return;
	}
#endif
	if (c->event_data)
		goto fail;
	ed = perf_aux_output_begin(&c->handle, event);
	if (!ed)
		goto fail;
	if (!cpumask_test_cpu(cpu, &ed->mask))
		goto out;	/* no path from this CPU: alive, but tracing nothing (as the driver) */
	if (ed->snk.kind == ECS_SINK_ETR) {
		if (ecs_etr_enable(&ed->snk))
			goto fail_end;
	} else {
		ecs_trbe_begin(c);
	}
	ecs_report_hw_id(event, ed, cpu);
	WRITE_ONCE(c->event_data, ed);
	c->enabled = true;
	if (!ecs_paused(event))
		ecs_trace_on(c, event, ECS_WHY_START);
out:
	event->hw.state = 0;
	WRITE_ONCE(c->event_data, ed);
	return;
fail_end:
	perf_aux_output_flag(&c->handle, PERF_AUX_FLAG_TRUNCATED);
	perf_aux_output_end(&c->handle, 0);
fail:
	event->hw.state = PERF_HES_STOPPED;
}

#if ECS_AUX_PAUSE
/* etm_event_pause(): the trace unit off; an ETR publishes what it holds (if this CPU is its only user). */
static void ecs_pause(struct perf_event *event, struct ecs_cpu *c)
{
	struct ecs_event_data *ed = READ_ONCE(c->event_data);
	unsigned long size;

	if (!ed || !c->enabled)
		return;
	if (c->on)
		ecs_trace_off(c, event, ECS_WHY_PAUSE);
	if (ed->snk.kind != ECS_SINK_ETR || c->handle.event != event)
		return;
	size = ecs_etr_update(&c->handle, &ed->snk, true);
	if (READ_ONCE(c->handle.event) && size) {
		perf_aux_output_end(&c->handle, size);
		perf_aux_output_begin(&c->handle, event);
	}
}
#endif

static void ecs_stop(struct perf_event *event, int mode)
{
	int cpu = smp_processor_id();
	struct ecs_cpu *c = this_cpu_ptr(&ecs_cpus);
	struct ecs_event_data *ed;
	unsigned long size;

#if ECS_AUX_PAUSE
	if (mode & PERF_EF_PAUSE) {
		ecs_pause(event, c);
		return;
	}
#endif
	ed = c->event_data;
	if (event->hw.state == PERF_HES_STOPPED)
		goto clear;
	if (!ed)
		return;
	if (c->handle.event && (mode & PERF_EF_UPDATE) && !cpumask_test_cpu(cpu, &ed->mask)) {
		event->hw.state = PERF_HES_STOPPED;
		perf_aux_output_end(&c->handle, 0);
		goto clear;
	}
	if (c->on)
		ecs_trace_off(c, event, ECS_WHY_STOP);
	event->hw.state = PERF_HES_STOPPED;
	if (c->handle.event && (mode & PERF_EF_UPDATE)) {
		size = ed->snk.kind == ECS_SINK_ETR ? ecs_etr_update(&c->handle, &ed->snk, false)
						    : ecs_trbe_update(c, &ed->snk);
		if (READ_ONCE(c->handle.event))
			perf_aux_output_end(&c->handle, size);
	}
	if (c->enabled && ed->snk.kind == ECS_SINK_ETR)
		ecs_etr_disable();
clear:
	c->enabled = false;
	c->on = false;
	WRITE_ONCE(c->event_data, NULL);
}

static int ecs_add(struct perf_event *event, int flags)
{
	if (flags & PERF_EF_START) {
		ecs_start(event, 0);
		if (event->hw.state & PERF_HES_STOPPED)
			return -EINVAL;
	} else {
		event->hw.state = PERF_HES_STOPPED;
	}
	return 0;
}

static void ecs_del(struct perf_event *event, int flags)
{
	ecs_stop(event, PERF_EF_UPDATE);
}

static void ecs_read(struct perf_event *event)
{
}

static int ecs_event_init(struct perf_event *event)
{
	if (event->attr.type != ecs_pmu.type)
		return -ENOENT;
	/* cycle counting (cycacc) and CONTEXTIDR_EL2 (contextid2) are not emulated */
	if (event->attr.config & ~ECS_CONFIG_VALID)
		return -EOPNOTSUPP;
	return 0;
}

static struct pmu ecs_pmu = {
	.module = THIS_MODULE,
	.task_ctx_nr = perf_sw_context,
	.capabilities = PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_ITRACE
#if ECS_AUX_PAUSE
			| PERF_PMU_CAP_AUX_PAUSE
#endif
	,
	.attr_groups = ecs_attr_groups,
	.event_init = ecs_event_init,
	.add = ecs_add,
	.del = ecs_del,
	.start = ecs_start,
	.stop = ecs_stop,
	.read = ecs_read,
	.setup_aux = ecs_setup_aux,
	.free_aux = ecs_free_aux,
};

static int __init ecs_init(void)
{
	int err;

	if (!etr_size || etr_size % PAGE_SIZE)
		return -EINVAL;
	err = ecs_sinks_init();
	if (err)
		goto fail;
	err = perf_pmu_register(&ecs_pmu, "cs_etm", -1);
	if (err)
		goto fail;
	err = ecs_etm_devs_init();
	if (err) {
		ecs_etm_devs_exit();
		ecs_etm_devs = NULL;
		ecs_root = NULL;
		perf_pmu_unregister(&ecs_pmu);
		goto fail;
	}
	pr_info("auxtrig_cs_etm: an emulated CoreSight %s unit with %s (NOT real hardware)%s\n",
		ete ? "ETE" : "ETMv4", ete ? "a TRBE per CPU and tmc_etr0" : "tmc_etr0",
		ECS_AUX_PAUSE ? ", AUX pause" : "");
	return 0;
fail:
	ecs_sinks_exit();
	return err;
}

static void __exit ecs_exit(void)
{
	ecs_etm_devs_exit();	/* the cpuN links live in the PMU's directory: before it goes */
	perf_pmu_unregister(&ecs_pmu);
	ecs_sinks_exit();
}

module_init(ecs_init);
module_exit(ecs_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("auxtrig lab: an emulated trace unit that looks like CoreSight ETMv4/ETE with ETR and TRBE sinks (not real hardware)");
