// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * auxtrig_pt: an emulated trace unit for the lab (tests/lab/vm), NOT real hardware.
 *
 * It registers an AUX PMU that looks to userspace like Intel PT's driver
 * (arch/x86/events/intel/pt.c): the name intel_pt, its type, format/ and caps/
 * files, max_nonturbo_ratio and tsc_art_ratio, PERF_PMU_CAP_ITRACE and, where
 * the kernel has it, PERF_PMU_CAP_AUX_PAUSE. It follows the driver's AUX output
 * protocol: perf_aux_output_begin() when the event starts on a CPU,
 * perf_aux_output_end() when it stops, the same handle across pause/resume,
 * normal mode (data published, TRUNCATED when the buffer is full: the core
 * then disables the event until the reader re-enables it) and overwrite
 * (snapshot) mode (wrapping freely, the in-buffer head reported at stop).
 *
 * What it writes is a valid Intel PT packet stream of what it knows happened,
 * and nothing else: trace is "on" between a start/resume and the next
 * pause/stop. At each switch-on: PSB+ (PSB, TSC, CBR, MODE.Exec 64-bit,
 * PSBEND), then TIP.PGE with the thread's interrupted user IP (kernel mode,
 * //k: the kernel IP the switch interrupted, the first return address on the
 * stack outside perf's, the tracing and the unit's own functions); at each
 * switch-off: TSC, then TIP.PGD. With ptw=1 a PTWRITE packet follows each
 * PGE and precedes each PGD, its payload (sequence << 32 | why << 24 | thread
 * id), the sequence counting switches over the whole unit and "why" naming
 * the switch (1 start: the event was scheduled in, enabled or reloaded; 2
 * resume: PERF_EF_RESUME; 3 pause: PERF_EF_PAUSE; 4 stop: scheduled out,
 * disabled or flushed), so a decoder can tell exactly when trace was on, on
 * which CPU, for which thread, and why it went on and off. The unit makes no
 * TNT/TIP/FUP packets: it sees no instruction. With branch=0 the decoder does
 * not walk code; with branch=1 a TIP.PGD carries its IP only where no user
 * instruction ran since the TIP.PGE (same IP, e.g. a system call), else the
 * IP is suppressed, so no decoder can be led to claim flow between the two.
 * PARTIAL and TRUNCATED are set when a switch's packets do not fit. Intel PT
 * has no samples to collide, so COLLISION is set only on request: with the
 * module parameter collision_every=N (writable at run time), every Nth
 * PERF_RECORD_AUX carries it, as an SPE or TRBE unit's would, for tests of
 * how a recorder counts it.
 *
 * The only kernel-module code of the project.
 */
#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/kallsyms.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <asm/msr.h>
#include <asm/tsc.h>

#define EPT_PT		BIT_ULL(0)
#define EPT_FUP_ON_PTW	BIT_ULL(5)
#define EPT_MTC		BIT_ULL(9)
#define EPT_TSC		BIT_ULL(10)
#define EPT_NORETCOMP	BIT_ULL(11)
#define EPT_PTW		BIT_ULL(12)
#define EPT_BRANCH	BIT_ULL(13)
#define EPT_MTC_PERIOD	(0xfULL << 14)
#define EPT_PSB_PERIOD	(0xfULL << 24)
/* What the unit accepts: cyc, pwr_evt and cyc_thresh are exposed (as the driver does) but their
 * caps say 0, so perf never asks for them. */
#define EPT_VALID	(EPT_PT | EPT_FUP_ON_PTW | EPT_MTC | EPT_TSC | EPT_NORETCOMP | EPT_PTW | EPT_BRANCH | \
			 EPT_MTC_PERIOD | EPT_PSB_PERIOD)

struct ept_buf {
	void **pages;
	int nr_pages;
	bool snapshot;
	size_t size;	/* bytes */
	size_t pos;	/* write offset in the buffer */
	size_t room;	/* normal mode: bytes the handle still has */
	size_t written;	/* normal mode: bytes since perf_aux_output_begin() */
	bool lost;	/* a switch's packets did not fit */
};

