// SPDX-License-Identifier: BSD-2-Clause
/*
 * The smallest programs that prove which BPF attach types load, attach and
 * fire on this kernel (`auxtrig probe`). Every program is optional ("?"):
 * user/sys/probe.c enables exactly one per load, so one failure never hides
 * another. Each counts its hits from our own process in .bss.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set before load: only our own process counts, so other tasks' syscalls don't. */
const volatile __u32 target_tgid;
/* getpid's syscall number on this arch, for the raw sys_enter tracepoint (all syscalls). */
const volatile __s64 getpid_nr = -1;

__u64 tracepoint_hits;
__u64 raw_tp_hits;
__u64 uprobe_hits;
__u64 kprobe_hits;
__u64 fentry_hits;
__u64 ringbuf_drops;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} probe_events SEC(".maps");

static __always_inline int from_target(void)
{
	return target_tgid && (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

SEC("?tracepoint/syscalls/sys_enter_getpid")
int count_sys_enter_getpid(void *ctx)
{
	if (from_target())
		__sync_fetch_and_add(&tracepoint_hits, 1);
	return 0;
}

SEC("?raw_tp/sys_enter")
int BPF_PROG(count_raw_sys_enter, struct pt_regs *regs, long id)
{
	if (from_target() && id == getpid_nr)
		__sync_fetch_and_add(&raw_tp_hits, 1);
	return 0;
}

/* Attached by user/sys/probe.c to probe_uprobe_target() in our own binary. */
SEC("?uprobe")
int count_uprobe_target(void *ctx)
{
	if (from_target())
		__sync_fetch_and_add(&uprobe_hits, 1);
	return 0;
}

/*
 * Attached by user/sys/probe.c to do_sys_openat2(), the common path of open(2)
 * and openat(2) on every architecture, present in BTF (unlike the per-arch
 * __x64_sys_getpid wrapper, which fentry needs and BTF lacks).
 */
SEC("?kprobe")
int count_kprobe_openat2(void *ctx)
{
	if (from_target())
		__sync_fetch_and_add(&kprobe_hits, 1);
	return 0;
}

/* Target (do_sys_openat2) set by user/sys/probe.c with bpf_program__set_attach_target(). */
SEC("?fentry")
int count_fentry_openat2(void *ctx)
{
	if (from_target())
		__sync_fetch_and_add(&fentry_hits, 1);
	return 0;
}

/* One record per getpid() of ours, read back by user space through the ring buffer. */
SEC("?tracepoint/syscalls/sys_enter_getpid")
int ringbuf_sys_enter_getpid(void *ctx)
{
	__u32 *rec;

	if (!from_target())
		return 0;
	rec = bpf_ringbuf_reserve(&probe_events, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&ringbuf_drops, 1);
		return 0;
	}
	*rec = target_tgid;
	bpf_ringbuf_submit(rec, 0);
	return 0;
}
