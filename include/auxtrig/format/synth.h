/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_SYNTH_H
#define AUXTRIG_SYNTH_H

/*
 * format/ layer: records synthesized for what runs before recording starts
 * (user/format/synth.c), written by record/recorder.c through pdata_writer.h.
 */

/**
 * DOC: synthesized sideband records
 *
 * Records describing what already runs when recording starts, written
 * through a &struct pdata_writer after pdata_writer__begin_data(), as perf
 * record does before the live stream: TIME_CONV, the kernel map, then for
 * each thread FORK, COMM and (leader only) MMAP2 of executable mappings.
 *
 * Kernel-type records carry the common &struct pdata_sample_id trailer
 * with time 0 and id 0: perf delivers time-0 records at once (before any
 * timed record) and attributes id 0 to the first attr. The trailer's
 * pid/tid are those of the record.
 */

#include <linux/perf_event.h>
#include <linux/types.h>
#include <stddef.h>
#include <sys/types.h>

struct pdata_writer;

/** SYNTH_KERNEL_MAP_NAME - perf's name for the kernel text map (with ref_reloc_sym "_text"). */
#define SYNTH_KERNEL_MAP_NAME "[kernel.kallsyms]_text"

/**
 * struct synth_map - one line of /proc/PID/maps.
 * @start: first address
 * @end: address after the last
 * @pgoff: file offset
 * @maj: device major
 * @min: device minor
 * @ino: inode
 * @prot: PROT_* from the permission letters
 * @flags: MAP_PRIVATE ('p') or MAP_SHARED ('s')
 * @path: file, "[vdso]"-like name, or "//anon" for an anonymous mapping (as perf)
 */
struct synth_map {
	__u64 start, end, pgoff;
	__u32 maj, min;
	__u64 ino;
	__u32 prot, flags;
	char path[4096];
};

/**
 * synth__parse_maps_line() - parse one /proc/PID/maps line into @m.
 * Return: 0, or -EINVAL if the line is not a maps line.
 */
int synth__parse_maps_line(const char *line, struct synth_map *m);

/**
 * synth__comm_record() - build a PERF_RECORD_COMM (+ trailer) in @buf.
 * Return: record size, or 0 if @size is too small.
 */
size_t synth__comm_record(void *buf, size_t size, __u32 pid, __u32 tid, const char *comm);

/**
 * synth__mmap2_record() - build a PERF_RECORD_MMAP2 (+ trailer) of @m in @buf,
 * misc PERF_RECORD_MISC_USER (| MMAP_DATA if not executable).
 * Return: record size, or 0 if @size is too small.
 */
size_t synth__mmap2_record(void *buf, size_t size, __u32 pid, __u32 tid, const struct synth_map *m);

/**
 * synth__fork_record() - build a PERF_RECORD_FORK (+ trailer) in @buf.
 * Return: record size, or 0 if @size is too small.
 */
size_t synth__fork_record(void *buf, size_t size, __u32 pid, __u32 ppid, __u32 tid, __u32 ptid);

/**
 * synth__threads() - FORK, COMM and MMAP2 records for process @pid and all its threads.
 *
 * Per thread (leader first): FORK (leader: parent = PPid; others: parent =
 * leader), COMM from /proc/PID/task/TID/comm; after the leader's COMM, one
 * MMAP2 per executable mapping of /proc/PID/maps (the ones perf record
 * synthesizes without -d). Threads that exit meanwhile are skipped.
 *
 * Return: 0, -ESRCH if @pid does not exist, or -errno (from the writer too).
 */
int synth__threads(struct pdata_writer *w, pid_t pid);

/**
 * synth__kernel_mmap() - the PERF_RECORD_MMAP perf uses to find the kernel:
 * pid -1, misc KERNEL, start = pgoff = address of _text, len = to the end of
 * the address space, name %SYNTH_KERNEL_MAP_NAME.
 * @kallsyms: path of a kallsyms file; NULL = /proc/kallsyms
 *
 * Return: 0, -EACCES if kallsyms shows 0 for _text (kptr_restrict; run as
 * root), -ENOENT if it has no _text, or -errno.
 */
int synth__kernel_mmap(struct pdata_writer *w, const char *kallsyms);

/**
 * synth__time_conv() - PERF_RECORD_TIME_CONV from a perf_event_mmap_page
 * (read under its seqlock), as perf record writes it.
 * Return: 0, -EOPNOTSUPP (nothing written) if the page does not offer
 * cap_user_time_zero, -EAGAIN (nothing written, a warning printed) if its
 * seqlock never held still for 200 ms, or the writer's error.
 */
int synth__time_conv(struct pdata_writer *w, const struct perf_event_mmap_page *pc);

#endif
