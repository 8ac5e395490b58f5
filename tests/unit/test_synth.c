// SPDX-License-Identifier: BSD-2-Clause
/* synth: record layouts, /proc parsing, and perf 6.1 showing what we synthesize for ourselves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "perf_oracle.h"

struct fixture {
	struct test_datafile file;
	struct pdata_writer *w;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct perf_event_attr a = {};
	__u64 id = 7;

	assert_int_equal(test_datafile__new(&f->file), 0);
	f->w = pdata_writer__open(f->file.path, false);
	assert_non_null(f->w);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PDATA_SAMPLE_TYPE;
	a.sample_id_all = 1;
	a.exclude_kernel = 0;
	assert_int_equal(pdata_writer__add_attr(f->w, &a, "dummy:u", &id, 1), 0);
	assert_int_equal(pdata_writer__begin_data(f->w), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pdata_writer__delete(f->w);
	test_datafile__delete(&f->file);
	free(f);
	return 0;
}

/* Data section of a closed file, for walking its records. */
static char *data_section(struct fixture *f, size_t *len, char **file)
{
	struct pdata_file_header h;

	assert_int_equal(pdata_writer__close(f->w), 0);
	*file = test_read_file(f->file.path, NULL);
	assert_non_null(*file);
	memcpy(&h, *file, sizeof(h));
	*len = h.data.size;
	return *file + h.data.offset;
}

static void assert_trailer(const char *rec, __u32 pid, __u32 tid)
{
	struct perf_event_header h;
	struct pdata_sample_id sid;

	memcpy(&h, rec, sizeof(h));
	memcpy(&sid, rec + h.size - sizeof(sid), sizeof(sid));
	assert_int_equal(sid.pid, pid);
	assert_int_equal(sid.tid, tid);
	assert_int_equal(sid.time, 0);
	assert_int_equal(sid.id, 0);
	assert_int_equal(sid.cpu, 0);
}

