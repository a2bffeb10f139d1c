/*
 * test_timeline.c - the timeline model: rows by nesting depth, which event
 * wins a cell of a row (hand-made cases, then a random nested trace checked
 * against a brute-force reference so the block summaries are exercised,
 * and the index built in pieces, as a live session appends, checked
 * against one built at once), lane order, the cursor queries, parents and
 * self time, the step list (numbers, slowest, by number), correlated
 * activity both ways, search, trimming after the store's cap dropped
 * events, ruler ticks and labels, and duration text.
 */
#include "testutil.h"

#include <inttypes.h>

#include "proftop/error.h"
#include "proftop/store.h"
#include "proftop/timeline.h"
#include "model/util.h"

static const char *cell_name(struct pt_trace *t, const struct pt_cell *c)
{
	return c->kind == PT_KIND__COUNT ? "-" : pt_trace_str(t, c->name_id);
}

static struct pt_timeline_cache *C; /* one cache per test, made by bucket_names */

/* Buckets row depth of [t0_us, t1_us) into w cells; the winners' names joined by '|'. */
static const char *bucket_names(struct pt_trace *t, uint32_t track, unsigned depth, double t0_us,
				double t1_us, size_t w, struct pt_cell *cells)
{
	static char out[1024];
	if (!C)
		C = pt_timeline_cache_new();
	pt_timeline_bucket(C, t, track, depth, US(t0_us), US(t1_us), cells, w);
	out[0] = 0;
	for (size_t i = 0; i < w; i++) {
		if (i)
			strcat(out, "|");
		strcat(out, cell_name(t, &cells[i]));
	}
	return out;
}

static void done(struct pt_trace *t)
{
	pt_timeline_cache_free(C);
	C = NULL;
	pt_trace_free(t);
}

static void test_bucket_nested(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "A", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "B", 10, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "C", 20, 10, 0);
	struct pt_cell c[16];
	/* each depth on its own row */
	assert_string_equal(bucket_names(t, h, 0, 0, 100, 10, c), "A|A|A|A|A|A|A|A|A|A");
	assert_int_equal(c[0].starts, 1);
	assert_int_equal(c[1].starts, 0);
	assert_int_equal(c[0].depth, 0);
	assert_int_equal(c[0].kind, PT_KIND_OPERATOR);
	assert_int_equal(c[0].start_ns, 0);
	assert_int_equal(c[0].dur_ns, US(100));
	assert_string_equal(bucket_names(t, h, 1, 0, 100, 10, c), "-|B|B|B|B|B|-|-|-|-");
	assert_int_equal(c[1].depth, 1);
	assert_string_equal(bucket_names(t, h, 2, 0, 100, 10, c), "-|-|C|-|-|-|-|-|-|-");
	assert_string_equal(bucket_names(t, h, 3, 0, 100, 10, c), "-|-|-|-|-|-|-|-|-|-");
	/* past A's end: nothing */
	assert_string_equal(bucket_names(t, h, 0, 50, 150, 4, c), "A|A|-|-");
	struct pt_lane l[2];
	assert_int_equal(pt_timeline_lanes(C, t, l, 2), 1);
	assert_int_equal(l[0].nrows, 3);
	done(t);
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
	/* an instant alone in a cell still shows */
	tu_ev(t, h, PT_KIND_INSTANT, "I", 35, 0, 0);
	struct pt_cell c[8];
	assert_string_equal(bucket_names(t, h, 0, 0, 40, 4, c), "Y|Y|R|I");
	assert_int_equal(c[0].starts, 1);
	assert_int_equal(c[1].starts, 0);
	assert_int_equal(c[3].kind, PT_KIND_INSTANT);
	assert_int_equal(c[3].starts, 1);
	done(t);
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
	assert_string_equal(bucket_names(t, d, 0, 0, 40, 4, c), "k2|-|-|m");
	assert_int_equal(c[0].kind, PT_KIND_KERNEL);
	assert_int_equal(c[1].kind, PT_KIND__COUNT);
	assert_int_equal(c[3].kind, PT_KIND_MEMCPY);
	/* zoomed in: one cell per microsecond */
	assert_string_equal(bucket_names(t, d, 0, 0, 8, 8, c), "-|k1|-|k2|k2|k2|-|k3");
	done(t);
}

