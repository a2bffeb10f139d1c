/*
 * tracedir.c - the trace-folder backend (proftop/tracedir.h): an inotify
 * watch on one folder, the table of its trace files and their states, and
 * the reading of one complete file at a time. A read runs on a worker
 * thread into a trace of its own (so the screen keeps answering while a
 * 50 MB file is parsed) and the poll that finds it finished copies it into
 * the live trace in one piece (tracedir_copy.c); when to read a file is
 * decided by tracedir_state.c. Without inotify events for a file (those
 * already there, writers that keep it open) its size and mtime are polled:
 * only files not yet complete are stat'ed, a handful per poll.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/tracedir.h"
#include "tracedir_int.h"
#include "model/util.h"

#define DEFAULT_SETTLE_NS 1000000000ull
#define DEFAULT_BROKEN_NS 10000000000ull
/* A poll reads files itself for at most this long; files under
 * READ_HERE_BYTES are read there (milliseconds each), larger ones on the
 * worker thread, so the screen never waits on a big one. */
#define POLL_BUDGET_NS (40ull * 1000000ull)
#define READ_HERE_BYTES (1u << 20)
#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF |   \
	 IN_MOVE_SELF | IN_ONLYDIR)

/* The read in flight. */
struct td_job {
	int active;
	pthread_t th;
	char *name, *path;
	struct td_ident before;
	struct pt_trace *t;
	struct pt_read_opts ro;
	int rc;
	char err[512];
	int closed_meanwhile; /* a close/rename event came while it was read */
	int here;             /* read in poll itself, no thread to join */
	volatile int cancel;  /* set at close: the thread's read stops */
	atomic_int done;
};

struct tracedir {
	struct pt_backend b;
	char *dir;
	int dirfd, ifd;
	struct pt_tracedir_opts o;
	struct td_rules rules;
	struct td_file *files;
	size_t nfiles, cap;
	struct td_copy copy;
	uint32_t files_read;
	int gone; /* the folder was removed or moved away */
	char dir_esc[256];
	char broken_name[128]; /* the latest broken file (escaped) */
	char last_err[320];    /* and its error */
	struct td_job job;
};

int pt_tracedir_wanted(const char *name)
{
	size_t n = strlen(name);
	if (!n || name[0] == '.' || !strncmp(name, "proftop-", 8))
		return 0;
	return (n > 5 && !strcmp(name + n - 5, ".json")) ||
	       (n > 8 && !strcmp(name + n - 8, ".json.gz"));
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 0 and id filled when name is a regular file (symlinks followed). */
static int stat_ident(const struct tracedir *d, const char *name, struct td_ident *id)
{
	struct stat st;
	if (fstatat(d->dirfd, name, &st, 0) != 0 || !S_ISREG(st.st_mode))
		return -1;
	id->dev = (uint64_t)st.st_dev;
	id->ino = (uint64_t)st.st_ino;
	id->size_bytes = (int64_t)st.st_size;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

static struct td_file *find_file(struct tracedir *d, const char *name)
{
	for (size_t i = 0; i < d->nfiles; i++) /* a folder of traces: dozens to hundreds */
		if (!strcmp(d->files[i].name, name))
			return &d->files[i];
	return NULL;
}

static struct td_file *add_file(struct tracedir *d, const char *name)
{
	struct td_file *f = find_file(d, name);
	if (f)
		return f;
	if (d->nfiles == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 32;
		d->files = pt_xrealloc(d->files, d->cap * sizeof *d->files);
	}
	f = &d->files[d->nfiles++];
	memset(f, 0, sizeof *f);
	f->name = pt_xstrdup(name);
	return f;
}

static void remove_file(struct tracedir *d, struct td_file *f)
{
	free(f->name);
	*f = d->files[--d->nfiles];
}

/* Takes every wanted file now in the folder into the table. */
static void rescan(struct tracedir *d, uint64_t now_ns)
{
	int fd = openat(d->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dp) {
		if (fd >= 0)
			close(fd);
		return;
	}
	uint64_t real = realtime_ns();
	struct dirent *de;
	while ((de = readdir(dp))) {
		struct td_ident id;
		if (!pt_tracedir_wanted(de->d_name) || stat_ident(d, de->d_name, &id))
			continue;
		struct td_file *f = add_file(d, de->d_name);
		if (f->state == TD_READING)
			continue;
		uint64_t age = (int64_t)real > id.mtime_ns ? real - (uint64_t)id.mtime_ns : 0;
		td_observe_old(f, &id, age, now_ns);
	}
	closedir(dp);
}

static void on_event(struct tracedir *d, const struct inotify_event *ev, uint64_t now_ns)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		rescan(d, now_ns); /* events were lost: look at everything */
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
		d->gone = 1;
		return;
	}
	if (!ev->len || (ev->mask & IN_ISDIR) || !pt_tracedir_wanted(ev->name))
		return;
	struct td_file *f = find_file(d, ev->name);
	int reading = f && f->state == TD_READING;
	if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
		/* gone (its events, if read, stay); a file later under the name is new */
		if (f && !reading)
			remove_file(d, f);
		return;
	}
	int closed = (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) != 0;
	if (reading) {
		d->job.closed_meanwhile |= closed;
		return; /* the read's end compares identities */
	}
	struct td_ident id;
	if (stat_ident(d, ev->name, &id)) {
		if (f && f->state != TD_TAKEN)
			remove_file(d, f);
		return;
	}
	f = add_file(d, ev->name);
	td_observe(f, &id, closed, now_ns);
}

