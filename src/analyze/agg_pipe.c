/*
 * agg_pipe.c - a summary's interval lists built on a thread of their own
 * (pt_summarize on a large trace).
 *
 * Feeding a whole trace spends nearly half its time on the per-track
 * interval lists (ivl_add, about 2 M intervals for 2 M events) and on their
 * unions at finish (the Overview, Distributed, device busy time). Nothing
 * the feed decides depends on them, and they depend on little of what it
 * does: which events it takes (the window, the profiler's own spans), the
 * track's kind, and for an operator whether an operator encloses it on its
 * track (OperatorInner). So this thread reads the sorted store itself,
 * track by track, keeps each host track's stack of open calls as the feed
 * does (agg.c's unwind: the same overhang rule), and appends every interval
 * the feed would append to the list the feed would append it to, in the
 * same order. The feeding thread appends none.
 *
 * The Overview, Distributed and the devices' busy times read only the
 * lists, the calls of each kind and the span, and this thread counts the
 * last two as the feed does. So once its lists are done (20-25 ms before
 * the feed of a 2 M-event trace is) it settles them at once, on a shadow
 * aggregator that holds its lists (agg_settle_overview). When the feed is
 * over the lists move into the aggregator's tracks (matched by track id)
 * and, where the feed counted the same calls, events and span (it always
 * should), the early figures are the summary's; otherwise this thread
 * settles the overview again from the aggregator, as before. Meanwhile the
 * feeding thread settles the tables and the steps, which never read the
 * lists, then the devices once the lists are in.
 *
 * The thread also counts the steps' span as the feed takes them; with it,
 * pt_agg_opts.spare gets the time the thread would idle waiting for the
 * feed (the report's advisor scans the store there).
 *
 * Both threads only read the store, which pt_summarize sorted before.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "proftop/store.h"
#include "model/util.h"

/* A track's lists, as struct track_state keeps them (ts_list_make). */
struct tlists {
	uint8_t li[LS__COUNT];
	uint8_t nl, capl;
	struct ivl_list *lv;
};

/* An open call on a host track: what unwind and OperatorInner look at. */
struct open_call {
	uint64_t end_ns;
	uint8_t op_anc; /* an operator is open here or below */
};

struct agg_pipe {
	struct pt_agg *a;
	struct pt_store *st;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pt_summary *s; /* under mu: set when the overview may be settled */
	int lists_in;	      /* under mu: the lists are in the aggregator's tracks */
	/* the thread's own: lists per trace track id */
	struct tlists *tl;
	uint32_t ntl;
	struct open_call *stack;
	size_t cap;
	/* what the feed counts (pt_agg_feed, device_event, host_event),
	 * counted alike: the overview's inputs besides the lists */
	uint64_t events, t0_ns, t1_ns;
	uint64_t calls[PT_KIND__COUNT];
	uint64_t steps, step_t0, step_t1; /* the steps host_event takes, and their span */
	/* the overview, Distributed and busy times settled from them */
	struct pt_summary early;
	struct agg_busy *busy;
	size_t nbusy;
	int early_ok; /* under mu once lists_in: the feed counted the same */
};

static void add(struct tlists *t, int k, uint64_t s, uint64_t e)
{
	ivl_add(agg_lists_make(t->li, &t->nl, &t->capl, &t->lv, k), s, e);
}

/*
 * Track id's lists: for each event, what pt_agg_feed, device_event and
 * host_event (agg.c) append, kept in step with them.
 */
