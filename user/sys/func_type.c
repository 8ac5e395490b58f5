// SPDX-License-Identifier: BSD-2-Clause
/*
 * A function's return type from BTF (libbpf) or DWARF (libdw): what
 * uretprobe:/kretprobe: narrow their return value to.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/func_type.h"
#include "auxtrig/sys/input_file.h"

#define FUNC_TYPE_DEPTH 16 /* typedef/const/... chains, nested scopes */

/*
 * Only 1, 2, 4 or 8 bytes are one register's value (__int128 and odd sizes
 * are not); anything beyond 16 bytes is returned in memory: size 0.
 */
static void normalize(struct func_type *t)
{
	if (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8)
		t->is_int = false;
	if (t->size > 16)
		t->size = 0;
	if (!t->is_int)
		t->is_signed = false;
}

/* ---- BTF ---- */

static int btf_ret_type(const struct btf *btf, const char *symbol, struct func_type *t)
{
	const struct btf_type *fn, *proto, *rt;
	const char *name;
	int id, rid;

	id = btf__find_by_name_kind(btf, symbol, BTF_KIND_FUNC);
	if (id <= 0)
		return -ENOENT;
	fn = btf__type_by_id(btf, id);
	proto = fn ? btf__type_by_id(btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -ENOENT;
	memset(t, 0, sizeof(*t));
	if (!proto->type) {
		snprintf(t->name, sizeof(t->name), "void");
		return 0;
	}
	rt = btf__type_by_id(btf, proto->type);
	name = rt ? btf__name_by_offset(btf, rt->name_off) : NULL;
	rid = btf__resolve_type(btf, proto->type);
	rt = rid > 0 ? btf__type_by_id(btf, rid) : NULL;
	if (!rt)
		return -ENOENT;
	if (btf_is_int(rt)) {
		t->size = rt->size;
		t->is_signed = btf_int_encoding(rt) & BTF_INT_SIGNED;
		t->is_int = true;
	} else if (btf_is_enum(rt)) {
		/* compilers before kflag (clang 14) leave it 0: a negative value says signed, as gcc decides */
		const struct btf_enum *e = btf_enum(rt);

		t->size = rt->size;
		t->is_signed = btf_kflag(rt);
		for (int i = 0; i < btf_vlen(rt); i++)
			t->is_signed |= e[i].val < 0;
		t->is_int = true;
	} else if (btf_is_enum64(rt)) {
		t->size = rt->size;
		t->is_signed = btf_kflag(rt);
		t->is_int = true;
	} else if (btf_is_ptr(rt)) {
		t->size = sizeof(void *);
		t->is_int = true;
		if (!name || !*name)
			name = "pointer";
	} else if (btf_is_float(rt)) {
		t->size = rt->size;
	} else {
		t->size = btf_is_composite(rt) ? rt->size : 0;
		if (!name || !*name)
			name = btf_is_struct(rt) ? "struct" : btf_is_union(rt) ? "union" : "?";
	}
	snprintf(t->name, sizeof(t->name), "%s", name && *name ? name : "?");
	normalize(t);
	return 0;
}

/* The .BTF section of @elf, if any: 0, -ENODATA (none), or -errno. */
static int elf_btf_ret_type(Elf *elf, const char *symbol, struct func_type *t)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	struct btf *btf;
	int err;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".BTF"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size)
			return -ENODATA;
		btf = btf__new(d->d_buf, d->d_size);
		if (!btf)
			return -ENODATA; /* malformed: as if there were none */
		err = btf_ret_type(btf, symbol, t);
		btf__free(btf);
		if (!err)
			t->source = "BTF";
		return err;
	}
	return -ENODATA;
}

static const char *kernel_btf_path;	/* func_type__set_kernel_btf(); NULL: the kernel's */

void func_type__set_kernel_btf(const char *path)
{
	kernel_btf_path = path;
}

int func_type__from_kernel(const char *symbol, struct func_type *t)
{
	struct btf *btf;
	int err;

	if (!caps__has(CAPS_BTF))
		return -ENODATA;
	btf = kernel_btf_path ? btf__parse(kernel_btf_path, NULL) : btf__load_vmlinux_btf();
	if (!btf)
		return -ENODATA;
	err = btf_ret_type(btf, symbol, t);
	btf__free(btf);
	if (!err)
		t->source = "kernel BTF";
	return err;
}

/* ---- DWARF ---- */

static int dw_udata(Dwarf_Die *die, unsigned int name, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_formudata(dwarf_attr_integrate(die, name, &a), v);
}

