// SPDX-License-Identifier: BSD-2-Clause
/*
 * `auxtrig probe`: the report of what this machine can do, as text or JSON.
 * The capabilities are tried by user/sys/probe.c; this is its front-end.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxtrig/cmd/cmd.h"
#include "auxtrig/cmd/probe.h"
#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"
#include "auxtrig/sys/probe.h"

/* ---- verdicts shared by text and JSON ----------------------------------- */

static bool report__privileged(const struct probe_report *r)
{
	return r->euid == 0 || r->cap_sys_admin || r->cap_perfmon;
}

/* Refused for lack of privilege says nothing about the kernel: that is unknown, not missing. */
static bool bpf__unprivileged(const struct probe_report *r, const struct probe_bpf_result *b)
{
	return b->err == -EPERM && !b->loaded && r->euid != 0 && !r->cap_bpf && !r->cap_sys_admin;
}

static enum probe_status bpf__status(const struct probe_report *r, const struct probe_bpf_result *b)
{
	if (b->err && b->step && !strcmp(b->step, "open"))
		return PROBE_UNKNOWN;
	if (bpf__unprivileged(r, b))
		return PROBE_UNKNOWN;
	return b->loaded && b->attached && !b->err && b->hits ? PROBE_OK : PROBE_MISSING;
}

static enum probe_status bp__status(const struct probe_report *r)
{
	if (r->bp_opened && r->bp_err)
		return PROBE_UNKNOWN;
	return r->bp_opened && r->bp_hits ? PROBE_OK : PROBE_MISSING;
}

static enum probe_status aux_action__status(const struct probe_report *r)
{
	return r->aux_action_known == 1 ? PROBE_OK : r->aux_action_known == 0 ? PROBE_MISSING : PROBE_UNKNOWN;
}

static enum probe_status pause__status(enum probe_pause p)
{
	return p == PROBE_PAUSE_YES ? PROBE_OK : p == PROBE_PAUSE_UNKNOWN ? PROBE_UNKNOWN : PROBE_MISSING;
}

static const char *status__name(enum probe_status s)
{
	return s == PROBE_OK ? "ok" : s == PROBE_MISSING ? "missing" : "unknown";
}

/* ---- text ---------------------------------------------------------------- */