static void test_bucket_window_cuts(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "E", 0, 90, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "F", 40, 5, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "G", 90, 30, 0);
	struct pt_cell c[8];
	/* E starts before the window and G ends after it */
	assert_string_equal(bucket_names(t, h, 0, 30, 110, 4, c), "E|E|E|G");
	assert_int_equal(c[0].starts, 0);
	assert_int_equal(c[0].start_ns, 0);
	assert_int_equal(c[0].dur_ns, US(90));
	assert_int_equal(c[3].starts, 1);      /* G starts at 90, inside [90,110) */
	assert_int_equal(c[3].dur_ns, US(30)); /* the whole event, not the part shown */
	assert_string_equal(bucket_names(t, h, 1, 30, 110, 4, c), "F|-|-|-");
	done(t);
}

static void test_bucket_width_one_and_empty(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1), empty = tu_track(t, 1, 2, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "P", 0, 30, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "Q", 40, 60, 0);
	struct pt_cell c[4];
	assert_string_equal(bucket_names(t, h, 0, 0, 100, 1, c), "Q");
	assert_int_equal(c[0].starts, 1);
	/* one event cut at both ends by a one-cell window */
	assert_string_equal(bucket_names(t, h, 0, 50, 60, 1, c), "Q");
	assert_int_equal(c[0].starts, 0);
	assert_string_equal(bucket_names(t, empty, 0, 0, 100, 3, c), "-|-|-");
	assert_int_equal(pt_timeline_bucket(C, t, 99, 0, 0, 100, c, 3), 0);
	assert_int_equal(c[2].kind, PT_KIND__COUNT);
	/* an empty range and width 0 leave nothing */
	assert_string_equal(bucket_names(t, h, 0, 50, 50, 2, c), "-|-");
	assert_int_equal(pt_timeline_bucket(C, t, h, 0, 0, 100, c, 0), 0);
	assert_true(pt_timeline_any_in(C, t, h, US(35), US(45)));
	assert_false(pt_timeline_any_in(C, t, h, US(30), US(40)));
	assert_false(pt_timeline_any_in(C, t, empty, 0, US(100)));
	done(t);
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

