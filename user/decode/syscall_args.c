// SPDX-License-Identifier: BSD-2-Clause
/*
 * A system call's arguments and return value as text: see
 * include/auxtrig/decode/syscall_args.h. The flag values are the kernel's
 * uapi headers' (include/uapi/asm-generic/fcntl.h, mman-common.h,
 * linux/fcntl.h; arch/arm64/include/uapi/asm/fcntl.h), for the recording's
 * architecture, not this machine's.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "auxtrig/decode/syscall_args.h"
#include "auxtrig/sys/errno_name.h"

struct flag_name {
	__u64 bits;	/* all of them set: the name applies */
	const char *name;
};

/* O_* after the access mode; O_SYNC and O_TMPFILE before the bits they include. */
static const struct flag_name o_flags_x86_64[] = {
	{ 04010000, "O_SYNC" },	    { 020200000, "O_TMPFILE" }, { 0100, "O_CREAT" },	 { 0200, "O_EXCL" },
	{ 0400, "O_NOCTTY" },	    { 01000, "O_TRUNC" },	{ 02000, "O_APPEND" },	 { 04000, "O_NONBLOCK" },
	{ 010000, "O_DSYNC" },	    { 020000, "FASYNC" },	{ 040000, "O_DIRECT" },	 { 0100000, "O_LARGEFILE" },
	{ 0200000, "O_DIRECTORY" }, { 0400000, "O_NOFOLLOW" },	{ 01000000, "O_NOATIME" }, { 02000000, "O_CLOEXEC" },
	{ 010000000, "O_PATH" },    { 0 },
};

static const struct flag_name o_flags_arm64[] = {
	{ 04010000, "O_SYNC" },	    { 020040000, "O_TMPFILE" }, { 0100, "O_CREAT" },	 { 0200, "O_EXCL" },
	{ 0400, "O_NOCTTY" },	    { 01000, "O_TRUNC" },	{ 02000, "O_APPEND" },	 { 04000, "O_NONBLOCK" },
	{ 010000, "O_DSYNC" },	    { 020000, "FASYNC" },	{ 040000, "O_DIRECTORY" }, { 0100000, "O_NOFOLLOW" },
	{ 0200000, "O_DIRECT" },    { 0400000, "O_LARGEFILE" }, { 01000000, "O_NOATIME" }, { 02000000, "O_CLOEXEC" },
	{ 010000000, "O_PATH" },    { 0 },
};

#define O_CREAT_BIT	0100
#define O_TMPFILE_BIT	020000000	/* __O_TMPFILE, the same on both */

static const struct flag_name at_flags[] = {
	{ 0x100, "AT_SYMLINK_NOFOLLOW" }, { 0x400, "AT_SYMLINK_FOLLOW" },  { 0x800, "AT_NO_AUTOMOUNT" },
	{ 0x1000, "AT_EMPTY_PATH" },	  { 0x2000, "AT_STATX_FORCE_SYNC" }, { 0x4000, "AT_STATX_DONT_SYNC" },
	{ 0x8000, "AT_RECURSIVE" },	  { 0 },
};

static const struct flag_name faccessat_flags[] = {
	{ 0x200, "AT_EACCESS" }, { 0x100, "AT_SYMLINK_NOFOLLOW" }, { 0x1000, "AT_EMPTY_PATH" }, { 0 },
};

static const struct flag_name unlinkat_flags[] = { { 0x200, "AT_REMOVEDIR" }, { 0 } };

static const struct flag_name rename_flags[] = {
	{ 1, "RENAME_NOREPLACE" }, { 2, "RENAME_EXCHANGE" }, { 4, "RENAME_WHITEOUT" }, { 0 },
};

static const struct flag_name prot_flags[] = {
	{ 1, "PROT_READ" },	     { 2, "PROT_WRITE" },	     { 4, "PROT_EXEC" }, { 8, "PROT_SEM" },
	{ 0x01000000, "PROT_GROWSDOWN" }, { 0x02000000, "PROT_GROWSUP" }, { 0 },
};

static const struct flag_name prot_flags_arm64[] = {
	{ 1, "PROT_READ" },    { 2, "PROT_WRITE" },	      { 4, "PROT_EXEC" },
	{ 8, "PROT_SEM" },     { 0x10, "PROT_BTI" },	      { 0x20, "PROT_MTE" },
	{ 0x01000000, "PROT_GROWSDOWN" }, { 0x02000000, "PROT_GROWSUP" }, { 0 },
};

