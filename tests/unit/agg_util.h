/*
 * agg_util.h - what the aggregator's tests share (test_agg*.c): a trace of
 * hand-built events (times in µs), its whole summary, and rows by name.
 */
#ifndef AGG_UTIL_H
#define AGG_UTIL_H

#include "testutil.h"

#include <math.h>

#include "proftop/advisor.h"
#include "proftop/agg.h"

static inline struct pt_trace *new_trace(void)
{
	return pt_trace_new(64 << 20);
}

/* Adds an event with flags and an argument. */
static inline void ev_full(struct pt_trace *t, uint32_t track, enum pt_kind kind, const char *name,
		    double start_us, double dur_us, uint32_t corr, uint8_t flags, uint64_t arg)
{
	struct pt_event ev = {0};
	ev.start_ns = US(start_us);
	ev.dur_ns = US(dur_us);
	ev.name_id = pt_trace_intern(t, name, strlen(name));
	ev.track_id = track;
	ev.corr = corr;
	ev.kind = (uint8_t)kind;
	ev.flags = flags;
	ev.arg = arg;
	pt_trace_add(t, &ev);
}

static inline struct pt_summary *summarize_all(struct pt_trace *t)
{
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	return pt_summarize(t, &o);
}

static inline const struct pt_row *find_row(struct pt_trace *t, const struct pt_table *tb,
				     const char *name, int is_device)
{
	uint32_t id = pt_strtab_find(t->strings, name, strlen(name));
	for (size_t i = 0; i < tb->n; i++)
		if (tb->rows[i].name_id == id && tb->rows[i].is_device == is_device)
			return &tb->rows[i];
	fail_msg("row %s not found", name);
	return NULL;
}

static inline const char *row_name(struct pt_trace *t, const struct pt_row *r)
{
	return pt_trace_str(t, r->name_id);
}

/* Paddle's Overview example: thread 1 ops [0,10) [14,20), thread 2
 * [2,12) [18,19): merged [0,12) [14,20) = 18 µs. */

#endif
