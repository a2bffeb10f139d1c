/*
 * cli_remote.c - running a line of Python inside another process, for
 * --inject (cli_inject.c): PEP 768's sys.remote_exec (Python 3.14 and
 * later, through the target's own interpreter), or gdb attaching for a
 * moment: it maps one page in the target, writes the line into it, queues
 * Py_AddPendingCall(PyRun_SimpleString, page) and detaches. Also what gdb's
 * output says when that fails, and the signals gdb swallowed, sent again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_remote.h"
#include "model/util.h"

void cli_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Python source literal of s: '...' with \\, \' and non-printable bytes escaped. */
void cli_py_literal(struct pt_buf *b, const char *s)
{
	pt_buf_putc(b, '\'');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\' || *p == '\'')
			pt_buf_printf(b, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			pt_buf_printf(b, "\\x%02x", *p);
		else
			pt_buf_putc(b, (char)*p);
	}
	pt_buf_putc(b, '\'');
}

static int run_gdb_argv(const char *gdb, char **argv, struct pt_buf *out, uint64_t *paused_ns);

int cli_run_gdb(const char *gdb, int32_t pid, const char *line, struct pt_buf *out,
		   uint64_t *paused_ns)
{
	struct pt_buf words = {0};
	size_t len = strlen(line) + 1;
	size_t padded = (len + 7) & ~(size_t)7;
	if (padded > 4096)
		return -1;
	unsigned char page[4096] = {0};
	memcpy(page, line, len);
	char **argv = pt_xcalloc(32 + padded / 8 * 2, sizeof *argv);
	int ac = 0;
	char pidbuf[16];
	snprintf(pidbuf, sizeof pidbuf, "%d", (int)pid);
	argv[ac++] = (char *)gdb;
	argv[ac++] = "-nx";
	argv[ac++] = "-q";
	argv[ac++] = "-batch";
	argv[ac++] = "-iex";
	argv[ac++] = "set auto-solib-add off"; /* no libtorch symbols: a short pause */
	argv[ac++] = "-iex";
	argv[ac++] = "set confirm off";
	/* a signal that stops the job during a call gdb makes in it (a kill
	 * -STOP racing the attach): put the job back as it was before the
	 * call, never leave it inside the call (it would crash once resumed) */
	argv[ac++] = "-iex";
	argv[ac++] = "set unwindonsignal on";
	argv[ac++] = "-p";
	argv[ac++] = pidbuf;
	argv[ac++] = "-ex";
	argv[ac++] = "sharedlibrary libc\\.so";
	argv[ac++] = "-ex";
	argv[ac++] = "sharedlibrary libpython";
	argv[ac++] = "-ex";
	argv[ac++] = "set $pt_page = (unsigned long)mmap(0, 4096, 3, 0x22, -1, 0)";
	size_t first_word = words.len;
	for (size_t off = 0; off < padded; off += 8) {
		unsigned long long v = 0;
		for (int k = 7; k >= 0; k--)
			v = (v << 8) | page[off + (size_t)k];
		pt_buf_printf(&words, "set {unsigned long long}($pt_page+%zu) = 0x%llx", off, v);
		pt_buf_putc(&words, 0);
	}
	const char *w = words.p + first_word;
	for (size_t off = 0; off < padded; off += 8) {
		argv[ac++] = "-ex";
		argv[ac++] = (char *)w;
		w += strlen(w) + 1;
	}
	argv[ac++] = "-ex";
	argv[ac++] = "printf \"proftop-queued %d\\n\", (int)Py_AddPendingCall((int(*)(void*))"
		     "PyRun_SimpleString, (void*)$pt_page)";
	argv[ac++] = "-ex";
	argv[ac++] = "detach";
	argv[ac] = NULL;
	int rc = run_gdb_argv(gdb, argv, out, paused_ns);
	free(argv);
	pt_buf_free(&words);
	if (rc == -2)
		kill(pid, SIGCONT); /* never leave the job stopped */
	return rc;
}

