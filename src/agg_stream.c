/*
 * agg_stream.c - aggregating a trace file while it is read (agg_stream.h).
 *
 * The writing thread collects each batch's events, with the facts about
 * tracks and names the aggregator would otherwise read from the trace (a
 * track's device, its "Overlap Analysis" lane; whether a name is a memory
 * call), into one of a few buffers and hands it over; the stream's thread
 * applies the facts and feeds the events to an aggregator that never looks
 * at the trace (detached: a->t is NULL, a->tinfo set). Buffers go round in
 * order; when all are full the writer waits, so memory stays a few batches.
 *
 * pt_summarize feeds every device activity before any host event, so a
 * launch takes its activities when it is fed and keeps no record for ones
 * still to come (dev_complete). The stream does the same with a lag of one
 * batch: a batch's device events are fed before the previous batch's host
 * events, which is enough for files that write a kernel soon after its
 * launch. An activity whose launch was fed already, or a correlation id
 * launched twice, would be settled differently than pt_summarize does: the
 * stream gives up there. It also checks that every track comes in the
 * store's order (start, longer first, kind, name, correlation; equal ones
 * in arrival order, as the store keeps them) and gives up at the first
 * event out of order: Kineto writes host threads in end order, so for most
 * of its files the summary is made after the read, as before. At the end the
 * writer checks that the trace is what the aggregator saw: nothing dropped
 * by the cap, no event changed after it was added, every track's facts as
 * they were when handed over, and none of msprof's Overlap Analysis names
 * (looked up once, when an aggregator starts). The summary then settles on
 * the writer's thread with the final trace.
 */
#include "agg_stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"
#include "u32map.h"
#include "proftop/agg.h"
#include "proftop/store.h"
#include "util.h"

#define NBUF 3

struct tfact {
	uint32_t track;
	struct agg_tinfo ti;
};

struct nfact {
	uint32_t name;
	uint8_t memory;
};

struct sbuf {
	struct pt_event *ev;
	size_t n, cap;
	struct tfact *tf;
	size_t ntf, tf_cap;
	struct nfact *nf;
	size_t nnf, nf_cap;
	int full;
};

struct agg_stream {
	struct pt_trace *t;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct sbuf buf[NBUF];
	uint64_t fill_seq, feed_seq; /* buffers handed over / fed */
	int stop;
	/* the writer's side: facts already handed over */
	struct agg_tinfo *sent;
	size_t nsent;
	uint8_t *named; /* per name id: its fact was handed over */
	size_t nnamed;
	/* the thread's side */
	struct pt_agg *a;
	struct pt_event *last; /* per track: the last event fed */
	uint8_t *have_last;
	size_t nlast;
	struct pt_event *held; /* the last batch's host events, fed after the next
				  batch's device events */
	size_t nheld, held_cap;
	/* correlation ids fed on host events: a flat bitmap for the small
	 * ones (Kineto's and CUPTI's count up from 1), a map of 32-bit words
	 * (bit id & 31 of word id >> 5) above LBITS_MAX */
	uint64_t *lbits;
	size_t nlbits; /* words */
	struct pt_u32map launched;
	atomic_int out_of_order; /* set by the thread; the writer stops handing on */
};

static int ev_cmp(const struct pt_event *a, const struct pt_event *b)
{
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->name_id != b->name_id)
		return a->name_id < b->name_id ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return 0;
}

/* The facts track_get reads from the trace (agg.c, derived_lane). */
static struct agg_tinfo track_facts(const struct pt_trace *t, uint32_t id)
{
	struct agg_tinfo ti = {1, 0, 0, -1};
	const struct pt_track *tr = &t->tracks[id];
	if (pt_track_is_device(tr)) {
		ti.is_device = 1;
		ti.device = tr->device;
	}
	if (tr->process_label)
		ti.derived =
		    strncmp(pt_trace_str(t, tr->process_label), "Overlap Analysis", 16) == 0;
	return ti;
}

static void give_up(struct agg_stream *as)
{
	/* the summary is made after the read */
	atomic_store_explicit(&as->out_of_order, 1, memory_order_relaxed);
}

/* Feeds ev unless its track went out of order; 0 when the stream gave up. */
static int feed_one(struct agg_stream *as, const struct pt_event *ev)
{
	uint32_t tr = ev->track_id;
	if (tr >= as->nlast) {
		size_t nn = as->nlast ? as->nlast : 16;
		while (nn <= tr)
			nn *= 2;
		as->last = pt_xrealloc(as->last, nn * sizeof *as->last);
		as->have_last = pt_xrealloc(as->have_last, nn);
		memset(as->have_last + as->nlast, 0, nn - as->nlast);
		as->nlast = nn;
	}
	if (as->have_last[tr] && ev_cmp(&as->last[tr], ev) > 0) {
		give_up(as);
		return 0;
	}
	as->last[tr] = *ev;
	as->have_last[tr] = 1;
	pt_agg_feed(as->a, ev);
	return 1;
}

