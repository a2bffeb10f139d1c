/*
 * store.c - the bounded event store.
 *
 * The cap (--max-mem) bounds everything that grows with the events kept,
 * not only the events: a summary (pt_summarize, each TUI refresh) builds
 * interval logs and tables over the kept events, measured at 3-10 bytes
 * per event beside the event's 40. So the chunks get three quarters of the
 * cap (PT_STORE_EVENTS_SHARE_QUARTERS) and the last quarter is left to the
 * summaries; what stays outside the cap is a fixed cost (docs/files.md, "Memory").
 *
 * Each track owns a list of chunks (16, 64, 256, 1024, then 4367 events)
 * so small tracks stay small: a trace of 200,000 threads with a few events
 * each needs 0.15 GB of chunks, not the 2 GB that 256-event chunks took.
 * The big chunks come twelve at a time from 2 MiB
 * arenas mapped with transparent huge pages asked for and every page
 * touched at once (MADV_POPULATE_WRITE): filling a store page by page took
 * one page fault per 4 KiB of events, a fifth of an import's serial time
 * in a VM; a file reader's own thread faults the next arenas in ahead
 * (pt_store_prefault). An arena goes back to the system when its last
 * chunk is freed, soon after its last chunk is dropped (see below).
 *
 * All chunks also sit on one global FIFO in creation order; when the
 * memory cap would be passed, the FIFO's head goes. Because a track's
 * chunks are created in order, the FIFO's head is always the head of its
 * own track's list, so dropping is O(1).
 *
 * Chunks are sorted in place when read (start ascending, longer first, then
 * kind, name and correlation so the order is total), and iterated with a
 * merge of a track's chunks: store_read.c. The structures both files use
 * are in store_int.h.
 */
#include "proftop/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/store_int.h"
#include "model/util.h"

static size_t chunk_bytes(uint32_t cap)
{
	return sizeof(struct chunk) + (size_t)cap * sizeof(struct pt_event);
}

_Static_assert(ARENA_HDR_BYTES >= sizeof(struct arena), "arena header");
_Static_assert(ARENA_HDR_BYTES + ARENA_CHUNKS * (sizeof(struct chunk) +
						 (size_t)BIG_CHUNK_CAP * sizeof(struct pt_event)) <=
		   ARENA_BYTES,
	       "big chunks fill an arena");

/*
 * Arenas are cut from reservations of RESERVE_ARENAS (address space only:
 * memory comes as each is faulted in). The mmap, the huge-page advice and
 * the two trims to alignment each take the address space's lock for
 * writing, and that waits for any thread faulting an arena in: once per
 * arena, they held the read's threads up where first touches are slow.
 */
#define RESERVE_ARENAS 16u

/* The next 2 MiB-aligned 2 MiB of the reservation, a new one when it is
 * used up; NULL when the system says no. Called under pool_mu. */
static char *arena_space(struct pt_store *st)
{
	if (st->res_next == st->res_end) {
		size_t len = (RESERVE_ARENAS + 1) * ARENA_BYTES;
		char *p =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		uintptr_t u = (uintptr_t)p,
			  a = (u + ARENA_BYTES - 1) & ~(uintptr_t)(ARENA_BYTES - 1);
		char *base = (char *)a, *end = base + (size_t)RESERVE_ARENAS * ARENA_BYTES;
		if (base > p)
			munmap(p, (size_t)(base - p));
		if (end < p + len)
			munmap(end, (size_t)(p + len - end));
#ifdef MADV_HUGEPAGE
		if (pt_mem_huge_pays())
			madvise(base, (size_t)(end - base), MADV_HUGEPAGE);
#endif
		st->res_next = base;
		st->res_end = end;
	}
	char *base = st->res_next;
	st->res_next += ARENA_BYTES;
	return base;
}

/* A new 2 MiB arena aligned to 2 MiB (a huge page can back it), its pages
 * faulted in at once; NULL when the system says no (malloc then). */
