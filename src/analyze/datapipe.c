/*
 * datapipe.c - the data pipeline's figures (datapipe.h): the loader's queue
 * from its counter, the stages from "data: " ranges, one lane per thread or
 * worker process that ran them. One pass over each host track of the
 * window, in start order, with a small stack of the stages open on the lane.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/datapipe.h"
#include "proftop/store.h"
#include "proftop/strtab.h"
#include "model/util.h"

#define DP_DEPTH 32

struct qsample {
	uint64_t ns;
	double v;
};

struct frame {
	uint64_t end;
	uint32_t stage;
};

struct walk {
	struct pt_datapipe *dp;
	struct qsample *q;
	size_t nq, qcap;
	uint32_t queue_id, cap_id;
};

static size_t prefix_len(void)
{
	return sizeof PT_DP_PREFIX - 1;
}

static int is_stage(const struct pt_trace *t, uint32_t name)
{
	const char *s = pt_trace_str(t, name);
	return s && strncmp(s, PT_DP_PREFIX, prefix_len()) == 0 && s[prefix_len()];
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The stage's index, added on first sight; -1 past PT_DP_MAX_STAGES. */
static int stage_of(struct walk *w, const struct pt_trace *t, uint32_t name)
{
	struct pt_datapipe *dp = w->dp;
	for (size_t i = 0; i < dp->nstages; i++)
		if (dp->stages[i].name_id == name)
			return (int)i;
	if (dp->nstages >= PT_DP_MAX_STAGES)
		return -1;
	struct pt_dp_stage *st = &dp->stages[dp->nstages];
	memset(st, 0, sizeof *st);
	st->name_id = name;
	st->pin = strcmp(pt_trace_str(t, name) + prefix_len(), "pin_memory") == 0;
	return (int)dp->nstages++;
}

static void add_q(struct walk *w, uint64_t ns, double v)
{
	if (w->nq == w->qcap) {
		w->qcap = w->qcap ? 2 * w->qcap : 256;
		w->q = pt_xrealloc(w->q, w->qcap * sizeof *w->q);
	}
	w->q[w->nq].ns = ns;
	w->q[w->nq].v = v;
	w->nq++;
}

static int is_training(const struct pt_summary *s, uint32_t track)
{
	if (!s)
		return 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].track == track)
			return 1;
	return 0;
}

