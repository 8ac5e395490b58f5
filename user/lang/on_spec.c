// SPDX-License-Identifier: BSD-2-Clause
/*
 * The --on trigger grammar (auxtrig/lang/on_spec.h): the point, the
 * condition's text, the action with its delay, the mark's values, the
 * policies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/lang/duration.h"
#include "auxtrig/lang/on_spec.h"
#include "auxtrig/sys/log.h"

static const char *const on_actions[] = {
	[GATE_ACT_SNAPSHOT] = "snapshot", [GATE_ACT_STOP] = "stop", [GATE_ACT_MARK] = "mark",
	[GATE_ACT_RESUME] = "resume", [GATE_ACT_PAUSE] = "pause",
};

/*
 * mark(VALUE, ...): each VALUE str(argN), argN, ret or nr, at syscall points.
 * ret, nr and arg0..arg5 are in every mark record; str(argN) adds the user
 * string argN points to (one per mark). At a syscall's exit, argN is the
 * argument the thread entered the syscall with (the gate stamps the entry).
 */
int on_spec__mark_values(struct on_spec *s)
{
	const char *text = s->text;
	char *list = s->values, *save = NULL, *v;
	int n = 0;

	if (!list)
		return 0;

	if (point__is_probe(&s->pt) || (!s->pt.at_enter && !s->pt.at_exit) ||
	    (strcmp(s->pt.sys, "syscalls") && strcmp(s->pt.sys, "raw_syscalls"))) {
		pr_err("--on '%s': mark(...) takes values only at syscall points (syscall:NAME:enter, syscall:NAME:exit)\n",
		       text);
		return -EINVAL;
	}
	for (v = strtok_r(list, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
		char *end;

		while (*v == ' ')
			v++;
		for (end = v + strlen(v); end > v && end[-1] == ' ';)
			*--end = '\0';
		n++;
		if (!strcmp(v, "nr"))
			continue;
		if (!strcmp(v, "ret")) {
			if (s->pt.at_exit)
				continue;
			pr_err("--on '%s': mark(ret): 'ret' is known only at a syscall's exit point (syscall:NAME:exit)\n",
			       text);
			return -EINVAL;
		}
		if (!strncmp(v, "arg", 3) && v[3] >= '0' && v[3] <= '5' && !v[4]) {
			if (s->pt.at_exit)
				s->t.entry_args = 1; /* the entry's arguments */
			continue;
		}
		if (!strncmp(v, "str(arg", 7) && v[7] >= '0' && v[7] <= '5' && !strcmp(v + 8, ")")) {
			if (s->t.mark_str) {
				pr_err("--on '%s': mark(...): one str() per mark\n", text);
				return -EINVAL;
			}
			s->t.mark_str = (__u8)(v[7] - '0' + 1);
			if (s->pt.at_exit)
				s->t.entry_args = 1;
			continue;
		}
		pr_err("--on '%s': mark(...): '%s' is not a value a mark carries: str(argN), argN, ret or nr (N 0..5), "
		       "e.g. mark(str(arg1), ret)\n", text, v);
		return -EINVAL;
	}
	if (!n) {
		pr_err("--on '%s': mark(): name the values, e.g. mark(str(arg1), ret), or write mark\n", text);
		return -EINVAL;
	}
	return 0;
}

/* "limit:N/s": N from 1 to 1,000,000,000. */
static int parse_limit(const char *arg, __u32 *limit)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (errno || end == arg || strcmp(end, "/s") || !n || n > 1000000000ULL)
		return -EINVAL;
	*limit = n;
	return 0;
}

/*
 * "POINT [if EXPR]:ACTION[+DELAY][,POLICY...]", the action found as the last
 * ":snapshot", ":stop", ... followed by the end, '+' or ','.
 */
/*
 * The action: the last ":snapshot", ":stop", ... followed by the end, '+' or
 * ','; mark(VALUE, ...)'s values taken out of it (@s->values). @s->buf is
 * cut at the action's ':', which @act points to.
 */
