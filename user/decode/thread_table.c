// SPDX-License-Identifier: BSD-2-Clause
/* The threads of a recording at one point of its records. See thread_table.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/script_line.h"
#include "auxtrig/decode/thread_table.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_reader.h"

#define THREAD_TABLE_MAX_CPUS	4096

struct stack_entry {
	__u64 ret_addr;
	bool trace_end;
};

struct thread_entry {
	__s32 tid;		/* the key; slot empty when !used */
	__s32 pid;
	char comm[16];
	__u8 used, has_comm, has_stack;
	struct stack_entry *stack;
	size_t cnt, cap;
	__u64 trace_nr;
};

struct thread_table {
	struct thread_entry *v;		/* open addressing, a power of two of slots */
	size_t cap, nr;
	__s32 *current;			/* per CPU, -1: unknown */
	size_t nr_cpus;
};

struct thread_table *thread_table__new(void)
{
	struct thread_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 64;
	t->v = calloc(t->cap, sizeof(*t->v));
	if (!t->v) {
		free(t);
		return NULL;
	}
	/* perf_session__register_idle_thread(): thread 0 is there from the start */
	thread_table__set_comm(t, 0, 0, "swapper");
	return t;
}

void thread_table__delete(struct thread_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].stack);
	free(t->v);
	free(t->current);
	free(t);
}

static size_t thread_table__slot(const struct thread_table *t, __s32 tid)
{
	size_t i = ((__u32)tid * 2654435761u) & (t->cap - 1);

	while (t->v[i].used && t->v[i].tid != tid)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static struct thread_entry *thread_table__find(const struct thread_table *t, __s32 tid)
{
	struct thread_entry *e = &t->v[thread_table__slot(t, tid)];

	return e->used ? e : NULL;
}

static struct thread_entry *thread_table__findnew(struct thread_table *t, __s32 tid)
{
	struct thread_entry *e;

	if (2 * (t->nr + 1) > t->cap) {
		struct thread_table n = { .cap = 2 * t->cap };

		n.v = calloc(n.cap, sizeof(*n.v));
		if (!n.v)
			return NULL;
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].used)
				n.v[thread_table__slot(&n, t->v[i].tid)] = t->v[i];
		free(t->v);
		t->v = n.v;
		t->cap = n.cap;
	}
	e = &t->v[thread_table__slot(t, tid)];
	if (!e->used) {
		e->used = 1;
		e->tid = tid;
		e->pid = -1;
		t->nr++;
	}
	return e;
}

const char *thread_table__comm(struct thread_table *t, __s32 tid, char *buf)
{
	const struct thread_entry *e = thread_table__find(t, tid);

	if (e && e->has_comm)
		return e->comm;
	snprintf(buf, 24, ":%d", tid);
	return buf;
}

__s32 thread_table__pid(struct thread_table *t, __s32 tid)
{
	const struct thread_entry *e = thread_table__find(t, tid);

	return e ? e->pid : -1;
}

int thread_table__set_pid(struct thread_table *t, __s32 pid, __s32 tid)
{
	struct thread_entry *e = thread_table__findnew(t, tid);

	if (!e)
		return -ENOMEM;
	if (pid != -1)
		e->pid = pid;
	return 0;
}

int thread_table__set_comm(struct thread_table *t, __s32 pid, __s32 tid, const char *comm)
{
	struct thread_entry *e = thread_table__findnew(t, tid);

	if (!e)
		return -ENOMEM;
	if (pid != -1)
		e->pid = pid;
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
	e->has_comm = 1;
	return 0;
}

int thread_table__fork(struct thread_table *t, __s32 pid, __s32 tid, __s32 ptid)
{
	const struct thread_entry *p = thread_table__find(t, ptid);
	char comm[16] = "";
	bool has = p && p->has_comm;
	struct thread_entry *e;

	if (has)
		memcpy(comm, p->comm, sizeof(comm));
	e = thread_table__findnew(t, tid);
	if (!e)
		return -ENOMEM;
	e->pid = pid;
	if (has) {
		memcpy(e->comm, comm, sizeof(comm));
		e->has_comm = 1;
	}
	return 0;
}

