// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ELF image object (user/sys/elf_image.c) on any bytes: every part it
 * hands out is read here (ASan catches a read outside the input), its
 * symbols are sorted and each covers at least its first byte, and lookups
 * find what they say they find.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/sys/elf_image.h"

static volatile unsigned char sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_image *img = elf_image__new_mem(data, size, "fuzz.elf");
	const struct elf_image_sym *prev = NULL, *s;
	__u8 bid[20];
	__u64 off;
	size_t n, len;

	if (!img)
		return 0;
	if (elf_image__bytes(img, &len) != data || len != size)
		abort();
	for (size_t i = 0; elf_image__sec(img, i); i++) {
		const struct elf_image_sec *sec = elf_image__sec(img, i);

		sink ^= sec->name[strlen(sec->name)];	/* names are terminated inside the input */
		if (elf_image__sec_by_name(img, sec->name) == NULL)
			abort();
	}
	if (elf_image__sec(img, elf_image__nr_secs(img)))
		abort();
	for (size_t i = 0; elf_image__seg(img, i); i++)
		sink ^= elf_image__seg(img, i)->flags;
	if (elf_image__rel_text(img)) {
		const struct elf_image_sec *t = elf_image__rel_text(img);

		if (t->offset > size || t->size > size - t->offset)
			abort();	/* the .text a module map reads from lies in the file */
		for (__u64 k = 0; k < t->size; k++)
			sink ^= data[t->offset + k];
	}
	n = elf_image__nr_syms(img);
	for (size_t i = 0; i < n; i++) {
		s = elf_image__sym(img, i);
		if (s->end < s->offset || (prev && prev->offset >= s->offset))
			abort();	/* sorted, one per address */
		sink ^= s->name[strlen(s->name)];
		if (s->end > s->offset && elf_image__find_sym(img, s->offset) != s &&
		    elf_image__find_sym(img, s->offset)->offset != s->offset)
			abort();
		prev = s;
	}
	if (elf_image__sym(img, n))
		abort();
	if (elf_image__build_id(img, bid) > 20)
		abort();
	elf_image__symbol_file_offset(img, "main", &off);
	elf_image__symbol_value(img, "main", &off);
	elf_image__delete(img);
	return 0;
}
