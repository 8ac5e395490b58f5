// SPDX-License-Identifier: BSD-2-Clause
/* Trace Event JSON: slices, instants and names for Perfetto, chrome://tracing, speedscope. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "auxtrig/decode/chrome_trace.h"

struct chrome_trace {
	FILE *out;
	size_t nr;		/* events written, metadata included */
	size_t nr_events;	/* slices and instants */
};

void chrome_trace__json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void meta(struct chrome_trace *ct, const char *what, __u32 pid, __u32 tid, const char *name);

struct chrome_trace *chrome_trace__new(FILE *out)
{
	struct chrome_trace *ct = calloc(1, sizeof(*ct));

	if (!ct)
		return NULL;
	ct->out = out;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"auxtrig\"},\"traceEvents\":[\n", out);
	/*
	 * One event first, so every later one starts with a comma: decode
	 * workers (forked with a copy of this state) then write valid JSON too.
	 */
	meta(ct, "process_name", 0, 0, "no thread (system-wide trace)");
	return ct;
}

/* "{...common part": the separator, ph, pid, tid. */
static void head(struct chrome_trace *ct, const char *ph, __u32 pid, __u32 tid)
{
	fprintf(ct->out, "%s{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u", ct->nr++ ? ",\n" : "", ph, pid, tid);
}

static void ts(FILE *f, const char *key, __u64 ns)
{
	fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, (uint64_t)(ns / 1000), (unsigned int)(ns % 1000));
}

static void args(FILE *f, const struct chrome_arg *a, size_t n)
{
	fputs(",\"args\":{", f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		chrome_trace__json_string(f, a[i].key);
		fputc(':', f);
		if (a[i].str)
			chrome_trace__json_string(f, a[i].str);
		else
			fprintf(f, "%lld", a[i].num);
	}
	fputc('}', f);
}

static void meta(struct chrome_trace *ct, const char *what, __u32 pid, __u32 tid, const char *name)
{
	struct chrome_arg a = { .key = "name", .str = name };

	head(ct, "M", pid, tid);
	fprintf(ct->out, ",\"name\":\"%s\"", what);
	args(ct->out, &a, 1);
	fputc('}', ct->out);
}

void chrome_trace__process(struct chrome_trace *ct, __u32 pid, const char *name)
{
	meta(ct, "process_name", pid, pid, name);
}

void chrome_trace__thread(struct chrome_trace *ct, __u32 pid, __u32 tid, const char *name)
{
	meta(ct, "thread_name", pid, tid, name);
}

void chrome_trace__slice(struct chrome_trace *ct, __u32 pid, __u32 tid, __u64 ts_ns, __u64 dur_ns, const char *name,
			 const char *cat, const struct chrome_arg *a, size_t nr_args)
{
	head(ct, "X", pid, tid);
	fputs(",\"name\":", ct->out);
	chrome_trace__json_string(ct->out, name);
	fprintf(ct->out, ",\"cat\":\"%s\"", cat);
	ts(ct->out, "ts", ts_ns);
	ts(ct->out, "dur", dur_ns);
	args(ct->out, a, nr_args);
	fputc('}', ct->out);
	ct->nr_events++;
}

void chrome_trace__instant(struct chrome_trace *ct, __u32 pid, __u32 tid, __u64 ts_ns, const char *name,
			   const char *cat, const struct chrome_arg *a, size_t nr_args)
{
	head(ct, "i", pid, tid);
	fputs(",\"name\":", ct->out);
	chrome_trace__json_string(ct->out, name);
	fprintf(ct->out, ",\"cat\":\"%s\",\"s\":\"%s\"", cat, tid ? "t" : "g");
	ts(ct->out, "ts", ts_ns);
	args(ct->out, a, nr_args);
	fputc('}', ct->out);
	ct->nr_events++;
}

size_t chrome_trace__nr_events(const struct chrome_trace *ct)
{
	return ct->nr_events;
}

int chrome_trace__finish(struct chrome_trace *ct)
{
	int err;

	fputs("\n]}\n", ct->out);
	err = fflush(ct->out) || ferror(ct->out) ? -EIO : 0;
	free(ct);
	return err;
}
