/*
 * capture.c - deep captures in a live trace (capture.h): the list the
 * session reader keeps (part of the trace), the capture's cost measured from
 * the process's own steps, and the line that describes it. Merging a
 * capture's Chrome trace is the reader's (src/import/capture_merge.c), saving
 * one the exporter's (src/output/capture_save.c).
 */
#include "proftop/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/error.h"
#include "model/util.h"

#define CAPTURE_KEEP 256u /* captures remembered per trace (a group has one per rank) */
#define CAPTURE_GROUPS_KEEP 8u /* groups remembered per trace */

static struct pt_capture_list *list_of(struct pt_trace *t)
{
	if (!t->captures)
		t->captures = pt_xcalloc(1, sizeof *t->captures);
	return t->captures;
}

void pt_capture_touch(struct pt_trace *t)
{
	list_of(t)->gen++;
}

static struct pt_capture *append(struct pt_trace *t)
{
	struct pt_capture_list *l = list_of(t);
	if (l->n == CAPTURE_KEEP) { /* forget the oldest */
		memmove(l->v, l->v + 1, (l->n - 1) * sizeof *l->v);
		l->n--;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->v = pt_xrealloc(l->v, l->cap * sizeof *l->v);
	}
	struct pt_capture *c = &l->v[l->n++];
	memset(c, 0, sizeof *c);
	c->first_step = c->last_step = c->job_first_step = c->at_step = -1;
	l->gen++;
	return c;
}

struct pt_capture *pt_capture_get(struct pt_trace *t, int64_t pid, uint32_t seq, int create)
{
	struct pt_capture_list *l = t->captures;
	for (uint32_t i = 0; l && i < l->n; i++)
		if (l->v[i].pid == pid && l->v[i].seq == seq && l->v[i].state != PT_CAPTURE_REFUSED)
			return &l->v[i];
	if (!create)
		return NULL;
	struct pt_capture *c = append(t);
	c->pid = pid;
	c->seq = seq;
	return c;
}

const struct pt_capture *pt_capture_latest(const struct pt_trace *t)
{
	const struct pt_capture_list *l = t->captures;
	return l && l->n ? &l->v[l->n - 1] : NULL;
}

void pt_capture_refused(struct pt_trace *t, int64_t pid, const char *why)
{
	struct pt_capture *c = append(t);
	c->pid = pid;
	c->state = PT_CAPTURE_REFUSED;
	c->mine = 1;
	c->asked_ns = pt_now_ns();
	snprintf(c->msg, sizeof c->msg, "%s", why);
}

struct pt_capture_group *pt_capture_group_new(struct pt_trace *t, int64_t at_step,
					      uint32_t steps, const char *why)
{
	struct pt_capture_list *l = list_of(t);
	if (!l->groups)
		l->groups = pt_xcalloc(CAPTURE_GROUPS_KEEP, sizeof *l->groups);
	if (l->ngroups == CAPTURE_GROUPS_KEEP) { /* forget the oldest */
		memmove(l->groups, l->groups + 1, (l->ngroups - 1) * sizeof *l->groups);
		l->ngroups--;
	}
	struct pt_capture_group *g = &l->groups[l->ngroups++];
	memset(g, 0, sizeof *g);
	g->id = ++l->next_group;
	g->at_step = at_step;
	g->steps = steps;
	g->asked_ns = pt_now_ns();
	snprintf(g->why, sizeof g->why, "%s", why ? why : "");
	l->gen++;
	return g;
}

void pt_capture_group_add(struct pt_trace *t, struct pt_capture_group *g, int64_t pid,
			  uint32_t seq, const char *why)
{
	struct pt_capture *c;
	if (seq) {
		c = pt_capture_get(t, pid, seq, 1);
		c->steps = g->steps;
		c->mine = 1;
		if (!c->asked_ns)
			c->asked_ns = g->asked_ns;
	} else {
		pt_capture_refused(t, pid, why ? why : "");
		c = &t->captures->v[t->captures->n - 1];
	}
	c->group = g->id;
	c->at_step = g->at_step;
	g->asked++;
	t->captures->gen++;
}

const struct pt_capture_group *pt_capture_group_latest(const struct pt_trace *t)
{
	const struct pt_capture_list *l = t->captures;
	return l && l->ngroups ? &l->groups[l->ngroups - 1] : NULL;
}

static int final(const struct pt_capture *c)
{
	return c->state == PT_CAPTURE_MERGED || c->state == PT_CAPTURE_FAILED ||
	       c->state == PT_CAPTURE_CANCELLED || c->state == PT_CAPTURE_REFUSED;
}

