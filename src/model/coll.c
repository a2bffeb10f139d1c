/*
 * coll.c - the trace's table of collective calls (coll.h): rows opened at a
 * call's entry, closed at its completion, bounded by the memory cap.
 */
#include "proftop/coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util.h"
#include "proftop/trace.h"

/* An entry's completion is looked for among this many newest rows (a
 * completion comes after at most the calls in flight since its entry). */
#define COLL_SEARCH 65536u
/* a row made by a completion whose entry has not come (yet): not in PT_COLL_FLAGS;
 * an entry read late joins it while it is among the newest ORPHAN_WINDOW rows
 * (the two come a drain apart at most), so an entry costs nothing once every
 * orphan is older than that */
#define COLL_ORPHAN 0x80000000u
#define ORPHAN_WINDOW 4096u
/* The rows' share of the cap: at most an eighth of it, at least this many. */
#define COLL_MIN_ROWS 4096u

static size_t max_rows(const struct pt_trace *t)
{
	size_t m = pt_store_max_bytes(t->store) / 8 / sizeof(struct pt_coll);
	return m < COLL_MIN_ROWS ? COLL_MIN_ROWS : m;
}

/* Room for one more row: past the rows' share, the oldest half goes (rows
 * still open stay: a hang's rows are the ones that matter). */
static void make_room(struct pt_trace *t)
{
	struct pt_colls *c = &t->colls;
	if (c->n >= max_rows(t)) {
		size_t half = c->n / 2, w = 0;
		for (size_t i = 0; i < c->n; i++) {
			if (i < half && c->v[i].end_ns) {
				c->dropped++;
				t->warnings[PT_WARN_COLL_DROPPED]++;
				if (c->v[i].flags & COLL_ORPHAN)
					c->orphans--;
				continue;
			}
			c->v[w++] = c->v[i];
		}
		c->n = w;
		/* the rows moved: orphans now past the window are let go here */
		for (size_t i = 0; c->orphans && i + ORPHAN_WINDOW < c->n; i++)
			if (c->v[i].flags & COLL_ORPHAN) {
				c->v[i].flags &= ~COLL_ORPHAN;
				c->orphans--;
			}
	}
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 256;
		c->v = pt_xrealloc(c->v, ncap * sizeof *c->v);
		pt_store_charge(t->store, (ncap - c->cap) * sizeof *c->v);
		c->cap = ncap;
	}
}

/* A group's numbers start over when it is made again (destroy_process_group,
 * init again): a seq far below the last one, or 0 after others, begins an
 * epoch. Calls of one group enter in order, but two threads may read their
 * numbers a few calls apart, hence the margin. */
#define SEQ_RESTART_MARGIN 64u

/* The process's state for group (made on first sight; NULL past 4096). */
static struct pt_coll_seq *seq_of(struct pt_trace *t, uint32_t track, uint32_t group, int *made)
{
	struct pt_colls *c = &t->colls;
	const struct pt_track_key *k = &t->tracks[track].key;
	*made = 0;
	for (size_t i = 0; i < c->nseqs; i++)
		if (c->seqs[i].pid == k->pid && c->seqs[i].pid_str == k->pid_str &&
		    c->seqs[i].group == group)
			return &c->seqs[i];
	if (c->nseqs >= 4096) /* a job making groups without end */
		return NULL;
	c->seqs = pt_xrealloc(c->seqs, (c->nseqs + 1) * sizeof *c->seqs);
	struct pt_coll_seq *q = &c->seqs[c->nseqs++];
	memset(q, 0, sizeof *q);
	q->pid = k->pid;
	q->pid_str = k->pid_str;
	q->group = group;
	*made = 1;
	return q;
}

static uint32_t epoch_of(struct pt_trace *t, uint32_t track, uint32_t group, uint64_t seq)
{
	int made;
	struct pt_coll_seq *q = seq_of(t, track, group, &made);
	if (!q)
		return 0;
	if (made) {
		q->last = seq;
		return 0;
	}
	if ((seq == 0 && q->last > 0) || seq + SEQ_RESTART_MARGIN < q->last) {
		q->epoch++;
		q->last = seq;
	} else if (seq > q->last) {
		q->last = seq;
	}
	return q->epoch;
}

static struct pt_coll *row_new(struct pt_trace *t, uint32_t track, const struct pt_coll_rec *r)
{
	make_room(t);
	struct pt_colls *c = &t->colls;
	/* the row leaving the window: an orphan there waits no longer */
	if (c->orphans && c->n >= ORPHAN_WINDOW && (c->v[c->n - ORPHAN_WINDOW].flags & COLL_ORPHAN)) {
		c->v[c->n - ORPHAN_WINDOW].flags &= ~COLL_ORPHAN;
		c->orphans--;
	}
	struct pt_coll *row = &c->v[c->n++];
	memset(row, 0, sizeof *row);
	row->seq = r->seq;
	row->bytes = r->bytes;
	row->op = r->op;
	row->group = r->group;
	row->track = track;
	row->group_size = r->group_size;
	row->flags = r->flags & PT_COLL_FLAGS;
	row->epoch = epoch_of(t, track, r->group, r->seq);
	return row;
}

static int same_proc(const struct pt_trace *t, uint32_t a, uint32_t b);