static int on_spec_action(struct on_spec *s, char **actp)
{
	const char *text = s->text;
	char *act = NULL, *p;

	for (p = s->buf; (p = strchr(p, ':')); p++) {
		for (size_t a = 1; a < sizeof(on_actions) / sizeof(on_actions[0]); a++) {
			size_t n = strlen(on_actions[a]);

			if (!strncmp(p + 1, on_actions[a], n) &&
			    (!p[1 + n] || p[1 + n] == ',' || p[1 + n] == '+' || (a == GATE_ACT_MARK && p[1 + n] == '('))) {
				act = p;
				s->t.action = a;
			}
		}
	}
	if (!act) {
		pr_err("--on '%s': expected POINT [if EXPR]:ACTION with ACTION snapshot, stop, mark, resume or pause\n",
		       text);
		return -EINVAL;
	}
	*act = '\0';
	*actp = act;
	if (s->t.action == GATE_ACT_MARK && act[5] == '(') {
		/* mark(VALUE, ...): the values out of the action, up to the matching ')' */
		int depth = 0;

		for (p = act + 5; *p; p++) {
			depth += *p == '(';
			depth -= *p == ')';
			if (!depth)
				break;
		}
		if (!*p) {
			pr_err("--on '%s': mark( has no closing ')': expected mark(VALUE, ...), e.g. mark(str(arg1), ret)\n",
			       text);
			return -EINVAL;
		}
		*p = '\0';
		s->values = strdup(act + 6);
		if (!s->values)
			return -ENOMEM;
		memmove(act + 5, p + 1, strlen(p + 1) + 1);
	}
	return 0;
}

/* After the action @act: +DELAY, then the policies. */
static int on_spec_policies(struct on_spec *s, char *act)
{
	const char *text = s->text;
	char *p, *pol, *save = NULL;

	pol = strchr(act + 1, ',');
	if (pol)
		*pol = '\0';
	p = strchr(act + 1, '+');
	if (p) {
		if (duration__parse(p + 1, &s->t.delay_ns)) {
			pr_err("--on '%s': '+%s': expected a delay with its unit, e.g. snapshot+2ms (ns, us, ms, s)\n",
			       text, p + 1);
			return -EINVAL;
		}
		if (s->t.action != GATE_ACT_SNAPSHOT && s->t.action != GATE_ACT_STOP) {
			pr_err("--on '%s': only snapshot and stop take a delay (+T)\n", text);
			return -EINVAL;
		}
	}
	for (pol = pol ? strtok_r(pol + 1, ",", &save) : NULL; pol; pol = strtok_r(NULL, ",", &save)) {
		char *end;

		if (!strncmp(pol, "limit:", 6)) {
			if (parse_limit(pol + 6, &s->t.limit)) {
				pr_err("--on '%s': '%s': expected limit:N/s with N from 1, e.g. limit:10/s\n", text, pol);
				return -EINVAL;
			}
			continue;
		}
		if (s->t.policy != GATE_POLICY_ALWAYS) {
			pr_err("--on '%s': '%s': only one of once, every:N, after:N (limit:N/s combines with them)\n",
			       text, pol);
			return -EINVAL;
		}
		if (!strcmp(pol, "once")) {
			s->t.policy = GATE_POLICY_ONCE;
			continue;
		}
		if (!strncmp(pol, "every", 5) && (pol[5] == ':' || pol[5] == '='))
			s->t.policy = GATE_POLICY_EVERY;
		else if (!strncmp(pol, "after", 5) && (pol[5] == ':' || pol[5] == '='))
			s->t.policy = GATE_POLICY_AFTER;
		else {
			pr_err("--on '%s': unknown policy '%s' (once, every:N, after:N, limit:N/s)\n", text, pol);
			return -EINVAL;
		}
		s->t.n = strtoull(pol + 6, &end, 10);
		if (*end || !s->t.n) {
			pr_err("--on '%s': '%s' needs a count of 1 or more\n", text, pol);
			return -EINVAL;
		}
	}
	return 0;
}

int on_spec__parse(struct on_spec *s, const char *text)
{
	char *act, *p, *cond, *point, err[256];
	int ret;

	memset(s, 0, sizeof(*s));
	s->text = text;
	s->buf = strdup(text);
	if (!s->buf)
		return -ENOMEM;
	ret = on_spec_action(s, &act);
	if (!ret)
		ret = on_spec_policies(s, act);
	if (ret)
		return ret;
	point = s->buf;
	cond = strstr(s->buf, " if ");
	if (cond) {
		*cond = '\0';
		cond += 4;
	}
	while (*point == ' ')
		point++;
	for (p = point + strlen(point); p > point && p[-1] == ' ';)
		*--p = '\0';
	s->point = point;
	s->cond = cond;
	if (point__parse(&s->pt, point, err, sizeof(err)) || point__check_path(&s->pt, err, sizeof(err))) {
		pr_err("--on '%s': %s\n", text, err);
		return -EINVAL;
	}
	return 0;
}

void on_spec__exit(struct on_spec *s)
{
	free(s->values);
	free(s->buf);
	s->values = s->buf = NULL;
}
