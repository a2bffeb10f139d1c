/*
 * test_colls.c - collectives (coll.h, colls.h): the sink's rows (an entry
 * closed by its completion, a completion without entry, the operator event
 * of a blocking call, none for an async one), the matching across ranks by
 * (group, seq) with figures worked out by hand (skew, last rank, wait per
 * rank, bus bandwidth), the hang (waiting and missing ranks, a missing rank
 * whose process died, its open ranges), the straggler's reason, the hang
 * line's wording, and the rows surviving an export and a read back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proftop/advisor.h"
#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "proftop/coll.h"
#include "proftop/colls.h"
#include "proftop/ranks.h"
#include "proftop/trace.h"

#define MS 1000000ull

static uint32_t track_of(struct pt_trace *t, int64_t pid)
{
	struct pt_track_key k = {pid, pid, 0, 0};
	return pt_trace_track(t, &k);
}

static uint32_t id(struct pt_trace *t, const char *s)
{
	return pt_trace_intern(t, s, strlen(s));
}

/* rank r (pid 100 + r) enters op #seq at start and completes it at end (0: open) */
static void call(struct pt_trace *t, int r, const char *op, uint64_t seq, uint64_t start,
		 uint64_t end, uint64_t bytes, uint32_t flags)
{
	uint32_t tr = track_of(t, 100 + r);
	struct pt_coll_rec c = {start, 0, seq, bytes, id(t, op), id(t, "0"), 2, flags};
	pt_trace_coll_enter(t, tr, &c);
	if (end) {
		c.time_ns = end;
		c.start_ns = start;
		pt_trace_coll_done(t, tr, &c);
	}
}

static struct pt_trace *two_ranks(void)
{
	struct pt_trace *t = pt_trace_new(0);
	pt_trace_set_proc(t, 100, 0, NULL);
	pt_trace_set_proc(t, 101, 1, NULL);
	return t;
}

static void test_rows(void **state)
{
	(void)state;
	struct pt_trace *t = two_ranks();
	call(t, 0, "all_reduce", 7, 10 * MS, 30 * MS, 4096, 0);
	assert_int_equal(t->colls.n, 1);
	assert_int_equal(t->colls.v[0].end_ns, 30 * MS);
	assert_int_equal(t->colls.v[0].seq, 7);
	/* the blocking call is an operator event with the communication flag */
	assert_int_equal(pt_store_count(t->store), 1);
	/* an async one: its row, no event (its source pushed the launch) */
	call(t, 0, "all_reduce", 8, 40 * MS, 90 * MS, 4096, PT_COLL_ASYNC);
	assert_int_equal(t->colls.n, 2);
	assert_int_equal(pt_store_count(t->store), 1);
	/* a completion without entry: a row from its start, counted */
	uint32_t tr = track_of(t, 100);
	struct pt_coll_rec c = {100 * MS, 95 * MS, 9, 16, id(t, "broadcast"), id(t, "0"), 2, 0};
	pt_trace_coll_done(t, tr, &c);
	assert_int_equal(t->colls.n, 3);
	assert_int_equal(t->colls.unmatched_done, 1);
	assert_int_equal(t->colls.v[2].start_ns, 95 * MS);
	/* the other rank's open entry is not closed by this rank's completion */
	call(t, 1, "all_gather", 10, 110 * MS, 0, 8, 0);
	struct pt_coll_rec d = {120 * MS, 105 * MS, 10, 8, id(t, "all_gather"), id(t, "0"), 2, 0};
	pt_trace_coll_done(t, tr, &d);
	assert_int_equal(t->colls.v[3].end_ns, 0);
	pt_trace_free(t);
}

/* NCCL's plugin: entered at the enqueue on the job's thread, completed on
 * the proxy thread with the kernel's start (the arrival) and end; the
 * completion may be read before the entry (two rings drained one after
 * the other): one row all the same. */
