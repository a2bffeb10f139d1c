/*
 * agg_live.c - the summary of a growing trace (a live session) at the cost
 * of what is new, with pt_summarize's figures exactly (agg.h,
 * pt_agg_live_summary).
 *
 * A persistent aggregator P has been fed, track by track in start order,
 * every event that starts before a frontier F. Events start before F only
 * if they are in the store already: the ones still to come start later.
 * A refresh
 *   1. looks at what each track received since the last refresh (the
 *      store's per-track checkpoints): when something new starts before F
 *      (an enclosing range reported at its end long after it began, a
 *      device buffer flushed late), P no longer sees each track in start
 *      order, so P is rebuilt from the store: the figures stay exact, the
 *      refresh costs what a full summary does;
 *   2. moves F up to the newest end in the store less twice the furthest
 *      any recent arrival reached back before the previous refresh's newest
 *      end (a step reported when it ends reaches back a step; a device
 *      buffer flushed every second, a second), and feeds P the events
 *      between the old and the new F: device tracks first, as
 *      pt_summarize does;
 *   3. copies P, feeds the copy the events from F on (the tail: about the
 *      last two reach-backs of the session) and finishes the copy into the
 *      summary.
 * Between 2 and 3, P folds (agg_fold.c) everything that starts before the
 * frontier less twice the longest launch-to-activity lag seen: finished
 * steps become their figures, interval lists their lengths, launches and
 * call instances their GPU time. So what P keeps, and what copying and
 * finishing it cost, is what is in flight (open calls, the last steps'
 * records, the tables' rows, one record per finished step), not the
 * session: a refresh costs the events that arrived plus the tail. A
 * partner of something folded arriving after all (an activity whose launch
 * was folded) rebuilds P, as does anything else P cannot carry over (the
 * store's cap dropped events, a track changed its device, the trace gained
 * the names msprof's overlap lanes are matched by).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "proftop/store.h"
#include "model/util.h"

/* ---- a deep copy of an aggregator ---- */

/* n elements of size elem copied into a fresh array of cap elements. */
static void *dup_cap(const void *p, size_t n, size_t cap, size_t elem)
{
	if (!p || !cap)
		return NULL;
	void *d = pt_xmalloc(cap * elem);
	if (n)
		memcpy(d, p, n * elem);
	return d;
}

static void rowvec_copy(struct rowvec *d, const struct rowvec *s)
{
	*d = *s;
	d->v = dup_cap(s->v, s->n, s->cap, sizeof *s->v);
}