/* after the type (the low 4 bits: MAP_SHARED, MAP_PRIVATE, ...) */
static const struct flag_name map_flags_x86_64[] = {
	{ 0x10, "MAP_FIXED" },	     { 0x20, "MAP_ANONYMOUS" },	     { 0x40, "MAP_32BIT" },
	{ 0x80, "MAP_ABOVE4G" },     { 0x100, "MAP_GROWSDOWN" },     { 0x800, "MAP_DENYWRITE" },
	{ 0x1000, "MAP_EXECUTABLE" }, { 0x2000, "MAP_LOCKED" },	     { 0x4000, "MAP_NORESERVE" },
	{ 0x8000, "MAP_POPULATE" },  { 0x10000, "MAP_NONBLOCK" },    { 0x20000, "MAP_STACK" },
	{ 0x40000, "MAP_HUGETLB" },  { 0x80000, "MAP_SYNC" },	     { 0x100000, "MAP_FIXED_NOREPLACE" },
	{ 0x4000000, "MAP_UNINITIALIZED" }, { 0 },
};

static const struct flag_name map_flags_arm64[] = {
	{ 0x10, "MAP_FIXED" },	     { 0x20, "MAP_ANONYMOUS" },	     { 0x100, "MAP_GROWSDOWN" },
	{ 0x800, "MAP_DENYWRITE" },  { 0x1000, "MAP_EXECUTABLE" },   { 0x2000, "MAP_LOCKED" },
	{ 0x4000, "MAP_NORESERVE" }, { 0x8000, "MAP_POPULATE" },     { 0x10000, "MAP_NONBLOCK" },
	{ 0x20000, "MAP_STACK" },    { 0x40000, "MAP_HUGETLB" },     { 0x80000, "MAP_SYNC" },
	{ 0x100000, "MAP_FIXED_NOREPLACE" }, { 0x4000000, "MAP_UNINITIALIZED" }, { 0 },
};

static const struct flag_name access_modes[] = { { 4, "R_OK" }, { 2, "W_OK" }, { 1, "X_OK" }, { 0 } };

enum arg_kind {
	ARG_PLAIN,
	ARG_O_FLAGS,
	ARG_AT_FLAGS,
	ARG_FACCESSAT_FLAGS,
	ARG_UNLINKAT_FLAGS,
	ARG_RENAME_FLAGS,
	ARG_PROT,
	ARG_MAP_FLAGS,
	ARG_ACCESS_MODE,
	ARG_FILE_MODE,
};

/* Which calls' which argument is a flag set (calls by tracepoint name, "" ends a list). */
static const struct {
	const char *calls[12];
	const char *arg;
	enum arg_kind kind;
} arg_kinds[] = {
	{ { "open", "openat", "open_by_handle_at", "" }, "flags", ARG_O_FLAGS },
	{ { "newfstatat", "fstatat64", "statx", "fchownat", "linkat", "utimensat", "execveat", "fchmodat2",
	    "open_tree", "mount_setattr", "" }, "flag", ARG_AT_FLAGS },
	{ { "newfstatat", "fstatat64", "statx", "fchownat", "linkat", "utimensat", "execveat", "fchmodat2",
	    "open_tree", "mount_setattr", "" }, "flags", ARG_AT_FLAGS },
	{ { "faccessat2", "" }, "flags", ARG_FACCESSAT_FLAGS },
	{ { "unlinkat", "" }, "flag", ARG_UNLINKAT_FLAGS },
	{ { "renameat2", "" }, "flags", ARG_RENAME_FLAGS },
	{ { "mmap", "mprotect", "pkey_mprotect", "remap_file_pages", "" }, "prot", ARG_PROT },
	{ { "mmap", "" }, "flags", ARG_MAP_FLAGS },
	{ { "access", "faccessat", "faccessat2", "" }, "mode", ARG_ACCESS_MODE },
	{ { "open", "openat", "creat", "mkdir", "mkdirat", "chmod", "fchmod", "fchmodat", "fchmodat2", "mknod",
	    "mknodat", "" }, "mode", ARG_FILE_MODE },
};