static void test_device_rows(void **state)
{
	(void)state;
	struct pt_trace *t = two_ranks();
	uint32_t f = PT_COLL_ASYNC | PT_COLL_DEVICE;
	uint32_t main0 = track_of(t, 100), main1 = track_of(t, 101);
	struct pt_track_key pk0 = {100, 7, 0, 0}, pk1 = {101, 7, 0, 0};
	uint32_t proxy0 = pt_trace_track(t, &pk0), proxy1 = pt_trace_track(t, &pk1);
	uint32_t op = id(t, "all_reduce"), g = id(t, "nccl:world");
	struct pt_coll_rec e0 = {10 * MS, 0, 1, 4096, op, g, 2, f};
	pt_trace_coll_enter(t, main0, &e0);
	struct pt_coll_rec d0 = {50 * MS, 20 * MS, 1, 4096, op, g, 2, f};
	pt_trace_coll_done(t, proxy0, &d0);
	/* rank 1: its completion first */
	struct pt_coll_rec d1 = {50 * MS, 40 * MS, 1, 4096, op, g, 2, f};
	pt_trace_coll_done(t, proxy1, &d1);
	assert_int_equal(t->colls.unmatched_done, 1);
	struct pt_coll_rec e1 = {12 * MS, 0, 1, 4096, op, g, 2, f};
	pt_trace_coll_enter(t, main1, &e1);
	assert_int_equal(t->colls.n, 2);
	assert_int_equal(t->colls.unmatched_done, 0);
	/* the arrival is the kernel's start, not the enqueue */
	assert_int_equal(t->colls.v[0].start_ns, 20 * MS);
	assert_int_equal(t->colls.v[1].start_ns, 40 * MS);
	assert_int_equal(t->colls.v[1].end_ns, 50 * MS);
	assert_int_equal(pt_store_count(t->store), 0); /* no host operator for them */
	struct pt_coll_stats s;
	assert_int_equal(pt_coll_stats_compute(t, 0, 100 * MS, 0, &s), 0);
	assert_int_equal(s.nops, 1);
	assert_int_equal(s.ops[0].calls, 1);
	assert_int_equal(s.ops[0].last_rank, 1);
	assert_true(s.ops[0].skew_ms_avg > 19.999 && s.ops[0].skew_ms_avg < 20.001);
	/* a device-timed call is time in collectives: rank 0 waited 20 of its 30 ms */
	const struct pt_coll_rank_stat *r0 = pt_coll_rank(&s, 0), *r1 = pt_coll_rank(&s, 1);
	assert_true(r0->coll_ms > 29.999 && r0->coll_ms < 30.001);
	assert_true(r0->wait_ms > 19.999 && r0->wait_ms < 20.001);
	assert_true(r1->coll_ms > 9.999 && r1->coll_ms < 10.001);
	assert_false(s.hang.active);
	pt_coll_stats_free(&s);
	/* an entry that never comes: once its completion's row is 4096 rows
	 * old, no later entry looks for it (an entry costs nothing again) */
	struct pt_coll_rec d2 = {60 * MS, 55 * MS, 2, 4096, op, g, 2, f};
	pt_trace_coll_done(t, proxy1, &d2);
	assert_int_equal(t->colls.orphans, 1);
	for (uint64_t i = 0; i < 4096; i++)
		call(t, 0, "broadcast", 100 + i, 70 * MS + i, 70 * MS + i + 1, 8, 0);
	assert_int_equal(t->colls.orphans, 0);
	struct pt_coll_rec e2 = {58 * MS, 0, 2, 4096, op, g, 2, f};
	size_t before = t->colls.n;
	pt_trace_coll_enter(t, main1, &e2);
	assert_int_equal(t->colls.n, before + 1); /* a row of its own, open */
	assert_int_equal(t->colls.v[before].end_ns, 0);
	pt_trace_free(t);
}

