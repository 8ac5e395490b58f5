/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_PDATA_H
#define AUXTRIG_PDATA_H

/*
 * format/ layer, perf.data as both sides share it: the file's constants and layouts
 * (no .c), used by the writer, the reader and both sides.
 */

/**
 * DOC: perf.data on-disk format
 *
 * Constants and layouts of the perf.data file (file mode, "PERFILE2") that
 * the kernel uapi does not have: they belong to the perf tool. Values are
 * those of perf 6.1 (tools/perf/util/header.h, tools/lib/perf/include/perf/
 * event.h, tools/perf/Documentation/perf.data-file-format.txt), the reader
 * our files must satisfy. Everything is host-endian.
 *
 * The sample layout contract: every attr auxtrig writes uses
 * %PDATA_SAMPLE_TYPE with sample_id_all = 1, so every kernel-type record
 * other than a sample ends with a &struct pdata_sample_id trailer
 * (%PDATA_SAMPLE_ID_SIZE bytes) and every sample begins with its id.
 */

#include <linux/perf_event.h>
#include <linux/types.h>
#include <stddef.h>

/** PDATA_MAGIC - "PERFILE2" read as a little/host-endian u64. */
#define PDATA_MAGIC		0x32454c4946524550ULL
/** PDATA_ATTR_SIZE - attr.size written in files: perf 6.1 rejects 136 (VER8). */
#define PDATA_ATTR_SIZE		PERF_ATTR_SIZE_VER7
/** PDATA_NAME_ALIGN - perf pads header strings to this (readers accept any). */
#define PDATA_NAME_ALIGN	64

/**
 * PDATA_SAMPLE_TYPE - the sample_type of every attr auxtrig writes.
 *
 * IDENTIFIER puts the id first in samples and last in trailers, the same
 * position for every attr, as perf 6.1 requires of multi-attr files. IP is
 * there because perf script checks the default fields of every event type in
 * the file: without it, a software attr (the sideband dummy) makes it refuse
 * the whole file ("Display of symbols requested but neither sample IP nor
 * sample address available"). IP is not part of the trailer.
 */
#define PDATA_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)

/**
 * struct pdata_sample_id - the sample_id trailer of non-sample kernel records
 * under %PDATA_SAMPLE_TYPE and sample_id_all = 1.
 * @pid: process id (PERF_SAMPLE_TID)
 * @tid: thread id
 * @time: perf clock ns (PERF_SAMPLE_TIME); 0 for synthesized records, which
 *        perf then delivers at once, before any timed record
 * @cpu: cpu (PERF_SAMPLE_CPU)
 * @res: reserved, 0
 * @id: event id (PERF_SAMPLE_IDENTIFIER, always the last u64); 0 for
 *      synthesized records = "the first attr"
 */
struct pdata_sample_id {
	__u32 pid, tid;
	__u64 time;
	__u32 cpu, res;
	__u64 id;
};
/** PDATA_SAMPLE_ID_SIZE - bytes of &struct pdata_sample_id (perf's id_hdr_size). */
#define PDATA_SAMPLE_ID_SIZE	32
_Static_assert(sizeof(struct pdata_sample_id) == PDATA_SAMPLE_ID_SIZE, "trailer is 32 bytes");

/**
 * struct pdata_sample_head - the fixed start of a PERF_RECORD_SAMPLE under
 * %PDATA_SAMPLE_TYPE; followed by u32 raw_size and raw_size bytes, the whole
 * record padded to 8.
 */
struct pdata_sample_head {
	struct perf_event_header header;
	__u64 id;
	__u64 ip;
	__u32 pid, tid;
	__u64 time;
	__u32 cpu, res;
	__u64 period;
};
_Static_assert(sizeof(struct pdata_sample_head) == 56, "sample head");

/** struct pdata_file_section - {offset, size} of a file section. */
struct pdata_file_section {
	__u64 offset;
	__u64 size;
};

/**
 * struct pdata_file_header - the 104-byte file header.
 * @magic: %PDATA_MAGIC
 * @size: sizeof(struct pdata_file_header)
 * @attr_size: bytes of one &struct pdata_file_attr (144)
 * @attrs: the attr section
 * @data: the record stream; the feature table follows at data.offset + data.size
 * @event_types: ignored by perf; auxtrig points it at a copy of the feature
 *               table of the bodies written before the data (auxtrig repair)
 * @adds_features: feature bitmap, bit N = feature N (PDATA_HEADER_*)
 */
