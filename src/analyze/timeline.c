/*
 * timeline.c - the timeline's index and its row queries (timeline.h). Each
 * track is split into rows by nesting depth (an event's depth is one more
 * than that of the latest-started event still open at its start), so a row
 * is a disjoint, start-sorted list: the event under a time is a binary
 * search away, and per block of 4, 16, ... 4096 events the longest one is
 * kept, so a block lying inside one cell is settled in O(1) and a
 * zoomed-out row costs a few events per cell.
 *
 * Incremental: a track is re-read from the earliest start among the events
 * appended since it was indexed (pt_store_track_start_since, exact from the
 * checkpoint taken at the last update): rows are cut
 * there, the stack of events still open at that time is rebuilt from the
 * rows' last events (the open ones, in start order, are exactly what a full
 * pass would hold on its stack), and the store's sorted iteration from that
 * time is indexed again. The result is the same as a full build, at the
 * cost of what arrived. When the store's cap drops events, rows forget what
 * starts before the store's complete-from time (trimmed in place, compacted
 * once half of a row is gone).
 */
#include <stdlib.h>
#include <string.h>

#include "proftop/error.h"
#include "proftop/store.h"
#include "analyze/timeline_int.h"
#include "model/util.h"

static const uint32_t lev_shift[TL_NLEV] = {2, 4, 6, 8, 10, 12};

/* ---------------------------------------------------------------- rows */

static void row_free(struct tl_row *r)
{
	free(r->start);
	free(r->end);
	free(r->name);
	free(r->corr);
	free(r->kind);
	for (int l = 0; l < TL_NLEV; l++) {
		free(r->best[l]);
		free(r->bdur[l]);
	}
	memset(r, 0, sizeof *r);
}

static void track_free(struct tl_track *x)
{
	for (uint32_t d = 0; d < x->rows_cap; d++)
		row_free(&x->rows[d]);
	free(x->rows);
	memset(x, 0, sizeof *x);
}

static void row_reserve(struct tl_row *r, uint32_t cap)
{
	if (cap <= r->cap)
		return;
	r->start = pt_xrealloc(r->start, (size_t)cap * sizeof *r->start);
	r->end = pt_xrealloc(r->end, (size_t)cap * sizeof *r->end);
	r->name = pt_xrealloc(r->name, (size_t)cap * sizeof *r->name);
	r->corr = pt_xrealloc(r->corr, (size_t)cap * sizeof *r->corr);
	r->kind = pt_xrealloc(r->kind, (size_t)cap);
	for (int l = 0; l < TL_NLEV; l++) {
		size_t nb = (size_t)(cap >> lev_shift[l]) + 1;
		r->best[l] = pt_xrealloc(r->best[l], nb * sizeof(uint32_t));
		r->bdur[l] = pt_xrealloc(r->bdur[l], nb * sizeof(uint64_t));
	}
	r->cap = cap;
}

static void row_grow(struct tl_row *r)
{
	row_reserve(r, r->cap ? r->cap * 2 : 16);
}

static inline void row_push(struct tl_row *r, const struct pt_event *ev)
{
	if (r->n == r->cap)
		row_grow(r);
	uint32_t i = r->n++;
	r->start[i] = ev->start_ns;
	r->end[i] = pt_event_end(ev);
	r->name[i] = ev->name_id;
	r->corr[i] = ev->corr;
	r->kind[i] = ev->kind < PT_KIND__COUNT ? ev->kind : PT_KIND_OTHER;
	r->nsteps += ev->kind == PT_KIND_PROFILE_STEP;
}

/* The longer event wins a block; on a tie the earlier. */
static inline int longer(const struct tl_row *r, uint32_t a, uint32_t b)
{
	uint64_t da = r->end[a] - r->start[a], db = r->end[b] - r->start[b];
	return da != db ? da > db : a < b;
}

