// SPDX-License-Identifier: BSD-2-Clause
/* A raw tracepoint record printed as its print fmt says (as perf script does). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/format/tp_print.h"

bool tp_field__is_str(const struct tp_field *f)
{
	return strstr(f->type, "char") && !strchr(f->type, '*') && (f->is_dynamic || f->size > 1);
}

int tp_field__int(const struct tp_field *f, const void *raw, size_t size, __s64 *v)
{
	const unsigned char *p = raw;
	__u64 u = 0;

	if (tp_field__is_str(f))
		return -EINVAL;
	if ((size_t)f->offset + f->size > size)
		return -ERANGE;
	switch (f->size) {
	case 1: { __u8 x; memcpy(&x, p + f->offset, 1); *v = f->is_signed ? (__s64)(__s8)x : (__s64)x; return 0; }
	case 2: { __u16 x; memcpy(&x, p + f->offset, 2); *v = f->is_signed ? (__s64)(__s16)x : (__s64)x; return 0; }
	case 4: { __u32 x; memcpy(&x, p + f->offset, 4); *v = f->is_signed ? (__s64)(__s32)x : (__s64)x; return 0; }
	case 8: memcpy(&u, p + f->offset, 8); *v = (__s64)u; return 0;
	default: return -EINVAL;
	}
}

const char *tp_field__str(const struct tp_field *f, const void *raw, size_t size, char *buf, size_t bufsize)
{
	const unsigned char *p = raw;
	size_t off = f->offset, len = f->size;

	if (!tp_field__is_str(f) || (size_t)f->offset + f->size > size || !bufsize)
		return NULL;
	if (f->is_dynamic) {
		__u32 loc;

		if (f->size != 4)
			return NULL;
		memcpy(&loc, p + f->offset, 4);
		off = (loc & 0xffff) + (f->is_rel ? f->offset + f->size : 0);
		len = loc >> 16;
		if (off > size || len > size - off)
			return NULL;
	}
	len = strnlen((const char *)p + off, len);
	if (len >= bufsize)
		len = bufsize - 1;
	memcpy(buf, p + off, len);
	buf[len] = '\0';
	return buf;
}

/* ---- evaluating the arguments ------------------------------------------- */

struct val {
	int is_str;
	__s64 i;
	const char *s;
};

struct eval {
	const struct tp_format *fmt;
	const void *raw;
	size_t size;
	const char *p;		/* the cursor in the argument text */
	int bad;
	int depth;		/* of nested expressions: bounded */
	char arena[4096];	/* strings made while evaluating */
	size_t used;
};

static char *arena_alloc(struct eval *e, size_t n)
{
	char *s;

	if (n > sizeof(e->arena) - e->used) {
		e->bad = 1;
		return NULL;
	}
	s = e->arena + e->used;
	e->used += n;
	return s;
}

static void skip_ws(struct eval *e)
{
	while (isspace((unsigned char)*e->p))
		e->p++;
}

static int accept(struct eval *e, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(e);
	if (strncmp(e->p, tok, n))
		return 0;
	/* "&" is not "&&", "<" is not "<<" or "<=", "|" is not "||" */
	if (n == 1 && strchr("&|<>", tok[0]) && (e->p[1] == tok[0] || (strchr("<>", tok[0]) && e->p[1] == '=')))
		return 0;
	if (n == 1 && strchr("=!", tok[0]) && e->p[1] == '=')
		return 0;
	e->p += n;
	return 1;
}

static void expect(struct eval *e, const char *tok)
{
	if (!accept(e, tok))
		e->bad = 1;
}

static struct val ternary(struct eval *e);

static struct val ival(__s64 i)
{
	return (struct val){ .i = i };
}

static __s64 as_int(struct eval *e, struct val v)
{
	if (v.is_str)
		e->bad = 1;
	return v.i;
}

/* An identifier at the cursor, copied. */
static int ident(struct eval *e, char *buf, size_t size)
{
	size_t n = 0;

	skip_ws(e);
	if (!isalpha((unsigned char)*e->p) && *e->p != '_')
		return 0;
	while ((isalnum((unsigned char)e->p[n]) || e->p[n] == '_') && n + 1 < size)
		n++;
	memcpy(buf, e->p, n);
	buf[n] = '\0';
	e->p += n;
	return 1;
}

