// SPDX-License-Identifier: BSD-2-Clause
/*
 * What of the kernel's memory is code: kallsyms, /proc/modules and a kcore
 * file's program headers read as perf 6.1 reads them for --kcore
 * (tools/perf/util/symbol-elf.c: kcore_copy__calc_maps()). See kcore.h.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/sys/kcore.h"
#include "auxtrig/sys/log.h"

int kcore__parse_phdrs(const void *buf, size_t len, struct kcore_seg *segs, size_t *need)
{
	Elf64_Ehdr eh;
	size_t n = 0;

	*need = sizeof(eh);
	if (len < sizeof(eh))
		return -EAGAIN;
	memcpy(&eh, buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		pr_debug("kcore: not a 64-bit little-endian ELF file with program headers\n");
		return -EINVAL;
	}
	if (eh.e_phoff < sizeof(eh) || eh.e_phoff > (1u << 20) || eh.e_phnum > KCORE_MAX_SEGS) {
		pr_debug("kcore: program headers at %#llx, %u of them: not a kcore\n", (unsigned long long)eh.e_phoff,
			 eh.e_phnum);
		return -EINVAL;
	}
	*need = eh.e_phoff + (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
	if (len < *need)
		return -EAGAIN;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, (const char *)buf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		/* perf's elf_read_maps(elf, true, ...): the loadable, executable ones */
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		if (ph.p_vaddr + ph.p_filesz < ph.p_vaddr || ph.p_offset + ph.p_filesz < ph.p_offset)
			continue;
		segs[n].addr = ph.p_vaddr;
		segs[n].len = ph.p_filesz;
		segs[n].offset = ph.p_offset;
		n++;
	}
	return (int)n;
}

static bool kcore__is_function(char type)
{
	/* perf's kallsyms__is_function() */
	return type == 'T' || type == 't' || type == 'W' || type == 'w';
}

/* perf's is_entry_trampoline() */
static bool kcore__is_trampoline(const char *name)
{
	return !strcmp(name, "__entry_SYSCALL_64_trampoline");
}

int kcore__text(const char *kallsyms_path, const char *modules_path, struct kcore_text *t)
{
	__u64 first_sym = 0, last_sym = 0, first_mod_sym = 0, last_mod_sym = 0, first_mod = 0;
	const __u64 page = 4096;
	char line[1024], *vbuf;
	FILE *f;
	int err = 0;

	memset(t, 0, sizeof(*t));
	f = fopen(kallsyms_path, "r");
	if (!f)
		return -errno;
	vbuf = malloc(KALLSYMS_READ_BUF);	/* glibc sizes a buffer of its own by st_blksize */
	if (vbuf)
		setvbuf(f, vbuf, _IOFBF, KALLSYMS_READ_BUF);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[512];

		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3 || !kcore__is_function(type) || !addr)
			continue;
		if (strchr(line, '[')) {	/* "name\t[module]" */
			if (!first_mod_sym || addr < first_mod_sym)
				first_mod_sym = addr;
			if (addr > last_mod_sym)
				last_mod_sym = addr;
			continue;
		}
		if (!first_sym || addr < first_sym)
			first_sym = addr;
		if (addr > last_sym)
			last_sym = addr;
		if (!strcmp(name, "_stext"))
			t->stext = addr;
		else if (!strcmp(name, "_etext"))
			t->etext = addr;
		else if (kcore__is_trampoline(name) && t->nr_tramp < sizeof(t->tramp) / sizeof(t->tramp[0]))
			t->tramp[t->nr_tramp++] = addr & ~(page - 1);
	}
	fclose(f);
	free(vbuf);
	if (!first_sym)
		return -ENODATA;
	f = fopen(modules_path, "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			unsigned long long size, addr;

			/* "name size refcount deps state address" */
			if (sscanf(line, "%*s %llu %*s %*s %*s %llx", &size, &addr) != 2)
				continue;
			t->nr_modules++;
			t->modules_size += size;
			if (addr && (!first_mod || addr < first_mod))
				first_mod = addr;
		}
		fclose(f);
	} else if (errno != ENOENT) {
		err = -errno;
	}
	/* perf's kcore_copy__calc_maps() */
	t->stext = (t->stext ? t->stext : first_sym) & ~(page - 1);
	if (t->etext)
		t->etext = (t->etext + page - 1) & ~(page - 1);
	else
		t->etext = ((last_sym + page - 1) & ~(page - 1)) + page;
	if (first_mod_sym && (!first_mod || first_mod_sym < first_mod))
		first_mod = first_mod_sym;
	if (last_mod_sym) {
		t->mod_start = first_mod & ~(page - 1);
		t->mod_end = ((last_mod_sym + page - 1) & ~(page - 1)) + page;
	}
	return err;
}

/* Add the part of segment @s inside [@lo, @hi) (perf's kcore_copy__map(): from @lo only if @lo is in it). */
static void kcore__clip(const struct kcore_seg *s, __u64 lo, __u64 hi, struct kcore_piece *out, size_t *n)
{
	__u64 end = s->addr + s->len;

	if (lo < s->addr || lo >= end || *n >= KCORE_MAX_SEGS)
		return;
	if (hi < lo)	/* wrapped: to the segment's end */
		hi = end;
	/* the whole piece: a caller's array may hold an earlier plan's */
	out[*n] = (struct kcore_piece){
		.addr = lo, .len = (hi < end ? hi : end) - lo, .src_offset = s->offset + (lo - s->addr),
	};
	(*n)++;
}

