/*
 * test_ranks_live.c - per-rank figures of a growing trace: every refresh of
 * pt_ranks_live_compute against pt_ranks_compute, rank by rank, on synthetic
 * and real multi-rank traces replayed as a live session receives them, with
 * a window, under the memory cap and on an empty trace.
 */
#include "ranks_util.h"

/* ---- live: pt_ranks_live_compute against pt_ranks_compute ---- */

/* The same ranks, figure for figure, each with the same summary. */
static void same_ranks(const struct pt_trace *t, const struct pt_ranks *a, const struct pt_ranks *b)
{
	assert_int_equal(a->n, b->n);
	if (!a->n)
		return;
	assert_int_equal(a->slowest, b->slowest);
	near(a->spread, b->spread, 0, "spread");
	near(a->median_step_ms, b->median_step_ms, 0, "median step");
	for (size_t i = 0; i < a->n; i++) {
		const struct pt_rank_stat *x = &a->r[i], *y = &b->r[i];
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->rank, y->rank);
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->steps, y->steps);
		assert_int_equal(x->last_step, y->last_step);
		assert_int_equal(x->events, y->events);
		near(x->cpu_util_pct, y->cpu_util_pct, 0, "cpu util");
		near(x->gpu_util_pct, y->gpu_util_pct, 0, "gpu util");
		char *jx = summary_json(t, x->summary), *jy = summary_json(t, y->summary);
		assert_string_equal(jx, jy);
		free(jx);
		free(jy);
	}
}

/* What a windowed replay saw (replay_window). */
struct replay {
	size_t incremental; /* calls whose kept aggregators took new events */
	size_t moves;	    /* calls whose window started later than the last one's */
	uint64_t work;	    /* events fed to the live summaries, tails included */
	uint64_t windowed;  /* events in the windows (pt_ranks_compute's) */
	double worst;	    /* the most one call fed / its window, once the trace is longer */
	uint64_t dropped_steps;
};

/* Replays src into a fresh trace (memory cap max_mem, 0 = none) in
 * batches, each event when it ends (as probes send ranges) or when it
 * starts; after every batch the live per-rank figures over the window
 * (0: all) must be pt_ranks_compute's from the window's start, which
 * covers at most window_ns and at least half of it. Returns the live
 * stats. */
static struct pt_agg_live_stats replay_window(struct pt_trace *src, int by_end, size_t batches,
					      uint64_t window_ns, size_t max_mem, struct replay *rp)
{
	struct tu_arrivals c = tu_arrivals(src, by_end ? TU_BY_END : TU_BY_START);
	struct pt_trace *t = tu_shell_of(src, max_mem);
	struct pt_ranks_live *rl = pt_ranks_live_new();
	pt_ranks_live_set_window(rl, window_ns);
	size_t per = c.n / batches + 1;
	uint64_t prev_start = 0;
	for (size_t i = 0; i < c.n;) {
		size_t end = i + per < c.n ? i + per : c.n;
		for (; i < end; i++)
			pt_trace_add(t, &c.v[i].ev);
		struct pt_ranks live, full;
		assert_int_equal(pt_ranks_live_compute(rl, t, &live), 0);
		struct pt_agg_opts o;
		pt_agg_opts_init(&o);
		o.t0_ns = pt_ranks_live_start(rl);
		if (!window_ns || t->last_ns <= window_ns) {
			assert_int_equal(o.t0_ns, 0);
		} else {
			assert_true(o.t0_ns >= t->last_ns - window_ns);
			assert_true(o.t0_ns <= t->last_ns - window_ns / 2);
		}
		assert_true(o.t0_ns >= prev_start);
		rp->moves += prev_start && o.t0_ns > prev_start;
		assert_int_equal(pt_ranks_compute(t, &o, &full), 0);
		same_ranks(t, &live, &full);
		struct pt_agg_live_stats st;
		pt_ranks_live_stats(rl, &st);
		rp->incremental += st.fed_events > 0;
		rp->work += st.fed_events + st.tail_events;
		uint64_t in_window = 0;
		for (size_t r = 0; r < full.n; r++)
			in_window += full.r[r].events;
		rp->windowed += in_window;
		double part = (double)(st.fed_events + st.tail_events) / (double)(in_window + 1);
		if (window_ns && t->last_ns - t->first_ns > window_ns && part > rp->worst)
			rp->worst = part;
		prev_start = o.t0_ns;
		pt_ranks_free(&live);
		pt_ranks_free(&full);
	}
	rp->dropped_steps = pt_store_dropped_steps(t->store);
	struct pt_agg_live_stats st;
	pt_ranks_live_stats(rl, &st);
	pt_ranks_live_free(rl);
	pt_trace_free(t);
	free(c.v);
	return st;
}