/* Recomputes the block summaries from r->dirty on. */
static void row_settle(struct tl_row *r)
{
	if (r->dirty >= r->n) {
		r->dirty = r->n;
		return;
	}
	for (int l = 0; l < TL_NLEV; l++) {
		uint32_t s = lev_shift[l];
		uint32_t b0 = r->dirty >> s, nb = ((r->n - 1) >> s) + 1;
		for (uint32_t b = b0; b < nb; b++) {
			uint32_t best = UINT32_MAX;
			uint64_t bd = 0;
			if (l == 0) {
				uint32_t hi = (b + 1) << s;
				if (hi > r->n)
					hi = r->n;
				for (uint32_t i = b << s; i < hi; i++)
					if (best == UINT32_MAX || longer(r, i, best))
						best = i;
				bd = r->end[best] - r->start[best];
			} else {
				uint32_t ps = lev_shift[l - 1], per = 1u << (s - ps);
				uint32_t pnb = ((r->n - 1) >> ps) + 1;
				for (uint32_t cb = b * per; cb < (b + 1) * per && cb < pnb; cb++) {
					uint32_t k = r->best[l - 1][cb];
					uint64_t kd = r->bdur[l - 1][cb];
					if (best == UINT32_MAX || kd > bd ||
					    (kd == bd && k < best)) {
						best = k;
						bd = kd;
					}
				}
			}
			r->best[l][b] = best;
			r->bdur[l][b] = bd;
		}
	}
	r->dirty = r->n;
}

