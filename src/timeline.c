/*
 * timeline.c - the timeline's model: lane order, the bucketing of a time
 * range into cells (which event wins a cell), the cursor queries, the ruler
 * and duration text. The store has no nesting depth and its iterator only
 * finds events by start, so a per-track index (struct pt_timeline_cache) is
 * built on first use from the store's sorted iteration: the events' start,
 * end and depth in start order plus, per block of 4, 16, ... 4096 events,
 * the latest end and the block's best event by the winner rule. A block
 * whose events all start and end inside one cell is then settled in O(1),
 * so a zoomed-out frame touches a few events per cell instead of all of
 * them; the latest ends also let a walk backwards find the events that
 * started before the window and still cover it. A track's index is rebuilt
 * when its event count or the store's drop count changes (its pointers into
 * the store stay valid until then: appends and drops are what move them).
 * The uncached entry points build a throwaway index for one call.
 */
#include "proftop/timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/error.h"
#include "util.h"

#define NLEV 6
static const uint32_t lev_shift[NLEV] = {2, 4, 6, 8, 10, 12}; /* blocks of 4 .. 4096 events */

struct tl_track {
	int built;
	uint64_t sig_events, sig_dropped;
	uint32_t n;
	struct pt_event **ev; /* start order (the store's) */
	uint64_t *start, *end;
	uint16_t *depth;
	uint64_t *lmax_end[NLEV]; /* latest end per block */
	uint32_t *lbest[NLEV];    /* best event per block (cov = dur) */
	uint64_t *pmax_end;       /* latest end over level-0 blocks [0, b] */
};

struct step_ref {
	uint64_t start_ns, end_ns;
	uint32_t track;
};

struct pt_timeline_cache {
	const struct pt_trace *t;
	struct tl_track *tr;
	uint32_t ntr;
	uint64_t steps_sig; /* appended + dropped when the step list was made, +1 */
	struct step_ref *steps;
	size_t nsteps;
};

/* ---------------------------------------------------------------- index */

static void track_free(struct tl_track *x)
{
	free(x->ev);
	free(x->start);
	free(x->end);
	free(x->depth);
	for (int l = 0; l < NLEV; l++) {
		free(x->lmax_end[l]);
		free(x->lbest[l]);
	}
	free(x->pmax_end);
	memset(x, 0, sizeof *x);
}

struct pt_timeline_cache *pt_timeline_cache_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_timeline_cache));
}

static void cache_reset(struct pt_timeline_cache *c)
{
	for (uint32_t i = 0; i < c->ntr; i++)
		track_free(&c->tr[i]);
	free(c->tr);
	free(c->steps);
	c->tr = NULL;
	c->ntr = 0;
	c->steps = NULL;
	c->nsteps = 0;
	c->steps_sig = 0;
}

void pt_timeline_cache_free(struct pt_timeline_cache *c)
{
	if (!c)
		return;
	cache_reset(c);
	free(c);
}

/* 1 when event a beats b by the winner rule, both covering cov_a / cov_b. */
static inline int beats(const struct tl_track *x, uint64_t cov_a, uint32_t a, uint64_t cov_b,
			uint32_t b)
{
	if (cov_a != cov_b)
		return cov_a > cov_b;
	if (x->depth[a] != x->depth[b])
		return x->depth[a] < x->depth[b];
	if (x->start[a] != x->start[b])
		return x->start[a] < x->start[b];
	return a < b;
}

