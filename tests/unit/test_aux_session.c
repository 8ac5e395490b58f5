// SPDX-License-Identifier: BSD-2-Clause
/*
 * aux_session: the --dry-run print against the golden groups, the whole
 * recording path through the kernel model read back by perf 6.1, and the
 * clear failure on a machine without the PMU.
 *
 * End to end: the injected kernel hands out one aux_model per CPU as the
 * AUX leader's fd (a memfd the session mmaps for real) and maps
 * ENABLE/DISABLE/ID/SET_OUTPUT onto it; the model's "hardware" writes a
 * recognizable stream; aux_session__drain()/__snapshot() write perf.data;
 * then (a) our own walk of the file checks every AUXTRACE's cpu, idx,
 * offset and size against what the model published and byte-compares its
 * payload with what the hardware stored, and (b) perf report -D must show
 * every AUX and AUXTRACE record with those values and nothing wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <cmocka.h>

#include "auxtrig/record/aux_session.h"
#include "auxtrig/record/sink.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "uapi/linux/perf_event_aux.h"
#include "aux_model.h"
#include "fake_kernel.h"
#include "perf_oracle.h"

#define ENTER_OPENAT_ID 782 /* tests/fixtures/tracefs/events/syscalls/sys_enter_openat/id */
#define EXIT_OPENAT_ID  781
#define MAX_CPUS 4 /* the models: CPUs, or threads (FAKE_KERNEL_MAX_CPUS) */

static const struct aux_session_trigger window_triggers[] = {
	{ "syscalls:sys_enter_openat", ENTER_OPENAT_ID, AUXTRIG_AUX_RESUME },
	{ "syscalls:sys_exit_openat", EXIT_OPENAT_ID, AUXTRIG_AUX_PAUSE },
};
static const struct aux_session_trigger freeze_triggers[] = {
	{ "syscalls:sys_exit_openat", EXIT_OPENAT_ID, AUXTRIG_AUX_PAUSE },
};

/* ---- the plan's part: the spec resolved against a fixture's PMUs --------- */

#define MAX_SETS 8
static struct {
	char *root;
	struct pmu_set *set;
} sets[MAX_SETS];

/* The PMUs under @root, read once per run (a session borrows them). */
static const struct pmu_set *fixture_pmus(const char *root)
{
	size_t i;

	for (i = 0; i < MAX_SETS && sets[i].root; i++)
		if (!strcmp(sets[i].root, root))
			return sets[i].set;
	assert_true(i < MAX_SETS);
	assert_int_equal(pmu__scan(root, &sets[i].set), 0);
	sets[i].root = strdup(root);
	return sets[i].set;
}

static int free_sets(void **state)
{
	(void)state;
	for (size_t i = 0; i < MAX_SETS; i++) {
		pmu_set__delete(sets[i].set);
		free(sets[i].root);
	}
	memset(sets, 0, sizeof(sets));
	return 0;
}

/* What record_plan__build() does with -e @spec, for @o's CPUs, mode and AUX size. */
static void resolve(struct aux_session_opts *o, struct aux_event *ev, const char *spec)
{
	struct aux_event_opts eo = {
		.per_thread = o->cpus[0] < 0,
		.snapshot = o->snapshot,
		.aux_mmap_size = o->aux_pages * sysconf(_SC_PAGESIZE),
	};

	o->pmus = fixture_pmus(o->sysfs_root);
	assert_int_equal(aux_event__parse(ev, o->pmus, spec, &eo), 0);
	o->event = ev;
}

/* ---- stderr capture, for the messages a user sees ------------------------ */

static int saved_stderr = -1;
static FILE *captured;

static void capture_start(void)
{
	fflush(stderr);
	captured = tmpfile();
	assert_non_null(captured);
	saved_stderr = dup(2);
	dup2(fileno(captured), 2);
}

static char *capture_end(void)
{
	long len;
	char *s;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	len = ftell(captured);
	s = calloc(1, len + 1);
	rewind(captured);
	assert_int_equal(fread(s, 1, len, captured), (size_t)len);
	fclose(captured);
	return s;
}

/* ---- (1) the dry-run print is the golden group ---------------------------- */

struct golden_case {
	const char *fixture;
	const char *file;
	const char *prefix;
	enum probe_pause pause;
};

static const struct golden_case golden_cases[] = {
	{ "sysfs-intel_pt", "intel_pt", "intel_pt//", PROBE_PAUSE_YES },
	{ "sysfs-cs_etm", "cs_etm", "cs_etm/@tmc_etr0/", PROBE_PAUSE_YES },
	/* SPE has no PERF_PMU_CAP_AUX_PAUSE: the fallback groups */
	{ "sysfs-arm_spe", "arm_spe", "arm_spe_0//", PROBE_PAUSE_NO_PMU },
};

static void test_aux_session_print_matches_golden(void **state)
{
	static const struct {
		const char *name, *mod;
		bool snapshot;
		const struct aux_session_trigger *t;
		size_t nr;
	} uses[] = {
		{ "syscall-window", "k", false, window_triggers, 2 },
		{ "error-freeze", "u", true, freeze_triggers, 1 },
		{ "snapshot", "", true, NULL, 0 },
	};
	static const int cpu0[] = { 0 };
	int failures = 0;

	(void)state;
	for (size_t p = 0; p < sizeof(golden_cases) / sizeof(golden_cases[0]); p++) {
		for (size_t u = 0; u < sizeof(uses) / sizeof(uses[0]); u++) {
			char spec[128], rel[128], *golden, *out = NULL;
			size_t len = 0;
			struct aux_session *s;
			struct aux_event ev;
			struct aux_session_opts o = {
				.sysfs_root = test_fixture_path(golden_cases[p].fixture),
				.cpus = cpu0, .nr_cpus = 1, .pid = -1, .snapshot = uses[u].snapshot,
				.data_pages = 16, .aux_pages = (4 << 20) / sysconf(_SC_PAGESIZE),
				.triggers = uses[u].t, .nr_triggers = uses[u].nr,
				.pause_support = golden_cases[p].pause,
			};
			FILE *fp;

			snprintf(spec, sizeof(spec), "%s%s", golden_cases[p].prefix, uses[u].mod);
			resolve(&o, &ev, spec);
			log__set_level(LOG_ERR); /* the SPE fallback warning is tested below */
			assert_int_equal(aux_session__new(&s, &o), 0);
			log__set_level(LOG_INFO);
			fp = open_memstream(&out, &len);
			aux_session__print(s, fp);
			fclose(fp);
			snprintf(rel, sizeof(rel), "golden/%s-%s.txt", uses[u].name, golden_cases[p].file);
			golden = test_read_file(test_fixture_path(rel), NULL);
			assert_non_null(golden);
			if (strcmp(golden, out)) {
				print_error("%s differs; got:\n%s\n", rel, out);
				failures++;
			}
			assert_int_equal(aux_session__gated(s), golden_cases[p].pause != PROBE_PAUSE_YES &&
								   uses[u].nr > 0);
			free(golden);
			free(out);
			aux_session__delete(s);
		}
	}
	assert_int_equal(failures, 0);
}

/* Two CPUs print two groups, each the golden one for its CPU. */
static void test_aux_session_print_every_cpu(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path("sysfs-intel_pt"), .cpus = cpus,
		.nr_cpus = 2, .pid = -1, .data_pages = 16, .aux_pages = (4 << 20) / sysconf(_SC_PAGESIZE),
		.triggers = window_triggers, .nr_triggers = 2, .pause_support = PROBE_PAUSE_YES,
	};
	char *golden, *out = NULL, *cpu1;
	struct aux_session *s;
	struct aux_event ev;
	size_t len = 0;
	FILE *fp;

	(void)state;
	resolve(&o, &ev, "intel_pt//k");
	assert_int_equal(aux_session__new(&s, &o), 0);
	golden = test_read_file(test_fixture_path("golden/syscall-window-intel_pt.txt"), NULL);
	assert_non_null(golden);
	fp = open_memstream(&out, &len);
	aux_session__print(s, fp);
	fclose(fp);
	assert_int_equal(len, 2 * strlen(golden));
	assert_memory_equal(out, golden, strlen(golden));
	cpu1 = out + strlen(golden);
	assert_non_null(strstr(cpu1, "group leader: intel_pt//k (window, cpu 1)\n"));
	free(golden);
	free(out);
	aux_session__delete(s);
}

/* ---- (3) clear errors ---------------------------------------------------- */

static void test_aux_session_errors_are_clear(void **state)
{
	static const int cpu0[] = { 0 };
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path("sysfs-intel_pt"), .cpus = cpu0, .nr_cpus = 1, .pid = -1,
		.data_pages = 16, .aux_pages = 1024, .pause_support = PROBE_PAUSE_YES,
	};
	struct aux_session *s = NULL;
	struct aux_event ev;
	char *msg;

	(void)state;
	if (access("/sys/bus/event_source/devices/intel_pt", F_OK) == 0)
		skip(); /* a machine with Intel PT: nothing to refuse */
	/* (no such PMU on this machine: refused by the plan, test_record_plan) */

	/* Described by a fixture, opened on the real kernel: refused before any perf_event_open. */
	resolve(&o, &ev, "intel_pt//u");
	assert_int_equal(aux_session__new(&s, &o), 0);
	capture_start();
	assert_int_equal(aux_session__open(s, NULL), -ENOENT);
	msg = capture_end();
	assert_non_null(strstr(msg, "cannot open intel_pt: no such PMU on this machine (try: auxtrig probe)"));
	assert_int_equal(aux_session__nr_fds(s), 0);
	free(msg);
	aux_session__delete(s);

	/* Buffer sizes as perf checks them. */
	o.aux_pages = 3;
	capture_start();
	assert_int_equal(aux_session__new(&s, &o), -EINVAL);
	msg = capture_end();
	assert_non_null(strstr(msg, "must be a power of 2"));
	free(msg);
	o.aux_pages = 8192 / sysconf(_SC_PAGESIZE) / 2 ?: 1;
	if (o.aux_pages * sysconf(_SC_PAGESIZE) < 8192) {
		capture_start();
		assert_int_equal(aux_session__new(&s, &o), -EINVAL);
		msg = capture_end();
		assert_non_null(strstr(msg, "Invalid mmap size for Intel Processor Trace: must be at least 8KiB"));
		free(msg);
	}
	o.aux_pages = 4;
	o.snapshot = true;
	o.snapshot_size = 1 << 20;
	capture_start();
	assert_int_equal(aux_session__new(&s, &o), -EINVAL);
	msg = capture_end();
	assert_non_null(strstr(msg, "must not be greater than AUX area tracing mmap size"));
	free(msg);

	/* Per thread needs a target. */
	{
		static const int per_thread[] = { -1 };
		struct aux_session_opts pt = o;

		pt.cpus = per_thread;
		pt.snapshot = false;
		pt.snapshot_size = 0;
		capture_start();
		assert_int_equal(aux_session__new(&s, &pt), -EINVAL);
		msg = capture_end();
		assert_non_null(strstr(msg, "needs a target process (-p)"));
		free(msg);
	}

	/* A kernel without aux_action: the fallback, said so. */
	o.snapshot = false;
	o.snapshot_size = 0;
	o.triggers = window_triggers;
	o.nr_triggers = 2;
	o.pause_support = PROBE_PAUSE_NO_KERNEL;
	capture_start();
	assert_int_equal(aux_session__new(&s, &o), 0);
	msg = capture_end();
	assert_non_null(strstr(msg, "this kernel has no aux_action"));
	assert_non_null(strstr(msg, "PERF_EVENT_IOC_ENABLE/DISABLE"));
	assert_true(aux_session__gated(s));
	free(msg);
	aux_session__delete(s);
}