static void test_match(void **state)
{
	(void)state;
	struct pt_trace *t = two_ranks();
	/* 4 all_gathers: rank 1 arrives 20 ms later at each, all end at +25 ms */
	for (uint64_t i = 0; i < 4; i++) {
		uint64_t b = 100 * MS * (i + 1);
		call(t, 0, "all_gather", i, b, b + 25 * MS, 1000000, 0);
		call(t, 1, "all_gather", i, b + 20 * MS, b + 25 * MS, 1000000, 0);
	}
	/* one all_reduce, rank 0 last by 2 ms, 10 ms from its arrival to the end */
	call(t, 1, "all_reduce", 4, 600 * MS, 612 * MS, 8000000, 0);
	call(t, 0, "all_reduce", 4, 602 * MS, 612 * MS, 8000000, 0);
	struct pt_coll_stats s;
	assert_int_equal(pt_coll_stats_compute(t, 0, 700 * MS, 0, &s), 0);
	assert_int_equal(s.nops, 2);
	assert_int_equal(s.matched, 5);
	const struct pt_coll_op_stat *ag = &s.ops[0], *ar = &s.ops[1];
	assert_string_equal(ag->op, "all_gather");
	assert_string_equal(ar->op, "all_reduce");
	assert_int_equal(ag->calls, 4);
	assert_int_equal(ag->rows, 8);
	assert_true(ag->skew_ms_avg > 19.999 && ag->skew_ms_avg < 20.001);
	assert_int_equal(ag->last_rank, 1);
	assert_int_equal(ag->last_count, 4);
	/* bus bandwidth: 1 MB in 5 ms = 0.2 GB/s algorithm, x (n-1)/n = 0.1 */
	assert_true(ag->busbw_gb_per_s > 0.0999 && ag->busbw_gb_per_s < 0.1001);
	/* all-reduce: 8 MB in 10 ms = 0.8 GB/s, x 2(n-1)/n = 0.8 */
	assert_true(ar->busbw_gb_per_s > 0.7999 && ar->busbw_gb_per_s < 0.8001);
	assert_int_equal(ar->last_rank, 0);
	/* rank 0 waited 20 ms at each all_gather; rank 1 2 ms at the all_reduce */
	const struct pt_coll_rank_stat *r0 = pt_coll_rank(&s, 0), *r1 = pt_coll_rank(&s, 1);
	assert_non_null(r0);
	assert_non_null(r1);
	assert_true(r0->wait_ms > 79.99 && r0->wait_ms < 80.01);
	assert_true(r1->wait_ms > 1.99 && r1->wait_ms < 2.01);
	assert_int_equal(r1->last, 4);
	assert_int_equal(r0->last, 1);
	assert_false(s.hang.active);
	pt_coll_stats_free(&s);
	pt_trace_free(t);
}

static void test_hang(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	for (int r = 0; r < 4; r++)
		pt_trace_set_proc(t, 100 + r, r, NULL);
	for (int r = 0; r < 4; r++)
		call(t, r, "all_reduce", 0, 10 * MS, 20 * MS, 64, 0);
	/* ranks 0-2 enter #1 at 1 s; rank 3 never does: it sits in its data loading */
	for (int r = 0; r < 3; r++)
		call(t, r, "all_reduce", 1, 1000 * MS + (uint64_t)r * MS, 0, 64, 0);
	struct pt_track *tr = &t->tracks[track_of(t, 103)];
	tr->nopen = 1;
	tr->open_name[0] = id(t, "Dataloader");
	tr->open_start[0] = 900 * MS;
	struct pt_coll_stats s;
	/* 10 s later, hang_after 30 s: not yet */
	pt_coll_stats_compute(t, 0, 11000 * MS, 0, &s);
	assert_false(s.hang.active);
	pt_coll_stats_free(&s);
	/* 41 s later */
	pt_coll_stats_compute(t, 0, 42000 * MS, 0, &s);
	assert_true(s.hang.active);
	assert_string_equal(s.hang.op, "all_reduce");
	assert_int_equal(s.hang.seq, 1);
	assert_int_equal(s.hang.nwaiting, 3);
	assert_int_equal(s.hang.nmissing, 1);
	assert_int_equal(s.hang.missing[0].rank, 3);
	assert_int_equal(s.hang.missing[0].nopen, 1);
	assert_string_equal(s.hang.missing[0].open[0], "Dataloader");
	char line[512];
	pt_coll_hang_line(&s.hang, line, sizeof line);
	assert_string_equal(line, "ranks 0-2 have waited 41 s in all_reduce #1 (group 0); rank 3 "
				  "never entered it; its open ranges: Dataloader (41 s)");
	pt_coll_stats_free(&s);
	/* a short hang_after, and the missing rank's process died */
	pt_trace_proc_ended(t, 103, 2);
	pt_coll_stats_compute(t, 0, 4000 * MS, 2000 * MS, &s);
	assert_true(s.hang.active);
	assert_int_equal(s.hang.missing[0].ended, 2);
	pt_coll_hang_line(&s.hang, line, sizeof line);
	assert_non_null(strstr(line, "rank 3 died before entering it"));
	pt_coll_stats_free(&s);
	pt_trace_free(t);
}

