// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kallsyms reader of auxtrig script's call stacks and module placement
 * (binaries__add_kallsyms(), user/decode/binaries.c) on any text, then a
 * symbol lookup of a few kernel addresses, and the reads of a module (a
 * small .ko made here, fuzzmod.ko: .text and .exit.text) its module
 * symbols place: no crash, no read outside what was read, a documented
 * return value, a name for every address, every byte read inside the .ko.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "auxtrig/decode/binaries.h"

#define MOD_BASE	0xffffffffc0000000ULL
#define MOD_LEN		0x2000ULL

/* A relocatable object: .text (0x40 bytes of 0xa1, fn_a at 0x10, fn_b at 0x20), .exit.text (fn_exit). */
static size_t fuzz_module(unsigned char *buf, size_t size)
{
	static const char strtab[] = "\0fn_a\0fn_b\0fn_exit";
	static const char shstr[] = "\0.text\0.exit.text\0.symtab\0.strtab\0.shstrtab";
	const size_t text = 0x40, exit_text = 0x80, symtab = 0x90, str = symtab + 4 * sizeof(Elf64_Sym);
	const size_t shs = str + sizeof(strtab), sh = (shs + sizeof(shstr) + 7) & ~7UL;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Sym *sym = (Elf64_Sym *)(buf + symtab);
	Elf64_Shdr *s = (Elf64_Shdr *)(buf + sh);

	if (sh + 6 * sizeof(*s) > size)
		abort();
	memset(buf, 0, size);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = sh;
	eh->e_shentsize = sizeof(*s);
	eh->e_shnum = 6;
	eh->e_shstrndx = 5;
	memset(buf + text, 0xa1, 0x40);
	memset(buf + exit_text, 0xe1, 0x10);
	sym[1] = (Elf64_Sym){ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1, .st_value = 0x10, .st_size = 0x10 };
	sym[2] = (Elf64_Sym){ .st_name = 6, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1, .st_value = 0x20, .st_size = 0x20 };
	sym[3] = (Elf64_Sym){ .st_name = 11, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 2, .st_value = 0, .st_size = 0x10 };
	memcpy(buf + str, strtab, sizeof(strtab));
	memcpy(buf + shs, shstr, sizeof(shstr));
	s[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_offset = text,
			     .sh_size = 0x40, .sh_addralign = 16 };
	s[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_offset = exit_text, .sh_size = 0x10, .sh_addralign = 16 };
	s[3] = (Elf64_Shdr){ .sh_name = 18, .sh_type = SHT_SYMTAB, .sh_offset = symtab, .sh_size = 4 * sizeof(*sym),
			     .sh_link = 4, .sh_info = 1, .sh_entsize = sizeof(*sym), .sh_addralign = 8 };
	s[4] = (Elf64_Shdr){ .sh_name = 26, .sh_type = SHT_STRTAB, .sh_offset = str, .sh_size = sizeof(strtab) };
	s[5] = (Elf64_Shdr){ .sh_name = 34, .sh_type = SHT_STRTAB, .sh_offset = shs, .sh_size = sizeof(shstr) };
	return sh + 6 * sizeof(*s);
}

/* Every readable byte of the module is the .ko's code; every address has a name. */
static void fuzz_module_reads(struct binaries *b)
{
	struct binary_span spans[16];
	unsigned char buf[64];
	char sym[64];
	size_t n;

	for (__u64 a = MOD_BASE; a < MOD_BASE + MOD_LEN; a += 8) {
		n = binaries__read(b, a, buf, sizeof(buf));
		if (n > sizeof(buf))
			abort();
		for (size_t i = 0; i < n; i++)
			if (buf[i] != 0xa1 && buf[i] != 0xe1)
				abort();
		binaries__symoff(b, a, true, sym, sizeof(sym));
		if (!sym[0] || strlen(sym) >= sizeof(sym))
			abort();
	}
	n = binaries__spans(b, spans, 16);
	for (size_t i = 0; i < n && i < 16; i++)
		for (size_t k = 0; k < spans[i].len; k++)
			if (((const unsigned char *)spans[i].bytes)[k] != 0xa1 &&
			    ((const unsigned char *)spans[i].bytes)[k] != 0xe1)
				abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t base = 0xffffffff81000000ULL;
	static unsigned char ko[1024];
	struct binaries *b;
	char path[4096], mod[4096], sym[64];
	size_t ko_len = fuzz_module(ko, sizeof(ko));
	int ret;

	fuzz_file__write("fuzz_kallsyms", data, size, path, sizeof(path));
	fuzz_file__write("fuzzmod.ko", ko, ko_len, mod, sizeof(mod));
	b = binaries__new(NULL, "/nonexistent");
	if (!b || binaries__add_mmap(b, base, 1ULL << 30, base, "[kernel.kallsyms]_text", true, NULL, 0) ||
	    binaries__add_mmap(b, MOD_BASE, MOD_LEN, 0, mod, true, NULL, 0))
		abort();
	ret = binaries__add_kallsyms(b, path);
	if (ret && ret != -ENODATA)
		abort();
	for (uint64_t a = base; a < base + (1ULL << 30); a += 1ULL << 26) {
		binaries__symoff(b, a + (size & 0xfff), true, sym, sizeof(sym));
		if (!sym[0] || strlen(sym) >= sizeof(sym))
			abort();
	}
	fuzz_module_reads(b);
	binaries__delete(b);
	unlink(path);
	unlink(mod);
	return 0;
}
