/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PDATA_WRITER_H
#define AUXTRIG_PDATA_WRITER_H

/*
 * format/ layer: the perf.data writer (user/format/pdata_writer.c),
 * used by record/ (sink.c, recorder.c, aux_session.c) and format/synth.c.
 */

/**
 * DOC: perf.data writer
 *
 * Writes a perf.data that perf 6.1 reads without warnings, in file mode
 * (below) or pipe mode (pdata_writer__open_pipe()):
 *
 *   open -> add_attr... -> [set_tracing_data] [set_cmdline]
 *        -> begin_data -> { write | write_auxtrace }... finish_round ...
 *        -> close -> delete
 *
 * Layout: header (104 B) | attr section (144 B each) | id arrays | data |
 * feature table | feature bodies. begin_data() writes a valid header with
 * data.size 0; every finish_round() flushes and patches data.size in place,
 * so a run killed between rounds leaves a file perf can read up to the last
 * round. close() appends the features and rewrites the header.
 *
 * Records are buffered (4 MiB) and written with pwrite(); the first write
 * error is sticky: every later call returns it, so a caller that checks
 * only close() still learns about an ENOSPC.
 *
 * The writer checks what perf 6.1 would reject later: all attrs must put
 * the id at the same position and agree on sample_id_all; every non-zero id
 * a kernel-type record carries must be in some attr's id list; AUXTRACE
 * needs an earlier AUXTRACE_INFO. Violations fail with -EINVAL.
 */

#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "auxtrig/format/pdata.h"

struct pdata_writer;

/**
 * struct pdata_writer_stats - what went into the file, for the summary line.
 * @bytes: bytes of the data section (records, AUXTRACE payloads included)
 * @records: records written (an AUXTRACE and its payload count once)
 * @auxtrace_bytes: AUXTRACE payload bytes (padding included)
 * @first_sample_time: time of the earliest PERF_RECORD_SAMPLE (0 if none)
 * @last_sample_time: time of the latest PERF_RECORD_SAMPLE
 * @nr_by_type: records per type; types >= PDATA_RECORD_TYPE_MAX are not counted here
 * @lost_records: records given to the writer that are not in the file: after a
 *	write error every write fails and counts here, and pdata_writer__salvage()
 *	adds those it drops from the buffer
 * @lost_samples: of those, PERF_RECORD_SAMPLEs
 * @lost_aux_bytes: AUXTRACE payload bytes lost the same way
 * @salvage_record: pdata_writer__salvage() got its last record into the file
 */
struct pdata_writer_stats {
	__u64 bytes;
	__u64 records;
	__u64 auxtrace_bytes;
	__u64 first_sample_time;
	__u64 last_sample_time;
	__u64 nr_by_type[PDATA_RECORD_TYPE_MAX];
	__u64 lost_records, lost_samples, lost_aux_bytes;
	bool salvage_record;
};

/**
 * pdata_writer__open() - create @path for writing.
 * @path: file to create, mode 0600
 * @force: replace an existing regular file
 *
 * Never follows a symlink at @path: without @force an existing path (file or
 * link) fails with EEXIST; with @force a symlink fails with ELOOP, anything
 * but a regular file with EEXIST, and a regular file is unlinked and created
 * anew (O_EXCL), so a hard-linked original is left intact. A missing
 * directory fails with ENOENT. Each failure is reported with pr_err().
 *
 * Return: the writer, or NULL with errno set.
 */
struct pdata_writer *pdata_writer__open(const char *path, bool force);

/**
 * pdata_writer__open_pipe() - write a pipe-mode stream to @fd (perf record -o -).
 * @fd: where the stream goes, written in order and never sought (a pipe,
 *	a socket, a file); closed by close(), salvage() or delete()
 * @name: what messages call it ("standard output")
 *
 * begin_data() writes the 16-byte pipe header, the attrs as HEADER_ATTR
 * records, the features known before recording as HEADER_FEATURE records
 * and the tracing data after a HEADER_TRACING_DATA record (perf-aux.md
 * §1.5), and flushes them. Records follow as in file mode, each round
 * flushed whole; there is no AUXTRACE index, no SAMPLE_TIME and nothing at
 * close. A writer killed mid-stream leaves whole records up to its last
 * flush, and at most one record cut short after them.
 *
 * Return: the writer, or NULL with errno set (ENOMEM).
 */
