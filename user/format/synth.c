// SPDX-License-Identifier: BSD-2-Clause
/*
 * Synthesized COMM/FORK/MMAP2/kernel MMAP/TIME_CONV records, in the forms
 * perf 6.1 record writes them (util/synthetic-events.c, util/tsc.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/sys/target.h"

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

/* Largest record built here: mmap2 head + PATH_MAX name + trailer. */
#define SYNTH_BUF_SIZE (sizeof(struct pdata_record_mmap2) + 4096 + PDATA_SAMPLE_ID_SIZE)

static void put_trailer(char *end, __u32 pid, __u32 tid)
{
	struct pdata_sample_id sid = { .pid = pid, .tid = tid };

	memcpy(end, &sid, sizeof(sid));
}

/* Copy @s NUL-padded to a multiple of 8 at @dst; returns the padded length. */
static size_t put_name(char *dst, const char *s)
{
	size_t n = strlen(s) + 1, padded = ALIGN8(n);

	memcpy(dst, s, n);
	memset(dst + n, 0, padded - n);
	return padded;
}

size_t synth__comm_record(void *buf, size_t size, __u32 pid, __u32 tid, const char *comm)
{
	struct pdata_record_comm rec = {};
	size_t name = ALIGN8(strlen(comm) + 1), total = sizeof(rec) + name + PDATA_SAMPLE_ID_SIZE;
	char *p = buf;

	if (total > size || total > 0xffff)
		return 0;
	rec.header.type = PERF_RECORD_COMM;
	rec.header.misc = 0;
	rec.header.size = total;
	rec.pid = pid;
	rec.tid = tid;
	memcpy(p, &rec, sizeof(rec));
	put_name(p + sizeof(rec), comm);
	put_trailer(p + sizeof(rec) + name, pid, tid);
	return total;
}

size_t synth__mmap2_record(void *buf, size_t size, __u32 pid, __u32 tid, const struct synth_map *m)
{
	struct pdata_record_mmap2 rec = {};
	size_t name = ALIGN8(strlen(m->path) + 1), total = sizeof(rec) + name + PDATA_SAMPLE_ID_SIZE;
	char *p = buf;

	if (total > size || total > 0xffff)
		return 0;
	rec.header.type = PERF_RECORD_MMAP2;
	rec.header.misc = PERF_RECORD_MISC_USER | (m->prot & PROT_EXEC ? 0 : PERF_RECORD_MISC_MMAP_DATA);
	rec.header.size = total;
	rec.pid = pid;
	rec.tid = tid;
	rec.start = m->start;
	rec.len = m->end - m->start;
	rec.pgoff = m->pgoff;
	rec.maj = m->maj;
	rec.min = m->min;
	rec.ino = m->ino;
	rec.ino_generation = 0;
	rec.prot = m->prot;
	rec.flags = m->flags;
	memcpy(p, &rec, sizeof(rec));
	put_name(p + sizeof(rec), m->path);
	put_trailer(p + sizeof(rec) + name, pid, tid);
	return total;
}

size_t synth__fork_record(void *buf, size_t size, __u32 pid, __u32 ppid, __u32 tid, __u32 ptid)
{
	struct pdata_record_fork rec = {};
	size_t total = sizeof(rec) + PDATA_SAMPLE_ID_SIZE;
	char *p = buf;

	if (total > size)
		return 0;
	rec.header.type = PERF_RECORD_FORK;
	rec.header.size = total;
	rec.pid = pid;
	rec.ppid = ppid;
	rec.tid = tid;
	rec.ptid = ptid;
	rec.time = 0;
	memcpy(p, &rec, sizeof(rec));
	put_trailer(p + sizeof(rec), pid, tid);
	return total;
}

