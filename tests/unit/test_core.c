/*
 * test_core.c - string table and event store (cap, drop order, sorted
 * merge iteration, nearly sorted chunks, arenas, windows). The trace sink,
 * escaping and the memory and thread helpers are test_core_util.c's.
 */
#include "core_util.h"

static void test_strtab_interns_once(void **state)
{
	(void)state;
	struct pt_strtab *st = pt_strtab_new();
	uint32_t a = pt_strtab_intern(st, "aten::mm", 8);
	uint32_t b = pt_strtab_intern(st, "aten::addmm", 11);
	assert_int_not_equal(a, b);
	assert_int_equal(pt_strtab_intern(st, "aten::mm", 8), a);
	assert_int_equal(pt_strtab_intern(st, "aten::mmX", 8), a); /* length bounds it */
	assert_int_equal(pt_strtab_intern(st, "", 0), 0);
	assert_string_equal(pt_strtab_get(st, b), "aten::addmm");
	assert_string_equal(pt_strtab_get(st, 0), "");
	assert_string_equal(pt_strtab_get(st, 99999), "");
	assert_int_equal(pt_strtab_find(st, "nope", 4), 0);
	/* many strings force the table to grow; ids stay stable */
	char name[32];
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(name, sizeof name, "op%d", i);
		assert_int_equal(pt_strtab_intern(st, name, (size_t)n), (uint32_t)i + 3);
	}
	assert_int_equal(pt_strtab_intern(st, "aten::mm", 8), a);
	assert_string_equal(pt_strtab_get(st, 3 + 77777), "op77777");
	/* embedded NUL is part of the name */
	uint32_t z = pt_strtab_intern(st, "a\0b", 3);
	assert_int_equal(pt_strtab_len(st, z), 3);
	assert_int_not_equal(z, pt_strtab_intern(st, "a", 1));
	pt_strtab_free(st);
}

static struct pt_event mk(uint32_t track, uint64_t start, uint64_t dur)
{
	struct pt_event e = {0};
	e.track_id = track;
	e.start_ns = start;
	e.dur_ns = dur;
	e.kind = PT_KIND_OPERATOR;
	return e;
}

static void test_store_merges_chunks_in_order(void **state)
{
	(void)state;
	struct pt_store *st = pt_store_new(64 << 20);
	/* 10000 events in reverse and interleaved order across chunks */
	for (int i = 0; i < 10000; i++) {
		uint64_t t = (uint64_t)((i * 7919) % 10000);
		pt_store_append(st, &(struct pt_event){.track_id = 1, .start_ns = t * 10, .dur_ns = 5});
	}
	assert_int_equal(pt_store_count(st), 10000);
	assert_int_equal(pt_store_track_events(st, 1), 10000);
	assert_int_equal(pt_store_track_events(st, 0), 0);
	struct pt_store_iter it;
	pt_store_iter_init(&it, st, 1, 0, UINT64_MAX);
	uint64_t expect = 0;
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it))) {
		assert_int_equal(ev->start_ns, expect);
		expect += 10;
	}
	assert_int_equal(expect, 100000);
	pt_store_iter_done(&it);
	/* window [1000, 2000) */
	pt_store_iter_init(&it, st, 1, 1000, 2000);
	int n = 0;
	while ((ev = pt_store_iter_next(&it))) {
		assert_true(ev->start_ns >= 1000 && ev->start_ns < 2000);
		n++;
	}
	assert_int_equal(n, 100);
	pt_store_iter_done(&it);
	/* an empty track iterates nothing */
	pt_store_iter_init(&it, st, 7, 0, UINT64_MAX);
	assert_null(pt_store_iter_next(&it));
	pt_store_iter_done(&it);
	pt_store_free(st);
}

static void test_store_ties_longer_first(void **state)
{
	(void)state;
	struct pt_store *st = pt_store_new(0);
	struct pt_event child = mk(0, 100, 10), parent = mk(0, 100, 50);
	pt_store_append(st, &child);
	pt_store_append(st, &parent);
	struct pt_store_iter it;
	pt_store_iter_init(&it, st, 0, 0, UINT64_MAX);
	assert_int_equal(pt_store_iter_next(&it)->dur_ns, 50);
	assert_int_equal(pt_store_iter_next(&it)->dur_ns, 10);
	assert_null(pt_store_iter_next(&it));
	pt_store_iter_done(&it);
	pt_store_free(st);
}