int pt_capture_group_over(const struct pt_trace *t, const struct pt_capture_group *g)
{
	const struct pt_capture_list *l = t->captures;
	uint32_t members = 0;
	for (uint32_t i = 0; l && i < l->n; i++) {
		if (l->v[i].group != g->id)
			continue;
		members++;
		if (!final(&l->v[i]))
			return 0;
	}
	return members > 0;
}

void pt_capture_list_free(struct pt_capture_list *l)
{
	if (!l)
		return;
	free(l->v);
	free(l->groups);
	free(l);
}

static uint64_t median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, pt_u64_cmp);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

int pt_capture_steps_from(struct pt_trace *t, int64_t pid, uint64_t t0_ns)
{
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		const struct pt_track *track = &t->tracks[tr];
		if (track->key.pid != pid || track->key.pid_str || !track->steps ||
		    pt_track_is_device(track))
			continue;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, 0, t0_ns);
		struct pt_event *ev;
		int found = 0;
		while (!found && (ev = pt_store_iter_next(&it)))
			found = ev->kind == PT_KIND_PROFILE_STEP && pt_event_end(ev) <= t0_ns;
		pt_store_iter_done(&it);
		if (found)
			return 1;
	}
	return 0;
}

uint32_t pt_capture_cost_want(const struct pt_capture *c)
{
	uint32_t want = c->steps > 5 ? c->steps : 5;
	return want > 64 ? 64 : want;
}

void pt_capture_cost(struct pt_trace *t, struct pt_capture *c, int full)
{
	if (!c->t0_ns || !c->t1_ns)
		return;
	uint32_t want = pt_capture_cost_want(c);
	uint64_t *before = pt_xcalloc(want, sizeof *before);
	uint64_t *after = pt_xcalloc(want, sizeof *after);
	size_t nb_total = 0, na = 0, nd = 0, dcap = 16;
	uint64_t *during = pt_xmalloc(dcap * sizeof *during);
	int64_t ordinal = 0, first = -1, last = -1;
	uint64_t w0 = UINT64_MAX, w1 = 0;
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		const struct pt_track *track = &t->tracks[tr];
		if (track->key.pid != c->pid || track->key.pid_str || !track->steps ||
		    pt_track_is_device(track))
			continue;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, full ? 0 : c->t1_ns, UINT64_MAX);
		/* after: once the job has written the trace (its writer thread
		 * shares the interpreter with the steps until then) */
		uint64_t after0 = c->t1_ns + c->write_ns;
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (ev->kind != PT_KIND_PROFILE_STEP)
				continue;
			uint64_t end = pt_event_end(ev);
			if (end <= c->t0_ns) {
				before[nb_total++ % want] = ev->dur_ns; /* the latest `want` */
			} else if (ev->start_ns >= c->t1_ns) {
				if (na < want && ev->start_ns >= after0)
					after[na++] = ev->dur_ns;
			} else {
				if (nd == dcap) {
					dcap *= 2;
					during = pt_xrealloc(during, dcap * sizeof *during);
				}
				during[nd++] = ev->dur_ns;
				if (first < 0)
					first = ordinal;
				last = ordinal;
				if (ev->start_ns < w0)
					w0 = ev->start_ns;
				if (end > w1)
					w1 = end;
			}
			ordinal++;
		}
		pt_store_iter_done(&it);
		break; /* the helper steps on one thread: its first step track */
	}
	if (full) {
		size_t nb = nb_total < want ? nb_total : want;
		if (nd != c->during_n || nb != c->before_n)
			pt_capture_touch(t); /* the figures a screen shows changed */
		int64_t dropped = (int64_t)pt_store_dropped_steps(t->store);
		c->first_step = first >= 0 ? first + dropped : -1;
		c->last_step = last >= 0 ? last + dropped : -1;
		/* the job's own count: right even for a reader that attached late
		 * (whose ordinals start at what it saw) */
		if (c->job_first_step >= 0 && nd) {
			c->first_step = c->job_first_step;
			c->last_step = c->job_first_step + (int64_t)nd - 1;
		}
		c->before_n = (uint32_t)nb;
		c->before_ns = median(before, nb);
		c->during_n = (uint32_t)nd;
		c->during_ns = median(during, nd);
		c->win0_ns = nd ? w0 : c->t0_ns;
		c->win1_ns = nd ? w1 : c->t1_ns;
	}
	if (na != c->after_n) {
		c->after_n = (uint32_t)na;
		c->after_ns = median(after, na);
		pt_capture_touch(t);
	}
	free(before);
	free(after);
	free(during);
}

/* ---- the line ---- */

static void ms(struct pt_buf *b, uint64_t ns)
{
	double v = (double)ns / 1e6;
	pt_buf_printf(b, v >= 100 ? "%.0f ms" : v >= 10 ? "%.1f ms" : "%.2f ms", v);
}