static struct pt_agg_live_stats replay_ranks(struct pt_trace *src, int by_end, size_t batches,
					     size_t *incremental)
{
	struct replay rp = {0};
	struct pt_agg_live_stats st = replay_window(src, by_end, batches, 0, 0, &rp);
	*incremental += rp.incremental;
	return st;
}

/* Four ranks with device rows and CPU counters, a fifth process that
 * appears halfway, and a thread of rank 0 that starts late: exact at every
 * refresh, in either arrival order, and most refreshes only feed what is
 * new (each rank keeps its aggregator: their correlation ids may repeat
 * across ranks, not within one). */
static void test_live_synthetic(void **state)
{
	(void)state;
	struct pt_trace *src = pt_trace_new(0);
	for (int r = 0; r < 4; r++) {
		struct work w = {1000 + r * 10, -1,   40,   5e6 + r * 333,   100e3 + r * 7e3,
				 20e3,		40e3, 10e3, 50.0 + r * 0.37, 1};
		add_rank(src, &w);
		pt_trace_set_proc(src, w.pid, r, "node-a");
	}
	struct work late = {1100, -1, 20, 5e6 + 2e6, 100e3, 20e3, 40e3, 10e3, 12.5, 1};
	add_rank(src, &late);
	pt_trace_set_proc(src, late.pid, 4, "node-a");
	uint32_t th = tu_track(src, 1000, 77, -1);
	for (int i = 0; i < 30; i++)
		tu_ev(src, th, PT_KIND_OPERATOR, "aten::copy_", 5e6 + 2.5e6 + i * 50e3, 30e3, 0);
	for (int by_end = 0; by_end < 2; by_end++) {
		size_t inc = 0;
		struct pt_agg_live_stats st = replay_ranks(src, by_end, 40, &inc);
		print_message("# ranks live (%s): %llu refreshes, %llu rebuilds, full %d, "
			      "%zu calls of 40 batches fed the kept aggregators\n",
			      by_end ? "by end" : "by start", (unsigned long long)st.refreshes,
			      (unsigned long long)st.rebuilds, st.full, inc);
		assert_int_equal(st.full, 0);
		assert_true(inc >= 20);
		assert_true(st.refreshes >= 4 * 30);
		assert_true(st.rebuilds <= st.refreshes / 4);
	}
	pt_trace_free(src);
}

/* Figures over a window that moves: four ranks of 200 steps of 20 ms
 * (two with numbered steps, two without), a fifth process halfway, in a
 * window of 1 s. At every refresh they are pt_ranks_compute's from the
 * window's start, in either arrival order; the start moves on in steps
 * of half the window; and what the refreshes feed is what arrived, not
 * the window: less than half of the window's events, summed over the
 * refreshes. Under a memory cap that drops the oldest events (and steps:
 * the unnumbered ones count from the steps kept before the window), still
 * exact. */
