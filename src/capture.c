/*
 * capture.c - deep captures in a live trace (capture.h): the list the
 * session reader keeps, merging a capture's Chrome trace into the live
 * trace on the session clock, the capture's cost measured from the
 * process's own steps, and the line that describes it.
 *
 * Alignment: the job records a marker range "proftop/sync#<seq>" inside
 * torch's profiler and reads the session clock just before (lo) and just
 * after (hi) it (the last of its tries, when a bracket came out too wide). On the session clock the marker lies within [lo, hi], so
 * the offset o between the trace's clock and the session's satisfies
 * lo - m.start <= o <= hi - m.end; the middle of that interval is taken,
 * and half its width is the alignment's uncertainty. Torch's clock (the
 * legacy profiler's microseconds since its start, Kineto's wall-clock
 * microseconds) needs nothing else, whatever its origin.
 */
#include "proftop/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/chrome.h"
#include "proftop/error.h"
#include "u32map.h"
#include "util.h"

#define CAPTURE_MAX_MEM ((size_t)512 << 20) /* a capture's own trace while merging */
#define CAPTURE_KEEP 32u                     /* captures remembered per trace */

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
	c->first_step = c->last_step = c->job_first_step = -1;
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

void pt_capture_list_free(struct pt_capture_list *l)
{
	if (!l)
		return;
	free(l->v);
	free(l);
}

/* ---- merging ---- */

struct find_ctx {
	uint32_t name;
	const struct pt_event *m;
	uint64_t steps;
};

/* The job records the marker again while its bracket was too wide (the
 * thread preempted): the last one is the one bracketed. */
static int find_marker(void *ctx, struct pt_event *ev)
{
	struct find_ctx *f = ctx;
	if (ev->name_id == f->name && ev->kind != PT_KIND_INSTANT &&
	    (!f->m || ev->start_ns > f->m->start_ns))
		f->m = ev;
	return 0;
}

struct merge_ctx {
	struct pt_trace *dst;
	const struct pt_trace *src;
	const struct pt_event *marker;
	int64_t off;           /* dst = src + off */
	uint32_t *track_map;   /* src track -> dst track + 1 */
	struct pt_u32map names;
	int64_t pid;
	int32_t tid;
	uint64_t events, flop_events, skipped;
	uint64_t t_min, t_max;
};

static uint32_t map_name(struct merge_ctx *m, uint32_t id)
{
	if (!id)
		return 0;
	uint32_t v = pt_u32map_get(&m->names, id);
	if (v)
		return v - 1;
	const char *s = pt_trace_str(m->src, id);
	v = pt_trace_intern(m->dst, s, pt_strtab_len(m->src->strings, id));
	pt_u32map_put(&m->names, id, v + 1);
	return v;
}

static uint32_t map_track(struct merge_ctx *m, uint32_t src_track)
{
	if (m->track_map[src_track])
		return m->track_map[src_track] - 1;
	const struct pt_track *st = &m->src->tracks[src_track];
	struct pt_track_key k = {m->pid, 0, 0, 0};
	uint32_t id;
	if (pt_track_is_device(st)) {
		/* as the session reader names device streams: "GPU n", stream */
		char label[32];
		int n = snprintf(label, sizeof label, "GPU %d", (int)st->device);
		k.tid = st->stream;
		k.pid_str = pt_trace_intern(m->dst, label, (size_t)n);
		id = pt_trace_track(m->dst, &k);
		pt_trace_track_device(m->dst, id, st->device, st->stream);
	} else {
		const struct pt_track *mt = &m->src->tracks[m->marker->track_id];
		if (st->key.pid == mt->key.pid && st->key.pid_str == mt->key.pid_str &&
		    st->key.tid == mt->key.tid && st->key.tid_str == mt->key.tid_str) {
			k.tid = m->tid; /* the thread whose steps were captured */
		} else if (st->key.tid_str) {
			k.tid_str = map_name(m, st->key.tid_str);
		} else {
			k.tid = st->key.tid; /* Kineto: the system's thread id */
		}
		id = pt_trace_track(m->dst, &k);
		if (st->label && !m->dst->tracks[id].label)
			pt_trace_set_thread_label(m->dst, &k, map_name(m, st->label));
	}
	m->track_map[src_track] = id + 1;
	return id;
}

static int add_event(void *ctx, struct pt_event *ev)
{
	struct merge_ctx *m = ctx;
	if (ev->name_id == m->marker->name_id || ev->kind == PT_KIND_PROFILE_STEP ||
	    (ev->flags & PT_EVF_INTERNAL) || ev->kind == PT_KIND_COUNTER) {
		m->skipped++;
		return 0;
	}
	int64_t start = (int64_t)ev->start_ns + m->off;
	if (start < 0) {
		m->skipped++;
		return 0;
	}
	struct pt_event e = *ev;
	e.start_ns = (uint64_t)start;
	e.name_id = map_name(m, ev->name_id);
	e.track_id = map_track(m, ev->track_id);
	/* apart from proftop's own CUPTI ids (which stay below 2^31) */
	if (e.corr)
		e.corr |= 0x80000000u;
	pt_trace_add(m->dst, &e);
	m->events++;
	if (e.flags & PT_EVF_FLOPS)
		m->flop_events++;
	if (e.start_ns < m->t_min)
		m->t_min = e.start_ns;
	if (pt_event_end(&e) > m->t_max)
		m->t_max = pt_event_end(&e);
	return 0;
}