/* The tests' random numbers: a 64-bit LCG, its high 31 bits. */
static uint32_t lcg_next(uint64_t *rng)
{
	*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*rng >> 33);
}

/* Reference order: (start, longer first, kind, name, corr), then append
 * order (arg holds it): what a stable sort gives. */
static int ref_cmp(const void *a_, const void *b_)
{
	const struct pt_event *a = a_, *b = b_;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->name_id != b->name_id)
		return a->name_id < b->name_id ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->arg < b->arg ? -1 : a->arg > b->arg;
}

/* Chunks written nearly sorted (a Kineto thread: each parent after its
 * children), with runs of equal keys, a few far-off events, a reversed
 * stretch and random ones: the store's adaptive sort gives exactly a
 * stable sort's order, tie order included. */
static void test_store_sorts_nearly_sorted_stably(void **state)
{
	(void)state;
	uint64_t rng = 12345;
	for (int shape = 0; shape < 5; shape++) {
		struct pt_store *st = pt_store_new(256 << 20);
		enum { N = 30000 };
		struct pt_event *ref = calloc(N, sizeof *ref);
		uint64_t t = 1000;
		for (int i = 0; i < N; i++) {
			uint32_t r = lcg_next(&rng);
			struct pt_event e = mk(0, 0, 0);
			e.arg = (uint64_t)i; /* append order */
			e.name_id = r % 3;
			if (shape == 0) { /* children, then their parent */
				if (i % 5 == 4) {
					e.start_ns = t - 40;
					e.dur_ns = 60;
				} else {
					e.start_ns = t;
					e.dur_ns = 5;
					t += 10;
				}
			} else if (shape == 1) { /* late copies of earlier keys */
				e.name_id = 0;
				e.dur_ns = 10;
				e.start_ns = i % 7 == 6 ? t - 10 * (r % 3) : t;
				t += (i % 2) * 10;
			} else if (shape == 2) { /* sorted but a few far-off ones */
				e.start_ns = (r % 97 == 0) ? r % 100000 : t;
				e.dur_ns = 7;
				t += 3;
			} else if (shape == 3) { /* reversed stretches */
				e.start_ns = (uint64_t)(N - i) * 10 + (i / 1000) * 100000;
				e.dur_ns = 1;
			} else { /* random */
				e.start_ns = r % 5000;
				e.dur_ns = r % 7;
			}
			ref[i] = e;
			pt_store_append(st, &e);
		}
		qsort(ref, N, sizeof *ref, ref_cmp);
		struct pt_store_iter it;
		pt_store_iter_init(&it, st, 0, 0, UINT64_MAX);
		struct pt_event *ev;
		int n = 0;
		while ((ev = pt_store_iter_next(&it))) {
			assert_true(n < N);
			assert_int_equal(ev->start_ns, ref[n].start_ns);
			assert_int_equal(ev->dur_ns, ref[n].dur_ns);
			assert_int_equal(ev->name_id, ref[n].name_id);
			/* ties within a chunk keep append order; across chunks the
			 * older chunk comes first, which is append order too */
			assert_int_equal(ev->arg, ref[n].arg);
			n++;
		}
		assert_int_equal(n, N);
		pt_store_iter_done(&it);
		/* windows: the events starting in [t0, t1), in the same order */
		for (int w = 0; w < 40; w++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t a = ref[(rng >> 33) % N].start_ns, b = ref[(rng >> 13) % N].start_ns;
			uint64_t t0 = a < b ? a : b, t1 = (a < b ? b : a) + (w % 3);
			if (w == 0)
				t0 = 0;
			int k = 0;
			pt_store_iter_init(&it, st, 0, t0, t1);
			while ((ev = pt_store_iter_next(&it))) {
				while (k < N && (ref[k].start_ns < t0 || ref[k].start_ns >= t1))
					k++;
				assert_true(k < N);
				assert_int_equal(ev->arg, ref[k].arg);
				k++;
			}
			while (k < N && (ref[k].start_ns < t0 || ref[k].start_ns >= t1))
				k++;
			assert_int_equal(k, N);
			pt_store_iter_done(&it);
		}
		free(ref);
		pt_store_free(st);
	}
}