static struct arena *arena_new(struct pt_store *st)
{
	pthread_mutex_lock(&st->pool_mu);
	char *base = arena_space(st);
	pthread_mutex_unlock(&st->pool_mu);
	if (!base)
		return NULL;
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels say EINVAL: no harm */
#endif
	madvise(base, ARENA_BYTES, MADV_POPULATE_WRITE); /* the slow part: outside the lock */
	struct arena *ar = (struct arena *)base;
	ar->live = 1;
	ar->used = 0;
	return ar;
}

static void arena_unref(struct arena *ar)
{
	if (--ar->live == 0)
		munmap(ar, ARENA_BYTES);
}

void pt_store_prefault(struct pt_store *st, size_t events)
{
	size_t want = (events * sizeof(struct pt_event) + ARENA_BYTES - 1) / ARENA_BYTES;
	if (want > STORE_POOL)
		want = STORE_POOL;
	/* a small cap would not fill them */
	if (want > st->budget / (8 * ARENA_BYTES))
		want = st->budget / (8 * ARENA_BYTES);
	for (;;) {
		pthread_mutex_lock(&st->pool_mu);
		int full = st->npool >= want;
		pthread_mutex_unlock(&st->pool_mu);
		if (full)
			return;
		struct arena *ar = arena_new(st);
		if (!ar)
			return;
		pthread_mutex_lock(&st->pool_mu);
		if (st->npool < STORE_POOL) {
			st->pool[st->npool++] = ar;
			ar = NULL;
		}
		pthread_mutex_unlock(&st->pool_mu);
		if (ar) {
			arena_unref(ar);
			return;
		}
	}
}

size_t pt_store_pool_arenas(struct pt_store *st)
{
	pthread_mutex_lock(&st->pool_mu);
	size_t n = st->npool;
	pthread_mutex_unlock(&st->pool_mu);
	return n;
}

uint64_t pt_store_prefault_growing(struct pt_store *st)
{
	pthread_mutex_lock(&st->pool_mu);
	uint64_t taken = st->arenas_taken;
	pthread_mutex_unlock(&st->pool_mu);
	if (taken) /* small tracks only so far: nothing to fault in ahead */
		pt_store_prefault(st, (size_t)STORE_POOL * ARENA_BYTES / sizeof(struct pt_event));
	return taken;
}

static struct arena *arena_take(struct pt_store *st)
{
	struct arena *ar = NULL;
	pthread_mutex_lock(&st->pool_mu);
	if (st->npool)
		ar = st->pool[--st->npool];
	st->arenas_taken++;
	pthread_mutex_unlock(&st->pool_mu);
	return ar ? ar : arena_new(st);
}

static struct chunk *big_chunk(struct pt_store *st)
{
	if (!st->arena || st->arena->used == ARENA_CHUNKS) {
		if (st->arena)
			arena_unref(st->arena);
		st->arena = arena_take(st);
		if (!st->arena) {
			struct chunk *c = pt_xmalloc(chunk_bytes(BIG_CHUNK_CAP));
			c->in_arena = 0;
			return c;
		}
	}
	struct arena *ar = st->arena;
	struct chunk *c =
	    (struct chunk *)((char *)ar + ARENA_HDR_BYTES + ar->used * chunk_bytes(BIG_CHUNK_CAP));
	ar->used++;
	ar->live++;
	c->in_arena = 1;
	return c;
}

/* An arena chunk's arena starts at its 2 MiB boundary. */
static void chunk_free(struct chunk *c)
{
	if (c->in_arena)
		arena_unref((struct arena *)((uintptr_t)c & ~(uintptr_t)(ARENA_BYTES - 1)));
	else
		free(c);
}

