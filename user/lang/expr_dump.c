// SPDX-License-Identifier: BSD-2-Clause
/*
 * A compiled condition's instructions, one a line (-vv).
 */
#include <stdio.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_dump.h"

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
			fprintf(f, " %s\n", expr__builtin_name(in->a));
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
			fprintf(f, " %s\n", expr__var_name(in->a));
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