static void ref_bucket(const struct ref_ev *r, size_t n, int depth, uint64_t t0, uint64_t t1,
		       size_t w, struct pt_cell *out)
{
	for (size_t c = 0; c < w; c++) {
		unsigned __int128 q0 = (unsigned __int128)(t1 - t0) * c, q1 = q0 + (t1 - t0);
		uint64_t a = t0 + (uint64_t)((q0 + w - 1) / w),
			 b = t0 + (uint64_t)((q1 + w - 1) / w);
		long best = -1;
		uint64_t bc = 0;
		for (size_t i = 0; i < n; i++) {
			if (r[i].depth != depth)
				continue;
			int over = r[i].e == r[i].s ? (r[i].s >= a && r[i].s < b)
						    : (r[i].s < b && r[i].e > a);
			if (!over)
				continue;
			uint64_t lo = r[i].s > a ? r[i].s : a, hi = r[i].e < b ? r[i].e : b;
			uint64_t cov = hi > lo ? hi - lo : 0;
			if (best < 0 || cov > bc || (cov == bc && r[i].s < r[best].s)) {
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
		int depth = (int)rnd(5);
		pt_timeline_bucket(cache, t, h, (unsigned)depth, t0, t0 + len, got, w);
		ref_bucket(r, n, depth, t0, t0 + len, w, want);
		for (size_t c = 0; c < w; c++) {
			if (memcmp(&got[c], &want[c], sizeof got[c])) {
				print_message("round %d depth %d cell %zu/%zu [%" PRIu64
					      ",+%" PRIu64 "): got %u@%" PRIu64 " want %u@%" PRIu64
					      "\n",
					      round, depth, c, w, t0, len, got[c].name_id,
					      got[c].start_ns, want[c].name_id, want[c].start_ns);
				fail();
			}
		}
		/* the cursor query agrees with a scan too: the deepest containing q */
		uint64_t q = t0 + len / 2;
		struct pt_event e1;
		unsigned d1;
		long bi = -1;
		for (size_t i = 0; i < n; i++)
			if (r[i].s <= q && r[i].e > q && (bi < 0 || r[i].depth >= r[bi].depth))
				bi = (long)i;
		if (bi >= 0) {
			assert_int_equal(pt_timeline_event_at(cache, t, h, -1, q, 0, &e1, &d1), 0);
			assert_int_equal(e1.start_ns, r[bi].s);
			assert_int_equal(pt_event_end(&e1), r[bi].e);
			assert_int_equal(d1, r[bi].depth);
			/* and its parent is the one a row up containing it */
			if (d1) {
				struct pt_event p;
				assert_int_equal(pt_timeline_parent(cache, t, &e1, d1, &p), 0);
				assert_true(p.start_ns <= e1.start_ns &&
					    pt_event_end(&p) > e1.start_ns);
			}
		}
	}
	pt_timeline_cache_free(cache);
	free(r);
	pt_trace_free(t);
}

static int end_cmp(const void *a, const void *b)
{
	uint64_t x = pt_event_end(a), y = pt_event_end(b);
	const struct pt_event *ea = a, *eb = b;
	if (x != y)
		return x < y ? -1 : 1;
	return ea->start_ns > eb->start_ns ? -1 : ea->start_ns < eb->start_ns;
}

/*
 * A live session appends in end order, a step after its children; the
 * index that followed every append must equal one built at once.
 */
static void test_incremental_equals_full(void **state)
{
	for (int k = 0; k < 64; k++)
		snprintf(rnames[k], sizeof rnames[k], "op%d", k);
	struct pt_trace *full = pt_trace_new(0);
	uint32_t hf = tu_track(full, 1, 1, -1);
	gen(full, hf, 0, 10000000, 0);
	/* replay full's events into live in end order, indexing every so often */
	size_t n = (size_t)pt_store_track_events(full->store, hf);
	struct pt_event *v = calloc(n, sizeof *v);
	struct pt_store_iter it;
	pt_store_iter_init(&it, full->store, hf, 0, UINT64_MAX);
	struct pt_event *ev;
	size_t m = 0;
	while ((ev = pt_store_iter_next(&it)))
		v[m++] = *ev;
	pt_store_iter_done(&it);
	qsort(v, m, sizeof *v, end_cmp); /* by end: children before parents */
	struct pt_trace *live = pt_trace_new(0);
	uint32_t hl = tu_track(live, 1, 1, -1);
	struct pt_timeline_cache *cl = pt_timeline_cache_new(), *cf = pt_timeline_cache_new();
	size_t indexed = 0, updates = 0;
	for (size_t i = 0; i < m; i++) {
		struct pt_event e = v[i];
		e.name_id = pt_trace_intern(live, pt_trace_str(full, v[i].name_id),
					    strlen(pt_trace_str(full, v[i].name_id)));
		e.track_id = hl;
		pt_trace_add(live, &e);
		if (rnd(97) == 0) {
			indexed += pt_timeline_update(cl, live);
			updates++;
		}
	}
	indexed += pt_timeline_update(cl, live);
	/* pieces (about a store chunk each), not a rebuild per update */
	print_message("%zu events, %zu updates, %zu indexed\n", m, updates, indexed);
	assert_true(indexed < m + updates * 8192);
	assert_true(indexed * 4 < updates * m);
	struct pt_lane ll[2], lf[2];
	assert_int_equal(pt_timeline_lanes(cl, live, ll, 2), 1);
	assert_int_equal(pt_timeline_lanes(cf, full, lf, 2), 1);
	assert_int_equal(ll[0].nrows, lf[0].nrows);
	struct pt_cell a[200], b[200];
	for (int round = 0; round < 30; round++) {
		uint64_t t0 = rnd(10000000), len = 1 + rnd(round < 10 ? 10000000 : 30000);
		for (unsigned d = 0; d < lf[0].nrows; d++) {
			pt_timeline_bucket(cl, live, hl, d, t0, t0 + len, a, 200);
			pt_timeline_bucket(cf, full, hf, d, t0, t0 + len, b, 200);
			for (int c = 0; c < 200; c++) {
				assert_int_equal(a[c].kind, b[c].kind);
				assert_int_equal(a[c].start_ns, b[c].start_ns);
				assert_int_equal(a[c].dur_ns, b[c].dur_ns);
			}
		}
	}
	free(v);
	pt_timeline_cache_free(cl);
	pt_timeline_cache_free(cf);
	pt_trace_free(live);
	pt_trace_free(full);
}

/* The store says where new events start: exactly from a checkpoint, at
 * chunk granularity (earlier, never later) from anywhere else. */
static void test_store_checkpoints(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 100; i++)
		tu_ev(t, h, PT_KIND_OPERATOR, "op", 1000 + i, 0.5, 0);
	struct pt_store *st = t->store;
	assert_int_equal(pt_store_track_appended(st, h), 100);
	uint64_t cp = pt_store_track_checkpoint(st, h);
	assert_int_equal(cp, 100);
	assert_int_equal(pt_store_track_start_since(st, h, cp), UINT64_MAX);
	tu_ev(t, h, PT_KIND_OPERATOR, "late", 2000, 1, 0);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "step", 1500, 600, 0); /* ends last, starts earlier */
	assert_int_equal(pt_store_track_start_since(st, h, cp), US(1500));
	uint64_t cp2 = pt_store_track_checkpoint(st, h);
	tu_ev(t, h, PT_KIND_OPERATOR, "later", 3000, 1, 0);
	assert_int_equal(pt_store_track_start_since(st, h, cp2), US(3000));
	assert_int_equal(pt_store_track_start_since(st, h, cp), US(1500)); /* both stretches */
	/* not a checkpoint: a lower bound of what came since (the start of its
	 * chunk, wherever the store's chunks begin), never later than event 50 */
	assert_true(pt_store_track_start_since(st, h, 50) <= US(1050));
	pt_trace_free(t);
}