struct pt_agg *agg_clone(const struct pt_agg *a)
{
	struct pt_agg *c = pt_xmalloc(sizeof *c);
	*c = *a;
	c->tracks = dup_cap(a->tracks, a->ntracks, a->tracks_cap, sizeof *a->tracks);
	for (size_t i = 0; i < a->ntracks; i++) {
		const struct track_state *s = &a->tracks[i];
		struct track_state *d = &c->tracks[i];
		d->stack = dup_cap(s->stack, s->depth, s->cap, sizeof *s->stack);
		d->lv = dup_cap(s->lv, 0, s->capl, sizeof *s->lv);
		for (int k = 0; k < s->nl; k++)
			ivl_copy(&d->lv[k], &s->lv[k]);
	}
	u64map_copy(&c->track_ix, &a->track_ix);
	rowvec_copy(&c->ops, &a->ops);
	rowvec_copy(&c->detail, &a->detail);
	rowvec_copy(&c->kernels, &a->kernels);
	rowvec_copy(&c->memory, &a->memory);
	rowvec_copy(&c->ud, &a->ud);
	idmap_copy(&c->ops_by_name, &a->ops_by_name);
	idmap_copy(&c->kernels_by_name, &a->kernels_by_name);
	idmap_copy(&c->memdev_by_name, &a->memdev_by_name);
	idmap_copy(&c->memhost_by_name, &a->memhost_by_name);
	idmap_copy(&c->ud_by_name, &a->ud_by_name);
	idmap_copy(&c->detail_top, &a->detail_top);
	idmap_copy(&c->memname, &a->memname);
	u64map_copy(&c->detail_by_key, &a->detail_by_key);
	u64map_copy(&c->open_rows, &a->open_rows);
	for (int i = 0; i < 3; i++) /* every slot is set when the array grows */
		c->ro[i] = dup_cap(a->ro[i], a->ro_cap[i], a->ro_cap[i], sizeof *a->ro[i]);
	c->dcache = dup_cap(a->dcache, a->dcache_cap, a->dcache_cap, sizeof *a->dcache);
	c->acts = dup_cap(a->acts, a->nacts, a->acts_cap, sizeof *a->acts);
	c->act_kind = dup_cap(a->act_kind, a->nacts, a->act_kind_cap, 1);
	pt_u32map_copy(&c->act_by_corr, &a->act_by_corr);
	c->inst = dup_cap(a->inst, a->ninst, a->inst_cap, sizeof *a->inst);
	c->launches = dup_cap(a->launches, a->nlaunches, a->launches_cap, sizeof *a->launches);
	pt_u32map_copy(&c->launch_by_corr, &a->launch_by_corr);
	vlog_copy(&c->done, &a->done);
	c->orphans = dup_cap(a->orphans, a->norphans, a->orphans_cap, sizeof *a->orphans);
	c->steps = dup_cap(a->steps, a->nsteps, a->steps_cap, sizeof *a->steps);
	vlog_copy(&c->children, &a->children);
	c->phases = dup_cap(a->phases, a->nphases, a->phases_cap, sizeof *a->phases);
	c->devs = dup_cap(a->devs, a->ndevs, a->devs_cap, sizeof *a->devs);
	c->fold.dev_busy = dup_cap(a->fold.dev_busy, a->fold.ndev_busy, a->fold.ndev_busy,
				   sizeof *a->fold.dev_busy);
	/* the settled steps (one record per finished step: the bulk of a long
	 * session) are only read by finishing: the copy reads a's */
	c->fold.steps_borrowed = a->fold.nsteps > 0;
	if (!c->fold.steps_borrowed) {
		c->fold.steps = NULL;
		c->fold.steps_cap = 0;
	}
	c->fold.corrs =
	    dup_cap(a->fold.corrs, a->fold.ncorrs, a->fold.corrs_cap, sizeof *a->fold.corrs);
	return c;
}

/* ---- the live summary ---- */

/* Refreshes whose reach-back sets the margin (the furthest of them). */
#define LIVE_REACH_KEEP 16
/* Rebuilds forced by a folded launch's partner arriving late, after which
 * folding stops for the session (the same correlation ids in two
 * processes would force one at every refresh). */
#define LIVE_MAX_VIOLATIONS 8

struct pt_agg_live {
	struct pt_agg *p; /* fed every event that starts before fed_ns */
	uint64_t fed_ns;
	uint64_t *mark; /* per store track: its checkpoint at the last refresh */
	size_t nmark;
	uint64_t dropped;  /* the store's dropped events when P was built */
	uint32_t vname[3]; /* P's names of msprof's overlap lanes */
	uint64_t prev_hi;  /* newest end in the store at the last refresh */
	uint64_t reach[LIVE_REACH_KEEP];
	unsigned ri;
	uint64_t lag_ns; /* the longest launch-to-activity lag seen */
	int no_fold;
	int full; /* correlation ids of several processes: pt_summarize from now on */
	struct pt_agg_live_stats st;
	/* agg_live_summary_of: only these tracks (ascending), a rank's, whose
	 * unnumbered steps count from 0 (pt_ranks_compute's rule); NULL: all */
	const uint32_t *only;
	size_t nonly;
	/* agg_live_new_from: events starting before it are left out (the
	 * window of pt_ranks_compute's o->t0_ns); 0: none */
	uint64_t t0_ns;
	uint64_t p_steps; /* ProfileStep events P was fed */
};

struct pt_agg_live *pt_agg_live_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_agg_live));
}

struct pt_agg_live *agg_live_new_from(uint64_t t0_ns)
{
	struct pt_agg_live *l = pt_agg_live_new();
	l->t0_ns = t0_ns;
	l->fed_ns = t0_ns;
	return l;
}

void pt_agg_live_free(struct pt_agg_live *l)
{
	if (!l)
		return;
	if (l->p)
		agg_free(l->p);
	free(l->mark);
	free(l);
}

void pt_agg_live_stats(const struct pt_agg_live *l, struct pt_agg_live_stats *out)
{
	*out = l->st;
	out->frontier_ns = l->fed_ns;
	out->folded_ns = l->p ? l->p->fold.upto_ns : 0;
	out->mem_bytes = l->p ? agg_mem_bytes(l->p) : 0;
}

