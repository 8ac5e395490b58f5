/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TESTS_FAKE_KERNEL_H
#define AUXTRIG_TESTS_FAKE_KERNEL_H

/**
 * DOC: the perf system calls, played by AUX ring models and memfds
 *
 * A &struct perf_sys (include/auxtrig/sys/perf_sys.h) for tests of the
 * recorder's phases without a kernel: perf_event_open of the AUX PMU's type
 * hands out a dup of that CPU's AUX ring model fd (aux_model.h), any other
 * event a memfd; both are mapped for real (the code under test maps them as
 * it maps a perf event's rings), each mapping recorded. ENABLE/DISABLE drive
 * the model, ID returns the model's (or a counter's) id, SET_OUTPUT checks
 * the target is mapped on the same CPU (per thread: for the same thread),
 * PAUSE_OUTPUT freezes a ring. One perf clock across the models
 * (fake_kernel__clock_sync()). With fake_kernel__init_threads() the models
 * are threads' (the AUX event opened for that pid on cpu -1), not CPUs'.
 *
 * What a test can ask afterwards: every call in order (@log), what is still
 * open or mapped (fake_kernel__nr_open(), fake_kernel__nr_mapped()), and
 * whether an fd was closed while one of its mappings was alive
 * (@closed_mapped). A test makes the @fail_at-th call (of event_open,
 * ioctl, mmap, attach_bpf, counted from 1) fail with @fail_err, to check
 * what a failure at each step leaves behind; CPUs in @offline refuse to open
 * with ENODEV, as the kernel does for an offline CPU.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "auxtrig/sys/perf_sys.h"
#include "aux_model.h"

#define FAKE_KERNEL_MAX_CPUS	4
#define FAKE_KERNEL_MAX_FDS	64
#define FAKE_KERNEL_MAX_MAPS	64
#define FAKE_KERNEL_MAX_LOG	512
#define FAKE_KERNEL_LEADER_ID	1000	/* + cpu */
#define FAKE_KERNEL_OTHER_ID	9000

/**
 * struct fake_kernel_event - one perf_event_open that succeeded.
 * @fd: the fd handed out; -2 once closed
 * @model: index into &fake_kernel.models, -1 for other events
 * @output: SET_OUTPUT target fd, -1 if none
 * @backward: attr.write_backward (an overwrite ring)
 * @paused: PAUSE_OUTPUT 1 is in force: records are dropped (@lost)
 * @lost: records fake_kernel__emit() dropped (paused, or the ring full)
 * @link_of: a BPF link from attach_bpf (not an event): the event it is on
 */
struct fake_kernel_event {
	int fd;
	__u64 id;
	__u32 type;
	__u64 config;
	pid_t pid;
	int cpu;
	int model;
	int group_fd;
	int output;
	bool enabled;
	bool backward;
	bool paused;
	__u64 lost;
	int link_of;
};

/** enum fake_kernel_op - the calls, as the log records them. */
enum fake_kernel_op {
	FAKE_OPEN,
	FAKE_IOCTL,
	FAKE_MMAP,
	FAKE_MUNMAP,
	FAKE_CLOSE,
	FAKE_ATTACH,
};

/**
 * struct fake_kernel_call - one logged call.
 * @fd: the event (for FAKE_OPEN the fd handed out, or -errno)
 * @req: FAKE_IOCTL: the request; FAKE_MMAP: the offset
 * @arg: FAKE_IOCTL: the argument (not for ID); FAKE_MMAP: the length
 * @ret: 0 or -errno (FAKE_OPEN: the fd)
 */
struct fake_kernel_call {
	enum fake_kernel_op op;
	int fd;
	unsigned long req;
	unsigned long arg;
	int ret;
};

/** struct fake_kernel_map - one live mapping. */
struct fake_kernel_map {
	void *addr;
	size_t len;
	int fd;
	off_t offset;
	int prot;
};

/* The kernel's own view of a memfd event's ring, which fake_kernel__emit() writes. */
struct fake_kernel_view {
	int fd;
	void *mem;
	size_t len;
};

