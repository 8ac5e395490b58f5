// SPDX-License-Identifier: BSD-2-Clause
/*
 * decode_pool: decode jobs in worker processes, their output delivered in
 * job order; a crashing job costs only itself. See decode_pool.h.
 *
 * Worker -> parent, per job: records as { u32 len; bytes[len] }, then
 * { u32 DECODE_POOL_END; s32 status }.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxtrig/decode/decode_pool.h"
#include "auxtrig/sys/log.h"

#define DECODE_POOL_END		0x80000000u
#define DECODE_POOL_MAX_REC	(1u << 20)
#define DECODE_POOL_OUTBUF	(64u << 10)
#define DECODE_POOL_HOLD	(8u << 20)	/* a job's records held in memory, then in a temporary file */

struct decode_out {
	int fd;				/* the pipe to the parent */
	unsigned char *buf;
	size_t len;
	volatile __u64 *progress;
	const struct decode_pool_ops *ops;
	void *ctx;
	size_t job;
};

/*
 * A job's records, held until the job ends: a job whose worker dies delivers
 * nothing, so a crash never leaves half a buffer's output behind.
 */
struct decode_held {
	unsigned char *mem;
	size_t len, cap;
	FILE *spill;
};

static int decode_held__add(struct decode_held *h, const void *rec, __u32 len)
{
	size_t need = sizeof(len) + len;

	if (!h->spill && h->len + need <= DECODE_POOL_HOLD) {
		if (h->len + need > h->cap) {
			size_t cap = h->cap ? h->cap : 1 << 16;
			unsigned char *m;

			while (cap < h->len + need)
				cap *= 2;
			m = realloc(h->mem, cap);
			if (!m)
				return -ENOMEM;
			h->mem = m;
			h->cap = cap;
		}
		memcpy(h->mem + h->len, &len, sizeof(len));
		memcpy(h->mem + h->len + sizeof(len), rec, len);
		h->len += need;
		return 0;
	}
	if (!h->spill) {
		h->spill = tmpfile();
		if (!h->spill)
			return -errno;
	}
	if (fwrite(&len, sizeof(len), 1, h->spill) != 1 || (len && fwrite(rec, len, 1, h->spill) != 1))
		return -EIO;
	return 0;
}

/* Deliver the held records of job @j in order, and forget them. */
static int decode_held__replay(struct decode_held *h, size_t j, const struct decode_pool_ops *ops, void *ctx)
{
	unsigned char *rec = NULL;
	int ret = 0;

	for (size_t at = 0; at < h->len && !ret;) {
		__u32 len;

		memcpy(&len, h->mem + at, sizeof(len));
		ret = ops->recv(j, h->mem + at + sizeof(len), len, ctx);
		at += sizeof(len) + len;
	}
	if (h->spill && !ret) {
		__u32 len;

		rec = malloc(DECODE_POOL_MAX_REC);
		if (!rec || fflush(h->spill) || fseek(h->spill, 0, SEEK_SET))
			ret = -EIO;
		while (!ret && fread(&len, sizeof(len), 1, h->spill) == 1) {
			if (len >= DECODE_POOL_MAX_REC || (len && fread(rec, len, 1, h->spill) != 1)) {
				ret = -EIO;
				break;
			}
			ret = ops->recv(j, rec, len, ctx);
		}
	}
	free(rec);
	if (h->spill)
		fclose(h->spill);
	h->spill = NULL;
	h->len = 0;
	return ret;
}

static void decode_held__drop(struct decode_held *h)
{
	if (h->spill)
		fclose(h->spill);
	h->spill = NULL;
	h->len = 0;
}

struct decode_slot {
	pid_t pid;
	int fd;				/* read end */
	unsigned char *buf;		/* bytes read; [head, len) not yet consumed */
	size_t head, len, cap;
};

static int decode_out__direct(struct decode_out *out, const void *p, size_t len);

static int decode_out__flush(struct decode_out *out)
{
	if (decode_out__direct(out, out->buf, out->len))
		return -EPIPE;
	out->len = 0;
	return 0;
}

