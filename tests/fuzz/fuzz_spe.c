// SPDX-License-Identifier: BSD-2-Clause
/*
 * Arm SPE records, at two levels: the packet decoder on the input itself
 * (sizes, descriptions, records), and `auxtrig script` on a perf.data file
 * with an Arm SPE AUXTRACE_INFO and the input as its AUX buffer (samples,
 * or --packets one input in two). Seeds: record streams encoded here
 * (tests/fuzz/corpus/spe/: there is no SPE capture in the shared data).
 *
 * What must hold: no crash, no hang; every packet at least one byte and
 * inside what is left; a documented exit status.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxtrig/decode/script.h"
#include "auxtrig/decode/spe_decoder.h"
#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/sys/log.h"

#define SPE_PMU_TYPE	11
#define SPE_EVENT_ID	77

static int write_file(const char *path, const uint8_t *data, size_t size)
{
	struct perf_event_attr attr = {
		.type = SPE_PMU_TYPE, .size = sizeof(attr), .sample_period = 1, .sample_type = PDATA_SAMPLE_TYPE,
		.sample_id_all = 1, .disabled = 1,
	};
	__u64 ids[] = { SPE_EVENT_ID };
	__u64 info[sizeof(struct pdata_record_auxtrace_info) / 8 + 2] = { 0 };
	struct pdata_record_auxtrace_info *h = (void *)info;
	struct pdata_record_auxtrace at = { 0 };
	struct pdata_writer *w = pdata_writer__open(path, true);
	int err;

	if (!w)
		return -1;
	err = pdata_writer__add_attr(w, &attr, "arm_spe_0//", ids, 1);
	if (!err)
		err = pdata_writer__begin_data(w);
	h->header.type = PDATA_RECORD_AUXTRACE_INFO;
	h->header.size = sizeof(info);
	h->type = PDATA_AUXTRACE_ARM_SPE;
	h->priv[0] = SPE_PMU_TYPE;
	h->priv[1] = 1;	/* per-CPU mmaps */
	if (!err)
		err = pdata_writer__write(w, info, sizeof(info));
	at.size = size;
	at.idx = 0;
	at.tid = (__u32)-1;
	at.cpu = 0;
	if (!err)
		err = pdata_writer__write_auxtrace(w, &at, data, size, NULL, 0);
	if (!err)
		err = pdata_writer__close(w);
	pdata_writer__delete(w);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct script_opts o = { .itrace = 'b', .jobs = 1, .packets = size % 2 };
	const char *tmp = getenv("TMPDIR");
	struct spe_record rec;
	char path[4096], d[256];
	size_t off = 0;
	int rc;

	spe_record__init(&rec);
	while (off < size) {
		struct spe_packet pkt;
		size_t n = spe_decoder__packet(data + off, size - off, &pkt);

		if (!n)
			break;	/* a packet cut by the end */
		if (n > size - off)
			abort();
		spe_packet__desc(&pkt, d, sizeof(d));
		if (pkt.type == SPE_PKT_ADDRESS)
			(void)spe_packet__addr(&pkt);
		if (spe_record__add(&rec, &pkt))
			spe_record__init(&rec);
		off += n;
	}
	snprintf(path, sizeof(path), "%s/fuzz_spe.%d.data", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	log__set_level(LOG_ERR);
	if (write_file(path, data, size))
		abort();
	o.input = path;
	o.buildid_dir = "/nonexistent";
	rc = script__run(&o);
	if (rc < 0 || rc > 3)
		abort();
	unlink(path);
	return 0;
}
