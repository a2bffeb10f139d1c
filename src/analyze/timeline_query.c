/*
 * timeline_query.c - what the timeline derives from its index
 * (timeline.c): the lane order, the step list (start order, slowest first,
 * by number), correlation between host launches and device activity,
 * search by name, and the ruler's ticks and labels.
 *
 * Steps are numbered as the aggregator numbers them: the number in the
 * step's name ("ProfilerStep#552"), else its ordinal among every step
 * event in start order, counting the steps the store's cap dropped, so a
 * number is the job's own whatever part of the data is shown. The step
 * list does not need the rows' index: asking for steps (the screen's
 * windows) costs the steps, not an index of every event.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/error.h"
#include "proftop/store.h"
#include "analyze/timeline_int.h"
#include "model/util.h"

/* ------------------------------------------------------------------ steps */

static int step_cmp(const void *a, const void *b)
{
	const struct pt_tl_step *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	return x->track < y->track ? -1 : x->track > y->track;
}

/* Room for one more step at position at (the list stays sorted). */
static void steps_insert(struct pt_timeline_cache *c, size_t at, const struct pt_tl_step *v,
			 int64_t name_num)
{
	if (c->nsteps == c->steps_cap) {
		c->steps_cap = c->steps_cap ? c->steps_cap * 2 : 64;
		c->steps = pt_xrealloc(c->steps, c->steps_cap * sizeof *c->steps);
		c->step_num = pt_xrealloc(c->step_num, c->steps_cap * sizeof *c->step_num);
	}
	memmove(c->steps + at + 1, c->steps + at, (c->nsteps - at) * sizeof *c->steps);
	memmove(c->step_num + at + 1, c->step_num + at, (c->nsteps - at) * sizeof *c->step_num);
	c->steps[at] = *v;
	c->step_num[at] = name_num;
	c->nsteps++;
}

/*
 * The step list, kept apart from the rows' index so that a step query (the
 * screen's "last 10 steps") does not index every event: each track that has
 * steps is re-read from where its new events start (at chunk granularity:
 * this reader leaves the store's checkpoints to the index), its steps from
 * there replaced; steps before the store's complete-from time go, as the
 * rows' do. The list stays sorted, so a refresh costs the steps that came.
 */
static void make_steps(struct pt_timeline_cache *c, struct pt_trace *t)
{
	tl_cache_bind(c, t);
	struct pt_store *st = t->store;
	if (t->ntracks > c->nst) {
		c->st_since = pt_xrealloc(c->st_since, t->ntracks * sizeof *c->st_since);
		for (uint32_t i = c->nst; i < t->ntracks; i++)
			c->st_since[i] = UINT64_MAX; /* never read */
		c->nst = t->ntracks;
	}
	int changed = 0;
	for (uint32_t k = 0; k < t->ntracks; k++) {
		if (!t->tracks[k].steps)
			continue;
		uint64_t app = pt_store_track_appended(st, k);
		if (app == c->st_since[k])
			continue;
		uint64_t t_min = c->st_since[k] == UINT64_MAX
				     ? 0
				     : pt_store_track_start_since(st, k, c->st_since[k]);
		c->st_since[k] = app;
		if (t_min == UINT64_MAX)
			continue;
		changed = 1;
		/* this track's steps from t_min on go; the store has them again */
		size_t w = 0;
		for (size_t i = 0; i < c->nsteps; i++)
			if (c->steps[i].track != k || c->steps[i].start_ns < t_min) {
				c->steps[w] = c->steps[i];
				c->step_num[w++] = c->step_num[i];
			}
		c->nsteps = w;
		struct pt_store_iter it;
		pt_store_iter_init(&it, st, k, t_min, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (ev->kind != PT_KIND_PROFILE_STEP)
				continue;
			struct pt_tl_step v = {ev->start_ns, pt_event_end(ev), k, ev->name_id, 0};
			size_t at = c->nsteps; /* usually the end: walk back from there */
			while (at > 0 && step_cmp(&c->steps[at - 1], &v) > 0)
				at--;
			steps_insert(c, at, &v, pt_step_number(pt_trace_str(t, ev->name_id)));
		}
		pt_store_iter_done(&it);
	}
	uint64_t cf = pt_store_complete_from_ns(st);
	if (cf > c->steps_trim) {
		size_t w = 0;
		for (size_t i = 0; i < c->nsteps; i++)
			if (c->steps[i].start_ns >= cf) {
				c->steps[w] = c->steps[i];
				c->step_num[w++] = c->step_num[i];
			}
		changed |= w != c->nsteps;
		c->nsteps = w;
		c->steps_trim = cf;
	}
	int64_t base = (int64_t)pt_store_dropped_steps(st);
	if (changed || base != c->steps_base) {
		for (size_t i = 0; i < c->nsteps; i++)
			c->steps[i].number =
			    c->step_num[i] >= 0 ? c->step_num[i] : base + (int64_t)i;
		c->steps_base = base;
		c->steps_gen++;
	}
	if (!c->steps) {
		c->steps = pt_xmalloc(sizeof *c->steps);
		c->step_num = pt_xmalloc(sizeof *c->step_num);
	}
}