static uint32_t track_slots(const struct pt_trace *t)
{
	uint32_t n = pt_store_track_count(t->store);
	return t->ntracks > n ? t->ntracks : n;
}

static int is_dev(const struct pt_trace *t, uint32_t i)
{
	return i < t->ntracks && pt_track_is_device(&t->tracks[i]);
}

/* The k-th track l looks at (k < looked(l, t)). */
static uint32_t looked(const struct pt_agg_live *l, const struct pt_trace *t)
{
	return l->only ? (uint32_t)l->nonly : track_slots(t);
}

static uint32_t track_at(const struct pt_agg_live *l, uint32_t k)
{
	return l->only ? l->only[k] : k;
}

/* Feeds a every event with start in [t0, t1) (and not before l's start)
 * of the tracks l looks at: device tracks first (a launch then finds its
 * activities), as pt_summarize does. dev_complete: no device activity
 * comes after these (the end of the store). Adds the ProfileStep events
 * fed to *steps. */
static uint64_t feed_range(const struct pt_agg_live *l, struct pt_agg *a, struct pt_trace *t,
			   uint64_t t0, uint64_t t1, int dev_complete, uint64_t *steps)
{
	uint32_t ntr = looked(l, t);
	uint64_t n = 0, ns = 0;
	if (t0 < l->t0_ns)
		t0 = l->t0_ns;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < ntr; k++) {
			uint32_t i = track_at(l, k);
			if (is_dev(t, i) != !pass)
				continue;
			struct pt_store_iter it;
			pt_store_iter_init(&it, t->store, i, t0, t1);
			struct pt_event *ev;
			while ((ev = pt_store_iter_next(&it))) {
				pt_agg_feed(a, ev);
				ns += ev->kind == PT_KIND_PROFILE_STEP;
				n++;
			}
			pt_store_iter_done(&it);
		}
		if (dev_complete)
			a->dev_complete = 1;
	}
	*steps += ns;
	return n;
}

/* An empty aggregator for l: its window starts at l's start. */
static struct pt_agg *agg_for(const struct pt_agg_live *l, const struct pt_trace *t)
{
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.t0_ns = l->t0_ns;
	return pt_agg_new(t, &o);
}

/* What P saw of a track no longer matches the trace (agg.c, track_get). */
static int tracks_changed(const struct pt_agg *a, const struct pt_trace *t)
{
	for (size_t i = 0; i < a->ntracks; i++) {
		const struct track_state *ts = &a->tracks[i];
		int dev = is_dev(t, ts->id);
		if (dev != !!ts->is_device || (dev && ts->device != t->tracks[ts->id].device))
			return 1;
		if (ts->id < t->ntracks && t->tracks[ts->id].process_label && !ts->derived &&
		    strncmp(pt_trace_str(t, t->tracks[ts->id].process_label), "Overlap Analysis",
			    16) == 0)
			return 1;
	}
	return 0;
}

static void lane_names(const struct pt_trace *t, uint32_t out[3])
{
	static const char *const vn[3] = {"Computing", "Communication",
					  "Communication(Not Overlapped)"};
	for (int i = 0; i < 3; i++)
		out[i] = pt_strtab_find(t->strings, vn[i], strlen(vn[i]));
}

/* The ordinal of the first step of a rank's window (l->only, from
 * l->t0_ns), as pt_ranks_compute numbers it: the steps the store keeps of
 * those tracks that start before the window. Those are the tracks' kept
 * steps less the `in_window` ones fed from the window's start. */
static int64_t window_ordinal(const struct pt_agg_live *l, const struct pt_trace *t,
			      uint64_t in_window)
{
	if (!l->t0_ns)
		return 0; /* (not asked: a window's only) */
	uint64_t kept = 0;
	for (uint32_t k = 0, n = looked(l, t); k < n; k++) {
		uint32_t i = track_at(l, k);
		if (i < t->ntracks)
			kept += t->tracks[i].steps - pt_store_track_dropped_steps(t->store, i);
	}
	uint64_t before = kept > in_window ? kept - in_window : 0;
	/* the whole trace's window (the screen's "last 30 s"): the job's own
	 * ordinals, the steps the cap dropped counted, as pt_summarize with
	 * step_ordinal0 numbers them */
	return (int64_t)before + (l->only ? 0 : (int64_t)pt_store_dropped_steps(t->store));
}

/* Once correlation ids repeat across launches (several processes' ids in
 * one trace), which activity joins which launch depends on the order the
 * aggregator is fed, and only pt_summarize's own order gives its figures:
 * every refresh is a pt_summarize then. */