static void build_track(struct tl_track *x, struct pt_store *st, uint32_t track)
{
	track_free(x);
	uint64_t cnt = pt_store_track_events(st, track);
	size_t cap = cnt ? (size_t)cnt : 1;
	x->ev = pt_xmalloc(cap * sizeof *x->ev);
	x->start = pt_xmalloc(cap * sizeof *x->start);
	x->end = pt_xmalloc(cap * sizeof *x->end);
	x->depth = pt_xmalloc(cap * sizeof *x->depth);
	/* Open events at the current start; stale entries below the top are
	 * compacted away when the stack grows, so overlapping (not nested)
	 * events cannot inflate it without bound. */
	uint32_t *stack = NULL;
	size_t sn = 0, scap = 0;
	struct pt_store_iter it;
	pt_store_iter_init(&it, st, track, 0, UINT64_MAX);
	uint32_t n = 0;
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it)) && n < cap) {
		uint64_t s = ev->start_ns, e = pt_event_end(ev);
		while (sn && x->end[stack[sn - 1]] <= s)
			sn--;
		if (sn >= 64) {
			size_t k = 0;
			for (size_t j = 0; j < sn; j++)
				if (x->end[stack[j]] > s)
					stack[k++] = stack[j];
			sn = k;
		}
		x->ev[n] = ev;
		x->start[n] = s;
		x->end[n] = e;
		x->depth[n] = sn > UINT16_MAX ? UINT16_MAX : (uint16_t)sn;
		if (sn == scap) {
			scap = scap ? scap * 2 : 64;
			stack = pt_xrealloc(stack, scap * sizeof *stack);
		}
		stack[sn++] = n;
		n++;
	}
	pt_store_iter_done(&it);
	free(stack);
	x->n = n;
	for (int l = 0; l < NLEV; l++) {
		size_t nb = ((size_t)n >> lev_shift[l]) + 1;
		x->lmax_end[l] = pt_xmalloc(nb * sizeof(uint64_t));
		x->lbest[l] = pt_xmalloc(nb * sizeof(uint32_t));
		for (size_t b = 0; b < nb; b++) {
			size_t lo = b << lev_shift[l], hi = (b + 1) << lev_shift[l];
			if (hi > n)
				hi = n;
			uint64_t me = 0;
			uint32_t best = UINT32_MAX;
			if (l == 0) {
				for (size_t i = lo; i < hi; i++) {
					if (x->end[i] > me)
						me = x->end[i];
					if (best == UINT32_MAX ||
					    beats(x, x->end[i] - x->start[i], (uint32_t)i,
						  x->end[best] - x->start[best], best))
						best = (uint32_t)i;
				}
			} else {
				uint32_t step = 1u << (lev_shift[l] - lev_shift[l - 1]);
				for (size_t cb = b * step; cb < (b + 1) * step && (cb << lev_shift[l - 1]) < hi; cb++) {
					uint32_t k = x->lbest[l - 1][cb];
					if (x->lmax_end[l - 1][cb] > me)
						me = x->lmax_end[l - 1][cb];
					if (k != UINT32_MAX &&
					    (best == UINT32_MAX ||
					     beats(x, x->end[k] - x->start[k], k, x->end[best] - x->start[best], best)))
						best = k;
				}
			}
			x->lmax_end[l][b] = me;
			x->lbest[l][b] = best;
		}
	}
	size_t nb0 = ((size_t)n >> lev_shift[0]) + 1;
	x->pmax_end = pt_xmalloc(nb0 * sizeof(uint64_t));
	uint64_t pm = 0;
	for (size_t b = 0; b < nb0; b++) {
		if (x->lmax_end[0][b] > pm)
			pm = x->lmax_end[0][b];
		x->pmax_end[b] = pm;
	}
	x->sig_events = cnt;
	x->sig_dropped = pt_store_dropped(st);
	x->built = 1;
}

/* The track's index, (re)built when the store changed under it; NULL for no such track. */
static struct tl_track *cache_track(struct pt_timeline_cache *c, struct pt_trace *t,
				    uint32_t track)
{
	if (c->t != t) {
		cache_reset(c);
		c->t = t;
	}
	if (track >= pt_store_track_count(t->store))
		return NULL;
	if (track >= c->ntr) {
		uint32_t n = pt_store_track_count(t->store);
		c->tr = pt_xrealloc(c->tr, (size_t)n * sizeof *c->tr);
		memset(c->tr + c->ntr, 0, (size_t)(n - c->ntr) * sizeof *c->tr);
		c->ntr = n;
	}
	struct tl_track *x = &c->tr[track];
	if (!x->built || x->sig_events != pt_store_track_events(t->store, track) ||
	    x->sig_dropped != pt_store_dropped(t->store))
		build_track(x, t->store, track);
	return x;
}

