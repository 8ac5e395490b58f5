// SPDX-License-Identifier: BSD-2-Clause
/*
 * csd_heap: the C++ operators new and delete, for OpenCSD.
 *
 * OpenCSD 1.3.3 allocates and frees an object for nearly every packet
 * element it stacks (TrcStackElemAtom and its kin): a tenth of a CoreSight
 * branch decode's CPU went to malloc and free. Defined in the executable,
 * these operators take the place of libstdc++'s in every library (symbol
 * interposition), and serve small blocks from per-size free lists carved
 * from 64 KiB chunks that are never given back: a decode reuses the same
 * few sizes millions of times.
 *
 * Each block is preceded by a 16-byte header holding its size class
 * (0: a large block, straight from malloc), so that the unsized delete
 * knows where it goes. The lists are per thread; a block freed by another
 * thread joins that thread's list, which is as good.
 *
 * Under AddressSanitizer (and the fuzzers) the operators are left to the
 * sanitizer, and under valgrind they are plain malloc and free (no header,
 * no lists): both check OpenCSD's heap, which free lists would hide from
 * them (tests/unit/test_script_leaks.sh counts OpenCSD's own leak).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/csd_heap.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CSD_HEAP_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CSD_HEAP_OFF 1
#endif
#endif

#ifndef CSD_HEAP_OFF

#define CSD_HEAP_HDR		16u
#define CSD_HEAP_STEP		16u
#define CSD_HEAP_CLASSES	32u		/* blocks of 16 .. 512 bytes */
#define CSD_HEAP_CHUNK		(64u << 10)

struct csd_heap_free {
	struct csd_heap_free *next;
};

/* The chunks, linked through their first bytes: reachable to the leak checkers. */
struct csd_heap_chunk {
	struct csd_heap_chunk *prev;
};

static __thread struct csd_heap_free *csd_heap_list[CSD_HEAP_CLASSES + 1];
static __thread char *csd_heap_cur, *csd_heap_end;
static struct csd_heap_chunk *csd_heap_chunks;
static int csd_heap_mode;	/* 0: not known yet, 1: the lists, 2: plain malloc (valgrind) */

static bool csd_heap__plain(void)
{
	if (__builtin_expect(!csd_heap_mode, 0))
		csd_heap_mode = RUNNING_ON_VALGRIND ? 2 : 1;
	return csd_heap_mode == 2;
}

static void *csd_heap__alloc(size_t size)
{
	size_t cls = size ? (size + CSD_HEAP_STEP - 1) / CSD_HEAP_STEP : 1;
	struct csd_heap_free *f;
	char *p;

	if (csd_heap__plain())
		return malloc(size ? size : 1);
	if (cls > CSD_HEAP_CLASSES) {
		if (size > SIZE_MAX - CSD_HEAP_HDR)
			return NULL;
		p = malloc(CSD_HEAP_HDR + size);
		if (!p)
			return NULL;
		*(unsigned int *)p = 0;
		return p + CSD_HEAP_HDR;
	}
	f = csd_heap_list[cls];
	if (f) {
		csd_heap_list[cls] = f->next;
		return f;
	}
	if ((size_t)(csd_heap_end - csd_heap_cur) < CSD_HEAP_HDR + cls * CSD_HEAP_STEP) {
		struct csd_heap_chunk *c = malloc(CSD_HEAP_CHUNK);

		if (!c)
			return NULL;
		c->prev = __atomic_exchange_n(&csd_heap_chunks, c, __ATOMIC_RELAXED);
		csd_heap_cur = (char *)c + CSD_HEAP_HDR;
		csd_heap_end = (char *)c + CSD_HEAP_CHUNK;
	}
	p = csd_heap_cur;
	csd_heap_cur += CSD_HEAP_HDR + cls * CSD_HEAP_STEP;
	*(unsigned int *)p = cls;
	return p + CSD_HEAP_HDR;
}

static void csd_heap__free(void *ptr)
{
	char *p = ptr;
	unsigned int cls;
	struct csd_heap_free *f = ptr;

	if (!p)
		return;
	if (csd_heap__plain()) {
		free(p);
		return;
	}
	cls = *(unsigned int *)(p - CSD_HEAP_HDR);
	if (!cls) {
		free(p - CSD_HEAP_HDR);
		return;
	}
	f->next = csd_heap_list[cls];
	csd_heap_list[cls] = f;
}

/* A throwing new cannot throw from C: out of memory ends the (worker) process, which the parent reports. */
static void *csd_heap__alloc_or_die(size_t size)
{
	void *p = csd_heap__alloc(size);

	if (!p) {
		fprintf(stderr, "auxtrig: out of memory in the CoreSight decoder (%zu bytes)\n", size);
		abort();
	}
	return p;
}

/* The Itanium C++ ABI names: operator new(size_t) and friends. */
void *_Znwm(size_t size);
void *_Znam(size_t size);
void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt);
void *_ZnamRKSt9nothrow_t(size_t size, const void *nt);
void _ZdlPv(void *p);
void _ZdaPv(void *p);
void _ZdlPvm(void *p, size_t size);
void _ZdaPvm(void *p, size_t size);
void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);

void *_Znwm(size_t size)
{
	return csd_heap__alloc_or_die(size);
}

void *_Znam(size_t size)
{
	return csd_heap__alloc_or_die(size);
}

void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt)
{
	(void)nt;
	return csd_heap__alloc(size);
}

void *_ZnamRKSt9nothrow_t(size_t size, const void *nt)
{
	(void)nt;
	return csd_heap__alloc(size);
}

void _ZdlPv(void *p)
{
	csd_heap__free(p);
}

void _ZdaPv(void *p)
{
	csd_heap__free(p);
}

void _ZdlPvm(void *p, size_t size)
{
	(void)size;
	csd_heap__free(p);
}

void _ZdaPvm(void *p, size_t size)
{
	(void)size;
	csd_heap__free(p);
}

void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
	(void)nt;
	csd_heap__free(p);
}

void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
	(void)nt;
	csd_heap__free(p);
}

bool csd_heap__active(void)
{
	return !csd_heap__plain();
}

#else

bool csd_heap__active(void)
{
	return false;
}

#endif /* !CSD_HEAP_OFF */
