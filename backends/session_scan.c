/*
 * session_scan.c - finding sessions: lists the "<pid>.session" segments in
 * this user's session directory (pt_shm_dir) with their state, and removes
 * the segments of owners that are gone, once they are older than
 * PT_SESSION_STALE_NS and no live reader holds them. The probe never unlinks
 * its own file (an exited session stays readable), so this is where stale
 * segments go. Exit detection from /proc (pid gone or reused) is here too.
 *
 * Also here: the SIGBUS guard over the mapped segments (session_int.h).
 * Another process of the same user can truncate a segment while proftop has
 * it mapped; reading a page past the new end raises SIGBUS. Two layers: the
 * reader fstat()s the file at every poll and stops reading a segment that
 * shrank (covering the lost pages with zero pages first), and this handler
 * catches the truncation that lands between that check and a read. It maps
 * zero pages over the fault instead of longjmp()ing out, so every reader of
 * the mapping (the drain, the listing, whoever holds pt_session_header())
 * is covered without a jump buffer per access, and the cost on the hot path
 * is one atomic load per ring. Chosen over sigsetjmp around each copy: no
 * per-thread state, no signal mask juggling, and it also guards the header
 * reads outside the drain.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proftop/error.h"
#include "proftop/session.h"
#include "session_int.h"
#include "model/util.h"

int pt_session_path(int32_t pid, char *buf, size_t len, char *err, size_t errlen)
{
	char dir[512];
	struct stat st;
	int rc = pt_shm_dir(dir, sizeof dir, 0, err, errlen);
	if (rc == PT_ENOENT && pt_shm_foreign_pid(pid, err, errlen))
		return PT_EPERM; /* say whose process it is, not just "no session" */
	if (rc)
		return rc;
	int n = snprintf(buf, len, "%s/%d.session", dir, (int)pid);
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "session path too long");
		return PT_EINVAL;
	}
	if (lstat(buf, &st) != 0 && errno == ENOENT && pt_shm_foreign_pid(pid, err, errlen))
		return PT_EPERM;
	return 0;
}

/* ---- exit detection (pt_session_owner_exited is in session.c) ---- */

/* Field 22 (start time, ticks since boot) of /proc/PID/stat, 0 when there is
 * none; *state (when given) gets field 3 ('R', 'S', ... 'Z' a zombie). */
static uint64_t proc_stat(const char *proc_root, int32_t pid, char *state)
{
	char path[600], buf[1024];
	if (state)
		*state = 0;
	snprintf(path, sizeof path, "%s/%d/stat", proc_root ? proc_root : "/proc", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: fields resume after the last ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	if (state && p[0] == ' ')
		*state = p[1];
	for (int field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return 0;
	}
	return strtoull(p + 1, NULL, 10);
}

uint64_t pt_proc_start_ticks(const char *proc_root, int32_t pid)
{
	return proc_stat(proc_root, pid, NULL);
}

int pt_session_pid_gone(const char *proc_root, int32_t pid, uint64_t start_ticks)
{
	if (pid <= 0)
		return 1;
	int real = !proc_root || !strcmp(proc_root, "/proc");
	if (real && kill(pid, 0) != 0 && errno == ESRCH)
		return 1;
	if (start_ticks) {
		char state;
		uint64_t now = proc_stat(proc_root, pid, &state);
		if (now != start_ticks) /* gone (0) or another process with that pid */
			return 1;
		if (state == 'Z' || state == 'X') /* exited, not yet reaped: it writes nothing more */
			return 1;
	}
	return 0;
}

/* ---- listing ---- */

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The pid that name starts with ("<digits>" then want), else -1. */
static int32_t name_pid(const char *name, const char *want)
{
	const char *p = name;
	int64_t v = 0;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > INT32_MAX)
			return -1;
		p++;
	}
	if (p == name || strcmp(p, want) != 0 || v <= 0)
		return -1;
	return (int32_t)v;
}