/* ---- (2) end to end through the model ------------------------------------ */

/*
 * The kernel is tests/unit/fake_kernel.c, with the rules this test holds the
 * session to on top: the AUX event asks for the watermark the model plays,
 * and a trigger with an aux action sits in the AUX leader's group on its CPU.
 */
static int checked_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags,
			      void *ctx)
{
	struct fake_kernel *k = ctx;

	assert_int_equal(attr->size, 128);
	if (attr->type == k->aux_type) {
		for (size_t i = 0; i < k->nr_models; i++)
			if (k->cpus[i] == cpu)
				assert_int_equal(attr->aux_watermark, k->models[i].cfg.aux_watermark);
		assert_int_equal(group_fd, -1);
	} else if (*perf_attr_aux_action(attr)) {
		struct fake_kernel_event *l = fake_kernel__event(k, group_fd);

		assert_non_null(l);
		assert_true(l->model >= 0 && l->cpu == cpu);
	}
	return fake_kernel__sys(k).event_open(attr, pid, cpu, group_fd, flags, ctx);
}

/* What the hardware stored, per CPU, in aux_head space (the model starts at 0). */
struct stream {
	unsigned char *buf;
	size_t len;
	size_t cap;
};

static void stream_add(struct stream *st, const void *p, size_t n)
{
	if (!n)
		return; /* nothing stored (gate closed); buf may still be NULL */
	if (st->len + n > st->cap) {
		st->cap = (st->len + n) * 2;
		st->buf = realloc(st->buf, st->cap);
		assert_non_null(st->buf);
	}
	memcpy(st->buf + st->len, p, n);
	st->len += n;
}

/*
 * Intel PT-like: per 32 bytes PSB (02 82 x 8), PSBEND (02 23), TSC (19 + 7
 * bytes, the value naming the CPU and the chunk) and PADs, so perf's packet
 * dump decodes every buffer and a misplaced chunk shows in the compare.
 */
static void gen_pt(unsigned char *p, size_t len, int cpu, uint64_t *seq)
{
	for (size_t off = 0; off < len; off += 32) {
		unsigned char c[32] = {};
		uint64_t tsc = ((uint64_t)(cpu + 1) << 40) | (*seq)++;

		for (int i = 0; i < 16; i += 2) {
			c[i] = 0x02;
			c[i + 1] = 0x82;
		}
		c[16] = 0x02;
		c[17] = 0x23;
		c[18] = 0x19;
		memcpy(c + 19, &tsc, 7);
		memcpy(p + off, c, len - off < 32 ? len - off : 32);
	}
}

/*
 * CoreSight: 16-byte formatter frames (byte 0 an ID change to the CPU's
 * legacy trace ID 0x10 + 2 * cpu, bytes 1..14 data, byte 15 the low bits
 * of the even data bytes) carrying a valid ETMv4 stream: frames alternate
 * A-sync + TRACE_INFO, and TIMESTAMPs naming CPU and frame, so perf's decoder syncs wherever a snapshot starts and
 * a misplaced frame shows in the compare.
 */
static void gen_cs(unsigned char *p, size_t len, int cpu, uint64_t *seq)
{
	for (size_t off = 0; off < len; off += 16) {
		unsigned char f[16] = {}, d[14];
		uint64_t n = (*seq)++, ts = ((uint64_t)(cpu + 1) << 32) | n;
		size_t i = 0;

		if (n % 2 == 0) {
			memset(d, 0, 11);		/* I_ASYNC: 11 x 0x00, 0x80 */
			d[11] = 0x80;
			d[12] = 0x01;			/* I_TRACE_INFO, no sections */
			d[13] = 0x00;
		} else {
			uint64_t lo = ts;

			d[i++] = 0x02;			/* I_TIMESTAMP, 7 x 7 bits LEB128 */
			for (int b = 0; b < 7; b++, ts >>= 7)
				d[i++] = (ts & 0x7f) | (b < 6 ? 0x80 : 0);
			d[i++] = 0x02;			/* again, its low 35 bits: fills the frame */
			for (int b = 0; b < 5; b++, lo >>= 7)
				d[i++] = (lo & 0x7f) | (b < 4 ? 0x80 : 0);
		}
		f[0] = ((0x10 + 2 * cpu) << 1) | 1;
		for (i = 0; i < 14; i++) {
			size_t pos = i + 1;

			if (pos % 2) {
				f[pos] = d[i];
			} else {
				f[pos] = d[i] & ~1;
				f[15] |= (d[i] & 1) << (pos / 2);
			}
		}
		memcpy(p + off, f, len - off < 16 ? len - off : 16);
	}
}

/* the task the model's ITRACE_START names; -1 unless a test traces itself */
static pid_t model_pid = -1;
/* the session's target: -1 CPU-wide, else a task's events per CPU */
static pid_t session_pid = -1;

struct auxtrace_seen {
	__u64 size, offset;
	__u64 raw;		/* expected only: the unpadded size */
	__u32 idx, cpu;
	__s32 tid;
	const unsigned char *payload;
};

struct e2e {
	struct fake_kernel k;
	struct aux_session *s;
	struct pdata_writer *w;
	struct record_sink sink;	/* over w: the rounds are its */
	struct stream st[MAX_CPUS];
	uint64_t seq[MAX_CPUS];
	struct auxtrace_seen expect[64];	/* what the model says each AUXTRACE must be */
	size_t nr_expect;
	bool pt;
	bool per_thread;	/* the models are threads' (fake_kernel__init_threads()) */
	char *dir;
	char path[4096];
};

/* BPF programs the session attached: the member's fd, the program, the cookie. */
static struct {
	int fd, prog;
	__u64 cookie;
} attached[16];
static size_t nr_attached;

static int fake_attach_bpf(int fd, int prog_fd, __u64 cookie, void *ctx)
{
	(void)ctx;
	assert_true(nr_attached < 16);
	attached[nr_attached].fd = fd;
	attached[nr_attached].prog = prog_fd;
	attached[nr_attached++].cookie = cookie;
	return open("/dev/null", O_RDONLY | O_CLOEXEC); /* the "link" */
}

static void e2e_init_pause(struct e2e *t, const char *fixture, const char *spec, bool snapshot, const int *cpus,
			   size_t nr_cpus, const struct aux_session_trigger *trig, size_t nr_trig,
			   enum probe_pause pause)
{
	struct perf_sys ops;
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path(fixture), .cpus = cpus, .nr_cpus = nr_cpus,
		.pid = session_pid, .snapshot = snapshot, .data_pages = 16, .aux_pages = 4,
		.triggers = trig, .nr_triggers = nr_trig, .pause_support = pause,
	};
	size_t page = sysconf(_SC_PAGESIZE);
	const struct pmu_set *set;
	struct aux_event ev;

	memset(t, 0, sizeof(*t));
	t->pt = strstr(spec, "intel_pt") != NULL;
	resolve(&o, &ev, spec);
	set = o.pmus;
	{
		struct aux_model_config mc = {
			.pmu = t->pt ? AUX_MODEL_INTEL_PT : AUX_MODEL_CS_ETM, .overwrite = snapshot,
			.data_pages = 16, .aux_pages = 4,
			/* perf's Intel PT full-trace watermark: a quarter of the buffer */
			.aux_watermark = t->pt && !snapshot ? 4 * page / 4 : 0,
			.pid = (__u32)model_pid, .tid = (__u32)model_pid,
		};

		assert_int_equal(fake_kernel__init(&t->k, pmu_set__find(set, t->pt ? "intel_pt" : "cs_etm")->type, &mc,
						   cpus, nr_cpus), 0);
	}
	ops = fake_kernel__sys(&t->k);
	ops.event_open = checked_event_open;
	ops.attach_bpf = fake_attach_bpf;
	log__set_level(LOG_ERR); /* the fallback warning; tested in test_aux_session_errors_are_clear */
	assert_int_equal(aux_session__new(&t->s, &o), 0);
	log__set_level(LOG_INFO);
	assert_int_equal(aux_session__open(t->s, &ops), 0);
	for (size_t i = 0; i < nr_cpus; i++)
		assert_int_equal(aux_model__check_aux_mmap(&t->k.models[i]), 0);
	assert_int_equal(aux_session__nr_fds(t->s), nr_cpus);

	t->dir = test_tmpdir__new();
	assert_non_null(t->dir);
	snprintf(t->path, sizeof(t->path), "%s/perf.data", t->dir);
	t->w = pdata_writer__open(t->path, false);
	record_sink__init(&t->sink, t->w, NULL, false);
	assert_non_null(t->w);
	assert_int_equal(aux_session__add_attrs(t->s, t->w), 0);
	assert_int_equal(pdata_writer__begin_data(t->w), 0);
	assert_int_equal(aux_session__write_info(t->s, t->w), 0);
	assert_int_equal(aux_session__start(t->s), 0);
	/* gated: the recorder enables on the first trigger */
	for (size_t i = 0; i < nr_cpus; i++)
		assert_int_equal(aux_model__enabled(&t->k.models[i]), !aux_session__gated(t->s));
}

static void e2e_init(struct e2e *t, const char *fixture, const char *spec, bool snapshot, const int *cpus,
		     size_t nr_cpus, const struct aux_session_trigger *trig, size_t nr_trig)
{
	e2e_init_pause(t, fixture, spec, snapshot, cpus, nr_cpus, trig, nr_trig, PROBE_PAUSE_YES);
}

