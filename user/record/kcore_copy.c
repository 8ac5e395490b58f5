// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel's code kept with a recording, as perf record --kcore keeps it
 * (perf 6.1 tools/perf/util/symbol-elf.c: kcore_copy()). See kcore_copy.h.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "auxtrig/format/pdata_writer.h"
#include "auxtrig/lang/aux_event.h"
#include "auxtrig/record/kcore_copy.h"
#include "auxtrig/sys/log.h"

/* Copy @len bytes from @from at @off_in to @to at @off_out. */
static int kcore_copy__bytes(int from, __u64 off_in, int to, __u64 off_out, __u64 len)
{
	static char buf[1 << 16];

	while (len) {
		size_t chunk = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t r = pread(from, buf, chunk, (off_t)off_in), w;

		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		for (ssize_t done = 0; done < r; done += w) {
			w = pwrite(to, buf + done, r - done, (off_t)(off_out + done));
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
		}
		off_in += r;
		off_out += r;
		len -= r;
	}
	return 0;
}

static int kcore_copy__file(const char *from_dir, const char *to_dir, const char *name)
{
	char from[4096], to[4096];
	int in, out, err = 0;
	__u64 at = 0;

	snprintf(from, sizeof(from), "%s/%s", from_dir, name);
	snprintf(to, sizeof(to), "%s/%s", to_dir, name);
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0400);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	for (;;) {
		char buf[1 << 15];
		ssize_t r = read(in, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : 0;
			break;
		}
		if (pwrite(out, buf, r, (off_t)at) != r) {
			err = -EIO;
			break;
		}
		at += r;
	}
	close(in);
	if (close(out) && !err)
		err = -errno;
	return err;
}

/* The copy's ELF header and program headers (perf's kcore__copy_hdr(), kcore__add_phdr()). */
static int kcore_copy__write_head(int fd, const unsigned char *src_ehdr, const struct kcore_piece *p, size_t n,
				  __u64 page)
{
	Elf64_Ehdr eh;

	memcpy(&eh, src_ehdr, sizeof(eh));
	eh.e_entry = 0;
	eh.e_shoff = 0;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (Elf64_Half)n;
	eh.e_shentsize = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	if (pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		Elf64_Phdr ph = {
			.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X, .p_offset = p[i].dst_offset,
			.p_vaddr = p[i].addr, .p_filesz = p[i].len, .p_memsz = p[i].len, .p_align = page,
		};

		if (pwrite(fd, &ph, sizeof(ph), (off_t)(sizeof(eh) + i * sizeof(ph))) != sizeof(ph))
			return -EIO;
	}
	return 0;
}

/* Do two files have the same bytes? (kallsyms must not have changed while the copy was made) */
static bool kcore_copy__same(const char *a, const char *b)
{
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	bool same = fa && fb;
	int ca, cb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb)
			same = false;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

