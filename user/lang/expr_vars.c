// SPDX-License-Identifier: BSD-2-Clause
/* Variables of your own: see include/auxtrig/lang/expr_vars.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/expr.h"
#include "auxtrig/lang/expr_vars.h"

int expr_vars__find(const struct expr_vars *v, const char *name, bool per_thread, char *why, size_t why_size)
{
	for (unsigned int i = 0; i < v->nr; i++) {
		if (strcmp(v->name[i], name))
			continue;
		if (v->per_thread[i] != per_thread) {
			snprintf(why, why_size, "%s is %s: write %s%s", name,
				 v->per_thread[i] ? "one value per thread" : "global", name, v->per_thread[i] ? "[tid]" : "");
			return -EINVAL;
		}
		return (int)i;
	}
	return -ENOENT;
}

int expr_vars__define(struct expr_vars *v, const char *name, bool per_thread, char *why, size_t why_size)
{
	struct expr_field f;
	int i = expr_vars__find(v, name, per_thread, why, why_size);

	if (i != -ENOENT)
		return i;
	if (!expr__resolve_builtin(name, &f)) {
		snprintf(why, why_size, "%s is auxtrig's own: it cannot be set", name);
		return -EINVAL;
	}
	if (strlen(name) >= EXPR_UVAR_NAME_MAX) {
		snprintf(why, why_size, "%.40s...: a name of at most %d characters", name, EXPR_UVAR_NAME_MAX - 1);
		return -EINVAL;
	}
	if (v->nr == EXPR_MAX_UVARS) {
		snprintf(why, why_size, "at most %d variables of your own in one recording", EXPR_MAX_UVARS);
		return -E2BIG;
	}
	snprintf(v->name[v->nr], sizeof(v->name[0]), "%s", name);
	v->per_thread[v->nr] = per_thread;
	return (int)v->nr++;
}

/* Open addressing, as a hash map of fixed capacity: what BPF's expr_uvars holds, no more. */
struct uvar_entry {
	struct expr_uvar_key key;
	__s64 value;
	bool used;
};

struct expr_uvars {
	unsigned int max, used, cap;
	struct uvar_entry *v;
};

struct expr_uvars *expr_uvars__new(unsigned int max)
{
	struct expr_uvars *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->max = max;
	u->cap = 2 * (max ? max : 1);
	u->v = calloc(u->cap, sizeof(*u->v));
	if (!u->v) {
		free(u);
		return NULL;
	}
	return u;
}

void expr_uvars__delete(struct expr_uvars *u)
{
	if (!u)
		return;
	free(u->v);
	free(u);
}

static struct uvar_entry *slot_of(const struct expr_uvars *u, __u32 var, __u32 tid)
{
	unsigned int h = (var * 2654435761u ^ tid * 40503u) % u->cap;

	for (unsigned int n = 0; n < u->cap; n++, h = (h + 1) % u->cap) {
		struct uvar_entry *e = &u->v[h];

		if (!e->used || (e->key.var == var && e->key.tid == tid))
			return e;
	}
	return NULL;
}

__s64 expr_uvars__get(const struct expr_uvars *u, __u32 var, __u32 tid)
{
	const struct uvar_entry *e = slot_of(u, var, tid);

	return e && e->used ? e->value : 0;
}

int expr_uvars__set(struct expr_uvars *u, __u32 var, __u32 tid, __s64 value)
{
	struct uvar_entry *e = slot_of(u, var, tid);

	if (!e)
		return -E2BIG;
	if (!e->used) {
		if (u->used >= u->max)
			return -E2BIG;
		e->used = true;
		e->key.var = var;
		e->key.tid = tid;
		u->used++;
	}
	e->value = value;
	return 0;
}

unsigned int expr_uvars__used(const struct expr_uvars *u)
{
	return u->used;
}
