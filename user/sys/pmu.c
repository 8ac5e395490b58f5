// SPDX-License-Identifier: BSD-2-Clause
/*
 * PMU discovery from sysfs. Facts about file names and value formats come
 * from the kernel drivers: arch/x86/events/intel/pt.c, drivers/perf/
 * arm_spe_pmu.c, drivers/hwtracing/coresight/coresight-etm-perf.c and
 * coresight-etm4x-sysfs.c; see include/auxtrig/sys/pmu.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "auxtrig/sys/caps.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/pmu.h"

#define PMU_DEVICES "bus/event_source/devices"

/* snprintf() for paths: a truncated path becomes "", which no open() finds. */
static void __attribute__((format(printf, 3, 4))) path__fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
}

/* Read a small sysfs file, trimmed of surrounding whitespace. */
static int sysfs__read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t len;
	char *p;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = -errno;
	close(fd);
	if (n < 0)
		return err;
	buf[n] = '\0';
	len = n;
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	for (p = buf; *p && isspace((unsigned char)*p); p++)
		;
	if (p != buf)
		memmove(buf, p, strlen(p) + 1);
	return 0;
}

static int sysfs__read_u64(const char *path, int base, __u64 *val)
{
	char buf[64], *end;
	int err;

	err = sysfs__read(path, buf, sizeof(buf));
	if (err)
		return err;
	if (!buf[0])
		return -EINVAL;
	errno = 0;
	*val = strtoull(buf, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int sysfs__read_u32(const char *path, __u32 *val)
{
	__u64 v;
	int err = sysfs__read_u64(path, 0, &v);

	if (err)
		return err;
	if (v > 0xffffffffull)
		return -ERANGE;
	*val = v;
	return 0;
}

bool pmu__is_aux_name(const char *name)
{
	return !strcmp(name, "intel_pt") || !strcmp(name, "intel_bts") || !strcmp(name, "cs_etm") ||
	       !strncmp(name, "arm_spe", 7) || !strncmp(name, "hisi_ptt", 8);
}

static const char *const config_word_names[] = { "config", "config1", "config2", "config3" };

int pmu_format__parse(const char *spec, enum pmu_config_word *word, __u64 *mask)
{
	const char *colon, *p;
	size_t wlen;
	__u64 m = 0;
	int w = -1;

	while (isspace((unsigned char)*spec))
		spec++;
	colon = strchr(spec, ':');
	if (!colon)
		return -EINVAL;
	wlen = colon - spec;
	for (int i = 0; i < 4; i++) {
		if (strlen(config_word_names[i]) == wlen && !strncmp(spec, config_word_names[i], wlen))
			w = i;
	}
	if (w < 0)
		return -EINVAL;

	p = colon + 1;
	for (;;) {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (hi > 63 || lo > hi)
			return -EINVAL;
		for (unsigned long b = lo; b <= hi; b++)
			m |= 1ull << b;
		if (*p != ',')
			break;
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return -EINVAL;
	*word = w;
	*mask = m;
	return 0;
}

__u64 pmu_format__max(const struct pmu_format *fmt)
{
	int bits = __builtin_popcountll(fmt->mask);

	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

__u64 pmu_format__encode(const struct pmu_format *fmt, __u64 value)
{
	__u64 out = 0;
	int vbit = 0;

	for (int b = 0; b < 64; b++) {
		if (!(fmt->mask & (1ull << b)))
			continue;
		if (value & (1ull << vbit))
			out |= 1ull << b;
		vbit++;
	}
	return out;
}

void pmu__delete(struct pmu *pmu)
{
	if (!pmu)
		return;
	for (size_t i = 0; i < pmu->nr_formats; i++) {
		free(pmu->formats[i].name);
		free(pmu->formats[i].spec);
	}
	for (size_t i = 0; i < pmu->nr_caps; i++) {
		free(pmu->caps[i].name);
		free(pmu->caps[i].raw);
	}
	for (size_t i = 0; i < pmu->nr_sinks; i++)
		free(pmu->sinks[i].name);
	free(pmu->formats);
	free(pmu->caps);
	free(pmu->sinks);
	free(pmu->etm_cpus);
	free(pmu->name);
	free(pmu);
}

int pmu__check_root(const char *root, char *why, size_t why_size)
{
	char path[PATH_MAX];
	struct stat st;
	int err;

	if (stat(root, &st) || !S_ISDIR(st.st_mode)) {
		err = stat(root, &st) ? -errno : -ENOTDIR;
		snprintf(why, why_size, "%s: %s (give a sysfs root such as /sys)", root, strerror(-err));
		return err;
	}
	path__fmt(path, sizeof(path), "%s/" PMU_DEVICES, root);
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		err = stat(path, &st) ? -errno : -ENOTDIR;
		snprintf(why, why_size, "%s has no %s/ (%s): not a sysfs root like /sys", root, PMU_DEVICES,
			 strerror(-err));
		return err;
	}
	return 0;
}

void pmu_set__delete(struct pmu_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->nr; i++)
		pmu__delete(set->pmus[i]);
	free(set->pmus);
	free(set->root);
	free(set);
}

/* Regular file names in @dir, sorted; hidden entries skipped. */
static int dir__names(const char *dir, char ***names, size_t *nr)
{
	struct dirent **ents = NULL;
	char **out = NULL;
	size_t n = 0;
	int cnt, err = 0;

	*names = NULL;
	*nr = 0;
	cnt = scandir(dir, &ents, NULL, alphasort);
	if (cnt < 0)
		return -errno;
	if (cnt) {
		out = calloc(cnt, sizeof(*out));
		if (!out)
			err = -ENOMEM;
	}
	for (int i = 0; i < cnt; i++) {
		if (!err && ents[i]->d_name[0] != '.') {
			out[n] = strdup(ents[i]->d_name);
			if (!out[n])
				err = -ENOMEM;
			else
				n++;
		}
		free(ents[i]);
	}
	free(ents);
	if (err) {
		while (n)
			free(out[--n]);
		free(out);
		return err;
	}
	*names = out;
	*nr = n;
	return 0;
}

static void names__free(char **names, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
}

static int pmu__read_formats(struct pmu *pmu, const char *dir)
{
	char path[PATH_MAX], buf[256];
	char **names;
	size_t nr;
	int err;

	path__fmt(path, sizeof(path), "%s/format", dir);
	err = dir__names(path, &names, &nr);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	pmu->formats = calloc(nr ? nr : 1, sizeof(*pmu->formats));
	if (!pmu->formats) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct pmu_format *f = &pmu->formats[pmu->nr_formats];

		path__fmt(path, sizeof(path), "%s/format/%s", dir, names[i]);
		if (sysfs__read(path, buf, sizeof(buf)) ||
		    pmu_format__parse(buf, &f->word, &f->mask)) {
			pr_debug("%s: ignoring format '%s': not 'configN:bits'\n", pmu->name, names[i]);
			continue;
		}
		f->name = strdup(names[i]);
		f->spec = strdup(buf);
		if (!f->name || !f->spec) {
			free(f->name);
			free(f->spec);
			err = -ENOMEM;
			goto out;
		}
		pmu->nr_formats++;
	}
out:
	names__free(names, nr);
	return err;
}

static int pmu__read_caps(struct pmu *pmu, const char *dir)
{
	/* intel_pt prints caps as bare hex (pt.c: pt_cap_show() "%x\n"). */
	int base = !strcmp(pmu->name, "intel_pt") ? 16 : 0;
	char path[PATH_MAX], buf[256];
	char **names;
	size_t nr;
	int err;

	path__fmt(path, sizeof(path), "%s/caps", dir);
	err = dir__names(path, &names, &nr);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	pmu->caps = calloc(nr ? nr : 1, sizeof(*pmu->caps));
	if (!pmu->caps) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct pmu_cap *c = &pmu->caps[pmu->nr_caps];
		char *end;

		path__fmt(path, sizeof(path), "%s/caps/%s", dir, names[i]);
		if (sysfs__read(path, buf, sizeof(buf)))
			continue;
		c->name = strdup(names[i]);
		c->raw = strdup(buf);
		if (!c->name || !c->raw) {
			free(c->name);
			free(c->raw);
			err = -ENOMEM;
			goto out;
		}
		errno = 0;
		c->value = strtoull(buf, &end, base);
		c->numeric = buf[0] && !*end && !errno && buf[0] != '-';
		if (!c->numeric)
			c->value = 0;
		pmu->nr_caps++;
	}
out:
	names__free(names, nr);
	return err;
}

