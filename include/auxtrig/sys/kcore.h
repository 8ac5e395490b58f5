/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_KCORE_H
#define AUXTRIG_KCORE_H

/*
 * sys/ layer: what of the kernel's memory is code, read from kallsyms,
 * /proc/modules and a kcore file's program headers (user/sys/kcore.c);
 * used to keep the kernel's code with a recording (record/kcore_copy.h) and
 * to read the running kernel's code when decoding (decode/binaries.h).
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

/** struct kcore_seg - a PT_LOAD of a kcore file: @len bytes at @addr, at file offset @offset. */
struct kcore_seg {
	__u64 addr, len, offset;
};

/* At most this many PT_LOADs are read (a kcore has one per memory range: tens) */
#define KCORE_MAX_SEGS	4096

/**
 * kcore__parse_phdrs() - the PT_LOAD segments of a 64-bit
 * little-endian ELF whose first @len bytes (header and program headers) are
 * at @buf.
 * @segs: filled with at most KCORE_MAX_SEGS of them
 * @need: set to the bytes the program headers need, when @len is short
 * Return: the number of segments, -EAGAIN when @len < *@need (read more and
 * call again), or -EINVAL for what is not such an ELF file (logged with
 * pr_debug()).
 */
int kcore__parse_phdrs(const void *buf, size_t len, struct kcore_seg *segs, size_t *need);

/**
 * struct kcore_text - what of the kernel kallsyms and modules say is code:
 * page-aligned ranges as perf's kcore_copy__calc_maps() makes them.
 * @stext, @etext: the kernel's text
 * @mod_start, @mod_end: the modules' (0 when none is loaded)
 * @tramp: entry trampolines (x86 PTI), page-aligned; @nr_tramp of them
 * @nr_modules, @modules_size: /proc/modules' count and sizes
 */
struct kcore_text {
	__u64 stext, etext;
	__u64 mod_start, mod_end;
	__u64 tramp[8];
	size_t nr_tramp;
	size_t nr_modules;
	__u64 modules_size;
};

/*
 * The stdio buffer kallsyms is read with: /proc/kallsyms says 1 KiB as its
 * block size, which made reading its ~200,000 lines 5,000 read() calls.
 */
#define KALLSYMS_READ_BUF (64 * 1024)

/**
 * kcore__text() - read @kallsyms_path and @modules_path into @t.
 * Return: 0; -ENODATA when kallsyms shows no addresses (kptr_restrict, not
 * root) or no _stext; -errno from opening them.
 */
int kcore__text(const char *kallsyms_path, const char *modules_path, struct kcore_text *t);

/**
 * struct kcore_piece - one PT_LOAD of the copy: @len bytes at @addr, read
 * from @src_offset of the source, written at @dst_offset (pieces that remap
 * another's bytes share them: @remap).
 */
struct kcore_piece {
	__u64 addr, len, src_offset, dst_offset;
	bool remap;
};

/**
 * kcore__plan() - the pieces of @segs that @t says are code, laid out
 * from @data_offset on (perf's kcore_copy__read_maps() and layout).
 * @out: at most KCORE_MAX_SEGS pieces
 * Return: the number of pieces.
 */
size_t kcore__plan(const struct kcore_text *t, const struct kcore_seg *segs, size_t nr_segs, __u64 data_offset,
			struct kcore_piece *out);

/**
 * kcore__read_segs() - the executable PT_LOADs of the kcore file open as
 * @fd (kcore__parse_phdrs()), its first bytes (ELF and program headers) in
 * *@head (free it), *@head_len of them.
 * Return: the number of segments, or -errno (-EINVAL: not a kcore).
 */
int kcore__read_segs(int fd, struct kcore_seg *segs, unsigned char **head, size_t *head_len);

/**
 * kcore__read_code() - the code of kcore file @path (/proc/kcore, or a
 * copy) that kallsyms file @kallsyms says is code, read into memory.
 * @pieces, @bytes: set to the pieces (their @dst_offset into *@bytes) and
 *                  the bytes (free both)
 * Return: the number of pieces, or -errno.
 */
int kcore__read_code(const char *path, const char *kallsyms, struct kcore_piece **pieces, unsigned char **bytes);

/**
 * kcore__build_id() - the GNU build ID in ELF notes file @notes_path
 * (/sys/kernel/notes: the running kernel's) into @bid, *@len bytes.
 * Return: 0, -ENODATA without one, or -errno.
 */
int kcore__build_id(const char *notes_path, __u8 bid[20], size_t *len);

#endif
