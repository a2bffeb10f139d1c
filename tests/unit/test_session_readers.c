/*
 * test_session_readers.c - several readers of one segment (each gets every
 * record, a stalled one counts what it lost, the reader slots run out) and
 * the /proc sampler's CPU and RSS samples from a fake /proc root.
 */
#include "session_fake.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_procstat),
	    cmocka_unit_test(test_two_readers_each_get_all),
	    cmocka_unit_test(test_stalled_reader_counts),
	    cmocka_unit_test(test_kept_then_counted_overwritten),
	    cmocka_unit_test(test_reader_slots_run_out),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
