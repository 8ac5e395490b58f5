// SPDX-License-Identifier: BSD-2-Clause
/*
 * The gate's probe points attached: uprobe, uretprobe, usdt, kprobe,
 * kretprobe (through the kernel's probe PMUs where a point has a program of
 * its own) and mem (a hardware breakpoint per CPU).
 */
#include <errno.h>
#include <elf.h>
#include <string.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>

#include "auxtrig/lang/point_catalog.h"
#include "auxtrig/sys/elf_image.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/perf_sys.h"
#include "auxtrig/record/internal/gate.h"
#include "skel/gate.skel.h"

/* mem:PATH:SYMBOL: the symbol's address in a position-dependent executable. */
static int elf_symbol_address(const char *path, const char *name, unsigned long *addr)
{
	struct elf_image *img = elf_image__open(path);
	__u64 v;
	int err;

	if (!img)
		return -errno;
	if (elf_image__type(img) == 0)
		err = -ENOEXEC;
	else if (elf_image__type(img) != ET_EXEC)
		err = -EOPNOTSUPP; /* PIE or library: the address is known only once it is mapped */
	else
		err = elf_image__symbol_value(img, name, &v);
	if (!err)
		*addr = v;
	elf_image__delete(img);
	return err;
}

/*
 * mem: a hardware breakpoint per CPU with the gate's program on it. The
 * address is virtual, so any process touching it on that CPU fires it; the
 * program keeps only the targets'.
 */
static int attach_mem(struct gate *g, size_t n)
{
	const struct point *p = &g->points[n].pt;
	int prog_fd = bpf_program__fd(g->skel->progs.gate_point_mem);
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_BREAKPOINT,
		.sample_period = 1,
		.bp_len = p->len,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	unsigned long addr = p->offset;
	int fd, link, err;

	if (p->path[0]) {
		err = elf_symbol_address(p->path, p->symbol, &addr);
		if (err) {
			pr_err("mem:%s:%s: %s\n", p->path, p->symbol,
			       err == -EOPNOTSUPP ? "the file is position-independent, so the address is known only at run time; give mem:ADDR"
			       : err == -ENOENT	  ? "no such symbol in that file"
						  : strerror(-err));
			return err == -EOPNOTSUPP ? -EINVAL : err;
		}
	}
	a.bp_addr = addr;
	a.bp_type = p->access == POINT_MEM_X ? HW_BREAKPOINT_X :
		    p->access == POINT_MEM_R ? HW_BREAKPOINT_R :
		    p->access == POINT_MEM_W ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
	for (int cpu = 0; cpu < g->nr_cpus; cpu++) {
		fd = perf_sys__event_open(g->sys, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd == -ENODEV)
			continue; /* an offline CPU */
		if (fd < 0) {
			pr_err("cannot set a hardware breakpoint at 0x%lx on CPU %d: %s\n", addr, cpu, strerror(-fd));
			return fd;
		}
		err = gate__keep_fd(g, fd);
		if (err)
			return err;
		link = perf_sys__attach_bpf(g->sys, fd, prog_fd, GATE_POINT_BASE + n);
		if (link < 0) {
			pr_err("cannot attach the gate to the breakpoint at 0x%lx: %s\n", addr, strerror(-link));
			return link;
		}
		err = gate__keep_fd(g, link);
		if (err)
			return err;
	}
	return 0;
}