int synth__parse_maps_line(const char *line, struct synth_map *m)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	int n = 0;
	size_t len;
	const char *path;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj, &min, &ino,
		   &n) != 7 || !n || strlen(perms) != 4)
		return -EINVAL;
	memset(m, 0, sizeof(*m) - sizeof(m->path));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	path = line + n;
	len = strcspn(path, "\n");
	if (!len) {
		strcpy(m->path, "//anon"); /* perf's name for anonymous memory */
		return 0;
	}
	if (len >= sizeof(m->path))
		len = sizeof(m->path) - 1;
	memcpy(m->path, path, len);
	m->path[len] = 0;
	return 0;
}

static int write_maps(struct pdata_writer *w, pid_t pid, char *buf)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	struct synth_map *m;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", pid, pid);
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		pr_err("cannot read %s: %s\n", path, strerror(-err));
		return err;
	}
	m = malloc(sizeof(*m));
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	while (getline(&line, &cap, f) > 0) {
		size_t len;

		if (synth__parse_maps_line(line, m) || !(m->prot & PROT_EXEC))
			continue;
		len = synth__mmap2_record(buf, SYNTH_BUF_SIZE, pid, pid, m);
		if (!len)
			continue;
		err = pdata_writer__write(w, buf, len);
		if (err)
			break;
	}
	free(line);
	free(m);
	fclose(f);
	return err;
}

static int read_ppid(pid_t pid, __u32 *ppid)
{
	char path[64], line[256];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %u", ppid) == 1) {
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

/* comm of @tid, newline stripped; -ENOENT/-ESRCH if the thread is gone. */
static int read_comm(pid_t pid, pid_t tid, char *comm, size_t size)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(comm, size, f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The threads of @pid (target__threads()), sorted, the leader first. */
static int list_tids(pid_t pid, int **tidsp, size_t *nrp)
{
	pid_t *tids;
	size_t nr;
	int err = target__threads(pid, &tids, &nr);

	if (err)
		return err;
	if (!nr) {
		free(tids);
		return -ESRCH;
	}
	/* Leader first: its FORK/COMM must precede the threads that take it as parent. */
	qsort(tids, nr, sizeof(*tids), cmp_int);
	for (size_t i = 0; i < nr; i++)
		if (tids[i] == pid) {
			tids[i] = tids[0];
			tids[0] = pid;
			break;
		}
	*tidsp = tids;
	*nrp = nr;
	return 0;
}

int synth__threads(struct pdata_writer *w, pid_t pid)
{
	char *buf, comm[64];
	int *tids = NULL;
	size_t nr = 0, len;
	__u32 ppid = 0;
	int err;

	err = list_tids(pid, &tids, &nr);
	if (err)
		return err;	/* -ESRCH: gone; the caller names it (process or thread) */
	buf = malloc(SYNTH_BUF_SIZE);
	if (!buf) {
		free(tids);
		return -ENOMEM;
	}
	if (read_ppid(pid, &ppid))
		ppid = 0;
	for (size_t i = 0; i < nr; i++) {
		bool leader = tids[i] == pid;

		err = read_comm(pid, tids[i], comm, sizeof(comm));
		if (err) {
			err = 0;
			if (leader) {
				pr_err("process %d exited while being described\n", pid);
				err = -ESRCH;
				break;
			}
			continue; /* thread exited meanwhile */
		}
		len = synth__fork_record(buf, SYNTH_BUF_SIZE, pid, leader ? ppid : (__u32)pid, tids[i],
					 leader ? ppid : (__u32)pid);
		err = pdata_writer__write(w, buf, len);
		if (err)
			break;
		len = synth__comm_record(buf, SYNTH_BUF_SIZE, pid, tids[i], comm);
		err = pdata_writer__write(w, buf, len);
		if (err)
			break;
		if (leader) {
			err = write_maps(w, pid, buf);
			if (err)
				break;
		}
	}
	free(buf);
	free(tids);
	return err;
}

/* The lowest module address above @text in the modules file beside @kallsyms, else ~0. */
static unsigned long long synth__first_module(const char *kallsyms, unsigned long long text)
{
	unsigned long long first = ~0ULL, addr;
	const char *slash = strrchr(kallsyms, '/');
	char path[4096], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%.*smodules", slash ? (int)(slash - kallsyms + 1) : 0, kallsyms);
	f = fopen(path, "re");
	if (!f)
		return first;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %*s %llx", &addr) == 1 && addr > text && addr < first)
			first = addr;
	fclose(f);
	return first;
}

int synth__kernel_mmap(struct pdata_writer *w, const char *kallsyms)
{
	const char *path = kallsyms ?: "/proc/kallsyms";
	char line[512], name[256], type;
	unsigned long long addr, text = 0;
	bool found = false;
	char buf[sizeof(struct pdata_record_mmap) + 32 + PDATA_SAMPLE_ID_SIZE];
	struct pdata_record_mmap rec = {};
	size_t namelen = ALIGN8(sizeof(SYNTH_KERNEL_MAP_NAME));
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		pr_err("cannot read %s: %s\n", path, strerror(-err));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || strcmp(name, "_text"))
			continue;
		text = addr;
		found = true;
		break;
	}
	fclose(f);
	if (!found) {
		pr_err("%s has no _text symbol; kernel addresses cannot be resolved\n", path);
		return -ENOENT;
	}
	if (!text) {
		pr_err("%s hides kernel addresses (kptr_restrict); run as root to describe the kernel map\n", path);
		return -EACCES;
	}
	rec.header.type = PERF_RECORD_MMAP;
	rec.header.misc = PERF_RECORD_MISC_KERNEL;
	rec.header.size = sizeof(rec) + namelen + PDATA_SAMPLE_ID_SIZE;
	rec.pid = (__u32)-1;
	rec.tid = 0;
	rec.start = text;
	/*
	 * perf: map->end - start, the end being the first module's address
	 * (machine__create_kernel_maps()), else ~0. A kernel map over the
	 * modules would swallow their kcore maps when perf loads a kept kcore
	 * (maps__merge_in() drops a map inside another).
	 */
	rec.len = synth__first_module(path, text) - text;
	rec.pgoff = text;	  /* perf: ref_reloc_sym address */
	memcpy(buf, &rec, sizeof(rec));
	put_name(buf + sizeof(rec), SYNTH_KERNEL_MAP_NAME);
	put_trailer(buf + sizeof(rec) + namelen, 0, 0);
	return pdata_writer__write(w, buf, rec.header.size);
}

