// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig repair FILE`: complete a perf.data file whose writer died.
 *
 * auxtrig keeps its files complete as they grow (pdata_writer__flush()), but a
 * kill can land between writing a round's data and patching the header. The
 * file then holds whole records past where the header says the data ends, and
 * the feature table that followed the old end is overwritten. The bodies of
 * the features are before the data, and a copy of their table is where the
 * header's event_types section points (perf ignores it), so the file can be
 * completed again: walk the records from the start of the data to the last
 * whole one, put the table after it and patch the header.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/sys/input_file.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/format/pdata.h"

#define MAX_TABLE 32

static const char repair_usage[] =
"USAGE: auxtrig repair [-n] FILE\n"
"\n"
"Complete an auxtrig perf.data file whose recording was killed (SIGKILL, power\n"
"loss): keep every whole record, cut what was half written, and write the\n"
"feature table and header so that perf reads it. A complete file is left as it\n"
"is.\n"
"\n"
"  -n, --dry-run   say what would be done, change nothing\n"
"  -h, --help      this text\n"
"\n"
"EXIT STATUS: 0 repaired or nothing to do, 1 cannot repair, 2 usage error.\n";

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* The end of the last whole record from @pos on, up to @limit, and how many there are. */
static __u64 walk_records(int fd, __u64 pos, __u64 limit, __u64 *nr)
{
	struct perf_event_header h;
	__u64 end, payload;

	*nr = 0;
	while (pos + sizeof(h) <= limit && !pread_all(fd, &h, sizeof(h), pos)) {
		if (h.size < sizeof(h) || h.size % 8 || !h.type || h.type >= PDATA_RECORD_TYPE_MAX)
			break;
		end = pos + h.size;
		if (h.type == PDATA_RECORD_AUXTRACE) {
			if (h.size != sizeof(struct pdata_record_auxtrace) ||
			    pread_all(fd, &payload, sizeof(payload), pos + sizeof(h)) || payload % 8)
				break;
			end += payload;
		}
		if (end > limit)
			break;
		pos = end;
		(*nr)++;
	}
	return pos;
}

/*
 * Complete: the header's data section lies in the file and is followed by the
 * feature table, whose first entries are the copy (the features written before
 * the data; those of the close follow). The records of a file that lost its
 * table can go on past the header's end, and whole-looking records can follow
 * the table: the walk alone cannot tell.
 */
static bool is_complete(int fd, const struct pdata_file_header *h, const struct pdata_file_section *table,
			__u64 tsize, __u64 file_size)
{
	struct pdata_file_section at[MAX_TABLE];
	__u64 end = h->data.offset + h->data.size;

	if (h->data.size > file_size || end > file_size || tsize > file_size - end)
		return false;
	return !pread_all(fd, at, tsize, end) && !memcmp(at, table, tsize);
}

/*
 * The copy of the table is what repair writes: each of its sections must lie
 * in the file before the data (the features written before it), or the
 * repaired file would be one no reader takes.
 */
static int table_check(const struct pdata_file_header *h, const struct pdata_file_section *table, __u64 tsize)
{
	for (size_t i = 0; i < tsize / sizeof(table[0]); i++) {
		if (table[i].offset < sizeof(*h) || table[i].size > h->data.offset ||
		    table[i].offset > h->data.offset - table[i].size)
			return (int)i;
	}
	return -1;
}

/* The table after the data holds one section per feature bit of the header, each inside the file. */
static bool table_usable(int fd, const struct pdata_file_header *h, __u64 file_size)
{
	__u64 end = h->data.offset + h->data.size;
	struct pdata_file_section s;
	int n = 0;

	for (int b = 0; b < 256; b++)
		n += !!(h->adds_features[b / 64] & (1ULL << (b % 64)));
	if (end < h->data.offset || end > file_size || (__u64)n * sizeof(s) > file_size - end)
		return false;
	for (int i = 0; i < n; i++) {
		if (pread_all(fd, &s, sizeof(s), end + i * sizeof(s)) || s.offset < sizeof(*h) ||
		    s.size > file_size || s.offset > file_size - s.size)
			return false;
	}
	return true;
}

