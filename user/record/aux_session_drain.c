// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AUX session's rings into the file: each slot's data ring (its records,
 * with the ids and CPU perf expects of them) and, in full-trace mode, its
 * new AUX data as AUXTRACE records, re-enabling a trace the kernel stopped
 * on a full buffer.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/record/internal/aux_session.h"
#include "auxtrig/record/sink.h"
#include "auxtrig/sys/log.h"
#include "uapi/linux/perf_event_aux.h"

/* The trailer-less fields of the kernel records the session looks at. */
static void aux_session__note(struct aux_session *s, struct aux_session_cpu *c, const struct perf_event_header *h)
{
	__u64 v[2];

	switch (h->type) {
	case PERF_RECORD_AUX:
		/* aux_offset, aux_size, flags */
		memcpy(v, (const char *)h + 16, 16);
		aux_ring__note_aux_record(&c->aux, v[1]);
		s->stats.aux_records++;
		s->stats.truncated += !!(v[1] & PERF_AUX_FLAG_TRUNCATED);
		s->stats.truncated_empty += (v[1] & PERF_AUX_FLAG_TRUNCATED) && !v[0];
		s->stats.partial += !!(v[1] & PERF_AUX_FLAG_PARTIAL);
		s->stats.collision += !!(v[1] & PERF_AUX_FLAG_COLLISION);
		break;
	case PERF_RECORD_ITRACE_START:
		s->stats.itrace_starts++;
		break;
	case PERF_RECORD_LOST:
		memcpy(v, (const char *)h + 8, 16);
		s->stats.lost++;
		s->stats.lost_events += v[1];
		break;
	}
}

/*
 * A record of a slot whose events are not in the file's attrs (a thread
 * followed after they were written) names, in its sample_id trailer, the
 * ids the file has for its events: the id is the trailer's last u64
 * (PERF_SAMPLE_IDENTIFIER); the leader's and tracking's rings hold no
 * samples.
 */
static const struct perf_event_header *aux_session__file_ids(struct aux_session *s, const struct aux_session_cpu *c,
							     const struct perf_event_header *h)
{
	__u64 id;

	if ((c->file_leader_id == c->leader_id && c->file_tracking_id == c->tracking_id) ||
	    h->type >= PERF_RECORD_MAX || h->type == PERF_RECORD_SAMPLE || h->size < sizeof(*h) + sizeof(id))
		return h;
	memcpy(&id, (const char *)h + h->size - sizeof(id), sizeof(id));
	if (id == c->leader_id)
		id = c->file_leader_id;
	else if (id == c->tracking_id)
		id = c->file_tracking_id;
	else
		return h;
	memcpy(s->scratch, h, h->size);
	memcpy(s->scratch + h->size - sizeof(id), &id, sizeof(id));
	return (const struct perf_event_header *)s->scratch;
}

/*
 * perf 6.1 matches a per-thread buffer (AUXTRACE cpu -1) to a CoreSight
 * PERF_RECORD_AUX only when the record's sample CPU is -1 too
 * (cs_etm__queue_aux_fragment() compares the AUXTRACE's cpu with the
 * sample's even per thread), as in its own per-thread files, whose cs_etm
 * event has no PERF_SAMPLE_CPU. auxtrig's records carry the CPU (one sample
 * layout for every attr): perf found no buffer for any of them ("CS ETM:
 * Couldn't find auxtrace buffer") and decoded whole buffers instead of the
 * pieces the kernel published. A per-thread CoreSight session's AUX records
 * name no CPU in the file: its trace IDs say which CPU traced what.
 */
static const struct perf_event_header *aux_session__file_cpu(struct aux_session *s,
							     const struct perf_event_header *h)
{
	const size_t cpu_at = h->size - 2 * sizeof(__u64); /* { u32 cpu, res; } { u64 identifier; } */
	const __u32 none = (__u32)-1;

	if (!s->per_thread || s->ev.kind != AUX_PMU_CS_ETM || h->type != PERF_RECORD_AUX ||
	    h->size < sizeof(*h) + 3 * sizeof(__u64) + 2 * sizeof(__u64))
		return h;
	if ((const unsigned char *)h != s->scratch)
		memcpy(s->scratch, h, h->size);
	memcpy(s->scratch + cpu_at, &none, sizeof(none));
	return (const struct perf_event_header *)s->scratch;
}

int aux_session__drain_data(struct aux_session *s, struct aux_session_cpu *c, struct record_sink *k)
{
	const struct perf_event_header *h;
	int n = 0, err;

	data_ring__read_init(&c->data);
	while ((h = data_ring__read_event(&c->data))) {
		aux_session__note(s, c, h);
		err = record_sink__write(k, aux_session__file_cpu(s, aux_session__file_ids(s, c, h)));
		if (err)
			return err;
		n++;
	}
	data_ring__consume(&c->data);
	s->stats.records += n;
	return n;
}

/* AUXTRACE.reference: Intel PT wants the TSC at read time, the others any unique value. */
static __u64 aux_session__reference(const struct aux_session *s)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (s->ev.kind == AUX_PMU_INTEL_PT)
		return __builtin_ia32_rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int aux_session__put(struct aux_session *s, struct aux_session_cpu *c, const struct aux_ring_read *rd,
		     struct record_sink *k)
{
	struct pdata_record_auxtrace rec;
	int err;

	aux_ring__auxtrace(&c->aux, rd, aux_session__reference(s), &rec);
	err = record_sink__write_auxtrace(k, &rec, rd->data1, rd->len1, rd->data2, rd->len2);
	if (err)
		return err;
	s->stats.auxtrace++;
	s->stats.aux_bytes += rd->size;
	return 1;
}

/* One slot: its records, and in full-trace mode its new AUX data. */
int aux_session__drain_slot(struct aux_session *s, struct aux_session_cpu *c, struct record_sink *k)
{
	struct aux_ring_read rd;
	int64_t got;
	int n = 0, err, truncated;
	char where[32];

	err = aux_session__drain_data(s, c, k);
	if (err < 0)
		return err;
	n += err;
	if (s->o.snapshot)
		return n;
	got = aux_ring__read(&c->aux, &rd);
	if (got < 0) {
		pr_err("%s on %s: AUX head and tail out of step: %s\n", s->ev.name,
		       aux_session__where(c, where, sizeof(where)), strerror((int)-got));
		return (int)got;
	}
	if (got > 0) {
		err = aux_session__put(s, c, &rd, k);
		if (err < 0)
			return err;
		n += err;
	}
	/* Released only after the copy is in the writer: the kernel may reuse the space now. */
	truncated = aux_ring__consume(&c->aux);
	/*
	 * The kernel disables the event when the buffer fills (TRUNCATED,
	 * or no space at all, which emits no record): perf re-enables after
	 * every read, enabling a running event being a no-op. Not while
	 * stopping, nor when the recorder's gate is closed.
	 */
	if ((!truncated && !got) || s->stopping || (s->gated && !aux_session__gate_is_open(s, c)))
		return n;
	err = aux_ring__enable(&c->aux);
	if (err) {
		pr_err("cannot re-enable %s on %s after the buffer filled: %s\n", s->ev.name,
		       aux_session__where(c, where, sizeof(where)), strerror(-err));
		return err;
	}
	s->stats.reenables += truncated;
	return n;
}

int aux_session__drain(struct aux_session *s, struct record_sink *k)
{
	int n = 0, err;

	if (!s->opened)
		return -EINVAL;
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (s->cpus[i]->closed)
			continue;
		err = aux_session__drain_slot(s, s->cpus[i], k);
		if (err < 0)
			return err;
		n += err;
	}
	return n;
}
