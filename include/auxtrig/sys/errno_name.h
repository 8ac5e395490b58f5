/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_ERRNO_NAME_H
#define AUXTRIG_ERRNO_NAME_H

/*
 * sys/ layer: Linux errno values by name (user/sys/errno_name.c), from the
 * kernel's headers (user/sys/kernel_tables.sh), not this machine's libc: a
 * recording's return values are the recording kernel's, the same on x86-64
 * and arm64, including the kernel-internal ones (ERESTARTSYS, 512) that a
 * syscall's exit tracepoint can see.
 */

/**
 * struct errno_entry - one errno value
 * @value:	its number (positive)
 * @name:	"ENOENT"
 * @text:	the kernel's comment on it ("No such file or directory"), or ""
 */
struct errno_entry {
	int value;
	const char *name;
	const char *text;
};

/** errno_name__find() - the entry of errno @value (positive), or NULL. */
const struct errno_entry *errno_name__find(int value);

/** errno_name__value() - the value of errno @name ("ENOENT"), or 0 when none has it. */
int errno_name__value(const char *name);

#endif