/* A completion read before its entry: they came on two threads' rings (NCCL
 * enqueues on the job's thread and completes on its proxy thread; an async
 * work completes where torch completes it), which a reader drains one
 * after the other. The row the completion made, when there is one. */
static struct pt_coll *orphan_of(struct pt_trace *t, uint32_t track, const struct pt_coll_rec *r)
{
	struct pt_colls *c = &t->colls;
	if (!c->orphans)
		return NULL;
	size_t lo = c->n > ORPHAN_WINDOW ? c->n - ORPHAN_WINDOW : 0;
	for (size_t i = c->n; i > lo; i--) {
		struct pt_coll *x = &c->v[i - 1];
		if ((x->flags & COLL_ORPHAN) && x->seq == r->seq && x->group == r->group &&
		    x->op == r->op && same_proc(t, x->track, track))
			return x;
	}
	return NULL;
}

void pt_trace_coll_enter(struct pt_trace *t, uint32_t track, const struct pt_coll_rec *r)
{
	if (track >= t->ntracks)
		return;
	struct pt_coll *row = orphan_of(t, track, r);
	if (row) { /* its entry after all: the row is whole */
		row->flags &= ~COLL_ORPHAN;
		row->track = track;
		t->colls.unmatched_done--;
		t->colls.orphans--;
		if (!(row->flags & PT_COLL_DEVICE) && r->time_ns <= row->end_ns)
			row->start_ns = r->time_ns; /* a device row arrived when its kernel started */
		return;
	}
	row = row_new(t, track, r);
	row->start_ns = r->time_ns;
	if (r->time_ns > t->last_ns)
		t->last_ns = r->time_ns;
}

static int same_proc(const struct pt_trace *t, uint32_t a, uint32_t b)
{
	const struct pt_track_key *x = &t->tracks[a].key, *y = &t->tracks[b].key;
	return x->pid == y->pid && x->pid_str == y->pid_str;
}

uint32_t pt_trace_coll_event_name(struct pt_trace *t, uint32_t op)
{
	const char *o = pt_trace_str(t, op);
	char buf[96];
	int n = snprintf(buf, sizeof buf, PT_COLL_EVENT_PREFIX "%s", o ? o : "?");
	if (n < 0)
		return 0;
	return pt_trace_intern(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

size_t pt_trace_coll_done(struct pt_trace *t, uint32_t track, const struct pt_coll_rec *r)
{
	struct pt_colls *c = &t->colls;
	if (track >= t->ntracks)
		return SIZE_MAX;
	c->done++;
	struct pt_coll *row = NULL;
	size_t lo = c->n > COLL_SEARCH ? c->n - COLL_SEARCH : 0;
	for (size_t i = c->n; i > lo; i--) {
		struct pt_coll *x = &c->v[i - 1];
		if (!x->end_ns && x->seq == r->seq && x->group == r->group && x->op == r->op &&
		    same_proc(t, x->track, track)) {
			row = x;
			break;
		}
	}
	if (!row) {
		c->unmatched_done++;
		row = row_new(t, track, r);
		row->flags |= COLL_ORPHAN; /* until its entry comes, if it does */
		c->orphans++;
		row->start_ns = r->start_ns && r->start_ns <= r->time_ns ? r->start_ns : r->time_ns;
	}
	/* a device-timed call arrives when its kernel starts, not when it was enqueued */
	if ((r->flags & PT_COLL_DEVICE) && r->start_ns && r->start_ns <= r->time_ns)
		row->start_ns = r->start_ns;
	row->end_ns = r->time_ns > row->start_ns ? r->time_ns : row->start_ns + 1;
	if (r->bytes)
		row->bytes = r->bytes;
	if (r->group_size)
		row->group_size = r->group_size;
	row->flags |= r->flags & PT_COLL_FLAGS;
	size_t idx = (size_t)(row - c->v);
	/* time in collectives: blocking calls, and calls timed on the device */
	if (!(row->flags & PT_COLL_ASYNC) || (row->flags & PT_COLL_DEVICE)) {
		int made;
		struct pt_coll_seq *q = seq_of(t, row->track, row->group, &made);
		if (q)
			q->blocking_ns += row->end_ns - row->start_ns;
	}
	/* a blocking call as an operator: the summaries, the timeline and the
	 * export (an async one's launch is one already: the source pushed it) */
	if (row->flags & PT_COLL_ASYNC)
		return idx;
	struct pt_event ev = {row->start_ns, row->end_ns - row->start_ns, row->bytes,
			      pt_trace_coll_event_name(t, row->op), row->track, 0,
			      PT_KIND_OPERATOR, PT_EVF_COMM, 0};
	pt_trace_add(t, &ev);
	return idx;
}

void pt_trace_coll_row(struct pt_trace *t, const struct pt_coll *row)
{
	if (row->track >= t->ntracks)
		return;
	make_room(t);
	t->colls.v[t->colls.n++] = *row;
	if (row->end_ns)
		t->colls.done++;
	uint64_t last = row->end_ns ? row->end_ns : row->start_ns;
	if (last > t->last_ns)
		t->last_ns = last;
}

void pt_colls_free(struct pt_colls *c)
{
	free(c->v);
	free(c->seqs);
	memset(c, 0, sizeof *c);
}