struct pdata_writer *pdata_writer__open_pipe(int fd, const char *name);

/**
 * pdata_writer__add_attr() - add an event to the attr section (before begin_data).
 * @w: writer
 * @attr: the attr as opened; copied with attr.size forced to 128
 * @name: event name for EVENT_DESC ("syscalls:sys_enter_openat"); NULL = "unknown".
 *        The EVENT_DESC copy has its aux_action bits cleared (perf 6.1 drops all
 *        names otherwise).
 * @ids: the kernel ids (PERF_EVENT_IOC_ID) of every fd of this event; copied
 * @nr_ids: number of @ids
 *
 * Return: 0, -EINVAL if the sample id layout differs from earlier attrs or
 * data already began, -ENOMEM.
 */
int pdata_writer__add_attr(struct pdata_writer *w, const struct perf_event_attr *attr,
			   const char *name, const __u64 *ids, size_t nr_ids);

/**
 * pdata_writer__set_tracing_data() - set the HEADER_TRACING_DATA body (copied).
 * Required by perf when any attr is a tracepoint; see tracing_data__build().
 * Return: 0 or -ENOMEM.
 */
int pdata_writer__set_tracing_data(struct pdata_writer *w, const void *buf, size_t len);

/**
 * pdata_writer__set_cmdline() - set the HEADER_CMDLINE strings (copied).
 * Return: 0 or -ENOMEM.
 */
int pdata_writer__set_cmdline(struct pdata_writer *w, int argc, char **argv);

/**
 * pdata_writer__add_build_id() - a build ID for feature HEADER_BUILD_ID, as
 * perf record writes them: @name ("[kernel.kallsyms]" for the kernel, pid
 * -1 and misc PERF_RECORD_MISC_KERNEL), @len (at most 20) bytes of @bid.
 * Before pdata_writer__begin_data(). Return: 0, -EINVAL, or -ENOMEM.
 */
int pdata_writer__add_build_id(struct pdata_writer *w, __u16 misc, __s32 pid, const char *name, const __u8 *bid,
			       size_t len);

/**
 * pdata_writer__begin_data() - write the header, attr section and id arrays.
 * Records can be written after this. A tracepoint attr needs tracing data
 * set before (perf cannot read the file otherwise).
 * Return: 0, -EINVAL without events or with a tracepoint and no tracing
 * data, or the write error.
 */
int pdata_writer__begin_data(struct pdata_writer *w);

/**
 * pdata_writer__write() - append whole records (buffered).
 * @records: one or more records, each starting with a perf_event_header whose
 *           size covers it; sizes must be multiples of 8
 * @len: total bytes
 *
 * Return: 0, -EINVAL for a malformed record or an id not in the attr
 * section (nothing of @records is written then), or the write error.
 */
int pdata_writer__write(struct pdata_writer *w, const void *records, size_t len);

/**
 * pdata_writer__write_auxtrace() - append a PERF_RECORD_AUXTRACE and its payload.
 * @auxtrace_rec: a 48-byte &struct pdata_record_auxtrace; its header and
 *                size fields are set here (size = len1 + len2 rounded up to 8)
 * @data1: first payload segment (may be NULL if @len1 is 0)
 * @data2: second segment, for data that wrapped in the AUX ring
 *
 * The record's file offset goes to the HEADER_AUXTRACE index written at close.
 * Return: 0, -EINVAL without an earlier AUXTRACE_INFO, or the write error.
 */
int pdata_writer__write_auxtrace(struct pdata_writer *w, const void *auxtrace_rec,
				 const void *data1, size_t len1, const void *data2, size_t len2);

