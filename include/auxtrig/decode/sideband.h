/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SIDEBAND_H
#define AUXTRIG_SIDEBAND_H

/*
 * decode/ layer: the sideband of a trace file read in one pass
 * (user/decode/sideband.c), on format/pdata_reader.h; used by script.c.
 */

/**
 * DOC: sideband of a trace file
 *
 * What a perf.data file says around its trace, read in one pass: whose
 * trace a CPU held (ITRACE_START), thread names (COMM), which
 * PERF_RECORD_AUX published which AUX bytes with which flags, the
 * CoreSight trace IDs the kernel announced (PERF_RECORD_AUX_OUTPUT_HW_ID),
 * the file's other event samples (window edges) with their event names
 * (HEADER_EVENT_DESC), and the AUXTRACE buffers themselves. The executable
 * mappings and recorded build IDs go into a &struct binaries.
 */

#include <linux/types.h>
#include <stddef.h>

struct binaries;
struct pdata_reader;

/** struct sideband_ev - one record of interest, by kind. */
struct sideband_ev {
	int cpu;			/* sample_id cpu, -1 if unknown */
	__u32 pid, tid;
	__u64 time;
	__u64 a, b, c;			/* AUX: offset, size, flags; HW_ID: hw_id */
	const char *name;		/* event samples: the event's name */
	char comm[16];			/* COMM */
	size_t seq;			/* AUX: index among the AUX records */
};

/** struct sideband_buf - one AUXTRACE record and its payload. */
struct sideband_buf {
	const void *data;
	__u64 size;			/* payload bytes */
	__u64 offset;			/* AUX offset of the first byte */
	__u64 reference;
	__u64 file_offset;		/* of the AUXTRACE record */
	__u32 idx, tid;
	int cpu;
	size_t seq;			/* index among the AUXTRACE records */
};

struct sideband {
	struct sideband_ev *itrace, *comm, *aux, *edge, *hw_id;
	size_t nr_itrace, nr_comm, nr_aux, nr_edge, nr_hw_id;
	struct sideband_buf *bufs;
	size_t nr_bufs;
	char **names;			/* EVENT_DESC names and their ids */
	__u64 *name_ids;
	size_t nr_names;
};

/**
 * sideband__collect() - read the file's records into @sd (zeroed first) and
 * its mappings and build IDs into @bins (may be NULL).
 * @aux_type: the AUX PMU's attr type: its own samples are not window edges
 * Return: 0, -ENOMEM, or -EPROTO at a corrupt record (logged).
 */
int sideband__collect(struct sideband *sd, struct pdata_reader *r, __u64 aux_type, struct binaries *bins);

/** sideband__free() - free what sideband__collect() allocated. */
void sideband__free(struct sideband *sd);

/** sideband__comm() - the last COMM name of @tid, or NULL. */
const char *sideband__comm(const struct sideband *sd, __u32 tid);

/**
 * sideband__aux_of() - the PERF_RECORD_AUX of @cpu (-1: any) that published
 * AUX offset @offset, or NULL.
 */
const struct sideband_ev *sideband__aux_of(const struct sideband *sd, int cpu, __u64 offset);

#endif