static struct val field_val(struct eval *e, const char *name)
{
	const struct tp_field *f = tp_format__field(e->fmt, name);
	struct val v = { 0 };

	if (!f) {
		e->bad = 1;
		return v;
	}
	if (tp_field__is_str(f)) {
		char *buf = arena_alloc(e, 256);

		v.is_str = 1;
		v.s = buf ? tp_field__str(f, e->raw, e->size, buf, 256) : NULL;
		if (!v.s)
			e->bad = 1;
		return v;
	}
	if (tp_field__int(f, e->raw, e->size, &v.i))
		e->bad = 1;
	return v;
}

/* The size of one element of an array field, from its type. */
static unsigned int element_size(const struct tp_field *f)
{
	if (strstr(f->type, "long") || strstr(f->type, "64"))
		return 8;
	if (strstr(f->type, "short") || strstr(f->type, "16"))
		return 2;
	if (strstr(f->type, "char") || strstr(f->type, "8"))
		return 1;
	return 4;
}

/* REC->name[INDEX]: one element, read like a field of its own. */
static struct val element_val(struct eval *e, const char *name)
{
	const struct tp_field *f = tp_format__field(e->fmt, name);
	__s64 idx = as_int(e, ternary(e));
	struct tp_field one;
	struct val v = { 0 };

	expect(e, "]");
	if (!f || e->bad || idx < 0) {
		e->bad = 1;
		return v;
	}
	one = *f;
	one.size = element_size(f);
	if ((__u64)idx >= f->size / one.size) {
		e->bad = 1;
		return v;
	}
	one.offset = f->offset + (unsigned int)idx * one.size;
	snprintf(one.type, sizeof(one.type), "long");	/* an integer, whatever the element */
	if (tp_field__int(&one, e->raw, e->size, &v.i))
		e->bad = 1;
	return v;
}

/* "..." with C escapes, into the arena. */
static struct val string_lit(struct eval *e)
{
	struct val v = { .is_str = 1 };
	const char *q = e->p + 1;
	size_t n = 0;
	char *out;

