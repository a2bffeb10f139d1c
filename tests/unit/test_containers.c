/*
 * test_containers.c - the aggregator's and the reader's internal containers:
 * the sparse correlation-id map (dense, sparse, huge ids, id 0, removal,
 * keys that went to the hash before their leaf existed, a randomized run
 * against a plain array), the varint codes and the coded interval lists
 * (round trips of extreme values, out-of-order merges, unions and
 * intersections against brute force), and the store's lazy chunk merge
 * against a sorted copy.
 */
#include "testutil.h"

#include "analyze/agg_internal.h"
#include "proftop/store.h"
#include "model/u32map.h"

static void test_u32map_dense(void **state)
{
	(void)state;
	struct pt_u32map m = {0};
	assert_int_equal(pt_u32map_get(&m, 5), 0);
	for (uint32_t k = 1; k <= 200000; k++)
		pt_u32map_put(&m, k, k * 3 + 1);
	for (uint32_t k = 1; k <= 200000; k++)
		assert_int_equal(pt_u32map_get(&m, k), k * 3 + 1);
	assert_int_equal(pt_u32map_get(&m, 200001), 0);
	assert_int_equal(pt_u32map_get(&m, 0), 0);
	/* dense ids: leaves only, about 4 bytes an id */
	assert_int_equal(m.hn, 0);
	assert_true(pt_u32map_mem_bytes(&m) < 200000 * 4 + 128 * 1024);
	/* removal */
	for (uint32_t k = 1; k <= 200000; k += 2)
		pt_u32map_put(&m, k, 0);
	for (uint32_t k = 1; k <= 200000; k++)
		assert_int_equal(pt_u32map_get(&m, k), (k & 1) ? 0 : k * 3 + 1);
	pt_u32map_free(&m);
	assert_null(m.top);
}

static void test_u32map_zero_and_huge(void **state)
{
	(void)state;
	struct pt_u32map m = {0};
	pt_u32map_put(&m, 0, 7);
	pt_u32map_put(&m, UINT32_MAX, 8);
	pt_u32map_put(&m, 0x80000000u, 9);
	pt_u32map_put(&m, 0x7fffffffu, 10);
	assert_int_equal(pt_u32map_get(&m, 0), 7);
	assert_int_equal(pt_u32map_get(&m, UINT32_MAX), 8);
	assert_int_equal(pt_u32map_get(&m, 0x80000000u), 9);
	assert_int_equal(pt_u32map_get(&m, 0x7fffffffu), 10);
	assert_int_equal(pt_u32map_get(&m, 1), 0);
	assert_int_equal(pt_u32map_get(&m, UINT32_MAX - 1), 0);
	pt_u32map_put(&m, UINT32_MAX, 0);
	assert_int_equal(pt_u32map_get(&m, UINT32_MAX), 0);
	assert_int_equal(pt_u32map_get(&m, 0), 7);
	pt_u32map_free(&m);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Ids scattered over the whole range: the hash takes them, memory stays
 * near a hash map's instead of one leaf per id. */
static void test_u32map_sparse(void **state)
{
	(void)state;
	struct pt_u32map m = {0};
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	enum { N = 100000 };
	uint32_t *keys = malloc(N * sizeof *keys);
	for (int i = 0; i < N; i++) {
		keys[i] = (uint32_t)rng_next(&seed);
		pt_u32map_put(&m, keys[i], (uint32_t)i + 1);
	}
	for (int i = 0; i < N; i++) {
		/* a repeated random key keeps the latest value */
		uint32_t v = pt_u32map_get(&m, keys[i]);
		assert_true(v >= (uint32_t)i + 1);
		assert_int_equal(keys[v - 1], keys[i]);
	}
	assert_true(m.hn > N / 2);
	assert_true(pt_u32map_mem_bytes(&m) < (size_t)N * 64 + (1 << 20));
	pt_u32map_free(&m);
	free(keys);
}

/* A key put in the hash while its leaf did not exist stays findable,
 * updatable and removable after a neighbour allocates that leaf. */
static void test_u32map_hash_then_leaf(void **state)
{
	(void)state;
	struct pt_u32map m = {0};
	/* use up the free leaves with one id each, so the next goes to the hash */
	for (uint32_t i = 0; i < 64; i++)
		pt_u32map_put(&m, i << 20, 1);
	uint32_t k = 0x12345678u;
	pt_u32map_put(&m, k, 42);
	assert_true(m.hn > 0);
	assert_int_equal(pt_u32map_get(&m, k), 42);
	/* now make ids dense enough that leaves are allowed again */
	for (uint32_t i = 0; i < 20000; i++)
		pt_u32map_put(&m, 0x10000000u + i, 5);
	pt_u32map_put(&m, k + 1, 43); /* same leaf as k */
	assert_non_null(pt_u32map_leaf_slot(&m, k + 1));
	assert_int_equal(pt_u32map_get(&m, k), 42);
	assert_int_equal(pt_u32map_get(&m, k + 1), 43);
	pt_u32map_put(&m, k, 44);
	assert_int_equal(pt_u32map_get(&m, k), 44);
	pt_u32map_put(&m, k, 0);
	assert_int_equal(pt_u32map_get(&m, k), 0);
	assert_int_equal(pt_u32map_get(&m, k + 1), 43);
	pt_u32map_put(&m, k, 45);
	assert_int_equal(pt_u32map_get(&m, k), 45);
	pt_u32map_free(&m);
}

/* Mixed puts and removals over clustered and scattered ids, against a
 * plain array of (key, value). */
static void test_u32map_random(void **state)
{
	(void)state;
	enum { NK = 4096, OPS = 200000 };
	uint32_t *keys = malloc(NK * sizeof *keys), *vals = calloc(NK, sizeof *vals);
	uint64_t seed = 12345;
	for (int i = 0; i < NK; i++) {
		int dup;
		do {
			uint64_t r = rng_next(&seed);
			if (i % 3 == 0)
				keys[i] = (uint32_t)r; /* scattered */
			else if (i % 3 == 1)
				keys[i] = 1000 + (uint32_t)i * 7; /* clustered */
			else
				keys[i] = 0x80000000u + (uint32_t)i; /* flow-made range */
			dup = 0;
			for (int j = 0; j < i; j++)
				dup |= keys[j] == keys[i];
		} while (dup);
	}
	struct pt_u32map m = {0};
	for (int op = 0; op < OPS; op++) {
		uint64_t r = rng_next(&seed);
		int i = (int)(r % NK);
		uint32_t v = (r >> 32) % 4 == 0 ? 0 : (uint32_t)(r >> 40) + 1;
		pt_u32map_put(&m, keys[i], v);
		vals[i] = v;
		if (op % 50000 == 0)
			for (int j = 0; j < NK; j++)
				assert_int_equal(pt_u32map_get(&m, keys[j]), vals[j]);
	}
	for (int j = 0; j < NK; j++)
		assert_int_equal(pt_u32map_get(&m, keys[j]), vals[j]);
	pt_u32map_free(&m);
	free(keys);
	free(vals);
}

static void test_varints(void **state)
{
	(void)state;
	uint64_t vals[] = {0,	      1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)INT64_MAX,
			   UINT64_MAX};
	uint8_t buf[VMAX * 16], *p = buf;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		p = vput(p, vals[i]);
	assert_true((size_t)(p - buf) <= sizeof vals / sizeof vals[0] * VMAX);
	const uint8_t *q = buf;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		assert_true(vget(&q) == vals[i]);
	assert_ptr_equal(q, p);
	/* deltas in both directions and across the wrap */
	uint64_t pairs[][2] = {{0, 0},		{5, 3},		 {3, 5},
			       {0, UINT64_MAX}, {UINT64_MAX, 0}, {1000, (uint64_t)INT64_MAX + 7}};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
		assert_true(zz_apply(pairs[i][0], zz_delta(pairs[i][0], pairs[i][1])) ==
			    pairs[i][1]);
	assert_true(zz_delta(10, 9) == 1 && zz_delta(9, 10) == 2);
}