size_t pt_timeline_steps(struct pt_timeline_cache *c, struct pt_trace *t,
			 const struct pt_tl_step **out)
{
	make_steps(c, t);
	*out = c->steps;
	return c->nsteps;
}

static const struct pt_tl_step *g_steps;
static int dur_cmp(const void *a, const void *b)
{
	const struct pt_tl_step *x = &g_steps[*(const uint32_t *)a],
				*y = &g_steps[*(const uint32_t *)b];
	uint64_t dx = x->end_ns - x->start_ns, dy = y->end_ns - y->start_ns;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

long pt_timeline_step_by_rank(struct pt_timeline_cache *c, struct pt_trace *t, size_t k)
{
	make_steps(c, t);
	if (k >= c->nsteps)
		return -1;
	if (!c->by_dur || c->by_dur_gen != c->steps_gen) {
		free(c->by_dur);
		c->by_dur = pt_xmalloc((c->nsteps ? c->nsteps : 1) * sizeof *c->by_dur);
		for (size_t i = 0; i < c->nsteps; i++)
			c->by_dur[i] = (uint32_t)i;
		g_steps = c->steps;
		qsort(c->by_dur, c->nsteps, sizeof *c->by_dur, dur_cmp);
		c->by_dur_gen = c->steps_gen;
	}
	return (long)c->by_dur[k];
}

long pt_timeline_step_by_number(struct pt_timeline_cache *c, struct pt_trace *t, int64_t n)
{
	make_steps(c, t);
	for (size_t i = 0; i < c->nsteps; i++)
		if (c->steps[i].number == n)
			return (long)i;
	return -1;
}

long pt_timeline_step_at(struct pt_timeline_cache *c, struct pt_trace *t, uint64_t t_ns)
{
	make_steps(c, t);
	size_t lo = 0, hi = c->nsteps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->steps[mid].start_ns <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (long)lo - 1 : -1;
}

int pt_timeline_step_edge(struct pt_timeline_cache *c, struct pt_trace *t, uint64_t t_ns, int dir,
			  uint64_t *out_ns, uint64_t *out_end_ns)
{
	make_steps(c, t);
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

size_t pt_timeline_lanes(struct pt_timeline_cache *c, struct pt_trace *t, struct pt_lane *out,
			 size_t max)
{
	pt_timeline_update(c, t);
	make_steps(c, t);
	uint64_t *steps = pt_xcalloc(t->ntracks ? t->ntracks : 1, sizeof *steps);
	for (size_t i = 0; i < c->nsteps; i++)
		if (c->steps[i].track < t->ntracks)
			steps[c->steps[i].track]++;
	uint32_t *ids = pt_xmalloc((t->ntracks ? t->ntracks : 1) * sizeof *ids);
	size_t n = 0;
	for (uint32_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].events > 0 && i < c->ntr && c->tr[i].nrows)
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
		const struct pt_track *tr = &t->tracks[ids[k]];
		out[k].track = ids[k];
		out[k].is_device = pt_track_is_device(tr);
		out[k].device = out[k].is_device ? tr->device : -1;
		out[k].nrows = (uint16_t)c->tr[ids[k]].nrows;
		pt_trace_track_label(t, ids[k], buf, sizeof buf);
		lane_label(out[k].label, sizeof out[k].label, buf);
	}
	free(ids);
	free(steps);
	return k;
}