static int decode_out__put(struct decode_out *out, const void *p, size_t n)
{
	while (n) {
		size_t room = DECODE_POOL_OUTBUF - out->len, k = n < room ? n : room;

		memcpy(out->buf + out->len, p, k);
		out->len += k;
		p = (const char *)p + k;
		n -= k;
		if (out->len == DECODE_POOL_OUTBUF && decode_out__flush(out))
			return -EPIPE;
	}
	return 0;
}

/* Write @len bytes at @p to the pipe, unbuffered. */
static int decode_out__direct(struct decode_out *out, const void *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(out->fd, (const char *)p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		done += n;
	}
	return 0;
}

int decode_out__write(struct decode_out *out, const void *rec, size_t len)
{
	__u32 n = len;

	if (len >= DECODE_POOL_MAX_REC)
		return -E2BIG;
	if (decode_out__put(out, &n, sizeof(n)))
		return -EPIPE;
	/* a large record (a worker's output text) goes to the pipe without a copy into the buffer */
	if (len >= DECODE_POOL_OUTBUF / 4)
		return decode_out__flush(out) || decode_out__direct(out, rec, len) ? -EPIPE : 0;
	return decode_out__put(out, rec, len);
}

void decode_out__progress(struct decode_out *out, __u64 pos)
{
	if (out->progress)
		*out->progress = pos;
}

/* The worker of slot @s: jobs first, first + step... then _exit(). */
static void decode_pool__worker(int fd, size_t first, size_t step, size_t nr_jobs, volatile __u64 *progress,
				const struct decode_pool_ops *ops, void *ctx)
{
	struct decode_out out = { .fd = fd, .progress = progress, .ops = ops, .ctx = ctx };
	unsigned char *buf = malloc(DECODE_POOL_OUTBUF);

	signal(SIGPIPE, SIG_DFL);
	/*
	 * A fault in the decoding library ends this worker, with its signal,
	 * for the parent to report: no sanitizer report of a library's crash,
	 * no handler running in a broken process.
	 */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	if (!buf)
		_exit(120);
	out.buf = buf;
	for (size_t j = first; j < nr_jobs; j += step) {
		__u32 end = DECODE_POOL_END;
		__s32 status;

		out.job = j;
		*progress = 0;
		status = ops->run(j, &out, ctx);
		if (decode_out__put(&out, &end, sizeof(end)) || decode_out__put(&out, &status, sizeof(status)) ||
		    decode_out__flush(&out))
			_exit(121);
	}
	free(buf);
	_exit(0);
}

static int decode_pool__start(struct decode_slot *slots, unsigned int n, unsigned int s, size_t first,
			      size_t nr_jobs, volatile __u64 *progress, const struct decode_pool_ops *ops, void *ctx)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -errno;
#ifdef F_SETPIPE_SZ
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);	/* room to run ahead; best effort */
#endif
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[0]);
		for (unsigned int k = 0; k < n; k++)
			if (k != s && slots[k].fd >= 0)
				close(slots[k].fd);
		decode_pool__worker(p[1], first, n, nr_jobs, &progress[s], ops, ctx);
	}
	close(p[1]);
	slots[s].pid = pid;
	slots[s].fd = p[0];
	slots[s].head = slots[s].len = 0;
	return 0;
}

