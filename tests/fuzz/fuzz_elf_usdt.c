// SPDX-License-Identifier: BSD-2-Clause
/* The USDT note reader (elf_usdt__parse_notes) on any bytes, both ELF classes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "auxtrig/sys/elf_usdt.h"

static int touch(const struct elf_usdt_probe *pr, void *arg)
{
	size_t *sum = arg;

	*sum += strlen(pr->provider) + strlen(pr->name) + strlen(pr->args) + (size_t)pr->pc;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t sum = 0;

	elf_usdt__parse_notes(data, size, true, touch, &sum);
	elf_usdt__parse_notes(data, size, false, touch, &sum);
	return 0;
}