static void track_lists(struct agg_pipe *p, uint32_t id, int is_device, int derived)
{
	const struct pt_agg *a = p->a;
	struct tlists *t = &p->tl[id];
	size_t depth = 0;
	struct pt_store_iter it;
	pt_store_iter_init(&it, p->st, id, a->o.t0_ns, a->o.t1_ns);
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it))) {
		if (ev->start_ns < a->o.t0_ns || ev->start_ns >= a->o.t1_ns)
			continue;
		if (ev->flags & PT_EVF_INTERNAL)
			continue;
		uint8_t kind = ev->kind < PT_KIND__COUNT ? ev->kind : PT_KIND_OTHER;
		uint64_t end = pt_event_end(ev);
		if (p->events == 0 || ev->start_ns < p->t0_ns)
			p->t0_ns = ev->start_ns;
		if (end > p->t1_ns)
			p->t1_ns = end;
		p->events++;
		if (pt_kind_is_device(kind) && is_device) { /* device_event */
			p->calls[kind]++;
			add(t, kind, ev->start_ns, end);
			if (kind == PT_KIND_KERNEL || kind == PT_KIND_COMMUNICATION)
				add(t, LS_BUSY, ev->start_ns, end);
			continue;
		}
		if (pt_kind_is_device(kind))
			kind = PT_KIND_CUDA_RUNTIME;
		if (kind == PT_KIND_PROFILE_STEP) { /* a step_rec: start, start + dur */
			uint64_t se = ev->start_ns + ev->dur_ns;
			if (!p->steps || ev->start_ns < p->step_t0)
				p->step_t0 = ev->start_ns;
			if (!p->steps || se > p->step_t1)
				p->step_t1 = se;
			p->steps++;
		}
		/* host_event: a device track's calls never nest (each is
		 * popped at once), a host track's unwind as agg.c's */
		if (!is_device) {
			while (depth) {
				const struct open_call *top = &p->stack[depth - 1];
				if (ev->start_ns < top->end_ns) {
					if (end <= top->end_ns)
						break;
					uint64_t out = end - top->end_ns,
						 in = top->end_ns - ev->start_ns;
					if (out <= AGG_OVERHANG_NS && out < in)
						break;
				}
				depth--;
			}
		}
		if (depth >= AGG_MAX_DEPTH)
			continue; /* as agg.c's host_event: left out */
		int parent_op = depth && p->stack[depth - 1].op_anc;
		uint8_t eff = kind;
		if (kind == PT_KIND_OPERATOR && parent_op)
			eff = PT_KIND_OPERATOR_INNER;
		p->calls[eff]++;
		if (kind == PT_KIND_INSTANT || kind == PT_KIND_COUNTER)
			continue;
		add(t, eff, ev->start_ns, end);
		if (ev->flags & PT_EVF_COMM)
			add(t, LS_HOSTCOMM, ev->start_ns, end);
		if (derived && ev->name_id)
			for (int i = 0; i < 3; i++)
				if (ev->name_id == a->vname[i])
					add(t, LS_VCOMP + i, ev->start_ns, end);
		if (is_device)
			continue;
		p->stack = agg_grow(p->stack, &p->cap, depth, sizeof *p->stack);
		p->stack[depth++] =
		    (struct open_call){end, (uint8_t)(parent_op || kind == PT_KIND_OPERATOR)};
	}
	pt_store_iter_done(&it);
}

/* The overview and the busy times from the thread's own lists and counts:
 * a shadow aggregator holds what agg_settle_overview reads (the tracks'
 * lists, borrowed, and flags; the calls; nothing folded). */
static void early_settle(struct agg_pipe *p)
{
	const struct pt_trace *tr = p->a->t;
	struct pt_agg *sh = pt_xcalloc(1, sizeof *sh);
	sh->t = tr;
	sh->tracks = pt_xcalloc(p->ntl ? p->ntl : 1, sizeof *sh->tracks);
	for (uint32_t i = 0; i < p->ntl; i++) {
		if (!p->tl[i].nl)
			continue;
		struct track_state *ts = &sh->tracks[sh->ntracks++];
		int dev = tr && i < tr->ntracks && pt_track_is_device(&tr->tracks[i]);
		ts->id = i;
		ts->used = 1;
		ts->is_device = dev;
		ts->device = dev ? tr->tracks[i].device : -1;
		ts->derived = (uint8_t)agg_derived_lane(tr, i);
		memcpy(ts->li, p->tl[i].li, sizeof ts->li);
		ts->nl = p->tl[i].nl;
		ts->capl = p->tl[i].capl;
		ts->lv = p->tl[i].lv;
	}
	memcpy(sh->calls, p->calls, sizeof sh->calls);
	p->early.t0_ns = p->events ? p->t0_ns : 0;
	p->early.t1_ns = p->events ? p->t1_ns : 0;
	agg_settle_overview(sh, &p->early);
	/* one entry per device with kernels (never NULL once settled) */
	p->busy = pt_xcalloc(sh->ntracks + 1, sizeof *p->busy);
	for (size_t i = 0; i < sh->ntracks; i++) {
		const struct track_state *ts = &sh->tracks[i];
		size_t k = 0;
		if (!ts->is_device || !ts_list(ts, LS_BUSY))
			continue;
		while (k < p->nbusy && p->busy[k].device != ts->device)
			k++;
		if (k == p->nbusy)
			p->busy[p->nbusy++] =
			    (struct agg_busy){ts->device, agg_device_busy(sh, ts->device)};
	}
	free(sh->tracks);
	free(sh);
}