int synth__time_conv(struct pdata_writer *w, const struct perf_event_mmap_page *pc)
{
	struct pdata_record_time_conv rec = {};
	bool stable = false;

	rec.header.type = PDATA_RECORD_TIME_CONV;
	rec.header.size = sizeof(rec);
	/*
	 * Seqlock: the kernel bumps pc->lock around updates (odd while
	 * writing). Spinning alone is not enough in an emulated machine, where
	 * the vCPU that writes can be held in the middle of an update for a
	 * whole time slice: between rounds of tries, sleep a millisecond, for
	 * at most 200 ms.
	 */
	for (int round = 0; round < 200 && !stable; round++) {
		if (round) {
			struct timespec ms = { .tv_nsec = 1000000 };

			nanosleep(&ms, NULL);
		}
		for (int tries = 0; tries < 100 && !stable; tries++) {
			__u32 seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);

			rec.time_shift = pc->time_shift;
			rec.time_mult = pc->time_mult;
			rec.time_zero = pc->time_zero;
			rec.time_cycles = pc->time_cycles;
			rec.time_mask = pc->time_mask;
			rec.cap_user_time_zero = pc->cap_user_time_zero;
			rec.cap_user_time_short = pc->cap_user_time_short;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			stable = !(seq & 1) && __atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == seq;
		}
	}
	if (!stable) {
		pr_warn("the perf mmap page's time fields kept changing for 200 ms; TIME_CONV not written\n");
		return -EAGAIN;
	}
	if (!rec.cap_user_time_zero || !rec.time_mult) {
		pr_debug("no TSC conversion in the perf mmap page (cap_user_time_zero %u); TIME_CONV not written\n",
			 rec.cap_user_time_zero);
		return -EOPNOTSUPP;
	}
	return pdata_writer__write(w, &rec, sizeof(rec));
}
