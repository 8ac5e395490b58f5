/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ELF_IMAGE_H
#define AUXTRIG_ELF_IMAGE_H

/*
 * sys/ layer: one ELF binary mapped once, with its symbols (user/sys/elf_image.c);
 * used by decode/binaries.c, elf_sym.c and record/gate.c.
 */

/**
 * DOC: ELF image
 *
 * One binary, mapped into memory once (read-only, shared), with what the
 * decoders and the symbol lookups need from it: its bytes, its program
 * headers and sections, its function symbols and its build ID.
 *
 * Symbols are kept in *file offset* space: a symbol's @offset is where its
 * first byte is in the file. That is the space a mapping's pgoff lives in
 * (MMAP records say "file offset pgoff is at address start"), so a runtime
 * address becomes a symbol lookup key with addr - start + pgoff, for every
 * kind of object:
 *
 * - ET_EXEC, ET_DYN: st_value through the PT_LOAD segment that holds it;
 * - ET_REL (kernel modules): only .text is placed (the kernel puts a
 *   module's .text at the address /proc/modules and perf's MMAP record
 *   give), so a symbol of .text is at sh_offset(.text) + st_value and the
 *   mapping's effective pgoff is sh_offset(.text) (elf_image__rel_text());
 * - PLT entries get symbols named "NAME@plt" the way perf 6.1 synthesises
 *   them: for each .rela.plt (or .rel.plt) entry in order, one entry of
 *   .plt after its header (x86-64 and others: sh_entsize each, header one
 *   entry; arm64: 32-byte header, 16-byte entries; arm: 20 and 12).
 *
 * Symbols are function-like ones as perf 6.1 keeps them (STT_FUNC,
 * STT_GNU_IFUNC, and named STT_NOTYPE labels in sections, not the Arm
 * mapping symbols $x/$d/$a/$t), .symtab if the file has one, else .dynsym;
 * among symbols at one address the one perf would keep; a symbol of size 0
 * reaches to the next one (the last one to the next 4 KiB boundary + 4 KiB).
 *
 * A file that is not ELF64 little endian is still an image: its bytes are
 * the mapping's content, it has no sections and no symbols.
 *
 * Every offset and size read from the file is checked against the file: a
 * corrupt ELF file gives an image without the parts that do not fit, never
 * a read outside the mapping.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct elf_image;

/** struct elf_image_seg - a PT_LOAD program header. */
struct elf_image_seg {
	__u64 vaddr, offset, filesz, memsz;
	__u32 flags;		/* PF_X, PF_W, PF_R */
};

/** struct elf_image_sec - a section header. */
struct elf_image_sec {
	const char *name;	/* "" when it has none */
	__u64 addr, offset, size, flags, entsize;
	__u32 type, link;
};

/** struct elf_image_sym - a function symbol, in file offset space (see DOC). */
struct elf_image_sym {
	__u64 offset;		/* file offset of its first byte */
	__u64 end;		/* file offset just past it (> @offset) */
	const char *name;
};

/**
 * elf_image__open() - map @path.
 *
 * Only regular files are opened (a FIFO, a device or a directory is refused
 * without being opened for reading, so nothing blocks on it).
 *
 * Return: the image, or NULL with errno set: ENOENT, EACCES… from open,
 * EISDIR/ENODEV for something that is not a regular file (a FIFO: ENODEV),
 * ENOMEM.
 */
struct elf_image *elf_image__open(const char *path);

/**
 * elf_image__new_mem() - an image over @len bytes at @buf, which the caller
 * keeps alive and unchanged until elf_image__delete() (fuzzing, tests).
 */
struct elf_image *elf_image__new_mem(const void *buf, size_t len, const char *name);

/** elf_image__delete() - unmap and free; NULL is fine. */
void elf_image__delete(struct elf_image *img);

/** elf_image__path() - the name it was opened with. */
const char *elf_image__path(const struct elf_image *img);

/** elf_image__bytes() - the whole file. */
const unsigned char *elf_image__bytes(const struct elf_image *img, size_t *len);

/** elf_image__type() - e_type (ET_EXEC, ET_DYN, ET_REL...), 0 if not ELF64 LE. */
int elf_image__type(const struct elf_image *img);

/** elf_image__machine() - e_machine (EM_X86_64, EM_AARCH64...), 0 if not ELF. */
int elf_image__machine(const struct elf_image *img);

/** elf_image__nr_segs() - number of PT_LOAD segments. */
size_t elf_image__nr_segs(const struct elf_image *img);
/** elf_image__seg() - PT_LOAD segment @i (file order), NULL past the end. */
const struct elf_image_seg *elf_image__seg(const struct elf_image *img, size_t i);

/** elf_image__nr_secs() - number of section headers. */
size_t elf_image__nr_secs(const struct elf_image *img);
/** elf_image__sec() - section @i, NULL past the end. */
const struct elf_image_sec *elf_image__sec(const struct elf_image *img, size_t i);
/** elf_image__sec_by_name() - the first section named @name, or NULL. */
const struct elf_image_sec *elf_image__sec_by_name(const struct elf_image *img, const char *name);

/**
 * elf_image__rel_text() - for an ET_REL object, its .text section (the part
 * a module mapping covers), else NULL.
 */
const struct elf_image_sec *elf_image__rel_text(const struct elf_image *img);

/**
 * elf_image__nr_syms() - number of function symbols (loaded at the first
 * call; a file with none, or not ELF, has 0).
 */
size_t elf_image__nr_syms(struct elf_image *img);
/** elf_image__sym() - symbol @i in ascending offset order, NULL past the end. */
const struct elf_image_sym *elf_image__sym(struct elf_image *img, size_t i);
/** elf_image__find_sym() - the symbol whose [offset, end) holds @offset, or NULL. */
const struct elf_image_sym *elf_image__find_sym(struct elf_image *img, __u64 offset);

/**
 * elf_image__symbol_file_offset() - the file offset of function @symbol's
 * code as uprobes take it (st_value - sh_addr + sh_offset of its section),
 * from .symtab, else .dynsym.
 * Return: 0, -ENOENT (no such function), -ENOEXEC (not ELF).
 */
int elf_image__symbol_file_offset(const struct elf_image *img, const char *symbol, __u64 *off);

/**
 * elf_image__symbol_value() - st_value of the first symbol named @symbol
 * with a non-zero value, of any type, in the symbol tables in section order
 * (a data object's address in an executable, for a breakpoint).
 * Return: 0, -ENOENT, -ENOEXEC (not ELF).
 */
int elf_image__symbol_value(const struct elf_image *img, const char *symbol, __u64 *value);

/**
 * elf_image__build_id() - the GNU build ID note (NT_GNU_BUILD_ID), up to 20
 * bytes into @bid. Return: its length, or 0 if there is none.
 */
size_t elf_image__build_id(const struct elf_image *img, __u8 bid[20]);

#endif
