// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * auxtrig_spe: an emulated Arm Statistical Profiling Extension unit for the arm64 lab
 * (tests/lab/vm --arch arm64), NOT real hardware.
 *
 * It registers an AUX PMU that looks to userspace like drivers/perf/arm_spe_pmu.c: the name
 * arm_spe_0, its cpumask, caps/ (arch_inst, ernd, count_size, min_interval) and format/
 * (ts_enable, pa_enable, pct_enable, jitter, the filters, min_latency) files,
 * PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_ITRACE and no AUX pause (the driver has none). It
 * follows the driver's AUX protocol: the profiling buffer writes from the handle's head up to
 * a limit computed as arm_spe_pmu_next_off() does (the tail, never past the end of the
 * buffer, padded when less than a record is left); reaching it is the buffer-full management
 * event: perf_aux_output_end() of what was written and a new begin, TRUNCATED when there is
 * no room left (the core then disables the event until the reader re-enables it). In
 * snapshot (overwrite) mode the buffer is used in halves (arm_spe_pmu_next_snapshot_off())
 * and the head reported at stop is the offset inside the buffer, as the driver's
 * arm_spe_perf_aux_output_end() sets it.
 *
 * What it writes are valid SPE records of samples it takes, and nothing else: while the event
 * runs on a CPU, an hrtimer there fires every sample_period "operations" (ns_per_op
 * nanoseconds each, 1000 by default: a 1024 interval samples every 1.024 ms); each firing
 * that interrupted a thread at EL0 (or EL1 without exclude_kernel) writes one record: the
 * interrupted PC (Address packet, index 0, with its EL and NS), the thread's context ID
 * (CONTEXTIDR_EL1 = its thread id, with PMSCR_EL1.CX as the driver sets it for privileged
 * openers), the operation type, for a load the unit can decode (LDR, unsigned immediate
 * offset, read from the user's code) its data virtual address and a data source (L1D), the
 * events (retired; a load also accesses L1D), issue and total latency counters (fixed small
 * values: the unit times no operation) and, with ts_enable, a Timestamp (the generic counter)
 * that ends the record, else an End packet; each record padded to the unit's 64-byte
 * alignment with padding bytes.
 *
 * The third kernel-module unit of the project, beside auxtrig_pt.c and auxtrig_cs_etm.c.
 */
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <asm/arch_timer.h>
#include <asm/irq_regs.h>

#define ESPE_TS_ENABLE	BIT_ULL(0)
#define ESPE_PA_ENABLE	BIT_ULL(1)
#define ESPE_PCT_ENABLE	BIT_ULL(2)
#define ESPE_JITTER	BIT_ULL(16)
#define ESPE_FILTERS	(BIT_ULL(32) | BIT_ULL(33) | BIT_ULL(34))
/* What the unit accepts: the physical address and counter (PA, PCT) are not emulated. */
#define ESPE_CONFIG_VALID (ESPE_TS_ENABLE | ESPE_JITTER | ESPE_FILTERS)

#define ESPE_MIN_PERIOD	1024	/* caps/min_interval (PMSIDR_EL1.Interval 0b0011) */
#define ESPE_RECORD	64	/* max_record_sz and align: each record padded to it */
#define ESPE_PAD	0x00	/* ARM_SPE_BUF_PAD_BYTE */

static unsigned int ns_per_op = 1000;
module_param(ns_per_op, uint, 0644);
MODULE_PARM_DESC(ns_per_op, "nanoseconds an \"operation\" of sample_period lasts (sampling every period*ns_per_op ns)");

struct espe_buf {
	void **pages;
	int nr_pages;
	bool snapshot;
	size_t size;
};

/* Per CPU: the handle and the profiling buffer's pointer and limit (PMBPTR, PMBLIMITR). */
struct espe_cpu {
	struct perf_output_handle handle;
	struct perf_event *event;
	struct hrtimer timer;
	bool running;
	u64 ptr;	/* in-buffer offset of the next record */
	u64 limit;	/* in-buffer offset it may not pass; 0: disabled */
};

static DEFINE_PER_CPU(struct espe_cpu, espe_cpus);
static struct pmu espe_pmu;

/* ---- sysfs: as the driver exposes it ------------------------------------------------------ */

#define ESPE_FORMAT(name, spec)								\
	static ssize_t name##_show(struct device *dev, struct device_attribute *attr,	\
				   char *page)						\
	{										\
		return sysfs_emit(page, spec "\n");					\
	}										\
	static struct device_attribute format_attr_##name = __ATTR_RO(name)