/* The store's order of track 0 is a stable sort of ref[0, n). */
static void assert_store_order(struct pt_store *st, const struct pt_event *ref, int n)
{
	struct pt_event *want = malloc((size_t)n * sizeof *want);
	memcpy(want, ref, (size_t)n * sizeof *want);
	qsort(want, (size_t)n, sizeof *want, ref_cmp);
	struct pt_store_iter it;
	pt_store_iter_init(&it, st, 0, 0, UINT64_MAX);
	struct pt_event *ev;
	int k = 0;
	while ((ev = pt_store_iter_next(&it))) {
		assert_true(k < n);
		assert_int_equal(ev->arg, want[k].arg);
		k++;
	}
	assert_int_equal(k, n);
	pt_store_iter_done(&it);
	free(want);
}

/* Written in order but now and then one event out of place, and read (so
 * sorted) between appends as a live session does: a chunk's order is
 * followed as it is written (a chunk found in order is not sorted again),
 * and every read gives a stable sort's order. */
static void test_store_order_followed_while_written(void **state)
{
	(void)state;
	uint64_t rng = 777;
	for (int shape = 0; shape < 3; shape++) {
		struct pt_store *st = pt_store_new(256 << 20);
		enum { N = 40000 };
		struct pt_event *ref = calloc(N, sizeof *ref);
		uint64_t t = 100000;
		int reads = 0;
		for (int i = 0; i < N; i++) {
			uint32_t r = lcg_next(&rng);
			struct pt_event e = mk(0, 0, 0);
			e.arg = (uint64_t)i;
			e.name_id = r % 2;
			e.dur_ns = (r >> 4) % 4; /* equal starts tie on the rest */
			uint32_t odd = shape == 0 ? 53 : shape == 1 ? 4001 : 7;
			if (r % odd == 0) {
				e.start_ns = t - (r >> 8) % 300; /* out of place */
			} else {
				e.start_ns = t;
				t += (r >> 12) % 3;
			}
			ref[i] = e;
			pt_store_append(st, &e);
			if ((r >> 20) % 1500 == 0) {
				assert_store_order(st, ref, i + 1);
				reads++;
			}
		}
		assert_true(reads > 5);
		assert_store_order(st, ref, N);
		free(ref);
		pt_store_free(st);
	}
}

static void test_store_cap_drops_oldest_first(void **state)
{
	(void)state;
	size_t cap = 1 << 20; /* minimum cap */
	struct pt_store *st = pt_store_new(cap);
	uint64_t n = 200000; /* 8 MB of events into a 1 MB store */
	for (uint64_t i = 0; i < n; i++) {
		struct pt_event e = mk((uint32_t)(i % 3), i * 100, 50);
		pt_store_append(st, &e);
		assert_true(pt_store_mem_bytes(st) <= cap);
	}
	assert_true(pt_store_dropped(st) > 0);
	assert_int_equal(pt_store_count(st) + pt_store_dropped(st), n);
	/* what is kept is the newest: everything after complete_from is there */
	uint64_t from = pt_store_complete_from_ns(st);
	assert_true(from > 0);
	assert_int_equal(pt_store_last_ns(st), (n - 1) * 100 + 50);
	uint64_t kept_after = 0;
	for (uint32_t tr = 0; tr < 3; tr++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, st, tr, from, UINT64_MAX);
		while (pt_store_iter_next(&it))
			kept_after++;
		pt_store_iter_done(&it);
	}
	uint64_t expect_after = 0;
	for (uint64_t i = 0; i < n; i++)
		expect_after += i * 100 >= from;
	assert_int_equal(kept_after, expect_after);
	pt_store_free(st);
}

/* Big chunks come from 2 MiB arenas cut from reservations of 16: a store
 * past several reservations, their arenas faulted in by another thread
 * while the writer appends (as the reader's parsers do), keeps every event
 * in order; one under a cap drops whole chunks (arenas unmapped inside a
 * reservation) and keeps the newest. */
