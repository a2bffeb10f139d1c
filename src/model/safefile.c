/*
 * safefile.c - all-or-nothing output files (see safefile.h): an unnamed
 * O_TMPFILE (or a named "OUT.tmp.XXXXXX" where the file system has none),
 * flock'ed from birth, fsynced, then linked or renamed into place; and the
 * sweep that removes the named temporaries of writers that died, told apart
 * from live ones by the lock (the kernel drops a dead process's locks, so
 * neither pid reuse nor clocks matter).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proftop/error.h"
#include "model/safefile.h"
#include "model/util.h"

#define TMP_SUFFIX ".tmp."
#define TMP_RAND   6
/* A fallback temporary this young and still empty may be one a live writer
 * has just created and not yet locked: the sweep leaves it. */
#define YOUNG_EMPTY_S 60

int pt_safe_fail(char *err, size_t errlen, const char *path, int e)
{
	if (err && errlen) {
		const char *name = strerrorname_np(e);
		snprintf(err, errlen, "%s: %s (%s)", path, strerror(e), name ? name : "?");
	}
	return PT_EIO;
}

/* Directory part of path ("." when none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return pt_xstrdup(".");
	if (slash == path)
		return pt_xstrdup("/");
	return pt_xstrndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void fsync_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: some file systems refuse directory fsync */
		close(fd);
	}
	free(dir);
}

/* path + ".tmp." + 6 random characters (not yet created). */
static char *tmp_name(const char *path)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned seq;
	size_t plen = strlen(path);
	char *s = pt_xmalloc(plen + sizeof TMP_SUFFIX + TMP_RAND);
	memcpy(s, path, plen);
	memcpy(s + plen, TMP_SUFFIX, sizeof TMP_SUFFIX - 1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t r =
	    (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^
	    (uint64_t)__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull;
	char *p = s + plen + sizeof TMP_SUFFIX - 1;
	for (int i = 0; i < TMP_RAND; i++) {
		p[i] = abc[r % (sizeof abc - 1)];
		r = r / (sizeof abc - 1) + (uint64_t)ts.tv_sec * (uint64_t)(i + 1);
	}
	p[TMP_RAND] = 0;
	return s;
}

int pt_safe_clean_stale(const char *path)
{
	char *dir = dir_of(path);
	const char *base = base_of(path);
	size_t blen = strlen(base);
	int removed = 0;
	DIR *d = opendir(dir);
	free(dir);
	if (!d)
		return 0;
	int dfd = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		if (strncmp(n, base, blen) != 0 || strncmp(n + blen, TMP_SUFFIX, 5) != 0 ||
		    strlen(n + blen + 5) != TMP_RAND)
			continue;
		int fd = openat(dfd, n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat a, b;
		/* only our own regular files, and only when no live writer holds them */
		if (fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && a.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    !(a.st_size == 0 && a.st_mtime + YOUNG_EMPTY_S > time(NULL)) &&
		    fstatat(dfd, n, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino && unlinkat(dfd, n, 0) == 0)
			removed++;
		close(fd);
	}
	closedir(d);
	return removed;
}

int pt_out_fd(const char *path)
{
	static const char *const pre[] = {"/dev/fd/", "/proc/self/fd/"};
	if (!path)
		return -1;
	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	for (size_t i = 0; i < sizeof pre / sizeof *pre; i++) {
		size_t n = strlen(pre[i]);
		if (strncmp(path, pre[i], n) || !path[n] || strlen(path + n) > 6 ||
		    strspn(path + n, "0123456789") != strlen(path + n))
			continue;
		return atoi(path + n);
	}
	return -1;
}

static const char *kind_of(mode_t m)
{
	return S_ISCHR(m)    ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

int pt_safe_check(const char *path, int force, char *err, size_t errlen)
{
	struct stat sb;
	if (pt_out_fd(path) >= 0)
		return 0;
	/* what the name leads to, links followed: never replace a device, a FIFO... */
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return pt_safe_fail(err, errlen, path, EISDIR);
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (err && errlen)
			snprintf(err, errlen,
				 "%s is %s: proftop writes only regular files (-o - writes to "
				 "stdout)",
				 path, kind_of(sb.st_mode));
		return PT_EINVAL;
	}
	if (!force && lstat(path, &sb) == 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s exists (use --force)", path);
		return PT_EEXIST;
	}
	return 0;
}

int pt_safe_open(struct pt_safe_file *f, const char *path, int force, char *err, size_t errlen)
{
	int rc;
	memset(f, 0, sizeof *f);
	f->fd = -1;
	if (pt_out_fd(path) >= 0) /* a stream: the caller writes it in place */
		return pt_safe_fail(err, errlen, path, EINVAL);
	if ((rc = pt_safe_check(path, force, err, errlen)))
		return rc;
	pt_safe_clean_stale(path);

	char *dir = dir_of(path);
	/* an unnamed file needs /proc/self/fd to get its name later */
	int fd = access("/proc/self/fd", X_OK) == 0
		     ? open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)
		     : -1;
	free(dir);
	if (fd >= 0) {
		f->anon = 1;
	} else if (errno == ENOSPC || errno == EDQUOT || errno == EACCES || errno == EROFS ||
		   errno == ENOENT || errno == ENOTDIR) {
		return pt_safe_fail(err, errlen, path, errno);
	} else { /* no O_TMPFILE here (EOPNOTSUPP, EISDIR on old kernels): a named one */
		f->tmp = pt_xmalloc(strlen(path) + 16);
		sprintf(f->tmp, "%s" TMP_SUFFIX "XXXXXX", path);
		fd = mkostemp(f->tmp, O_CLOEXEC); /* mode 0600 */
		if (fd < 0) {
			int e = errno;
			free(f->tmp);
			f->tmp = NULL;
			return pt_safe_fail(err, errlen, path, e);
		}
	}
	flock(fd, LOCK_EX); /* marks it live for pt_safe_clean_stale until we close it */
	f->fd = fd;
	f->path = pt_xstrdup(path);
	return 0;
}

/* Gives the unnamed file the name f->tmp (a fresh OUT.tmp.XXXXXX). */
static int name_anon(struct pt_safe_file *f)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
	for (int tries = 0; tries < 100; tries++) {
		f->tmp = tmp_name(f->path);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp, AT_SYMLINK_FOLLOW) == 0) {
			f->anon = 0;
			return 0;
		}
		int e = errno;
		free(f->tmp);
		f->tmp = NULL;
		if (e != EEXIST)
			return e;
	}
	return EEXIST;
}

