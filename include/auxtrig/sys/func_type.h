/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_FUNC_TYPE_H
#define AUXTRIG_FUNC_TYPE_H

/*
 * sys/ layer: a function's return type from BTF or DWARF (user/sys/func_type.c),
 * for typed return values at record/gate.c's return probes.
 */

/**
 * DOC: a function's return type, from its debug information
 *
 * At a return probe (uretprobe:, kretprobe:) the return value is the whole
 * return register. A function returning int leaves the upper half of it
 * undefined (zero, usually), so -2 reads 4294967294. What the function
 * really returns is written in the binary's BTF (a .BTF section) or DWARF
 * (.debug_info, or a separate debug file found by build id under
 * /usr/lib/debug/.build-id/), and for the kernel in its BTF
 * (/sys/kernel/btf/vmlinux); the return value is then narrowed to that type.
 */

#include <stdbool.h>

/**
 * struct func_type - what a function returns.
 * @size: bytes of the value: 1, 2, 4 or 8; 0 for void.
 * @is_signed: a signed integer type (int, long, signed char, an enum with
 *             negative values, ...).
 * @is_int: an integer, enum, bool or pointer: a value the integer return
 *          register holds; false for void, floating point and aggregates
 *          (the register is not their value).
 * @name: the type as the debug information names it ("int", "ssize_t",
 *        "pointer", "struct", ...).
 * @source: where it was read: "BTF", "DWARF", "DWARF of its debug file"
 *          (found by build id), or "kernel BTF".
 */
struct func_type {
	unsigned int size;
	bool is_signed;
	bool is_int;
	char name[64];
	const char *source;
};

/**
 * func_type__from_elf() - the return type of function @symbol in the ELF
 * file @path: from its .BTF section if it has one, else its DWARF, else the
 * DWARF of its separate debug file (@debug_root/.build-id/NN/NNN...debug).
 * @path: the binary.
 * @symbol: the function's name (or its linkage name).
 * @debug_root: where separate debug files are, NULL for /usr/lib/debug.
 * @t: filled on success.
 *
 * Return: 0; -ENODATA the file has neither BTF nor DWARF (nor a debug file);
 * -ENOENT the debug information does not describe @symbol; -ENOTUNIQ two
 * functions of that name return different types; -ENOEXEC not an ELF
 * file; another -errno if the file cannot be read.
 */
int func_type__from_elf(const char *path, const char *symbol, const char *debug_root, struct func_type *t);

/**
 * func_type__from_kernel() - the return type of kernel function @symbol,
 * from the kernel's BTF (asked of the capabilities first: %CAPS_BTF).
 *
 * Return: 0; -ENODATA no kernel BTF; -ENOENT no such function in it.
 */
int func_type__from_kernel(const char *symbol, struct func_type *t);

/**
 * func_type__set_kernel_btf() - read "the kernel's BTF" from the BTF or ELF
 * file @path instead (tests, with %CAPS_BTF simulated); NULL: the kernel's.
 */
void func_type__set_kernel_btf(const char *path);

#endif