struct pt_store *pt_store_new(size_t max_bytes)
{
	struct pt_store *st = pt_xcalloc(1, sizeof *st);
	if (max_bytes == 0)
		max_bytes = PT_STORE_DEFAULT_MAX_BYTES;
	if (max_bytes < PT_STORE_MIN_MAX_BYTES)
		max_bytes = PT_STORE_MIN_MAX_BYTES;
	st->max_mem = max_bytes;
	st->budget = max_bytes / 4 * PT_STORE_EVENTS_SHARE_QUARTERS;
	pthread_mutex_init(&st->pool_mu, NULL);
	return st;
}

void pt_store_free(struct pt_store *st)
{
	if (!st)
		return;
	struct chunk *c = st->ghead;
	while (c) {
		struct chunk *next = c->next_global;
		chunk_free(c);
		c = next;
	}
	if (st->arena)
		arena_unref(st->arena);
	for (uint32_t i = 0; i < st->npool; i++)
		arena_unref(st->pool[i]);
	if (st->res_next < st->res_end) /* reserved, never handed out */
		munmap(st->res_next, (size_t)(st->res_end - st->res_next));
	pthread_mutex_destroy(&st->pool_mu);
	free(st->scratch);
	for (uint32_t i = 0; i < st->ntracks; i++) {
		free(st->tracks[i].cv);
		free(st->tracks[i].cv_max);
	}
	free(st->tracks);
	free(st);
}

static void drop_oldest(struct pt_store *st)
{
	struct chunk *c = st->ghead;
	if (!c)
		return;
	st->ghead = c->next_global;
	if (!st->ghead)
		st->gtail = NULL;
	struct tslot *ts = &st->tracks[c->track];
	/* c is the head of its track (see the file comment). */
	ts->head = c->next_in_track;
	if (!ts->head)
		ts->tail = NULL;
	if (ts->unsorted == c)
		ts->unsorted = NULL;
	if (ts->cv_n > ts->cv_off && ts->cv[ts->cv_off] == c && ++ts->cv_off == ts->cv_n)
		ts->cv_off = ts->cv_n = 0;
	ts->count -= c->n;
	st->count -= c->n;
	st->dropped += c->n;
	uint64_t steps = 0;
	for (uint32_t i = 0; i < c->n; i++)
		steps += c->ev[i].kind == PT_KIND_PROFILE_STEP;
	st->dropped_steps += steps;
	ts->dropped_steps += steps;
	if (c->n && c->max_end > st->complete_from)
		st->complete_from = c->max_end;
	int had_last = c->n && c->max_end >= st->last_end;
	st->mem -= chunk_bytes(c->cap);
	chunk_free(c);
	if (had_last) { /* the latest end went with it (a very long event): look again */
		st->last_end = 0;
		for (struct chunk *k = st->ghead; k; k = k->next_global)
			if (k->n && k->max_end > st->last_end)
				st->last_end = k->max_end;
	}
}

static struct tslot *slot_for(struct pt_store *st, uint32_t track)
{
	if (track >= st->ntracks) {
		if (track >= st->tracks_cap) {
			uint32_t cap = st->tracks_cap ? st->tracks_cap : 16;
			while (cap <= track)
				cap *= 2;
			st->tracks = pt_xrealloc(st->tracks, (size_t)cap * sizeof *st->tracks);
			memset(st->tracks + st->tracks_cap, 0,
			       (size_t)(cap - st->tracks_cap) * sizeof *st->tracks);
			for (uint32_t i = st->tracks_cap; i < cap; i++)
				st->tracks[i].acc_min = UINT64_MAX;
			st->mem += (size_t)(cap - st->tracks_cap) * sizeof *st->tracks;
			st->tracks_cap = cap;
		}
		st->ntracks = track + 1;
	}
	return &st->tracks[track];
}