struct fake_kernel {
	__u32 aux_type;
	struct aux_model models[FAKE_KERNEL_MAX_CPUS];
	int cpus[FAKE_KERNEL_MAX_CPUS];	/* per thread: the thread of each model */
	size_t nr_models;
	bool per_thread;
	struct fake_kernel_event ev[FAKE_KERNEL_MAX_FDS];
	size_t nr_ev;
	__u64 next_id;
	int model_enables;	/* ENABLE / DISABLE ioctls that reached a model */
	int model_disables;
	int model_flushes;	/* PERIOD ioctls that flushed a running model (__perf_event_period()) */
	/*
	 * The hardware runs between two PERIOD flushes: after each flush of a
	 * model, it writes @flush_write bytes of @flush_byte (0: nothing).
	 */
	size_t flush_write;
	unsigned char flush_byte;
	struct fake_kernel_map maps[FAKE_KERNEL_MAX_MAPS];
	struct fake_kernel_view views[FAKE_KERNEL_MAX_FDS];
	struct fake_kernel_call log[FAKE_KERNEL_MAX_LOG];
	size_t nr_log;
	unsigned int calls;	/* event_open, ioctl, mmap, attach_bpf so far */
	unsigned int fail_at;	/* that call fails (1-based); 0: none */
	int fail_err;		/* with this -errno (0: -EIO) */
	__u64 offline;		/* bit N: CPU N is offline (ENODEV) */
	int closed_mapped;	/* fds closed while a mapping of theirs was alive */
	int bad_calls;		/* calls on fds never opened or already closed */
};

/**
 * fake_kernel__init() - one model per CPU for the AUX PMU of type @aux_type.
 * @mc: model config; its cpu and id are set per CPU (id FAKE_KERNEL_LEADER_ID + cpu).
 *      NULL: no models (no AUX PMU; every event is a memfd).
 * Return: 0 or -errno.
 */
int fake_kernel__init(struct fake_kernel *k, __u32 aux_type, const struct aux_model_config *mc,
		      const int *cpus, size_t nr_cpus);
/**
 * fake_kernel__init_threads() - one model per thread @tids[i]: the AUX
 * event opened for that pid on cpu -1 (id FAKE_KERNEL_LEADER_ID + i; its
 * records name the thread, on CPU 0).
 */
int fake_kernel__init_threads(struct fake_kernel *k, __u32 aux_type, const struct aux_model_config *mc,
			      const pid_t *tids, size_t nr);
/** fake_kernel__exit() - close what is still open, unmap what is still mapped, free the models. */
void fake_kernel__exit(struct fake_kernel *k);
/** fake_kernel__sys() - the perf system calls, played on @k. */
struct perf_sys fake_kernel__sys(struct fake_kernel *k);
/** fake_kernel__clock_sync() - every model continues from the newest time. */
void fake_kernel__clock_sync(struct fake_kernel *k);
/** fake_kernel__event() - the open event behind @fd, or NULL. */
struct fake_kernel_event *fake_kernel__event(struct fake_kernel *k, int fd);
/** fake_kernel__all_closed() - every fd handed out was closed. */
bool fake_kernel__all_closed(const struct fake_kernel *k);
/** fake_kernel__nr_open() - fds handed out and not closed. */
size_t fake_kernel__nr_open(const struct fake_kernel *k);
/** fake_kernel__nr_mapped() - mappings not unmapped. */
size_t fake_kernel__nr_mapped(const struct fake_kernel *k);
/**
 * fake_kernel__emit() - the kernel writes record @rec (@rec->size bytes)
 * into the ring of event @fd (or of its SET_OUTPUT target): forward, or
 * downwards for a write_backward event. Dropped and counted if the ring is
 * paused, or (forward) full. Return: 0, -EAGAIN dropped, -EINVAL no ring.
 */
int fake_kernel__emit(struct fake_kernel *k, int fd, const struct perf_event_header *rec);
/** fake_kernel__calls_of() - logged calls of @op on @fd (-1: any fd) with request @req (0: any). */
size_t fake_kernel__calls_of(const struct fake_kernel *k, enum fake_kernel_op op, int fd, unsigned long req);

#endif
