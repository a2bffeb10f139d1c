/*
 * test_safefile.c - the all-or-nothing output file (src/model/safefile.c): a new
 * file appears only when committed, never clobbers without force, a write
 * error or an abort leaves the old file and no temporary, files are 0600
 * under any umask, and the stale-temporary sweep removes only unlocked ones.
 * A FIFO, a device or a socket at OUT (or a link to one) is never replaced,
 * force or not; "-", /dev/stdout, /dev/stderr and /dev/fd/N name streams.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "testutil.h"
#include "proftop/error.h"
#include "model/safefile.h"

static char g_dir[] = "/tmp/pt-safefile-XXXXXX";

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Entries of g_dir other than . and .. */
static int count_entries(void)
{
	DIR *d = opendir(g_dir);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static int write_text(struct pt_safe_file *f, const char *s)
{
	return write(f->fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : errno;
}

static void test_new_and_replace(void **state)
{
	(void)state;
	const char *out = tu_path(g_dir, "a.json");
	struct pt_safe_file f;
	char err[256] = "";
	mode_t old = umask(0);
	assert_int_equal(pt_safe_open(&f, out, 0, err, sizeof err), 0);
	umask(old);
	assert_int_equal(write_text(&f, "one"), 0);
	assert_int_equal(access(out, F_OK), -1); /* nothing visible before the commit */
	assert_int_equal(count_entries(), 0);
	assert_int_equal(pt_safe_commit(&f, 0, 0, err, sizeof err), 0);
	assert_string_equal(slurp(out), "one");
	struct stat sb;
	assert_int_equal(stat(out, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	/* no force: refused before and (if OUT appears meanwhile) at commit */
	assert_int_equal(pt_safe_open(&f, out, 0, err, sizeof err), PT_EEXIST);
	assert_non_null(strstr(err, "exists (use --force)"));
	const char *b = tu_path(g_dir, "b.json");
	assert_int_equal(pt_safe_open(&f, b, 0, err, sizeof err), 0);
	write_text(&f, "new");
	put(b, "raced");
	assert_int_equal(pt_safe_commit(&f, 0, 0, err, sizeof err), PT_EEXIST);
	assert_string_equal(slurp(b), "raced");
	unlink(b);

	/* force: replaced whole */
	assert_int_equal(pt_safe_open(&f, out, 1, err, sizeof err), 0);
	write_text(&f, "two");
	assert_string_equal(slurp(out), "one");
	assert_int_equal(pt_safe_commit(&f, 1, 0, err, sizeof err), 0);
	assert_string_equal(slurp(out), "two");
	assert_int_equal(count_entries(), 1);
	unlink(out);
}

static void test_write_error_keeps_old(void **state)
{
	(void)state;
	const char *out = tu_path(g_dir, "c.json");
	put(out, "old");
	struct pt_safe_file f;
	char err[256] = "";
	assert_int_equal(pt_safe_open(&f, out, 1, err, sizeof err), 0);
	write_text(&f, "half of the ne");
	assert_int_equal(pt_safe_commit(&f, 1, ENOSPC, err, sizeof err), PT_EIO);
	assert_non_null(strstr(err, "c.json: No space left on device (ENOSPC)"));
	assert_string_equal(slurp(out), "old");
	assert_int_equal(count_entries(), 1);
	assert_int_equal(pt_safe_open(&f, out, 1, err, sizeof err), 0);
	write_text(&f, "x");
	pt_safe_abort(&f);
	assert_string_equal(slurp(out), "old");
	assert_int_equal(count_entries(), 1);
	pt_safe_abort(&f); /* twice is harmless */
	unlink(out);
}

static void test_stale_sweep(void **state)
{
	(void)state;
	char out[256], dead[256], live[256], young[256], other[256];
	snprintf(out, sizeof out, "%s/d.json", g_dir);
	snprintf(dead, sizeof dead, "%s/d.json.tmp.Dead01", g_dir);
	snprintf(live, sizeof live, "%s/d.json.tmp.Live01", g_dir);
	snprintf(young, sizeof young, "%s/d.json.tmp.Empty1", g_dir);
	snprintf(other, sizeof other, "%s/d.json.tmp.toolong", g_dir);
	put(dead, "partial");
	put(live, "partial");
	put(young, "");
	put(other, "partial");
	int fd = open(live, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(pt_safe_clean_stale(out), 1);
	assert_int_equal(access(dead, F_OK), -1);
	assert_int_equal(access(live, F_OK), 0);  /* a live writer holds it */
	assert_int_equal(access(young, F_OK), 0); /* may be one just created */
	assert_int_equal(access(other, F_OK), 0); /* not our name pattern */
	close(fd);
	/* pt_safe_open sweeps too */
	struct pt_safe_file f;
	char err[256];
	assert_int_equal(pt_safe_open(&f, out, 0, err, sizeof err), 0);
	assert_int_equal(access(live, F_OK), -1);
	pt_safe_abort(&f);
	unlink(young);
	unlink(other);
	assert_int_equal(count_entries(), 0);
}

static void test_errors_name_the_path(void **state)
{
	(void)state;
	struct pt_safe_file f;
	char err[256] = "";
	assert_int_equal(pt_safe_open(&f, "/nonexistent-dir/x.json", 1, err, sizeof err), PT_EIO);
	assert_non_null(strstr(err, "/nonexistent-dir/x.json: "));
	assert_non_null(strstr(err, "(ENOENT)"));
	assert_int_equal(pt_safe_open(&f, g_dir, 1, err, sizeof err), PT_EIO);
	assert_non_null(strstr(err, "(EISDIR)"));
}

/* pt_safe_open refuses path, force or not, says what it is; path stays */
static void refused(const char *path, const char *kind, mode_t type)
{
	struct pt_safe_file f;
	struct stat sb;
	char err[512];
	for (int force = 0; force < 2; force++) {
		err[0] = 0;
		assert_int_equal(pt_safe_check(path, force, err, sizeof err), PT_EINVAL);
		assert_int_equal(pt_safe_open(&f, path, force, err, sizeof err), PT_EINVAL);
		assert_non_null(strstr(err, path));
		assert_non_null(strstr(err, kind));
		assert_non_null(strstr(err, "-o - writes to stdout"));
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_mode & S_IFMT, type);
	}
}

static void test_never_replaces_special_files(void **state)
{
	(void)state;
	char *fifo = tu_path(g_dir, "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	refused(fifo, "is a FIFO", S_IFIFO);

	/* a link to a device: what it leads to counts (and the link stays too) */
	char *dev = tu_path(g_dir, "null");
	assert_int_equal(symlink("/dev/null", dev), 0);
	refused(dev, "is a character device", S_IFCHR);
	struct stat sb;
	assert_int_equal(lstat(dev, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));

	char *sock = tu_path(g_dir, "sock");
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof sa), 0);
	refused(sock, "is a socket", S_IFSOCK);
	close(sfd);

	/* a FIFO put in place between the check and the commit also stays */
	char *out = tu_path(g_dir, "late.json");
	struct pt_safe_file f;
	char err[512];
	assert_int_equal(pt_safe_open(&f, out, 1, err, sizeof err), 0);
	assert_int_equal(write_text(&f, "{}\n"), 0);
	assert_int_equal(mkfifo(out, 0600), 0);
	assert_int_equal(pt_safe_commit(&f, 1, 0, err, sizeof err), PT_EINVAL);
	assert_int_equal(stat(out, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));

	unlink(fifo);
	unlink(dev);
	unlink(sock);
	unlink(out);
	assert_int_equal(count_entries(), 0);
}

static void test_stream_names(void **state)
{
	(void)state;
	assert_int_equal(pt_out_fd("-"), 1);
	assert_int_equal(pt_out_fd("/dev/stdout"), 1);
	assert_int_equal(pt_out_fd("/dev/stderr"), 2);
	assert_int_equal(pt_out_fd("/dev/fd/7"), 7);
	assert_int_equal(pt_out_fd("/proc/self/fd/3"), 3);
	assert_int_equal(pt_out_fd("/dev/fd/"), -1);
	assert_int_equal(pt_out_fd("/dev/fd/1x"), -1);
	assert_int_equal(pt_out_fd("/dev/null"), -1);
	assert_int_equal(pt_out_fd("--"), -1);
	assert_int_equal(pt_out_fd("out.json"), -1);
	assert_int_equal(pt_out_fd(NULL), -1);
	/* never a file in place of /dev/stdout */
	struct pt_safe_file f;
	char err[256] = "";
	assert_int_equal(pt_safe_check("/dev/stdout", 1, err, sizeof err), 0);
	assert_int_equal(pt_safe_open(&f, "/dev/stdout", 1, err, sizeof err), PT_EIO);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(g_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_and_replace),
	    cmocka_unit_test(test_write_error_keeps_old),
	    cmocka_unit_test(test_stale_sweep),
	    cmocka_unit_test(test_errors_name_the_path),
	    cmocka_unit_test(test_never_replaces_special_files),
	    cmocka_unit_test(test_stream_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