static struct chunk *new_chunk(struct pt_store *st, uint32_t track)
{
	struct tslot *ts = slot_for(st, track);
	static const uint32_t sizes[] = {16, 64, 256, 1024, BIG_CHUNK_CAP};
	uint32_t cap = sizes[ts->created < 4 ? ts->created : 4];
	size_t bytes = chunk_bytes(cap);
	while (st->ghead && st->mem + bytes > st->budget)
		drop_oldest(st);
	ts = &st->tracks[track]; /* dropping never reallocates, but stay explicit */
	struct chunk *c;
	if (cap == BIG_CHUNK_CAP) {
		c = big_chunk(st);
	} else {
		c = pt_xmalloc(bytes);
		c->in_arena = 0;
	}
	c->next_in_track = NULL;
	c->next_global = NULL;
	c->track = track;
	c->n = 0;
	c->cap = (uint16_t)cap;
	c->sorted = 0;
	c->seq = st->next_seq++;
	c->first = ts->appended;
	c->min_start = UINT64_MAX;
	c->max_end = 0;
	if (ts->tail)
		ts->tail->next_in_track = c;
	else
		ts->head = c;
	ts->tail = c;
	if (ts->cv_n > ts->cv_off) { /* the old tail is full now: its running latest end */
		uint32_t i = ts->cv_n - 1;
		uint64_t m = ts->cv[i]->max_end;
		if (i > ts->cv_off && ts->cv_max[i - 1] > m)
			m = ts->cv_max[i - 1];
		ts->cv_max[i] = m;
	}
	if (ts->cv_n == ts->cv_cap) {
		if (ts->cv_off && ts->cv_off >= ts->cv_cap / 2) { /* room at the front: move down */
			uint32_t k = ts->cv_n - ts->cv_off;
			memmove(ts->cv, ts->cv + ts->cv_off, k * sizeof *ts->cv);
			memmove(ts->cv_max, ts->cv_max + ts->cv_off, k * sizeof *ts->cv_max);
			ts->cv_off = 0;
			ts->cv_n = k;
		} else {
			ts->cv_cap = ts->cv_cap ? ts->cv_cap * 2 : 16;
			ts->cv = pt_xrealloc(ts->cv, ts->cv_cap * sizeof *ts->cv);
			ts->cv_max = pt_xrealloc(ts->cv_max, ts->cv_cap * sizeof *ts->cv_max);
		}
	}
	ts->cv[ts->cv_n++] = c;
	ts->created++;
	if (st->gtail)
		st->gtail->next_global = c;
	else
		st->ghead = c;
	st->gtail = c;
	st->mem += bytes;
	return c;
}

void pt_store_append(struct pt_store *st, const struct pt_event *ev)
{
	struct tslot *ts = slot_for(st, ev->track_id);
	struct chunk *c = ts->tail;
	if (!c || c->n == c->cap)
		c = new_chunk(st, ev->track_id);
	/* still in order: a chunk written in order (most are) needs no sort,
	 * and its check here costs one compare with the event before, which
	 * is still in the cache */
	if (c->sorted == c->n && (c->n == 0 || ev_cmp(&c->ev[c->n - 1], ev) <= 0))
		c->sorted++;
	c->ev[c->n++] = *ev;
	if (ev->start_ns < c->min_start)
		c->min_start = ev->start_ns;
	uint64_t end = pt_event_end(ev);
	if (end > c->max_end)
		c->max_end = end;
	if (end > st->last_end)
		st->last_end = end;
	st->tracks[ev->track_id].count++;
	st->tracks[ev->track_id].appended++;
	if (ev->start_ns < st->tracks[ev->track_id].acc_min)
		st->tracks[ev->track_id].acc_min = ev->start_ns;
	st->count++;
}

void pt_store_charge(struct pt_store *st, size_t bytes)
{
	st->mem += bytes;
	st->charged += bytes;
	while (st->ghead && st->mem > st->budget)
		drop_oldest(st);
}

int pt_store_charge_full(const struct pt_store *st, size_t bytes)
{
	return st->charged + bytes > st->budget / 2;
}

uint64_t pt_store_count(const struct pt_store *st)
{
	return st->count;
}