static enum arg_kind kind_of(const char *call, const char *arg)
{
	for (size_t i = 0; i < sizeof(arg_kinds) / sizeof(arg_kinds[0]); i++) {
		if (strcmp(arg_kinds[i].arg, arg))
			continue;
		for (size_t c = 0; arg_kinds[i].calls[c][0]; c++)
			if (!strcmp(arg_kinds[i].calls[c], call))
				return arg_kinds[i].kind;
	}
	return ARG_PLAIN;
}

/* A bounded appender: the text stays NUL-terminated, what does not fit is cut. */
struct text {
	char *buf;
	size_t size, len;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len + 1 >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len = t->len + (size_t)n < t->size ? t->len + (size_t)n : t->size - 1;
}

/* @v's bits by @names, '|'-joined, after @first (already printed) if any; the rest as 0x... */
static void put_flags(struct text *t, __u64 v, const struct flag_name *names, bool first)
{
	for (size_t i = 0; names[i].bits; i++) {
		if ((v & names[i].bits) != names[i].bits)
			continue;
		put(t, "%s%s", first ? "|" : "", names[i].name);
		v &= ~names[i].bits;
		first = true;
	}
	if (v || !first)
		put(t, first ? "|%#" PRIx64 : "%#" PRIx64, (uint64_t)v);
}

static bool is_arm64(const char *arch)
{
	return arch && (!strcmp(arch, "arm64") || !strcmp(arch, "aarch64"));
}

/* The argument's integer value as its declared type says: an int is the low 4 bytes, sign-extended. */
static __s64 int_value(const struct tp_field *f, __u64 raw, bool *is_signed)
{
	unsigned int size;
	bool sgn;

	if (tp_field__int_type(f, &size, &sgn)) {
		size = f->size < 8 ? f->size : 8;
		sgn = f->is_signed;
	}
	*is_signed = sgn;
	if (size >= 8)
		return (__s64)raw;
	raw &= (1ULL << (size * 8)) - 1;
	if (sgn && (raw >> (size * 8 - 1)))
		raw |= ~0ULL << (size * 8);
	return (__s64)raw;
}

static bool name_has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

static void put_value(struct text *t, const char *call, const char *arch, const struct syscall_arg *a)
{
	const struct tp_field *f = a->field;
	const char *name = f->name;
	enum arg_kind kind = kind_of(call, name);
	char quoted[1100];
	bool sgn;
	__s64 v;

	if (a->str) {
		put(t, "%s", syscall_args__quote(a->str, quoted, sizeof(quoted)));
		return;
	}
	if (strchr(f->type, '*') || f->is_array) {
		if (a->value)
			put(t, "%#" PRIx64, (uint64_t)a->value);
		else
			put(t, "NULL");
		return;
	}
	v = int_value(f, a->value, &sgn);
	switch (kind) {
	case ARG_O_FLAGS:
		put(t, "%s", (v & 3) == 0 ? "O_RDONLY" : (v & 3) == 1 ? "O_WRONLY" : (v & 3) == 2 ? "O_RDWR" : "O_ACCMODE");
		put_flags(t, (__u64)v & ~3ULL & 0xffffffffULL, is_arm64(arch) ? o_flags_arm64 : o_flags_x86_64, true);
		return;
	case ARG_AT_FLAGS:
		put_flags(t, (__u64)v & 0xffffffffULL, at_flags, false);
		return;
	case ARG_FACCESSAT_FLAGS:
		put_flags(t, (__u64)v & 0xffffffffULL, faccessat_flags, false);
		return;
	case ARG_UNLINKAT_FLAGS:
		put_flags(t, (__u64)v & 0xffffffffULL, unlinkat_flags, false);
		return;
	case ARG_RENAME_FLAGS:
		put_flags(t, (__u64)v & 0xffffffffULL, rename_flags, false);
		return;
	case ARG_PROT:
		if (!v)
			put(t, "PROT_NONE");
		else
			put_flags(t, (__u64)v, is_arm64(arch) ? prot_flags_arm64 : prot_flags, false);
		return;
	case ARG_MAP_FLAGS: {
		static const char *const types[16] = { [1] = "MAP_SHARED", [2] = "MAP_PRIVATE", [3] = "MAP_SHARED_VALIDATE",
						       [8] = "MAP_DROPPABLE" };
		const char *type = types[v & 0xf];

		if (type)
			put(t, "%s", type);
		else
			put(t, "%#" PRIx64, (uint64_t)(v & 0xf));
		put_flags(t, (__u64)v & ~0xfULL, is_arm64(arch) ? map_flags_arm64 : map_flags_x86_64, true);
		return;
	}
	case ARG_ACCESS_MODE:
		if (!v)
			put(t, "F_OK");
		else
			put_flags(t, (__u64)v & 0xffffffffULL, access_modes, false);
		return;
	case ARG_FILE_MODE:
		put(t, "%#" PRIo64, (uint64_t)v);
		return;
	case ARG_PLAIN:
		break;
	}
	if (name_has(name, "dfd") || !strcmp(name, "dirfd")) {
		if ((int)v == -100)
			put(t, "AT_FDCWD");
		else
			put(t, "%d", (int)v);
	} else if (!strcmp(name, "fd") || name_has(name, "_fd") || !strcmp(name, "fildes")) {
		put(t, "%d", (int)v);	/* an fd in an unsigned long (mmap's): -1 is -1 */
	} else if (name_has(name, "flag") || name_has(name, "mask") || name_has(name, "addr")) {
		put(t, "%#" PRIx64, (uint64_t)v);
	} else if (sgn) {
		put(t, "%" PRId64, (int64_t)v);
	} else {
		put(t, "%" PRIu64, (uint64_t)v);
	}
}