static uint64_t ivl_total(const struct ivl_list *l, size_t *n)
{
	struct ivl_rd r;
	struct ivl iv;
	uint64_t tot = 0;
	*n = 0;
	ivl_rd_init(&r, l);
	while (ivl_rd_next(&r, &iv)) {
		assert_true(iv.e > iv.s);
		tot += iv.e - iv.s;
		(*n)++;
	}
	return tot;
}

static void test_ivl_list(void **state)
{
	(void)state;
	struct ivl_list l = {0};
	size_t n;
	assert_int_equal(ivl_total(&l, &n), 0);
	assert_int_equal(n, 0);
	ivl_add(&l, 10, 20);
	ivl_add(&l, 15, 25); /* overlaps: merged */
	ivl_add(&l, 25, 30); /* touches: merged */
	ivl_add(&l, 40, 40); /* empty: ignored */
	ivl_add(&l, 50, 60);
	ivl_add(&l, (uint64_t)1 << 62, ((uint64_t)1 << 62) + 5); /* a big jump */
	ivl_add(&l, ((uint64_t)1 << 62) + 100, ((uint64_t)1 << 62) + 101);
	assert_int_equal(l.n, 4);
	assert_int_equal(ivl_total(&l, &n), 20 + 10 + 5 + 1);
	assert_int_equal(n, 4);
	struct ivl_rd r;
	struct ivl iv;
	ivl_rd_init(&r, &l);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 10 && iv.e == 30);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 50 && iv.e == 60);
	ivl_free(&l);

	/* out of order: a start before the open interval merges into it */
	ivl_add(&l, 100, 110);
	ivl_add(&l, 200, 210);
	ivl_add(&l, 150, 205);
	ivl_rd_init(&r, &l);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 100 && iv.e == 110);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 150 && iv.e == 210);
	assert_false(ivl_rd_next(&r, &iv));
	/* and one that goes back before a coded interval codes a negative gap */
	ivl_add(&l, 300, 310);
	ivl_add(&l, 50, 305);
	ivl_add(&l, 400, 401);
	ivl_rd_init(&r, &l);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 100 && iv.e == 110);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 150 && iv.e == 210);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 50 && iv.e == 310);
	assert_true(ivl_rd_next(&r, &iv) && iv.s == 400 && iv.e == 401);
	assert_false(ivl_rd_next(&r, &iv));
	ivl_free(&l);
}