/**
 * pdata_writer__finish_round() - append FINISHED_ROUND, flush, and patch
 * the header's data.size so the file is readable up to here. Return: 0 or -errno.
 */
int pdata_writer__finish_round(struct pdata_writer *w);

/**
 * pdata_writer__flush() - flush and patch data.size, without a round: for
 * streams whose records must all be sorted together (flight-recorder
 * snapshots hold records older than sideband already written).
 * Return: 0 or -errno.
 */
int pdata_writer__flush(struct pdata_writer *w);

/**
 * pdata_writer__salvage() - after a write error (ENOSPC, EIO...): cut the
 * file back to the last record fully on disk, make it complete there (feature
 * table and header), and close it. What the file holds stays readable by perf.
 * The records dropped from the buffer count in the stats' lost_* fields.
 * @w: the writer
 * @last: a record to append first if it fits (the writer keeps room past the
 *	data allocated for it where the file system can preallocate), such as
 *	a PERF_RECORD_LOST_SAMPLES counting what was lost; NULL for none.
 *	The stats' salvage_record says whether it went in.
 * @last_len: its size
 * Return: 0, or -errno if even that could not be written.
 */
int pdata_writer__salvage(struct pdata_writer *w, const void *last, size_t last_len);

/**
 * pdata_writer__set_machine() - the ARCH feature's machine name ("x86_64",
 * "aarch64"), for a file made for another architecture (test fixtures);
 * without it, this machine's (uname). Before pdata_writer__begin_data().
 */
void pdata_writer__set_machine(struct pdata_writer *w, const char *machine);

/** pdata_writer__failed() - the sticky write error (-ENOSPC, -EIO...), or 0. */
int pdata_writer__failed(const struct pdata_writer *w);

/**
 * pdata_writer__pending_samples() - PERF_RECORD_SAMPLEs in the buffer, not on
 * disk yet: after a write error, what pdata_writer__salvage() will drop.
 */
__u64 pdata_writer__pending_samples(const struct pdata_writer *w);

/**
 * pdata_writer__close() - flush, write the feature sections and the final
 * header, close the file. Features: HOSTNAME, OSRELEASE, VERSION, ARCH,
 * NRCPUS, CPUDESC, CPUID, TOTAL_MEM, CMDLINE (if set), EVENT_DESC,
 * TRACING_DATA (if set), AUXTRACE (if any AUXTRACE), SAMPLE_TIME (if any
 * sample). The writer must still be freed with pdata_writer__delete().
 * Return: 0 or -errno (ENOSPC, EIO... from any earlier write too); on an
 * error the file stays open, so pdata_writer__salvage() can still make it
 * complete up to the last record fully on disk.
 */
int pdata_writer__close(struct pdata_writer *w);

/**
 * pdata_writer__newest_time() - the newest time of any record written so far
 * (sample times and the sample_id trailers of kernel records), 0 if none: a
 * record the caller makes itself at the end is timed after it, so perf does
 * not find it behind a round it already flushed.
 */
__u64 pdata_writer__newest_time(const struct pdata_writer *w);

/**
 * pdata_writer__unlink() - remove the file this writer created, for a run
 * that failed before recording anything. Closes the fd if still open.
 * Return: 0 or -errno from unlink().
 */
int pdata_writer__unlink(struct pdata_writer *w);

/** pdata_writer__delete() - free the writer (closing the fd without finishing the file); accepts NULL. */
void pdata_writer__delete(struct pdata_writer *w);

/** pdata_writer__stats() - counters so far; valid until pdata_writer__delete(). */
const struct pdata_writer_stats *pdata_writer__stats(const struct pdata_writer *w);


/**
 * pdata_writer__nr_attrs() - attrs added so far; synthesized records (id 0)
 * are attributed by perf to the first one.
 */
size_t pdata_writer__nr_attrs(const struct pdata_writer *w);

#endif