/* ------------------------------------------------------------- correlated */

static int corr_cmp(const void *a, const void *b)
{
	const struct tl_corr *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void make_corr(struct pt_timeline_cache *c, struct pt_trace *t)
{
	pt_timeline_update(c, t);
	if (c->corr && c->corr_gen == c->gen)
		return;
	size_t n = 0, cap = 0;
	struct tl_corr *v = NULL;
	for (uint32_t k = 0; k < c->ntr; k++) {
		const struct tl_track *x = &c->tr[k];
		int dev = k < t->ntracks && pt_track_is_device(&t->tracks[k]);
		for (uint32_t d = 0; d < x->nrows; d++) {
			const struct tl_row *r = &x->rows[d];
			for (uint32_t i = r->base; i < r->n; i++) {
				if (!r->corr[i])
					continue;
				if (n == cap) {
					cap = cap ? cap * 2 : 1024;
					v = pt_xrealloc(v, cap * sizeof *v);
				}
				v[n++] =
				    (struct tl_corr){r->corr[i], k, i, (uint16_t)d, (uint8_t)dev};
			}
		}
	}
	if (n > 1)
		qsort(v, n, sizeof *v, corr_cmp);
	free(c->corr);
	c->corr = v ? v : pt_xmalloc(sizeof *v);
	c->ncorr = n;
	c->corr_gen = c->gen;
}

static int ev_start_cmp(const void *a, const void *b)
{
	const struct pt_event *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->track_id < y->track_id ? -1 : x->track_id > y->track_id;
}

/* Appends corr's events of the wanted side to out (up to max); returns the new count. */
static size_t corr_collect(struct pt_timeline_cache *c, uint32_t corr, int device,
			   struct pt_event *out, unsigned *depths, size_t n, size_t max)
{
	size_t lo = 0, hi = c->ncorr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->corr[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < c->ncorr && c->corr[i].corr == corr && n < max; i++) {
		const struct tl_corr *e = &c->corr[i];
		if (e->device != (device != 0))
			continue;
		tl_row_event(&c->tr[e->track].rows[e->depth], e->idx, e->track, &out[n]);
		if (depths)
			depths[n] = e->depth;
		n++;
	}
	return n;
}

/* Sorts out[0..n) by start, keeping depths[] beside. */
static void sort_events(struct pt_event *out, unsigned *depths, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ev_start_cmp(&out[j - 1], &out[j]) > 0; j--) {
			struct pt_event e = out[j];
			out[j] = out[j - 1];
			out[j - 1] = e;
			if (depths) {
				unsigned d = depths[j];
				depths[j] = depths[j - 1];
				depths[j - 1] = d;
			}
		}
}

size_t pt_timeline_correlated(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t corr,
			      int device, struct pt_event *out, unsigned *depths, size_t max)
{
	if (!corr || !max)
		return 0;
	make_corr(c, t);
	size_t n = corr_collect(c, corr, device, out, depths, 0, max);
	sort_events(out, depths, n);
	return n;
}

size_t pt_timeline_launched(struct pt_timeline_cache *c, struct pt_trace *t,
			    const struct pt_event *ev, unsigned depth, struct pt_event *out,
			    unsigned *depths, size_t max)
{
	struct tl_track *x = tl_track_of(c, t, ev->track_id);
	if (!x || !max)
		return 0;
	make_corr(c, t);
	size_t n = 0;
	uint64_t s = ev->start_ns, e = pt_event_end(ev);
	for (uint32_t d = depth; d < x->nrows && n < max; d++) {
		const struct tl_row *r = &x->rows[d];
		for (uint32_t i = tl_lower(r, s, 0); i < r->n && r->start[i] < e && n < max; i++)
			if (r->corr[i] && (d > depth || r->start[i] == s))
				n = corr_collect(c, r->corr[i], 1, out, depths, n, max);
	}
	sort_events(out, depths, n);
	return n;
}

