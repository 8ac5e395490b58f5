// SPDX-License-Identifier: BSD-2-Clause
/* The perf system calls, played by AUX ring models and memfds (see fake_kernel.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
	for (size_t i = 0; mc && i < nr_cpus; i++) {
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

int fake_kernel__init_threads(struct fake_kernel *k, __u32 aux_type, const struct aux_model_config *mc,
			      const pid_t *tids, size_t nr)
{
	memset(k, 0, sizeof(*k));
	if (nr > FAKE_KERNEL_MAX_CPUS)
		return -E2BIG;
	k->aux_type = aux_type;
	k->next_id = FAKE_KERNEL_OTHER_ID;
	k->per_thread = true;
	for (size_t i = 0; i < nr; i++) {
		struct aux_model_config c = *mc;
		int err;

		c.cpu = 0;
		c.pid = c.tid = tids[i];
		c.id = FAKE_KERNEL_LEADER_ID + i;
		err = aux_model__init(&k->models[i], &c);
		if (err) {
			fake_kernel__exit(k);
			return err;
		}
		k->cpus[i] = tids[i];
		k->nr_models++;
	}
	return 0;
}

void fake_kernel__exit(struct fake_kernel *k)
{
	for (size_t i = 0; i < FAKE_KERNEL_MAX_MAPS; i++)
		if (k->maps[i].addr)
			munmap(k->maps[i].addr, k->maps[i].len);
	memset(k->maps, 0, sizeof(k->maps));
	for (size_t i = 0; i < FAKE_KERNEL_MAX_FDS; i++)
		if (k->views[i].mem)
			munmap(k->views[i].mem, k->views[i].len);
	memset(k->views, 0, sizeof(k->views));
	for (size_t i = 0; i < k->nr_ev; i++)
		if (k->ev[i].fd >= 0)
			close(k->ev[i].fd);
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
	if (fd < 0)
		return NULL;
	for (size_t i = 0; i < k->nr_ev; i++)
		if (k->ev[i].fd == fd)
			return &k->ev[i];
	return NULL;
}

static void fake_kernel__log(struct fake_kernel *k, enum fake_kernel_op op, int fd, unsigned long req,
			     unsigned long arg, int ret)
{
	if (k->nr_log < FAKE_KERNEL_MAX_LOG)
		k->log[k->nr_log++] = (struct fake_kernel_call){ op, fd, req, arg, ret };
}

/* The injected failure, if this call is the one. */
static int fake_kernel__fault(struct fake_kernel *k)
{
	if (++k->calls != k->fail_at)
		return 0;
	return k->fail_err ?: -EIO;
}

/* A free slot: a closed event's is taken again, as the kernel reuses fds. */
static struct fake_kernel_event *fake_kernel__slot(struct fake_kernel *k)
{
	for (size_t i = 0; i < k->nr_ev; i++)
		if (k->ev[i].fd == -2)
			return &k->ev[i];
	return k->nr_ev < FAKE_KERNEL_MAX_FDS ? &k->ev[k->nr_ev] : NULL;
}

static int fake_kernel__open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			     unsigned long flags, void *ctx)
{
	struct fake_kernel *k = ctx;
	struct fake_kernel_event *e = fake_kernel__slot(k);
	int model = -1, fd = -1, err;

	(void)flags;
	err = fake_kernel__fault(k);
	if (!err && attr->size != 128)
		err = -EINVAL;
	if (!err && cpu >= 0 && cpu < 64 && (k->offline & (1ull << cpu)))
		err = -ENODEV;
	if (!err && group_fd >= 0 && !fake_kernel__event(k, group_fd))
		err = -EBADF;
	if (!err && !e)
		err = -EMFILE;
	if (!err && attr->type == k->aux_type && k->nr_models) {
		for (size_t i = 0; i < k->nr_models; i++)
			if (k->per_thread ? cpu == -1 && k->cpus[i] == pid : k->cpus[i] == cpu)
				model = i;
		if (model < 0 || group_fd != -1)
			err = -EINVAL;
		else
			fd = dup(aux_model__fd(&k->models[model]));
	} else if (!err) {
		fd = memfd_create("fake_perf_event", MFD_CLOEXEC);
	}
	if (!err && fd < 0)
		err = -errno;
	if (err) {
		fake_kernel__log(k, FAKE_OPEN, err, attr->type, attr->config, err);
		return err;
	}
	if (e == &k->ev[k->nr_ev])
		k->nr_ev++;
	*e = (struct fake_kernel_event){
		.fd = fd,
		.id = model >= 0 ? k->models[model].cfg.id : k->next_id++,
		.type = attr->type,
		.config = attr->config,
		.pid = pid,
		.cpu = cpu,
		.model = model,
		.group_fd = group_fd,
		.output = -1,
		.enabled = !attr->disabled,
		.backward = attr->write_backward,
		.link_of = -1,
	};
	fake_kernel__log(k, FAKE_OPEN, fd, attr->type, attr->config, fd);
	return fd;
}