static void walk_track(struct walk *w, const struct pt_trace *t, const struct pt_summary *s,
		       uint32_t track, uint64_t t0, uint64_t t1)
{
	struct pt_datapipe *dp = w->dp;
	struct frame stack[DP_DEPTH];
	int depth = 0;
	uint64_t first = UINT64_MAX, last = 0, busy = 0, calls = 0, busy_end = 0;
	int any = 0, pin_only = 1;
	struct pt_store_iter it;
	pt_store_iter_init(&it, t->store, track, t0, t1);
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it))) {
		if (ev->kind == PT_KIND_COUNTER) {
			if (ev->name_id && (ev->name_id == w->queue_id || ev->name_id == w->cap_id)) {
				double x;
				memcpy(&x, &ev->arg, sizeof x);
				if (!isfinite(x) || x < 0)
					continue;
				if (ev->name_id == w->queue_id)
					add_q(w, ev->start_ns, x);
				else if (x > dp->queue_capacity)
					dp->queue_capacity = x;
			}
			continue;
		}
		if (ev->kind != PT_KIND_USER_DEFINED || !is_stage(t, ev->name_id))
			continue;
		int si = stage_of(w, t, ev->name_id);
		if (si < 0) {
			dp->stages_dropped++;
			continue;
		}
		uint64_t start = ev->start_ns, end = ev->start_ns + ev->dur_ns;
		if (end > t1 && t1 != UINT64_MAX)
			end = t1; /* cut to the window */
		if (end < start)
			end = start;
		while (depth > 0 && stack[depth - 1].end <= start)
			depth--;
		struct pt_dp_stage *st = &dp->stages[si];
		uint64_t dur = end - start;
		st->calls++;
		if (ev->dur_ns > st->max_ns)
			st->max_ns = ev->dur_ns;
		int same = 0;
		for (int k = 0; k < depth; k++)
			same |= stack[k].stage == (uint32_t)si;
		if (depth > 0) { /* the child's time leaves its parent's self time */
			struct frame *p = &stack[depth - 1];
			uint64_t in = (end < p->end ? end : p->end) - start;
			struct pt_dp_stage *ps = &dp->stages[p->stage];
			ps->self_ns -= in < ps->self_ns ? in : ps->self_ns;
		}
		st->self_ns += dur;
		if (!same)
			st->total_ns += dur;
		if (depth == 0) {
			/* outermost: the lane is busy (merged, should events overlap) */
			uint64_t from = start > busy_end ? start : busy_end;
			if (end > from)
				busy += end - from;
			if (end > busy_end)
				busy_end = end;
			calls++;
		}
		if (!dp->stages[si].pin)
			pin_only = 0;
		if (depth < DP_DEPTH) {
			stack[depth].end = end;
			stack[depth].stage = (uint32_t)si;
			depth++;
		}
		any = 1;
		if (start < first)
			first = start;
		if (end > last)
			last = end;
	}
	pt_store_iter_done(&it);
	if (!any)
		return;
	struct pt_dp_lane *l = &dp->lanes[dp->nlanes++];
	memset(l, 0, sizeof *l);
	l->track = track;
	l->training = is_training(s, track);
	l->pin_only = pin_only;
	l->busy_ns = busy;
	l->wall_ns = last > first ? last - first : 0;
	if (l->busy_ns > l->wall_ns)
		l->busy_ns = l->wall_ns;
	l->calls = calls;
	l->busy_pct = l->wall_ns ? 100.0 * (double)l->busy_ns / (double)l->wall_ns : 0.0;
	dp->busy_ns += l->busy_ns;
	if (l->training)
		dp->on_training = 1;
}

/* Workers restarted every epoch are new processes with the same label
 * ("data worker 0"): one lane each, their figures added up. */
static void merge_lanes(const struct pt_trace *t, struct pt_datapipe *dp)
{
	size_t out = 0;
	for (size_t i = 0; i < dp->nlanes; i++) {
		struct pt_dp_lane *l = &dp->lanes[i];
		const struct pt_track *tr = &t->tracks[l->track];
		size_t j = 0;
		for (; j < out && tr->label; j++) {
			struct pt_dp_lane *m = &dp->lanes[j];
			const struct pt_track *mt = &t->tracks[m->track];
			if (mt->label == tr->label && mt->key.pid == tr->key.pid &&
			    m->training == l->training && m->pin_only == l->pin_only)
				break;
		}
		if (j < out && tr->label) {
			struct pt_dp_lane *m = &dp->lanes[j];
			m->busy_ns += l->busy_ns;
			m->wall_ns += l->wall_ns;
			m->calls += l->calls;
			m->processes++;
			m->busy_pct = m->wall_ns ? 100.0 * (double)m->busy_ns / (double)m->wall_ns : 0.0;
			continue;
		}
		dp->lanes[out] = *l;
		dp->lanes[out].processes = 1;
		out++;
	}
	dp->nlanes = out;
}

static int cmp_q(const void *a, const void *b)
{
	const struct qsample *x = a, *y = b;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int cmp_stage(const void *a, const void *b)
{
	const struct pt_dp_stage *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->name_id < y->name_id ? -1 : x->name_id > y->name_id;
}

static void queue_figures(struct walk *w, const struct pt_summary *s)
{
	struct pt_datapipe *dp = w->dp;
	if (!w->nq)
		return;
	qsort(w->q, w->nq, sizeof *w->q, cmp_q);
	double sum = 0;
	for (size_t i = 0; i < w->nq; i++) {
		sum += w->q[i].v;
		dp->queue_empty += w->q[i].v < 0.5;
	}
	dp->queue_samples = w->nq;
	dp->queue_mean = sum / (double)w->nq;
	dp->queue_empty_pct = 100.0 * (double)dp->queue_empty / (double)w->nq;
	if (!s || !s->nsteps)
		return;
	dp->nsteps = s->nsteps;
	dp->step_ready = pt_xcalloc(s->nsteps, sizeof *dp->step_ready);
	for (size_t i = 0; i < s->nsteps; i++) {
		uint64_t a = s->steps[i].start_ns, b = a + s->steps[i].dur_ns;
		size_t lo = 0, hi = w->nq; /* first sample at or after a */
		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;
			if (w->q[m].ns < a)
				lo = m + 1;
			else
				hi = m;
		}
		dp->step_ready[i] = lo < w->nq && w->q[lo].ns < b ? (int32_t)lrint(w->q[lo].v) : -1;
	}
}

