/*
 * test_session.c - the session reader and the /proc sampler, against
 * segments built by hand with shm.h (a fake producer in this process) in a
 * private PROFTOP_SESSION_DIR: drained events (kinds, names, tracks,
 * labels, order), EXT pairing, overwrite and out-of-range indices, drop
 * counters, exit detection, refusals of bad segments, listing and cleanup,
 * and CPU/RSS samples from a fake /proc root. Issue 6's corruptions each
 * have a test: bad magic/ABI/header, a layout rewritten after attach,
 * heads/tails anywhere in 64 bits, lying string lengths and missing NULs,
 * and a segment truncated by another process after attach (the fstat check
 * and the SIGBUS guard, which leaves every other SIGBUS alone).
 *
 * The backends are not in libproftop_core.a, so their sources are included.
 */
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
static int32_t gone_pid(int32_t pid)
{
	while (kill(pid, 0) == 0 || errno != ESRCH)
		pid += 1000;
	return pid;
}

static void seg_make(struct seg *g, int32_t pid, uint32_t nrings, uint32_t slots, uint32_t strbytes)
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

static void seg_free(struct seg *g)
{
	munmap(g->base, g->size);
	unlink(g->path);
}

static uint32_t seg_str(struct seg *g, const char *s)
{
	char *area = (char *)g->base + g->h->strings_offset;
	uint32_t off = (uint32_t)g->h->strings_used, len = (uint32_t)strlen(s);
	memcpy(area + off, &len, 4);
	memcpy(area + off + 8, s, len + 1);
	g->h->strings_used = (off + 8 + len + 1 + 7) & ~7u;
	return off;
}

static struct pt_shm_ring *seg_ring(struct seg *g, uint32_t i, int32_t tid, const char *tname)
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

static void seg_push(struct seg *g, struct pt_shm_ring *r, uint8_t kind, uint32_t name,
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
static size_t track_events(struct pt_trace *t, uint32_t track, struct pt_event *out, size_t cap)
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

static const char *name_of(struct pt_trace *t, const struct pt_event *ev)
{
	return pt_trace_str(t, ev->name_id);
}

static int open_seg(struct seg *g, struct pt_session **s)
{
	char err[512] = "";
	int rc = pt_session_open(g->path, s, err, sizeof err);
	if (rc)
		print_message("# open: %s\n", err);
	return rc;
}

/* ---- tests ---- */

static void test_drain_basic(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 4, 64, 4096); /* a live owner: the reader heartbeats */
	uint32_t mm = seg_str(&g, "aten::mm"), step = seg_str(&g, "ProfileStep#1");
	uint32_t cnt = seg_str(&g, "loss"), tn = seg_str(&g, "renamed worker");
	struct pt_shm_ring *r0 = seg_ring(&g, 0, 100, "main");
	struct pt_shm_ring *r1 = seg_ring(&g, 1, 101, "loader");
	double loss = 2.5;
	uint64_t bits;
	memcpy(&bits, &loss, 8);
	/* records arrive in END order: the op ends before its step */
	seg_push(&g, r0, PT_KIND_OPERATOR, mm, 1100, 200, 0);
	seg_push(&g, r0, PT_KIND_PROFILE_STEP, step, 1000, 1000, 32);
	seg_push(&g, r0, PT_KIND_COUNTER, cnt, 1500, 0, bits);
	seg_push(&g, r1, PT_KIND_DATALOADER, 0, 900, 50, 0);
	seg_push(&g, r1, PT_SHM_REC_THREAD_NAME, tn, 0, 0, 0);

	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t, 12345), 4);
	assert_int_equal(g.h->reader_heartbeat_ns, 12345);
	assert_int_equal(g.h->reader_pid, getpid());
	/* a reader slot of its own, its cursors published there; tails are the
	 * producer's and stay */
	int slot = pt_session_reader_slot(s);
	assert_int_equal(slot, 0);
	assert_int_equal(g.h->readers[0].pid, getpid());
	assert_int_equal(g.h->readers[0].heartbeat_ns, 12345);
	assert_int_equal(r0->cursor[0], 3);
	assert_int_equal(r1->cursor[0], 2);
	assert_int_equal(r0->tail, 0);
	assert_int_equal(t->ntracks, 2);
	assert_int_equal(t->tracks[0].key.pid, getpid());
	assert_int_equal(t->tracks[0].key.tid, 100);
	assert_string_equal(pt_trace_str(t, t->tracks[0].label), "main");
	assert_string_equal(pt_trace_str(t, t->tracks[1].label), "renamed worker");

	struct pt_event ev[8];
	assert_int_equal(track_events(t, 0, ev, 8), 3);
	assert_int_equal(ev[0].kind, PT_KIND_PROFILE_STEP); /* start order once stored */
	assert_string_equal(name_of(t, &ev[0]), "ProfileStep#1");
	assert_int_equal(ev[0].arg, 32);
	assert_int_equal(ev[1].kind, PT_KIND_OPERATOR);
	assert_string_equal(name_of(t, &ev[1]), "aten::mm");
	assert_int_equal(ev[1].start_ns, 1100);
	assert_int_equal(ev[1].dur_ns, 200);
	assert_int_equal(ev[2].kind, PT_KIND_COUNTER);
	double v;
	memcpy(&v, &ev[2].arg, 8);
	assert_true(v == 2.5);
	assert_int_equal(track_events(t, 1, ev, 8), 1);
	assert_int_equal(ev[0].kind, PT_KIND_DATALOADER);
	assert_int_equal(ev[0].name_id, 0);

	/* nothing new: nothing added; more later: only the new ones */
	assert_int_equal(pt_session_drain(s, t, 12346), 0);
	seg_push(&g, r0, PT_KIND_OPERATOR, mm, 2100, 10, 0);
	assert_int_equal(pt_session_drain(s, t, 12347), 1);
	assert_int_equal(pt_store_count(t->store), 5);
	assert_int_equal(pt_session_stats(s)->bad_strings, 0);

	pt_session_close(s);
	assert_int_equal(g.h->reader_pid, 0); /* detached */
	assert_int_equal(g.h->reader_heartbeat_ns, 0);
	assert_int_equal(g.h->readers[0].pid, 0); /* its slot is free again */
	assert_int_equal(g.h->readers[0].heartbeat_ns, 0);
	pt_trace_free(t);
	seg_free(&g);
}

/* A tagged session: a launch and its kernel keep one id, tagged, so two
 * processes' ids 77 stay apart in one trace; an id past 2^27 wraps within
 * the session's own tag; tags past 15 wrap to 1..15. */
static void test_corr_tag(void **state)
{
	(void)state;
	struct seg g;
	seg_make(&g, 4244, 2, 16, 4096);
	uint32_t k = seg_str(&g, "volta_sgemm"), launch = seg_str(&g, "cudaLaunchKernel");
	struct pt_shm_ring *r0 = seg_ring(&g, 0, 7, "main");
	struct pt_shm_ring *r1 = seg_ring(&g, 1, 8, "cupti");
	seg_push(&g, r0, PT_KIND_CUDA_RUNTIME, launch, 100, 5, 0);
	seg_push(&g, r0, PT_SHM_REC_EXT, 0, 77, 0, 0);
	seg_push(&g, r0, PT_KIND_CUDA_RUNTIME, launch, 110, 5, 0);
	seg_push(&g, r0, PT_SHM_REC_EXT, 0, (1u << 27) + 5, 0, 0);
	seg_push(&g, r1, PT_KIND_KERNEL, k, 200, 50, 0);
	seg_push(&g, r1, PT_SHM_REC_EXT, 0, 77, 7, 0);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	pt_session_set_corr_tag(s, 3 + PT_SESSION_CORR_TAGS); /* wraps to 3 */
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	pt_session_drain(s, t, 1);
	pt_session_drain(s, t, 2);
	uint32_t tag = 3u << 27;
	int seen = 0;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		struct pt_event ev[4];
		size_t n = track_events(t, i, ev, 4);
		if (t->tracks[i].device >= 0) {
			assert_int_equal(n, 1);
			assert_int_equal(ev[0].corr, tag | 77);
			seen++;
		} else if (t->tracks[i].key.tid == 7) {
			assert_int_equal(n, 2);
			assert_int_equal(ev[0].corr, tag | 77);
			assert_int_equal(ev[1].corr, tag | 5);
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);
}

static void test_ext_and_device(void **state)
{
	struct seg g;
	seg_make(&g, 4243, 2, 16, 4096);
	uint32_t k = seg_str(&g, "volta_sgemm"), launch = seg_str(&g, "cudaLaunchKernel");
	struct pt_shm_ring *r0 = seg_ring(&g, 0, 7, "main");
	struct pt_shm_ring *r1 = seg_ring(&g, 1, 8, "cupti");
	seg_push(&g, r0, PT_KIND_CUDA_RUNTIME, launch, 100, 5, 0);
	seg_push(&g, r0, PT_SHM_REC_EXT, 0, 77, 0, 0);
	seg_push(&g, r1, PT_SHM_REC_DEVICE, 0, 0, 0, 1);
	seg_push(&g, r1, PT_KIND_KERNEL, k, 200, 50, 0);
	seg_push(&g, r1, PT_SHM_REC_EXT, 0, 77, (1ull << 32) | 7, 0);
	seg_push(&g, r1, PT_KIND_KERNEL, k, 300, 50, 0); /* no EXT: ring's device, stream 0 */
	seg_push(&g, r1, PT_SHM_REC_EXT, 0, 1, 0, 0);    /* pairs with the kernel above */
	seg_push(&g, r1, PT_SHM_REC_EXT, 0, 1, 0, 0);    /* a second EXT: bad */
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	pt_session_drain(s, t, 1);
	pt_session_drain(s, t, 2); /* a record held for its EXT is out by the next poll */
	assert_int_equal(pt_session_stats(s)->events, 3);
	assert_int_equal(pt_session_stats(s)->bad_records, 1);
	int found_dev = 0;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		struct pt_event ev[4];
		size_t n = track_events(t, i, ev, 4);
		if (t->tracks[i].device >= 0) {
			found_dev++;
			assert_int_equal(n, 1);
			assert_int_equal(ev[0].kind, PT_KIND_KERNEL);
			if (t->tracks[i].stream == 7) {
				assert_int_equal(t->tracks[i].device, 1);
				assert_int_equal(ev[0].corr, 77);
			} else {
				assert_int_equal(t->tracks[i].stream, 0);
				assert_int_equal(t->tracks[i].device, 0);
			}
		} else if (t->tracks[i].key.tid == 7) {
			assert_int_equal(n, 1);
			assert_int_equal(ev[0].kind, PT_KIND_CUDA_RUNTIME);
			assert_int_equal(ev[0].corr, 77);
		}
	}
	assert_int_equal(found_dev, 2);
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);

	/* a record still waiting for its EXT (live owner) is not carried into
	 * another trace: its track and name ids belong to the first one */
	seg_make(&g, getpid(), 1, 16, 4096);
	k = seg_str(&g, "volta_sgemm");
	r1 = seg_ring(&g, 0, 8, "cupti");
	seg_push(&g, r1, PT_SHM_REC_DEVICE, 0, 0, 0, 1);
	seg_push(&g, r1, PT_KIND_KERNEL, k, 400, 5, 0);
	assert_int_equal(open_seg(&g, &s), 0);
	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t, 3), 0); /* held */
	struct pt_trace *t2 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t2, 4), 0);
	assert_int_equal(pt_store_count(t2->store), 0);
	pt_trace_free(t2);
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);
}