static void test_synth_parse_maps_lines(void **state)
{
	struct synth_map m;

	assert_int_equal(synth__parse_maps_line("7f00c0a00000-7f00c0a21000 r-xp 00002000 fe:01 131090                     /usr/lib/x86_64-linux-gnu/libc.so.6\n", &m), 0);
	assert_int_equal(m.start, 0x7f00c0a00000ULL);
	assert_int_equal(m.end, 0x7f00c0a21000ULL);
	assert_int_equal(m.pgoff, 0x2000);
	assert_int_equal(m.maj, 0xfe);
	assert_int_equal(m.min, 1);
	assert_int_equal(m.ino, 131090);
	assert_int_equal(m.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(m.flags, MAP_PRIVATE);
	assert_string_equal(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	assert_int_equal(synth__parse_maps_line("7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n", &m), 0);
	assert_string_equal(m.path, "[vdso]");
	assert_int_equal(synth__parse_maps_line("7f0000000000-7f0000001000 rwxs 00000000 00:00 0 \n", &m), 0);
	assert_string_equal(m.path, "//anon");
	assert_int_equal(m.prot, PROT_READ | PROT_WRITE | PROT_EXEC);
	assert_int_equal(m.flags, MAP_SHARED);
	assert_int_equal(synth__parse_maps_line("1000-2000 ---p 00000000 00:00 0", &m), 0);
	assert_string_equal(m.path, "//anon");
	assert_int_equal(m.prot, 0);
	assert_int_equal(synth__parse_maps_line("400000-401000 r-xp 00000000 08:02 42 /tmp/dir with spaces/a.out (deleted)\n", &m), 0);
	assert_string_equal(m.path, "/tmp/dir with spaces/a.out (deleted)");

	assert_int_equal(synth__parse_maps_line("", &m), -EINVAL);
	assert_int_equal(synth__parse_maps_line("garbage line\n", &m), -EINVAL);
	assert_int_equal(synth__parse_maps_line("1000-2000 r-x 0 0:0 1 /x\n", &m), -EINVAL);
}

static void test_synth_comm_layout(void **state)
{
	char buf[128];
	struct pdata_record_comm c;
	size_t len = synth__comm_record(buf, sizeof(buf), 10, 11, "abcdefgh");

	/* 16 head + "abcdefgh\0" padded to 16 + 32 trailer */
	assert_int_equal(len, 64);
	memcpy(&c, buf, sizeof(c));
	assert_int_equal(c.header.type, PERF_RECORD_COMM);
	assert_int_equal(c.header.size, 64);
	assert_int_equal(c.pid, 10);
	assert_int_equal(c.tid, 11);
	assert_memory_equal(buf + 16, "abcdefgh\0\0\0\0\0\0\0\0", 16);
	assert_trailer(buf, 10, 11);
	assert_int_equal(synth__comm_record(buf, 63, 10, 11, "abcdefgh"), 0);
}

static void test_synth_mmap2_and_fork_layout(void **state)
{
	char buf[256];
	struct synth_map m;
	struct pdata_record_mmap2 r;
	struct pdata_record_fork fk;
	size_t len;

	assert_int_equal(synth__parse_maps_line("1000-3000 r--s 00000010 08:01 99 /data\n", &m), 0);
	len = synth__mmap2_record(buf, sizeof(buf), 5, 6, &m);
	assert_int_equal(len, 72 + 8 + 32);
	memcpy(&r, buf, sizeof(r));
	assert_int_equal(r.header.type, PERF_RECORD_MMAP2);
	assert_int_equal(r.header.misc, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
	assert_int_equal(r.start, 0x1000);
	assert_int_equal(r.len, 0x2000);
	assert_int_equal(r.pgoff, 0x10);
	assert_int_equal(r.maj, 8);
	assert_int_equal(r.min, 1);
	assert_int_equal(r.ino, 99);
	assert_int_equal(r.prot, PROT_READ);
	assert_int_equal(r.flags, MAP_SHARED);
	assert_string_equal(buf + 72, "/data");
	assert_trailer(buf, 5, 6);

	len = synth__fork_record(buf, sizeof(buf), 5, 1, 7, 5);
	assert_int_equal(len, 64);
	memcpy(&fk, buf, sizeof(fk));
	assert_int_equal(fk.header.type, PERF_RECORD_FORK);
	assert_int_equal(fk.pid, 5);
	assert_int_equal(fk.ppid, 1);
	assert_int_equal(fk.tid, 7);
	assert_int_equal(fk.ptid, 5);
	assert_int_equal(fk.time, 0);
	assert_trailer(buf, 5, 7);
}

static pthread_barrier_t barrier;

static void *worker(void *arg)
{
	pthread_barrier_wait(&barrier); /* named and running */
	pthread_barrier_wait(&barrier); /* described: may exit */
	return NULL;
}

static pid_t start_worker(pthread_t *th)
{
	pthread_barrier_init(&barrier, NULL, 2);
	assert_int_equal(pthread_create(th, NULL, worker, NULL), 0);
	assert_int_equal(pthread_setname_np(*th, "synth_worker"), 0);
	pthread_barrier_wait(&barrier);
	return getpid();
}

static void stop_worker(pthread_t th)
{
	pthread_barrier_wait(&barrier);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&barrier);
}

static void test_synth_threads_of_self(void **state)
{
	struct fixture *f = *state;
	char exe[PATH_MAX + 1] = "", *file, *data, comm[32];
	size_t len, nr_comm = 0, nr_fork = 0, nr_mmap2 = 0, exe_maps = 0;
	pthread_t th;
	pid_t pid = start_worker(&th);
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX);

	assert_true(n > 0);
	exe[n] = 0;
	assert_int_equal(synth__threads(f->w, pid), 0);
	stop_worker(th);
	data = data_section(f, &len, &file);
	for (size_t off = 0; off < len;) {
		struct perf_event_header h;

		memcpy(&h, data + off, sizeof(h));
		assert_true(h.size >= 8 && off + h.size <= len);
		if (h.type == PERF_RECORD_COMM) {
			struct pdata_record_comm c;

			memcpy(&c, data + off, sizeof(c));
			assert_int_equal(c.pid, pid);
			snprintf(comm, sizeof(comm), "%s", data + off + sizeof(c));
			if (c.tid != (__u32)pid)
				assert_string_equal(comm, "synth_worker");
			assert_trailer(data + off, c.pid, c.tid);
			nr_comm++;
		} else if (h.type == PERF_RECORD_FORK) {
			struct pdata_record_fork fk;

			memcpy(&fk, data + off, sizeof(fk));
			assert_int_equal(fk.pid, pid);
			if (fk.tid == (__u32)pid)
				assert_int_equal(fk.ppid, getppid());
			else
				assert_int_equal(fk.ptid, pid);
			/* the leader comes first: a thread's parent exists when it is forked */
			if (nr_fork == 0)
				assert_int_equal(fk.tid, pid);
			nr_fork++;
		} else if (h.type == PERF_RECORD_MMAP2) {
			struct pdata_record_mmap2 m;

			memcpy(&m, data + off, sizeof(m));
			assert_true(m.prot & PROT_EXEC); /* only what perf synthesizes without -d */
			assert_int_equal(h.misc, PERF_RECORD_MISC_USER);
			exe_maps += !strcmp(data + off + sizeof(m), exe);
			nr_mmap2++;
		} else {
			fail_msg("unexpected record type %u", h.type);
		}
		off += h.size;
	}
	assert_int_equal(nr_comm, 2);
	assert_int_equal(nr_fork, 2);
	assert_true(nr_mmap2 >= 2); /* the test binary and libc at least */
	assert_int_equal(exe_maps, 1);
	free(file);
}

static void test_synth_threads_no_such_process(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(synth__threads(f->w, INT_MAX), -ESRCH);
	assert_int_equal(pdata_writer__stats(f->w)->records, 0);
}

static void write_kallsyms(struct fixture *f, const char *content, char *path, size_t size)
{
	FILE *k;

	snprintf(path, size, "%s/kallsyms", f->file.dir);
	k = fopen(path, "w");
	assert_non_null(k);
	fputs(content, k);
	fclose(k);
}

static void test_synth_kernel_mmap(void **state)
{
	struct fixture *f = *state;
	char path[4200], *file, *data;
	struct pdata_record_mmap m;
	size_t len;

	write_kallsyms(f, "0000000000000000 T _stext\n0000000000000000 T _text\n", path, sizeof(path));
	assert_int_equal(synth__kernel_mmap(f->w, path), -EACCES);
	write_kallsyms(f, "ffffffff81000000 T startup_64\n", path, sizeof(path));
	assert_int_equal(synth__kernel_mmap(f->w, path), -ENOENT);
	assert_int_equal(synth__kernel_mmap(f->w, "/nonexistent/kallsyms"), -ENOENT);
	write_kallsyms(f, "ffffffffa0000000 t foo [mod]\nffffffff9a000000 T _text\nffffffff9a000000 T _stext\n", path,
		       sizeof(path));
	assert_int_equal(synth__kernel_mmap(f->w, path), 0);
	data = data_section(f, &len, &file);
	assert_int_equal(len, 40 + 24 + 32);
	memcpy(&m, data, sizeof(m));
	assert_int_equal(m.header.type, PERF_RECORD_MMAP);
	assert_int_equal(m.header.misc, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(m.pid, (__u32)-1);
	assert_int_equal(m.tid, 0);
	assert_int_equal(m.start, 0xffffffff9a000000ULL);
	assert_int_equal(m.pgoff, 0xffffffff9a000000ULL);
	assert_int_equal(m.start + m.len, ~0ULL);
	assert_string_equal(data + sizeof(m), SYNTH_KERNEL_MAP_NAME);
	free(file);
}

static void test_synth_time_conv(void **state)
{
	struct fixture *f = *state;
	struct perf_event_mmap_page *pc = calloc(1, sizeof(*pc));
	struct pdata_record_time_conv t;
	char *file, *data;
	size_t len;

	pc->lock = 2;
	pc->time_shift = 31;
	pc->time_mult = 123456;
	pc->time_zero = 0x1122334455ULL;
	pc->time_cycles = 77;
	pc->time_mask = 0xffffffff;
	pc->cap_user_time_short = 1;
	assert_int_equal(synth__time_conv(f->w, pc), -EOPNOTSUPP);
	pc->cap_user_time_zero = 1;
	assert_int_equal(synth__time_conv(f->w, pc), 0);
	data = data_section(f, &len, &file);
	assert_int_equal(len, 56);
	memcpy(&t, data, sizeof(t));
	assert_int_equal(t.header.type, PDATA_RECORD_TIME_CONV);
	assert_int_equal(t.header.size, 56);
	assert_int_equal(t.time_shift, 31);
	assert_int_equal(t.time_mult, 123456);
	assert_int_equal(t.time_zero, 0x1122334455ULL);
	assert_int_equal(t.time_cycles, 77);
	assert_int_equal(t.time_mask, 0xffffffff);
	assert_int_equal(t.cap_user_time_zero, 1);
	assert_int_equal(t.cap_user_time_short, 1);
	free(file);
	free(pc);
}

static void test_synth_perf_shows_synthesized_records(void **state)
{
	struct fixture *f = *state;
	const char *script[] = { "script", "-i", f->file.path, "--show-task-events", "--show-mmap-events", NULL };
	const char *dump[] = { "report", "-D", "-i", f->file.path, NULL };
	char path[4200], want[PATH_MAX + 200], exe[PATH_MAX + 1] = "", *out;
	struct perf_event_mmap_page *pc = calloc(1, sizeof(*pc));
	pthread_t th;
	pid_t pid;
	ssize_t n;

	perf_oracle__need();
	n = readlink("/proc/self/exe", exe, PATH_MAX);
	assert_true(n > 0);
	exe[n] = 0;
	pc->time_shift = 10;
	pc->time_mult = 1000;
	pc->cap_user_time_zero = 1;
	assert_int_equal(synth__time_conv(f->w, pc), 0);
	write_kallsyms(f, "ffffffff81000000 T _text\n", path, sizeof(path));
	assert_int_equal(synth__kernel_mmap(f->w, path), 0);
	pid = start_worker(&th);
	assert_int_equal(synth__threads(f->w, pid), 0);
	stop_worker(th);
	assert_int_equal(pdata_writer__finish_round(f->w), 0);
	assert_int_equal(pdata_writer__close(f->w), 0);

	assert_int_equal(perf_oracle__run(NULL, script, &out), 0);
	print_message("%s", out);
	assert_null(perf_oracle__problem(out));
	snprintf(want, sizeof(want), "PERF_RECORD_COMM: synth_worker:%d/", pid);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "PERF_RECORD_FORK(%d:", pid);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "r-xp %s\n", exe);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "x [kernel.kallsyms]_text"));
	free(out);

	assert_int_equal(perf_oracle__run(NULL, dump, &out), 0);
	if (perf_oracle__problem(out))
		fail_msg("perf report -D: %s", perf_oracle__problem(out));
	assert_non_null(strstr(out, "PERF_RECORD_TIME_CONV"));
	free(out);
	free(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synth_parse_maps_lines),
		cmocka_unit_test(test_synth_comm_layout),
		cmocka_unit_test(test_synth_mmap2_and_fork_layout),
		cmocka_unit_test_setup_teardown(test_synth_threads_of_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_synth_threads_no_such_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_synth_kernel_mmap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_synth_time_conv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_synth_perf_shows_synthesized_records, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