/* First index whose start is >= v (strict: > v). */
static uint32_t lower_idx(const struct tl_track *x, uint64_t v, int strict)
{
	uint32_t lo = 0, hi = x->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (strict ? x->start[mid] <= v : x->start[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Calls fn for every event with index < i whose end is after t (walking
 * back, skipping blocks that end by t, stopping when nothing earlier can).
 */
typedef void (*open_fn)(void *ctx, uint32_t idx);
static size_t walk_open(const struct tl_track *x, uint32_t i, uint64_t t, open_fn fn, void *ctx)
{
	size_t visited = 0;
	while (i > 0) {
		uint32_t blk = (i - 1) >> lev_shift[0];
		if (x->pmax_end[blk] <= t)
			break;
		int skipped = 0;
		for (int l = NLEV - 1; l >= 1 && !skipped; l--) {
			uint32_t sz = 1u << lev_shift[l];
			if (i % sz == 0 && x->lmax_end[l][(i >> lev_shift[l]) - 1] <= t) {
				i -= sz;
				skipped = 1;
			}
		}
		if (skipped)
			continue;
		uint32_t lo = blk << lev_shift[0];
		if (x->lmax_end[0][blk] > t)
			for (uint32_t k = i; k > lo; k--)
				if (x->end[k - 1] > t) {
					fn(ctx, k - 1);
					visited++;
				}
		i = lo;
	}
	return visited;
}

/* ------------------------------------------------------------ bucketing */

struct bucket_ctx {
	const struct tl_track *x;
	const uint64_t *b; /* cell bounds, width + 1 */
	size_t width;
	uint64_t *cov;
	uint32_t *win; /* UINT32_MAX = empty */
};

static inline void offer(struct bucket_ctx *bc, size_t c, uint32_t idx, uint64_t cov)
{
	uint32_t w = bc->win[c];
	if (w == UINT32_MAX || beats(bc->x, cov, idx, bc->cov[c], w)) {
		bc->win[c] = idx;
		bc->cov[c] = cov;
	}
}

/* Offers event idx to every cell it overlaps from cell c0 on. */
static void spread(struct bucket_ctx *bc, size_t c0, uint32_t idx)
{
	uint64_t s = bc->x->start[idx], e = bc->x->end[idx];
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

static void spread_open(void *ctx, uint32_t idx)
{
	spread(ctx, 0, idx);
}

static size_t bucket_track(const struct tl_track *x, uint64_t t0, uint64_t t1,
			   struct pt_cell *cells, size_t width)
{
	for (size_t c = 0; c < width; c++) {
		memset(&cells[c], 0, sizeof cells[c]);
		cells[c].kind = PT_KIND__COUNT;
	}
	if (!x || !x->n || !width || t1 <= t0)
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
	struct bucket_ctx bc = {x, b, width, cov, win};
	uint32_t lo = lower_idx(x, t0, 0);
	size_t visited = walk_open(x, lo, t0, spread_open, &bc);
	size_t c = 0;
	uint32_t i = lo;
	while (i < x->n && x->start[i] < t1) {
		while (x->start[i] >= b[c + 1])
			c++;
		int done = 0;
		if ((i & ((1u << lev_shift[0]) - 1)) == 0) {
			for (int l = NLEV - 1; l >= 0 && !done; l--) {
				uint32_t sz = 1u << lev_shift[l];
				if (i % sz || (uint64_t)i + sz > x->n)
					continue;
				uint32_t blk = i >> lev_shift[l];
				if (x->start[i + sz - 1] < b[c + 1] && x->lmax_end[l][blk] <= b[c + 1]) {
					uint32_t k = x->lbest[l][blk];
					offer(&bc, c, k, x->end[k] - x->start[k]);
					i += sz;
					done = 1;
				}
			}
		}
		if (!done)
			spread(&bc, c, i++);
		visited++;
	}
	for (c = 0; c < width; c++) {
		uint32_t k = win[c];
		if (k == UINT32_MAX)
			continue;
		const struct pt_event *ev = x->ev[k];
		cells[c].kind = ev->kind < PT_KIND__COUNT ? ev->kind : PT_KIND_OTHER;
		cells[c].starts = ev->start_ns >= b[c] && ev->start_ns < b[c + 1];
		cells[c].depth = x->depth[k];
		cells[c].name_id = ev->name_id;
		cells[c].start_ns = ev->start_ns;
		cells[c].dur_ns = ev->dur_ns;
	}
	free(b);
	return visited;
}

size_t pt_timeline_cache_bucket(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
				uint64_t t0_ns, uint64_t t1_ns, struct pt_cell *cells, size_t width)
{
	return bucket_track(cache_track(c, t, track), t0_ns, t1_ns, cells, width);
}

size_t pt_timeline_bucket(struct pt_trace *t, uint32_t track, uint64_t t0_ns, uint64_t t1_ns,
			  struct pt_cell *cells, size_t width)
{
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	size_t r = pt_timeline_cache_bucket(c, t, track, t0_ns, t1_ns, cells, width);
	pt_timeline_cache_free(c);
	return r;
}

/* --------------------------------------------------------- cursor queries */

struct at_ctx {
	const struct tl_track *x;
	uint64_t t;
	uint32_t best; /* UINT32_MAX = none */
};

/* Deepest event containing t; ties go to the later start. */
static void at_offer(void *ctx, uint32_t k)
{
	struct at_ctx *a = ctx;
	const struct tl_track *x = a->x;
	if (a->best == UINT32_MAX || x->depth[k] > x->depth[a->best] ||
	    (x->depth[k] == x->depth[a->best] && k > a->best))
		a->best = k;
}

/* The deepest of the events sharing k's start. */
static uint32_t deepest_same_start(const struct tl_track *x, uint32_t k)
{
	uint32_t best = k;
	for (uint32_t j = k; j > 0 && x->start[j - 1] == x->start[k]; j--)
		if (x->depth[j - 1] > x->depth[best])
			best = j - 1;
	for (uint32_t j = k + 1; j < x->n && x->start[j] == x->start[k]; j++)
		if (x->depth[j] > x->depth[best])
			best = j;
	return best;
}

int pt_timeline_cache_event_at(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
			       uint64_t t_ns, int dir, struct pt_event *out)
{
	const struct tl_track *x = cache_track(c, t, track);
	if (!x || !x->n)
		return PT_ENOENT;
	uint32_t k;
	if (dir > 0) {
		k = lower_idx(x, t_ns, 1);
		if (k >= x->n)
			return PT_ENOENT;
	} else if (dir < 0) {
		k = lower_idx(x, t_ns, 0);
		if (k == 0)
			return PT_ENOENT;
		k--;
	} else {
		uint32_t hi = lower_idx(x, t_ns, 1); /* first start after t */
		struct at_ctx a = {x, t_ns, UINT32_MAX};
		walk_open(x, hi, t_ns, at_offer, &a);
		/* instants exactly at t contain it too */
		for (uint32_t j = hi; j > 0 && x->start[j - 1] == t_ns; j--)
			if (x->end[j - 1] == t_ns)
				at_offer(&a, j - 1);
		if (a.best != UINT32_MAX) {
			*out = *x->ev[a.best];
			return 0;
		}
		if (hi == 0)
			k = 0;
		else if (hi == x->n)
			k = hi - 1;
		else
			k = t_ns - x->start[hi - 1] <= x->start[hi] - t_ns ? hi - 1 : hi;
	}
	*out = *x->ev[deepest_same_start(x, k)];
	return 0;
}

int pt_timeline_event_at(struct pt_trace *t, uint32_t track, uint64_t t_ns, int dir,
			 struct pt_event *out)
{
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	int r = pt_timeline_cache_event_at(c, t, track, t_ns, dir, out);
	pt_timeline_cache_free(c);
	return r;
}

/* ------------------------------------------------------------------ steps */

struct vec {
	void *p;
	size_t n, cap, size;
};

static void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->p = pt_xrealloc(v->p, v->cap * v->size);
	}
	return (char *)v->p + v->size * v->n++;
}

static int collect_step(void *ctx, struct pt_event *ev)
{
	if (ev->kind == PT_KIND_PROFILE_STEP) {
		struct step_ref *r = vec_push(ctx);
		r->start_ns = ev->start_ns;
		r->end_ns = pt_event_end(ev);
		r->track = ev->track_id;
	}
	return 0;
}

static int step_cmp(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	return x->track < y->track ? -1 : x->track > y->track;
}

/* Every step event in start order, remade when anything was appended or dropped. */
static void cache_steps(struct pt_timeline_cache *c, const struct pt_trace *t)
{
	if (c->t != t) {
		cache_reset(c);
		c->t = t;
	}
	uint64_t sig = pt_store_count(t->store) + pt_store_dropped(t->store) + 1;
	if (c->steps_sig == sig)
		return;
	struct vec v = {NULL, 0, 0, sizeof(struct step_ref)};
	pt_store_foreach(t->store, collect_step, &v);
	if (v.n > 1)
		qsort(v.p, v.n, sizeof(struct step_ref), step_cmp);
	free(c->steps);
	c->steps = v.p;
	c->nsteps = v.n;
	c->steps_sig = sig;
}

int pt_timeline_cache_step_edge(struct pt_timeline_cache *c, const struct pt_trace *t,
				uint64_t t_ns, int dir, uint64_t *out_ns, uint64_t *out_end_ns)
{
	cache_steps(c, t);
	size_t lo = 0, hi = c->nsteps;
	/* first step starting after t (dir > 0) or at/after t (dir < 0) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dir > 0 ? c->steps[mid].start_ns <= t_ns : c->steps[mid].start_ns < t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k;
	if (dir > 0) {
		if (lo >= c->nsteps)
			return PT_ENOENT;
		k = lo;
	} else {
		if (lo == 0)
			return PT_ENOENT;
		k = lo - 1;
		/* the longest of the steps sharing that start */
		while (k > 0 && c->steps[k - 1].start_ns == c->steps[k].start_ns)
			k--;
	}
	if (out_ns)
		*out_ns = c->steps[k].start_ns;
	if (out_end_ns)
		*out_end_ns = c->steps[k].end_ns;
	return 0;
}

int pt_timeline_step_edge(struct pt_trace *t, uint64_t t_ns, int dir, uint64_t *out_ns,
			  uint64_t *out_end_ns)
{
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	int r = pt_timeline_cache_step_edge(c, t, t_ns, dir, out_ns, out_end_ns);
	pt_timeline_cache_free(c);
	return r;
}

/* ------------------------------------------------------------------ lanes */

struct lane_key {
	const struct pt_trace *t;
	const uint64_t *steps; /* step events per track */
};

static int lane_cmp_ctx(const struct lane_key *lk, uint32_t a, uint32_t b)
{
	const struct pt_track *x = &lk->t->tracks[a], *y = &lk->t->tracks[b];
	int dx = pt_track_is_device(x), dy = pt_track_is_device(y);
	if (dx != dy)
		return dx - dy;
	if (!dx) {
		if (lk->steps[a] != lk->steps[b])
			return lk->steps[a] > lk->steps[b] ? -1 : 1;
		if (x->sort_index != y->sort_index)
			return x->sort_index < y->sort_index ? -1 : 1;
		if (x->key.pid != y->key.pid)
			return x->key.pid < y->key.pid ? -1 : 1;
		if (x->key.tid != y->key.tid)
			return x->key.tid < y->key.tid ? -1 : 1;
	} else {
		if (x->device != y->device)
			return x->device < y->device ? -1 : 1;
		if (x->stream != y->stream)
			return x->stream < y->stream ? -1 : 1;
	}
	return a < b ? -1 : a > b;
}

/* Copies a label into a lane, cutting at a UTF-8 character boundary. */
static void lane_label(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap) {
		n = cap - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = 0;
}

static size_t lanes_with(const struct pt_trace *t, const uint64_t *steps, struct pt_lane *out,
			 size_t max)
{
	uint32_t *ids = pt_xmalloc((t->ntracks ? t->ntracks : 1) * sizeof *ids);
	size_t n = 0;
	for (uint32_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].events > 0)
			ids[n++] = i;
	struct lane_key lk = {t, steps};
	/* insertion sort: tens of tracks, and it needs the context */
	for (size_t i = 1; i < n; i++) {
		uint32_t v = ids[i];
		size_t j = i;
		while (j > 0 && lane_cmp_ctx(&lk, ids[j - 1], v) > 0) {
			ids[j] = ids[j - 1];
			j--;
		}
		ids[j] = v;
	}
	size_t k = 0;
	for (; k < n && k < max; k++) {
		char buf[256];
		out[k].track = ids[k];
		out[k].is_device = pt_track_is_device(&t->tracks[ids[k]]);
		pt_trace_track_label(t, ids[k], buf, sizeof buf);
		lane_label(out[k].label, sizeof out[k].label, buf);
	}
	free(ids);
	return k;
}

