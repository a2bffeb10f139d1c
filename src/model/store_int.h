/*
 * store_int.h - the event store's insides, shared by store.c (appending,
 * the memory cap, dropping) and store_read.c (sorting and iterating): the
 * chunks, the per-track slots, the arenas, and the order of events.
 */
#ifndef PT_STORE_INT_H
#define PT_STORE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "proftop/store.h"

/* quarters of the cap the chunks may fill (see the file comment) */
#define PT_STORE_EVENTS_SHARE_QUARTERS 3

struct chunk {
	struct chunk *next_in_track;
	struct chunk *next_global;
	uint32_t track;
	uint32_t n;
	uint16_t cap;
	uint16_t in_arena; /* a big chunk inside an arena (else malloc's) */
	uint32_t sorted;   /* events [0, sorted) are in order; == n when clean */
	uint64_t seq;	   /* creation order, breaks ties between chunks */
	uint64_t first;	   /* the track's append count at its first event */
	uint64_t min_start, max_end;
	struct pt_event ev[];
};

/* Checkpoints of a track's appends (pt_store_track_checkpoint): cp_at[i] is
 * the append count when checkpoint i was taken, cp_min[i] the earliest start
 * among the events appended between checkpoint i-1 and i; acc_min covers
 * the events since the last one. */
#define STORE_CPS 8

#define STORE_POOL 2u /* arenas faulted in ahead at most (4 MiB) */

struct tslot {
	struct chunk *head, *tail;
	/* the first chunk that may be unsorted (every one before it is full
	 * and sorted), NULL: the head; pt_store_sort starts there */
	struct chunk *unsorted;
	/* the track's chunks in order, cv[cv_off, cv_n), and for each full
	 * one (all but the last) the latest end up to it, so an iterator from
	 * a recent time skips the old chunks by a binary search instead of
	 * walking them (a dropped head can leave these high: never low) */
	struct chunk **cv;
	uint64_t *cv_max;
	uint32_t cv_off, cv_n, cv_cap;
	uint64_t count;	   /* kept */
	uint64_t appended; /* ever appended (kept + dropped) */
	uint64_t dropped_steps; /* ProfileStep events among its dropped ones */
	uint32_t created;  /* chunks ever created, picks the next size */
	uint32_t ncp;
	uint64_t acc_min;
	uint64_t cp_at[STORE_CPS], cp_min[STORE_CPS];
};

struct pt_store {
	struct tslot *tracks;
	uint32_t ntracks, tracks_cap;
	struct chunk *ghead, *gtail;
	uint64_t next_seq;
	uint64_t count, dropped;
	uint64_t dropped_steps; /* ProfileStep events among the dropped */
	uint64_t complete_from;
	uint64_t last_end; /* latest end among kept events (0 when none) */
	size_t mem, max_mem;
	size_t charged;		  /* of mem: what pt_store_charge added */
	size_t budget;		  /* bytes the chunks may use: the cap less the summaries' share */
	struct arena *arena;	  /* where the next big chunk comes from, or NULL */
	struct pt_event *scratch; /* sorting's, BIG_CHUNK_CAP events once needed */
	/* arenas faulted in ahead by another thread (pt_store_prefault) */
	pthread_mutex_t pool_mu;
	struct arena *pool[STORE_POOL];
	uint32_t npool;
	uint64_t arenas_taken; /* arenas the writer has filled from (pool_mu) */
	char *res_next, *res_end; /* address space reserved for arenas (pool_mu) */
};

/* Big chunks: twelve fill a 2 MiB arena after its header (see above). */
#define ARENA_BYTES	((size_t)2 << 20)
#define ARENA_CHUNKS	12u
#define BIG_CHUNK_CAP	4367u
#define ARENA_HDR_BYTES 64u

struct arena {
	uint32_t live; /* chunks not yet freed, + 1 while it is the store's current */
	uint32_t used; /* chunks handed out */
};

/* The order of a track's events: start ascending, longer first, then kind,
 * name and correlation, so the order is total. */
static inline int ev_cmp(const struct pt_event *a, const struct pt_event *b)
{
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->name_id != b->name_id)
		return a->name_id < b->name_id ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return 0;
}

#endif