void pt_capture_describe(const struct pt_capture *c, char *buf, size_t len, int brief)
{
	struct pt_buf b = {0};
	char esc[300];
	pt_escape_term(esc, sizeof esc, c->msg, strnlen(c->msg, sizeof c->msg), 0, 0);
	if (c->state == PT_CAPTURE_REFUSED) {
		pt_buf_printf(&b, "capture not started: %s", esc);
		goto out;
	}
	pt_buf_printf(&b, "capture #%u", c->seq);
	if (!brief)
		pt_buf_printf(&b, " (pid %lld)", (long long)c->pid);
	pt_buf_printf(&b, ": ");
	switch (c->state) {
	case PT_CAPTURE_ASKED:
		pt_buf_printf(&b, "%u steps asked for, waiting for the job's next step boundary",
			      c->steps);
		break;
	case PT_CAPTURE_RUNNING:
		pt_buf_printf(&b, "running, step %u of %u", c->done, c->steps);
		break;
	case PT_CAPTURE_WRITING:
		pt_buf_printf(&b, "%u steps recorded, the job writes the trace", c->done);
		break;
	case PT_CAPTURE_FAILED:
		pt_buf_printf(&b, "failed: %s", esc);
		break;
	case PT_CAPTURE_CANCELLED:
		pt_buf_printf(&b, "cancelled: %s", esc);
		break;
	case PT_CAPTURE_MERGED:
		if (brief && c->saved[0]) {
			/* the status line: the file first, it is what the user opens */
			const char *base = strrchr(c->saved, '/');
			base = base ? base + 1 : c->saved;
			char sv[600];
			pt_escape_term(sv, sizeof sv, base, strlen(base), 0, 0);
			pt_buf_printf(&b, "saved %s, ", sv);
		}
		if (c->first_step >= 0)
			pt_buf_printf(&b, "steps %lld-%lld", (long long)c->first_step,
				      (long long)c->last_step);
		else
			pt_buf_printf(&b, "%u steps", c->done);
		if (!brief)
			pt_buf_printf(&b, ", %llu events", (unsigned long long)c->events);
		if (c->during_n && c->before_n && brief) {
			/* the ratio before the figures: at 80 columns it is what stays */
			pt_buf_printf(&b, ", step time x%.2f (",
				      c->before_ns ? (double)c->during_ns / (double)c->before_ns : 0.0);
			ms(&b, c->during_ns);
			pt_buf_printf(&b, " vs ");
			ms(&b, c->before_ns);
			pt_buf_printf(&b, " before");
			if (c->after_n) {
				pt_buf_printf(&b, ", ");
				ms(&b, c->after_ns);
				pt_buf_printf(&b, " after");
			}
			pt_buf_printf(&b, ")");
		} else if (c->during_n && c->before_n) {
			pt_buf_printf(&b, "; step ");
			ms(&b, c->during_ns);
			pt_buf_printf(&b, " during vs ");
			ms(&b, c->before_ns);
			pt_buf_printf(&b, " before (x%.2f)",
				      c->before_ns ? (double)c->during_ns / (double)c->before_ns : 0.0);
			if (c->after_n) {
				pt_buf_printf(&b, ", ");
				ms(&b, c->after_ns);
				pt_buf_printf(&b, " after");
			}
		}
		if (!brief) {
			pt_buf_printf(&b, "; start blocked ");
			ms(&b, c->start_block_ns);
			pt_buf_printf(&b, ", stop ");
			ms(&b, c->stop_block_ns);
			pt_buf_printf(&b, "; written in ");
			ms(&b, c->write_ns);
			pt_buf_printf(&b, " (%s)", esc);
		}
		if (c->saved[0] && !brief) {
			char sv[600];
			pt_escape_term(sv, sizeof sv, c->saved, strlen(c->saved), 0, 0);
			pt_buf_printf(&b, "; saved %s", sv);
		}
		break;
	}
out:
	snprintf(buf, len, "%.*s", (int)b.len, b.p ? b.p : "");
	pt_buf_free(&b);
}

/* ---- a group's line ---- */

