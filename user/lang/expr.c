// SPDX-License-Identifier: BSD-2-Clause
/*
 * The condition language: errno names, builtin and tracepoint fields, and
 * expr__compile(): the text parsed into a typed tree (expr_parse.c), then
 * bytecode generated from it here. The evaluators are expr_eval.c
 * (userspace) and bpf/expr.bpf.h (BPF); they must agree instruction by
 * instruction.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_parse.h"
#include "auxtrig/sys/tracefs.h"

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
	[EXPR_VAR_NOW] = "$now",
};

const char *expr__builtin_name(unsigned int f)
{
	return f < EXPR_F_COUNT ? builtin_names[f] : "?";
}

const char *expr__var_name(unsigned int v)
{
	return v < EXPR_NR_VAR_NAMES ? var_names[v] : "?";
}

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

/* ---- code generation ---- */

static int emit(struct expr_parser *p, __u8 op, __u8 a, __u16 b, __u32 c, __s64 imm)
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

static void push(struct expr_parser *p)
{
	if (++p->sp > p->max_sp)
		p->max_sp = p->sp;
}

static void patch_jump(struct expr_parser *p, unsigned int at)
{
	if (at < EXPR_MAX_INSNS)
		p->prog->insns[at].b = p->nr_emit < 0xffff ? p->nr_emit : 0xffff;
}

static void gen(struct expr_parser *p, int i)
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
	case N_UVAR:
		emit(p, EXPR_OP_UGET, n->val, n->str_arg, 0, 0);
		p->prog->flags |= EXPR_PROG_UVARS;
		push(p);
		return;
	case N_SET: {
		const struct node *v = &p->nodes[n->r];

		if (n->op != T_ASSIGN)
			gen(p, n->r);	/* the value it had */
		gen(p, n->l);
		if (n->op != T_ASSIGN) {
			emit(p, n->op == T_ADDEQ ? EXPR_OP_ADD : EXPR_OP_SUB, 0, 0, 0, 0);
			p->sp--;
		}
		emit(p, EXPR_OP_USET, v->val, v->str_arg, 0, 0);
		p->prog->flags |= EXPR_PROG_UVARS;
		p->sp--;
		return;
	}
	case N_SEQ:
		gen(p, n->l);
		gen(p, n->r);
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

static int compile(const char *src, const struct expr_compile_opts *opts, struct expr_prog *prog, char *err,
		   size_t err_size, bool action)
{
	struct expr_parser p = {
		.src = src,
		.opts = opts,
		.prog = prog,
		.err = err,
		.err_size = err_size,
	};
	char why[64];
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
	root = action ? expr_parser__parse_action(&p) : expr_parser__parse(&p);
	if (root < 0)
		goto out;
	gen(&p, root);
	if (action) {
		/* an action's statements leave nothing: true, as a condition that holds */
		emit(&p, EXPR_OP_PUSH, 0, 0, 0, 1);
		push(&p);
	}
	if (p.nr_emit > EXPR_MAX_INSNS) {
		expr_parser__fail(&p, 0, "expression too long: %s%u instructions, at most %d",
				  p.nr_emit > EXPR_MAX_EMIT ? "over " : "", p.nr_emit, EXPR_MAX_INSNS);
		p.error = -E2BIG;
		goto out;
	}
	if (p.max_sp > EXPR_MAX_STACK) {
		expr_parser__fail(&p, 0,
				  "expression too deeply nested: needs %u stack slots, at most %d (split it with && or ||)",
				  p.max_sp, EXPR_MAX_STACK);
		p.error = -E2BIG;
		goto out;
	}
	prog->nr_insns = p.nr_emit;
	prog->max_stack = p.max_sp;
	prog->nr_hits = p.nr_hits;
	/* Checked once, here, rather than at every evaluation: a refusal is a bug of the compiler. */
	if (expr__validate(prog, why, sizeof(why)))
		expr_parser__fail(&p, 0, "%s, from the compiler itself", why);
out:
	free(p.nodes);
	if (p.error)
		memset(prog, 0, sizeof(*prog));
	return p.error;
}

int expr__compile(const char *src, const struct expr_compile_opts *opts, struct expr_prog *prog, char *err,
		  size_t err_size)
{
	return compile(src, opts, prog, err, err_size, false);
}

