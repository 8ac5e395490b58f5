/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PERF_SYS_H
#define AUXTRIG_PERF_SYS_H

/*
 * sys/ layer: the perf system calls, one table (user/sys/perf_sys.c); everything
 * that opens, switches or maps a perf event goes through it.
 */

/**
 * DOC: the perf system calls, one seam
 *
 * The system layer's one door to perf events: perf_event_open(2), the perf
 * ioctls (ENABLE, DISABLE, ID, SET_OUTPUT, SET_BPF, PAUSE_OUTPUT, ...), the
 * mmaps and munmaps of the event rings, close, and a BPF program's perf
 * link. Everything above that opens, switches or maps a perf event
 * (record/cpu_events.c, record/aux_session.c with data_ring.c and
 * aux_ring.c, record/gate.c's breakpoints, record/hw_trace.c's probe,
 * sys/probe.c) calls the perf_sys__*() functions below with a
 * &struct perf_sys, and never the system calls themselves.
 *
 * &perf_sys__kernel is the running kernel. Tests pass their own table: the
 * AUX ring model (tests/unit/fake_kernel.c) plays the kernel of PMUs this
 * machine lacks and counts what is left open or mapped after a failure.
 * A NULL table, and any NULL member of a table, is the running kernel's.
 */

#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/**
 * struct perf_sys - the kernel, as its perf users see it.
 * @event_open: perf_event_open(2); an fd or -errno.
 * @ioctl: ioctl(2) on an event fd (@arg: the ioctl's argument, a pointer
 *         for PERF_EVENT_IOC_ID); 0 or -errno.
 * @mmap: map @len bytes of @fd's rings at @offset with @prot (MAP_SHARED);
 *        the address in *@addr, 0 or -errno.
 * @munmap: undo a @mmap.
 * @close: close an fd from @event_open.
 * @poll_fd: the fd that polls readable when @fd's rings have data; NULL =
 *           @fd itself. A model whose "event fd" is a memfd, which epoll
 *           refuses, hands out another one.
 * @attach_bpf: attach BPF program @prog_fd to event @fd with @cookie as a
 *              perf link (bpf_link_create(BPF_PERF_EVENT), not SET_BPF:
 *              only a link carries a cookie); the link's fd or -errno.
 * @kernel: this table is the running kernel (PMU types from a --sysfs-root
 *          fixture must match /sys before opening).
 * @ctx: passed to each.
 */
struct perf_sys {
	int (*event_open)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags,
			  void *ctx);
	int (*ioctl)(int fd, unsigned long req, unsigned long arg, void *ctx);
	int (*mmap)(int fd, size_t len, int prot, off_t offset, void **addr, void *ctx);
	void (*munmap)(void *addr, size_t len, void *ctx);
	void (*close)(int fd, void *ctx);
	int (*poll_fd)(int fd, void *ctx);
	int (*attach_bpf)(int fd, int prog_fd, __u64 cookie, void *ctx);
	bool kernel;
	void *ctx;
};

/** perf_sys__kernel - the running kernel. */
extern const struct perf_sys perf_sys__kernel;

/** perf_sys__is_kernel() - does @sys (NULL: the kernel's) talk to the running kernel? */
bool perf_sys__is_kernel(const struct perf_sys *sys);

/** perf_sys__event_open() - perf_event_open(2) through @sys. Return: the fd, or -errno. */
int perf_sys__event_open(const struct perf_sys *sys, struct perf_event_attr *attr, pid_t pid, int cpu,
			 int group_fd, unsigned long flags);

/** perf_sys__ioctl() - a perf ioctl through @sys. Return: 0 or -errno. */
int perf_sys__ioctl(const struct perf_sys *sys, int fd, unsigned long req, unsigned long arg);

/** perf_sys__enable() - PERF_EVENT_IOC_ENABLE (@enable) or _DISABLE. Return: 0 or -errno. */
int perf_sys__enable(const struct perf_sys *sys, int fd, bool enable);

/** perf_sys__id() - PERF_EVENT_IOC_ID: the event's id in *@id. Return: 0 or -errno. */
int perf_sys__id(const struct perf_sys *sys, int fd, __u64 *id);

/** perf_sys__set_output() - PERF_EVENT_IOC_SET_OUTPUT: @fd's records into @out_fd's ring. */
int perf_sys__set_output(const struct perf_sys *sys, int fd, int out_fd);

/** perf_sys__pause_output() - PERF_EVENT_IOC_PAUSE_OUTPUT: freeze (@pause) or resume @fd's ring. */
int perf_sys__pause_output(const struct perf_sys *sys, int fd, bool pause);

/** perf_sys__set_bpf() - PERF_EVENT_IOC_SET_BPF: run @prog_fd at @fd's events (no cookie). */
int perf_sys__set_bpf(const struct perf_sys *sys, int fd, int prog_fd);

/**
 * perf_sys__mmap() - map @len bytes of @fd at @offset, MAP_SHARED with @prot
 * (PROT_READ alone is what selects a ring's overwrite mode).
 * Return: 0 with the address in *@addr, or -errno.
 */
int perf_sys__mmap(const struct perf_sys *sys, int fd, size_t len, int prot, off_t offset, void **addr);

/** perf_sys__munmap() - undo perf_sys__mmap(); NULL @addr is a no-op. */
void perf_sys__munmap(const struct perf_sys *sys, void *addr, size_t len);

/** perf_sys__close() - close an fd from perf_sys__event_open(); negative @fd is a no-op. */
void perf_sys__close(const struct perf_sys *sys, int fd);

/** perf_sys__poll_fd() - the fd to epoll for @fd's rings. */
int perf_sys__poll_fd(const struct perf_sys *sys, int fd);

/**
 * perf_sys__attach_bpf() - a perf link of BPF program @prog_fd on event @fd
 * with @cookie (bpf_get_attach_cookie()); closing the link detaches it.
 * Return: the link's fd, or -errno.
 */
int perf_sys__attach_bpf(const struct perf_sys *sys, int fd, int prog_fd, __u64 cookie);

#endif
