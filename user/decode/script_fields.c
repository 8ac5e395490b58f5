// SPDX-License-Identifier: BSD-2-Clause
/* `auxtrig script -F`: perf script's field names. See script_fields.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/decode/script_fields.h"
#include "auxtrig/sys/log.h"

static const struct {
	const char *name;
	unsigned int bit;
} script_fields__names[] = {
	{ "comm", SCRIPT_F_COMM }, { "tid", SCRIPT_F_TID }, { "pid", SCRIPT_F_PID },
	{ "time", SCRIPT_F_TIME }, { "cpu", SCRIPT_F_CPU }, { "event", SCRIPT_F_EVENT },
	{ "ip", SCRIPT_F_IP }, { "sym", SCRIPT_F_SYM }, { "dso", SCRIPT_F_DSO },
	{ "addr", SCRIPT_F_ADDR }, { "symoff", SCRIPT_F_SYMOFF }, { "period", SCRIPT_F_PERIOD },
	{ "callindent", SCRIPT_F_CALLINDENT }, { "insn", SCRIPT_F_INSN }, { "insnlen", SCRIPT_F_INSNLEN },
	{ "trace", SCRIPT_F_TRACE },
};

#define SCRIPT_FIELDS_NR (sizeof(script_fields__names) / sizeof(script_fields__names[0]))

const char *script_fields__name(unsigned int bit)
{
	for (size_t i = 0; i < SCRIPT_FIELDS_NR; i++)
		if (script_fields__names[i].bit == bit)
			return script_fields__names[i].name;
	return "?";
}

int script_fields__parse(struct script_fields *f, const char *arg)
{
	enum { DEFAULT, SET, ADD, REMOVE } change = DEFAULT;
	char *copy = strdup(arg), *save = NULL;
	int err = 0;

	memset(f, 0, sizeof(*f));
	if (!copy)
		return -ENOMEM;
	if (!*arg || strchr(arg, ':')) {
		pr_err("script: -F '%s': a list of fields (comm,tid,pid,time,cpu,event,period,ip,sym,symoff,dso,addr,"
		       "flags,callindent,insn,insnlen), or +FIELD/-FIELD to change the default set\n", arg);
		free(copy);
		return -EINVAL;
	}
	for (char *t = strtok_r(copy, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
		size_t i;

		if (*t == '+' || *t == '-') {
			if (change == SET)
				goto badmix;
			change = *t == '+' ? ADD : REMOVE;
			t++;
		} else {
			if (change != SET && change != DEFAULT)
				goto badmix;
			change = SET;
		}
		if (!strcmp(t, "flags")) {
			f->flags = change != REMOVE;
			continue;
		}
		for (i = 0; i < SCRIPT_FIELDS_NR; i++)
			if (!strcmp(t, script_fields__names[i].name))
				break;
		if (i == SCRIPT_FIELDS_NR) {
			pr_err("script: -F %s: unknown field '%s' (comm, tid, pid, time, cpu, event, period, ip, sym, "
			       "symoff, dso, addr, flags, callindent, insn, insnlen, trace)\n", arg, t);
			err = -EINVAL;
			break;
		}
		f->given = true;
		if (change == REMOVE) {
			f->del |= script_fields__names[i].bit;
			f->set &= ~script_fields__names[i].bit;
		} else {
			f->set |= script_fields__names[i].bit;
			f->del &= ~script_fields__names[i].bit;
		}
	}
	f->replace = change == SET;
	if (f->replace)
		f->given = true;	/* perf: a list (even "flags" alone) replaces every default */
	free(copy);
	return err;
badmix:
	pr_err("script: -F %s: a list of fields or +/- changes to the default set, not both\n", arg);
	free(copy);
	return -EINVAL;
}
