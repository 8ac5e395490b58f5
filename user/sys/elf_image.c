// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf_image: one binary mapped once, with its segments, sections, function
 * symbols (PLT entries included) and build ID. See elf_image.h.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/sys/elf_image.h"
#include "auxtrig/sys/log.h"

#define ELF_IMAGE_MAX_SECS	65280	/* below SHN_LORESERVE */
#define ELF_IMAGE_MAX_SEGS	4096

struct elf_image {
	char *path;
	const unsigned char *buf;
	size_t len;
	bool mapped;			/* buf is our mmap */
	int type, machine;
	struct elf_image_seg *segs;
	size_t nr_segs;
	struct elf_image_sec *secs;
	size_t nr_secs;
	bool syms_loaded;
	struct elf_image_sym *syms;
	size_t nr_syms;
	char *names;			/* symbol names: NUL-terminated copies */
	size_t names_len, names_cap;
};

/* True if [off, off + size) lies in the file; overflow-safe. */
static bool elf_image__fits(const struct elf_image *img, __u64 off, __u64 size)
{
	return off <= img->len && size <= img->len - off;
}

/* The NUL-terminated string at @off of string table @strtab, or NULL. */
static const char *elf_image__str(const struct elf_image *img, const struct elf_image_sec *strtab, __u64 off)
{
	const char *s;

	if (!strtab || strtab->type != SHT_STRTAB || off >= strtab->size ||
	    !elf_image__fits(img, strtab->offset, strtab->size))
		return NULL;
	s = (const char *)img->buf + strtab->offset + off;
	return memchr(s, 0, strtab->size - off) ? s : NULL;
}

