// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxtrig/lang/point.h"
#include "auxtrig/sys/arch.h"

static const char *const kind_names[] = {
	[POINT_TP] = "tracepoint", [POINT_UPROBE] = "uprobe", [POINT_URETPROBE] = "uretprobe",
	[POINT_USDT] = "usdt",	   [POINT_KPROBE] = "kprobe", [POINT_KRETPROBE] = "kretprobe",
	[POINT_MEM] = "mem",
};

const char *point__kind_name(enum point_kind kind)
{
	return kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

/* C identifiers; kernel symbols may also carry '.' suffixes (foo.isra.0). */
static bool is_ident(const char *s, bool dots)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && !(dots && *s == '.'))
			return false;
	return true;
}

/* Copy [s, s + n) into dst (size), refusing what does not fit. */
static bool copy_part(char *dst, size_t size, const char *s, size_t n)
{
	if (n >= size)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

/* "SYMBOL[+OFF]" */
static int parse_symbol_offset(struct point *p, const char *s, bool offset_ok, bool dots, char *why,
			       size_t why_size)
{
	const char *plus = strchr(s, '+');
	char *end;

	if (!copy_part(p->symbol, sizeof(p->symbol), s, plus ? (size_t)(plus - s) : strlen(s)) ||
	    !is_ident(p->symbol, dots)) {
		snprintf(why, why_size, "'%.*s' is not a symbol name", plus ? (int)(plus - s) : (int)strlen(s), s);
		return -EINVAL;
	}
	if (!plus)
		return 0;
	if (!offset_ok) {
		snprintf(why, why_size, "a return probe takes no +OFFSET");
		return -EINVAL;
	}
	errno = 0;
	p->offset = strtoul(plus + 1, &end, 0);
	if (errno || *end || end == plus + 1 || plus[1] == '-') {
		snprintf(why, why_size, "bad offset '%s'", plus + 1);
		return -EINVAL;
	}
	return 0;
}

/* "PATH:REST": PATH may not contain ':'. */
static int split_path(struct point *p, const char *s, const char **rest, char *why, size_t why_size)
{
	const char *colon = strchr(s, ':');

	if (!colon || colon == s || !copy_part(p->path, sizeof(p->path), s, colon - s)) {
		snprintf(why, why_size, "expected a file path before ':'");
		return -EINVAL;
	}
	*rest = colon + 1;
	return 0;
}

static int parse_syscall(struct point *p, const char *s, char *why, size_t why_size)
{
	const char *colon = strrchr(s, ':');
	char name[TP_NAME_MAX];

	if (!colon || !copy_part(name, sizeof(name) - 16, s, colon - s) ||
	    (strcmp(colon + 1, "enter") && strcmp(colon + 1, "exit"))) {
		snprintf(why, why_size, "expected syscall:NAME:enter or syscall:NAME:exit (NAME may be *)");
		return -EINVAL;
	}
	p->kind = POINT_TP;
	p->at_enter = !strcmp(colon + 1, "enter");
	p->at_exit = !p->at_enter;
	if (!strcmp(name, "*")) {
		snprintf(p->sys, sizeof(p->sys), "raw_syscalls");
		snprintf(p->name, sizeof(p->name), "%s", p->at_enter ? "sys_enter" : "sys_exit");
		return 0;
	}
	if (!is_ident(name, false)) {
		snprintf(why, why_size, "'%s' is not a syscall name", name);
		return -EINVAL;
	}
	snprintf(p->sys, sizeof(p->sys), "syscalls");
	snprintf(p->name, sizeof(p->name), "sys_%s_%s", p->at_enter ? "enter" : "exit", name);
	return 0;
}

static int parse_tp(struct point *p, const char *s, char *why, size_t why_size)
{
	const char *colon = strchr(s, ':');

	p->kind = POINT_TP;
	if (!colon || !copy_part(p->sys, sizeof(p->sys), s, colon - s) ||
	    !copy_part(p->name, sizeof(p->name), colon + 1, strlen(colon + 1)) || !is_ident(p->sys, false) ||
	    !is_ident(p->name, false)) {
		snprintf(why, why_size, "expected tp:SYSTEM:EVENT");
		return -EINVAL;
	}
	return 0;
}

static int parse_usdt(struct point *p, const char *s, char *why, size_t why_size)
{
	const char *rest, *colon;

	p->kind = POINT_USDT;
	p->at_enter = true;
	if (split_path(p, s, &rest, why, why_size))
		goto bad;
	colon = strchr(rest, ':');
	if (!colon || !copy_part(p->provider, sizeof(p->provider), rest, colon - rest) ||
	    !copy_part(p->symbol, sizeof(p->symbol), colon + 1, strlen(colon + 1)))
		goto bad;
	if (!is_ident(p->provider, false) || !is_ident(p->symbol, false)) {
		snprintf(why, why_size, "'%s' is not PROVIDER:NAME", rest);
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(why, why_size, "expected usdt:PATH:PROVIDER:NAME");
	return -EINVAL;
}

bool point__mem_read_only_ok(void)
{
	const struct arch *a = arch__host();

	return !a || a->bp_read_only; /* x86's DR7 has no read-only condition: reads are watched only with writes */
}

/* "ADDR[/LEN][:ACCESS]" or "PATH:SYMBOL[/LEN][:ACCESS]" */
static int parse_mem(struct point *p, const char *s, char *why, size_t why_size)
{
	const struct arch *arch = arch__host();
	char part[3][4096], *slash, *end;
	const char *at = s, *acc = NULL;
	int n = 0;
	char *what;

	p->kind = POINT_MEM;
	while (n < 3) {
		const char *colon = strchr(at, ':');
		size_t len = colon ? (size_t)(colon - at) : strlen(at);

		if (!copy_part(part[n], sizeof(part[n]), at, len))
			goto bad;
		n++;
		if (!colon)
			break;
		at = colon + 1;
		if (n == 3)
			goto bad;
	}
	if (isdigit((unsigned char)part[0][0])) {
		if (n > 2)
			goto bad;
		what = part[0];
		acc = n == 2 ? part[1] : NULL;
	} else {
		if (n < 2 || !copy_part(p->path, sizeof(p->path), part[0], strlen(part[0])) || !part[0][0])
			goto bad;
		what = part[1];
		acc = n == 3 ? part[2] : NULL;
	}
	slash = strchr(what, '/');
	if (slash)
		*slash = '\0';
	if (p->path[0]) {
		if (!copy_part(p->symbol, sizeof(p->symbol), what, strlen(what)) || !is_ident(p->symbol, false)) {
			snprintf(why, why_size, "'%s' is not a symbol name", what);
			return -EINVAL;
		}
	} else {
		errno = 0;
		p->offset = strtoul(what, &end, 0);
		if (errno || *end || !p->offset) {
			snprintf(why, why_size, "bad address '%s'", what);
			return -EINVAL;
		}
	}
	p->access = POINT_MEM_R | POINT_MEM_W;
	if (acc) {
		if (!strcmp(acc, "r"))
			p->access = POINT_MEM_R;
		else if (!strcmp(acc, "w"))
			p->access = POINT_MEM_W;
		else if (!strcmp(acc, "rw"))
			p->access = POINT_MEM_R | POINT_MEM_W;
		else if (!strcmp(acc, "x"))
			p->access = POINT_MEM_X;
		else {
			snprintf(why, why_size, "access '%s': expected r, w, rw or x", acc);
			return -EINVAL;
		}
	}
	if (p->access == POINT_MEM_R && !point__mem_read_only_ok()) {
		snprintf(why, why_size,
			 "x86 has no read-only hardware breakpoints: it offers w (writes) and rw (reads and writes)");
		return -EINVAL;
	}
	/* an execute breakpoint watches one instruction's worth, as the architecture counts it */
	p->len = p->access == POINT_MEM_X ? (arch ? arch->bp_exec_len : sizeof(long)) : 4;
	if (slash) {
		p->len = strtoul(slash + 1, &end, 0);
		if (*end || (p->len != 1 && p->len != 2 && p->len != 4 && p->len != 8)) {
			snprintf(why, why_size, "length '%s': expected 1, 2, 4 or 8", slash + 1);
			return -EINVAL;
		}
	}
	/* a symbol's address is known only later: its length alone is checked here, the kernel checks the rest */
	if (arch && arch__check_watch(arch, p->path[0] ? 0 : p->offset, p->len, p->access == POINT_MEM_X, why, why_size))
		return -EINVAL;
	return 0;
bad:
	snprintf(why, why_size, "expected mem:ADDR[/LEN][:r|w|rw|x] or mem:PATH:SYMBOL[/LEN][:r|w|rw|x]");
	return -EINVAL;
}

int point__parse(struct point *p, const char *text, char *why, size_t why_size)
{
	const char *rest;

	memset(p, 0, sizeof(*p));
	why[0] = '\0';
	if (!strncmp(text, "syscall:", 8))
		return parse_syscall(p, text + 8, why, why_size);
	if (!strncmp(text, "tp:", 3))
		return parse_tp(p, text + 3, why, why_size);
	if (!strncmp(text, "uprobe:", 7) || !strncmp(text, "uretprobe:", 10)) {
		bool ret = text[1] == 'r';

		p->kind = ret ? POINT_URETPROBE : POINT_UPROBE;
		p->at_enter = !ret;
		p->at_exit = ret;
		if (split_path(p, text + (ret ? 10 : 7), &rest, why, why_size) || !*rest) {
			snprintf(why, why_size, "expected %s:PATH:SYMBOL%s", ret ? "uretprobe" : "uprobe",
				 ret ? "" : "[+OFFSET]");
			return -EINVAL;
		}
		return parse_symbol_offset(p, rest, !ret, false, why, why_size);
	}
	if (!strncmp(text, "usdt:", 5))
		return parse_usdt(p, text + 5, why, why_size);
	if (!strncmp(text, "kprobe:", 7) || !strncmp(text, "kretprobe:", 10)) {
		bool ret = text[1] == 'r';

		p->kind = ret ? POINT_KRETPROBE : POINT_KPROBE;
		p->at_enter = !ret;
		p->at_exit = ret;
		return parse_symbol_offset(p, text + (ret ? 10 : 7), !ret, true, why, why_size);
	}
	if (!strncmp(text, "mem:", 4))
		return parse_mem(p, text + 4, why, why_size);
	snprintf(why, why_size,
		 "unknown point: expected syscall:, tp:, uprobe:, uretprobe:, usdt:, kprobe:, kretprobe: or mem:");
	return -EINVAL;
}

int point__check_path(const struct point *p, char *why, size_t why_size)
{
	unsigned char magic[4] = { 0 };
	struct stat st;
	int fd;

	if (!p->path[0])
		return 0;
	if (stat(p->path, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "no such file: %s", p->path);
		return -ENOENT;
	}
	/* What libbpf would say with its own errno 4001 ("Unknown error 4001" through strerror()). */
	fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || read(fd, magic, sizeof(magic)) != sizeof(magic) || memcmp(magic, "\177ELF", 4)) {
		int err = fd < 0 ? errno : 0;

		if (fd >= 0)
			close(fd);
		if (err)
			snprintf(why, why_size, "cannot read %s: %s", p->path, strerror(err));
		else
			snprintf(why, why_size, "%s is not an ELF file: a %s point needs an executable or a shared library",
				 p->path, point__kind_name(p->kind));
		return err ? -err : -ENOEXEC;
	}
	close(fd);
	return 0;
}

void point__format(const struct point *p, char *buf, size_t size)
{
	const char *acc = p->access == POINT_MEM_X ? "x" : p->access == POINT_MEM_R ? "r" :
			  p->access == POINT_MEM_W ? "w" : "rw";

	switch (p->kind) {
	case POINT_TP:
		snprintf(buf, size, "tp:%s:%s", p->sys, p->name);
		break;
	case POINT_UPROBE:
	case POINT_URETPROBE:
		snprintf(buf, size, "%s:%s:%s", point__kind_name(p->kind), p->path, p->symbol);
		break;
	case POINT_USDT:
		snprintf(buf, size, "usdt:%s:%s:%s", p->path, p->provider, p->symbol);
		break;
	case POINT_KPROBE:
	case POINT_KRETPROBE:
		snprintf(buf, size, "%s:%s", point__kind_name(p->kind), p->symbol);
		break;
	case POINT_MEM:
		if (p->path[0])
			snprintf(buf, size, "mem:%s:%s/%u:%s", p->path, p->symbol, p->len, acc);
		else
			snprintf(buf, size, "mem:0x%lx/%u:%s", p->offset, p->len, acc);
		return;
	}
	if (p->offset && (p->kind == POINT_UPROBE || p->kind == POINT_KPROBE)) {
		size_t n = strlen(buf);

		snprintf(buf + n, size - n, "+0x%lx", p->offset);
	}
}