/* The hardware of CPU index @i produces @len bytes; what it stored joins the stream. */
static size_t hw(struct e2e *t, size_t i, size_t len)
{
	unsigned char *p = malloc(len);
	size_t stored;

	assert_non_null(p);
	(t->pt ? gen_pt : gen_cs)(p, len, t->k.cpus[i], &t->seq[i]);
	stored = aux_model__hw_write(&t->k.models[i], p, len);
	fake_kernel__clock_sync(&t->k);
	stream_add(&t->st[i], p, stored);
	free(p);
	return stored;
}

/* The driver ends CPU index @i's handle (a sched-out). */
static void end(struct e2e *t, size_t i)
{
	aux_model__output_end(&t->k.models[i], 0);
	fake_kernel__clock_sync(&t->k);
}

static void expect(struct e2e *t, size_t i, __u64 offset, __u64 size)
{
	struct auxtrace_seen *e = &t->expect[t->nr_expect++];

	assert_true(t->nr_expect <= 64);
	e->offset = offset;
	e->size = (size + 7) & ~7ULL;
	e->raw = size;
	e->idx = i;
	e->cpu = t->per_thread ? (__u32)-1 : (__u32)t->k.cpus[i];
	e->tid = t->per_thread ? t->k.cpus[i] : -1;
}

/* Full trace: each drain hands out [previous head, head) of every CPU that moved. */
static void drain_expect(struct e2e *t, uint64_t *prev)
{
	for (size_t i = 0; i < t->k.nr_models; i++) {
		uint64_t head = t->k.models[i].aux_head;

		if (head != prev[i])
			expect(t, i, prev[i], head - prev[i]);
		prev[i] = head;
	}
	assert_true(aux_session__drain(t->s, &t->sink) > 0);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/*
 * Walk the file's data section: every AUXTRACE in order, payload pointers
 * into @file. Returns how many.
 */
static size_t read_auxtrace(const unsigned char *file, size_t len, struct auxtrace_seen *out, size_t max)
{
	const struct pdata_file_header *fh = (const void *)file;
	size_t pos = fh->data.offset, end = fh->data.offset + fh->data.size, n = 0;

	assert_true(end <= len);
	while (pos < end) {
		const struct perf_event_header *h = (const void *)(file + pos);

		assert_true(h->size >= 8);
		if (h->type == PDATA_RECORD_AUXTRACE) {
			const struct pdata_record_auxtrace *a = (const void *)h;

			assert_true(n < max);
			out[n].size = a->size;
			out[n].offset = a->offset;
			out[n].idx = a->idx;
			out[n].cpu = a->cpu;
			out[n].tid = (__s32)a->tid;
			out[n].payload = file + pos + h->size;
			n++;
			pos += a->size;
		}
		pos += h->size;
	}
	return n;
}

/*
 * Full trace: the AUXTRACE payloads placed at their offsets cover exactly
 * the stored stream, once, byte for byte (padding is zero).
 * Snapshot: checked by the caller.
 */
static void check_cover(struct e2e *t, const struct auxtrace_seen *seen, size_t n)
{
	assert_int_equal(n, t->nr_expect);
	for (size_t i = 0; i < t->k.nr_models; i++) {
		struct stream *st = &t->st[i];
		unsigned char *covered = calloc(st->len + 1, 1);

		for (size_t j = 0; j < n; j++) {
			if (seen[j].idx != i)
				continue;
			for (uint64_t b = 0; b < seen[j].size; b++) {
				uint64_t pos = seen[j].offset + b;

				/* padding: zero, and the next buffer starts at the unpadded end */
				if (b >= t->expect[j].raw) {
					assert_int_equal(seen[j].payload[b], 0);
					continue;
				}
				assert_false(covered[pos]);
				covered[pos] = 1;
				if (seen[j].payload[b] != st->buf[pos])
					fail_msg("cpu %d: byte %llu of the stream differs in the file", t->k.cpus[i],
						 (unsigned long long)pos);
			}
		}
		for (size_t pos = 0; pos < st->len; pos++)
			if (!covered[pos])
				fail_msg("cpu %d: byte %zu of the stream is in no AUXTRACE", t->k.cpus[i], pos);
		free(covered);
	}
}

/* perf report -D: every AUXTRACE and AUX record, nothing else said but @allowed. */
static void check_perf(struct e2e *t, const struct auxtrace_seen *seen, size_t n, const char *allowed)
{
	const char *args[] = { "report", "-D", "-i", t->path, NULL };
	__u64 aux_records = 0;
	const char *bad;
	char *out, line[256];

	if (!perf_oracle__path()) {
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			fail_msg("perf is not installed, and CI=true requires the perf oracle");
		return;
	}
	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);
	for (size_t i = 0; i < t->k.nr_models; i++)
		aux_records += t->k.models[i].stats.aux_records;
	if (count(out, "PERF_RECORD_AUX offset:") != aux_records)
		fail_msg("perf shows %zu PERF_RECORD_AUX, the model emitted %llu:\n%s", count(out, "PERF_RECORD_AUX offset:"),
			 (unsigned long long)aux_records, out);
	assert_int_equal(count(out, "PERF_RECORD_AUXTRACE size:"), n);
	for (size_t j = 0; j < n; j++) {
		snprintf(line, sizeof(line), "PERF_RECORD_AUXTRACE size: %#llx  offset: %#llx  ref: ",
			 (unsigned long long)seen[j].size, (unsigned long long)seen[j].offset);
		if (!strstr(out, line))
			fail_msg("perf does not show '%s':\n%s", line, out);
		snprintf(line, sizeof(line), "  idx: %u  tid: %d  cpu: %d\n", seen[j].idx, seen[j].tid, seen[j].cpu);
		if (!strstr(out, line))
			fail_msg("perf does not show '%s':\n%s", line, out);
	}
	if (allowed) {
		/* perf's stderr lands in the middle of a stdout line: cut the message out whole */
		char *hit = strstr(out, allowed);

		if (!hit)
			fail_msg("perf does not say '%s':\n%s", allowed, out);
		memmove(hit, hit + strlen(allowed), strlen(hit + strlen(allowed)) + 1);
	}
	/* perf's decoder saw the hardware's packets ... */
	if (!strstr(out, t->pt ? "PSBEND" : "I_TIMESTAMP : Timestamp.; Updated val = 0x200000001"))
		fail_msg("perf's decoder shows none of the packets the hardware wrote:\n%s", out);
	/* ... and they decode: only whole chunks were written, bar the truncation */
	if (strstr(out, "Bad packet!"))
		fail_msg("perf's decoder found a bad packet:\n%s", out);
	/* OpenCSD's packet printer: a valid ETMv4 stream has no bad sequences */
	if (strstr(out, "I_BAD_SEQUENCE") || strstr(out, "I_RESERVED") || strstr(out, "I_INCOMPLETE_EOT"))
		fail_msg("perf's CoreSight decoder found bad packets:\n%s", out);
	if (strstr(out, "Couldn't find auxtrace buffer"))
		fail_msg("perf could not match a PERF_RECORD_AUX:\n%s", out);
	for (const char *p = out; (bad = perf_oracle__problem(p)); p = strchr(bad, '\n') ? strchr(bad, '\n') + 1 : "") {
		if (allowed && !strncmp(bad, allowed, strlen(allowed)))
			continue;
		fail_msg("perf says: %.*s\n%s", (int)(strchrnul(bad, '\n') - bad), bad, out);
	}
	free(out);
}

static void e2e_exit(struct e2e *t)
{
	aux_session__delete(t->s);
	pdata_writer__delete(t->w);
	for (size_t i = 0; i < t->k.nr_models; i++)
		free(t->st[i].buf);
	fake_kernel__exit(&t->k);
	assert_true(fake_kernel__all_closed(&t->k)); /* the session closed every fd it opened */
	test_tmpdir__delete(t->dir);
}

static void test_aux_session_intel_pt_full_trace_through_model(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct auxtrace_seen seen[64];
	struct aux_session_stats stats;
	struct e2e *t = calloc(1, sizeof(*t));
	uint64_t prev[MAX_CPUS] = {};
	unsigned char *file;
	size_t len, n;
	char allowed[128];

	(void)state;
	e2e_init(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 2, window_triggers, 2);
	/* the tracking event went into the leader's ring, the triggers into its group */
	for (size_t i = 0; i < t->k.nr_ev; i++)
		if (t->k.ev[i].model < 0 && t->k.ev[i].group_fd < 0)
			assert_true(fake_kernel__event(&t->k, t->k.ev[i].output) && fake_kernel__event(&t->k, t->k.ev[i].output)->model >= 0);

	/* 1: a sched-out on both CPUs */
	assert_int_equal(hw(t, 0, 3008), 3008);
	assert_int_equal(hw(t, 1, 2016), 2016);
	end(t, 0);
	end(t, 1);
	drain_expect(t, prev);

	/* 2: CPU 0 produces more than its 16 KiB buffer holds: TRUNCATED, the kernel disables it */
	assert_true(hw(t, 0, 20000) < 20000);
	assert_false(aux_model__enabled(&t->k.models[0]));
	assert_int_equal(hw(t, 1, 4992), 4992);
	end(t, 1);
	drain_expect(t, prev);
	/* the session read, released the space and re-enabled the event */
	assert_true(aux_model__enabled(&t->k.models[0]));
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.truncated, 1);
	assert_int_equal(stats.reenables, 1);

	/* 3: tracing goes on after the re-enable, and wraps the buffer */
	assert_int_equal(hw(t, 0, 4000), 4000);
	end(t, 0);
	drain_expect(t, prev);

	/* stop: the disable publishes the rest */
	assert_int_equal(hw(t, 1, 800), 800);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	for (size_t i = 0; i < 2; i++) {
		if (t->k.models[i].aux_head != prev[i])
			expect(t, i, prev[i], t->k.models[i].aux_head - prev[i]);
		prev[i] = t->k.models[i].aux_head;
		assert_false(aux_model__enabled(&t->k.models[i]));
	}
	assert_int_equal(pdata_writer__close(t->w), 0);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.auxtrace, t->nr_expect);
	assert_int_equal(stats.itrace_starts, 2);
	assert_int_equal(stats.aux_records, t->k.models[0].stats.aux_records + t->k.models[1].stats.aux_records);

	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	n = read_auxtrace(file, len, seen, 64);
	assert_int_equal(n, t->nr_expect);
	for (size_t j = 0; j < n; j++) {
		assert_int_equal(seen[j].offset, t->expect[j].offset);
		assert_int_equal(seen[j].size, t->expect[j].size);
		assert_int_equal(seen[j].idx, t->expect[j].idx);
		assert_int_equal(seen[j].cpu, t->expect[j].cpu);
		assert_int_equal(seen[j].tid, -1);
	}
	check_cover(t, seen, n);
	/* perf counts the TRUNCATED record: exactly the one loss the model made */
	snprintf(allowed, sizeof(allowed), "Warning:\nAUX data lost 1 times out of %llu!\n",
		 (unsigned long long)stats.aux_records);
	check_perf(t, seen, n, allowed);
	free(file);
	e2e_exit(t);
	free(t);
}

