// SPDX-License-Identifier: BSD-2-Clause
/*
 * The condition language: lexer, Pratt parser with C precedence, type check,
 * bytecode generation, and the userspace evaluator. The BPF evaluator is
 * bpf/expr.bpf.h; the two must agree instruction by instruction.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/sys/c_int_type.h"
#include "auxtrig/sys/tracefs.h"

#define EXPR_MAX_DEPTH 64 /* parser recursion: parentheses and unary operators */
#define EXPR_MAX_EMIT  4096 /* counted past EXPR_MAX_INSNS to report the real length */

/* ---- errno names ---- */

static const struct {
	const char *name;
	int value;
} errno_names[] = {
#define E(x) { #x, x }
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC), E(EBADF),
	E(ECHILD), E(EAGAIN), E(EWOULDBLOCK), E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY), E(EEXIST),
	E(EXDEV), E(ENODEV), E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE), E(EDOM), E(ERANGE),
	E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK), E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG),
	E(ENODATA), E(ETIME), E(EOVERFLOW), E(EILSEQ), E(ENOTSOCK), E(EDESTADDRREQ), E(EMSGSIZE),
	E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT), E(EOPNOTSUPP), E(ENOTSUP), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH), E(ECONNABORTED), E(ECONNRESET),
	E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ETIMEDOUT), E(ECONNREFUSED), E(EHOSTUNREACH),
	E(EALREADY), E(EINPROGRESS), E(ESTALE), E(EDQUOT), E(ECANCELED), E(EOWNERDEAD),
	E(ENOTRECOVERABLE),
#undef E
};

int expr__errno_value(const char *name)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (!strcmp(errno_names[i].name, name))
			return errno_names[i].value;
	return 0;
}

/* ---- builtin fields ---- */

static const char *const builtin_names[EXPR_F_COUNT + 1] = {
	[EXPR_F_PID] = "pid",	    [EXPR_F_TID] = "tid",	 [EXPR_F_PPID] = "ppid",
	[EXPR_F_UID] = "uid",	    [EXPR_F_GID] = "gid",	 [EXPR_F_CPU] = "cpu",
	[EXPR_F_CGROUP] = "cgroup", [EXPR_F_NR] = "nr",		 [EXPR_F_RET] = "ret",
	[EXPR_F_ARG0] = "arg0",	    [EXPR_F_ARG0 + 1] = "arg1", [EXPR_F_ARG0 + 2] = "arg2",
	[EXPR_F_ARG0 + 3] = "arg3", [EXPR_F_ARG0 + 4] = "arg4", [EXPR_F_ARG0 + 5] = "arg5",
	[EXPR_F_COMM] = "comm",
};

static const char *const var_names[EXPR_NR_VAR_NAMES] = {
	[EXPR_VAR_COUNT] = "$count",
	[EXPR_VAR_ELAPSED] = "$elapsed",
	[EXPR_VAR_DURATION] = "$duration",
};

int expr__resolve_builtin(const char *name, struct expr_field *field)
{
	for (unsigned int i = 0; i < EXPR_NR_VAR_NAMES; i++) {
		if (!strcmp(var_names[i], name)) {
			memset(field, 0, sizeof(*field));
			field->kind = EXPR_FIELD_VAR;
			field->builtin = i;
			return 0;
		}
	}
	for (unsigned int i = 0; i <= EXPR_F_COMM; i++) {
		if (!strcmp(builtin_names[i], name)) {
			memset(field, 0, sizeof(*field));
			field->kind = EXPR_FIELD_BUILTIN;
			field->builtin = i;
			return 0;
		}
	}
	return -ENOENT;
}

int expr__resolve_tp_field(const struct tp_format *fmt, const char *name, struct expr_field *field, char *why,
			   size_t why_size)
{
	const struct tp_field *f = tp_format__field(fmt, name);
	unsigned int size;
	bool sgn;

	if (!f)
		return -ENOENT;
	if (f->is_common) {
		snprintf(why, why_size, "'%s' is not readable from BPF (use pid, tid, comm)", name);
		return -EINVAL;
	}
	memset(field, 0, sizeof(*field));
	field->offset = f->offset;
	field->size = f->size;
	field->is_signed = f->is_signed;
	if (f->is_dynamic) {
		field->kind = EXPR_FIELD_REC_LOC;
		return 0;
	}
	if (strstr(f->type, "char") && !strchr(f->type, '*') && f->size > 1 && f->is_array) {
		field->kind = EXPR_FIELD_REC_STR; /* char name[N] */
		return 0;
	}
	field->kind = EXPR_FIELD_REC_INT;
	/* the declared type: narrower than its slot (little-endian: its low bytes come first) */
	if (!tp_field__int_type(f, &size, &sgn) && size <= f->size) {
		field->size = size;
		field->is_signed = sgn;
	}
	if (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8) {
		snprintf(why, why_size, "'%s' is %u bytes: not an integer field", name, f->size);
		return -EINVAL;
	}
	return 0;
}

static int resolve_builtin_only(void *ctx, const char *name, struct expr_field *field, char *why, size_t why_size)
{
	return expr__resolve_builtin(name, field);
}

/* ---- lexer ---- */

enum tok_kind {
	T_END, T_INT, T_STR, T_IDENT, T_VAR, T_LP, T_RP, T_COMMA,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_MATCH, T_NMATCH,
	T_NOT, T_AND, T_OR, T_BAND, T_BOR, T_XOR,
	T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT,
};

static const char *const tok_text[] = {
	[T_LP] = "(", [T_RP] = ")", [T_COMMA] = ",", [T_EQ] = "==", [T_NE] = "!=", [T_LT] = "<",
	[T_LE] = "<=", [T_GT] = ">", [T_GE] = ">=", [T_MATCH] = "~", [T_NMATCH] = "!~", [T_NOT] = "!",
	[T_AND] = "&&", [T_OR] = "||", [T_BAND] = "&", [T_BOR] = "|", [T_XOR] = "^", [T_PLUS] = "+",
	[T_MINUS] = "-", [T_STAR] = "*", [T_SLASH] = "/", [T_PERCENT] = "%",
};

struct token {
	enum tok_kind kind;
	unsigned int col;   /* 1-based */
	unsigned int start; /* byte offset in the source */
	unsigned int len;   /* bytes in the source */
	__u64 val;          /* T_INT */
	int duration;       /* T_INT written with a unit (ns, us, ms, s): val is in ns */
	char str[EXPR_STR_MAX]; /* T_STR contents, T_IDENT/T_VAR name (truncated) */
	unsigned int str_len;
};

enum vtype { V_INT, V_STR };

enum node_kind {
	N_INT,   /* integer literal */
	N_STR,   /* string literal: strtab offset in val */
	N_FIELD, /* integer field */
	N_SFIELD, /* string source: comm, str(argN), record string */
	N_UNARY,
	N_BINARY,
	N_VAR,   /* $variable: EXPR_VAR_* in val */
	N_HIT,   /* once/after/every: EXPR_HIT_* in op, N in val, counter in str_arg */
};

struct node {
	enum node_kind kind;
	enum vtype type;
	enum tok_kind op;
	unsigned int col;           /* where the node starts */
	unsigned int op_col;        /* operator column */
	unsigned int start, end;    /* source span */
	__s64 val;
	struct expr_field field;
	unsigned int str_src, str_arg; /* N_SFIELD: EXPR_S_*, source operand */
	int l, r;
};

struct parser {
	const char *src;
	size_t src_len;
	size_t pos;
	struct token tok;   /* current */
	struct token prev;  /* last consumed */
	struct node *nodes;
	int nr_nodes, max_nodes;
	int depth;
	const struct expr_compile_opts *opts;
	struct expr_prog *prog;
	char *err;
	size_t err_size;
	int error;          /* first error, -errno */
	unsigned int nr_hits; /* once/after/every terms so far */
	/* code generation */
	unsigned int nr_emit;
	unsigned int sp, max_sp;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct parser *p, unsigned int col, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (p->error)
		return p->error;
	p->error = -EINVAL;
	if (!p->err || !p->err_size)
		return p->error;
	if (col)
		n = snprintf(p->err, p->err_size, "column %u: ", col);
	if (n < 0 || (size_t)n >= p->err_size)
		return p->error;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->err_size - n, fmt, ap);
	va_end(ap);
	return p->error;
}