/* A group made again numbers from 0: its calls are not matched with the old ones. */
static void test_seq_restart(void **state)
{
	(void)state;
	struct pt_trace *t = two_ranks();
	for (uint64_t i = 0; i < 100; i++) {
		call(t, 0, "all_reduce", i, (i + 1) * 10 * MS, (i + 1) * 10 * MS + 5 * MS, 8, 0);
		call(t, 1, "all_reduce", i, (i + 1) * 10 * MS + MS, (i + 1) * 10 * MS + 5 * MS, 8, 0);
	}
	/* the group again: rank 1 now 3 ms late; seq 0.. again */
	for (uint64_t i = 0; i < 10; i++) {
		uint64_t b = 2000 * MS + i * 10 * MS;
		call(t, 0, "all_reduce", i, b, b + 5 * MS, 8, 0);
		call(t, 1, "all_reduce", i, b + 3 * MS, b + 5 * MS, 8, 0);
	}
	assert_int_equal(t->colls.v[t->colls.n - 1].epoch, 1);
	struct pt_coll_stats s;
	pt_coll_stats_compute(t, 0, 3000 * MS, 0, &s);
	assert_int_equal(s.matched, 110);
	assert_int_equal(s.ops[0].calls, 110);
	/* (100 x 1 ms + 10 x 3 ms) / 110; mixed epochs would give skews of ~2 s */
	assert_true(s.ops[0].skew_ms_max < 3.001);
	assert_true(s.ops[0].skew_ms_avg > 1.181 && s.ops[0].skew_ms_avg < 1.1828);
	pt_coll_stats_free(&s);
	pt_trace_free(t);
}

/* The advisor says the hang, critical, with the line. */
static void test_advice_hang(void **state)
{
	(void)state;
	struct pt_trace *t = two_ranks();
	call(t, 0, "all_reduce", 0, 10 * MS, 20 * MS, 64, 0);
	call(t, 1, "all_reduce", 0, 11 * MS, 20 * MS, 64, 0);
	call(t, 0, "all_reduce", 1, 100 * MS, 0, 64, 0);
	/* the trace runs on 5 s (a counter sample, as the samplers add) */
	struct pt_event ev = {5100 * MS, 0, 0, 0, track_of(t, 100), 0, PT_KIND_COUNTER, 0, 0};
	pt_trace_add(t, &ev);
	struct pt_summary *s = pt_summarize(t, NULL);
	struct pt_advisor_opts o;
	pt_advisor_opts_init(&o);
	o.hang_after_ns = 2000 * MS;
	struct pt_advice_list al;
	pt_advise(t, s, NULL, NULL, &o, &al);
	int found = 0;
	for (size_t i = 0; i < al.n; i++)
		if (al.v[i].key == PT_ADV_HANG) {
			found = 1;
			assert_int_equal(al.v[i].severity, PT_ADV_CRITICAL);
			assert_string_equal(al.v[i].evidence, "rank 0 has waited 5 s in all_reduce #1 "
							      "(group 0); rank 1 never entered it; "
							      "nothing recorded from it for 5 s");
		}
	assert_true(found);
	/* the default 30 s: none yet */
	pt_advisor_opts_init(&o);
	pt_advise(t, s, NULL, NULL, &o, &al);
	for (size_t i = 0; i < al.n; i++)
		assert_int_not_equal(al.v[i].key, PT_ADV_HANG);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_rank_list(void **state)
{
	(void)state;
	char b[64];
	int64_t a[] = {0, 1, 2, 3, 5, 7, 8};
	pt_coll_rank_list(a, 7, b, sizeof b);
	assert_string_equal(b, "0-3,5,7,8");
	pt_coll_rank_list(a, 1, b, sizeof b);
	assert_string_equal(b, "0");
}

/* The straggler from the collectives: rank 1 last at every all_gather. */
static void test_straggler(void **state)
{
	(void)state;
	struct pt_ranks r;
	memset(&r, 0, sizeof r);
	struct pt_rank_stat st[2];
	memset(st, 0, sizeof st);
	for (int i = 0; i < 2; i++) {
		st[i].pid = 100 + i;
		st[i].rank = i;
		snprintf(st[i].name, sizeof st[i].name, "rank %d", i);
		st[i].steps = 10;
		st[i].step_avg_ms = 50;
		st[i].phase_share[PT_RANK_DATALOADER] = i ? 0.5 : 0.02;
		st[i].phase_share[PT_RANK_BACKWARD] = i ? 0.2 : 0.68;
	}
	r.r = st;
	r.n = 2;
	struct pt_trace *t = two_ranks();
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t b = 100 * MS * (i + 1);
		call(t, 0, "all_gather", i, b, b + 30 * MS, 4, 0);
		call(t, 1, "all_gather", i, b + 24 * MS, b + 30 * MS, 4, 0);
	}
	struct pt_coll_stats s;
	pt_coll_stats_compute(t, 0, 500 * MS, 0, &s);
	struct pt_straggler sg;
	pt_straggler_find(&r, &s, &sg);
	assert_true(sg.valid);
	assert_true(sg.by_collectives);
	assert_int_equal(sg.rank, 1);
	assert_int_equal(sg.phase, PT_RANK_DATALOADER);
	assert_string_equal(sg.reason, "rank 1 arrives 24.0 ms late at every all_gather (group 0, "
				       "3 calls): its Dataloader takes 25.00 ms a step, 1.00 ms on "
				       "the others (median)");
	pt_coll_stats_free(&s);
	pt_trace_free(t);
}