struct prefaulter {
	struct pt_store *st;
	atomic_int stop;
};

static void *prefault_main(void *arg)
{
	struct prefaulter *p = arg;
	while (!atomic_load(&p->stop))
		pt_store_prefault(p->st, 100000);
	return NULL;
}

static void test_store_arenas_across_reservations(void **state)
{
	(void)state;
	struct pt_store *st = pt_store_new((size_t)512 << 20);
	struct prefaulter pf = {st, 0};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, prefault_main, &pf), 0);
	uint64_t n = 1600000; /* 64 MB of events: 32 arenas and more */
	for (uint64_t i = 0; i < n; i++) {
		struct pt_event e = mk((uint32_t)(i % 2), i * 10, 5);
		pt_store_append(st, &e);
	}
	atomic_store(&pf.stop, 1);
	pthread_join(th, NULL);
	assert_int_equal(pt_store_count(st), n);
	assert_int_equal(pt_store_dropped(st), 0);
	for (uint32_t tr = 0; tr < 2; tr++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, st, tr, 0, UINT64_MAX);
		uint64_t k = 0;
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			assert_int_equal(ev->start_ns, (2 * k + tr) * 10);
			k++;
		}
		pt_store_iter_done(&it);
		assert_int_equal(k, n / 2);
	}
	pt_store_free(st);

	size_t cap = (size_t)16 << 20;
	st = pt_store_new(cap);
	n = 2000000; /* 80 MB into 16 MB */
	for (uint64_t i = 0; i < n; i++) {
		struct pt_event e = mk(0, i * 10, 5);
		pt_store_append(st, &e);
		if (i % 4096 == 0)
			pt_store_prefault(st, 8192);
	}
	assert_true(pt_store_mem_bytes(st) <= cap);
	assert_true(pt_store_dropped(st) > 0);
	assert_int_equal(pt_store_count(st) + pt_store_dropped(st), n);
	struct pt_store_iter it;
	pt_store_iter_init(&it, st, 0, 0, UINT64_MAX);
	uint64_t k = pt_store_dropped(st), kept = 0;
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it))) {
		assert_int_equal(ev->start_ns, k * 10);
		k++;
		kept++;
	}
	pt_store_iter_done(&it);
	assert_int_equal(kept, pt_store_count(st));
	pt_store_free(st);
}

/* A live store keeps its next arenas faulted in from a thread of its own
 * (pt_store_prefault_growing, the live loop's): nothing while its tracks
 * are small (no memory held for a quiet session), the pool once its events
 * fill arenas, and every event kept in order while the writer appends. */
struct grower {
	struct pt_store *st;
	atomic_int stop;
};

static void *grow_main(void *arg)
{
	struct grower *g = arg;
	while (!atomic_load(&g->stop))
		pt_store_prefault_growing(g->st);
	return NULL;
}

static void test_store_prefault_growing(void **state)
{
	(void)state;
	struct pt_store *st = pt_store_new((size_t)256 << 20);
	pt_store_prefault_growing(st);
	assert_int_equal(pt_store_pool_arenas(st), 0);
	for (uint64_t i = 0; i < 2000; i++) { /* 200 events on each of 10 tracks */
		struct pt_event e = mk((uint32_t)(i % 10), i * 10, 5);
		pt_store_append(st, &e);
	}
	pt_store_prefault_growing(st);
	assert_int_equal(pt_store_pool_arenas(st), 0);
	struct grower g = {st, 0};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, grow_main, &g), 0);
	uint64_t n = 800000; /* 32 MB: arenas taken while the other thread fills the pool */
	for (uint64_t i = 0; i < n; i++) {
		struct pt_event e = mk(10, i * 10, 5);
		pt_store_append(st, &e);
	}
	atomic_store(&g.stop, 1);
	pthread_join(th, NULL);
	pt_store_prefault_growing(st);
	assert_true(pt_store_pool_arenas(st) > 0);
	assert_int_equal(pt_store_count(st), n + 2000);
	struct pt_store_iter it;
	pt_store_iter_init(&it, st, 10, 0, UINT64_MAX);
	uint64_t k = 0;
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it))) {
		assert_int_equal(ev->start_ns, k * 10);
		k++;
	}
	pt_store_iter_done(&it);
	assert_int_equal(k, n);
	pt_store_free(st);
}