/*
 * gdb's calls into a process (mmap, Py_AddPendingCall) end with gdb writing
 * the thread's registers back. Where it cannot write the extended CPU state
 * (gdb 13.1 on Linux 6.18: "Couldn't write extended state status: Bad
 * address"), the process resumes with its vector registers lost and its
 * interrupted system call failing (Python's time.sleep raised OSError
 * errno 514). Tried first on a child of proftop's own, asleep as the job
 * may be: 0 when that child slept on untouched, else -1 with why.
 */
int cli_gdb_calls_safe(const char *gdb, char *why, size_t whylen)
{
	why[0] = 0;
	pid_t c = fork();
	if (c < 0)
		return 0; /* no child to try on: as before */
	if (c == 0) {
		struct timespec d;
		clock_gettime(CLOCK_MONOTONIC, &d);
		d.tv_sec += 30;
		for (;;) {
			int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL);
			if (r == 0)
				_exit(0);
			if (r != EINTR)
				_exit(42); /* the kernel's restart code reached us */
		}
	}
	char pidbuf[16];
	snprintf(pidbuf, sizeof pidbuf, "%d", (int)c);
	char *argv[] = {(char *)gdb, "-nx", "-q", "-batch", "-iex", "set auto-solib-add off",
			"-iex", "set confirm off", "-p", pidbuf, "-ex", "sharedlibrary libc\\.so",
			"-ex", "printf \"proftop-call %d\\n\", (int)getpid()", "-ex", "detach", NULL};
	struct pt_buf out = {0};
	uint64_t took = 0;
	run_gdb_argv(gdb, argv, &out, &took); /* judged by the child and the output, not its code */
	int st = 0, gone = 0;
	for (int i = 0; i < 60 && !gone; i++) { /* 300 ms for the child to show harm */
		if (waitpid(c, &st, WNOHANG) == c)
			gone = 1;
		else
			cli_sleep_ms(5);
	}
	if (!gone) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
	}
	const char *o = out.p ? out.p : "";
	const char *bad = strstr(o, "Couldn't write");
	int harmed = (gone && WIFEXITED(st) && WEXITSTATUS(st) == 42) || bad;
	if (harmed) {
		char esc[160] = "";
		if (bad) {
			size_t n = strcspn(bad, "\n");
			pt_escape_term(esc, sizeof esc, bad, n, 100, 0);
		}
		snprintf(why, whylen,
			 "gdb cannot give a process back its CPU state after calling into it on "
			 "this machine%s%s%s (a test on a process of proftop's own: its sleep failed "
			 "once gdb let go)",
			 esc[0] ? " (\"" : "", esc, esc[0] ? "\")" : "");
		pt_buf_free(&out);
		return -1;
	}
	pt_buf_free(&out);
	return 0;
}

/* Runs gdb with argv, its output into out; 0 (exit 0), -1, or -2 when it
 * ran past INJECT_GDB_TIMEOUT_NS (it was told to detach). */