static void test_overwrite_and_ranges(void **state)
{
	struct seg g;
	seg_make(&g, 4244, 2, 8, 4096);
	uint32_t n = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	/* flight recorder: 20 written, the producer moved tail to head - slots */
	for (int i = 0; i < 20; i++)
		seg_push(&g, r, PT_KIND_OPERATOR, n, (uint64_t)i * 10, 5, 0);
	r->tail = 12;
	r->overwritten = 12;
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t, 1), 8);
	struct pt_event ev[16];
	assert_int_equal(track_events(t, 0, ev, 16), 8);
	assert_int_equal(ev[0].start_ns, 120); /* the oldest kept is index 12 */
	/* the 12 before it: overwritten while no reader was attached */
	assert_int_equal(t->warnings[PT_WARN_SOURCE_OVERWRITTEN], 12);
	assert_int_equal(t->warnings[PT_WARN_SOURCE_DROPPED], 0);
	assert_int_equal(pt_trace_source_lost(t), 12);
	/* all of them before this reader looked: none lost while it read */
	assert_int_equal(t->before_attach[0], 12);
	assert_int_equal(t->before_attach[1], 0);
	assert_int_equal(pt_trace_lost_before_attach(t), 12);
	char causes[120];
	pt_trace_loss_causes_attached(t, causes, sizeof causes, 1);
	assert_string_equal(causes, "");
	pt_trace_loss_causes(t, causes, sizeof causes, 1);
	assert_string_equal(causes, "12 overwr.");
	/* (its owner is gone: no slot, the cursor is the reader's own) */
	assert_int_equal(pt_session_reader_slot(s), -1);
	assert_int_equal(s->cp[0].cursor, 20);

	/* a corrupt head far beyond tail + slots: clamped to one ring, counted */
	r->head = 1000003;
	assert_int_equal(pt_session_drain(s, t, 2), 8);
	assert_int_equal(pt_session_stats(s)->bad_rings, 1);
	assert_int_equal(s->cp[0].cursor, 1000003);
	assert_int_equal(pt_trace_source_lost(t), 12); /* corrupt indices are no records */
	/* head below our cursor: nothing, and the cursor never goes back */
	r->head = 5;
	assert_int_equal(pt_session_drain(s, t, 3), 0);
	assert_int_equal(s->cp[0].cursor, 1000003);

	/* unknown kinds and huge durations are skipped and counted */
	r->head = r->tail = 0;
	s->cp[0].cursor = 0; /* as a reader of a new segment would be */
	seg_push(&g, r, 0x7f, n, 1, 1, 0);
	seg_push(&g, r, 0x9f, n, 1, 1, 0);
	seg_push(&g, r, PT_KIND_OPERATOR, n, 1, PT_MAX_DUR_NS + 1, 0);
	assert_int_equal(pt_session_drain(s, t, 4), 0);
	assert_int_equal(pt_session_stats(s)->bad_records, 2);
	assert_int_equal(t->warnings[PT_WARN_HUGE_DUR], 1);

	/* drop counters: deltas only */
	r->dropped = 5;
	g.h->dropped_no_ring = 2;
	g.h->dropped_no_string = 1;
	pt_session_drain(s, t, 5);
	assert_int_equal(t->warnings[PT_WARN_SOURCE_DROPPED], 8);
	r->dropped = 6;
	pt_session_drain(s, t, 6);
	assert_int_equal(t->warnings[PT_WARN_SOURCE_DROPPED], 9);
	assert_int_equal(pt_trace_source_lost(t), 12 + 9);

	/* an exited thread's ring is freed once drained */
	seg_push(&g, r, PT_KIND_OPERATOR, n, 50, 5, 0);
	r->state = PT_SHM_RING_EXITED;
	assert_int_equal(pt_session_drain(s, t, 7), 1);
	assert_int_equal(r->state, PT_SHM_RING_FREE);
	/* reused by a new thread: its events go to the new tid's track */
	seg_ring(&g, 0, 2, "second");
	seg_push(&g, r, PT_KIND_OPERATOR, n, 60, 5, 0);
	assert_int_equal(pt_session_drain(s, t, 8), 1);
	uint32_t tr = t->ntracks - 1;
	assert_int_equal(t->tracks[tr].key.tid, 2);
	assert_string_equal(pt_trace_str(t, t->tracks[tr].label), "second");
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);
}

static void test_bad_strings(void **state)
{
	struct seg g;
	seg_make(&g, 4245, 1, 16, 4096);
	uint32_t good = seg_str(&g, "fine");
	uint32_t nonul = seg_str(&g, "abcd");
	char *area = (char *)g.base + g.h->strings_offset;
	area[nonul + 8 + 4] = 'X'; /* the NUL overwritten */
	uint32_t longlen = seg_str(&g, "xy");
	uint32_t big = 1u << 30;
	memcpy(area + longlen, &big, 4);
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	uint32_t offs[] = {good, nonul, longlen, 4096, 4095, 3, 0xfffffff8u, 4088};
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
		seg_push(&g, r, PT_KIND_USER_DEFINED, offs[i], i, 1, 0);
	seg_push(&g, r, PT_SHM_REC_THREAD_NAME, 12345, 0, 0, 0);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t, 1), 8); /* events kept, bad names dropped */
	assert_int_equal(pt_session_stats(s)->bad_strings, 8);
	struct pt_event ev[16];
	assert_int_equal(track_events(t, 0, ev, 16), 8);
	assert_string_equal(name_of(t, &ev[0]), "fine");
	for (int i = 1; i < 8; i++)
		assert_int_equal(ev[i].name_id, 0);
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);
}

static void expect_refused(const char *path, int want_rc, const char *want_text)
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

static void test_refusals(void **state)
{
	struct seg g;
	seg_make(&g, 4246, 1, 16, 4096);
	g.h->magic ^= 1;
	expect_refused(g.path, PT_EFORMAT, "bad magic");
	g.h->magic ^= 1;
	g.h->abi = 99;
	expect_refused(g.path, PT_EFORMAT, "ABI 99");
	g.h->abi = PT_SHM_ABI;
	g.h->ring_slots = 32;
	expect_refused(g.path, PT_EFORMAT, "inconsistent layout");
	g.h->ring_slots = 16;
	g.h->strings_offset += 8;
	expect_refused(g.path, PT_EFORMAT, "inconsistent offsets");
	g.h->strings_offset -= 8;
	g.h->segment_bytes += 4096;
	expect_refused(g.path, PT_ETRUNC, "size mismatch");
	g.h->segment_bytes -= 4096;

	/* the file shorter than the header says */
	assert_int_equal(truncate(g.path, (off_t)g.size - 4096), 0);
	expect_refused(g.path, PT_ETRUNC, "size mismatch");
	assert_int_equal(truncate(g.path, 100), 0);
	expect_refused(g.path, PT_ETRUNC, "truncated");
	munmap(g.base, g.size);

	seg_make(&g, 4246, 1, 16, 4096);
	assert_int_equal(chmod(g.path, 0644), 0);
	expect_refused(g.path, PT_EPERM, "open to other users");
	assert_int_equal(chmod(g.path, 0600), 0);

	char link[600];
	snprintf(link, sizeof link, "%s/4247.session", g_dir);
	assert_int_equal(symlink(g.path, link), 0);
	expect_refused(link, PT_EPERM, "symlink");
	unlink(link);

	char dirp[600];
	snprintf(dirp, sizeof dirp, "%s/4248.session", g_dir);
	assert_int_equal(mkdir(dirp, 0700), 0);
	expect_refused(dirp, PT_EPERM, "not a regular file");
	rmdir(dirp);

	if (geteuid() == 0) {
		assert_int_equal(chown(g.path, 1, 1), 0);
		expect_refused(g.path, PT_EPERM, "owned by uid 1");
		assert_int_equal(chown(g.path, 0, 0), 0);
	}
	/* the same bytes through the in-memory entry point */
	struct pt_session *s;
	char err[256];
	assert_int_equal(pt_session_from_mem(g.base, 100, &s, err, sizeof err), PT_ETRUNC);
	assert_int_equal(pt_session_from_mem(g.base, g.size, &s, err, sizeof err), 0);
	pt_session_close(s);
	seg_free(&g);
	expect_refused(g.path, PT_ENOENT, "No such file");
}

/* Random bytes in the live parts of a valid layout never crash the reader. */
static void test_garbage(void **state)
{
	struct seg g;
	seg_make(&g, 4249, 4, 16, 4096);
	srand(7);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	for (int round = 0; round < 200; round++) {
		unsigned char *p = (unsigned char *)g.base + PT_SHM_HEADER_BYTES;
		for (size_t i = 0; i < g.size - PT_SHM_HEADER_BYTES; i++)
			p[i] = (unsigned char)rand();
		g.h->rings_claimed = (uint32_t)rand();
		struct pt_session *s;
		assert_int_equal(pt_session_from_mem(g.base, g.size, &s, NULL, 0), 0);
		pt_session_drain(s, t, (uint64_t)round + 1);
		pt_session_close(s);
	}
	pt_trace_free(t);
	seg_free(&g);
}

/*
 * The owner rewrites the layout while readers open the segment: a child
 * flips nrings and ring_slots between the true values and ones far past the
 * file, as fast as it can. Every open either refuses or reads with the
 * layout it validated (one copy of the header, never read again): before,
 * a reader validated one value and then used another (ASan: a read past
 * the mapping in pt_session_producer_drops).
 */
static void test_header_flipped_while_opening(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 1, 16, 4096);
	uint32_t n = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 11, "main");
	seg_push(&g, r, PT_KIND_OPERATOR, n, 1100, 200, 0);
	pid_t parent = getpid();
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		volatile uint32_t *nr = &g.h->nrings, *slots = &g.h->ring_slots;
		for (unsigned long i = 0;; i++) {
			*nr = (i & 1) ? PT_SHM_MAX_RINGS : 1;
			*slots = (i & 2) ? PT_SHM_MAX_RING_SLOTS : 16;
			if ((i & 0xfffff) == 0 && getppid() != parent)
				_exit(0);
		}
	}
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	int opened = 0;
	for (int k = 0; k < 20000; k++) {
		struct pt_session *s;
		if (pt_session_open(g.path, &s, NULL, 0) != 0)
			continue;
		opened++;
		assert_int_equal(s->nrings, 1);
		assert_int_equal(s->ring_slots, 16);
		(void)pt_session_producer_drops(s);
		pt_session_drain(s, t, (uint64_t)k + 1);
		pt_session_close(s);
	}
	kill(c, SIGKILL);
	int st;
	assert_int_equal(waitpid(c, &st, 0), c);
	g.h->nrings = 1;
	g.h->ring_slots = 16;
	pt_trace_free(t);
	seg_free(&g);
	print_message("header flipped: %d of 20000 opens read it whole\n", opened);
}

