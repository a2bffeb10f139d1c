/*
 * ranks_live.c - per-rank figures of a growing trace (live sessions of
 * several ranks; ranks.h, pt_ranks_live_*): per rank, a live summary of
 * that rank's tracks (agg_live.c), so a refresh costs what arrived; the
 * grouping and the attribution of ranks.c are redone at every call from
 * the track table alone, which costs the tracks, not the events.
 */
#include "proftop/ranks.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "analyze/ranks_int.h"
#include "model/util.h"
#include "proftop/error.h"

/*
 * A rank as the last refresh saw it, with its live summaries (agg_live.c):
 * l[0] of the window from start[0], the figures; with a window, l[1] of
 * the next window, from start[1], kept up to date as events arrive, so
 * that when the window moves on (l[1] becomes l[0]) its figures cost only
 * what is new. NULL: not made yet.
 */
struct rank_live {
	int64_t pid; /* its naming process */
	uint32_t pid_str;
	uint32_t *tracks; /* ascending */
	size_t ntracks, tracks_cap;
	struct pt_agg_live *l[2];
	struct pt_summary *sum; /* this refresh's */
	int seen;
};

struct pt_ranks_live {
	struct rank_live *v;
	size_t n, cap;
	struct pt_trace *t; /* this refresh's, for the jobs */
	uint64_t window_ns; /* 0: every event */
	uint64_t start[2];  /* the windows' starts (l[0], l[1]) */
	uint64_t resets;    /* live summaries started over (a rank lost a track) or gone */
	uint64_t cost_ns;   /* the last call's */
};

struct pt_ranks_live *pt_ranks_live_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_ranks_live));
}

static void rank_live_reset(struct rank_live *e)
{
	for (int k = 0; k < 2; k++) {
		pt_agg_live_free(e->l[k]);
		e->l[k] = NULL;
	}
}

void pt_ranks_live_free(struct pt_ranks_live *rl)
{
	if (!rl)
		return;
	for (size_t i = 0; i < rl->n; i++) {
		rank_live_reset(&rl->v[i]);
		free(rl->v[i].tracks);
	}
	free(rl->v);
	free(rl);
}

void pt_ranks_live_set_window(struct pt_ranks_live *rl, uint64_t window_ns)
{
	if (window_ns == rl->window_ns)
		return;
	rl->window_ns = window_ns;
	rl->start[0] = rl->start[1] = 0;
	for (size_t i = 0; i < rl->n; i++)
		rank_live_reset(&rl->v[i]);
}

uint64_t pt_ranks_live_start(const struct pt_ranks_live *rl)
{
	return rl->start[0];
}

/* The window's start for the newest end hi: the first multiple of half
 * the window at or after hi - window (0 while hi is within the window). */
static uint64_t window_start(uint64_t window, uint64_t hi)
{
	uint64_t half = window / 2 ? window / 2 : 1;
	uint64_t from = hi > window ? hi - window : 0;
	uint64_t k = from / half + (from % half != 0);
	return k > UINT64_MAX / half ? from : k * half;
}

/* Moves the windows to the newest end hi: the next window becomes the
 * window when hi reaches it, and the ranks' live summaries go with it. */
static void move_window(struct pt_ranks_live *rl, uint64_t hi)
{
	if (!rl->window_ns)
		return;
	uint64_t s0 = window_start(rl->window_ns, hi);
	uint64_t half = rl->window_ns / 2 ? rl->window_ns / 2 : 1;
	uint64_t s1 = s0 <= UINT64_MAX - half ? s0 + half : UINT64_MAX;
	if (s0 == rl->start[0] && rl->start[1] == s1)
		return;
	int shift = s0 == rl->start[1];
	for (size_t i = 0; i < rl->n; i++) {
		struct rank_live *e = &rl->v[i];
		pt_agg_live_free(e->l[0]);
		e->l[0] = shift ? e->l[1] : NULL;
		if (!shift)
			pt_agg_live_free(e->l[1]);
		e->l[1] = NULL;
	}
	rl->start[0] = s0;
	rl->start[1] = s1;
}