/* ---- lanes, cursor, steps, correlation, search ---- */

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
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	size_t n = pt_timeline_lanes(c, t, l, 8);
	assert_int_equal(n, 5);
	assert_int_equal(l[0].track, b); /* the steps' thread first */
	assert_int_equal(l[1].track, a);
	assert_int_equal(l[2].track, g0s3);
	assert_int_equal(l[3].track, g0s9);
	assert_int_equal(l[4].track, g1);
	assert_int_equal(l[0].is_device, 0);
	assert_int_equal(l[0].device, -1);
	assert_int_equal(l[2].is_device, 1);
	assert_int_equal(l[4].device, 1);
	assert_string_equal(l[2].label, "GPU 0 stream 3");
	assert_int_equal(pt_timeline_lanes(c, t, l, 2), 2);
	/* a long, non-ASCII label is cut at a character boundary */
	struct pt_track_key k = {1, 1, 0, 0};
	char lbl[200] = "";
	for (int i = 0; i < 40; i++)
		strcat(lbl, "\xc3\xa9"); /* é */
	pt_trace_set_thread_label(t, &k, pt_trace_intern(t, lbl, strlen(lbl)));
	n = pt_timeline_lanes(c, t, l, 8);
	assert_true(strlen(l[1].label) < 64);
	assert_true(pt_utf8_valid(l[1].label, strlen(l[1].label)));
	pt_timeline_cache_free(c);
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
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	struct pt_event e;
	unsigned d;