/* ---- corrupted segments (docs/reliability.md, promise 3): an error or a count, never a crash ---- */

/* Bad magic / version / header size: refused at open with a reason. */
static void test_corrupt_header(void **state)
{
	struct seg g;
	seg_make(&g, 4250, 1, 16, 4096);
	g.h->magic = 0;
	expect_refused(g.path, PT_EFORMAT, "bad magic");
	memcpy(&g.h->magic, "PRFTOTP2", 8);
	expect_refused(g.path, PT_EFORMAT, "bad magic");
	g.h->magic = PT_SHM_MAGIC;
	g.h->abi = 0;
	expect_refused(g.path, PT_EFORMAT, "session ABI 0");
	g.h->abi = PT_SHM_ABI + 1;
	expect_refused(g.path, PT_EFORMAT, "upgrade one of them");
	g.h->abi = PT_SHM_ABI;
	g.h->header_bytes = 8;
	expect_refused(g.path, PT_EFORMAT, "bad header size");
	g.h->header_bytes = PT_SHM_HEADER_BYTES;
	g.h->nrings = 0;
	expect_refused(g.path, PT_EFORMAT, "inconsistent layout");
	g.h->nrings = 1;
	g.h->ring_slots = 12; /* not a power of two */
	expect_refused(g.path, PT_EFORMAT, "inconsistent layout");
	g.h->ring_slots = 16;
	g.h->ring_stride = 8;
	expect_refused(g.path, PT_EFORMAT, "inconsistent offsets");
	g.h->ring_stride = sizeof(struct pt_shm_ring) + 16 * sizeof(struct pt_shm_rec);
	g.h->segment_bytes = UINT64_MAX;
	expect_refused(g.path, PT_ETRUNC, "size mismatch");
	g.h->segment_bytes = g.size;
	/* a cmdline with no NUL: cut, escaped */
	memset(g.h->cmdline, '\033', sizeof g.h->cmdline);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	char desc[PT_SHM_CMDLINE_BYTES + 64];
	pt_session_describe(s, desc, sizeof desc);
	assert_null(strchr(desc, '\033'));
	pt_session_close(s);
	seg_free(&g);
}

/* The producer rewrites the layout after the reader validated it: the
 * reader keeps using its own copies (drain, drop totals, the listing). */
static void test_header_rewritten_after_attach(void **state)
{
	struct seg g;
	seg_make(&g, 4251, 2, 16, 4096);
	uint32_t n = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	seg_push(&g, r, PT_KIND_OPERATOR, n, 10, 5, 0);
	r->dropped = 3;
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	g.h->nrings = 1000;
	g.h->ring_slots = 1u << 24;
	g.h->rings_offset = 1ull << 40;
	g.h->ring_stride = 12345;
	g.h->strings_offset = UINT64_MAX - 8;
	g.h->strings_bytes = UINT32_MAX;
	g.h->rings_claimed = UINT32_MAX;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t, 1), 1);
	assert_string_equal(name_of(t, &(struct pt_event){.name_id = 0}), "");
	assert_int_equal(pt_session_producer_drops(s), 3);
	pt_session_close(s);
	struct pt_session_info *v;
	size_t cnt;
	char err[256];
	assert_int_equal(pt_session_list(&v, &cnt, 0, NULL, err, sizeof err), 0);
	assert_int_equal(cnt, 1);
	assert_false(v[0].valid); /* refused now, with a reason */
	assert_non_null(strstr(v[0].why, "inconsistent layout"));
	free(v);
	pt_trace_free(t);
	seg_free(&g);
}

/* Heads and tails anywhere in 64 bits: clamped to one ring, counted; the
 * tail never moves backwards; no endless loop. */
static void test_head_tail_out_of_range(void **state)
{
	struct seg g;
	seg_make(&g, 4252, 2, 8, 4096);
	uint32_t n = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	for (int i = 0; i < 8; i++)
		seg_push(&g, r, PT_KIND_OPERATOR, n, (uint64_t)i, 1, 0);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct {
		uint64_t head, tail, events, bad;
	} cases[] = {
		{UINT64_MAX, 0, 8, 1},               /* head at the top: one ring's worth */
		{UINT64_MAX, UINT64_MAX, 0, 0},      /* empty at the top */
		{0, UINT64_MAX, 0, 0},               /* tail past head */
		{(1ull << 63) + 3, 1ull << 63, 3, 0}, /* far away but consistent */
		{5, 3, 2, 0},
		{9, 1, 8, 0},                        /* exactly one ring */
		{10, 1, 8, 1},                       /* one more than a ring */
	};
	uint64_t bad0 = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		r->head = cases[i].head;
		r->tail = cases[i].tail;
		s->cp[0].cursor = cases[i].tail; /* the reader was there */
		s->cp[0].seen = 1;
		uint64_t got = pt_session_drain(s, t, i + 1);
		if (got != cases[i].events)
			print_message("# case %zu: %llu events\n", i, (unsigned long long)got);
		assert_int_equal(got, cases[i].events);
		assert_int_equal(pt_session_stats(s)->bad_rings - bad0, cases[i].bad);
		bad0 = pt_session_stats(s)->bad_rings;
		uint64_t want = cases[i].head > cases[i].tail ? cases[i].head : cases[i].tail;
		assert_int_equal(s->cp[0].cursor, want);
		assert_int_equal(r->tail, cases[i].tail); /* the producer's, untouched */
	}
	/* rings_claimed beyond nrings, a ring state out of the enum */
	g.h->rings_claimed = UINT32_MAX;
	struct pt_shm_ring *r1 = pt_shm_ring_at(g.base, g.h, 1);
	r1->state = 77;
	r1->head = 3;
	assert_int_equal(pt_session_drain(s, t, 100), 3); /* its 3 zeroed records */
	/* an end past INT64_MAX: skipped as a bad timestamp, like the Chrome reader's */
	r->head = r->tail = 0;
	s->cp[0].cursor = 0;
	seg_push(&g, r, PT_KIND_OPERATOR, n, UINT64_MAX - 5, 10, 0);
	seg_push(&g, r, PT_KIND_OPERATOR, n, (uint64_t)INT64_MAX - 10, 11, 0);
	seg_push(&g, r, PT_KIND_OPERATOR, n, (uint64_t)INT64_MAX - 10, 10, 0);
	assert_int_equal(pt_session_drain(s, t, 101), 1);
	assert_int_equal(t->warnings[PT_WARN_BAD_TS], 2);
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);
}

/* String lengths that lie, strings and thread names with no terminator. */
static void test_lying_lengths(void **state)
{
	struct seg g;
	seg_make(&g, 4253, 1, 32, 256);
	char *area = (char *)g.base + g.h->strings_offset;
	uint32_t ok = seg_str(&g, "ok");
	uint32_t lies[6];
	uint32_t lens[] = {UINT32_MAX, UINT32_MAX - 7, 1u << 31, 256, 256 - 16, 0};
	for (int i = 0; i < 6; i++) {
		lies[i] = seg_str(&g, "abc");
		memcpy(area + lies[i], &lens[i], 4);
	}
	area[lies[5] + 8] = 'x'; /* length 0, but no NUL right after */
	/* the last entry runs to the end of the area with no NUL */
	uint32_t last = (uint32_t)g.h->strings_used, len = 256 - last - 8;
	memcpy(area + last, &len, 4);
	memset(area + last + 8, 'z', len);
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	memset(r->thread_name, 'N', sizeof r->thread_name); /* no NUL */
	seg_push(&g, r, PT_KIND_OPERATOR, ok, 1, 1, 0);
	for (int i = 0; i < 6; i++)
		seg_push(&g, r, PT_KIND_OPERATOR, lies[i], 2 + i, 1, 0);
	seg_push(&g, r, PT_KIND_OPERATOR, last, 9, 1, 0);
	seg_push(&g, r, PT_SHM_REC_THREAD_NAME, last, 0, 0, 0);
	seg_push(&g, r, PT_SHM_REC_THREAD_NAME, lies[0], 0, 0, 0);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t, 1), 8);
	assert_int_equal(pt_session_stats(s)->bad_strings, 9);
	struct pt_event ev[16];
	assert_int_equal(track_events(t, 0, ev, 16), 8);
	assert_string_equal(name_of(t, &ev[0]), "ok");
	for (int i = 1; i < 8; i++)
		assert_int_equal(ev[i].name_id, 0);
	/* the unterminated thread name is cut at its field */
	const char *label = pt_trace_str(t, t->tracks[0].label);
	assert_true(strlen(label) < sizeof r->thread_name);
	assert_true(label[0] == 'N');
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);
}

static void truncate_from_child(const char *path, off_t size)
{
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(truncate(path, size) == 0 ? 0 : 1);
	int st;
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Another process truncates the segment while proftop has it mapped: the
 * next poll says so and stops reading; nothing faults (SIGBUS). */
static void test_truncated_after_attach(void **state)
{
	off_t sizes[] = {PT_SHM_HEADER_BYTES + 100, 0};
	for (size_t k = 0; k < 2; k++) {
		struct seg g;
		seg_make(&g, getpid(), 2, 64, 4096);
		uint32_t n = seg_str(&g, "op");
		struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
		seg_push(&g, r, PT_KIND_OPERATOR, n, 1, 1, 0);
		struct pt_backend *b;
		char err[256];
		struct pt_backend_args a = {.session_path = g.path};
		assert_int_equal(pt_backend_session.open(&b, &a, err, sizeof err), 0);
		struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
		assert_true(b->ops->poll(b, t, 1) >= 0);
		assert_int_equal(pt_store_count(t->store), 1);
		seg_push(&g, r, PT_KIND_OPERATOR, n, 2, 1, 0);
		munmap(g.base, g.size); /* the producer's view is gone with the file */
		truncate_from_child(g.path, sizes[k]);
		assert_int_equal(b->ops->poll(b, t, 2), PT_ETRUNC);
		assert_non_null(strstr(b->ops->last_error(b), "segment shrank"));
		assert_non_null(strstr(b->ops->last_error(b), "stopped reading it"));
		assert_int_equal(b->ops->poll(b, t, 3), PT_ETRUNC); /* and stays so */
		assert_int_equal(pt_store_count(t->store), 1);
		char desc[256];
		b->ops->describe(b, desc, sizeof desc);
		assert_non_null(strstr(desc, "segment truncated"));
		/* the header is readable (zeros past the end), not a fault */
		struct pt_session *s = pt_backend_session_of(b);
		volatile uint64_t m = pt_session_header(s)->magic;
		(void)m;
		assert_int_equal(pt_session_producer_drops(s), 0);
		b->ops->close(b);
		pt_trace_free(t);
		unlink(g.path);
	}
}

/* The truncation lands between the poll's size check and the copy: the
 * SIGBUS guard turns the fault into zeros, the copy is thrown away and the
 * next poll reports it. copy_ring is called directly to skip the check. */
static void test_truncated_during_copy(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 2, 1024, 4096);
	uint32_t n = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 1, 1, "t");
	for (int i = 0; i < 1000; i++)
		seg_push(&g, r, PT_KIND_OPERATOR, n, (uint64_t)i, 1, 0);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	munmap(g.base, g.size);
	truncate_from_child(g.path, PT_SHM_HEADER_BYTES + 4096);
	struct stage st = {NULL, NULL, 0};
	copy_ring(s, &st, 1); /* ring 1 lies wholly past the new end */
	apply(s, t, &st, 0);
	pt_session_stage_recycle(s, &st);
	assert_true(pt_shm_guard_hit(s->guard));
	assert_int_equal(pt_store_count(t->store), 0);
	assert_int_equal(pt_session_drain(s, t, 2), 0);
	assert_non_null(pt_session_failed(s));
	pt_session_close(s);
	pt_trace_free(t);
	unlink(g.path);
}