/* The rank's live summaries that are not made yet. */
static void rank_live_make(const struct pt_ranks_live *rl, struct rank_live *e)
{
	if (!e->l[0])
		e->l[0] = agg_live_new_from(rl->start[0]); /* from 0: every event */
	if (rl->window_ns && !e->l[1])
		e->l[1] = agg_live_new_from(rl->start[1]);
}

static struct rank_live *rank_live_of(struct pt_ranks_live *rl, const struct group *gr)
{
	for (size_t i = 0; i < rl->n; i++)
		if (rl->v[i].pid == gr->pid && rl->v[i].pid_str == gr->pid_str)
			return &rl->v[i];
	if (rl->n == rl->cap) {
		rl->cap = rl->cap ? rl->cap * 2 : 8;
		rl->v = pt_xrealloc(rl->v, rl->cap * sizeof *rl->v);
	}
	struct rank_live *e = &rl->v[rl->n++];
	memset(e, 0, sizeof *e);
	e->pid = gr->pid;
	e->pid_str = gr->pid_str;
	return e;
}

/* 1 when every track of old[] is in new[] (both ascending). */
static int tracks_kept(const uint32_t *old, size_t nold, const uint32_t *nw, size_t nnew)
{
	size_t j = 0;
	for (size_t i = 0; i < nold; i++) {
		while (j < nnew && nw[j] < old[i])
			j++;
		if (j == nnew || nw[j] != old[i])
			return 0;
	}
	return 1;
}

/* The rank's tracks now; a track it lost (the attribution changed) means
 * its live summary starts over. A track it gains the live summary takes
 * as new arrivals (it rebuilds by itself when they reach back). */
static void rank_live_tracks(struct pt_ranks_live *rl, struct rank_live *e, const uint32_t *tracks,
			     size_t n)
{
	if (!tracks_kept(e->tracks, e->ntracks, tracks, n)) {
		rl->resets++;
		rank_live_reset(e);
	}
	if (n > e->tracks_cap) {
		e->tracks_cap = n;
		e->tracks = pt_xrealloc(e->tracks, n * sizeof *e->tracks);
	}
	if (n)
		memcpy(e->tracks, tracks, n * sizeof *tracks);
	e->ntracks = n;
}

static void live_job(void *ctx, size_t i)
{
	struct pt_ranks_live *rl = ctx;
	struct rank_live *e = &rl->v[i];
	if (e->l[1])
		agg_live_advance_of(e->l[1], rl->t, e->tracks, e->ntracks);
	e->sum = agg_live_summary_of(e->l[0], rl->t, e->tracks, e->ntracks);
}

