/*
 * session_int.h - what the session reader's files share beyond session.h:
 * the reader's state (struct pt_session, made by session_open.c, read and
 * drained by session.c), the producers' drop total read through the
 * validated layout, the reader's "stopped" state, and the guard
 * (session_scan.c) that keeps a segment truncated by another process from
 * killing proftop with SIGBUS.
 *
 * Threading: the guard's registry and handler are process-wide and safe
 * from any thread. A struct pt_session is used by one thread, and by its
 * copier (session_copy.c) where one runs: the copier touches only the
 * copy side (the segment's rings, cp, stage, the reader slot), under cp_mu.
 */
#ifndef PROFTOP_SESSION_INT_H
#define PROFTOP_SESSION_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "proftop/event.h"
#include "proftop/session.h"
#include "proftop/shm.h"

#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RLX(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* What a counter grew by since *seen (then *seen = now); one that went down
 * was reset (ring reused): all of it is new. */
static inline uint64_t delta_of(uint64_t now, uint64_t *seen)
{
	uint64_t d = now >= *seen ? now - *seen : now;
	*seen = now;
	return d;
}

/* What the reader keeps per ring, on the side that feeds the trace
 * (session.c): its track, and a record held for a possible EXT. */
struct ring_rd {
	int have;               /* track assigned (for the trace names_of) */
	int known;              /* tid and name hold the ring's owner */
	int32_t tid;
	char name[32];          /* the owner's thread name at claim time */
	uint32_t track;
	int32_t device;         /* from PT_SHM_REC_DEVICE, -1 = host */
	uint64_t ow_unmatched;  /* overwritten records not yet among our skipped ones */
	int pending;            /* pend waits for a possible EXT record */
	int pend_ext;
	uint64_t pend_seq;
	int carried;            /* pending when this drain began, at pend_seq0 */
	uint64_t pend_seq0;
	int32_t pend_dev;
	int64_t pend_stream;
	struct pt_event pend;
	int coll;               /* a PT_SHM_REC_COLL waits for its group record */
	struct pt_shm_rec coll_rec;
};

/* What the reader keeps per ring on the side that reads the segment
 * (session_copy.c: the draining thread, or the copier between drains). */
struct ring_cp {
	int have;               /* the owner of generation is known */
	uint32_t generation;
	int seen;               /* the ring was looked at once: cursor is ours */
	uint64_t cursor;        /* next index this reader reads */
	uint64_t dropped_seen, overwritten_seen;
};

/*
 * Records copied out of the rings and not yet in the trace: a run of
 * entries, each one ring's records from one copy pass (n records follow
 * it), with what the pass learnt of the ring.
 */
#define STAGE_NEW_OWNER 1u /* tid and name: the ring has a new owner (track) */
#define STAGE_FREED 2u     /* the ring's thread exited and all of it was read */
struct stage_ent {
	uint32_t ring, flags;
	int32_t tid;
	uint32_t pad;
	uint64_t n;             /* records that follow */
	uint64_t lost, before;  /* skipped indices, of them before attaching (account()) */
	uint64_t ow, dropped;   /* the ring's new overwritten / dropped counts */
	uint64_t torn, bad_rings;
	char name[32];
};
/* Staged records live in chunks of their own mapping, recycled through a
 * pool the draining thread keeps filled with pages already touched: the
 * copier never grows a buffer (a realloc of tens of MiB, copied and faulted
 * in, took it off the rings for 140 ms on a loaded VM). */
struct stage_chunk {
	struct stage_chunk *next;
	size_t len;            /* bytes of entries in data */
	unsigned char data[];
};
struct stage {
	struct stage_chunk *head, *tail;
	size_t bytes;           /* of entries, all chunks */
};
/* The copier stops copying while stage_cap bytes wait for the trace: a
 * eighth of the memory for kept events (--max-mem; 128 MiB of the default
 * 1 GiB: 4 M records, 4 s of a million events a second, through the
 * longest stall of the loop that drains: an advisor pass over millions of
 * events while a busy machine gives it a tenth of a core took 1.5 s),
 * within these bounds; the rings then
 * fill and what they lose is counted, as without a copier. */
#define STAGE_CAP_MIN (8u << 20)
#define STAGE_CAP_MAX (128u << 20)
/* chunks kept touched in the pool at most (8 MiB: a quarter second at a
 * million events a second) */
#define STAGE_POOL_MAX 8u

/* offset -> string id, open addressing; key 0 is empty (offset 0 = no name). */
struct name_map {
	uint32_t *keys, *vals;
	uint32_t cap, n;
};

