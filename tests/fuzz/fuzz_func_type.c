// SPDX-License-Identifier: BSD-2-Clause
/*
 * func_type__from_elf() on arbitrary bytes as an ELF file: BTF and DWARF
 * readers must refuse what is malformed without crashing or leaking, and
 * what they accept must describe a size a register can hold.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/sys/func_type.h"
#include "auxtrig/sys/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "ret_int", "ret_enum", "ret_ptr", "ret_struct", "main" };
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096], nodebug[4096];
	struct func_type t;
	int fd;

	log__set_level(-1);
	snprintf(path, sizeof(path), "%s/fuzz_func_type.%d", tmp, (int)getpid());
	snprintf(nodebug, sizeof(nodebug), "%s/fuzz_func_type.nodebug", tmp);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (func_type__from_elf(path, names[i], nodebug, &t))
			continue;
		/* a value the register holds is 1, 2, 4 or 8 bytes; nothing is larger than 16 */
		if (t.size > 16 || (t.is_int && t.size != 1 && t.size != 2 && t.size != 4 && t.size != 8) ||
		    (t.is_signed && !t.is_int) || !t.source || !memchr(t.name, 0, sizeof(t.name)))
			abort();
	}
	unlink(path);
	return 0;
}
