/*
 * agg_summarize.c - pt_summarize: one summary of a trace's store. It finds
 * the window a step range asks for (the kept step events, sorted), then
 * feeds the store through an aggregator, device tracks first (so a launch
 * finds its activities waiting), with the step-folding pipe (agg_pipe.c)
 * when the trace is big, and finishes it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

struct scan_ctx {
	uint64_t t0_ns, t1_ns;
	struct sorted_step *v;
	size_t n, cap;
};

static int scan_step(void *ctx, struct pt_event *ev)
{
	struct scan_ctx *c = ctx;
	if (ev->kind != PT_KIND_PROFILE_STEP || ev->start_ns < c->t0_ns || ev->start_ns >= c->t1_ns)
		return 0;
	c->v = agg_grow(c->v, &c->cap, c->n, sizeof *c->v);
	c->v[c->n++] = (struct sorted_step){ev->start_ns, pt_event_end(ev), ev->name_id, 0};
	return 0;
}

struct pt_summary *pt_summarize(struct pt_trace *t, const struct pt_agg_opts *o)
{
	struct pt_agg_opts opts;
	if (o)
		opts = *o;
	else
		pt_agg_opts_init(&opts);
	pt_store_sort(t->store);
	/* unnumbered steps count from the job's first, dropped ones included */
	int64_t dropped = (int64_t)pt_store_dropped_steps(t->store);
	int64_t ordinal_base = opts.step_ordinal0 >= 0 ? opts.step_ordinal0 : dropped;
	if (opts.step_first != INT64_MIN || opts.step_last != INT64_MAX) {
		/* A step range becomes a time window: [first selected step's
		 * start, last selected step's end), within t0/t1. (The fid
		 * field carries the name id here.) */
		struct scan_ctx c = {opts.t0_ns, opts.t1_ns, NULL, 0, 0};
		pt_store_foreach(t->store, scan_step, &c);
		if (c.n > 1)
			qsort(c.v, c.n, sizeof *c.v, agg_sstep_cmp);
		uint64_t w0 = 0, w1 = 0;
		int any = 0;
		for (size_t i = 0; i < c.n; i++) {
			int64_t num = agg_step_number(t, c.v[i].fid);
			if (num < 0)
				num = dropped + (int64_t)i;
			if (num < opts.step_first || num > opts.step_last)
				continue;
			if (!any)
				ordinal_base = dropped + (int64_t)i;
			w0 = any ? agg_u64_min(w0, c.v[i].start_ns) : c.v[i].start_ns;
			w1 = any ? agg_u64_max(w1, c.v[i].end_ns) : c.v[i].end_ns;
			any = 1;
		}
		free(c.v);
		if (!any)
			w0 = w1 = 0; /* nothing selected: an empty window */
		opts.t0_ns = agg_u64_max(opts.t0_ns, w0);
		opts.t1_ns = agg_u64_min(opts.t1_ns, w1);
		if (opts.t1_ns < opts.t0_ns)
			opts.t1_ns = opts.t0_ns;
	}
	struct pt_agg *a = pt_agg_new(t, &opts);
	a->ordinal_base = ordinal_base;
	uint32_t ntr = pt_store_track_count(t->store);
	if (t->ntracks > ntr)
		ntr = t->ntracks;
	if (opts.lists_thread >= 2 ||
	    (opts.lists_thread == 0 && pt_store_count(t->store) >= PT_SUMMARIZE_PIPE_EVENTS))
		a->pipe = agg_pipe_start(a, t->store, ntr);
	/* Device tracks first: every launch then finds its activities when
	 * it is fed, and adds their time straight into the calls open on its
	 * thread (no per-call records, no launch table). */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < ntr; i++) {
			int dev = i < t->ntracks && pt_track_is_device(&t->tracks[i]);
			if (dev != !pass)
				continue;
			struct pt_store_iter it;
			pt_store_iter_init(&it, t->store, i, opts.t0_ns, opts.t1_ns);
			struct pt_event *ev;
			while ((ev = pt_store_iter_next(&it)))
				pt_agg_feed(a, ev);
			pt_store_iter_done(&it);
		}
		a->dev_complete = 1;
	}
	/* said with the reader's warnings (set, not added: summaries repeat) */
	if (a->too_deep > t->warnings[PT_WARN_NEST_DEEP])
		t->warnings[PT_WARN_NEST_DEEP] = a->too_deep;
	return pt_agg_finish(a);
}