static int pmu__read_sinks(struct pmu *pmu, const char *dir)
{
	char path[PATH_MAX];
	char **names;
	size_t nr;
	int err;

	path__fmt(path, sizeof(path), "%s/sinks", dir);
	err = dir__names(path, &names, &nr);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	pmu->sinks = calloc(nr ? nr : 1, sizeof(*pmu->sinks));
	if (!pmu->sinks) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct pmu_sink *s = &pmu->sinks[pmu->nr_sinks];

		path__fmt(path, sizeof(path), "%s/sinks/%s", dir, names[i]);
		if (sysfs__read_u32(path, &s->id)) {
			pr_debug("%s: ignoring sink '%s': no id in %s\n", pmu->name, names[i], path);
			continue;
		}
		s->name = strdup(names[i]);
		if (!s->name) {
			err = -ENOMEM;
			goto out;
		}
		pmu->nr_sinks++;
	}
out:
	names__free(names, nr);
	return err;
}

static void etm_cpu__read(struct pmu_etm_cpu *e, const char *cpudir)
{
	char path[PATH_MAX];

	for (int i = 0; i < PMU_ETM_NR_TRCIDR; i++) {
		path__fmt(path, sizeof(path), "%s/trcidr/trcidr%d", cpudir, i);
		if (!sysfs__read_u32(path, &e->trcidr[i]))
			e->trcidr_present |= 1u << i;
	}
	path__fmt(path, sizeof(path), "%s/mgmt/trcauthstatus", cpudir);
	e->has_trcauthstatus = !sysfs__read_u32(path, &e->trcauthstatus);
	path__fmt(path, sizeof(path), "%s/mgmt/trcdevarch", cpudir);
	e->has_trcdevarch = !sysfs__read_u32(path, &e->trcdevarch);
	path__fmt(path, sizeof(path), "%s/mgmt/trcconfig", cpudir);
	e->has_trcconfig = !sysfs__read_u32(path, &e->trcconfig);
	path__fmt(path, sizeof(path), "%s/mgmt/trctraceid", cpudir);
	e->has_trctraceid = !sysfs__read_u32(path, &e->trctraceid);
}

