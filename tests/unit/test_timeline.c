/*
 * test_timeline.c - the timeline model: which event wins a cell (hand-made
 * cases, then a random nested trace checked against a brute-force
 * reference so the block summaries are exercised), lane order, the cursor
 * queries, step edges, correlated kernels, ruler ticks and duration text.
 */
#include "testutil.h"

#include <inttypes.h>

#include "proftop/error.h"
#include "proftop/timeline.h"
#include "util.h"

static const char *cell_name(struct pt_trace *t, const struct pt_cell *c)
{
	return c->kind == PT_KIND__COUNT ? "-" : pt_trace_str(t, c->name_id);
}

/* Buckets [t0_us, t1_us) into w cells and returns the winners' names joined by '|'. */
static const char *bucket_names(struct pt_trace *t, uint32_t track, double t0_us, double t1_us,
				size_t w, struct pt_cell *cells)
{
	static char out[1024];
	pt_timeline_bucket(t, track, US(t0_us), US(t1_us), cells, w);
	out[0] = 0;
	for (size_t i = 0; i < w; i++) {
		if (i)
			strcat(out, "|");
		strcat(out, cell_name(t, &cells[i]));
	}
	return out;
}

static void test_bucket_nested(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "A", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "B", 10, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "C", 20, 10, 0);
	struct pt_cell c[16];
	/* A covers every cell fully; B and C tie on coverage but are deeper */
	assert_string_equal(bucket_names(t, h, 0, 100, 10, c), "A|A|A|A|A|A|A|A|A|A");
	assert_int_equal(c[0].starts, 1);
	assert_int_equal(c[1].starts, 0);
	assert_int_equal(c[0].depth, 0);
	assert_int_equal(c[0].kind, PT_KIND_OPERATOR);
	assert_int_equal(c[0].start_ns, 0);
	assert_int_equal(c[0].dur_ns, US(100));
	/* past A's end: nothing */
	assert_string_equal(bucket_names(t, h, 50, 150, 4, c), "A|A|-|-");
	pt_trace_free(t);
}

static void test_bucket_most_coverage(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	/* X covers 4 of cell [0,10), Y 6: Y wins though it starts later */
	tu_ev(t, h, PT_KIND_OPERATOR, "X", 0, 4, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "Y", 4, 10, 0);
	/* equal coverage: the earlier start wins */
	tu_ev(t, h, PT_KIND_OPERATOR, "R", 20, 5, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "S", 25, 5, 0);
	/* a deeper event covering more than its parent's share cannot happen;
	 * an instant alone in a cell still shows */
	tu_ev(t, h, PT_KIND_INSTANT, "I", 35, 0, 0);
	struct pt_cell c[8];
	assert_string_equal(bucket_names(t, h, 0, 40, 4, c), "Y|Y|R|I");
	assert_int_equal(c[0].starts, 1);
	assert_int_equal(c[1].starts, 0);
	assert_int_equal(c[3].kind, PT_KIND_INSTANT);
	assert_int_equal(c[3].starts, 1);
	pt_trace_free(t);
}

static void test_bucket_tiny_and_gaps(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t d = tu_track(t, 0, 7, 0);
	tu_ev(t, d, PT_KIND_KERNEL, "k1", 1, 1, 0);
	tu_ev(t, d, PT_KIND_KERNEL, "k2", 3, 3, 0);
	tu_ev(t, d, PT_KIND_KERNEL, "k3", 7, 1, 0);
	tu_ev(t, d, PT_KIND_MEMCPY, "m", 30, 0.5, 0);
	struct pt_cell c[8];
	/* tiny events in wide cells: the one covering most; empty cells between */
	assert_string_equal(bucket_names(t, d, 0, 40, 4, c), "k2|-|-|m");
	assert_int_equal(c[0].kind, PT_KIND_KERNEL);
	assert_int_equal(c[1].kind, PT_KIND__COUNT);
	assert_int_equal(c[3].kind, PT_KIND_MEMCPY);
	/* zoomed in: one cell per microsecond */
	assert_string_equal(bucket_names(t, d, 0, 8, 8, c), "-|k1|-|k2|k2|k2|-|k3");
	pt_trace_free(t);
}

