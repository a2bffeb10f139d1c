/*
 * cli_log.c - the file that takes a launched CMD's stdout and stderr (run,
 * record, serve). A log may hold training data and often sits in a shared
 * directory, so it is opened the way nobody else can plant or read it: the
 * default name ./proftop-run-PID.log is created exclusively (O_EXCL, no
 * link followed), and when that name is taken (another user's plant, or a
 * stale file of a recycled pid) an unpredictable ./proftop-run-PID-XXXXXX.log
 * is created instead; a --log FILE that exists is used only when it is a
 * regular file of ours with no other link, and is truncated. Either way the
 * file is 0600. The caller learns the name actually used.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

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
		snprintf(used, len, "proftop-run-%d.log", pid);
		fd = open(used, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST) {
			/* taken: a name nobody can guess in advance */
			snprintf(used, len, "proftop-run-%d-XXXXXX.log", pid);
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