/* The copier's gap: halves past an eighth of a ring (never under a 16th of
 * the busy gap, and from the busy gap at most when it was idle), holds
 * between a 32nd and an eighth, doubles under a 32nd up to the idle gap. */
static void test_copier_gap(void **state)
{
	const uint64_t ms = 1000000, slots = 16384;
	assert_int_equal(pt_session_copier_gap(8 * ms, slots, slots, ms, 8 * ms), ms / 2);
	assert_int_equal(pt_session_copier_gap(ms / 2, slots / 8, slots, ms, 8 * ms), ms / 4);
	assert_int_equal(pt_session_copier_gap(ms / 16, slots, slots, ms, 8 * ms), ms / 16);
	assert_int_equal(pt_session_copier_gap(ms / 4, slots / 16, slots, ms, 8 * ms), ms / 4);
	assert_int_equal(pt_session_copier_gap(ms / 4, slots / 64, slots, ms, 8 * ms), ms / 2);
	assert_int_equal(pt_session_copier_gap(6 * ms, 0, slots, ms, 8 * ms), 8 * ms);
	/* at 10 M events/s (10 records a microsecond) it settles where a pass
	 * finds at most an eighth of the ring: 16384 / 8 / 10 = 204 us */
	uint64_t gap = ms;
	for (int i = 0; i < 50; i++)
		gap = pt_session_copier_gap(gap, gap / 100, slots, ms, 8 * ms);
	assert_true(gap / 100 >= slots / 32 && gap / 100 < slots / 8);
}

/* Record n (an operator at 1000 + 10 n) into ring r of `slots`, published
 * with a release store of the head, as the probe does. */
static void push_published(struct pt_shm_ring *r, uint64_t slots, uint32_t name, uint64_t n)
{
	struct pt_shm_rec *rec = &pt_shm_ring_recs(r)[n & (slots - 1)];
	memset(rec, 0, sizeof *rec);
	rec->start_ns = 1000 + n * 10;
	rec->dur_ns = 5;
	rec->name = name;
	rec->kind = PT_KIND_OPERATOR;
	__atomic_store_n(&r->head, n + 1, __ATOMIC_RELEASE);
}

/* The copier empties the rings with no drain at all: 20 rings' worth is
 * pushed half a ring at a time, each half waiting for the reader's cursor
 * to reach it (which no one but the copier moves), and one drain then puts
 * all of it into the trace; records pushed just before a drain are in the
 * trace after it (the drain waits for a copier pass). Without the copier
 * the cursor never moves and the wait gives up. */
static void test_copier(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 2, 1024, 4096);
	uint32_t name = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 7, "main");
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_session_drain(s, t, pt_now_ns()), 0); /* claims the slot */
	int slot = pt_session_reader_slot(s);
	assert_true(slot >= 0);
	assert_int_equal(pt_session_copier_start(s, 1000000, 2000000), 0);
	assert_true(pt_session_copier_running(s));
	uint64_t n = 0, total = 20 * 1024;
	while (n < total) {
		for (int i = 0; i < 512; i++, n++)
			push_published(r, 1024, name, n);
		/* the copier's gap is at most 2 ms; 10 s is a machine stopped */
		uint64_t until = pt_now_ns() + 10000000000ull;
		while (__atomic_load_n(&r->cursor[slot], __ATOMIC_ACQUIRE) < n && pt_now_ns() < until)
			usleep(200);
		assert_true(__atomic_load_n(&r->cursor[slot], __ATOMIC_ACQUIRE) >= n);
	}
	assert_int_equal(pt_store_count(t->store), 0); /* staged, not yet in the trace */
	assert_int_equal(pt_session_drain(s, t, pt_now_ns()), total);
	/* pushed right before a drain: in the trace after it */
	for (int i = 0; i < 100; i++, n++)
		push_published(r, 1024, name, n);
	assert_int_equal(pt_session_drain(s, t, pt_now_ns()), 100);
	assert_int_equal(pt_store_count(t->store), total + 100);
	assert_int_equal(pt_session_stats(s)->overwritten + pt_session_stats(s)->missed +
			     pt_session_stats(s)->torn + pt_session_stats(s)->source_dropped,
			 0);
	/* every event once, in order, on the ring's track */
	struct pt_event *ev = malloc((total + 100) * sizeof *ev);
	assert_non_null(ev);
	uint32_t track = s->rings[0].track;
	assert_int_equal(track_events(t, track, ev, total + 100), total + 100);
	for (uint64_t i = 0; i < total + 100; i++)
		assert_int_equal(ev[i].start_ns, 1000 + i * 10);
	free(ev);
	pt_session_close(s); /* stops and joins the copier */
	pt_trace_free(t);
	unlink(g.path);
}

/* The guard handles only faults in the mappings it holds: any other SIGBUS
 * still ends the process (a child here). */
static void test_guard_leaves_other_faults(void **state)
{
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		/* as in proftop: the default action behind ours (not cmocka's catcher) */
		signal(SIGBUS, SIG_DFL);
		pt_shm_guard_arm();
		char p[600];
		snprintf(p, sizeof p, "%s/other.bin", g_dir);
		int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, 8192) != 0)
			_exit(3);
		volatile char *m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED || ftruncate(fd, 0) != 0)
			_exit(3);
		unlink(p);
		char x = m[4096]; /* SIGBUS: not a session mapping */
		_exit(x == 0 ? 0 : 4);
	}
	int st;
	assert_int_equal(waitpid(c, &st, 0), c);
	/* killed by SIGBUS, or a sanitizer's report and exit; never a clean 0 */
	assert_false(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3));
	c = fork();
	if (c == 0) {
		signal(SIGBUS, SIG_DFL);
		pt_shm_guard_arm();
		raise(SIGBUS); /* sent, not a fault: not ours either */
		_exit(0);
	}
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_false(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_exit_detection(void **state)
{
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	int st;
	waitpid(c, &st, 0);
	assert_true(pt_session_pid_gone(NULL, c, 0));
	assert_false(pt_session_pid_gone(NULL, getpid(), 0));
	uint64_t ticks = pt_proc_start_ticks(NULL, getpid());
	assert_true(ticks > 0);
	assert_false(pt_session_pid_gone(NULL, getpid(), ticks));
	assert_true(pt_session_pid_gone(NULL, getpid(), ticks + 1)); /* pid reused */

	struct seg g;
	seg_make(&g, getpid(), 1, 16, 4096);
	g.h->proc_start_ticks = ticks;
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	assert_false(pt_session_owner_exited(s));
	g.h->state = PT_SHM_EXITED;
	assert_true(pt_session_owner_exited(s));
	pt_session_close(s);

	/* a live owner that dies without saying so (killed): seen at the next
	 * look, while it is a zombie too (it writes nothing more), through the
	 * pidfd taken at the first look (no /proc file opened per look) */
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t live = fork();
	if (live == 0) {
		char b;
		close(go[1]);
		(void)!read(go[0], &b, 1);
		_exit(0);
	}
	close(go[0]);
	seg_make(&g, live, 1, 16, 4096);
	g.h->pid = live; /* seg_make gives a live pid's segment a gone one */
	g.h->proc_start_ticks = pt_proc_start_ticks(NULL, live);
	assert_int_equal(open_seg(&g, &s), 0);
	assert_false(pt_session_owner_exited(s));
	assert_false(pt_session_owner_exited(s));
	close(go[1]); /* it exits; not reaped yet */
	int seen = 0;
	for (int i = 0; i < 2000 && !seen; i++) {
		seen = pt_session_owner_exited(s);
		if (!seen)
			usleep(1000);
	}
	assert_true(seen);
	pt_session_close(s);
	seg_free(&g);
	assert_int_equal(waitpid(live, &st, 0), live);

	/* killed: the data stays readable, the backend drains it and says so */
	seg_make(&g, c, 1, 16, 4096);
	uint32_t n = seg_str(&g, "last op");
	struct pt_shm_ring *r = seg_ring(&g, 0, c, "main");
	seg_push(&g, r, PT_KIND_OPERATOR, n, 10, 5, 0);
	seg_push(&g, r, PT_KIND_CUDA_RUNTIME, n, 20, 5, 0); /* would wait for EXT */
	struct pt_backend *b;
	char err[256];
	struct pt_backend_args a = {.pid = c};
	assert_int_equal(pt_backend_session.open(&b, &a, err, sizeof err), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(b->ops->poll(b, t, 1), PT_ENOENT);
	/* its two events, and a note that it died (no exit handlers ran) */
	assert_int_equal(pt_store_count(t->store), 3);
	assert_int_equal(t->nnotes, 1);
	assert_non_null(strstr(pt_trace_note_text(t, 0), " died: it ended without running its exit"));
	char desc[256];
	b->ops->describe(b, desc, sizeof desc);
	assert_non_null(strstr(desc, "[exited]"));
	b->ops->close(b);
	pt_trace_free(t);
	seg_free(&g);
}

static void test_list_and_clean(void **state)
{
	struct seg live, dead, old;
	seg_make(&live, getpid(), 1, 16, 4096);
	live.h->rank = 3;
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	seg_make(&dead, c, 1, 16, 4096);
	pid_t c2 = fork();
	if (c2 == 0)
		_exit(0);
	waitpid(c2, NULL, 0);
	seg_make(&old, c2, 1, 16, 4096);
	old.h->realtime_origin_ns -= 3600ull * 1000000000ull;
	struct timespec times[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
	assert_int_equal(utimensat(AT_FDCWD, old.path, times, 0), 0);
	char junk[600];
	snprintf(junk, sizeof junk, "%s/777.session", g_dir);
	FILE *f = fopen(junk, "w");
	fputs("not a session", f);
	fclose(f);
	chmod(junk, 0600);
	/* the stale session's deep capture goes with it; the dead (recent) one's stays */
	char cap_old[600], cap_dead[600];
	snprintf(cap_old, sizeof cap_old, "%s/%d.capture-2.json", g_dir, (int)c2);
	snprintf(cap_dead, sizeof cap_dead, "%s/%d.capture-1.json", g_dir, (int)c);
	fclose(fopen(cap_old, "w"));
	fclose(fopen(cap_dead, "w"));
	/* unfinished segments (a probe renames them once whole): never listed;
	 * removed when their pid is gone, kept while it lives */
	char tmp_gone[600], tmp_live[600];
	snprintf(tmp_gone, sizeof tmp_gone, "%s/.%d.session.tmp", g_dir, (int)c2);
	snprintf(tmp_live, sizeof tmp_live, "%s/.%d.session.tmp", g_dir, (int)getpid());
	fclose(fopen(tmp_gone, "w"));
	fclose(fopen(tmp_live, "w"));

	struct pt_session_info *v;
	size_t n, cleaned;
	char err[256];
	assert_int_equal(pt_session_list(&v, &n, 1, &cleaned, err, sizeof err), 0);
	assert_int_equal(cleaned, 2);
	assert_int_equal(n, 3);
	assert_int_equal(access(tmp_gone, F_OK), -1);
	assert_int_equal(access(tmp_live, F_OK), 0);
	unlink(tmp_live);
	int saw_live = 0, saw_dead = 0, saw_junk = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].pid == getpid()) {
			saw_live = 1;
			assert_true(v[i].valid);
			assert_false(v[i].exited);
			assert_int_equal(v[i].rank, 3);
			assert_string_equal(v[i].cmdline, "python train.py --lr 0.1");
		} else if (v[i].pid == c) {
			saw_dead = 1;
			assert_true(v[i].exited); /* recent: kept */
		} else if (v[i].pid == 777) {
			saw_junk = 1;
			assert_false(v[i].valid);
			assert_non_null(strstr(v[i].why, "truncated"));
		}
	}
	assert_true(saw_live && saw_dead && saw_junk);
	assert_int_equal(access(old.path, F_OK), -1);
	assert_int_equal(access(cap_old, F_OK), -1);
	assert_int_equal(access(cap_dead, F_OK), 0);
	free(v);
	/* the launch that just ended (its proftop read it whole): removed at
	 * once with its capture; another launch's recent one, and a live one of
	 * the same launch, stay */
	live.h->launch_id = 0x77;
	dead.h->launch_id = 0x66;
	assert_int_equal(pt_session_reap(0x77), 0);
	assert_int_equal(access(dead.path, F_OK), 0);
	dead.h->launch_id = 0x77;
	assert_int_equal(pt_session_reap(0x77), 1);
	assert_int_equal(access(dead.path, F_OK), -1);
	assert_int_equal(access(cap_dead, F_OK), -1);
	assert_int_equal(access(live.path, F_OK), 0);
	unlink(junk);
	munmap(old.base, old.size);
	munmap(dead.base, dead.size);
	seg_free(&live);
}