static void test_bucket_window_cuts(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "E", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "F", 40, 5, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "G", 90, 30, 0);
	struct pt_cell c[8];
	/* E starts before the window and G ends after it */
	assert_string_equal(bucket_names(t, h, 30, 110, 4, c), "E|E|E|G");
	assert_int_equal(c[0].starts, 0);
	assert_int_equal(c[0].start_ns, 0);
	assert_int_equal(c[0].dur_ns, US(100));
	assert_int_equal(c[3].starts, 1); /* G starts at 90, inside [90,110) */
	assert_int_equal(c[3].dur_ns, US(30)); /* the whole event, not the part shown */
	pt_trace_free(t);
}

static void test_bucket_width_one_and_empty(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1), empty = tu_track(t, 1, 2, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "P", 0, 30, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "Q", 40, 60, 0);
	struct pt_cell c[4];
	assert_string_equal(bucket_names(t, h, 0, 100, 1, c), "Q");
	assert_int_equal(c[0].starts, 1);
	/* one event cut at both ends by a one-cell window */
	assert_string_equal(bucket_names(t, h, 50, 60, 1, c), "Q");
	assert_int_equal(c[0].starts, 0);
	assert_string_equal(bucket_names(t, empty, 0, 100, 3, c), "-|-|-");
	assert_int_equal(pt_timeline_bucket(t, 99, 0, 100, c, 3), 0);
	assert_int_equal(c[2].kind, PT_KIND__COUNT);
	/* an empty range and width 0 leave nothing */
	assert_string_equal(bucket_names(t, h, 50, 50, 2, c), "-|-");
	assert_int_equal(pt_timeline_bucket(t, h, 0, 100, c, 0), 0);
	pt_trace_free(t);
}

/* ---- random nested trace against a brute-force reference ---- */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? rng_state % n : 0;
}

static char rnames[64][16];

static void gen(struct pt_trace *t, uint32_t track, uint64_t s, uint64_t e, int depth)
{
	uint64_t now = s;
	while (now < e) {
		now += rnd(depth ? 50 : 400);
		uint64_t len = 1 + rnd(depth < 2 ? 4000 : 300);
		if (now + len > e)
			break;
		struct pt_event ev = {0};
		ev.start_ns = now;
		ev.dur_ns = len;
		ev.track_id = track;
		ev.kind = PT_KIND_OPERATOR;
		int k = (int)rnd(64);
		ev.name_id = pt_trace_intern(t, rnames[k], strlen(rnames[k]));
		pt_trace_add(t, &ev);
		if (depth < 4 && len > 20)
			gen(t, track, now, now + len, depth + 1);
		now += len;
	}
}

struct ref_ev {
	uint64_t s, e;
	uint32_t name;
	int depth;
};

static void ref_bucket(const struct ref_ev *r, size_t n, uint64_t t0, uint64_t t1, size_t w,
		       struct pt_cell *out)
{
	for (size_t c = 0; c < w; c++) {
		unsigned __int128 q0 = (unsigned __int128)(t1 - t0) * c, q1 = q0 + (t1 - t0);
		uint64_t a = t0 + (uint64_t)((q0 + w - 1) / w), b = t0 + (uint64_t)((q1 + w - 1) / w);
		long best = -1;
		uint64_t bc = 0;
		for (size_t i = 0; i < n; i++) {
			int over = r[i].e == r[i].s ? (r[i].s >= a && r[i].s < b)
						    : (r[i].s < b && r[i].e > a);
			if (!over)
				continue;
			uint64_t lo = r[i].s > a ? r[i].s : a, hi = r[i].e < b ? r[i].e : b;
			uint64_t cov = hi > lo ? hi - lo : 0;
			if (best < 0 || cov > bc || (cov == bc && r[i].depth < r[best].depth) ||
			    (cov == bc && r[i].depth == r[best].depth && r[i].s < r[best].s)) {
				best = (long)i;
				bc = cov;
			}
		}
		memset(&out[c], 0, sizeof out[c]);
		out[c].kind = PT_KIND__COUNT;
		if (best >= 0) {
			out[c].kind = PT_KIND_OPERATOR;
			out[c].name_id = r[best].name;
			out[c].start_ns = r[best].s;
			out[c].dur_ns = r[best].e - r[best].s;
			out[c].depth = (uint16_t)r[best].depth;
			out[c].starts = r[best].s >= a && r[best].s < b;
		}
	}
}