/* Rows go out with the export and come back with the read, open ones open. */
static void test_export_roundtrip(void **state)
{
	(void)state;
	struct pt_trace *t = two_ranks();
	call(t, 0, "all_reduce", 3, 10 * MS, 20 * MS, 4096, PT_COLL_BUCKET | PT_COLL_ASYNC);
	call(t, 1, "all_reduce", 3, 12 * MS, 20 * MS, 4096, PT_COLL_BUCKET | PT_COLL_ASYNC);
	call(t, 0, "all_gather", 4, 30 * MS, 0, 8, 0);
	char path[] = "/tmp/test_colls_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char err[256];
	struct pt_export_opts eo = {0};
	eo.force = 1;
	assert_int_equal(pt_chrome_export(t, path, &eo, err, sizeof err), 0);
	struct pt_trace *u = pt_trace_new(0);
	assert_int_equal(pt_chrome_read(u, path, NULL, err, sizeof err), 0);
	unlink(path);
	assert_int_equal(u->colls.n, 3);
	size_t open = 0, bucket = 0;
	for (size_t i = 0; i < u->colls.n; i++) {
		const struct pt_coll *c = &u->colls.v[i];
		open += !c->end_ns;
		bucket += (c->flags & PT_COLL_BUCKET) != 0;
		const char *op = pt_trace_str(u, c->op);
		assert_true(!strcmp(op, "all_reduce") || !strcmp(op, "all_gather"));
		assert_string_equal(pt_trace_str(u, c->group), "0");
	}
	assert_int_equal(open, 1);
	assert_int_equal(bucket, 2);
	struct pt_coll_stats s;
	pt_coll_stats_compute(u, 0, 0, 0, &s);
	assert_int_equal(s.matched, 1);
	assert_int_equal(s.nops, 2);
	assert_string_equal(s.ops[1].op, "all_reduce");
	assert_true(s.ops[1].skew_ms_avg > 1.999 && s.ops[1].skew_ms_avg < 2.001);
	assert_int_equal(s.ops[1].last_rank, 1);
	pt_coll_stats_free(&s);
	pt_trace_free(u);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows),	  cmocka_unit_test(test_match),
	    cmocka_unit_test(test_hang),	  cmocka_unit_test(test_rank_list),
	    cmocka_unit_test(test_straggler), cmocka_unit_test(test_export_roundtrip),
	    cmocka_unit_test(test_seq_restart), cmocka_unit_test(test_advice_hang),
	    cmocka_unit_test(test_device_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