/* ----------------------------------------------------------------- search */

int pt_timeline_find(struct pt_timeline_cache *c, struct pt_trace *t, const uint8_t *match,
		     size_t nmatch, const uint32_t *tracks, size_t ntracks, uint64_t after_ns,
		     int dir, struct pt_event *out, unsigned *out_depth)
{
	pt_timeline_update(c, t);
	int found = 0;
	uint64_t best_s = 0;
	for (size_t k = 0; k < ntracks; k++) {
		if (tracks[k] >= c->ntr)
			continue;
		const struct tl_track *x = &c->tr[tracks[k]];
		for (uint32_t d = 0; d < x->nrows; d++) {
			const struct tl_row *r = &x->rows[d];
			if (dir > 0) {
				for (uint32_t i = tl_lower(r, after_ns, 1); i < r->n; i++) {
					if (found && r->start[i] >= best_s)
						break;
					if (r->name[i] < nmatch && match[r->name[i]]) {
						found = 1;
						best_s = r->start[i];
						tl_row_event(r, i, tracks[k], out);
						*out_depth = d;
						break;
					}
				}
			} else {
				for (uint32_t i = tl_lower(r, after_ns, 0); i > r->base; i--) {
					if (found && r->start[i - 1] <= best_s)
						break;
					if (r->name[i - 1] < nmatch && match[r->name[i - 1]]) {
						found = 1;
						best_s = r->start[i - 1];
						tl_row_event(r, i - 1, tracks[k], out);
						*out_depth = d;
						break;
					}
				}
			}
		}
	}
	return found ? 0 : PT_ENOENT;
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

static const char *const unit_name[4] = {"ns", "us", "ms", "s"};
static const uint64_t unit_scale[4] = {1, 1000, 1000000, 1000000000};

/*
 * Three significant digits, no trailing zeros, ASCII "us" for microseconds
 * (PuTTY and --ascii), integer arithmetic only so no locale can change the
 * decimal point.
 */
void pt_format_duration(char *buf, size_t len, uint64_t ns)
{
	if (!len)
		return;
	int u = 0;
	while (u < 3 && ns >= unit_scale[u + 1])
		u++;
	for (;;) {
		uint64_t whole = ns / unit_scale[u];
		unsigned decimals = whole >= 100 ? 0 : whole >= 10 ? 1 : 2;
		uint64_t pow = decimals == 0 ? 1 : decimals == 1 ? 10 : 100;
		unsigned __int128 v =
		    ((unsigned __int128)ns * pow + unit_scale[u] / 2) / unit_scale[u];
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
			snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 " %s", ip, (int)decimals, fp,
				 unit_name[u]);
		else
			snprintf(buf, len, "%" PRIu64 " %s", ip, unit_name[u]);
		return;
	}
}

void pt_timeline_ruler_label(char *buf, size_t len, uint64_t v_ns, uint64_t tick_ns,
			     uint64_t unit_ns)
{
	if (!len)
		return;
	if (v_ns == 0) {
		snprintf(buf, len, "0");
		return;
	}
	int u = 0;
	while (u < 3 && unit_ns >= unit_scale[u + 1])
		u++;
	/* decimals: until the tick is a whole number of the last digit */
	unsigned d = 0;
	uint64_t p = unit_scale[u];
	while (d < 9 && tick_ns && p > 1 && tick_ns % p) {
		p /= 10;
		d++;
	}
	uint64_t whole = v_ns / unit_scale[u], frac = (v_ns % unit_scale[u]) / (p ? p : 1);
	if (d)
		snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 " %s", whole, (int)d, frac,
			 unit_name[u]);
	else
		snprintf(buf, len, "%" PRIu64 " %s", whole, unit_name[u]);
}
