/*
 * timeline_int.h - what the two halves of the timeline model share: the
 * per-track index (timeline.c builds and updates it, buckets rows and
 * answers cursor queries) and the cache that holds it with the derived
 * lists (timeline_query.c: lanes, steps, correlation, search, ruler).
 */
#ifndef PT_TIMELINE_INT_H
#define PT_TIMELINE_INT_H

#include "proftop/timeline.h"

#define TL_NLEV 6
/* Deeper events share the last row (their nesting is then not exact). */
#define TL_MAX_DEPTH 1023

/* One nesting depth of a track: disjoint events in start order. */
struct tl_row {
	uint32_t base, n, cap; /* events [base, n) are kept (below base: trimmed) */
	uint64_t *start, *end;
	uint32_t *name, *corr;
	uint8_t *kind;
	uint32_t *best[TL_NLEV]; /* per block of 4 .. 4096 events: its longest event */
	uint64_t *bdur[TL_NLEV]; /* ... and that event's duration (no lookup when bucketing) */
	uint32_t dirty;		 /* block summaries are stale from this index on */
	uint32_t nsteps;	 /* ProfileStep events in [base, n) */
};

struct tl_track {
	int built;
	uint64_t sig_app; /* the store's append count for the track when indexed */
	uint64_t trim_ns; /* complete-from bound applied */
	uint32_t nrows, rows_cap;
	struct tl_row *rows;
};

struct tl_corr {
	uint32_t corr, track, idx;
	uint16_t depth;
	uint8_t device;
};

struct pt_timeline_cache {
	const struct pt_trace *t;
	struct tl_track *tr;
	uint32_t ntr;
	uint64_t gen; /* bumps on every change of the index */
	/* steps (timeline_query.c), kept up to date by themselves */
	uint64_t steps_gen; /* bumps when the list changed */
	struct pt_tl_step *steps;
	int64_t *step_num; /* the number in each step's name, -1: none (ordinal) */
	size_t nsteps, steps_cap;
	uint64_t *st_since; /* per track: its append count when its steps were read */
	uint32_t nst;
	uint64_t steps_trim; /* complete-from bound applied */
	int64_t steps_base;  /* dropped steps when numbered */
	uint32_t *by_dur;    /* step indices, slowest first */
	uint64_t by_dur_gen;
	/* correlation index, made on demand */
	uint64_t corr_gen;
	struct tl_corr *corr;
	size_t ncorr;
};

/* timeline.c */
/* Starts the cache over when it is given another trace. */
void tl_cache_bind(struct pt_timeline_cache *c, const struct pt_trace *t);
struct tl_track *tl_track_of(struct pt_timeline_cache *c, struct pt_trace *t, uint32_t track);
uint32_t tl_lower(const struct tl_row *r, uint64_t v, int strict);
void tl_row_event(const struct tl_row *r, uint32_t i, uint32_t track, struct pt_event *out);
/* Index of the event of row r starting exactly at ev's start with ev's name, or UINT32_MAX. */
uint32_t tl_row_find(const struct tl_row *r, const struct pt_event *ev);

#endif