/* 16 MiB of bitmap at most */
#define LBITS_MAX (1u << 27)

static int launched(const struct agg_stream *as, uint32_t corr)
{
	if (corr < LBITS_MAX)
		return (corr >> 6) < as->nlbits && ((as->lbits[corr >> 6] >> (corr & 63)) & 1);
	return (pt_u32map_get(&as->launched, corr >> 5) >> (corr & 31)) & 1;
}

static void set_launched(struct agg_stream *as, uint32_t corr)
{
	if (corr < LBITS_MAX) {
		size_t w = corr >> 6;
		if (w >= as->nlbits) {
			size_t nn = as->nlbits ? as->nlbits : 1024;
			while (nn <= w)
				nn *= 2;
			as->lbits = pt_xrealloc(as->lbits, nn * sizeof *as->lbits);
			memset(as->lbits + as->nlbits, 0, (nn - as->nlbits) * sizeof *as->lbits);
			as->nlbits = nn;
		}
		as->lbits[w] |= (uint64_t)1 << (corr & 63);
		return;
	}
	uint32_t w = pt_u32map_get(&as->launched, corr >> 5);
	pt_u32map_put(&as->launched, corr >> 5, w | 1u << (corr & 31));
}

static int feed_host(struct agg_stream *as, const struct pt_event *ev)
{
	if (ev->corr) {
		if (launched(as, ev->corr)) { /* launched twice */
			give_up(as);
			return 0;
		}
		set_launched(as, ev->corr);
	}
	return feed_one(as, ev);
}

static int is_dev_track(const struct agg_stream *as, uint32_t tr)
{
	return tr < as->a->ntinfo && as->a->tinfo[tr].is_device;
}

static void feed_buf(struct agg_stream *as, const struct sbuf *b)
{
	struct pt_agg *a = as->a;
	for (size_t i = 0; i < b->ntf; i++) {
		uint32_t id = b->tf[i].track;
		if (id >= a->ntinfo) {
			size_t nn = a->ntinfo ? a->ntinfo : 16;
			while (nn <= id)
				nn *= 2;
			a->tinfo = pt_xrealloc(a->tinfo, nn * sizeof *a->tinfo);
			memset(a->tinfo + a->ntinfo, 0, (nn - a->ntinfo) * sizeof *a->tinfo);
			a->ntinfo = nn;
		}
		a->tinfo[id] = b->tf[i].ti;
	}
	for (size_t i = 0; i < b->nnf; i++)
		agg_set_memname(a, b->nf[i].name, b->nf[i].memory);
	/* this batch's device events, then the last batch's host events */
	for (size_t i = 0; i < b->n; i++) {
		const struct pt_event *ev = &b->ev[i];
		if (!is_dev_track(as, ev->track_id))
			continue;
		/* an activity after its launch: pt_summarize would have had it
		 * when the launch was fed; a host event with a correlation id on
		 * a device track launches in pt_summarize's device pass */
		if (ev->corr && (launched(as, ev->corr) || !pt_kind_is_device(ev->kind))) {
			give_up(as);
			return;
		}
		if (!feed_one(as, ev))
			return;
	}
	for (size_t i = 0; i < as->nheld; i++)
		if (!feed_host(as, &as->held[i]))
			return;
	as->nheld = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (is_dev_track(as, b->ev[i].track_id))
			continue;
		as->held = agg_grow(as->held, &as->held_cap, as->nheld, sizeof *as->held);
		as->held[as->nheld++] = b->ev[i];
	}
}

static void *stream_main(void *arg)
{
	struct agg_stream *as = arg;
	pthread_mutex_lock(&as->mu);
	for (;;) {
		struct sbuf *b = &as->buf[as->feed_seq % NBUF];
		while (!b->full && !as->stop)
			pthread_cond_wait(&as->cv, &as->mu);
		if (!b->full) { /* stopped: the last batch's host events */
			for (size_t i = 0; i < as->nheld && !atomic_load(&as->out_of_order); i++)
				if (!feed_host(as, &as->held[i]))
					break;
			as->nheld = 0;
			break;
		}
		pthread_mutex_unlock(&as->mu);
		if (!atomic_load_explicit(&as->out_of_order, memory_order_relaxed))
			feed_buf(as, b);
		pthread_mutex_lock(&as->mu);
		b->full = 0;
		b->n = b->ntf = b->nnf = 0;
		as->feed_seq++;
		pthread_cond_broadcast(&as->cv);
	}
	pthread_mutex_unlock(&as->mu);
	return NULL;
}

struct agg_stream *agg_stream_new(struct pt_trace *t)
{
	struct agg_stream *as = pt_xcalloc(1, sizeof *as);
	as->t = t;
	as->a = pt_agg_new(NULL, NULL);
	as->a->dev_complete = 1; /* see the file comment */
	as->a->tinfo = pt_xcalloc(16, sizeof *as->a->tinfo);
	as->a->ntinfo = 16;
	pthread_mutex_init(&as->mu, NULL);
	pthread_cond_init(&as->cv, NULL);
	pthread_create(&as->th, NULL, stream_main, as);
	return as;
}