/* "<digits>.session" -> pid, else -1. */
static int32_t session_pid(const char *name)
{
	return name_pid(name, ".session");
}

/* Another process reads the session now (a fresh slot of a live pid). */
static int reader_live(const struct pt_shm_header *h)
{
	uint64_t now = pt_now_ns();
	for (uint32_t k = 0; k < PT_SHM_MAX_READERS; k++) {
		const struct pt_shm_reader *rd = &h->readers[k];
		uint64_t hb = __atomic_load_n(&rd->heartbeat_ns, __ATOMIC_ACQUIRE);
		int32_t rp = __atomic_load_n(&rd->pid, __ATOMIC_RELAXED);
		if (!hb || rp <= 0 || rp == (int32_t)getpid())
			continue;
		if (now > hb && now - hb > PT_SHM_READER_TIMEOUT_NS)
			continue;
		if (!(kill(rp, 0) != 0 && errno == ESRCH))
			return 1;
	}
	return 0;
}

static void fill_info(struct pt_session_info *in, struct pt_session *s, const struct stat *st,
		      int clean, uint64_t launch_id, int *remove)
{
	const struct pt_shm_header *h = pt_session_header(s);
	uint64_t now_real = realtime_ns();
	in->valid = 1;
	in->exited = pt_session_owner_exited(s);
	in->rank = h->rank >= 0 ? h->rank : h->local_rank; /* RANK, else LOCAL_RANK */
	uint64_t origin_real = h->realtime_origin_ns;
	in->age_ns = now_real > origin_real ? now_real - origin_real : 0;
	in->dropped = pt_session_producer_drops(s);
	in->reader_live = reader_live(h);
	memcpy(in->cmdline, h->cmdline, sizeof in->cmdline);
	in->cmdline[sizeof in->cmdline - 1] = 0;
	if (h->pid != in->pid) {
		snprintf(in->why, sizeof in->why, "file of pid %d names pid %d", (int)in->pid,
			 (int)h->pid);
	}
	/* the last sign of life on the realtime clock: file times, exit, start */
	uint64_t last = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
	uint64_t exit_ns = __atomic_load_n(&h->exit_ns, __ATOMIC_RELAXED);
	if (exit_ns > h->clock_origin_ns && origin_real + (exit_ns - h->clock_origin_ns) > last)
		last = origin_real + (exit_ns - h->clock_origin_ns);
	if (origin_real > last)
		last = origin_real;
	*remove = clean && in->exited && !in->reader_live && now_real > last &&
		  now_real - last > PT_SESSION_STALE_NS;
	/* the launch that just ended, read whole by its proftop: no need to wait */
	if (clean && launch_id && in->exited && !in->reader_live &&
	    __atomic_load_n(&h->launch_id, __ATOMIC_RELAXED) == launch_id)
		*remove = 1;
}

/* ".<digits>.session.tmp" (a segment its probe had not finished: it
 * renames it to "<pid>.session" once whole) -> pid, else -1. */
static int32_t unfinished_pid(const char *name)
{
	return name[0] == '.' ? name_pid(name + 1, ".session.tmp") : -1;
}

static int cmp_info(const void *a, const void *b)
{
	const struct pt_session_info *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Removes the deep-capture traces ("<pid>.capture-N.json", and a
 * temporary one the job left) of sessions just removed as stale. */
static void remove_captures(const char *dir, const int32_t *pids, size_t n)
{
	DIR *d = n ? opendir(dir) : NULL;
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (end == de->d_name || strncmp(end, ".capture-", 9) != 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (pids[i] != pid)
				continue;
			char path[600];
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			unlink(path);
			break;
		}
	}
	closedir(d);
}

