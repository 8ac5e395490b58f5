/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CSD_HEAP_H
#define AUXTRIG_CSD_HEAP_H

/*
 * decode/ layer: the C++ operators new and delete that OpenCSD uses
 * (user/decode/csd_heap.c).
 */

#include <stdbool.h>

/**
 * csd_heap__active() - whether OpenCSD's new and delete are auxtrig's.
 *
 * user/decode/csd_heap.c defines the C++ operators new and delete (their
 * Itanium ABI names), which then serve every C++ allocation in the process,
 * OpenCSD's above all: small blocks come from per-size free lists, large
 * ones from malloc. Under AddressSanitizer the sanitizer's own operators
 * stay; under valgrind they are plain malloc and free. The executable links them in by calling this function
 * (csd_decoder__new() does).
 *
 * Return: true when the free lists serve them, false under the sanitizer or valgrind.
 */
bool csd_heap__active(void);

#endif
