/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_UAPI_PERF_EVENT_AUX_H
#define AUXTRIG_UAPI_PERF_EVENT_AUX_H

/**
 * DOC: pinned perf ABI
 *
 * Definitions from newer kernels' include/uapi/linux/perf_event.h that
 * Debian 12's 6.1 headers lack. The values are kernel ABI and must never
 * change. Each names the kernel that introduced it.
 *
 * - aux_action (Linux 6.13, 18d92bb57c39 "perf/core: Add aux_pause,
 *   aux_resume, aux_start_paused"; backported to 6.12.24): a u32 at attr
 *   offset 116, where 6.1 headers have __reserved_3. Bit 0 aux_start_paused,
 *   bit 1 aux_pause, bit 2 aux_resume. A kernel without it rejects any bit
 *   with EINVAL; a kernel with it rejects aux_start_paused on a PMU without
 *   PERF_PMU_CAP_AUX_PAUSE with EOPNOTSUPP.
 * - PERF_ATTR_SIZE_VER8 (6.3, config3) is deliberately unused: perf 6.1
 *   refuses files whose attr.size is 136. We always open and write attr
 *   size 128 (PERF_ATTR_SIZE_VER7).
 */

#include <linux/perf_event.h>
#include <stddef.h>

#define AUXTRIG_ATTR_AUX_ACTION_OFFSET	116
#define AUXTRIG_AUX_START_PAUSED	(1u << 0)
#define AUXTRIG_AUX_PAUSE		(1u << 1)
#define AUXTRIG_AUX_RESUME		(1u << 2)
#define AUXTRIG_AUX_ACTION_MASK		0x7u

_Static_assert(offsetof(struct perf_event_attr, __reserved_3) == AUXTRIG_ATTR_AUX_ACTION_OFFSET,
	       "aux_action lives at attr offset 116");
_Static_assert(sizeof(struct perf_event_attr) == PERF_ATTR_SIZE_VER7,
	       "we write attr.size 128, the size perf 6.1 reads");

/* The union member newer headers call aux_action. */
static inline __u32 *perf_attr_aux_action(struct perf_event_attr *attr)
{
	return &attr->__reserved_3;
}

/* PERF_RECORD_AUX flags (all but the last are in 6.1 already; pinned for clarity). */
#ifndef PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW
#define PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW	0x0100
#endif

/* misc bit on PERF_RECORD_LOST_SAMPLES for samples dropped by BPF (6.10). */
#ifndef PERF_RECORD_MISC_LOST_SAMPLES_BPF
#define PERF_RECORD_MISC_LOST_SAMPLES_BPF	(1 << 15)
#endif

/* Software event for bpf_perf_event_output() targets (4.4). */
#ifndef PERF_COUNT_SW_BPF_OUTPUT
#define PERF_COUNT_SW_BPF_OUTPUT		10
#endif

/* PMU hooks of aux_action (kernel-internal, named for the docs and the AUX model). */
#define AUXTRIG_PERF_PMU_CAP_AUX_PAUSE	0x0200

#endif
