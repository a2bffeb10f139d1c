/*
 * testutil.h - shared helpers for the cmocka unit tests: where fixtures and
 * the shared real traces live, and a terse way to build small traces whose
 * answers are computed by hand.
 */
#ifndef PT_TESTUTIL_H
#define PT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proftop/chrome.h"
#include "proftop/trace.h"

/* Directory of the project's fixtures (PT_FIXTURES, else "fixtures"). */
static inline const char *tu_fixtures(void)
{
	const char *d = getenv("PT_FIXTURES");
	return d && *d ? d : "fixtures";
}

/* Directory of the real traces other tools wrote (PT_TRACES, else "fixtures/traces"). */
static inline const char *tu_traces(void)
{
	/* Under valgrind (50x slower) the shared real traces are left to the
	 * plain and ASan passes; the synthetic tests and fixtures still run. */
	if (getenv("PT_UNDER_VALGRIND"))
		return "/nonexistent/shared-traces-skipped-under-valgrind";
	const char *d = getenv("PT_TRACES");
	return d && *d ? d : "fixtures/traces";
}

/* Whether the i-th of a list of fixtures runs: every one, but under
 * valgrind every `every`-th (the same code on more files finds nothing new
 * there, at 50x the time; the plain and ASan passes run them all). */
static inline int tu_sampled(size_t i, size_t every)
{
	return !getenv("PT_UNDER_VALGRIND") || i % every == 0;
}

static inline char *tu_path(const char *dir, const char *name)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ & 3];
	snprintf(b, sizeof buf[0], "%s/%s", dir, name);
	return b;
}

/* A host thread (pid, tid) or, with device >= 0, a device stream. */
static inline uint32_t tu_track(struct pt_trace *t, int64_t pid, int64_t tid, int device)
{
	struct pt_track_key k = {pid, tid, 0, 0};
	uint32_t id = pt_trace_track(t, &k);
	if (device >= 0)
		pt_trace_track_device(t, id, device, tid);
	return id;
}

/* Adds an event; times in microseconds for readability. */
static inline void tu_ev(struct pt_trace *t, uint32_t track, enum pt_kind kind, const char *name,
			 double start_us, double dur_us, uint32_t corr)
{
	struct pt_event ev = {0};
	ev.start_ns = (uint64_t)(start_us * 1000.0 + 0.5);
	ev.dur_ns = (uint64_t)(dur_us * 1000.0 + 0.5);
	ev.name_id = pt_trace_intern(t, name, strlen(name));
	ev.track_id = track;
	ev.corr = corr;
	ev.kind = (uint8_t)kind;
	pt_trace_add(t, &ev);
}

#define US(x) ((uint64_t)((x)*1000.0 + 0.5))

/* The ProfileStep events the store keeps that start before t0 (how a window
 * from t0 numbers its unnumbered steps: pt_agg_opts.step_ordinal0). */
struct tu_steps_before {
	uint64_t t0, n;
};
static inline int tu_step_before(void *ctx, struct pt_event *ev)
{
	struct tu_steps_before *c = (struct tu_steps_before *)ctx;
	c->n += ev->kind == PT_KIND_PROFILE_STEP && ev->start_ns < c->t0;
	return 0;
}
static inline uint64_t tu_steps_before(struct pt_trace *t, uint64_t t0)
{
	struct tu_steps_before c = {t0, 0};
	pt_store_foreach(t->store, tu_step_before, &c);
	return c.n;
}

/* The trace file dir/rel read whole, or NULL when it is absent or the
 * reader refuses it (said as a test message): tests then skip. */
static inline struct pt_trace *tu_load_trace(const char *dir, const char *rel)
{
	const char *path = tu_path(dir, rel);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fclose(f);
	struct pt_trace *t = pt_trace_new(0);
	struct pt_read_opts ro = {0};
	char err[512] = "";
	if (pt_chrome_read(t, path, &ro, err, sizeof err) < 0) {
		print_message("# reader refused %s: %s\n", path, err);
		pt_trace_free(t);
		return NULL;
	}
	return t;
}

/* An empty trace with src's names (same ids), tracks and processes, to
 * replay src's events into (as a live session receives them). */
static inline struct pt_trace *tu_shell_of(const struct pt_trace *src, size_t max_mem)
{
	struct pt_trace *t = pt_trace_new(max_mem);
	uint32_t n = pt_strtab_count(src->strings);
	for (uint32_t id = 1; id < n; id++) {
		uint32_t got =
		    pt_trace_intern(t, pt_trace_str(src, id), pt_strtab_len(src->strings, id));
		assert_int_equal(got, id);
	}
	for (uint32_t i = 0; i < src->ntracks; i++) {
		const struct pt_track *tr = &src->tracks[i];
		assert_int_equal(pt_trace_track(t, &tr->key), i);
		if (tr->device >= 0)
			pt_trace_track_device(t, i, tr->device, tr->stream);
		if (tr->label)
			pt_trace_set_thread_label(t, &tr->key, tr->label);
		if (tr->process_label)
			pt_trace_set_process_label(t, &tr->key, tr->process_label);
	}
	for (size_t i = 0; i < src->nprocs; i++) {
		const struct pt_proc *p = &src->procs[i];
		pt_trace_set_proc(t, p->pid, p->rank, p->host ? pt_trace_str(src, p->host) : NULL);
	}
	return t;
}

/* How a live session receives events: each when it ends (a probe records
 * a range when it closes), device activities in late batches (CUPTI
 * flushes its buffers every so often: every seventh of the span here), or
 * in start order (a file). */
enum tu_order { TU_BY_END, TU_DEVICE_LATE, TU_BY_START };

struct tu_arrival {
	uint64_t at;
	struct pt_event ev;
};

struct tu_arrivals {
	struct tu_arrival *v;
	size_t n, cap;
	const struct pt_trace *t;
	enum tu_order order;
	uint64_t flush_ns;
};

static inline int tu_arrival_cmp(const void *pa, const void *pb)
{
	const struct tu_arrival *a = pa, *b = pb;
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	/* ranges closing together: the inner one first, as they close */
	if (a->ev.start_ns != b->ev.start_ns)
		return a->ev.start_ns > b->ev.start_ns ? -1 : 1;
	return a->ev.dur_ns < b->ev.dur_ns ? -1 : a->ev.dur_ns > b->ev.dur_ns;
}

static inline int tu_arrival_add(void *ctx, struct pt_event *ev)
{
	struct tu_arrivals *c = ctx;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 1024;
		c->v = realloc(c->v, c->cap * sizeof *c->v);
		assert_non_null(c->v);
	}
	uint64_t at = c->order == TU_BY_START ? ev->start_ns : pt_event_end(ev);
	if (c->order == TU_DEVICE_LATE && ev->track_id < c->t->ntracks &&
	    pt_track_is_device(&c->t->tracks[ev->track_id]))
		at = (at / c->flush_ns + 1) * c->flush_ns; /* the next flush */
	c->v[c->n++] = (struct tu_arrival){at, *ev};
	return 0;
}

/* src's events in the order a live session would receive them (v: free it). */
static inline struct tu_arrivals tu_arrivals(struct pt_trace *src, enum tu_order order)
{
	struct tu_arrivals c = {NULL, 0, 0, src, order, 0};
	uint64_t span = src->last_ns > src->first_ns ? src->last_ns - src->first_ns : 1;
	c.flush_ns = span / 7 + 1;
	pt_store_foreach(src->store, tu_arrival_add, &c);
	qsort(c.v, c.n, sizeof *c.v, tu_arrival_cmp);
	return c;
}

#endif
