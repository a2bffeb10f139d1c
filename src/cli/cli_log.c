/*
 * cli_log.c - the file that takes a launched CMD's stdout and stderr (run,
 * record, serve). A log may hold training data, so it is opened the way
 * nobody else can plant or read it. By default it goes to a directory of
 * the user's own, never the current one: $XDG_STATE_HOME/proftop (else
 * ~/.local/state/proftop), made 0700 and refused when it is a link, not
 * ours or open to others. There proftop-run-PID.log is created
 * exclusively (O_EXCL, no link followed), and when that name is taken (a
 * stale file of a recycled pid) an unpredictable proftop-run-PID-XXXXXX.log
 * is created instead; a --log FILE that exists is used only when it is a
 * regular file of ours with no other link, and is truncated. Either way the
 * file is 0600. The caller learns the name actually used.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "live/live.h"
#include "model/util.h"

/* Refuses what another user could have planted at fd's name; 0 or an errno-like reason. */
static const char *not_ours(int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0)
		return strerror(errno);
	if (!S_ISREG(sb.st_mode))
		return "not a regular file";
	if (sb.st_uid != geteuid())
		return "owned by another user";
	if (sb.st_nlink != 1)
		return "it has other hard links";
	return NULL;
}

/* mkdir DIR (0700) when missing; 0, or -1 with err set. */
static int make_dir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "log directory %s: cannot create: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* mkdir -p PATH: each missing directory made 0700, as XDG asks. */
static int make_dirs(const char *path, char *err, size_t errlen)
{
	char p[PATH_MAX];
	if ((size_t)snprintf(p, sizeof p, "%s", path) >= sizeof p) {
		snprintf(err, errlen, "log directory path too long");
		return -1;
	}
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		int rc = make_dir(p, err, errlen);
		*q = '/';
		if (rc)
			return -1;
	}
	return make_dir(p, err, errlen);
}

int cli_log_dir(char *buf, size_t len, char *err, size_t errlen)
{
	const char *state = getenv("XDG_STATE_HOME");
	int n;
	if (state && state[0] == '/') {
		n = snprintf(buf, len, "%s/proftop", state);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(geteuid());
			home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
		}
		if (!home) {
			snprintf(err, errlen, "no home directory for CMD's log ($HOME and "
					      "$XDG_STATE_HOME unset); give --log FILE");
			return -1;
		}
		n = snprintf(buf, len, "%s/.local/state/proftop", home);
	}
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "log directory path too long");
		return -1;
	}
	if (make_dirs(buf, err, errlen))
		return -1;
	struct stat st;
	const char *why = NULL;
	if (lstat(buf, &st) != 0)
		why = strerror(errno);
	else if (S_ISLNK(st.st_mode))
		why = "a symbolic link";
	else if (!S_ISDIR(st.st_mode))
		why = "not a directory";
	else if (st.st_uid != geteuid())
		why = "owned by another user";
	else if (st.st_mode & 077)
		why = "open to other users (want mode 0700)";
	if (why) {
		snprintf(err, errlen, "log directory %s: %s; refusing it (give --log FILE)", buf, why);
		return -1;
	}
	return 0;
}