uint64_t pt_store_dropped(const struct pt_store *st)
{
	return st->dropped;
}

uint64_t pt_store_dropped_steps(const struct pt_store *st)
{
	return st->dropped_steps;
}

uint64_t pt_store_track_appended(const struct pt_store *st, uint32_t track)
{
	return track < st->ntracks ? st->tracks[track].appended : 0;
}

uint64_t pt_store_track_dropped_steps(const struct pt_store *st, uint32_t track)
{
	return track < st->ntracks ? st->tracks[track].dropped_steps : 0;
}

uint64_t pt_store_track_start_since(const struct pt_store *st, uint32_t track, uint64_t since)
{
	uint64_t m = UINT64_MAX;
	if (track >= st->ntracks)
		return m;
	const struct tslot *ts = &st->tracks[track];
	if (since >= ts->appended)
		return m;
	/* exact from a checkpoint: the minima of the stretches after it */
	for (uint32_t i = 0; i < ts->ncp; i++) {
		if (ts->cp_at[i] != since)
			continue;
		m = ts->acc_min;
		for (uint32_t j = i + 1; j < ts->ncp; j++)
			if (ts->cp_min[j] < m)
				m = ts->cp_min[j];
		return m;
	}
	/* else at chunk granularity: every chunk holding an event appended since */
	for (const struct chunk *c = ts->head; c; c = c->next_in_track)
		if (c->n && c->first + c->n > since && c->min_start < m)
			m = c->min_start;
	return m;
}

uint64_t pt_store_track_checkpoint(struct pt_store *st, uint32_t track)
{
	if (track >= st->ntracks)
		return 0;
	struct tslot *ts = &st->tracks[track];
	if (ts->ncp && ts->cp_at[ts->ncp - 1] == ts->appended)
		return ts->appended; /* nothing since the last one */
	if (ts->ncp == STORE_CPS) {  /* the oldest goes */
		memmove(ts->cp_at, ts->cp_at + 1, (STORE_CPS - 1) * sizeof ts->cp_at[0]);
		memmove(ts->cp_min, ts->cp_min + 1, (STORE_CPS - 1) * sizeof ts->cp_min[0]);
		ts->ncp--;
	}
	ts->cp_at[ts->ncp] = ts->appended;
	ts->cp_min[ts->ncp] = ts->acc_min;
	ts->ncp++;
	ts->acc_min = UINT64_MAX;
	return ts->appended;
}

uint64_t pt_store_track_last_ns(const struct pt_store *st, uint32_t track)
{
	if (track >= st->ntracks || !st->tracks[track].tail)
		return 0;
	const struct tslot *ts = &st->tracks[track];
	uint64_t m = ts->tail->max_end;
	/* the full chunks before the tail: their running latest end */
	if (ts->cv_n >= ts->cv_off + 2 && ts->cv_max[ts->cv_n - 2] > m)
		m = ts->cv_max[ts->cv_n - 2];
	return m;
}

uint64_t pt_store_complete_from_ns(const struct pt_store *st)
{
	return st->complete_from;
}

uint64_t pt_store_first_ns(const struct pt_store *st)
{
	uint64_t m = UINT64_MAX;
	for (struct chunk *c = st->ghead; c; c = c->next_global)
		if (c->n && c->min_start < m)
			m = c->min_start;
	return m == UINT64_MAX ? 0 : m;
}

uint64_t pt_store_last_ns(const struct pt_store *st)
{
	return st->last_end;
}

size_t pt_store_mem_bytes(const struct pt_store *st)
{
	return st->mem;
}

size_t pt_store_max_bytes(const struct pt_store *st)
{
	return st->max_mem;
}

uint32_t pt_store_track_count(const struct pt_store *st)
{
	return st->ntracks;
}

uint64_t pt_store_track_events(const struct pt_store *st, uint32_t track)
{
	return track < st->ntracks ? st->tracks[track].count : 0;
}
