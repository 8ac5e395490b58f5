// SPDX-License-Identifier: BSD-2-Clause
/*
 * The condition language's front: lexer, Pratt parser with C precedence,
 * casts and type check, from a condition's text to a typed tree
 * (auxtrig/lang/expr_parse.h). Code generation is in expr.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_parse.h"
#include "auxtrig/sys/c_int_type.h"
#include "auxtrig/sys/tracefs.h"

#define EXPR_MAX_DEPTH 64 /* parser recursion: parentheses and unary operators */

static int resolve_builtin_only(void *ctx, const char *name, struct expr_field *field, char *why, size_t why_size)
{
	return expr__resolve_builtin(name, field);
}

/* ---- lexer ---- */

static const char *const tok_text[] = {
	[T_LP] = "(", [T_RP] = ")", [T_COMMA] = ",", [T_EQ] = "==", [T_NE] = "!=", [T_LT] = "<",
	[T_LE] = "<=", [T_GT] = ">", [T_GE] = ">=", [T_MATCH] = "~", [T_NMATCH] = "!~", [T_NOT] = "!",
	[T_AND] = "&&", [T_OR] = "||", [T_BAND] = "&", [T_BOR] = "|", [T_XOR] = "^", [T_PLUS] = "+",
	[T_MINUS] = "-", [T_STAR] = "*", [T_SLASH] = "/", [T_PERCENT] = "%",
};

int expr_parser__fail(struct expr_parser *p, unsigned int col, const char *fmt, ...)
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

static void tok_describe(const struct expr_parser *p, const struct token *t, char *buf, size_t size)
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
static int lex_duration(struct expr_parser *p, struct token *t, unsigned int base, unsigned int i, __u64 v)
{
	const char *s = p->src + p->pos;
	unsigned int j = i;

	while (is_ident_char(s[j]))
		j++;
	for (size_t u = 0; u < sizeof(duration_units) / sizeof(duration_units[0]); u++) {
		if (strlen(duration_units[u].name) != j - i || strncmp(s + i, duration_units[u].name, j - i))
			continue;
		if (base == 16 || (base == 8 && v))
			return expr_parser__fail(p, t->col, "a duration is a decimal number and a unit: 500ns, 250us, 1ms, 2s"), -1;
		if (v > (__u64)INT64_MAX / duration_units[u].ns)
			return expr_parser__fail(p, t->col, "duration too large: at most %lld%s", (long long)(INT64_MAX / duration_units[u].ns),
				    duration_units[u].name), -1;
		t->kind = T_INT;
		t->val = v * duration_units[u].ns;
		t->duration = 1;
		t->len = j;
		return 1;
	}
	if (base != 16 && strchr("nums", s[i]))
		return expr_parser__fail(p, t->col, "unknown unit '%.*s' in a duration (ns, us, ms, s: 500ns, 250us, 1ms, 2s)",
			    (int)(j - i), s + i), -1;
	return 0;
}

static int lex_number(struct expr_parser *p, struct token *t)
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
			return expr_parser__fail(p, t->col, "invalid digit '%c' in %s number", c,
				    base == 16 ? "a hexadecimal" : base == 8 ? "an octal" : "a decimal");
		if (v > (UINT64_MAX - d) / base)
			return expr_parser__fail(p, t->col, "number too large: at most 64 bits");
		v = v * base + d;
		digits++;
	}
	if (base == 16 && !digits)
		return expr_parser__fail(p, t->col, "expected hexadecimal digits after '0x'");
	t->kind = T_INT;
	t->val = v;
	t->len = i;
	return 0;
}

static int lex_string(struct expr_parser *p, struct token *t)
{
	const char *s = p->src + p->pos;
	unsigned int i = 1, n = 0;

	for (;;) {
		char c = s[i];

		if (!c)
			return expr_parser__fail(p, t->col, "unterminated string: expected a closing '\"'");
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
				return expr_parser__fail(p, t->col + i - 1, "unknown escape '\\%c' in a string (known: \\\\ \\\" \\n \\t)",
					    e ? e : ' ');
			}
			i++;
		}
		if (n >= EXPR_STR_MAX - 1)
			return expr_parser__fail(p, t->col, "string too long: at most %d bytes", EXPR_STR_MAX - 1);
		t->str[n++] = c;
	}
	t->str[n] = 0;
	t->str_len = n;
	t->kind = T_STR;
	t->len = i;
	return 0;
}