void syscall_args__format(const char *call, const char *arch, const struct syscall_arg *args, size_t nr, char *buf,
			  size_t size)
{
	struct text t = { buf, size, 0 };
	bool sep = false;
	__u64 oflags = 0;
	bool open_like = !strcmp(call, "open") || !strcmp(call, "openat");

	if (!size)
		return;
	buf[0] = '\0';
	for (size_t i = 0; open_like && i < nr; i++)
		if (!strcmp(args[i].field->name, "flags"))
			oflags = args[i].value;
	for (size_t i = 0; i < nr; i++) {
		/* the kernel ignores open's mode without O_CREAT or O_TMPFILE: strace and perf trace leave it out */
		if (open_like && !strcmp(args[i].field->name, "mode") && !(oflags & (O_CREAT_BIT | O_TMPFILE_BIT)))
			continue;
		put(&t, "%s%s: ", sep ? ", " : "", args[i].field->name);
		put_value(&t, call, arch, &args[i]);
		sep = true;
	}
}

void syscall_args__ret(const char *call, __s64 ret, char *buf, size_t size)
{
	const struct errno_entry *e;

	/* -4095..-1 are errors (the kernel's IS_ERR_VALUE), whatever the call returns */
	if (ret < 0 && ret >= -4095) {
		e = errno_name__find((int)-ret);
		if (e && e->text[0])
			snprintf(buf, size, "-1 %s (%s)", e->name, e->text);
		else if (e)
			snprintf(buf, size, "-1 %s", e->name);
		else
			snprintf(buf, size, "-1 errno %d", (int)-ret);
		return;
	}
	if (!strcmp(call, "mmap") || !strcmp(call, "mremap") || !strcmp(call, "brk") || !strcmp(call, "shmat"))
		snprintf(buf, size, "%#" PRIx64, (uint64_t)ret);
	else
		snprintf(buf, size, "%" PRId64, (int64_t)ret);
}

char *syscall_args__quote(const char *s, char *buf, size_t size)
{
	struct text t = { buf, size, 0 };

	if (size < 3) {
		if (size)
			buf[0] = '\0';
		return buf;
	}
	t.size = size - 1;	/* room for the closing quote */
	put(&t, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p && t.len + 1 < t.size; p++) {
		switch (*p) {
		case '"': put(&t, "\\\""); break;
		case '\\': put(&t, "\\\\"); break;
		case '\n': put(&t, "\\n"); break;
		case '\t': put(&t, "\\t"); break;
		case '\r': put(&t, "\\r"); break;
		default:
			if (*p < 0x20 || *p >= 0x7f)
				put(&t, "\\x%02x", *p);
			else
				put(&t, "%c", *p);
		}
	}
	buf[t.len++] = '"';
	buf[t.len] = '\0';
	return buf;
}