static void drain_events(struct tracedir *d, uint64_t now_ns)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(d->ifd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			on_event(d, ev, now_ns);
			p += sizeof *ev + ev->len;
		}
	}
}

/* Files not complete yet are polled: their size and mtime tell when they settle. */
static void stat_pending(struct tracedir *d, uint64_t now_ns)
{
	for (size_t i = 0; i < d->nfiles;) {
		struct td_file *f = &d->files[i];
		if (f->state != TD_PENDING) {
			i++;
			continue;
		}
		struct td_ident id;
		if (stat_ident(d, f->name, &id)) {
			remove_file(d, f);
			continue;
		}
		td_observe(f, &id, 0, now_ns);
		i++;
	}
}

static void *job_main(void *arg)
{
	struct td_job *j = arg;
	j->rc = pt_chrome_read(j->t, j->path, &j->ro, j->err, sizeof j->err);
	atomic_store_explicit(&j->done, 1, memory_order_release);
	return NULL;
}

static void job_free(struct td_job *j)
{
	pt_trace_free(j->t);
	free(j->name);
	free(j->path);
	memset(j, 0, sizeof *j);
}

/* The read ended: copy it in, or decide what the failure means. */
static void job_finish(struct tracedir *d, struct pt_trace *t, uint64_t now_ns)
{
	struct td_job *j = &d->job;
	if (!j->here)
		pthread_join(j->th, NULL);
	struct td_file *f = find_file(d, j->name);
	struct td_ident after;
	int has_after = stat_ident(d, j->name, &after) == 0;
	if (f) {
		enum td_outcome out =
		    td_after_read(f, j->rc, &j->before, &after, has_after, now_ns, &d->rules);
		if (out == TD_OUT_TAKEN) {
			td_copy_trace(&d->copy, t, j->t);
			d->files_read++;
		} else if (out == TD_OUT_CHANGED && j->closed_meanwhile) {
			f->closed = 1;
		} else if (out == TD_OUT_BROKEN) {
			/* "NAME: byte N: what": the folder is in the session line already */
			const char *msg = j->err;
			size_t plen = strlen(j->path);
			struct pt_buf m = {0};
			if (!strncmp(msg, j->path, plen))
				msg += plen;
			pt_buf_printf(&m, "%s%s", j->name, msg);
			pt_escape_term(f->err, sizeof f->err, m.p, m.len, 200, 0);
			pt_buf_free(&m);
			pt_escape_term(d->broken_name, sizeof d->broken_name, j->name,
				       strlen(j->name), 40, 0);
			snprintf(d->last_err, sizeof d->last_err, "%s", f->err);
		}
		if (out == TD_OUT_CHANGED && !has_after)
			remove_file(d, f);
	}
	job_free(j);
}

