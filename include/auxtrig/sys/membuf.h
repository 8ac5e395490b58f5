/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_MEMBUF_H
#define AUXTRIG_MEMBUF_H

/*
 * sys/ layer: a growable byte buffer (user/sys/membuf.c), for file sections
 * built in memory by format/ and record/window_hold.c.
 */

#include <linux/types.h>
#include <stddef.h>

/**
 * struct membuf - a byte buffer that grows as it is appended to; used to
 * build file sections (perf.data features, the tracing data) in memory.
 * @p:		the bytes; free() them when done
 * @len:	bytes in use
 * @cap:	bytes allocated
 * @err:	-ENOMEM once an append failed; later appends do nothing, so
 *		callers check once at the end
 *
 * Zero-initialize to start; nothing is allocated until the first append.
 */
struct membuf {
	char *p;
	size_t len, cap;
	int err;
};

void membuf__add(struct membuf *b, const void *p, size_t len);
void membuf__u8(struct membuf *b, __u8 v);
void membuf__u32(struct membuf *b, __u32 v);
void membuf__u64(struct membuf *b, __u64 v);
/** membuf__cstr() - @s with its terminating NUL. */
void membuf__cstr(struct membuf *b, const char *s);

#endif