#define AT(depth, us, dir, want)                                                                   \
	do {                                                                                       \
		assert_int_equal(pt_timeline_event_at(c, t, h, depth, US(us), dir, &e, &d), 0);    \
		assert_string_equal(pt_trace_str(t, e.name_id), want);                             \
	} while (0)
	AT(-1, 25, 0, "C"); /* deepest containing */
	assert_int_equal(d, 2);
	AT(-1, 50, 0, "B");
	AT(-1, 80, 0, "A");
	AT(-1, 150, 0, "E"); /* none contains: closest start (200, deepest of the two) */
	AT(-1, 105, 0, "C"); /* closest start is C's (20) rather than D's (200) */
	AT(-1, 0, 1, "B");
	AT(-1, 10, 1, "C");
	AT(-1, 150, 1, "E"); /* next start; deepest of the events sharing it */
	AT(-1, 20, -1, "B");
	AT(-1, 500, -1, "E");
	AT(-1, 0, 0, "A");
	/* one row */
	AT(0, 25, 0, "A");
	AT(1, 25, 0, "B");
	AT(1, 80, 0, "B"); /* past B: the closest start on its row */
	AT(0, 50, 1, "D");
	AT(1, 100, 1, "E");
	AT(0, 250, -1, "D");
	assert_int_equal(pt_timeline_event_at(c, t, h, -1, 0, -1, &e, &d), PT_ENOENT);
	assert_int_equal(pt_timeline_event_at(c, t, h, -1, US(200), 1, &e, &d), PT_ENOENT);
	assert_int_equal(pt_timeline_event_at(c, t, 77, -1, 0, 0, &e, &d), PT_ENOENT);
	assert_int_equal(pt_timeline_event_at(c, t, h, 9, 0, 0, &e, &d), PT_ENOENT);
	/* parents and self time: A holds B (50) which holds C (10) */
	AT(-1, 25, 0, "C");
#undef AT
	struct pt_event p, pp;
	assert_int_equal(pt_timeline_parent(c, t, &e, 2, &p), 0);
	assert_string_equal(pt_trace_str(t, p.name_id), "B");
	assert_int_equal(pt_timeline_parent(c, t, &p, 1, &pp), 0);
	assert_string_equal(pt_trace_str(t, pp.name_id), "A");
	assert_int_equal(pt_timeline_parent(c, t, &pp, 0, &e), PT_ENOENT);
	assert_int_equal(pt_timeline_self_ns(c, t, &pp, 0), US(50));
	assert_int_equal(pt_timeline_self_ns(c, t, &p, 1), US(40));
	pt_timeline_cache_free(c);
	pt_trace_free(t);
}

