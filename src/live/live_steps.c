/*
 * live_steps.c - the steps behind captures of the same steps on every
 * rank (live_steps.h): where a group starts, and whether a rank's newest
 * step is slow enough to ask for one by itself.
 *
 * A rank's steps are those of its stepping thread (the host track of its
 * process with the most steps); a step's number is its place among them
 * from 0, the count the Python helper keeps too (proftop attaches to a job
 * it launched before its first step). Each rank keeps its newest step
 * times in a ring, fed from where the last update stopped.
 */
#include "live/live_steps.h"

#include <stdlib.h>
#include <string.h>

#include "proftop/store.h"
#include "model/util.h"

#define RECENT (PT_LIVE_STRAGGLER_STEPS + 1)
#define PACE_STEPS 2 /* each rank's newest steps that give the job's pace */

struct rank_steps {
	int32_t pid;
	uint32_t track;        /* its stepping thread (UINT32_MAX: none yet) */
	uint64_t dur[RECENT];  /* ring of the newest step times */
	size_t n;              /* steps put in the ring, ever */
	uint64_t last_end_ns;  /* the newest step's end */
	uint64_t next_ns;      /* the next update reads steps starting here on */
	int64_t count;         /* steps of the track: the newest is count - 1 */
};

struct pt_live_steps {
	struct rank_steps *v;
	size_t n, cap;
};

struct pt_live_steps *pt_live_steps_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_live_steps));
}

void pt_live_steps_free(struct pt_live_steps *s)
{
	if (!s)
		return;
	free(s->v);
	free(s);
}

static struct rank_steps *find(const struct pt_live_steps *s, int32_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			return &s->v[i];
	return NULL;
}

static uint32_t stepping_track(const struct pt_trace *t, int32_t pid)
{
	uint32_t best = UINT32_MAX;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		const struct pt_track *tr = &t->tracks[i];
		if (tr->key.pid != pid || tr->key.pid_str || pt_track_is_device(tr) || !tr->steps)
			continue;
		if (best == UINT32_MAX || tr->steps > t->tracks[best].steps)
			best = i;
	}
	return best;
}

void pt_live_steps_update(struct pt_live_steps *s, struct pt_trace *t, const int32_t *pids,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct rank_steps *r = find(s, pids[i]);
		if (!r) {
			if (s->n == s->cap) {
				s->cap = s->cap ? s->cap * 2 : 8;
				s->v = pt_xrealloc(s->v, s->cap * sizeof *s->v);
			}
			r = &s->v[s->n++];
			memset(r, 0, sizeof *r);
			r->pid = pids[i];
			r->track = UINT32_MAX;
		}
		if (r->track == UINT32_MAX || r->track >= t->ntracks) {
			r->track = stepping_track(t, pids[i]);
			if (r->track == UINT32_MAX)
				continue;
		}
		const struct pt_track *tr = &t->tracks[r->track];
		if ((int64_t)tr->steps == r->count)
			continue; /* nothing new */
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, r->track, r->next_ns, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (ev->kind != PT_KIND_PROFILE_STEP || pt_event_end(ev) <= r->last_end_ns)
				continue;
			r->dur[r->n++ % RECENT] = ev->dur_ns;
			r->last_end_ns = pt_event_end(ev);
			r->next_ns = ev->start_ns + 1;
		}
		pt_store_iter_done(&it);
		r->count = (int64_t)tr->steps;
	}
}

/* r's newest k step times, oldest first; returns k (at most RECENT). */
static size_t newest(const struct rank_steps *r, uint64_t *out)
{
	size_t k = r->n < RECENT ? r->n : RECENT;
	for (size_t i = 0; i < k; i++)
		out[i] = r->dur[(r->n - k + i) % RECENT];
	return k;
}

static uint64_t median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, pt_u64_cmp);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

int64_t pt_live_capture_at_step(const struct pt_live_steps *s, const int32_t *pids, size_t n)
{
	int64_t furthest = -1;
	uint64_t *pace = pt_xmalloc((n ? n : 1) * PACE_STEPS * sizeof *pace);
	uint64_t one[RECENT];
	size_t npace = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rank_steps *r = find(s, pids[i]);
		if (!r || !r->n)
			continue;
		if (r->count - 1 > furthest)
			furthest = r->count - 1;
		/* the job's pace now: each rank's newest few steps (a job that
		 * just slowed down is not waited for at its old pace) */
		size_t m = newest(r, one), k = m < PACE_STEPS ? m : PACE_STEPS;
		memcpy(pace + npace, one + m - k, k * sizeof *pace);
		npace += k;
	}
	uint64_t step_ns = median(pace, npace);
	free(pace);
	if (furthest < 0)
		return -1;
	uint64_t ahead = step_ns ? (PT_LIVE_CAPTURE_AHEAD_NS + step_ns - 1) / step_ns : 0;
	if (ahead < PT_LIVE_CAPTURE_AHEAD_STEPS)
		ahead = PT_LIVE_CAPTURE_AHEAD_STEPS;
	if (ahead > 1000000)
		ahead = 1000000;
	return furthest + (int64_t)ahead;
}

int pt_live_straggler_check(const struct pt_live_steps *s, const int32_t *pids, size_t n,
			    double k, uint64_t since_ns, struct pt_live_straggler *out)
{
	uint64_t *base = pt_xmalloc((n ? n : 1) * RECENT * sizeof *base);
	uint64_t one[RECENT];
	size_t nbase = 0;
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rank_steps *r = find(s, pids[i]);
		if (!r || !r->n)
			continue;
		size_t m = newest(r, one);
		/* the newest step of each left out: it is what is judged */
		memcpy(base + nbase, one, (m - 1) * sizeof *base);
		nbase += m - 1;
	}
	uint64_t med = nbase >= PT_LIVE_STRAGGLER_MIN_STEPS ? median(base, nbase) : 0;
	for (size_t i = 0; med && i < n; i++) {
		const struct rank_steps *r = find(s, pids[i]);
		if (!r || !r->n || r->last_end_ns <= since_ns)
			continue;
		uint64_t d = r->dur[(r->n - 1) % RECENT];
		double ratio = (double)d / (double)med;
		if (d < 1000000 || ratio < k || (found && ratio <= out->ratio))
			continue;
		found = 1;
		out->pid = pids[i];
		out->step = r->count - 1;
		out->step_ns = d;
		out->median_ns = med;
		out->ratio = ratio;
	}
	free(base);
	return found;
}
