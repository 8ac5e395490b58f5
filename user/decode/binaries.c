// SPDX-License-Identifier: BSD-2-Clause
/*
 * binaries: the traced binaries of a perf.data file, found as perf finds
 * them and mapped once. See binaries.h.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/sys/input_file.h"
#include "auxtrig/decode/binaries.h"
#include "auxtrig/sys/elf_image.h"
#include "auxtrig/sys/kcore.h"
#include "auxtrig/sys/log.h"

struct binary {
	char *name;		/* as recorded */
	char *dso_name;		/* as perf prints it */
	bool kernel;
	struct binary *parent;	/* a module section map's module (its image is the parent's) */
	__u8 bid[20];
	size_t bid_len;
	int state;		/* 0 not looked for, 1 found, -1 missing */
	struct elf_image *img;
	const struct elf_image_sec *rel_text;
	__u64 text_at;		/* where a module's .text is (binaries__place_module()) */
};

/* One address space's mappings: sorted by start, disjoint. */
struct binaries_space {
	struct binary_map *maps;
	size_t nr, cap;
	const struct binary_map *last;	/* lookup cache */
};

struct binaries {
	char *symfs;
	char *buildid_dir;
	struct binary **bins;
	size_t nr_bins;
	struct binaries_space space[2];	/* user, kernel */
	__u64 kernel_start;
	__u64 kmap_start;		/* the [kernel.kallsyms] map's start, 0 without one */
	struct binaries_ksym *ksyms;	/* binaries__add_kallsyms(): by address */
	size_t nr_ksyms;
	char *ksym_names;
	struct binaries_ksym *msyms;	/* the modules' code symbols, for placing them */
	size_t nr_msyms;
	bool ksym_modules;		/* take the modules' symbols too (with the kernel's code) */
	struct kcore_piece *kcode;	/* binaries__add_kernel_code(): the kernel's code, by address */
	size_t nr_kcode;
	unsigned char *kcode_bytes;
	struct binary_map kcode_map;	/* what an address in it is: [kernel.kallsyms] */
	unsigned char *vdso;		/* binaries__add_vdso(): the image behind [vdso] */
	size_t vdso_len;
};

/* One kallsyms symbol: its name at @name in ksym_names; a module's, "[module]" at @mod. */
struct binaries_ksym {
	__u64 addr;
	size_t name, mod;
};

struct binaries *binaries__new(const char *symfs, const char *buildid_dir)
{
	struct binaries *b = calloc(1, sizeof(*b));
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char dflt[4096];

	if (!b)
		return NULL;
	if (!buildid_dir) {
		if (env && *env)
			buildid_dir = env;
		else {
			snprintf(dflt, sizeof(dflt), "%s/.debug", home && *home ? home : "");
			buildid_dir = dflt;
		}
	}
	b->kernel_start = 1ULL << 63;
	b->symfs = strdup(symfs ? symfs : "");
	b->buildid_dir = strdup(buildid_dir);
	if (!b->symfs || !b->buildid_dir) {
		binaries__delete(b);
		return NULL;
	}
	return b;
}

void binaries__delete(struct binaries *b)
{
	if (!b)
		return;
	free(b->ksyms);
	free(b->msyms);
	free(b->ksym_names);
	free(b->kcode);
	free(b->kcode_bytes);
	free(b->vdso);
	for (size_t i = 0; i < b->nr_bins; i++) {
		elf_image__delete(b->bins[i]->img);
		free(b->bins[i]->name);
		free(b->bins[i]->dso_name);
		free(b->bins[i]);
	}
	free(b->bins);
	free(b->space[0].maps);
	free(b->space[1].maps);
	free(b->symfs);
	free(b->buildid_dir);
	free(b);
}

/* perf's short name of a kernel-space image: "[mod]" for mod.ko(.gz...), else the base name. */
static char *binaries__kernel_dso_name(const char *name)
{
	const char *base = strrchr(name, '/'), *ko;
	char *s;

	if (name[0] == '[')
		return strdup(name);
	base = base ? base + 1 : name;
	ko = strstr(base, ".ko");
	if (!ko || (ko[3] && ko[3] != '.'))
		return strdup(base);
	if (asprintf(&s, "[%.*s]", (int)(ko - base), base) < 0)
		return NULL;
	for (char *p = s; *p; p++)
		if (*p == '-')
			*p = '_';
	return s;
}

static struct binary *binaries__get(struct binaries *b, const char *name, bool kernel)
{
	struct binary *bin, **v;

	for (size_t i = 0; i < b->nr_bins; i++)
		if (!strcmp(b->bins[i]->name, name))
			return b->bins[i];
	bin = calloc(1, sizeof(*bin));
	v = realloc(b->bins, (b->nr_bins + 1) * sizeof(*v));
	if (!bin || !v) {
		free(bin);
		if (v)
			b->bins = v;
		return NULL;
	}
	b->bins = v;
	bin->name = strdup(name);
	bin->kernel = kernel;
	bin->dso_name = kernel && strncmp(name, "[kernel.kallsyms]", 17) ? binaries__kernel_dso_name(name) :
		kernel ? strdup("[kernel.kallsyms]") : strdup(name);
	if (!bin->name || !bin->dso_name) {
		free(bin->name);
		free(bin->dso_name);
		free(bin);
		return NULL;
	}
	b->bins[b->nr_bins++] = bin;
	return bin;
}