uint32_t tl_lower(const struct tl_row *r, uint64_t v, int strict)
{
	uint32_t lo = r->base, hi = r->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (strict ? r->start[mid] <= v : r->start[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void tl_row_event(const struct tl_row *r, uint32_t i, uint32_t track, struct pt_event *out)
{
	memset(out, 0, sizeof *out);
	out->start_ns = r->start[i];
	out->dur_ns = r->end[i] - r->start[i];
	out->name_id = r->name[i];
	out->corr = r->corr[i];
	out->kind = r->kind[i];
	out->track_id = track;
}

uint32_t tl_row_find(const struct tl_row *r, const struct pt_event *ev)
{
	for (uint32_t i = tl_lower(r, ev->start_ns, 0); i < r->n && r->start[i] == ev->start_ns;
	     i++)
		if (r->name[i] == ev->name_id && r->end[i] - r->start[i] == ev->dur_ns)
			return i;
	return UINT32_MAX;
}

/* ---------------------------------------------------------------- index */

static struct tl_row *track_row(struct tl_track *x, uint32_t d)
{
	if (d >= x->rows_cap) {
		uint32_t cap = x->rows_cap ? x->rows_cap : 8;
		while (cap <= d)
			cap *= 2;
		x->rows = pt_xrealloc(x->rows, (size_t)cap * sizeof *x->rows);
		memset(x->rows + x->rows_cap, 0, (size_t)(cap - x->rows_cap) * sizeof *x->rows);
		x->rows_cap = cap;
	}
	if (d >= x->nrows)
		x->nrows = d + 1;
	return &x->rows[d];
}

struct open_ev {
	uint64_t start, end;
	uint32_t depth;
};

static int open_cmp(const void *pa, const void *pb)
{
	const struct open_ev *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/*
 * The events open on a track as it is read in start order: an event's
 * depth is one more than the top's once the ended ones are popped.
 * Entries that ended but sit below one still open (events that overlap
 * without nesting) are dropped when the stack has doubled since the last
 * time, not at every event (100,000 events each inside the one before made
 * a per-event scan quadratic). Below the last row an event inside an open
 * one there gives every later event the depth that one does, so it is not
 * kept: the stack is at most TL_MAX_DEPTH deep, whatever the nesting.
 */
struct open_stack {
	struct open_ev *v;
	size_t n, cap, compact_at;
};

static size_t open_compact(struct open_stack *o, uint64_t s)
{
	size_t k = 0;
	for (size_t j = 0; j < o->n; j++)
		if (o->v[j].end > s)
			o->v[k++] = o->v[j];
	return k;
}

/* The depth of the event [s, e), which is then open. */
static uint32_t open_place(struct open_stack *o, uint64_t s, uint64_t e)
{
	while (o->n && o->v[o->n - 1].end <= s)
		o->n--;
	if (o->n >= o->compact_at) {
		o->n = open_compact(o, s);
		o->compact_at = o->n * 2 > 64 ? o->n * 2 : 64;
	}
	uint32_t d = o->n ? o->v[o->n - 1].depth + 1 : 0;
	if (d > TL_MAX_DEPTH)
		d = TL_MAX_DEPTH;
	if (d == TL_MAX_DEPTH && o->v[o->n - 1].depth == TL_MAX_DEPTH && e <= o->v[o->n - 1].end)
		return d;
	if (o->n == o->cap) {
		o->cap *= 2;
		o->v = pt_xrealloc(o->v, o->cap * sizeof *o->v);
	}
	o->v[o->n++] = (struct open_ev){s, e, d};
	return d;
}

/* Re-reads the track from t_min on (0: everything). Returns events indexed. */
static size_t reindex_from(struct tl_track *x, struct pt_store *st, uint32_t track, uint64_t t_min)
{
	/* cut every row at t_min; what was open there is the stack to resume with */
	struct open_stack os = {NULL, 0, (size_t)x->nrows + 64, 64};
	os.v = pt_xmalloc(os.cap * sizeof *os.v);
	uint32_t keep_rows = 0;
	for (uint32_t d = 0; d < x->nrows; d++) {
		struct tl_row *r = &x->rows[d];
		uint32_t k = tl_lower(r, t_min, 0);
		for (uint32_t i = k; i < r->n; i++)
			r->nsteps -= r->kind[i] == PT_KIND_PROFILE_STEP;
		r->n = k;
		if (r->dirty > k)
			r->dirty = k;
		if (r->n > r->base) {
			keep_rows = d + 1;
			if (r->end[r->n - 1] > t_min)
				os.v[os.n++] =
				    (struct open_ev){r->start[r->n - 1], r->end[r->n - 1], d};
		}
	}
	x->nrows = keep_rows;
	if (os.n > 1)
		qsort(os.v, os.n, sizeof *os.v, open_cmp);
	size_t got = 0;
	struct pt_store_iter it;
	if (t_min == 0 && !keep_rows && pt_store_track_events(st, track) > 4096) {
		/* a first build: count each row's events first, so the rows are
		 * allocated once at their size (no growing copies of big arrays) */
		uint32_t *cnt = pt_xcalloc(TL_MAX_DEPTH + 1, sizeof *cnt);
		pt_store_iter_init(&it, st, track, 0, UINT64_MAX);
		struct pt_event *e0;
		while ((e0 = pt_store_iter_next(&it)))
			cnt[open_place(&os, e0->start_ns, pt_event_end(e0))]++;
		pt_store_iter_done(&it);
		for (uint32_t d = 0; d <= TL_MAX_DEPTH; d++) /* a quarter more: room to grow live */
			if (cnt[d])
				row_reserve(track_row(x, d), cnt[d] + cnt[d] / 4 + 64);
		x->nrows = 0; /* track_row counted them; the pass below fills them */
		os.n = 0;
		os.compact_at = 64;
		free(cnt);
	}
	pt_store_iter_init(&it, st, track, t_min, UINT64_MAX);
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it))) {
		row_push(track_row(x, open_place(&os, ev->start_ns, pt_event_end(ev))), ev);
		got++;
	}
	pt_store_iter_done(&it);
	free(os.v);
	for (uint32_t d = 0; d < x->nrows; d++)
		row_settle(&x->rows[d]);
	return got;
}

/* Forgets what starts before cf (the store dropped data before it). */
static void trim(struct tl_track *x, uint64_t cf)
{
	for (uint32_t d = 0; d < x->nrows; d++) {
		struct tl_row *r = &x->rows[d];
		uint32_t k = tl_lower(r, cf, 0);
		for (uint32_t i = r->base; i < k; i++)
			r->nsteps -= r->kind[i] == PT_KIND_PROFILE_STEP;
		r->base = k;
		if (r->base >= 4096 && r->base >= r->n / 2) {
			uint32_t m = r->n - r->base;
			memmove(r->start, r->start + r->base, (size_t)m * sizeof *r->start);
			memmove(r->end, r->end + r->base, (size_t)m * sizeof *r->end);
			memmove(r->name, r->name + r->base, (size_t)m * sizeof *r->name);
			memmove(r->corr, r->corr + r->base, (size_t)m * sizeof *r->corr);
			memmove(r->kind, r->kind + r->base, m);
			r->n = m;
			r->base = 0;
			r->dirty = 0;
			row_settle(r);
		}
	}
}

static void cache_reset(struct pt_timeline_cache *c)
{
	for (uint32_t i = 0; i < c->ntr; i++)
		track_free(&c->tr[i]);
	free(c->tr);
	free(c->steps);
	free(c->step_num);
	free(c->st_since);
	free(c->by_dur);
	free(c->corr);
	uint64_t gen = c->gen;
	memset(c, 0, sizeof *c);
	c->gen = gen + 1;
}

struct pt_timeline_cache *pt_timeline_cache_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_timeline_cache));
}