int thread_table__add_record(struct thread_table *t, const struct pdata_event *ev, const struct pdata_sample *smp)
{
	const struct perf_event_header *h = ev->header;

	switch (h->type) {
	case PERF_RECORD_COMM:
		if (h->size > sizeof(struct pdata_record_comm)) {
			const struct pdata_record_comm *c = (const void *)h;
			char comm[16];

			snprintf(comm, sizeof(comm), "%.*s", (int)strnlen((const char *)(c + 1), h->size - sizeof(*c)),
				 (const char *)(c + 1));
			return thread_table__set_comm(t, (__s32)c->pid, (__s32)c->tid, comm);
		}
		return 0;
	case PERF_RECORD_FORK:
		if (h->size >= sizeof(struct pdata_record_fork)) {
			const struct pdata_record_fork *f = (const void *)h;

			return thread_table__fork(t, (__s32)f->pid, (__s32)f->tid, (__s32)f->ptid);
		}
		return 0;
	case PERF_RECORD_ITRACE_START:
		if (h->size >= 16) {
			__u32 pt[2];

			memcpy(pt, (const char *)h + 8, 8);
			return thread_table__set_pid(t, (__s32)pt[0], (__s32)pt[1]);
		}
		return 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (h->size >= 16) {
			__u32 pt[2];

			memcpy(pt, (const char *)h + 8, 8);
			return thread_table__set_pid(t, (__s32)pt[0], (__s32)pt[1]);
		}
		return 0;
	case PERF_RECORD_SAMPLE:
		if (smp->present & PERF_SAMPLE_TID)
			return thread_table__set_pid(t, (__s32)smp->pid, (__s32)smp->tid);
		return 0;
	default:
		return 0;
	}
}

int thread_table__set_current(struct thread_table *t, int cpu, __s32 pid, __s32 tid)
{
	if (cpu < 0 || cpu >= THREAD_TABLE_MAX_CPUS)
		return -EINVAL;
	if ((size_t)cpu >= t->nr_cpus) {
		size_t n = (size_t)cpu + 1;
		__s32 *v = realloc(t->current, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t i = t->nr_cpus; i < n; i++)
			v[i] = -1;
		t->current = v;
		t->nr_cpus = n;
	}
	t->current[cpu] = tid;
	return tid == -1 ? 0 : thread_table__set_pid(t, pid, tid);
}

__s32 thread_table__current(const struct thread_table *t, int cpu)
{
	return cpu >= 0 && (size_t)cpu < t->nr_cpus ? t->current[cpu] : -1;
}

/* Pop down to the entry returning to @ret_addr, if there is one. */
static void thread_table__pop(struct thread_entry *e, __u64 ret_addr)
{
	for (size_t i = e->cnt; i; i--)
		if (e->stack[i - 1].ret_addr == ret_addr) {
			e->cnt = i - 1;
			return;
		}
}

int thread_table__stack_event(struct thread_table *t, __s32 tid, __u32 flags, __u64 from, __u64 to,
			      unsigned int insn_len, __u64 trace_nr)
{
	struct thread_entry *e = thread_table__findnew(t, tid);

	if (!e)
		return -ENOMEM;
	e->has_stack = 1;
	if (trace_nr != e->trace_nr) {
		e->cnt = 0;
		e->trace_nr = trace_nr;
	}
	if (flags & SCRIPT_IP_FLAG_CALL) {
		__u64 ret = from + insn_len;

		if (!to || ret == to)	/* zero-length calls are not calls */
			return 0;
		if (e->cnt == e->cap) {
			size_t cap = e->cap ? 2 * e->cap : 16;
			struct stack_entry *v = realloc(e->stack, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			e->stack = v;
			e->cap = cap;
		}
		e->stack[e->cnt].ret_addr = ret;
		e->stack[e->cnt++].trace_end = flags & SCRIPT_IP_FLAG_TRACE_END;
	} else if (flags & SCRIPT_IP_FLAG_TRACE_BEGIN) {
		/* trace may start after a return to here; a call made as trace ended will not return */
		thread_table__pop(e, to);
		while (e->cnt && e->stack[e->cnt - 1].trace_end)
			e->cnt--;
	} else if ((flags & SCRIPT_IP_FLAG_RETURN) && from) {
		thread_table__pop(e, to);
	}
	return 0;
}

int thread_table__stack_depth(struct thread_table *t, __s32 tid)
{
	const struct thread_entry *e = thread_table__find(t, tid);

	return e && e->has_stack ? (int)e->cnt : -1;
}
