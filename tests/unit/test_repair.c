// SPDX-License-Identifier: BSD-2-Clause
/*
 * auxtrig repair on files of our own pdata_writer, cut as a killed
 * recording leaves them: whatever the cut, the repaired file reads to its
 * end, a second repair finds nothing to do, and the message counts bytes
 * as a person reads them (never a negative number printed unsigned).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "tmpdir.h"

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/sys/log.h"

#define NR_RECORDS 40

struct fixture {
	char dir[PATH_MAX];
	char path[PATH_MAX + 16];
	__u64 data_offset, data_end;	/* of the flushed file */
	off_t size;
};

struct comm_rec {
	struct perf_event_header header;
	__u32 pid, tid;
	char comm[16];
};

/* A file as a recording leaves it after its last round: data, then the table copy, no close. */
static int setup(void **state)
{
	static struct fixture f;
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_DUMMY,
				     .sample_type = PDATA_SAMPLE_TYPE, .sample_id_all = 1 };
	__u64 ids[] = { 7 };
	struct pdata_writer *w;
	struct stat st;
	int fd;

	assert_non_null(tmpdir__template(f.dir, sizeof(f.dir), "auxtrig-repair"));
	assert_non_null(mkdtemp(f.dir));
	snprintf(f.path, sizeof(f.path), "%s/perf.data", f.dir);
	w = pdata_writer__open(f.path, false);
	assert_non_null(w);
	assert_int_equal(pdata_writer__add_attr(w, &a, "dummy:u", ids, 1), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	for (int i = 0; i < NR_RECORDS; i++) {
		struct comm_rec r = { .header = { .type = PERF_RECORD_COMM, .size = sizeof(r) }, .pid = 100 + i,
				      .tid = 100 + i };

		snprintf(r.comm, sizeof(r.comm), "task%d", i);
		assert_int_equal(pdata_writer__write(w, &r, sizeof(r)), 0);
	}
	assert_int_equal(pdata_writer__finish_round(w), 0);
	pdata_writer__delete(w);	/* killed: never closed */

	fd = open(f.path, O_RDONLY);
	assert_true(fd >= 0);
	{
		struct pdata_file_header h;

		assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
		f.data_offset = h.data.offset;
		f.data_end = h.data.offset + h.data.size;
	}
	assert_int_equal(fstat(fd, &st), 0);
	f.size = st.st_size;
	close(fd);
	assert_true(f.data_end > f.data_offset + NR_RECORDS * sizeof(struct comm_rec) - 1);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->path);
	rmdir(f->dir);
	return 0;
}

/* auxtrig repair [-n] PATH, its stdout (@which 1) or stderr (2) in @out. */
static int run_repair_fd(const char *path, bool dry_run, char *out, size_t size, int which)
{
	char *argv[] = { "repair", dry_run ? "-n" : (char *)path, dry_run ? (char *)path : NULL, NULL };
	char tmpl[PATH_MAX];
	int fd = mkstemp(tmpdir__template(tmpl, sizeof(tmpl), "auxtrig-repair-out")), saved, ret;
	ssize_t n;

	assert_true(fd >= 0);
	fflush(stdout);
	fflush(stderr);
	saved = dup(which);
	dup2(fd, which);
	ret = cmd_repair(dry_run ? 3 : 2, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved, which);
	close(saved);
	n = pread(fd, out, size - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(tmpl);
	return ret;
}

static int run_repair(const char *path, bool dry_run, char *out, size_t size)
{
	return run_repair_fd(path, dry_run, out, size, 1);
}

/* Every record reads, and there are @nr of them (FINISHED_ROUND aside). */
static void assert_reads(const char *path, int nr)
{
	struct pdata_reader *r = pdata_reader__open(path);
	struct pdata_event ev;
	__u64 pos = 0;
	int ret, n = 0;

	assert_non_null(r);
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0)
		n += ev.header->type == PERF_RECORD_COMM;
	assert_int_equal(ret, 0);
	assert_int_equal(n, nr);
	assert_non_null(pdata_reader__feature_string(r, PDATA_HEADER_ARCH));
	pdata_reader__delete(r);
}

static void test_repair_complete_file_untouched(void **state)
{
	struct fixture *f = *state;
	char out[1024];

	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_OK);
	assert_non_null(strstr(out, "is complete: 41 records, nothing to repair"));
	assert_reads(f->path, NR_RECORDS);
}

/* A file cut inside its data: fewer bytes than the header says. */
static void test_repair_cut_inside_data(void **state)
{
	struct fixture *f = *state;
	off_t cut = f->data_offset + 10 * sizeof(struct comm_rec) + 13;
	char out[1024], want[128];

	assert_int_equal(truncate(f->path, cut), 0);
	assert_int_equal(run_repair(f->path, true, out, sizeof(out)), EXIT_OK);
	snprintf(want, sizeof(want), "keeping 10 records (0.3 KiB of data, %llu fewer bytes than the header said); "
		 "cutting 13 bytes", (unsigned long long)(f->data_end - (f->data_offset + 10 * sizeof(struct comm_rec))));
	if (!strstr(out, want))
		fail_msg("expected '%s' in: %s", want, out);
	assert_null(strstr(out, "18446744"));
	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_OK);
	assert_reads(f->path, 10);
	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_OK);
	assert_non_null(strstr(out, "is complete: 10 records"));
}

