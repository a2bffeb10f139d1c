/*
 * timeline.h - the timeline's model, independent of any drawing library:
 * lanes (one per host thread and per device stream, in a stable order), and
 * the bucketing of a time range into W columns per lane (which event wins a
 * cell), plus the queries the TUI needs for its cursor (event at/next to a
 * time on a lane, step boundaries). tui/ draws what this computes.
 *
 * Bucketing rule (which event wins a cell): among the events overlapping the
 * cell's time range [t0 + c*w, t0 + (c+1)*w), the one covering most of the
 * cell wins; ties go to the shallower event (nesting depth on its lane),
 * then the earlier start. A cell no event overlaps is empty. An event
 * narrower than a cell still shows (it covers a fraction of the cell).
 *
 * Cost: O(events in range on the lane + W) per lane via the store's sorted
 * per-track iteration; rendering a 200x60 screen over a million-event store
 * must stay under 5 ms (bench/bench_timeline.c).
 *
 * Threading: reads the trace; call while no writer runs.
 */
#ifndef PROFTOP_TIMELINE_H
#define PROFTOP_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/event.h"
#include "proftop/trace.h"

struct pt_lane {
	uint32_t track;    /* trace track id */
	int is_device;
	char label[64];    /* escaped, printable: "python main thread", "GPU 0 stream 7" */
};

/* Lanes in display order: host threads (steps' thread first), then device streams. */
size_t pt_timeline_lanes(const struct pt_trace *t, struct pt_lane *out, size_t max);

struct pt_cell {
	uint8_t kind;      /* enum pt_kind of the winner; PT_KIND__COUNT = empty */
	uint8_t starts;    /* 1 when the winner starts inside this cell */
	uint16_t depth;
	uint32_t name_id;  /* winner's name */
	uint64_t start_ns, dur_ns;
};

/*
 * Fills cells[0..width) for lane `track` over [t0_ns, t1_ns).
 * Returns the number of events visited.
 */
size_t pt_timeline_bucket(struct pt_trace *t, uint32_t track, uint64_t t0_ns, uint64_t t1_ns,
			  struct pt_cell *cells, size_t width);

/*
 * The event on track nearest to time t (containing it, else the closest
 * start), deepest first when nested. dir = 0: at t; +1: the next event
 * starting after t; -1: the previous event starting before t. Returns 0 and
 * fills *out, or PT_ENOENT.
 */
int pt_timeline_event_at(struct pt_trace *t, uint32_t track, uint64_t t_ns, int dir,
			 struct pt_event *out);

/* Start of the step after (dir=+1) or before (dir=-1) time t; PT_ENOENT if none. */
int pt_timeline_step_edge(struct pt_trace *t, uint64_t t_ns, int dir, uint64_t *out_ns,
			  uint64_t *out_end_ns);

/* Device activities whose corr equals corr (the kernels a launch started), up to max. */
size_t pt_timeline_correlated(struct pt_trace *t, uint32_t corr, struct pt_event *out,
			      size_t max);

/* A ruler step (1, 2, 5 x 10^k ns) giving about `ticks` ticks over span_ns,
 * and the text of a duration with its unit ("12.5 ms", "800 us", "3 s"): ASCII "us",
 * three significant digits, no locale. */
uint64_t pt_timeline_tick_ns(uint64_t span_ns, unsigned ticks);
void pt_format_duration(char *buf, size_t len, uint64_t ns);

/*
 * The cache (an addition to the calls above): a per-track index built on a
 * track's first use (start, end and nesting depth of its events in start
 * order, about 26 bytes per event, plus per-block summaries of about 6 bytes per
 * event) and rebuilt when that track's event count or the store's drop
 * count changes; also the list of step events, remade after any append.
 * With it a 200-column frame over a million events costs a few events per
 * cell instead of every event (bench/bench_timeline.c). The plain calls
 * above build a throwaway cache per call (O(events on the lane)); the TUI
 * keeps one cache per trace and uses the calls below, which answer exactly
 * as the plain ones do. A cache follows one trace: given another, it starts
 * over. It points into the store: use it only while no writer runs, and
 * from one thread at a time.
 */
struct pt_timeline_cache;
struct pt_timeline_cache *pt_timeline_cache_new(void);
void pt_timeline_cache_free(struct pt_timeline_cache *c);
size_t pt_timeline_cache_lanes(struct pt_timeline_cache *c, const struct pt_trace *t,
			       struct pt_lane *out, size_t max);
size_t pt_timeline_cache_bucket(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
				uint64_t t0_ns, uint64_t t1_ns, struct pt_cell *cells, size_t width);
int pt_timeline_cache_event_at(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
			       uint64_t t_ns, int dir, struct pt_event *out);
int pt_timeline_cache_step_edge(struct pt_timeline_cache *c, const struct pt_trace *t,
				uint64_t t_ns, int dir, uint64_t *out_ns, uint64_t *out_end_ns);

#endif
