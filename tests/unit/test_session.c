/*
 * test_session.c - the session reader against segments built by hand
 * (session_fake.h): drained events (kinds, names, tracks, labels, order),
 * EXT pairing, overwrite and out-of-range indices, drop counters, bad
 * strings, refusals of bad segments, exit detection, listing and cleanup.
 * The corruptions of a segment are test_session_corrupt.c's, several
 * readers and the /proc sampler test_session_readers.c's, deep captures
 * test_session_capture.c's.
 */
#include "session_fake.h"

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
	    cmocka_unit_test(test_exit_detection),
	    cmocka_unit_test(test_list_and_clean),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