/* Killed between a round's data and the header patch: more bytes than the header says. */
static void test_repair_header_behind(void **state)
{
	struct fixture *f = *state;
	__u64 zero = 0;
	char out[1024];
	int fd = open(f->path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &zero, 8, offsetof(struct pdata_file_header, data.size)), 8);
	close(fd);
	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_OK);
	assert_non_null(strstr(out, "keeping 41 records"));
	assert_non_null(strstr(out, " more bytes than the header said"));
	assert_reads(f->path, NR_RECORDS);
}

/*
 * Killed after the header was patched but before the table was written: the
 * records end exactly where the header says, and nothing follows. That is not
 * complete: perf needs the table.
 */
static void test_repair_table_missing(void **state)
{
	struct fixture *f = *state;
	char out[1024];

	assert_int_equal(truncate(f->path, f->data_end), 0);
	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_OK);
	assert_null(strstr(out, "is complete"));
	assert_non_null(strstr(out, "keeping 41 records"));
	assert_non_null(strstr(out, "as the header said, without the feature table); cutting 0 bytes"));
	assert_reads(f->path, NR_RECORDS);
	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_OK);
	assert_non_null(strstr(out, "is complete"));
}

/* A table copy the header itself would overwrite is not auxtrig's. */
static void test_repair_refuses_table_in_header(void **state)
{
	struct fixture *f = *state;
	struct pdata_file_header h;
	char out[1024];
	int fd = open(f->path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
	h.event_types.offset = 34;
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	close(fd);
	log__set_level(-1);
	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_RUNTIME);
	log__set_level(LOG_INFO);
}

/* The file's bytes, malloc()ed. */
static void *slurp(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0 && !fstat(fd, &st));
	buf = malloc(st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, st.st_size, 0), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

/*
 * Only the copy of the feature table is damaged (perf ignores it): the
 * records end where the header says and a good table follows. repair
 * changed nothing is the only answer that cannot make the file worse; it
 * used to write the damaged copy over the good table.
 */
static void test_repair_damaged_copy_changes_nothing(void **state)
{
	struct fixture *f = *state;
	struct pdata_file_header h;
	struct pdata_file_section bad = { .offset = 0x1bb0, .size = 1ULL << 32 };
	size_t n0, n1;
	void *before, *after;
	char out[1024];
	int fd = open(f->path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(pwrite(fd, &bad, sizeof(bad), h.event_types.offset), sizeof(bad));
	close(fd);
	assert_reads(f->path, NR_RECORDS);
	before = slurp(f->path, &n0);
	assert_int_equal(run_repair(f->path, false, out, sizeof(out)), EXIT_OK);
	assert_non_null(strstr(out, "records end where the header says; its feature table differs from the copy "
				    "(perf ignores the copy): nothing to repair"));
	after = slurp(f->path, &n1);
	assert_true(n0 == n1 && !memcmp(before, after, n0));
	assert_reads(f->path, NR_RECORDS);
	free(before);
	free(after);

	/* killed inside the data with a damaged copy: refused, not made unreadable */
	assert_int_equal(truncate(f->path, f->data_end - 10), 0);
	assert_int_equal(run_repair_fd(f->path, false, out, sizeof(out), 2), EXIT_RUNTIME);
	assert_non_null(strstr(out, "its copy of the feature table is damaged (entry 0 lies outside the features before the data): cannot repair it"));
}

/* What is not a file repair could change in place: said at once, never a blocking open. */
static void test_repair_not_a_file(void **state)
{
	struct fixture *f = *state;
	char link[PATH_MAX + 16], fifo[PATH_MAX + 16], out[1024];

	snprintf(link, sizeof(link), "%s/link.data", f->dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.data", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (int dry = 0; dry < 2; dry++) {
		assert_int_equal(run_repair_fd(link, dry, out, sizeof(out), 2), EXIT_RUNTIME);
		assert_non_null(strstr(out, "is a symbolic link, not a regular file (repair changes a file in place: give the file itself)"));
		assert_null(strstr(out, "Too many levels"));
		/* a FIFO nobody writes: this would block forever on a blocking open */
		assert_int_equal(run_repair_fd(fifo, dry, out, sizeof(out), 2), EXIT_RUNTIME);
		assert_non_null(strstr(out, "is a FIFO, not a regular file (repair changes a file in place"));
		assert_int_equal(run_repair_fd(f->dir, dry, out, sizeof(out), 2), EXIT_RUNTIME);
		assert_non_null(strstr(out, "is a directory, not a regular file"));
	}
	unlink(link);
	unlink(fifo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_repair_complete_file_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_cut_inside_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_header_behind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_table_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_refuses_table_in_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_damaged_copy_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_not_a_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
