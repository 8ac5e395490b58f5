/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ELF_SYM_H
#define AUXTRIG_ELF_SYM_H

/*
 * sys/ layer: symbol lookups in ELF files for probe points (user/sys/elf_sym.c),
 * on elf_image.h; used by record/window_map.c.
 */

#include <linux/types.h>

/**
 * elf_sym__file_offset() - where a function's code is in its ELF file: the
 * offset a uprobe PMU event takes in config2 (probe_offset), as libbpf and
 * perf compute it: st_value - sh_addr + sh_offset of the symbol's section.
 * @path: the binary.
 * @symbol: a function in .symtab or .dynsym.
 * @off: set on success.
 *
 * Return: 0; -ENOENT no such file or no such function (with a message);
 * -ENOEXEC not an ELF file; -errno otherwise.
 */
int elf_sym__file_offset(const char *path, const char *symbol, __u64 *off);

/**
 * elf_sym__foreach_func() - every function of @path as elf_image keeps them
 * (.symtab, or .dynsym when the file is stripped; "NAME@plt" entries too), in
 * address order; a name may come more than once.
 * @cb:	called per function; a non-zero return stops the walk and is returned
 * Return: the number of functions, -ENOENT no such file, -ENOEXEC not an ELF
 * file, other -errno, or what @cb returned. Prints nothing.
 */
int elf_sym__foreach_func(const char *path, int (*cb)(const char *name, void *arg), void *arg);

#endif