/* The first PERF_RECORD_AUXTRACE_INFO's priv[@i] in the file at @path. */
static __u64 auxtrace_info_priv(const char *path, size_t i)
{
	unsigned char *file;
	const struct pdata_file_header *fh;
	size_t len, pos;
	__u64 v = ~0ULL;

	file = (unsigned char *)test_read_file(path, &len);
	assert_non_null(file);
	fh = (const void *)file;
	for (pos = fh->data.offset; pos < fh->data.offset + fh->data.size;) {
		const struct perf_event_header *h = (const void *)(file + pos);

		assert_true(h->size >= 8);
		if (h->type == PDATA_RECORD_AUXTRACE_INFO) {
			assert_true(h->size >= 16 + 8 * (i + 1));
			memcpy(&v, file + pos + 16 + 8 * i, 8);
			break;
		}
		pos += h->size;
	}
	free(file);
	return v;
}

/*
 * Intel PT's AUXTRACE_INFO says which context switch records the tracking
 * event makes, and perf 6.1 decodes by it: a CPU-wide session (pid -1)
 * records PERF_RECORD_SWITCH_CPU_WIDE (HAVE_SCHED_SWITCH 3), a task's events
 * per CPU their own PERF_RECORD_SWITCH (2, as perf record -p). Said 3 there,
 * perf stops at the first switch-out: "Expecting CPU-wide context switch
 * event" (issue #10, 4a). Through the model, with the switches the kernel
 * writes for each.
 */
static void test_aux_session_switch_records_match_the_info(void **state)
{
	static const int cpus[] = { 0 };
	const char *args[] = { "script", "-i", NULL, "--itrace=e", NULL };
	pid_t self = getpid();

	(void)state;
	perf_oracle__need();
	for (int per_task = 0; per_task < 2; per_task++) {
		struct e2e *t = calloc(1, sizeof(*t));
		__u64 tracking_id = 0;
		const char *bad;
		char *out;
		int rc;

		model_pid = self;
		session_pid = per_task ? self : -1;
		e2e_init(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 1, NULL, 0);
		model_pid = session_pid = -1;
		for (size_t i = 0; i < t->k.nr_ev; i++)
			if (t->k.ev[i].fd >= 0 && t->k.ev[i].type == PERF_TYPE_SOFTWARE &&
			    t->k.ev[i].config == PERF_COUNT_SW_DUMMY)
				tracking_id = t->k.ev[i].id;
		assert_true(tracking_id != 0);
		assert_int_equal(synth__threads(t->w, self), 0);
		assert_int_equal(hw(t, 0, 256), 256);
		/* the task leaves the CPU (to the idle task) and comes back */
		aux_model__emit_switch(&t->k.models[0], tracking_id, true, !per_task, 0, 0);
		aux_model__emit_switch(&t->k.models[0], tracking_id, false, !per_task, 0, 0);
		end(t, 0);
		assert_true(aux_session__drain(t->s, &t->sink) > 0);
		assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
		assert_int_equal(pdata_writer__close(t->w), 0);

		assert_int_equal(auxtrace_info_priv(t->path, 7 /* INTEL_PT_HAVE_SCHED_SWITCH */), per_task ? 2 : 3);
		assert_int_equal(auxtrace_info_priv(t->path, 9 /* INTEL_PT_PER_CPU_MMAPS */), 1);
		args[2] = t->path;
		rc = perf_oracle__run(NULL, args, &out);
		if (rc || (bad = perf_oracle__problem(out)) || strstr(out, "Expecting"))
			fail_msg("%s session: perf script --itrace=e (exit %d) says:\n%s", per_task ? "per-task" : "CPU-wide",
				 rc, out);
		free(out);
		e2e_exit(t);
		free(t);
	}
}

/*
 * Snapshot mode, CoreSight: the ETR's head is monotonic, so each snapshot
 * is [previous head, head) clamped to the buffer: the first holds all of
 * what CPU 0 and 1 traced, the second of CPU 0 only the newest 16 KiB of a
 * 20000-byte burst that wrapped the buffer, the third lies beyond the
 * first buffer's worth of aux_head space (offsets must not be masked).
 */
static void test_aux_session_cs_etm_snapshots_through_model(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct auxtrace_seen seen[64];
	struct aux_session_stats stats;
	struct e2e *t = calloc(1, sizeof(*t));
	uint64_t prev[MAX_CPUS] = {}, size;
	size_t len, n, aux = 4 * sysconf(_SC_PAGESIZE);
	unsigned char *file;

	(void)state;
	e2e_init(t, "sysfs-cs_etm", "cs_etm/@tmc_etr0/u", true, cpus, 2, freeze_triggers, 1);
	/* full trace only: drain reads no AUX data in snapshot mode */
	assert_int_equal(aux_session__snapshot(t->s, &t->sink) >= 0, 1);
	for (size_t i = 0; i < 2; i++)
		prev[i] = t->k.models[i].aux_head;
	assert_int_equal(prev[0], 0);

	assert_int_equal(hw(t, 0, 3008), 3008);
	assert_int_equal(hw(t, 1, 1504), 1504);
	assert_int_equal(aux_session__drain(t->s, &t->sink) >= 0, 1);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 2);
	expect(t, 0, 0, 3008);
	expect(t, 1, 0, 1504);
	for (size_t i = 0; i < 2; i++) {
		assert_true(aux_model__enabled(&t->k.models[i])); /* enabled again after the snapshot */
		prev[i] = t->k.models[i].aux_head;
	}

	assert_int_equal(hw(t, 0, 20000), 20000);
	assert_int_equal(hw(t, 1, 4000), 4000);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 2);
	size = 20000 < aux ? 20000 : aux;
	expect(t, 0, prev[0] + 20000 - size, size);
	expect(t, 1, prev[1], 4000);
	for (size_t i = 0; i < 2; i++)
		prev[i] = t->k.models[i].aux_head;

	/* a third, past the first buffer's worth of aux_head space; CPU 1 has nothing new */
	assert_int_equal(hw(t, 0, 16000), 16000);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 1);
	expect(t, 0, prev[0], 16000);
	assert_true(prev[0] > aux);

	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.snapshots, 4);
	assert_int_equal(stats.auxtrace, 5);
	assert_int_equal(stats.truncated, 0);

	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	n = read_auxtrace(file, len, seen, 64);
	assert_int_equal(n, t->nr_expect);
	for (size_t j = 0; j < n; j++) {
		const struct stream *st = &t->st[seen[j].idx];

		assert_int_equal(seen[j].offset, t->expect[j].offset);
		assert_int_equal(seen[j].size, t->expect[j].size);
		assert_int_equal(seen[j].idx, t->expect[j].idx);
		assert_int_equal(seen[j].cpu, t->expect[j].cpu);
		/* the model's head is monotonic from 0: the stream index is the offset */
		assert_memory_equal(seen[j].payload, st->buf + seen[j].offset, t->expect[j].raw);
	}
	check_perf(t, seen, n, NULL);
	free(file);
	e2e_exit(t);
	free(t);
}

/*
 * The fallback: a kernel without aux_action. Triggers are not in the
 * leader's group, the leader stays off until the recorder opens the gate,
 * and a drain while the gate is closed must not switch the trace back on.
 */
/*
 * The gate's window edges, per thread: the AUX events go on with the first
 * thread's open window and off when the last one closes, whatever the
 * interleaving; an edge for a thread in the wrong state (its partner was
 * lost) is counted and changes nothing; a window that closed before the
 * trace went on is counted late.
 */
static void test_aux_session_edges_gate_by_thread(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct aux_session_gate_stats gs;
	struct e2e *t = calloc(1, sizeof(*t));
	__u64 far = 1ULL << 62;	/* stamps after anything the clock says now: never late */

	(void)state;
	e2e_init_pause(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 2, window_triggers, 2, PROBE_PAUSE_NO_PMU);
	assert_true(aux_session__gated(t->s));
	assert_int_equal(aux_session__edge(t->s, true, 100, far), 0);	/* thread 100 opens: on */
	assert_true(aux_model__enabled(&t->k.models[0]) && aux_model__enabled(&t->k.models[1]));
	assert_int_equal(t->k.model_enables, 2);
	assert_int_equal(aux_session__edge(t->s, true, 200, far), 0);	/* 200 too: already on */
	assert_int_equal(aux_session__edge(t->s, true, 100, far), 0);	/* 100 again: its close was lost */
	assert_int_equal(aux_session__edge(t->s, false, 100, far), 0);	/* 200 still open: stays on */
	assert_int_equal(t->k.model_enables, 2);
	assert_int_equal(t->k.model_disables, 0);
	assert_int_equal(aux_session__edge(t->s, false, 300, far), 0);	/* never opened */
	assert_int_equal(aux_session__edge(t->s, false, 200, far), 0);	/* the last: off */
	assert_false(aux_model__enabled(&t->k.models[0]) || aux_model__enabled(&t->k.models[1]));
	assert_int_equal(t->k.model_disables, 2);
	/* a window that closed (stamp 1 ns) long before the trace went on: late */
	assert_int_equal(aux_session__edge(t->s, true, 100, 0), 0);
	assert_int_equal(aux_session__edge(t->s, false, 100, 1), 0);
	aux_session__gate_stats(t->s, &gs);
	assert_int_equal(gs.opens, 4);
	assert_int_equal(gs.closes, 4);
	assert_int_equal(gs.enables, 2);
	assert_int_equal(gs.disables, 2);
	assert_int_equal(gs.unmatched, 2);
	assert_int_equal(gs.late, 1);
	assert_int_equal(gs.lat_n, 4);
	assert_true(gs.lat_min <= gs.lat_median && gs.lat_median <= gs.lat_p99 && gs.lat_p99 <= gs.lat_max);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	e2e_exit(t);
	free(t);
}