void pt_datapipe_compute(const struct pt_trace *t, const struct pt_summary *s,
			 struct pt_datapipe *dp)
{
	memset(dp, 0, sizeof *dp);
	dp->slowest = -1;
	if (!t || !t->store)
		return;
	struct walk w;
	memset(&w, 0, sizeof w);
	w.dp = dp;
	w.queue_id = pt_strtab_find(t->strings, PT_DP_QUEUE, strlen(PT_DP_QUEUE));
	w.cap_id = pt_strtab_find(t->strings, PT_DP_QUEUE_CAP, strlen(PT_DP_QUEUE_CAP));
	dp->stages = pt_xcalloc(PT_DP_MAX_STAGES, sizeof *dp->stages);
	dp->lanes = pt_xcalloc(t->ntracks ? t->ntracks : 1, sizeof *dp->lanes);
	uint64_t t0 = s ? s->t0_ns : 0;
	uint64_t t1 = s && s->t1_ns != UINT64_MAX ? s->t1_ns + 1 : UINT64_MAX;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		if (pt_track_is_device(&t->tracks[i]))
			continue;
		walk_track(&w, t, s, i, t0, t1);
	}
	queue_figures(&w, s);
	free(w.q);
	merge_lanes(t, dp);

	/* samples: the dataset's __getitem__ calls, else the steps' samples */
	for (size_t i = 0; i < dp->nstages; i++)
		if (ends_with(pt_trace_str(t, dp->stages[i].name_id), ".__getitem__") &&
		    dp->stages[i].calls > dp->samples) {
			dp->samples = dp->stages[i].calls;
			dp->samples_from = 1;
		}
	if (!dp->samples && s) {
		uint64_t n = 0;
		for (size_t i = 0; i < s->nsteps; i++)
			n += s->steps[i].samples;
		if (n) {
			dp->samples = n;
			dp->samples_from = 2;
		}
	}
	uint64_t wbusy = 0, wwall = 0;
	for (size_t i = 0; i < dp->nlanes; i++) {
		const struct pt_dp_lane *l = &dp->lanes[i];
		if (l->training || l->pin_only)
			continue;
		dp->workers++;
		wbusy += l->busy_ns;
		wwall += l->wall_ns;
	}
	dp->workers_busy_pct = wwall ? 100.0 * (double)wbusy / (double)wwall : 0.0;
	for (size_t i = 0; i < dp->nstages; i++) {
		struct pt_dp_stage *st = &dp->stages[i];
		if (st->self_ns > st->total_ns)
			st->self_ns = st->total_ns;
		uint64_t n = dp->samples ? dp->samples : st->calls;
		st->per_sample_ms = n ? (double)st->total_ns / 1e6 / (double)n : 0.0;
		st->busy_pct = dp->busy_ns ? 100.0 * (double)st->total_ns / (double)dp->busy_ns : 0.0;
		if (st->busy_pct > 100.0)
			st->busy_pct = 100.0;
	}
	qsort(dp->stages, dp->nstages, sizeof *dp->stages, cmp_stage);
	uint64_t best = 0;
	for (size_t i = 0; i < dp->nstages; i++)
		if (!dp->stages[i].pin && dp->stages[i].self_ns > best) {
			best = dp->stages[i].self_ns;
			dp->slowest = (ptrdiff_t)i;
		}
}

void pt_datapipe_free(struct pt_datapipe *dp)
{
	if (!dp)
		return;
	free(dp->step_ready);
	free(dp->stages);
	free(dp->lanes);
	memset(dp, 0, sizeof *dp);
	dp->slowest = -1;
}