/* Unions and intersections of random lists against a bitmap. */
static void test_ivl_union_brute(void **state)
{
	(void)state;
	enum { SPAN = 4000, K = 5 };
	uint64_t seed = 777;
	for (int round = 0; round < 20; round++) {
		struct ivl_list lists[K];
		struct ivl_list *lp[K];
		uint8_t cover[K][SPAN];
		memset(lists, 0, sizeof lists);
		memset(cover, 0, sizeof cover);
		for (int k = 0; k < K; k++) {
			lp[k] = &lists[k];
			uint64_t t = rng_next(&seed) % 50;
			while (t < SPAN - 60) {
				uint64_t len = rng_next(&seed) % 40 + 1;
				ivl_add(&lists[k], t, t + len);
				for (uint64_t x = t; x < t + len; x++)
					cover[k][x] = 1;
				t += rng_next(&seed) % 60;
			}
		}
		struct ivl_list u01 = {0}, u234 = {0};
		uint64_t want01 = 0, want234 = 0, want_all = 0, want_x = 0;
		for (int x = 0; x < SPAN; x++) {
			int a = cover[0][x] | cover[1][x];
			int b = cover[2][x] | cover[3][x] | cover[4][x];
			want01 += a;
			want234 += b;
			want_all += a | b;
			want_x += a & b;
		}
		assert_int_equal(ivl_union(lp, 2, &u01), want01);
		assert_int_equal(ivl_union(lp + 2, 3, &u234), want234);
		assert_int_equal(ivl_union(lp, K, NULL), want_all);
		assert_int_equal(ivl_intersect_len(&u01, &u234), want_x);
		size_t n;
		assert_int_equal(ivl_total(&u01, &n), want01);
		for (int k = 0; k < K; k++)
			ivl_free(&lists[k]);
		ivl_free(&u01);
		ivl_free(&u234);
	}
}

static int ev_key_cmp(const void *pa, const void *pb)
{
	const struct pt_event *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->name_id != b->name_id)
		return a->name_id < b->name_id ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* Many chunks per track, mostly in order with stretches out of order and
 * ties: every window iterates as the sorted copy says (equal keys may come
 * in any order: a chunk's sort need not be stable). */
static void test_store_lazy_merge(void **state)
{
	(void)state;
	uint64_t seed = 4242;
	for (int round = 0; round < 6; round++) {
		struct pt_store *st = pt_store_new(0);
		enum { N = 30000 };
		struct pt_event *all = malloc(N * sizeof *all);
		uint64_t t = 1000;
		for (int i = 0; i < N; i++) {
			uint64_t r = rng_next(&seed);
			struct pt_event ev = {0};
			if (round % 2 == 0 || r % 7)
				t += r % 5; /* in order, with ties */
			ev.start_ns = (r % 11 == 0 && t > 3000) ? t - (r >> 8) % 3000 : t;
			ev.dur_ns = (r >> 16) % 4;
			ev.kind = (uint8_t)((r >> 24) % 2);
			ev.name_id = (uint32_t)((r >> 32) % 3);
			ev.arg = (uint64_t)i;
			ev.track_id = round % 3 == 2 ? (uint32_t)(r >> 40) % 2 : 0;
			pt_store_append(st, &ev);
			all[i] = ev;
		}
		for (uint32_t tr = 0; tr < 2; tr++) {
			struct pt_event *want = malloc(N * sizeof *want);
			size_t nw = 0;
			uint64_t t0 = tr ? 2000 : 0, t1 = tr ? t / 2 : UINT64_MAX;
			for (int i = 0; i < N; i++)
				if (all[i].track_id == tr && all[i].start_ns >= t0 &&
				    all[i].start_ns < t1)
					want[nw++] = all[i];
			qsort(want, nw, sizeof *want, ev_key_cmp);
			struct pt_store_iter it;
			pt_store_iter_init(&it, st, tr, t0, t1);
			struct pt_event *ev;
			size_t k = 0;
			while ((ev = pt_store_iter_next(&it))) {
				assert_true(k < nw);
				assert_int_equal(ev_key_cmp(ev, &want[k]), 0);
				k++;
			}
			pt_store_iter_done(&it);
			assert_int_equal(k, nw);
			free(want);
		}
		free(all);
		pt_store_free(st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_u32map_dense),     cmocka_unit_test(test_u32map_zero_and_huge),
	    cmocka_unit_test(test_u32map_sparse),    cmocka_unit_test(test_u32map_hash_then_leaf),
	    cmocka_unit_test(test_u32map_random),    cmocka_unit_test(test_varints),
	    cmocka_unit_test(test_ivl_list),	     cmocka_unit_test(test_ivl_union_brute),
	    cmocka_unit_test(test_store_lazy_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