static struct pt_summary *full_summary(struct pt_agg_live *l, struct pt_trace *t, uint64_t c0)
{
	struct pt_summary *s;
	if (l->only || l->t0_ns) { /* a rank's tracks alone, as pt_ranks_compute feeds them;
				      or a window, as pt_summarize does from its start */
		struct pt_agg *a = agg_for(l, t);
		uint64_t steps = 0;
		feed_range(l, a, t, 0, UINT64_MAX, 1, &steps);
		a->ordinal_base = window_ordinal(l, t, steps);
		s = pt_agg_finish(a);
	} else {
		s = pt_summarize(t, NULL);
	}
	l->st.refreshes++;
	l->st.rebuilds++;
	l->st.full = 1;
	l->st.fed_events = s->events;
	l->st.tail_events = 0;
	l->st.cost_ns = pt_now_ns() - c0;
	return s;
}

static void note_lag(struct pt_agg_live *l, const struct pt_agg *a)
{
	if (a->fold.max_lag_ns > l->lag_ns)
		l->lag_ns = a->fold.max_lag_ns;
}

/* Unnumbered steps count from the job's first, the ones the store's cap
 * dropped included; a rank's from 0, as pt_ranks_compute counts them. */
static int64_t ordinal_base(const struct pt_agg_live *l, const struct pt_trace *t)
{
	return l->only ? 0 : (int64_t)pt_store_dropped_steps(t->store);
}

/* A partner of something folded came (a violation): P starts over from
 * the store, fed to the same frontier; it now sees that partner join its
 * launch, so the next fold keeps the longer lag behind the frontier. After
 * LIVE_MAX_VIOLATIONS of them P is never folded again. Returns the events
 * fed. */
static uint64_t start_over(struct pt_agg_live *l, struct pt_trace *t)
{
	l->st.violations++;
	if (l->st.violations >= LIVE_MAX_VIOLATIONS)
		l->no_fold = 1;
	note_lag(l, l->p);
	agg_free(l->p);
	l->p = agg_for(l, t);
	l->p->ordinal_base = ordinal_base(l, t);
	l->st.rebuilds++;
	l->p_steps = 0;
	return feed_range(l, l->p, t, 0, l->fed_ns, 0, &l->p_steps);
}

/* Steps 1 and 2 of a refresh, and the fold: P up to date with the
 * trace. Returns the events fed to P. */
static uint64_t live_advance(struct pt_agg_live *l, struct pt_trace *t)
{
	struct pt_store *st = t->store;
	uint32_t ntr = pt_store_track_count(st);
	if (ntr > l->nmark) {
		l->mark = pt_xrealloc(l->mark, ntr * sizeof *l->mark);
		memset(l->mark + l->nmark, 0, (ntr - l->nmark) * sizeof *l->mark);
		l->nmark = ntr;
	}
	/* 1. what arrived since the last refresh, and how far back it reaches */
	uint64_t earliest = UINT64_MAX, hi = l->only ? 0 : pt_store_last_ns(st);
	for (uint32_t k = 0, n = looked(l, t); k < n; k++) {
		uint32_t i = track_at(l, k);
		if (i >= ntr)
			continue;
		uint64_t last = l->only ? pt_store_track_last_ns(st, i) : 0;
		if (last > hi)
			hi = last;
		if (pt_store_track_appended(st, i) == l->mark[i])
			continue;
		uint64_t s = pt_store_track_start_since(st, i, l->mark[i]);
		if (s < earliest)
			earliest = s;
		l->mark[i] = pt_store_track_checkpoint(st, i);
	}
	if (earliest != UINT64_MAX) {
		uint64_t reach = l->prev_hi > earliest ? l->prev_hi - earliest : 0;
		l->reach[l->ri++ % LIVE_REACH_KEEP] = reach;
	}
	l->prev_hi = hi;
	uint32_t vn[3];
	lane_names(t, vn);
	/* (P fed nothing yet, from a start: what starts before it is no matter) */
	int rebuild = !l->p || (earliest < l->fed_ns && l->fed_ns > l->t0_ns) ||
		      pt_store_dropped(st) != l->dropped || memcmp(vn, l->vname, sizeof vn) != 0 ||
		      tracks_changed(l->p, t);
	if (rebuild) {
		if (l->p)
			agg_free(l->p);
		l->p = agg_for(l, t);
		l->p->ordinal_base = ordinal_base(l, t);
		l->p_steps = 0;
		l->fed_ns = l->t0_ns;
		l->dropped = pt_store_dropped(st);
		memcpy(l->vname, vn, sizeof vn);
		l->st.rebuilds++;
	}
	/* 2. the new frontier: the newest end less twice the furthest reach */
	uint64_t margin = 0;
	for (int i = 0; i < LIVE_REACH_KEEP; i++)
		if (l->reach[i] > margin)
			margin = l->reach[i];
	margin = margin > UINT64_MAX / 4 ? UINT64_MAX / 2 : margin * 2;
	uint64_t f = hi > margin ? hi - margin : 0;
	uint64_t fed = 0;
	if (f > l->fed_ns) {
		fed = feed_range(l, l->p, t, l->fed_ns, f, 0, &l->p_steps);
		l->fed_ns = f;
	}
	if (l->p->fold.violations)
		fed = start_over(l, t);
	/* settle for good what lies well before the frontier: twice the
	 * longest launch-to-activity lag before it (agg_fold.c) */
	note_lag(l, l->p);
	uint64_t lag2 = l->lag_ns > UINT64_MAX / 4 ? UINT64_MAX / 2 : l->lag_ns * 2;
	uint64_t upto = l->fed_ns > lag2 ? l->fed_ns - lag2 : 0;
	if (!l->no_fold && upto > l->p->fold.upto_ns) {
		uint64_t f0 = pt_now_ns();
		agg_fold(l->p, upto);
		l->st.fold_ns = pt_now_ns() - f0;
	}
	return fed;
}

