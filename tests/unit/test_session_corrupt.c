/*
 * test_session_corrupt.c - corrupted segments (docs/reliability.md, promise
 * 3): an error or a count, never a crash. Bad magic/ABI/header, a layout
 * rewritten after attach, heads/tails anywhere in 64 bits, lying string
 * lengths and missing NULs, a segment truncated by another process after
 * attach or during a copy (the fstat check and the SIGBUS guard, which
 * leaves every other SIGBUS alone), and the copier thread's pacing.
 */
#include "session_fake.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_corrupt_header),
	    cmocka_unit_test(test_header_rewritten_after_attach),
	    cmocka_unit_test(test_head_tail_out_of_range),
	    cmocka_unit_test(test_lying_lengths),
	    cmocka_unit_test(test_truncated_after_attach),
	    cmocka_unit_test(test_truncated_during_copy),
	    cmocka_unit_test(test_copier),
	    cmocka_unit_test(test_copier_gap),
	    cmocka_unit_test(test_guard_leaves_other_faults),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