/* The type of PMU @pmu (uprobe, kprobe) and the config bit of its return probes. */
static int probe_pmu(const char *pmu, __u32 *type, int *ret_bit)
{
	char path[128], buf[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%u", type) == 1;
	fclose(f);
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/retprobe", pmu);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = ok && fgets(buf, sizeof(buf), f) && sscanf(buf, "config:%d", ret_bit) == 1;
	fclose(f);
	return ok && *ret_bit >= 0 && *ret_bit < 64 ? 0 : -EINVAL;
}

/*
 * The perf event of a uprobe (at @symbol + @offset of @path, or at file offset
 * @offset without a symbol) or a kprobe (@symbol + @offset), as libbpf opens
 * it for its own programs. Return: its fd or -errno.
 */
static int probe_event_open(struct gate *g, bool kernel, bool ret, const char *path, const char *symbol,
			    unsigned long offset)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	__u64 off = 0;
	int bit, err;

	err = probe_pmu(kernel ? "kprobe" : "uprobe", &attr.type, &bit);
	if (err)
		return err;
	if (kernel) {
		attr.config1 = (__u64)(uintptr_t)symbol;
		attr.config2 = offset;
	} else {
		if (symbol && symbol[0]) {
			struct elf_image *img = elf_image__open(path);

			if (!img)
				return -errno;
			err = elf_image__symbol_file_offset(img, symbol, &off);
			elf_image__delete(img);
			if (err)
				return err;
		}
		attr.config1 = (__u64)(uintptr_t)path;
		attr.config2 = off + offset;
	}
	attr.config = ret ? 1ULL << bit : 0;
	return perf_sys__event_open(g->sys, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * A probe point (@n >= 0) or a uprobe window's entry (@u) whose conditions
 * the compiler can express gets a program of its own that evaluates them and
 * tail-calls the shared one (gate_front__build_probe()). Return: 0 when
 * attached, -EOPNOTSUPP with @why when the shared program is attached instead.
 */
/* The spec of probe point @pt's (or uprobe window @u's) own program (gate__attach_probe_front()). */
static void probe_spec(struct gate *g, const struct gate_point *pt, const struct gate_uprobe *u,
		       struct gate_front_spec *spec)
{
	const struct point *p = pt ? &pt->pt : NULL;
	bool ret;

	gate__front_spec_init(g, spec);
	spec->fire_fd = bpf_map__fd(g->skel->maps.gate_probe_progs);
	spec->probe_progs_fd = spec->fire_fd;
	spec->vetoed_fd = bpf_map__fd(g->skel->maps.gate_uprobe_vetoed);
	spec->no_windows = g->skel->rodata->no_windows;
	spec->where = g->where;
	spec->probe = GATE_FRONT_ENTRY;
	if (u) {
		spec->is_window = 1;
		spec->window = u->window;
		spec->probe_key = GATE_UPROBE_WINDOW_KEY(u->window);
		spec->probe_prog = GATE_PROBE_WINDOW;
	} else {
		ret = p->kind == POINT_URETPROBE || p->kind == POINT_KRETPROBE;
		spec->probe = ret ? GATE_FRONT_RETURN : GATE_FRONT_ENTRY;
		spec->ret_cast = (pt->tp.flags & GATE_TP_RET_MASK) >> GATE_TP_RET_SHIFT;
		spec->probe_key = GATE_POINT_BASE + (pt - g->points);
		spec->probe_prog = p->kind == POINT_UPROBE ? GATE_PROBE_UPROBE :
				   p->kind == POINT_URETPROBE ? GATE_PROBE_URETPROBE :
				   p->kind == POINT_KPROBE ? GATE_PROBE_KPROBE : GATE_PROBE_KRETPROBE;
		spec->open_mask = pt->tp.open_mask;
		spec->close_mask = pt->tp.close_mask;
		spec->trig_mask = pt->tp.trig_mask;
		/* the shared program pops the call (call_pop()): it runs after this one, never instead */
		spec->call_frames = !!(pt->tp.flags & GATE_TP_CALL_ENTRY);
	}
}

/*
 * Start-up: is probe point @pt one that only runs triggers, all of them in a
 * program of its own (gate__attach_probe_front())? Built here as it will be at
 * attach (the maps' fds aside). Then its kind's shared program need not be
 * verified unless another point of that kind uses it.
 */
bool gate__probe_trig_only(struct gate *g, const struct gate_point *pt)
{
	struct gate_front_spec spec;
	const struct bpf_insn *insns;
	struct bpf_asm *a;
	char why[256];
	size_t nr;
	int err;

	if (pt->pt.kind != POINT_UPROBE && pt->pt.kind != POINT_URETPROBE && pt->pt.kind != POINT_KPROBE &&
	    pt->pt.kind != POINT_KRETPROBE)
		return false;
	probe_spec(g, pt, NULL, &spec);
	if (spec.open_mask || spec.close_mask || spec.call_frames || gate__front_task(g, &spec, why, sizeof(why)))
		return false;
	spec.fire_prog = spec.probe == GATE_FRONT_RETURN ? GATE_PROBE_FIRE_RETURN : GATE_PROBE_FIRE_ENTRY;
	a = bpf_asm__new();
	if (!a)
		return false;
	err = gate_front__build(a, &spec, why, sizeof(why));
	if (!err)
		err = bpf_asm__finish(a, &insns, &nr);
	bpf_asm__delete(a);
	return !err;
}

int gate__attach_probe_front(struct gate *g, const struct gate_point *pt, const struct gate_uprobe *u, char *why,
			     size_t why_size)
{
	struct gate_front_spec spec;
	const struct point *p = pt ? &pt->pt : NULL;
	bool kernel = false, ret = false, trig_only = false;
	struct bpf_asm *a;
	size_t nr;
	int fd, pfd, lfd, err;

	probe_spec(g, pt, u, &spec);
	if (!u) {
		kernel = p->kind == POINT_KPROBE || p->kind == POINT_KRETPROBE;
		ret = p->kind == POINT_URETPROBE || p->kind == POINT_KRETPROBE;
	}
	err = gate__front_task(g, &spec, why, why_size);
	if (err)
		return err;
	a = bpf_asm__new();
	if (!a)
		return -ENOMEM;
	/*
	 * A point that only runs triggers: all of it in its own program (conditions,
	 * counters, policies), the actions in gate_fire_entry/return. Else, or if a
	 * condition does not compile, the conditions only, before the shared program.
	 */
	if (!u && !spec.open_mask && !spec.close_mask && !spec.call_frames) {
		spec.fire_prog = ret ? GATE_PROBE_FIRE_RETURN : GATE_PROBE_FIRE_ENTRY;
		err = gate_front__build(a, &spec, why, why_size);
		if (!err)
			trig_only = true;
		if (err == -EOPNOTSUPP) {
			bpf_asm__delete(a);
			a = bpf_asm__new();
			if (!a)
				return -ENOMEM;
		}
	}
	if (!trig_only)
		err = gate_front__build_probe(a, &spec, why, why_size);
	fd = gate__load_front(g, a, err, BPF_PROG_TYPE_KPROBE, "gate_probe", &nr, why, why_size);
	if (fd < 0)
		return fd;
	pfd = u ? probe_event_open(g, false, false, u->path, u->symbol, u->offset)
		: probe_event_open(g, kernel, ret, p->path, p->symbol, p->offset);
	if (pfd < 0) {
		/* the shared program's attach says what is wrong with the point, if anything is */
		g->probe_open_err = pfd;
		snprintf(why, why_size, "cannot open its probe for its own program: %s", strerror(-pfd));
		return -EOPNOTSUPP;
	}
	err = gate__keep_fd(g, pfd);
	if (err)
		return err;
	lfd = perf_sys__attach_bpf(g->sys, pfd, fd, spec.probe_key);
	if (lfd < 0) {
		snprintf(why, why_size, "cannot attach its own program: %s", strerror(-lfd));
		return -EOPNOTSUPP;
	}
	err = gate__keep_fd(g, lfd);
	if (err)
		return err;
	if (trig_only)
		pr_info("%s: its own gate program, %zu instructions, triggers compiled\n", point__kind_name(p->kind), nr);
	else
		pr_info("%s: conditions compiled, %zu instructions, in a program of its own before the shared one\n",
			u ? "uprobe window" : point__kind_name(p->kind), nr);
	return 0;
}

/*
 * Usdt point @n's conditions compiled: its own program, which the shared
 * gate_point_usdt tail-calls once it has put the arguments in the
 * environment (GATE_PROBE_USDT). Return: 0 when in place, -EOPNOTSUPP with
 * @why when the shared program interprets them.
 */
static int usdt_front(struct gate *g, size_t n, char *why, size_t why_size)
{
	const struct gate_point *pt = &g->points[n];
	struct gate_front_spec spec;
	struct bpf_asm *a;
	__u32 k = n;
	size_t nr;
	int fd, err;

	gate__front_spec_init(g, &spec);
	spec.probe_progs_fd = bpf_map__fd(g->skel->maps.gate_probe_progs);
	spec.vetoed_fd = bpf_map__fd(g->skel->maps.gate_uprobe_vetoed);
	spec.env_fd = bpf_map__fd(g->skel->maps.gate_env);
	spec.no_windows = g->skel->rodata->no_windows;
	spec.where = g->where;
	spec.probe = GATE_FRONT_USDT;
	spec.probe_key = GATE_POINT_BASE + n;
	spec.probe_prog = GATE_PROBE_USDT;
	spec.open_mask = pt->tp.open_mask;
	spec.close_mask = pt->tp.close_mask;
	spec.trig_mask = pt->tp.trig_mask;
	err = gate__front_task(g, &spec, why, why_size);
	if (err)
		return err;
	a = bpf_asm__new();
	if (!a)
		return -ENOMEM;
	err = gate_front__build_probe(a, &spec, why, why_size);
	fd = gate__load_front(g, a, err, BPF_PROG_TYPE_KPROBE, "gate_usdt", &nr, why, why_size);
	if (fd < 0)
		return fd;
	err = bpf_map__update_elem(g->skel->maps.gate_usdt_conds, &k, sizeof(k), &fd, sizeof(fd), BPF_ANY);
	if (err) {
		snprintf(why, why_size, "cannot hand its program to the shared one: %s", strerror(-err));
		return -EOPNOTSUPP;
	}
	pr_info("usdt: conditions compiled, %zu instructions, in a program of its own after the shared one's arguments\n",
		nr);
	return 0;
}

/* Does a condition run at usdt point @tp (its triggers', or the --where of a window it opens)? */
static bool usdt_has_cond(const struct gate *g, const struct gate_tp *tp)
{
	if (g->where && tp->open_mask)
		return true;
	for (int i = 0; i < GATE_MAX_TRIGGERS; i++)
		if ((tp->trig_mask & (1u << i)) && g->trig_cond[i])
			return true;
	return false;
}

int gate__attach_point(struct gate *g, size_t n)
{
	const struct point *p = &g->points[n].pt;
	struct bpf_program *prog = gate__point_prog(g, p->kind);
	__u64 key = GATE_POINT_BASE + n;
	struct bpf_link *link = NULL;
	char why[256];
	int err;

	if (g->points[n].tp.flags & GATE_TP_CALL_ENTRY) {
		/* the calls' entries first, so that no return is seen without its entry */
		LIBBPF_OPTS(bpf_uprobe_opts, eo, .func_name = p->symbol, .bpf_cookie = key);
		/* a kprobe program too (BPF_PROG_TYPE_KPROBE), at the kernel function's entry */
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .offset = p->offset, .bpf_cookie = key);

		if (p->kind == POINT_KRETPROBE)
			link = bpf_program__attach_kprobe_opts(g->skel->progs.gate_call_enter, p->symbol, &ko);
		else
			link = bpf_program__attach_uprobe_opts(g->skel->progs.gate_call_enter, -1, p->path, p->offset,
							       &eo);
		if (!link) {
			err = -errno;
			pr_err("cannot attach to the entry of %s:%s%s%s (for entry.argN, $duration): %s\n",
			       point__kind_name(p->kind), p->path, p->path[0] ? ":" : "", p->symbol, strerror(-err));
			return err;
		}
		err = gate__add_link(g, link);
		if (err)
			return err;
		link = NULL;
	}
	if (p->kind == POINT_UPROBE || p->kind == POINT_URETPROBE || p->kind == POINT_KPROBE ||
	    p->kind == POINT_KRETPROBE) {
		g->probe_open_err = 0;
		err = gate__attach_probe_front(g, &g->points[n], NULL, why, sizeof(why));
		if (!err)
			return 0;
		if (err != -EOPNOTSUPP)
			return err;
		if (!bpf_program__autoload(prog)) {
			/* its own program could be built at load (gate__probe_trig_only()): no shared one to fall back on */
			if (g->probe_open_err) {
				errno = -g->probe_open_err;
				goto fail; /* the point itself: said as the shared program's attach would */
			}
			pr_err("cannot attach to %s:%s%s%s: %s; its kind's shared program was not loaded, as the point's own program could be built\n",
			       point__kind_name(p->kind), p->path, p->path[0] ? ":" : "", p->symbol, why);
			return -EINVAL;
		}
		if (!strstr(why, "no condition to compile"))
			pr_info("%s:%s%s%s: conditions interpreted by the shared gate program: %s\n",
				point__kind_name(p->kind), p->path, p->path[0] ? ":" : "", p->symbol, why);
	} else if (p->kind == POINT_USDT && usdt_has_cond(g, &g->points[n].tp)) {
		err = usdt_front(g, n, why, sizeof(why));
		if (err && err != -EOPNOTSUPP)
			return err;
		if (err && !strstr(why, "no condition to compile"))
			pr_info("usdt:%s:%s:%s: conditions interpreted by the shared gate program: %s\n", p->path,
				p->provider, p->symbol, why);
	}
	switch (p->kind) {
	case POINT_UPROBE:
	case POINT_URETPROBE: {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = p->symbol, .retprobe = p->kind == POINT_URETPROBE,
			    .bpf_cookie = key);

		link = bpf_program__attach_uprobe_opts(prog, -1, p->path, p->offset, &uo);
		break;
	}
	case POINT_USDT: {
		LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = key);

		link = bpf_program__attach_usdt(prog, -1, p->path, p->provider, p->symbol, &uo);
		break;
	}
	case POINT_KPROBE:
	case POINT_KRETPROBE: {
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .offset = p->offset, .retprobe = p->kind == POINT_KRETPROBE,
			    .bpf_cookie = key);

		link = bpf_program__attach_kprobe_opts(prog, p->symbol, &ko);
		break;
	}
	case POINT_MEM:
		return attach_mem(g, n);
	case POINT_TP:
		return -EINVAL;
	}
fail:
	if (!link) {
		char text[4096 + 600], near[1024] = "";

		err = -errno;
		point__format(p, text, sizeof(text));
		if (err == -ENOENT)
			point_catalog__suggest_point(p, text, near, sizeof(near));
		if (p->kind == POINT_USDT)
			pr_err("cannot attach to usdt:%s:%s:%s: %s%s\n", p->path, p->provider, p->symbol,
			       err == -ENOENT ? "no such USDT probe in that file" : strerror(-err), near);
		else
			pr_err("cannot attach to %s:%s%s%s: %s%s\n", point__kind_name(p->kind), p->path,
			       p->path[0] ? ":" : "", p->symbol,
			       err == -ENOENT ? "no such symbol" : strerror(-err), near);
		return err;
	}
	return gate__add_link(g, link);
}