size_t pt_timeline_cache_lanes(struct pt_timeline_cache *c, const struct pt_trace *t,
			       struct pt_lane *out, size_t max)
{
	cache_steps(c, t);
	uint64_t *steps = pt_xcalloc(t->ntracks ? t->ntracks : 1, sizeof *steps);
	for (size_t i = 0; i < c->nsteps; i++)
		if (c->steps[i].track < t->ntracks)
			steps[c->steps[i].track]++;
	size_t n = lanes_with(t, steps, out, max);
	free(steps);
	return n;
}

size_t pt_timeline_lanes(const struct pt_trace *t, struct pt_lane *out, size_t max)
{
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	size_t n = pt_timeline_cache_lanes(c, t, out, max);
	pt_timeline_cache_free(c);
	return n;
}

/* ------------------------------------------------------------- correlated */

struct corr_ctx {
	uint32_t corr;
	struct vec v;
};

static int collect_corr(void *ctx, struct pt_event *ev)
{
	struct corr_ctx *cc = ctx;
	if (ev->corr == cc->corr && pt_kind_is_device(ev->kind))
		*(struct pt_event *)vec_push(&cc->v) = *ev;
	return 0;
}

static int ev_start_cmp(const void *a, const void *b)
{
	const struct pt_event *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->track_id != y->track_id)
		return x->track_id < y->track_id ? -1 : 1;
	return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;
}

