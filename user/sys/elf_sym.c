// SPDX-License-Identifier: BSD-2-Clause
/* A function's file offset in an ELF binary, for uprobe PMU events. */
#include <errno.h>
#include <string.h>

#include "auxtrig/sys/elf_image.h"
#include "auxtrig/sys/elf_sym.h"
#include "auxtrig/sys/log.h"

int elf_sym__file_offset(const char *path, const char *symbol, __u64 *off)
{
	struct elf_image *img = elf_image__open(path);
	int err;

	if (!img) {
		err = -errno;
		pr_err("uprobe:%s:%s: cannot open %s: %s\n", path, symbol, path,
		       err == -ENOENT ? "no such file" : err == -ENODEV ? "not a regular file" : strerror(-err));
		return err;
	}
	err = elf_image__symbol_file_offset(img, symbol, off);
	if (err == -ENOEXEC)
		pr_err("uprobe:%s:%s: %s is not an ELF file\n", path, symbol, path);
	else if (err)
		pr_err("uprobe:%s:%s: no function %s in %s\n", path, symbol, symbol, path);
	elf_image__delete(img);
	return err;
}

int elf_sym__foreach_func(const char *path, int (*cb)(const char *name, void *arg), void *arg)
{
	struct elf_image *img = elf_image__open(path);
	size_t nr;
	int err = 0, n = 0;

	if (!img)
		return -errno;
	if (!elf_image__type(img)) {
		elf_image__delete(img);
		return -ENOEXEC;
	}
	nr = elf_image__nr_syms(img);
	for (size_t i = 0; i < nr && !err; i++) {
		const struct elf_image_sym *s = elf_image__sym(img, i);

		if (!s->name[0])
			continue;
		n++;
		err = cb(s->name, arg);
	}
	elf_image__delete(img);
	return err ? err : n;
}