/* The oldest complete file (by mtime, then name), or NULL. */
static struct td_file *next_ready(struct tracedir *d, uint64_t now_ns)
{
	struct td_file *best = NULL;
	for (size_t i = 0; i < d->nfiles; i++) {
		struct td_file *f = &d->files[i];
		if (!td_ready(f, now_ns, &d->rules))
			continue;
		if (!best || f->id.mtime_ns < best->id.mtime_ns ||
		    (f->id.mtime_ns == best->id.mtime_ns && strcmp(f->name, best->name) < 0))
			best = f;
	}
	return best;
}

static void job_start(struct tracedir *d, struct td_file *f, int here)
{
	struct td_job *j = &d->job;
	memset(j, 0, sizeof *j);
	j->active = 1;
	j->name = pt_xstrdup(f->name);
	struct pt_buf b = {0};
	pt_buf_printf(&b, "%s/%s", d->dir, f->name);
	j->path = pt_xstrndup(b.p, b.len);
	pt_buf_free(&b);
	j->before = f->id;
	j->t = pt_trace_new(d->o.max_mem_bytes ? d->o.max_mem_bytes : PT_STORE_DEFAULT_MAX_BYTES);
	j->ro.threads = d->o.threads;
	j->ro.regular_only = 1; /* the folder's writer could swap in a FIFO after our stat */
	j->ro.cancel = &j->cancel;
	f->state = TD_READING;
	if (here || d->o.sync || pthread_create(&j->th, NULL, job_main, j) != 0) {
		if (!here)
			d->o.sync = 1; /* no thread to be had: read here */
		j->here = 1;
		job_main(j);
	}
}

static int td_poll(struct pt_backend *b, struct pt_trace *t, uint64_t now_ns)
{
	struct tracedir *d = (struct tracedir *)b;
	drain_events(d, now_ns);
	/* a removed folder we hold open sends IN_DELETE_SELF only once we let go */
	struct stat dst;
	if (!d->gone && fstat(d->dirfd, &dst) == 0 && dst.st_nlink == 0)
		d->gone = 1;
	stat_pending(d, now_ns);
	/* as many files as fit in the poll's time budget: small ones are read
	 * here, one after another (a folder of thousands of small traces used
	 * to take one file per poll: 17 minutes for 10,000); a large one goes
	 * to the worker thread and the poll returns */
	uint64_t until = pt_now_ns() + POLL_BUDGET_NS;
	for (;;) {
		if (d->job.active && atomic_load_explicit(&d->job.done, memory_order_acquire))
			job_finish(d, t, now_ns);
		if (d->job.active)
			break;
		struct td_file *f = next_ready(d, now_ns);
		if (!f)
			break;
		int here = f->id.size_bytes >= 0 && f->id.size_bytes < READ_HERE_BYTES;
		job_start(d, f, here);
		if (d->job.here)
			job_finish(d, t, pt_now_ns());
		if (pt_now_ns() >= until)
			break;
	}
	return 0;
}

int pt_tracedir_open(struct pt_backend **out, const char *dir, const struct pt_tracedir_opts *o,
		     char *err, size_t errlen)
{
	*out = NULL;
	char esc[256];
	pt_escape_term(esc, sizeof esc, dir, strlen(dir), 120, 0);
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", esc, strerror(e));
		return e == ENOENT ? PT_ENOENT : e == EACCES ? PT_EPERM : PT_EIO;
	}
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0 || inotify_add_watch(ifd, dir, WATCH_MASK) < 0) {
		snprintf(err, errlen, "%s: cannot watch the folder (inotify: %s)", esc,
			 strerror(errno));
		if (ifd >= 0)
			close(ifd);
		close(dirfd);
		return PT_ENOTAVAIL;
	}
	struct tracedir *d = pt_xcalloc(1, sizeof *d);
	d->b.ops = &pt_backend_tracedir;
	d->dir = pt_xstrdup(dir);
	d->dirfd = dirfd;
	d->ifd = ifd;
	if (o)
		d->o = *o;
	d->rules.settle_ns = d->o.settle_ns ? d->o.settle_ns : DEFAULT_SETTLE_NS;
	d->rules.broken_after_ns = d->o.broken_after_ns ? d->o.broken_after_ns : DEFAULT_BROKEN_NS;
	snprintf(d->dir_esc, sizeof d->dir_esc, "%s", esc);
	td_copy_init(&d->copy);
	/* after the watch: a file created in between is seen twice, not missed */
	rescan(d, pt_now_ns());
	*out = &d->b;
	return 0;
}