size_t pt_timeline_correlated(struct pt_trace *t, uint32_t corr, struct pt_event *out,
			      size_t max)
{
	if (corr == 0)
		return 0;
	struct corr_ctx cc = {corr, {NULL, 0, 0, sizeof(struct pt_event)}};
	pt_store_foreach(t->store, collect_corr, &cc);
	if (cc.v.n > 1)
		qsort(cc.v.p, cc.v.n, sizeof(struct pt_event), ev_start_cmp);
	size_t n = cc.v.n < max ? cc.v.n : max;
	if (n)
		memcpy(out, cc.v.p, n * sizeof *out);
	free(cc.v.p);
	return n;
}

/* ------------------------------------------------------- ruler and text */

uint64_t pt_timeline_tick_ns(uint64_t span_ns, unsigned ticks)
{
	if (ticks == 0)
		ticks = 1;
	if (span_ns == 0)
		return 1;
	/* the 1-2-5 step whose tick count is nearest `ticks` (by ratio) */
	uint64_t best = 1;
	double best_err = -1;
	static const uint64_t mant[3] = {1, 2, 5};
	for (uint64_t p = 1;; p *= 10) {
		for (int m = 0; m < 3; m++) {
			uint64_t step = mant[m] * p;
			double n = (double)span_ns / (double)step;
			double err = n > ticks ? n / ticks : ticks / n;
			if (best_err < 0 || err < best_err) {
				best_err = err;
				best = step;
			}
		}
		if (p > UINT64_MAX / 50 || (double)span_ns / (double)p < 0.1)
			break;
	}
	return best;
}

