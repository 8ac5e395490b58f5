/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ELF_USDT_H
#define AUXTRIG_ELF_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/**
 * DOC: USDT probes of a binary
 *
 * <sys/sdt.h> leaves one ELF note per probe in ``.note.stapsdt``: owner
 * "stapsdt", type 3, and a descriptor of three addresses (the probe's pc, the
 * ``.stapsdt.base`` address it was linked against, the semaphore or 0), 4 or
 * 8 bytes each as the file's class says, followed by three NUL-terminated
 * strings: provider, name and the argument specs ("-4@%eax 8@%rbx").
 */

/**
 * struct elf_usdt_probe - one probe, pointing into the note data
 * @provider, @name:	usdt:PATH:PROVIDER:NAME
 * @args:		the argument specs, "" when it has none
 * @pc, @base, @semaphore: as linked
 */
struct elf_usdt_probe {
	const char *provider;
	const char *name;
	const char *args;
	__u64 pc, base, semaphore;
};

typedef int (*elf_usdt_cb)(const struct elf_usdt_probe *probe, void *arg);

/**
 * elf_usdt__parse_notes() - every probe of one ``.note.stapsdt`` section's data.
 * @data, @size:	the section's bytes, in the host's byte order
 * @is64:		ELFCLASS64 (8-byte addresses) or ELFCLASS32 (4)
 * @cb:			called per probe in file order; a non-zero return stops
 *			the walk and is returned
 * Notes of other owners or types are skipped; a truncated or malformed note
 * ends the walk.
 * Return: the number of probes seen (>= 0), -EINVAL for a malformed note
 * (after the probes before it), or what @cb returned.
 */
int elf_usdt__parse_notes(const void *data, size_t size, bool is64, elf_usdt_cb cb, void *arg);

/**
 * elf_usdt__foreach() - every USDT probe of the ELF file @path.
 * Return: the number of probes (0: the file has none), -ENOENT no such file,
 * -ENOEXEC not an ELF file, other -errno, or what @cb returned.
 */
int elf_usdt__foreach(const char *path, elf_usdt_cb cb, void *arg);

#endif