/* Snapshot mode gated from userspace: a snapshot with no window open leaves the trace off. */
static void test_aux_session_gated_snapshot_keeps_gate_closed(void **state)
{
	static const int cpus[] = { 0 };
	struct e2e *t = calloc(1, sizeof(*t));

	(void)state;
	e2e_init_pause(t, "sysfs-cs_etm", "cs_etm/@tmc_etr0/u", true, cpus, 1, window_triggers, 2, PROBE_PAUSE_NO_PMU);
	assert_true(aux_session__gated(t->s));
	assert_int_equal(aux_session__edge(t->s, true, getpid(), 1ULL << 62), 0);
	assert_int_equal(hw(t, 0, 1600), 1600);
	assert_int_equal(aux_session__edge(t->s, false, getpid(), 1ULL << 62), 0);
	assert_false(aux_model__enabled(&t->k.models[0]));
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 1);
	assert_false(aux_model__enabled(&t->k.models[0]));	/* not switched on by the snapshot */
	assert_int_equal(aux_session__edge(t->s, true, getpid(), 1ULL << 62), 0);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 0);	/* nothing new, but... */
	assert_true(aux_model__enabled(&t->k.models[0]));	/* ...an open window keeps it on */
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	e2e_exit(t);
	free(t);
}

/*
 * Snapshot mode with in-kernel pause/resume: a snapshot must not disable
 * the leader (its members would be scheduled out with it and every window
 * edge meanwhile lost). It flushes the heads with PERF_EVENT_IOC_PERIOD
 * instead, the trace running on; after the copy a second flush shows how
 * far the hardware wrote meanwhile, and what it wrote over at the range's
 * old end is left out. CoreSight: a monotonic head, the stream index is
 * the offset.
 */
static void test_aux_session_snapshot_keeps_kernel_windows_running(void **state)
{
	static const int cpus[] = { 0 };
	struct auxtrace_seen seen[8];
	struct aux_session_stats stats;
	struct e2e *t = calloc(1, sizeof(*t));
	size_t len, n, aux = 4 * sysconf(_SC_PAGESIZE);
	unsigned char *file, more[700];
	uint64_t head;

	(void)state;
	e2e_init(t, "sysfs-cs_etm", "cs_etm/@tmc_etr0/u", true, cpus, 1, window_triggers, 2);
	assert_false(aux_session__gated(t->s));
	assert_int_equal(hw(t, 0, 3000), 3000);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 1);
	expect(t, 0, 0, 3000);
	assert_int_equal(t->k.model_disables, 0);	/* never stopped... */
	assert_int_equal(t->k.model_flushes, 2);	/* ...flushed before and after the copy */
	assert_true(aux_model__enabled(&t->k.models[0]));

	/* the hardware writes 700 bytes after each flush: room enough behind a 2000-byte range */
	t->k.flush_write = sizeof(more);
	t->k.flush_byte = 0xab;
	memset(more, 0xab, sizeof(more));
	assert_int_equal(hw(t, 0, 2000), 2000);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 1);
	expect(t, 0, 3000, 2000);
	stream_add(&t->st[0], more, sizeof(more));
	stream_add(&t->st[0], more, sizeof(more));

	/* a burst that fills the buffer: the first 700 bytes written after the flush are over its old end */
	assert_int_equal(hw(t, 0, 20000), 20000);
	head = t->st[0].len; /* what the first flush publishes: everything written so far */
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 1);
	expect(t, 0, head - aux + sizeof(more), aux - sizeof(more));
	stream_add(&t->st[0], more, sizeof(more));
	stream_add(&t->st[0], more, sizeof(more));
	assert_int_equal(t->k.model_disables, 0);
	assert_int_equal(t->k.model_flushes, 6);
	t->k.flush_write = 0;

	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.snapshots, 3);
	assert_int_equal(stats.snapshot_overwritten, sizeof(more));
	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	n = read_auxtrace(file, len, seen, 8);
	assert_int_equal(n, t->nr_expect);
	for (size_t j = 0; j < n; j++) {
		assert_int_equal(seen[j].offset, t->expect[j].offset);
		assert_int_equal(seen[j].size, t->expect[j].size);
		assert_memory_equal(seen[j].payload, t->st[0].buf + seen[j].offset, t->expect[j].raw);
	}
	free(file);
	e2e_exit(t);
	free(t);
}

/* In-kernel pause/resume: the session is not gated, and refuses edges. */
static void test_aux_session_edges_refused_when_kernel_pauses(void **state)
{
	static const int cpus[] = { 0 };
	struct e2e *t = calloc(1, sizeof(*t));

	(void)state;
	e2e_init(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 1, window_triggers, 2);
	assert_false(aux_session__gated(t->s));
	assert_int_equal(aux_session__edge(t->s, true, 100, 0), -EINVAL);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	e2e_exit(t);
	free(t);
}

/*
 * --where on a uprobe window (in-kernel path): the entry and return members
 * get the veto programs, on every CPU, with the cookie (CPU + 1) << 32 |
 * window the programs read; on the userspace-gated path (no aux_action,
 * the gate applies --where itself) nothing is attached.
 */
static const struct aux_session_trigger veto_triggers[] = {
	{ .action = AUXTRIG_AUX_RESUME, .kind = AUX_TRIGGER_UPROBE, .path = "/bin/true", .offset = 0x1139,
	  .veto = "arg0 == 2", .veto_prog_fd = 42, .window = 3 },
	{ .action = AUXTRIG_AUX_PAUSE, .kind = AUX_TRIGGER_UPROBE, .path = "/bin/true", .offset = 0x1139,
	  .retprobe = true, .veto = "arg0 == 2", .veto_prog_fd = 43, .window = 3 },
};

static void test_aux_session_veto_programs_on_uprobe_members(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct e2e *t = calloc(1, sizeof(*t));

	(void)state;
	nr_attached = 0;
	e2e_init(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 2, veto_triggers, 2);
	assert_false(aux_session__gated(t->s));
	assert_int_equal(nr_attached, 4);
	for (size_t i = 0; i < 4; i++) {
		/* opened CPU by CPU: entry, then return */
		assert_int_equal(attached[i].prog, i % 2 ? 43 : 42);
		assert_int_equal(attached[i].cookie, ((__u64)(cpus[i / 2] + 1) << 32) | 3);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(attached[i].fd, attached[j].fd);
	}
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	e2e_exit(t);

	nr_attached = 0;
	e2e_init_pause(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 2, veto_triggers, 2, PROBE_PAUSE_NO_PMU);
	assert_true(aux_session__gated(t->s));
	assert_int_equal(nr_attached, 0);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	e2e_exit(t);
	free(t);
}

/* ---- the session's phases on the seam: what each leaves in the "kernel" --- */

struct phases {
	struct fake_kernel k;
	struct perf_sys sys;
	struct aux_session *s;
};

static const int phase_cpus[] = { 0, 1 };

static void phases_init(struct phases *t, bool snapshot)
{
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path("sysfs-intel_pt"), .cpus = phase_cpus,
		.nr_cpus = 2, .pid = -1, .snapshot = snapshot, .data_pages = 16, .aux_pages = 4,
		.triggers = veto_triggers, .nr_triggers = 2, .pause_support = PROBE_PAUSE_YES,
	};
	struct aux_model_config mc = { .pmu = AUX_MODEL_INTEL_PT, .overwrite = snapshot, .data_pages = 16,
				       .aux_pages = 4 };
	struct aux_event ev;

	resolve(&o, &ev, "intel_pt//u");
	assert_int_equal(fake_kernel__init(&t->k, ev.attr.type, &mc, phase_cpus, 2), 0);
	t->sys = fake_kernel__sys(&t->k);
	assert_int_equal(aux_session__new(&t->s, &o), 0);
}

/* Nothing open (events, links), nothing mapped, no call on a dead fd, no close under a mapping. */
static void phases_nothing_left(struct phases *t)
{
	assert_int_equal(fake_kernel__nr_open(&t->k), 0);
	assert_int_equal(fake_kernel__nr_mapped(&t->k), 0);
	assert_int_equal(t->k.closed_mapped, 0);
	assert_int_equal(t->k.bad_calls, 0);
}

/*
 * aux_session__open() failing at each of its steps (per CPU: the leader,
 * each member and its --where program's link, the tracking event, both
 * ids, the data ring, the AUX area, SET_OUTPUT), in both modes: the error
 * comes back and everything opened before it is closed and unmapped.
 */
static void test_aux_session_failure_at_each_step_leaks_nothing(void **state)
{
	(void)state;
	for (int snapshot = 0; snapshot < 2; snapshot++) {
		unsigned int steps = 0;

		for (unsigned int n = 1;; n++) {
			struct phases t;
			int err;

			phases_init(&t, snapshot);
			t.k.fail_at = n;
			t.k.fail_err = -EPERM;
			capture_start();
			err = aux_session__open(t.s, &t.sys);
			free(capture_end());
			if (err) {
				assert_int_equal(err, -EPERM);
				assert_int_equal(aux_session__nr_fds(t.s), 0);
				phases_nothing_left(&t); /* already: before the session is deleted */
				steps++;
			}
			aux_session__delete(t.s);
			phases_nothing_left(&t);
			fake_kernel__exit(&t.k);
			if (!err)
				break;
		}
		/* per CPU: leader, 2 x (member, link), tracking, 2 ids, data mmap, AUX mmap, SET_OUTPUT */
		assert_int_equal(steps, 2 * 11);
	}
}

/*
 * The order a session winds down in: the tracking events stop first (no
 * sideband after the trace), then the AUX events; each AUX area and data
 * ring is unmapped before its event is closed, and each --where program's
 * link before its member.
 */
static void test_aux_session_stop_and_close_order(void **state)
{
	struct record_sink sink;
	struct pdata_writer *w;
	struct phases t;
	char *dir = test_tmpdir__new(), path[4096];
	size_t stop, del, nr_tracking = 0, nr_leaders = 0, nr_links = 0;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	phases_init(&t, false);
	assert_int_equal(aux_session__open(t.s, &t.sys), 0);
	w = pdata_writer__open(path, false);
	assert_non_null(w);
	record_sink__init(&sink, w, NULL, false);
	assert_int_equal(aux_session__add_attrs(t.s, w), 0);
	assert_int_equal(pdata_writer__begin_data(w), 0);
	assert_int_equal(aux_session__write_info(t.s, w), 0);
	assert_int_equal(aux_session__start(t.s), 0);
	for (size_t i = 0; i < 2; i++)
		assert_true(aux_model__enabled(&t.k.models[i]));
	stop = t.k.nr_log;
	assert_int_equal(aux_session__stop(t.s, &sink), 0);
	for (size_t i = 0; i < 2; i++)
		assert_false(aux_model__enabled(&t.k.models[i]));
	assert_int_equal(pdata_writer__close(w), 0);
	/* stop: every tracking event disabled, then every AUX event (fds are unique until the closes) */
	for (size_t i = stop; i < t.k.nr_log; i++) {
		const struct fake_kernel_call *c = &t.k.log[i];
		const struct fake_kernel_event *e = fake_kernel__event(&t.k, c->fd);

		if (c->op != FAKE_IOCTL || c->req != PERF_EVENT_IOC_DISABLE)
			continue;
		assert_non_null(e);
		if (e->model >= 0) {
			nr_leaders++;
			continue;
		}
		assert_int_equal(e->config, PERF_COUNT_SW_DUMMY);
		assert_int_equal(nr_leaders, 0); /* no tracking event stops after an AUX event */
		nr_tracking++;
	}
	assert_int_equal(nr_tracking, 2);
	assert_int_equal(nr_leaders, 2);
	del = t.k.nr_log;
	aux_session__delete(t.s);
	pdata_writer__delete(w);
	/* delete: the links closed before the members they are on */
	for (size_t i = 0; i < t.k.nr_log; i++) {
		const struct fake_kernel_call *a = &t.k.log[i];
		ssize_t link_closed = -1, member_closed = -1;

		if (a->op != FAKE_ATTACH)
			continue;
		nr_links++;
		for (size_t j = i + 1; j < t.k.nr_log; j++) {
			if (t.k.log[j].op == FAKE_CLOSE && t.k.log[j].fd == a->ret && link_closed < 0)
				link_closed = j;
			if (t.k.log[j].op == FAKE_CLOSE && t.k.log[j].fd == a->fd && member_closed < 0)
				member_closed = j;
		}
		assert_true(link_closed > (ssize_t)del && member_closed > link_closed);
	}
	assert_int_equal(nr_links, 4);
	/* each ring unmapped before its event is closed; nothing left */
	phases_nothing_left(&t);
	fake_kernel__exit(&t.k);
	test_tmpdir__delete(dir);
}