static void test_bucket_random_vs_reference(void **state)
{
	for (int k = 0; k < 64; k++)
		snprintf(rnames[k], sizeof rnames[k], "op%d", k);
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	gen(t, h, 1000, 3000000, 0);
	size_t n = (size_t)pt_store_track_events(t->store, h);
	assert_true(n > 5000);
	struct ref_ev *r = calloc(n, sizeof *r);
	struct pt_store_iter it;
	pt_store_iter_init(&it, t->store, h, 0, UINT64_MAX);
	struct pt_event *ev;
	size_t m = 0;
	while ((ev = pt_store_iter_next(&it))) {
		r[m].s = ev->start_ns;
		r[m].e = pt_event_end(ev);
		r[m].name = ev->name_id;
		for (size_t j = 0; j < m; j++) /* proper nesting: depth = open ancestors */
			if (r[j].s <= r[m].s && r[j].e > r[m].s)
				r[m].depth++;
		m++;
	}
	pt_store_iter_done(&it);
	assert_int_equal(m, n);
	struct pt_timeline_cache *cache = pt_timeline_cache_new();
	struct pt_cell got[300], want[300];
	for (int round = 0; round < 40; round++) {
		uint64_t t0 = rnd(3000000), len = 1 + rnd(round < 10 ? 3000000 : 20000);
		if (round == 0) {
			t0 = 0;
			len = 3100000;
		}
		size_t w = 1 + rnd(300);
		pt_timeline_cache_bucket(cache, t, h, t0, t0 + len, got, w);
		ref_bucket(r, n, t0, t0 + len, w, want);
		for (size_t c = 0; c < w; c++) {
			if (memcmp(&got[c], &want[c], sizeof got[c])) {
				print_message("round %d cell %zu/%zu [%" PRIu64 ",+%" PRIu64
					      "): got %u@%" PRIu64 " want %u@%" PRIu64 "\n",
					      round, c, w, t0, len, got[c].name_id, got[c].start_ns,
					      want[c].name_id, want[c].start_ns);
				fail();
			}
		}
		/* the cursor query agrees with a scan too */
		uint64_t q = t0 + len / 2;
		struct pt_event e1;
		long bi = -1;
		for (size_t i = 0; i < n; i++)
			if (r[i].s <= q && r[i].e > q && (bi < 0 || r[i].depth >= r[bi].depth))
				bi = (long)i;
		if (bi >= 0) {
			assert_int_equal(pt_timeline_cache_event_at(cache, t, h, q, 0, &e1), 0);
			assert_int_equal(e1.start_ns, r[bi].s);
			assert_int_equal(pt_event_end(&e1), r[bi].e);
		}
	}
	pt_timeline_cache_free(cache);
	free(r);
	pt_trace_free(t);
}

/* ---- lanes, cursor, steps, correlation, ruler ---- */

