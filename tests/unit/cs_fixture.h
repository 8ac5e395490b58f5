/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_TEST_CS_FIXTURE_H
#define AUXTRIG_TEST_CS_FIXTURE_H

/**
 * DOC: CoreSight perf.data files from the real Juno capture
 *
 * ../shared/data/coresight/juno_r1_1 is a real ETB capture of six ETMv4
 * sources (trace IDs 0x10..0x15, CPUs 0..5) with the memory image the code
 * ran from. cs_fixture__write() turns it into perf.data files the way perf
 * record would have written them on that machine: a CoreSight
 * AUXTRACE_INFO (header version 1, one ETMv4 block per CPU from the
 * capture's device_N.ini registers), the traced code as a kernel MMAP
 * record, then the trace as one or more AUXTRACE buffers, each published
 * by a PERF_RECORD_AUX.
 *
 * The trace can be cut into several buffers (at frame boundaries), placed
 * at any AUX offset, flagged RAW (unformatted, as TRBE writes it) with the
 * single-source stream of one trace ID (cs_fixture__deformat()), or
 * repeated (for benchmarks).
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#define CS_FIXTURE_PMU_TYPE	10
#define CS_FIXTURE_EVENT_ID	4242
#define CS_FIXTURE_NR_ETMS	6
#define CS_FIXTURE_DUMP_ADDR	0xffffffc000081000ULL
#define CS_FIXTURE_DUMP_LEN	0x50000

/**
 * struct cs_fixture_buf - one AUXTRACE buffer of cs_fixture_opts.bufs.
 * @data, @len: its bytes
 * @cpu: its CPU (AUXTRACE cpu and idx, PERF_RECORD_AUX cpu)
 * @aux_flags: its PERF_RECORD_AUX flags (PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW...)
 */
struct cs_fixture_buf {
	const void *data;
	size_t len;
	int cpu;
	__u64 aux_flags;
};

/** CS_FIXTURE_ETM_OPT_TS - the cs_etm attr config bit of the timestamp option (ETM_OPT_TS). */
#define CS_FIXTURE_ETM_OPT_TS	(1ULL << 28)
/** CS_FIXTURE_TRCCONFIGR_TS - TRCCONFIGR.TS: the ETM emits timestamps. */
#define CS_FIXTURE_TRCCONFIGR_TS	0x800

/**
 * struct cs_fixture_opts - what to write; zero means the default.
 * @first_cpu, @nr_cpus: the ETMs described (default: all six)
 * @image: the MMAP record's file name (default: the capture's kernel_dump.bin)
 * @image_start, @image_len, @image_pgoff: its mapping (default: the dump's address and length, pgoff 0)
 * @nr_bufs: buffers to cut the trace into (default 1)
 * @aux_base: AUX offset of the first buffer's first byte
 * @aux_flags: PERF_RECORD_AUX flags of every buffer
 * @trace, @trace_len: the trace bytes (default: the capture's cstrace.bin)
 * @repeat: write the buffers this many times (default 1), each repetition on
 *          the next AUX offsets
 * @nr_aux: PERF_RECORD_AUX records per buffer (default 1), cutting it at frame
 *          boundaries (perf 6.1 decodes each piece from a reset decoder)
 * @config: the cs_etm attr's config (ETM_OPT_TS, bit 28, makes perf 6.1 decode by timestamp)
 * @image_bid: if set, the image is mapped with an MMAP2 record carrying this
 *             20-byte build ID (as perf records modules with build IDs)
 * @etmv3: describe the CPUs as ETMv3/PTM instead (magic 0x3030..., 4 registers)
 * @first_traceidr: if set, the TRCTRACEIDR written for the first CPU
 * @hw_id_cpu, @hw_id: if @hw_id is set, a PERF_RECORD_AUX_OUTPUT_HW_ID record
 *                     of CPU @hw_id_cpu carrying it, before the trace
 * @cpu_of_buf: if set, the AUXTRACE cpu of each buffer is @cpu_of_buf[i]
 *              (else 0); one mmap index per distinct cpu
 * @bufs, @nr_given: if @nr_given, the buffers are these (each its own bytes,
 *                   CPU and AUX flags) instead of @trace cut in @nr_bufs
 * @configr_or: bits ORed into every ETM's TRCCONFIGR (0x800: timestamps)
 */