/* Fill @t from the type DIE @type (a function's DW_AT_type). */
static int dw_type(Dwarf_Die *type, struct func_type *t)
{
	const char *name = dwarf_diename(type);
	Dwarf_Die peeled, under;
	Dwarf_Attribute a;
	Dwarf_Word size = 0, enc = DW_ATE_unsigned;

	if (dwarf_peel_type(type, &peeled))
		return -ENOENT;
	switch (dwarf_tag(&peeled)) {
	case DW_TAG_base_type:
		if (dw_udata(&peeled, DW_AT_byte_size, &size) || dw_udata(&peeled, DW_AT_encoding, &enc))
			return -ENOENT;
		t->is_int = enc != DW_ATE_float && enc != DW_ATE_complex_float && enc != DW_ATE_decimal_float;
		t->is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
		break;
	case DW_TAG_enumeration_type:
		if (dw_udata(&peeled, DW_AT_byte_size, &size))
			return -ENOENT;
		/* gcc writes the encoding on the enum; else the underlying type's */
		if (dw_udata(&peeled, DW_AT_encoding, &enc) &&
		    (!dwarf_formref_die(dwarf_attr_integrate(&peeled, DW_AT_type, &a), &under) ||
		     dwarf_peel_type(&under, &under) || dw_udata(&under, DW_AT_encoding, &enc)))
			enc = DW_ATE_unsigned;
		t->is_int = true;
		t->is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
		break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_ptr_to_member_type:
		size = sizeof(void *);
		t->is_int = true;
		if (!name)
			name = "pointer";
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
	case DW_TAG_array_type:
		dw_udata(&peeled, DW_AT_byte_size, &size);
		if (!name)
			name = dwarf_tag(&peeled) == DW_TAG_union_type ? "union" : "struct";
		break;
	default:
		return -ENOENT;
	}
	t->size = size > 16 ? 0 : size;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "?");
	normalize(t);
	return 0;
}

/* Does this subprogram DIE name @symbol (its name or linkage name)? */
static bool dw_is_named(Dwarf_Die *die, const char *symbol)
{
	Dwarf_Attribute a;
	const char *n = dwarf_diename(die);

	if (n && !strcmp(n, symbol))
		return true;
	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	return n && !strcmp(n, symbol);
}

struct dw_search {
	const char *symbol;
	struct func_type found;
	int nr_found;
	bool conflict;
};

static void dw_found(struct dw_search *s, Dwarf_Die *fn)
{
	struct func_type t = { 0 };
	Dwarf_Attribute a;
	Dwarf_Die type;

	if (!dwarf_attr_integrate(fn, DW_AT_type, &a)) {
		snprintf(t.name, sizeof(t.name), "void");
	} else if (!dwarf_formref_die(&a, &type) || dw_type(&type, &t)) {
		return;
	}
	if (!s->nr_found++)
		s->found = t;
	else if (s->found.size != t.size || s->found.is_signed != t.is_signed || s->found.is_int != t.is_int)
		s->conflict = true;
}

/* Subprograms at any depth (C++ namespaces and classes nest them). */
static void dw_walk(struct dw_search *s, Dwarf_Die *parent, int depth)
{
	Dwarf_Die die;

	if (depth > FUNC_TYPE_DEPTH || dwarf_child(parent, &die))
		return;
	do {
		switch (dwarf_tag(&die)) {
		case DW_TAG_subprogram:
			if (dw_is_named(&die, s->symbol))
				dw_found(s, &die);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
			dw_walk(s, &die, depth + 1);
			break;
		}
	} while (!dwarf_siblingof(&die, &die));
}

static int elf_dwarf_ret_type(Elf *elf, const char *symbol, struct func_type *t)
{
	struct dw_search s = { .symbol = symbol };
	Dwarf_Off off = 0, next;
	Dwarf *dw;
	size_t hsize;

	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		return -ENODATA;
	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu))
			dw_walk(&s, &cu, 0);
		off = next;
	}
	dwarf_end(dw);
	if (!s.nr_found)
		return -ENOENT;
	if (s.conflict)
		return -ENOTUNIQ;
	*t = s.found;
	t->source = "DWARF";
	return 0;
}

/* ---- files ---- */

static int open_elf(const char *path, int *fd, Elf **elf)
{
	struct stat st;

	elf_version(EV_CURRENT);
	*fd = input_file__open(path, 0, &st);	/* never blocks on a FIFO */
	if (*fd < 0)
		return *fd;
	if (!S_ISREG(st.st_mode)) {
		close(*fd);
		return -ENOEXEC;
	}
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

/* The separate debug file named by @elf's build id under @root, if it is there. */
static int debug_file_ret_type(Elf *elf, const char *root, const char *symbol, struct func_type *t)
{
	const unsigned char *id;
	char path[PATH_MAX];
	ssize_t len = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	size_t n;
	Elf *dbg;
	int fd, err;

	if (len < 2 || len > 64)
		return -ENODATA;
	n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", root, id[0]);
	for (ssize_t i = 1; i < len && n < sizeof(path); i++)
		n += snprintf(path + n, sizeof(path) - n, "%02x", id[i]);
	if (n + 7 >= sizeof(path))
		return -ENODATA;
	strcat(path, ".debug");
	err = open_elf(path, &fd, &dbg);
	if (err)
		return -ENODATA;
	err = elf_dwarf_ret_type(dbg, symbol, t);
	if (!err)
		t->source = "DWARF of its debug file";
	elf_end(dbg);
	close(fd);
	return err;
}

int func_type__from_elf(const char *path, const char *symbol, const char *debug_root, struct func_type *t)
{
	Elf *elf;
	int fd, err;

	err = open_elf(path, &fd, &elf);
	if (err)
		return err;
	/* The first that describes the function; -ENOENT if any had debug information at all. */
	err = elf_btf_ret_type(elf, symbol, t);
	if (err == -ENODATA || err == -ENOENT) {
		int e = elf_dwarf_ret_type(elf, symbol, t);

		err = e == -ENODATA && err == -ENOENT ? err : e;
	}
	if (err == -ENODATA || err == -ENOENT) {
		int e = debug_file_ret_type(elf, debug_root ? debug_root : "/usr/lib/debug", symbol, t);

		err = e == -ENODATA && err == -ENOENT ? err : e;
	}
	elf_end(elf);
	close(fd);
	return err;
}