ESPE_FORMAT(ts_enable, "config:0");
ESPE_FORMAT(pa_enable, "config:1");
ESPE_FORMAT(pct_enable, "config:2");
ESPE_FORMAT(jitter, "config:16");
ESPE_FORMAT(branch_filter, "config:32");
ESPE_FORMAT(load_filter, "config:33");
ESPE_FORMAT(store_filter, "config:34");
ESPE_FORMAT(event_filter, "config1:0-63");
ESPE_FORMAT(min_latency, "config2:0-11");

static struct attribute *espe_format_attrs[] = {
	&format_attr_ts_enable.attr, &format_attr_pa_enable.attr, &format_attr_pct_enable.attr,
	&format_attr_jitter.attr, &format_attr_branch_filter.attr, &format_attr_load_filter.attr,
	&format_attr_store_filter.attr, &format_attr_event_filter.attr, &format_attr_min_latency.attr,
	NULL,
};

static const struct attribute_group espe_format_group = { .name = "format", .attrs = espe_format_attrs };

#define ESPE_CAP(name, fmt)								\
	static ssize_t cap_##name##_show(struct device *dev, struct device_attribute *attr, \
					 char *page)					\
	{										\
		return sysfs_emit(page, fmt "\n");					\
	}										\
	static struct device_attribute cap_attr_##name = __ATTR(name, 0444, cap_##name##_show, NULL)

ESPE_CAP(arch_inst, "0");
ESPE_CAP(ernd, "0");
ESPE_CAP(count_size, "12");
ESPE_CAP(min_interval, __stringify(ESPE_MIN_PERIOD));

static struct attribute *espe_caps_attrs[] = {
	&cap_attr_arch_inst.attr, &cap_attr_ernd.attr, &cap_attr_count_size.attr,
	&cap_attr_min_interval.attr, NULL,
};

static const struct attribute_group espe_caps_group = { .name = "caps", .attrs = espe_caps_attrs };

static ssize_t cpumask_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(cpu_possible_mask));
}
static DEVICE_ATTR_RO(cpumask);

static struct attribute *espe_top_attrs[] = { &dev_attr_cpumask.attr, NULL };
static const struct attribute_group espe_top_group = { .attrs = espe_top_attrs };

static const struct attribute_group *espe_attr_groups[] = {
	&espe_top_group, &espe_caps_group, &espe_format_group, NULL,
};

/* ---- the profiling buffer (arm_spe_perf_aux_output_begin/end) ---------------------------- */

static void espe_copy(struct espe_buf *buf, u64 off, const u8 *p, size_t len)
{
	while (len) {
		size_t in_page = off & (PAGE_SIZE - 1);
		size_t n = min(len, PAGE_SIZE - in_page);

		memcpy((u8 *)buf->pages[off >> PAGE_SHIFT] + in_page, p, n);
		off = (off + n) % buf->size;
		p += n;
		len -= n;
	}
}

static void espe_fill(struct espe_buf *buf, u64 off, size_t len)
{
	static const u8 pad[ESPE_RECORD];

	while (len) {
		size_t n = min_t(size_t, len, sizeof(pad));

		espe_copy(buf, off, pad, n);
		off = (off + n) % buf->size;
		len -= n;
	}
}