/* ---- the /proc sampler ---- */

static void write_text(const char *dir, const char *name, const char *text)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void proc_files(const char *root, uint64_t utime, uint64_t stime, uint64_t busy,
		       uint64_t idle, uint64_t rss_pages)
{
	char buf[512];
	snprintf(buf, sizeof buf,
		 "cpu  %llu 0 %llu %llu 0 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n",
		 (unsigned long long)(busy / 2), (unsigned long long)(busy - busy / 2),
		 (unsigned long long)idle);
	write_text(root, "stat", buf);
	snprintf(buf, sizeof buf,
		 "55 (my (odd) name) S 1 55 55 0 -1 4194304 100 0 0 0 %llu %llu 0 0 20 0 4 0 "
		 "12345 1000000 %llu\n",
		 (unsigned long long)utime, (unsigned long long)stime, (unsigned long long)rss_pages);
	write_text(root, "55/stat", buf);
	snprintf(buf, sizeof buf, "1000 %llu 10 1 0 20 0\n", (unsigned long long)rss_pages);
	write_text(root, "55/statm", buf);
}

static double counter_at(struct pt_trace *t, const char *name)
{
	struct pt_counter_stat cs;
	pt_counter_stat(t, name, 0, UINT64_MAX, &cs);
	return cs.n ? cs.avg : -1;
}

/* Count of a trace's events. */
static uint64_t trace_events(struct pt_trace *t)
{
	return pt_store_count(t->store);
}

/*
 * Two readers on one live session (the screen in one pane, `record -p` in
 * another): each has a slot and a cursor of its own, so each gets every
 * record, whatever the order of their drains. The producer frees a ring
 * only up to what both have read; an exited thread's ring is freed by the
 * last of them to drain it.
 */
static void test_two_readers_each_get_all(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 2, 64, 4096);
	uint32_t op = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	struct pt_session *a, *b;
	assert_int_equal(open_seg(&g, &a), 0);
	assert_int_equal(open_seg(&g, &b), 0);
	struct pt_trace *ta = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_trace *tb = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	uint64_t now = pt_now_ns();
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 5; i++)
			seg_push(&g, r, PT_KIND_OPERATOR, op, (uint64_t)(round * 10 + i) * 100, 5,
				 0);
		pt_session_drain(a, ta, now + (uint64_t)round); /* a every round */
		if (round % 3 == 2)
			pt_session_drain(b, tb, now + (uint64_t)round); /* b now and then */
	}
	pt_session_drain(b, tb, now + 20);
	assert_int_equal(trace_events(ta), 50);
	assert_int_equal(trace_events(tb), 50);
	assert_int_equal(pt_trace_source_lost(ta), 0);
	assert_int_equal(pt_trace_source_lost(tb), 0);
	int sa = pt_session_reader_slot(a), sb = pt_session_reader_slot(b);
	assert_true(sa >= 0 && sb >= 0 && sa != sb);
	assert_int_equal(r->cursor[sa], 50);
	assert_int_equal(r->cursor[sb], 50);
	/* both attached: the producer may free up to the slower one only */
	int att;
	seg_push(&g, r, PT_KIND_OPERATOR, op, 9000, 5, 0);
	pt_session_drain(a, ta, now + 21);
	assert_int_equal(pt_shm_readers_attached(g.h, now + 22), 2);
	assert_int_equal(pt_shm_readers_min_cursor(g.h, r, now + 22, 0, r->head, &att), 50);
	assert_int_equal(att, 1);
	assert_int_equal(pt_shm_readers_max_cursor(g.h, r), 51);
	/* an exited thread's ring: a alone drained it, so it stays until b has */
	seg_push(&g, r, PT_KIND_OPERATOR, op, 9100, 5, 0);
	r->state = PT_SHM_RING_EXITED;
	pt_session_drain(a, ta, now + 23);
	assert_int_equal(r->state, PT_SHM_RING_EXITED);
	pt_session_drain(b, tb, now + 23);
	assert_int_equal(r->state, PT_SHM_RING_FREE);
	assert_int_equal(trace_events(ta), 52);
	assert_int_equal(trace_events(tb), 52);
	pt_session_close(a);
	pt_session_close(b);
	assert_int_equal(pt_shm_readers_attached(g.h, now + 24), 0);
	pt_trace_free(ta);
	pt_trace_free(tb);
	seg_free(&g);
}

/*
 * A reader that stalls: what others read meanwhile and the producer freed
 * is counted as missed by it; what the producer overwrote with no reader
 * attached is counted as overwritten; a reader attaching late counts what
 * went before it the same way. For every reader, kept + counted = produced.
 */
static void test_stalled_reader_counts(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 1, 16, 4096);
	uint32_t op = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	struct pt_session *a, *b;
	assert_int_equal(open_seg(&g, &a), 0);
	assert_int_equal(open_seg(&g, &b), 0);
	struct pt_trace *ta = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_trace *tb = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	uint64_t now = pt_now_ns(), produced = 0;
	for (int i = 0; i < 10; i++, produced++)
		seg_push(&g, r, PT_KIND_OPERATOR, op, (uint64_t)i, 1, 0);
	pt_session_drain(a, ta, now);
	pt_session_drain(b, tb, now);
	/* a stalls; b reads on; the producer (as make_room would) frees what
	 * the attached reader b has read */
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 12; i++, produced++)
			seg_push(&g, r, PT_KIND_OPERATOR, op, 100 + produced, 1, 0);
		pt_session_drain(b, tb, now + 10);
		r->tail = r->cursor[pt_session_reader_slot(b)];
	}
	/* then no reader at all: the producer overwrites 8 unread records */
	for (int i = 0; i < 16; i++, produced++)
		seg_push(&g, r, PT_KIND_OPERATOR, op, 1000 + produced, 1, 0);
	r->overwritten += 8;
	r->tail += 8;
	pt_session_drain(a, ta, now + 20); /* a is back */
	pt_session_drain(b, tb, now + 20);
	uint64_t ka = trace_events(ta), kb = trace_events(tb);
	print_message("# a kept %llu, lost %llu (missed %llu, overwritten %llu); b kept %llu\n",
		      (unsigned long long)ka, (unsigned long long)pt_trace_source_lost(ta),
		      (unsigned long long)ta->warnings[PT_WARN_READER_MISSED],
		      (unsigned long long)ta->warnings[PT_WARN_SOURCE_OVERWRITTEN],
		      (unsigned long long)kb);
	assert_int_equal(ka + pt_trace_source_lost(ta), produced);
	assert_int_equal(kb + pt_trace_source_lost(tb), produced);
	assert_int_equal(ta->warnings[PT_WARN_SOURCE_OVERWRITTEN], 8);
	assert_int_equal(tb->warnings[PT_WARN_SOURCE_OVERWRITTEN], 8);
	assert_true(ta->warnings[PT_WARN_READER_MISSED] > 0); /* b read them, a did not */
	assert_int_equal(tb->warnings[PT_WARN_READER_MISSED], 0);
	/* both were there from the first record: nothing went before them */
	assert_int_equal(pt_trace_lost_before_attach(ta), 0);
	assert_int_equal(pt_trace_lost_before_attach(tb), 0);
	/* a third reader attaching now: what went before it, counted */
	struct pt_session *c;
	struct pt_trace *tc = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(open_seg(&g, &c), 0);
	pt_session_drain(c, tc, now + 30);
	assert_int_equal(trace_events(tc) + pt_trace_source_lost(tc), produced);
	/* ...all of it before c attached: 8 overwritten, the rest read by b */
	assert_int_equal(pt_trace_lost_before_attach(tc), pt_trace_source_lost(tc));
	assert_int_equal(tc->before_attach[0], 8);
	assert_int_equal(tc->before_attach[1], tc->warnings[PT_WARN_READER_MISSED]);
	pt_session_close(c);
	pt_session_close(a);
	pt_session_close(b);
	pt_trace_free(ta);
	pt_trace_free(tb);
	pt_trace_free(tc);
	seg_free(&g);
}

/*
 * The producer counts an overwrite against the cursor it last saw. A reader
 * stopped after copying records but before publishing its cursor (SIGSTOP
 * with no other reader attached) kept records the producer then overwrote
 * and counted: those are not lost to it. It counts only what it skipped.
 */
