/*
 * cli_inject.c - the shared CLI layer's -p PID for a process that has no
 * session: `proftop -p PID`, `record -p PID` and `serve -p PID` say in one
 * line why there is none, and with --inject load the probe and the
 * zero-code Python helper into a running Python job (cli.h).
 *
 * How (running code in the target is cli_remote.c's): the target runs a
 * few lines of Python (python/proftop_inject.py, told where things are
 * through a private directory) at a point where its
 * interpreter is safe to run code: PEP 768's sys.remote_exec on Python
 * 3.14 and later; before that gdb attaches, maps one page in the target
 * (mmap: no lock taken), writes the bootstrap line into it and calls
 * Py_AddPendingCall(PyRun_SimpleString, page), then detaches. The pending
 * call runs on the main thread at its next bytecode boundary, where the
 * bootstrap loads libproftop.so with ctypes (an ordinary dlopen) and the
 * helper. The job is stopped only while gdb is attached: gdb reads no
 * shared library's symbols but libc's and libpython's, and the time from
 * its start to its exit is reported as an upper bound of the pause. The
 * bootstrap writes its result to the private directory; proftop waits for
 * it (the main thread may be inside a long C call) and for the session.
 *
 * Checked first, each with its own line: the process exists, is this
 * user's (or proftop runs as root), is not stopped or a zombie, is Python,
 * ptrace is allowed (kernel.yama.ptrace_scope), gdb is installed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_remote.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "proftop/shm.h"
#include "model/util.h"

#define INJECT_WAIT_NS (15ull * 1000000000ull)

/* Reads a small /proc file into buf; bytes read, -1 on failure. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* /proc/PID/stat's state letter, 0 when unreadable. */
static char proc_state(int32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Whether pid runs Python, and which (major*100 + minor, 0 when unknown):
 * the executable's name (python3.11) or a mapped libpython3.X.so.
 */
static int python_version(int32_t pid, char *exe, size_t exelen)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, exelen - 1);
	exe[n > 0 ? n : 0] = 0;
	const char *base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	int maj = 0, min = 0, is_py = strncmp(base, "python", 6) == 0;
	if (is_py)
		sscanf(base + 6, "%d.%d", &maj, &min);
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (f) {
		char line[1024];
		while (fgets(line, sizeof line, f)) {
			const char *lp = strstr(line, "/libpython");
			if (lp) {
				is_py = 1;
				sscanf(lp + 10, "%d.%d", &maj, &min);
				break;
			}
		}
		fclose(f);
	}
	if (!is_py)
		return -1;
	return maj * 100 + min;
}

static int python_of_exe(const char *exe)
{
	/* a python3 whose name has no version: ask the same binary */
	char cmd[PATH_MAX + 96], out[64] = "";
	if (strchr(exe, '\'') || !exe[0])
		return 0;
	snprintf(cmd, sizeof cmd, "'%s' -c 'import sys; print(sys.version_info[0]*100+sys.version_info[1])' 2>/dev/null", exe);
	FILE *p = popen(cmd, "r");
	if (!p)
		return 0;
	if (!fgets(out, sizeof out, p))
		out[0] = 0;
	pclose(p);
	return atoi(out);
}

static int have_session(int32_t pid)
{
	struct pt_session_peek pk;
	return pt_session_peek(pid, &pk) == 0 && !pk.exited;
}

/* The job exited (gone, or a zombie its parent has not reaped yet). */
static int job_gone(int32_t pid)
{
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 1;
	char st = proc_state(pid);
	return st == 'Z' || st == 'X';
}

/* proftop's probe (libproftop.so) is mapped in pid: it was started under
 * proftop or injected, and publishes its session in a moment if it has not. */
static int probe_mapped(int32_t pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int found = 0;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, "/libproftop.so") != NULL;
	fclose(f);
	return found;
}

static int find_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(out, len, "%.*s/%s", (int)n, path, name);
		if (n && access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -1;
}