/* arm_spe_pmu_pad_buf(): padding at the head; in normal mode the core skips it. */
static void espe_pad_head(struct perf_output_handle *h, struct espe_buf *buf, size_t len)
{
	espe_fill(buf, h->head % buf->size, len);
	if (!buf->snapshot)
		perf_aux_output_skip(h, len);
}

static u64 espe_next_snapshot_off(struct perf_output_handle *h, struct espe_buf *buf)
{
	u64 head = h->head % buf->size, limit = buf->size;

	if (head < limit >> 1)
		limit >>= 1;
	if (limit - head < ESPE_RECORD) {
		espe_pad_head(h, buf, limit - head);
		h->head = limit % buf->size;
		limit = (buf->size >> 1) + h->head;
	}
	return limit;
}

static u64 espe_next_off_once(struct perf_output_handle *h, struct espe_buf *buf)
{
	u64 head = h->head % buf->size, limit = buf->size, tail;

	if (!IS_ALIGNED(head, ESPE_RECORD)) {
		espe_pad_head(h, buf, min_t(u64, roundup(head, ESPE_RECORD) - head, h->size));
		head = h->head % buf->size;
	}
	if (!h->size)
		goto no_space;
	tail = (h->head + h->size) % buf->size;
	if (head < tail)
		limit = round_down(tail, PAGE_SIZE);
	if (limit > head)
		return limit;
	espe_pad_head(h, buf, h->size);
no_space:
	perf_aux_output_flag(h, PERF_AUX_FLAG_TRUNCATED);
	perf_aux_output_end(h, 0);
	return 0;
}

static u64 espe_next_off(struct perf_output_handle *h, struct espe_buf *buf)
{
	u64 limit = espe_next_off_once(h, buf), head = h->head % buf->size;

	if (limit && limit - head < ESPE_RECORD) {
		espe_pad_head(h, buf, limit - head);
		limit = espe_next_off_once(h, buf);
	}
	return limit;
}

static int espe_output_begin(struct espe_cpu *c, struct perf_event *event)
{
	struct espe_buf *buf = perf_aux_output_begin(&c->handle, event);

	c->limit = 0;
	if (!buf)
		return -EIO;
	c->limit = buf->snapshot ? espe_next_snapshot_off(&c->handle, buf) : espe_next_off(&c->handle, buf);
	c->ptr = c->handle.head % buf->size;
	return c->limit ? 0 : -EIO;
}

static void espe_output_end(struct espe_cpu *c)
{
	struct espe_buf *buf = perf_get_aux(&c->handle);
	u64 size;

	if (!buf)
		return;
	size = c->ptr - c->handle.head % buf->size;
	if (buf->snapshot)
		c->handle.head = c->ptr;
	smp_wmb();
	perf_aux_output_end(&c->handle, size);
}

/* ---- records (Arm ARM, "Statistical Profiling Extension" packets) ------------------------- */

struct espe_rec {
	u8 b[ESPE_RECORD];
	size_t n;
};

static void put_u8(struct espe_rec *r, u8 v)
{
	r->b[r->n++] = v;
}

static void put_le(struct espe_rec *r, u64 v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		put_u8(r, v >> (8 * i));
}

/* LDR/LDRB/LDRH (immediate, unsigned offset) of a general register: its data address. */
static bool espe_load_addr(struct pt_regs *regs, u64 *va)
{
	u32 insn;
	unsigned int size, rn;
	u64 base;

	if (copy_from_user_nofault(&insn, (const void __user *)regs->pc, sizeof(insn)))
		return false;
	if ((insn & 0x3fc00000) != 0x39400000)
		return false;
	size = insn >> 30;
	rn = (insn >> 5) & 31;
	base = rn == 31 ? regs->sp : regs->regs[rn];
	*va = base + (((insn >> 10) & 0xfff) << size);
	return true;
}

