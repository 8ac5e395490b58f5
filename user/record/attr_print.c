// SPDX-License-Identifier: BSD-2-Clause
/* perf_event_attr printing in perf record -vv's format. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "auxtrig/record/attr_print.h"
#include "auxtrig/record/aux_group.h"
#include "uapi/linux/perf_event_aux.h"

#define ATTR_BUF 1024

struct bit_name {
	__u64 bit;
	const char *name;
};

/* perf's __p_sample_type() table, in its order */
static const struct bit_name sample_bits[] = {
	{ PERF_SAMPLE_IP, "IP" }, { PERF_SAMPLE_TID, "TID" }, { PERF_SAMPLE_TIME, "TIME" },
	{ PERF_SAMPLE_ADDR, "ADDR" }, { PERF_SAMPLE_READ, "READ" },
	{ PERF_SAMPLE_CALLCHAIN, "CALLCHAIN" }, { PERF_SAMPLE_ID, "ID" },
	{ PERF_SAMPLE_CPU, "CPU" }, { PERF_SAMPLE_PERIOD, "PERIOD" },
	{ PERF_SAMPLE_STREAM_ID, "STREAM_ID" }, { PERF_SAMPLE_RAW, "RAW" },
	{ PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK" }, { PERF_SAMPLE_REGS_USER, "REGS_USER" },
	{ PERF_SAMPLE_STACK_USER, "STACK_USER" }, { PERF_SAMPLE_IDENTIFIER, "IDENTIFIER" },
	{ PERF_SAMPLE_REGS_INTR, "REGS_INTR" }, { PERF_SAMPLE_DATA_SRC, "DATA_SRC" },
	{ PERF_SAMPLE_WEIGHT, "WEIGHT" }, { PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR" },
	{ PERF_SAMPLE_AUX, "AUX" }, { PERF_SAMPLE_CGROUP, "CGROUP" },
	{ PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE" },
	{ PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE" },
	{ PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT" }, { 0, NULL },
};

static const struct bit_name read_bits[] = {
	{ PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED" },
	{ PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING" },
	{ PERF_FORMAT_ID, "ID" }, { PERF_FORMAT_GROUP, "GROUP" },
	{ PERF_FORMAT_LOST, "LOST" }, { 0, NULL },
};

static const struct bit_name branch_bits[] = {
	{ PERF_SAMPLE_BRANCH_USER, "USER" }, { PERF_SAMPLE_BRANCH_KERNEL, "KERNEL" },
	{ PERF_SAMPLE_BRANCH_HV, "HV" }, { PERF_SAMPLE_BRANCH_ANY, "ANY" },
	{ PERF_SAMPLE_BRANCH_ANY_CALL, "ANY_CALL" }, { PERF_SAMPLE_BRANCH_ANY_RETURN, "ANY_RETURN" },
	{ PERF_SAMPLE_BRANCH_IND_CALL, "IND_CALL" }, { PERF_SAMPLE_BRANCH_ABORT_TX, "ABORT_TX" },
	{ PERF_SAMPLE_BRANCH_IN_TX, "IN_TX" }, { PERF_SAMPLE_BRANCH_NO_TX, "NO_TX" },
	{ PERF_SAMPLE_BRANCH_COND, "COND" }, { PERF_SAMPLE_BRANCH_CALL_STACK, "CALL_STACK" },
	{ PERF_SAMPLE_BRANCH_IND_JUMP, "IND_JUMP" }, { PERF_SAMPLE_BRANCH_CALL, "CALL" },
	{ PERF_SAMPLE_BRANCH_NO_FLAGS, "NO_FLAGS" }, { PERF_SAMPLE_BRANCH_NO_CYCLES, "NO_CYCLES" },
	{ PERF_SAMPLE_BRANCH_TYPE_SAVE, "TYPE_SAVE" }, { PERF_SAMPLE_BRANCH_HW_INDEX, "HW_INDEX" },
	{ 0, NULL },
};

static void attr_print__bits(char *buf, __u64 value, const struct bit_name *bits)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; bits[i].name; i++)
		if (value & bits[i].bit)
			off += snprintf(buf + off, ATTR_BUF - off, "%s%s", off ? "|" : "", bits[i].name);
}

static int attr_print__line(FILE *fp, const char *name, const char *val)
{
	return fprintf(fp, "  %-32s %s\n", name, val);
}

#define P_UNSIGNED(v) snprintf(buf, ATTR_BUF, "%" PRIu64, (uint64_t)(v))
#define P_SIGNED(v)   snprintf(buf, ATTR_BUF, "%" PRId64, (int64_t)(v))
#define P_HEX(v)      snprintf(buf, ATTR_BUF, "%#" PRIx64, (uint64_t)(v))
#define P_SAMPLE(v)   attr_print__bits(buf, v, sample_bits)
#define P_READ(v)     attr_print__bits(buf, v, read_bits)
#define P_BRANCH(v)   attr_print__bits(buf, v, branch_bits)

#define PRINT_N(n, val, p)                                   \
	do {                                                 \
		if (val) {                                   \
			p(val);                              \
			ret += attr_print__line(fp, n, buf); \
		}                                            \
	} while (0)
#define PRINT_F(f, p) PRINT_N(#f, attr->f, p)

static int attr_print__fields_opt(FILE *fp, const struct perf_event_attr *attr, const char *path)
{
	__u32 act = *perf_attr_aux_action((struct perf_event_attr *)attr);
	char buf[ATTR_BUF];
	int ret = 0;

	PRINT_F(type, P_UNSIGNED);
	PRINT_F(size, P_UNSIGNED);
	PRINT_F(config, P_HEX);
	PRINT_N("{ sample_period, sample_freq }", attr->sample_period, P_UNSIGNED);
	PRINT_F(sample_type, P_SAMPLE);
	PRINT_F(read_format, P_READ);
	PRINT_F(disabled, P_UNSIGNED);
	PRINT_F(inherit, P_UNSIGNED);
	PRINT_F(pinned, P_UNSIGNED);
	PRINT_F(exclusive, P_UNSIGNED);
	PRINT_F(exclude_user, P_UNSIGNED);
	PRINT_F(exclude_kernel, P_UNSIGNED);
	PRINT_F(exclude_hv, P_UNSIGNED);
	PRINT_F(exclude_idle, P_UNSIGNED);
	PRINT_F(mmap, P_UNSIGNED);
	PRINT_F(comm, P_UNSIGNED);
	PRINT_F(freq, P_UNSIGNED);
	PRINT_F(inherit_stat, P_UNSIGNED);
	PRINT_F(enable_on_exec, P_UNSIGNED);
	PRINT_F(task, P_UNSIGNED);
	PRINT_F(watermark, P_UNSIGNED);
	PRINT_F(precise_ip, P_UNSIGNED);
	PRINT_F(mmap_data, P_UNSIGNED);
	PRINT_F(sample_id_all, P_UNSIGNED);
	PRINT_F(exclude_host, P_UNSIGNED);
	PRINT_F(exclude_guest, P_UNSIGNED);
	PRINT_F(exclude_callchain_kernel, P_UNSIGNED);
	PRINT_F(exclude_callchain_user, P_UNSIGNED);
	PRINT_F(mmap2, P_UNSIGNED);
	PRINT_F(comm_exec, P_UNSIGNED);
	PRINT_F(use_clockid, P_UNSIGNED);
	PRINT_F(context_switch, P_UNSIGNED);
	PRINT_F(write_backward, P_UNSIGNED);
	PRINT_F(namespaces, P_UNSIGNED);
	PRINT_F(ksymbol, P_UNSIGNED);
	PRINT_F(bpf_event, P_UNSIGNED);
	PRINT_F(aux_output, P_UNSIGNED);
	PRINT_F(cgroup, P_UNSIGNED);
	PRINT_F(text_poke, P_UNSIGNED);
	PRINT_F(build_id, P_UNSIGNED);
	PRINT_F(inherit_thread, P_UNSIGNED);
	PRINT_F(remove_on_exec, P_UNSIGNED);
	PRINT_F(sigtrap, P_UNSIGNED);
	PRINT_N("{ wakeup_events, wakeup_watermark }", attr->wakeup_events, P_UNSIGNED);
	PRINT_F(bp_type, P_UNSIGNED);
	if (path && attr->config1) {
		snprintf(buf, ATTR_BUF, "\"%s\"", path);
		ret += attr_print__line(fp, "{ bp_addr, config1 }", buf);
	} else {
		PRINT_N("{ bp_addr, config1 }", attr->config1, P_HEX);
	}
	PRINT_N("{ bp_len, config2 }", attr->config2, P_HEX);
	PRINT_F(branch_sample_type, P_BRANCH);
	PRINT_F(sample_regs_user, P_HEX);
	PRINT_F(sample_stack_user, P_UNSIGNED);
	PRINT_F(clockid, P_SIGNED);
	PRINT_F(sample_regs_intr, P_HEX);
	PRINT_F(aux_watermark, P_UNSIGNED);
	PRINT_F(sample_max_stack, P_UNSIGNED);
	PRINT_F(aux_sample_size, P_UNSIGNED);
	PRINT_F(sig_data, P_UNSIGNED);
	PRINT_N("aux_start_paused", act & AUXTRIG_AUX_START_PAUSED ? 1 : 0, P_UNSIGNED);
	PRINT_N("aux_pause", act & AUXTRIG_AUX_PAUSE ? 1 : 0, P_UNSIGNED);
	PRINT_N("aux_resume", act & AUXTRIG_AUX_RESUME ? 1 : 0, P_UNSIGNED);
	PRINT_N("aux_action", act & ~AUXTRIG_AUX_ACTION_MASK, P_HEX);
	return ret;
}

int attr_print__fields(FILE *fp, const struct perf_event_attr *attr)
{
	return attr_print__fields_opt(fp, attr, NULL);
}

int attr_print__event(FILE *fp, const struct perf_event_attr *attr)
{
	return fprintf(fp, "perf_event_attr:\n") + attr_print__fields(fp, attr);
}

static const char *attr_print__action(const struct perf_event_attr *attr)
{
	__u32 act = *perf_attr_aux_action((struct perf_event_attr *)attr);

	if (act & AUXTRIG_AUX_RESUME)
		return " [aux_resume]";
	if (act & AUXTRIG_AUX_PAUSE)
		return " [aux_pause]";
	return "";
}

static const char *const mode_names[] = {
	[AUX_GROUP_WINDOW] = "window", [AUX_GROUP_FREEZE] = "freeze", [AUX_GROUP_SNAPSHOT] = "snapshot",
};

int attr_print__group(FILE *fp, const struct aux_group *g, unsigned int flags)
{
	bool paths = flags & ATTR_PRINT_PATHS;
	int ret = 0;

	if (g->cpu >= 0)
		ret += fprintf(fp, "group leader: %s (%s, cpu %d)\n", g->leader.name,
			       mode_names[g->mode], g->cpu);
	else
		ret += fprintf(fp, "group leader: %s (%s, per thread)\n", g->leader.name,
			       mode_names[g->mode]);
	ret += fprintf(fp, "perf_event_attr:\n");
	ret += attr_print__fields_opt(fp, &g->leader.attr, NULL);
	if (g->gate_by_ioctl && g->nr_members)
		ret += fprintf(fp, "gate: PERF_EVENT_IOC_ENABLE/DISABLE of the leader from userspace (no aux_action)\n");
	for (size_t i = 0; i < g->nr_members; i++) {
		const struct aux_group_event *m = &g->members[i];

		if (g->gate_by_ioctl)
			ret += fprintf(fp, "trigger event: %s (own group)\n", m->name);
		else
			ret += fprintf(fp, "group member: %s%s\n", m->name, attr_print__action(&m->attr));
		ret += fprintf(fp, "perf_event_attr:\n");
		ret += attr_print__fields_opt(fp, &m->attr, paths ? m->path : NULL);
	}
	if (g->has_tracking) {
		ret += fprintf(fp, "tracking event: %s\n", g->tracking.name);
		ret += fprintf(fp, "perf_event_attr:\n");
		ret += attr_print__fields_opt(fp, &g->tracking.attr, NULL);
	}
	return ret;
}
