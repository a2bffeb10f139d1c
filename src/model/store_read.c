/*
 * store_read.c - reading the event store: chunks are sorted in place when
 * read (the order of store_int.h's ev_cmp; stable, see sort_nearly), and an
 * iterator merges a track's sorted chunks with a small heap that a chunk
 * joins only when its first event is due; a time bound skips the chunks
 * that end before it by a binary search over the track's chunk vector.
 */
#include <stdlib.h>
#include <string.h>

#include "model/store_int.h"
#include "model/util.h"

struct pt_store_cursor {
	struct chunk *c;
	uint32_t i;
	uint32_t cap; /* header cursor only: cursors allocated */
};

static int ev_qcmp(const void *a, const void *b)
{
	return ev_cmp(a, b);
}

/*
 * Sorts a[0, n) stably, using scratch[0, n). Chunks come nearly sorted: a
 * Kineto host thread is written in end order, so each parent follows its
 * children and everything else is in order. One pass keeps the events that
 * are not below the largest seen so far (an ordered run, compacted in
 * place) and moves the others aside; those are sorted the same way (they
 * are nearly sorted too: the parents, in end order) and merged back from
 * the end. Cost: a few comparisons per event instead of qsort's log n
 * indirect calls. When most events are out of place (no order to use), or
 * after a few levels, glibc's qsort takes over.
 *
 * Stable: an event goes aside only when strictly below an earlier one, so
 * an equal pair is never (aside, kept) in input order, and the merge puts
 * an event from aside after a kept one that compares equal.
 */