int binaries__add_build_id(struct binaries *b, const char *filename, const __u8 *bid, size_t len)
{
	struct binary *bin;

	if (!len)
		return 0;
	bin = binaries__get(b, filename, false);
	if (!bin)
		return -ENOMEM;
	bin->bid_len = len < sizeof(bin->bid) ? len : sizeof(bin->bid);
	memcpy(bin->bid, bid, bin->bid_len);
	return 0;
}

/* Insert a mapping into its space; it replaces the mappings it overlaps (later records win). */
static int binaries__reserve(struct binaries_space *sp, size_t more)
{
	while (sp->nr + more > sp->cap) {
		size_t cap = sp->cap ? 2 * sp->cap : 64;
		struct binary_map *v = realloc(sp->maps, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sp->maps = v;
		sp->cap = cap;
	}
	return 0;
}

/*
 * A new mapping replaces what it overlaps; the parts of an older mapping
 * outside it stay, as perf's maps__fixup_overlappings() keeps them (a
 * library mapped whole, then its data segment mapped over a part of it,
 * keeps its code).
 */
static int binaries__insert(struct binaries *b, const struct binary_map *m)
{
	struct binaries_space *sp = &b->space[m->kernel];
	struct binary_map before = { 0 }, after = { 0 };
	size_t lo = 0, hi = sp->nr, at, n = 0;

	/* the first mapping ending after m->start, and those after it that m overlaps */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->maps[mid].end <= m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	at = lo;
	hi = at;
	while (hi < sp->nr && sp->maps[hi].start < m->end)
		hi++;
	if (hi > at) {
		if (sp->maps[at].start < m->start) {
			before = sp->maps[at];
			before.end = m->start;
		}
		if (sp->maps[hi - 1].end > m->end) {
			after = sp->maps[hi - 1];
			after.pgoff += m->end - after.start;
			after.start = m->end;
		}
		memmove(&sp->maps[at], &sp->maps[hi], (sp->nr - hi) * sizeof(*sp->maps));
		sp->nr -= hi - at;
	}
	if (binaries__reserve(sp, 3))
		return -ENOMEM;
	memmove(&sp->maps[at + 3], &sp->maps[at], (sp->nr - at) * sizeof(*sp->maps));
	if (before.end)
		sp->maps[at + n++] = before;
	sp->maps[at + n++] = *m;
	if (after.end)
		sp->maps[at + n++] = after;
	if (n < 3)
		memmove(&sp->maps[at + n], &sp->maps[at + 3], (sp->nr - at) * sizeof(*sp->maps));
	sp->nr += n;
	sp->last = NULL;
	return 0;
}

int binaries__add_mmap(struct binaries *b, __u64 start, __u64 len, __u64 pgoff, const char *filename,
		       bool kernel, const __u8 *bid, size_t bid_len)
{
	struct binary *bin;
	struct binary_map m = { .start = start, .end = start + len, .pgoff = pgoff, .kernel = kernel };

	if (!len || m.end < start)
		return 0;
	bin = binaries__get(b, filename, kernel);
	if (!bin)
		return -ENOMEM;
	bin->kernel = bin->kernel || kernel;
	if (bid_len && !bin->bid_len)
		binaries__add_build_id(b, filename, bid, bid_len);
	m.bin = bin;
	if (kernel && !b->kmap_start && !strncmp(filename, "[kernel.kallsyms]", 17))
		b->kmap_start = start;
	return binaries__insert(b, &m);
}

__u64 binaries__kernel_map_start(const struct binaries *b)
{
	return b->kmap_start;
}

size_t binaries__nr_maps(const struct binaries *b)
{
	return b->space[0].nr + b->space[1].nr;
}

void binaries__set_kernel_start(struct binaries *b, __u64 start)
{
	b->kernel_start = start;
}

bool binaries__is_kernel(const struct binaries *b, __u64 addr)
{
	return addr >= b->kernel_start;
}

static const struct binary_map *binaries__space_find(const struct binaries *b, int kernel, __u64 addr)
{
	struct binaries_space *sp = (struct binaries_space *)&b->space[kernel];
	size_t lo = 0, hi = sp->nr;

	if (sp->last && addr >= sp->last->start && addr < sp->last->end)
		return sp->last;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < sp->maps[mid].start)
			hi = mid;
		else if (addr >= sp->maps[mid].end)
			lo = mid + 1;
		else
			return sp->last = &sp->maps[mid];
	}
	return NULL;
}

/* The piece of the kernel's code @addr is in, or NULL. */
static const struct kcore_piece *binaries__kcode_find(const struct binaries *b, __u64 addr)
{
	size_t lo = 0, hi = b->nr_kcode;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < b->kcode[mid].addr)
			hi = mid;
		else if (addr - b->kcode[mid].addr >= b->kcode[mid].len)
			lo = mid + 1;
		else
			return &b->kcode[mid];
	}
	return NULL;
}

