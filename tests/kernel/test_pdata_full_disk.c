// SPDX-License-Identifier: BSD-2-Clause
/*
 * A disk that fills up during a recording, wherever in its last page the
 * data happens to end: the writer must still complete the file (the record
 * that counts the losses, the feature table, the header) and say what it
 * holds. A real small tmpfs, so root (the shell test test_record_faults.sh
 * does the same through `auxtrig record`, at one data length per run; this
 * one walks the data's end over every 8-byte offset of a page).
 *
 * Once, the cut back to the last whole record freed only the rest of its
 * page, and when that was less than the table the salvage failed: ~4% of
 * runs ended "could not be completed" (CI, ASan build, issue 27's run).
 *
 * Exit 0 pass, 1 fail, 77 skip (not root).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "auxtrig/format/pdata.h"
#include "auxtrig/format/pdata_reader.h"
#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/format/synth.h"
#include "auxtrig/sys/log.h"

#define PAGE 4096
#define MAX_PAD PAGE

static int failures;

#define check(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL: " __VA_ARGS__);             \
			fputc('\n', stderr);                               \
			failures++;                                        \
			return;                                            \
		}                                                          \
	} while (0)

/* A PERF_RECORD_COMM @pad bytes longer than synth's: NULs after the name, the trailer last. */
static size_t padded_comm(char *buf, size_t size, const char *comm, size_t pad)
{
	char base[128];
	size_t len = synth__comm_record(base, sizeof(base), 1, 1, comm), trailer = PDATA_SAMPLE_ID_SIZE;
	struct perf_event_header *h = (struct perf_event_header *)buf;

	if (!len || len + pad > size || len + pad > 0xffff)
		return 0;
	memcpy(buf, base, len - trailer);
	memset(buf + len - trailer, 0, pad);
	memcpy(buf + len - trailer + pad, base + len - trailer, trailer);
	h->size = len + pad;
	return len + pad;
}

static void one_fill(const char *path, size_t pad)
{
	struct perf_event_attr dummy = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(dummy), .config = PERF_COUNT_SW_DUMMY,
		.sample_period = 1, .sample_type = PDATA_SAMPLE_TYPE, .sample_id_all = 1, .disabled = 1,
	};
	__u64 ids[] = { 0 };
	char filler[MAX_PAD + 128], rec[128], last[128];
	size_t flen, len, last_len;
	struct pdata_writer *w;
	struct pdata_reader *r;
	struct pdata_event ev;
	__u64 pos = 0, seen_last = 0, rounds = 0;
	int err = 0, ret, serr;

	w = pdata_writer__open(path, false);
	check(w, "pad %zu: cannot open %s: %s", pad, path, strerror(errno));
	check(!pdata_writer__add_attr(w, &dummy, "dummy:u", ids, 1), "pad %zu: add_attr", pad);
	check(!pdata_writer__begin_data(w), "pad %zu: begin_data", pad);
	flen = padded_comm(filler, sizeof(filler), "filler", pad);
	len = padded_comm(rec, sizeof(rec), "round", 0);
	last_len = padded_comm(last, sizeof(last), "lastword", 0);
	check(flen && len && last_len, "pad %zu: records", pad);
	err = pdata_writer__write(w, filler, flen) ?: pdata_writer__finish_round(w);
	while (!err && rounds++ < 100000)
		err = pdata_writer__write(w, rec, len) ?: pdata_writer__finish_round(w);
	check(err == -ENOSPC, "pad %zu: the disk never filled (%d)", pad, err);
	serr = pdata_writer__salvage(w, last, last_len);
	check(!serr, "pad %zu: salvage could not complete the file: %s", pad, strerror(-serr));
	check(pdata_writer__stats(w)->salvage_record, "pad %zu: no room for the record that counts losses", pad);
	pdata_writer__delete(w);

	r = pdata_reader__open(path);
	check(r, "pad %zu: the salvaged file does not open", pad);
	while ((ret = pdata_reader__next(r, &pos, &ev)) > 0)
		if (ev.header->type == PERF_RECORD_COMM && ev.header->size == last_len &&
		    !memcmp(ev.header, last, last_len))
			seen_last++;
	pdata_reader__delete(r);
	check(ret == 0, "pad %zu: the salvaged file does not read to its end (%d)", pad, ret);
	check(seen_last == 1, "pad %zu: the last record is there %llu times", pad, (unsigned long long)seen_last);
}

int main(void)
{
	char dir[] = "/tmp/auxtrig-full-disk.XXXXXX", path[64];

	if (geteuid()) {
		fprintf(stderr, "SKIP: needs root (mounts a small tmpfs)\n");
		return 77;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (mount("tmpfs", dir, "tmpfs", 0, "size=32k")) {
		fprintf(stderr, "FAIL: cannot mount a tmpfs on %s: %s\n", dir, strerror(errno));
		rmdir(dir);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/f.data", dir);
	log__set_level(LOG_ERR - 1); /* each fill says "No space left on device"; the test says what failed */
	for (size_t pad = 0; pad < MAX_PAD && failures < 5; pad += 8) {
		one_fill(path, pad);
		unlink(path);
	}
	umount(dir);
	rmdir(dir);
	if (!failures)
		printf("a full disk left a complete file at each of %d data ends in a page\n", MAX_PAD / 8);
	return failures ? 1 : 0;
}