static void test_kept_then_counted_overwritten(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 1, 16, 4096);
	uint32_t op = seg_str(&g, "op");
	struct pt_shm_ring *r = seg_ring(&g, 0, 1, "t");
	struct pt_session *a;
	assert_int_equal(open_seg(&g, &a), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	uint64_t now = pt_now_ns(), produced = 0;
	for (int i = 0; i < 10; i++, produced++)
		seg_push(&g, r, PT_KIND_OPERATOR, op, produced, 1, 0);
	pt_session_drain(a, t, now);
	/* the producer had read cursor 0: the 10 the reader kept, counted */
	r->overwritten += 10;
	r->tail = 10;
	for (int i = 0; i < 6; i++, produced++)
		seg_push(&g, r, PT_KIND_OPERATOR, op, produced, 1, 0);
	pt_session_drain(a, t, now + 1);
	assert_int_equal(trace_events(t), produced);
	assert_int_equal(pt_trace_source_lost(t), 0);
	/* a real overwrite later (12 records gone unread): counted as such */
	for (int i = 0; i < 20; i++, produced++)
		seg_push(&g, r, PT_KIND_OPERATOR, op, produced, 1, 0);
	r->overwritten += 12;
	r->tail = r->head - 8;
	pt_session_drain(a, t, now + 2);
	assert_int_equal(trace_events(t) + pt_trace_source_lost(t), produced);
	assert_int_equal(pt_trace_source_lost(t), 12);
	assert_int_equal(t->warnings[PT_WARN_SOURCE_OVERWRITTEN], 12);
	/* lost while attached, not before */
	assert_int_equal(pt_trace_lost_before_attach(t), 0);
	char causes[120];
	pt_trace_loss_causes_attached(t, causes, sizeof causes, 0);
	assert_string_equal(causes, "12 overwritten while detached");
	pt_session_close(a);
	pt_trace_free(t);
	seg_free(&g);
}

/* Every slot taken: the ninth reader still reads (and counts), without a
 * slot; a slot of a dead reader is taken over. */
static void test_reader_slots_run_out(void **state)
{
	struct seg g;
	seg_make(&g, getpid(), 1, 16, 4096);
	struct pt_session *s;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	uint64_t now = pt_now_ns();
	for (uint32_t k = 0; k < PT_SHM_MAX_READERS; k++) { /* live readers elsewhere */
		g.h->readers[k].pid = getppid();
		g.h->readers[k].heartbeat_ns = now;
	}
	assert_int_equal(open_seg(&g, &s), 0);
	pt_session_drain(s, t, now);
	assert_int_equal(pt_session_reader_slot(s), -1);
	char desc[PT_SHM_CMDLINE_BYTES + 64];
	pt_session_describe(s, desc, sizeof desc);
	pt_session_close(s);
	/* one of them is gone: its slot is ours */
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	g.h->readers[5].pid = dead;
	assert_int_equal(open_seg(&g, &s), 0);
	pt_session_drain(s, t, now + 1);
	assert_int_equal(pt_session_reader_slot(s), 5);
	pt_session_close(s);
	pt_trace_free(t);
	seg_free(&g);
}