static void binaries__look(struct binaries *b, struct binary *bin);

/*
 * The mapping of @addr in space @kernel, its binary looked for: a module's
 * first look adds maps of its sections (binaries__add_section_maps()), so
 * its maps are final before a caller holds one.
 */
static const struct binary_map *binaries__space_find_looked(const struct binaries *b, int kernel, __u64 addr)
{
	const struct binary_map *m = binaries__space_find(b, kernel, addr);

	if (!m || !m->kernel || m->bin->state || m->bin->parent)
		return m;
	binaries__look((struct binaries *)b, m->bin);
	return binaries__space_find(b, kernel, addr);
}

const struct binary_map *binaries__find(const struct binaries *b, __u64 addr)
{
	if (b->nr_kcode && binaries__is_kernel(b, addr))
		return binaries__kcode_find(b, addr) ? &b->kcode_map : NULL;
	return binaries__space_find_looked(b, binaries__is_kernel(b, addr), addr);
}

const struct binary_map *binaries__find_in(const struct binaries *b, __u64 addr, bool kernel, bool fallback)
{
	const struct binary_map *m;

	/*
	 * With the kernel's code, perf's kernel maps are its pieces (modules'
	 * too, as [kernel.kallsyms]) and nothing else (dso__load_kcore()).
	 */
	if (b->nr_kcode && binaries__is_kernel(b, addr) && (kernel || fallback))
		return binaries__kcode_find(b, addr) ? &b->kcode_map : NULL;
	m = binaries__space_find_looked(b, kernel, addr);

	if (!m && fallback && binaries__is_kernel(b, addr) != kernel)
		m = binaries__space_find_looked(b, !kernel, addr);
	return m;
}

static int binaries_ksym__cmp(const void *a, const void *b)
{
	const struct binaries_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;	/* equal addresses: file order */
}

/* Room for one more symbol in *@v (*@nr used of *@cap). */
static int binaries__ksym_room(struct binaries_ksym **v, size_t nr, size_t *cap)
{
	struct binaries_ksym *n;

	if (nr < *cap)
		return 0;
	n = realloc(*v, (*cap ? 2 * *cap : 4096) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = *cap ? 2 * *cap : 4096;
	return 0;
}

/* @len bytes of @s, NUL-terminated, appended to ksym_names: at *@at. */
static int binaries__ksym_name(struct binaries *b, const char *s, size_t len, size_t *names_len, size_t *names_cap,
			       size_t *at)
{
	if (*names_len + len + 1 > *names_cap) {
		size_t n = *names_cap ? 2 * *names_cap : 65536;
		char *v;

		while (n < *names_len + len + 1)
			n *= 2;
		v = realloc(b->ksym_names, n);
		if (!v)
			return -ENOMEM;
		b->ksym_names = v;
		*names_cap = n;
	}
	memcpy(b->ksym_names + *names_len, s, len);
	b->ksym_names[*names_len + len] = '\0';
	*at = *names_len;
	*names_len += len + 1;
	return 0;
}

/* What binaries__add_kallsyms() is filling: the arrays' capacities, the names' length and capacity. */
struct binaries_ksym_fill {
	size_t cap, mcap, names_len, names_cap;
};

/*
 * One kallsyms line "ADDR TYPE NAME[\t[MODULE]]" into @b: code symbols (text
 * and weak text), the kernel's own (modules' too with ksym_modules), and
 * every module's apart, to place the modules (binaries__place_module()).
 */
static int binaries__ksym_line(struct binaries *b, const char *line, struct binaries_ksym_fill *f)
{
	struct binaries_ksym k = { 0 };
	unsigned long long addr;
	const char *name, *mod = NULL;
	size_t len, mlen = 0;
	char type, *end;

	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	type = end[1];
	name = end + 3;
	len = strcspn(name, "\t\n ");
	if (name[len] == '\t' && name[len + 1] == '[') {
		mod = name + len + 1;
		mlen = strcspn(mod, "]\n");
		if (mod[mlen] != ']')
			return 0;
		mlen++;
	}
	/* perf's symbol_type__filter() keeps data too; a stack holds code: text and weak text */
	if (!addr || !len || !strchr("TtWw", type) || (name[len] == '\t' && !mod))
		return 0;
	k.addr = addr;
	if (binaries__ksym_name(b, name, len, &f->names_len, &f->names_cap, &k.name))
		return -ENOMEM;
	if (mod) {
		if (binaries__ksym_name(b, mod, mlen, &f->names_len, &f->names_cap, &k.mod) ||
		    binaries__ksym_room(&b->msyms, b->nr_msyms, &f->mcap))
			return -ENOMEM;
		b->msyms[b->nr_msyms++] = k;
		if (!b->ksym_modules)
			return 0;
	}
	if (binaries__ksym_room(&b->ksyms, b->nr_ksyms, &f->cap))
		return -ENOMEM;
	b->ksyms[b->nr_ksyms++] = k;
	return 0;
}

/* Forget the kallsyms symbols. */
static void binaries__ksyms_clear(struct binaries *b)
{
	free(b->ksyms);
	free(b->msyms);
	free(b->ksym_names);
	b->ksyms = b->msyms = NULL;
	b->ksym_names = NULL;
	b->nr_ksyms = b->nr_msyms = 0;
}

int binaries__add_kallsyms(struct binaries *b, const char *path)
{
	struct binaries_ksym_fill fill = { 0 };
	size_t linecap = 0;
	char *line = NULL, *vbuf;
	struct stat st;
	FILE *f;
	int fd, err = 0;

	binaries__ksyms_clear(b);
	fd = input_file__open(path, 0, &st);	/* never blocks on a FIFO nobody writes */
	if (fd < 0)
		return fd;
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		close(fd);
		return -ENODEV;
	}
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	vbuf = malloc(KALLSYMS_READ_BUF);	/* glibc sizes a buffer of its own by st_blksize */
	if (vbuf)
		setvbuf(f, vbuf, _IOFBF, KALLSYMS_READ_BUF);
	while (!err && getline(&line, &linecap, f) > 0)
		err = binaries__ksym_line(b, line, &fill);
	free(line);
	fclose(f);
	free(vbuf);
	if (!err && !b->nr_ksyms && !b->nr_msyms)
		err = -ENODATA;
	if (err) {
		binaries__ksyms_clear(b);
		return err;
	}
	if (b->nr_ksyms)	/* (only modules' symbols: none of the kernel's) */
		qsort(b->ksyms, b->nr_ksyms, sizeof(*b->ksyms), binaries_ksym__cmp);
	return 0;
}