/* The buffer the writer fills now (never one the thread is feeding). */
static struct sbuf *cur(struct agg_stream *as)
{
	return &as->buf[as->fill_seq % NBUF];
}

void agg_stream_add(struct agg_stream *as, const struct pt_event *ev)
{
	if (atomic_load_explicit(&as->out_of_order, memory_order_relaxed))
		return; /* given up: nothing more to hand on */
	struct sbuf *b = cur(as);
	uint32_t tr = ev->track_id;
	if (tr >= as->nsent || !as->sent[tr].given) {
		if (tr >= as->nsent) {
			size_t nn = as->nsent ? as->nsent : 16;
			while (nn <= tr)
				nn *= 2;
			as->sent = pt_xrealloc(as->sent, nn * sizeof *as->sent);
			memset(as->sent + as->nsent, 0, (nn - as->nsent) * sizeof *as->sent);
			as->nsent = nn;
		}
		as->sent[tr] = track_facts(as->t, tr);
		b->tf = agg_grow(b->tf, &b->tf_cap, b->ntf, sizeof *b->tf);
		b->tf[b->ntf++] = (struct tfact){tr, as->sent[tr]};
	}
	uint32_t nm = ev->name_id;
	if (nm >= as->nnamed || !as->named[nm]) {
		if (nm >= as->nnamed) {
			size_t nn = as->nnamed ? as->nnamed : 256;
			while (nn <= nm)
				nn *= 2;
			as->named = pt_xrealloc(as->named, nn);
			memset(as->named + as->nnamed, 0, nn - as->nnamed);
			as->nnamed = nn;
		}
		as->named[nm] = 1;
		b->nf = agg_grow(b->nf, &b->nf_cap, b->nnf, sizeof *b->nf);
		b->nf[b->nnf++] =
		    (struct nfact){nm, (uint8_t)agg_memory_name(pt_trace_str(as->t, nm))};
	}
	b->ev = agg_grow(b->ev, &b->cap, b->n, sizeof *b->ev);
	b->ev[b->n++] = *ev;
}

void agg_stream_flush(struct agg_stream *as)
{
	struct sbuf *b = cur(as);
	if (!b->n && !b->ntf && !b->nnf)
		return;
	pthread_mutex_lock(&as->mu);
	b->full = 1;
	as->fill_seq++;
	pthread_cond_broadcast(&as->cv);
	/* the next buffer must be fed before it is filled again */
	while (cur(as)->full)
		pthread_cond_wait(&as->cv, &as->mu);
	pthread_mutex_unlock(&as->mu);
}

static void stop_thread(struct agg_stream *as)
{
	pthread_mutex_lock(&as->mu);
	as->stop = 1;
	pthread_cond_broadcast(&as->cv);
	pthread_mutex_unlock(&as->mu);
	pthread_join(as->th, NULL);
}

static void stream_free(struct agg_stream *as)
{
	for (int i = 0; i < NBUF; i++) {
		free(as->buf[i].ev);
		free(as->buf[i].tf);
		free(as->buf[i].nf);
	}
	free(as->sent);
	free(as->named);
	free(as->last);
	free(as->have_last);
	free(as->held);
	free(as->lbits);
	pt_u32map_free(&as->launched);
	pthread_mutex_destroy(&as->mu);
	pthread_cond_destroy(&as->cv);
	free(as);
}

/* Is t what the aggregator saw? */
static int still_valid(struct agg_stream *as, int events_changed)
{
	struct pt_trace *t = as->t;
	if (atomic_load(&as->out_of_order) || events_changed || pt_store_dropped(t->store))
		return 0;
	static const char *const vn[3] = {"Computing", "Communication",
					  "Communication(Not Overlapped)"};
	for (int i = 0; i < 3; i++)
		if (pt_strtab_find(t->strings, vn[i], strlen(vn[i])))
			return 0;
	for (size_t i = 0; i < as->nsent; i++) {
		if (!as->sent[i].given)
			continue;
		struct agg_tinfo now = track_facts(t, (uint32_t)i);
		if (now.is_device != as->sent[i].is_device || now.device != as->sent[i].device ||
		    now.derived != as->sent[i].derived)
			return 0;
	}
	return 1;
}

void agg_stream_finish(struct agg_stream *as, int events_changed)
{
	agg_stream_flush(as);
	stop_thread(as);
	struct pt_trace *t = as->t;
	if (still_valid(as, events_changed)) {
		as->a->t = t; /* settling reads the names (step numbers) */
		pt_summary_free(t->summary_cache);
		t->summary_cache = pt_agg_finish(as->a);
		t->summary_cache_events = t->events_seen;
	} else {
		agg_free(as->a);
	}
	stream_free(as);
}

void agg_stream_abort(struct agg_stream *as)
{
	stop_thread(as);
	agg_free(as->a);
	stream_free(as);
}