static int list_sessions(struct pt_session_info **out, size_t *n, int clean, uint64_t launch_id,
			 size_t *cleaned, char *err, size_t errlen)
{
	char dir[256]; /* + "/" + a d_name fits in info.path */
	*out = NULL;
	*n = 0;
	if (cleaned)
		*cleaned = 0;
	int rc = pt_shm_dir(dir, sizeof dir, 0, err, errlen);
	if (rc == PT_ENOENT)
		return 0;
	if (rc)
		return rc;
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return errno == ENOENT ? 0 : PT_EIO;
	}
	struct pt_session_info *v = NULL;
	size_t cap = 0, k = 0, ngone = 0, gone_cap = 0;
	int32_t *gone = NULL; /* pids whose stale session was removed */
	struct dirent *de;
	while ((de = readdir(d))) {
		int32_t pid = session_pid(de->d_name);
		if (pid < 0) {
			/* a probe killed while it made its segment leaves it unnamed */
			int32_t up = clean ? unfinished_pid(de->d_name) : -1;
			if (up > 0 && kill(up, 0) != 0 && errno == ESRCH) {
				char path[600];
				snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
				if (unlink(path) == 0 && cleaned)
					(*cleaned)++;
			}
			continue;
		}
		if (k == cap) {
			cap = cap ? cap * 2 : 8;
			v = pt_xrealloc(v, cap * sizeof *v);
		}
		struct pt_session_info *in = &v[k];
		memset(in, 0, sizeof *in);
		in->pid = pid;
		in->rank = -1;
		snprintf(in->path, sizeof in->path, "%s/%s", dir, de->d_name);
		struct stat st;
		struct pt_session *s = NULL;
		int remove = 0;
		if (lstat(in->path, &st) != 0)
			continue; /* gone meanwhile */
		if (pt_session_open(in->path, &s, in->why, sizeof in->why) == 0) {
			fill_info(in, s, &st, clean, launch_id, &remove);
			pt_session_close(s);
		}
		if (remove && unlink(in->path) == 0) {
			if (cleaned)
				(*cleaned)++;
			if (ngone == gone_cap) {
				gone_cap = gone_cap ? gone_cap * 2 : 8;
				gone = pt_xrealloc(gone, gone_cap * sizeof *gone);
			}
			gone[ngone++] = pid;
			continue;
		}
		k++;
	}
	closedir(d);
	remove_captures(dir, gone, ngone);
	free(gone);
	if (k)
		qsort(v, k, sizeof *v, cmp_info);
	*out = v;
	*n = k;
	return 0;
}

int pt_session_list(struct pt_session_info **out, size_t *n, int clean, size_t *cleaned,
		    char *err, size_t errlen)
{
	return list_sessions(out, n, clean, 0, cleaned, err, errlen);
}

size_t pt_session_reap(uint64_t launch_id)
{
	struct pt_session_info *v;
	size_t n, cleaned = 0;
	char err[8];
	if (list_sessions(&v, &n, 1, launch_id, &cleaned, err, sizeof err) == 0)
		free(v);
	return cleaned;
}

int pt_session_peek(int32_t pid, struct pt_session_peek *out)
{
	char path[512], err[256];
	struct pt_session *s = NULL;
	memset(out, 0, sizeof *out);
	int rc = pt_session_path(pid, path, sizeof path, err, sizeof err);
	if (rc)
		return rc;
	if ((rc = pt_session_open(path, &s, err, sizeof err)) != 0)
		return rc;
	const struct pt_shm_header *h = pt_session_header(s);
	out->launch_id = __atomic_load_n(&h->launch_id, __ATOMIC_RELAXED);
	out->ppid = h->ppid;
	out->recorded = __atomic_load_n(&h->rings_claimed, __ATOMIC_ACQUIRE) > 0 ||
			__atomic_load_n(&h->dropped_no_ring, __ATOMIC_RELAXED) > 0;
	out->exited = pt_session_owner_exited(s);
	pt_session_close(s);
	return 0;
}

/* ---- the SIGBUS guard ---- */

#define GUARD_SLOTS 64

