/*
 * test_core.c - string table, event store (cap, drop order, sorted merge
 * iteration, windows), trace sink (tracks, late labels), escaping.
 */
#include "testutil.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/store.h"
#include "proftop/strtab.h"
#include "model/util.h"

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

/* pt_u64_kth against a sort, with runs of equal values (all equal too). */
static void test_u64_kth(void **state)
{
	(void)state;
	uint64_t v[200], w[200];
	unsigned seed = 7;
	for (int it = 0; it < 20000; it++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % 200);
		uint64_t mod = 1 + (uint64_t)(rand_r(&seed) % 12);
		for (size_t i = 0; i < n; i++)
			v[i] = w[i] = (uint64_t)rand_r(&seed) % mod;
		size_t k = (size_t)rand_r(&seed) % n;
		uint64_t got = pt_u64_kth(v, n, k);
		qsort(w, n, sizeof *w, pt_u64_cmp);
		assert_int_equal(got, w[k]);
	}
}

/* Is the mapping holding addr advised for huge pages ("hg" in smaps)? With
 * heap: is that mapping malloc's [heap] (not under ASan or valgrind)? */
static int advised_huge(const void *addr, int *heap)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, hg = 0;
	uintptr_t a = (uintptr_t)addr;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			if (in && heap)
				*heap = strstr(line, "[heap]") != NULL;
		} else if (in && !strncmp(line, "VmFlags:", 8))
			hg = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return hg;
}

/* pt_mem_tune: blocks keep their bytes through growth and the heap it grows
 * is advised for huge pages (where the kernel has them at all and they pay:
 * else nothing is). */
struct apart_probe {
	cpu_set_t caller; /* the starting thread's CPUs */
	int arg_seen;
	int same_cpus; /* its CPUs once running: the caller's */
};

static void *apart_fn(void *v)
{
	struct apart_probe *pr = v;
	pr->arg_seen = 1;
	cpu_set_t mine;
	CPU_ZERO(&mine);
	pthread_getaffinity_np(pthread_self(), sizeof mine, &mine);
	pr->same_cpus = CPU_EQUAL(&mine, &pr->caller);
	return pr;
}

/* pt_thread_start_apart runs its function with its argument and leaves the
 * thread free to run on every CPU its caller may, with the caller on all
 * its CPUs and on one alone. */
static void test_thread_start_apart(void **state)
{
	(void)state;
	cpu_set_t orig;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof orig, &orig), 0);
	for (int pass = 0; pass < 2; pass++) {
		cpu_set_t caller = orig;
		if (pass == 1) { /* one CPU: started plainly */
			int cpu = sched_getcpu();
			CPU_ZERO(&caller);
			CPU_SET(cpu >= 0 ? cpu : 0, &caller);
			if (pthread_setaffinity_np(pthread_self(), sizeof caller, &caller) != 0)
				continue;
		}
		for (int i = 0; i < 20; i++) {
			struct apart_probe pr = {caller, 0, 0};
			pthread_t th;
			assert_int_equal(pt_thread_start_apart(&th, apart_fn, &pr), 0);
			void *ret = NULL;
			assert_int_equal(pthread_join(th, &ret), 0);
			assert_ptr_equal(ret, &pr);
			assert_int_equal(pr.arg_seen, 1);
			assert_int_equal(pr.same_cpus, 1);
		}
	}
	assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof orig, &orig), 0);
}

static void test_mem_tune_heap(void **state)
{
	(void)state;
	pt_mem_tune();
	enum { N = 1500, SZ = 64 << 10 }; /* under malloc's mmap threshold: the heap */
	unsigned char **v = pt_xcalloc(N, sizeof *v);
	for (int i = 0; i < N; i++) {
		v[i] = pt_xmalloc(SZ / 2);
		memset(v[i], i & 0xff, SZ / 2);
		v[i] = pt_xrealloc(v[i], SZ);
		memset(v[i] + SZ / 2, (i + 1) & 0xff, SZ / 2);
	}
	for (int i = 0; i < N; i++) {
		assert_int_equal(v[i][0], i & 0xff);
		assert_int_equal(v[i][SZ / 2 - 1], i & 0xff);
		assert_int_equal(v[i][SZ - 1], (i + 1) & 0xff);
	}
	/* a large block: its own mapping, advised by the wrapper */
	unsigned char *big = pt_xcalloc(8 << 20, 1);
	assert_int_equal(big[(8 << 20) - 1], 0);
	void *probe = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(probe != MAP_FAILED);
	int thp = madvise(probe, 4 << 20, MADV_HUGEPAGE) == 0;
	munmap(probe, 4 << 20);
	if (thp) {
		/* the heap below the newest block, 2 MiB aligned: advised */
		uintptr_t hp = ((uintptr_t)v[N - 1] & ~(((uintptr_t)2 << 20) - 1)) - 1;
		int heap = 0, hg = advised_huge((void *)hp, &heap);
		int want = pt_mem_huge_pays();
		if (heap)
			assert_int_equal(hg, want);
		assert_int_equal(advised_huge(big + (4 << 20), NULL), want);
	}
	free(big);
	for (int i = 0; i < N; i++)
		free(v[i]);
	free(v);
}

