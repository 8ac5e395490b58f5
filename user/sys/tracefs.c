// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/sys/c_int_type.h"
#include "auxtrig/sys/tracefs.h"

static char root_found[PATH_MAX];

void tracefs__set_root(const char *root)
{
	snprintf(root_found, sizeof(root_found), "%s", root ? root : "");
}

int tracefs__find_mount(char *buf, size_t size)
{
	static const char *const preferred[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char found[2][PATH_MAX] = { "", "" }, other[PATH_MAX] = "", debugfs[PATH_MAX] = "";
	struct mntent *m;
	FILE *f;

	f = setmntent("/proc/mounts", "re");
	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		/* Old systems: tracing under debugfs. A tracefs mount wins if both exist. */
		if (!strcmp(m->mnt_type, "debugfs") && !debugfs[0])
			snprintf(debugfs, sizeof(debugfs), "%s/tracing", m->mnt_dir);
		if (strcmp(m->mnt_type, "tracefs"))
			continue;
		for (int i = 0; i < 2; i++)
			if (!strcmp(m->mnt_dir, preferred[i]))
				snprintf(found[i], sizeof(found[i]), "%s", m->mnt_dir);
		if (!other[0])
			snprintf(other, sizeof(other), "%s", m->mnt_dir);
	}
	endmntent(f);
	snprintf(buf, size, "%s", found[0][0] ? found[0] : found[1][0] ? found[1] : other[0] ? other : debugfs);
	return buf[0] ? 0 : -ENOENT;
}

const char *tracefs__root(void)
{
	int err;

	if (root_found[0])
		return root_found;
	err = tracefs__find_mount(root_found, sizeof(root_found));
	if (err) {
		root_found[0] = '\0';
		errno = -err;
		return NULL;
	}
	return root_found;
}

static int read_file(const char *path, char **out)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *tmp;
	FILE *f;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		free(buf);
		return err;
	}
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);

		len += n;
		if (len < cap - 1)
			break;
		cap *= 2;
		tmp = realloc(buf, cap);
		if (!tmp) {
			err = -ENOMEM;
			break;
		}
		buf = tmp;
	}
	if (ferror(f) && !err)
		err = -EIO;
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/*
 * One format line: "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;"
 * TYPE NAME may be "const char * filename", "char prev_comm[16]",
 * "__data_loc char[] name" or "__rel_loc char[] name".
 */
static int parse_field(char *line, struct tp_field *f, bool common)
{
	char *decl, *end, *name, *p;

	memset(f, 0, sizeof(*f));
	decl = strstr(line, "field:");
	if (!decl)
		return -EINVAL;
	decl += 6;
	end = strchr(decl, ';');
	if (!end)
		return -EINVAL;
	*end = '\0';
	p = strstr(end + 1, "offset:");
	if (!p)
		return -EINVAL;
	f->offset = strtoul(p + 7, NULL, 10);
	p = strstr(end + 1, "size:");
	if (!p)
		return -EINVAL;
	f->size = strtoul(p + 5, NULL, 10);
	p = strstr(end + 1, "signed:");
	f->is_signed = p && p[7] == '1';

	/* The name is the last identifier of the declaration, before any [N]. */
	name = decl + strlen(decl);
	while (name > decl && name[-1] == ']') {
		while (name > decl && name[-1] != '[')
			name--;
		if (name > decl)
			name--;
		*name = '\0';
		f->is_array = true;
	}
	while (name > decl && (name[-1] == ' '))
		*--name = '\0';
	while (name > decl && name[-1] != ' ' && name[-1] != '*')
		name--;
	snprintf(f->name, sizeof(f->name), "%s", name);
	while (name > decl && (name[-1] == ' '))
		name--;
	snprintf(f->type, sizeof(f->type), "%.*s", (int)(name - decl), decl);
	f->is_dynamic = !strncmp(decl, "__data_loc", 10) || !strncmp(decl, "__rel_loc", 9);
	f->is_rel = !strncmp(decl, "__rel_loc", 9);
	f->is_common = common;
	return f->name[0] ? 0 : -EINVAL;
}

