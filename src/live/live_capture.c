/*
 * live_capture.c - the live loop's side of deep captures (live_capture.h):
 * asking for one (one session, or every rank at the same step), the
 * straggler watch that asks by itself, and saving what this proftop asked
 * for once merged.
 */
#include "live/live_capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/live_multi.h"
#include "proftop/capture.h"
#include "proftop/session.h"
#include "model/util.h"

#define WATCH_NS 1000000000ull /* the straggler watch: once a second */
#define MAX_RANKS 4096

/* The open sessions' pids, when two or more (a group needs them), else 0. */
static size_t open_ranks(struct live_multi *multi, int32_t **pids)
{
	*pids = NULL;
	if (!multi)
		return 0;
	*pids = pt_xmalloc(MAX_RANKS * sizeof **pids);
	size_t n = live_multi_open_pids(multi, *pids, MAX_RANKS);
	if (n < 2) {
		free(*pids);
		*pids = NULL;
		return 0;
	}
	return n;
}

/* A group of captures of the same steps on every rank in pids. */
static struct pt_capture_group *ask_group(struct live_captures *lc, struct pt_trace *t,
					  struct live_multi *multi, const int32_t *pids, size_t n,
					  uint32_t steps, const char *why)
{
	if (!lc->steps)
		lc->steps = pt_live_steps_new();
	pt_live_steps_update(lc->steps, t, pids, n);
	int64_t at = pt_live_capture_at_step(lc->steps, pids, n);
	struct pt_capture_group *g = pt_capture_group_new(t, at, steps, why);
	char w[300];
	int32_t pid;
	live_multi_capture(multi, steps, at, g, &pid, w, sizeof w);
	return g;
}

void live_captures_ask(struct live_captures *lc, struct pt_trace *t, struct pt_backend *sess,
		       struct live_multi *multi, uint32_t steps, const char *why)
{
	char w[300];
	int32_t pid = 0, *pids;
	const struct pt_capture_group *last = pt_capture_group_latest(t);
	if (last && !pt_capture_group_over(t, last)) {
		/* one group at a time: every rank is busy with it */
		snprintf(w, sizeof w, "a capture of every rank is under way (group %u); wait for it",
			 last->id);
		pt_capture_refused(t, 0, w);
		return;
	}
	size_t n = open_ranks(multi, &pids);
	if (n) {
		ask_group(lc, t, multi, pids, n, steps, why);
		free(pids);
		return;
	}
	if (multi) { /* one session (or none yet): its next steps */
		if (live_multi_capture(multi, steps, 0, NULL, &pid, w, sizeof w) == 0)
			pt_capture_refused(t, pid, w);
		return;
	}
	struct pt_session *s = sess ? pt_backend_session_of(sess) : NULL;
	uint32_t seq;
	if (!s)
		pt_capture_refused(t, 0, "the job's session is not open yet; press T once steps show");
	else if (pt_session_capture_request(s, steps, 0, 0, &seq, w, sizeof w) != 0)
		pt_capture_refused(t, pt_session_header(s)->pid, w);
}

static void say(const struct pt_live_opts *o, const char *line)
{
	if (o->capture_out) {
		fprintf(o->capture_out, "proftop: %s\n", line);
		fflush(o->capture_out);
	}
}

static void watch_straggler(struct live_captures *lc, struct pt_trace *t,
			    const struct pt_live_opts *o, struct live_multi *multi)
{
	int32_t *pids;
	size_t n = open_ranks(multi, &pids);
	if (!n)
		return;
	if (!lc->steps)
		lc->steps = pt_live_steps_new();
	pt_live_steps_update(lc->steps, t, pids, n);
	struct pt_live_straggler st;
	if (pt_live_straggler_check(lc->steps, pids, n, o->capture_on_straggler, 0, &st)) {
		lc->straggler_fired = 1;
		char why[160], who[40];
		pt_trace_proc_name(t, st.pid, who, sizeof who);
		snprintf(why, sizeof why, "step %lld took %.2f ms on %s, %.1fx the ranks' median %.2f ms",
			 (long long)st.step, (double)st.step_ns / 1e6, who, st.ratio,
			 (double)st.median_ns / 1e6);
		uint32_t steps = o->capture_steps ? o->capture_steps : 5;
		struct pt_capture_group *g = ask_group(lc, t, multi, pids, n, steps, why);
		char line[600];
		snprintf(line, sizeof line, "straggler: %s; capturing steps %lld-%lld on %u ranks", why,
			 (long long)g->at_step, (long long)(g->at_step + steps - 1), g->asked);
		say(o, line);
	}
	free(pids);
}

/* Saves what this proftop asked for, once merged (a group once all its
 * ranks are over), and says each group's end on capture_out. */
static void save(struct live_captures *lc, struct pt_trace *t, const struct pt_live_opts *o)
{
	struct pt_capture_list *l = t->captures;
	if (!l)
		return;
	for (uint32_t i = 0; o->capture_save && i < l->n; i++) {
		struct pt_capture *c = &l->v[i];
		if (c->group || c->state != PT_CAPTURE_MERGED || !c->mine || c->saved[0] ||
		    c->save_failed)
			continue;
		char err[200];
		if (pt_capture_save(t, c, NULL, o->capture_dir, err, sizeof err) != 0)
			snprintf(c->msg, sizeof c->msg, "not saved: %s", err);
	}
	for (uint32_t i = 0; i < l->ngroups; i++) {
		struct pt_capture_group *g = &l->groups[i];
		if (g->said || !pt_capture_group_over(t, g))
			continue;
		char err[200], line[900];
		if (o->capture_save && !g->saved[0] && !g->save_failed)
			pt_capture_group_save(t, g, o->capture_dir, err, sizeof err);
		/* brief: what asked for it was said when it was asked */
		pt_capture_group_describe(t, g, line, sizeof line, 1);
		say(o, line);
		g->said = 1;
	}
}

void live_captures_poll(struct live_captures *lc, struct pt_trace *t,
			const struct pt_live_opts *o, struct live_multi *multi, uint64_t now_ns)
{
	if (o->capture_on_straggler > 0 && !lc->straggler_fired && now_ns >= lc->next_watch_ns) {
		lc->next_watch_ns = now_ns + WATCH_NS;
		watch_straggler(lc, t, o, multi);
	}
	if (t->captures)
		save(lc, t, o);
}

void live_captures_end(struct live_captures *lc, struct pt_trace *t,
		       const struct pt_live_opts *o)
{
	if (t->captures)
		save(lc, t, o);
	pt_live_steps_free(lc->steps);
	lc->steps = NULL;
}