static void *pipe_main(void *arg)
{
	struct agg_pipe *p = arg;
	struct pt_agg *a = p->a;
	const struct pt_trace *tr = a->t;
	/* device tracks first, as pt_summarize feeds them (any order gives
	 * the same lists: each list is one track's) */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < p->ntl; i++) {
			int dev = tr && i < tr->ntracks && pt_track_is_device(&tr->tracks[i]);
			if (dev != !pass)
				continue;
			track_lists(p, i, dev, agg_derived_lane(tr, i));
		}
	early_settle(p);
	if (a->o.spare) {
		if (p->steps)
			a->o.spare(a->o.spare_arg, p->step_t0, p->step_t1);
		else
			a->o.spare(a->o.spare_arg, p->events ? p->t0_ns : 0,
				   p->events ? p->t1_ns : 0);
	}
	pthread_mutex_lock(&p->mu);
	while (!p->s)
		pthread_cond_wait(&p->cv, &p->mu);
	struct pt_summary *s = p->s;
	pthread_mutex_unlock(&p->mu);
	/* the feed is over: the aggregator's tracks no longer move */
	for (uint32_t i = 0; i < p->ntl; i++) {
		if (!p->tl[i].nl)
			continue;
		uint32_t ix = u64map_get(&a->track_ix, i);
		if (ix == AGG_NONE) /* the feed took none of its events */
			continue;
		struct track_state *ts = &a->tracks[ix];
		memcpy(ts->li, p->tl[i].li, sizeof ts->li);
		ts->nl = p->tl[i].nl;
		ts->capl = p->tl[i].capl;
		ts->lv = p->tl[i].lv;
		memset(&p->tl[i], 0, sizeof p->tl[i]);
	}
	/* the shadow folded nothing (pt_summarize never folds) */
	int ok = p->events == a->events && p->t0_ns == a->t0_ns && p->t1_ns == a->t1_ns &&
		 memcmp(p->calls, a->calls, sizeof p->calls) == 0 && !a->fold.upto_ns &&
		 !a->fold.ndev_busy;
	if (a->o.lists_thread == 3 || a->o.lists_thread == 4) /* tests: one way only */
		ok = a->o.lists_thread == 4;
	pthread_mutex_lock(&p->mu);
	p->early_ok = ok;
	p->lists_in = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (ok) {
		memcpy(s->overview, p->early.overview, sizeof s->overview);
		s->dist = p->early.dist;
	} else {
		agg_settle_overview(a, s);
	}
	return NULL;
}

struct agg_pipe *agg_pipe_start(struct pt_agg *a, struct pt_store *st, uint32_t ntracks)
{
	struct agg_pipe *p = pt_xcalloc(1, sizeof *p);
	p->a = a;
	p->st = st;
	p->ntl = ntracks;
	p->tl = pt_xcalloc(ntracks ? ntracks : 1, sizeof *p->tl);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pt_thread_start_apart(&p->th, pipe_main, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		free(p->tl);
		free(p);
		return NULL;
	}
	return p;
}

void agg_pipe_overview(struct agg_pipe *p, struct pt_summary *s)
{
	pthread_mutex_lock(&p->mu);
	p->s = s;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

const struct agg_busy *agg_pipe_lists_in(struct agg_pipe *p, size_t *nbusy)
{
	pthread_mutex_lock(&p->mu);
	while (!p->lists_in)
		pthread_cond_wait(&p->cv, &p->mu);
	int ok = p->early_ok;
	pthread_mutex_unlock(&p->mu);
	*nbusy = ok ? p->nbusy : 0;
	return ok ? p->busy : NULL;
}

void agg_pipe_join(struct agg_pipe *p)
{
	pthread_join(p->th, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	for (uint32_t i = 0; i < p->ntl; i++) { /* lists of tracks the feed never took */
		for (int k = 0; k < p->tl[i].nl; k++)
			ivl_free(&p->tl[i].lv[k]);
		free(p->tl[i].lv);
	}
	free(p->tl);
	free(p->stack);
	free(p->busy);
	free(p);
}