/*
 * Three significant digits, no trailing zeros, ASCII "us" for microseconds
 * (PuTTY and --ascii), integer arithmetic only so no locale can change the
 * decimal point.
 */
void pt_format_duration(char *buf, size_t len, uint64_t ns)
{
	static const char *const unit[4] = {"ns", "us", "ms", "s"};
	static const uint64_t scale[4] = {1, 1000, 1000000, 1000000000};
	if (!len)
		return;
	int u = 0;
	while (u < 3 && ns >= scale[u + 1])
		u++;
	for (;;) {
		uint64_t whole = ns / scale[u];
		unsigned decimals = whole >= 100 ? 0 : whole >= 10 ? 1 : 2;
		uint64_t pow = decimals == 0 ? 1 : decimals == 1 ? 10 : 100;
		unsigned __int128 v = ((unsigned __int128)ns * pow + scale[u] / 2) / scale[u];
		uint64_t ip = (uint64_t)(v / pow), fp = (uint64_t)(v % pow);
		if (u < 3 && ip >= 1000) {
			u++; /* 999.96 us -> 1 ms */
			continue;
		}
		while (decimals && fp % 10 == 0) {
			fp /= 10;
			decimals--;
		}
		if (decimals)
			snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 " %s", ip, (int)decimals, fp, unit[u]);
		else
			snprintf(buf, len, "%" PRIu64 " %s", ip, unit[u]);
		return;
	}
}