static void add_instant(struct pt_trace *t, int64_t pid, int32_t tid, uint64_t at, const char *name)
{
	struct pt_track_key k = {pid, tid, 0, 0};
	struct pt_event e = {0};
	e.start_ns = at;
	e.name_id = pt_trace_intern(t, name, strlen(name));
	e.track_id = pt_trace_track(t, &k);
	e.kind = PT_KIND_INSTANT;
	pt_trace_add(t, &e);
}

int pt_capture_merge(struct pt_trace *t, struct pt_capture *c, const char *path, int32_t tid,
		     uint64_t sync_lo_ns, uint64_t sync_hi_ns, char *err, size_t errlen)
{
	struct pt_trace *src = pt_trace_new(CAPTURE_MAX_MEM);
	/* the job wrote it: a regular file of ours, read up to its size */
	struct pt_read_opts ro = {.threads = 1, .job_file = 1};
	int rc = pt_chrome_read(src, path, &ro, err, errlen);
	if (rc) {
		pt_trace_free(src);
		return rc;
	}
	char mname[48];
	int ml = snprintf(mname, sizeof mname, "proftop/sync#%u", c->seq);
	struct find_ctx f = {pt_strtab_find(src->strings, mname, (size_t)ml), NULL, 0};
	if (f.name)
		pt_store_foreach(src->store, find_marker, &f);
	if (!f.m) {
		snprintf(err, errlen, "%s: no marker %s in the capture: cannot place it in time", path,
			 mname);
		pt_trace_free(src);
		return PT_EFORMAT;
	}
	if (sync_hi_ns < sync_lo_ns || !sync_lo_ns) {
		snprintf(err, errlen, "the job reported no clock bracket for capture #%u", c->seq);
		pt_trace_free(src);
		return PT_EFORMAT;
	}
	int64_t lo = (int64_t)sync_lo_ns - (int64_t)f.m->start_ns;
	int64_t hi = (int64_t)sync_hi_ns - (int64_t)pt_event_end(f.m);
	struct merge_ctx m;
	memset(&m, 0, sizeof m);
	m.off = lo <= hi ? lo + (hi - lo) / 2
			 : (int64_t)(sync_lo_ns / 2 + sync_hi_ns / 2) -
			       (int64_t)(f.m->start_ns + f.m->dur_ns / 2);
	c->sync_err_ns = (uint64_t)(lo <= hi ? (hi - lo) / 2 : (lo - hi) / 2);
	m.dst = t;
	m.src = src;
	m.marker = f.m;
	m.pid = c->pid;
	m.tid = tid;
	m.t_min = UINT64_MAX;
	m.track_map = pt_xcalloc(src->ntracks + 1, sizeof *m.track_map);
	pt_store_foreach(src->store, add_event, &m);
	if (src->device_name && !t->device_name) { /* Kineto's deviceProperties: the peak */
		const char *dn = pt_trace_str(src, src->device_name);
		t->device_name = pt_trace_intern(t, dn, strlen(dn));
	}
	c->events = m.events;
	c->flop_events = m.flop_events;
	char label[64];
	snprintf(label, sizeof label, "torch.profiler capture #%u begins", c->seq);
	add_instant(t, c->pid, tid, c->t0_ns ? c->t0_ns : m.t_min, label);
	snprintf(label, sizeof label, "torch.profiler capture #%u ends", c->seq);
	add_instant(t, c->pid, tid, c->t1_ns ? c->t1_ns : m.t_max, label);
	free(m.track_map);
	pt_u32map_free(&m.names);
	pt_trace_free(src);
	pt_capture_touch(t);
	return 0;
}

/* ---- cost ---- */

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

int pt_capture_save(struct pt_trace *t, struct pt_capture *c, const char *path, const char *dir,
		    char *err, size_t errlen)
{
	struct pt_export_opts eo;
	memset(&eo, 0, sizeof eo);
	eo.t0_ns = c->win0_ns ? c->win0_ns : c->t0_ns;
	eo.t1_ns = c->win1_ns ? c->win1_ns : c->t1_ns; /* the next step starts there */
	char name[sizeof c->saved - 1];
	int rc = PT_EEXIST;
	if (path) {
		eo.force = 1;
		snprintf(name, sizeof name, "%s", path);
		rc = pt_chrome_export(t, name, &eo, err, errlen);
	} else {
		for (int i = 1; i <= 100 && rc == PT_EEXIST; i++) {
			char sfx[16] = "";
			if (i > 1)
				snprintf(sfx, sizeof sfx, "-%d", i);
			snprintf(name, sizeof name, "%s%sproftop-capture-%lld-%u%s.json", dir ? dir : "",
				 dir ? "/" : "", (long long)c->pid, c->seq, sfx);
			rc = pt_chrome_export(t, name, &eo, err, errlen);
		}
	}
	if (rc == 0)
		snprintf(c->saved, sizeof c->saved, "%s", name);
	else
		c->save_failed = 1;
	pt_capture_touch(t);
	return rc;
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