size_t kcore__plan(const struct kcore_text *t, const struct kcore_seg *segs, size_t nr_segs, __u64 data_offset,
			struct kcore_piece *out)
{
	const struct kcore_piece *k = NULL;
	__u64 rel = 0;
	size_t n = 0;

	for (size_t i = 0; i < nr_segs; i++) {
		kcore__clip(&segs[i], t->stext, t->etext, out, &n);
		if (t->mod_start)
			kcore__clip(&segs[i], t->mod_start, t->mod_end, out, &n);
		for (size_t j = 0; j < t->nr_tramp; j++)
			kcore__clip(&segs[i], t->tramp[j], t->tramp[j] + segs[i].len, out, &n);
	}
	/* pieces whose bytes are the kernel text's (a trampoline inside it) share them: perf's remaps */
	for (size_t i = 0; i < n; i++)
		if (out[i].addr <= t->stext && t->stext - out[i].addr < out[i].len) {
			k = &out[i];
			break;
		}
	for (size_t i = 0; i < n; i++) {
		if (k && &out[i] != k && out[i].src_offset >= k->src_offset &&
		    out[i].src_offset + out[i].len <= k->src_offset + k->len) {
			out[i].remap = true;
			continue;
		}
		out[i].dst_offset = data_offset + rel;
		rel += out[i].len;
	}
	for (size_t i = 0; i < n; i++)
		if (out[i].remap)
			out[i].dst_offset = k->dst_offset + (out[i].src_offset - k->src_offset);
	return n;
}


/* The ELF header and program headers of @kcore's first bytes, read until they are whole. */
int kcore__read_segs(int fd, struct kcore_seg *segs, unsigned char **head, size_t *head_len)
{
	size_t need = sizeof(Elf64_Ehdr), have = 0;
	unsigned char *buf = NULL;
	int n;

	for (;;) {
		unsigned char *nb = realloc(buf, need);

		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		while (have < need) {
			ssize_t r = pread(fd, buf + have, need - have, (off_t)have);

			if (r <= 0) {
				free(buf);
				return r < 0 ? -errno : -EINVAL;
			}
			have += r;
		}
		n = kcore__parse_phdrs(buf, have, segs, &need);
		if (n != -EAGAIN)
			break;
	}
	*head = buf;
	*head_len = have;
	return n;
}

int kcore__read_code(const char *path, const char *kallsyms, struct kcore_piece **pieces, unsigned char **bytes)
{
	static struct kcore_seg segs[KCORE_MAX_SEGS];
	struct kcore_piece *p = NULL;
	unsigned char *head = NULL, *buf = NULL;
	struct kcore_text t;
	size_t head_len, n;
	__u64 total = 0;
	int fd, nr, err;

	*pieces = NULL;
	*bytes = NULL;
	/* kcore first: without it (no root, no /proc/kcore), kallsyms is not read for nothing */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = kcore__text(kallsyms, "/dev/null", &t);
	if (err) {
		close(fd);
		return err;
	}
	nr = kcore__read_segs(fd, segs, &head, &head_len);
	free(head);
	if (nr < 0) {
		close(fd);
		return nr;
	}
	p = calloc(KCORE_MAX_SEGS, sizeof(*p));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	n = kcore__plan(&t, segs, (size_t)nr, 0, p);
	for (size_t i = 0; i < n; i++)
		if (!p[i].remap && p[i].dst_offset + p[i].len > total)
			total = p[i].dst_offset + p[i].len;
	if (total > (1ULL << 31) || !(buf = malloc(total ? total : 1))) {
		close(fd);
		free(p);
		return total > (1ULL << 31) ? -EFBIG : -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		__u64 done = 0;

		if (p[i].remap)
			continue;
		while (done < p[i].len) {
			ssize_t r = pread(fd, buf + p[i].dst_offset + done, p[i].len - done,
					  (off_t)(p[i].src_offset + done));

			if (r <= 0) {
				err = r < 0 ? -errno : -EIO;
				close(fd);
				free(p);
				free(buf);
				return err;
			}
			done += r;
		}
	}
	close(fd);
	*pieces = p;
	*bytes = buf;
	return (int)n;
}

int kcore__build_id(const char *notes_path, __u8 bid[20], size_t *len)
{
	unsigned char buf[4096];
	size_t n = 0, at = 0;
	int fd = open(notes_path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) > 0)
		n += r;
	close(fd);
	/* ELF notes: namesz, descsz, type, the name and the descriptor, each padded to 4 bytes */
	while (n - at >= 12) {
		__u32 namesz, descsz, type;
		size_t name_at = at + 12, desc_at;

		memcpy(&namesz, buf + at, 4);
		memcpy(&descsz, buf + at + 4, 4);
		memcpy(&type, buf + at + 8, 4);
		if (namesz > n || descsz > n)
			break;
		desc_at = name_at + ((namesz + 3) & ~3u);
		if (desc_at + descsz > n)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_at, "GNU", 4) && descsz && descsz <= 20) {
			memcpy(bid, buf + desc_at, descsz);
			*len = descsz;
			return 0;
		}
		at = desc_at + ((descsz + 3) & ~3u);
	}
	return -ENODATA;
}