static void test_procstat(void **state)
{
	char root[300], sub[400];
	snprintf(root, sizeof root, "%s/proc", g_dir);
	snprintf(sub, sizeof sub, "%s/55", root);
	assert_int_equal(mkdir(root, 0700), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	uint64_t hz = (uint64_t)sysconf(_SC_CLK_TCK);
	proc_files(root, 10, 10, 1000, 1000, 100);
	assert_int_equal(pt_proc_start_ticks(root, 55), 12345);

	struct pt_backend *b;
	char err[256];
	struct pt_backend_args a = {.pid = 55, .proc_root = root, .interval_ns = 1000};
	assert_int_equal(pt_backend_procstat.open(&b, &a, err, sizeof err), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	uint64_t t0 = 1000000000ull;
	assert_int_equal(b->ops->poll(b, t, t0), 0); /* baseline: RSS only */
	assert_true(counter_at(t, "RSS bytes") == 100.0 * (double)sysconf(_SC_PAGESIZE));
	assert_true(counter_at(t, "CPU(Process)") < 0);
	/* one second later: 1.5 s of CPU over all threads, 300 of 400 jiffies busy */
	proc_files(root, 10 + hz, 10 + hz / 2, 1300, 1100, 200);
	assert_int_equal(b->ops->poll(b, t, t0 + 1000000000ull), 0);
	assert_true(fabs(counter_at(t, "CPU(Process)") - 150.0) < 1e-6);
	assert_true(fabs(counter_at(t, "CPU(System)") - 75.0) < 1e-6);
	uint32_t tr = t->ntracks - 1;
	assert_int_equal(t->tracks[tr].key.pid, 55);
	assert_string_equal(pt_trace_str(t, t->tracks[tr].key.tid_str), "proftop samples");
	/* inside the interval: no new sample */
	uint64_t n = pt_store_count(t->store);
	assert_int_equal(b->ops->poll(b, t, t0 + 1000000100ull), 0);
	assert_int_equal(pt_store_count(t->store), n);
	/* the process is gone */
	write_text(root, "55/stat", "");
	unlink(tu_path(sub, "stat"));
	assert_int_equal(b->ops->poll(b, t, t0 + 3000000000ull), PT_ENOENT);
	b->ops->close(b);
	pt_trace_free(t);
	unlink(tu_path(sub, "statm"));
	unlink(tu_path(root, "stat"));
	rmdir(sub);
	rmdir(root);
}

/* ---- deep captures: the control word, following, merging ---- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The helper's answer, as probe_ctl.c writes it: fields, then state. */
static void answer(struct seg *g, uint32_t seq, uint32_t st, uint32_t done, const char *msg)
{
	snprintf(g->h->ctl.msg, sizeof g->h->ctl.msg, "%s", msg ? msg : "");
	__atomic_store_n(&g->h->ctl.state, PT_SHM_CTL_STATE(seq, st, done), __ATOMIC_RELEASE);
}

/* The helper's report of a finished capture, as proftop_capture_report
 * writes it: window from 4 ms to t1_ns, the marker bracketed between 4.000
 * and 4.004 ms of the session clock, thread 100, the job's fourth step first. */
static void report(struct seg *g, uint64_t t1_ns)
{
	g->h->ctl.t0_ns = 4000000;
	g->h->ctl.t1_ns = t1_ns;
	g->h->ctl.sync_lo_ns = 4000000;
	g->h->ctl.sync_hi_ns = 4004000;
	g->h->ctl.tid = 100;
	g->h->ctl.first_step = 3; /* the job's count */
}

static struct pt_capture *follow(struct pt_session *s, struct pt_trace *t,
				 struct pt_capture_follow *f, uint32_t seq, int exited)
{
	struct pt_shm_ctl ctl;
	pt_shm_ctl_read(pt_session_hdr(s), &ctl);
	pt_session_drain(s, t, pt_now_ns());
	pt_session_capture_follow(s, t, &ctl, f, exited, pt_now_ns());
	return pt_capture_get(t, pt_session_pid(s), seq, 0);
}

/*
 * The job's capture file is whatever the job left at the path: a FIFO it
 * holds open (a read would wait forever: every reader froze), a symlink
 * to a file elsewhere, a file of another user. Each is refused at once,
 * with the reason in the capture's line; a real file of ours is read up
 * to the size it had when opened.
 */
/* A segment of nsteps steps of 1 ms on ring 0 (thread 100; *r, *stepn:
 * the ring and the steps' name, for more), opened, with a trace to drain
 * it into: what the capture tests start from. */
static struct pt_session *capture_seg(struct seg *g, uint32_t nrings, uint32_t slots, int nsteps,
				      struct pt_trace **t, struct pt_shm_ring **r, uint32_t *stepn)
{
	seg_make(g, getpid(), nrings, slots, 4096);
	*stepn = seg_str(g, "ProfileStep");
	*r = seg_ring(g, 0, 100, "main");
	for (int i = 1; i <= nsteps; i++)
		seg_push(g, *r, PT_KIND_PROFILE_STEP, *stepn, i * 1000000ull, 1000000, 8);
	struct pt_session *s;
	assert_int_equal(open_seg(g, &s), 0);
	*t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	return s;
}

static volatile pid_t g_holder = -1;

static void alarm_fail(int sig)
{
	(void)sig;
	static const char m[] = "test_session: a read of the job's capture file hung\n";
	(void)!write(2, m, sizeof m - 1);
	if (g_holder > 0)
		kill(g_holder, SIGKILL);
	_exit(1);
}

static void test_capture_file_hostile(void **state)
{
	(void)state;
	signal(SIGALRM, alarm_fail);
	for (int kind = 0; kind < 3; kind++) {
		if (kind == 2 && geteuid() != 0)
			continue; /* a file of another user needs chown */
		struct seg g;
		struct pt_trace *t;
		struct pt_shm_ring *r;
		uint32_t stepn;
		struct pt_session *s = capture_seg(&g, 1, 64, 9, &t, &r, &stepn);
		struct pt_capture_follow f = {0};
		char why[300], path[600], real[700];
		uint32_t seq = 0;
		g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
		assert_int_equal(pt_session_capture_request(s, 3, 0, &seq, why, sizeof why), 0);
		assert_non_null(follow(s, t, &f, seq, 0));
		assert_int_equal(pt_session_capture_file(s, seq, path, sizeof path), 0);
		pid_t holder = -1;
		const char *want = NULL;
		snprintf(real, sizeof real, "%s.real", path);
		write_file(real, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"proftop/sync#1\","
				 "\"pid\":9,\"tid\":7,\"ts\":1000,\"dur\":2}]}");
		if (kind == 0) {
			assert_int_equal(mkfifo(path, 0600), 0);
			holder = fork();
			assert_true(holder >= 0);
			if (holder == 0) { /* the job: holds the FIFO open, writes nothing */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				int fd = open(path, O_RDWR);
				(void)fd;
				pause();
				_exit(0);
			}
			g_holder = holder;
			want = "not a regular file";
		} else if (kind == 1) {
			assert_int_equal(symlink(real, path), 0);
			want = "is a symlink";
		} else {
			assert_int_equal(rename(real, path), 0);
			assert_int_equal(chown(path, 1, 1), 0);
			want = "owned by uid 1";
		}
		usleep(20000); /* the holder has the FIFO open */
		report(&g, 7000000);
		answer(&g, seq, PT_SHM_CTL_DONE, 3, "done");
		alarm(20);
		struct pt_capture *c = follow(s, t, &f, seq, 0);
		alarm(0);
		assert_non_null(c);
		assert_int_equal(c->state, PT_CAPTURE_FAILED);
		assert_non_null(strstr(c->msg, want));
		if (holder > 0) {
			kill(holder, SIGKILL);
			waitpid(holder, NULL, 0);
			g_holder = -1;
		}
		unlink(path);
		unlink(real);
		pt_trace_free(t);
		pt_session_close(s);
		seg_free(&g);
	}
	signal(SIGALRM, SIG_DFL);
}

static void test_capture_protocol(void **state)
{
	(void)state;
	struct seg g;
	seg_make(&g, getpid(), 2, 256, 4096);
	uint32_t stepn = seg_str(&g, "ProfileStep"), conv = seg_str(&g, "features.0 (Conv2d)");
	struct pt_shm_ring *r = seg_ring(&g, 0, 100, "main");
	/* steps of 1 ms from 1 ms on; the one of 4..5 ms holds a module op */
	for (int i = 1; i <= 3; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f = {0};
	char why[300];
	uint32_t seq = 0;
	/* no helper answers: refused, and why */
	assert_int_equal(pt_session_capture_request(s, 3, 0, &seq, why, sizeof why), PT_ENOTAVAIL);
	assert_non_null(strstr(why, "no PyTorch helper"));
	assert_null(follow(s, t, &f, 1, 0));
	g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
	assert_int_equal(pt_session_capture_request(s, 0, 0, &seq, why, sizeof why), PT_EINVAL);
	assert_int_equal(pt_session_capture_request(s, 3, 0, &seq, why, sizeof why), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(PT_SHM_CTL_REQ_STEPS(g.h->ctl.request), 3);
	assert_int_equal(g.h->ctl.requester, getpid());
	/* asked, not answered: a second request is refused (this reader lives) */
	assert_int_equal(pt_session_capture_request(s, 3, 0, &seq, why, sizeof why), PT_EEXIST);
	assert_non_null(strstr(why, "capture #1 was asked for"));
	struct pt_capture *c = follow(s, t, &f, 1, 0);
	assert_non_null(c);
	assert_int_equal(c->state, PT_CAPTURE_ASKED);
	assert_true(c->mine);
	/* running */
	answer(&g, 1, PT_SHM_CTL_RUNNING, 1, NULL);
	assert_int_equal(follow(s, t, &f, 1, 0)->state, PT_CAPTURE_RUNNING);
	assert_int_equal(pt_session_capture_request(s, 3, 0, &seq, why, sizeof why), PT_EEXIST);
	assert_non_null(strstr(why, "capture #1 is running (1 of 3 steps)"));
	/* the captured steps 3..6 ms, the module op in the 5th, steps after */
	for (int i = 4; i <= 9; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	seg_push(&g, r, PT_KIND_OPERATOR, conv, 4005000, 200000, 0);
	/* the job's trace: its own clock (µs from 1000), the marker (twice:
	 * a first try whose bracket was too wide, then the one bracketed), a
	 * conv with shapes and torch's FLOPs, its ProfilerStep (left out) and
	 * an op of another thread */
	char path[600];
	assert_int_equal(pt_session_capture_file(s, 1, path, sizeof path), 0);
	write_file(path,
		   "{\"traceEvents\":["
		   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\",\"pid\":9,"
		   "\"tid\":7,\"ts\":1000,\"dur\":2},"
		   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\",\"pid\":9,"
		   "\"tid\":7,\"ts\":400,\"dur\":2},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#0\",\"pid\":9,\"tid\":7,"
		   "\"ts\":990,\"dur\":3000},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::conv2d\",\"pid\":9,\"tid\":7,"
		   "\"ts\":1010,\"dur\":50,\"args\":{\"Input Dims\":[[2,3,8,8],[4,3,3,3],[4],[],[],[],[]],"
		   "\"flops\":27648}},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":9,\"tid\":\"torch thread 2\","
		   "\"ts\":1020,\"dur\":5}]}");
	/* session clock: the marker lay between 4.0 ms and 4.004 ms; torch's
	 * 1000..1002 us: the offset is 3.001 ms, +-1 us */
	report(&g, 7000000);
	g.h->ctl.start_block_ns = 100000;
	g.h->ctl.stop_block_ns = 200000;
	answer(&g, 1, PT_SHM_CTL_DONE, 3, "legacy profiler, torch 1.13");
	c = follow(s, t, &f, 1, 0);
	assert_int_equal(c->state, PT_CAPTURE_MERGED);
	assert_int_equal(c->events, 2);
	assert_int_equal(c->flop_events, 1);
	assert_int_equal(c->sync_err_ns, 1000);
	assert_int_equal(t->flop_events, 1);
	/* the conv on the captured thread's track, on the session clock, inside
	 * the module op: nested under it in the op detail */
	uint32_t tr = pt_trace_track(t, &(struct pt_track_key){getpid(), 100, 0, 0});
	struct pt_event ev[64];
	size_t n = track_events(t, tr, ev, 64), hits = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(name_of(t, &ev[i]), "aten::conv2d"))
			continue;
		hits++;
		assert_int_equal(ev[i].start_ns, 1010000 + 3001000);
		assert_true(ev[i].flags & PT_EVF_FLOPS);
		assert_true(ev[i].start_ns >= 4005000 && pt_event_end(&ev[i]) <= 4205000);
	}
	assert_int_equal(hits, 1);
	struct pt_summary *sum = pt_summarize(t, NULL);
	int nested = 0;
	for (size_t i = 0; i < sum->op_detail.n; i++) {
		const struct pt_row *row = &sum->op_detail.rows[i];
		if (row->depth == 1 && !strcmp(pt_trace_str(t, row->name_id), "aten::conv2d") &&
		    !strcmp(pt_trace_str(t, sum->op_detail.rows[row->parent].name_id),
			    "features.0 (Conv2d)"))
			nested = 1;
		assert_false(!strcmp(pt_trace_str(t, row->name_id), "ProfilerStep#0"));
	}
	assert_true(nested);
	assert_int_equal(sum->nsteps, 9); /* the job's steps, none added */
	pt_summary_free(sum);
	/* the cost: the steps before, during and after, from the session's own */
	assert_int_equal(c->before_n, 3);
	assert_int_equal(c->during_n, 3);
	assert_int_equal(c->after_n, 3);
	assert_int_equal(c->during_ns, 1000000);
	assert_int_equal(c->first_step, 3);
	assert_int_equal(c->last_step, 5);
	char line[600];
	pt_capture_describe(c, line, sizeof line, 0);
	assert_non_null(strstr(line, "capture #1 (pid"));
	assert_non_null(strstr(line, "steps 3-5, 2 events"));
	assert_non_null(strstr(line, "start blocked 0.10 ms, stop 0.20 ms"));
	/* the status line: the saved file's name first, then the ratio */
	struct pt_capture cb = *c;
	snprintf(cb.saved, sizeof cb.saved, "/some/dir/proftop-capture-7-1.json");
	pt_capture_describe(&cb, line, sizeof line, 1);
	assert_string_equal(line, "capture #1: saved proftop-capture-7-1.json, steps 3-5, step time "
				  "x1.00 (1.00 ms vs 1.00 ms before, 1.00 ms after)");
	/* a reader that attaches just after it ended merges it too: its first
	 * drain brought the steps before it */
	struct pt_session *s3;
	assert_int_equal(open_seg(&g, &s3), 0);
	struct pt_trace *t3 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f3 = {0};
	struct pt_capture *c3 = follow(s3, t3, &f3, 1, 0);
	assert_non_null(c3);
	assert_int_equal(c3->state, PT_CAPTURE_MERGED);
	assert_int_equal(c3->events, 2);
	assert_int_equal(c3->first_step, 3);
	pt_trace_free(t3);
	pt_session_close(s3);
	/* ... but not when no step of its trace ended before the capture began
	 * (the rings had lost them): the capture's steps may be missing */
	g.h->ctl.t0_ns = 1500000;
	assert_int_equal(open_seg(&g, &s3), 0);
	t3 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	memset(&f3, 0, sizeof f3);
	assert_null(follow(s3, t3, &f3, 1, 0));
	assert_null(t3->captures);
	pt_trace_free(t3);
	pt_session_close(s3);
	g.h->ctl.t0_ns = 4000000;
	/* over: the next request gets #2; a cancel shows as such */
	assert_int_equal(pt_session_capture_request(s, 2, 0, &seq, why, sizeof why), 0);
	assert_int_equal(seq, 2);
	assert_int_equal(pt_session_capture_cancel(s, 2), 0);
	assert_int_equal(pt_session_capture_cancel(s, 2), PT_ENOENT);
	c = follow(s, t, &f, 2, 0);
	assert_int_equal(c->state, PT_CAPTURE_CANCELLED);
	/* the helper's own failure, with its reason */
	assert_int_equal(pt_session_capture_request(s, 2, 0, &seq, why, sizeof why), 0);
	answer(&g, 3, PT_SHM_CTL_FAILED, 0, "torch.profiler could not start: \x1b[31mboom");
	c = follow(s, t, &f, 3, 0);
	assert_int_equal(c->state, PT_CAPTURE_FAILED);
	pt_capture_describe(c, line, sizeof line, 1);
	assert_non_null(strstr(line, "failed: torch.profiler could not start"));
	assert_null(strchr(line, '\x1b')); /* escaped for the terminal */
	/* times that cannot be right: refused, nothing merged */
	assert_int_equal(pt_session_capture_request(s, 2, 0, &seq, why, sizeof why), 0);
	g.h->ctl.sync_lo_ns = 4004000;
	g.h->ctl.sync_hi_ns = 4000000;
	uint64_t before = t->events_seen;
	answer(&g, 4, PT_SHM_CTL_DONE, 2, "x");
	c = follow(s, t, &f, 4, 0);
	assert_int_equal(c->state, PT_CAPTURE_FAILED);
	assert_non_null(strstr(c->msg, "inconsistent"));
	assert_int_equal(t->events_seen, before);
	/* a file without the marker: refused with the reason */
	assert_int_equal(pt_session_capture_request(s, 2, 0, &seq, why, sizeof why), 0);
	g.h->ctl.sync_lo_ns = 4000000;
	g.h->ctl.sync_hi_ns = 4004000;
	assert_int_equal(pt_session_capture_file(s, 5, path, sizeof path), 0);
	write_file(path, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
			 "\"ts\":1,\"dur\":1}]}");
	answer(&g, 5, PT_SHM_CTL_DONE, 2, "x");
	c = follow(s, t, &f, 5, 0);
	assert_int_equal(c->state, PT_CAPTURE_FAILED);
	assert_non_null(strstr(c->msg, "no marker proftop/sync#5"));
	unlink(path);
	/* a request the job never reaches, then the job exits */
	assert_int_equal(pt_session_capture_request(s, 2, 0, &seq, why, sizeof why), 0);
	assert_int_equal(follow(s, t, &f, 6, 0)->state, PT_CAPTURE_ASKED);
	assert_int_equal(follow(s, t, &f, 6, 1)->state, PT_CAPTURE_CANCELLED);
	g.h->state = PT_SHM_EXITED;
	assert_int_equal(pt_session_capture_request(s, 2, 0, &seq, why, sizeof why), PT_ENOENT);
	assert_non_null(strstr(why, "exit"));
	g.h->state = PT_SHM_RUNNING;
	/* a reader that attaches while a capture is asked for (or runs)
	 * follows it: the rings keep its steps */
	g.h->ctl.requester = 1;
	struct pt_session *s2;
	assert_int_equal(open_seg(&g, &s2), 0);
	struct pt_trace *t2 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f2 = {0};
	c = follow(s2, t2, &f2, 6, 0);
	assert_non_null(c);
	assert_int_equal(c->state, PT_CAPTURE_ASKED);
	assert_false(c->mine);
	pt_trace_free(t2);
	pt_session_close(s2);
	/* one that attaches after it is over does not: its steps may be older
	 * than what the reader has */
	answer(&g, 6, PT_SHM_CTL_CANCELLED, 0, "cancelled before it started");
	assert_int_equal(open_seg(&g, &s2), 0);
	t2 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	memset(&f2, 0, sizeof f2);
	follow(s2, t2, &f2, 6, 0);
	assert_null(t2->captures);
	pt_trace_free(t2);
	pt_session_close(s2);
	assert_int_equal(pt_session_capture_file(s, 1, path, sizeof path), 0);
	unlink(path);
	pt_trace_free(t);
	pt_session_close(s);
	seg_free(&g);
}

/* The job's DONE read before the records of its captured steps are
 * drained (a loaded machine): the merge finds none of them, and the
 * capture's step figures come once they do, not never. */
static void test_capture_steps_after_done(void **state)
{
	(void)state;
	struct seg g;
	struct pt_trace *t;
	struct pt_shm_ring *r;
	uint32_t stepn;
	struct pt_session *s = capture_seg(&g, 2, 256, 3, &t, &r, &stepn);
	struct pt_capture_follow f = {0};
	char why[300], path[600];
	uint32_t seq = 0;
	g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
	assert_int_equal(pt_session_capture_request(s, 3, 0, &seq, why, sizeof why), 0);
	follow(s, t, &f, seq, 0);
	answer(&g, seq, PT_SHM_CTL_RUNNING, 1, NULL);
	follow(s, t, &f, seq, 0);
	assert_int_equal(pt_session_capture_file(s, seq, path, sizeof path), 0);
	write_file(path, "{\"traceEvents\":["
			 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\","
			 "\"pid\":9,\"tid\":7,\"ts\":1000,\"dur\":2},"
			 "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":9,"
			 "\"tid\":7,\"ts\":1010,\"dur\":5}]}");
	report(&g, 7000000);
	answer(&g, seq, PT_SHM_CTL_DONE, 3, NULL);
	struct pt_capture *c = follow(s, t, &f, seq, 0);
	assert_int_equal(c->state, PT_CAPTURE_MERGED);
	assert_int_equal(c->during_n, 0); /* its steps are still in the ring */
	assert_int_equal(c->before_n, 3);
	uint32_t gen = t->captures->gen;
	/* now they come, and the steps after it */
	for (int i = 4; i <= 12; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	struct pt_shm_ctl ctl;
	pt_shm_ctl_read(pt_session_hdr(s), &ctl);
	pt_session_drain(s, t, pt_now_ns());
	pt_session_capture_follow(s, t, &ctl, &f, 0, pt_now_ns() + 1000000000ull);
	c = pt_capture_get(t, pt_session_pid(s), seq, 0);
	assert_true(c->during_n >= 3);
	assert_int_equal(c->first_step, 3);
	assert_true(t->captures->gen != gen); /* the screen redraws its line */
	char line[400];
	pt_capture_describe(c, line, sizeof line, 1);
	assert_non_null(strstr(line, "step time x"));
	unlink(path);
	pt_trace_free(t);
	pt_session_close(s);
	seg_free(&g);
}

/* With proftop's CUPTI collector in the job, torch captures CPU activity
 * only: the probe's own runtime call and kernel link to the captured aten
 * operator that encloses the launch, as in a Kineto trace. */
static void test_capture_links_kernels(void **state)
{
	(void)state;
	struct seg g;
	seg_make(&g, getpid(), 2, 256, 4096);
	uint32_t stepn = seg_str(&g, "ProfileStep"), k = seg_str(&g, "volta_sgemm_128x64_nn");
	uint32_t launch = seg_str(&g, "cudaLaunchKernel");
	struct pt_shm_ring *r = seg_ring(&g, 0, 100, "main");
	struct pt_shm_ring *rc = seg_ring(&g, 1, 101, "cupti");
	for (int i = 1; i <= 6; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	seg_push(&g, r, PT_KIND_CUDA_RUNTIME, launch, 4100000, 20000, 0);
	seg_push(&g, r, PT_SHM_REC_EXT, 0, 77, 0, 0);
	seg_push(&g, rc, PT_SHM_REC_DEVICE, 0, 0, 0, 0);
	seg_push(&g, rc, PT_KIND_KERNEL, k, 4300000, 300000, 0);
	seg_push(&g, rc, PT_SHM_REC_EXT, 0, 77, 7, 0);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f = {0};
	g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
	char why[300], path[600];
	uint32_t seq;
	assert_int_equal(pt_session_capture_request(s, 2, 0, &seq, why, sizeof why), 0);
	follow(s, t, &f, 1, 0);
	/* torch's trace, CPU only: the marker at 1000 us of its clock, an
	 * aten::mm from 1050 to 1250 us around the launch (4.1 ms session) */
	assert_int_equal(pt_session_capture_file(s, 1, path, sizeof path), 0);
	write_file(path,
		   "{\"traceEvents\":["
		   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\",\"pid\":9,"
		   "\"tid\":7,\"ts\":1000,\"dur\":2},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":9,\"tid\":7,"
		   "\"ts\":1050,\"dur\":200,\"args\":{\"Input Dims\":[[64,128],[128,32]]}}]}");
	report(&g, 6000000); /* offset 3.001 ms: the mm is 4.051..4.251 ms */
	__atomic_store_n(&g.h->ctl.state, PT_SHM_CTL_STATE(1, PT_SHM_CTL_DONE, 2), __ATOMIC_RELEASE);
	struct pt_capture *c = follow(s, t, &f, 1, 0);
	assert_int_equal(c->state, PT_CAPTURE_MERGED);
	struct pt_summary *sum = pt_summarize(t, NULL);
	int linked = 0;
	for (size_t i = 0; i < sum->op_detail.n; i++) {
		const struct pt_row *row = &sum->op_detail.rows[i];
		if (row->is_device &&
		    !strcmp(pt_trace_str(t, row->name_id), "volta_sgemm_128x64_nn") &&
		    !strcmp(pt_trace_str(t, sum->op_detail.rows[row->parent].name_id), "aten::mm"))
			linked = 1;
	}
	assert_true(linked);
	int timed = 0;
	for (size_t i = 0; i < sum->operators.n; i++)
		if (!strcmp(pt_trace_str(t, sum->operators.rows[i].name_id), "aten::mm"))
			timed = sum->operators.rows[i].gpu.total_ns == 300000;
	assert_true(timed); /* the kernel's time is the operator's GPU time */
	pt_summary_free(sum);
	unlink(path);
	pt_trace_free(t);
	pt_session_close(s);
	seg_free(&g);
}

static int setup(void **state)
{
	snprintf(g_dir, sizeof g_dir, "%s/proftop-test-session.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_dir))
		return -1;
	setenv("PROFTOP_SESSION_DIR", g_dir, 1);
	return 0;
}

static int teardown(void **state)
{
	return rmdir(g_dir);
}

/*
 * A launched job's sessions are looked for every few milliseconds at first
 * (its rings wrap in milliseconds at high rates, and the probe overwrites
 * its oldest records until a reader attaches), then at the drain period;
 * --all's every PT_LIVE_SCAN_NS; pids given, never. A session of the job
 * that has recorded is opened at the first look that sees it.
 */
static void test_launch_scan_cadence(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	struct pt_live_result res;
	memset(&res, 0, sizeof res);
	struct pt_live_opts o = {0};
	o.session_ops = &pt_backend_session;
	o.launch_id = 0x5eed5eedull;

	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		alarm(60); /* gone on its own should the test fail before killing it */
		pause();
		_exit(0);
	}
	struct seg g; /* the child's segment (seg_make keeps only its own pid alive) */
	seg_make(&g, (int32_t)getpid(), 1, 64, 4096);
	char path[sizeof g.path];
	snprintf(path, sizeof path, "%s/%d.session", g_dir, (int)child);
	assert_int_equal(rename(g.path, path), 0);
	memcpy(g.path, path, sizeof path);
	g.h->pid = child;
	g.h->launch_id = o.launch_id;
	seg_ring(&g, 0, child, "main"); /* it has recorded: a ring claimed */

	struct live_multi *m = live_multi_new(&o, t, PT_LIVE_POLL_NS);
	uint64_t now = pt_now_ns();
	assert_true(live_multi_open_due(m) <= now);
	live_multi_open(m, now, &res);
	assert_int_equal(live_multi_live(m), 1);
	assert_int_equal(live_multi_first_pid(m), child);
	assert_int_equal(live_multi_open_due(m) - now, PT_LIVE_LAUNCH_SCAN_FAST_NS);
	uint64_t later = now + PT_LIVE_LAUNCH_FAST_NS + 1;
	live_multi_open(m, later, &res);
	assert_int_equal(live_multi_open_due(m) - later, PT_LIVE_POLL_NS);
	live_multi_free(m, &res);

	o.launch_id = 0;
	o.all_sessions = 1;
	m = live_multi_new(&o, t, PT_LIVE_POLL_NS);
	now = pt_now_ns();
	live_multi_open(m, now, &res);
	assert_int_equal(live_multi_open_due(m) - now, PT_LIVE_SCAN_NS);
	live_multi_free(m, &res);

	o.all_sessions = 0;
	int32_t pids[1] = {child};
	o.pids = pids;
	o.npids = 1;
	m = live_multi_new(&o, t, PT_LIVE_POLL_NS);
	assert_true(live_multi_open_due(m) == UINT64_MAX);
	live_multi_free(m, &res);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	seg_free(&g);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_drain_basic),
	    cmocka_unit_test(test_ext_and_device),
	    cmocka_unit_test(test_overwrite_and_ranges),
	    cmocka_unit_test(test_bad_strings),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_header_flipped_while_opening),
	    cmocka_unit_test(test_corr_tag),
	    cmocka_unit_test(test_corrupt_header),
	    cmocka_unit_test(test_header_rewritten_after_attach),
	    cmocka_unit_test(test_head_tail_out_of_range),
	    cmocka_unit_test(test_lying_lengths),
	    cmocka_unit_test(test_truncated_after_attach),
	    cmocka_unit_test(test_truncated_during_copy),
	    cmocka_unit_test(test_copier),
	    cmocka_unit_test(test_copier_gap),
	    cmocka_unit_test(test_guard_leaves_other_faults),
	    cmocka_unit_test(test_exit_detection),
	    cmocka_unit_test(test_list_and_clean),
	    cmocka_unit_test(test_procstat),
	    cmocka_unit_test(test_two_readers_each_get_all),
	    cmocka_unit_test(test_stalled_reader_counts),
	    cmocka_unit_test(test_kept_then_counted_overwritten),
	    cmocka_unit_test(test_reader_slots_run_out),
	    cmocka_unit_test(test_capture_protocol),
	    cmocka_unit_test(test_capture_file_hostile),
	    cmocka_unit_test(test_capture_steps_after_done),
	    cmocka_unit_test(test_capture_links_kernels),
	    cmocka_unit_test(test_launch_scan_cadence),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
