// SPDX-License-Identifier: BSD-2-Clause
/* The kernel side of aux_session's calls, played by AUX ring models (see fake_kernel.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/perf_event.h>

#include "fake_kernel.h"

int fake_kernel__init(struct fake_kernel *k, __u32 aux_type, const struct aux_model_config *mc,
		      const int *cpus, size_t nr_cpus)
{
	memset(k, 0, sizeof(*k));
	if (nr_cpus > FAKE_KERNEL_MAX_CPUS)
		return -E2BIG;
	k->aux_type = aux_type;
	k->next_id = FAKE_KERNEL_OTHER_ID;
	for (size_t i = 0; i < nr_cpus; i++) {
		struct aux_model_config c = *mc;
		int err;

		c.cpu = cpus[i];
		c.id = FAKE_KERNEL_LEADER_ID + cpus[i];
		err = aux_model__init(&k->models[i], &c);
		if (err) {
			fake_kernel__exit(k);
			return err;
		}
		k->cpus[i] = cpus[i];
		k->nr_models++;
	}
	return 0;
}

void fake_kernel__exit(struct fake_kernel *k)
{
	for (size_t i = 0; i < k->nr_models; i++)
		aux_model__exit(&k->models[i]);
	k->nr_models = 0;
}

void fake_kernel__clock_sync(struct fake_kernel *k)
{
	uint64_t now = 0;

	for (size_t i = 0; i < k->nr_models; i++)
		if (k->models[i].time > now)
			now = k->models[i].time;
	for (size_t i = 0; i < k->nr_models; i++)
		k->models[i].time = now;
}

struct fake_kernel_event *fake_kernel__event(struct fake_kernel *k, int fd)
{
	for (size_t i = 0; i < k->nr_ev; i++)
		if (k->ev[i].fd == fd)
			return &k->ev[i];
	return NULL;
}

static int fake_kernel__open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			     unsigned long flags, void *ctx)
{
	struct fake_kernel *k = ctx;
	struct fake_kernel_event *e;
	int model = -1;

	(void)pid;
	(void)flags;
	if (k->nr_ev >= FAKE_KERNEL_MAX_FDS || attr->size != 128)
		return -EINVAL;
	e = &k->ev[k->nr_ev];
	if (attr->type == k->aux_type) {
		for (size_t i = 0; i < k->nr_models; i++)
			if (k->cpus[i] == cpu)
				model = i;
		if (model < 0 || group_fd != -1)
			return -EINVAL;
		e->fd = dup(aux_model__fd(&k->models[model]));
		e->id = k->models[model].cfg.id;
	} else {
		e->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		e->id = k->next_id++;
	}
	if (e->fd < 0)
		return -errno;
	e->cpu = cpu;
	e->model = model;
	e->group_fd = group_fd;
	e->output = -1;
	e->enabled = !attr->disabled;
	k->nr_ev++;
	return e->fd;
}

static int fake_kernel__ioctl(int fd, unsigned long req, unsigned long arg, void *ctx)
{
	struct fake_kernel *k = ctx;
	struct fake_kernel_event *e = fake_kernel__event(k, fd), *t;

	if (!e)
		return -EBADF;
	switch (req) {
	case PERF_EVENT_IOC_ID:
		*(__u64 *)arg = e->id;
		return 0;
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
		e->enabled = req == PERF_EVENT_IOC_ENABLE;
		if (e->model >= 0) {
			if (e->enabled) {
				k->model_enables++;
				aux_model__enable(&k->models[e->model]);
			} else {
				k->model_disables++;
				aux_model__disable(&k->models[e->model]);
			}
			fake_kernel__clock_sync(k);
		}
		return 0;
	case PERF_EVENT_IOC_SET_OUTPUT:
		t = fake_kernel__event(k, (int)arg);
		if (!t || t->cpu != e->cpu || t->model < 0)
			return -EINVAL;
		e->output = (int)arg;
		return 0;
	}
	return -ENOTTY;
}

static void fake_kernel__close(int fd, void *ctx)
{
	struct fake_kernel_event *e = fake_kernel__event(ctx, fd);

	close(fd);
	if (e)
		e->fd = -2;
}

struct perf_sys fake_kernel__sys(struct fake_kernel *k)
{
	struct perf_sys ops = {
		.event_open = fake_kernel__open, .ioctl = fake_kernel__ioctl, .close = fake_kernel__close, .ctx = k,
	};

	return ops;
}

bool fake_kernel__all_closed(const struct fake_kernel *k)
{
	for (size_t i = 0; i < k->nr_ev; i++)
		if (k->ev[i].fd != -2)
			return false;
	return true;
}