int pt_ranks_live_compute(struct pt_ranks_live *rl, struct pt_trace *t, struct pt_ranks *out)
{
	memset(out, 0, sizeof *out);
	if (!rl || !t)
		return PT_EINVAL;
	uint64_t c0 = pt_now_ns();
	pt_store_sort(t->store);
	uint32_t *track_group = pt_xcalloc(t->ntracks ? t->ntracks : 1, sizeof *track_group);
	struct group *g = NULL;
	size_t ng = ranks_groups(t, track_group, &g);
	uint32_t *rank_group = NULL;
	size_t nr = ranks_assign(t, g, ng, &rank_group);
	size_t room = ranks_room(t);
	int rc = nr * RANK_FIXED_BYTES > room ? PT_ENOMEM : 0;

	/* each rank's tracks, ascending; its live summary by its process */
	uint32_t ntr = pt_store_track_count(t->store);
	if (ntr > t->ntracks)
		ntr = t->ntracks;
	uint32_t *list = pt_xmalloc((size_t)(ntr ? ntr : 1) * sizeof *list);
	size_t *at = pt_xcalloc(nr + 1, sizeof *at); /* rank r's tracks: list[at[r], at[r + 1]) */
	for (uint32_t i = 0; i < ntr; i++)
		if (g[track_group[i]].rank_idx != NO_RANK)
			at[g[track_group[i]].rank_idx + 1]++;
	for (size_t r = 0; r < nr; r++)
		at[r + 1] += at[r];
	for (uint32_t i = 0; i < ntr; i++) /* ascending within each rank */
		if (g[track_group[i]].rank_idx != NO_RANK)
			list[at[g[track_group[i]].rank_idx]++] = i;
	struct rank_live **of = pt_xcalloc(nr ? nr : 1, sizeof *of);
	for (size_t i = 0; i < rl->n; i++)
		rl->v[i].seen = 0;
	for (size_t r = 0, from = 0; r < nr && !rc; r++) { /* at[r] is rank r's end now */
		of[r] = rank_live_of(rl, &g[rank_group[r]]);
		rank_live_tracks(rl, of[r], list + from, at[r] - from);
		of[r]->seen = 1;
		from = at[r];
	}
	free(at);
	free(list);
	/* a process that is no longer a rank: its state goes */
	size_t keep = 0;
	for (size_t i = 0; i < rl->n; i++) {
		if (rl->v[i].seen || rc) {
			rl->v[keep++] = rl->v[i];
			continue;
		}
		rank_live_reset(&rl->v[i]);
		free(rl->v[i].tracks);
		rl->resets++;
	}
	rl->n = keep;
	if (!rc) { /* entries moved: find them again */
		for (size_t r = 0; r < nr; r++)
			of[r] = rank_live_of(rl, &g[rank_group[r]]);
		rl->t = t;
		move_window(rl, t->last_ns);
		for (size_t i = 0; i < rl->n; i++) {
			rl->v[i].sum = NULL;
			rank_live_make(rl, &rl->v[i]);
		}
		struct jobs jb = {rl->n, 0, NULL, live_job, rl};
		ranks_run_jobs(&jb, 0);
		/* what the kept aggregators hold, counted as pt_ranks_compute does */
		struct pt_agg_live_stats st;
		pt_ranks_live_stats(rl, &st);
		out->mem_bytes = st.mem_bytes + rl->n * RANK_FIXED_BYTES;
		if (out->mem_bytes > room)
			rc = PT_ENOMEM;
	}
	if (rc) {
		for (size_t i = 0; i < rl->n; i++) {
			pt_summary_free(rl->v[i].sum);
			rl->v[i].sum = NULL;
		}
		memset(out, 0, sizeof *out);
	} else {
		struct pt_summary **sums = pt_xmalloc((nr ? nr : 1) * sizeof *sums);
		for (size_t r = 0; r < nr; r++) {
			sums[r] = of[r]->sum;
			of[r]->sum = NULL;
		}
		ranks_fill(t, out, g, rank_group, sums, nr);
		free(sums);
	}
	free(of);
	free(rank_group);
	free(g);
	free(track_group);
	rl->cost_ns = pt_now_ns() - c0;
	return rc;
}

void pt_ranks_live_stats(const struct pt_ranks_live *rl, struct pt_agg_live_stats *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < rl->n; i++)
		for (int k = 0; k < 2; k++) { /* the window's and the next one's */
			struct pt_agg_live_stats st;
			if (!rl->v[i].l[k])
				continue;
			pt_agg_live_stats(rl->v[i].l[k], &st);
			out->refreshes += st.refreshes;
			out->rebuilds += st.rebuilds;
			out->fed_events += st.fed_events;
			out->tail_events += st.tail_events;
			out->violations += st.violations;
			out->full |= st.full;
			out->mem_bytes += st.mem_bytes;
		}
	out->rebuilds += rl->resets;
	out->cost_ns = rl->cost_ns;
}
