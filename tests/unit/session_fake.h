/*
 * session_fake.h - what the session tests share (test_session*.c): a fake
 * producer that builds segments by hand with shm.h in this process, in a
 * private PROFTOP_SESSION_DIR made by setup(), and small readers of what was
 * drained. The backends are not in libproftop_core.a, so their sources are
 * included here.
 */
#ifndef SESSION_FAKE_H
#define SESSION_FAKE_H

#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../backends/procstat.c"
#include "../../backends/session.c"
#include "../../backends/session_copy.c"
#include "../../backends/session_capture.c"
#include "../../backends/session_open.c"
#include "../../backends/session_scan.c"
#include "live/live.h"
#include "live/live_multi.h"
#include "proftop/agg.h"
#include "proftop/capture.h"
#include "proftop/counters.h"

static char g_dir[256];

/* ---- a fake producer ---- */

struct seg {
	char path[512];
	void *base;
	size_t size;
	struct pt_shm_header *h;
};

/* A pid standing for a job that has exited: the one asked for unless a
 * process has it now (pids wrap around: on a machine with pid_max 32768 a
 * full test run reaches these numbers), else the next free one 1000 on. */
static inline int32_t gone_pid(int32_t pid)
{
	while (kill(pid, 0) == 0 || errno != ESRCH)
		pid += 1000;
	return pid;
}

static inline void seg_make(struct seg *g, int32_t pid, uint32_t nrings, uint32_t slots, uint32_t strbytes)
{
	if (pid != (int32_t)getpid())
		pid = gone_pid(pid);
	snprintf(g->path, sizeof g->path, "%s/%d.session", g_dir, (int)pid);
	g->size = (size_t)pt_shm_segment_bytes(nrings, slots, strbytes);
	assert_true(g->size > 0);
	unlink(g->path);
	int fd = open(g->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)g->size), 0);
	g->base = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(g->base != MAP_FAILED);
	close(fd);
	struct pt_shm_header *h = g->h = g->base;
	h->magic = PT_SHM_MAGIC;
	h->abi = PT_SHM_ABI;
	h->header_bytes = PT_SHM_HEADER_BYTES;
	h->segment_bytes = g->size;
	h->pid = pid;
	h->uid = (uint32_t)geteuid();
	h->nrings = nrings;
	h->ring_slots = slots;
	h->ring_stride = sizeof(struct pt_shm_ring) + (uint64_t)slots * sizeof(struct pt_shm_rec);
	h->rings_offset = PT_SHM_HEADER_BYTES;
	h->strings_offset = h->rings_offset + nrings * h->ring_stride;
	h->strings_bytes = strbytes;
	h->strings_used = 8; /* offset 0 means "no name" */
	h->rank = h->local_rank = h->world_size = -1;
	h->state = PT_SHM_RUNNING;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	h->realtime_origin_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	h->clock_origin_ns = pt_now_ns();
	snprintf(h->cmdline, sizeof h->cmdline, "python train.py --lr 0.1");
}

static inline void seg_free(struct seg *g)
{
	munmap(g->base, g->size);
	unlink(g->path);
}

static inline uint32_t seg_str(struct seg *g, const char *s)
{
	char *area = (char *)g->base + g->h->strings_offset;
	uint32_t off = (uint32_t)g->h->strings_used, len = (uint32_t)strlen(s);
	memcpy(area + off, &len, 4);
	memcpy(area + off + 8, s, len + 1);
	g->h->strings_used = (off + 8 + len + 1 + 7) & ~7u;
	return off;
}

static inline struct pt_shm_ring *seg_ring(struct seg *g, uint32_t i, int32_t tid, const char *tname)
{
	struct pt_shm_ring *r = pt_shm_ring_at(g->base, g->h, i);
	r->tid = tid;
	r->generation++;
	snprintf(r->thread_name, sizeof r->thread_name, "%s", tname);
	r->state = PT_SHM_RING_ACTIVE;
	if (g->h->rings_claimed < i + 1)
		g->h->rings_claimed = i + 1;
	return r;
}

static inline void seg_push(struct seg *g, struct pt_shm_ring *r, uint8_t kind, uint32_t name,
		     uint64_t start, uint64_t dur, uint64_t arg)
{
	struct pt_shm_rec *rec = &pt_shm_ring_recs(r)[r->head & (g->h->ring_slots - 1)];
	rec->start_ns = start;
	rec->dur_ns = dur;
	rec->arg = arg;
	rec->name = name;
	rec->kind = kind;
	rec->flags = 0;
	rec->aux = 0;
	r->head++;
}

/* Events of a track in start order. */
static inline size_t track_events(struct pt_trace *t, uint32_t track, struct pt_event *out, size_t cap)
{
	struct pt_store_iter it;
	size_t n = 0;
	pt_store_iter_init(&it, t->store, track, 0, UINT64_MAX);
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it)))
		if (n < cap)
			out[n++] = *ev;
	pt_store_iter_done(&it);
	return n;
}

static inline const char *name_of(struct pt_trace *t, const struct pt_event *ev)
{
	return pt_trace_str(t, ev->name_id);
}

static inline int open_seg(struct seg *g, struct pt_session **s)
{
	char err[512] = "";
	int rc = pt_session_open(g->path, s, err, sizeof err);
	if (rc)
		print_message("# open: %s\n", err);
	return rc;
}


static inline void expect_refused(const char *path, int want_rc, const char *want_text)
{
	struct pt_session *s = NULL;
	char err[512] = "";
	int rc = pt_session_open(path, &s, err, sizeof err);
	if (rc != want_rc || !strstr(err, want_text))
		print_message("# rc %d, err: %s\n", rc, err);
	assert_int_equal(rc, want_rc);
	assert_null(s);
	assert_non_null(strstr(err, want_text));
}


static inline int setup(void **state)
{
	snprintf(g_dir, sizeof g_dir, "%s/proftop-test-session.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_dir))
		return -1;
	setenv("PROFTOP_SESSION_DIR", g_dir, 1);
	return 0;
}

static inline int teardown(void **state)
{
	return rmdir(g_dir);
}

#endif