int cli_log_open(const char *path, int pid, char *used, size_t len, char *err, size_t errlen)
{
	int fd;
	const char *why;
	if (path) {
		snprintf(used, len, "%s", path);
		/* O_NONBLOCK: a FIFO without a reader must not hang us (it is refused below) */
		fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		if ((why = not_ours(fd))) {
			snprintf(err, errlen, "%s: %s; refusing to write CMD's output there", path,
				 why);
			close(fd);
			return -1;
		}
		if (ftruncate(fd, 0) != 0 || fchmod(fd, 0600) != 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	} else {
		char dir[PATH_MAX];
		if (cli_log_dir(dir, sizeof dir, err, errlen))
			return -1;
		snprintf(used, len, "%s/proftop-run-%d.log", dir, pid);
		fd = open(used, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST) {
			/* taken: a name nobody can guess in advance */
			snprintf(used, len, "%s/proftop-run-%d-XXXXXX.log", dir, pid);
			fd = mkostemps(used, 4, O_CLOEXEC); /* O_EXCL, 0600 */
		}
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s", used, strerror(errno));
			return -1;
		}
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

void cli_log_report(int fd, char what, const char *text)
{
	/* proftop may be gone (killed -9): its end of the pipe with it, and the
	 * write must not kill the job with SIGPIPE */
	struct sigaction ign = {0}, old;
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	dprintf(fd, "%c%s", what, text); /* fd closes at exec */
	sigaction(SIGPIPE, &old, NULL);
}

int cli_log_wait(int rep[2], pid_t pid, char *used, size_t len)
{
	char msg[PATH_MAX + 256];
	size_t n = 0;
	close(rep[1]);
	while (n < sizeof msg - 1) { /* until the child's exec (or exit) closes its end */
		ssize_t r = read(rep[0], msg + n, sizeof msg - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(rep[0]);
	msg[n] = 0;
	if (msg[0] == 'L') {
		snprintf(used, len, "%s", msg + 1);
		return 0;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	char esc[sizeof msg * 4];
	if (msg[0] == 'E')
		pt_escape_term(esc, sizeof esc, msg + 1, strlen(msg + 1), 0, 0);
	else
		snprintf(esc, sizeof esc, "the command did not start");
	cli_fail("%s", esc);
	return -1;
}

/* Up to len bytes of the log: its last ones (tail) or its first; a regular
 * file only, never through a link, never waiting on a FIFO. */
static ssize_t log_read(const char *path, int tail, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	ssize_t n = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t from = tail && st.st_size > (off_t)len ? st.st_size - (off_t)len : 0;
		n = pread(fd, buf, len, from);
	}
	close(fd);
	return n;
}

size_t cli_log_tail(const char *path, int nlines, char *buf, size_t len)
{
	if (!len)
		return 0;
	buf[0] = 0;
	char tail[4096];
	ssize_t n = log_read(path, 1, tail, sizeof tail);
	if (n <= 0)
		return 0;
	size_t end = (size_t)n;
	while (end && (tail[end - 1] == '\n' || tail[end - 1] == '\r'))
		end--;
	size_t start = end;
	for (int k = 0; start > 0; start--)
		if (tail[start - 1] == '\n' && ++k == nlines)
			break;
	size_t m = end - start < len - 1 ? end - start : len - 1;
	memcpy(buf, tail + start, m);
	buf[m] = 0;
	return m;
}

int cli_log_probe_off(const char *log, char *buf, size_t len)
{
	static const char key[] = "proftop: probe disabled: ";
	if (!log || !log[0])
		return 0;
	char head[65536];
	ssize_t n = log_read(log, 0, head, sizeof head - 1);
	if (n <= 0)
		return 0;
	head[n] = 0;
	char *at = memmem(head, (size_t)n, key, sizeof key - 1);
	if (!at)
		return 0;
	at += sizeof key - 1;
	size_t l = strcspn(at, "\n");
	pt_escape_term(buf, len, at, l, 300, 0);
	return 1;
}

void cli_say_failed(FILE *f, const char *log, int status)
{
	char tail[2048], esc[8192], lesc[PATH_MAX * 4];
	pt_escape_term(lesc, sizeof lesc, log, strlen(log), 0, 0);
	if (WIFSIGNALED(status))
		fprintf(f, "proftop: CMD ended by signal %d; its output is in %s", WTERMSIG(status),
			lesc);
	else
		fprintf(f, "proftop: CMD exited with code %d; its output is in %s",
			WEXITSTATUS(status), lesc);
	if (!cli_log_tail(log, 8, tail, sizeof tail)) {
		fputs(" (empty)\n", f);
		return;
	}
	fputs(", ending:\n", f);
	for (char *line = tail, *nl; line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		size_t l = nl ? (size_t)(nl - line) : strlen(line);
		pt_escape_term(esc, sizeof esc, line, l, 160, 0);
		fprintf(f, "  | %s\n", esc);
	}
}

int cli_child_failed(const struct pt_live_result *res)
{
	if (!res->child_done || res->interrupted || res->ui_quit)
		return 0;
	return WIFSIGNALED(res->child_status) ||
	       (WIFEXITED(res->child_status) && WEXITSTATUS(res->child_status) != 0);
}