/* The kallsyms symbol @addr is in (the last one starting at or below it), or NULL. */
static const struct binaries_ksym *binaries__ksym_find(const struct binaries *b, __u64 addr)
{
	size_t lo = 0, hi = b->nr_ksyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * equal addresses: the last one of the file, as perf 6.1 chooses: its
	 * symbols__fixup_end() gives only the last of them a length, and
	 * symbols__fixup_duplicate() then keeps the one with a length
	 */
	return lo ? &b->ksyms[lo - 1] : NULL;
}

/* @img if its build ID is @bin's (or @bin has none recorded), else NULL (freed). */
static struct elf_image *binaries__check_bid(struct binary *bin, struct elf_image *img, const char *path)
{
	__u8 bid[20];
	size_t n;

	if (!img || !bin->bid_len)
		return img;
	n = elf_image__build_id(img, bid);
	/* as perf's dso__build_id_equal(): a recorded 20-byte ID may pad a shorter one with zeros */
	if (n && n <= bin->bid_len && !memcmp(bid, bin->bid, n)) {
		size_t k = n;

		while (k < bin->bid_len && !bin->bid[k])
			k++;
		if (k == bin->bid_len && (n == bin->bid_len || bin->bid_len == 20))
			return img;
	}
	pr_debug("%s: build ID mismatch for %s: not used\n", path, bin->name);
	elf_image__delete(img);
	return NULL;
}

/* A module's code symbol in kallsyms, by name (binaries__module_ksyms()). */
struct binaries_named {
	const char *name;
	__u64 addr;
};

static int binaries_named__cmp(const void *x, const void *y)
{
	return strcmp(((const struct binaries_named *)x)->name, ((const struct binaries_named *)y)->name);
}

/* Module @mod's code symbols in kallsyms ("NAME\t[mod]"), sorted by name: *@n, NULL for none. */
static struct binaries_named *binaries__module_ksyms(const struct binaries *b, const struct binary *mod, size_t *n)
{
	struct binaries_named *v;

	*n = 0;
	v = b->nr_msyms ? malloc(b->nr_msyms * sizeof(*v)) : NULL;
	if (!v)
		return NULL;
	for (size_t i = 0; i < b->nr_msyms; i++)
		if (!strcmp(b->ksym_names + b->msyms[i].mod, mod->dso_name))
			v[(*n)++] = (struct binaries_named){ b->ksym_names + b->msyms[i].name, b->msyms[i].addr };
	qsort(v, *n, sizeof(*v), binaries_named__cmp);
	return v;
}

/* Does @img have more than one symbol named @name? */
static bool binaries__sym_twice(struct elf_image *img, const char *name)
{
	const struct elf_image_sym *sym;
	int seen = 0;

	for (size_t i = 0; (sym = elf_image__sym(img, i)); i++)
		if (!strcmp(sym->name, name) && ++seen > 1)
			return true;
	return false;
}

/*
 * Where the kernel put section @sec of a module: the first symbol the .ko
 * has in @sec whose name kallsyms gives the module once (and the .ko once)
 * is at its kallsyms address, the section its st_value (offset in the
 * section) before it. simpleperf places a module's .text the same way; a
 * name given twice (two static functions) places nothing. Return: 0 with
 * *@at and the symbol's name in *@by, or -ENOENT.
 */