struct pt_session {
	char *path;
	void *base;
	size_t size;
	int mapped;
	struct pt_shm_header *h;
	/* validated copies of the layout (the header may change under us) */
	int32_t pid;
	uint64_t start_ticks;
	uint32_t nrings, ring_slots, strings_bytes;
	uint64_t rings_offset, ring_stride, strings_offset;
	struct ring_rd *rings;
	uint64_t open_read_ns;  /* when the rings' open ranges were read last (read_open) */
	struct ring_cp *cp;
	/* the copy side: cp, stage, the slot and the heartbeat are under cp_mu
	 * while a copier runs (pt_session_copier_start) */
	pthread_mutex_t cp_mu;
	pthread_cond_t cp_cv, cp_done_cv;
	int cp_running, cp_stop;
	uint64_t cp_want, cp_done; /* a drain waits for pass cp_want; passes done */
	pthread_t cp_th;
	uint64_t cp_busy_ns, cp_idle_ns;
	uint64_t cp_passes;     /* the copier's passes that copied something */
	struct stage stage;     /* being filled */
	size_t stage_cap;       /* STAGE_CAP_*, from the trace's memory budget */
	struct stage_chunk *pool; /* free chunks, their pages touched */
	unsigned npool;
	size_t chunk_bytes;     /* one chunk's mapping: holds an entry and a whole ring */
	struct name_map names;
	uint32_t last_off, last_id; /* one-entry cache in front of names */
	struct pt_trace *names_of; /* the trace the cached ids belong to */
	uint64_t no_ring_seen, no_string_seen;
	int heartbeat_on;
	uint64_t helper_calls_seen; /* the helper's call count last added to the trace */
	int slot;               /* our slot in header->readers, -1 = none yet */
	uint32_t slot_gen;
	int no_slot;            /* every slot taken: reading without one */
	int exited_seen;
	int pidfd;   /* the owner's pidfd once looked at (owner_pidfd); -1 not yet, -2 none */
	struct pt_session_stats st;
	int fd;      /* the segment's file (-1 from memory): fstat at each poll */
	int guard;   /* SIGBUS guard slot, -1 = none */
	int shrunk;  /* the file shrank under the mapping: no more reading */
	uint32_t corr_tag; /* pt_session_set_corr_tag's, 0: ids as recorded */
	char why[160];
	char desc[PT_SHM_CMDLINE_BYTES + 64];
};

/* The copy side (session_copy.c). copy_pass: every ring's new records into
 * g (caller holds cp_mu where a copier runs); claims the reader slot and
 * beats the heartbeat unless final; *max_ring: the most one ring gave. */
uint64_t pt_session_copy_pass(struct pt_session *s, struct stage *g, uint64_t now_ns, int final,
			      uint64_t *max_ring);
void pt_session_copy_take(struct pt_session *s, struct stage *g, uint64_t now_ns, int final,
			  size_t budget);
/* g's chunks back to the pool (the rest unmapped); the pool topped up with
 * touched chunks to what g used and one more (STAGE_POOL_MAX at most).
 * Called by the draining thread. */
void pt_session_stage_recycle(struct pt_session *s, struct stage *g);
void pt_session_stage_free(struct pt_session *s);
void pt_session_copier_stop(struct pt_session *s);
uint64_t pt_session_copier_gap(uint64_t gap, uint64_t most, uint64_t slots, uint64_t busy_ns,
			       uint64_t idle_ns);
int pt_session_slot_held(const struct pt_session *s);

/* Producer drops (rings, no ring, no string) so far, over the layout that
 * was validated at open (the header's own fields may have changed since). */
uint64_t pt_session_producer_drops(const struct pt_session *s);
/* This reader's slot in the header (shm.h), -1 while it holds none. */
int pt_session_reader_slot(const struct pt_session *s);
/* Why the reader stopped reading the segment (it shrank), else NULL. */
const char *pt_session_failed(const struct pt_session *s);

/* The mapped header (read-write: readers write the control word's request),
 * the validated pid and the segment's path. */
struct pt_shm_header *pt_session_hdr(struct pt_session *s);
int32_t pt_session_pid(const struct pt_session *s);
const char *pt_session_file(const struct pt_session *s);

/*
 * Following the session's deep captures (session_capture.c): what one
 * reader knows of them. base: captures up to this seq were over when the
 * reader attached and are not followed (their steps may be older than
 * what it has); one in progress then is followed.
 */
struct pt_capture_follow {
	int init;
	uint32_t base;
	uint64_t next_after_ns; /* when to look at the steps after the last merged one */
	uint32_t after_seq;     /* that capture (0: none pending) */
};
/* After a drain: the control word as read before it (so every record the
 * helper wrote before its answer is in t), into t's capture list; merges a
 * finished capture. exited: the owner is gone (open requests end). */
void pt_session_capture_follow(struct pt_session *s, struct pt_trace *t,
			       const struct pt_shm_ctl *ctl, struct pt_capture_follow *f,
			       int exited, uint64_t now_ns);

/*
 * The SIGBUS guard. A MAP_SHARED file mapping faults (SIGBUS) on pages past
 * the file's end, and the file is another process's to truncate. A mapping
 * registered here is covered: a fault inside it replaces the faulting page
 * and the rest of the mapping with private zero pages, marks the slot hit
 * and returns, so the access is retried and reads zeros. Faults elsewhere
 * go to the handler that was installed before (or the default action).
 */
/* Installs the handler, again if someone replaced it since (cheap: one
 * sigaction query when it is still in place). */
void pt_shm_guard_arm(void);
/* Registers [base, base + size); returns its slot, or -1 when all are taken. */
int pt_shm_guard_add(void *base, size_t size);
/* Unregisters (before the mapping is unmapped); -1 is ignored. */
void pt_shm_guard_remove(int slot);
/* 1 once a fault was caught in the slot's mapping. */
int pt_shm_guard_hit(int slot);
/* Zero pages over the mapping from the first whole page past keep_bytes. */
void pt_shm_guard_cover(void *base, size_t size, size_t keep_bytes);

#endif