/* Opened without following a link or blocking on a FIFO, and only a regular file: repair writes in place. */
static int repair_open(const char *path, bool dry_run, struct stat *st)
{
	int fd = open(path, (dry_run ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int err = -errno;

	if (fd < 0 && err != -ENOENT && !lstat(path, st) && !S_ISREG(st->st_mode)) {
		/* O_NOFOLLOW's ELOOP, a socket's ENXIO: name what it is */
		pr_err("cannot repair %s: it is %s, not a regular file (repair changes a file in place%s)\n", path,
		       input_file__kind(st), S_ISLNK(st->st_mode) ? ": give the file itself" : "");
		return err;
	}
	if (fd < 0) {
		pr_err("cannot open %s: %s\n", path, strerror(-err));
		return err;
	}
	if (fstat(fd, st)) {
		err = -errno;
		pr_err("cannot stat %s: %s\n", path, strerror(-err));
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		pr_err("cannot repair %s: it is %s, not a regular file (repair changes a file in place; auxtrig script -i reads a pipe)\n",
		       path, input_file__kind(st));
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int repair(const char *path, bool dry_run)
{
	struct pdata_file_section table[MAX_TABLE];
	struct pdata_file_header h;
	__u64 cut, end, nr, tsize, bits[4];
	char diff[96];
	struct stat st;
	int fd, err, nbits = 0;

	fd = repair_open(path, dry_run, &st);
	if (fd < 0)
		return EXIT_RUNTIME;
	err = pread_all(fd, &h, sizeof(h), 0);
	if (err || h.magic != PDATA_MAGIC || h.size != sizeof(h)) {
		pr_err("%s is not a perf.data file (no PERFILE2 header)\n", path);
		goto fail;
	}
	tsize = h.event_types.size;
	if (!tsize || tsize % sizeof(table[0]) || tsize > sizeof(table) || h.event_types.offset < sizeof(h) ||
	    h.event_types.offset > h.data.offset || tsize > h.data.offset - h.event_types.offset ||
	    h.data.offset > (__u64)st.st_size) {
		pr_err("%s was not written by auxtrig (no copy of its feature table): cannot repair it\n",
		       path);
		goto fail;
	}
	if (pread_all(fd, table, tsize, h.event_types.offset)) {
		pr_err("cannot read %s: %s\n", path, strerror(errno));
		goto fail;
	}
	end = h.data.offset + h.data.size;
	if (is_complete(fd, &h, table, tsize, st.st_size)) {
		walk_records(fd, h.data.offset, end, &nr);
		printf("%s is complete: %llu records, nothing to repair\n", path, (unsigned long long)nr);
		close(fd);
		return EXIT_OK;
	}
	cut = walk_records(fd, h.data.offset, st.st_size, &nr);
	if (cut == end && table_usable(fd, &h, st.st_size)) {
		/*
		 * The records end where the header says and a table readers take
		 * follows them: only its copy differs, which perf ignores.
		 * Rewriting the table from the copy could make a readable file
		 * unreadable: change nothing.
		 */
		printf("%s: its %llu records end where the header says; its feature table differs from the copy "
		       "(perf ignores the copy): nothing to repair\n", path, (unsigned long long)nr);
		close(fd);
		return EXIT_OK;
	}
	if (cut < end && end <= (__u64)st.st_size) {
		/*
		 * All the data the header names is in the file, but a record in it
		 * does not read: damage, not a killed write (which leaves records
		 * past the header's end, or a file cut short). Cutting there would
		 * throw away what readers still read after it.
		 */
		pr_err("%s: a record at %#llx inside the data the header names is damaged; this is not a killed recording: not cut\n",
		       path, (unsigned long long)cut);
		goto fail;
	}
	err = table_check(&h, table, tsize);
	if (err >= 0) {
		pr_err("%s: its copy of the feature table is damaged (entry %d lies outside the features before the data): cannot repair it\n",
		       path, err);
		goto fail;
	}
	if (cut == end)
		snprintf(diff, sizeof(diff), "as the header said, without the feature table");
	else
		snprintf(diff, sizeof(diff), "%llu %s bytes than the header said",
			 (unsigned long long)(cut > end ? cut - end : end - cut), cut > end ? "more" : "fewer");
	printf("%s: keeping %llu records (%.1f KiB of data, %s); cutting %llu bytes\n", path, (unsigned long long)nr,
	       (cut - h.data.offset) / 1024.0, diff, (unsigned long long)(st.st_size - cut));
	if (dry_run) {
		close(fd);
		return EXIT_OK;
	}
	/*
	 * Only the features written before the data exist (those of the close
	 * come after the table, and are gone with it). They have the lowest
	 * bits, one per entry of the copy: keep exactly those.
	 */
	h.data.size = cut - h.data.offset;
	memcpy(bits, h.adds_features, sizeof(bits));
	memset(h.adds_features, 0, sizeof(h.adds_features));
	for (int b = 0; b < 256 && (__u64)nbits * sizeof(table[0]) < tsize; b++) {
		if (!(bits[b / 64] & (1ULL << (b % 64))))
			continue;
		h.adds_features[b / 64] |= 1ULL << (b % 64);
		nbits++;
	}
	if ((__u64)nbits * sizeof(table[0]) != tsize) {
		pr_err("%s: the header's feature bits do not match the table copy: cannot repair it\n", path);
		goto fail;
	}
	if (pwrite(fd, table, tsize, cut) != (ssize_t)tsize || ftruncate(fd, cut + tsize) ||
	    pwrite(fd, &h, sizeof(h), 0) != sizeof(h) || fsync(fd)) {
		pr_err("cannot write %s: %s\n", path, strerror(errno));
		goto fail;
	}
	close(fd);
	return EXIT_OK;
fail:
	close(fd);
	return EXIT_RUNTIME;
}

int cmd_repair(int argc, char **argv)
{
	static const struct option options[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool dry_run = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "nh", options, NULL)) != -1) {
		switch (c) {
		case 'n':
			dry_run = true;
			break;
		case 'h':
			fputs(repair_usage, stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "(try: auxtrig repair --help)\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		pr_err("repair takes one FILE (try: auxtrig repair --help)\n");
		return EXIT_USAGE;
	}
	return repair(argv[optind], dry_run);
}