static void espe_record(struct espe_rec *r, struct perf_event *event, struct pt_regs *regs, int el)
{
	u64 va = 0;
	bool load = el == 0 && espe_load_addr(regs, &va);

	put_u8(r, 0xb0);				/* Address, PC (index 0) */
	put_le(r, (regs->pc & GENMASK_ULL(55, 0)) | ((u64)el << 61) | BIT_ULL(63), 8);
	put_u8(r, 0x64);				/* Context, CONTEXTIDR_EL1 */
	put_le(r, task_pid_nr(current), 4);
	if (load) {
		put_u8(r, 0x49);			/* Operation type: load/store, */
		put_u8(r, 0x00);			/* a load of a general register */
		put_u8(r, 0xb2);			/* Address, data virtual (index 2) */
		put_le(r, va & GENMASK_ULL(55, 0), 8);
	} else {
		put_u8(r, 0x48);			/* Operation type: other */
		put_u8(r, 0x00);
	}
	put_u8(r, 0x52);				/* Events, 2 bytes: retired (+ L1D access) */
	put_le(r, BIT(1) | (load ? BIT(2) : 0), 2);
	if (load) {
		put_u8(r, 0x43);			/* Data source: L1D */
		put_u8(r, 0x00);
	}
	put_u8(r, 0x99);				/* Counter: issue latency */
	put_le(r, 1, 2);
	put_u8(r, 0x98);				/* Counter: total latency */
	put_le(r, 2, 2);
	if (event->attr.config & ESPE_TS_ENABLE) {
		put_u8(r, 0x71);			/* Timestamp: ends the record */
		put_le(r, __arch_counter_get_cntvct(), 8);
	} else {
		put_u8(r, 0x01);			/* End */
	}
	while (r->n < ESPE_RECORD)
		put_u8(r, ESPE_PAD);
}

/* One sample: a record at the buffer's pointer; at the limit, the buffer-full event first. */
static void espe_sample(struct espe_cpu *c, struct pt_regs *regs)
{
	struct perf_event *event = c->event;
	struct espe_rec r = { .n = 0 };
	struct espe_buf *buf;
	int el;

	if (!regs)
		return;
	el = user_mode(regs) ? 0 : 1;
	if ((el == 0 && event->attr.exclude_user) || (el == 1 && event->attr.exclude_kernel))
		return;
	if (!c->limit)
		return;
	if (c->ptr + ESPE_RECORD > c->limit) {
		/* arm_spe_pmu_irq_handler(), PMBSR_EL1.BSC full: publish and begin again */
		espe_output_end(c);
		if (espe_output_begin(c, event)) {
			event->hw.state |= PERF_HES_STOPPED;
			c->running = false;
			return;
		}
	}
	buf = perf_get_aux(&c->handle);
	if (!buf)
		return;
	espe_record(&r, event, regs, el);
	espe_copy(buf, c->ptr, r.b, r.n);
	c->ptr += r.n;
}

static u64 espe_interval_ns(struct perf_event *event)
{
	u64 period = max_t(u64, event->hw.sample_period, ESPE_MIN_PERIOD);

	return period * max(ns_per_op, 1u);
}

static enum hrtimer_restart espe_timer_fn(struct hrtimer *t)
{
	struct espe_cpu *c = container_of(t, struct espe_cpu, timer);

	if (!c->running)
		return HRTIMER_NORESTART;
	espe_sample(c, get_irq_regs());
	if (!c->running)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(espe_interval_ns(c->event)));
	return HRTIMER_RESTART;
}

/* ---- struct pmu ----------------------------------------------------------------------------- */