void pt_tracedir_status(const struct pt_backend *b, struct pt_tracedir_status *st)
{
	const struct tracedir *d = (const struct tracedir *)b;
	memset(st, 0, sizeof *st);
	st->files = d->files_read;
	for (size_t i = 0; i < d->nfiles; i++) {
		const struct td_file *f = &d->files[i];
		st->waiting += f->state == TD_PENDING;
		st->broken += f->state == TD_BROKEN;
		st->changed += f->state == TD_TAKEN && f->changed_after;
	}
	if (d->job.active) {
		st->reading = 1;
		st->reading_bytes = (uint64_t)d->job.before.size_bytes;
		pt_escape_term(st->reading_name, sizeof st->reading_name, d->job.name,
			       strlen(d->job.name), 60, 0);
	}
	snprintf(st->dir, sizeof st->dir, "%s", d->dir_esc);
	snprintf(st->broken_name, sizeof st->broken_name, "%s", d->broken_name);
	st->gone = d->gone;
}

const char *pt_tracedir_broken(const struct pt_backend *b, size_t i)
{
	const struct tracedir *d = (const struct tracedir *)b;
	for (size_t k = 0; k < d->nfiles; k++)
		if (d->files[k].state == TD_BROKEN && i-- == 0)
			return d->files[k].err;
	return NULL;
}

static void td_describe(const struct pt_backend *b, char *buf, size_t len)
{
	struct pt_tracedir_status st;
	pt_tracedir_status(b, &st);
	int n = snprintf(buf, len, "%s: %u file%s", st.dir, st.files, st.files == 1 ? "" : "s");
	if (n < 0 || (size_t)n >= len)
		return;
	if (st.reading)
		n += snprintf(buf + n, len - (size_t)n, ", reading %s", st.reading_name);
	else
		n += snprintf(buf + n, len - (size_t)n, ", watching");
	if (st.broken && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", %u broken", st.broken);
}

static int td_open(struct pt_backend **out, const struct pt_backend_args *args, char *err,
		   size_t errlen)
{
	if (!args->session_path) {
		*out = NULL;
		snprintf(err, errlen, "tracedir: no folder given");
		return PT_EINVAL;
	}
	return pt_tracedir_open(out, args->session_path, NULL, err, errlen);
}

static void td_close(struct pt_backend *b)
{
	struct tracedir *d = (struct tracedir *)b;
	if (!d)
		return;
	if (d->job.active) {
		if (!d->job.here) {
			/* a big file: its read stops at its next chunk, so a
			 * screen quits at once rather than after the whole file */
			__atomic_store_n(&d->job.cancel, 1, __ATOMIC_RELAXED);
			pthread_join(d->job.th, NULL);
		}
		job_free(&d->job);
	}
	for (size_t i = 0; i < d->nfiles; i++)
		free(d->files[i].name);
	free(d->files);
	close(d->ifd);
	close(d->dirfd);
	free(d->dir);
	free(d);
}

static int td_probe(char *why, size_t whylen)
{
	int fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "inotify: %s", strerror(errno));
		return PT_ENOTAVAIL;
	}
	close(fd);
	return 0;
}

static const char *td_last_error(const struct pt_backend *b)
{
	return ((const struct tracedir *)b)->last_err;
}

const struct pt_backend_ops pt_backend_tracedir = {
    .name = "tracedir",
    .probe = td_probe,
    .open = td_open,
    .poll = td_poll,
    .close = td_close,
    .last_error = td_last_error,
    .describe = td_describe,
};
