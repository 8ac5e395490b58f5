/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_EXPR_PARSE_H
#define AUXTRIG_EXPR_PARSE_H

/*
 * lang/ layer, inside the condition language: the lexer and Pratt parser
 * (user/lang/expr_parse.c) that turn a condition's text into a typed tree,
 * which expr__compile() (user/lang/expr.c) turns into bytecode. Only the
 * compiler's files include this.
 */
#include <stddef.h>

#include "auxtrig/lang/expr.h"

enum tok_kind {
	T_END, T_INT, T_STR, T_IDENT, T_VAR, T_LP, T_RP, T_COMMA,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_MATCH, T_NMATCH,
	T_NOT, T_AND, T_OR, T_BAND, T_BOR, T_XOR,
	T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT,
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

struct expr_parser {
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

/**
 * expr_parser__parse() - lex and parse all of @p->src into @p->nodes, typed,
 * fields resolved through @p->opts; the whole must be an integer condition.
 * @p: the parser, its source, options, program (string table) and error
 *     buffer set, @p->nodes sized for the source.
 *
 * Return: the root node's index, or -1 with @p->error set and the message in
 * @p->err.
 */
int expr_parser__parse(struct expr_parser *p);

/**
 * expr_parser__fail() - record @p's first error ("column @col: ...", no
 * column when @col is 0) and return it; later errors are dropped.
 *
 * Return: @p->error, -EINVAL when this is the first.
 */
__attribute__((format(printf, 3, 4)))
int expr_parser__fail(struct expr_parser *p, unsigned int col, const char *fmt, ...);

#endif