static int exists_msg(char *err, size_t errlen, const char *path)
{
	if (err && errlen)
		snprintf(err, errlen, "%s exists (use --force)", path);
	return PT_EEXIST;
}

int pt_safe_commit(struct pt_safe_file *f, int force, int wr_errno, char *err, size_t errlen)
{
	int rc = 0, e = wr_errno;
	if (!e && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
		e = errno;
	if (e) {
		rc = pt_safe_fail(err, errlen, f->path, e);
		goto out;
	}
	if (f->anon && !force) {
		/* straight to OUT: linkat fails if OUT appeared meanwhile */
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, f->path, AT_SYMLINK_FOLLOW) == 0)
			goto synced;
		e = errno;
		rc = e == EEXIST ? exists_msg(err, errlen, f->path)
				 : pt_safe_fail(err, errlen, f->path, e);
		goto out;
	}
	if (f->anon && (e = name_anon(f))) {
		rc = pt_safe_fail(err, errlen, f->path, e);
		goto out;
	}
	if (force) {
		/* again at the last moment: a FIFO or device put there meanwhile stays */
		if ((rc = pt_safe_check(f->path, 1, err, errlen)))
			goto out;
		if (rename(f->tmp, f->path) != 0) {
			rc = pt_safe_fail(err, errlen, f->path, errno);
			goto out;
		}
	} else if (link(f->tmp, f->path) == 0) {
		unlink(f->tmp); /* link() fails if OUT appeared meanwhile: never clobber */
	} else {
		struct stat sb;
		e = errno;
		if (e == EEXIST || lstat(f->path, &sb) == 0) {
			rc = exists_msg(err, errlen, f->path);
			goto out;
		}
		/* file systems without hard links */
		if (rename(f->tmp, f->path) != 0) {
			rc = pt_safe_fail(err, errlen, f->path, errno);
			goto out;
		}
	}
	free(f->tmp);
	f->tmp = NULL;
synced:
	fsync_dir(f->path);
out:
	pt_safe_abort(f);
	return rc;
}

void pt_safe_abort(struct pt_safe_file *f)
{
	if (f->tmp)
		unlink(f->tmp);
	if (f->fd >= 0)
		close(f->fd); /* also releases the lock */
	free(f->tmp);
	free(f->path);
	f->tmp = NULL;
	f->path = NULL;
	f->fd = -1;
}
