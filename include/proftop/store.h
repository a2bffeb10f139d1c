/*
 * store.h - the bounded event store.
 *
 * Raw events are kept for the timeline and for export, per track, in chunks.
 * A memory cap (bytes) bounds the store: when an append would pass it, the
 * oldest chunk (the first one appended that is still kept) is dropped, and
 * the store remembers how many events went and up to when, so faces can say
 * how far back the data reaches. The cap also covers what summaries build
 * from the kept events: events fill three quarters of it (store.c).
 *
 * Chunks are sorted lazily (start ascending, longer first on ties); the
 * iterator merges a track's chunks so every reader sees a track in start
 * order without the store ever copying a track whole.
 *
 * Threading: one writer; readers only while no append runs;
 * pt_store_prefault and pt_store_prefault_growing from any thread. Once pt_store_sort has run with no
 * append since, pt_store_sort, the iterators and pt_store_foreach only read
 * the store, so several threads may walk it at once (pt_ranks_compute, and
 * report's summary beside it), as long as none changes an event.
 */
#ifndef PROFTOP_STORE_H
#define PROFTOP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/event.h"

struct pt_store;

/* Default cap: 1 GiB (about 20 million events kept). */
#define PT_STORE_DEFAULT_MAX_BYTES ((size_t)1 << 30)
/* Smallest cap accepted: below this one chunk would not fit. */
#define PT_STORE_MIN_MAX_BYTES ((size_t)1 << 20)

struct pt_store *pt_store_new(size_t max_bytes);
void pt_store_free(struct pt_store *st);

/* Appends a copy of ev to track ev->track_id. Never fails (drops old data). */
void pt_store_append(struct pt_store *st, const struct pt_event *ev);

/*
 * Faults in, ahead, the memory about `events` more events will fill (up to
 * 4 MiB), so the thread that appends does not pay for it. The only call
 * that may run on another thread while the writer appends (a file reader's
 * own thread calls it as it reads).
 */
void pt_store_prefault(struct pt_store *st, size_t events);
/* The same for a store that grows as long as it runs (a live session): once
 * its events fill arenas, keeps the next ones (4 MiB) faulted in; before,
 * nothing. Meant to be called every few milliseconds from a thread of its own.
 * Returns the arenas the store has taken so far (a caller can tell whether it
 * grows). */
uint64_t pt_store_prefault_growing(struct pt_store *st);
/* Arenas (2 MiB) faulted in ahead and not used yet. */
size_t pt_store_pool_arenas(struct pt_store *st);

uint64_t pt_store_count(const struct pt_store *st);   /* events kept */
uint64_t pt_store_dropped(const struct pt_store *st); /* events dropped by the cap */
/* ProfileStep events among the dropped ones (real step ordinals stay real). */
uint64_t pt_store_dropped_steps(const struct pt_store *st);
/* The same for one track. */
uint64_t pt_store_track_dropped_steps(const struct pt_store *st, uint32_t track);
/*
 * For readers that index a track incrementally: the events ever appended to
 * it (kept + dropped); the earliest start among the events appended at or
 * after position `since` of that count (UINT64_MAX when none); and a
 * checkpoint, which returns the count now and makes the next
 * start_since(that count) exact: the earliest start among exactly the events
 * appended since. For a `since` that is not one of the last few checkpoints
 * the answer is at chunk granularity, earlier than the exact one (never
 * later), so re-reading from there still finds every new event.
 */
uint64_t pt_store_track_appended(const struct pt_store *st, uint32_t track);
uint64_t pt_store_track_start_since(const struct pt_store *st, uint32_t track, uint64_t since);
uint64_t pt_store_track_checkpoint(struct pt_store *st, uint32_t track);
/* Latest end among a track's events (0 when none kept; after the cap
 * dropped some, it may be a dropped one's, never less than a kept one's). */
uint64_t pt_store_track_last_ns(const struct pt_store *st, uint32_t track);
/* Complete from here on: the latest end of any dropped event (0 if none). */
uint64_t pt_store_complete_from_ns(const struct pt_store *st);
/* Earliest start / latest end among kept events (0/0 when empty). */
uint64_t pt_store_first_ns(const struct pt_store *st);
uint64_t pt_store_last_ns(const struct pt_store *st);
/* Bytes held: chunks, the track table and what pt_store_charge added. */
size_t pt_store_mem_bytes(const struct pt_store *st);
/*
 * Counts bytes held elsewhere for the data (names, tracks, the per-track
 * state summaries build) against the cap: the events' room shrinks by as
 * much, oldest chunks going first. Never fails; names and tracks are never
 * dropped, and pt_store_charge_full says when to stop making new ones.
 */
void pt_store_charge(struct pt_store *st, size_t bytes);
/* 1 when charging bytes more would leave the events less than half of
 * their room: the trace then stops adding tracks and names (it folds new
 * ones into one of each, counted), so that they never pass the cap. */
int pt_store_charge_full(const struct pt_store *st, size_t bytes);
size_t pt_store_max_bytes(const struct pt_store *st);
/* Number of track slots (highest track id seen + 1). */
uint32_t pt_store_track_count(const struct pt_store *st);
uint64_t pt_store_track_events(const struct pt_store *st, uint32_t track);

/* Sorts every chunk not yet sorted. Iterators call it for their track. */
void pt_store_sort(struct pt_store *st);

/*
 * Iterates one track in start order, restricted to events whose start lies
 * in [t0_ns, t1_ns). Events are returned by pointer into the store and may
 * be modified in place (not their start_ns or dur_ns). Call
 * pt_store_iter_done() to release the iterator's merge heap.
 */
struct pt_store_iter {
	struct pt_store *st;
	uint32_t track;
	uint64_t t0_ns, t1_ns;
	uint32_t nheap;
	struct pt_store_cursor *heap;
	/* events of the one cursor left that come before any other chunk's
	 * and before t1_ns: handed out without comparing */
	struct pt_event *run, *run_end;
};

void pt_store_iter_init(struct pt_store_iter *it, struct pt_store *st, uint32_t track,
			uint64_t t0_ns, uint64_t t1_ns);
struct pt_event *pt_store_iter_next(struct pt_store_iter *it);
void pt_store_iter_done(struct pt_store_iter *it);

/* Visits every kept event in no particular order; stop by returning non-zero. */
typedef int (*pt_store_visit_fn)(void *ctx, struct pt_event *ev);
int pt_store_foreach(struct pt_store *st, pt_store_visit_fn fn, void *ctx);

#endif