void pt_timeline_cache_free(struct pt_timeline_cache *c)
{
	if (!c)
		return;
	cache_reset(c);
	free(c);
}

uint64_t pt_timeline_generation(const struct pt_timeline_cache *c)
{
	return c->gen;
}

/* Brings one track up to date; returns events indexed, *changed set when anything moved. */
static size_t track_update(struct tl_track *x, struct pt_store *st, uint32_t track, int *changed)
{
	uint64_t app = pt_store_track_appended(st, track); /* before the checkpoint below */
	uint64_t cf = pt_store_complete_from_ns(st);
	size_t got = 0;
	uint64_t t_min = UINT64_MAX;
	if (!x->built)
		t_min = 0;
	else if (app != x->sig_app)
		t_min = pt_store_track_start_since(st, track, x->sig_app);
	if (t_min != UINT64_MAX) {
		got = reindex_from(x, st, track, t_min);
		*changed = 1;
	}
	x->built = 1;
	/* a checkpoint: the next update knows exactly where new events start */
	x->sig_app = pt_store_track_checkpoint(st, track);
	if (cf > x->trim_ns) {
		trim(x, cf);
		x->trim_ns = cf;
		*changed = 1;
	}
	return got;
}

void tl_cache_bind(struct pt_timeline_cache *c, const struct pt_trace *t)
{
	if (c->t != t) {
		cache_reset(c);
		c->t = t;
	}
}

/* Bound to t, with a slot for each of its tracks; returns their number. */
static uint32_t cache_fit(struct pt_timeline_cache *c, struct pt_trace *t)
{
	tl_cache_bind(c, t);
	uint32_t n = pt_store_track_count(t->store);
	if (n > c->ntr) {
		c->tr = pt_xrealloc(c->tr, (size_t)n * sizeof *c->tr);
		memset(c->tr + c->ntr, 0, (size_t)(n - c->ntr) * sizeof *c->tr);
		c->ntr = n;
	}
	return n;
}

size_t pt_timeline_update(struct pt_timeline_cache *c, struct pt_trace *t)
{
	uint32_t n = cache_fit(c, t);
	size_t got = 0;
	int changed = 0;
	for (uint32_t i = 0; i < n; i++)
		got += track_update(&c->tr[i], t->store, i, &changed);
	if (changed)
		c->gen++;
	return got;
}

/*
 * One track, brought up to date by itself: a query about a track costs
 * nothing for the others (each query used to update every track, so a
 * frame of the Timeline over 15,000 threads walked lanes x tracks).
 */
struct tl_track *tl_track_of(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track)
{
	uint32_t n = cache_fit(c, t);
	if (track >= n)
		return NULL;
	int changed = 0;
	track_update(&c->tr[track], t->store, track, &changed);
	if (changed)
		c->gen++;
	return &c->tr[track];
}

/* ------------------------------------------------------------ bucketing */

struct bucket_ctx {
	const struct tl_row *r;
	const uint64_t *b; /* cell bounds, width + 1 */
	size_t width;
	uint64_t *cov;
	uint32_t *win; /* UINT32_MAX = empty */
};

static inline void offer(struct bucket_ctx *bc, size_t c, uint32_t idx, uint64_t cov)
{
	uint32_t w = bc->win[c];
	if (w == UINT32_MAX || cov > bc->cov[c] || (cov == bc->cov[c] && idx < w)) {
		bc->win[c] = idx;
		bc->cov[c] = cov;
	}
}

/* Offers event idx to every cell it overlaps from cell c0 on. */
static void spread(struct bucket_ctx *bc, size_t c0, uint32_t idx)
{
	uint64_t s = bc->r->start[idx], e = bc->r->end[idx];
	if (e == s) {
		offer(bc, c0, idx, 0);
		return;
	}
	for (size_t c = c0; c < bc->width && bc->b[c] < e; c++) {
		uint64_t lo = s > bc->b[c] ? s : bc->b[c];
		uint64_t hi = e < bc->b[c + 1] ? e : bc->b[c + 1];
		if (hi > lo)
			offer(bc, c, idx, hi - lo);
	}
}

