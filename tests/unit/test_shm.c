/*
 * test_shm.c - the per-user session directory check (pt_shm_dir) and the
 * foreign-pid check: which directories are accepted, created or refused,
 * and that every refusal says why. The end-to-end side (probe and reader
 * refusing, a second user) is tests/e2e/test_security.sh.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/error.h"
#include "proftop/shm.h"
#include "testutil.h"

static char g_root[] = "/tmp/proftop-test-shm.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(g_root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx %s; rm -rf %s", g_root, g_root);
	return system(cmd) == 0 ? 0 : -1;
}

/* pt_shm_dir with PROFTOP_SESSION_DIR=g_root/name; err holds the reason */
static int dir_rc(const char *name, int create, char *err, size_t errlen)
{
	char want[256], buf[256];
	snprintf(want, sizeof want, "%s/%s", g_root, name);
	setenv("PROFTOP_SESSION_DIR", want, 1);
	err[0] = 0;
	int rc = pt_shm_dir(buf, sizeof buf, create, err, errlen);
	if (rc == 0)
		assert_string_equal(buf, want);
	return rc;
}

static const char *sub(const char *name)
{
	return tu_path(g_root, name);
}

static void test_create_private(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(dir_rc("fresh", 0, err, sizeof err), PT_ENOENT);
	mode_t old = umask(0);
	int rc = dir_rc("fresh", 1, err, sizeof err);
	umask(old);
	assert_int_equal(rc, 0);
	struct stat st;
	assert_int_equal(lstat(sub("fresh"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(dir_rc("fresh", 0, err, sizeof err), 0); /* and accepted again */
}

static void test_refusals(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(mkdir(sub("open"), 0700), 0);
	static const struct {
		mode_t mode;
		const char *why;
	} modes[] = {
	    {0777, "mode 0777"}, {0770, "mode 0770"}, {0750, "mode 0750"}, {0701, "mode 0701"}};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		assert_int_equal(chmod(sub("open"), modes[i].mode), 0);
		assert_int_equal(dir_rc("open", 1, err, sizeof err), PT_EPERM);
		assert_non_null(strstr(err, modes[i].why));
		assert_non_null(strstr(err, "refusing it"));
	}
	assert_int_equal(mkdir(sub("private"), 0700), 0);
	assert_int_equal(symlink(sub("private"), sub("link")), 0);
	assert_int_equal(dir_rc("link", 1, err, sizeof err), PT_EPERM);
	assert_non_null(strstr(err, "is a symlink"));
	FILE *f = fopen(sub("file"), "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(dir_rc("file", 1, err, sizeof err), PT_EPERM);
	assert_non_null(strstr(err, "not a directory"));
	if (geteuid() == 0) {
		assert_int_equal(mkdir(sub("theirs"), 0700), 0);
		assert_int_equal(chown(sub("theirs"), 65534, 65534), 0);
		assert_int_equal(dir_rc("theirs", 1, err, sizeof err), PT_EPERM);
		assert_non_null(strstr(err, "owned by uid 65534, not by you"));
	}
}

static void test_parent(void **state)
{
	(void)state;
	char err[512];
	/* world-writable parent without the sticky bit: anyone could swap our dir */
	assert_int_equal(mkdir(sub("pub"), 0700), 0);
	assert_int_equal(chmod(sub("pub"), 0777), 0);
	assert_int_equal(dir_rc("pub/s", 1, err, sizeof err), PT_EPERM);
	assert_non_null(strstr(err, "writable by everyone"));
	assert_int_equal(access(sub("pub/s"), F_OK), -1); /* nothing created */
	assert_int_equal(mkdir(sub("pub/s"), 0700), 0);
	assert_int_equal(dir_rc("pub/s", 0, err, sizeof err), PT_EPERM);
	/* with the sticky bit (like /tmp and /dev/shm) it is fine */
	assert_int_equal(chmod(sub("pub"), 01777), 0);
	assert_int_equal(dir_rc("pub/s", 0, err, sizeof err), 0);
	assert_int_equal(dir_rc("pub/t", 1, err, sizeof err), 0);
	if (geteuid() == 0) {
		assert_int_equal(mkdir(sub("home"), 0755), 0);
		assert_int_equal(chown(sub("home"), 65534, 65534), 0);
		assert_int_equal(dir_rc("home/s", 1, err, sizeof err), PT_EPERM);
		assert_non_null(strstr(err, "belongs to uid 65534"));
	}
}

static void test_too_long(void **state)
{
	(void)state;
	char buf[32], err[128];
	setenv("PROFTOP_SESSION_DIR", "/tmp/a-session-directory-name-longer-than-32", 1);
	assert_int_equal(pt_shm_dir(buf, sizeof buf, 0, err, sizeof err), PT_EINVAL);
	assert_non_null(strstr(err, "too long"));
	/* a NULL err is allowed */
	assert_int_equal(pt_shm_dir(buf, sizeof buf, 0, NULL, 0), PT_EINVAL);
}

static void test_foreign_pid(void **state)
{
	(void)state;
	char err[256] = "";
	assert_int_equal(pt_shm_foreign_pid((int32_t)getpid(), err, sizeof err), 0);
	assert_int_equal(pt_shm_foreign_pid(0, err, sizeof err), 0);
	assert_int_equal(pt_shm_foreign_pid(-5, err, sizeof err), 0);
	assert_int_equal(pt_shm_foreign_pid(INT32_MAX, err, sizeof err), 0); /* no such process */
	if (geteuid() != 0) {
		/* pid 1 belongs to root */
		struct stat st;
		if (stat("/proc/1", &st) == 0 && st.st_uid == 0) {
			assert_int_equal(pt_shm_foreign_pid(1, err, sizeof err), PT_EPERM);
			assert_non_null(strstr(err, "belongs to uid 0"));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_private), cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_parent),	   cmocka_unit_test(test_too_long),
	    cmocka_unit_test(test_foreign_pid),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
