/*
 * timeline.h - the timeline's model, independent of any drawing library:
 * lanes (one per host thread and per device stream, in a stable order),
 * each lane a stack of rows by nesting depth (a flame chart, as Perfetto
 * draws a thread), the bucketing of a time range into W cells per row
 * (which event wins a cell), and the queries the TUI needs: the event at or
 * next to a time, an event's parent, self time and correlated activity, the
 * steps (in time order, by duration, by number), and search. tui/ draws
 * what this computes.
 *
 * Nesting: on each track, events are taken in start order; an event's depth
 * is one more than the depth of the latest-started event still open at its
 * start (0 when none is). So events of one depth never overlap: the next
 * one at a depth starts after the previous one there ended, and a row is a
 * sorted, disjoint list (binary search finds the event under a time).
 *
 * Bucketing rule (which event wins a cell of a row): among the row's events
 * overlapping the cell's time range [t0 + c*w, t0 + (c+1)*w), the one
 * covering most of the cell wins; ties go to the earlier start. A cell no
 * event overlaps is empty. An event narrower than a cell still shows.
 *
 * Everything goes through a cache (struct pt_timeline_cache) that keeps a
 * per-track index (start, end, name, kind and correlation of every event,
 * by row, plus per-block maxima so a zoomed-out row costs a few events per
 * cell), built on a track's first use and then kept up to date
 * incrementally: new events are indexed from the earliest start among them
 * (the store says where, pt_store_track_start_since), so a live session
 * pays for what arrived, not for what it holds. When the store's cap drops
 * old events, the index keeps what starts after pt_store_complete_from_ns
 * (what the screen says it reaches back to). The index copies what it
 * needs (about 26 bytes per event) and never points into the store.
 *
 * Threading: reads the trace; call while no writer runs, from one thread.
 */
#ifndef PROFTOP_TIMELINE_H
#define PROFTOP_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/event.h"
#include "proftop/trace.h"

struct pt_timeline_cache;
struct pt_timeline_cache *pt_timeline_cache_new(void);
void pt_timeline_cache_free(struct pt_timeline_cache *c);

/*
 * Brings the index up to date with the trace (every track; cheap when
 * nothing changed: one look at each track's append count). Every call
 * below does this itself; returns the number of events (re)indexed.
 */
size_t pt_timeline_update(struct pt_timeline_cache *c, struct pt_trace *t);
/* Changes whenever the indexed data changed (for callers' own caches). */
uint64_t pt_timeline_generation(const struct pt_timeline_cache *c);

struct pt_lane {
	uint32_t track; /* trace track id */
	int is_device;
	int device;	/* device index, -1 for a host thread */
	uint16_t nrows; /* nesting depths present (rows of the flame chart) */
	char label[64]; /* escaped, printable: "thread 12 (python)", "GPU 0 stream 7" */
};

/* Lanes in display order: host threads (steps' thread first), then device
 * streams by device and stream (a device's streams together). */
size_t pt_timeline_lanes(struct pt_timeline_cache *c, struct pt_trace *t, struct pt_lane *out,
			 size_t max);

struct pt_cell {
	uint8_t kind;	/* enum pt_kind of the winner; PT_KIND__COUNT = empty */
	uint8_t starts; /* 1 when the winner starts inside this cell */
	uint16_t depth;
	uint32_t name_id; /* winner's name */
	uint64_t start_ns, dur_ns;
};

/*
 * Fills cells[0..width) for row `depth` of lane `track` over [t0_ns, t1_ns).
 * Returns the number of events or blocks visited.
 */
size_t pt_timeline_bucket(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
			  unsigned depth, uint64_t t0_ns, uint64_t t1_ns, struct pt_cell *cells,
			  size_t width);
/* 1 when some event of the track overlaps [t0_ns, t1_ns). */
int pt_timeline_any_in(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track,
		       uint64_t t0_ns, uint64_t t1_ns);

/*
 * The event of row `depth` (or, with depth < 0, of any row: the deepest)
 * nearest to time t: dir = 0: the one containing t, else the closest start;
 * +1: the first starting after t; -1: the last starting before t.
 * Fills *out (arg is 0: the index does not keep it) and *out_depth; 0 or
 * PT_ENOENT.
 */