static void espe_stop(struct perf_event *event, int flags)
{
	struct espe_cpu *c = this_cpu_ptr(&espe_cpus);

	if (event->hw.state & PERF_HES_STOPPED)
		return;
	c->running = false;
	hrtimer_try_to_cancel(&c->timer);
	if ((flags & PERF_EF_UPDATE) && perf_get_aux(&c->handle))
		espe_output_end(c);
	c->limit = 0;
	event->hw.state |= PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static void espe_start(struct perf_event *event, int flags)
{
	struct espe_cpu *c = this_cpu_ptr(&espe_cpus);

	event->hw.state = 0;
	if (espe_output_begin(c, event)) {
		espe_stop(event, 0);
		return;
	}
	c->event = event;
	c->running = true;
	hrtimer_start(&c->timer, ns_to_ktime(espe_interval_ns(event)), HRTIMER_MODE_REL_PINNED_HARD);
}

static int espe_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_UPTODATE | PERF_HES_STOPPED;
	if (flags & PERF_EF_START) {
		espe_start(event, PERF_EF_RELOAD);
		if (event->hw.state & PERF_HES_STOPPED)
			return -EINVAL;
	}
	return 0;
}

static void espe_del(struct perf_event *event, int flags)
{
	espe_stop(event, PERF_EF_UPDATE);
}

static void espe_read(struct perf_event *event)
{
}

static int espe_event_init(struct perf_event *event)
{
	struct perf_event_attr *attr = &event->attr;

	if (attr->type != espe_pmu.type)
		return -ENOENT;
	if (attr->exclude_idle || attr->config1 || attr->config2)
		return -EOPNOTSUPP;
	if (attr->freq)
		return -EINVAL;	/* as the driver: a sample period, not a frequency */
	if (attr->config & ~ESPE_CONFIG_VALID)
		return -EOPNOTSUPP;
	if (event->hw.sample_period < ESPE_MIN_PERIOD)
		event->hw.sample_period = ESPE_MIN_PERIOD;
	return 0;
}

static void *espe_setup_aux(struct perf_event *event, void **pages, int nr_pages, bool snapshot)
{
	struct espe_buf *buf;

	/* as the driver: two pages at least, and an even number in snapshot mode */
	if (nr_pages < 2 || (snapshot && (nr_pages & 1)))
		return NULL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	buf->pages = kcalloc(nr_pages, sizeof(void *), GFP_KERNEL);
	if (!buf->pages) {
		kfree(buf);
		return NULL;
	}
	memcpy(buf->pages, pages, nr_pages * sizeof(void *));
	buf->nr_pages = nr_pages;
	buf->size = (size_t)nr_pages << PAGE_SHIFT;
	buf->snapshot = snapshot;
	return buf;
}

static void espe_free_aux(void *data)
{
	struct espe_buf *buf = data;

	kfree(buf->pages);
	kfree(buf);
}

static struct pmu espe_pmu = {
	.module = THIS_MODULE,
	.task_ctx_nr = perf_sw_context,
	.capabilities = PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_ITRACE,
	.attr_groups = espe_attr_groups,
	.event_init = espe_event_init,
	.add = espe_add,
	.del = espe_del,
	.start = espe_start,
	.stop = espe_stop,
	.read = espe_read,
	.setup_aux = espe_setup_aux,
	.free_aux = espe_free_aux,
};

static int __init espe_init(void)
{
	int cpu, err;

	for_each_possible_cpu(cpu) {
		struct espe_cpu *c = per_cpu_ptr(&espe_cpus, cpu);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
		hrtimer_setup(&c->timer, espe_timer_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
#else
		hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		c->timer.function = espe_timer_fn;
#endif
	}
	err = perf_pmu_register(&espe_pmu, "arm_spe_0", -1);
	if (!err)
		pr_info("auxtrig_spe: an emulated Arm SPE unit, arm_spe_0 (NOT real hardware)\n");
	return err;
}

static void __exit espe_exit(void)
{
	int cpu;

	perf_pmu_unregister(&espe_pmu);
	for_each_possible_cpu(cpu)
		hrtimer_cancel(&per_cpu_ptr(&espe_cpus, cpu)->timer);
}

module_init(espe_init);
module_exit(espe_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("auxtrig lab: an emulated trace unit that looks like Arm SPE (not real hardware)");