static void tok_describe(const struct parser *p, const struct token *t, char *buf, size_t size)
{
	switch (t->kind) {
	case T_END:
		snprintf(buf, size, "end of input");
		break;
	case T_INT:
	case T_IDENT:
	case T_VAR:
	case T_STR:
		snprintf(buf, size, t->kind == T_STR ? "%s %.*s" : "%s '%.*s'",
			 t->kind == T_INT ? "number" : t->kind == T_STR ? "string" : t->kind == T_VAR ? "variable" : "name",
			 (int)(t->len > 40 ? 40 : t->len), p->src + t->start);
		break;
	default:
		snprintf(buf, size, "'%s'", tok_text[t->kind]);
		break;
	}
}

static int is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident_char(int c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static const struct {
	const char *name;
	__u64 ns;
} duration_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
};

/*
 * A number followed by a unit: 500ns, 250us, 1ms, 2s, in nanoseconds. @i is
 * where the letters start. Returns 1 if it was a duration, 0 if the letters
 * are no unit (the caller reports a bad digit), -1 on an error.
 */
static int lex_duration(struct parser *p, struct token *t, unsigned int base, unsigned int i, __u64 v)
{
	const char *s = p->src + p->pos;
	unsigned int j = i;

	while (is_ident_char(s[j]))
		j++;
	for (size_t u = 0; u < sizeof(duration_units) / sizeof(duration_units[0]); u++) {
		if (strlen(duration_units[u].name) != j - i || strncmp(s + i, duration_units[u].name, j - i))
			continue;
		if (base == 16 || (base == 8 && v))
			return fail(p, t->col, "a duration is a decimal number and a unit: 500ns, 250us, 1ms, 2s"), -1;
		if (v > (__u64)INT64_MAX / duration_units[u].ns)
			return fail(p, t->col, "duration too large: at most %lld%s", (long long)(INT64_MAX / duration_units[u].ns),
				    duration_units[u].name), -1;
		t->kind = T_INT;
		t->val = v * duration_units[u].ns;
		t->duration = 1;
		t->len = j;
		return 1;
	}
	if (base != 16 && strchr("nums", s[i]))
		return fail(p, t->col, "unknown unit '%.*s' in a duration (ns, us, ms, s: 500ns, 250us, 1ms, 2s)",
			    (int)(j - i), s + i), -1;
	return 0;
}

static int lex_number(struct parser *p, struct token *t)
{
	const char *s = p->src + p->pos;
	unsigned int base = 10, i = 0, digits = 0;
	__u64 v = 0;
	int dur;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (;; i++) {
		int c = s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else if (is_ident_char(c))
			d = 99;
		else
			break;
		if (d == 99 && digits) {
			dur = lex_duration(p, t, base, i, v);
			if (dur)
				return dur < 0 ? p->error : 0;
		}
		if (d >= (int)base)
			return fail(p, t->col, "invalid digit '%c' in %s number", c,
				    base == 16 ? "a hexadecimal" : base == 8 ? "an octal" : "a decimal");
		if (v > (UINT64_MAX - d) / base)
			return fail(p, t->col, "number too large: at most 64 bits");
		v = v * base + d;
		digits++;
	}
	if (base == 16 && !digits)
		return fail(p, t->col, "expected hexadecimal digits after '0x'");
	t->kind = T_INT;
	t->val = v;
	t->len = i;
	return 0;
}

static int lex_string(struct parser *p, struct token *t)
{
	const char *s = p->src + p->pos;
	unsigned int i = 1, n = 0;

	for (;;) {
		char c = s[i];

		if (!c)
			return fail(p, t->col, "unterminated string: expected a closing '\"'");
		i++;
		if (c == '"')
			break;
		if (c == '\\') {
			char e = s[i];

			switch (e) {
			case '\\': c = '\\'; break;
			case '"': c = '"'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			default:
				return fail(p, t->col + i - 1, "unknown escape '\\%c' in a string (known: \\\\ \\\" \\n \\t)",
					    e ? e : ' ');
			}
			i++;
		}
		if (n >= EXPR_STR_MAX - 1)
			return fail(p, t->col, "string too long: at most %d bytes", EXPR_STR_MAX - 1);
		t->str[n++] = c;
	}
	t->str[n] = 0;
	t->str_len = n;
	t->kind = T_STR;
	t->len = i;
	return 0;
}

