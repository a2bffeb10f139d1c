/*
 * agg_fold.c - settles for good what a live aggregator holds about the past
 * (agg_internal.h, agg_fold), so that what it keeps, and what copying and
 * finishing it cost, is the size of what is still in flight rather than of
 * the session.
 *
 * The caller (agg_live.c) promises that every event fed from now on starts
 * at or after `upto`. Then, for everything that starts before it:
 *   - a registered launch has all the activities it will get, if they come
 *     within the longest launch-to-activity lag seen (the caller leaves
 *     twice that between upto and the frontier): its late device time goes
 *     to its call instance, its time to the step log, and it goes;
 *   - a call instance whose frame was popped and ended by upto has all its
 *     device time: it is added to its rows' per-call GPU stats (as
 *     settle_instances does at finish) and goes;
 *   - an activity still waiting for its launch is an orphan (the launch
 *     would have come before it);
 *   - steps that ended by upto, and the records that fall in them, become
 *     final step figures (agg_fold_steps); interval lists become lengths
 *     (agg_fold_unions).
 * The correlation ids of folded launches and activities are kept as
 * ranges: a partner that arrives after all (a graph launch's last kernel
 * long after the frontier, the same id in two processes) counts as a
 * violation, and the caller starts over from the store.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

int agg_corr_folded(const struct pt_agg *a, uint32_t corr)
{
	size_t lo = 0, hi = a->fold.ncorrs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct corr_range *r = &a->fold.corrs[mid];
		if (corr < r->lo)
			hi = mid;
		else if (corr > r->hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

static int u32_cmp(const void *pa, const void *pb)
{
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	return x < y ? -1 : x > y;
}

/* Merges n corr ids (any order) into the folded ranges. */
static void corrs_add(struct agg_folded *f, uint32_t *ids, size_t n)
{
	if (!n)
		return;
	qsort(ids, n, sizeof *ids, u32_cmp);
	size_t cap = f->ncorrs + n;
	struct corr_range *out = pt_xmalloc(cap * sizeof *out);
	size_t no = 0, i = 0, j = 0;
	while (i < f->ncorrs || j < n) {
		struct corr_range r;
		if (j >= n || (i < f->ncorrs && f->corrs[i].lo <= ids[j]))
			r = f->corrs[i++];
		else
			r = (struct corr_range){ids[j], ids[j]}, j++;
		if (no && (uint64_t)out[no - 1].hi + 1 >= r.lo) {
			if (r.hi > out[no - 1].hi)
				out[no - 1].hi = r.hi;
		} else {
			out[no++] = r;
		}
	}
	free(f->corrs);
	f->corrs = out;
	f->ncorrs = no;
	f->corrs_cap = cap;
}

/* Launches that start before upto: done. Returns their corr ids (the
 * caller frees), count in *n. */
static uint32_t *fold_launches(struct pt_agg *a, uint64_t upto, size_t *n)
{
	uint32_t *ids = pt_xmalloc((a->nlaunches ? a->nlaunches : 1) * sizeof *ids);
	size_t nid = 0, keep = 0;
	for (size_t i = 0; i < a->nlaunches; i++) {
		struct launch *l = &a->launches[i];
		if (l->start_ns >= upto) {
			a->launches[keep++] = *l;
			continue;
		}
		if (l->inst != AGG_NONE)
			a->inst[l->inst].gpu_ns += l->late_ns;
		if (l->gpu_ns)
			agg_done_add(a, l->start_ns, l->gpu_ns, l->track, l->phase);
		ids[nid++] = l->corr;
	}
	if (keep != a->nlaunches) {
		/* the map again, holding only what stays (the newest of an id wins) */
		pt_u32map_free(&a->launch_by_corr);
		for (size_t i = 0; i < keep; i++)
			pt_u32map_put(&a->launch_by_corr, a->launches[i].corr, (uint32_t)i + 1);
		a->nlaunches = keep;
	}
	*n = nid;
	return ids;
}

/* Instances whose frame was popped and ended by upto, with every instance
 * below them: their sums are final (struct inst). */