/* gate_from_userspace: gated although the kernel and PMU could pause (the caller's --where). */
static void test_aux_session_gated_on_request(void **state)
{
	static const int cpus[] = { 0 };
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path("sysfs-intel_pt"), .cpus = cpus,
		.nr_cpus = 1, .pid = -1, .data_pages = 16, .aux_pages = 4, .triggers = window_triggers,
		.nr_triggers = 2, .pause_support = PROBE_PAUSE_YES, .gate_from_userspace = true,
	};
	struct aux_session *s;
	struct aux_event ev;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	resolve(&o, &ev, "intel_pt//u");
	assert_int_equal(aux_session__new(&s, &o), 0);
	assert_true(aux_session__gated(s));
	fp = open_memstream(&buf, &len);
	aux_session__print(s, fp);
	fclose(fp);
	assert_null(strstr(buf, "aux_resume"));
	assert_null(strstr(buf, "aux_start_paused"));
	free(buf);
	aux_session__delete(s);
}

static void test_aux_session_gated_fallback_through_model(void **state)
{
	static const int cpus[] = { 0 };
	struct auxtrace_seen seen[64];
	struct e2e *t = calloc(1, sizeof(*t));
	uint64_t prev[MAX_CPUS] = {};
	unsigned char *file;
	size_t len, n;

	(void)state;
	e2e_init_pause(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 1, window_triggers, 2,
		       PROBE_PAUSE_NO_KERNEL);
	assert_true(aux_session__gated(t->s));
	for (size_t i = 0; i < t->k.nr_ev; i++)
		if (t->k.ev[i].model < 0)
			assert_int_equal(t->k.ev[i].group_fd, -1); /* own groups */
	assert_int_equal(hw(t, 0, 3200), 0);			/* gate closed: nothing traced */

	assert_int_equal(aux_session__enable(t->s), 0);	/* window opens */
	assert_true(aux_model__enabled(&t->k.models[0]));
	assert_int_equal(hw(t, 0, 3200), 3200);
	assert_int_equal(aux_session__disable(t->s), 0);	/* window closes: the driver publishes */
	assert_false(aux_model__enabled(&t->k.models[0]));
	drain_expect(t, prev);
	assert_false(aux_model__enabled(&t->k.models[0]));	/* the drain left the gate closed */

	assert_int_equal(aux_session__enable(t->s), 0);
	assert_int_equal(hw(t, 0, 1600), 1600);
	drain_expect(t, prev);	/* the PMI at the 4 KiB watermark published part of it */
	end(t, 0);
	drain_expect(t, prev);
	assert_true(aux_model__enabled(&t->k.models[0]));	/* open gate: re-enabled after a read */
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);

	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	n = read_auxtrace(file, len, seen, 64);
	check_cover(t, seen, n);
	check_perf(t, seen, n, NULL);
	free(file);
	e2e_exit(t);
	free(t);
}

/* ---- stretch: a real Intel PT packet stream decoded by perf script --------- */

#if defined(__x86_64__)
/*
 * A function with known bytes: one conditional branch, then ret.
 *   +0 mov %edi,%eax   +2 test %edi,%edi   +4 je +9   +6 add $1,%eax   +9 ret
 */
__asm__(".text\n"
	".globl pt_target\n.type pt_target,@function\n"
	"pt_target:\n"
	"\tmovl %edi, %eax\n"
	"\ttestl %edi, %edi\n"
	"\tje 1f\n"
	"\taddl $1, %eax\n"
	"1:\tret\n"
	".size pt_target, .-pt_target\n"
	".globl pt_return\n.type pt_return,@function\n"
	"pt_return:\n"
	"\tret\n"
	".size pt_return, .-pt_return\n");
int pt_target(int x);
void pt_return(void);

/* Intel SDM vol. 3 ch. 32.4 packet encodings. */
enum { PT_IPB_FULL = 6 << 5, PT_TIP_PGE = 0x11, PT_TIP_PGD = 0x01 };

struct pt_enc {
	unsigned char buf[256];
	size_t len;
};

static void pt_bytes(struct pt_enc *e, const void *p, size_t n)
{
	assert_true(e->len + n <= sizeof(e->buf));
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

static void pt_psb(struct pt_enc *e)
{
	for (int i = 0; i < 8; i++)
		pt_bytes(e, "\x02\x82", 2);
}

static void pt_psbend(struct pt_enc *e) { pt_bytes(e, "\x02\x23", 2); }

/* MODE.Exec: CS.L = 1, 64-bit code. */
static void pt_mode_exec64(struct pt_enc *e) { pt_bytes(e, "\x99\x01", 2); }

/* TIP.PGE / TIP.PGD with the full 8-byte IP. */
static void pt_tip(struct pt_enc *e, unsigned char op, uint64_t ip)
{
	unsigned char h = PT_IPB_FULL | op;

	pt_bytes(e, &h, 1);
	pt_bytes(e, &ip, 8);
}

/* Short TNT with one conditional branch: stop bit 2, bit 1 = taken. */
static void pt_tnt1(struct pt_enc *e, bool taken)
{
	unsigned char b = 0x04 | (taken ? 0x02 : 0);

	pt_bytes(e, &b, 1);
}

static void pt_pad_to(struct pt_enc *e, size_t align)
{
	while (e->len % align)
		pt_bytes(e, "\x00", 1);
}

/*
 * pt_target(1) (branch not taken) and pt_target(0) (taken), each entered
 * with TIP.PGE and left at its ret with TIP.PGD to pt_return: through the
 * model and the session into perf.data, with our own COMM and MMAP2, so
 * perf script --itrace=i0ns walks the binary's code by our packets.
 */
static void test_aux_session_intel_pt_packets_decode_in_perf_script(void **state)
{
	static const int cpus[] = { 0 };
	uint64_t fn = (uint64_t)(uintptr_t)pt_target, ret = (uint64_t)(uintptr_t)pt_return;
	static const unsigned int not_taken[] = { 0, 2, 4, 6, 9 }, taken[] = { 0, 2, 4, 9 };
	struct e2e *t = calloc(1, sizeof(*t));
	struct pt_enc e = {};
	char *out, *p, want[128];
	const char *args[] = { "script", "-i", NULL, "--itrace=i0ns", "-F", "ip,sym,symoff", NULL };
	const char *bad;

	(void)state;
	if (!perf_oracle__path())
		skip();
	assert_int_equal(pt_target(1), 2);
	assert_int_equal(pt_target(0), 0);
	pt_psb(&e);
	pt_mode_exec64(&e);
	pt_psbend(&e);
	pt_tip(&e, PT_TIP_PGE, fn);
	pt_tnt1(&e, false);
	pt_tip(&e, PT_TIP_PGD, ret);
	pt_tip(&e, PT_TIP_PGE, fn);
	pt_tnt1(&e, true);
	pt_tip(&e, PT_TIP_PGD, ret);
	pt_pad_to(&e, 32);

	model_pid = getpid();
	e2e_init(t, "sysfs-intel_pt", "intel_pt//u", false, cpus, 1, NULL, 0);
	model_pid = -1;
	assert_int_equal(synth__threads(t->w, getpid()), 0);
	t->pt = false; /* hw() writes our stream, not the generator's */
	assert_int_equal(aux_model__hw_write(&t->k.models[0], e.buf, e.len), e.len);
	end(t, 0);
	assert_true(aux_session__drain(t->s, &t->sink) > 0);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);

	args[2] = t->path;
	assert_int_equal(perf_oracle__run(NULL, args, &out), 0);
	if ((bad = perf_oracle__problem(out)))
		fail_msg("perf script says: %s", out);
	/* every instruction, in order: not taken, then taken (add skipped) */
	p = out;
	for (int run = 0; run < 2; run++) {
		const unsigned int *offs = run ? taken : not_taken;
		size_t n = run ? 4 : 5;

		for (size_t i = 0; i < n; i++) {
			snprintf(want, sizeof(want), "%lx pt_target+0x%x", (unsigned long)(fn + offs[i]), offs[i]);
			p = strstr(p, want);
			if (!p)
				fail_msg("perf script does not show '%s' (run %d) next:\n%s", want, run, out);
			p += strlen(want);
		}
	}
	assert_null(strstr(p, "pt_target"));
	free(out);
	e2e_exit(t);
	free(t);
}
#else
static void test_aux_session_intel_pt_packets_decode_in_perf_script(void **state)
{
	(void)state;
	skip(); /* the traced function is x86-64 code */
}
#endif

/* ---- per thread ------------------------------------------------------------ */

/*
 * A per-thread session (cpus { -1 }) over @nr_initial of the @nr threads
 * @tids, each thread's AUX event a model (the rest are for threads added
 * later).
 */
static size_t e2e_max_exited; /* aux_session_opts.max_exited of the next e2e_init_threads_mode() */
static bool e2e_threads_cs;   /* the next e2e_init_threads_mode() on cs_etm (sysfs-cs_etm), not intel_pt */