/* start == 0: free. Written under guard_mu, read by the handler (atomics). */
static struct guard_slot {
	uintptr_t start, end;
	int hit;
} guard_slots[GUARD_SLOTS];
static pthread_mutex_t guard_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction guard_prev; /* the handler before ours */
static uintptr_t guard_page = 4096;

/* Private zero pages over [from rounded down to a page, end). mmap is a
 * plain system call on Linux, safe in the handler. */
static int guard_zero(uintptr_t from, uintptr_t end)
{
	from &= ~(guard_page - 1);
	if (from >= end)
		return 0;
	void *p = mmap((void *)from, end - from, PROT_READ | PROT_WRITE,
		       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? -1 : 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	if (si && si->si_code > 0) { /* raised by a fault, not sent by kill() */
		uintptr_t a = (uintptr_t)si->si_addr;
		for (int i = 0; i < GUARD_SLOTS; i++) {
			uintptr_t s0 = __atomic_load_n(&guard_slots[i].start, __ATOMIC_ACQUIRE);
			uintptr_t e0 = __atomic_load_n(&guard_slots[i].end, __ATOMIC_ACQUIRE);
			if (s0 && a >= s0 && a < e0 && guard_zero(a, e0) == 0) {
				__atomic_store_n(&guard_slots[i].hit, 1, __ATOMIC_RELEASE);
				errno = saved;
				return; /* the access is retried and reads zeros */
			}
		}
	}
	errno = saved;
	if (guard_prev.sa_flags & SA_SIGINFO) {
		guard_prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (guard_prev.sa_handler != SIG_DFL && guard_prev.sa_handler != SIG_IGN) {
		guard_prev.sa_handler(sig);
		return;
	}
	/* the default action: a fault comes back at once when we return */
	signal(sig, SIG_DFL);
	if (!si || si->si_code <= 0)
		raise(sig);
}

void pt_shm_guard_arm(void)
{
	struct sigaction cur;
	if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_sigbus)
		return;
	pthread_mutex_lock(&guard_mu);
	long pg = sysconf(_SC_PAGESIZE);
	if (pg > 0)
		guard_page = (uintptr_t)pg;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* whoever installed a handler since (the screen's crash hook) is chained */
	if (sigaction(SIGBUS, &sa, &old) == 0 &&
	    !((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_sigbus))
		guard_prev = old;
	pthread_mutex_unlock(&guard_mu);
}

int pt_shm_guard_add(void *base, size_t size)
{
	int slot = -1;
	pt_shm_guard_arm();
	pthread_mutex_lock(&guard_mu);
	for (int i = 0; i < GUARD_SLOTS; i++) {
		if (guard_slots[i].start)
			continue;
		__atomic_store_n(&guard_slots[i].hit, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&guard_slots[i].end, (uintptr_t)base + size, __ATOMIC_RELEASE);
		__atomic_store_n(&guard_slots[i].start, (uintptr_t)base, __ATOMIC_RELEASE);
		slot = i;
		break;
	}
	pthread_mutex_unlock(&guard_mu);
	return slot;
}

void pt_shm_guard_remove(int slot)
{
	if (slot < 0 || slot >= GUARD_SLOTS)
		return;
	pthread_mutex_lock(&guard_mu);
	__atomic_store_n(&guard_slots[slot].start, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&guard_slots[slot].end, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&guard_mu);
}

int pt_shm_guard_hit(int slot)
{
	return slot >= 0 && slot < GUARD_SLOTS &&
	       __atomic_load_n(&guard_slots[slot].hit, __ATOMIC_ACQUIRE);
}

void pt_shm_guard_cover(void *base, size_t size, size_t keep_bytes)
{
	if (keep_bytes >= size)
		return;
	uintptr_t from = ((uintptr_t)base + keep_bytes + guard_page - 1) & ~(guard_page - 1);
	guard_zero(from, (uintptr_t)base + size);
}
