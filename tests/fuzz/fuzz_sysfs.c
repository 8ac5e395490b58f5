// SPDX-License-Identifier: BSD-2-Clause
/*
 * PMU discovery from sysfs (user/sys/pmu.c) and the AUX event specs parsed
 * against it (user/record/aux_event.c), on a fake sysfs tree built from the
 * input. Whatever the files say, discovery never crashes, keeps only format
 * terms it could parse (mask not 0) in name order, and an event spec is
 * accepted or refused.
 *
 * Input, text: the first line is an event spec ("intel_pt/mtc_period=3/u");
 * every further line "PATH=CONTENT" makes a file under
 * <root>/bus/event_source/devices/, PATH of at most 6 components of
 * [A-Za-z0-9_.-] (no "." or ".."), CONTENT with "\n" standing for a newline.
 * tests/fuzz/sysfs_seeds.sh turns the tests/fixtures/sysfs-* trees into this.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/lang/aux_event.h"
#include "auxtrig/sys/pmu.h"

#define MAX_FILES 256
#define MAX_INPUT (64 << 10)

static char root[4000], devices[4200];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_tree(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/auxtrig-fuzz-sysfs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		abort();
	snprintf(devices, sizeof(devices), "%s/bus/event_source/devices", root);
	atexit(rm_tree);
	return 0;
}

static bool path_ok(const char *p)
{
	int parts = 0;

	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.') || ++parts > 6)
			return false;
		for (size_t i = 0; i < n; i++) {
			char ch = c[i];

			if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') && !(ch >= '0' && ch <= '9') &&
			    ch != '_' && ch != '.' && ch != '-')
				return false;
		}
		c += n;
		if (*c == '/')
			c++;
	}
	return parts > 0;
}

/* mkdir -p of @path's directory, then the file. */
static void make_file(const char *rel, const char *content, size_t len)
{
	char path[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", devices, rel);
	for (char *s = path + strlen(devices) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return;	/* a file where a directory must be, or the reverse */
	fwrite(content, 1, len, f);
	fclose(f);
}

static void check_pmu(const struct pmu *p)
{
	for (size_t i = 0; i < p->nr_formats; i++) {
		const struct pmu_format *f = &p->formats[i];
		struct perf_event_attr attr = { 0 };

		if (!f->mask || (i && strcmp(p->formats[i - 1].name, f->name) >= 0))
			abort();
		if (pmu__find_format(p, f->name) != f)
			abort();
		(void)pmu__config_term(p, f->name, 1, &attr);
		(void)pmu__config_term(p, f->name, pmu_format__max(f), &attr);
		if ((pmu_format__encode(f, ~0ull) & ~f->mask) != 0)
			abort();
	}
	for (size_t i = 0; i < p->nr_caps; i++) {
		__u64 v;

		if (i && strcmp(p->caps[i - 1].name, p->caps[i].name) >= 0)
			abort();
		(void)pmu__cap_value(p, p->caps[i].name, &v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[MAX_INPUT + 1], spec[256];
	struct aux_event_opts snap = { .per_thread = true, .snapshot = true, .aux_mmap_size = 1 << 16 };
	struct pmu_set *set = NULL;
	struct aux_event ev;
	char *line, *next;
	int files = 0;

	if (size > MAX_INPUT)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rm_tree();
	mkdir(root, 0700);
	for (char *s = devices + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(devices, 0755);
		*s = '/';
	}
	mkdir(devices, 0755);

	next = strchr(text, '\n');
	if (next)
		*next++ = '\0';
	snprintf(spec, sizeof(spec), "%s", text);
	for (line = next; line && *line && files < MAX_FILES; line = next) {
		char *eq, *w, *r;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if (!path_ok(line))
			continue;
		for (w = r = eq + 1; *r; r++) {
			if (r[0] == '\\' && r[1] == 'n') {
				*w++ = '\n';
				r++;
			} else {
				*w++ = *r;
			}
		}
		make_file(line, eq + 1, w - (eq + 1));
		files++;
	}

	if (pmu__scan(root, &set))
		return 0;
	for (size_t i = 0; i < set->nr; i++) {
		struct pmu *one = NULL;

		check_pmu(set->pmus[i]);
		if (i && strcmp(set->pmus[i - 1]->name, set->pmus[i]->name) >= 0)
			abort();
		if (pmu_set__find(set, set->pmus[i]->name) != set->pmus[i])
			abort();
		if (!pmu__read(root, set->pmus[i]->name, &one))
			pmu__delete(one);
	}
	(void)pmu_set__nr_aux(set);
	(void)aux_event__parse(&ev, set, spec, NULL);
	(void)aux_event__parse(&ev, set, spec, &snap);
	pmu_set__delete(set);
	return 0;
}