static void e2e_init_threads_mode(struct e2e *t, const pid_t *tids, size_t nr, size_t nr_initial,
				  const struct aux_session_trigger *trig, size_t nr_trig, enum probe_pause pause,
				  bool snapshot)
{
	static const int per_thread[] = { -1 };
	size_t page = sysconf(_SC_PAGESIZE);
	bool cs = e2e_threads_cs;
	struct aux_session_opts o = {
		.sysfs_root = test_fixture_path(cs ? "sysfs-cs_etm" : "sysfs-intel_pt"),
		.cpus = per_thread, .nr_cpus = 1,
		.pid = tids[0], .tids = tids, .nr_tids = nr_initial, .data_pages = 16, .aux_pages = 4,
		.triggers = trig, .nr_triggers = nr_trig, .pause_support = pause,
		.snapshot = snapshot, .snapshot_size = snapshot ? 4 * page : 0, .max_exited = e2e_max_exited,
	};
	struct aux_model_config mc = {
		.pmu = cs ? AUX_MODEL_CS_ETM : AUX_MODEL_INTEL_PT, .data_pages = 16, .aux_pages = 4,
		.overwrite = snapshot, .aux_watermark = snapshot || cs ? 0 : 4 * page / 4,
	};
	const char *pmu = cs ? "cs_etm" : "intel_pt";
	struct perf_sys ops;
	struct aux_event ev;

	e2e_threads_cs = false; /* this call only */
	memset(t, 0, sizeof(*t));
	t->pt = !cs;
	t->per_thread = true;
	resolve(&o, &ev, cs ? "cs_etm/@tmc_etr0/u" : "intel_pt//u");
	assert_int_equal(fake_kernel__init_threads(&t->k, pmu_set__find(o.pmus, pmu)->type, &mc, tids, nr), 0);
	ops = fake_kernel__sys(&t->k);
	ops.event_open = checked_event_open;
	ops.attach_bpf = fake_attach_bpf;
	log__set_level(LOG_ERR); /* the fallback warning */
	assert_int_equal(aux_session__new(&t->s, &o), 0);
	log__set_level(LOG_INFO);
	assert_true(aux_session__per_thread(t->s));
	assert_int_equal(aux_session__open(t->s, &ops), 0);
	assert_int_equal(aux_session__nr_fds(t->s), nr_initial);
	t->dir = test_tmpdir__new();
	assert_non_null(t->dir);
	snprintf(t->path, sizeof(t->path), "%s/perf.data", t->dir);
	t->w = pdata_writer__open(t->path, false);
	assert_non_null(t->w);
	record_sink__init(&t->sink, t->w, NULL, false);
	assert_int_equal(aux_session__add_attrs(t->s, t->w), 0);
	assert_int_equal(pdata_writer__begin_data(t->w), 0);
	assert_int_equal(aux_session__write_info(t->s, t->w), 0);
	assert_int_equal(aux_session__start(t->s), 0);
}

static void e2e_init_threads(struct e2e *t, const pid_t *tids, size_t nr, size_t nr_initial,
			     const struct aux_session_trigger *trig, size_t nr_trig, enum probe_pause pause)
{
	e2e_init_threads_mode(t, tids, nr, nr_initial, trig, nr_trig, pause, false);
}

/* The fake kernel's open event of @type/@config for thread @tid, or NULL. */
static struct fake_kernel_event *thread_event(struct fake_kernel *k, pid_t tid, __u32 type, __u64 config)
{
	for (size_t i = 0; i < k->nr_ev; i++)
		if (k->ev[i].fd >= 0 && k->ev[i].link_of < 0 && k->ev[i].pid == tid && k->ev[i].type == type &&
		    k->ev[i].config == config)
			return &k->ev[i];
	return NULL;
}

/*
 * CoreSight per thread: a thread's trace comes from the ETM of whichever CPU
 * it runs on, and the decoder knows a CPU's trace ID only from the
 * AUXTRACE_INFO: it describes every CPU with an ETM (sysfs-cs_etm: cpu0..5),
 * as perf's cs_etm_info_fill() does for the per-thread CPU map, not the
 * session's CPU list { -1 } (which once made the recording fail: "no ETM
 * registers for cpu-1"). Its PERF_RECORD_AUX name no CPU (-1), as in perf's
 * per-thread files: perf 6.1 finds the buffer of a per-thread AUX record only
 * so, and once found none ("CS ETM: Couldn't find auxtrace buffer").
 */
static void test_aux_session_cs_etm_per_thread_info_has_every_etm(void **state)
{
	static const pid_t tids[] = { 101, 102 };
	const char *args[] = { "report", "-D", "-i", NULL, NULL };
	struct e2e *t = calloc(1, sizeof(*t));
	const struct pdata_file_header *fh;
	size_t len, nr_aux = 0;
	unsigned char *file;
	char *out;
	int rc;

	(void)state;
	assert_non_null(t);
	e2e_threads_cs = true;
	e2e_init_threads_mode(t, tids, 2, 2, NULL, 0, PROBE_PAUSE_YES, false);
	assert_int_equal(hw(t, 0, 256), 256);
	end(t, 0);
	assert_int_equal(hw(t, 1, 128), 128);
	end(t, 1);
	assert_true(aux_session__drain(t->s, &t->sink) > 0);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	fh = (const void *)file;
	for (size_t pos = fh->data.offset; pos < fh->data.offset + fh->data.size;) {
		const struct perf_event_header *h = (const void *)(file + pos);
		__u32 cpu;

		assert_true(h->size >= 8);
		if (h->type == PERF_RECORD_AUX) {
			memcpy(&cpu, file + pos + h->size - 16, sizeof(cpu));
			assert_int_equal(cpu, (__u32)-1);
			nr_aux++;
		}
		if (h->type == PDATA_RECORD_AUXTRACE)
			pos += ((const struct pdata_record_auxtrace *)h)->size; /* its payload follows */
		pos += h->size;
	}
	free(file);
	assert_int_equal(nr_aux, 2);
	if (perf_oracle__path()) {
		args[3] = t->path;
		rc = perf_oracle__run(NULL, args, &out);
		if (rc || strstr(out, "Couldn't find") || strstr(out, "random file access"))
			fail_msg("perf report -D (exit %d) does not find the per-thread pieces:\n%s", rc, out);
		free(out);
	}
	assert_int_equal(auxtrace_info_priv(t->path, 1) & 0xffffffff, 6); /* CS_PMU_TYPE_CPUS: 6 CPUs */
	for (size_t cpu = 0; cpu < 6; cpu++) {
		/* ETMv4 blocks: magic, CPU, NR_TRC_PARAMS (7), then the 7 registers */
		assert_int_equal(auxtrace_info_priv(t->path, 3 + 10 * cpu), 0x4040404040404040ULL);
		assert_int_equal(auxtrace_info_priv(t->path, 3 + 10 * cpu + 1), cpu);
		assert_int_equal(auxtrace_info_priv(t->path, 3 + 10 * cpu + 4), 0x10 + 2 * cpu); /* TRCTRACEIDR */
	}
	e2e_exit(t);
	free(t);
}

/*
 * Per thread, through the model: each thread's group is opened for that
 * thread on every CPU (cpu -1), its trace goes to an AUXTRACE of its own
 * (idx = its slot, tid = the thread, cpu = -1); a thread added after the
 * start (one the target created) gets its group at once, and its records
 * carry, in the file, the ids the first thread's events have there; a
 * thread that exits is drained and closed. perf 6.1 reads it all, with
 * HAVE_SCHED_SWITCH 0 and per-thread mmaps.
 */