static int binaries__place_section(struct elf_image *img, const struct elf_image_sec *sec,
				   const struct binaries_named *ks, size_t n, __u64 *at, const char **by)
{
	const struct elf_image_sym *sym;
	int tries = 16;	/* names the .ko has twice: a few, then no place */

	for (size_t i = 0; n && tries && (sym = elf_image__sym(img, i)); i++) {
		struct binaries_named key = { .name = sym->name }, *k;

		if (sym->offset < sec->offset || sym->offset - sec->offset >= sec->size)
			continue;
		k = bsearch(&key, ks, n, sizeof(*ks), binaries_named__cmp);
		if (!k || (k > ks && !strcmp(k[-1].name, k->name)) || (k + 1 < ks + n && !strcmp(k[1].name, k->name)))
			continue;
		tries--;
		if (binaries__sym_twice(img, sym->name))
			continue;
		*at = k->addr - (sym->offset - sec->offset);
		*by = k->name;
		/* (a section reaching past the top of the address space is no place) */
		return *at + sec->size < *at ? -ENOENT : 0;
	}
	return -ENOENT;
}

/* The addresses module @mod's kernel maps cover: [*@start, *@end), both 0 without one. */
static void binaries__module_range(const struct binaries *b, const struct binary *mod, __u64 *start, __u64 *end)
{
	*start = *end = 0;
	for (size_t i = 0; i < b->space[1].nr; i++) {
		const struct binary_map *m = &b->space[1].maps[i];

		if (m->bin != mod)
			continue;
		if (!*end || m->start < *start)
			*start = m->start;
		if (m->end > *end)
			*end = m->end;
	}
}

/*
 * Where module @mod's .text is. The kernel lays a module's allocated
 * sections out one after another (on arm64 .plt and .text.ftrace_trampoline
 * before .text, the others by their flags and alignment), so .text is
 * seldom at the module's start, where /proc/modules and the MMAP record put
 * the module: kallsyms names where its symbols are (@ks, @n: the module's).
 * Without them, the module's start, as perf 6.1 takes it, said once.
 */
static void binaries__place_module(struct binaries *b, struct binary *mod, const struct binaries_named *ks, size_t n)
{
	const struct elf_image_sec *t = mod->rel_text;
	__u64 start, end, at;
	const char *by;

	binaries__module_range(b, mod, &start, &end);
	mod->text_at = start;
	if (!t || !end)
		return;
	if (binaries__place_section(mod->img, t, ks, n, &at, &by)) {
		/* (with the kernel's code kept, the modules' code is read from it) */
		if (!b->nr_kcode)
			pr_warn("%s: no kallsyms names a symbol of its .text: taken at the module's start 0x%llx, as perf "
				"6.1 takes it, which may not be where the kernel put it\n", mod->name,
				(unsigned long long)start);
		return;
	}
	if (at < start || at - start > end - start || t->size > end - at) {
		pr_warn("%s: kallsyms puts its .text at 0x%llx (%s), outside the module [0x%llx, 0x%llx) (another load of "
			"it?): taken at the module's start\n", mod->name, (unsigned long long)at, by,
			(unsigned long long)start, (unsigned long long)end);
		return;
	}
	mod->text_at = at;
	pr_debug("%s: .text at 0x%llx (module start + 0x%llx), where kallsyms puts %s\n", mod->name,
		 (unsigned long long)at, (unsigned long long)(at - start), by);
}

/*
 * perf 6.1 gives each other code section of a module that has symbols
 * (.init.text, .exit.text...) a kernel map of its own, named after the
 * module and the section, at the section's sh_addr: 0 in a .ko
 * (dso__process_kernel_symbol()). Its addresses resolve there, or where
 * kallsyms puts one of its symbols (@ks, @n: the module's).
 */
static int binaries__add_section_maps(struct binaries *b, struct binary *mod, const struct binaries_named *ks,
				      size_t n)
{
	struct elf_image *img = mod->img;
	int err = 0;

	for (size_t i = 0; i < elf_image__nr_secs(img) && !err; i++) {
		const struct elf_image_sec *sec = elf_image__sec(img, i);
		const struct elf_image_sym *sym;
		struct binary *bin;
		char name[4200];
		const char *by;
		__u64 at;
		size_t k;

		if (sec == mod->rel_text || !(sec->flags & SHF_EXECINSTR) || !sec->size || !*sec->name)
			continue;
		for (k = 0; (sym = elf_image__sym(img, k)); k++)
			if (sym->offset >= sec->offset && sym->offset - sec->offset < sec->size)
				break;
		if (!sym)
			continue;
		snprintf(name, sizeof(name), "%s%s", mod->dso_name, sec->name);
		bin = binaries__get(b, name, true);
		if (!bin)
			return -ENOMEM;
		free(bin->dso_name);
		bin->dso_name = strdup(name);
		if (!bin->dso_name)
			return -ENOMEM;
		bin->parent = mod;
		bin->state = 1;
		if (binaries__place_section(img, sec, ks, n, &at, &by)) {
			at = sec->addr;
			if (at + sec->size < at)
				continue;
		} else {
			pr_debug("%s: %s at 0x%llx, where kallsyms puts %s\n", mod->name, sec->name,
				 (unsigned long long)at, by);
		}
		err = binaries__insert(b, &(struct binary_map){ .start = at, .end = at + sec->size,
								 .pgoff = sec->offset, .bin = bin, .kernel = true });
	}
	return err;
}