static void sort_nearly(struct pt_event *a, uint32_t n, struct pt_event *scratch, int depth)
{
	if (n < 2)
		return;
	if (n <= 16) {
		for (uint32_t i = 1; i < n; i++) {
			struct pt_event x = a[i];
			uint32_t j = i;
			for (; j > 0 && ev_cmp(&a[j - 1], &x) > 0; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	uint32_t k = 1, m = 0;
	for (uint32_t i = 1; i < n; i++) {
		if (ev_cmp(&a[i], &a[k - 1]) >= 0)
			a[k++] = a[i];
		else
			scratch[m++] = a[i];
	}
	if (m == 0)
		return;
	if (m > n / 2 || depth >= 6) {
		/* little order: put them back and let qsort (a merge sort in
		 * glibc, stable) do the whole */
		memcpy(a + k, scratch, (size_t)m * sizeof *a);
		qsort(a, n, sizeof *a, ev_qcmp);
		return;
	}
	/* a[k, n) is free: it is the aside part's scratch */
	sort_nearly(scratch, m, a + k, depth + 1);
	int64_t i = (int64_t)k - 1, j = (int64_t)m - 1, w = (int64_t)n - 1;
	while (j >= 0) {
		if (i >= 0 && ev_cmp(&a[i], &scratch[j]) > 0)
			a[w--] = a[i--];
		else
			a[w--] = scratch[j--];
	}
}

static void sort_chunk(struct pt_store *st, struct chunk *c)
{
	if (c->sorted == c->n)
		return;
	uint32_t i = c->sorted > 1 ? c->sorted : 1; /* [0, sorted) is in order */
	while (i < c->n && ev_cmp(&c->ev[i - 1], &c->ev[i]) <= 0)
		i++;
	if (i < c->n) {
		if (!st->scratch)
			st->scratch = pt_xmalloc((size_t)BIG_CHUNK_CAP * sizeof *st->scratch);
		sort_nearly(c->ev, c->n, st->scratch, 0);
	}
	c->sorted = c->n;
}

/* Only the chunks appended to since the last call: a track's chunks before
 * its newest are full, and sorted once they were seen full, so a long
 * session's refresh does not walk its whole store. */
void pt_store_sort(struct pt_store *st)
{
	for (uint32_t i = 0; i < st->ntracks; i++) {
		struct tslot *ts = &st->tracks[i];
		struct chunk *c = ts->unsorted ? ts->unsorted : ts->head;
		for (; c; c = c->next_in_track) {
			sort_chunk(st, c);
			if (ts->unsorted != c) /* a sorted store is only read (ranks.c's threads) */
				ts->unsorted = c; /* the newest stays the first that may change */
		}
	}
}

/* First index in c whose start is >= t. */
static uint32_t lower_bound(const struct chunk *c, uint64_t t)
{
	uint32_t lo = 0, hi = c->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->ev[mid].start_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cur_less(const struct pt_store_cursor *a, const struct pt_store_cursor *b)
{
	int r = ev_cmp(&a->c->ev[a->i], &b->c->ev[b->i]);
	if (r)
		return r < 0;
	return a->c->seq < b->c->seq;
}

static void heap_down(struct pt_store_cursor *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cur_less(&h[l], &h[m]))
			m = l;
		if (r < n && cur_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct pt_store_cursor tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void heap_up(struct pt_store_cursor *h, uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!cur_less(&h[i], &h[p]))
			return;
		struct pt_store_cursor tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

static int cur_qcmp(const void *a, const void *b)
{
	return cur_less(a, b) ? -1 : cur_less(b, a) ? 1 : 0;
}

/*
 * The merge is lazy: the track's chunks wait, ordered by their first event,
 * and join the heap only when that event is the next one due. A track's
 * chunks mostly follow each other in time, so the heap holds one or two
 * cursors instead of all of them. The cursors live in one array after a
 * header (heap[-1]: .i = next waiting cursor, .cap = cursors): the heap
 * grows from the front, the waiting ones are taken from their front, and
 * the heap never holds more cursors than were taken.
 */
void pt_store_iter_init(struct pt_store_iter *it, struct pt_store *st, uint32_t track,
			uint64_t t0_ns, uint64_t t1_ns)
{
	memset(it, 0, sizeof *it);
	it->st = st;
	it->track = track;
	it->t0_ns = t0_ns;
	it->t1_ns = t1_ns;
	if (track >= st->ntracks)
		return;
	/* the first chunk that may hold an event ending at or after t0 */
	const struct tslot *ts = &st->tracks[track];
	struct chunk *first = ts->head;
	if (t0_ns && ts->cv_n - ts->cv_off >= 2) {
		uint32_t lo = ts->cv_off, hi = ts->cv_n - 1; /* full chunks: [cv_off, cv_n - 1) */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (ts->cv_max[mid] < t0_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		first = ts->cv[lo];
	}
	uint32_t nch = 0;
	for (struct chunk *c = first; c; c = c->next_in_track)
		nch++;
	if (!nch)
		return;
	struct pt_store_cursor *base = pt_xmalloc((nch + 1) * sizeof *base);
	struct pt_store_cursor *w = base + 1;
	uint32_t n = 0;
	for (struct chunk *c = first; c; c = c->next_in_track) {
		sort_chunk(st, c);
		if (c->n == 0 || c->min_start >= t1_ns || c->max_end < t0_ns)
			continue;
		uint32_t i = lower_bound(c, t0_ns);
		if (i < c->n && c->ev[i].start_ns < t1_ns)
			w[n++] = (struct pt_store_cursor){c, i, 0};
	}
	if (n > 1)
		qsort(w, n, sizeof *w, cur_qcmp);
	base[0] = (struct pt_store_cursor){NULL, 0, n};
	it->heap = w;
}

/*
 * With one cursor in the heap (a track whose chunks follow each other, the
 * usual case), the events of its chunk that come before t1 and before the
 * next waiting chunk's first event are a run: both bounds found by binary
 * search, then each event costs no compare.
 */
static void run_start(struct pt_store_iter *it)
{
	struct pt_store_cursor *h = it->heap, *hdr = it->heap - 1;
	struct chunk *c = h[0].c;
	uint32_t lo = h[0].i, hi = c->n;
	while (lo < hi) { /* first start >= t1 */
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->ev[mid].start_ns < it->t1_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t end = lo;
	if (hdr->i < hdr->cap) { /* first event the waiting chunk goes before */
		struct pt_store_cursor probe = h[0];
		lo = h[0].i;
		hi = end;
		while (lo < hi) {
			probe.i = lo + (hi - lo) / 2;
			if (cur_less(&probe, &h[hdr->i]))
				lo = probe.i + 1;
			else
				hi = probe.i;
		}
		end = lo;
	}
	if (end > h[0].i + 1) {
		it->run = &c->ev[h[0].i];
		it->run_end = &c->ev[end];
	}
}

struct pt_event *pt_store_iter_next(struct pt_store_iter *it)
{
	if (it->run < it->run_end)
		return it->run++;
	if (!it->heap)
		return NULL;
	struct pt_store_cursor *h = it->heap, *hdr = it->heap - 1;
	if (it->run) { /* a run is over: its cursor, the only one, goes on after it */
		h[0].i = (uint32_t)(it->run - h[0].c->ev);
		it->run = it->run_end = NULL;
		if (h[0].i >= h[0].c->n || h[0].c->ev[h[0].i].start_ns >= it->t1_ns)
			it->nheap = 0;
	}
	/* let in the waiting chunks whose first event comes before the top */
	while (hdr->i < hdr->cap && (!it->nheap || !cur_less(&h[0], &h[hdr->i]))) {
		struct pt_store_cursor c = h[hdr->i++];
		h[it->nheap] = c;
		heap_up(h, it->nheap++);
	}
	if (!it->nheap)
		return NULL;
	if (it->nheap == 1) {
		run_start(it);
		if (it->run)
			return it->run++;
	}
	struct pt_store_cursor *top = &h[0];
	struct pt_event *ev = &top->c->ev[top->i];
	top->i++;
	if (top->i >= top->c->n || top->c->ev[top->i].start_ns >= it->t1_ns)
		h[0] = h[--it->nheap];
	heap_down(h, it->nheap, 0);
	return ev;
}

void pt_store_iter_done(struct pt_store_iter *it)
{
	if (it->heap)
		free(it->heap - 1);
	it->heap = NULL;
	it->nheap = 0;
	it->run = it->run_end = NULL;
}

int pt_store_foreach(struct pt_store *st, pt_store_visit_fn fn, void *ctx)
{
	for (struct chunk *c = st->ghead; c; c = c->next_global)
		for (uint32_t i = 0; i < c->n; i++) {
			int r = fn(ctx, &c->ev[i]);
			if (r)
				return r;
		}
	return 0;
}