static void test_aux_session_per_thread_through_model(void **state)
{
	static const pid_t tids[] = { 101, 102, 103 };
	struct auxtrace_seen seen[64];
	struct aux_session_stats stats;
	struct e2e *t = calloc(1, sizeof(*t));
	uint64_t prev[MAX_CPUS] = {};
	__u64 file_ids[2], late_ids[2];
	struct fake_kernel_event *ev;
	const struct pdata_file_header *fh;
	unsigned char *file;
	size_t len, n, late_records = 0;

	(void)state;
	e2e_init_threads(t, tids, 3, 2, window_triggers, 2, PROBE_PAUSE_YES);
	for (size_t i = 0; i < t->k.nr_ev; i++) {
		if (t->k.ev[i].link_of >= 0)
			continue;
		assert_int_equal(t->k.ev[i].cpu, -1);
		assert_true(t->k.ev[i].pid == 101 || t->k.ev[i].pid == 102);
	}
	ev = thread_event(&t->k, 101, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	assert_non_null(ev);
	file_ids[0] = FAKE_KERNEL_LEADER_ID + 0;
	file_ids[1] = ev->id;

	assert_int_equal(hw(t, 0, 1024), 1024);
	assert_int_equal(hw(t, 1, 512), 512);
	end(t, 0);
	end(t, 1);
	drain_expect(t, prev);

	/* thread 103 appears: its group opens and starts at once */
	assert_int_equal(aux_session__add_thread(t->s, 103), 2);
	assert_int_equal(aux_session__add_thread(t->s, 103), -EEXIST);
	assert_true(aux_session__fd(t->s, 2) >= 0);
	assert_true(aux_model__enabled(&t->k.models[2]));
	ev = thread_event(&t->k, 103, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	assert_non_null(ev);
	late_ids[0] = FAKE_KERNEL_LEADER_ID + 2;
	late_ids[1] = ev->id;
	aux_model__emit_switch(&t->k.models[2], late_ids[1], true, false, 0, 0);
	aux_model__emit_switch(&t->k.models[2], late_ids[1], false, false, 0, 0);
	assert_int_equal(hw(t, 2, 768), 768);
	end(t, 2);

	/* thread 102 exits: what it traced last is drained, its group closed */
	assert_int_equal(hw(t, 1, 256), 256);
	end(t, 1);
	expect(t, 1, prev[1], t->k.models[1].aux_head - prev[1]);
	prev[1] = t->k.models[1].aux_head;
	assert_int_equal(aux_session__remove_thread(t->s, 102, &t->sink), 0);
	assert_int_equal(aux_session__remove_thread(t->s, 102, &t->sink), -ENOENT);
	assert_int_equal(aux_session__fd(t->s, 1), -1);
	for (size_t i = 0; i < t->k.nr_ev; i++)
		if (t->k.ev[i].pid == 102 && t->k.ev[i].link_of < 0)
			assert_int_equal(t->k.ev[i].fd, -2);
	drain_expect(t, prev);

	assert_int_equal(hw(t, 0, 64), 64);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	for (size_t i = 0; i < 3; i++) {
		if (t->k.models[i].aux_head != prev[i])
			expect(t, i, prev[i], t->k.models[i].aux_head - prev[i]);
		prev[i] = t->k.models[i].aux_head;
	}
	assert_int_equal(pdata_writer__close(t->w), 0);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.threads_added, 1);
	assert_int_equal(stats.threads_failed, 0);
	assert_int_equal(stats.itrace_starts, 3);

	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	n = read_auxtrace(file, len, seen, 64);
	assert_int_equal(n, t->nr_expect);
	for (size_t j = 0; j < n; j++) {
		assert_int_equal(seen[j].offset, t->expect[j].offset);
		assert_int_equal(seen[j].size, t->expect[j].size);
		assert_int_equal(seen[j].idx, t->expect[j].idx);
		assert_int_equal(seen[j].cpu, (__u32)-1);
		assert_int_equal(seen[j].tid, t->expect[j].tid);
	}
	check_cover(t, seen, n);
	/* every kernel record names an event of the file: 103's carry 101's ids */
	fh = (const void *)file;
	for (size_t pos = fh->data.offset; pos < fh->data.offset + fh->data.size;) {
		const struct perf_event_header *h = (const void *)(file + pos);
		__u64 id;
		__u32 tid;

		if (h->type < PERF_RECORD_MAX && h->type != PERF_RECORD_SAMPLE && h->size >= 40) {
			memcpy(&id, file + pos + h->size - 8, 8);
			memcpy(&tid, file + pos + h->size - 28, 4); /* trailer: pid tid time cpu res id */
			assert_false(id == late_ids[0] || id == late_ids[1]);
			if (tid == 103) {
				assert_true(id == file_ids[0] || id == file_ids[1]);
				late_records++;
			}
		}
		pos += h->size;
		if (h->type == PDATA_RECORD_AUXTRACE)
			pos += ((const struct pdata_record_auxtrace *)h)->size;
	}
	/* its ITRACE_START, its two switches, its AUX record */
	assert_int_equal(late_records, 4);
	free(file);
	assert_int_equal(auxtrace_info_priv(t->path, 7 /* INTEL_PT_HAVE_SCHED_SWITCH */), 0);
	assert_int_equal(auxtrace_info_priv(t->path, 9 /* INTEL_PT_PER_CPU_MMAPS */), 0);
	check_perf(t, seen, n, NULL);
	e2e_exit(t);
	free(t);
}

/*
 * Per thread in snapshot mode: a thread that exits keeps its group until the
 * next snapshot has taken its trace, and that snapshot closes the group and
 * unmaps its buffers (they used to stay until the run ended: memory grew with
 * every thread the target ever had). A new thread reusing its tid gets a
 * group of its own meanwhile.
 */
static void test_aux_session_per_thread_snapshot_closes_exited(void **state)
{
	static const pid_t tids[] = { 101, 102 };
	struct auxtrace_seen seen[16];
	struct aux_session_stats stats;
	struct e2e *t = calloc(1, sizeof(*t));
	unsigned char *file;
	size_t len, n, of_102 = 0;

	(void)state;
	e2e_init_threads_mode(t, tids, 2, 2, window_triggers, 2, PROBE_PAUSE_YES, true);
	assert_int_equal(hw(t, 0, 512), 512);
	assert_int_equal(hw(t, 1, 768), 768);
	end(t, 1);
	/* 102 exits: nothing read yet in snapshot mode, so its group stays for the snapshot */
	assert_int_equal(aux_session__remove_thread(t->s, 102, &t->sink), 0);
	assert_int_equal(aux_session__remove_thread(t->s, 102, &t->sink), -ENOENT);
	assert_true(aux_session__fd(t->s, 1) >= 0);
	assert_true(aux_model__check_aux_mmap(&t->k.models[1]) == 0);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 2);
	/* taken: its events are closed, its rings unmapped; 101's stay */
	assert_int_equal(aux_session__fd(t->s, 1), -1);
	for (size_t i = 0; i < t->k.nr_ev; i++) {
		if (t->k.ev[i].link_of >= 0)
			continue;
		if (t->k.ev[i].pid == 102)
			assert_int_equal(t->k.ev[i].fd, -2);
		else
			assert_true(t->k.ev[i].fd >= 0);
	}
	assert_true(aux_session__fd(t->s, 0) >= 0);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.exited_closed, 1);
	assert_int_equal(hw(t, 0, 256), 256);
	assert_int_equal(aux_session__snapshot(t->s, &t->sink), 1);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.exited_closed, 1);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	n = read_auxtrace(file, len, seen, 16);
	for (size_t j = 0; j < n; j++)
		of_102 += seen[j].tid == 102 ? seen[j].size : 0;
	assert_int_equal(of_102, 768); /* what 102 traced is in the file */
	free(file);
	e2e_exit(t);
	free(t);
}

/*
 * Snapshot mode, per thread, with no snapshot coming: at most max_exited
 * exited threads' groups wait for one; the longest exited is closed first and
 * counted, so memory stays bounded however many threads the target ends.
 */
static void test_aux_session_per_thread_snapshot_bounds_exited(void **state)
{
	static const pid_t tids[] = { 101, 102, 103 };
	struct auxtrace_seen seen[16];
	struct aux_session_stats stats;
	struct e2e *t = calloc(1, sizeof(*t));
	unsigned char *file;
	size_t len, n, of_102 = 0, of_103 = 0;

	(void)state;
	e2e_max_exited = 1;
	e2e_init_threads_mode(t, tids, 3, 3, window_triggers, 2, PROBE_PAUSE_YES, true);
	e2e_max_exited = 0;
	assert_int_equal(hw(t, 1, 512), 512);
	assert_int_equal(hw(t, 2, 768), 768);
	end(t, 1);
	end(t, 2);
	assert_int_equal(aux_session__remove_thread(t->s, 102, &t->sink), 0);
	assert_true(aux_session__fd(t->s, 1) >= 0); /* one may wait */
	assert_int_equal(aux_session__remove_thread(t->s, 103, &t->sink), 0);
	/* a second would be over the bound: 102's group, exited first, goes, counted */
	assert_int_equal(aux_session__fd(t->s, 1), -1);
	assert_true(aux_session__fd(t->s, 2) >= 0);
	assert_true(aux_session__fd(t->s, 0) >= 0);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.exited_dropped, 1);
	assert_int_equal(stats.exited_closed, 0);
	assert_true(aux_session__snapshot(t->s, &t->sink) >= 1);
	aux_session__stats(t->s, &stats);
	assert_int_equal(stats.exited_closed, 1);
	assert_int_equal(aux_session__fd(t->s, 2), -1);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	file = (unsigned char *)test_read_file(t->path, &len);
	assert_non_null(file);
	n = read_auxtrace(file, len, seen, 16);
	for (size_t j = 0; j < n; j++) {
		of_102 += seen[j].tid == 102 ? seen[j].size : 0;
		of_103 += seen[j].tid == 103 ? seen[j].size : 0;
	}
	assert_int_equal(of_102, 0);   /* dropped */
	assert_int_equal(of_103, 768); /* waited, and the snapshot took it */
	free(file);
	e2e_exit(t);
	free(t);
}

/*
 * Gated per thread (no aux_action): a window edge switches that thread's AUX
 * event only, whichever CPU it runs on; another thread's stays as it was; an
 * edge of a thread the session has no group for is counted and ignored.
 */
static void test_aux_session_per_thread_gate_switches_each_thread(void **state)
{
	static const pid_t tids[] = { 101, 102 };
	struct aux_session_gate_stats gs;
	struct e2e *t = calloc(1, sizeof(*t));

	(void)state;
	e2e_init_threads(t, tids, 2, 2, window_triggers, 2, PROBE_PAUSE_NO_KERNEL);
	assert_true(aux_session__gated(t->s));
	assert_false(aux_model__enabled(&t->k.models[0]));
	assert_false(aux_model__enabled(&t->k.models[1]));
	assert_int_equal(aux_session__edge(t->s, true, 101, 1), 0);
	assert_true(aux_model__enabled(&t->k.models[0]));
	assert_false(aux_model__enabled(&t->k.models[1]));
	assert_int_equal(aux_session__edge(t->s, true, 102, 2), 0);
	assert_true(aux_model__enabled(&t->k.models[1]));
	assert_int_equal(aux_session__edge(t->s, false, 101, 3), 0);
	assert_false(aux_model__enabled(&t->k.models[0]));
	assert_true(aux_model__enabled(&t->k.models[1]));
	assert_int_equal(aux_session__edge(t->s, true, 999, 4), 0);
	assert_int_equal(aux_session__edge(t->s, false, 102, 5), 0);
	assert_false(aux_model__enabled(&t->k.models[0]));
	assert_false(aux_model__enabled(&t->k.models[1]));
	aux_session__gate_stats(t->s, &gs);
	assert_int_equal(gs.opens, 2);
	assert_int_equal(gs.closes, 2);
	assert_int_equal(gs.enables, 2);
	assert_int_equal(gs.disables, 2);
	assert_int_equal(gs.other_threads, 1);
	assert_int_equal(gs.unmatched, 0);
	assert_int_equal(aux_session__stop(t->s, &t->sink), 0);
	assert_int_equal(pdata_writer__close(t->w), 0);
	e2e_exit(t);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aux_session_print_matches_golden),
		cmocka_unit_test(test_aux_session_print_every_cpu),
		cmocka_unit_test(test_aux_session_errors_are_clear),
		cmocka_unit_test(test_aux_session_intel_pt_full_trace_through_model),
		cmocka_unit_test(test_aux_session_cs_etm_snapshots_through_model),
		cmocka_unit_test(test_aux_session_cs_etm_per_thread_info_has_every_etm),
		cmocka_unit_test(test_aux_session_switch_records_match_the_info),
		cmocka_unit_test(test_aux_session_per_thread_through_model),
		cmocka_unit_test(test_aux_session_per_thread_gate_switches_each_thread),
		cmocka_unit_test(test_aux_session_per_thread_snapshot_closes_exited),
		cmocka_unit_test(test_aux_session_per_thread_snapshot_bounds_exited),
		cmocka_unit_test(test_aux_session_gated_fallback_through_model),
		cmocka_unit_test(test_aux_session_veto_programs_on_uprobe_members),
		cmocka_unit_test(test_aux_session_failure_at_each_step_leaks_nothing),
		cmocka_unit_test(test_aux_session_stop_and_close_order),
		cmocka_unit_test(test_aux_session_gated_on_request),
		cmocka_unit_test(test_aux_session_edges_gate_by_thread),
		cmocka_unit_test(test_aux_session_edges_refused_when_kernel_pauses),
		cmocka_unit_test(test_aux_session_gated_snapshot_keeps_gate_closed),
		cmocka_unit_test(test_aux_session_snapshot_keeps_kernel_windows_running),
		cmocka_unit_test(test_aux_session_intel_pt_packets_decode_in_perf_script),
	};

	return cmocka_run_group_tests(tests, NULL, free_sets);
}