	/* its length first: a print fmt has many literals (a flag table's names), the arena room for them */
	while (*q && *q != '"')
		q += q[0] == '\\' && q[1] ? 2 : 1;
	out = arena_alloc(e, (size_t)(q - e->p));
	if (!out)
		return v;
	e->p++;	/* the opening quote */
	while (*e->p && *e->p != '"') {
		char c = *e->p++;

		if (c == '\\' && *e->p) {
			c = *e->p++;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	if (*e->p != '"')
		e->bad = 1;
	else
		e->p++;
	v.s = out;
	return v;
}

/* { VALUE, "NAME" }, ... ) of __print_flags / __print_symbolic */
static int table_entry(struct eval *e, __s64 *value, const char **name)
{
	struct val n;

	if (!accept(e, "{"))
		return 0;
	*value = as_int(e, ternary(e));
	expect(e, ",");
	n = ternary(e);
	if (!n.is_str)
		e->bad = 1;
	*name = n.s;
	expect(e, "}");
	return !e->bad;
}

static struct val print_flags(struct eval *e, int symbolic)
{
	__s64 flags = as_int(e, ternary(e)), value;
	const char *delim = "", *name;
	char *out = arena_alloc(e, 512);
	size_t n = 0;
	struct val v = { .is_str = 1, .s = "" };

	if (!out)
		return v;
	out[0] = '\0';
	expect(e, ",");
	if (!symbolic) {
		struct val d = ternary(e);

		delim = d.is_str ? d.s : "";
		expect(e, ",");
	}
	while (!e->bad && table_entry(e, &value, &name)) {
		if (symbolic) {
			if (value == flags && !out[0])
				snprintf(out, 512, "%s", name);
		} else if (value && (flags & value) == value) {
			n += snprintf(out + n, n < 512 ? 512 - n : 0, "%s%s", n ? delim : "", name);
			flags &= ~value;
		}
		if (!accept(e, ","))
			break;
	}
	expect(e, ")");
	/* what no name covers, as libtraceevent prints it */
	if (!symbolic && flags && n < 512)
		snprintf(out + n, 512 - n, "%s0x%llx", n ? delim : "", (unsigned long long)flags);
	else if (symbolic && !out[0])
		snprintf(out, 512, "0x%llx", (unsigned long long)flags);
	v.s = out;
	return v;
}

/* "(TYPE)": a cast, applied to what follows. */
static int cast_type(struct eval *e, int *bits, int *is_signed)
{
	const char *q = e->p;
	char word[32];
	int have = 0, longs = 0, sign = 1, width = 32;

	for (;;) {
		while (isspace((unsigned char)*q))
			q++;
		if (*q == ')')
			break;
		if (*q == '*') {
			width = 64;
			sign = 0;
			q++;
			have = 1;
			continue;
		}
		{
			size_t n = 0;

			while ((isalnum((unsigned char)q[n]) || q[n] == '_') && n + 1 < sizeof(word))
				n++;
			if (!n)
				return 0;
			memcpy(word, q, n);
			word[n] = '\0';
			q += n;
		}
		if (!strcmp(word, "unsigned"))
			sign = 0;
		else if (!strcmp(word, "signed") || !strcmp(word, "const") || !strcmp(word, "volatile") ||
			 !strcmp(word, "int"))
			;
		else if (!strcmp(word, "long"))
			longs++;
		else if (!strcmp(word, "char") || !strcmp(word, "u8") || !strcmp(word, "s8") || !strcmp(word, "__u8"))
			width = 8, sign = word[0] != 'u' && word[2] != 'u' && sign;
		else if (!strcmp(word, "short") || !strcmp(word, "u16") || !strcmp(word, "s16"))
			width = 16, sign = word[0] != 'u' && sign;
		else if (!strcmp(word, "u32") || !strcmp(word, "s32"))
			width = 32, sign = word[0] == 's';
		else if (!strcmp(word, "u64") || !strcmp(word, "s64") || !strcmp(word, "size_t") ||
			 !strcmp(word, "ssize_t"))
			width = 64, sign = word[0] == 's';
		else if (!strcmp(word, "bool"))
			width = 1, sign = 0;
		else
			return 0;
		have = 1;
	}
	if (!have)
		return 0;
	if (longs)
		width = 64;
	e->p = q + 1;
	*bits = width;
	*is_signed = sign;
	return 1;
}

static __s64 apply_cast(__s64 v, int bits, int is_signed)
{
	if (bits == 1)
		return v != 0;
	if (bits >= 64)
		return v;
	v &= (1LL << bits) - 1;
	if (is_signed && (v >> (bits - 1)) & 1)
		v -= 1LL << bits;
	return v;
}

static struct val unary(struct eval *e);

static struct val primary(struct eval *e)
{
	char name[64];
	struct val v = { 0 };

	skip_ws(e);
	if (*e->p == '"') {
		v = string_lit(e);
		/* "a" "b" */
		while (!e->bad && (skip_ws(e), *e->p == '"')) {
			struct val w = string_lit(e);
			char *both;

			if (e->bad)
				break;	/* no room for it in the arena: w.s is NULL */
			both = arena_alloc(e, strlen(v.s) + strlen(w.s) + 1);
			if (both) {
				sprintf(both, "%s%s", v.s, w.s);
				v.s = both;
			}
		}
		return v;
	}
	if (isdigit((unsigned char)*e->p)) {
		char *end;

		v.i = (__s64)strtoull(e->p, &end, 0);
		e->p = end;
		while (*e->p == 'u' || *e->p == 'U' || *e->p == 'l' || *e->p == 'L')
			e->p++;
		return v;
	}
	if (*e->p == '\'' && e->p[1] && e->p[2] == '\'') {
		v.i = e->p[1];
		e->p += 3;
		return v;
	}
	if (accept(e, "(")) {
		int bits, sign;

		if (cast_type(e, &bits, &sign)) {
			v = unary(e);
			if (!v.is_str)
				v.i = apply_cast(v.i, bits, sign);
			return v;
		}
		v = ternary(e);
		expect(e, ")");
		return v;
	}
	if (!ident(e, name, sizeof(name))) {
		e->bad = 1;
		return v;
	}
	if (!strcmp(name, "REC")) {
		expect(e, "->");
		if (!ident(e, name, sizeof(name)))
			e->bad = 1;
		if (!e->bad && accept(e, "["))
			return element_val(e, name);
		return e->bad ? v : field_val(e, name);
	}
	if (!accept(e, "(")) {
		e->bad = 1;
		return v;
	}
	if (!strcmp(name, "__get_str") || !strcmp(name, "__get_rel_str")) {
		if (!ident(e, name, sizeof(name)))
			e->bad = 1;
		expect(e, ")");
		return e->bad ? v : field_val(e, name);
	}
	if (!strcmp(name, "__print_flags"))
		return print_flags(e, 0);
	if (!strcmp(name, "__print_symbolic"))
		return print_flags(e, 1);
	e->bad = 1;	/* a helper not evaluated here */
	return v;
}

static struct val unary_op(struct eval *e)
{
	if (accept(e, "-"))
		return ival((__s64)(0 - (__u64)as_int(e, unary(e))));
	if (accept(e, "!"))
		return ival(!as_int(e, unary(e)));
	if (accept(e, "~"))
		return ival(~as_int(e, unary(e)));
	return primary(e);
}

static struct val unary(struct eval *e)
{
	struct val v = ival(0);

	if (++e->depth > 64)
		e->bad = 1;
	if (!e->bad)
		v = unary_op(e);
	e->depth--;
	return v;
}

static struct val mult(struct eval *e)
{
	struct val a = unary(e);

	for (;;) {
		if (accept(e, "*")) {
			__s64 x = as_int(e, a), y = as_int(e, unary(e));

			/* wraps as the kernel's 64-bit arithmetic does, not undefined */
			a = ival((__s64)((__u64)x * (__u64)y));
		} else if (accept(e, "/") || accept(e, "%")) {
			char op = e->p[-1];
			__s64 b = as_int(e, unary(e));

			if (!b) {
				e->bad = 1;
				b = 1;
			}
			if (b == -1)	/* INT64_MIN / -1 overflows: negate, wrapping */
				a = ival(op == '/' ? (__s64)(0 - (__u64)as_int(e, a)) : 0);
			else
				a = ival(op == '/' ? as_int(e, a) / b : as_int(e, a) % b);
		} else {
			return a;
		}
	}
}

static struct val additive(struct eval *e)
{
	struct val a = mult(e);

	for (;;) {
		if (accept(e, "+"))
			a = ival((__s64)((__u64)as_int(e, a) + (__u64)as_int(e, mult(e))));
		else if (accept(e, "-"))
			a = ival((__s64)((__u64)as_int(e, a) - (__u64)as_int(e, mult(e))));
		else
			return a;
	}
}

static struct val shift(struct eval *e)
{
	struct val a = additive(e);

	for (;;) {
		if (accept(e, "<<"))
			a = ival((__s64)((__u64)as_int(e, a) << (as_int(e, additive(e)) & 63)));
		else if (accept(e, ">>"))
			a = ival((__s64)((__u64)as_int(e, a) >> (as_int(e, additive(e)) & 63)));
		else
			return a;
	}
}

static struct val relational(struct eval *e)
{
	struct val a = shift(e);

	for (;;) {
		if (accept(e, "<="))
			a = ival(as_int(e, a) <= as_int(e, shift(e)));
		else if (accept(e, ">="))
			a = ival(as_int(e, a) >= as_int(e, shift(e)));
		else if (accept(e, "<"))
			a = ival(as_int(e, a) < as_int(e, shift(e)));
		else if (accept(e, ">"))
			a = ival(as_int(e, a) > as_int(e, shift(e)));
		else
			return a;
	}
}

static struct val equality(struct eval *e)
{
	struct val a = relational(e);

	for (;;) {
		if (accept(e, "=="))
			a = ival(as_int(e, a) == as_int(e, relational(e)));
		else if (accept(e, "!="))
			a = ival(as_int(e, a) != as_int(e, relational(e)));
		else
			return a;
	}
}

static struct val bitand(struct eval *e)
{
	struct val a = equality(e);

	while (accept(e, "&"))
		a = ival(as_int(e, a) & as_int(e, equality(e)));
	return a;
}

static struct val bitxor(struct eval *e)
{
	struct val a = bitand(e);

	while (accept(e, "^"))
		a = ival(as_int(e, a) ^ as_int(e, bitand(e)));
	return a;
}

static struct val bitor(struct eval *e)
{
	struct val a = bitxor(e);

	while (accept(e, "|"))
		a = ival(as_int(e, a) | as_int(e, bitxor(e)));
	return a;
}

static struct val logand(struct eval *e)
{
	struct val a = bitor(e);

	while (accept(e, "&&")) {
		struct val b = bitor(e);

		a = ival(as_int(e, a) && as_int(e, b));
	}
	return a;
}

static struct val logor(struct eval *e)
{
	struct val a = logand(e);

	while (accept(e, "||")) {
		struct val b = logand(e);

		a = ival(as_int(e, a) || as_int(e, b));
	}
	return a;
}

/* Both branches are parsed (the cursor must pass them); one is taken. */
static struct val ternary(struct eval *e)
{
	struct val c, a, b;

	if (++e->depth > 64 || e->bad) {
		e->bad = 1;
		e->depth--;
		return ival(0);
	}
	c = logor(e);
	if (accept(e, "?")) {
		a = ternary(e);
		expect(e, ":");
		b = ternary(e);
		c = as_int(e, c) ? a : b;
	}
	e->depth--;
	return c;
}

/* ---- the format string -------------------------------------------------- */

/* One conversion of @spec (e.g. "%08lx") with @v, appended to @out. */
static int convert(struct eval *e, const char *spec, size_t len, struct val v, char *out, size_t size)
{
	char cfmt[32], conv = spec[len - 1], lenmod[3] = "";
	size_t i = 1, m = 0;
	__s64 x;

	if (len >= sizeof(cfmt) - 4)
		return -EINVAL;
	memcpy(cfmt, spec, len);
	cfmt[len] = '\0';
	/* the length modifier, replaced by ll for 64-bit values */
	while (i < len - 1 && strchr("-+ #0123456789.", spec[i]))
		i++;
	while (i < len - 1 && m < 2)
		lenmod[m++] = spec[i++];
	lenmod[m] = '\0';
	if (conv == 's') {
		if (!v.is_str)
			return -EINVAL;
		return snprintf(out, size, cfmt, v.s);
	}
	x = as_int(e, v);
	if (e->bad)
		return -EINVAL;
	if (conv == 'c')
		return snprintf(out, size, cfmt, (int)(char)x);
	if (conv == 'p') {
		/* plain %p: libtraceevent prints the value as 0x%llx */
		return snprintf(out, size, "0x%llx", (unsigned long long)x);
	}
	/* rebuild with ll and a value of the modifier's width */
	{
		size_t keep = len - 1 - m;
		char f2[40];

		snprintf(f2, sizeof(f2), "%.*sll%c", (int)keep, spec, conv);
		if (strchr("di", conv)) {
			if (!strcmp(lenmod, "hh"))
				x = (signed char)x;
			else if (!strcmp(lenmod, "h"))
				x = (short)x;
			else if (!m || !strchr("lzjtL", lenmod[0]))
				x = (int)x;
			return snprintf(out, size, f2, (long long)x);
		}
		if (strchr("uxXo", conv)) {
			unsigned long long u = (unsigned long long)x;

			if (!strcmp(lenmod, "hh"))
				u = (unsigned char)u;
			else if (!strcmp(lenmod, "h"))
				u = (unsigned short)u;
			else if (!m || !strchr("lzjtL", lenmod[0]))
				u = (unsigned int)u;
			return snprintf(out, size, f2, u);
		}
	}
	return -EINVAL;
}

int tp_print__format(const struct tp_format *fmt, const void *raw, size_t size, char *buf, size_t bufsize)
{
	struct eval *e;
	const char *pf = fmt->print_fmt, *q;
	char *f = NULL;
	size_t flen = 0, n = 0;
	int err = -EINVAL;

	buf[0] = '\0';
	if (!pf || *pf != '"')
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fmt = fmt;
	e->raw = raw;
	e->size = size;
	/* the quoted format, unescaped */
	f = malloc(strlen(pf) + 1);
	if (!f)
		goto out;
	for (q = pf + 1; *q && *q != '"'; q++) {
		if (*q == '\\' && q[1]) {
			q++;
			f[flen++] = *q == 'n' ? '\n' : *q == 't' ? '\t' : *q;
		} else {
			f[flen++] = *q;
		}
	}
	f[flen] = '\0';
	if (*q != '"')
		goto out;
	e->p = q + 1;
	for (size_t i = 0; i < flen && n < bufsize;) {
		size_t start = i, len;
		struct val v;
		int w;

		if (f[i] != '%') {
			buf[n++] = f[i++];
			continue;
		}
		if (f[i + 1] == '%') {
			buf[n++] = '%';
			i += 2;
			continue;
		}
		i++;
		while (i < flen && strchr("-+ #0123456789.", f[i]))
			i++;
		if (f[i] == '*')
			goto out;	/* a width argument: not needed by any event we print */
		while (i < flen && strchr("hlzjtL", f[i]))
			i++;
		if (i >= flen || !strchr("diuxXocsp", f[i]))
			goto out;
		i++;
		if (f[i - 1] == 'p' && i < flen && isalnum((unsigned char)f[i]))
			goto out;	/* %pS, %pI4, ...: kernel extensions */
		len = i - start;
		if (!accept(e, ","))
			goto out;
		v = ternary(e);
		if (e->bad)
			goto out;
		w = convert(e, f + start, len, v, buf + n, bufsize - n);
		if (w < 0)
			goto out;
		n += (size_t)w;
	}
	skip_ws(e);
	if (*e->p)
		goto out;	/* arguments left over */
	if (n >= bufsize)
		n = bufsize - 1;
	buf[n] = '\0';
	err = 0;
out:
	if (err)
		buf[0] = '\0';
	free(f);
	free(e);
	return err;
}

void tp_print__fields(const struct tp_format *fmt, const void *raw, size_t size, char *buf, size_t bufsize)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < fmt->nr_fields && n < bufsize; i++) {
		const struct tp_field *f = &fmt->fields[i];
		char s[256];
		__s64 v;

		if (f->is_common)
			continue;
		if (tp_field__is_str(f))
			n += snprintf(buf + n, bufsize - n, "%s%s=%s", n ? " " : "", f->name,
				      tp_field__str(f, raw, size, s, sizeof(s)) ?: "?");
		else if (tp_field__int(f, raw, size, &v) && f->size > 8 && (size_t)f->offset + f->size <= size) {
			/* an array: its elements */
			struct tp_field one = *f;

			one.size = element_size(f);
			n += snprintf(buf + n, bufsize - n, "%s%s={", n ? " " : "", f->name);
			for (unsigned int k = 0; k < f->size / one.size && n < bufsize; k++) {
				one.offset = f->offset + k * one.size;
				tp_field__int(&one, raw, size, &v);
				n += snprintf(buf + n, bufsize - n, "%s0x%llx", k ? "," : "", (unsigned long long)v);
			}
			if (n < bufsize)
				n += snprintf(buf + n, bufsize - n, "}");
		} else if (tp_field__int(f, raw, size, &v))
			n += snprintf(buf + n, bufsize - n, "%s%s=?", n ? " " : "", f->name);
		else if (f->is_signed)
			n += snprintf(buf + n, bufsize - n, "%s%s=%lld", n ? " " : "", f->name, (long long)v);
		else
			n += snprintf(buf + n, bufsize - n, "%s%s=0x%llx", n ? " " : "", f->name, (unsigned long long)v);
	}
}
