// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kallsyms reader of auxtrig script's call stacks
 * (binaries__add_kallsyms(), user/decode/binaries.c) on any text, then a
 * symbol lookup of a few kernel addresses: no crash, no read outside what
 * was read, a documented return value, and a name for every address.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "auxtrig/decode/binaries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t base = 0xffffffff81000000ULL;
	struct binaries *b;
	char path[4096], sym[64];
	int ret;

	fuzz_file__write("fuzz_kallsyms", data, size, path, sizeof(path));
	b = binaries__new(NULL, "/nonexistent");
	if (!b || binaries__add_mmap(b, base, 1ULL << 30, base, "[kernel.kallsyms]_text", true, NULL, 0))
		abort();
	ret = binaries__add_kallsyms(b, path);
	if (ret && ret != -ENODATA)
		abort();
	for (uint64_t a = base; a < base + (1ULL << 30); a += 1ULL << 26) {
		binaries__symoff(b, a + (size & 0xfff), true, sym, sizeof(sym));
		if (!sym[0] || strlen(sym) >= sizeof(sym))
			abort();
	}
	binaries__delete(b);
	unlink(path);
	return 0;
}