/* Writes path atomically with text; 0 or -1. */
static int write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	int ok = write(fd, text, len) == (ssize_t)len;
	ok &= close(fd) == 0;
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The ptrace_scope obstacle for a non-root proftop, "" when none. */
static const char *ptrace_obstacle(void)
{
	char buf[16];
	if (read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) <= 0)
		return "";
	int scope = atoi(buf);
	if (scope == 3)
		return "kernel.yama.ptrace_scope is 3: no process may attach to another until the "
		       "next reboot, so injection is impossible; start the job under 'proftop run'";
	if (geteuid() == 0)
		return "";
	if (scope == 1)
		return "kernel.yama.ptrace_scope is 1: only a process's parent may attach to it; run "
		       "proftop as root, or allow it with 'sudo sysctl kernel.yama.ptrace_scope=0'";
	if (scope == 2)
		return "kernel.yama.ptrace_scope is 2: only root may attach to a process; run proftop "
		       "as root";
	return "";
}

/* The files the bootstrap's directory can hold (this side's and the job's). */
static const char *const inject_files[] = {"args",	 "status",	 "boot.py",
					   ".args.tmp", ".status.tmp", ".boot.py.tmp"};

/* Removes the directory and the files it may hold; never follows a link
 * (unlinkat on the directory's own fd). */
static void remove_inject_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	for (size_t i = 0; i < sizeof inject_files / sizeof inject_files[0]; i++)
		unlinkat(fd, inject_files[i], 0);
	close(fd);
	rmdir(dir);
}

/*
 * Directories of earlier injections whose proftop was killed (kill -9)
 * before it could remove them: "proftop-inject.<pid>.XXXXXX" in tmpdir,
 * a real directory, of a pid that is gone. Removed before a new one is
 * made, so none piles up.
 */
static void reap_inject_dirs(const char *tmpdir)
{
	DIR *d = opendir(tmpdir);
	if (!d)
		return;
	struct dirent *de;
	static const char pre[] = "proftop-inject.";
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, pre, sizeof pre - 1) != 0)
			continue;
		char *end;
		long pid = strtol(de->d_name + sizeof pre - 1, &end, 10);
		if (pid <= 0 || *end != '.' || pid == (long)getpid() ||
		    !(kill((pid_t)pid, 0) != 0 && errno == ESRCH))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && geteuid() != 0))
			continue;
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", tmpdir, de->d_name) < (int)sizeof path)
			remove_inject_dir(path);
	}
	closedir(d);
}