struct ept_cpu {
	struct perf_output_handle handle;
	bool on;	/* trace on: between PGE and PGD */
	bool injected;	/* the window's packets were the injected ones (they closed it) */
	u64 pge_ip;
};

static DEFINE_PER_CPU(struct ept_cpu, ept_cpus);
static atomic64_t ept_seq;
static struct pmu ept_pmu;

static unsigned int collision_every;
module_param(collision_every, uint, 0644);
MODULE_PARM_DESC(collision_every, "set PERF_AUX_FLAG_COLLISION on every Nth AUX record (0: never, as Intel PT)");
static atomic_t ept_aux_records;

/*
 * inject=HEX (kernel mode only, written before a recording starts): the
 * packets of every window from then on, after the unit's PSB+, instead of
 * its own TIP.PGE and PTWRITE: a test that walked real kernel code writes
 * the TIP.PGE, TNTs and TIP.PGD of that walk, and a decoder must find its
 * instructions. Empty: the unit's own packets.
 */
#define EPT_INJECT_MAX	2048
static u8 ept_inject[EPT_INJECT_MAX];
static int ept_inject_len;

static int ept_inject_set(const char *val, const struct kernel_param *kp)
{
	size_t n = strcspn(val, "\n");
	int len = n / 2;

	if (n % 2 || len > EPT_INJECT_MAX)
		return -EINVAL;
	WRITE_ONCE(ept_inject_len, 0);
	if (hex2bin(ept_inject, val, len))
		return -EINVAL;
	WRITE_ONCE(ept_inject_len, len);
	return 0;
}

static int ept_inject_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d bytes\n", READ_ONCE(ept_inject_len));
}

static const struct kernel_param_ops ept_inject_ops = { .set = ept_inject_set, .get = ept_inject_get };
module_param_cb(inject, &ept_inject_ops, NULL, 0644);
MODULE_PARM_DESC(inject, "hex packets for each kernel-mode window (after PSB+), instead of the unit's own");

/* ---- sysfs: as the driver exposes it ---------------------------------------------------------- */

#define EPT_FORMAT(name, spec)								\
	static ssize_t name##_show(struct device *dev, struct device_attribute *attr,	\
				   char *page)						\
	{										\
		return sysfs_emit(page, spec "\n");					\
	}										\
	static struct device_attribute format_attr_##name = __ATTR_RO(name)

EPT_FORMAT(pt, "config:0");
EPT_FORMAT(cyc, "config:1");
EPT_FORMAT(pwr_evt, "config:4");
EPT_FORMAT(fup_on_ptw, "config:5");
EPT_FORMAT(mtc, "config:9");
EPT_FORMAT(tsc, "config:10");
EPT_FORMAT(noretcomp, "config:11");
EPT_FORMAT(ptw, "config:12");
EPT_FORMAT(branch, "config:13");
EPT_FORMAT(mtc_period, "config:14-17");
EPT_FORMAT(cyc_thresh, "config:19-22");
EPT_FORMAT(psb_period, "config:24-27");

static struct attribute *ept_format_attrs[] = {
	&format_attr_pt.attr, &format_attr_cyc.attr, &format_attr_pwr_evt.attr,
	&format_attr_fup_on_ptw.attr, &format_attr_mtc.attr, &format_attr_tsc.attr,
	&format_attr_noretcomp.attr, &format_attr_ptw.attr, &format_attr_branch.attr,
	&format_attr_mtc_period.attr, &format_attr_cyc_thresh.attr, &format_attr_psb_period.attr,
	NULL,
};

static const struct attribute_group ept_format_group = {
	.name = "format",
	.attrs = ept_format_attrs,
};

/* caps/: the driver's names; the values say what this unit does (ptwrite yes, filters no). */
#define EPT_CAP(name, fmt)								\
	static ssize_t cap_##name##_show(struct device *dev, struct device_attribute *attr, \
					 char *page)					\
	{										\
		return sysfs_emit(page, fmt "\n");					\
	}										\
	static struct device_attribute cap_attr_##name = __ATTR(name, 0444, cap_##name##_show, NULL)