void pt_capture_group_describe(const struct pt_trace *t, const struct pt_capture_group *g,
			       char *buf, size_t len, int brief)
{
	const struct pt_capture_list *l = t->captures;
	struct pt_buf b = {0};
	uint32_t n[PT_CAPTURE_REFUSED + 1] = {0}, members = 0;
	const struct pt_capture *bad = NULL;
	uint64_t during[CAPTURE_KEEP], before[CAPTURE_KEEP], after[CAPTURE_KEEP];
	size_t nd = 0, nb = 0, na = 0;
	for (uint32_t i = 0; l && i < l->n; i++) {
		const struct pt_capture *c = &l->v[i];
		if (c->group != g->id)
			continue;
		members++;
		n[c->state <= PT_CAPTURE_REFUSED ? c->state : PT_CAPTURE_FAILED]++;
		if (!bad && (c->state == PT_CAPTURE_FAILED || c->state == PT_CAPTURE_CANCELLED ||
			     c->state == PT_CAPTURE_REFUSED))
			bad = c;
		if (c->state == PT_CAPTURE_MERGED && c->during_n && c->before_n) {
			during[nd++] = c->during_ns;
			before[nb++] = c->before_ns;
			if (c->after_n)
				after[na++] = c->after_ns;
		}
	}
	pt_buf_printf(&b, "capture of steps ");
	if (g->at_step >= 0)
		pt_buf_printf(&b, "%lld-%lld", (long long)g->at_step,
			      (long long)(g->at_step + g->steps - 1));
	else
		pt_buf_printf(&b, "(next %u)", g->steps);
	pt_buf_printf(&b, " on %u ranks: ", members);
	if (!pt_capture_group_over(t, g)) {
		const char *sep = "";
		if (n[PT_CAPTURE_ASKED]) {
			pt_buf_printf(&b, "%u waiting for step %lld", n[PT_CAPTURE_ASKED],
				      (long long)g->at_step);
			sep = ", ";
		}
		if (n[PT_CAPTURE_RUNNING]) {
			pt_buf_printf(&b, "%s%u running", sep, n[PT_CAPTURE_RUNNING]);
			sep = ", ";
		}
		if (n[PT_CAPTURE_WRITING]) {
			pt_buf_printf(&b, "%s%u writing", sep, n[PT_CAPTURE_WRITING]);
			sep = ", ";
		}
		if (n[PT_CAPTURE_MERGED]) {
			pt_buf_printf(&b, "%s%u merged", sep, n[PT_CAPTURE_MERGED]);
			sep = ", ";
		}
		uint32_t nbad = n[PT_CAPTURE_FAILED] + n[PT_CAPTURE_CANCELLED] + n[PT_CAPTURE_REFUSED];
		if (nbad)
			pt_buf_printf(&b, "%s%u not captured", sep, nbad);
	} else if (g->saved[0]) {
		const char *dir = g->saved;
		if (brief) {
			const char *s = strrchr(dir, '/');
			dir = s ? s + 1 : dir;
		}
		char sv[600];
		pt_escape_term(sv, sizeof sv, dir, strlen(dir), 0, 0);
		pt_buf_printf(&b, "saved %s/", sv);
		if (n[PT_CAPTURE_MERGED] != members)
			pt_buf_printf(&b, " (%u of %u ranks)", n[PT_CAPTURE_MERGED], members);
		if (nd) {
			uint64_t d = median(during, nd), bf = median(before, nb);
			pt_buf_printf(&b, ", step time x%.2f (", bf ? (double)d / (double)bf : 0.0);
			ms(&b, d);
			pt_buf_printf(&b, " vs ");
			ms(&b, bf);
			pt_buf_printf(&b, " before");
			if (na) {
				pt_buf_printf(&b, ", ");
				ms(&b, median(after, na));
				pt_buf_printf(&b, " after");
			}
			pt_buf_printf(&b, ", medians of the ranks)");
		}
	} else if (g->save_failed) {
		char esc[300];
		pt_escape_term(esc, sizeof esc, g->save_err, strnlen(g->save_err, sizeof g->save_err),
			       0, 0);
		pt_buf_printf(&b, "%u merged, not saved: %s", n[PT_CAPTURE_MERGED], esc);
	} else {
		pt_buf_printf(&b, "%u of %u merged", n[PT_CAPTURE_MERGED], members);
	}
	if (bad) {
		char esc[300];
		pt_escape_term(esc, sizeof esc, bad->msg, strnlen(bad->msg, sizeof bad->msg), 0, 0);
		char who[40];
		pt_trace_proc_name(t, bad->pid, who, sizeof who);
		pt_buf_printf(&b, "; %s %s: %s", who,
			      bad->state == PT_CAPTURE_CANCELLED ? "cancelled"
			      : bad->state == PT_CAPTURE_REFUSED ? "not asked"
								  : "failed",
			      esc);
	}
	if (!brief && g->why[0]) {
		char esc[300];
		pt_escape_term(esc, sizeof esc, g->why, strnlen(g->why, sizeof g->why), 0, 0);
		pt_buf_printf(&b, " (asked: %s)", esc);
	}
	snprintf(buf, len, "%.*s", (int)b.len, b.p ? b.p : "");
	pt_buf_free(&b);
}