int cli_inject(int32_t pid)
{
	char exe[PATH_MAX], lib[PATH_MAX], boot[PATH_MAX], sess[600], err[256];
	int ver = python_version(pid, exe, sizeof exe);
	if (ver < 0)
		return cli_fail("pid %d is not a Python process: --inject loads proftop's Python "
				"helper, which needs one; start the job under 'proftop run -- CMD'",
				(int)pid);
	if (ver == 0)
		ver = python_of_exe(exe);
	if (cli_find_lib(lib, sizeof lib) != 0)
		return cli_fail("--inject: libproftop.so not found (set PROFTOP_LIB)");
	if (cli_find_pyboot(boot, sizeof boot) != 0)
		return cli_fail("--inject: proftop's python/ directory not found (set PROFTOP_PYTHON)");
	char *slash = strrchr(boot, '/');
	*slash = 0; /* python/ */
	char script[PATH_MAX + 32];
	snprintf(script, sizeof script, "%s/proftop_inject.py", boot);
	if (access(script, R_OK) != 0)
		return cli_fail("--inject: %s is missing", script);
	/* the probe creates the directory when it is missing (after a reboot, on a
	 * machine where proftop never ran), but this side names it first */
	if (pt_shm_dir(sess, sizeof sess, 1, err, sizeof err) != 0)
		return cli_fail("--inject: %s", err);
	if (pt_session_path(pid, sess, sizeof sess, err, sizeof err) != 0)
		return cli_fail("--inject: %s", err);
	*strrchr(sess, '/') = 0; /* the session directory the probe must use */

	/* a private directory for the bootstrap's arguments and its answer */
	char dir[PATH_MAX];
	const char *tmpdir = getenv("TMPDIR");
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	reap_inject_dirs(tmpdir);
	snprintf(dir, sizeof dir, "%s/proftop-inject.%d.XXXXXX", tmpdir, (int)getpid());
	if (!mkdtemp(dir))
		return cli_fail("--inject: mkdtemp: %s", strerror(errno));
	struct pt_buf args = {0};
	pt_buf_printf(&args, "lib=%s\nsession_dir=%s\npydir=%s\n", lib, sess, boot);
	pt_buf_putc(&args, 0);
	int rc = CLI_FAIL;
	if (write_file(dir, "args", args.p) != 0) {
		rc = cli_fail("--inject: cannot write to %s", dir);
		goto out;
	}
	/* the target (maybe another uid when we are root) reads and answers there */
	if (geteuid() == 0) {
		struct stat st;
		char procpath[64];
		snprintf(procpath, sizeof procpath, "/proc/%d", (int)pid);
		if (stat(procpath, &st) == 0 && st.st_uid != 0) {
			/* through the directory's fd, never following a link: the
			 * directory is ours (mkdtemp) and args was written in it */
			int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int bad = dfd < 0 ||
				  fchownat(dfd, "args", st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0 ||
				  fchown(dfd, st.st_uid, st.st_gid) != 0;
			int e = errno;
			if (dfd >= 0)
				close(dfd);
			if (bad) {
				rc = cli_fail("--inject: chown %s: %s", dir, strerror(e));
				goto out;
			}
		}
	}
	struct pt_buf line = {0}, out = {0};
	pt_buf_printf(&line, "exec(compile(open(");
	cli_py_literal(&line, script);
	pt_buf_printf(&line, ",'rb').read(),");
	cli_py_literal(&line, script);
	pt_buf_printf(&line, ",'exec'),{'__name__':'__proftop_inject__','PROFTOP_DIR':");
	cli_py_literal(&line, dir);
	pt_buf_printf(&line, "})");
	pt_buf_putc(&line, 0);
	uint64_t paused = 0;
	int how_gdb = ver < 314;
	if (how_gdb) {
		char gdb[PATH_MAX];
		const char *why = ptrace_obstacle();
		if (*why) {
			rc = cli_fail("--inject: %s", why);
			goto out2;
		}
		if (find_in_path("gdb", gdb, sizeof gdb) != 0) {
			rc = cli_fail("--inject: gdb is not installed (apt-get install gdb); it is "
				      "needed to inject into Python %d.%d (3.14 and later need none)",
				      ver / 100, ver % 100);
			goto out2;
		}
		char unsafe[400];
		if (cli_gdb_calls_safe(gdb, unsafe, sizeof unsafe) != 0) {
			rc = cli_fail("--inject: %s; pid %d was not touched. Start the job under "
				      "proftop (proftop run -- CMD), or use Python 3.14 or later, which "
				      "needs no gdb",
				      unsafe, (int)pid);
			goto out2;
		}
		int g = cli_run_gdb(gdb, pid, line.p, &out, &paused);
		char reason[200], sigs[128];
		cli_gdb_reason(out.p ? out.p : "", reason, sizeof reason);
		int resent = cli_redeliver_signals(pid, out.p ? out.p : "", sigs, sizeof sigs);
		const char *q = out.p ? strstr(out.p, "proftop-queued ") : NULL;
		int queued = g == 0 && q && atoi(q + 15) == 0;
		if (resent && !queued) {
			rc = cli_fail("--inject: pid %d was sent %s while gdb held it: the injection "
				      "was abandoned and the signal passed on to the job",
				      (int)pid, sigs);
			goto out2;
		}
		if (resent)
			fprintf(stderr, "proftop: --inject: pid %d was sent %s while gdb held it; "
					"passed on to it\n",
				(int)pid, sigs);
		if (g == -2) {
			rc = cli_fail("--inject: gdb did not finish within %llu s; the job was "
				      "continued", (unsigned long long)(INJECT_GDB_TIMEOUT_NS / 1000000000ull));
			goto out2;
		}
		if (!queued) {
			char now = proc_state(pid);
			if (kill(pid, 0) != 0 && errno == ESRCH)
				rc = cli_fail("--inject: pid %d exited during the injection", (int)pid);
			else if (now == 'T' || now == 't' || strstr(out.p ? out.p : "", "signaled while"))
				rc = cli_fail("--inject: pid %d was stopped or signaled during the "
					      "injection; it was left as it was, without proftop (state "
					      "%c): try again once it runs",
					      (int)pid, now ? now : '?');
			else if (strstr(reason, "No symbol"))
				rc = cli_fail("--inject: gdb cannot find Python's C API in pid %d (%s): "
					      "a Python without its exported symbols?",
					      (int)pid, reason);
			else if (reason[0])
				rc = cli_fail("--inject: gdb could not attach to pid %d: %s%s", (int)pid,
					      reason,
					      strstr(reason, "ptrace") || strstr(reason, "permitted")
						  ? " (in a container, ptrace needs CAP_SYS_PTRACE)"
						  : "");
			else
				rc = cli_fail("--inject: gdb failed on pid %d", (int)pid);
			goto out2;
		}
	} else {
		/* remote_exec runs a file: one that runs the bootstrap line */
		char bootpy[PATH_MAX + 16];
		snprintf(bootpy, sizeof bootpy, "%s/boot.py", dir);
		if (write_file(dir, "boot.py", line.p) != 0) {
			rc = cli_fail("--inject: cannot write to %s", dir);
			goto out2;
		}
		if (cli_run_remote_exec(exe, pid, bootpy, &out, &paused) != 0) {
			char esc[300];
			const char *o = out.p ? out.p : "";
			const char *last = o + strlen(o);
			while (last > o && (last[-1] == '\n'))
				last--;
			const char *b = last;
			while (b > o && b[-1] != '\n')
				b--;
			pt_escape_term(esc, sizeof esc, b, (size_t)(last - b), 200, 0);
			rc = cli_fail("--inject: sys.remote_exec into pid %d failed: %s", (int)pid, esc);
			goto out2;
		}
	}
	/* the bootstrap runs when the main thread next executes Python code */
	char status[1024] = "";
	uint64_t t0 = pt_now_ns();
	char spath[PATH_MAX + 16];
	snprintf(spath, sizeof spath, "%s/status", dir);
	while (pt_now_ns() - t0 < INJECT_WAIT_NS) {
		if (read_small(spath, status, sizeof status) > 0)
			break;
		if (kill(pid, 0) != 0 && errno == ESRCH) {
			rc = cli_fail("--inject: pid %d exited before the helper started", (int)pid);
			goto out2;
		}
		cli_sleep_ms(20);
	}
	status[strcspn(status, "\n")] = 0;
	char esc[600];
	pt_escape_term(esc, sizeof esc, status, strlen(status), 300, 0);
	if (!status[0]) {
		rc = cli_fail("--inject: the helper was queued in pid %d but has not run within %llu s: "
			      "its main thread runs no Python code (blocked in a C call?); it will "
			      "start when it does",
			      (int)pid, (unsigned long long)(INJECT_WAIT_NS / 1000000000ull));
		goto out2;
	}
	if (strncmp(status, "ok", 2) != 0) {
		rc = cli_fail("--inject: the helper failed in pid %d: %s", (int)pid, esc);
		goto out2;
	}
	for (int i = 0; i < 100 && !have_session(pid) && !job_gone(pid); i++)
		cli_sleep_ms(20);
	if (!have_session(pid)) {
		if (job_gone(pid))
			rc = cli_fail("--inject: pid %d exited during the injection", (int)pid);
		else
			rc = cli_fail("--inject: the probe loaded in pid %d but opened no session (%s)",
				      (int)pid, esc);
		goto out2;
	}
	fprintf(stderr, "proftop: injected into pid %d (Python %d.%d) with %s; the job was paused "
			"%s %.0f ms; %s\n",
		(int)pid, ver / 100, ver % 100, how_gdb ? "gdb" : "sys.remote_exec",
		how_gdb ? "at most" : "for about", (double)paused / 1e6,
		strncmp(esc, "ok: ", 4) == 0 ? esc + 4 : esc);
	rc = CLI_OK;
out2:
	pt_buf_free(&line);
	pt_buf_free(&out);
out:
	pt_buf_free(&args);
	remove_inject_dir(dir);
	return rc;
}

/* how long a job whose probe is loaded may take to publish its session */
#define SESSION_WAIT_POLLS 200 /* of 10 ms */

int cli_prepare_session(int32_t pid, int inject)
{
	char path[600], err[600], esc[700];
	struct pt_session *s;
	int rc = pt_session_path(pid, path, sizeof path, err, sizeof err);
	if (rc == 0)
		rc = pt_session_open(path, &s, err, sizeof err);
	if (rc == 0) {
		pt_session_close(s);
		return CLI_OK;
	}
	if (rc != PT_ENOENT) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return cli_fail("no process %d", (int)pid);
	char procpath[64];
	struct stat st;
	snprintf(procpath, sizeof procpath, "/proc/%d", (int)pid);
	if (stat(procpath, &st) == 0 && st.st_uid != geteuid() && geteuid() != 0)
		return cli_fail("pid %d belongs to another user (uid %u): proftop reads and injects "
				"only into your own processes",
				(int)pid, (unsigned)st.st_uid);
	/* A job that has just started: its probe is loaded and builds its
	 * session (a hidden name until it is whole, then renamed). */
	if (probe_mapped(pid)) {
		for (int i = 0; i < SESSION_WAIT_POLLS && !have_session(pid) && !job_gone(pid); i++)
			usleep(10000);
		if (have_session(pid))
			return CLI_OK;
		if (job_gone(pid))
			return cli_fail("pid %d exited before its proftop session opened", (int)pid);
		char dir[512] = "";
		pt_shm_dir(dir, sizeof dir, 0, NULL, 0); /* fills dir even when it is missing */
		pt_escape_term(esc, sizeof esc, dir, strlen(dir), 0, 0);
		return cli_fail("pid %d has proftop's probe loaded but no session of its own in %s "
				"after %d s: was it started with another PROFTOP_SESSION_DIR, or "
				"with PROFTOP_DISABLE=1? (the probe says why on the job's stderr)",
				(int)pid, esc, SESSION_WAIT_POLLS / 100);
	}
	char state = proc_state(pid);
	char exe[PATH_MAX];
	int ver = python_version(pid, exe, sizeof exe);
	if (!inject) {
		if (ver >= 0)
			return cli_fail("no proftop session for pid %d: it was not started under "
					"proftop; it is a Python process, so --inject can load proftop "
					"into it (it pauses the job once, briefly)",
					(int)pid);
		return cli_fail("no proftop session for pid %d: it was not started under proftop "
				"('proftop run -- CMD'), and --inject needs a Python process",
				(int)pid);
	}
	if (state == 'T' || state == 't')
		return cli_fail("pid %d is stopped (state %c): continue it first (kill -CONT %d); an "
				"injected helper runs only when the job runs",
				(int)pid, state, (int)pid);
	if (state == 'Z' || state == 'X')
		return cli_fail("pid %d has exited (a zombie)", (int)pid);
	return cli_inject(pid);
}