int kcore_copy__run(const char *proc_dir, const char *to_dir, struct kcore_copy_stats *st)
{
	static struct kcore_seg segs[KCORE_MAX_SEGS];
	static struct kcore_piece pieces[KCORE_MAX_SEGS];
	char path[4096], path2[4096];
	unsigned char *head = NULL;
	struct kcore_text t;
	size_t head_len = 0, n;
	const __u64 page = (__u64)sysconf(_SC_PAGESIZE);
	__u64 data_offset;
	int in = -1, out = -1, nr, err;

	memset(st, 0, sizeof(*st));
	err = kcore_copy__file(proc_dir, to_dir, "kallsyms");
	if (!err)
		err = kcore_copy__file(proc_dir, to_dir, "modules");
	if (err) {
		pr_err("cannot copy %s/kallsyms and modules to %s: %s\n", proc_dir, to_dir, strerror(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/kallsyms", to_dir);
	snprintf(path2, sizeof(path2), "%s/modules", to_dir);
	err = kcore__text(path, path2, &t);
	if (err) {
		pr_err("%s/kallsyms: %s\n", proc_dir, err == -ENODATA ? "no kernel symbol addresses (kptr_restrict)" :
								   strerror(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/kcore", proc_dir);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		err = -errno;
		pr_err("cannot read %s: %s\n", path, strerror(-err));
		return err;
	}
	nr = kcore__read_segs(in, segs, &head, &head_len);
	if (nr < 0) {
		err = nr;
		pr_err("%s: %s\n", path, nr == -EINVAL ? "not a kcore file (ELF64 program headers)" : strerror(-nr));
		goto out;
	}
	n = kcore__plan(&t, segs, (size_t)nr, 0, pieces);
	/* the headers go before the data, which starts on a page (perf's layout) */
	data_offset = (sizeof(Elf64_Ehdr) + n * sizeof(Elf64_Phdr) + page - 1) & ~(page - 1);
	for (size_t i = 0; i < n; i++)
		pieces[i].dst_offset += data_offset;
	if (!n) {
		err = -ENODATA;
		pr_err("%s: no segment holds the kernel's text at %#llx\n", path, (unsigned long long)t.stext);
		goto out;
	}
	snprintf(path2, sizeof(path2), "%s/kcore", to_dir);
	out = open(path2, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0400);
	if (out < 0) {
		err = -errno;
		pr_err("cannot create %s: %s\n", path2, strerror(-err));
		goto out;
	}
	err = kcore_copy__write_head(out, head, pieces, n, page);
	for (size_t i = 0; i < n && !err; i++) {
		if (pieces[i].remap)
			continue;
		err = kcore_copy__bytes(in, pieces[i].src_offset, out, pieces[i].dst_offset, pieces[i].len);
		if (pieces[i].addr >= t.stext && pieces[i].addr < t.etext)
			st->kernel_text += pieces[i].len;
		else if (t.mod_start && pieces[i].addr >= t.mod_start && pieces[i].addr < t.mod_end)
			st->modules_text += pieces[i].len;
		st->total = pieces[i].dst_offset + pieces[i].len;
	}
	if (err) {
		pr_err("cannot copy %s to %s: %s\n", path, path2, strerror(-err));
		goto out;
	}
	st->nr_modules = t.nr_modules;
	snprintf(path, sizeof(path), "%s/kallsyms", proc_dir);
	snprintf(path2, sizeof(path2), "%s/kallsyms", to_dir);
	if (!kcore_copy__same(path, path2)) {
		err = -EAGAIN;
		pr_err("%s changed while the kernel's code was copied (a module loaded?)\n", path);
	}
out:
	free(head);
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) && !err)
		err = -errno;
	return err;
}

const char *kcore_copy__missing(const char *proc_dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/kcore", proc_dir);
	if (access(path, F_OK))
		return "this kernel has no /proc/kcore (CONFIG_PROC_KCORE)";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? "/proc/kcore needs root (CAP_SYS_RAWIO)" :
							   "/proc/kcore cannot be opened";
	close(fd);
	return NULL;
}

bool kcore_copy__wanted(const struct aux_event *aux)
{
	const char *why;

	if (!aux || aux->attr.exclude_kernel)
		return false;
	why = kcore_copy__missing("/proc");
	if (why)
		pr_warn("%s traces the kernel, but its code cannot be kept with the recording: %s; the kernel trace "
			"decodes on this boot only\n", aux->name, why);
	return !why;
}

/* Is @path an old recording directory: data, data.N, kcore_dir, nothing else? */
static bool kcore_copy__is_recording_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool ok = d != NULL;

	while (ok && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		ok = !strcmp(e->d_name, "data") || !strncmp(e->d_name, "data.", 5) || !strcmp(e->d_name, "kcore_dir");
	}
	if (d)
		closedir(d);
	return ok;
}

/* Remove an old recording directory's files (kcore_copy__is_recording_dir() said what they are). */
static int kcore_copy__clear(const char *path)
{
	static const char *const files[] = { "kcore", "kallsyms", "modules" };
	char p[4096];
	DIR *d = opendir(path);
	struct dirent *e;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/kcore_dir/%s", path, files[i]);
		if (unlink(p) && errno != ENOENT)
			return -errno;
	}
	snprintf(p, sizeof(p), "%s/kcore_dir", path);
	if (rmdir(p) && errno != ENOENT)
		return -errno;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, "data") && strncmp(e->d_name, "data.", 5))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	return 0;
}

int kcore_copy__open_dir(const char *path, bool force, char *data_path, size_t size)
{
	char kdir[4096];
	struct stat st;
	int err;

	if (!lstat(path, &st)) {
		if (!S_ISDIR(st.st_mode)) {
			pr_err("%s exists and is not a directory: a recording of kernel trace is a directory (data, "
			       "kcore_dir), as perf record --kcore writes; use -o to name another\n", path);
			return -EEXIST;
		}
		if (!force || !kcore_copy__is_recording_dir(path)) {
			pr_err(force ? "will not overwrite %s: it holds more than a recording\n" :
				       "%s exists: use -f to overwrite it, or -o to name another\n", path);
			return -EEXIST;
		}
		err = kcore_copy__clear(path);
		if (err) {
			pr_err("cannot clear %s: %s\n", path, strerror(-err));
			return err;
		}
	} else if (mkdir(path, 0700)) {
		err = -errno;
		pr_err("cannot create %s: %s\n", path, strerror(-err));
		return err;
	}
	snprintf(kdir, sizeof(kdir), "%s/kcore_dir", path);
	if (mkdir(kdir, 0700)) {
		err = -errno;
		pr_err("cannot create %s: %s\n", kdir, strerror(-err));
		return err;
	}
	snprintf(data_path, size, "%s/data", path);
	return 0;
}

void kcore_copy__keep(struct pdata_writer *w, const char *path)
{
	struct kcore_copy_stats st;
	char kdir[4096];
	__u8 bid[20];
	size_t len;

	/* perf record: pid -1 (the host's kernel), PERF_RECORD_MISC_KERNEL */
	if (!kcore__build_id("/sys/kernel/notes", bid, &len))
		pdata_writer__add_build_id(w, PERF_RECORD_MISC_KERNEL, -1, "[kernel.kallsyms]", bid, len);
	if (!path)
		return;
	snprintf(kdir, sizeof(kdir), "%s/kcore_dir", path);
	if (kcore_copy__run("/proc", kdir, &st)) {
		pr_warn("the kernel's code is not kept with %s (said above): its kernel trace decodes only on this "
			"boot\n", path);
		return;
	}
	pr_info("kept the kernel's code for decoding: %.1f MiB (kernel text %.1f MiB, %zu modules %.1f MiB), "
		"kallsyms and modules in %s\n", st.total / 1048576.0, st.kernel_text / 1048576.0, st.nr_modules,
		st.modules_text / 1048576.0, kdir);
}