static size_t bucket_row(const struct tl_row *r, unsigned depth, uint64_t t0, uint64_t t1,
			 struct pt_cell *cells, size_t width)
{
	for (size_t c = 0; c < width; c++) {
		memset(&cells[c], 0, sizeof cells[c]);
		cells[c].kind = PT_KIND__COUNT;
	}
	if (!r || r->n <= r->base || !width || t1 <= t0)
		return 0;
	uint64_t *b = pt_xmalloc((width + 1) * (2 * sizeof(uint64_t) + sizeof(uint32_t)));
	uint64_t *cov = b + width + 1;
	uint32_t *win = (uint32_t *)(cov + width + 1);
	uint64_t span = t1 - t0;
	/* Cell c is [t0 + ceil(span*c/W), ...): then floor((x-t0)*W/span) is x's cell. */
	for (size_t c = 0; c <= width; c++) {
		unsigned __int128 q = (unsigned __int128)span * c;
		b[c] = t0 + (uint64_t)((q + width - 1) / width);
		win[c] = UINT32_MAX;
	}
	struct bucket_ctx bc = {r, b, width, cov, win};
	uint32_t i = tl_lower(r, t0, 0);
	size_t visited = 0;
	if (i > r->base && r->end[i - 1] > t0) { /* started before the window, still open */
		spread(&bc, 0, i - 1);
		visited++;
	}
	size_t c = 0;
	while (i < r->n && r->start[i] < t1) {
		while (r->start[i] >= b[c + 1])
			c++;
		/* the events starting in cell c: [i, e), found by galloping from i */
		uint64_t bound = b[c + 1];
		uint32_t lo = i, step = 1;
		while (lo + step < r->n && r->start[lo + step] < bound) {
			lo += step;
			step *= 2;
		}
		uint32_t hi = lo + step < r->n ? lo + step : r->n;
		while (lo + 1 < hi) { /* start[lo] < bound; the answer is in (lo, hi] */
			uint32_t mid = lo + (hi - lo) / 2;
			if (r->start[mid] < bound)
				lo = mid;
			else
				hi = mid;
		}
		uint32_t e = lo + 1;
		while (i < e) {
			/* the largest aligned block inside the cell: disjoint and sorted,
			 * so only the cell's last event may reach past its end */
			int done = 0;
			for (int l = TL_NLEV - 1; l >= 0 && (i & ((1u << lev_shift[0]) - 1)) == 0;
			     l--) {
				uint32_t sz = 1u << lev_shift[l];
				if (i % sz || i + sz > e)
					continue;
				if (i + sz == e && r->end[e - 1] > bound)
					continue;
				uint32_t blk = i >> lev_shift[l];
				offer(&bc, c, r->best[l][blk], r->bdur[l][blk]);
				i += sz;
				done = 1;
				break;
			}
			if (!done)
				spread(&bc, c, i++);
			visited++;
		}
	}
	for (c = 0; c < width; c++) {
		uint32_t k = win[c];
		if (k == UINT32_MAX)
			continue;
		cells[c].kind = r->kind[k];
		cells[c].starts = r->start[k] >= b[c] && r->start[k] < b[c + 1];
		cells[c].depth = (uint16_t)depth;
		cells[c].name_id = r->name[k];
		cells[c].start_ns = r->start[k];
		cells[c].dur_ns = r->end[k] - r->start[k];
	}
	free(b);
	return visited;
}

size_t pt_timeline_bucket(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
			  unsigned depth, uint64_t t0_ns, uint64_t t1_ns, struct pt_cell *cells,
			  size_t width)
{
	struct tl_track *x = tl_track_of(c, t, track);
	const struct tl_row *r = x && depth < x->nrows ? &x->rows[depth] : NULL;
	return bucket_row(r, depth, t0_ns, t1_ns, cells, width);
}

int pt_timeline_any_in(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
		       uint64_t t0_ns, uint64_t t1_ns)
{
	struct tl_track *x = tl_track_of(c, t, track);
	if (!x)
		return 0;
	for (uint32_t d = 0; d < x->nrows; d++) {
		const struct tl_row *r = &x->rows[d];
		uint32_t i = tl_lower(r, t0_ns, 0);
		if (i < r->n && r->start[i] < t1_ns)
			return 1;
		if (i > r->base && r->end[i - 1] > t0_ns)
			return 1;
	}
	return 0;
}

