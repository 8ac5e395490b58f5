/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TEST_PERF_ORACLE_H
#define AUXTRIG_TEST_PERF_ORACLE_H

/**
 * DOC: perf as a test oracle
 *
 * Unit tests check the files auxtrig writes with the real perf 6.1 reader
 * (/usr/bin/perf, or $AUXTRIG_PERF). Tests that need it skip when it is
 * missing, except under CI=true where a missing perf is a failure.
 */

#include <stdbool.h>
#include <stddef.h>

/** perf_oracle__path() - the perf binary, or NULL if not installed. */
const char *perf_oracle__path(void);

/**
 * perf_oracle__need() - in a cmocka test: skip it when perf is missing,
 * except under CI=true, where that fails it.
 */
void perf_oracle__need(void);

/**
 * perf_oracle__run() - run perf with @args (NULL-terminated, without "perf").
 * @cwd: directory to run in (where --itrace=d writes intel_pt.log); NULL: inherit
 * @out: receives stdout and stderr together, malloc()ed, NUL-terminated
 * Return: perf's exit status, or -1 if it could not run.
 */
int perf_oracle__run(const char *cwd, const char *const args[], char **out);

/**
 * perf_oracle__problem() - first line of @out that says something went
 * wrong ("Warning", "warning", "error", "Reserved bits", "incompatible",
 * "out of order", "failed"), or NULL if clean. Points into @out.
 */
const char *perf_oracle__problem(const char *out);

/** test_tmpdir__new() - mkdtemp() under $TMPDIR; returns a malloc()ed path. */
char *test_tmpdir__new(void);
/** test_tmpdir__delete() - remove the directory and the files in it (kept if $AUXTRIG_TEST_KEEP is set); frees @dir. */
void test_tmpdir__delete(char *dir);

/** struct test_datafile - a fresh directory and the path of a perf.data file in it. */
struct test_datafile {
	char *dir;
	char path[4096];
};
/** test_datafile__new() - make @df's directory (test_tmpdir__new()). Return: 0, or -1 if it could not. */
int test_datafile__new(struct test_datafile *df);
/** test_datafile__delete() - remove @df's directory and its files (test_tmpdir__delete()). */
void test_datafile__delete(struct test_datafile *df);

/** test_fixture_path() - $AUXTRIG_TOP/tests/fixtures/@rel (or ./tests/fixtures/@rel) in a static buffer. */
const char *test_fixture_path(const char *rel);

/** test_read_file() - whole file, malloc()ed; NULL on error. */
char *test_read_file(const char *path, size_t *len);

/**
 * test_file_replace_last() - in file @path, write the @to_len bytes at @to
 * over the last occurrence of the @from_len bytes at @from (a header string
 * of the file, say). Return: 0, or -1 if it could not (not found, I/O).
 */
int test_file_replace_last(const char *path, const void *from, size_t from_len, const void *to, size_t to_len);

#endif