/* Huge pages are not asked for where a virtio balloon reports free pages
 * to its host: its sysfs features text, bit 0 first, has bit 5 set. */
static void test_huge_pages_vs_free_page_reporting(void **state)
{
	(void)state;
	assert_true(pt_balloon_reports("0010010000000000\n"));
	assert_true(pt_balloon_reports("111111"));
	assert_false(pt_balloon_reports("0110000100000000\n"));
	assert_false(pt_balloon_reports("01101")); /* too short to say */
	assert_false(pt_balloon_reports(""));

	char root[] = "/tmp/proftop-balloon-XXXXXX", path[256];
	assert_non_null(mkdtemp(root));
	assert_false(pt_host_reclaims_free(root)); /* no device */
	snprintf(path, sizeof path, "%s/bind", root); /* not a device: ignored */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("0000011111\n", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/virtio3", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/virtio3/features", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0110000100000000\n", f);
	fclose(f);
	assert_false(pt_host_reclaims_free(root));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0110010100000000\n", f);
	fclose(f);
	assert_true(pt_host_reclaims_free(root));
	assert_false(pt_host_reclaims_free("/nonexistent/virtio_balloon"));
	unlink(path);
	snprintf(path, sizeof path, "%s/virtio3", root);
	rmdir(path);
	snprintf(path, sizeof path, "%s/bind", root);
	unlink(path);
	assert_int_equal(rmdir(root), 0);
	/* whatever this machine says, it says it every time */
	assert_int_equal(pt_mem_huge_pays(), pt_mem_huge_pays());
}

static void test_trace_tracks_and_late_labels(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	struct pt_track_key k1 = {10, 11, 0, 0};
	uint32_t sp = pt_trace_intern(t, "Spans", 5);
	struct pt_track_key k2 = {0, 1, sp, 0};
	uint32_t a = pt_trace_track(t, &k1), b = pt_trace_track(t, &k2);
	assert_int_not_equal(a, b);
	assert_int_equal(pt_trace_track(t, &k1), a);
	pt_trace_set_thread_label(t, &k1, pt_trace_intern(t, "python main thread", 18));
	struct pt_track_key k3 = {10, 12, 0, 0};
	pt_trace_set_process_label(t, &k3, pt_trace_intern(t, "python", 6)); /* before its track */
	uint32_t c = pt_trace_track(t, &k3);
	assert_string_equal(pt_trace_str(t, t->tracks[a].label), "python main thread");
	assert_string_equal(pt_trace_str(t, t->tracks[a].process_label), "python");
	assert_string_equal(pt_trace_str(t, t->tracks[c].process_label), "python");
	char buf[128];
	pt_trace_track_label(t, a, buf, sizeof buf);
	assert_string_equal(buf, "python main thread (pid 10)");
	pt_trace_track_label(t, b, buf, sizeof buf);
	assert_string_equal(buf, "pid Spans tid 1");
	pt_trace_track_device(t, c, 0, 7);
	t->tracks[c].label = 0;
	pt_trace_track_label(t, c, buf, sizeof buf);
	assert_string_equal(buf, "GPU 0 stream 7");
	tu_ev(t, a, PT_KIND_OPERATOR, "x", 5, 1, 0);
	tu_ev(t, a, PT_KIND_OPERATOR, "x", 2, 1, 0);
	assert_int_equal(t->events_seen, 2);
	assert_int_equal(t->first_ns, 2000);
	assert_int_equal(t->last_ns, 6000);
	pt_trace_free(t);
}

static void test_escape_term(void **state)
{
	(void)state;
	char out[256];
	const char evil[] = "a\x1b]0;pwned\x07" "b\x9b" "c";
	pt_escape_term(out, sizeof out, evil, sizeof evil - 1, 0, 0);
	assert_null(strchr(out, 0x1b));
	assert_null(strchr(out, 0x07));
	assert_string_equal(out, "a\\e]0;pwned\\x07b\\x9bc");
	/* C1 control encoded as UTF-8 (U+009B CSI) and an RTL override */
	pt_escape_term(out, sizeof out, "x\xc2\x9by\xe2\x80\xaez", 8, 0, 0);
	assert_string_equal(out, "x\\u{9b}y\\u{202e}z");
	/* valid UTF-8 kept, ASCII mode escapes it */
	pt_escape_term(out, sizeof out, "\xc3\xa9t\xc3\xa9", 5, 0, 0);
	assert_string_equal(out, "\xc3\xa9t\xc3\xa9");
	pt_escape_term(out, sizeof out, "\xc3\xa9", 2, 0, PT_ESC_ASCII);
	assert_string_equal(out, "\\u{e9}");
	/* cut to width with dots */
	size_t cols = pt_escape_term(out, sizeof out, "abcdefghij", 10, 6, 0);
	assert_string_equal(out, "abc...");
	assert_int_equal(cols, 6);
	cols = pt_escape_term(out, sizeof out, "abcdef", 6, 6, 0);
	assert_string_equal(out, "abcdef");
	/* tiny buffer stays terminated */
	pt_escape_term(out, 4, "abcdefgh", 8, 0, 0);
	assert_true(strlen(out) < 4);
}

/* Tracks and names past half of the events' room are folded, not made:
 * the trace's own memory stays bounded by the cap whatever the input. */
static void test_trace_folds_past_the_cap(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t first = 0, last = 0;
	for (int i = 0; i < 20000; i++) {
		struct pt_track_key k = {7, i + 1, 0, 0};
		uint32_t id = pt_trace_track(t, &k);
		if (i == 0)
			first = id;
		last = id;
	}
	assert_true(t->ntracks < 2000);
	assert_true(t->warnings[PT_WARN_TRACK_FOLDED] > 18000);
	const struct pt_track *fold = &t->tracks[last];
	assert_int_equal(fold->key.pid, 7); /* the first folded thread's process */
	assert_string_equal(pt_trace_str(t, fold->key.tid_str), PT_FOLDED_THREADS);
	/* a thread made before keeps its track */
	struct pt_track_key k0 = {7, 1, 0, 0};
	assert_int_equal(pt_trace_track(t, &k0), first);
	pt_trace_free(t);

	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t early = pt_trace_intern(t, "early", 5), folded = 0;
	char name[64];
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(name, sizeof name, "a distinct name of some length %d", i);
		folded = pt_trace_intern(t, name, (size_t)n);
	}
	assert_string_equal(pt_trace_str(t, folded), PT_FOLDED_NAMES);
	assert_true(t->warnings[PT_WARN_NAME_FOLDED] > 80000);
	assert_true(pt_store_mem_bytes(t->store) <= PT_STORE_MIN_MAX_BYTES);
	assert_int_equal(pt_trace_intern(t, "early", 5), early); /* known names keep their id */
	pt_trace_free(t);
}