/* --------------------------------------------------------- cursor queries */

/* In row r: the event for (t, dir), or UINT32_MAX; *contains when it holds t. */
static uint32_t row_at(const struct tl_row *r, uint64_t t, int dir, int *contains)
{
	*contains = 0;
	if (r->n <= r->base)
		return UINT32_MAX;
	if (dir > 0) {
		uint32_t k = tl_lower(r, t, 1);
		return k < r->n ? k : UINT32_MAX;
	}
	if (dir < 0) {
		uint32_t k = tl_lower(r, t, 0);
		return k > r->base ? k - 1 : UINT32_MAX;
	}
	uint32_t hi = tl_lower(r, t, 1); /* first start after t */
	if (hi > r->base) {
		uint32_t k = hi - 1;
		if (r->end[k] > t || r->start[k] == t) {
			*contains = 1;
			return k;
		}
	}
	if (hi == r->base)
		return hi;
	if (hi == r->n)
		return hi - 1;
	return t - r->start[hi - 1] <= r->start[hi] - t ? hi - 1 : hi;
}

int pt_timeline_event_at(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track, int depth,
			 uint64_t t_ns, int dir, struct pt_event *out, unsigned *out_depth)
{
	struct tl_track *x = tl_track_of(c, t, track);
	if (!x || !x->nrows)
		return PT_ENOENT;
	uint32_t best = UINT32_MAX, best_d = 0;
	int best_in = 0;
	uint32_t d0 = depth >= 0 ? (uint32_t)depth : 0;
	uint32_t d1 = depth >= 0 ? (uint32_t)depth + 1 : x->nrows;
	if (d1 > x->nrows)
		d1 = x->nrows;
	for (uint32_t d = d0; d < d1; d++) {
		const struct tl_row *r = &x->rows[d];
		int in;
		uint32_t k = row_at(r, t_ns, dir, &in);
		if (k == UINT32_MAX)
			continue;
		int take = best == UINT32_MAX;
		if (!take) {
			const struct tl_row *br = &x->rows[best_d];
			uint64_t s = r->start[k], bs = br->start[best];
			if (dir > 0)
				take = s <= bs; /* earliest; deeper on a tie */
			else if (dir < 0)
				take = s >= bs; /* latest; deeper on a tie */
			else if (in != best_in)
				take = in;
			else if (in)
				take = 1; /* deeper */
			else {
				uint64_t dk = s > t_ns ? s - t_ns : t_ns - s;
				uint64_t db = bs > t_ns ? bs - t_ns : t_ns - bs;
				take = dk <= db;
			}
		}
		if (take) {
			best = k;
			best_d = d;
			best_in = in;
		}
	}
	if (best == UINT32_MAX)
		return PT_ENOENT;
	tl_row_event(&x->rows[best_d], best, track, out);
	if (out_depth)
		*out_depth = best_d;
	return 0;
}

int pt_timeline_parent(struct pt_timeline_cache *c, struct pt_trace *t, const struct pt_event *ev,
		       unsigned depth, struct pt_event *out)
{
	struct tl_track *x = tl_track_of(c, t, ev->track_id);
	if (!x || depth == 0 || depth > x->nrows)
		return PT_ENOENT;
	const struct tl_row *r = &x->rows[depth - 1];
	uint32_t k = tl_lower(r, ev->start_ns, 1);
	if (k == r->base || r->end[k - 1] <= ev->start_ns)
		return PT_ENOENT;
	tl_row_event(r, k - 1, ev->track_id, out);
	return 0;
}

uint64_t pt_timeline_self_ns(struct pt_timeline_cache *c, struct pt_trace *t,
			     const struct pt_event *ev, unsigned depth)
{
	struct tl_track *x = tl_track_of(c, t, ev->track_id);
	uint64_t s = ev->start_ns, e = pt_event_end(ev), kids = 0;
	if (!x || depth + 1 >= x->nrows)
		return ev->dur_ns;
	const struct tl_row *r = &x->rows[depth + 1];
	for (uint32_t i = tl_lower(r, s, 0); i < r->n && r->start[i] < e; i++)
		kids += (r->end[i] < e ? r->end[i] : e) - r->start[i];
	return kids < ev->dur_ns ? ev->dur_ns - kids : 0;
}