static void test_lanes_order(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t a = tu_track(t, 1, 1, -1);
	uint32_t g1 = tu_track(t, 0, 7, 1);
	uint32_t b = tu_track(t, 1, 2, -1);
	uint32_t g0s9 = tu_track(t, 0, 9, 0);
	uint32_t g0s3 = tu_track(t, 0, 3, 0);
	tu_track(t, 1, 3, -1); /* no events: no lane */
	tu_ev(t, a, PT_KIND_OPERATOR, "op", 0, 1, 0);
	tu_ev(t, b, PT_KIND_PROFILE_STEP, "ProfilerStep#0", 0, 10, 0);
	tu_ev(t, g1, PT_KIND_KERNEL, "k", 0, 1, 0);
	tu_ev(t, g0s9, PT_KIND_KERNEL, "k", 0, 1, 0);
	tu_ev(t, g0s3, PT_KIND_KERNEL, "k", 0, 1, 0);
	struct pt_lane l[8];
	size_t n = pt_timeline_lanes(t, l, 8);
	assert_int_equal(n, 5);
	assert_int_equal(l[0].track, b); /* the steps' thread first */
	assert_int_equal(l[1].track, a);
	assert_int_equal(l[2].track, g0s3);
	assert_int_equal(l[3].track, g0s9);
	assert_int_equal(l[4].track, g1);
	assert_int_equal(l[0].is_device, 0);
	assert_int_equal(l[2].is_device, 1);
	assert_string_equal(l[2].label, "GPU 0 stream 3");
	assert_int_equal(pt_timeline_lanes(t, l, 2), 2);
	/* a long, non-ASCII label is cut at a character boundary */
	struct pt_track_key k = {1, 1, 0, 0};
	char lbl[200] = "";
	for (int i = 0; i < 40; i++)
		strcat(lbl, "\xc3\xa9"); /* é */
	pt_trace_set_thread_label(t, &k, pt_trace_intern(t, lbl, strlen(lbl)));
	n = pt_timeline_lanes(t, l, 8);
	assert_true(strlen(l[1].label) < 64);
	assert_true(pt_utf8_valid(l[1].label, strlen(l[1].label)));
	pt_trace_free(t);
}

static void test_event_at(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "A", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "B", 10, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "C", 20, 10, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "D", 200, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "E", 200, 50, 0);
	struct pt_event e;
#define AT(us, dir, want)                                                                      \
	do {                                                                                   \
		assert_int_equal(pt_timeline_event_at(t, h, US(us), dir, &e), 0);              \
		assert_string_equal(pt_trace_str(t, e.name_id), want);                          \
	} while (0)
	AT(25, 0, "C");   /* deepest containing */
	AT(50, 0, "B");
	AT(80, 0, "A");
	AT(150, 0, "E");  /* none contains: closest start (200, deepest of the two) */
	AT(105, 0, "C");  /* closest start is C's (20) rather than D's (200) */
	AT(0, 1, "B");
	AT(10, 1, "C");
	AT(150, 1, "E");  /* next start; deepest of the events sharing it */
	AT(20, -1, "B");
	AT(500, -1, "E");
	AT(0, 0, "A");
	assert_int_equal(pt_timeline_event_at(t, h, 0, -1, &e), PT_ENOENT);
	assert_int_equal(pt_timeline_event_at(t, h, US(200), 1, &e), PT_ENOENT);
	assert_int_equal(pt_timeline_event_at(t, 77, 0, 0, &e), PT_ENOENT);
#undef AT
	pt_trace_free(t);
}

static void test_step_edges(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#0", 0, 100, 0);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 100, 100, 0);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#2", 200, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "op", 150, 10, 0);
	uint64_t s = 0, e = 0;
	assert_int_equal(pt_timeline_step_edge(t, US(150), 1, &s, &e), 0);
	assert_int_equal(s, US(200));
	assert_int_equal(e, US(300));
	assert_int_equal(pt_timeline_step_edge(t, US(150), -1, &s, &e), 0);
	assert_int_equal(s, US(100));
	assert_int_equal(e, US(200));
	assert_int_equal(pt_timeline_step_edge(t, US(100), -1, &s, &e), 0);
	assert_int_equal(s, 0);
	assert_int_equal(pt_timeline_step_edge(t, 0, -1, &s, &e), PT_ENOENT);
	assert_int_equal(pt_timeline_step_edge(t, US(250), 1, &s, &e), PT_ENOENT);
	/* the cache notices new steps */
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	assert_int_equal(pt_timeline_cache_step_edge(c, t, US(250), 1, &s, &e), PT_ENOENT);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#3", 300, 100, 0);
	assert_int_equal(pt_timeline_cache_step_edge(c, t, US(250), 1, &s, &e), 0);
	assert_int_equal(s, US(300));
	pt_timeline_cache_free(c);
	pt_trace_free(t);
}

