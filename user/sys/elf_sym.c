// SPDX-License-Identifier: BSD-2-Clause
/* A function's file offset in an ELF binary, for uprobe PMU events. */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdlib.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/sys/elf_sym.h"
#include "auxtrig/sys/log.h"

/* The symbol in one symbol table: 0, or -ENOENT. */
static int elf_sym__find(Elf *elf, Elf_Scn *symscn, const GElf_Shdr *sh, const char *symbol, __u64 *off)
{
	Elf_Data *data = elf_getdata(symscn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr text;
		const char *name;

		if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || strcmp(name, symbol))
			continue;
		if (!gelf_getshdr(elf_getscn(elf, sym.st_shndx), &text))
			return -ENOENT;
		*off = sym.st_value - text.sh_addr + text.sh_offset;
		return 0;
	}
	return -ENOENT;
}

int elf_sym__file_offset(const char *path, const char *symbol, __u64 *off)
{
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int fd, err = -ENOENT;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("uprobe:%s:%s: cannot open %s: %s\n", path, symbol, path,
		       err == -ENOENT ? "no such file" : strerror(-err));
		return err;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		pr_err("uprobe:%s:%s: %s is not an ELF file\n", path, symbol, path);
		err = -ENOEXEC;
		goto out;
	}
	/* .symtab first (every function), then .dynsym (stripped binaries, libraries) */
	for (int pass = 0; pass < 2 && err; pass++) {
		scn = NULL;
		while (err && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			err = elf_sym__find(elf, scn, &sh, symbol, off);
		}
	}
	if (err)
		pr_err("uprobe:%s:%s: no function %s in %s\n", path, symbol, symbol, path);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

static void free_nothing(void *p)
{
	(void)p;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int elf_sym__foreach_func(const char *path, int (*cb)(const char *name, void *arg), void *arg)
{
	void *seen = NULL;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int fd, err = 0, n = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	for (int pass = 0; pass < 2 && !n && !err; pass++) {
		scn = NULL;
		while (!err && (scn = elf_nextscn(elf, scn))) {
			Elf_Data *data;
			GElf_Shdr sh;
			size_t nr;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			data = elf_getdata(scn, NULL);
			nr = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; data && i < nr && !err; i++) {
				const char *name;
				GElf_Sym sym;
				void *slot;

				if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (!name || !*name)
					continue;
				slot = tsearch(name, &seen, name_cmp);
				if (!slot) {
					err = -ENOMEM;
					break;
				}
				if (*(const char **)slot != name)
					continue;	/* already seen */
				n++;
				err = cb(name, arg);
			}
		}
	}
out:
	tdestroy(seen, free_nothing);
	if (elf)
		elf_end(elf);
	close(fd);
	return err ? err : n;
}