static void fold_insts(struct pt_agg *a, uint64_t upto)
{
	size_t n = a->ninst;
	if (!n)
		return;
	uint8_t *stay = pt_xmalloc(n);
	for (size_t i = 0; i < n; i++)
		stay[i] = !a->inst[i].closed || a->inst[i].end_ns > upto;
	/* a parent stays with any child that stays (children come later) */
	for (size_t i = n; i-- > 0;)
		if (stay[i] && a->inst[i].parent != AGG_NONE)
			stay[a->inst[i].parent] = 1;
	for (size_t i = n; i-- > 0;) {
		if (stay[i])
			continue;
		const struct inst *in = &a->inst[i];
		if (in->parent != AGG_NONE)
			a->inst[in->parent].gpu_ns += in->gpu_ns;
		agg_inst_settle(a, in);
	}
	/* renumber what stays; parents come first, so they are renumbered already */
	uint32_t *nw = pt_xmalloc(n * sizeof *nw);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!stay[i]) {
			nw[i] = AGG_NONE;
			continue;
		}
		struct inst in = a->inst[i];
		if (in.parent != AGG_NONE)
			in.parent = nw[in.parent];
		nw[i] = (uint32_t)k;
		a->inst[k++] = in;
	}
	a->ninst = k;
	for (size_t i = 0; i < a->nlaunches; i++)
		if (a->launches[i].inst != AGG_NONE)
			a->launches[i].inst = nw[a->launches[i].inst];
	for (size_t t = 0; t < a->ntracks; t++) {
		struct track_state *ts = &a->tracks[t];
		for (size_t d = 0; d < ts->depth; d++) {
			struct frame *f = &ts->stack[d];
			if (f->own_inst != AGG_NONE)
				f->own_inst = nw[f->own_inst];
			if (f->inst_ok && f->inst != AGG_NONE)
				f->inst = nw[f->inst];
		}
	}
	free(nw);
	free(stay);
}

/* Activities: the taken ones go; the ones before upto still waiting are
 * orphans. Appends their corr ids to ids (room for nacts more). */
static size_t fold_acts(struct pt_agg *a, uint64_t upto, uint32_t *ids, size_t nid)
{
	size_t keep = 0;
	for (size_t i = 0; i < a->nacts; i++) {
		struct devact d = a->acts[i];
		if (d.start_ns == UINT64_MAX)
			continue; /* taken by its launch */
		if (d.start_ns < upto) {
			a->orphans =
			    agg_grow(a->orphans, &a->orphans_cap, a->norphans, sizeof *a->orphans);
			a->orphans[a->norphans++] = (struct orphan){d.start_ns, d.dur_ns, ORPHAN_SUM};
			ids[nid++] = d.corr;
			continue;
		}
		a->act_kind[keep] = a->act_kind[i];
		a->acts[keep++] = d;
	}
	if (keep != a->nacts) {
		/* chains again: each id's newest first, as device_event links them */
		pt_u32map_free(&a->act_by_corr);
		for (size_t i = 0; i < keep; i++) {
			a->acts[i].next = pt_u32map_get(&a->act_by_corr, a->acts[i].corr);
			pt_u32map_put(&a->act_by_corr, a->acts[i].corr, (uint32_t)i + 1);
		}
		a->nacts = keep;
	}
	return nid;
}

/* Gives back an array's room once folding left it mostly empty (a burst
 * grew it), so what the aggregator holds, and what copying it costs,
 * follows what is in flight. */
static void *shrink(void *p, size_t *cap, size_t n, size_t elem)
{
	if (*cap <= 64 || *cap / 4 <= n)
		return p;
	size_t nc = n * 2 > 64 ? n * 2 : 64;
	*cap = nc;
	return pt_xrealloc(p, nc * elem);
}

void agg_fold(struct pt_agg *a, uint64_t upto)
{
	if (upto <= a->fold.upto_ns)
		return;
	if (a->fold.steps_borrowed) { /* a copy folds: its own steps from now on */
		struct pt_step *own = pt_xmalloc((a->fold.steps_cap ? a->fold.steps_cap : 1) *
						 sizeof *own);
		if (a->fold.nsteps)
			memcpy(own, a->fold.steps, a->fold.nsteps * sizeof *own);
		a->fold.steps = own;
		a->fold.steps_borrowed = 0;
	}
	size_t nid = 0;
	uint32_t *ids = fold_launches(a, upto, &nid);
	ids = pt_xrealloc(ids, (nid + a->nacts + 1) * sizeof *ids);
	fold_insts(a, upto);
	nid = fold_acts(a, upto, ids, nid);
	corrs_add(&a->fold, ids, nid);
	free(ids);
	agg_fold_steps(a, upto);
	agg_fold_unions(a, upto);
	a->fold.upto_ns = upto;
	size_t kc = a->act_kind_cap;
	a->launches = shrink(a->launches, &a->launches_cap, a->nlaunches, sizeof *a->launches);
	a->inst = shrink(a->inst, &a->inst_cap, a->ninst, sizeof *a->inst);
	a->acts = shrink(a->acts, &a->acts_cap, a->nacts, sizeof *a->acts);
	a->act_kind = shrink(a->act_kind, &kc, a->nacts, 1);
	a->act_kind_cap = kc;
	a->orphans = shrink(a->orphans, &a->orphans_cap, a->norphans, sizeof *a->orphans);
	a->phases = shrink(a->phases, &a->phases_cap, a->nphases, sizeof *a->phases);
	a->steps = shrink(a->steps, &a->steps_cap, a->nsteps, sizeof *a->steps);
}