int pt_timeline_event_at(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track, int depth,
			 uint64_t t_ns, int dir, struct pt_event *out, unsigned *out_depth);
/* The event one row up containing ev's start (its parent); 0 or PT_ENOENT. */
int pt_timeline_parent(struct pt_timeline_cache *c, struct pt_trace *t, const struct pt_event *ev,
		       unsigned depth, struct pt_event *out);
/* ev's duration less the time its children (the row below) cover. */
uint64_t pt_timeline_self_ns(struct pt_timeline_cache *c, struct pt_trace *t,
			     const struct pt_event *ev, unsigned depth);

/* One step event, as the timeline lists them (start order over every track). */
struct pt_tl_step {
	uint64_t start_ns, end_ns;
	uint32_t track, name_id;
	int64_t number; /* the name's number, else the ordinal (dropped steps counted) */
};
/* The steps in start order (longer first on a tie, as the aggregator
 * numbers them); valid until the next call on the cache. The step list is
 * kept apart from the rows' index: the step calls do not build it. */
size_t pt_timeline_steps(struct pt_timeline_cache *c, struct pt_trace *t,
			 const struct pt_tl_step **out);
/* Index into the list of the k-th slowest step (k = 0: the slowest), -1 if none. */
long pt_timeline_step_by_rank(struct pt_timeline_cache *c, struct pt_trace *t, size_t k);
/* Index of the step numbered n (the first, if several ranks share it), -1 if none. */
long pt_timeline_step_by_number(struct pt_timeline_cache *c, struct pt_trace *t, int64_t n);
/* Index of the step containing t (the latest starting at or before t), -1 if none. */
long pt_timeline_step_at(struct pt_timeline_cache *c, struct pt_trace *t, uint64_t t_ns);
/* Start of the step after (dir=+1) or before (dir=-1) time t; PT_ENOENT if none. */
int pt_timeline_step_edge(struct pt_timeline_cache *c, struct pt_trace *t, uint64_t t_ns, int dir,
			  uint64_t *out_ns, uint64_t *out_end_ns);

/*
 * Correlation (a host launch and the device activity it started share a
 * correlation id): with device = 1, the device activities of corr; with
 * device = 0, the host events of corr. Up to max, in start order; their
 * rows in depths (may be NULL). The index behind it is made on first use
 * after a change.
 */
size_t pt_timeline_correlated(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t corr,
			      int device, struct pt_event *out, unsigned *depths, size_t max);
/* The device activities launched from inside ev (its descendants' correlation ids). */
size_t pt_timeline_launched(struct pt_timeline_cache *c, struct pt_trace *t,
			    const struct pt_event *ev, unsigned depth, struct pt_event *out,
			    unsigned *depths, size_t max);

/*
 * Search: the next (dir = +1: start > after_ns, earliest) or previous
 * (dir = -1: start < after_ns, latest) event on the given tracks whose name
 * id is marked in match[0..nmatch). 0 with *out / *out_depth, or PT_ENOENT.
 */
int pt_timeline_find(struct pt_timeline_cache *c, struct pt_trace *t, const uint8_t *match,
		     size_t nmatch, const uint32_t *tracks, size_t ntracks, uint64_t after_ns,
		     int dir, struct pt_event *out, unsigned *out_depth);

/* A ruler step (1, 2, 5 x 10^k ns) giving about `ticks` ticks over span_ns,
 * and the text of a duration with its unit ("12.5 ms", "800 us", "3 s"): ASCII "us",
 * three significant digits, no locale. */
uint64_t pt_timeline_tick_ns(uint64_t span_ns, unsigned ticks);
void pt_format_duration(char *buf, size_t len, uint64_t ns);
/*
 * A ruler label: v_ns in the unit of unit_ns's magnitude (the largest label
 * of the ruler) with as many decimals as tick_ns needs, so labels k * tick
 * apart always read differently ("0", "0.2 ms", ..., "1.4 ms"; "15.2034 s").
 */
void pt_timeline_ruler_label(char *buf, size_t len, uint64_t v_ns, uint64_t tick_ns,
			     uint64_t unit_ns);

#endif