/* Reads the next token into p->tok. */
static int lex(struct parser *p)
{
	struct token *t = &p->tok;
	const char *s;
	char c, d;

	p->prev = *t;
	while (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' || p->src[p->pos] == '\n')
		p->pos++;
	s = p->src + p->pos;
	memset(t, 0, sizeof(*t));
	t->col = p->pos + 1;
	t->start = p->pos;
	t->len = 1;
	c = s[0];
	d = c ? s[1] : 0;

	if (!c) {
		t->kind = T_END;
		t->len = 0;
	} else if (c >= '0' && c <= '9') {
		if (lex_number(p, t))
			return p->error;
	} else if (c == '"') {
		if (lex_string(p, t))
			return p->error;
	} else if (is_ident_start(c) || (c == '$' && is_ident_start(d))) {
		unsigned int i = 1;

		while (is_ident_char(s[i]))
			i++;
		/* entry.argN: the argument the thread entered the syscall with, at its exit */
		if (i == 5 && !strncmp(s, "entry", 5) && s[i] == '.' && is_ident_start(s[i + 1]))
			for (i++; is_ident_char(s[i]); i++)
				;
		t->kind = c == '$' ? T_VAR : T_IDENT;
		t->len = i;
		t->str_len = i < EXPR_STR_MAX ? i : EXPR_STR_MAX - 1;
		memcpy(t->str, s, t->str_len);
	} else {
		t->len = 2;
		if (c == '=' && d == '=')
			t->kind = T_EQ;
		else if (c == '!' && d == '=')
			t->kind = T_NE;
		else if (c == '!' && d == '~')
			t->kind = T_NMATCH;
		else if (c == '<' && d == '=')
			t->kind = T_LE;
		else if (c == '>' && d == '=')
			t->kind = T_GE;
		else if (c == '&' && d == '&')
			t->kind = T_AND;
		else if (c == '|' && d == '|')
			t->kind = T_OR;
		else if (c == '<' && d == '<')
			return fail(p, t->col, "shift operators '<<' and '>>' are not supported");
		else if (c == '>' && d == '>')
			return fail(p, t->col, "shift operators '<<' and '>>' are not supported");
		else {
			t->len = 1;
			switch (c) {
			case '(': t->kind = T_LP; break;
			case ')': t->kind = T_RP; break;
			case ',': t->kind = T_COMMA; break;
			case '<': t->kind = T_LT; break;
			case '>': t->kind = T_GT; break;
			case '~': t->kind = T_MATCH; break;
			case '!': t->kind = T_NOT; break;
			case '&': t->kind = T_BAND; break;
			case '|': t->kind = T_BOR; break;
			case '^': t->kind = T_XOR; break;
			case '+': t->kind = T_PLUS; break;
			case '-': t->kind = T_MINUS; break;
			case '*': t->kind = T_STAR; break;
			case '/': t->kind = T_SLASH; break;
			case '%': t->kind = T_PERCENT; break;
			case '=':
				return fail(p, t->col, "'=' is not an operator (did you mean '=='?)");
			case '\'':
				return fail(p, t->col, "strings are written in double quotes");
			default:
				if (c > ' ' && c < 0x7f)
					return fail(p, t->col, "unexpected character '%c'", c);
				return fail(p, t->col, "unexpected byte 0x%02x", (unsigned char)c);
			}
		}
	}
	p->pos += t->len;
	return 0;
}

/* ---- parser ---- */

#define BP_UNARY 10

static int infix_bp(enum tok_kind k)
{
	switch (k) {
	case T_OR: return 1;
	case T_AND: return 2;
	case T_BOR: return 3;
	case T_XOR: return 4;
	case T_BAND: return 5;
	case T_EQ: case T_NE: case T_MATCH: case T_NMATCH: return 6;
	case T_LT: case T_LE: case T_GT: case T_GE: return 7;
	case T_PLUS: case T_MINUS: return 8;
	case T_STAR: case T_SLASH: case T_PERCENT: return 9;
	default: return 0;
	}
}

static int new_node(struct parser *p, enum node_kind kind, const struct token *t)
{
	struct node *n;

	if (p->nr_nodes >= p->max_nodes)
		return fail(p, t->col, "expression too complex"), -1;
	n = &p->nodes[p->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->col = n->op_col = t->col;
	n->start = t->start;
	n->end = t->start + t->len;
	n->l = n->r = -1;
	return p->nr_nodes++;
}

/* "'comm'" or "'str(arg1)'": the node as written, for messages. */
static const char *node_text(const struct parser *p, const struct node *n, char *buf, size_t size)
{
	unsigned int len = n->end - n->start;

	if (len > 40)
		snprintf(buf, size, "'%.37s...'", p->src + n->start);
	else
		snprintf(buf, size, "'%.*s'", (int)len, p->src + n->start);
	return buf;
}

static int strtab_add(struct parser *p, const struct token *t)
{
	struct expr_prog *prog = p->prog;
	unsigned int off = 0;

	while (off < prog->strtab_len) {
		if (!strcmp(prog->strtab + off, t->str))
			return off;
		off += strlen(prog->strtab + off) + 1;
	}
	if (prog->strtab_len + t->str_len + 1 > EXPR_STRTAB_SIZE) {
		fail(p, t->col, "expression too long: its strings need more than %d bytes", EXPR_STRTAB_SIZE);
		p->error = -E2BIG;
		return -1;
	}
	memcpy(prog->strtab + off, t->str, t->str_len + 1);
	prog->strtab_len += t->str_len + 1;
	return off;
}

static int resolve(struct parser *p, const struct token *t, struct expr_field *f)
{
	char why[128] = "";
	int err;

	memset(f, 0, sizeof(*f));
	if (t->len >= EXPR_STR_MAX)
		return fail(p, t->col, "unknown field '%.*s'", (int)t->len, p->src + t->start);
	err = p->opts && p->opts->resolve ? p->opts->resolve(p->opts->resolve_ctx, t->str, f, why, sizeof(why))
					    : resolve_builtin_only(NULL, t->str, f, why, sizeof(why));
	if (err == -ENOENT)
		return fail(p, t->col, "unknown field '%s'%s%s", t->str, why[0] ? ": " : "", why);
	if (err)
		return fail(p, t->col, "'%s' is not available here%s%s", t->str, why[0] ? ": " : "", why);
	switch (f->kind) {
	case EXPR_FIELD_VAR:
		return fail(p, t->col, "'%s': the resolver returned a variable for a field name", t->str);
	case EXPR_FIELD_BUILTIN:
		if (f->builtin > EXPR_F_COMM)
			return fail(p, t->col, "'%s': the resolver returned an unknown builtin %u", t->str, f->builtin);
		return 0;
	case EXPR_FIELD_REC_INT:
		if ((f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) || f->offset > 0xffff)
			return fail(p, t->col, "field '%s' (offset %u, size %u) cannot be read as an integer", t->str,
				    f->offset, f->size);
		return 0;
	case EXPR_FIELD_REC_STR:
	case EXPR_FIELD_REC_LOC:
		if (f->offset > 0xffff || f->size > 0xffff || (f->kind == EXPR_FIELD_REC_STR && !f->size))
			return fail(p, t->col, "field '%s' (offset %u, size %u) cannot be read as a string", t->str,
				    f->offset, f->size);
		return 0;
	}
	return fail(p, t->col, "'%s': the resolver returned an unknown field kind", t->str);
}

static int parse_expr(struct parser *p, int min_bp);

/* str(argN) */
static int parse_str_call(struct parser *p, const struct token *name)
{
	struct expr_field f;
	struct token arg;
	const char *a;
	struct node *n;
	int i;

	if (lex(p))
		return -1;
	arg = p->tok;
	a = arg.kind == T_IDENT && !strncmp(arg.str, "entry.", 6) ? arg.str + 6 : arg.str;
	if (arg.kind != T_IDENT || strncmp(a, "arg", 3) || strlen(a) != 4 || a[3] < '0' || a[3] > '5') {
		char got[64];

		tok_describe(p, &arg, got, sizeof(got));
		return fail(p, arg.col, "expected arg0..arg5 inside str(), got %s", got), -1;
	}
	if (resolve(p, &arg, &f))
		return -1;
	if (lex(p))
		return -1;
	if (p->tok.kind != T_RP) {
		char got[64];

		tok_describe(p, &p->tok, got, sizeof(got));
		return fail(p, p->tok.col, "expected ')' to close 'str(' at column %u, got %s", name->col + 3, got), -1;
	}
	i = new_node(p, N_SFIELD, name);
	if (i < 0)
		return -1;
	n = &p->nodes[i];
	n->type = V_STR;
	n->str_src = EXPR_S_USER;
	n->str_arg = a[3] - '0';
	n->end = p->tok.start + 1;
	if (lex(p))
		return -1;
	return i;
}

/* once, after N, every N: the current token is what follows the word. */
static int parse_hit(struct parser *p, const struct token *word)
{
	struct token n = p->tok;
	char got[64];
	int i;

	if (p->nr_hits >= EXPR_MAX_HITS) {
		fail(p, word->col, "too many once/after/every terms: at most %d in one condition", EXPR_MAX_HITS);
		p->error = -E2BIG;
		return -1;
	}
	i = new_node(p, N_HIT, word);
	if (i < 0)
		return -1;
	p->nodes[i].str_arg = p->nr_hits++;
	if (!strcmp(word->str, "once")) {
		p->nodes[i].op = EXPR_HIT_ONCE;
		p->nodes[i].val = 1;
		return i;
	}
	p->nodes[i].op = !strcmp(word->str, "after") ? EXPR_HIT_AFTER : EXPR_HIT_EVERY;
	if (n.kind != T_INT) {
		tok_describe(p, &n, got, sizeof(got));
		return fail(p, n.col, "'%s' needs a count: %s N, N a number of 1 or more, got %s", word->str, word->str,
			    got), -1;
	}
	if (n.duration)
		return fail(p, n.col, "'%s' counts evaluations, not time: got the duration '%.*s'", word->str,
			    (int)n.len, p->src + n.start), -1;
	if (n.val < 1 || n.val > INT64_MAX)
		return fail(p, n.col, "'%s' needs a count of 1 or more%s, got %.*s", word->str,
			    n.val ? " and at most 9223372036854775807" : "", (int)n.len, p->src + n.start), -1;
	p->nodes[i].val = (__s64)n.val;
	p->nodes[i].end = n.start + n.len;
	return lex(p) ? -1 : i;
}

/* $count, $elapsed, $duration */
static int parse_var(struct parser *p)
{
	struct token t = p->tok;
	struct expr_field f;
	char why[128] = "";
	int err, i;

	if (t.len >= EXPR_STR_MAX)
		return fail(p, t.col, "unknown variable '%.*s'", (int)t.len, p->src + t.start), -1;
	err = p->opts && p->opts->resolve ? p->opts->resolve(p->opts->resolve_ctx, t.str, &f, why, sizeof(why))
					  : expr__resolve_builtin(t.str, &f);
	if (err == -ENOENT || (!err && f.kind != EXPR_FIELD_VAR))
		return fail(p, t.col, "unknown variable '%s' (known: $count, $elapsed, $duration)", t.str), -1;
	if (err)
		return fail(p, t.col, "'%s' is not available here%s%s", t.str, why[0] ? ": " : "", why), -1;
	if (f.builtin >= EXPR_NR_VAR_NAMES)
		return fail(p, t.col, "'%s': the resolver returned an unknown variable %u", t.str, f.builtin), -1;
	i = new_node(p, N_VAR, &t);
	if (i < 0)
		return -1;
	p->nodes[i].val = f.builtin;
	return lex(p) ? -1 : i;
}

static int parse_ident(struct parser *p)
{
	struct token t = p->tok;
	struct expr_field f;
	struct node *n;
	int i, e;

	if (lex(p))
		return -1;
	if (!strcmp(t.str, "str") && p->tok.kind == T_LP)
		return parse_str_call(p, &t);
	if (!strcmp(t.str, "after") || !strcmp(t.str, "every") || !strcmp(t.str, "once"))
		return parse_hit(p, &t);
	e = t.len < EXPR_STR_MAX ? expr__errno_value(t.str) : 0;
	if (e) {
		i = new_node(p, N_INT, &t);
		if (i >= 0)
			p->nodes[i].val = e;
		return i;
	}
	if (resolve(p, &t, &f))
		return -1;
	if (f.kind == EXPR_FIELD_BUILTIN && f.builtin != EXPR_F_COMM) {
		i = new_node(p, N_FIELD, &t);
	} else if (f.kind == EXPR_FIELD_REC_INT) {
		i = new_node(p, N_FIELD, &t);
	} else {
		i = new_node(p, N_SFIELD, &t);
		if (i < 0)
			return -1;
		n = &p->nodes[i];
		n->type = V_STR;
		if (f.kind == EXPR_FIELD_BUILTIN) {
			n->str_src = EXPR_S_COMM;
		} else if (f.kind == EXPR_FIELD_REC_STR) {
			n->str_src = EXPR_S_REC_ARRAY;
			n->str_arg = f.offset | f.size << 16;
		} else {
			n->str_src = EXPR_S_REC_LOC;
			n->str_arg = f.offset;
		}
		return i;
	}
	if (i >= 0)
		p->nodes[i].field = f;
	return i;
}

static int parse_unary(struct parser *p)
{
	struct token t = p->tok;
	char buf[64];
	int c, i;

	if (lex(p))
		return -1;
	if (t.kind == T_NMATCH) {
		/* "!~x" in front of a value is "!" then "~" */
		t.kind = T_NOT;
		c = new_node(p, N_UNARY, &t);
		if (c < 0)
			return -1;
		p->nodes[c].op = T_MATCH;
		p->nodes[c].col = p->nodes[c].op_col = t.col + 1;
		i = parse_expr(p, BP_UNARY);
		if (i < 0)
			return -1;
		if (p->nodes[i].type != V_INT)
			return fail(p, t.col + 1, "'~' needs an integer, but %s is a string",
				    node_text(p, &p->nodes[i], buf, sizeof(buf))), -1;
		p->nodes[c].l = i;
		p->nodes[c].end = p->nodes[i].end;
		i = c;
	} else {
		i = parse_expr(p, BP_UNARY);
		if (i < 0)
			return -1;
	}
	if (p->nodes[i].type != V_INT)
		return fail(p, t.col, "'%s' needs an integer, but %s is a string", tok_text[t.kind],
			    node_text(p, &p->nodes[i], buf, sizeof(buf))), -1;
	if (t.kind == T_MINUS && p->nodes[i].kind == N_INT) {
		/* fold -5, -ENOENT into one constant */
		p->nodes[i].val = (__s64)(0 - (__u64)p->nodes[i].val);
		p->nodes[i].col = p->nodes[i].op_col = t.col;
		p->nodes[i].start = t.start;
		return i;
	}
	c = new_node(p, N_UNARY, &t);
	if (c < 0)
		return -1;
	p->nodes[c].op = t.kind;
	p->nodes[c].l = i;
	p->nodes[c].end = p->nodes[i].end;
	return c;
}

/* ---- casts: (int)ret ---- */

/* The C integer type specifiers and fixed-width typedefs a cast may name (sys/c_int_type.c). */
static int cast_specifier(const struct token *t)
{
	return c_int_type__specifier(t->str, t->len);
}

static int cast_typedef(const struct token *t)
{
	return c_int_type__typedef(t->str, t->len, false);
}

/* Does this name after '(' begin a type? (Type names are not fields.) */
static bool cast_word(const struct token *t)
{
	return cast_specifier(t) >= 0 || cast_typedef(t);
}

/*
 * "(TYPE)x": x converted to TYPE and back to 64 bits, as C does: the low
 * bytes of TYPE's size, sign-extended if TYPE is signed. Bare char is
 * refused: its sign differs between x86 and arm64.
 */
static int parse_cast(struct parser *p, const struct token *lp)
{
	int n[C_INT_NR_SPECIFIERS] = { 0 }, words = 0, size = 0, sgn, i, c, k;
	unsigned int start = p->tok.start, end = start;
	char type[64], buf[64];

	if ((size = cast_typedef(&p->tok))) {
		end = p->tok.start + p->tok.len;
		if (lex(p))
			return -1;
	} else {
		while (p->tok.kind == T_IDENT && (k = cast_specifier(&p->tok)) >= 0) {
			n[k]++;
			words++;
			end = p->tok.start + p->tok.len;
			if (lex(p))
				return -1;
		}
	}
	snprintf(type, sizeof(type), "%.*s", (int)(end - start), p->src + start);
	if (p->tok.kind != T_RP) {
		tok_describe(p, &p->tok, buf, sizeof(buf));
		return fail(p, p->tok.col, "expected ')' after the type '%s' of the cast at column %u, got %s", type,
			    lp->col, buf), -1;
	}
	if (words) {
		/* signed unsigned char short int long */
		sgn = !n[C_INT_UNSIGNED];
		size = (int)c_int_type__size(n);
		if (!size)
			return fail(p, lp->col + (start - lp->start), "'%s' is not a C integer type", type), -1;
		if (n[C_INT_CHAR] && !n[C_INT_SIGNED] && !n[C_INT_UNSIGNED])
			return fail(p, lp->col + (start - lp->start), "'char' is signed on x86 and unsigned on arm64: write "
				    "(signed char) or (unsigned char)"), -1;
		if (sgn)
			size = -size;
	}
	if (lex(p))
		return -1;
	if (p->tok.kind == T_END)
		return fail(p, p->tok.col, "expected a value after the cast '(%s)', got end of input", type), -1;
	i = parse_expr(p, BP_UNARY);
	if (i < 0)
		return -1;
	if (p->nodes[i].type != V_INT)
		return fail(p, lp->col, "the cast '(%s)' needs an integer, but %s is a string", type,
			    node_text(p, &p->nodes[i], buf, sizeof(buf))), -1;
	sgn = size < 0;
	size = sgn ? -size : size;
	if (size >= 8) {
		/* every value is 64 bits already: nothing to do */
	} else if (p->nodes[i].kind == N_INT) {
		p->nodes[i].val = expr__cast(p->nodes[i].val, size | (sgn ? EXPR_REC_SIGNED : 0));
	} else {
		c = new_node(p, N_UNARY, lp);
		if (c < 0)
			return -1;
		p->nodes[c].op = T_LP;
		p->nodes[c].val = size | (sgn ? EXPR_REC_SIGNED : 0);
		p->nodes[c].l = i;
		p->nodes[c].end = p->nodes[i].end;
		return c;
	}
	p->nodes[i].col = p->nodes[i].op_col = lp->col;
	p->nodes[i].start = lp->start;
	return i;
}

static int parse_prefix(struct parser *p)
{
	struct token t = p->tok;
	char got[64];
	int i;

	switch (t.kind) {
	case T_INT:
		i = new_node(p, N_INT, &t);
		if (i >= 0)
			p->nodes[i].val = (__s64)t.val;
		return lex(p) ? -1 : i;
	case T_STR:
		i = new_node(p, N_STR, &t);
		if (i < 0)
			return -1;
		p->nodes[i].type = V_STR;
		p->nodes[i].val = strtab_add(p, &t);
		if (p->nodes[i].val < 0)
			return -1;
		return lex(p) ? -1 : i;
	case T_IDENT:
		return parse_ident(p);
	case T_VAR:
		return parse_var(p);
	case T_LP:
		if (lex(p))
			return -1;
		if (p->tok.kind == T_IDENT && cast_word(&p->tok))
			return parse_cast(p, &t);
		i = parse_expr(p, 0);
		if (i < 0)
			return -1;
		if (p->tok.kind != T_RP) {
			tok_describe(p, &p->tok, got, sizeof(got));
			return fail(p, p->tok.col, "expected ')' to close '(' at column %u, got %s", t.col, got), -1;
		}
		return lex(p) ? -1 : i;
	case T_MINUS:
	case T_NOT:
	case T_MATCH:
	case T_NMATCH:
		return parse_unary(p);
	default:
		tok_describe(p, &t, got, sizeof(got));
		if (p->prev.kind == T_END && !p->prev.len)
			return fail(p, t.col, "expected a value, got %s", got), -1;
		return fail(p, t.col, "expected a value after '%.*s', got %s", (int)p->prev.len, p->src + p->prev.start,
			    got), -1;
	}
}

static int make_binary(struct parser *p, const struct token *op, int l, int r)
{
	struct node *ln = &p->nodes[l], *rn = &p->nodes[r];
	char lb[64], rb[64];
	int i;

	node_text(p, ln, lb, sizeof(lb));
	node_text(p, rn, rb, sizeof(rb));
	switch (op->kind) {
	case T_EQ:
	case T_NE:
		if (ln->type != rn->type)
			return fail(p, op->col, "cannot compare %s (%s) with %s (%s)", lb,
				    ln->type == V_STR ? "a string" : "an integer", rb,
				    rn->type == V_STR ? "a string" : "an integer"), -1;
		if (ln->type == V_STR) {
			if (ln->kind == N_STR && rn->kind == N_STR)
				return fail(p, op->col, "cannot compare two string literals"), -1;
			if (ln->kind != N_STR && rn->kind != N_STR)
				return fail(p, op->col, "cannot compare two string fields (%s, %s): one side must be a "
					    "string literal", lb, rb), -1;
			if (ln->kind == N_STR) {
				int t = l;

				l = r;
				r = t;
			}
		}
		break;
	case T_MATCH:
	case T_NMATCH:
		if (ln->type != V_STR)
			return fail(p, op->col, "'%s' matches a string against a pattern, but %s is an integer",
				    tok_text[op->kind], lb), -1;
		if (ln->kind == N_STR)
			return fail(p, ln->col, "expected a string field on the left of '%s' (comm, str(argN), ...), "
				    "got the literal %s", tok_text[op->kind], lb), -1;
		if (rn->kind != N_STR)
			return fail(p, rn->col, "expected a pattern in double quotes after '%s', got %s",
				    tok_text[op->kind], rb), -1;
		break;
	default:
		if (ln->type != V_INT || rn->type != V_INT)
			return fail(p, op->col, "'%s' needs integers, but %s is a string", tok_text[op->kind],
				    ln->type != V_INT ? lb : rb), -1;
		break;
	}
	i = new_node(p, N_BINARY, op);
	if (i < 0)
		return -1;
	p->nodes[i].op = op->kind;
	p->nodes[i].l = l;
	p->nodes[i].r = r;
	p->nodes[i].col = p->nodes[l].col < p->nodes[r].col ? p->nodes[l].col : p->nodes[r].col;
	p->nodes[i].start = p->nodes[l].start < p->nodes[r].start ? p->nodes[l].start : p->nodes[r].start;
	p->nodes[i].end = p->nodes[l].end > p->nodes[r].end ? p->nodes[l].end : p->nodes[r].end;
	return i;
}

static int parse_expr(struct parser *p, int min_bp)
{
	int l, r, bp;

	if (++p->depth > EXPR_MAX_DEPTH)
		return fail(p, p->tok.col, "expression nested too deeply: at most %d levels", EXPR_MAX_DEPTH), -1;
	l = parse_prefix(p);
	while (l >= 0) {
		struct token op = p->tok;

		bp = infix_bp(op.kind);
		if (!bp || bp < min_bp)
			break;
		if (lex(p))
			return -1;
		r = parse_expr(p, bp + 1);
		if (r < 0)
			return -1;
		l = make_binary(p, &op, l, r);
	}
	p->depth--;
	return l;
}

/* ---- code generation ---- */

static int emit(struct parser *p, __u8 op, __u8 a, __u16 b, __u32 c, __s64 imm)
{
	unsigned int i = p->nr_emit++;

	if (i < EXPR_MAX_INSNS) {
		struct expr_insn *insn = &p->prog->insns[i];

		insn->op = op;
		insn->a = a;
		insn->b = b;
		insn->c = c;
		insn->imm = imm;
	}
	return i;
}

static void push(struct parser *p)
{
	if (++p->sp > p->max_sp)
		p->max_sp = p->sp;
}

static void patch_jump(struct parser *p, unsigned int at)
{
	if (at < EXPR_MAX_INSNS)
		p->prog->insns[at].b = p->nr_emit < 0xffff ? p->nr_emit : 0xffff;
}

static void gen(struct parser *p, int i)
{
	const struct node *n = &p->nodes[i];
	unsigned int j;

	if (p->nr_emit > EXPR_MAX_EMIT)
		return;
	switch (n->kind) {
	case N_INT:
		emit(p, EXPR_OP_PUSH, 0, 0, 0, n->val);
		push(p);
		return;
	case N_FIELD:
		if (n->field.kind == EXPR_FIELD_BUILTIN)
			emit(p, EXPR_OP_FIELD, n->field.builtin, 0, 0, 0);
		else
			emit(p, EXPR_OP_REC, n->field.size | (n->field.is_signed ? EXPR_REC_SIGNED : 0),
			     n->field.offset, 0, 0);
		push(p);
		return;
	case N_VAR:
		emit(p, EXPR_OP_VAR, n->val, 0, 0, 0);
		p->prog->flags |= 1u << n->val;
		push(p);
		return;
	case N_HIT:
		emit(p, EXPR_OP_HIT, n->str_arg, n->op, 0, n->val);
		push(p);
		return;
	case N_STR:
	case N_SFIELD:
		return; /* only inside string comparisons, see below */
	case N_UNARY:
		gen(p, n->l);
		if (n->op == T_LP)
			emit(p, EXPR_OP_CAST, n->val, 0, 0, 0);
		else
			emit(p, n->op == T_MINUS ? EXPR_OP_NEG : n->op == T_NOT ? EXPR_OP_LNOT : EXPR_OP_BNOT, 0, 0, 0, 0);
		return;
	case N_BINARY:
		break;
	}

	if (n->op == T_AND || n->op == T_OR) {
		gen(p, n->l);
		j = emit(p, n->op == T_AND ? EXPR_OP_JFALSE : EXPR_OP_JTRUE, 0, 0, 0, 0);
		p->sp--;
		gen(p, n->r);
		emit(p, EXPR_OP_BOOL, 0, 0, 0, 0);
		patch_jump(p, j);
		return;
	}
	if (p->nodes[n->l].type == V_STR) {
		const struct node *s = &p->nodes[n->l], *lit = &p->nodes[n->r];
		int glob = n->op == T_MATCH || n->op == T_NMATCH;

		emit(p, EXPR_OP_STR, s->str_src, lit->val, s->str_arg, glob ? EXPR_STR_GLOB : EXPR_STR_EQ);
		push(p);
		if (n->op == T_NE || n->op == T_NMATCH)
			emit(p, EXPR_OP_LNOT, 0, 0, 0, 0);
		return;
	}
	gen(p, n->l);
	gen(p, n->r);
	switch (n->op) {
	case T_PLUS: emit(p, EXPR_OP_ADD, 0, 0, 0, 0); break;
	case T_MINUS: emit(p, EXPR_OP_SUB, 0, 0, 0, 0); break;
	case T_STAR: emit(p, EXPR_OP_MUL, 0, 0, 0, 0); break;
	case T_SLASH: emit(p, EXPR_OP_DIV, 0, 0, 0, 0); break;
	case T_PERCENT: emit(p, EXPR_OP_MOD, 0, 0, 0, 0); break;
	case T_BAND: emit(p, EXPR_OP_AND, 0, 0, 0, 0); break;
	case T_BOR: emit(p, EXPR_OP_OR, 0, 0, 0, 0); break;
	case T_XOR: emit(p, EXPR_OP_XOR, 0, 0, 0, 0); break;
	case T_EQ: emit(p, EXPR_OP_EQ, 0, 0, 0, 0); break;
	case T_NE: emit(p, EXPR_OP_NE, 0, 0, 0, 0); break;
	case T_LT: emit(p, EXPR_OP_LT, 0, 0, 0, 0); break;
	case T_LE: emit(p, EXPR_OP_LE, 0, 0, 0, 0); break;
	case T_GT: emit(p, EXPR_OP_GT, 0, 0, 0, 0); break;
	case T_GE: emit(p, EXPR_OP_GE, 0, 0, 0, 0); break;
	default: break;
	}
	p->sp--;
}

int expr__compile(const char *src, const struct expr_compile_opts *opts, struct expr_prog *prog, char *err,
		  size_t err_size)
{
	struct parser p = {
		.src = src,
		.opts = opts,
		.prog = prog,
		.err = err,
		.err_size = err_size,
	};
	char buf[64];
	int root;

	if (err && err_size)
		err[0] = 0;
	if (!src || !prog)
		return -EINVAL;
	memset(prog, 0, sizeof(*prog));
	p.src_len = strlen(src);
	p.max_nodes = p.src_len + 2;
	p.nodes = calloc(p.max_nodes, sizeof(*p.nodes));
	if (!p.nodes) {
		if (err && err_size)
			snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	if (lex(&p))
		goto out;
	root = parse_expr(&p, 0);
	if (root < 0)
		goto out;
	if (p.tok.kind != T_END) {
		tok_describe(&p, &p.tok, buf, sizeof(buf));
		fail(&p, p.tok.col, "expected an operator or end of input, got %s", buf);
		goto out;
	}
	if (p.nodes[root].type != V_INT) {
		const struct node *n = &p.nodes[root];

		fail(&p, n->col, "%s is a string, not a condition (compare it: %.*s == \"...\")",
		     node_text(&p, n, buf, sizeof(buf)), (int)(n->end - n->start), src + n->start);
		goto out;
	}
	gen(&p, root);
	if (p.nr_emit > EXPR_MAX_INSNS) {
		fail(&p, 0, "expression too long: %s%u instructions, at most %d", p.nr_emit > EXPR_MAX_EMIT ? "over " : "",
		     p.nr_emit, EXPR_MAX_INSNS);
		p.error = -E2BIG;
		goto out;
	}
	if (p.max_sp > EXPR_MAX_STACK) {
		fail(&p, 0, "expression too deeply nested: needs %u stack slots, at most %d (split it with && or ||)",
		     p.max_sp, EXPR_MAX_STACK);
		p.error = -E2BIG;
		goto out;
	}
	prog->nr_insns = p.nr_emit;
	prog->max_stack = p.max_sp;
	prog->nr_hits = p.nr_hits;
out:
	free(p.nodes);
	if (p.error)
		memset(prog, 0, sizeof(*prog));
	return p.error;
}

/* ---- userspace evaluator: mirrors bpf/expr.bpf.h ---- */

struct expr_count {
	__u32 tid;
	__u64 n;
};

struct expr_state {
	__u64 hits[EXPR_MAX_HITS];
	struct expr_count *counts; /* $count per thread, like expr_counts {tid, slot} in BPF */
	size_t nr_counts, max_counts;
};

struct expr_state *expr_state__new(void)
{
	return calloc(1, sizeof(struct expr_state));
}

void expr_state__delete(struct expr_state *st)
{
	if (!st)
		return;
	free(st->counts);
	free(st);
}

/* One more hit by thread @tid: its new $count, or 0 without memory. */
static __u64 count_hit(struct expr_state *st, __u32 tid)
{
	struct expr_count *tmp;

	for (size_t i = 0; i < st->nr_counts; i++)
		if (st->counts[i].tid == tid)
			return ++st->counts[i].n;
	if (st->nr_counts == st->max_counts) {
		size_t max = st->max_counts ? 2 * st->max_counts : 16;

		tmp = realloc(st->counts, max * sizeof(*tmp));
		if (!tmp)
			return 0;
		st->counts = tmp;
		st->max_counts = max;
	}
	st->counts[st->nr_counts].tid = tid;
	st->counts[st->nr_counts].n = 1;
	st->nr_counts++;
	return 1;
}

static int rec_read(const struct expr_env *env, __u32 off, __u32 size, void *dst)
{
	if (!env->rec || (__u64)off + size > env->rec_size)
		return -1;
	memcpy(dst, (const char *)(uintptr_t)env->rec + off, size);
	return 0;
}

/*
 * bpf_probe_read_user_str() for our own address space: process_vm_readv()
 * turns a bad address into EFAULT instead of a crash, so str(argN) of a
 * garbage pointer is a failed read (condition false) here as in BPF.
 */
static int read_user_str(__u64 addr, char *str)
{
	struct iovec local = { .iov_base = str, .iov_len = EXPR_STR_MAX - 1 };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = EXPR_STR_MAX - 1 };
	ssize_t got;
	size_t want, n;

	if (!addr)
		return -1;
	got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got < 0) {
		/* the string may end before an unmapped page: retry up to the page end */
		want = 4096 - (addr & 4095);
		if (want >= EXPR_STR_MAX - 1)
			return -1;
		local.iov_len = remote.iov_len = want;
		got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (got < 0)
			return -1;
	}
	n = strnlen(str, got);
	if (n == (size_t)got && got < EXPR_STR_MAX - 1)
		return -1; /* no NUL before the end of readable memory */
	str[n] = 0; /* at most 63 bytes, like bpf_probe_read_user_str(buf, 64, ...) */
	return 0;
}

static int load_str(const struct expr_insn *insn, const struct expr_env *env, char *str)
{
	__u32 c = insn->c, off, size, loc;
	size_t n;

	switch (insn->a) {
	case EXPR_S_COMM:
		memcpy(str, env->comm, EXPR_COMM_LEN);
		str[EXPR_COMM_LEN] = 0;
		return 0;
	case EXPR_S_USER:
		if (c >= EXPR_NR_ARGS || !env->args[c])
			return -1;
		return read_user_str(env->args[c], str);
	case EXPR_S_REC_ARRAY:
		off = c & 0xffff;
		size = c >> 16;
		if (!env->rec || off + size > env->rec_size)
			return -1;
		if (size > EXPR_STR_MAX - 1)
			size = EXPR_STR_MAX - 1;
		memcpy(str, (const char *)(uintptr_t)env->rec + off, size);
		str[size] = 0;
		return 0;
	case EXPR_S_REC_LOC:
		if (rec_read(env, c & 0xffff, 4, &loc))
			return -1;
		off = loc & 0xffff;
		size = loc >> 16;
		if (off + size > env->rec_size)
			return -1;
		if (size > EXPR_STR_MAX)
			size = EXPR_STR_MAX;
		/* bpf_probe_read_kernel_str(): at most size - 1 bytes, stops at NUL */
		n = size ? strnlen((const char *)(uintptr_t)env->rec + off, size - 1) : 0;
		memcpy(str, (const char *)(uintptr_t)env->rec + off, n);
		str[n] = 0;
		return 0;
	}
	return -1;
}

/* The glob state machine of expr_glob_step(), step for step. Returns 0, 1, or -1 (out of steps). */
static int match(const char *str, const char *pat, int glob)
{
	int s = 0, p = 0, star_p = -1, star_s = 0;

	for (int i = 0; i < EXPR_GLOB_STEPS; i++) {
		char sc = s < EXPR_STR_MAX ? str[s] : 0;
		char pc = p < EXPR_STR_MAX ? pat[p] : 0;

		if (sc) {
			if (pc && ((glob && pc == '?') || (pc == sc && !(glob && pc == '*')))) {
				s++;
				p++;
			} else if (glob && pc == '*') {
				star_p = p;
				star_s = s;
				p++;
			} else if (star_p >= 0) {
				p = star_p + 1;
				s = ++star_s;
			} else {
				return 0;
			}
			continue;
		}
		if (glob && pc == '*') {
			p++;
			continue;
		}
		return pc == 0;
	}
	return -1;
}

static __u64 uabs(__s64 x)
{
	return x < 0 ? -(__u64)x : (__u64)x;
}

static int field_value(const struct expr_env *env, unsigned int f, __s64 *v)
{
	switch (f) {
	case EXPR_F_PID: *v = env->pid; return 0;
	case EXPR_F_TID: *v = env->tid; return 0;
	case EXPR_F_PPID: *v = env->ppid; return 0;
	case EXPR_F_UID: *v = env->uid; return 0;
	case EXPR_F_GID: *v = env->gid; return 0;
	case EXPR_F_CPU: *v = env->cpu; return 0;
	case EXPR_F_CGROUP: *v = env->cgroup; return 0;
	case EXPR_F_NR: *v = env->nr; return 0;
	case EXPR_F_RET: *v = env->ret; return 0;
	}
	if (f >= EXPR_F_ARG0 && f < EXPR_F_ARG0 + EXPR_NR_ARGS) {
		*v = (__s64)env->args[f - EXPR_F_ARG0];
		return 0;
	}
	return -1;
}

__s64 expr__cast(__s64 x, unsigned int a)
{
	int sgn = a & EXPR_REC_SIGNED;

	switch (a & EXPR_REC_SIZE_MASK) {
	case 1: return sgn ? (__s64)(__s8)x : (__s64)(__u8)x;
	case 2: return sgn ? (__s64)(__s16)x : (__s64)(__u16)x;
	case 4: return sgn ? (__s64)(__s32)x : (__s64)(__u32)x;
	}
	return x;
}

static int rec_value(const struct expr_env *env, __u32 off, __u8 a, __s64 *v)
{
	__u32 size = a & EXPR_REC_SIZE_MASK;
	__u8 u8;
	__u16 u16;
	__u32 u32;
	__u64 u64;
	int sgn = a & EXPR_REC_SIGNED;

	switch (size) {
	case 1:
		if (rec_read(env, off, 1, &u8))
			return -1;
		*v = sgn ? (__s64)(__s8)u8 : (__s64)u8;
		return 0;
	case 2:
		if (rec_read(env, off, 2, &u16))
			return -1;
		*v = sgn ? (__s64)(__s16)u16 : (__s64)u16;
		return 0;
	case 4:
		if (rec_read(env, off, 4, &u32))
			return -1;
		*v = sgn ? (__s64)(__s32)u32 : (__s64)u32;
		return 0;
	case 8:
		if (rec_read(env, off, 8, &u64))
			return -1;
		*v = (__s64)u64;
		return 0;
	}
	return -1;
}

int expr__eval(const struct expr_prog *prog, const struct expr_env *env, struct expr_state *st)
{
	__s64 stack[EXPR_MAX_STACK], x, y, v = 0, count = 0;
	char str[EXPR_STR_MAX];
	unsigned int sp = 0, pc = 0;
	__u64 q;
	int m;

	if (!prog || !env || prog->nr_insns > EXPR_MAX_INSNS || prog->nr_hits > EXPR_MAX_HITS)
		return -EINVAL;
	if ((prog->flags & EXPR_PROG_COUNT || prog->nr_hits) && !st)
		return -EINVAL;
	/* Every evaluation is a hit, whether or not the instruction reading $count runs. */
	if (prog->flags & EXPR_PROG_COUNT) {
		count = count_hit(st, (__u32)env->tid);
		if (!count)
			return -ENOMEM;
	}
	for (;;) {
		const struct expr_insn *insn;

		if (pc >= prog->nr_insns)
			return sp >= 1 ? stack[sp - 1] != 0 : -EINVAL;
		insn = &prog->insns[pc++];
		switch (insn->op) {
		case EXPR_OP_PUSH:
			v = insn->imm;
			goto push;
		case EXPR_OP_FIELD:
			if (field_value(env, insn->a, &v))
				return -EINVAL;
			goto push;
		case EXPR_OP_REC:
			if (rec_value(env, insn->b, insn->a, &v))
				return 0;
			goto push;
		case EXPR_OP_STR:
			if (insn->b >= EXPR_STRTAB_SIZE || insn->a > EXPR_S_REC_LOC)
				return -EINVAL;
			if (load_str(insn, env, str))
				return 0;
			m = match(str, prog->strtab + insn->b, insn->imm == EXPR_STR_GLOB);
			if (m < 0)
				return 0;
			v = m;
			goto push;
		case EXPR_OP_VAR:
			if (insn->a == EXPR_VAR_COUNT) {
				if (count <= 0)
					return -EINVAL; /* $count without EXPR_PROG_COUNT */
				v = count;
				goto push;
			}
			if (insn->a >= EXPR_MAX_VARS)
				return -EINVAL;
			if (!(env->vars_set & (1u << insn->a)))
				return 0;
			v = env->vars[insn->a];
			goto push;
		case EXPR_OP_HIT:
			if (insn->a >= prog->nr_hits || insn->imm < 1)
				return -EINVAL;
			q = ++st->hits[insn->a];
			if (insn->b == EXPR_HIT_ONCE)
				v = q == 1;
			else if (insn->b == EXPR_HIT_AFTER)
				v = q >= (__u64)insn->imm;
			else if (insn->b == EXPR_HIT_EVERY)
				v = q % (__u64)insn->imm == 0;
			else
				return -EINVAL;
			goto push;
		case EXPR_OP_NEG:
		case EXPR_OP_BNOT:
		case EXPR_OP_LNOT:
		case EXPR_OP_BOOL:
		case EXPR_OP_CAST:
			if (sp < 1)
				return -EINVAL;
			x = stack[sp - 1];
			if (insn->op == EXPR_OP_NEG)
				stack[sp - 1] = (__s64)(0 - (__u64)x);
			else if (insn->op == EXPR_OP_BNOT)
				stack[sp - 1] = ~x;
			else if (insn->op == EXPR_OP_LNOT)
				stack[sp - 1] = !x;
			else if (insn->op == EXPR_OP_CAST)
				stack[sp - 1] = expr__cast(x, insn->a);
			else
				stack[sp - 1] = x != 0;
			continue;
		case EXPR_OP_JFALSE:
		case EXPR_OP_JTRUE:
			if (sp < 1 || insn->b < pc)
				return -EINVAL;
			x = stack[sp - 1];
			if ((insn->op == EXPR_OP_JFALSE) == (x == 0)) {
				stack[sp - 1] = x != 0;
				pc = insn->b;
			} else {
				sp--;
			}
			continue;
		}

		if (sp < 2)
			return -EINVAL;
		x = stack[sp - 2];
		y = stack[sp - 1];
		switch (insn->op) {
		case EXPR_OP_ADD: v = (__s64)((__u64)x + (__u64)y); break;
		case EXPR_OP_SUB: v = (__s64)((__u64)x - (__u64)y); break;
		case EXPR_OP_MUL: v = (__s64)((__u64)x * (__u64)y); break;
		case EXPR_OP_DIV:
			if (!y)
				return 0;
			q = uabs(x) / uabs(y);
			v = (__s64)((x < 0) != (y < 0) ? 0 - q : q);
			break;
		case EXPR_OP_MOD:
			if (!y)
				return 0;
			q = uabs(x) % uabs(y);
			v = (__s64)(x < 0 ? 0 - q : q);
			break;
		case EXPR_OP_AND: v = x & y; break;
		case EXPR_OP_OR: v = x | y; break;
		case EXPR_OP_XOR: v = x ^ y; break;
		case EXPR_OP_EQ: v = x == y; break;
		case EXPR_OP_NE: v = x != y; break;
		case EXPR_OP_LT: v = x < y; break;
		case EXPR_OP_LE: v = x <= y; break;
		case EXPR_OP_GT: v = x > y; break;
		case EXPR_OP_GE: v = x >= y; break;
		default:
			return -EINVAL;
		}
		stack[sp - 2] = v;
		sp--;
		continue;
push:
		if (sp >= EXPR_MAX_STACK)
			return -EINVAL;
		stack[sp++] = v;
	}
}

/* ---- dump ---- */

static const char *op_name(unsigned int op)
{
	switch (op) {
	case EXPR_OP_PUSH: return "push";
	case EXPR_OP_FIELD: return "field";
	case EXPR_OP_REC: return "rec";
	case EXPR_OP_STR: return "str";
	case EXPR_OP_ADD: return "add";
	case EXPR_OP_SUB: return "sub";
	case EXPR_OP_MUL: return "mul";
	case EXPR_OP_DIV: return "div";
	case EXPR_OP_MOD: return "mod";
	case EXPR_OP_AND: return "and";
	case EXPR_OP_OR: return "or";
	case EXPR_OP_XOR: return "xor";
	case EXPR_OP_EQ: return "eq";
	case EXPR_OP_NE: return "ne";
	case EXPR_OP_LT: return "lt";
	case EXPR_OP_LE: return "le";
	case EXPR_OP_GT: return "gt";
	case EXPR_OP_GE: return "ge";
	case EXPR_OP_NEG: return "neg";
	case EXPR_OP_BNOT: return "bnot";
	case EXPR_OP_LNOT: return "lnot";
	case EXPR_OP_BOOL: return "bool";
	case EXPR_OP_CAST: return "cast";
	case EXPR_OP_JFALSE: return "jfalse";
	case EXPR_OP_JTRUE: return "jtrue";
	case EXPR_OP_VAR: return "var";
	case EXPR_OP_HIT: return "hit";
	}
	return NULL;
}

void expr__dump(const struct expr_prog *prog, FILE *f)
{
	static const char *const src_names[] = { "comm", "user", "rec-array", "rec-loc" };

	fprintf(f, "expr: %u instructions, stack %u, strings %u bytes%s%s%s", prog->nr_insns, prog->max_stack,
		prog->strtab_len, prog->flags & EXPR_PROG_COUNT ? ", $count" : "",
		prog->flags & EXPR_PROG_ELAPSED ? ", $elapsed" : "",
		prog->flags & EXPR_PROG_DURATION ? ", $duration" : "");
	if (prog->nr_hits)
		fprintf(f, ", %u hit counter%s", prog->nr_hits, prog->nr_hits == 1 ? "" : "s");
	fputc('\n', f);
	for (unsigned int i = 0; i < prog->nr_insns && i < EXPR_MAX_INSNS; i++) {
		const struct expr_insn *in = &prog->insns[i];
		const char *name = op_name(in->op);

		fprintf(f, "%4u: ", i);
		if (!name) {
			fprintf(f, "op 0x%02x ?\n", in->op);
			continue;
		}
		switch (in->op) {
		case EXPR_OP_PUSH:
		case EXPR_OP_FIELD:
		case EXPR_OP_REC:
		case EXPR_OP_STR:
		case EXPR_OP_JFALSE:
		case EXPR_OP_JTRUE:
		case EXPR_OP_VAR:
		case EXPR_OP_HIT:
		case EXPR_OP_CAST:
			fprintf(f, "%-6s", name);
			break;
		default:
			fprintf(f, "%s\n", name);
			continue;
		}
		switch (in->op) {
		case EXPR_OP_PUSH:
			fprintf(f, " %lld\n", (long long)in->imm);
			break;
		case EXPR_OP_FIELD:
			fprintf(f, " %s\n", in->a < EXPR_F_COUNT ? builtin_names[in->a] : "?");
			break;
		case EXPR_OP_REC:
			fprintf(f, " offset %u size %u %s\n", in->b, in->a & EXPR_REC_SIZE_MASK,
				in->a & EXPR_REC_SIGNED ? "signed" : "unsigned");
			break;
		case EXPR_OP_STR:
			fprintf(f, " %s", in->a <= EXPR_S_REC_LOC ? src_names[in->a] : "?");
			if (in->a == EXPR_S_USER)
				fprintf(f, " arg%u", in->c);
			else if (in->a == EXPR_S_REC_ARRAY)
				fprintf(f, " offset %u size %u", in->c & 0xffff, in->c >> 16);
			else if (in->a == EXPR_S_REC_LOC)
				fprintf(f, " offset %u", in->c);
			fprintf(f, " %s \"%.*s\"\n", in->imm == EXPR_STR_GLOB ? "glob" : "eq",
				in->b < EXPR_STRTAB_SIZE ? (int)strnlen(prog->strtab + in->b, EXPR_STRTAB_SIZE - in->b) : 0,
				in->b < EXPR_STRTAB_SIZE ? prog->strtab + in->b : "");
			break;
		case EXPR_OP_JFALSE:
		case EXPR_OP_JTRUE:
			fprintf(f, " -> %u\n", in->b);
			break;
		case EXPR_OP_VAR:
			fprintf(f, " %s\n", in->a < EXPR_NR_VAR_NAMES ? var_names[in->a] : "?");
			break;
		case EXPR_OP_CAST:
			fprintf(f, " %c%u\n", in->a & EXPR_REC_SIGNED ? 's' : 'u', (in->a & EXPR_REC_SIZE_MASK) * 8);
			break;
		case EXPR_OP_HIT:
			if (in->b == EXPR_HIT_ONCE)
				fprintf(f, " #%u once\n", in->a);
			else
				fprintf(f, " #%u %s %lld\n", in->a, in->b == EXPR_HIT_AFTER ? "after" : "every",
					(long long)in->imm);
			break;
		}
	}
}

__u32 expr__builtins_used(const struct expr_prog *prog)
{
	__u32 used = 0;

	for (__u32 i = 0; i < prog->nr_insns && i < EXPR_MAX_INSNS; i++) {
		const struct expr_insn *in = &prog->insns[i];

		if (in->op == EXPR_OP_FIELD && in->a < 32)
			used |= 1u << in->a;
		else if (in->op == EXPR_OP_STR && in->a == EXPR_S_COMM)
			used |= 1u << EXPR_F_COMM;
	}
	return used;
}

void expr__quote(const char *src, const char *err, char *buf, size_t size)
{
	size_t len = strlen(src), start = 0, n = len, col = 0;
	char part[EXPR_QUOTE_MAX + 1];
	const char *c;

	if (!size)
		return;
	if (err && (c = strstr(err, "column ")))
		col = strtoul(c + 7, NULL, 10);
	if (len > EXPR_QUOTE_MAX) {
		n = EXPR_QUOTE_MAX;
		/* The column (1-based) three quarters of the way in: what led to it shows. */
		if (col > EXPR_QUOTE_MAX * 3 / 4)
			start = col - EXPR_QUOTE_MAX * 3 / 4;
		if (start > len - n)
			start = len - n;
	}
	for (size_t i = 0; i < n; i++)
		part[i] = (unsigned char)src[start + i] < 0x20 || src[start + i] == 0x7f ? '?' : src[start + i];
	part[n] = '\0';
	if (len <= EXPR_QUOTE_MAX)
		snprintf(buf, size, "'%s'", part);
	else
		snprintf(buf, size, "'%s%s%s' (characters %zu-%zu of %zu)", start ? "..." : "", part,
			 start + n < len ? "..." : "", start + 1, start + n, len);
}
