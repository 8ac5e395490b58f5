// SPDX-License-Identifier: BSD-2-Clause
/* Helpers for unit tests: run the real perf on our files, temp dirs, fixtures. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

#include "perf_oracle.h"

const char *perf_oracle__path(void)
{
	const char *p = getenv("AUXTRIG_PERF");

	if (!p || !*p)
		p = "/usr/bin/perf";
	return access(p, X_OK) ? NULL : p;
}

int perf_oracle__run(const char *cwd, const char *const args[], char **out)
{
	const char *perf = perf_oracle__path();
	int pipefd[2], status;
	size_t len = 0, cap = 65536;
	char *buf;
	pid_t pid;

	*out = NULL;
	if (!perf || pipe(pipefd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		const char *argv[64];
		int n = 0;
		int devnull = open("/dev/null", O_RDONLY);

		argv[n++] = "perf";
		for (int i = 0; args[i] && n < 63; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		dup2(devnull, 0);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		if (cwd && chdir(cwd))
			_exit(126);
		/* No pager, no user config, no ~/.debug cache: the file alone decides the output. */
		setenv("PAGER", "cat", 1);
		setenv("PERF_PAGER", "cat", 1);
		setenv("PERF_CONFIG", "/dev/null", 1);
		setenv("PERF_BUILDID_DIR", "/nonexistent", 1);
		setenv("HOME", "/nonexistent", 1);	/* perf 6.1 reads $HOME/.debug despite PERF_BUILDID_DIR */
		execv(perf, (char *const *)argv);
		_exit(127);
	}
	close(pipefd[1]);
	buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		n = read(pipefd[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	buf[len] = 0;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*out = buf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char *perf_oracle__problem(const char *out)
{
	static const char *const bad[] = {
		"Warning", "warning", "WARNING", "error", "Error", "Reserved bits", "incompatible",
		"out of order", "failed", "Failed",
	};
	const char *line = out;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		/* Within the line: strstr() would scan the rest of the output at every line. */
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (memmem(line, len, bad[i], strlen(bad[i])))
				return line;
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

char *test_tmpdir__new(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/auxtrig-test.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

int test_datafile__new(struct test_datafile *df)
{
	df->dir = test_tmpdir__new();
	if (!df->dir)
		return -1;
	snprintf(df->path, sizeof(df->path), "%s/perf.data", df->dir);
	return 0;
}

void test_datafile__delete(struct test_datafile *df)
{
	test_tmpdir__delete(df->dir);
	df->dir = NULL;
}

void test_tmpdir__delete(char *dir)
{
	DIR *d;
	struct dirent *e;

	if (!dir)
		return;
	if (getenv("AUXTRIG_TEST_KEEP")) { /* debugging: leave the files for a look with perf */
		fprintf(stderr, "kept %s\n", dir);
		free(dir);
		return;
	}
	d = opendir(dir);
	if (d) {
		while ((e = readdir(d))) {
			char *p;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (asprintf(&p, "%s/%s", dir, e->d_name) >= 0) {
				unlink(p);
				free(p);
			}
		}
		closedir(d);
	}
	rmdir(dir);
	free(dir);
}

const char *test_fixture_path(const char *rel)
{
	static char path[4096];
	const char *top = getenv("AUXTRIG_TOP");

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", top && *top ? top : ".", rel);
	return path;
}

char *test_read_file(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "re");
	size_t len = 0, cap = 65536;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap);
	for (;;) {
		size_t n;

		if (len + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		n = fread(buf + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	fclose(f);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
}

void perf_oracle__need(void)
{
	if (perf_oracle__path())
		return;
	if (getenv("CI") && !strcmp(getenv("CI"), "true"))
		fail_msg("perf is not installed, and CI=true requires the perf oracle");
	skip();
}

int test_file_replace_last(const char *path, const void *from, size_t from_len, const void *to, size_t to_len)
{
	size_t len;
	char *buf = test_read_file(path, &len), *p = NULL;
	FILE *f;
	int ret = -1;

	if (!buf)
		return -1;
	for (size_t i = 0; i + from_len <= len; i++)
		if (!memcmp(buf + i, from, from_len))
			p = buf + i;
	if (p && (size_t)(p - buf) + to_len <= len) {
		memcpy(p, to, to_len);
		f = fopen(path, "we");
		if (f) {
			ret = fwrite(buf, 1, len, f) == len ? 0 : -1;
			if (fclose(f))
				ret = -1;
		}
	}
	free(buf);
	return ret;
}