struct pdata_file_header {
	__u64 magic;
	__u64 size;
	__u64 attr_size;
	struct pdata_file_section attrs;
	struct pdata_file_section data;
	struct pdata_file_section event_types;
	__u64 adds_features[4];
};
_Static_assert(sizeof(struct pdata_file_header) == 104, "perf_file_header is 104 bytes");
/** PDATA_HEADER_DATA_SIZE_OFFSET - file offset of data.size, patched in place per round. */
#define PDATA_HEADER_DATA_SIZE_OFFSET offsetof(struct pdata_file_header, data.size)

/** struct pdata_file_attr - one attr-section entry: attr + its id array section. */
struct pdata_file_attr {
	struct perf_event_attr attr;
	struct pdata_file_section ids;
};
_Static_assert(sizeof(struct pdata_file_attr) == 144, "attr_size must be 144 for perf 6.1");

/* perf-tool ("user") record types, [6.1] enum perf_user_event_type. */
enum pdata_record_type {
	PDATA_RECORD_HEADER_ATTR = 64,
	PDATA_RECORD_HEADER_EVENT_TYPE = 65,
	PDATA_RECORD_HEADER_TRACING_DATA = 66,
	PDATA_RECORD_HEADER_BUILD_ID = 67,
	PDATA_RECORD_FINISHED_ROUND = 68,
	PDATA_RECORD_ID_INDEX = 69,
	PDATA_RECORD_AUXTRACE_INFO = 70,
	PDATA_RECORD_AUXTRACE = 71,
	PDATA_RECORD_AUXTRACE_ERROR = 72,
	PDATA_RECORD_THREAD_MAP = 73,
	PDATA_RECORD_CPU_MAP = 74,
	PDATA_RECORD_STAT_CONFIG = 75,
	PDATA_RECORD_STAT = 76,
	PDATA_RECORD_STAT_ROUND = 77,
	PDATA_RECORD_EVENT_UPDATE = 78,
	PDATA_RECORD_TIME_CONV = 79,
	PDATA_RECORD_HEADER_FEATURE = 80,
	PDATA_RECORD_COMPRESSED = 81,
	PDATA_RECORD_FINISHED_INIT = 82,
	PDATA_RECORD_TYPE_MAX, /* counting bound, not a type */
};

/* Feature bits, [6.1] header.h enum { HEADER_... }. */
enum pdata_feature {
	PDATA_HEADER_TRACING_DATA = 1,
	PDATA_HEADER_BUILD_ID = 2,
	PDATA_HEADER_HOSTNAME = 3,
	PDATA_HEADER_OSRELEASE = 4,
	PDATA_HEADER_VERSION = 5,
	PDATA_HEADER_ARCH = 6,
	PDATA_HEADER_NRCPUS = 7,
	PDATA_HEADER_CPUDESC = 8,
	PDATA_HEADER_CPUID = 9,
	PDATA_HEADER_TOTAL_MEM = 10,
	PDATA_HEADER_CMDLINE = 11,
	PDATA_HEADER_EVENT_DESC = 12,
	PDATA_HEADER_CPU_TOPOLOGY = 13,
	PDATA_HEADER_NUMA_TOPOLOGY = 14,
	PDATA_HEADER_BRANCH_STACK = 15,
	PDATA_HEADER_PMU_MAPPINGS = 16,
	PDATA_HEADER_GROUP_DESC = 17,
	PDATA_HEADER_AUXTRACE = 18,
	PDATA_HEADER_STAT = 19,
	PDATA_HEADER_CACHE = 20,
	PDATA_HEADER_SAMPLE_TIME = 21,
	PDATA_HEADER_MEM_TOPOLOGY = 22,
	PDATA_HEADER_CLOCKID = 23,
	PDATA_HEADER_DIR_FORMAT = 24,
	PDATA_HEADER_BPF_PROG_INFO = 25,
	PDATA_HEADER_BPF_BTF = 26,
	PDATA_HEADER_COMPRESSED = 27,
	PDATA_HEADER_CPU_PMU_CAPS = 28,
	PDATA_HEADER_CLOCK_DATA = 29,
	PDATA_HEADER_HYBRID_TOPOLOGY = 30,
	PDATA_HEADER_PMU_CAPS = 31,
	PDATA_HEADER_LAST_FEATURE = 32,
	PDATA_HEADER_FEAT_BITS = 256,
};

/** struct pdata_record_auxtrace_info - PERF_RECORD_AUXTRACE_INFO (70), priv[] follows. */
struct pdata_record_auxtrace_info {
	struct perf_event_header header;
	__u32 type;		/* PDATA_AUXTRACE_* */
	__u32 reserved__;
	__u64 priv[];
};
_Static_assert(sizeof(struct pdata_record_auxtrace_info) == 16, "auxtrace_info head");