static void test_json_str(void **state)
{
	(void)state;
	struct pt_buf b = {0};
	pt_buf_json_str(&b, "q\"\\\n\x01\xff\xc3\xa9", 8);
	assert_string_equal(b.p, "\"q\\\"\\\\\\u000a\\u0001\\\\xff\xc3\xa9\"");
	pt_buf_free(&b);
	assert_true(pt_utf8_valid("\xc3\xa9", 2));
	assert_false(pt_utf8_valid("\xc0\xaf", 2)); /* overlong */
	assert_false(pt_utf8_valid("\xed\xa0\x80", 3)); /* surrogate */
}

static void test_parse_size(void **state)
{
	(void)state;
	size_t v;
	assert_int_equal(pt_parse_size("512M", &v), 0);
	assert_int_equal(v, (size_t)512 << 20);
	assert_int_equal(pt_parse_size("2GiB", &v), 0);
	assert_int_equal(v, (size_t)2 << 30);
	assert_int_equal(pt_parse_size("1000", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_not_equal(pt_parse_size("lots", &v), 0);
	assert_int_not_equal(pt_parse_size("-1G", &v), 0);
	assert_int_not_equal(pt_parse_size("1X", &v), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strtab_interns_once),
		cmocka_unit_test(test_store_merges_chunks_in_order),
		cmocka_unit_test(test_store_iter_window_skips_old_chunks),
		cmocka_unit_test(test_u64_kth),
		cmocka_unit_test(test_mem_tune_heap),
		cmocka_unit_test(test_thread_start_apart),
		cmocka_unit_test(test_huge_pages_vs_free_page_reporting),
		cmocka_unit_test(test_store_ties_longer_first),
		cmocka_unit_test(test_store_sorts_nearly_sorted_stably),
		cmocka_unit_test(test_store_order_followed_while_written),
		cmocka_unit_test(test_store_cap_drops_oldest_first),
		cmocka_unit_test(test_store_arenas_across_reservations),
		cmocka_unit_test(test_store_prefault_growing),
		cmocka_unit_test(test_trace_tracks_and_late_labels),
		cmocka_unit_test(test_trace_folds_past_the_cap),
		cmocka_unit_test(test_escape_term),
		cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_parse_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