EPT_CAP(max_subleaf, "1");
EPT_CAP(cr3_filtering, "0");
EPT_CAP(psb_cyc, "0");
EPT_CAP(ip_filtering, "0");
EPT_CAP(mtc, "1");
EPT_CAP(ptwrite, "1");
EPT_CAP(power_event_trace, "0");
EPT_CAP(topa_output, "1");
EPT_CAP(topa_multiple_entries, "1");
EPT_CAP(single_range_output, "0");
EPT_CAP(output_subsys, "0");
EPT_CAP(payloads_lip, "0");
EPT_CAP(num_address_ranges, "0");
EPT_CAP(mtc_periods, "249");
EPT_CAP(cycle_thresholds, "0");
EPT_CAP(psb_periods, "3f");

static struct attribute *ept_caps_attrs[] = {
	&cap_attr_max_subleaf.attr, &cap_attr_cr3_filtering.attr, &cap_attr_psb_cyc.attr,
	&cap_attr_ip_filtering.attr, &cap_attr_mtc.attr, &cap_attr_ptwrite.attr,
	&cap_attr_power_event_trace.attr, &cap_attr_topa_output.attr,
	&cap_attr_topa_multiple_entries.attr, &cap_attr_single_range_output.attr,
	&cap_attr_output_subsys.attr, &cap_attr_payloads_lip.attr,
	&cap_attr_num_address_ranges.attr, &cap_attr_mtc_periods.attr,
	&cap_attr_cycle_thresholds.attr, &cap_attr_psb_periods.attr,
	NULL,
};

static const struct attribute_group ept_caps_group = {
	.name = "caps",
	.attrs = ept_caps_attrs,
};

/* The CBR the unit reports, as a ratio of 100 MHz, from the TSC's frequency. */
static unsigned int ept_ratio(void)
{
	unsigned int r = tsc_khz / 100000;

	return r ? r : 1;
}

static ssize_t max_nonturbo_ratio_show(struct device *dev, struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "%u\n", ept_ratio());
}
static DEVICE_ATTR_RO(max_nonturbo_ratio);

/* No ART: no MTC/TMA packets are made, and perf then times by TSC packets alone. */
static ssize_t tsc_art_ratio_show(struct device *dev, struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "0:0\n");
}
static DEVICE_ATTR_RO(tsc_art_ratio);

static struct attribute *ept_top_attrs[] = {
	&dev_attr_max_nonturbo_ratio.attr,
	&dev_attr_tsc_art_ratio.attr,
	NULL,
};

static const struct attribute_group ept_top_group = {
	.attrs = ept_top_attrs,
};

static const struct attribute_group *ept_attr_groups[] = {
	&ept_format_group, &ept_caps_group, &ept_top_group, NULL,
};

/* ---- the AUX buffer ----------------------------------------------------------------------------- */

static void *ept_setup_aux(struct perf_event *event, void **pages, int nr_pages, bool overwrite)
{
	int node = event->cpu == -1 ? NUMA_NO_NODE : cpu_to_node(event->cpu);
	struct ept_buf *buf;

	if (!nr_pages)
		return NULL;
	buf = kzalloc_node(sizeof(*buf), GFP_KERNEL, node);
	if (!buf)
		return NULL;
	buf->pages = kcalloc_node(nr_pages, sizeof(void *), GFP_KERNEL, node);
	if (!buf->pages) {
		kfree(buf);
		return NULL;
	}
	memcpy(buf->pages, pages, nr_pages * sizeof(void *));
	buf->nr_pages = nr_pages;
	buf->size = (size_t)nr_pages << PAGE_SHIFT;
	buf->snapshot = overwrite;
	return buf;
}

static void ept_free_aux(void *data)
{
	struct ept_buf *buf = data;

	kfree(buf->pages);
	kfree(buf);
}

/* After perf_aux_output_begin(): where to write and how much room there is. */
static void ept_buf_reset(struct ept_buf *buf, struct perf_output_handle *h)
{
	buf->pos = h->head & (buf->size - 1); /* nr_pages is a power of 2 */
	buf->room = buf->snapshot ? SIZE_MAX : h->size;
	buf->written = 0;
}