int expr__compile_action(const char *src, const struct expr_compile_opts *opts, struct expr_prog *prog, char *err,
			 size_t err_size)
{
	return compile(src, opts, prog, err, err_size, true);
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

/* -EINVAL, and "a malformed program@what" in @why. */
static int malformed(char *why, size_t why_size, const char *what)
{
	if (why && why_size)
		snprintf(why, why_size, "a malformed program%s", what);
	return -EINVAL;
}

/*
 * A string instruction names a source there is and a pattern that ends, NUL
 * included, inside the string table, short enough for a string to match:
 * what both matchers read stays inside the program.
 */
static bool str_ok(const struct expr_prog *p, const struct expr_insn *in)
{
	size_t len;

	if (in->a > EXPR_S_REC_LOC || in->b >= EXPR_STRTAB_SIZE)
		return false;
	len = strnlen(p->strtab + in->b, EXPR_STRTAB_SIZE - in->b);
	return len < (size_t)EXPR_STRTAB_SIZE - in->b && len < EXPR_STR_MAX;
}

int expr__check(const struct expr_prog *p, int depth[EXPR_MAX_INSNS + 1], char target[EXPR_MAX_INSNS + 1],
		char *why, size_t why_size)
{
	unsigned int sp = 0;

	if (!p->nr_insns || p->nr_insns > EXPR_MAX_INSNS || p->nr_hits > EXPR_MAX_HITS)
		return malformed(why, why_size, "");
	for (unsigned int i = 0; i <= p->nr_insns; i++)
		depth[i] = -1;
	memset(target, 0, EXPR_MAX_INSNS + 1);
	for (unsigned int pc = 0; pc < p->nr_insns; pc++) {
		const struct expr_insn *in = &p->insns[pc];

		if (depth[pc] >= 0 && (unsigned int)depth[pc] != sp)
			return malformed(why, why_size, " (stack depths differ at a join)");
		depth[pc] = sp;
		switch (in->op) {
		case EXPR_OP_PUSH:
		case EXPR_OP_FIELD:
		case EXPR_OP_REC:
		case EXPR_OP_STR:
		case EXPR_OP_VAR:
		case EXPR_OP_HIT:
			if (sp >= EXPR_MAX_STACK)
				return malformed(why, why_size, " (stack overflow)");
			if (in->op == EXPR_OP_VAR && (in->a >= EXPR_NR_VAR_NAMES ||
						      (in->a == EXPR_VAR_COUNT && !(p->flags & EXPR_PROG_COUNT))))
				return malformed(why, why_size, " (unknown variable)");
			if (in->op == EXPR_OP_HIT && (in->a >= p->nr_hits || in->imm < 1 || in->b > EXPR_HIT_EVERY))
				return malformed(why, why_size, " (bad once/after/every)");
			if (in->op == EXPR_OP_FIELD && in->a >= EXPR_F_COUNT)
				return malformed(why, why_size, " (unknown field)");
			if (in->op == EXPR_OP_STR && !str_ok(p, in))
				return malformed(why, why_size, " (bad string)");
			if (in->op == EXPR_OP_REC) {
				unsigned int size = in->a & EXPR_REC_SIZE_MASK;

				if (size != 1 && size != 2 && size != 4 && size != 8)
					return malformed(why, why_size, " (record field size)");
			}
			sp++;
			break;
		case EXPR_OP_NEG:
		case EXPR_OP_BNOT:
		case EXPR_OP_LNOT:
		case EXPR_OP_BOOL:
		case EXPR_OP_CAST:
			if (sp < 1)
				return malformed(why, why_size, " (stack underflow)");
			break;
		case EXPR_OP_UGET:
			if (sp >= EXPR_MAX_STACK || in->a >= EXPR_MAX_UVARS)
				return malformed(why, why_size, " (bad variable)");
			sp++;
			break;
		case EXPR_OP_USET:
			if (sp < 1 || in->a >= EXPR_MAX_UVARS)
				return malformed(why, why_size, " (bad variable)");
			sp--;
			break;
		case EXPR_OP_JFALSE:
		case EXPR_OP_JTRUE:
			if (sp < 1 || in->b <= pc || in->b > p->nr_insns)
				return malformed(why, why_size, " (bad jump)");
			if (depth[in->b] >= 0 && (unsigned int)depth[in->b] != sp)
				return malformed(why, why_size, " (stack depths differ at a join)");
			depth[in->b] = sp;
			target[in->b] = 1;
			sp--;
			break;
		default:
			if (in->op < EXPR_OP_ADD || in->op > EXPR_OP_GE)
				return malformed(why, why_size, " (unknown instruction)");
			if (sp < 2)
				return malformed(why, why_size, " (stack underflow)");
			sp--;
			break;
		}
	}
	if (depth[p->nr_insns] >= 0 && (unsigned int)depth[p->nr_insns] != sp)
		return malformed(why, why_size, " (stack depths differ at the end)");
	if (sp < 1)
		return malformed(why, why_size, " (no result)");
	return 0;
}

int expr__validate(struct expr_prog *prog, char *why, size_t why_size)
{
	int depth[EXPR_MAX_INSNS + 1], err;
	char target[EXPR_MAX_INSNS + 1];

	if (why && why_size)
		why[0] = 0;
	if (!prog)
		return -EINVAL;
	prog->checked = 0;
	err = expr__check(prog, depth, target, why, why_size);
	if (!err)
		prog->checked = EXPR_PROG_CHECKED;
	return err;
}

static __u64 uabs(__s64 x)
{
	return x < 0 ? -(__u64)x : (__u64)x;
}

int expr__binary(unsigned int op, __s64 x, __s64 y, __s64 *v)
{
	__u64 q;

	switch (op) {
	case EXPR_OP_ADD: *v = (__s64)((__u64)x + (__u64)y); return 1;
	case EXPR_OP_SUB: *v = (__s64)((__u64)x - (__u64)y); return 1;
	case EXPR_OP_MUL: *v = (__s64)((__u64)x * (__u64)y); return 1;
	case EXPR_OP_DIV:
		if (!y)
			return 0;
		q = uabs(x) / uabs(y);
		*v = (__s64)((x < 0) != (y < 0) ? 0 - q : q);
		return 1;
	case EXPR_OP_MOD:
		if (!y)
			return 0;
		q = uabs(x) % uabs(y);
		*v = (__s64)(x < 0 ? 0 - q : q);
		return 1;
	case EXPR_OP_AND: *v = x & y; return 1;
	case EXPR_OP_OR: *v = x | y; return 1;
	case EXPR_OP_XOR: *v = x ^ y; return 1;
	case EXPR_OP_EQ: *v = x == y; return 1;
	case EXPR_OP_NE: *v = x != y; return 1;
	case EXPR_OP_LT: *v = x < y; return 1;
	case EXPR_OP_LE: *v = x <= y; return 1;
	case EXPR_OP_GT: *v = x > y; return 1;
	case EXPR_OP_GE: *v = x >= y; return 1;
	}
	return -EINVAL;
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
