// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig repair` (user/cmd/repair.c) on any file: it refuses it or
 * completes it, never crashes; -n never changes the file; a file it
 * repaired is complete: a second repair succeeds and changes nothing; and
 * it never makes a file worse: what the reader (the one auxtrig script and
 * report use) read of it before, it reads after.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/sys/log.h"

static char dir[4000], path[4096];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/auxtrig-fuzz-repair.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/f", dir);
	atexit(cleanup);
	return 0;
}

static void put(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd))
		abort();
}

/* The file's bytes (malloc'ed, *size set). */
static uint8_t *get(size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0)
		abort();
	rewind(f);
	buf = malloc(n + 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n)
		abort();
	fclose(f);
	*size = n;
	return buf;
}

/*
 * How well the reader reads the file: 0 it refuses it, 1 it opens it but a
 * record or a feature fails, 2 it reads it to its end; @nr the records read.
 */
static int reads(size_t *nr)
{
	struct pdata_reader *r = pdata_reader__open(path);
	struct pdata_event ev;
	__u64 pos = 0;
	int ret, level = 2;

	*nr = 0;
	if (!r)
		return 0;
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0)
		(*nr)++;
	if (ret < 0)
		level = 1;
	for (unsigned int feat = 1; feat < 256 && level == 2; feat++) {
		const void *d;
		size_t len;

		if (pdata_reader__has_feature(r, feat) && pdata_reader__feature(r, feat, &d, &len))
			level = 1;
	}
	pdata_reader__delete(r);
	return level;
}

static int repair(int dry_run)
{
	char *argv[] = { "repair", dry_run ? "-n" : path, dry_run ? path : NULL, NULL };

	return cmd_repair(dry_run ? 3 : 2, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *once, *twice;
	size_t n1, n2, nr_before, nr_after;
	int ret, before, after;

	if (size > (1 << 20))
		return 0;
	log__set_level(-1);
	put(data, size);
	before = reads(&nr_before);
	ret = repair(1);
	if (ret != EXIT_OK && ret != EXIT_RUNTIME)
		abort();
	once = get(&n1);
	if (n1 != size || memcmp(once, data, size))
		abort();	/* -n changed the file */
	free(once);

	ret = repair(0);
	if (ret != EXIT_OK) {
		if (ret != EXIT_RUNTIME)
			abort();
		return 0;
	}
	after = reads(&nr_after);
	if (after < before || (before == 2 && nr_after < nr_before))
		abort();	/* repair made the file worse */
	once = get(&n1);
	if (repair(0) != EXIT_OK)
		abort();	/* what repair made, repair refuses */
	twice = get(&n2);
	if (n1 != n2 || memcmp(once, twice, n1))
		abort();	/* a repaired file is not complete */
	free(once);
	free(twice);
	return 0;
}