static void binaries__look(struct binaries *b, struct binary *bin)
{
	char path[8192];
	struct elf_image *img = NULL;

	bin->state = -1;
	if (bin->bid_len) {
		char hex[41];
		struct stat st;

		for (size_t i = 0; i < bin->bid_len; i++)
			sprintf(hex + 2 * i, "%02x", bin->bid[i]);
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", b->buildid_dir, hex, hex + 2);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			strncat(path, "/elf", sizeof(path) - strlen(path) - 1);
		img = binaries__check_bid(bin, elf_image__open(path), path);
	}
	if (!img && b->vdso && !strcmp(bin->name, "[vdso]"))
		img = binaries__check_bid(bin, elf_image__new_mem(b->vdso, b->vdso_len, "[vdso]"), "[vdso]");
	if (!img && bin->name[0] != '[') {
		/* perf's symbol__join_symfs(): SYMFS/NAME */
		snprintf(path, sizeof(path), "%s%s%s", b->symfs, *b->symfs ? "/" : "", bin->name);
		img = binaries__check_bid(bin, elf_image__open(path), path);
		if (!img)
			pr_debug("%s: %s\n", path, strerror(errno == ENODEV ? ENODEV : errno ? errno : ENOENT));
	}
	if (!img)
		return;
	bin->img = img;
	bin->state = 1;
	pr_debug("%s: found at %s\n", bin->name, elf_image__path(img));
	if (bin->kernel && elf_image__type(img) == ET_REL) {
		size_t n;
		struct binaries_named *ks = binaries__module_ksyms(b, bin, &n);

		bin->rel_text = elf_image__rel_text(img);
		binaries__place_module(b, bin, ks, n);
		if (binaries__add_section_maps(b, bin, ks, n))
			pr_debug("%s: its sections' maps: %s\n", bin->name, strerror(ENOMEM));
		free(ks);
	}
}

int binaries__add_vdso(struct binaries *b, const void *image, size_t len)
{
	unsigned char *copy = malloc(len);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, len);
	free(b->vdso);
	b->vdso = copy;
	b->vdso_len = len;
	return 0;
}

/* This process's vDSO: its start, its length in @len; NULL without one. */
static const void *binaries__own_vdso(size_t *len)
{
	unsigned long start, end, pgoff, inode;
	char line[4096 + 128], perms[8];
	const void *p = NULL;
	bool whole = true;	/* the last fgets() ended a line: this one starts one */
	FILE *fp = fopen("/proc/self/maps", "re");
	unsigned int maj, min;
	int at = 0;

	if (!fp)
		return NULL;
	while (fgets(line, sizeof(line), fp)) {
		size_t n = strlen(line);
		bool starts = whole;

		whole = n && line[n - 1] == '\n';
		/* start-end perms offset dev inode, then the name: exactly [vdso] */
		if (!starts || !whole ||
		    sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &pgoff, &maj, &min, &inode, &at) != 7 ||
		    strcmp(line + at, "[vdso]\n") || end <= start)
			continue;
		p = (const void *)start;
		*len = end - start;
		break;
	}
	fclose(fp);
	return p;
}

int binaries__add_own_vdso(struct binaries *b)
{
	size_t len;
	const void *vdso = binaries__own_vdso(&len);

	return vdso ? binaries__add_vdso(b, vdso, len) : -ENOENT;
}

static struct elf_image *binaries__image(struct binaries *b, struct binary *bin)
{
	if (bin->parent)
		return bin->parent->img;
	if (!bin->state)
		binaries__look(b, bin);
	return bin->img;
}

size_t binaries__load_all(struct binaries *b)
{
	size_t found = 0, nr = b->nr_bins;

	/* (section maps added on the way are not recorded binaries of their own) */
	for (size_t i = 0; i < nr; i++)
		if (!b->bins[i]->parent)
			found += binaries__image(b, b->bins[i]) != NULL;
	return found;
}

size_t binaries__nr_binaries(const struct binaries *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->nr_bins; i++)
		n += !b->bins[i]->parent;
	return n;
}

const char *binaries__missing(const struct binaries *b, size_t i)
{
	for (size_t k = 0; k < b->nr_bins; k++)
		if (b->bins[k]->state < 0 && i-- == 0)
			return b->bins[k]->name;
	return NULL;
}

/*
 * The file offset of @addr in @m's binary, and how many bytes from there
 * belong to the same readable stretch (*@avail 0: nothing mapped there).
 */