static int run_gdb_argv(const char *gdb, char **argv, struct pt_buf *out, uint64_t *paused_ns)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -1;
	uint64_t t0 = pt_now_ns();
	pid_t g = fork();
	if (g == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		setpgid(0, 0);
		execv(gdb, argv);
		_exit(127);
	}
	close(pipefd[1]);
	if (g < 0) {
		close(pipefd[0]);
		return -1;
	}
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	int st = 0, done = 0, killed = 0;
	char buf[4096];
	for (;;) {
		ssize_t n;
		while ((n = read(pipefd[0], buf, sizeof buf)) > 0)
			pt_buf_put(out, buf, (size_t)n);
		if (done)
			break;
		if (waitpid(g, &st, WNOHANG) == g) {
			done = 1; /* one more read for what is left in the pipe */
			continue;
		}
		if (!killed && pt_now_ns() - t0 > INJECT_GDB_TIMEOUT_NS) {
			kill(-g, SIGTERM); /* gdb detaches on SIGTERM */
			killed = 1;
		}
		cli_sleep_ms(5);
	}
	close(pipefd[0]);
	*paused_ns = pt_now_ns() - t0;
	pt_buf_putc(out, 0);
	if (killed)
		return -2;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/*
 * Signals someone sent the job while gdb held it. gdb catches each one
 * ("Program received signal SIGTERM, Terminated.") and, unwinding the call
 * it was making in the job (unwindonsignal), drops it: a scheduler's
 * SIGTERM or a kill -STOP would be lost. Each is sent again, in order, once
 * gdb has detached. Faults (SEGV, BUS, ILL, FPE, TRAP) are not: they come
 * from the call gdb made, not from anyone's kill. Their names go into
 * names ("SIGTERM SIGSTOP"); returns how many were sent again.
 */
int cli_redeliver_signals(int32_t pid, const char *out, char *names, size_t len)
{
	static const char key[] = "Program received signal SIG";
	int n = 0;
	size_t used = 0;
	names[0] = 0;
	for (const char *p = out; p && (p = strstr(p, key)) != NULL; p += sizeof key - 1) {
		const char *a = p + sizeof key - 1;
		char abbrev[16];
		size_t l = strcspn(a, ", \n");
		if (!l || l >= sizeof abbrev)
			continue;
		memcpy(abbrev, a, l);
		abbrev[l] = 0;
		int sig = 0;
		if (abbrev[0] >= '0' && abbrev[0] <= '9') { /* gdb's "SIG34" */
			sig = atoi(abbrev);
		} else {
			for (int k = 1; k < NSIG && !sig; k++) {
				const char *nm = sigabbrev_np(k);
				if (nm && strcmp(nm, abbrev) == 0)
					sig = k;
			}
		}
		if (sig <= 0 || sig >= NSIG || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
		    sig == SIGFPE || sig == SIGTRAP)
			continue;
		if (kill(pid, sig) != 0)
			continue;
		n++;
		int w = snprintf(names + used, len - used, "%sSIG%s", used ? " " : "", abbrev);
		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
	}
	return n;
}

/* sys.remote_exec(pid, script) from the target's own interpreter (3.14+). */
int cli_run_remote_exec(const char *exe, int32_t pid, const char *script, struct pt_buf *out,
			   uint64_t *took_ns)
{
	struct pt_buf code = {0};
	pt_buf_printf(&code, "import sys; sys.remote_exec(%d, ", (int)pid);
	cli_py_literal(&code, script);
	pt_buf_printf(&code, ")");
	pt_buf_putc(&code, 0);
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		pt_buf_free(&code);
		return -1;
	}
	uint64_t t0 = pt_now_ns();
	pid_t c = fork();
	if (c == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		execl(exe, exe, "-I", "-c", code.p, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	pt_buf_free(&code);
	if (c < 0) {
		close(pipefd[0]);
		return -1;
	}
	char buf[2048];
	ssize_t n;
	while ((n = read(pipefd[0], buf, sizeof buf)) > 0)
		pt_buf_put(out, buf, (size_t)n);
	close(pipefd[0]);
	int st = 0;
	waitpid(c, &st, 0);
	*took_ns = pt_now_ns() - t0;
	pt_buf_putc(out, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The last non-empty line of gdb's output that says what went wrong. */
void cli_gdb_reason(const char *out, char *why, size_t len)
{
	static const char *const known[] = {"ptrace:", "Could not attach", "No symbol",
					    "Cannot access memory", "not permitted",
					    "Couldn't get registers", "No such process"};
	why[0] = 0;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		const char *p = strstr(out, known[i]);
		if (p) {
			size_t n = strcspn(p, "\n");
			pt_escape_term(why, len, p, n, 160, 0);
			return;
		}
	}
}