static void elf_image__parse(struct elf_image *img)
{
	Elf64_Ehdr eh;
	const struct elf_image_sec *shstr;

	if (img->len < sizeof(eh))
		return;
	memcpy(&eh, img->buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return;
	img->type = eh.e_type;
	img->machine = eh.e_machine;
	if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum && eh.e_phnum <= ELF_IMAGE_MAX_SEGS &&
	    elf_image__fits(img, eh.e_phoff, (__u64)eh.e_phnum * sizeof(Elf64_Phdr))) {
		img->segs = calloc(eh.e_phnum, sizeof(*img->segs));
		for (size_t i = 0; img->segs && i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			memcpy(&ph, img->buf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
			if (ph.p_type != PT_LOAD)
				continue;
			img->segs[img->nr_segs++] = (struct elf_image_seg){
				.vaddr = ph.p_vaddr, .offset = ph.p_offset, .filesz = ph.p_filesz,
				.memsz = ph.p_memsz, .flags = ph.p_flags,
			};
		}
	}
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum || eh.e_shnum > ELF_IMAGE_MAX_SECS ||
	    !elf_image__fits(img, eh.e_shoff, (__u64)eh.e_shnum * sizeof(Elf64_Shdr)))
		return;
	img->secs = calloc(eh.e_shnum, sizeof(*img->secs));
	if (!img->secs)
		return;
	img->nr_secs = eh.e_shnum;
	for (size_t i = 0; i < img->nr_secs; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, img->buf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		img->secs[i] = (struct elf_image_sec){
			.name = "", .addr = sh.sh_addr, .offset = sh.sh_offset, .size = sh.sh_size,
			.flags = sh.sh_flags, .entsize = sh.sh_entsize, .type = sh.sh_type, .link = sh.sh_link,
		};
	}
	shstr = eh.e_shstrndx < img->nr_secs ? &img->secs[eh.e_shstrndx] : NULL;
	for (size_t i = 0; i < img->nr_secs; i++) {
		Elf64_Shdr sh;
		const char *name;

		memcpy(&sh, img->buf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		name = elf_image__str(img, shstr, sh.sh_name);
		img->secs[i].name = name ? name : "";
	}
}

static struct elf_image *elf_image__alloc(const char *name)
{
	struct elf_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->path = strdup(name ? name : "(memory)");
	if (!img->path) {
		free(img);
		return NULL;
	}
	return img;
}

struct elf_image *elf_image__new_mem(const void *buf, size_t len, const char *name)
{
	struct elf_image *img = elf_image__alloc(name);

	if (!img) {
		errno = ENOMEM;
		return NULL;
	}
	img->buf = buf;
	img->len = len;
	elf_image__parse(img);
	return img;
}

struct elf_image *elf_image__open(const char *path)
{
	struct elf_image *img;
	struct stat st;
	void *map = NULL;
	int fd, err;

	/* Look first: opening a FIFO for reading blocks until a writer comes. */
	if (stat(path, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : ENODEV;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {	/* replaced since stat() */
		close(fd);
		errno = ENODEV;
		return NULL;
	}
	if (st.st_size > 0) {
		map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			err = errno;
			close(fd);
			errno = err;
			return NULL;
		}
	}
	close(fd);
	img = elf_image__alloc(path);
	if (!img) {
		if (map)
			munmap(map, st.st_size);
		errno = ENOMEM;
		return NULL;
	}
	img->buf = map ? map : (const unsigned char *)"";
	img->len = st.st_size;
	img->mapped = map != NULL;
	elf_image__parse(img);
	return img;
}

void elf_image__delete(struct elf_image *img)
{
	if (!img)
		return;
	if (img->mapped)
		munmap((void *)img->buf, img->len);
	free(img->segs);
	free(img->secs);
	free(img->syms);
	free(img->names);
	free(img->path);
	free(img);
}

const char *elf_image__path(const struct elf_image *img)
{
	return img->path;
}

const unsigned char *elf_image__bytes(const struct elf_image *img, size_t *len)
{
	*len = img->len;
	return img->buf;
}

int elf_image__type(const struct elf_image *img)
{
	return img->type;
}

int elf_image__machine(const struct elf_image *img)
{
	return img->machine;
}

size_t elf_image__nr_segs(const struct elf_image *img)
{
	return img->nr_segs;
}

const struct elf_image_seg *elf_image__seg(const struct elf_image *img, size_t i)
{
	return i < img->nr_segs ? &img->segs[i] : NULL;
}

size_t elf_image__nr_secs(const struct elf_image *img)
{
	return img->nr_secs;
}

const struct elf_image_sec *elf_image__sec(const struct elf_image *img, size_t i)
{
	return i < img->nr_secs ? &img->secs[i] : NULL;
}

const struct elf_image_sec *elf_image__sec_by_name(const struct elf_image *img, const char *name)
{
	for (size_t i = 0; i < img->nr_secs; i++)
		if (!strcmp(img->secs[i].name, name))
			return &img->secs[i];
	return NULL;
}

const struct elf_image_sec *elf_image__rel_text(const struct elf_image *img)
{
	const struct elf_image_sec *t;

	if (img->type != ET_REL)
		return NULL;
	t = elf_image__sec_by_name(img, ".text");
	return t && t->type == SHT_PROGBITS && elf_image__fits(img, t->offset, t->size) ? t : NULL;
}

/* ---- symbols ------------------------------------------------------------ */

/* A candidate symbol, before duplicates are settled. */
struct elf_image_cand {
	__u64 offset, size;
	__u32 name;		/* into img->names */
	__u8 bind, type;
};

struct elf_image_cands {
	struct elf_image_cand *v;
	size_t nr, cap;
};

static int elf_image__add_name(struct elf_image *img, const char *s, size_t n, __u32 *at)
{
	if (img->names_len + n + 1 > img->names_cap) {
		size_t cap = img->names_cap ? 2 * img->names_cap : 4096;
		char *p;

		while (cap < img->names_len + n + 1)
			cap *= 2;
		if (cap > 0xffffffffULL)
			return -ENOMEM;
		p = realloc(img->names, cap);
		if (!p)
			return -ENOMEM;
		img->names = p;
		img->names_cap = cap;
	}
	memcpy(img->names + img->names_len, s, n);
	img->names[img->names_len + n] = 0;
	*at = img->names_len;
	img->names_len += n + 1;
	return 0;
}

static int elf_image__cand(struct elf_image *img, struct elf_image_cands *c, __u64 offset, __u64 size,
			   const char *name, size_t name_len, int bind, int type)
{
	struct elf_image_cand *e;

	if (c->nr == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct elf_image_cand *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	e = &c->v[c->nr];
	if (elf_image__add_name(img, name, name_len, &e->name))
		return -ENOMEM;
	e->offset = offset;
	e->size = size;
	e->bind = bind;
	e->type = type;
	c->nr++;
	return 0;
}

/* The file offset of virtual address @vaddr, through the PT_LOAD that holds it. */
static int elf_image__vaddr_offset(const struct elf_image *img, __u64 vaddr, __u64 *off)
{
	for (size_t i = 0; i < img->nr_segs; i++) {
		const struct elf_image_seg *s = &img->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz) {
			*off = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ENOENT;
}

static bool elf_image__is_mapping_symbol(const char *name)
{
	/* Arm ELF mapping symbols: $a, $t, $d, $x and their "$x.N" forms */
	return name[0] == '$' && strchr("adtx", name[1]) && (name[2] == 0 || name[2] == '.');
}

/* The symbols of table @tab (SHT_SYMTAB or SHT_DYNSYM) that perf keeps for code. */
static int elf_image__read_symtab(struct elf_image *img, const struct elf_image_sec *tab,
				  struct elf_image_cands *c)
{
	const struct elf_image_sec *str = tab->link < img->nr_secs ? &img->secs[tab->link] : NULL;
	size_t n;

	if (tab->entsize != sizeof(Elf64_Sym) || !elf_image__fits(img, tab->offset, tab->size))
		return 0;
	n = tab->size / sizeof(Elf64_Sym);
	for (size_t i = 1; i < n; i++) {
		Elf64_Sym y;
		const char *name;
		const struct elf_image_sec *sec;
		int type, bind, vis;
		__u64 off;

		memcpy(&y, img->buf + tab->offset + i * sizeof(y), sizeof(y));
		type = ELF64_ST_TYPE(y.st_info);
		bind = ELF64_ST_BIND(y.st_info);
		vis = ELF64_ST_VISIBILITY(y.st_other);
		if (!y.st_name || y.st_shndx == SHN_UNDEF || y.st_shndx >= SHN_LORESERVE ||
		    y.st_shndx >= img->nr_secs)
			continue;
		if (type == STT_NOTYPE) {
			if (vis == STV_HIDDEN || vis == STV_INTERNAL)
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		sec = &img->secs[y.st_shndx];
		if (!(sec->flags & SHF_EXECINSTR))
			continue;
		name = elf_image__str(img, str, y.st_name);
		if (!name || !*name || elf_image__is_mapping_symbol(name))
			continue;
		if (img->type == ET_REL) {
			/* section-relative: in file offset space, its section's offset + value */
			if (sec->type != SHT_PROGBITS || y.st_value > sec->size || !elf_image__fits(img, sec->offset, sec->size))
				continue;
			off = sec->offset + y.st_value;
		} else if (elf_image__vaddr_offset(img, y.st_value, &off)) {
			continue;
		}
		if (elf_image__cand(img, c, off, y.st_size, name, strlen(name), bind, type))
			return -ENOMEM;
	}
	return 0;
}

/*
 * perf 6.1's dso__synthesize_plt_symbols(): one "NAME@plt" per .rela.plt
 * (.rel.plt) entry, in order, over the .plt entries after its header.
 */
static int elf_image__read_plt(struct elf_image *img, struct elf_image_cands *c)
{
	const struct elf_image_sec *rel = elf_image__sec_by_name(img, ".rela.plt");
	const struct elf_image_sec *plt = elf_image__sec_by_name(img, ".plt");
	const struct elf_image_sec *dynsym, *dynstr;
	__u64 hdr, ent, at;
	size_t esz, n;

	if (!rel)
		rel = elf_image__sec_by_name(img, ".rel.plt");
	if (!rel || !plt || (rel->type != SHT_RELA && rel->type != SHT_REL) || rel->link >= img->nr_secs)
		return 0;
	dynsym = &img->secs[rel->link];
	if (dynsym->type != SHT_DYNSYM || dynsym->entsize != sizeof(Elf64_Sym) || dynsym->link >= img->nr_secs ||
	    !elf_image__fits(img, dynsym->offset, dynsym->size))
		return 0;
	dynstr = &img->secs[dynsym->link];
	switch (img->machine) {
	case EM_ARM:
		hdr = 20, ent = 12;
		break;
	case EM_AARCH64:
		hdr = 32, ent = 16;
		break;
	default:
		hdr = ent = plt->entsize;
		break;
	}
	esz = rel->type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
	if (!ent || rel->entsize != esz || !elf_image__fits(img, rel->offset, rel->size))
		return 0;
	n = rel->size / esz;
	at = plt->offset + hdr;
	for (size_t i = 0; i < n; i++, at += ent) {
		Elf64_Rel r;
		Elf64_Sym y;
		__u64 sym;
		const char *name;
		char buf[512];
		int len;

		memcpy(&r, img->buf + rel->offset + i * esz, sizeof(r));
		sym = ELF64_R_SYM(r.r_info);
		if (sym >= dynsym->size / sizeof(Elf64_Sym))
			continue;
		memcpy(&y, img->buf + dynsym->offset + sym * sizeof(y), sizeof(y));
		name = elf_image__str(img, dynstr, y.st_name);
		len = snprintf(buf, sizeof(buf), "%s@plt", name ? name : "");
		if (len < 0 || (size_t)len >= sizeof(buf))
			continue;
		if (elf_image__cand(img, c, at, ent, buf, len, STB_GLOBAL, STT_FUNC))
			return -ENOMEM;
	}
	return 0;
}

static int elf_image__cand_cmp(const void *a, const void *b)
{
	const struct elf_image_cand *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

static size_t elf_image__underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol(): true if @a is kept over @b (same address). */
static bool elf_image__better(const struct elf_image *img, const struct elf_image_cand *a,
			      const struct elf_image_cand *b)
{
	const char *na = img->names + a->name, *nb = img->names + b->name;
	size_t la, lb;

	if (!!a->size != !!b->size)
		return a->size != 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	if (elf_image__underscores(na) != elf_image__underscores(nb))
		return elf_image__underscores(na) < elf_image__underscores(nb);
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la > lb;
	return true;	/* the first one stays */
}

static int elf_image__load_syms(struct elf_image *img)
{
	struct elf_image_cands c = { 0 };
	const struct elf_image_sec *tab = NULL;
	size_t nr = 0;
	int err = 0, nr_own;

	img->syms_loaded = true;
	if (!img->type)
		return 0;
	for (size_t i = 0; i < img->nr_secs; i++)
		if (img->secs[i].type == SHT_SYMTAB || (img->secs[i].type == SHT_DYNSYM && !tab))
			tab = &img->secs[i];
	if (tab)
		err = elf_image__read_symtab(img, tab, &c);
	nr_own = c.nr;
	/* perf adds the PLT symbols only to a file that has symbols of its own */
	if (!err && nr_own > 0 && img->type != ET_REL)
		err = elf_image__read_plt(img, &c);
	if (err || !c.nr)
		goto out;
	qsort(c.v, c.nr, sizeof(*c.v), elf_image__cand_cmp);
	/* one symbol per address: the one perf keeps */
	for (size_t i = 0; i < c.nr; i++) {
		if (nr && c.v[nr - 1].offset == c.v[i].offset) {
			if (!elf_image__better(img, &c.v[nr - 1], &c.v[i]))
				c.v[nr - 1] = c.v[i];
			continue;
		}
		c.v[nr++] = c.v[i];
	}
	img->syms = calloc(nr, sizeof(*img->syms));
	if (!img->syms) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct elf_image_sym *s = &img->syms[i];

		s->offset = c.v[i].offset;
		s->end = c.v[i].offset + c.v[i].size;
		if (s->end < s->offset)
			s->end = s->offset;
		s->name = img->names + c.v[i].name;
	}
	/* perf's symbols__fixup_end() */
	for (size_t i = 0; i + 1 < nr; i++)
		if (img->syms[i].end == img->syms[i].offset)
			img->syms[i].end = img->syms[i + 1].offset;
	if (img->syms[nr - 1].end == img->syms[nr - 1].offset) {
		__u64 end = ((img->syms[nr - 1].offset + 4095) & ~4095ULL) + 4096;

		/* a symbol in the last page of the address space: to its end, not wrapped to 0 */
		img->syms[nr - 1].end = end > img->syms[nr - 1].offset ? end : ~0ULL;
	}
	img->nr_syms = nr;
out:
	free(c.v);
	if (err)
		pr_debug("%s: cannot load its symbols: %s\n", img->path, strerror(-err));
	return err;
}

size_t elf_image__nr_syms(struct elf_image *img)
{
	if (!img->syms_loaded)
		elf_image__load_syms(img);
	return img->nr_syms;
}

const struct elf_image_sym *elf_image__sym(struct elf_image *img, size_t i)
{
	return i < elf_image__nr_syms(img) ? &img->syms[i] : NULL;
}

const struct elf_image_sym *elf_image__find_sym(struct elf_image *img, __u64 offset)
{
	size_t lo = 0, hi = elf_image__nr_syms(img), found = (size_t)-1;

	/* the last symbol starting at or before @offset that still covers it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->syms[mid].offset <= offset) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (found == (size_t)-1 || offset >= img->syms[found].end)
		return NULL;
	return &img->syms[found];
}

/* A function defined in a section of @img (what a uprobe can be placed on). */
static bool sym_is_defined_func(const struct elf_image *img, const Elf64_Sym *y)
{
	return ELF64_ST_TYPE(y->st_info) == STT_FUNC && y->st_shndx != SHN_UNDEF && y->st_shndx < SHN_LORESERVE &&
	       y->st_shndx < img->nr_secs;
}

static bool sym_has_value(const struct elf_image *img, const Elf64_Sym *y)
{
	(void)img;
	return y->st_value != 0;
}

/*
 * The first symbol named @symbol that @want accepts, in @img's symbol tables
 * of type @type (0: .symtab and .dynsym, in section order).
 * Return: 0 with *@out set, -ENOENT.
 */
static int sym_find(const struct elf_image *img, __u32 type, const char *symbol,
		    bool (*want)(const struct elf_image *, const Elf64_Sym *), Elf64_Sym *out)
{
	for (size_t t = 0; t < img->nr_secs; t++) {
		const struct elf_image_sec *tab = &img->secs[t], *str;
		size_t n;

		if ((type ? tab->type != type : tab->type != SHT_SYMTAB && tab->type != SHT_DYNSYM) ||
		    tab->entsize != sizeof(Elf64_Sym) || !elf_image__fits(img, tab->offset, tab->size) ||
		    tab->link >= img->nr_secs)
			continue;
		str = &img->secs[tab->link];
		n = tab->size / sizeof(Elf64_Sym);
		for (size_t i = 1; i < n; i++) {
			Elf64_Sym y;
			const char *name;

			memcpy(&y, img->buf + tab->offset + i * sizeof(y), sizeof(y));
			if (!want(img, &y))
				continue;
			name = elf_image__str(img, str, y.st_name);
			if (name && !strcmp(name, symbol)) {
				*out = y;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int elf_image__symbol_file_offset(const struct elf_image *img, const char *symbol, __u64 *off)
{
	Elf64_Sym y;

	if (!img->type)
		return -ENOEXEC;
	/* .symtab first (every function), then .dynsym (stripped binaries, libraries) */
	if (sym_find(img, SHT_SYMTAB, symbol, sym_is_defined_func, &y) &&
	    sym_find(img, SHT_DYNSYM, symbol, sym_is_defined_func, &y))
		return -ENOENT;
	*off = y.st_value - img->secs[y.st_shndx].addr + img->secs[y.st_shndx].offset;
	return 0;
}

int elf_image__symbol_value(const struct elf_image *img, const char *symbol, __u64 *value)
{
	Elf64_Sym y;

	if (!img->type)
		return -ENOEXEC;
	if (sym_find(img, 0, symbol, sym_has_value, &y))
		return -ENOENT;
	*value = y.st_value;
	return 0;
}

size_t elf_image__build_id(const struct elf_image *img, __u8 bid[20])
{
	for (size_t i = 0; i < img->nr_secs; i++) {
		const struct elf_image_sec *s = &img->secs[i];
		__u64 at, end;

		if (s->type != SHT_NOTE || !elf_image__fits(img, s->offset, s->size))
			continue;
		at = s->offset;
		end = s->offset + s->size;
		while (end - at >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			__u64 name_sz, desc_sz;

			memcpy(&nh, img->buf + at, sizeof(nh));
			name_sz = (nh.n_namesz + 3ULL) & ~3ULL;
			desc_sz = (nh.n_descsz + 3ULL) & ~3ULL;
			at += sizeof(nh);
			if (name_sz > end - at || desc_sz > end - at - name_sz)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(img->buf + at, "GNU", 4) &&
			    nh.n_descsz) {
				size_t n = nh.n_descsz < 20 ? nh.n_descsz : 20;

				memcpy(bid, img->buf + at + name_sz, n);
				return n;
			}
			at += name_sz + desc_sz;
		}
	}
	return 0;
}