/* Reads the next token into p->tok. */
static int lex(struct expr_parser *p)
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
			return expr_parser__fail(p, t->col, "shift operators '<<' and '>>' are not supported");
		else if (c == '>' && d == '>')
			return expr_parser__fail(p, t->col, "shift operators '<<' and '>>' are not supported");
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
				return expr_parser__fail(p, t->col, "'=' is not an operator (did you mean '=='?)");
			case '\'':
				return expr_parser__fail(p, t->col, "strings are written in double quotes");
			default:
				if (c > ' ' && c < 0x7f)
					return expr_parser__fail(p, t->col, "unexpected character '%c'", c);
				return expr_parser__fail(p, t->col, "unexpected byte 0x%02x", (unsigned char)c);
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

static int new_node(struct expr_parser *p, enum node_kind kind, const struct token *t)
{
	struct node *n;

	if (p->nr_nodes >= p->max_nodes)
		return expr_parser__fail(p, t->col, "expression too complex"), -1;
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
static const char *node_text(const struct expr_parser *p, const struct node *n, char *buf, size_t size)
{
	unsigned int len = n->end - n->start;

	if (len > 40)
		snprintf(buf, size, "'%.37s...'", p->src + n->start);
	else
		snprintf(buf, size, "'%.*s'", (int)len, p->src + n->start);
	return buf;
}

static int strtab_add(struct expr_parser *p, const struct token *t)
{
	struct expr_prog *prog = p->prog;
	unsigned int off = 0;

	while (off < prog->strtab_len) {
		if (!strcmp(prog->strtab + off, t->str))
			return off;
		off += strlen(prog->strtab + off) + 1;
	}
	if (prog->strtab_len + t->str_len + 1 > EXPR_STRTAB_SIZE) {
		expr_parser__fail(p, t->col, "expression too long: its strings need more than %d bytes", EXPR_STRTAB_SIZE);
		p->error = -E2BIG;
		return -1;
	}
	memcpy(prog->strtab + off, t->str, t->str_len + 1);
	prog->strtab_len += t->str_len + 1;
	return off;
}

static int resolve(struct expr_parser *p, const struct token *t, struct expr_field *f)
{
	char why[128] = "";
	int err;

	memset(f, 0, sizeof(*f));
	if (t->len >= EXPR_STR_MAX)
		return expr_parser__fail(p, t->col, "unknown field '%.*s'", (int)t->len, p->src + t->start);
	err = p->opts && p->opts->resolve ? p->opts->resolve(p->opts->resolve_ctx, t->str, f, why, sizeof(why))
					    : resolve_builtin_only(NULL, t->str, f, why, sizeof(why));
	if (err == -ENOENT)
		return expr_parser__fail(p, t->col, "unknown field '%s'%s%s", t->str, why[0] ? ": " : "", why);
	if (err)
		return expr_parser__fail(p, t->col, "'%s' is not available here%s%s", t->str, why[0] ? ": " : "", why);
	switch (f->kind) {
	case EXPR_FIELD_VAR:
		return expr_parser__fail(p, t->col, "'%s': the resolver returned a variable for a field name", t->str);
	case EXPR_FIELD_BUILTIN:
		if (f->builtin > EXPR_F_COMM)
			return expr_parser__fail(p, t->col, "'%s': the resolver returned an unknown builtin %u", t->str, f->builtin);
		return 0;
	case EXPR_FIELD_REC_INT:
		if ((f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) || f->offset > 0xffff)
			return expr_parser__fail(p, t->col, "field '%s' (offset %u, size %u) cannot be read as an integer", t->str,
				    f->offset, f->size);
		return 0;
	case EXPR_FIELD_REC_STR:
	case EXPR_FIELD_REC_LOC:
		if (f->offset > 0xffff || f->size > 0xffff || (f->kind == EXPR_FIELD_REC_STR && !f->size))
			return expr_parser__fail(p, t->col, "field '%s' (offset %u, size %u) cannot be read as a string", t->str,
				    f->offset, f->size);
		return 0;
	}
	return expr_parser__fail(p, t->col, "'%s': the resolver returned an unknown field kind", t->str);
}

static int parse_expr(struct expr_parser *p, int min_bp);

/* str(argN) */
static int parse_str_call(struct expr_parser *p, const struct token *name)
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
		return expr_parser__fail(p, arg.col, "expected arg0..arg5 inside str(), got %s", got), -1;
	}
	if (resolve(p, &arg, &f))
		return -1;
	if (lex(p))
		return -1;
	if (p->tok.kind != T_RP) {
		char got[64];

		tok_describe(p, &p->tok, got, sizeof(got));
		return expr_parser__fail(p, p->tok.col, "expected ')' to close 'str(' at column %u, got %s", name->col + 3, got), -1;
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
static int parse_hit(struct expr_parser *p, const struct token *word)
{
	struct token n = p->tok;
	char got[64];
	int i;

	if (p->nr_hits >= EXPR_MAX_HITS) {
		expr_parser__fail(p, word->col, "too many once/after/every terms: at most %d in one condition", EXPR_MAX_HITS);
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
		return expr_parser__fail(p, n.col, "'%s' needs a count: %s N, N a number of 1 or more, got %s", word->str, word->str,
			    got), -1;
	}
	if (n.duration)
		return expr_parser__fail(p, n.col, "'%s' counts evaluations, not time: got the duration '%.*s'", word->str,
			    (int)n.len, p->src + n.start), -1;
	if (n.val < 1 || n.val > INT64_MAX)
		return expr_parser__fail(p, n.col, "'%s' needs a count of 1 or more%s, got %.*s", word->str,
			    n.val ? " and at most 9223372036854775807" : "", (int)n.len, p->src + n.start), -1;
	p->nodes[i].val = (__s64)n.val;
	p->nodes[i].end = n.start + n.len;
	return lex(p) ? -1 : i;
}

/* $count, $elapsed, $duration */
static int parse_var(struct expr_parser *p)
{
	struct token t = p->tok;
	struct expr_field f;
	char why[128] = "";
	int err, i;

	if (t.len >= EXPR_STR_MAX)
		return expr_parser__fail(p, t.col, "unknown variable '%.*s'", (int)t.len, p->src + t.start), -1;
	err = p->opts && p->opts->resolve ? p->opts->resolve(p->opts->resolve_ctx, t.str, &f, why, sizeof(why))
					  : expr__resolve_builtin(t.str, &f);
	if (err == -ENOENT || (!err && f.kind != EXPR_FIELD_VAR))
		return expr_parser__fail(p, t.col, "unknown variable '%s' (known: $count, $elapsed, $duration)", t.str), -1;
	if (err)
		return expr_parser__fail(p, t.col, "'%s' is not available here%s%s", t.str, why[0] ? ": " : "", why), -1;
	if (f.builtin >= EXPR_NR_VAR_NAMES)
		return expr_parser__fail(p, t.col, "'%s': the resolver returned an unknown variable %u", t.str, f.builtin), -1;
	i = new_node(p, N_VAR, &t);
	if (i < 0)
		return -1;
	p->nodes[i].val = f.builtin;
	return lex(p) ? -1 : i;
}

static int parse_ident(struct expr_parser *p)
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

static int parse_unary(struct expr_parser *p)
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
			return expr_parser__fail(p, t.col + 1, "'~' needs an integer, but %s is a string",
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
		return expr_parser__fail(p, t.col, "'%s' needs an integer, but %s is a string", tok_text[t.kind],
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
static int parse_cast(struct expr_parser *p, const struct token *lp)
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
		return expr_parser__fail(p, p->tok.col, "expected ')' after the type '%s' of the cast at column %u, got %s", type,
			    lp->col, buf), -1;
	}
	if (words) {
		/* signed unsigned char short int long */
		sgn = !n[C_INT_UNSIGNED];
		size = (int)c_int_type__size(n);
		if (!size)
			return expr_parser__fail(p, lp->col + (start - lp->start), "'%s' is not a C integer type", type), -1;
		if (n[C_INT_CHAR] && !n[C_INT_SIGNED] && !n[C_INT_UNSIGNED])
			return expr_parser__fail(p, lp->col + (start - lp->start), "'char' is signed on x86 and unsigned on arm64: write "
				    "(signed char) or (unsigned char)"), -1;
		if (sgn)
			size = -size;
	}
	if (lex(p))
		return -1;
	if (p->tok.kind == T_END)
		return expr_parser__fail(p, p->tok.col, "expected a value after the cast '(%s)', got end of input", type), -1;
	i = parse_expr(p, BP_UNARY);
	if (i < 0)
		return -1;
	if (p->nodes[i].type != V_INT)
		return expr_parser__fail(p, lp->col, "the cast '(%s)' needs an integer, but %s is a string", type,
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

static int parse_prefix(struct expr_parser *p)
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
			return expr_parser__fail(p, p->tok.col, "expected ')' to close '(' at column %u, got %s", t.col, got), -1;
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
			return expr_parser__fail(p, t.col, "expected a value, got %s", got), -1;
		return expr_parser__fail(p, t.col, "expected a value after '%.*s', got %s", (int)p->prev.len, p->src + p->prev.start,
			    got), -1;
	}
}

static int make_binary(struct expr_parser *p, const struct token *op, int l, int r)
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
			return expr_parser__fail(p, op->col, "cannot compare %s (%s) with %s (%s)", lb,
				    ln->type == V_STR ? "a string" : "an integer", rb,
				    rn->type == V_STR ? "a string" : "an integer"), -1;
		if (ln->type == V_STR) {
			if (ln->kind == N_STR && rn->kind == N_STR)
				return expr_parser__fail(p, op->col, "cannot compare two string literals"), -1;
			if (ln->kind != N_STR && rn->kind != N_STR)
				return expr_parser__fail(p, op->col, "cannot compare two string fields (%s, %s): one side must be a "
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
			return expr_parser__fail(p, op->col, "'%s' matches a string against a pattern, but %s is an integer",
				    tok_text[op->kind], lb), -1;
		if (ln->kind == N_STR)
			return expr_parser__fail(p, ln->col, "expected a string field on the left of '%s' (comm, str(argN), ...), "
				    "got the literal %s", tok_text[op->kind], lb), -1;
		if (rn->kind != N_STR)
			return expr_parser__fail(p, rn->col, "expected a pattern in double quotes after '%s', got %s",
				    tok_text[op->kind], rb), -1;
		break;
	default:
		if (ln->type != V_INT || rn->type != V_INT)
			return expr_parser__fail(p, op->col, "'%s' needs integers, but %s is a string", tok_text[op->kind],
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

static int parse_expr(struct expr_parser *p, int min_bp)
{
	int l, r, bp;

	if (++p->depth > EXPR_MAX_DEPTH)
		return expr_parser__fail(p, p->tok.col, "expression nested too deeply: at most %d levels", EXPR_MAX_DEPTH), -1;
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


int expr_parser__parse(struct expr_parser *p)
{
	char buf[64];
	int root;

	if (lex(p))
		return -1;
	root = parse_expr(p, 0);
	if (root < 0)
		return -1;
	if (p->tok.kind != T_END) {
		tok_describe(p, &p->tok, buf, sizeof(buf));
		expr_parser__fail(p, p->tok.col, "expected an operator or end of input, got %s", buf);
		return -1;
	}
	if (p->nodes[root].type != V_INT) {
		const struct node *n = &p->nodes[root];

		expr_parser__fail(p, n->col, "%s is a string, not a condition (compare it: %.*s == \"...\")",
		     node_text(p, n, buf, sizeof(buf)), (int)(n->end - n->start), p->src + n->start);
		return -1;
	}
	return root;
}