static __u64 binaries__file_offset(struct binaries *b, const struct binary_map *m, __u64 addr, __u64 *avail)
{
	struct elf_image *img = binaries__image(b, m->bin);
	size_t flen;
	__u64 off;

	*avail = 0;
	if (!img)
		return 0;
	elf_image__bytes(img, &flen);
	if (m->bin->rel_text) {
		const struct elf_image_sec *t = m->bin->rel_text;

		/* where binaries__place_module() put it, within the map */
		if (addr < m->bin->text_at || addr - m->bin->text_at >= t->size)
			return 0;
		*avail = t->size - (addr - m->bin->text_at);
		if (*avail > m->end - addr)
			*avail = m->end - addr;
		return t->offset + (addr - m->bin->text_at);
	}
	off = addr - m->start + m->pgoff;
	if (!m->bin->parent && (elf_image__type(img) == ET_EXEC || elf_image__type(img) == ET_DYN)) {
		for (size_t i = 0; i < elf_image__nr_segs(img); i++) {
			const struct elf_image_seg *s = elf_image__seg(img, i);

			if (!(s->flags & PF_X) || off < s->offset || off - s->offset >= s->filesz)
				continue;
			*avail = s->filesz - (off - s->offset);
			break;
		}
	} else if (m->bin->parent || elf_image__type(img) != ET_REL) {
		*avail = m->end - addr;
	}
	if (*avail > m->end - addr)
		*avail = m->end - addr;
	if (off >= flen)
		*avail = 0;
	else if (*avail > flen - off)
		*avail = flen - off;
	return off;
}

/* Add [@lo, @hi) of @m (clipped to its space) reading file offset @off at @lo. */
static void binaries__span_add(struct binaries *b, int kernel, const unsigned char *bytes, __u64 lo, __u64 hi,
			       __u64 off, struct binary_span *out, size_t max, size_t *n)
{
	/* an address is looked up in its own space: the other space's addresses are not read here */
	if (kernel && lo < b->kernel_start) {
		off += b->kernel_start - lo;
		lo = b->kernel_start;
	}
	if (!kernel && hi > b->kernel_start)
		hi = b->kernel_start;
	if (lo >= hi)
		return;
	if (*n < max)
		out[*n] = (struct binary_span){ .addr = lo, .len = hi - lo, .bytes = bytes + off };
	(*n)++;
}

size_t binaries__spans(struct binaries *b, struct binary_span *out, size_t max)
{
	size_t n = 0;

	for (int k = 0; k < 2; k++) {
		const struct binaries_space *sp = &b->space[k];

		if (k && b->nr_kcode) {
			/* the kernel's code replaces the kernel's maps (sorted, above every user span) */
			for (size_t i = 0; i < b->nr_kcode; i++) {
				if (n < max)
					out[n] = (struct binary_span){ b->kcode[i].addr, b->kcode[i].len,
								       b->kcode_bytes + b->kcode[i].dst_offset };
				n++;
			}
			continue;
		}
		for (size_t i = 0; i < sp->nr; i++) {
			const struct binary_map *m = &sp->maps[i];
			struct binary *own = m->bin->parent ? m->bin->parent : m->bin;
			struct elf_image *img = own->state > 0 ? binaries__image(b, m->bin) : NULL;
			const unsigned char *bytes;
			size_t flen;
			__u64 end;

			if (!img)
				continue;
			bytes = elf_image__bytes(img, &flen);
			/* as binaries__file_offset() */
			if (m->bin->rel_text) {
				const struct elf_image_sec *t = m->bin->rel_text;

				__u64 lo = m->bin->text_at > m->start ? m->bin->text_at : m->start;

				end = m->bin->text_at + t->size < m->end ? m->bin->text_at + t->size : m->end;
				if (lo < end)
					binaries__span_add(b, k, bytes, lo, end, t->offset + (lo - m->bin->text_at), out,
							   max, &n);
				continue;
			}
			if (!m->bin->parent && (elf_image__type(img) == ET_EXEC || elf_image__type(img) == ET_DYN)) {
				for (size_t g = 0; g < elf_image__nr_segs(img); g++) {
					const struct elf_image_seg *s = elf_image__seg(img, g);
					__u64 lo = s->offset > m->pgoff ? s->offset : m->pgoff;
					__u64 hi = s->offset + s->filesz;

					if (!(s->flags & PF_X))
						continue;
					if (hi > m->pgoff + (m->end - m->start))
						hi = m->pgoff + (m->end - m->start);
					if (hi > flen)
						hi = flen;
					if (lo < hi)
						binaries__span_add(b, k, bytes, m->start + (lo - m->pgoff),
								   m->start + (hi - m->pgoff), lo, out, max, &n);
				}
			} else if (m->bin->parent || elf_image__type(img) != ET_REL) {
				if (m->pgoff >= flen)
					continue;
				end = flen - m->pgoff < m->end - m->start ? m->start + (flen - m->pgoff) : m->end;
				binaries__span_add(b, k, bytes, m->start, end, m->pgoff, out, max, &n);
			}
		}
	}
	return n;
}

size_t binaries__read(struct binaries *b, __u64 addr, void *buf, size_t len)
{
	const struct kcore_piece *k = b->nr_kcode ? binaries__kcode_find(b, addr) : NULL;
	const struct binary_map *m;
	const unsigned char *bytes;
	__u64 off, avail;
	size_t flen;

	if (k) {
		if (len > k->len - (addr - k->addr))
			len = k->len - (addr - k->addr);
		memcpy(buf, b->kcode_bytes + k->dst_offset + (addr - k->addr), len);
		return len;
	}
	m = binaries__find(b, addr);
	if (!m || m == &b->kcode_map)
		return 0;
	off = binaries__file_offset(b, m, addr, &avail);
	if (!avail)
		return 0;
	if (len > avail)
		len = avail;
	bytes = elf_image__bytes(binaries__image(b, m->bin), &flen);
	memcpy(buf, bytes + off, len);
	return len;
}