static void ept_copy(struct ept_buf *buf, const u8 *p, size_t len)
{
	while (len) {
		size_t in_page = buf->pos & (PAGE_SIZE - 1);
		size_t n = min(len, PAGE_SIZE - in_page);

		memcpy((u8 *)buf->pages[buf->pos >> PAGE_SHIFT] + in_page, p, n);
		buf->pos = (buf->pos + n) & (buf->size - 1);
		p += n;
		len -= n;
	}
}

/* One switch's packets, whole or not at all: a decoder never sees half a packet group. */
static bool ept_emit(struct ept_cpu *c, const u8 *p, size_t len)
{
	struct ept_buf *buf = perf_get_aux(&c->handle);

	if (!buf)
		return false;
	if (!buf->snapshot && len > buf->room) {
		buf->lost = true;
		return false;
	}
	ept_copy(buf, p, len);
	if (!buf->snapshot) {
		buf->room -= len;
		buf->written += len;
	}
	return true;
}

/* ---- packets (Intel SDM vol. 3, "Trace Packets and Data Types") ------------------------------- */

struct ept_pkts {
	u8 b[96];
	size_t n;
};

static void put(struct ept_pkts *k, const void *p, size_t len)
{
	memcpy(k->b + k->n, p, len);
	k->n += len;
}

static void put_u8(struct ept_pkts *k, u8 v)
{
	k->b[k->n++] = v;
}

static void put_le(struct ept_pkts *k, u64 v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		put_u8(k, v >> (8 * i));
}

static void pkt_psb_plus(struct ept_pkts *k, u64 tsc)
{
	static const u8 psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

	put(k, psb, sizeof(psb));
	put_u8(k, 0x19); /* TSC */
	put_le(k, tsc, 7);
	put_u8(k, 0x02); /* CBR */
	put_u8(k, 0x03);
	put_u8(k, ept_ratio());
	put_u8(k, 0x00);
	put_u8(k, 0x99); /* MODE.Exec: 64-bit (CS.L=1, CS.D=0) */
	put_u8(k, 0x01);
	put_u8(k, 0x02); /* PSBEND */
	put_u8(k, 0x23);
}

static void pkt_tsc(struct ept_pkts *k, u64 tsc)
{
	put_u8(k, 0x19);
	put_le(k, tsc, 7);
}

/* TIP.PGE (0x11) / TIP.PGD (0x01): IPBytes 110b, the full 8-byte IP; 000b, suppressed. */
static void pkt_tip(struct ept_pkts *k, u8 type, u64 ip, bool with_ip)
{
	if (!with_ip) {
		put_u8(k, type);
		return;
	}
	put_u8(k, (6 << 5) | type);
	put_le(k, ip, 8);
}

/* PTWRITE, 8-byte payload, no FUP (FUPonPTW is not emulated: there is no PTWRITE instruction). */
static void pkt_ptw(struct ept_pkts *k, u64 payload)
{
	put_u8(k, 0x02);
	put_u8(k, 0x32);
	put_le(k, payload, 8);
}

static u64 ept_user_ip(void)
{
	if (!current->mm || (current->flags & PF_KTHREAD))
		return 0;
	return instruction_pointer(task_pt_regs(current));
}

/*
 * Is @name a function of the machinery that switches the trace (perf's
 * overflow and aux_pause path, tracepoints, BPF, kprobes, the unit itself)
 * rather than of what the kernel was doing?
 */