static int etm_cpu__cmp(const void *a, const void *b)
{
	const struct pmu_etm_cpu *x = a, *y = b;

	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* cs_etm/cpuN links to CPU N's ETM device (coresight-etm-perf.c: etm_perf_add_symlink()). */
static int pmu__read_etm_cpus(struct pmu *pmu, const char *dir)
{
	char path[PATH_MAX];
	char **names;
	size_t nr;
	int err;

	err = dir__names(dir, &names, &nr);
	if (err)
		return err;
	pmu->etm_cpus = calloc(nr ? nr : 1, sizeof(*pmu->etm_cpus));
	if (!pmu->etm_cpus) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct pmu_etm_cpu *e = &pmu->etm_cpus[pmu->nr_etm_cpus];
		char *end;
		long cpu;

		if (strncmp(names[i], "cpu", 3) || !isdigit((unsigned char)names[i][3]))
			continue;
		cpu = strtol(names[i] + 3, &end, 10);
		if (*end || cpu > INT_MAX)
			continue;
		e->cpu = cpu;
		path__fmt(path, sizeof(path), "%s/%s", dir, names[i]);
		etm_cpu__read(e, path);
		pmu->nr_etm_cpus++;
	}
	qsort(pmu->etm_cpus, pmu->nr_etm_cpus, sizeof(*pmu->etm_cpus), etm_cpu__cmp);
out:
	names__free(names, nr);
	return err;
}