static bool fake_kernel__has_ring(const struct fake_kernel *k, int fd)
{
	for (size_t i = 0; i < FAKE_KERNEL_MAX_MAPS; i++)
		if (k->maps[i].addr && k->maps[i].fd == fd && k->maps[i].offset == 0)
			return true;
	return false;
}

static int fake_kernel__do_ioctl(struct fake_kernel *k, struct fake_kernel_event *e, unsigned long req,
				 unsigned long arg)
{
	struct fake_kernel_event *t;

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
	case PERF_EVENT_IOC_PERIOD:
		/*
		 * __perf_event_period(): a running event is stopped with
		 * PERF_EF_UPDATE and started again at once (the driver ends its
		 * handle and begins the next); the period must be non-zero.
		 */
		if (!arg || !*(const __u64 *)arg)
			return -EINVAL;
		if (e->model >= 0 && e->enabled) {
			struct aux_model *m = &k->models[e->model];

			k->model_flushes++;
			aux_model__output_end(m, 0);
			if (k->flush_write) {
				unsigned char *b = malloc(k->flush_write);

				if (!b)
					return -ENOMEM;
				memset(b, k->flush_byte, k->flush_write);
				aux_model__hw_write(m, b, k->flush_write);
				free(b);
			}
			fake_kernel__clock_sync(k);
		}
		return 0;
	case PERF_EVENT_IOC_SET_OUTPUT:
		/* perf_event_set_output(): same CPU (cpu -1: same task), and the target has a ring */
		t = fake_kernel__event(k, (int)arg);
		if (!t || t->cpu != e->cpu || (e->cpu == -1 && t->pid != e->pid) || !fake_kernel__has_ring(k, t->fd))
			return -EINVAL;
		e->output = (int)arg;
		return 0;
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		if (!fake_kernel__has_ring(k, e->fd))
			return -EINVAL;
		e->paused = arg;
		return 0;
	}
	return -ENOTTY;
}

static int fake_kernel__ioctl(int fd, unsigned long req, unsigned long arg, void *ctx)
{
	struct fake_kernel *k = ctx;
	struct fake_kernel_event *e = fake_kernel__event(k, fd);
	int err = fake_kernel__fault(k);

	if (!err && !e) {
		k->bad_calls++;
		err = -EBADF;
	}
	if (!err)
		err = fake_kernel__do_ioctl(k, e, req, arg);
	fake_kernel__log(k, FAKE_IOCTL, fd, req, req == PERF_EVENT_IOC_ID || req == PERF_EVENT_IOC_PERIOD ? 0 : arg, err);
	return err;
}

static struct fake_kernel_view *fake_kernel__view(struct fake_kernel *k, int fd, size_t len)
{
	struct fake_kernel_view *views = k->views;

	for (size_t i = 0; i < FAKE_KERNEL_MAX_FDS; i++)
		if (views[i].mem && views[i].fd == fd)
			return &views[i];
	for (size_t i = 0; i < FAKE_KERNEL_MAX_FDS; i++) {
		if (views[i].mem)
			continue;
		views[i].mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (views[i].mem == MAP_FAILED) {
			views[i].mem = NULL;
			return NULL;
		}
		views[i].fd = fd;
		views[i].len = len;
		return &views[i];
	}
	return NULL;
}

static int fake_kernel__mmap(int fd, size_t len, int prot, off_t offset, void **addr, void *ctx)
{
	struct fake_kernel *k = ctx;
	struct fake_kernel_event *e = fake_kernel__event(k, fd);
	struct fake_kernel_map *m = NULL;
	struct stat st;
	int err = fake_kernel__fault(k);

	if (!err && !e) {
		k->bad_calls++;
		err = -EBADF;
	}
	for (size_t i = 0; !err && !m && i < FAKE_KERNEL_MAX_MAPS; i++)
		if (!k->maps[i].addr)
			m = &k->maps[i];
	if (!err && !m)
		err = -ENOMEM;
	/* a memfd event's pages appear at its first mmap, zeroed (the user page, then the data) */
	if (!err && e->model < 0 && !fstat(fd, &st) && st.st_size < offset + (off_t)len &&
	    ftruncate(fd, offset + len))
		err = -errno;
	if (!err && e->model < 0 && offset == 0 && !fake_kernel__view(k, fd, len))
		err = -ENOMEM;
	if (!err) {
		*addr = mmap(NULL, len, prot, MAP_SHARED, fd, offset);
		if (*addr == MAP_FAILED)
			err = -errno;
	}
	fake_kernel__log(k, FAKE_MMAP, fd, offset, len, err);
	if (err)
		return err;
	*m = (struct fake_kernel_map){ *addr, len, fd, offset, prot };
	if (e->model < 0 && offset == 0) {
		struct perf_event_mmap_page *pc = fake_kernel__view(k, fd, len)->mem;
		size_t page = sysconf(_SC_PAGESIZE);

		pc->data_offset = page;
		pc->data_size = len - page;
	}
	return 0;
}

