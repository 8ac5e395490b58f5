// SPDX-License-Identifier: BSD-2-Clause
/* User-written trigger programs: --trigger-prog FILE.bpf.o | FILE.bpf.c */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "auxtrig/record/gate.h"
#include "auxtrig/sys/log.h"
#include "auxtrig/sys/reaper.h"
#include "auxtrig/record/trigger_prog.h"

struct trigger_prog {
	struct bpf_object *obj;
	struct bpf_link **links;
	size_t nr_links;
	char tmp[PATH_MAX];	/* the object compiled from a .bpf.c, removed at close */
};

static const char *const shared_maps[] = {
	"gate_config", "gate_runtime", "gate_stop", "gate_ctl", "gate_threads", "gate_targets", "gate_events",
	"gate_prog_stats",
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * Where the headers are: $AUXTRIG_INCLUDE, else next to the binary as in the
 * build tree (build/auxtrig: ../include and build/vmlinux), else the
 * installed prefix (bin/auxtrig: ../include).
 */
static void find_includes(char *inc, size_t inc_size, char *vml, size_t vml_size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *env = getenv("AUXTRIG_INCLUDE");

	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(inc, inc_size, "%s", env ? env : "");
	if (!env)
		snprintf(inc, inc_size, "%s/../include", exe);
	snprintf(vml, vml_size, "%s/vmlinux", exe);
	if (access(vml, F_OK))
		snprintf(vml, vml_size, "%s/auxtrig", inc);
}

/* clang -g -O2 -target bpf ...: the same flags the build uses for bpf/. */
static int compile(const char *src, char *out, size_t out_size)
{
	char inc[PATH_MAX], vml[PATH_MAX], incflag[PATH_MAX + 2], vmlflag[PATH_MAX + 2];
	const char *dir = getenv("TMPDIR");
	int status, fd;
	pid_t pid;

	find_includes(inc, sizeof(inc), vml, sizeof(vml));
	/* in $TMPDIR (absolute) or /tmp; removed at close, or by the reaper if auxtrig is killed */
	snprintf(out, out_size, "%s/auxtrig-trigger.XXXXXX", dir && dir[0] == '/' ? dir : "/tmp");
	fd = mkostemp(out, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	reaper__own_file(out);
	snprintf(incflag, sizeof(incflag), "-I%s", inc);
	snprintf(vmlflag, sizeof(vmlflag), "-I%s", vml);
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -errno;
	}
	if (pid == 0) {
		/*
		 * clang writes to its stdout, this file: "-o FILE" would write a
		 * new file and rename it over this one, which the reaper (that
		 * removes only the file made here, by inode) would then leave.
		 */
		if (dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		execlp("clang", "clang", "-g", "-O2", "-target", "bpf",
#if defined(__x86_64__)
		       "-D__TARGET_ARCH_x86",
#elif defined(__aarch64__)
		       "-D__TARGET_ARCH_arm64",
#endif
		       /* vmlinux.h of kernels since 6.19 (see the Makefile's BPF_CFLAGS) */
		       "-fms-extensions", "-Wno-microsoft-anon-tag",
		       incflag, vmlflag, "-c", src, "-o", "-", (char *)NULL);
		_exit(127);
	}
	close(fd);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		pr_err("--trigger-prog %s: clang is not installed (apt-get install clang, or give a .bpf.o)\n", src);
		return -ENOENT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		pr_err("--trigger-prog %s: clang could not compile it (its errors are above)\n", src);
		return -EINVAL;
	}
	return 0;
}

struct trigger_prog *trigger_prog__open(const char *path, struct gate *g)
{
	struct trigger_prog *p = calloc(1, sizeof(*p));
	const char *obj_path = path;
	struct bpf_program *prog;
	struct bpf_map *map;
	int err = -EINVAL;

	if (!p)
		return NULL;
	if (access(path, R_OK)) {
		pr_err("--trigger-prog %s: %s\n", path, strerror(errno));
		goto fail;
	}
	if (ends_with(path, ".c")) {
		err = compile(path, p->tmp, sizeof(p->tmp));
		if (err)
			goto fail;
		obj_path = p->tmp;
	}
	p->obj = bpf_object__open_file(obj_path, NULL);
	if (!p->obj) {
		char why[128];

		err = -errno;
		/* libbpf's own errors (4000 and up) have no strerror(). */
		libbpf_strerror(err, why, sizeof(why));
		pr_err("--trigger-prog %s: not a BPF object: %s (build one with clang -target bpf -g -O2 -c, "
		       "or give the .bpf.c source)\n", path, why);
		err = -EINVAL;
		goto fail;
	}
	bpf_object__for_each_map(map, p->obj) {
		for (size_t i = 0; i < sizeof(shared_maps) / sizeof(shared_maps[0]); i++) {
			if (strcmp(bpf_map__name(map), shared_maps[i]))
				continue;
			err = bpf_map__reuse_fd(map, gate__map_fd(g, shared_maps[i]));
			if (err) {
				pr_err("--trigger-prog %s: cannot share the map %s: %s (is it declared as in auxtrig/trigger.bpf.h?)\n",
				       path, shared_maps[i], strerror(-err));
				goto fail;
			}
		}
	}
	err = bpf_object__load(p->obj);
	if (err) {
		pr_err("--trigger-prog %s: the kernel refused it: %s (run with -vv for the verifier log)\n", path,
		       strerror(-err));
		err = -EINVAL;
		goto fail;
	}
	bpf_object__for_each_program(prog, p->obj) {
		struct bpf_link *link = bpf_program__attach(prog), **tmp;

		if (!link) {
			err = -errno;
			pr_err("--trigger-prog %s: cannot attach %s (SEC \"%s\"): %s\n", path, bpf_program__name(prog),
			       bpf_program__section_name(prog), strerror(-err));
			err = -EINVAL;
			goto fail;
		}
		tmp = realloc(p->links, (p->nr_links + 1) * sizeof(*tmp));
		if (!tmp) {
			bpf_link__destroy(link);
			err = -ENOMEM;
			goto fail;
		}
		p->links = tmp;
		p->links[p->nr_links++] = link;
	}
	if (!p->nr_links) {
		pr_err("--trigger-prog %s: it has no programs to attach\n", path);
		err = -EINVAL;
		goto fail;
	}
	pr_debug("--trigger-prog %s: %zu program%s attached\n", path, p->nr_links, p->nr_links == 1 ? "" : "s");
	return p;
fail:
	trigger_prog__close(p);
	errno = -err;
	return NULL;
}

void trigger_prog__close(struct trigger_prog *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_links; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	bpf_object__close(p->obj);
	if (p->tmp[0]) {
		unlink(p->tmp);
		reaper__disown_file(p->tmp);
	}
	free(p);
}
