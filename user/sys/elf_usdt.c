// SPDX-License-Identifier: BSD-2-Clause
/* The USDT probes (<sys/sdt.h> notes) of an ELF binary. */
#include <errno.h>
#include <string.h>

#include "auxtrig/sys/elf_image.h"
#include "auxtrig/sys/elf_usdt.h"

#define STAPSDT_OWNER	"stapsdt"
#define STAPSDT_TYPE	3

static __u64 addr_at(const unsigned char *p, bool is64)
{
	__u64 v64;
	__u32 v32;

	if (is64) {
		memcpy(&v64, p, 8);
		return v64;
	}
	memcpy(&v32, p, 4);
	return v32;
}

int elf_usdt__parse_notes(const void *data, size_t size, bool is64, elf_usdt_cb cb, void *arg)
{
	const unsigned char *p = data, *end = p + size;
	size_t asz = is64 ? 8 : 4;
	int n = 0, err;

	while ((size_t)(end - p) >= 12) {
		__u32 namesz, descsz, type;
		size_t name_pad, desc_pad;
		const unsigned char *name, *desc, *s, *dend;
		struct elf_usdt_probe pr;

		memcpy(&namesz, p, 4);
		memcpy(&descsz, p + 4, 4);
		memcpy(&type, p + 8, 4);
		p += 12;
		name_pad = ((size_t)namesz + 3) & ~(size_t)3;
		desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
		if (name_pad < namesz || desc_pad < descsz || (size_t)(end - p) < name_pad ||
		    (size_t)(end - p) - name_pad < descsz)
			return -EINVAL;
		name = p;
		desc = p + name_pad;
		p = (size_t)(end - desc) < desc_pad ? end : desc + desc_pad;
		if (type != STAPSDT_TYPE || namesz != sizeof(STAPSDT_OWNER) ||
		    memcmp(name, STAPSDT_OWNER, sizeof(STAPSDT_OWNER)))
			continue;
		if (descsz < 3 * asz + 3)
			return -EINVAL;
		pr.pc = addr_at(desc, is64);
		pr.base = addr_at(desc + asz, is64);
		pr.semaphore = addr_at(desc + 2 * asz, is64);
		dend = desc + descsz;
		s = desc + 3 * asz;
		pr.provider = (const char *)s;
		s = memchr(s, '\0', dend - s);
		if (!s || ++s >= dend)
			return -EINVAL;
		pr.name = (const char *)s;
		s = memchr(s, '\0', dend - s);
		if (!s || ++s > dend)
			return -EINVAL;
		pr.args = "";
		if (s < dend) {
			if (!memchr(s, '\0', dend - s))
				return -EINVAL;
			pr.args = (const char *)s;
		}
		if (!pr.provider[0] || !pr.name[0])
			return -EINVAL;
		n++;
		err = cb(&pr, arg);
		if (err)
			return err;
	}
	return n;
}

int elf_usdt__foreach(const char *path, elf_usdt_cb cb, void *arg)
{
	struct elf_image *img = elf_image__open(path);
	const struct elf_image_sec *sec;
	const unsigned char *bytes;
	size_t len;
	int ret = 0;

	if (!img)
		return -errno;
	if (!elf_image__type(img)) {
		elf_image__delete(img);
		return -ENOEXEC;	/* elf_image reads ELF64 little endian files */
	}
	bytes = elf_image__bytes(img, &len);
	sec = elf_image__sec_by_name(img, ".note.stapsdt");
	if (sec && sec->offset <= len && sec->size <= len - sec->offset)
		ret = elf_usdt__parse_notes(bytes + sec->offset, sec->size, true, cb, arg);
	elf_image__delete(img);
	return ret;
}
