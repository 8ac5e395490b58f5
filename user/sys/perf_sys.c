// SPDX-License-Identifier: BSD-2-Clause
/* The perf system calls, behind one table (perf_sys.h). */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "auxtrig/sys/perf_sys.h"

/* ---- the running kernel ---------------------------------------------------- */

static int kernel_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags,
			     void *ctx)
{
	long fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : (int)fd;
}

static int kernel_ioctl(int fd, unsigned long req, unsigned long arg, void *ctx)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static int kernel_mmap(int fd, size_t len, int prot, off_t offset, void **addr, void *ctx)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, offset);

	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

static void kernel_munmap(void *addr, size_t len, void *ctx)
{
	munmap(addr, len);
}

static void kernel_close(int fd, void *ctx)
{
	close(fd);
}

static int kernel_attach_bpf(int fd, int prog_fd, __u64 cookie, void *ctx)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event.bpf_cookie = cookie);
	int link = bpf_link_create(prog_fd, fd, BPF_PERF_EVENT, &opts);

	return link < 0 ? -errno : link;
}

const struct perf_sys perf_sys__kernel = {
	.event_open = kernel_event_open,
	.ioctl = kernel_ioctl,
	.mmap = kernel_mmap,
	.munmap = kernel_munmap,
	.close = kernel_close,
	.attach_bpf = kernel_attach_bpf,
	.kernel = true,
};

/* ---- through a table: a NULL table or member is the kernel's ---------------- */

static const struct perf_sys *perf_sys__or_kernel(const struct perf_sys *sys)
{
	return sys ?: &perf_sys__kernel;
}

bool perf_sys__is_kernel(const struct perf_sys *sys)
{
	return perf_sys__or_kernel(sys)->kernel;
}

int perf_sys__event_open(const struct perf_sys *sys, struct perf_event_attr *attr, pid_t pid, int cpu,
			 int group_fd, unsigned long flags)
{
	sys = perf_sys__or_kernel(sys);
	if (!sys->event_open)
		return kernel_event_open(attr, pid, cpu, group_fd, flags, NULL);
	return sys->event_open(attr, pid, cpu, group_fd, flags, sys->ctx);
}

int perf_sys__ioctl(const struct perf_sys *sys, int fd, unsigned long req, unsigned long arg)
{
	sys = perf_sys__or_kernel(sys);
	if (!sys->ioctl)
		return kernel_ioctl(fd, req, arg, NULL);
	return sys->ioctl(fd, req, arg, sys->ctx);
}

int perf_sys__enable(const struct perf_sys *sys, int fd, bool enable)
{
	return perf_sys__ioctl(sys, fd, enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

int perf_sys__id(const struct perf_sys *sys, int fd, __u64 *id)
{
	return perf_sys__ioctl(sys, fd, PERF_EVENT_IOC_ID, (unsigned long)id);
}

int perf_sys__set_output(const struct perf_sys *sys, int fd, int out_fd)
{
	return perf_sys__ioctl(sys, fd, PERF_EVENT_IOC_SET_OUTPUT, out_fd);
}

int perf_sys__pause_output(const struct perf_sys *sys, int fd, bool pause)
{
	return perf_sys__ioctl(sys, fd, PERF_EVENT_IOC_PAUSE_OUTPUT, pause);
}

int perf_sys__set_bpf(const struct perf_sys *sys, int fd, int prog_fd)
{
	return perf_sys__ioctl(sys, fd, PERF_EVENT_IOC_SET_BPF, prog_fd);
}

int perf_sys__mmap(const struct perf_sys *sys, int fd, size_t len, int prot, off_t offset, void **addr)
{
	sys = perf_sys__or_kernel(sys);
	if (!sys->mmap)
		return kernel_mmap(fd, len, prot, offset, addr, NULL);
	return sys->mmap(fd, len, prot, offset, addr, sys->ctx);
}

void perf_sys__munmap(const struct perf_sys *sys, void *addr, size_t len)
{
	if (!addr)
		return;
	sys = perf_sys__or_kernel(sys);
	if (!sys->munmap)
		kernel_munmap(addr, len, NULL);
	else
		sys->munmap(addr, len, sys->ctx);
}

void perf_sys__close(const struct perf_sys *sys, int fd)
{
	if (fd < 0)
		return;
	sys = perf_sys__or_kernel(sys);
	if (!sys->close)
		kernel_close(fd, NULL);
	else
		sys->close(fd, sys->ctx);
}

int perf_sys__poll_fd(const struct perf_sys *sys, int fd)
{
	sys = perf_sys__or_kernel(sys);
	return sys->poll_fd ? sys->poll_fd(fd, sys->ctx) : fd;
}

int perf_sys__attach_bpf(const struct perf_sys *sys, int fd, int prog_fd, __u64 cookie)
{
	sys = perf_sys__or_kernel(sys);
	if (!sys->attach_bpf)
		return kernel_attach_bpf(fd, prog_fd, cookie, NULL);
	return sys->attach_bpf(fd, prog_fd, cookie, sys->ctx);
}
