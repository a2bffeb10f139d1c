/*
 * cli_launch.c - starting a job under the probe, shared by run, record and
 * serve (cli_launch: finding the library, the environment, the log file,
 * the child's process group), waiting for it (forwarding Ctrl-C), saying
 * what was read once it ended, and the Chrome-trace writer.
 *
 * The child gets stdin from /dev/null and its own process group, so a
 * Ctrl-C at the terminal reaches proftop only; proftop forwards one SIGINT
 * per key press, waits for the child to finish, drains its session and
 * prints the final summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "live/live.h"
#include "proftop/backend.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/shm.h"
#include "proftop/diff.h"
#include "proftop/store.h"
#include "model/safefile.h"
#include "model/util.h"

int cli_find_lib(char *buf, size_t len)
{
	/* buf holds PATH_MAX bytes */
	const char *env = getenv("PROFTOP_LIB");
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) == 0 ? 0 : -1;
	}
	char exe[PATH_MAX - 64]; /* room for the suffixes below */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(buf, len, "%s/libproftop.so", exe);
	if (access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/../lib/libproftop.so", exe);
	if (access(buf, R_OK) == 0) {
		char real[PATH_MAX];
		if (realpath(buf, real))
			snprintf(buf, len, "%s", real);
		return 0;
	}
	return -1;
}

/*
 * The directory whose sitecustomize.py starts the zero-code Python helper:
 * $PROFTOP_PYTHON/boot, else python/boot beside the build directory of the
 * proftop binary (a source tree), else ../share/proftop/python/boot (make
 * install). 0 with the path in buf, -1 when there is none.
 */