static void test_cache_follows_appends(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "A", 0, 10, 0);
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	struct pt_cell cells[2];
	pt_timeline_cache_bucket(c, t, h, 0, US(20), cells, 2);
	assert_int_equal(cells[1].kind, PT_KIND__COUNT);
	tu_ev(t, h, PT_KIND_KERNEL, "B", 10, 10, 0);
	pt_timeline_cache_bucket(c, t, h, 0, US(20), cells, 2);
	assert_int_equal(cells[1].kind, PT_KIND_KERNEL);
	pt_timeline_cache_free(c);
	pt_trace_free(t);
}

static void test_correlated(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1), s7 = tu_track(t, 0, 7, 0), s8 = tu_track(t, 0, 8, 0);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 0, 5, 5);
	tu_ev(t, s8, PT_KIND_KERNEL, "k_late", 30, 5, 5);
	tu_ev(t, s7, PT_KIND_MEMCPY, "copy", 10, 5, 5);
	tu_ev(t, s7, PT_KIND_KERNEL, "other", 20, 5, 6);
	struct pt_event out[4];
	size_t n = pt_timeline_correlated(t, 5, out, 4);
	assert_int_equal(n, 2);
	assert_string_equal(pt_trace_str(t, out[0].name_id), "copy");
	assert_string_equal(pt_trace_str(t, out[1].name_id), "k_late");
	assert_int_equal(pt_timeline_correlated(t, 5, out, 1), 1);
	assert_string_equal(pt_trace_str(t, out[0].name_id), "copy");
	assert_int_equal(pt_timeline_correlated(t, 0, out, 4), 0);
	assert_int_equal(pt_timeline_correlated(t, 99, out, 4), 0);
	pt_trace_free(t);
}

static void test_ticks(void **state)
{
	assert_int_equal(pt_timeline_tick_ns(1000000000, 10), 100000000);
	assert_int_equal(pt_timeline_tick_ns(1000000000, 4), 200000000); /* 5 ticks beats 2 */
	assert_int_equal(pt_timeline_tick_ns(7000000, 7), 1000000);
	assert_int_equal(pt_timeline_tick_ns(50, 10), 5);
	assert_int_equal(pt_timeline_tick_ns(0, 10), 1);
	assert_int_equal(pt_timeline_tick_ns(3, 10), 1);
	assert_int_equal(pt_timeline_tick_ns(1000, 0), 1000);
	uint64_t big = pt_timeline_tick_ns(UINT64_MAX, 8);
	assert_true(big >= 1000000000000000000ull);
}

static void test_format_duration(void **state)
{
	char b[32];
#define FMT(ns, want)                                                                          \
	do {                                                                                   \
		pt_format_duration(b, sizeof b, ns);                                           \
		assert_string_equal(b, want);                                                  \
	} while (0)
	FMT(0, "0 ns");
	FMT(999, "999 ns");
	FMT(1000, "1 us");
	FMT(1234, "1.23 us");
	FMT(1235, "1.24 us");
	FMT(800000, "800 us");
	FMT(999999, "1 ms");
	FMT(12500000, "12.5 ms");
	FMT(3000000000ull, "3 s");
	FMT(12345678901ull, "12.3 s");
	FMT(3600000000000ull, "3600 s");
	FMT(UINT64_MAX, "18446744074 s");
#undef FMT
	char small[4];
	pt_format_duration(small, sizeof small, 12500000);
	assert_string_equal(small, "12.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_nested),
		cmocka_unit_test(test_bucket_most_coverage),
		cmocka_unit_test(test_bucket_tiny_and_gaps),
		cmocka_unit_test(test_bucket_window_cuts),
		cmocka_unit_test(test_bucket_width_one_and_empty),
		cmocka_unit_test(test_bucket_random_vs_reference),
		cmocka_unit_test(test_lanes_order),
		cmocka_unit_test(test_event_at),
		cmocka_unit_test(test_step_edges),
		cmocka_unit_test(test_cache_follows_appends),
		cmocka_unit_test(test_correlated),
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_format_duration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
