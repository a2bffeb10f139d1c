/*
 * session_scan.c - finding sessions: lists the "<pid>.session" segments in
 * this user's session directory (pt_shm_dir) with their state, and removes
 * the segments of owners that are gone, once they are older than
 * PT_SESSION_STALE_NS and no live reader holds them. The probe never unlinks
 * its own file (an exited session stays readable), so this is where stale
 * segments go.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proftop/error.h"
#include "proftop/session.h"
#include "util.h"

int pt_session_path(int32_t pid, char *buf, size_t len, char *err, size_t errlen)
{
	char dir[512];
	int rc = pt_shm_dir(dir, sizeof dir, 0, err, errlen);
	if (rc)
		return rc;
	int n = snprintf(buf, len, "%s/%d.session", dir, (int)pid);
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "session path too long");
		return PT_EINVAL;
	}
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "<digits>.session" -> pid, else -1. */
static int32_t session_pid(const char *name)
{
	const char *p = name;
	int64_t v = 0;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > INT32_MAX)
			return -1;
		p++;
	}
	if (p == name || strcmp(p, ".session") != 0 || v <= 0)
		return -1;
	return (int32_t)v;
}

static uint64_t producer_drops(struct pt_session *s)
{
	const struct pt_shm_header *h = pt_session_header(s);
	uint64_t d = __atomic_load_n(&h->dropped_no_ring, __ATOMIC_RELAXED) +
		     __atomic_load_n(&h->dropped_no_string, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < h->nrings; i++) {
		struct pt_shm_ring *r = pt_shm_ring_at((void *)h, h, i);
		d += __atomic_load_n(&r->dropped, __ATOMIC_RELAXED) +
		     __atomic_load_n(&r->overwritten, __ATOMIC_RELAXED);
	}
	return d;
}

static int reader_live(const struct pt_shm_header *h)
{
	uint64_t hb = __atomic_load_n(&h->reader_heartbeat_ns, __ATOMIC_ACQUIRE);
	int32_t rp = __atomic_load_n(&h->reader_pid, __ATOMIC_RELAXED);
	if (!hb || rp <= 0 || rp == (int32_t)getpid())
		return 0;
	uint64_t now = pt_now_ns();
	if (now > hb && now - hb > PT_SHM_READER_TIMEOUT_NS)
		return 0;
	return !(kill(rp, 0) != 0 && errno == ESRCH);
}

static void fill_info(struct pt_session_info *in, struct pt_session *s, const struct stat *st,
		      int clean, int *remove)
{
	const struct pt_shm_header *h = pt_session_header(s);
	uint64_t now_real = realtime_ns();
	in->valid = 1;
	in->exited = pt_session_owner_exited(s);
	in->rank = h->rank;
	uint64_t origin_real = h->realtime_origin_ns;
	in->age_ns = now_real > origin_real ? now_real - origin_real : 0;
	in->dropped = producer_drops(s);
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
}

static int cmp_info(const void *a, const void *b)
{
	const struct pt_session_info *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

int pt_session_list(struct pt_session_info **out, size_t *n, int clean, size_t *cleaned,
		    char *err, size_t errlen)
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
	size_t cap = 0, k = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		int32_t pid = session_pid(de->d_name);
		if (pid < 0)
			continue;
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
			fill_info(in, s, &st, clean, &remove);
			pt_session_close(s);
		}
		if (remove && unlink(in->path) == 0) {
			if (cleaned)
				(*cleaned)++;
			continue;
		}
		k++;
	}
	closedir(d);
	if (k)
		qsort(v, k, sizeof *v, cmp_info);
	*out = v;
	*n = k;
	return 0;
}
