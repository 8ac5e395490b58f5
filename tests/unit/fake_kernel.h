/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TESTS_FAKE_KERNEL_H
#define AUXTRIG_TESTS_FAKE_KERNEL_H

/**
 * DOC: the kernel as aux_session sees it, played by AUX ring models
 *
 * &struct perf_sys over one aux_model per CPU: perf_event_open of
 * the AUX PMU's type hands out a dup of that CPU's model fd (the session
 * mmaps it for real), other events get /dev/null; ENABLE/DISABLE drive the
 * model, ID returns the model's (or a counter's) id, SET_OUTPUT checks the
 * target is a mapped AUX leader on the same CPU. One perf clock across the
 * models (fake_kernel__clock_sync()). For tests that need the recorder's
 * AUX session end to end without trace hardware.
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "auxtrig/sys/perf_sys.h"
#include "aux_model.h"

#define FAKE_KERNEL_MAX_CPUS	4
#define FAKE_KERNEL_MAX_FDS	32
#define FAKE_KERNEL_LEADER_ID	1000	/* + cpu */
#define FAKE_KERNEL_OTHER_ID	9000

struct fake_kernel_event {
	int fd;
	__u64 id;
	int cpu;
	int model;	/* index into models, -1 for other events */
	int group_fd;
	int output;
	bool enabled;
};

struct fake_kernel {
	__u32 aux_type;
	struct aux_model models[FAKE_KERNEL_MAX_CPUS];
	int cpus[FAKE_KERNEL_MAX_CPUS];
	size_t nr_models;
	struct fake_kernel_event ev[FAKE_KERNEL_MAX_FDS];
	size_t nr_ev;
	__u64 next_id;
	int model_enables;	/* ENABLE / DISABLE ioctls that reached a model */
	int model_disables;
};

/**
 * fake_kernel__init() - one model per CPU for the AUX PMU of type @aux_type.
 * @mc: model config; its cpu and id are set per CPU (id FAKE_KERNEL_LEADER_ID + cpu)
 * Return: 0 or -errno.
 */
int fake_kernel__init(struct fake_kernel *k, __u32 aux_type, const struct aux_model_config *mc,
		      const int *cpus, size_t nr_cpus);
/** fake_kernel__exit() - free the models. */
void fake_kernel__exit(struct fake_kernel *k);
/** fake_kernel__sys() - the perf system calls, played on @k. */
struct perf_sys fake_kernel__sys(struct fake_kernel *k);
/** fake_kernel__clock_sync() - every model continues from the newest time. */
void fake_kernel__clock_sync(struct fake_kernel *k);
/** fake_kernel__event() - the event behind @fd, or NULL. */
struct fake_kernel_event *fake_kernel__event(struct fake_kernel *k, int fd);
/** fake_kernel__all_closed() - the session closed every fd it opened. */
bool fake_kernel__all_closed(const struct fake_kernel *k);

#endif