static void line(FILE *f, const char *what, enum probe_status s, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void line(FILE *f, const char *what, enum probe_status s, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "  %-20s %-8s ", what, status__name(s));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static const char *const bpf_meaning_ok[PROBE_BPF_NR] = {
	[PROBE_BPF_TRACEPOINT] = "trigger conditions on tracepoints work",
	[PROBE_BPF_RAW_TP] = "trigger conditions on raw tracepoints work",
	[PROBE_BPF_UPROBE] = "trigger conditions on user functions work",
	[PROBE_BPF_KPROBE] = "trigger conditions on kernel functions work",
	[PROBE_BPF_FENTRY] = "trigger conditions on kernel functions work (fentry, cheaper than kprobe)",
	[PROBE_BPF_RINGBUF] = "BPF can stream records to auxtrig",
};

static const char *const bpf_meaning_missing[PROBE_BPF_NR] = {
	[PROBE_BPF_TRACEPOINT] = "no trigger conditions on tracepoints",
	[PROBE_BPF_RAW_TP] = "no raw tracepoint conditions; tracepoint programs are used instead",
	[PROBE_BPF_UPROBE] = "no trigger conditions on user functions",
	[PROBE_BPF_KPROBE] = "no trigger conditions on kernel functions via kprobes; use tracepoints",
	[PROBE_BPF_FENTRY] = "no fentry/fexit conditions; kprobes or tracepoints are used instead",
	[PROBE_BPF_RINGBUF] = "no BPF ring buffer; records cannot be streamed from BPF",
};

static void text__bpf(FILE *f, const struct probe_report *r, enum probe_bpf_kind k)
{
	const struct probe_bpf_result *b = &r->bpf[k];
	enum probe_status s = bpf__status(r, b);
	char what[32], en[32];
	const char *target = k == PROBE_BPF_UPROBE ? "calls of our own function" :
			     k == PROBE_BPF_RINGBUF ? "records of our getpid() calls" :
			     k == PROBE_BPF_KPROBE || k == PROBE_BPF_FENTRY ? "our open() calls" :
									     "getpid() calls";

	snprintf(what, sizeof(what), "bpf %s", probe_bpf_kind__name(k));
	if (s == PROBE_OK && k == PROBE_BPF_RINGBUF) {
		line(f, what, s, "loads, %llu/%d records received: %s", (unsigned long long)b->hits, b->triggers,
		     bpf_meaning_ok[k]);
	} else if (s == PROBE_OK) {
		line(f, what, s, "loads, attaches, fired %llu/%d on %s: %s", (unsigned long long)b->hits,
		     b->triggers, target, bpf_meaning_ok[k]);
	} else if (bpf__unprivileged(r, b)) {
		line(f, what, s, "cannot tell: loading BPF needs root or CAP_BPF (EPERM)");
	} else if (b->err) {
		line(f, what, s, "%s failed: %s (%s): %s", b->step ? b->step : "probe", strerror(-b->err),
		     probe__errno_name(b->err, en, sizeof(en)), bpf_meaning_missing[k]);
	} else {
		line(f, what, s, "loads and attaches but never fired (0/%d on %s): %s", b->triggers, target,
		     bpf_meaning_missing[k]);
	}
}

/* Print "name=value" items wrapped under an indented label. */
static void text__wrapped(FILE *f, const char *label, const char *const *items, size_t nr)
{
	const int indent = 32, width = 110;
	int col;

	col = fprintf(f, "%*s%s:", indent, "", label);
	for (size_t i = 0; i < nr; i++) {
		int len;

		if (!items[i])
			continue; /* asprintf() failed: drop the item, not the report */
		len = strlen(items[i]) + 1;

		if (col + len > width && col > indent + (int)strlen(label) + 1)
			col = fprintf(f, "\n%*s", indent + (int)strlen(label) + 1, "") - 1;
		col += fprintf(f, " %s", items[i]);
	}
	fputc('\n', f);
}

static void text__pmu_details(FILE *f, const struct pmu *pmu)
{
	char **items;
	size_t n = pmu->nr_caps > pmu->nr_formats ? pmu->nr_caps : pmu->nr_formats;

	if (pmu->nr_sinks > n)
		n = pmu->nr_sinks;
	items = calloc(n ? n : 1, sizeof(*items));
	if (!items)
		return;
	if (pmu->nr_formats) {
		for (size_t i = 0; i < pmu->nr_formats; i++)
			items[i] = pmu->formats[i].name;
		text__wrapped(f, "format", (const char *const *)items, pmu->nr_formats);
	}
	if (pmu->nr_caps) {
		for (size_t i = 0; i < pmu->nr_caps; i++) {
			if (asprintf(&items[i], "%s=%s", pmu->caps[i].name, pmu->caps[i].raw) < 0)
				items[i] = NULL;
		}
		text__wrapped(f, "caps", (const char *const *)items, pmu->nr_caps);
		for (size_t i = 0; i < pmu->nr_caps; i++)
			free(items[i]);
	}
	if (pmu->nr_sinks) {
		for (size_t i = 0; i < pmu->nr_sinks; i++)
			items[i] = pmu->sinks[i].name;
		text__wrapped(f, "sinks", (const char *const *)items, pmu->nr_sinks);
	}
	free(items);
}

static void text__aux_pmu(FILE *f, const struct probe_report *r, const struct probe_aux_pmu *a)
{
	const struct pmu *pmu = a->pmu;
	char filters[48] = "", cpus[48] = "", en[32];
	const char *pause;

	if (pmu->nr_addr_filters >= 0)
		snprintf(filters, sizeof(filters), ", %d address filters", pmu->nr_addr_filters);
	if (pmu->nr_etm_cpus)
		snprintf(cpus, sizeof(cpus), ", ETMs on %zu CPUs", pmu->nr_etm_cpus);
	switch (a->pause) {
	case PROBE_PAUSE_YES:
		pause = "pause/resume yes: BPF triggers can pause and resume the trace; windows use in-kernel aux_pause/aux_resume";
		break;
	case PROBE_PAUSE_NO_PMU:
		pause = "pause/resume no (the PMU lacks it): windows are gated from userspace (auxtrig enables and disables the trace at each window edge, a round trip late)";
		break;
	case PROBE_PAUSE_NO_KERNEL:
		pause = "pause/resume no (the kernel lacks aux_action, 6.13+ or 6.12.24+ stable): windows are gated from userspace (a round trip late)";
		break;
	default:
		pause = NULL;
		break;
	}
	if (pause)
		line(f, pmu->name, PROBE_OK, "type %u%s%s; %s", pmu->type, filters, cpus, pause);
	else
		line(f, pmu->name, PROBE_UNKNOWN, "type %u%s%s; cannot open its event: %s (%s)%s", pmu->type,
		     filters, cpus, strerror(-a->err), probe__errno_name(a->err, en, sizeof(en)),
		     report__privileged(r) ? "" : " (try as root)");
	text__pmu_details(f, pmu);
}

/* What the switch reported missing, not tried: said so, so that nobody takes it for this machine's answer. */
#define SWITCHED_OFF "reported missing by " CAPS_OFF_ENV " (a test aid; unset it to try this machine)"

static bool switched_off(const struct probe_report *r, enum caps_id id)
{
	return id == CAPS_AUX_PMU ? probe_report__aux_switched_off(r) : !!(r->caps_off & 1u << id);
}

static void text__cgroup2(FILE *f, const struct probe_report *r)
{
	if (switched_off(r, CAPS_CGROUP2))
		line(f, "cgroup v2", PROBE_MISSING, SWITCHED_OFF);
	else if (!r->cgroup2_err)
		line(f, "cgroup v2", PROBE_OK, "mounted at %s: a recorded command's whole process tree dies with auxtrig",
		     r->cgroup2);
	else if (r->cgroup2_err == -ENOENT)
		line(f, "cgroup v2", PROBE_MISSING, "not mounted: when auxtrig is killed, only the command itself dies with it, not its children");
	else
		line(f, "cgroup v2", PROBE_UNKNOWN, "cannot read /proc/self/mountinfo%s%s",
		     r->cgroup2_err < 0 ? ": " : "", r->cgroup2_err < 0 ? strerror(-r->cgroup2_err) : "");
}

void probe_report__print_text(const struct probe_report *r, FILE *f)
{
	char en[32], rl[48], privs[128];
	bool priv = report__privileged(r);

	fprintf(f, "auxtrig probe: what auxtrig can do on this machine\n\n");
	line(f, "kernel", r->release[0] ? PROBE_OK : PROBE_UNKNOWN, "%s %s", r->release, r->machine);
	if (switched_off(r, CAPS_BTF))
		line(f, "btf", PROBE_MISSING, SWITCHED_OFF);
	else if (r->btf)
		line(f, "btf", PROBE_OK, "/sys/kernel/btf/vmlinux: BPF programs relocate to this kernel (CO-RE)");
	else
		line(f, "btf", PROBE_MISSING,
		     "no /sys/kernel/btf/vmlinux: BPF programs cannot be relocated (kernel needs CONFIG_DEBUG_INFO_BTF=y)");
	if (r->tracefs[0])
		line(f, "tracefs", PROBE_OK, "mounted at %s: tracepoints can be named and their formats read",
		     r->tracefs);
	else
		line(f, "tracefs", PROBE_MISSING,
		     "not mounted: tracepoints cannot be named (fix: mount -t tracefs nodev /sys/kernel/tracing)");
	for (int k = 0; k < PROBE_BPF_NR; k++) {
		if ((k == PROBE_BPF_KPROBE && switched_off(r, CAPS_KPROBE)) ||
		    (k == PROBE_BPF_FENTRY && switched_off(r, CAPS_FENTRY))) {
			char what[32];

			snprintf(what, sizeof(what), "bpf %s", probe_bpf_kind__name(k));
			line(f, what, PROBE_MISSING, SWITCHED_OFF);
			continue;
		}
		text__bpf(f, r, k);
	}
	text__cgroup2(f, r);

	snprintf(privs, sizeof(privs), "%s%s%s", r->cap_perfmon ? " CAP_PERFMON" : "",
		 r->cap_bpf ? " CAP_BPF" : "", r->cap_sys_admin ? " CAP_SYS_ADMIN" : "");
	if (r->euid == 0)
		line(f, "privileges", PROBE_OK, "root; effective:%s", privs[0] ? privs : " none");
	else if (priv && (r->cap_bpf || r->cap_sys_admin))
		line(f, "privileges", PROBE_OK, "euid %u with%s", (unsigned)r->euid, privs);
	else
		line(f, "privileges", PROBE_MISSING,
		     "euid %u, effective:%s: loading BPF needs root or CAP_BPF+CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep)",
		     (unsigned)r->euid, privs[0] ? privs : " none");

	if (r->paranoid == INT_MIN)
		line(f, "perf_event_paranoid", PROBE_UNKNOWN, "/proc/sys/kernel/perf_event_paranoid unreadable");
	else if (priv)
		line(f, "perf_event_paranoid", PROBE_OK, "%d: does not limit us (root/CAP_PERFMON)", r->paranoid);
	else
		line(f, "perf_event_paranoid", r->paranoid <= 1 ? PROBE_OK : PROBE_MISSING,
		     "%d: %s", r->paranoid,
		     r->paranoid <= 1 ? "unprivileged tracing of own processes and CPUs allowed" :
		     r->paranoid == 2 ? "unprivileged users may trace only their own user space" :
					"unprivileged perf use is disabled (needs root or CAP_PERFMON)");

	if (r->rlimit_memlock == (unsigned long long)RLIM_INFINITY)
		snprintf(rl, sizeof(rl), "unlimited");
	else
		snprintf(rl, sizeof(rl), "%llu KiB", r->rlimit_memlock / 1024);
	if (r->mlock_kb < 0)
		line(f, "perf mlock", PROBE_UNKNOWN, "perf_event_mlock_kb unreadable, RLIMIT_MEMLOCK %s", rl);
	else
		line(f, "perf mlock", PROBE_OK, "perf_event_mlock_kb %ld, RLIMIT_MEMLOCK %s: %s", r->mlock_kb, rl,
		     priv ? "buffers are not limited for us (CAP_IPC_LOCK/root)" :
			    "AUX and data buffers beyond this need -m smaller or CAP_IPC_LOCK");

	if (r->aux_action_known == 1)
		line(f, "aux_action", PROBE_OK,
		     "the kernel knows aux_start_paused/aux_pause/aux_resume: triggers can pause and resume AUX trace");
	else if (r->aux_action_known == 0)
		line(f, "aux_action", PROBE_MISSING,
		     "the kernel rejects aux_action (EINVAL): no in-kernel pause/resume of hardware trace (needs 6.13+ or 6.12.24+)");
	else
		line(f, "aux_action", PROBE_UNKNOWN, "probe failed: %s (%s)", strerror(-r->aux_action_err),
		     probe__errno_name(r->aux_action_err, en, sizeof(en)));

	if (switched_off(r, CAPS_HW_BREAKPOINT))
		line(f, "hw breakpoints", PROBE_MISSING, SWITCHED_OFF);
	else if (!r->bp_opened)
		line(f, "hw breakpoints", PROBE_MISSING, "cannot open: %s (%s): no data-watch triggers",
		     strerror(-r->bp_err), probe__errno_name(r->bp_err, en, sizeof(en)));
	else if (r->bp_err)
		line(f, "hw breakpoints", PROBE_UNKNOWN, "opened, but enabling or reading failed: %s (%s)",
		     strerror(-r->bp_err), probe__errno_name(r->bp_err, en, sizeof(en)));
	else if (bp__status(r) == PROBE_OK)
		line(f, "hw breakpoints", PROBE_OK, "fired %llu/%d on writes to our own variable: data-watch triggers work",
		     (unsigned long long)r->bp_hits, PROBE_BP_WRITES);
	else
		line(f, "hw breakpoints", PROBE_MISSING,
		     "open but never fire (0/%d writes seen, usual in VMs): no data-watch triggers here",
		     PROBE_BP_WRITES);

	if (probe_report__aux_switched_off(r)) {
		line(f, "hardware trace", PROBE_MISSING, SWITCHED_OFF);
		return;
	}
	if (!r->nr_aux) {
		line(f, "hardware trace", PROBE_MISSING,
		     "no AUX trace PMU (intel_pt, cs_etm, arm_spe) in %s/bus/event_source/devices:", r->sysfs_root);
		fprintf(f, "%32shardware trace is unavailable here; auxtrig records kernel event streams\n"
			   "%32s(tracepoints) instead\n", "", "");
		return;
	}
	line(f, "hardware trace", PROBE_OK, "%zu AUX trace PMU%s in %s/bus/event_source/devices", r->nr_aux,
	     r->nr_aux == 1 ? "" : "s", r->sysfs_root);
	for (size_t i = 0; i < r->nr_aux; i++)
		text__aux_pmu(f, r, &r->aux[i]);
}

/* ---- JSON ---------------------------------------------------------------- */

void probe_json__string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void json__key(FILE *f, bool *first, const char *key)
{
	if (!*first)
		fputc(',', f);
	*first = false;
	probe_json__string(f, key);
	fputc(':', f);
}

static void json__kv_str(FILE *f, bool *first, const char *key, const char *val)
{
	json__key(f, first, key);
	probe_json__string(f, val);
}

static void json__kv_bool(FILE *f, bool *first, const char *key, bool val)
{
	json__key(f, first, key);
	fputs(val ? "true" : "false", f);
}

static void json__kv_u64(FILE *f, bool *first, const char *key, unsigned long long val)
{
	json__key(f, first, key);
	fprintf(f, "%llu", val);
}

static void json__kv_err(FILE *f, bool *first, int err)
{
	char en[32];

	json__kv_str(f, first, "errno", err ? probe__errno_name(err, en, sizeof(en)) : NULL);
}

/* "reported_missing_by": "AUXTRIG_CAPS_OFF" where the switch said so (only there). */
static void json__switched_off(FILE *f, bool *first, const struct probe_report *r, enum caps_id id)
{
	if (id < CAPS_NR && switched_off(r, id))
		json__kv_str(f, first, "reported_missing_by", CAPS_OFF_ENV);
}

static void json__bpf(FILE *f, const struct probe_report *r, const struct probe_bpf_result *b, enum caps_id id)
{
	bool first = true;
	char msg[160];

	fputc('{', f);
	json__kv_str(f, &first, "status", status__name(bpf__status(r, b)));
	json__kv_bool(f, &first, "loaded", b->loaded);
	json__kv_bool(f, &first, "attached", b->attached);
	json__kv_bool(f, &first, "fired", b->hits > 0);
	json__kv_u64(f, &first, "hits", b->hits);
	json__kv_u64(f, &first, "triggers", b->triggers);
	if (b->err)
		snprintf(msg, sizeof(msg), "%s: %s", b->step ? b->step : "probe", strerror(-b->err));
	json__kv_str(f, &first, "error", b->err ? msg : NULL);
	json__kv_err(f, &first, b->err);
	json__switched_off(f, &first, r, id);
	fputc('}', f);
}

static void json__pmu(FILE *f, const struct probe_aux_pmu *a)
{
	const struct pmu *pmu = a->pmu;
	bool first = true, inner;

	fputc('{', f);
	json__kv_str(f, &first, "name", pmu->name);
	json__kv_u64(f, &first, "type", pmu->type);
	json__kv_str(f, &first, "pause_resume", probe_pause__name(a->pause));
	json__kv_str(f, &first, "pause_resume_status", status__name(pause__status(a->pause)));
	json__kv_err(f, &first, a->err);
	json__key(f, &first, "nr_addr_filters");
	if (pmu->nr_addr_filters < 0)
		fputs("null", f);
	else
		fprintf(f, "%d", pmu->nr_addr_filters);
	json__key(f, &first, "formats");
	fputc('{', f);
	inner = true;
	for (size_t i = 0; i < pmu->nr_formats; i++)
		json__kv_str(f, &inner, pmu->formats[i].name, pmu->formats[i].spec);
	fputc('}', f);
	json__key(f, &first, "caps");
	fputc('{', f);
	inner = true;
	for (size_t i = 0; i < pmu->nr_caps; i++)
		json__kv_str(f, &inner, pmu->caps[i].name, pmu->caps[i].raw);
	fputc('}', f);
	json__key(f, &first, "sinks");
	fputc('{', f);
	inner = true;
	for (size_t i = 0; i < pmu->nr_sinks; i++)
		json__kv_u64(f, &inner, pmu->sinks[i].name, pmu->sinks[i].id);
	fputc('}', f);
	json__kv_u64(f, &first, "nr_etm_cpus", pmu->nr_etm_cpus);
	json__kv_str(f, &first, "windows", a->pause == PROBE_PAUSE_YES ? "kernel" :
				     a->pause == PROBE_PAUSE_UNKNOWN ? NULL : "userspace");
	fputc('}', f);
}

void probe_report__print_json(const struct probe_report *r, FILE *f)
{
	bool first = true, inner;

	fputc('{', f);
	json__kv_u64(f, &first, "version", 1);

	json__key(f, &first, "kernel");
	inner = true;
	fputc('{', f);
	json__kv_str(f, &inner, "release", r->release);
	json__kv_str(f, &inner, "machine", r->machine);
	fputc('}', f);

	json__key(f, &first, "btf");
	inner = true;
	fputc('{', f);
	json__kv_str(f, &inner, "status", r->btf ? "ok" : "missing");
	json__kv_str(f, &inner, "path", r->btf ? "/sys/kernel/btf/vmlinux" : NULL);
	json__switched_off(f, &inner, r, CAPS_BTF);
	fputc('}', f);

	json__key(f, &first, "tracefs");
	inner = true;
	fputc('{', f);
	json__kv_str(f, &inner, "status", r->tracefs[0] ? "ok" : "missing");
	json__kv_str(f, &inner, "path", r->tracefs[0] ? r->tracefs : NULL);
	fputc('}', f);

	json__key(f, &first, "bpf");
	inner = true;
	fputc('{', f);
	for (int k = 0; k < PROBE_BPF_NR; k++) {
		json__key(f, &inner, probe_bpf_kind__name(k));
		json__bpf(f, r, &r->bpf[k], k == PROBE_BPF_KPROBE ? CAPS_KPROBE : k == PROBE_BPF_FENTRY ? CAPS_FENTRY : CAPS_NR);
	}
	fputc('}', f);

	json__key(f, &first, "cgroup2");
	inner = true;
	fputc('{', f);
	json__kv_str(f, &inner, "status", switched_off(r, CAPS_CGROUP2) || r->cgroup2_err == -ENOENT ? "missing"
					  : !r->cgroup2_err ? "ok" : "unknown");
	json__kv_str(f, &inner, "path", !r->cgroup2_err ? r->cgroup2 : NULL);
	json__switched_off(f, &inner, r, CAPS_CGROUP2);
	fputc('}', f);

	json__key(f, &first, "privileges");
	inner = true;
	fputc('{', f);
	json__kv_u64(f, &inner, "euid", r->euid);
	json__kv_bool(f, &inner, "root", r->euid == 0);
	json__kv_bool(f, &inner, "cap_perfmon", r->cap_perfmon);
	json__kv_bool(f, &inner, "cap_bpf", r->cap_bpf);
	json__kv_bool(f, &inner, "cap_sys_admin", r->cap_sys_admin);
	json__key(f, &inner, "perf_event_paranoid");
	if (r->paranoid == INT_MIN)
		fputs("null", f);
	else
		fprintf(f, "%d", r->paranoid);
	fputc('}', f);

	json__key(f, &first, "mlock");
	inner = true;
	fputc('{', f);
	json__key(f, &inner, "perf_event_mlock_kb");
	if (r->mlock_kb < 0)
		fputs("null", f);
	else
		fprintf(f, "%ld", r->mlock_kb);
	json__key(f, &inner, "rlimit_memlock");
	if (r->rlimit_memlock == (unsigned long long)RLIM_INFINITY)
		fputs("null", f);
	else
		fprintf(f, "%llu", r->rlimit_memlock);
	json__kv_bool(f, &inner, "rlimit_memlock_unlimited",
		      r->rlimit_memlock == (unsigned long long)RLIM_INFINITY);
	fputc('}', f);

	json__key(f, &first, "aux_action");
	inner = true;
	fputc('{', f);
	json__kv_str(f, &inner, "status", status__name(aux_action__status(r)));
	json__key(f, &inner, "kernel");
	fputs(r->aux_action_known == 1 ? "true" : r->aux_action_known == 0 ? "false" : "null", f);
	json__kv_err(f, &inner, r->aux_action_err);
	fputc('}', f);

	json__key(f, &first, "hw_breakpoint");
	inner = true;
	fputc('{', f);
	json__kv_str(f, &inner, "status", status__name(bp__status(r)));
	json__kv_bool(f, &inner, "opened", r->bp_opened);
	json__kv_bool(f, &inner, "fired", r->bp_opened && r->bp_hits > 0);
	json__kv_u64(f, &inner, "hits", r->bp_hits);
	json__kv_u64(f, &inner, "writes", r->bp_opened ? PROBE_BP_WRITES : 0);
	json__kv_err(f, &inner, r->bp_err);
	json__switched_off(f, &inner, r, CAPS_HW_BREAKPOINT);
	fputc('}', f);

	json__key(f, &first, "hardware_trace");
	inner = true;
	fputc('{', f);
	json__kv_str(f, &inner, "status", r->nr_aux ? "ok" : "missing");
	json__kv_str(f, &inner, "sysfs_root", r->sysfs_root);
	json__switched_off(f, &inner, r, CAPS_AUX_PMU);
	json__key(f, &inner, "aux_pmus");
	fputc('[', f);
	for (size_t i = 0; i < r->nr_aux; i++) {
		if (i)
			fputc(',', f);
		json__pmu(f, &r->aux[i]);
	}
	fputc(']', f);
	fputc('}', f);

	fputs("}\n", f);
}

/* ---- command ------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"USAGE: auxtrig probe [--json] [-v] [--sysfs-root DIR]\n"
		"\n"
		"Report what auxtrig can do on this machine, and why not where it can't:\n"
		"BTF, tracefs, which BPF program types load, attach and fire, the BPF ring\n"
		"buffer, cgroup v2, privileges, perf limits, aux_action, hardware breakpoints\n"
		"and the hardware trace PMUs (Intel PT, CoreSight ETM, Arm SPE). Missing features\n"
		"are reported, not errors: the exit status is 0.\n"
		"\n"
		"OPTIONS:\n"
		"  --json             print one JSON object (keys: man auxtrig-probe)\n"
		"  -v, --verbose      debug messages; -vv adds libbpf's and the verifier's\n"
		"  -h, --help         this help\n"
		"\n"
		"TESTING:\n"
		"  --sysfs-root DIR   discover PMUs under DIR/bus/event_source/devices\n"
		"                     instead of /sys (e.g. tests/fixtures/sysfs-intel_pt)\n"
		"  AUXTRIG_CAPS_OFF=all|hw_breakpoint,kprobe,fentry,cgroup2,aux_pmu,btf\n"
		"                     (environment) report these missing without trying them;\n"
		"                     record and list honour it too; it never switches one on\n"
		"\n"
		"EXAMPLES:\n"
		"  auxtrig probe\n"
		"  auxtrig probe --json | jq .hardware_trace\n");
}

int probe__main(int argc, char **argv, const struct probe_ops *ops, FILE *out)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sysfs-root", required_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_opts opts = { .caps_off = caps__off() };
	struct probe_report r;
	int c, err, verbose = 0;

	optind = 0; /* full getopt re-initialisation: callers may parse more than once */
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opts.json = true;
			break;
		case 'S':
			opts.sysfs_root = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(out);
			return EXIT_OK;
		default: /* getopt named the problem */
			fprintf(stderr, "USAGE: auxtrig probe [--json] [-v] [--sysfs-root DIR] (try: auxtrig probe --help)\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("probe: unexpected argument '%s' (try: auxtrig probe --help)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (verbose)
		log__set_level(LOG_INFO + verbose);
	if (opts.sysfs_root) {
		char why[PATH_MAX + 128];

		if (pmu__check_root(opts.sysfs_root, why, sizeof(why))) {
			pr_err("probe: --sysfs-root %s\n", why);
			return EXIT_USAGE;
		}
	}

	err = probe_report__collect(&r, &opts, ops);
	if (err) {
		pr_err("probe: %s\n", strerror(-err));
		probe_report__exit(&r);
		return EXIT_RUNTIME;
	}
	if (opts.json)
		probe_report__print_json(&r, out);
	else
		probe_report__print_text(&r, out);
	probe_report__exit(&r);
	return fflush(out) ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_probe(int argc, char **argv)
{
	log__route_libbpf();
	return probe__main(argc, argv, &probe_ops__kernel, stdout);
}