static void test_steps(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#10", 0, 100, 0);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#11", 100, 300, 0);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#12", 400, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "op", 150, 10, 0);
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	uint64_t s = 0, e = 0;
	assert_int_equal(pt_timeline_step_edge(c, t, US(150), 1, &s, &e), 0);
	assert_int_equal(s, US(400));
	assert_int_equal(e, US(500));
	assert_int_equal(pt_timeline_step_edge(c, t, US(150), -1, &s, &e), 0);
	assert_int_equal(s, US(100));
	assert_int_equal(pt_timeline_step_edge(c, t, US(100), -1, &s, &e), 0);
	assert_int_equal(s, 0);
	assert_int_equal(pt_timeline_step_edge(c, t, 0, -1, &s, &e), PT_ENOENT);
	assert_int_equal(pt_timeline_step_edge(c, t, US(450), 1, &s, &e), PT_ENOENT);
	const struct pt_tl_step *v;
	assert_int_equal(pt_timeline_steps(c, t, &v), 3);
	assert_int_equal(v[1].number, 11);
	assert_int_equal(pt_timeline_step_by_rank(c, t, 0), 1); /* #11 is the slowest */
	assert_int_equal(pt_timeline_step_by_rank(c, t, 1), 0); /* then the earlier of the ties */
	assert_int_equal(pt_timeline_step_by_rank(c, t, 3), -1);
	assert_int_equal(pt_timeline_step_by_number(c, t, 12), 2);
	assert_int_equal(pt_timeline_step_by_number(c, t, 99), -1);
	assert_int_equal(pt_timeline_step_at(c, t, US(150)), 1);
	assert_int_equal(pt_timeline_step_at(c, t, 0), 0);
	/* the cache notices new steps */
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#13", 500, 100, 0);
	assert_int_equal(pt_timeline_step_edge(c, t, US(450), 1, &s, &e), 0);
	assert_int_equal(s, US(500));
	pt_timeline_cache_free(c);
	pt_trace_free(t);

	/* unnamed steps: ordinals, counting the steps the cap dropped */
	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	h = tu_track(t, 1, 1, -1);
	uint32_t o = tu_track(t, 1, 2, -1);
	for (int i = 0; i < 200; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", i * 100, 90, 0);
	for (int i = 0; i < 40000; i++) /* enough to make the cap drop the oldest */
		tu_ev(t, o, PT_KIND_OPERATOR, "filler", 20000 + i * 0.1, 0.05, 0);
	for (int i = 200; i < 210; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 30000 + i * 100, 90, 0);
	c = pt_timeline_cache_new();
	size_t ns = pt_timeline_steps(c, t, &v);
	assert_true(pt_store_dropped(t->store) > 0);
	assert_true(ns > 0 && ns <= 210);
	assert_int_equal(v[ns - 1].number, 209);
	assert_int_equal(v[0].number, 209 - (int64_t)(ns - 1));
	pt_timeline_cache_free(c);
	pt_trace_free(t);
}

static void test_trim_after_drops(void **state)
{
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	for (int i = 0; i < 60000; i++) {
		tu_ev(t, h, PT_KIND_OPERATOR, "op", i * 10, 5, 0);
		if (i % 5000 == 0)
			pt_timeline_update(c, t);
	}
	assert_true(pt_store_dropped(t->store) > 0);
	uint64_t cf = pt_store_complete_from_ns(t->store);
	struct pt_event e;
	unsigned d;
	/* nothing before the complete-from time; everything after it */
	assert_int_equal(pt_timeline_event_at(c, t, h, 0, 0, 1, &e, &d), 0);
	assert_true(e.start_ns >= cf);
	assert_true(e.start_ns < cf + US(10));
	assert_int_equal(pt_timeline_event_at(c, t, h, 0, US(600000), -1, &e, &d), 0);
	assert_int_equal(e.start_ns, US(599990));
	pt_timeline_cache_free(c);
	pt_trace_free(t);
}

static void test_correlated(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1), s7 = tu_track(t, 0, 7, 0), s8 = tu_track(t, 0, 8, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::mm", 0, 8, 0);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 1, 5, 5);
	tu_ev(t, s8, PT_KIND_KERNEL, "k_late", 30, 5, 5);
	tu_ev(t, s7, PT_KIND_MEMCPY, "copy", 10, 5, 5);
	tu_ev(t, s7, PT_KIND_KERNEL, "other", 20, 5, 6);
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	struct pt_event out[4];
	unsigned dd[4];
	size_t n = pt_timeline_correlated(c, t, 5, 1, out, dd, 4);
	assert_int_equal(n, 2);
	assert_string_equal(pt_trace_str(t, out[0].name_id), "copy");
	assert_string_equal(pt_trace_str(t, out[1].name_id), "k_late");
	assert_int_equal(pt_timeline_correlated(c, t, 5, 1, out, NULL, 1), 1);
	assert_string_equal(pt_trace_str(t, out[0].name_id), "copy");
	assert_int_equal(pt_timeline_correlated(c, t, 0, 1, out, NULL, 4), 0);
	assert_int_equal(pt_timeline_correlated(c, t, 99, 1, out, NULL, 4), 0);
	/* back from the kernel to its launch, one row below the operator */
	assert_int_equal(pt_timeline_correlated(c, t, 5, 0, out, dd, 4), 1);
	assert_string_equal(pt_trace_str(t, out[0].name_id), "cudaLaunchKernel");
	assert_int_equal(dd[0], 1);
	/* from the operator to what it launched */
	struct pt_event op;
	unsigned d;
	assert_int_equal(pt_timeline_event_at(c, t, h, 0, 0, 0, &op, &d), 0);
	n = pt_timeline_launched(c, t, &op, 0, out, dd, 4);
	assert_int_equal(n, 2);
	assert_string_equal(pt_trace_str(t, out[1].name_id), "k_late");
	pt_timeline_cache_free(c);
	pt_trace_free(t);
}

static void test_find(void **state)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 0, 7, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::mm", 0, 10, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "slow_op", 2, 3, 0);
	tu_ev(t, g, PT_KIND_KERNEL, "slow_kernel", 20, 3, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "slow_op", 40, 3, 0);
	uint8_t match[64] = {0};
	match[pt_strtab_find(t->strings, "slow_op", 7)] = 1;
	match[pt_strtab_find(t->strings, "slow_kernel", 11)] = 1;
	uint32_t tracks[2] = {h, g};
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	struct pt_event e;
	unsigned d;
	assert_int_equal(pt_timeline_find(c, t, match, 64, tracks, 2, 0, 1, &e, &d), 0);
	assert_int_equal(e.start_ns, US(2));
	assert_int_equal(d, 1);
	assert_int_equal(pt_timeline_find(c, t, match, 64, tracks, 2, US(2), 1, &e, &d), 0);
	assert_string_equal(pt_trace_str(t, e.name_id), "slow_kernel");
	assert_int_equal(pt_timeline_find(c, t, match, 64, tracks, 2, US(20), 1, &e, &d), 0);
	assert_int_equal(e.start_ns, US(40));
	assert_int_equal(pt_timeline_find(c, t, match, 64, tracks, 2, US(40), 1, &e, &d),
			 PT_ENOENT);
	assert_int_equal(pt_timeline_find(c, t, match, 64, tracks, 2, US(40), -1, &e, &d), 0);
	assert_int_equal(e.start_ns, US(20));
	assert_int_equal(pt_timeline_find(c, t, match, 64, tracks, 1, US(40), -1, &e, &d), 0);
	assert_int_equal(e.start_ns, US(2)); /* the device lane not searched */
	pt_timeline_cache_free(c);
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

static void test_ruler_labels(void **state)
{
	char b[32];
#define LBL(v, tick, unit, want)                                                                   \
	do {                                                                                       \
		pt_timeline_ruler_label(b, sizeof b, v, tick, unit);                               \
		assert_string_equal(b, want);                                                      \
	} while (0)
	LBL(0, 200000, 2000000, "0");
	LBL(200000, 200000, 2000000, "0.2 ms");
	LBL(1400000, 200000, 2000000, "1.4 ms");
	LBL(1000000, 200000, 2000000, "1.0 ms");
	LBL(15203400000ull, 100000, 15203400000ull, "15.2034 s");
	LBL(5000, 5000, 60000, "5 us");
	LBL(7, 1, 50, "7 ns");
	LBL(3000000000ull, 1000000000, 9000000000ull, "3 s");
#undef LBL
	/* neighbouring labels differ at every zoom */
	for (uint64_t span = 1000; span < 100000000000ull; span *= 3) {
		uint64_t tick = pt_timeline_tick_ns(span, 12);
		char prev[32] = "";
		for (uint64_t v = 0; v <= span; v += tick) {
			pt_timeline_ruler_label(b, sizeof b, v, tick, span);
			assert_string_not_equal(b, prev);
			strcpy(prev, b);
		}
	}
}

static void test_format_duration(void **state)
{
	char b[32];
#define FMT(ns, want)                                                                              \
	do {                                                                                       \
		pt_format_duration(b, sizeof b, ns);                                               \
		assert_string_equal(b, want);                                                      \
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
	    cmocka_unit_test(test_incremental_equals_full),
	    cmocka_unit_test(test_store_checkpoints),
	    cmocka_unit_test(test_lanes_order),
	    cmocka_unit_test(test_event_at),
	    cmocka_unit_test(test_steps),
	    cmocka_unit_test(test_trim_after_drops),
	    cmocka_unit_test(test_correlated),
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_ticks),
	    cmocka_unit_test(test_ruler_labels),
	    cmocka_unit_test(test_format_duration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