/* Correlation ids repeat: every refresh is a full one from now on. */
static void go_full(struct pt_agg_live *l)
{
	agg_free(l->p);
	l->p = NULL;
	l->full = 1;
}

static struct pt_summary *live_summary(struct pt_agg_live *l, struct pt_trace *t)
{
	uint64_t c0 = pt_now_ns();
	if (l->full)
		return full_summary(l, t, c0);
	uint64_t fed = live_advance(l, t);
	/* 3. a copy of P, the tail, the summary */
	struct pt_agg *c = agg_clone(l->p);
	uint64_t tail_steps = 0;
	uint64_t tail = feed_range(l, c, t, l->fed_ns, UINT64_MAX, 1, &tail_steps);
	note_lag(l, c);
	if (c->fold.violations) { /* the tail met something folded */
		agg_free(c);
		fed = start_over(l, t);
		c = agg_clone(l->p);
		tail_steps = 0;
		tail = feed_range(l, c, t, l->fed_ns, UINT64_MAX, 1, &tail_steps);
	}
	if (l->p->fold.corr_dups || c->fold.corr_dups) {
		agg_free(c);
		go_full(l);
		return full_summary(l, t, c0);
	}
	if (l->t0_ns)
		c->ordinal_base = window_ordinal(l, t, l->p_steps + tail_steps);
	struct pt_summary *s = pt_agg_finish(c);
	l->st.refreshes++;
	l->st.fed_events = fed;
	l->st.tail_events = tail;
	l->st.cost_ns = pt_now_ns() - c0;
	return s;
}

struct pt_summary *pt_agg_live_summary(struct pt_agg_live *l, struct pt_trace *t)
{
	pt_store_sort(t->store);
	l->only = NULL;
	l->nonly = 0;
	return live_summary(l, t);
}

struct pt_summary *agg_live_summary_of(struct pt_agg_live *l, struct pt_trace *t,
				       const uint32_t *tracks, size_t n)
{
	l->only = tracks;
	l->nonly = n;
	struct pt_summary *s = live_summary(l, t);
	l->only = NULL;
	return s;
}

struct pt_agg_live *pt_agg_live_new_from(uint64_t t0_ns)
{
	return agg_live_new_from(t0_ns);
}

void pt_agg_live_advance(struct pt_agg_live *l, struct pt_trace *t)
{
	pt_store_sort(t->store);
	agg_live_advance_of(l, t, NULL, 0);
}

void agg_live_advance_of(struct pt_agg_live *l, struct pt_trace *t, const uint32_t *tracks,
			 size_t n)
{
	if (l->full)
		return;
	l->only = tracks;
	l->nonly = n;
	l->st.fed_events = live_advance(l, t);
	l->st.tail_events = 0;
	if (l->p->fold.corr_dups)
		go_full(l);
	l->only = NULL;
}