/* Make @need bytes available at @sl->buf + @sl->head. Return: 1, 0 at EOF, -errno. */
static int decode_slot__fill(struct decode_slot *sl, size_t need)
{
	if (sl->len - sl->head >= need)
		return 1;
	if (sl->head) {	/* move what is left to the front, once per refill */
		memmove(sl->buf, sl->buf + sl->head, sl->len - sl->head);
		sl->len -= sl->head;
		sl->head = 0;
	}
	if (need > sl->cap) {
		size_t cap = sl->cap ? sl->cap : 1 << 16;
		unsigned char *b;

		while (cap < need)
			cap *= 2;
		b = realloc(sl->buf, cap);
		if (!b)
			return -ENOMEM;
		sl->buf = b;
		sl->cap = cap;
	}
	while (sl->len < need) {
		ssize_t r = read(sl->fd, sl->buf + sl->len, sl->cap - sl->len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		sl->len += r;
	}
	return 1;
}

static void decode_slot__consume(struct decode_slot *sl, size_t n)
{
	sl->head += n;
	if (sl->head == sl->len)
		sl->head = sl->len = 0;
}

/*
 * The next frame of @sl whole in its buffer: 1 with its length in @len (the
 * bytes follow it at sl->head), 0 when the worker's pipe ended first, or
 * -errno. @len is set on every path: the caller reads it only after a 1.
 */
static int decode_slot__frame(struct decode_slot *sl, __u32 *len)
{
	int r = decode_slot__fill(sl, sizeof(*len));

	*len = 0;
	if (r <= 0)
		return r;
	memcpy(len, sl->buf + sl->head, sizeof(*len));
	return decode_slot__fill(sl, sizeof(*len) + (*len == DECODE_POOL_END ? 4 : *len));
}

static void decode_slot__reap(struct decode_slot *sl, int *sig)
{
	int st = 0;

	if (sl->fd >= 0)
		close(sl->fd);
	sl->fd = -1;
	if (sl->pid > 0 && waitpid(sl->pid, &st, 0) == sl->pid && sig)
		*sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	sl->pid = 0;
}

int decode_pool__run(size_t nr_jobs, unsigned int nr_workers, const struct decode_pool_ops *ops, void *ctx)
{
	struct decode_slot *slots;
	struct decode_held held = { 0 };
	volatile __u64 *progress;
	int ret = 0;

	if (!nr_jobs)
		return 0;
	if (!nr_workers)
		nr_workers = 1;
	if (nr_workers > nr_jobs)
		nr_workers = nr_jobs;
	slots = calloc(nr_workers, sizeof(*slots));
	progress = mmap(NULL, nr_workers * sizeof(*progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	if (!slots || progress == MAP_FAILED) {
		free(slots);
		return -ENOMEM;
	}
	for (unsigned int s = 0; s < nr_workers; s++)
		slots[s].fd = -1;
	for (unsigned int s = 0; s < nr_workers && !ret; s++)
		ret = decode_pool__start(slots, nr_workers, s, s, nr_jobs, progress, ops, ctx);
	for (size_t j = 0; j < nr_jobs && !ret; j++) {
		struct decode_slot *sl = &slots[j % nr_workers];

		for (;;) {
			__u32 len;
			int r = decode_slot__frame(sl, &len);

			if (r < 0) {
				ret = r;
				break;
			}
			if (r == 0) {
				/* the worker died inside job j */
				int sig = 0;
				__u64 at = progress[j % nr_workers];

				decode_slot__reap(sl, &sig);
				decode_held__drop(&held);
				ops->crash(j, sig, at, ctx);
				if (j + nr_workers < nr_jobs)
					ret = decode_pool__start(slots, nr_workers, j % nr_workers, j + nr_workers, nr_jobs,
								 progress, ops, ctx);
				break;
			}
			if (len == DECODE_POOL_END) {
				__s32 status;

				memcpy(&status, sl->buf + sl->head + sizeof(len), sizeof(status));
				decode_slot__consume(sl, sizeof(len) + sizeof(status));
				ret = decode_held__replay(&held, j, ops, ctx);
				if (!ret)
					ops->done(j, status, ctx);
				break;
			}
			ret = decode_held__add(&held, sl->buf + sl->head + sizeof(len), len);
			decode_slot__consume(sl, sizeof(len) + len);
			if (ret)
				break;
		}
	}
	for (unsigned int s = 0; s < nr_workers; s++) {
		if (ret && slots[s].pid > 0)
			kill(slots[s].pid, SIGKILL);
		decode_slot__reap(&slots[s], NULL);
		free(slots[s].buf);
	}
	decode_held__drop(&held);
	free(held.mem);
	munmap((void *)progress, nr_workers * sizeof(*progress));
	free(slots);
	return ret;
}