int pmu__read(const char *root, const char *name, struct pmu **out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct pmu *pmu;
	struct stat st;
	__u64 v;
	int err;

	*out = NULL;
	if (!root)
		root = PMU_SYSFS_ROOT_DEFAULT;
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	path__fmt(dir, sizeof(dir), "%s/" PMU_DEVICES "/%s", root, name);
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;

	pmu = calloc(1, sizeof(*pmu));
	if (!pmu)
		return -ENOMEM;
	pmu->name = strdup(name);
	if (!pmu->name) {
		err = -ENOMEM;
		goto err;
	}
	pmu->aux = pmu__is_aux_name(name);

	path__fmt(path, sizeof(path), "%s/type", dir);
	err = sysfs__read_u64(path, 10, &v);
	if (err)
		goto err;
	if (v > 0xffffffffull) {
		err = -ERANGE;
		goto err;
	}
	pmu->type = v;

	path__fmt(path, sizeof(path), "%s/nr_addr_filters", dir);
	pmu->nr_addr_filters = sysfs__read_u64(path, 10, &v) || v > INT_MAX ? -1 : (int)v;

	err = pmu__read_formats(pmu, dir);
	if (!err)
		err = pmu__read_caps(pmu, dir);
	if (!err)
		err = pmu__read_sinks(pmu, dir);
	if (!err && !strcmp(name, "cs_etm"))
		err = pmu__read_etm_cpus(pmu, dir);
	if (err)
		goto err;
	*out = pmu;
	return 0;
err:
	pmu__delete(pmu);
	return err;
}

int pmu__scan(const char *root, struct pmu_set **out)
{
	char dir[PATH_MAX];
	struct pmu_set *set;
	char **names = NULL;
	size_t nr = 0;
	int err;

	*out = NULL;
	if (!root)
		root = PMU_SYSFS_ROOT_DEFAULT;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	set->root = strdup(root);
	if (!set->root) {
		err = -ENOMEM;
		goto err;
	}
	path__fmt(dir, sizeof(dir), "%s/" PMU_DEVICES, root);
	err = dir__names(dir, &names, &nr);
	if (err == -ENOENT) {
		pr_debug("no %s: no perf PMUs to report\n", dir);
		*out = set;
		return 0;
	}
	if (err)
		goto err;
	set->pmus = calloc(nr ? nr : 1, sizeof(*set->pmus));
	if (!set->pmus) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < nr; i++) {
		struct pmu *pmu;

		err = pmu__read(root, names[i], &pmu);
		if (err == -ENOMEM)
			goto err;
		if (err) {
			pr_debug("skipping PMU %s/%s: %s\n", dir, names[i], strerror(-err));
			continue;
		}
		if (pmu->aux && !strcmp(root, PMU_SYSFS_ROOT_DEFAULT) && !caps__allowed(CAPS_AUX_PMU)) {
			pr_debug("leaving out PMU %s: AUX trace PMUs are reported missing (%s)\n", names[i],
				 caps__switched_off(CAPS_AUX_PMU) ? CAPS_OFF_ENV : "a test's answer");
			pmu__delete(pmu);
			continue;
		}
		set->pmus[set->nr++] = pmu;
	}
	names__free(names, nr);
	*out = set;
	return 0;
err:
	names__free(names, nr);
	pmu_set__delete(set);
	return err;
}

struct pmu *pmu_set__find(const struct pmu_set *set, const char *name)
{
	for (size_t i = 0; set && i < set->nr; i++) {
		if (!strcmp(set->pmus[i]->name, name))
			return set->pmus[i];
	}
	return NULL;
}

size_t pmu_set__nr_aux(const struct pmu_set *set)
{
	size_t n = 0;

	for (size_t i = 0; set && i < set->nr; i++)
		n += set->pmus[i]->aux;
	return n;
}

const struct pmu_format *pmu__find_format(const struct pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->nr_formats; i++) {
		if (!strcmp(pmu->formats[i].name, name))
			return &pmu->formats[i];
	}
	return NULL;
}