/* auxtrace_info.type, [6.1] util/auxtrace.h enum auxtrace_type. */
enum pdata_auxtrace_type {
	PDATA_AUXTRACE_UNKNOWN = 0,
	PDATA_AUXTRACE_INTEL_PT = 1,
	PDATA_AUXTRACE_INTEL_BTS = 2,
	PDATA_AUXTRACE_CS_ETM = 3,
	PDATA_AUXTRACE_ARM_SPE = 4,
};

/**
 * struct pdata_record_auxtrace - PERF_RECORD_AUXTRACE (71); header.size is
 * 48 and @size payload bytes (padded to 8) follow the record in the file.
 * @size: payload bytes following, padding included
 * @offset: position of the first payload byte in aux_head space
 * @reference: PMU-specific (Intel PT: TSC at read time)
 * @idx: mmap index
 * @tid: thread (per-thread mmaps) or target pid / -1
 * @cpu: cpu or (u32)-1 for per-thread
 */
struct pdata_record_auxtrace {
	struct perf_event_header header;
	__u64 size;
	__u64 offset;
	__u64 reference;
	__u32 idx;
	__u32 tid;
	__u32 cpu;
	__u32 reserved__;
};
_Static_assert(sizeof(struct pdata_record_auxtrace) == 48, "auxtrace record is 48 bytes");

/** struct pdata_auxtrace_index_entry - one entry of feature %PDATA_HEADER_AUXTRACE. */
struct pdata_auxtrace_index_entry {
	__u64 file_offset;	/* of the AUXTRACE record header */
	__u64 sz;		/* its header.size (48) */
};

/** struct pdata_record_time_conv - PERF_RECORD_TIME_CONV (79), extended form. */
struct pdata_record_time_conv {
	struct perf_event_header header;
	__u64 time_shift;
	__u64 time_mult;
	__u64 time_zero;
	__u64 time_cycles;
	__u64 time_mask;
	__u8 cap_user_time_zero;
	__u8 cap_user_time_short;
	__u8 reserved[6];
};
_Static_assert(sizeof(struct pdata_record_time_conv) == 56, "time_conv is 56 bytes");

/** struct pdata_id_index_entry - one entry of PERF_RECORD_ID_INDEX (69). */
struct pdata_id_index_entry {
	__u64 id;
	__u64 idx;
	__u64 cpu;
	__u64 tid;
};
_Static_assert(sizeof(struct pdata_id_index_entry) == 32, "id_index entry");

/** struct pdata_record_id_index - PERF_RECORD_ID_INDEX head; @nr entries follow. */
struct pdata_record_id_index {
	struct perf_event_header header;
	__u64 nr;
	struct pdata_id_index_entry entries[];
};
_Static_assert(sizeof(struct pdata_record_id_index) == 16, "id_index head");

/*
 * Kernel record payloads (include/uapi/linux/perf_event.h comments). The
 * variable-length name is padded with NULs to 8 and followed by the trailer.
 */

/** struct pdata_record_comm - PERF_RECORD_COMM fixed part; comm[] follows. */
struct pdata_record_comm {
	struct perf_event_header header;
	__u32 pid, tid;
};
_Static_assert(sizeof(struct pdata_record_comm) == 16, "comm head");

/** struct pdata_record_mmap - PERF_RECORD_MMAP fixed part; filename[] follows. */
struct pdata_record_mmap {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 start;
	__u64 len;
	__u64 pgoff;
};
_Static_assert(sizeof(struct pdata_record_mmap) == 40, "mmap head");

/** struct pdata_record_mmap2 - PERF_RECORD_MMAP2 fixed part (inode form); filename[] follows. */
struct pdata_record_mmap2 {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 start;
	__u64 len;
	__u64 pgoff;
	__u32 maj, min;
	__u64 ino;
	__u64 ino_generation;
	__u32 prot, flags;
};
_Static_assert(sizeof(struct pdata_record_mmap2) == 72, "mmap2 head");

/** struct pdata_record_fork - PERF_RECORD_FORK / PERF_RECORD_EXIT payload (trailer follows). */
struct pdata_record_fork {
	struct perf_event_header header;
	__u32 pid, ppid;
	__u32 tid, ptid;
	__u64 time;
};
_Static_assert(sizeof(struct pdata_record_fork) == 32, "fork/exit");

#endif