static void fake_kernel__munmap(void *addr, size_t len, void *ctx)
{
	struct fake_kernel *k = ctx;

	for (size_t i = 0; i < FAKE_KERNEL_MAX_MAPS; i++) {
		if (k->maps[i].addr != addr)
			continue;
		fake_kernel__log(k, FAKE_MUNMAP, k->maps[i].fd, k->maps[i].offset, len, len == k->maps[i].len ? 0 : -EINVAL);
		munmap(addr, k->maps[i].len);
		memset(&k->maps[i], 0, sizeof(k->maps[i]));
		return;
	}
	k->bad_calls++;
	fake_kernel__log(k, FAKE_MUNMAP, -1, 0, len, -EINVAL);
}

static void fake_kernel__close(int fd, void *ctx)
{
	struct fake_kernel *k = ctx;
	struct fake_kernel_event *e = fake_kernel__event(k, fd);

	fake_kernel__log(k, FAKE_CLOSE, fd, 0, 0, e ? 0 : -EBADF);
	if (e && fake_kernel__has_ring(k, fd))
		k->closed_mapped++;
	close(fd);
	if (e)
		e->fd = -2;
}

static int fake_kernel__attach_bpf(int fd, int prog_fd, __u64 cookie, void *ctx)
{
	struct fake_kernel *k = ctx;
	struct fake_kernel_event *e = fake_kernel__slot(k);
	int err = fake_kernel__fault(k), link = -1;

	if (!err && !fake_kernel__event(k, fd))
		err = -EBADF;
	if (!err && !e)
		err = -EMFILE;
	if (!err) {
		link = open("/dev/null", O_RDONLY | O_CLOEXEC); /* the "link" */
		if (link < 0)
			err = -errno;
	}
	fake_kernel__log(k, FAKE_ATTACH, fd, prog_fd, cookie, err ?: link);
	if (err)
		return err;
	if (e == &k->ev[k->nr_ev])
		k->nr_ev++;
	*e = (struct fake_kernel_event){ .fd = link, .cpu = -1, .model = -1, .group_fd = -1, .output = -1,
					 .link_of = fd, .id = cookie };
	return link;
}

struct perf_sys fake_kernel__sys(struct fake_kernel *k)
{
	struct perf_sys sys = {
		.event_open = fake_kernel__open,
		.ioctl = fake_kernel__ioctl,
		.mmap = fake_kernel__mmap,
		.munmap = fake_kernel__munmap,
		.close = fake_kernel__close,
		.attach_bpf = fake_kernel__attach_bpf,
		.ctx = k,
	};

	return sys;
}

bool fake_kernel__all_closed(const struct fake_kernel *k)
{
	return fake_kernel__nr_open(k) == 0;
}

size_t fake_kernel__nr_open(const struct fake_kernel *k)
{
	size_t n = 0;

	for (size_t i = 0; i < k->nr_ev; i++)
		n += k->ev[i].fd != -2;
	return n;
}

size_t fake_kernel__nr_mapped(const struct fake_kernel *k)
{
	size_t n = 0;

	for (size_t i = 0; i < FAKE_KERNEL_MAX_MAPS; i++)
		n += k->maps[i].addr != NULL;
	return n;
}

int fake_kernel__emit(struct fake_kernel *k, int fd, const struct perf_event_header *rec)
{
	struct fake_kernel_event *e = fake_kernel__event(k, fd), *t;
	struct perf_event_mmap_page *pc;
	struct fake_kernel_view *v = NULL;
	size_t page = sysconf(_SC_PAGESIZE), size;
	unsigned char *data;
	__u64 head, tail;

	if (!e)
		return -EINVAL;
	t = e->output >= 0 ? fake_kernel__event(k, e->output) : e;
	for (size_t i = 0; t && i < FAKE_KERNEL_MAX_FDS; i++)
		if (k->views[i].mem && k->views[i].fd == t->fd)
			v = &k->views[i];
	if (!v)
		return -EINVAL;
	if (t->paused) {
		t->lost++;
		return -EAGAIN;
	}
	pc = v->mem;
	data = (unsigned char *)v->mem + page;
	size = v->len - page;
	head = pc->data_head;
	if (t->backward) {
		/* write_backward: the head moves down, the newest record starts at it */
		head -= rec->size;
	} else {
		tail = __atomic_load_n(&pc->data_tail, __ATOMIC_ACQUIRE);
		if (size - (head - tail) < rec->size) {
			t->lost++;
			return -EAGAIN;
		}
	}
	for (size_t i = 0; i < rec->size; i++)
		data[(head + i) & (size - 1)] = ((const unsigned char *)rec)[i];
	__atomic_store_n(&pc->data_head, t->backward ? head : head + rec->size, __ATOMIC_RELEASE);
	return 0;
}

size_t fake_kernel__calls_of(const struct fake_kernel *k, enum fake_kernel_op op, int fd, unsigned long req)
{
	size_t n = 0;

	for (size_t i = 0; i < k->nr_log; i++)
		n += k->log[i].op == op && (fd < 0 || k->log[i].fd == fd) && (!req || k->log[i].req == req);
	return n;
}