struct cs_fixture_opts {
	int first_cpu, nr_cpus;
	const char *image;
	__u64 image_start, image_len, image_pgoff;
	int nr_bufs;
	__u64 aux_base;
	__u64 aux_flags;
	const void *trace;
	size_t trace_len;
	int repeat;
	const int *cpu_of_buf;
	__u64 config;
	int nr_aux;
	const __u8 *image_bid;
	int etmv3;
	__u64 first_traceidr;
	int hw_id_cpu;
	__u64 hw_id;
	const struct cs_fixture_buf *bufs;
	int nr_given;
	__u32 configr_or;
};

struct csd_etmv4_regs;

/** cs_fixture__ini_reg() - register @name of the device_N.ini at @path ("TRCIDR0(0x078)=0x28000EA1"), or -1. */
long long cs_fixture__ini_reg(const char *path, const char *name);

/**
 * cs_fixture__juno_regs() - the ETMv4 registers (TRCCONFIGR, TRCIDR0-2, 8-13) of
 * the Juno device whose TRCTRACEIDR is @id, the rest of @regs zeroed.
 * Return: 0, or -ENOENT (no such device, or no shared data).
 */
int cs_fixture__juno_regs(unsigned int id, struct csd_etmv4_regs *regs);

/** cs_fixture__data_dir() - ../shared/data (from $AUXTRIG_TOP), or NULL if it is not there. */
const char *cs_fixture__data_dir(void);

/** cs_fixture__path() - @rel under the data directory, in one of two static buffers. */
const char *cs_fixture__path(const char *rel);

/**
 * cs_fixture__write() - write the perf.data file @path.
 * @trace_id: if not NULL, receives the trace ID of each described CPU (index: cpu)
 * Return: 0 or -errno.
 */
int cs_fixture__write(const char *path, const struct cs_fixture_opts *o, __u64 trace_id[CS_FIXTURE_NR_ETMS]);

/**
 * cs_fixture__deformat() - the bytes of trace ID @id in CoreSight
 * frame-formatted (16-byte, memory-aligned) @buf: the stream an
 * unformatted sink (TRBE) would have written for that source alone.
 * Return: a malloc()ed buffer (*@out_len bytes) or NULL.
 */
unsigned char *cs_fixture__deformat(const void *buf, size_t len, unsigned int id, size_t *out_len);

/**
 * cs_fixture__stamp() - the single-source ETMv4 stream @buf (the stream of
 * one trace ID, as cs_fixture__deformat() gives it) with TIMESTAMP packets
 * inserted: one after its first TRACE_INFO packet, then one before every
 * @every-th packet after it, carrying @ts0, @ts0 + @step, ... (each as
 * seven 7-bit groups: the whole value, up to 2^49).
 * @nr_ts: if not NULL, receives the number inserted
 * Return: a malloc()ed buffer (*@out_len bytes) or NULL.
 */
unsigned char *cs_fixture__stamp(const void *buf, size_t len, unsigned int every, __u64 ts0, __u64 step,
				 size_t *out_len, size_t *nr_ts);

/**
 * cs_fixture__format() - CoreSight frame-format @n single-source streams
 * (stream i of trace ID @ids[i]) into one buffer, as a shared sink (ETB, ETR)
 * writes them: @chunk bytes of each stream in turn, in 16-byte frames.
 * Return: a malloc()ed buffer (*@out_len bytes, a multiple of 16) or NULL.
 */
unsigned char *cs_fixture__format(const unsigned char *const *streams, const size_t *lens, const unsigned int *ids,
				  int n, size_t chunk, size_t *out_len);

/**
 * struct cs_fixture_timed - a file whose trace has timestamps
 * (cs_fixture__write_timed()): the capture's six streams through
 * cs_fixture__stamp() (every @every packets, stream i from @ts0 + @tsk * i
 * by @step + i), then either frame-formatted together (one queue, CPU 0)
 * or each as RAW buffers of its CPU; @nr_bufs buffers per queue, the whole
 * written @repeat times (0: once); @ts_option sets the cs_etm timestamp
 * option (every ETM's TRCCONFIGR has TS either way).
 */
struct cs_fixture_timed {
	unsigned int every;
	__u64 ts0, tsk, step;
	int nr_bufs, repeat;
	bool raw, ts_option;
};

/** cs_fixture__write_timed() - write it to @path. Return: 0 or -errno. */
int cs_fixture__write_timed(const char *path, const struct cs_fixture_timed *t);

/** cs_fixture__slurp() - the whole file, malloc()ed, or NULL. */
void *cs_fixture__slurp(const char *path, size_t *len);

#endif
