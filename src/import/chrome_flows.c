/*
 * chrome_flows.c - flow arrows (ph s/t/f) bound after the whole file is
 * read: each flow point binds to a slice of its track (the deepest slice
 * enclosing it, or with a binding point "e" unset, the next one to start),
 * an "f" pairs with the latest "s" of its id, and the pair of slices gets
 * one correlation id (from FLOW_CORR_BASE), so a kernel links to the
 * launch the arrow names when neither carries a correlation id of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "import/chrome_sink_int.h"
#include "proftop/store.h"

static int flow_cmp(const void *a_, const void *b_)
{
	const struct flow *a = a_, *b = b_;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	return 0;
}

/* The slice a flow point binds to on its track (evs sorted by start). */
static struct pt_event *bind_point(struct pt_event **evs, size_t n, const struct flow *f)
{
	/* first event starting after ts */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (evs[mid]->start_ns <= f->ts_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!f->enclosing) {
		/* next slice starting at or after ts */
		size_t i = lo;
		while (i > 0 && evs[i - 1]->start_ns == f->ts_ns)
			i--;
		return i < n ? evs[i] : NULL;
	}
	/* deepest slice with start <= ts <= end: the latest such start */
	size_t steps = 0;
	for (size_t i = lo; i > 0 && steps < 4096; i--, steps++)
		if (pt_event_end(evs[i - 1]) >= f->ts_ns)
			return evs[i - 1];
	return NULL;
}

/* Binds the flows of one track: each flow record gets its slice in bound. */
static void bind_track(struct cr_sink *s, struct flow *fl, size_t n, struct pt_event **bound)
{
	struct pt_event **evs = NULL;
	size_t nev = 0, cap = 0;
	struct pt_store_iter it;
	pt_store_iter_init(&it, s->t->store, fl[0].track, 0, UINT64_MAX);
	struct pt_event *e;
	while ((e = pt_store_iter_next(&it))) {
		if (e->kind == PT_KIND_COUNTER || e->kind == PT_KIND_INSTANT)
			continue;
		if (nev == cap) {
			cap = cap ? cap * 2 : 256;
			evs = pt_xrealloc(evs, cap * sizeof *evs);
		}
		evs[nev++] = e;
	}
	pt_store_iter_done(&it);
	for (size_t i = 0; i < n; i++)
		bound[i] = bind_point(evs, nev, &fl[i]);
	free(evs);
}

struct flow_end {
	struct pt_event *src, *dst;
};

void cr_flows_bind(struct cr_sink *s)
{
	if (!s->nflows)
		return;
	struct pt_trace *t = s->t;
	/* Kineto's flow ids are the correlation ids its slices already carry:
	 * those arrows add nothing, and skipping them keeps this cheap. */
	size_t n = 0;
	for (size_t i = 0; i < s->nflows; i++) {
		struct flow *f = &s->flows[i];
		if (!f->id_is_str && f->id > 0 && f->id <= UINT32_MAX &&
		    corr_seen(s, (uint32_t)f->id))
			continue;
		s->flows[n++] = *f;
	}
	if (!n)
		return;
	qsort(s->flows, n, sizeof *s->flows, flow_cmp);
	struct pt_event **bound = pt_xcalloc(n, sizeof *bound);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s->flows[j].track == s->flows[i].track)
			j++;
		bind_track(s, s->flows + i, j - i, bound + i);
		i = j;
	}
	/* pair starts with ends by id: (id, is_str) -> index of the "s" + 1;
	 * ids that have "t" steps are remembered in steps */
	struct pt_u64map start = {0}, steps = {0};
	uint8_t *used = pt_xcalloc(n, 1);
	uint64_t unmatched = 0;
	for (size_t i = 0; i < n; i++) {
		struct flow *f = &s->flows[i];
		uint64_t key = (uint64_t)f->id * 2 + f->id_is_str;
		if (f->ph == 's')
			pt_u64map_put(&start, key, (uint32_t)i + 1); /* a later start wins */
		else if (f->ph == 't')
			pt_u64map_put(&steps, key, 1);
	}
	uint32_t next_corr = FLOW_CORR_BASE;
	for (size_t i = 0; i < n; i++) {
		struct flow *f = &s->flows[i];
		if (f->ph != 'f')
			continue;
		uint64_t key = (uint64_t)f->id * 2 + f->id_is_str;
		uint32_t si = pt_u64map_get(&start, key);
		struct pt_event *src = si ? bound[si - 1] : NULL, *dst = bound[i];
		if (si)
			used[si - 1] = 1;
		if (!src || !dst) {
			unmatched++;
			continue;
		}
		uint32_t corr = src->corr ? src->corr : dst->corr;
		if (!corr)
			corr = next_corr++;
		src->corr = corr;
		dst->corr = corr;
		src->flags |= PT_EVF_FLOW_SRC;
		dst->flags |= PT_EVF_FLOW_DST;
	}
	/* starts that never met an end; "s" + "t" chains without an "f" are
	 * annotation chains as msprof writes them, not arrows: not counted */
	for (size_t i = 0; i < n; i++) {
		struct flow *f = &s->flows[i];
		uint64_t key = (uint64_t)f->id * 2 + f->id_is_str;
		if (f->ph == 's' && !used[i] && !pt_u64map_get(&steps, key))
			unmatched++;
	}
	free(used);
	pt_u64map_free(&steps);
	if (unmatched)
		pt_trace_warn(t, PT_WARN_FLOW_UNMATCHED, unmatched);
	pt_u64map_free(&start);
	free(bound);
}