int cli_find_pyboot(char *buf, size_t len)
{
	char exe[PATH_MAX - 64], real[PATH_MAX];
	const char *env = getenv("PROFTOP_PYTHON");
	if (env && *env) {
		snprintf(buf, len, "%s/boot/sitecustomize.py", env);
		goto check;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(buf, len, "%s/../python/boot/sitecustomize.py", exe);
	if (access(buf, R_OK) != 0)
		snprintf(buf, len, "%s/../share/proftop/python/boot/sitecustomize.py", exe);
check:
	if (access(buf, R_OK) != 0 || !realpath(buf, real))
		return -1;
	*strrchr(real, '/') = 0;
	snprintf(buf, len, "%s", real);
	return 0;
}

/* Sets name=lib in the child unless it is already set to something else. */
static int injection_var(const char *name, const char *lib, int warn)
{
	const char *cur = getenv(name);
	if (cur && *cur && strcmp(cur, lib) != 0) {
		if (warn) {
			char esc[200];
			pt_escape_term(esc, sizeof esc, cur, strlen(cur), 80, 0);
			fprintf(stderr, "proftop: %s is already set (%s); leaving it\n", name, esc);
		}
		return 0;
	}
	return 1;
}

/*
 * The session directory the job's probe will record into, checked (and
 * made) here first: when it is refused (another user made it, or planted a
 * symlink), the probe would switch itself off and the job run unprofiled,
 * its reason only in the job's log. Said here instead, with a private
 * directory to use, and nothing is started.
 */
static int session_dir_usable(void)
{
	char dir[4000], why[600];
	if (pt_shm_dir(dir, sizeof dir, 1, why, sizeof why) == 0)
		return 1;
	char esc[700], alt[PATH_MAX];
	pt_escape_term(esc, sizeof esc, why, strlen(why), 600, 0);
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (xdg && xdg[0] == '/' && strlen(xdg) < 200 && lstat(xdg, &st) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
	    strncmp(dir, xdg, strlen(xdg)) != 0)
		snprintf(alt, sizeof alt, "%s/proftop", xdg);
	else
		snprintf(alt, sizeof alt, "$(mktemp -d /dev/shm/proftop-%u.XXXXXX)",
			 (unsigned)geteuid());
	char alt_esc[PATH_MAX];
	pt_escape_term(alt_esc, sizeof alt_esc, alt, strlen(alt), 300, 0);
	fprintf(stderr,
		"proftop: %s\n"
		"  The job's probe cannot record there, so nothing was started.\n"
		"  Use a private directory instead, here and in the shells that read the job:\n"
		"    export PROFTOP_SESSION_DIR=%s\n",
		esc, alt_esc);
	return 0;
}

int cli_launch(char **cmd, const char *log_path, pid_t *child, char *log_used, size_t len,
	       uint64_t *launch_id)
{
	/* marks the job's processes' sessions (shm.h launch_id): this proftop's
	 * pid and the time, unique enough on one machine */
	uint64_t lid = ((uint64_t)getpid() << 32) ^ (pt_now_ns() & 0xffffffffull);
	char lid_s[32];
	snprintf(lid_s, sizeof lid_s, "%llx", (unsigned long long)(lid ? lid : 1));
	char lib[PATH_MAX];
	int have_lib = cli_find_lib(lib, sizeof lib) == 0;
	if (!have_lib)
		fprintf(stderr, "proftop: libproftop.so not found (set PROFTOP_LIB); running without "
				"the probe, CPU samples only\n");
	if (have_lib && !session_dir_usable())
		return CLI_FAIL;
	int set_nvtx = have_lib && injection_var("NVTX_INJECTION64_PATH", lib, 1);
	int set_cuda = have_lib && injection_var("CUDA_INJECTION64_PATH", lib, 1);
	/* NCCL's profiler plugin is in the probe too (probe_nccl.c) */
	int set_nccl = have_lib && injection_var("NCCL_PROFILER_PLUGIN", lib, 1);
	char pyboot[PATH_MAX];
	int have_py = have_lib && cli_find_pyboot(pyboot, sizeof pyboot) == 0;
	struct pt_buf pypath = {0};
	if (have_py) {
		/* first on PYTHONPATH: Python imports its sitecustomize.py at start-up */
		const char *cur = getenv("PYTHONPATH");
		pt_buf_printf(&pypath, "%s", pyboot);
		if (cur && *cur)
			pt_buf_printf(&pypath, ":%s", cur);
		pt_buf_putc(&pypath, 0);
	}
	const char *pre = getenv("LD_PRELOAD");
	struct pt_buf preload = {0};
	if (have_lib) {
		if (pre && *pre) {
			pt_buf_printf(&preload, "%s:", pre);
		}
		pt_buf_printf(&preload, "%s", lib);
		pt_buf_putc(&preload, 0);
	}
	fflush(NULL);
	int rep[2]; /* the child's word on its log (cli_log.c): "L" + name, or "E" + why */
	if (pipe2(rep, O_CLOEXEC) != 0) {
		pt_buf_free(&preload);
		return cli_fail("pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		pt_buf_free(&preload);
		pt_buf_free(&pypath);
		close(rep[0]);
		close(rep[1]);
		return cli_fail("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char path[PATH_MAX], why[PATH_MAX + 128];
		int err_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		setpgid(0, 0);
		close(rep[0]);
		int fd = cli_log_open(log_path, (int)getpid(), path, sizeof path, why, sizeof why);
		int nul = open("/dev/null", O_RDONLY);
		cli_log_report(rep[1], fd < 0 ? 'E' : 'L', fd < 0 ? why : path);
		if (fd < 0)
			_exit(127);
		if (nul >= 0) {
			dup2(nul, 0);
			close(nul);
		}
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		if (have_lib) {
			setenv("LD_PRELOAD", preload.p, 1);
			if (set_nvtx)
				setenv("NVTX_INJECTION64_PATH", lib, 1);
			if (set_cuda)
				setenv("CUDA_INJECTION64_PATH", lib, 1);
			if (set_nccl)
				setenv("NCCL_PROFILER_PLUGIN", lib, 1);
			if (have_py)
				setenv("PYTHONPATH", pypath.p, 1);
			setenv("PROFTOP_LAUNCH_ID", lid_s, 1);
		}
		execvp(cmd[0], cmd);
		int e = errno;
		char esc[256];
		pt_escape_term(esc, sizeof esc, cmd[0], strlen(cmd[0]), 80, 0);
		dprintf(err_fd, "proftop: %s: %s\n", esc, strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	setpgid(pid, pid); /* both sides, so the group exists before either runs on */
	pt_buf_free(&preload);
	pt_buf_free(&pypath);
	if (cli_log_wait(rep, pid, log_used, len))
		return CLI_FAIL;
	*child = pid;
	if (launch_id)
		*launch_id = strtoull(lid_s, NULL, 16);
	return CLI_OK;
}

int cli_wait_child(pid_t child)
{
	int st = 0;
	for (;;) {
		pid_t w = waitpid(child, &st, 0);
		if (w == child)
			return st;
		if (w < 0 && errno == EINTR) {
			kill(child, SIGINT); /* Ctrl-C while waiting: pass it on */
			continue;
		}
		return st;
	}
}

int cli_write_trace(struct pt_trace *t, const char *path)
{
	struct pt_export_opts eo = {0};
	char err[512] = "";
	eo.force = 1;
	int rc = pt_chrome_export(t, path, &eo, err, sizeof err);
	char esc[600];
	if (rc < 0) {
		if (!err[0])
			snprintf(err, sizeof err, "%s: %s", path, pt_strerror(rc));
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	pt_escape_term(esc, sizeof esc, path, strlen(path), 0, 0);
	fprintf(stderr, "proftop: wrote %s (%llu events)\n", esc,
		(unsigned long long)pt_store_count(t->store));
	return CLI_OK;
}

/* Steps in t (every track's count). */
static uint64_t trace_steps(const struct pt_trace *t)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < t->ntracks; i++)
		n += t->tracks[i].steps;
	return n;
}

int cli_say_launched(const struct pt_trace *t, const struct pt_live_result *res, pid_t child,
		     const char *log)
{
	char why[1024];
	if (!res->session_found && cli_log_probe_off(log, why, sizeof why)) {
		fprintf(stderr, "proftop: no steps: the job's probe switched itself off: %s\n", why);
		return 1;
	}
	if (!res->session_found) {
		fprintf(stderr,
			"proftop: no steps: pid %d and the processes it started recorded nothing "
			"(no proftop or NVTX calls; a Python program is marked once it imports "
			"torch; is it run with -I or -E, which ignore PYTHONPATH?)\n",
			(int)child);
		return 0;
	}
	if (res->nsessions > 1)
		fprintf(stderr, "proftop: recorded %s\n", res->describe);
	if (trace_steps(t))
		return 0;
	for (uint32_t i = 0; i < t->nnotes; i++)
		if (strncmp(pt_trace_note_text(t, i), "no steps", 8) == 0)
			return 0; /* the source said why (the Python helper) */
	fprintf(stderr,
		"proftop: no steps: the job recorded %llu events but never marked a step "
		"(proftop_step(), an optimizer step or forward of a torch model, or an NVTX "
		"range named 'step')\n",
		(unsigned long long)t->events_seen);
	return 0;
}

/* "N events kept, D dropped (A by the source, B by the memory cap)" for the last line. */
static void say_written(const struct pt_trace *t, const char *what, const char *path)
{
	char esc[PATH_MAX];
	uint64_t by_source = pt_trace_source_lost(t);
	uint64_t by_cap = t->warnings[PT_WARN_STORE_DROPPED];
	pt_escape_term(esc, sizeof esc, path, strlen(path), 0, 0);
	if (pt_out_fd(path) == STDOUT_FILENO)
		snprintf(esc, sizeof esc, "the trace to stdout");
	fprintf(stderr, "proftop: %s %s (%llu events", what, esc,
		(unsigned long long)pt_store_count(t->store));
	if (by_source + by_cap)
		fprintf(stderr, "; %llu dropped: %llu by the source, %llu by the memory cap",
			(unsigned long long)(by_source + by_cap), (unsigned long long)by_source,
			(unsigned long long)by_cap);
	fputs(")\n", stderr);
	if (by_source) { /* each cause, as the report and the trace's otherData keep them */
		char causes[200];
		pt_trace_loss_causes(t, causes, sizeof causes, 0);
		fprintf(stderr, "proftop: lost by the source: %s\n", causes);
	}
}

/*
 * Writes the trace to out; when that fails (ENOSPC, EACCES, EROFS...), the
 * recording exists only in this process's memory, so it goes to a rescue
 * file instead (never replacing anything) and the user is told where.
 */
int cli_write_trace_rescue(struct pt_trace *t, const char *out)
{
	struct pt_export_opts eo = {0};
	char err[PATH_MAX + 128] = "", esc[PATH_MAX + 256];
	eo.force = 1;
	int rc = pt_chrome_export(t, out, &eo, err, sizeof err);
	if (rc == 0) {
		say_written(t, "wrote", out);
		return CLI_OK;
	}
	if (!err[0])
		snprintf(err, sizeof err, "%s: %s", out, pt_strerror(rc));
	pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
	fprintf(stderr, "proftop: cannot write the trace: %s\n", esc);

	char name[96], path[PATH_MAX];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	int n = snprintf(name, sizeof name, "proftop-rescue-%d-", (int)getpid());
	strftime(name + n, sizeof name - (size_t)n, "%Y%m%d-%H%M%S.json", &tm);
	const char *tmpdir = getenv("TMPDIR");
	const char *dirs[4] = {tmpdir && *tmpdir ? tmpdir : "/tmp", tmpdir && *tmpdir ? "/tmp" : NULL,
			       ".", getenv("HOME")};
	for (int i = 0; i < 4; i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		if (snprintf(path, sizeof path, "%s/%s", dirs[i], name) >= (int)sizeof path)
			continue;
		eo.force = 0; /* a rescue never replaces a file */
		err[0] = 0;
		if (pt_chrome_export(t, path, &eo, err, sizeof err) == 0) {
			say_written(t, "the recording was saved instead to", path);
			return CLI_FAIL;
		}
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		fprintf(stderr, "proftop: rescue failed: %s\n", esc);
	}
	return cli_fail("the recording is lost: no directory could take it");
}