const struct pmu_cap *pmu__find_cap(const struct pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->nr_caps; i++) {
		if (!strcmp(pmu->caps[i].name, name))
			return &pmu->caps[i];
	}
	return NULL;
}

int pmu__cap_value(const struct pmu *pmu, const char *name, __u64 *value)
{
	const struct pmu_cap *c = pmu__find_cap(pmu, name);

	if (!c)
		return -ENOENT;
	if (!c->numeric)
		return -EINVAL;
	*value = c->value;
	return 0;
}

/* "a, b, c" of every term, for error messages. */
static void pmu__format_names(const struct pmu *pmu, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < pmu->nr_formats && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? ", " : "", pmu->formats[i].name);
}

/*
 * intel_pt fields whose legal values are a bitmap in caps
 * (pt.c: pt_event_valid(); perf's "Invalid %s for intel_pt. Valid values are: ...").
 */
static const struct {
	const char *term;
	const char *cap;
} pt_bitmap_terms[] = {
	{ "mtc_period", "mtc_periods" },
	{ "cyc_thresh", "cycle_thresholds" },
	{ "psb_period", "psb_periods" },
};

static int pmu__check_pt_bitmap(const struct pmu *pmu, const char *term, __u64 value)
{
	char valid[256];
	size_t len = 0;
	__u64 allowed;

	if (strcmp(pmu->name, "intel_pt"))
		return 0;
	for (size_t i = 0; i < sizeof(pt_bitmap_terms) / sizeof(pt_bitmap_terms[0]); i++) {
		if (strcmp(term, pt_bitmap_terms[i].term))
			continue;
		if (pmu__cap_value(pmu, pt_bitmap_terms[i].cap, &allowed))
			return 0; /* no cap file: let the kernel decide */
		if (value < 64 && (allowed & (1ull << value)))
			return 0;
		/* cyc_thresh=0 and psb_period=0 are always accepted (pt_event_valid()). */
		if (value == 0 && strcmp(term, "mtc_period"))
			return 0;
		valid[0] = '\0';
		for (int b = 0; b < 64 && len < sizeof(valid); b++) {
			if (allowed & (1ull << b))
				len += snprintf(valid + len, sizeof(valid) - len, "%s%d", len ? ", " : "", b);
		}
		pr_err("invalid %s=%llu for intel_pt: this CPU supports %s (caps/%s = %s)\n", term,
		       (unsigned long long)value, valid[0] ? valid : "none", pt_bitmap_terms[i].cap,
		       pmu__find_cap(pmu, pt_bitmap_terms[i].cap)->raw);
		return -ERANGE;
	}
	return 0;
}

int pmu__config_term(const struct pmu *pmu, const char *name, __u64 value,
		     struct perf_event_attr *attr)
{
	const struct pmu_format *fmt = pmu__find_format(pmu, name);
	char names[1024];
	__u64 *word;
	int err;

	if (!fmt) {
		pmu__format_names(pmu, names, sizeof(names));
		pr_err("%s has no term '%s' (valid terms: %s)\n", pmu->name, name,
		       names[0] ? names : "none");
		return -ENOENT;
	}
	if (value > pmu_format__max(fmt)) {
		pr_err("%s term %s=%llu out of range: %s (%s) takes 0..%llu\n", pmu->name, name,
		       (unsigned long long)value, name, fmt->spec,
		       (unsigned long long)pmu_format__max(fmt));
		return -ERANGE;
	}
	err = pmu__check_pt_bitmap(pmu, name, value);
	if (err)
		return err;
	switch (fmt->word) {
	case PMU_CONFIG:
		word = (__u64 *)&attr->config;
		break;
	case PMU_CONFIG1:
		word = (__u64 *)&attr->config1;
		break;
	case PMU_CONFIG2:
		word = (__u64 *)&attr->config2;
		break;
	default:
		pr_err("%s term %s sets config3, which auxtrig cannot write yet (perf 6.1 reads attr size 128 only)\n",
		       pmu->name, name);
		return -EOPNOTSUPP;
	}
	*word = (*word & ~fmt->mask) | pmu_format__encode(fmt, value);
	return 0;
}