struct kept {
	struct pt_event *v;
	size_t n, cap;
	uint32_t track;
};

static int keep_track(void *ctx, struct pt_event *ev)
{
	struct kept *k = ctx;
	if (ev->track_id != k->track)
		return 0;
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 1024;
		k->v = realloc(k->v, k->cap * sizeof *k->v);
		assert_non_null(k->v);
	}
	k->v[k->n++] = *ev;
	return 0;
}

static int ev_order(const void *pa, const void *pb)
{
	const struct pt_event *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->dur_ns > b->dur_ns ? -1 : a->dur_ns < b->dur_ns;
}

/* An iterator from a late time skips old chunks without reading them
 * (a binary search on their running latest end): it must still find every
 * kept event that starts in the window, in order, across drops by the
 * cap, with ranges reported when they end (out of start order) and one
 * range that spans the whole run sitting in an old chunk. */
static void test_store_iter_window_skips_old_chunks(void **state)
{
	(void)state;
	for (int pass = 0; pass < 2; pass++) { /* everything kept; the cap dropping */
		struct pt_store *st = pt_store_new(pass ? (size_t)3 << 20 : (size_t)256 << 20);
		uint64_t t = 1000;
		struct pt_event span = mk(1, 500, 0); /* the whole run, appended early */
		for (uint64_t i = 0; i < 120000; i++) {
			uint32_t tr = (uint32_t)(i % 3);
			/* a step of 8 events on track tr, reported as they end: inner first */
			uint64_t s0 = t;
			for (int k = 0; k < 7; k++) {
				struct pt_event e = mk(tr, s0 + 10 + (uint64_t)k * 100, 90);
				pt_store_append(st, &e);
			}
			struct pt_event step = mk(tr, s0, 800);
			pt_store_append(st, &step);
			t += 800;
			if (i == 10) {
				span.dur_ns = 120000ull * 800 * 2;
				pt_store_append(st, &span);
			}
		}
		assert_true(pass ? pt_store_dropped(st) > 0 : pt_store_dropped(st) == 0);
		pt_store_sort(st);
		uint64_t lo = pt_store_first_ns(st), hi = pt_store_last_ns(st);
		for (uint32_t tr = 0; tr < 3; tr++) {
			struct kept k = {NULL, 0, 0, tr};
			pt_store_foreach(st, keep_track, &k);
			qsort(k.v, k.n, sizeof *k.v, ev_order);
			for (int w = 0; w <= 20; w++) {
				uint64_t t0 = lo + (hi - lo) / 20 * (uint64_t)w,
					 t1 = w % 3 ? UINT64_MAX : t0 + 50000;
				size_t j = 0;
				while (j < k.n && k.v[j].start_ns < t0)
					j++;
				struct pt_store_iter it;
				pt_store_iter_init(&it, st, tr, t0, t1);
				const struct pt_event *ev;
				while ((ev = pt_store_iter_next(&it))) {
					assert_true(j < k.n);
					assert_int_equal(ev->start_ns, k.v[j].start_ns);
					assert_int_equal(ev->dur_ns, k.v[j].dur_ns);
					j++;
				}
				pt_store_iter_done(&it);
				assert_true(j == k.n || k.v[j].start_ns >= t1);
			}
			free(k.v);
		}
		pt_store_free(st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strtab_interns_once),
	    cmocka_unit_test(test_store_merges_chunks_in_order),
	    cmocka_unit_test(test_store_iter_window_skips_old_chunks),
	    cmocka_unit_test(test_store_ties_longer_first),
	    cmocka_unit_test(test_store_sorts_nearly_sorted_stably),
	    cmocka_unit_test(test_store_order_followed_while_written),
	    cmocka_unit_test(test_store_cap_drops_oldest_first),
	    cmocka_unit_test(test_store_arenas_across_reservations),
	    cmocka_unit_test(test_store_prefault_growing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