/* @s + "+0x" + hex(@off) into @buf (truncated to @size - 1): no printf on the hot path. */
static char *binaries__put_symoff(char *buf, size_t size, const char *s, bool with_off, __u64 off)
{
	size_t n = strlen(s);
	char hex[20];
	int h = 0;

	if (!size)
		return buf;
	if (n > size - 1)
		n = size - 1;
	memcpy(buf, s, n);
	if (with_off) {
		do {
			hex[h++] = "0123456789abcdef"[off & 15];
			off >>= 4;
		} while (off);
		if (n + 3 + h <= size - 1) {
			memcpy(buf + n, "+0x", 3);
			n += 3;
			while (h)
				buf[n++] = hex[--h];
		}
	}
	buf[n] = 0;
	return buf;
}

char *binaries__map_symoff(struct binaries *b, const struct binary_map *m, __u64 addr, bool with_off, char *buf,
			   size_t size)
{
	struct elf_image *img = m ? binaries__image(b, m->bin) : NULL;
	const struct elf_image_sym *s = NULL;
	__u64 key = 0;

	if (img) {
		const struct elf_image_sec *t = m->bin->rel_text;

		key = t ? t->offset + (addr - m->bin->text_at) : addr - m->start + m->pgoff;
		s = t && addr < m->bin->text_at ? NULL : elf_image__find_sym(img, key);
	} else if (m && m->kernel && b->nr_ksyms && !strcmp(m->bin->dso_name, "[kernel.kallsyms]")) {
		const struct binaries_ksym *k = binaries__ksym_find(b, addr);

		if (k)
			return binaries__put_symoff(buf, size, b->ksym_names + k->name, with_off, addr - k->addr);
	}
	if (!s)
		return binaries__put_symoff(buf, size, "[unknown]", false, 0);
	return binaries__put_symoff(buf, size, s->name, with_off, key - s->offset);
}

char *binaries__symoff(struct binaries *b, __u64 addr, bool with_off, char *buf, size_t size)
{
	return binaries__map_symoff(b, addr ? binaries__find(b, addr) : NULL, addr, with_off, buf, size);
}

const char *binaries__map_dso_name(const struct binary_map *m)
{
	return m ? m->bin->dso_name : "[unknown]";
}

const char *binaries__dso_name(const struct binaries *b, __u64 addr)
{
	return binaries__map_dso_name(addr ? binaries__find(b, addr) : NULL);
}


static int binaries__piece_cmp(const void *x, const void *y)
{
	const struct kcore_piece *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int binaries__add_kernel_code(struct binaries *b, const char *kcore, const char *kallsyms)
{
	struct binary *kbin = NULL;
	__u64 kend = 0;
	size_t k = 0;
	int n, err;

	b->ksym_modules = true;
	err = binaries__add_kallsyms(b, kallsyms);
	if (err)
		return err;
	n = kcore__read_code(kcore, kallsyms, &b->kcode, &b->kcode_bytes);
	if (n < 0)
		return n;
	for (size_t i = 0; i < b->space[1].nr && !kbin; i++)
		if (b->kmap_start && b->space[1].maps[i].start == b->kmap_start) {
			kbin = b->space[1].maps[i].bin;
			kend = b->space[1].maps[i].end;
		}
	/*
	 * perf 6.1's dso__load_kcore() merges the other kcore maps in while the
	 * file's kernel map still has its recorded extent, and drops what lies
	 * inside it: a kernel map recorded up to ~0 (not up to the first module,
	 * as perf record writes it) hides the modules' code. The same here.
	 */
	for (int i = 0; i < n; i++) {
		struct kcore_piece *p = &b->kcode[i];
		bool text = b->kmap_start >= p->addr && b->kmap_start - p->addr < p->len;

		if (text || !kbin || p->addr >= kend || p->addr + p->len <= b->kmap_start)
			continue;
		if (p->addr >= b->kmap_start && p->addr + p->len <= kend) {
			p->len = 0;
		} else if (p->addr < b->kmap_start) {
			p->len = b->kmap_start - p->addr;
		} else {
			p->dst_offset += kend - p->addr;
			p->src_offset += kend - p->addr;
			p->len -= kend - p->addr;
			p->addr = kend;
		}
	}
	/* overlapping pieces (a trampoline page inside the text) are one: keep the first of each address */
	qsort(b->kcode, (size_t)n, sizeof(*b->kcode), binaries__piece_cmp);
	for (int i = 0; i < n; i++)
		if (b->kcode[i].len && (!k || b->kcode[i].addr >= b->kcode[k - 1].addr + b->kcode[k - 1].len))
			b->kcode[k++] = b->kcode[i];
	b->nr_kcode = k;
	if (!kbin) {
		kbin = binaries__get(b, "[kernel.kallsyms]", true);
		if (!kbin)
			return -ENOMEM;
	}
	b->kcode_map = (struct binary_map){ .start = 0, .end = ~0ULL, .kernel = true, .bin = kbin };
	return 0;
}