static void test_live_window(void **state)
{
	(void)state;
	struct pt_trace *src = pt_trace_new(0);
	for (int r = 0; r < 4; r++) {
		struct work w = {1000 + r * 10,	      -1,    200,	 5e6 + r * 333, 20e3 + r * 500,
				 4e3,		      8e3,   2e3,	 50.0 + r * 0.37,
				 r < 2 ? 1 : -1};
		add_rank(src, &w);
		pt_trace_set_proc(src, w.pid, r, "node-a");
	}
	struct work late = {1100, -1, 80, 5e6 + 2e6, 20e3, 4e3, 8e3, 2e3, 12.5, -1};
	add_rank(src, &late);
	pt_trace_set_proc(src, late.pid, 4, "node-a");
	for (int by_end = 0; by_end < 2; by_end++) {
		struct replay rp = {0};
		struct pt_agg_live_stats st = replay_window(src, by_end, 200, 1000000000ull, 0, &rp);
		print_message("# ranks live, 1 s window (%s): %zu moves, %zu of 200 calls fed, "
			      "%llu events fed for %llu in the windows (one call at most %.2f of "
			      "its window), %llu rebuilds\n",
			      by_end ? "by end" : "by start", rp.moves, rp.incremental,
			      (unsigned long long)rp.work, (unsigned long long)rp.windowed, rp.worst,
			      (unsigned long long)st.rebuilds);
		assert_int_equal(st.full, 0);
		assert_true(rp.moves >= 6);
		assert_true(rp.incremental >= 150);
		assert_true(rp.work * 2 < rp.windowed);
		assert_true(rp.worst < 0.5);
	}
	struct replay rp = {0};
	replay_window(src, 1, 100, 1000000000ull, (size_t)1 << 20, &rp);
	print_message("# ranks live, 1 s window, 1 MiB cap: %llu steps dropped\n",
		      (unsigned long long)rp.dropped_steps);
	assert_true(rp.dropped_steps > 0);
	pt_trace_free(src);
}

/* The two real Kineto files in one trace (GPU rows under pid 0, the same
 * correlation ids in both), with a process table and without one (then the
 * GPU rows move from the first process's rank to a rank of their own when
 * the second process appears: that rank starts over). */
static void test_live_real_pair(void **state)
{
	(void)state;
	for (int table = 0; table < 2; table++) {
		struct pt_trace *t =
		    load("kineto_tb_plugin/"
			 "samples__resnet50_num_workers_0__worker0.1623143089861.pt."
			 "trace.json.gz");
		if (!t) {
			skip();
			return;
		}
		struct pt_read_opts ro = {0};
		char err[512] = "";
		assert_int_equal(
		    pt_chrome_read(t,
				   tu_path(tu_traces(), "kineto_tb_plugin/"
							"samples__resnet50_num_workers_4__worker0."
							"1623212756351.pt.trace.json.gz"),
				   &ro, err, sizeof err),
		    0);
		if (table) {
			pt_trace_set_proc(t, 25738, 0, NULL);
			pt_trace_set_proc(t, 5555, 1, NULL);
		}
		for (int by_end = 0; by_end < 2; by_end++) {
			size_t inc = 0;
			replay_ranks(t, by_end, 25, &inc);
		}
		pt_trace_free(t);
	}
}

/* Past the cap: PT_ENOMEM as pt_ranks_compute says it, nothing leaked;
 * with nothing in the trace, no ranks. */
static void test_live_cap_and_empty(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new((size_t)4 << 20);
	struct pt_ranks_live *rl = pt_ranks_live_new();
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_live_compute(rl, t, &rk), 0);
	assert_int_equal(rk.n, 0);
	pt_ranks_free(&rk);
	for (int p = 0; p < 64; p++)
		for (int i = 0; i < 400; i++) {
			char name[32];
			snprintf(name, sizeof name, "op%d.%d", p, i);
			tu_ev(t, tu_track(t, 1000 + p, 1, -1), PT_KIND_OPERATOR, name, p * 1000 + i,
			      1, 0);
		}
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), PT_ENOMEM);
	assert_int_equal(pt_ranks_live_compute(rl, t, &rk), PT_ENOMEM);
	assert_int_equal(rk.n, 0);
	assert_null(rk.r);
	pt_ranks_free(&rk);
	pt_ranks_live_free(rl);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_live_synthetic),
	    cmocka_unit_test(test_live_real_pair),
	    cmocka_unit_test(test_live_window),
	    cmocka_unit_test(test_live_cap_and_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