int tp_field__int_type(const struct tp_field *f, unsigned int *size, bool *is_signed)
{
	char type[sizeof(f->type)], *w, *save = NULL;
	int n[C_INT_NR_SPECIFIERS] = { 0 }, words = 0, td = 0;
	unsigned int bytes;

	if (f->is_array || f->is_dynamic || strchr(f->type, '*') || strchr(f->type, '['))
		return -ENOENT;
	snprintf(type, sizeof(type), "%s", f->type);
	for (w = strtok_r(type, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		int i;

		if (!strcmp(w, "const") || !strcmp(w, "volatile"))
			continue;
		i = c_int_type__specifier(w, strlen(w));
		if (i >= 0) {
			n[i]++;
			words++;
			continue;
		}
		if (td)
			return -ENOENT; /* two typedefs */
		td = c_int_type__typedef(w, strlen(w), true);
		if (!td)
			return -ENOENT; /* struct, enum, an unknown typedef */
	}
	if (td) {
		if (words)
			return -ENOENT;
		*size = td < 0 ? -td : td;
		*is_signed = td < 0;
		return 0;
	}
	bytes = c_int_type__size(n);
	if (!bytes)
		return -ENOENT;
	*size = bytes;
	/* a plain char is as signed as the format says (it knows the architecture) */
	*is_signed = n[C_INT_UNSIGNED] ? false : n[C_INT_SIGNED] ? true : n[C_INT_CHAR] ? f->is_signed : true;
	return 0;
}

int tp_format__parse(const char *text, struct tp_format *fmt)
{
	char *copy = strdup(text), *line, *save = NULL;
	bool common = true;
	size_t cap = 0;
	int err = 0;

	fmt->id = 0;
	fmt->size = 0;
	fmt->nr_fields = 0;
	fmt->fields = NULL;
	fmt->print_fmt = NULL;
	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct tp_field *f;

		if (!strncmp(line, "ID:", 3)) {
			fmt->id = strtoul(line + 3, NULL, 10);
			continue;
		}
		if (!strncmp(line, "print fmt:", 10)) {
			fmt->print_fmt = strdup(line + 10 + (line[10] == ' '));
			if (!fmt->print_fmt)
				err = -ENOMEM;
			break;
		}
		if (!strstr(line, "field:"))
			continue;
		if (fmt->nr_fields == cap) {
			cap = cap ? cap * 2 : 16;
			f = realloc(fmt->fields, cap * sizeof(*f));
			if (!f) {
				err = -ENOMEM;
				goto out;
			}
			fmt->fields = f;
		}
		f = &fmt->fields[fmt->nr_fields];
		/* Common fields come first; the first non-common name ends them. */
		if (common && !strstr(line, " common_"))
			common = false;
		err = parse_field(line, f, common);
		if (err)
			goto out;
		if (f->offset + f->size > fmt->size)
			fmt->size = f->offset + f->size;
		fmt->nr_fields++;
	}
	if (!err && !fmt->id)
		err = -EINVAL;
out:
	free(copy);
	if (err)
		tp_format__exit(fmt);
	return err;
}

int tracefs__load_format(const char *system, const char *name, struct tp_format *fmt)
{
	char path[PATH_MAX], *text = NULL;
	const char *root = tracefs__root();
	int err;

	memset(fmt, 0, sizeof(*fmt));
	if (!root)
		return -errno;
	if (strchr(system, '/') || strchr(name, '/') || !strcmp(system, "..") || !strcmp(name, ".."))
		return -ENOENT;
	snprintf(fmt->system, sizeof(fmt->system), "%s", system);
	snprintf(fmt->name, sizeof(fmt->name), "%s", name);
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, system, name);
	err = read_file(path, &text);
	if (err)
		return err == -ENOTDIR ? -ENOENT : err;
	err = tp_format__parse(text, fmt);
	free(text);
	return err;
}

void tp_format__exit(struct tp_format *fmt)
{
	free(fmt->fields);
	fmt->fields = NULL;
	fmt->nr_fields = 0;
	free(fmt->print_fmt);
	fmt->print_fmt = NULL;
}

const struct tp_field *tp_format__field(const struct tp_format *fmt, const char *name)
{
	for (size_t i = 0; i < fmt->nr_fields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return NULL;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_dir_entry(const struct dirent *d)
{
	return d->d_name[0] != '.' && (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN);
}

int tracefs__expand(const char *pattern, int (*cb)(const char *system, const char *name, void *arg),
		    void *arg)
{
	char sys_pat[TP_NAME_MAX], name_pat[TP_NAME_MAX], path[PATH_MAX];
	const char *root = tracefs__root(), *colon = strchr(pattern, ':');
	struct dirent **systems = NULL, **events = NULL;
	int nsys, nev, matches = 0, err = 0;

	if (!root)
		return -errno;
	if (!colon || colon == pattern || !colon[1] || strchr(colon + 1, ':'))
		return -EINVAL;
	snprintf(sys_pat, sizeof(sys_pat), "%.*s", (int)(colon - pattern), pattern);
	snprintf(name_pat, sizeof(name_pat), "%s", colon + 1);

	snprintf(path, sizeof(path), "%s/events", root);
	nsys = scandir(path, &systems, is_dir_entry, name_cmp);
	if (nsys < 0)
		return -errno;
	for (int i = 0; i < nsys && !err; i++) {
		if (fnmatch(sys_pat, systems[i]->d_name, 0))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", root, systems[i]->d_name);
		nev = scandir(path, &events, is_dir_entry, name_cmp);
		if (nev < 0)
			continue;
		for (int j = 0; j < nev; j++) {
			if (!err && !fnmatch(name_pat, events[j]->d_name, 0)) {
				matches++;
				err = cb(systems[i]->d_name, events[j]->d_name, arg);
			}
			free(events[j]);
		}
		free(events);
	}
	for (int i = 0; i < nsys; i++)
		free(systems[i]);
	free(systems);
	return err ? err : matches;
}