static bool ept_machinery(const char *name)
{
	static const char *const prefixes[] = {
		"perf_", "__perf", "ept_", "event_", "__event", "trace_", "__trace", "bpf_", "__bpf", "tracing_",
		"kprobe", "__kprobe", "opt_pre_handler", "optimized_callback", "aggr_pre_handler", "pre_handler_kretprobe",
		"kretprobe", "__kretprobe", "arch_rethook", "rethook", "__rethook", "exc_int3", "asm_exc_int3",
		"do_int3", "ftrace", "fprobe", "__x64_sys_trace", "stack_trace", "arch_stack_walk",
	};
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * Kernel mode (//k): the IP the kernel was at when the trace switched, as
 * a real unit reports it: the first return address on the stack that is
 * not the switching machinery's (for a syscall window, the syscall path; for
 * a kprobe window, the probed function, through the int3 frame).
 */
static u64 ept_kernel_ip(void)
{
	unsigned long entries[48];
	char name[KSYM_SYMBOL_LEN];
	unsigned int n = stack_trace_save(entries, ARRAY_SIZE(entries), 0);

	for (unsigned int i = 0; i < n; i++) {
		if (within_module(entries[i], THIS_MODULE))
			continue;
		sprint_symbol_no_offset(name, entries[i]);
		/* an address kallsyms cannot name is a trampoline's (ftrace's, a kprobe's): machinery too */
		if (strncmp(name, "0x", 2) && !ept_machinery(name))
			return entries[i];
	}
	return 0;
}

/* The IP a switch of @event's trace reports: the kernel's (//k), else the thread's user IP. */
static u64 ept_ip(struct perf_event *event)
{
	if (event->attr.exclude_user && !event->attr.exclude_kernel)
		return ept_kernel_ip();
	return ept_user_ip();
}

/* Why the trace went on or off: bits 24..31 of the PTWRITE payload (a thread id fits in 22 bits). */
enum ept_why {
	EPT_WHY_START = 1,
	EPT_WHY_RESUME = 2,
	EPT_WHY_PAUSE = 3,
	EPT_WHY_STOP = 4,
};

static u64 ept_ptw_payload(enum ept_why why)
{
	return ((u64)atomic64_inc_return(&ept_seq) << 32) | ((u32)why << 24) |
	       ((u32)task_pid_nr(current) & 0xffffff);
}

static void ept_trace_on(struct ept_cpu *c, struct perf_event *event, enum ept_why why)
{
	u64 cfg = event->attr.config;
	struct ept_pkts k = { .n = 0 };

	c->pge_ip = ept_ip(event);
	pkt_psb_plus(&k, rdtsc_ordered());
	c->injected = READ_ONCE(ept_inject_len) && event->attr.exclude_user && !event->attr.exclude_kernel;
	if (c->injected) {
		ept_emit(c, k.b, k.n);
		ept_emit(c, ept_inject, READ_ONCE(ept_inject_len));
		c->on = true;
		return;
	}
	pkt_tip(&k, 0x11, c->pge_ip, c->pge_ip != 0);
	if (cfg & EPT_PTW)
		pkt_ptw(&k, ept_ptw_payload(why));
	ept_emit(c, k.b, k.n);
	c->on = true;
}

static void ept_trace_off(struct ept_cpu *c, struct perf_event *event, enum ept_why why)
{
	u64 cfg = event->attr.config, ip = ept_ip(event);
	struct ept_pkts k = { .n = 0 };
	bool with_ip = ip && (!(cfg & EPT_BRANCH) || ip == c->pge_ip);

	pkt_tsc(&k, rdtsc_ordered());
	if (c->injected) {	/* the injected packets disabled the trace already */
		ept_emit(c, k.b, k.n);
		c->on = false;
		return;
	}
	if (cfg & EPT_PTW)
		pkt_ptw(&k, ept_ptw_payload(why));
	pkt_tip(&k, 0x01, ip, with_ip);
	ept_emit(c, k.b, k.n);
	c->on = false;
}

/* perf_aux_output_end() of what was written since begin, with the driver's flags and head. */
static void ept_end(struct ept_cpu *c)
{
	struct ept_buf *buf = perf_get_aux(&c->handle);
	unsigned long size;

	if (!buf)
		return;
	if (buf->lost) {
		perf_aux_output_flag(&c->handle, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);
		buf->lost = false;
	}
	if (READ_ONCE(collision_every) && atomic_inc_return(&ept_aux_records) % READ_ONCE(collision_every) == 0)
		perf_aux_output_flag(&c->handle, PERF_AUX_FLAG_COLLISION);
	if (buf->snapshot) {
		/* as pt_event_stop(): the head is the in-buffer offset, the size the whole buffer */
		c->handle.head = buf->pos;
		size = buf->size;
	} else {
		size = buf->written;
	}
	perf_aux_output_end(&c->handle, size);
}

static bool ept_paused(struct perf_event *event)
{
#ifdef PERF_PMU_CAP_AUX_PAUSE
	return READ_ONCE(event->hw.aux_paused);
#else
	return false;
#endif
}

/* ---- struct pmu --------------------------------------------------------------------------------- */

static void ept_start(struct perf_event *event, int flags)
{
	struct ept_cpu *c = this_cpu_ptr(&ept_cpus);
	struct ept_buf *buf;

#ifdef PERF_EF_RESUME
	if (flags & PERF_EF_RESUME) {
		if (!event->hw.state && c->handle.event == event && !c->on)
			ept_trace_on(c, event, EPT_WHY_RESUME);
		return;
	}
#endif
	buf = perf_aux_output_begin(&c->handle, event);
	if (!buf) {
		event->hw.state = PERF_HES_STOPPED;
		return;
	}
	ept_buf_reset(buf, &c->handle);
	event->hw.state = 0;
	if (!ept_paused(event))
		ept_trace_on(c, event, EPT_WHY_START);
}

static void ept_stop(struct perf_event *event, int flags)
{
	struct ept_cpu *c = this_cpu_ptr(&ept_cpus);

#ifdef PERF_EF_PAUSE
	if (flags & PERF_EF_PAUSE) {
		struct ept_buf *buf;

		if (event->hw.state || c->handle.event != event || !c->on)
			return;
		ept_trace_off(c, event, EPT_WHY_PAUSE);
		buf = perf_get_aux(&c->handle);
		if (buf && !buf->snapshot) {
			/* publish the window now, as the driver's PMI would at its threshold */
			ept_end(c);
			buf = perf_aux_output_begin(&c->handle, event);
			if (!buf)
				event->hw.state = PERF_HES_STOPPED;
			else
				ept_buf_reset(buf, &c->handle);
		}
		return;
	}
#endif
	if (event->hw.state & PERF_HES_STOPPED)
		return;
	if (c->on)
		ept_trace_off(c, event, EPT_WHY_STOP);
	event->hw.state = PERF_HES_STOPPED;
	if (c->handle.event == event)
		ept_end(c);
}

static int ept_add(struct perf_event *event, int flags)
{
	struct ept_cpu *c = this_cpu_ptr(&ept_cpus);

	if (c->handle.event)
		return -EBUSY;
	if (flags & PERF_EF_START) {
		ept_start(event, 0);
		if (event->hw.state == PERF_HES_STOPPED)
			return -EINVAL;
	} else {
		event->hw.state = PERF_HES_STOPPED;
	}
	return 0;
}

static void ept_del(struct perf_event *event, int flags)
{
	ept_stop(event, PERF_EF_UPDATE);
}

static void ept_read(struct perf_event *event)
{
}

static int ept_event_init(struct perf_event *event)
{
	if (event->attr.type != ept_pmu.type)
		return -ENOENT;
	if (event->attr.config & ~EPT_VALID)
		return -EINVAL;
	return 0;
}

static struct pmu ept_pmu = {
	.module = THIS_MODULE,
	.task_ctx_nr = perf_sw_context,
	.capabilities = PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_ITRACE
#ifdef PERF_PMU_CAP_AUX_PAUSE
			| PERF_PMU_CAP_AUX_PAUSE
#endif
	,
	.attr_groups = ept_attr_groups,
	.event_init = ept_event_init,
	.add = ept_add,
	.del = ept_del,
	.start = ept_start,
	.stop = ept_stop,
	.read = ept_read,
	.setup_aux = ept_setup_aux,
	.free_aux = ept_free_aux,
};

static int __init ept_init(void)
{
	if (!boot_cpu_has(X86_FEATURE_TSC))
		return -ENODEV;
	return perf_pmu_register(&ept_pmu, "intel_pt", -1);
}

static void __exit ept_exit(void)
{
	perf_pmu_unregister(&ept_pmu);
}

module_init(ept_init);
module_exit(ept_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("auxtrig lab: an emulated trace unit that looks like Intel PT (not real hardware)");
